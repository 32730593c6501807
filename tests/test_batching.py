"""vmap: every primitive's batching rule against a per-example loop, the
composition with jit and autodiff, the API's errors (compared with JAX's),
and an oracle section comparing with real ``jax.vmap``.
"""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src import core
from purejax._src.interpreters.ad import add_any_p
from purejax._src.lax.stop_gradient import stop_gradient, stop_gradient_p
from purejax._src.pjit import pjit_p

F32, I32 = np.float32, np.int32


# -- inputs -------------------------------------------------------------------

def _sample(rng, shape, kind):
  return np.asarray(_draw(rng, shape, kind))


def _draw(rng, shape, kind):
  if kind == "f":
    return np.asarray(rng.randn(*shape), F32)
  if kind == "pos":
    return rng.uniform(0.5, 2.0, shape).astype(F32)
  if kind == "unit":
    return rng.uniform(-0.9, 0.9, shape).astype(F32)
  if kind == "gt1":
    return rng.uniform(1.2, 3.0, shape).astype(F32)
  if kind == "i":
    return rng.randint(-5, 6, shape).astype(I32)
  if kind == "small":   # shift amounts and start indices, some out of range
    return rng.randint(-2, 7, shape).astype(I32)
  if kind == "b":
    return np.asarray(rng.rand(*shape) > 0.5)
  if kind == "c":
    return np.asarray(rng.randn(*shape) + 1j * rng.randn(*shape), np.complex64)
  if kind == "special":   # values a sum or product would get wrong
    vals = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.0], F32)
    return rng.choice(vals, shape).astype(F32)
  raise ValueError(kind)


class Case:
  """A function of per-example arrays ``(shape, kind)``, vmapped in many ways."""

  def __init__(self, name, fun, *args, tol=1e-5):
    self.name, self.fun, self.args, self.tol = name, fun, args, tol

  def examples(self, rng, size):
    """``size`` examples of each argument."""
    return [[_sample(rng, shape, kind) for _ in range(size)] for shape, kind in self.args]


def _ew1(name, fun, kind="f", shape=(2, 3)):
  return Case(name, fun, (shape, kind))


def _ew2(name, fun, kind="f", shapes=((2, 3), (2, 3))):
  return Case(name, fun, (shapes[0], kind), (shapes[1], kind))


def _weak(x):
  return lax.convert_element_type(x, core.get_aval(x).dtype, weak_type=True)


def _monoid(x, y):
  return x * y + 0.5 * x   # not a monoid lax.reduce recognises: stays a reduce_p


def _pair_max(a, b):
  # (value, index) of the larger value: a reduce with two operands.
  take_a = lax.ge(a[0], b[0])
  return lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1])


_GD = lax.GatherDimensionNumbers((1,), (0,), (0,))
_SD = lax.ScatterDimensionNumbers((1,), (0,), (0,))


def _max_pool(x):
  return lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID")


def _ix(i):
  return lax.expand_dims(i, (1,))


