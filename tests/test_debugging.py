"""purejax.debug: print, callback and breakpoint, eagerly and under jit
(on both backends), vmap, grad and lax control flow."""
import io
import re

import numpy as np
import pytest

import purejax
from purejax._src.array import ArrayImpl
import purejax.numpy as jnp
from purejax import lax
from purejax._src import debugging
from purejax._src.config import config

BACKENDS = ["numpy", "cpu"]


@pytest.fixture(params=BACKENDS)
def backend(request):
  """Runs a test on each jit backend (the C one compiling synchronously)."""
  with config.override("purejax_backend", request.param), \
       config.override("purejax_compile_sync", True):
    yield request.param


def lines(capsys):
  return capsys.readouterr().out.splitlines()


# -- eager --------------------------------------------------------------------------

def test_print_eager_formats(capsys):
  x = jnp.arange(3.0)
  purejax.debug.print("x={x} y={} s={}", x + 1, "str", x=x)
  purejax.debug.print("plain")
  purejax.debug.print("{:.2f} {}", jnp.float32(1.5), 7)
  purejax.debug.print("no placeholder", 1, 2, skip_format_check=True)
  assert lines(capsys) == ["x=[0. 1. 2.] y=[1. 2. 3.] s=str", "plain", "1.50 7",
                           "no placeholder 1 2"]


def test_print_uses_numpy_printoptions(capsys):
  with np.printoptions(precision=2):
    purejax.debug.print("{}", jnp.array([1 / 3], jnp.float32))
  assert lines(capsys) == ["[0.33]"]


def test_callback_gets_arrays_and_static_args():
  seen = []
  purejax.debug.callback(lambda a, s, k=None: seen.append((a, s, k)), jnp.ones(2), "s", k=3)
  (a, s, k), = seen
  assert type(a) is ArrayImpl and a.dtype == np.float32 and s == "s"
  assert type(k) is ArrayImpl and int(k) == 3


def test_two_call_forms(capsys):
  purejax.debug.print(ordered=True)("a {}", 1)
  purejax.debug.callback(ordered=True)(print, 1, 2)
  assert lines(capsys) == ["a 1", "1 2"]


@pytest.mark.parametrize("call, error, match", [
    (lambda: purejax.debug.print("hello", 1), ValueError, "Unused positional"),
    (lambda: purejax.debug.print("hello", x=1), ValueError, "Unused keyword"),
    (lambda: purejax.debug.print("hello {x}"), KeyError, "x"),
    (lambda: purejax.debug.callback(3, 1), TypeError, "must be callable"),
    (lambda: purejax.debug.callback(None, 1), TypeError, "two-call form"),
    (lambda: purejax.debug.print(None, 1), TypeError, "two-call form"),
])
def test_errors(call, error, match):
  with pytest.raises(error, match=match):
    call()


# -- jit ------------------------------------------------------------------------------

def test_jit_prints_every_call_with_runtime_values(capsys, backend):
  traces = []

  @purejax.jit
  def f(x):
    traces.append(1)
    purejax.debug.print("x={}", x)
    return x * 2

  for i in range(4):   # the cpu backend compiles after the first calls
    purejax.block_until_ready(f(jnp.float32(i)))
  assert lines(capsys) == [f"x={float(i)}" for i in range(4)]
  assert len(traces) == 1


def test_log_goes_to_logging_from_the_calling_line(caplog, capsys, backend):
  """jax.debug.log: debug.print's message as an INFO record of the caller's
  file and line, on every call, once per vmapped element."""
  @purejax.jit
  def f(x):
    purejax.debug.log("x is {x}", x=x); line = __import__("inspect").currentframe().f_lineno
    return x * 2, line

  with caplog.at_level("INFO", logger="purejax._src.debugging"):
    for i in range(2):
      _, line = f(jnp.float32(i))
    purejax.vmap(lambda x: purejax.debug.log("v {}", x))(jnp.arange(2))
    purejax.debug.log("eager")
  records = [r for r in caplog.records if r.name == "purejax._src.debugging"]
  assert [r.getMessage() for r in records] == ["x is 0.0", "x is 1.0", "v 0", "v 1", "eager"]
  assert {r.levelname for r in records} == {"INFO"}
  assert (records[0].pathname, records[0].lineno) == (__file__, int(line))
  assert lines(capsys) == []


