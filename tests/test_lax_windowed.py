"""lax.reduce_window (sum/max/min primitives and the general one), its shape
rule and errors, and the select_and_gather_add / select_and_scatter_add pair
behind max pooling's derivatives: values against a loop over windows and
against JAX, jit, vmap, jvp/grad, printed jaxprs."""
import itertools

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.test_util import check_grads

from conftest import oracle


def _reference(x, init, op, wd, ws, pad, bd, wdl):
  """reduce_window by a loop over windows, skipping padding and holes."""
  x = np.asarray(x)
  dil = tuple((n - 1) * b + 1 if n else 0 for n, b in zip(x.shape, bd))
  out_shape = tuple(max((d + lo + hi - ((w - 1) * r + 1)) // s + 1, 0)
                    for d, (lo, hi), w, r, s in zip(dil, pad, wd, wdl, ws))
  out = np.empty(out_shape, x.dtype)
  for o in itertools.product(*map(range, out_shape)):
    acc = init
    for k in itertools.product(*map(range, wd)):
      pos = [oi * s + ki * r - lo for oi, s, ki, r, (lo, _) in zip(o, ws, k, wdl, pad)]
      if all(0 <= p < d and p % b == 0 for p, d, b in zip(pos, dil, bd)):
        acc = op(acc, x[tuple(p // b for p, b in zip(pos, bd))])
    out[o] = acc
  return out


CONFIGS = [
    ((5,), (2,), (1,), ((0, 0),), (1,), (1,)),
    ((7,), (3,), (2,), ((1, 2),), (1,), (2,)),
    ((4, 5), (2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)),
    ((4, 5), (2, 3), (2, 1), ((1, 0), (2, 2)), (1, 2), (1, 1)),
    ((3, 4), (2, 2), (1, 2), ((1, 1), (0, 1)), (2, 1), (2, 1)),
    ((2, 3, 4), (1, 2, 2), (1, 1, 2), ((0, 0), (1, 0), (0, 1)), (1, 1, 1), (1, 1, 1)),
    ((4, 6), (2, 2), (1, 1), ((-1, 0), (0, -2)), (1, 1), (1, 1)),
]


@pytest.mark.parametrize("cfg", CONFIGS)
@pytest.mark.parametrize("kind", ["sum", "max", "min", "mul"])
def test_reduce_window_matches_loop(cfg, kind):
  shape, wd, ws, pad, bd, wdl = cfg
  x = np.random.RandomState(0).randint(-4, 5, shape).astype(np.float32)
  init, op, fun = {"sum": (0., np.add, lax.add), "max": (-np.inf, np.maximum, lax.max),
                   "min": (np.inf, np.minimum, lax.min), "mul": (1., np.multiply, lax.mul)}[kind]
  out = lax.reduce_window(jnp.asarray(x), np.float32(init), fun, wd, ws, pad, bd, wdl)
  expected = _reference(x, np.float32(init), op, wd, ws, pad, bd, wdl)
  assert out.shape == expected.shape == lax.reduce_window_shape_tuple(shape, wd, ws, pad, bd,
                                                                      wdl)
  assert out.dtype == np.float32
  np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype,init,fun", [
    (np.int32, 0, lax.add), (np.int8, -128, lax.max), (np.uint8, 255, lax.min),
    (np.bool_, False, lax.max), (np.float16, 0, lax.add), (np.int32, 3, lax.add)])
def test_reduce_window_dtypes(dtype, init, fun):
  x = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
  out = lax.reduce_window(jnp.asarray(x), np.array(init, dtype), fun, (2, 2), (1, 1), "SAME")
  np_fun = {lax.add: np.add, lax.max: np.maximum, lax.min: np.minimum}[fun]
  expected = _reference(x, np.array(init, dtype), np_fun, (2, 2), (1, 1),
                        ((0, 1), (0, 1)), (1, 1), (1, 1))
  assert out.dtype == dtype
  np.testing.assert_array_equal(out, expected)


def test_monoid_or_general_primitive():
  x = jnp.ones((4, 4))
  names = lambda f: [e.primitive.name for e in purejax.make_jaxpr(f)(x).eqns]
  assert names(lambda x: lax.reduce_window(x, 0., lax.add, (2, 2), (1, 1), "VALID")) == [
      "reduce_window_sum"]
  assert names(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1), "SAME")) == [
      "reduce_window_max"]
  assert names(lambda x: lax.reduce_window(x, jnp.inf, lax.min, (2, 2))) == [
      "reduce_window_min"]
  # Not an identity: the general primitive (its init included once per window).
  assert names(lambda x: lax.reduce_window(x, 1., lax.add, (2, 2))) == ["reduce_window"]
  np.testing.assert_array_equal(lax.reduce_window(x, 1., lax.add, (2, 2)), np.full((3, 3), 5.))