CASES = [
    # elementwise, one operand
    *[_ew1(n, getattr(lax, n)) for n in
      ["neg", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "tanh", "logistic",
       "sin", "cos", "tan", "atan", "sinh", "cosh", "asinh", "cbrt", "abs", "square"]],
    *[_ew1(n, getattr(lax, n), "pos") for n in ["log", "log1p", "expm1", "sqrt", "rsqrt"]],
    *[_ew1(n, getattr(lax, n), "unit") for n in ["asin", "acos", "atanh"]],
    _ew1("acosh", lax.acosh, "gt1"),
    _ew1("bitwise_not", lax.bitwise_not, "i"),
    _ew1("real", lax.real, "c"), _ew1("imag", lax.imag, "c"), _ew1("conj", lax.conj, "c"),
    _ew1("round", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)),
    _ew1("integer_pow", lambda x: lax.integer_pow(x, 3)),
    _ew1("convert_element_type", lambda x: lax.convert_element_type(x, np.int32)),
    _ew1("stop_gradient", stop_gradient),
    _ew1("copy", lambda x: lax.copy_p.bind(x)),
    # elementwise, two operands (same shape, and rank 0 against rank 2)
    *[_ew2(n, getattr(lax, n)) for n in
      ["add", "sub", "mul", "max", "min", "atan2", "nextafter", "eq", "ne", "lt", "le",
       "gt", "ge"]],
    _ew2("add_scalar_left", lax.add, shapes=((), (2, 3))),
    _ew2("mul_scalar_right", lax.mul, shapes=((2, 3), ())),
    _ew2("div", lax.div, "pos"), _ew2("rem", lax.rem, "pos"), _ew2("pow", lax.pow, "pos"),
    _ew2("complex", lax.complex),
    *[_ew2(n, getattr(lax, n), "i") for n in ["bitwise_and", "bitwise_or", "bitwise_xor"]],
    *[_ew2(n, getattr(lax, n), "small") for n in
      ["shift_left", "shift_right_arithmetic", "shift_right_logical"]],
    Case("add_any", add_any_p.bind, ((2, 3), "f"), ((2, 3), "f")),
    Case("select_n_bool", lax.select_n, ((2, 3), "b"), ((2, 3), "f"), ((2, 3), "f")),
    Case("select_n_scalar_which", lax.select_n, ((), "b"), ((2, 3), "f"), ((2, 3), "f")),
    Case("select_n_int", lambda w, *c: lax.select_n(lax.clamp(0, w, 2), *c),
         ((2, 3), "i"), ((2, 3), "f"), ((2, 3), "f"), ((2, 3), "f")),
    Case("clamp_scalar", lax.clamp, ((), "f"), ((2, 3), "f"), ((), "pos")),
    Case("clamp_array", lax.clamp, ((2, 3), "f"), ((2, 3), "f"), ((2, 3), "pos")),
    # shapes
    Case("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (4, 3, 2), (2, 1)),
         ((2, 3), "f")),
    Case("broadcast_in_dim_stretch", lambda x: lax.broadcast_in_dim(x, (2, 5, 3), (0, 1, 2)),
         ((2, 1, 3), "f")),
    Case("expand_dims", lambda x: lax.expand_dims(x, (0, 2)), ((2, 3), "f")),
    Case("reshape", lambda x: lax.reshape(x, (3, 4)), ((2, 6), "f")),
    Case("reshape_dimensions", lambda x: lax.reshape(x, (6, 2), (1, 0)), ((2, 6), "f")),
    Case("transpose", lambda x: lax.transpose(x, (2, 0, 1)), ((2, 3, 4), "f")),
    Case("squeeze", lambda x: lax.squeeze(x, (0, 2)), ((1, 3, 1, 2), "f")),
    Case("rev", lambda x: lax.rev(x, (0, 2)), ((2, 3, 4), "f")),
    Case("slice", lambda x: lax.slice(x, (1, 0), (4, 3)), ((5, 3), "f")),
    Case("slice_strided", lambda x: lax.slice(x, (0, 1), (5, 3), (2, 1)), ((5, 3), "f")),
    Case("pad", lambda x, v: lax.pad(x, v, [(1, 2, 1), (-1, 0, 0)]), ((3, 4), "f"), ((), "f")),
    Case("pad_weak", lambda x, v: lax.pad(_weak(x), _weak(v), [(1, 0, 1)]),
         ((3,), "f"), ((), "f")),
    Case("concatenate", lambda x, y: lax.concatenate([x, y, x], 1),
         ((2, 3), "f"), ((2, 1), "f")),
    Case("iota", lambda x: lax.add(x, lax.broadcasted_iota(F32, (2, 3), 1)), ((2, 3), "f")),
    # dynamic slices: start indices from -2 to 6 exercise the clamping
    Case("dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
         ((5, 6), "f"), ((), "small"), ((), "small")),
    Case("dynamic_slice_special", lambda x, i: lax.dynamic_slice(x, (i,), (3,)),
         ((7,), "special"), ((), "small")),
    Case("dynamic_slice_weak", lambda x, i: lax.dynamic_slice(_weak(x), (i,), (3,)),
         ((5,), "f"), ((), "small")),
    Case("dynamic_slice_in_dim", lambda x, i: lax.dynamic_index_in_dim(x, i, 1, False),
         ((3, 5), "f"), ((), "small")),
    Case("dynamic_update_slice",
         lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
         ((5, 6), "f"), ((2, 3), "f"), ((), "small"), ((), "small")),
    Case("dynamic_update_slice_weak", lambda x, u, i: lax.dynamic_update_slice(
        _weak(x), _weak(u), (_weak(i),)), ((6,), "f"), ((2,), "f"), ((), "small")),
    Case("dynamic_update_slice_special", lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)),
         ((6,), "special"), ((2,), "special"), ((), "small")),
    # reductions
    *[Case(n, lambda x, f=getattr(lax, n): f(x, (0, 2)), ((2, 3, 4), "f"))
      for n in ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"]],
    *[Case(n, lambda x, f=getattr(lax, n): f(x, (1,)), ((2, 3), "i"))
      for n in ["reduce_and", "reduce_or", "reduce_xor"]],
    Case("argmax", lambda x: lax.argmax(x, 1, np.int32), ((2, 3, 4), "f")),
    Case("argmin", lambda x: lax.argmin(x, 0, np.int32), ((2, 3), "f")),
    Case("reduce", lambda x, i: lax.reduce(x, i, _monoid, (1,)), ((2, 3), "unit"), ((), "f")),
    Case("reduce_weak", lambda x, i: lax.reduce(_weak(x), _weak(i), _monoid, (0,)),
         ((3,), "unit"), ((), "f")),
    Case("reduce_two_operands",
         lambda x: lax.reduce((x, lax.broadcasted_iota(I32, (2, 5), 1)),
                              (np.float32(-np.inf), np.int32(0)), _pair_max, (1,))[1],
         ((2, 5), "f")),
    # products
    Case("dot_matvec", lambda a, b: lax.dot(a, b), ((4, 3), "f"), ((3,), "f")),
    Case("dot_matmat", lambda a, b: lax.dot(a, b), ((2, 3), "f"), ((3, 4), "f")),
    Case("dot_general_batch", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
         ((2, 3, 4), "f"), ((2, 4, 5), "f")),
    Case("dot_general_multi", lambda a, b: lax.dot_general(
        a, b, (((0, 2), (2, 0)), ((), ())), preferred_element_type=np.float32),
        ((2, 3, 4), "i"), ((4, 5, 2), "i")),
    Case("clz", lax.clz, ((2, 3), "i")),
    Case("population_count", lax.population_count, ((2, 3), "i")),
    # special functions
    *[_ew1(n, getattr(lax, n), "pos") for n in
      ["erf", "erfc", "lgamma", "digamma", "bessel_i0e", "bessel_i1e"]],
    _ew1("erf_inv", lax.erf_inv, "unit"),
    Case("igamma", lax.igamma, ((2, 3), "pos"), ((2, 3), "pos")),
    Case("igammac", lax.igammac, ((2, 3), "pos"), ((2, 3), "pos")),
    Case("igamma_grad_a", lax.igamma_grad_a, ((2, 3), "pos"), ((2, 3), "pos")),
    Case("betainc", lambda a, b, x: lax.betainc(a, b, lax.abs(x) / 2),
         ((2, 3), "pos"), ((2, 3), "pos"), ((2, 3), "unit")),
    Case("polygamma", lambda m, x: lax.polygamma(lax.round(m), x),
         ((2, 3), "pos"), ((2, 3), "pos")),
    Case("zeta", lambda x, q: lax.zeta(x + 1, q), ((2, 3), "pos"), ((2, 3), "pos")),
    _ew1("reduce_precision", lambda x: lax.reduce_precision(x, 5, 10)),
    _ew1("bitcast_convert_type", lambda x: lax.bitcast_convert_type(x, np.int32)),
    _ew1("bitcast_narrower", lambda x: lax.bitcast_convert_type(x, np.uint16)),
    # cumulative reductions and windows
    *[Case(n, lambda x, f=getattr(lax, n): f(x, axis=1), ((2, 3, 4), "f"))
      for n in ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]],
    Case("cumsum_reverse", lambda x: lax.cumsum(x, axis=0, reverse=True), ((3, 2), "f")),
    Case("reduce_window_sum", lambda x: lax.reduce_window(x, 0., lax.add, (2, 2), (1, 2),
                                                          "SAME"), ((4, 5), "f")),
    Case("reduce_window_max", lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1),
                                                          "VALID"), ((4, 5), "f")),
    Case("reduce_window_min", lambda x: lax.reduce_window(x, np.inf, lax.min, (1, 3), (1, 2),
                                                          "SAME"), ((2, 5), "f")),
    Case("reduce_window_generic", lambda x: lax.reduce_window(x, 1., lax.mul, (1, 2), (1, 1),
                                                              "VALID"), ((2, 5), "pos")),
    Case("max_pool_jvp", lambda x, t: jax.jvp(_max_pool, (x,), (t,))[1],
         ((4, 5), "f"), ((4, 5), "f")),
    Case("max_pool_grad", jax.grad(lambda x: _max_pool(x).sum()), ((4, 5), "f")),
    Case("fft", lambda x: lax.fft(x, "FFT", (3,)), ((2, 3), "c")),
    Case("irfft", lambda x: lax.fft(x, "IRFFT", (4,)), ((2, 3), "c")),
    # the rest of lax
    _ew2("mulhi", lax.mulhi, "i"),
    *[Case(n, lambda x, y, p=getattr(lax, n + "_p"): p.bind(x, y), ((2, 3), "f"), ((2, 3), "f"))
      for n in ["eq_to", "le_to", "lt_to"]],
    Case("split", lambda x: lax.split(x, (1, 2), 1)[1], ((2, 3), "f")),
    Case("tile", lambda x: lax.tile(x, (2, 1)), ((2, 3), "f")),
    Case("stack", lambda x, y: lax.stack([x, y], 1), ((2, 3), "f"), ((2, 3), "f")),
    Case("unstack", lambda x: lax.unstack(x, 1)[2], ((2, 3), "f")),
    Case("optimization_barrier", lambda x, y: lax.optimization_barrier((x, y))[1],
         ((2, 3), "f"), ((2, 3), "f")),
    Case("approx_max_k", lambda x: lax.approx_max_k(x, 2)[0], ((2, 5), "f")),
    Case("ragged_dot", lambda a, b: lax.ragged_dot(a, b, np.array([2, 1], np.int32)),
         ((3, 4), "f"), ((2, 4, 2), "f")),
    Case("with_sharding_constraint", lambda x: lax.with_sharding_constraint(x, "s"),
         ((2, 3), "f")),
    Case("device_put", lambda x: lax.device_put_p.bind(
        x, devices=(None,), srcs=(None,), copy_semantics=(None,))[0], ((2, 3), "f")),
    Case("dce_sink", lambda x: (lax.dce_sink(x), x)[1], ((2, 3), "f")),
    Case("scaled_dot", lambda a, b: lax.scaled_dot(a, b, preferred_element_type=F32),
         ((2, 3), "f"), ((3, 4), "f")),
    # gather / scatter: indices from -2 to 6 exercise clamping and dropping
    Case("gather", lambda x, i: lax.gather(x, _ix(i), _GD, (1, 3), mode="fill",
                                           fill_value=0.0), ((4, 3), "f"), ((2,), "small")),
    Case("gather_clip", lambda x, i: lax.gather(x, _ix(i), _GD, (1, 3), mode="clip"),
         ((4, 3), "f"), ((2,), "small")),
    Case("scatter", lambda x, i, u: lax.scatter(x, _ix(i), u, _SD),
         ((4, 3), "f"), ((2,), "small"), ((2, 3), "f")),
    *[Case(n, lambda x, i, u, f=getattr(lax, n): f(x, _ix(i), u, _SD, mode="clip"),
           ((4, 3), "f"), ((2,), "small"), ((2, 3), "f"))
      for n in ["scatter_add", "scatter_sub", "scatter_min", "scatter_max"]],
    Case("scatter_mul", lambda x, i, u: lax.scatter_mul(x, _ix(i), u, _SD, unique_indices=True),
         ((4, 3), "f"), ((1,), "small"), ((1, 3), "f")),
    # sorting
    Case("sort", lambda x: lax.sort(x, dimension=0), ((3, 4), "f")),
    Case("sort_multi", lambda x, y: lax.sort((x, y), dimension=1, num_keys=1)[1],
         ((3, 4), "f"), ((3, 4), "f")),
    Case("top_k", lambda x: lax.top_k(x, 2)[0], ((3, 4), "f")),
    # convolution
    Case("conv", lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME"),
         ((2, 3, 5), "f"), ((4, 3, 2), "f")),
    # calls
    Case("jit", jax.jit(lambda x, y: jnp.sin(x) @ y), ((2, 3), "f"), ((3,), "f")),
    Case("checkpoint", jax.checkpoint(lambda x: jnp.sin(x).sum(0)), ((2, 3), "f")),
]