def test_print_without_args_under_jit(capsys, backend):
  f = purejax.jit(lambda: (purejax.debug.print("hi"), 1.0)[1])
  purejax.block_until_ready(f())
  purejax.block_until_ready(f())
  assert lines(capsys) == ["hi", "hi"]


def test_ordered_keeps_program_order(backend):
  log = []

  @purejax.jit
  def f(x):
    purejax.debug.callback(lambda v: log.append(("a", float(v))), x, ordered=True)
    y = jnp.sin(x)
    purejax.debug.callback(lambda v: log.append(("b", float(v))), y, ordered=True)
    purejax.debug.callback(lambda v: log.append(("c", float(v))), x + 1, ordered=True)
    return y

  for _ in range(3):
    purejax.block_until_ready(f(jnp.float32(0.5)))
  assert log == [("a", 0.5), ("b", pytest.approx(np.sin(0.5))), ("c", 1.5)] * 3


# -- vmap, grad ------------------------------------------------------------------------

def test_vmap_once_per_element(capsys):
  purejax.vmap(lambda a, b: purejax.debug.print("{} {}", a, b), in_axes=(0, None))(
      jnp.arange(3), jnp.array([7, 8]))
  assert lines(capsys) == ["0 [7 8]", "1 [7 8]", "2 [7 8]"]
  purejax.vmap(lambda a: purejax.debug.print("{}", a), in_axes=1)(jnp.arange(4).reshape(2, 2))
  assert lines(capsys) == ["[0 2]", "[1 3]"]


def test_vmap_jit_and_nested(capsys, backend):
  f = purejax.jit(purejax.vmap(purejax.vmap(lambda a: (purejax.debug.print("{}", a), a)[1])))
  purejax.block_until_ready(f(jnp.arange(4).reshape(2, 2)))
  assert sorted(lines(capsys)) == ["0", "1", "2", "3"]   # unordered, as in JAX


def test_grad_sees_primals(capsys):
  def f(x):
    purejax.debug.print("x={}", x)
    return x * x

  assert float(purejax.grad(f)(3.0)) == 6.0
  assert float(purejax.jit(purejax.grad(purejax.jit(f)))(2.0)) == 4.0
  p, t = purejax.jvp(f, (1.0,), (5.0,))
  assert (float(p), float(t)) == (1.0, 10.0)
  assert lines(capsys) == ["x=3.0", "x=2.0", "x=1.0"]
  g = purejax.vmap(purejax.grad(f))(jnp.arange(2.0))
  np.testing.assert_array_equal(g, [0.0, 2.0])
  assert lines(capsys) == ["x=0.0", "x=1.0"]


def test_grad_jaxpr_keeps_print_on_primal():
  def f(x):
    purejax.debug.print("g {}", x)
    return x * x
  text = str(purejax.make_jaxpr(purejax.grad(f))(3.0))
  assert text.count("debug_print[") == 1


# -- control flow --------------------------------------------------------------------

def _loops(x):
  def body(c, a):
    purejax.debug.print("scan {} {}", c, a)
    return c + 1, a * 2
  c, ys = lax.scan(body, 0, x)
  n = lax.fori_loop(0, 2, lambda i, v: (purejax.debug.print("fori {}", i), v + i)[1], 0)
  w = lax.while_loop(lambda v: v < 2, lambda v: (purejax.debug.print("while {}", v), v + 1)[1], 0)
  lax.cond(c > 1, lambda v: purejax.debug.print("true {}", v),
           lambda v: purejax.debug.print("false {}", v), c)
  return ys, n + w

_LOOP_LINES = ["scan 0 0.0", "scan 1 1.0", "fori 0", "fori 1", "while 0", "while 1", "true 2"]


def test_control_flow_eager(capsys):
  _loops(jnp.arange(2.0))
  assert lines(capsys) == _LOOP_LINES


