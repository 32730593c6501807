"""JAX's extension API: the code of JAX's "How primitives work" and "Writing
custom Jaxpr interpreters" tutorials, run on purejax (without the XLA
lowering part) and, where JAX is installed, on JAX, with the same results."""
import functools

import numpy as np
import pytest

import purejax
import purejax.numpy as pjnp
from purejax import lax as plax
from purejax.extend import core as pcore
from purejax.extend import linear_util as plu
from purejax.interpreters import ad as pad
from purejax.interpreters import batching as pbatching
from purejax.interpreters import mlir as pmlir


class Api:
  """One implementation's modules, named as the tutorials import them."""

  def __init__(self, jax, jnp, lax, ecore, ad, batching):
    self.jax, self.jnp, self.lax, self.ecore, self.ad, self.batching = (
        jax, jnp, lax, ecore, ad, batching)


PUREJAX = Api(purejax, pjnp, plax, pcore, pad, pbatching)


def _jax_api():
  jax = pytest.importorskip("jax")
  import jax.extend.core
  import jax.interpreters.ad
  import jax.interpreters.batching
  return Api(jax, jax.numpy, jax.lax, jax.extend.core, jax.interpreters.ad,
             jax.interpreters.batching)


def define_multiply_add(api, log=None):
  """The tutorial's ``multiply_add`` primitive with its rules (the lowering
  left out); returns ``(multiply_add_prim, square_add_prim)``."""
  jax, lax, ad, batching = api.jax, api.lax, api.ad, api.batching
  log = [] if log is None else log
  multiply_add_p = api.ecore.Primitive("multiply_add")

  def multiply_add_prim(x, y, z):
    return multiply_add_p.bind(x, y, z)

  def square_add_prim(a, b):
    return multiply_add_prim(a, a, b)

  def multiply_add_impl(x, y, z):
    log.append("impl")
    return np.add(np.multiply(x, y), z)

  multiply_add_p.def_impl(multiply_add_impl)

  def multiply_add_abstract_eval(xs, ys, zs):
    assert xs.shape == ys.shape
    assert xs.shape == zs.shape
    return jax.core.ShapedArray(xs.shape, xs.dtype)

  multiply_add_p.def_abstract_eval(multiply_add_abstract_eval)

  def multiply_add_value_and_jvp(arg_values, arg_tangents):
    x, y, z = arg_values
    xt, yt, zt = arg_tangents
    primal_out = multiply_add_prim(x, y, z)

    def make_zero(tan):
      # The tutorial's lax.zeros_like_array is gone from JAX 0.10.
      return lax.full_like(x, 0) if type(tan) is ad.Zero else tan

    output_tangent = multiply_add_prim(make_zero(xt), y, multiply_add_prim(
        x, make_zero(yt), make_zero(zt)))
    return (primal_out, output_tangent)

  ad.primitive_jvps[multiply_add_p] = multiply_add_value_and_jvp

  def multiply_add_transpose(ct, x, y, z):
    if not ad.is_undefined_primal(x):
      assert ad.is_undefined_primal(y)
      ct_y = ad.Zero(y.aval) if type(ct) is ad.Zero else multiply_add_prim(
          x, ct, lax.full_like(x, 0))
      res = None, ct_y, ct
    else:
      assert ad.is_undefined_primal(x)
      ct_x = ad.Zero(x.aval) if type(ct) is ad.Zero else multiply_add_prim(
          ct, y, lax.full_like(y, 0))
      res = ct_x, None, ct
    return res

  ad.primitive_transposes[multiply_add_p] = multiply_add_transpose

  def multiply_add_batch(vector_arg_values, batch_axes):
    assert batch_axes[0] == batch_axes[1]
    assert batch_axes[0] == batch_axes[2]
    log.append("batch")
    res = multiply_add_prim(*vector_arg_values)
    return res, batch_axes[0]

  batching.primitive_batchers[multiply_add_p] = multiply_add_batch
  return multiply_add_p, multiply_add_prim, square_add_prim


@pytest.fixture
def tutorial():
  return define_multiply_add(PUREJAX)