# -- the per-example loop -------------------------------------------------------

def _batch(examples, axis):
  """The examples stacked along ``axis`` (None: the first example alone)."""
  if axis is None:
    return examples[0]
  return np.stack(examples, axis=axis)


def _take(x, i, axis):
  return x if axis is None else np.take(x, i, axis=axis)


def _loop(fun, args, in_axes, out_axes, size):
  """The per-example results stacked along ``out_axes``, and their weak type."""
  outs = [fun(*[_take(x, i, a) for x, a in zip(args, in_axes)]) for i in range(size)]
  weak = core.get_aval(outs[0]).weak_type
  return np.moveaxis(np.stack([np.asarray(o) for o in outs]), 0, out_axes), weak


def _assert_same(got, want, tol):
  want, weak = want if isinstance(want, tuple) else (want, None)
  if weak is not None:
    assert core.get_aval(got).weak_type == weak
  got = np.asarray(got)
  assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                want.dtype, want.shape)
  if want.dtype.kind in "fc":
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # Exact where it should be: zeros keep their sign (selects and pads).
    np.testing.assert_array_equal(np.signbit(got.real[got.real == 0]),
                                  np.signbit(want.real[got.real == 0]))
  else:
    np.testing.assert_array_equal(got, want)


def _axes_variants(case):
  """(in_axes, out_axes, batch size) combinations: first and last axes,
  negative axes, each argument unbatched in turn, a batch of one."""
  n = len(case.args)
  ranks = [len(shape) for shape, _ in case.args]
  yield (0,) * n, 0, 3
  yield tuple(-1 for _ in ranks), -1, 2
  yield tuple(min(1, r) for r in ranks), 1, 3
  yield (0,) * n, 0, 1
  for k in range(n):
    if n > 1:
      yield tuple(None if j == k else -1 for j in range(n)), -1, 2


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_vmap_matches_loop(case):
  rng = np.random.RandomState(0)
  for in_axes, out_axes, size in _axes_variants(case):
    examples = case.examples(rng, size)
    args = [_batch(ex, a) for ex, a in zip(examples, in_axes)]
    out_rank = np.ndim(case.fun(*[ex[0] for ex in examples])) + 1
    if not -out_rank <= out_axes < out_rank:
      out_axes = 0
    got = jax.vmap(case.fun, in_axes, out_axes)(*args)
    want = _loop(case.fun, args, in_axes, out_axes % out_rank, size)
    _assert_same(got, want, case.tol)
    # Staged, the batched jaxpr passes the type checker and computes the same.
    _assert_same(jax.jit(jax.vmap(case.fun, in_axes, out_axes))(*args), want, case.tol)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_nested_vmap_matches_loop(case):
  # Two batch axes: the outer one first, the inner one last of each argument.
  rng = np.random.RandomState(1)
  outer, inner = 2, 3
  examples = [[[_sample(rng, shape, kind) for _ in range(inner)] for _ in range(outer)]
              for shape, kind in case.args]
  args = [np.stack([np.stack(row, axis=-1) for row in ex]) for ex in examples]
  got = jax.vmap(jax.vmap(case.fun, in_axes=-1), in_axes=0)(*args)
  outs = [[case.fun(*[ex[i][j] for ex in examples]) for j in range(inner)]
          for i in range(outer)]
  want = np.stack([np.stack([np.asarray(o) for o in row]) for row in outs])
  _assert_same(got, (want, core.get_aval(outs[0][0]).weak_type), case.tol)