def test_control_flow_jit(capsys, backend):
  f = purejax.jit(_loops)
  for _ in range(3):
    purejax.block_until_ready(f(jnp.arange(2.0)))
  assert lines(capsys) == _LOOP_LINES * 3


def test_cond_with_only_forwarded_outputs_still_prints(capsys):
  out = lax.cond(True, lambda c: (purejax.debug.print("t {}", c), c)[1],
                 lambda c: (purejax.debug.print("f {}", c), c)[1], 0)
  assert int(out) == 0 and lines(capsys) == ["t 0"]


def test_cond_without_outputs_under_grad(capsys):
  def f(x):
    lax.cond(x > 0, lambda v: purejax.debug.print("c {}", v), lambda v: None, x)
    return x * 2
  assert float(purejax.grad(f)(1.0)) == 2.0
  assert float(purejax.jit(purejax.grad(f))(1.0)) == 2.0
  assert lines(capsys) == ["c 1.0", "c 1.0"]


def test_grad_of_scan(capsys):
  def f(x):
    return lax.scan(lambda c, _: (purejax.debug.print("s {}", c), (c * 2.0, None))[1],
                    x, None, length=2)[0]
  assert float(purejax.grad(f)(1.0)) == 4.0
  assert float(purejax.jit(purejax.grad(f))(1.0)) == 4.0
  assert lines(capsys) == ["s 1.0", "s 2.0"] * 2


# -- printed jaxprs --------------------------------------------------------------------

def _normalized(text):
  return re.sub(r" at 0x[0-9a-fA-FX]+", " at 0x", text)


def test_jaxpr_matches_jax():
  jax = pytest.importorskip("jax")

  def make(dbg):
    def f(x):
      dbg.print("x={x} y={} {}", x + 1, "s", x=x)
      dbg.print("plain", ordered=True)
      return x * 2
    return f

  ours = str(purejax.make_jaxpr(make(purejax.debug))(jnp.ones(3)))
  theirs = str(jax.make_jaxpr(make(jax.debug))(jax.numpy.ones(3)))
  assert ours == theirs
  g = lambda dbg: lambda x: dbg.callback(print, x, ordered=True)
  ours = _normalized(str(purejax.make_jaxpr(g(purejax.debug))(1.0)))
  theirs = _normalized(str(jax.make_jaxpr(g(jax.debug))(1.0)))
  assert ours == theirs


def test_no_callback_at_trace_time(capsys):
  purejax.make_jaxpr(lambda x: purejax.debug.print("{}", x))(1.0)
  assert lines(capsys) == []


# -- breakpoint ------------------------------------------------------------------------

# A program stopping at breakpoints: eagerly, under jit, in a cond branch
# taken once and skipped once, under vmap and grad and in a loop.  It runs in
# a subprocess whose stdin holds the debugger's commands.
_BREAKPOINT_PROGRAM = """\
import sys
if sys.argv[1] == "jax":
    import jax, jax.numpy as jnp
else:
    import purejax as jax, purejax.numpy as jnp

@jax.jit
def f(x):
    y = x * 2
    jax.debug.breakpoint()
    return y + 1

def g(x):
    return jax.lax.cond(x > 0, lambda x: x, lambda x: (jax.debug.breakpoint(), x)[1], x)

def h(x):
    y = x * 2
    name = "hello"
    jax.debug.breakpoint()
    return y + 1

print(f(jnp.arange(3.)))
print(jax.jit(g)(1.))
print("second")
print(jax.jit(g)(-1.))
print(h(jnp.arange(3.)))
print(jax.vmap(h)(jnp.arange(2.)))
print(jax.grad(lambda x: h(x).sum())(jnp.arange(2.)))
print(jax.jit(lambda x: jax.lax.fori_loop(
    0, 2, lambda i, v: (jax.debug.breakpoint(), v + i)[1], x))(1.))
"""

_BREAKPOINT_INPUT = ("p y\np x\nl\nw\nu\np x\nd\np y\nc\n"   # f
                     "p x\nc\n"                                     # g(-1.)
                     "p y\np name\npp y\nc\n"                      # h
                     "p y\nc\np y\nc\n"                           # vmap(h)
                     "p y\nc\n"                                     # grad(h)
                     "p v, i\nc\np v,i\nc\n")                      # fori_loop