def test_general_computation_folds_in_row_major_order_and_skips_padding():
  # XLA folds acc = f(acc, x) over the window in row-major order; padding
  # and base-dilation holes are left out (not folded in as the init).
  f = lambda a, b: a * 2 + b
  x = jnp.array([1., 2., 3., 4.])
  np.testing.assert_array_equal(lax.reduce_window(x, 0., f, (3,), (1,), [(1, 1)]),
                                [4., 11., 18., 10.])
  np.testing.assert_array_equal(
      lax.reduce_window(x, 5., f, (3,), (1,), [(1, 1)], base_dilation=(2,)),
      [11., 24., 12., 27., 13., 30., 14.])
  np.testing.assert_array_equal(lax.reduce_window(jnp.arange(6.).reshape(2, 3), 0., f, (2, 3)),
                                [[57.]])


def _argmax_pair(x):
  idx = lax.broadcasted_iota(np.int32, x.shape, 0)

  def comp(a, b):
    (ka, ia), (kb, ib) = a, b
    pick = lax.bitwise_or(lax.gt(ka, kb), lax.bitwise_and(lax.eq(ka, kb), lax.lt(ia, ib)))
    return lax.select(pick, ka, kb), lax.select(pick, ia, ib)

  return lax.reduce_window((x, idx), (np.float32(-np.inf), np.int32(0)), comp, (3,), (1,),
                           "SAME")


def test_pytree_operands_windowed_argmax():
  x = jnp.array([1., 3., 3., 0., 2., 2.])
  vals, idx = _argmax_pair(x)
  np.testing.assert_array_equal(vals, [3., 3., 3., 3., 2., 2.])
  np.testing.assert_array_equal(idx, [1, 1, 1, 2, 4, 4])
  assert idx.dtype == np.int32
  # Forward mode carries the float operand's tangent; the int one has none.
  _, (t_vals, t_idx) = purejax.jvp(_argmax_pair, (x,), (jnp.arange(6.),))
  np.testing.assert_array_equal(t_vals, [1., 1., 1., 2., 4., 4.])
  assert t_idx.dtype == purejax.dtypes.float0


def test_variadic_reduce_argmax():
  x = jnp.array([[1., 5., 5., 2.], [7., 0., 7., 7.]])
  idx = lax.broadcasted_iota(np.int32, x.shape, 1)

  def comp(a, b):
    (ka, ia), (kb, ib) = a, b
    pick = lax.bitwise_or(lax.gt(ka, kb), lax.bitwise_and(lax.eq(ka, kb), lax.lt(ia, ib)))
    return lax.select(pick, ka, kb), lax.select(pick, ia, ib)

  vals, arg = lax.reduce((x, idx), (np.float32(-np.inf), np.int32(0)), comp, (1,))
  np.testing.assert_array_equal(vals, [5., 7.])
  np.testing.assert_array_equal(arg, [1, 0])


@pytest.mark.parametrize("kind", ["sum", "max", "mul"])
def test_jit_and_vmap(kind):
  init, fun = {"sum": (0., lax.add), "max": (-np.inf, lax.max), "mul": (1., lax.mul)}[kind]
  f = lambda x: lax.reduce_window(x, init, fun, (2, 3), (2, 1), ((1, 0), (1, 1)))
  xs = jnp.asarray(np.random.RandomState(1).randn(3, 5, 6).astype(np.float32))
  np.testing.assert_allclose(purejax.jit(f)(xs[0]), f(xs[0]), rtol=1e-6)
  for axis in (0, 1, 2):
    batched = purejax.vmap(f, in_axes=axis)(jnp.moveaxis(xs, 0, axis))
    np.testing.assert_allclose(batched, jnp.stack([f(x) for x in xs]), rtol=1e-6)


def test_vmap_of_max_pool_gradients():
  f = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1), "SAME").sum()
  xs = jnp.asarray(np.random.RandomState(2).randint(0, 3, (3, 4, 4)).astype(np.float32))
  g = purejax.vmap(purejax.grad(f))(xs)
  np.testing.assert_array_equal(g, jnp.stack([purejax.grad(f)(x) for x in xs]))
  t = jnp.ones_like(xs)
  jv = purejax.vmap(lambda x, t: purejax.jvp(f, (x,), (t,))[1])(xs, t)
  np.testing.assert_array_equal(jv, jnp.stack([purejax.jvp(f, (x,), (u,))[1]
                                               for x, u in zip(xs, t)]))