# Not differentiable in their first argument (as in JAX).
_NO_GRAD = {"nextafter", "igamma_grad_a", "betainc", "polygamma", "zeta", "scaled_dot",
            "eq_to", "le_to", "lt_to",
            "reduce_window_generic"}


def _differentiable(case):
  """Cases with a float first argument and an inexact result."""
  if case.args[0][1] not in ("f", "pos", "unit", "gt1", "c") or case.name in _NO_GRAD:
    return False
  examples = [ex[0] for ex in case.examples(np.random.RandomState(0), 1)]
  return np.issubdtype(core.get_aval(case.fun(*examples)).dtype, np.inexact)


@pytest.mark.parametrize("case", [c for c in CASES if _differentiable(c)],
                         ids=lambda c: c.name)
def test_vmap_of_grad_matches_loop(case):
  # Batches the JVP and transpose rules' primitives (add_any, pad, ...) too.
  def loss(*args):
    out = case.fun(*args)
    complex_out = np.issubdtype(core.get_aval(out).dtype, np.complexfloating)
    return lax.real(out).sum() if complex_out else out.sum()
  grad = jax.grad(loss)
  rng = np.random.RandomState(2)
  n = len(case.args)
  for in_axes in [(0,) * n, (-1,) + (None,) * (n - 1)]:
    examples = case.examples(rng, 2)
    args = [_batch(ex, a) for ex, a in zip(examples, in_axes)]
    want = _loop(grad, args, in_axes, 0, 2)
    _assert_same(jax.vmap(grad, in_axes)(*args), want, 1e-4)


