"""The core language, without any backend-specific behaviour: abstract values,
primitives and bind, traces, the jaxpr IR, its printer and type checker."""
import numpy as np
import pytest

from purejax._src import core
from purejax._src import pretty_printer as pp
from purejax._src.api import jit, make_jaxpr
from purejax._src.errors import JaxprTypeError
from purejax._src.interpreters import partial_eval as pe
from purejax._src.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, eval_jaxpr
from purejax._src.jaxpr_check import check_jaxpr
from purejax._src.jaxpr_printer import _alphabetic
from purejax._src.lax import api_elementwise as lax


def test_shaped_array():
  a = core.ShapedArray((3, 4), np.float32)
  assert a.str_short() == "float32[3,4]"
  assert a.str_short(short_dtypes=True) == "f32[3,4]"
  w = core.ShapedArray((), np.int32, weak_type=True)
  assert w.str_short(mark_weak=True) == "~int32[]"
  assert repr(w) == "ShapedArray(int32[], weak_type=True)"
  assert a == core.ShapedArray([3, 4], "float32") and hash(a) == hash(core.ShapedArray((3, 4), np.float32))
  assert a != w and a.ndim == 2 and a.size == 12


def test_python_scalars_are_weak_bool_is_not():
  assert core.get_aval(1) == core.ShapedArray((), np.int32, True)
  assert core.get_aval(1.0) == core.ShapedArray((), np.float32, True)
  assert core.get_aval(1j) == core.ShapedArray((), np.complex64, True)
  assert core.get_aval(True) == core.ShapedArray((), np.bool_, False)
  assert core.get_aval(np.float64(1)).dtype == np.float32     # canonicalized, strong
  assert not core.get_aval(np.float64(1)).weak_type
  with pytest.raises(TypeError, match="not a valid JAX type"):
    core.get_aval("text")
  with pytest.raises(OverflowError):
    core.get_aval(2 ** 40)


def test_alphabetic_names():
  assert [_alphabetic(i) for i in (0, 1, 25, 26, 27, 51, 52)] == \
      ["a", "b", "z", "ba", "bb", "bz", "ca"]


def test_pretty_printer_groups_break_only_when_too_long():
  doc = pp.group(pp.nest(2, pp.text("[") + pp.brk("") + pp.join(pp.brk(), [pp.text("x" * 5)] * 3))
                 + pp.brk("") + pp.text("]"))
  assert doc.format(80) == "[xxxxx xxxxx xxxxx]"
  assert doc.format(10) == "[\n  xxxxx\n  xxxxx\n  xxxxx\n]"


def _neg_jaxpr():
  x, y = Var(core.ShapedArray((3,), np.float32)), Var(core.ShapedArray((3,), np.float32))
  from purejax._src.lax.elementwise import neg_p
  return Jaxpr([], [x], [y], [JaxprEqn([x], [y], neg_p, {})])


def test_hand_built_jaxpr_prints_and_evaluates():
  jaxpr = _neg_jaxpr()
  assert str(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = neg a in (b,) }"
  out, = eval_jaxpr(jaxpr, [], np.arange(3, dtype=np.float32))
  np.testing.assert_array_equal(out, [0, -1, -2])
  check_jaxpr(jaxpr)


def test_type_checker_catches_bad_jaxprs():
  jaxpr = _neg_jaxpr()
  bad_type = Jaxpr([], jaxpr.invars, [Var(core.ShapedArray((4,), np.float32))],
                   [jaxpr.eqns[0].replace(outvars=[Var(core.ShapedArray((4,), np.float32))])])
  with pytest.raises(JaxprTypeError, match="its rule gives"):
    check_jaxpr(bad_type)
  unbound = Jaxpr([], [], jaxpr.outvars, jaxpr.eqns)
  with pytest.raises(JaxprTypeError, match="used before it is defined"):
    check_jaxpr(unbound)


def test_literals_and_constvars():
  c = np.arange(3, dtype=np.float32)
  closed = make_jaxpr(lambda x: lax.add(lax.mul(x, 2.0), c))(np.ones(3, np.float32))
  assert isinstance(closed, ClosedJaxpr)
  assert len(closed.consts) == 1 and closed.jaxpr.constvars
  eqn = closed.jaxpr.eqns[0]
  assert isinstance(eqn.invars[1], Literal) and float(eqn.invars[1].val) == 2.0
  assert str(closed).startswith("{ lambda a:f32[3]; b:f32[3]. let")


@pytest.mark.parametrize("fun, arg", [
    (lambda x: x * 1.1283791670955126, 1.0), (lambda x: x + 0.1, 1.0),
    (lambda x: x + 0.1, np.float32(1)), (lambda x: x * 2, 1.0), (lambda x: x + True, 1.0),
    (lambda x: x * 2, np.int32(3)), (lambda x: x * 1e-8, 1)])
def test_weak_python_literals_print_as_written(fun, arg):
  # A weak literal from an unconverted Python number prints that number
  # (0.1), a converted one its float32 value (0.10000000149011612), as JAX.
  jax = pytest.importorskip("jax")
  assert str(make_jaxpr(fun)(arg)) == str(jax.make_jaxpr(fun)(arg))


def test_custom_primitive_binds_through_every_trace():
  double_p = core.Primitive("double")
  double_p.impl = lambda x: 2 * x
  double_p.abstract_eval = lambda a: a
  assert float(double_p.bind(np.float32(3))) == 6.0
  assert float(jit(lambda x: double_p.bind(x))(np.float32(4))) == 8.0
  assert "double a" in str(make_jaxpr(lambda x: double_p.bind(x))(1.0))


def test_current_trace_restored_after_errors():
  before = core.current_trace()
  with pytest.raises(ZeroDivisionError):
    make_jaxpr(lambda x: 1 / 0)(1.0)
  assert core.current_trace() is before is core.eval_trace


def test_nested_traces_have_distinct_tags():
  seen = []

  def outer(x):
    def inner(y):
      seen.append((x._trace, y._trace))
      return lax.add(x, y)
    return jit(inner)(x)

  make_jaxpr(outer)(1.0)
  outer_trace, inner_trace = seen[0]
  assert outer_trace is not inner_trace
  assert inner_trace.parent is outer_trace
  assert not inner_trace.valid


def test_closure_over_outer_tracer_becomes_an_argument():
  def outer(x):
    return jit(lambda y: lax.mul(x, y))(2.0)
  text = str(make_jaxpr(outer)(3.0))
  # The closed-over tracer is passed to the inner jit as an explicit operand.
  assert "] a 2.0:f32[]" in text.replace("\n", " ")
  assert float(jit(outer)(3.0)) == 6.0


def test_trace_to_jaxpr_directly():
  avals = [core.ShapedArray((2,), np.float32)]
  jaxpr, consts = pe.trace_to_jaxpr(lambda x: [lax.sin(x)], avals)
  assert consts == [] and [e.primitive.name for e in jaxpr.eqns] == ["sin"]


def test_the_current_trace_is_per_thread():
  """Another thread (a device, the async worker, a callback's) computes
  eagerly while this one traces, rather than staging into its jaxpr."""
  import threading
  import purejax
  import purejax.numpy as jnp
  seen = []

  def other():
    seen.append(float(jnp.float32(2.0) + 1))

  def f(x):
    t = threading.Thread(target=other)
    t.start()
    t.join()
    return x * 2

  text = str(purejax.make_jaxpr(f)(1.0))
  assert seen == [3.0]
  assert "add" not in text and "mul" in text