# ---------------------------------------------------------------------------
# "How primitives work"

def test_eager_and_jaxpr(tutorial):
  _, _, square_add_prim = tutorial
  out = square_add_prim(2., 10.)
  assert out.dtype == np.float32 and float(out) == 14.
  text = str(purejax.make_jaxpr(square_add_prim)(2., 10.))
  assert text == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = multiply_add a a b in (c,) }"


def test_jit_runs_the_impl_as_a_host_step():
  log = []
  _, _, square_add_prim = define_multiply_add(PUREJAX, log)
  f = purejax.jit(square_add_prim)
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  np.testing.assert_array_equal(f(x, x + 1), x * x + x + 1)
  assert "impl" in log
  source = f.lower(x, x).compile().as_text()
  assert "multiply_add" in source   # named among the host steps


def test_jvp_grad_vmap_against_formulas(tutorial):
  _, multiply_add_prim, square_add_prim = tutorial
  jax = purejax
  primal, tangent = jax.jvp(square_add_prim, (2., 10.), (1., 1.))
  assert (float(primal), float(tangent)) == (14., 5.)   # d(a^2 + b) = 2a da + db
  assert float(jax.grad(square_add_prim)(2., 10.)) == 4.
  assert float(jax.jit(jax.grad(square_add_prim))(2., 10.)) == 4.
  a = np.array([2., 3., -1.], np.float32)
  b = np.array([10., 20., 30.], np.float32)
  for f in (jax.vmap(square_add_prim), jax.jit(jax.vmap(square_add_prim))):
    np.testing.assert_array_equal(f(a, b), a * a + b)
  # (The tutorial's rules batch only operands batched alike: its zeros are
  # unbatched, so vmap of grad is out of its reach, in JAX too.)
  jvp = lambda a, b: jax.jvp(square_add_prim, (a, b), (b, a))
  per_example = [jvp(ai, bi) for ai, bi in zip(a, b)]
  for f in (jax.vmap(jvp), jax.jit(jax.vmap(jvp))):
    np.testing.assert_array_equal(f(a, b), np.array(per_example).T)
  np.testing.assert_array_equal(jvp(a, b)[1], 2 * a * b + a)
  # An unbatched operand reaches the rule as not_mapped.
  seen = []
  p = pcore.Primitive("scale")
  p.def_impl(lambda x, y: np.multiply(x, y))
  p.def_abstract_eval(lambda x, y: x)
  pbatching.primitive_batchers[p] = lambda vals, dims: (
      seen.append(dims) or p.bind(vals[0], vals[1]), dims[0])
  np.testing.assert_array_equal(jax.vmap(p.bind, (0, None))(a, np.float32(2)), 2 * a)
  assert seen == [(0, pbatching.not_mapped)]


def test_against_jax():
  japi = _jax_api()
  jax = japi.jax
  _, _, jsq = define_multiply_add(japi)
  _, _, psq = define_multiply_add(PUREJAX)
  a = np.array([2., 3., -1.], np.float32)
  b = np.array([10., 20., 30.], np.float32)
  for make in (lambda j: j.make_jaxpr, lambda j: lambda f: j.make_jaxpr(j.vmap(f))):
    assert str(make(purejax)(psq)(a, b)) == str(make(jax)(jsq)(a, b))
  assert str(purejax.make_jaxpr(psq)(2., 10.)) == str(jax.make_jaxpr(jsq)(2., 10.))
  for transform in (lambda j, f: j.grad(f), lambda j, f: lambda x, y: j.jvp(f, (x, y), (y, x))[1]):
    for x, y in zip(a, b):
      np.testing.assert_array_equal(transform(purejax, psq)(x, y), transform(jax, jsq)(x, y))
  jvp = lambda j, f: lambda x, y: j.jvp(f, (x, y), (y, x))
  np.testing.assert_array_equal(purejax.vmap(jvp(purejax, psq))(a, b),
                                jax.vmap(jvp(jax, jsq))(a, b))


def _host_steps_of(f, *args):
  return purejax.jit(f).lower(*args).compile().as_text().split("\n", 1)[0]