def test_cases_cover_every_primitive():
  # Each lax primitive (and the call primitives) appears in some case's jaxpr.
  rng = np.random.RandomState(0)
  seen = set()
  for case in CASES:
    examples = [ex[0] for ex in case.examples(rng, 1)]
    for eqn in jax.make_jaxpr(case.fun)(*examples).jaxpr.eqns:
      seen.add(eqn.primitive.name)
      if eqn.primitive is pjit_p:
        seen.update(e.primitive.name for e in eqn.params["jaxpr"].jaxpr.eqns)
  # Collectives need a named axis: tests/test_collectives.py batches them.
  # Control flow is batched in tests/test_cond.py, test_loops.py, test_scan.py.
  control_flow = {"cond", "scan", "while"}
  # Never staged (stage), or random per call (rng_uniform; rng_bit_generator's
  # batching advances one key, as JAX's does, so it cannot equal a loop).
  control_flow |= {"stage", "rng_uniform", "rng_bit_generator"}
  # Tokens are not arrays; the general select_and_scatter is batched in
  # tests/test_lax_select_and_scatter.py.
  control_flow |= {"create_token", "after_all", "select_and_scatter"}
  prims = {p for p in vars(lax).values()
           if isinstance(p, core.Primitive) and not hasattr(p, "axis_names")
           and p.name not in control_flow}
  prims |= {add_any_p, stop_gradient_p}
  missing = {p.name for p in prims} - seen
  assert not missing, missing
  assert "remat2" in seen and "jit" in seen


def test_every_primitive_has_a_batching_rule():
  prims = {p for p in vars(lax).values() if isinstance(p, core.Primitive)}
  prims |= {add_any_p, pjit_p, stop_gradient_p}
  for p in prims - {lax.select_and_scatter_p}:   # JAX has no rule for it either
    assert p.batch is not None or p.elementwise, p
  # Elementwise in meaning, but their shape rules are stricter than lax's
  # broadcasting: they need their own rules.
  for p in (lax.select_n_p, lax.clamp_p, add_any_p):
    assert p.batch is not None, p


# -- rules that should stay cheap -------------------------------------------------

def _eqn_names(jaxpr):
  return [e.primitive.name for e in jaxpr.jaxpr.eqns]


def test_spec_apply_matrix():
  rng = np.random.RandomState(0)
  mat = jnp.asarray(rng.randn(15, 10).astype(F32))
  batched_x = jnp.asarray(rng.randn(5, 10).astype(F32))

  def apply_matrix(v):
    return jnp.dot(mat, v)

  assert apply_matrix(batched_x[0]).shape == (15,)
  out = jax.vmap(apply_matrix)(batched_x)
  assert out.shape == (5, 15)
  np.testing.assert_allclose(out, np.asarray(batched_x) @ np.asarray(mat).T, rtol=1e-5)
  # One matrix product (then moving the batch axis out), as in JAX.
  names = _eqn_names(jax.make_jaxpr(jax.vmap(apply_matrix))(batched_x))
  assert names == ["dot_general", "transpose"], names


def test_dot_batched_both_sides_is_one_batched_product():
  a, b = np.ones((3, 5, 4), F32), np.ones((4, 2, 5), F32)
  jaxpr = jax.make_jaxpr(jax.vmap(jnp.dot, in_axes=(1, 2)))(a, b)
  assert _eqn_names(jaxpr) == ["dot_general"]
  (_, _), (lb, rb) = jaxpr.jaxpr.eqns[0].params["dimension_numbers"]
  assert (lb, rb) == ((1,), (2,))


def test_elementwise_with_unbatched_scalar_stages_no_broadcast():
  jaxpr = jax.make_jaxpr(jax.vmap(lambda x: x * 2.0 + 1.0))(np.ones((3, 2), F32))
  assert _eqn_names(jaxpr) == ["mul", "add"]


def test_select_n_with_unbatched_scalar_which_keeps_batch_axis():
  jaxpr = jax.make_jaxpr(jax.vmap(lambda x, y: lax.select(True, x, y), in_axes=1))(
      np.ones((2, 3), F32), np.ones((2, 3), F32))
  assert _eqn_names(jaxpr) == ["select_n", "transpose"]


def test_dynamic_slice_with_shared_index_is_one_dynamic_slice():
  f = jax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,)), in_axes=(0, None))
  jaxpr = jax.make_jaxpr(f)(np.ones((3, 5), F32), np.int32(1))
  assert _eqn_names(jaxpr).count("dynamic_slice") == 1
  assert "pad" not in _eqn_names(jaxpr)   # no per-example shifting