@pytest.mark.parametrize("cfg", [((5, 6), (2, 3), (1, 2), ((1, 0), (0, 2)), (1, 1), (1, 1)),
                                 ((4, 5), (2, 2), (2, 1), ((0, 1), (1, 1)), (2, 1), (1, 2))])
def test_sum_gradients(cfg):
  shape, wd, ws, pad, bd, wdl = cfg
  f = lambda x: lax.reduce_window(x, 0., lax.add, wd, ws, pad, bd, wdl)
  x = np.random.RandomState(3).randn(*shape).astype(np.float32)
  check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def test_max_min_gradients_without_ties():
  x = np.random.RandomState(4).permutation(30).astype(np.float32).reshape(5, 6)
  for init, fun in ((-np.inf, lax.max), (np.inf, lax.min)):
    f = lambda x: lax.reduce_window(x, init, fun, (2, 3), (1, 2), "SAME", (1, 1), (1, 1))
    check_grads(f, (x,), order=2, modes=("fwd", "rev"), eps=1e-2)
    g = lambda x: lax.reduce_window(x, init, fun, (2, 2), (1, 1), "VALID", (2, 1), (1, 1))
    check_grads(g, (x,), order=1, modes=("fwd", "rev"), eps=1e-2)


def test_max_pool_gradient_goes_to_the_first_maximum():
  x = jnp.array([[1., 1.], [1., 1.]])
  g = purejax.grad(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1),
                                               "VALID").sum())(x)
  np.testing.assert_array_equal(g, [[1., 0.], [0., 0.]])


def test_general_jvp_and_no_reverse_mode():
  f = lambda x: lax.reduce_window(x, 1., lax.mul, (2,), (1,), "SAME")
  x = np.array([1., 2., 3., 4.], np.float32)
  check_grads(f, (x,), order=1, modes=("fwd",))
  with pytest.raises(NotImplementedError, match="reduce_window"):
    purejax.grad(lambda x: f(x).sum())(x)


def test_transpose_of_sum_is_printed_like_jax():
  f = lambda x: lax.reduce_window(x, 0., lax.add, (2, 2), (1, 2), "SAME",
                                  base_dilation=(2, 1)).sum()
  text = str(purejax.make_jaxpr(purejax.grad(f))(jnp.ones((3, 4))))
  assert "padding_config=((np.int64(1), np.int64(0), 0), (np.int64(1), np.int64(1), 1))" in text
  assert "window_strides=(2, 1)" in text


@pytest.mark.parametrize("call,err,msg", [
    (lambda x: lax.reduce_window(x, 0., lax.add, (2,), (1,)), TypeError,
     "wrong number of window_dimensions"),
    (lambda x: lax.reduce_window(x, 0., lax.add, (0, 2), (1, 1)), TypeError,
     r"window_dimensions must have every element be strictly positive, got \(0, 2\)"),
    (lambda x: lax.reduce_window(x, 0., lax.add, (1, 2), (0, 1)), TypeError,
     "window_strides must have every element be strictly positive"),
    (lambda x: lax.reduce_window(x, 0., lax.add, (1, 2), (1,)), TypeError,
     "inconsistent window_strides and window_dimensions"),
    (lambda x: lax.reduce_window(x, 0., lax.add, (1, 2), (1, 1), "FOO"), RuntimeError,
     "Unrecognized padding type"),
    (lambda x: lax.reduce_window(x, 0, lax.mul, (1, 2), (1, 1)), TypeError,
     "inconsistent dtypes for operands and init_values"),
    (lambda x: lax.reduce_window(x, jnp.ones(2), lax.mul, (1, 2), (1, 1)), TypeError,
     r"expected init_values to be scalars but init_values have shapes \[\(2,\)\]"),
    (lambda x: lax.reduce_window(x > 2, False, lax.add, (1, 2), (1, 1)), TypeError,
     "operand to reduce_window_sum must have a number dtype, got bool"),
    (lambda x: lax.reduce_window((x, x), 0., lax.add, (1, 2), (1, 1)), ValueError,
     "same tree structure as init_values"),
    (lambda x: lax.reduce_window(x, 0., lambda a, b: (a, b), (1, 2), (1, 1)), ValueError,
     "output must have the same tree structure"),
    (lambda x: lax.reduce_window(x, 0., lax.add, (2, 2), (1, 1), "VALID", window_dilation=(0, 1)),
     TypeError, "All dilations must be positive"),
])
def test_errors(call, err, msg):
  with pytest.raises(err, match=msg):
    call(jnp.arange(12.).reshape(3, 4))