def test_a_lower_fun_lowering_is_the_primitives_expansion_under_jit(tutorial):
  """register_lowering(p, mlir.lower_fun(f)) (equinox's way) makes ``f``'s lax
  operations p's code under jit: fused, no host step; the impl still runs
  eagerly."""
  multiply_add_p, _, square_add = tutorial
  a = np.array([2., 3., -1.], np.float32)
  b = np.array([10., 20., 30.], np.float32)
  f = lambda a, b: pjnp.sin(square_add(a, b))   # noqa: E731
  from purejax._src.config import config
  with config.override("purejax_compile_sync", True):
    assert "multiply_add" in _host_steps_of(f, a, b)   # the impl, as a host step
    pmlir.register_lowering(multiply_add_p, pmlir.lower_fun(lambda x, y, z: x * y + z,
                                                            multiple_results=False))
    g = lambda a, b: pjnp.sin(square_add(a, b))   # noqa: E731  (traced anew)
    assert _host_steps_of(g, a, b).endswith("none */")
    np.testing.assert_allclose(purejax.jit(g)(a, b), np.sin(a * a + b), rtol=1e-6)
  np.testing.assert_array_equal(square_add(a, b), a * a + b)
  with pytest.raises(NotImplementedError, match="not called"):
    pmlir.lower_fun(lambda x: x)(None)


def test_other_lowerings_are_recorded_and_the_impl_runs(tutorial):
  """A lowering that builds MLIR is kept, not used: under jit the impl
  runs, as a host step (which as_text names)."""
  multiply_add_p, _, square_add = tutorial
  rule = lambda ctx, x, y, z: None   # noqa: E731
  assert pmlir.register_lowering(multiply_add_p, rule, platform="cpu") is rule
  assert multiply_add_p.mlir_lowerings == {"cpu": rule}
  a = np.array([2., 3.], np.float32)
  np.testing.assert_array_equal(purejax.jit(square_add)(a, a), a * a + a)