def test_batched_init_reduce():
  # JAX raises NotImplementedError; purejax spells the reduction out.
  x = np.random.RandomState(0).randn(3, 4).astype(F32)
  init = np.array([1.0, 2.0, -1.0], F32)
  out = jax.vmap(lambda x, i: lax.reduce(x, i, _monoid, (0,)))(x, init)
  want = [lax.reduce(x[k], init[k], _monoid, (0,)) for k in range(3)]
  np.testing.assert_allclose(out, np.stack(want), rtol=1e-6)


def test_iota_inside_vmap_is_not_batched():
  def f(x):
    i = lax.iota(np.int32, 4)
    return x + i, i
  out, i = jax.vmap(f, out_axes=(0, None))(np.zeros((3, 4), I32))
  np.testing.assert_array_equal(i, np.arange(4))
  np.testing.assert_array_equal(out, np.tile(np.arange(4), (3, 1)))


# -- composition with jit and autodiff ----------------------------------------------

def _mlp(params, x):
  w1, b1, w2 = params
  return jnp.tanh(x @ w1 + b1) @ w2


def _params(rng):
  return (rng.randn(3, 4).astype(F32), rng.randn(4).astype(F32), rng.randn(4).astype(F32))


def test_jit_of_vmap_and_vmap_of_jit():
  rng = np.random.RandomState(0)
  params, xs = _params(rng), rng.randn(5, 3).astype(F32)
  want = np.stack([_mlp(params, x) for x in xs])
  f = lambda x: _mlp(params, x)
  np.testing.assert_allclose(jax.jit(jax.vmap(f))(xs), want, rtol=1e-5)
  np.testing.assert_allclose(jax.vmap(jax.jit(f))(xs), want, rtol=1e-5)
  np.testing.assert_allclose(jax.vmap(jax.jit(f), in_axes=1)(xs.T), want, rtol=1e-5)


def test_per_example_gradients():
  rng = np.random.RandomState(0)
  params, xs, ys = _params(rng), rng.randn(6, 3).astype(F32), rng.randn(6).astype(F32)
  loss = lambda p, x, y: (_mlp(p, x) - y) ** 2
  grads = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(params, xs, ys)
  for k in range(6):
    one = jax.grad(loss)(params, xs[k], ys[k])
    for g, g1 in zip(grads, one):
      np.testing.assert_allclose(g[k], g1, rtol=1e-5, atol=1e-6)
  # Their mean is the gradient of the mean loss.
  mean_loss = lambda p: jnp.mean(jax.vmap(loss, in_axes=(None, 0, 0))(p, xs, ys))
  for g, gm in zip(grads, jax.grad(mean_loss)(params)):
    np.testing.assert_allclose(np.mean(g, 0), gm, rtol=1e-5, atol=1e-6)


def test_grad_of_vmap():
  x = np.linspace(-1.0, 1.0, 5).astype(F32)
  g = jax.grad(lambda x: jax.vmap(lambda v: jnp.sin(v) * v)(x).sum())(x)
  np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-5)


def test_vmap_of_grad_through_batched_dynamic_slice():
  x = np.arange(12.0, dtype=F32).reshape(3, 4)
  idx = np.array([0, 2, 5], I32)   # 5 clamps to 2
  f = lambda x, i: (lax.dynamic_slice(x, (i,), (2,)) ** 2).sum()
  g = jax.vmap(jax.grad(f))(x, idx)
  want = np.zeros_like(x)
  for k, start in enumerate([0, 2, 2]):
    want[k, start:start + 2] = 2 * x[k, start:start + 2]
  np.testing.assert_allclose(g, want)


def test_jacobians_of_known_functions():
  a = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], F32)
  x = np.array([0.3, -0.2, 0.7], F32)
  for jac in (jax.jacfwd, jax.jacrev):
    np.testing.assert_allclose(jac(lambda x: jnp.dot(a, x))(x), a, rtol=1e-6)
    np.testing.assert_allclose(jac(lambda x: jnp.sin(x) * 2.0)(x), np.diag(2 * np.cos(x)),
                               rtol=1e-6)
    # The Jacobian of a vmapped function is block diagonal.
    xs = np.stack([x, 2 * x])
    j = jac(jax.vmap(lambda v: jnp.dot(a, v) ** 2))(xs)
    assert j.shape == (2, 2, 2, 3)
    for k in range(2):
      np.testing.assert_allclose(j[k, :, k], 2 * (a @ xs[k])[:, None] * a, rtol=1e-5)
      np.testing.assert_allclose(j[k, :, 1 - k], 0.0)


def test_vmap_of_jacfwd():
  xs = np.array([[0.1, 0.2], [0.3, -0.4], [1.0, 0.5]], F32)
  j = jax.vmap(jax.jacfwd(lambda v: v * v.sum()))(xs)
  for k, x in enumerate(xs):
    np.testing.assert_allclose(j[k], np.diag(np.full(2, x.sum())) + x[:, None], rtol=1e-6)


def test_unbatched_output_is_broadcast_or_kept():
  out = jax.vmap(lambda x: 2.0, axis_size=3, in_axes=None)(1.0)
  np.testing.assert_array_equal(out, [2.0, 2.0, 2.0])
  out = jax.vmap(lambda x, y: (x + y, y), in_axes=(0, None), out_axes=(1, None))(
      np.ones((3, 2), F32), np.arange(2, dtype=F32))
  assert out[0].shape == (2, 3) and out[1].shape == (2,)