_BREAKPOINT_OUTPUT = """\
Entering jdb:
(jdb) Array([0., 2., 4.], dtype=float32)
(jdb) Array([0., 1., 2.], dtype=float32)
(jdb) > {file}(10)
    @jax.jit
    def f(x):
        y = x * 2
->      jax.debug.breakpoint()
        return y + 1
    
(jdb) Traceback:
  File "{file}", line 22
    print(f(jnp.arange(3.)))
  File "{file}", line 10
    jax.debug.breakpoint()
(jdb) > {file}(22)
        jax.debug.breakpoint()
        return y + 1
    
->  print(f(jnp.arange(3.)))
    print(jax.jit(g)(1.))
    print("second")
(jdb) *** NameError: name 'x' is not defined
(jdb) > {file}(10)
    @jax.jit
    def f(x):
        y = x * 2
->      jax.debug.breakpoint()
        return y + 1
    
(jdb) Array([0., 2., 4.], dtype=float32)
(jdb) [1. 3. 5.]
1.0
second
Entering jdb:
(jdb) Array(-1., dtype=float32)
(jdb) -1.0
Entering jdb:
(jdb) Array([0., 2., 4.], dtype=float32)
(jdb) 'hello'
(jdb) Array([0., 2., 4.], dtype=float32)
(jdb) [1. 3. 5.]
Entering jdb:
(jdb) Array(0., dtype=float32)
(jdb) Entering jdb:
(jdb) Array(2., dtype=float32)
(jdb) [1. 3.]
Entering jdb:
(jdb) Array([0., 2.], dtype=float32)
(jdb) [2. 2.]
Entering jdb:
(jdb) (Array(1., dtype=float32), Array(0, dtype=int32))
(jdb) Entering jdb:
(jdb) (Array(1., dtype=float32), Array(1, dtype=int32))
(jdb) 2.0
"""


def _run_breakpoints(tmp_path, which):
  import subprocess
  import sys
  prog = tmp_path / "prog.py"
  prog.write_text(_BREAKPOINT_PROGRAM)
  done = subprocess.run([sys.executable, str(prog), which], input=_BREAKPOINT_INPUT,
                        capture_output=True, text=True, timeout=300)
  assert done.returncode == 0, done.stderr
  return done.stdout, str(prog)


def test_breakpoint_stops_with_runtime_values(tmp_path):
  out, prog = _run_breakpoints(tmp_path, "purejax")
  assert out == _BREAKPOINT_OUTPUT.format(file=prog)


def test_breakpoint_matches_jax(tmp_path):
  pytest.importorskip("jax")
  assert _run_breakpoints(tmp_path, "purejax")[0] == _run_breakpoints(tmp_path, "jax")[0]


def test_breakpoint_in_process(monkeypatch):
  out = io.StringIO()
  monkeypatch.setattr(debugging, "make_debugger", lambda frames: __import__(
      "purejax._src.debugger", fromlist=["x"]).CliDebugger(
          frames, io.StringIO("p y + 1\np z\nc\n"), out))
  y = 41   # read by the debugger
  purejax.jit(lambda z: (y, purejax.debug.breakpoint()))(2.0)
  assert out.getvalue() == "Entering jdb:\n(jdb) 42\n(jdb) Array(2., dtype=float32)\n(jdb) "
  assert y == 41


def test_breakpoint_never_taken_never_stops(monkeypatch):
  monkeypatch.setattr(debugging, "make_debugger", lambda frames: pytest.fail("stopped"))
  f = purejax.jit(lambda x: lax.cond(x > 0, lambda: x, lambda: (purejax.debug.breakpoint(), x)[1]))
  assert float(f(1.0)) == 1.0
  jaxpr = purejax.make_jaxpr(lambda x: purejax.debug.breakpoint())(1.0)
  assert "debug_callback" in str(jaxpr)


def test_breakpoint_backend():
  with pytest.raises(ValueError, match="backend"):
    purejax.debug.breakpoint(backend="web")