def test_init_batched_is_not_supported():
  f = lambda x, i: lax.reduce_window(x, i, lax.mul, (2,), (1,))
  with pytest.raises(NotImplementedError, match="initial values"):
    purejax.vmap(f)(jnp.ones((2, 3)), jnp.ones(2))


def test_empty_windows_and_operands():
  out = lax.reduce_window(jnp.ones((3, 4)), 0., lax.add, (4, 2), (1, 1))
  assert out.shape == (0, 3)
  out = lax.reduce_window(jnp.zeros((0, 3)), 0., lax.add, (1, 2), (1, 1))
  assert out.shape == (0, 2)


# -- against JAX ----------------------------------------------------------------------

def _random_case(rng, trial):
  nd = rng.randint(1, 3)
  shape = tuple(rng.randint(1, 6, nd))
  x = rng.randint(-2, 3, shape).astype(np.float32)   # many ties
  if trial % 3 == 0:
    x[rng.rand(*shape) < 0.2] = np.nan
  if trial % 4 == 0:
    x[rng.rand(*shape) < 0.3] = -np.inf
  wd = tuple(int(v) for v in rng.randint(1, 4, nd))
  ws = tuple(int(v) for v in rng.randint(1, 3, nd))
  pad = tuple((int(a), int(b)) for a, b in rng.randint(0, 3, (nd, 2)))
  bd = tuple(int(v) for v in rng.randint(1, 3, nd)) if trial % 2 else (1,) * nd
  return x, wd, ws, pad, bd


def test_max_pool_values_and_gradients_match_jax():
  jax = oracle()
  rng = np.random.RandomState(0)
  for trial in range(10):
    x, wd, ws, pad, bd = _random_case(rng, trial)
    for init, name in ((-np.inf, "max"), (np.inf, "min")):
      def f(L, x):
        return L.reduce_window(x, init, getattr(L, name), wd, ws, pad, bd)
      ours, theirs = f(lax, x), f(jax.lax, x)
      np.testing.assert_array_equal(ours, theirs)
      ct = rng.randn(*np.shape(theirs)).astype(np.float32)
      g_ours = purejax.vjp(lambda x: f(lax, x), x)[1](ct)[0]
      g_theirs = jax.vjp(lambda x: f(jax.lax, x), x)[1](ct)[0]
      np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-6, atol=1e-6)
      if not any(lo or hi for lo, hi in pad):
        t = rng.randn(*x.shape).astype(np.float32)
        np.testing.assert_array_equal(purejax.jvp(lambda x: f(lax, x), (x,), (t,))[1],
                                      jax.jvp(lambda x: f(jax.lax, x), (x,), (t,))[1])


def test_generic_and_sum_match_jax():
  jax = oracle()
  rng = np.random.RandomState(1)
  for trial in range(8):
    x, wd, ws, pad, bd = _random_case(rng, 1)
    x = np.abs(x) + 1
    for init, name in ((0., "add"), (1., "mul")):
      np.testing.assert_allclose(
          lax.reduce_window(x, np.float32(init), getattr(lax, name), wd, ws, pad, bd),
          jax.lax.reduce_window(x, np.float32(init), getattr(jax.lax, name), wd, ws, pad, bd),
          rtol=1e-6)


@pytest.mark.parametrize("name,init,grad", [("add", 0., True), ("max", -np.inf, True),
                                            ("mul", 1., False)])
def test_printed_jaxprs_match_jax(name, init, grad):
  jax = oracle()
  x = np.arange(12.).reshape(3, 4).astype(np.float32)

  def f(L):
    g = lambda x: L.reduce_window(x, init, getattr(L, name), (2, 2), (1, 1), "SAME")
    if not grad:
      return lambda x: L.reduce_window(x, init, getattr(L, name), (2, 2), (1, 1), "SAME")
    return (jax if L is jax.lax else purejax).grad(lambda x: g(x).sum())

  assert str(purejax.make_jaxpr(f(lax))(x)) == str(jax.make_jaxpr(f(jax.lax))(x))
  jvp = lambda api, L: (lambda x, t: api.jvp(lambda x: L.reduce_window(
      x, init, getattr(L, name), (2, 2), (1, 1), "SAME"), (x,), (t,)))
  assert (str(purejax.make_jaxpr(jvp(purejax, lax))(x, x))
          == str(jax.make_jaxpr(jvp(jax, jax.lax))(x, x)))