def test_kwargs_are_mapped_along_axis_zero():
  out = jax.vmap(lambda x, y: x * y)(np.arange(3.0, dtype=F32), y=np.ones(3, F32) * 2)
  np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])


def test_tracer_repr(capsys):
  def f(x):
    print(x)
    return x
  jax.vmap(f)(np.ones(3, F32))
  jax.vmap(f)(np.ones((3, 2), I32))
  jax.vmap(jax.vmap(f))(np.ones((3, 2), F32))
  assert capsys.readouterr().out.splitlines() == [
      "VmapTracer(aval=float32[], batched=float32[3])",
      "VmapTracer(aval=int32[2], batched=int32[3,2])",
      "VmapTracer(aval=float32[], batched=float32[2])",
  ]


# -- API errors, compared with JAX's ---------------------------------------------------

def _error_cases(jax, jnp):
  ones = jnp.ones
  return [
      lambda: jax.vmap(lambda x, y: x + y)(ones(3), ones(4)),
      lambda: jax.vmap(lambda x, y, z: x)(ones(3), (ones(4), ones((4, 2))), ones(5)),
      lambda: jax.vmap(lambda x, y: x, in_axes=(-1, 0))(ones((2, 3)), ones(4)),
      lambda: jax.vmap(lambda x, y: x, axis_size=2)(ones(3), ones(3)),
      lambda: jax.vmap(lambda *a: a[0])(ones(3), ones(4)),
      lambda: jax.vmap(lambda x, y=1: x)(ones(3), y=ones(4)),
      lambda: jax.vmap(lambda x: x, in_axes=1)(ones(3)),
      lambda: jax.vmap(lambda x: x, in_axes=-2)(ones(3)),
      lambda: jax.vmap(lambda x: x)(1.0),
      lambda: jax.vmap(lambda x: x, in_axes=(0, 0))(ones(3)),
      lambda: jax.vmap(lambda x: x, in_axes=1.0)(ones(3)),
      lambda: jax.vmap(lambda x: x, in_axes=(1.0,))(ones(3)),
      lambda: jax.vmap(lambda x: x, in_axes={"a": 0})(ones(3)),
      lambda: jax.vmap(lambda x: x, in_axes=True)(ones(3)),
      lambda: jax.vmap(lambda x: x, in_axes=None)(ones(3)),
      lambda: jax.vmap(lambda x: x, in_axes=(0,))(None),
      lambda: jax.vmap(lambda x: x, in_axes=({"a": 0},))({"a": ones(3), "b": ones(3)}),
      lambda: jax.vmap(lambda x: (x, x), out_axes=(0, 0, 0))(ones(3)),
      lambda: jax.vmap(lambda x: x, out_axes=None)(ones(3)),
      lambda: jax.vmap(lambda x: (1.0, {"a": x}), out_axes=None)(ones(3)),
      lambda: jax.vmap(lambda x: x, out_axes=2)(ones(3)),
      lambda: jax.vmap(lambda x: x, out_axes=-3)(ones((3, 4))),
      lambda: jax.vmap(lambda x: x, out_axes=1.5),
      lambda: jax.vmap(lambda x: x, out_axes=True),
      lambda: jax.vmap(3),
      lambda: jax.vmap(lambda x, s: x)(ones(3), "abc"),
      lambda: jax.vmap(lambda x: "s")(ones(3)),
  ]


def _error(thunk):
  try:
    thunk()
  except Exception as e:   # noqa: BLE001 -- any error is what's compared
    # JAX's placeholder for a leaf lives in its own private module.
    return type(e).__name__, str(e).replace("jax._src.api_util.PytreeLeaf",
                                            "purejax._src.vmap.PytreeLeaf")
  return None


def test_api_errors_match_jax():
  real = pytest.importorskip("jax")
  import jax.numpy as real_jnp
  ours = _error_cases(jax, jnp)
  theirs = _error_cases(real, real_jnp)
  for k, (mine, real_case) in enumerate(zip(ours, theirs)):
    expected = _error(real_case)
    assert expected is not None, k
    assert _error(mine) == expected, k


def test_inconsistent_sizes_message():
  with pytest.raises(ValueError) as info:
    jax.vmap(lambda x, y: x + y)(jnp.ones(3), {"a": jnp.ones(4)})
  assert str(info.value) == (
      "vmap got inconsistent sizes for array axes to be mapped:\n"
      "  * one axis had size 3: axis 0 of argument x of type float32[3];\n"
      "  * one axis had size 4: axis 0 of argument y['a'] of type float32[4]")


# -- oracle: real jax.vmap on the same functions ----------------------------------------