def test_axis_primitive_batchers_take_jax_signature(tutorial):
  """batching.axis_primitive_batchers[p] = rule: JAX's older table, the rule
  given the vmap's axis size and name."""
  multiply_add_p, _, square_add = tutorial
  seen = []

  def rule(axis_size, axis_name, trace_type, vals, dims, **params):
    seen.append((axis_size, axis_name, trace_type))
    vals = [pbatching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
    return multiply_add_p.bind(*vals), 0
  pbatching.axis_primitive_batchers[multiply_add_p] = rule
  assert multiply_add_p in pbatching.axis_primitive_batchers
  assert pbatching.axis_primitive_batchers[multiply_add_p] is rule
  a = np.arange(6., dtype=np.float32).reshape(3, 2)
  out = purejax.vmap(square_add, in_axes=(0, None), axis_name="i")(a, np.ones(2, np.float32))
  np.testing.assert_array_equal(out, a * a + 1)
  assert seen == [(3, "i", None)]


# ---------------------------------------------------------------------------
# The registries are views of the primitives' own rules

def test_rule_tables_are_the_primitives_attributes(tutorial):
  multiply_add_p = tutorial[0]
  assert pad.primitive_jvps[multiply_add_p] is multiply_add_p.jvp
  assert pad.primitive_transposes[multiply_add_p] is multiply_add_p.transpose
  rule = pbatching.primitive_batchers[multiply_add_p]
  assert rule.__name__ == "multiply_add_batch"
  assert multiply_add_p.batch.jax_rule is rule
  assert multiply_add_p in pad.primitive_jvps and plax.sin_p in pad.primitive_jvps
  assert plax.add_p in pbatching.primitive_batchers   # elementwise: the family rule
  del pad.primitive_transposes[multiply_add_p]
  assert multiply_add_p.transpose is None and multiply_add_p not in pad.primitive_transposes
  with pytest.raises(NotImplementedError, match="Transpose rule"):
    purejax.grad(tutorial[2])(2., 3.)


def test_builtin_batchers_take_jax_signature():
  x = pjnp.arange(6.).reshape(2, 3)
  out, dim = pbatching.primitive_batchers[plax.sin_p]((x,), (1,))
  np.testing.assert_allclose(np.moveaxis(np.asarray(out), dim, 1), np.sin(np.asarray(x)),
                             rtol=1e-6)
  out, dim = pbatching.primitive_batchers[plax.reduce_sum_p]((x,), (0,), axes=(0,))
  np.testing.assert_array_equal(out, np.asarray(x).sum(1))
  assert dim == 0


def test_extend_core_names():
  assert isinstance(plax.add_p, pcore.Primitive)
  assert pcore.primitives.add_p is plax.add_p
  assert str(pcore.primitives.jit_p) == "jit"
  jaxpr = purejax.make_jaxpr(lambda x: pjnp.sin(x) * 2.)(1.)
  assert isinstance(jaxpr, pcore.ClosedJaxpr) and isinstance(jaxpr.jaxpr, pcore.Jaxpr)
  assert all(isinstance(v, pcore.Var) for v in jaxpr.jaxpr.invars)
  assert any(isinstance(v, pcore.Literal) for e in jaxpr.eqns for v in e.invars)
  assert [e.primitive for e in jaxpr.eqns] == [pcore.primitives.sin_p, pcore.primitives.mul_p]
  assert float(pcore.jaxpr_as_fun(jaxpr)(0.5)[0]) == pytest.approx(2 * np.sin(0.5))
  aval = purejax.core.ShapedArray((3, 4), np.float32)
  assert pcore.mapped_aval(3, 0, aval).shape == (4,)
  assert pcore.unmapped_aval(5, 1, aval).shape == (3, 5, 4)
  assert pcore.primal_dtype_to_tangent_dtype(np.dtype("int32")) == purejax.dtypes.float0
  assert pcore.valid_jaxtype(1.0) and not pcore.valid_jaxtype("a")


def test_primitives_module_against_jax():
  jax_primitives = pytest.importorskip("jax.extend.core.primitives")
  ours = {n for n in dir(pcore.primitives) if n.endswith("_p")}
  theirs = {n for n in dir(jax_primitives) if n.endswith("_p")}
  assert ours <= theirs
  for name in ours:
    assert str(getattr(pcore.primitives, name)) == str(getattr(jax_primitives, name)), name
  # What purejax lacks: empty2_p, nothing else (call_p and closed_call_p
  # are there by name only: purejax never stages them, binding one raises).
  assert theirs - ours == {"empty2_p"}
  with pytest.raises(NotImplementedError, match="stages calls as jit_p"):
    pcore.primitives.closed_call_p.bind(1.0)


# ---------------------------------------------------------------------------
# defjvp / deflinear / defbilinear, and impls written with jnp

def test_def_helpers():
  double_p = pcore.Primitive("double")
  double_p.def_impl(lambda x: 2 * x)
  double_p.def_abstract_eval(lambda x: x)
  pad.deflinear(double_p, lambda ct: [double_p.bind(ct)])
  assert float(purejax.grad(lambda x: double_p.bind(x) ** 2)(3.)) == 24.
  assert float(purejax.jit(purejax.grad(lambda x: double_p.bind(x) ** 2))(3.)) == 24.

  cube_p = pcore.Primitive("cube")
  cube_p.def_impl(lambda x: x ** 3)
  cube_p.def_abstract_eval(lambda x: x)
  pad.defjvp2(cube_p, lambda g, ans, x: g * 3 * ans / x)
  assert float(purejax.grad(cube_p.bind)(2.)) == 12.

  mul_p = pcore.Primitive("my_mul")
  mul_p.def_impl(lambda x, y: x * y)
  mul_p.def_abstract_eval(lambda x, y: x)
  pad.defbilinear(mul_p, lambda ct, x, y: mul_p.bind(ct, y), lambda ct, x, y: mul_p.bind(x, ct))
  f = lambda x, y: mul_p.bind(mul_p.bind(x, y), x)
  assert purejax.grad(f, argnums=(0, 1))(3., 5.) == (30., 9.)


def test_multiple_results_impl_with_jnp_under_jit():
  sincos_p = pcore.Primitive("sincos")
  sincos_p.multiple_results = True
  sincos_p.def_impl(lambda x: (pjnp.sin(x), pjnp.cos(x)))   # jnp inside the impl, as in JAX
  sincos_p.def_abstract_eval(lambda x: (x, x))
  x = np.linspace(0, 1, 5, dtype=np.float32)
  for f in (sincos_p.bind, purejax.jit(sincos_p.bind)):
    s, c = f(x)
    np.testing.assert_allclose(s, np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(c, np.cos(x), rtol=1e-6)
  assert str(purejax.make_jaxpr(sincos_p.bind)(x)) == (
      "{ lambda ; a:f32[5]. let b:f32[5] c:f32[5] = sincos a in (b, c) }")


# ---------------------------------------------------------------------------
# "Writing custom Jaxpr interpreters"

def safe_map(f, *args):   # the tutorial imports it from JAX's private util
  args = list(map(list, args))
  assert all(len(a) == len(args[0]) for a in args)
  return list(map(f, *args))


def eval_jaxpr(core, jaxpr, consts, *args):
  env = {}

  def read(var):
    if type(var) is core.Literal:
      return var.val
    return env[var]

  def write(var, val):
    env[var] = val

  safe_map(write, jaxpr.invars, args)
  safe_map(write, jaxpr.constvars, consts)
  for eqn in jaxpr.eqns:
    invals = safe_map(read, eqn.invars)
    outvals = eqn.primitive.bind(*invals, **eqn.params)
    if not eqn.primitive.multiple_results:
      outvals = [outvals]
    safe_map(write, eqn.outvars, outvals)
  return safe_map(read, jaxpr.outvars)


def make_inverse(api):
  jax, jnp, lax, core = api.jax, api.jnp, api.lax, api.ecore
  inverse_registry = {lax.exp_p: jnp.log, lax.tanh_p: jnp.arctanh}

  def inverse_jaxpr(jaxpr, consts, *args):
    env = {}

    def read(var):
      if type(var) is core.Literal:
        return var.val
      return env[var]

    def write(var, val):
      env[var] = val

    safe_map(write, jaxpr.outvars, args)
    safe_map(write, jaxpr.constvars, consts)
    for eqn in jaxpr.eqns[::-1]:
      invals = safe_map(read, eqn.outvars)
      if eqn.primitive not in inverse_registry:
        raise NotImplementedError(f"{eqn.primitive} does not have registered inverse.")
      outval = inverse_registry[eqn.primitive](*invals)
      safe_map(write, eqn.invars, [outval])
    return safe_map(read, jaxpr.invars)

  def inverse(fun):
    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
      closed_jaxpr = jax.make_jaxpr(fun)(*args, **kwargs)
      out = inverse_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)
      return out[0]
    return wrapped

  return inverse


def _f(jnp, x):
  x = jnp.exp(jnp.tanh(x))
  return x


def test_custom_eval_jaxpr():
  jax, jnp = purejax, pjnp
  f = lambda x: _f(jnp, x) * 2. + jnp.sum(x)
  closed_jaxpr = jax.make_jaxpr(f)(jnp.ones(5))
  x = jnp.arange(5.)
  out = eval_jaxpr(pcore, closed_jaxpr.jaxpr, closed_jaxpr.consts, x)
  np.testing.assert_allclose(out[0], f(x), rtol=1e-6)
  # The interpreter composes with the transformations.
  g = lambda x: eval_jaxpr(pcore, closed_jaxpr.jaxpr, closed_jaxpr.consts, x)[0]
  np.testing.assert_allclose(jax.jit(g)(x), f(x), rtol=1e-6)
  np.testing.assert_allclose(jax.grad(lambda x: g(x).sum())(x),
                             jax.grad(lambda x: f(x).sum())(x), rtol=1e-6)


def test_inverse_interpreter():
  jax, jnp = purejax, pjnp
  inverse = make_inverse(PUREJAX)
  f = functools.partial(_f, jnp)
  f_inv = inverse(f)
  assert jnp.allclose(f_inv(f(1.0)), 1.0)
  x = np.arange(5.0, dtype=np.float32) / 10
  np.testing.assert_allclose(jax.vmap(f_inv)(f(x)), x, rtol=1e-5, atol=1e-6)
  # d/dy arctanh(log y) = 1 / (y (1 - log(y)^2)), in float64.
  y = np.exp(np.tanh(x.astype(np.float64)))
  expected = 1 / (y * (1 - np.log(y) ** 2))
  got = jax.jit(jax.vmap(jax.grad(inverse(f))))(y.astype(np.float32))
  np.testing.assert_allclose(got, expected, rtol=1e-5)
  with pytest.raises(NotImplementedError, match="sin does not have registered inverse"):
    inverse(jnp.sin)(0.5)


def test_inverse_interpreter_against_jax():
  japi = _jax_api()
  pinv, jinv = make_inverse(PUREJAX), make_inverse(japi)
  pf, jf = functools.partial(_f, pjnp), functools.partial(_f, japi.jnp)
  one = np.float32(1.)
  assert str(purejax.make_jaxpr(pinv(pf))(pf(one))) == str(japi.jax.make_jaxpr(jinv(jf))(jf(one)))
  ys = np.exp(np.tanh(np.arange(5, dtype=np.float32) / 10))
  np.testing.assert_allclose(purejax.jit(purejax.vmap(purejax.grad(pinv(pf))))(ys),
                             japi.jax.jit(japi.jax.vmap(japi.jax.grad(jinv(jf))))(ys),
                             rtol=1e-6)


# ---------------------------------------------------------------------------
# linear_util

def _lu_program(lu):
  """Transformations in both of JAX's styles, with an auxiliary output."""
  @lu.transformation
  def scale(factor, *args):
    out = yield tuple(factor * a for a in args), {}
    yield out * 10

  @lu.transformation_with_aux
  def count(*args):
    out = yield args, {}
    yield out, len(args)

  def add_offset(f, offset, *args):
    return f(*args) + offset

  def base(x, y, power):
    return (x + y) ** power

  fun = lu.wrap_init(base, {"power": 2}, debug_info=None)
  fun = scale(fun, 3)
  fun, aux = count(fun)
  fun = lu.transformation2(add_offset)(fun, 1)
  result = fun.call_wrapped(1, 2)
  merged = lu.merge_linear_aux(aux, lambda: (_ for _ in ()).throw(lu.StoreException()))
  return result, aux(), merged, len(fun.transforms)


def test_linear_util():
  assert _lu_program(plu) == (811, 2, (True, 2), 3)   # ((3 + 6) ** 2) * 10 + 1
  fun = plu.wrap_init(lambda x: x)
  _, aux = plu.transformation_with_aux(lambda *a: (yield a, {}))(fun)
  with pytest.raises(plu.StoreException):
    aux()
  calls = []
  cached = plu.cache(lambda f, n: calls.append(n) or f.call_wrapped(n))
  base = lambda x: x + 1
  assert cached(plu.wrap_init(base), 1) == cached(plu.wrap_init(base), 1) == 2
  assert calls == [1]
  assert plu.wrap_init(base, {"a": 1}) == plu.wrap_init(base, {"a": 1})
  assert hash(plu.wrap_init(base)) == hash(plu.wrap_init(base))


def test_linear_util_against_jax():
  jlu = pytest.importorskip("jax.extend.linear_util")
  from jax._src import api_util   # JAX 0.10 requires a debug_info
  jax_wrap = jlu.wrap_init

  class WithDebugInfo:
    def __getattr__(self, name):
      return getattr(jlu, name)

    @staticmethod
    def wrap_init(f, params=None, *, debug_info=None):
      return jax_wrap(f, params, debug_info=api_util.debug_info("test", f, (), {}))

  assert _lu_program(plu) == _lu_program(WithDebugInfo())


def _flattened(jax):
  from jax import api_util
  from jax.extend import linear_util as lu

  def f(a, b=1.0):
    return {"s": a + b, "p": a * b}
  args, in_tree = jax.tree.flatten(((2.0,), {"b": 3.0}))
  wf, out_tree = api_util.flatten_fun(lu.wrap_init(f), in_tree)
  out = [float(x) for x in wf.call_wrapped(*args)]
  wf2, out_tree2 = api_util.flatten_fun_nokwargs(lu.wrap_init(f), jax.tree.structure((2.0, 3.0)))
  out2 = [float(x) for x in wf2.call_wrapped(2.0, 3.0)]
  info = api_util.debug_info("jit", f, (2.0,), {"b": 3.0})
  return (out, str(out_tree()), out2, str(out_tree2()), info.traced_for, info.arg_names,
          info.func_src_info.split(" at ")[0], str(api_util.shaped_abstractify(jax.numpy.ones(2))))


def test_api_util_as_jax():
  """jax.api_util's flattening helpers (numpyro traces with them)."""
  got = _flattened(purejax)
  assert got[0] == [6.0, 5.0] and got[4:7] == ("jit", ("a", "b"), "f")
  jax = pytest.importorskip("jax")
  assert got == _flattened(jax)


def test_take_current_trace():
  """extend.core.take_current_trace: the current trace out, the eval trace in."""
  seen = []

  def f(x):
    with pcore.take_current_trace() as outer:
      seen.append((type(outer).__name__, pjnp.sin(1.0).__class__.__name__))
    return x * 2
  purejax.jit(f)(1.0)
  assert seen[0][0] != "EvalTrace" and seen[0][1] == "ArrayImpl"
  jax = pytest.importorskip("jax")
  import jax.extend.core as jcore
  with jcore.take_current_trace() as t, pcore.take_current_trace() as u:
    assert type(t).__name__ == type(u).__name__ == "EvalTrace"


# ---------------------------------------------------------------------------
# What libraries' own interpreters and transformations use (equinox)

def _rebind_eval_jaxpr(jaxpr, consts, *args, inline_jvp_calls=False):
  """JAX's own pattern for a jaxpr interpreter: each equation re-bound with
  ``prim.bind(*args, **prim.get_bind_params(eqn.params))``; optionally a
  custom_jvp call inlined by calling its function (``subfuns[0]``)."""
  env = dict(zip(jaxpr.constvars, consts))
  env.update(zip(jaxpr.invars, args))
  read = lambda v: v.val if type(v).__name__ == "Literal" else env[v]
  for eqn in jaxpr.eqns:
    params = eqn.primitive.get_bind_params(eqn.params)
    invals = [read(v) for v in eqn.invars]
    if inline_jvp_calls and eqn.primitive.name == "custom_jvp_call":
      outs = params["subfuns"][0].call_wrapped(*invals)
    else:
      outs = eqn.primitive.bind(*invals, **params)
    env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
  return [read(v) for v in jaxpr.outvars]


def _custom_calls(api, inline):
  jax, jnp = api.jax, api.jnp

  @jax.custom_jvp
  def f(x):
    return jnp.sin(x)
  f.defjvp(lambda p, t: (f(p[0]), 3.0 * t[0]))   # a rule unlike sin's derivative

  @jax.custom_vjp
  def g(x):
    return x * x
  g.defvjp(lambda x: (x * x, x), lambda x, ct: (5.0 * ct,))

  def h(x):
    return (f(x) + jax.jit(g)(x)) * 2.0

  closed = jax.make_jaxpr(h)(1.0)
  run = lambda x: _rebind_eval_jaxpr(closed.jaxpr, closed.consts, x,
                                     inline_jvp_calls=inline)[0]
  eqn = next(e for e in closed.jaxpr.eqns if e.primitive.name == "custom_jvp_call")
  params = eqn.primitive.get_bind_params(eqn.params)
  jvp = params["subfuns"][1].call_wrapped(np.float32(0.5), np.float32(2.0))
  return {
      "value": float(run(0.5)),
      "grad": float(jax.grad(run)(0.5)),
      "jit_value": float(jax.jit(run)(0.5)),
      "inlined_jaxpr": str(jax.make_jaxpr(run)(0.5)).count("custom_jvp_call"),
      "bind_params": sorted(params),
      "jvp_subfun": [float(v) for v in jvp],
      "effects": (eqn.effects == set(), closed.jaxpr.effects == set()),
  }


@pytest.mark.parametrize("inline", [False, True])
def test_get_bind_params_rebinds_custom_derivative_calls(inline):
  """Custom derivative calls re-bound from ``get_bind_params`` keep their
  rules (grad: 2 * (3 + 5)); inlined, custom_jvp's function replaces the
  call and is differentiated instead (2 * (cos 0.5 + 5))."""
  got = _custom_calls(PUREJAX, inline)
  assert got["value"] == pytest.approx(2 * (np.sin(0.5) + 0.25), rel=1e-6)
  assert got["grad"] == pytest.approx(2 * ((np.cos(0.5) if inline else 3.0) + 5.0), rel=1e-6)
  assert got["inlined_jaxpr"] == (0 if inline else 1)
  assert got["bind_params"] == ["subfuns", "symbolic_zeros"]
  assert got["jvp_subfun"] == pytest.approx([np.sin(0.5), 6.0], rel=1e-6)
  assert got["effects"] == (True, True)
  want = _custom_calls(_jax_api(), inline)
  assert got.keys() == want.keys()
  for k in got:
    assert got[k] == (pytest.approx(want[k], rel=1e-6) if "value" in k or k == "grad"
                      or k == "jvp_subfun" else want[k]), k


def test_custom_call_subfuns_come_only_from_get_bind_params():
  def fun(*args):
    return list(args)
  with pytest.raises(NotImplementedError, match="custom_jvp_call.bind with subfuns other"):
    purejax.custom_derivatives.custom_jvp_call_p.bind(
        1.0, subfuns=(plu.wrap_init(fun), plu.wrap_init(fun)), symbolic_zeros=False)


def _trace_identity(api):
  jax, ecore = api.jax, api.ecore
  seen = {}

  def f(x):
    top = ecore.find_top_trace([x])
    seen["trace"] = type(top).__name__
    seen["own"] = x._trace.main is top.main and top.main is not None
    seen["inner_other"] = jax.jvp(lambda y: y._trace.main is top.main, (x,), (x,))[0]
    return x * 2

  jax.jvp(f, (1.0,), (1.0,))
  seen["eval_main"] = ecore.find_top_trace(()).main
  return seen


def test_find_top_trace_and_trace_main():
  """``find_top_trace`` is the current trace; ``trace.main`` (JAX's old
  name for its tag) tells one transformation's tracers from another's."""
  got = _trace_identity(PUREJAX)
  assert got == {"trace": "JVPTrace", "own": True, "inner_other": False, "eval_main": None}
  import purejax.core
  with pytest.warns(DeprecationWarning, match="jax.core.find_top_trace is deprecated"):
    assert purejax.core.find_top_trace is pcore.find_top_trace
  assert _trace_identity(_jax_api()) == got


def _impl_traced(api):
  jax, jnp, ecore = api.jax, api.jnp, api.ecore
  p = ecore.Primitive("double_sin_impl_test")
  p.def_impl(lambda x: jnp.sin(x) * 2)
  p.def_abstract_eval(lambda x: x)
  closed = jax.make_jaxpr(lambda x: p.impl(x))(1.0)
  return ([e.primitive.name for e in closed.jaxpr.eqns], float(jax.jit(p.impl)(0.5)),
          float(p.impl(0.5)), float(p.bind(0.5)))


def test_user_primitive_impl_traces_like_jax():
  """``prim.impl`` of a user primitive is the user's function: called on
  tracers it traces into their transformation (equinox's finalisation)."""
  got = _impl_traced(PUREJAX)
  assert got[0] == ["sin", "mul"]
  assert got[1:] == pytest.approx([2 * np.sin(0.5)] * 3, rel=1e-6)
  want = _impl_traced(_jax_api())
  assert want[0] == got[0] and want[1:] == pytest.approx(got[1:], rel=1e-6)