def _oracle_functions(np_):
  """Functions of (x (3, 4) per example, y (4,) per example), built from
  ``np_`` (purejax.numpy or jax.numpy)."""
  return [
      lambda x, y: np_.dot(x, y),
      lambda x, y: x @ y + np_.sum(x),
      lambda x, y: np_.tanh(x) * y,
      lambda x, y: np_.where(x > 0, x, y),
      lambda x, y: np_.mean(x, axis=0) - y,
      lambda x, y: np_.var(x, axis=1),
      lambda x, y: np_.max(x, axis=1) + np_.min(y),
      lambda x, y: np_.argmax(x, axis=0),
      lambda x, y: np_.argmin(y),
      lambda x, y: np_.concatenate([x, y[None]], axis=0),
      lambda x, y: np_.stack([y, y * 2], axis=1),
      lambda x, y: x.T.reshape(2, 6),
      lambda x, y: np_.flip(x, axis=1)[1:, ::2],
      lambda x, y: np_.outer(y, y),
      lambda x, y: np_.clip(x, -0.5, y),
      lambda x, y: np_.expand_dims(y, 0) + x,
      lambda x, y: np_.transpose(x[:, :, None] * y, (2, 0, 1)),
      lambda x, y: np_.sqrt(y @ y),
      lambda x, y: np_.broadcast_to(y, (2, 4)),
      lambda x, y: np_.prod(y) * np_.exp(x),
      lambda x, y: x[1] + y[2],
      lambda x, y: np_.tensordot(x, y, axes=1),
      lambda x, y: np_.abs(x).astype(np_.int32),
  ]


@pytest.mark.parametrize("in_axes", [(0, 0), (1, None), (-1, 0)])
def test_oracle_vmap(in_axes):
  real = pytest.importorskip("jax")
  import jax.numpy as real_jnp
  rng = np.random.RandomState(0)
  shapes = {0: (5, 3, 4), 1: (3, 5, 4), -1: (3, 4, 5), None: (3, 4)}
  x = rng.randn(*shapes[in_axes[0]]).astype(F32)
  y = rng.randn(*((5, 4) if in_axes[1] == 0 else (4,))).astype(F32)
  for k, (mine, theirs) in enumerate(zip(_oracle_functions(jnp),
                                         _oracle_functions(real_jnp))):
    for out_axes in (0, -1):
      got = jax.vmap(mine, in_axes, out_axes)(x, y)
      want = np.asarray(real.vmap(theirs, in_axes, out_axes)(x, y))
      assert got.shape == want.shape and got.dtype == want.dtype, k
      np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5, err_msg=k)


def test_oracle_batched_dynamic_indexing():
  real = pytest.importorskip("jax")
  x = np.random.RandomState(0).randn(4, 6).astype(F32)
  idx = np.array([-3, 0, 5, 2], I32)   # negative and out-of-range starts too
  makers = [
      lambda m: lambda x, i: m.lax.dynamic_slice(x, (i,), (3,)),
      lambda m: lambda x, i: m.lax.dynamic_update_slice(x, x[:2] * 10, (i,)),
      lambda m: lambda x, i: x[i],
      lambda m: lambda x, i: x.at[i].set(7.0),
      lambda m: lambda x, i: x.at[i].add(1.0),
  ]
  for make in makers:
    got = jax.vmap(make(jax))(x, idx)
    want = real.vmap(make(real))(x, idx)
    np.testing.assert_array_equal(got, np.asarray(want))


def test_dynamic_slices_with_per_example_starts_are_gathers_and_scatters():
  """vmap of dynamic_slice / dynamic_update_slice whose starts differ per
  example: a gather / scatter of the windows (clamped as the slice is), as
  in JAX, not work over the whole operand; values as a loop over examples."""
  x = np.arange(2 * 10 * 6, dtype=np.float32).reshape(2, 10, 6)
  i, j = np.array([3, 9], np.int32), np.array([-2, 1], np.int32)
  sl = lambda x, i, j: lax.dynamic_slice(x, (i, j), (3, 2))
  up = lambda x, i, j: lax.dynamic_update_slice(x, jnp.full((3, 2), 7.0), (i, j))
  for f in (sl, up):
    got = jax.vmap(f)(x, i, j)
    want = np.stack([np.asarray(f(x[b], i[b], j[b])) for b in range(2)])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(jax.jit(jax.vmap(f))(x, i, j), want)
    text = str(jax.make_jaxpr(jax.vmap(f))(x, i, j))
    assert ("gather[" if f is sl else "scatter[") in text and "pad[" not in text
  one = jax.vmap(lambda i: sl(x[0], i, 2))(i)   # one operand, starts per example
  np.testing.assert_array_equal(one, np.stack([np.asarray(sl(x[0], b, 2)) for b in i]))


class _OddName:
  """A callable whose ``__name__`` is no string (as a pytree node's field
  can be: equinox modules under scan)."""
  __name__ = property(lambda self: 42)

  def __call__(self, x):
    return x * 2.0


class _Nameless:
  def __call__(self, x):
    return x * 2.0


def _wrapped_names(jax):
  x = jax.numpy.arange(3.0)
  odd = _OddName()
  values = [jax.vmap(odd)(x), jax.grad(lambda v: odd(v).sum())(x), jax.jit(jax.vmap(odd))(x),
            jax.vmap(jax.grad(lambda v: odd(v)))(x)]
  names = [jax.vmap(_Nameless()).__name__, jax.jit(_Nameless()).__name__,
           jax.grad(_Nameless()).__name__]
  return [np.asarray(v).tolist() for v in values], names


def test_transformations_wrap_any_callable():
  """vmap and grad wrap a callable whatever its ``__name__`` is, as JAX's
  do; one with no name is named as in JAX."""
  values, names = _wrapped_names(jax)
  assert values[0] == values[2] == [0.0, 2.0, 4.0] and values[1] == values[3] == [2.0] * 3
  assert names == ["<unnamed function>"] * 3
  real = pytest.importorskip("jax")
  assert _wrapped_names(real) == (values, names)
