"""lax.scan, lax.map and lax.associative_scan: values, errors, printed jaxprs,
and every transformation of scan_p (jvp, grad, vmap, jit, nesting)."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax.test_util import check_grads

from conftest import oracle


def py_scan(f, init, xs, length=None, reverse=False):
  """The reference: a Python loop over NumPy slices."""
  leaves, tree = jax.tree_util.tree_flatten(xs)
  n = leaves[0].shape[0] if leaves else length
  carry, ys = init, []
  for i in (reversed(range(n)) if reverse else range(n)):
    carry, y = f(carry, jax.tree_util.tree_unflatten(tree, [x[i] for x in leaves]))
    ys.append(y)
  if reverse:
    ys = ys[::-1]
  return carry, jax.tree_util.tree_map(lambda *y: np.stack([np.asarray(v) for v in y]), *ys)


def assert_tree_close(a, b, rtol=1e-5, atol=1e-6):
  la, ta = jax.tree_util.tree_flatten(a)
  lb, tb = jax.tree_util.tree_flatten(b)
  assert ta == tb
  for x, y in zip(la, lb):
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def cumbody(c, x):
  c = c * 0.9 + jnp.sin(x)
  return c, c * x


XS = np.linspace(-1.0, 2.0, 7).astype(np.float32)


# -- values ------------------------------------------------------------------------

@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 3, True])
def test_values_eager_and_jit(reverse, unroll):
  run = lambda c, xs: lax.scan(cumbody, c, xs, reverse=reverse, unroll=unroll)
  want = py_scan(cumbody, np.float32(0.5), XS, reverse=reverse)
  assert_tree_close(run(np.float32(0.5), XS), want)
  assert_tree_close(jax.jit(run)(np.float32(0.5), XS), want)


def test_length_only_and_none_ys():
  carry, ys = lax.scan(lambda c, _: (c + 1, c * 2), 0, None, length=4)
  np.testing.assert_array_equal(ys, [0, 2, 4, 6])
  assert int(carry) == 4
  carry, ys = lax.scan(lambda c, _: (c + 1., None), 0., length=3)
  assert ys is None and float(carry) == 3.0


def test_pytrees():
  def body(c, x):
    a, b = c["a"], c["b"]
    return {"a": a + x[0], "b": b * x[1]}, (a, [b, x[0] * x[1]])
  init = {"a": np.float32(0), "b": np.ones(2, np.float32)}
  xs = (np.arange(4, dtype=np.float32), np.full((4, 2), 1.5, np.float32))
  got = lax.scan(body, init, xs)
  assert_tree_close(got, py_scan(body, init, xs))
  assert_tree_close(jax.jit(lambda i, x: lax.scan(body, i, x))(init, xs), got)


def test_dtypes_and_weak_types():
  carry, ys = lax.scan(lambda c, x: (c + x, c), 0, jnp.arange(3.))
  assert carry.dtype == np.float32 and ys.dtype == np.float32 and not carry.weak_type
  carry, ys = lax.scan(lambda c, x: (c + 1, c), 0., None, length=2)
  assert carry.weak_type and ys.weak_type


def test_zero_length():
  carry, ys = lax.scan(cumbody, np.float32(1), np.zeros((0,), np.float32))
  assert float(carry) == 1.0 and ys.shape == (0,)


def test_map():
  xs = np.arange(10, dtype=np.float32).reshape(5, 2)
  f = lambda x: {"s": x.sum(), "d": x * 2}
  want = {"s": xs.sum(1), "d": xs * 2}
  assert_tree_close(lax.map(f, xs), want)
  assert_tree_close(lax.map(f, xs, batch_size=2), want)
  assert_tree_close(jax.jit(lambda x: lax.map(f, x, batch_size=5))(xs), want)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
def test_associative_scan(n):
  x = np.linspace(0.5, 1.5, n).astype(np.float32)
  np.testing.assert_allclose(lax.associative_scan(jnp.add, x), np.cumsum(x), rtol=1e-6)
  np.testing.assert_allclose(lax.associative_scan(jnp.multiply, x), np.cumprod(x), rtol=1e-5)
  np.testing.assert_allclose(lax.associative_scan(jnp.add, x, reverse=True),
                             np.cumsum(x[::-1])[::-1], rtol=1e-6)
  m = np.arange(3 * n, dtype=np.int32).reshape(3, n)
  np.testing.assert_array_equal(lax.associative_scan(jnp.maximum, m[:, ::-1], axis=1),
                                np.maximum.accumulate(m[:, ::-1], axis=1))


def test_associative_scan_pytree_matches_sequential_scan():
  # An affine recurrence h = a*h + b as an associative op on (a, b) pairs.
  a = np.linspace(0.5, 0.9, 6).astype(np.float32)
  b = np.linspace(-1, 1, 6).astype(np.float32)
  op = lambda x, y: (x[0] * y[0], y[0] * x[1] + y[1])
  _, hs = lax.associative_scan(op, (a, b))
  _, want = lax.scan(lambda h, ab: (ab[0] * h + ab[1],) * 2, np.float32(0), (a, b))
  np.testing.assert_allclose(hs, want, rtol=1e-5, atol=1e-6)
  assert_tree_close(jax.jit(lambda a, b: lax.associative_scan(op, (a, b)))(a, b),
                    lax.associative_scan(op, (a, b)))


# -- errors --------------------------------------------------------------------------

ERROR_CASES = {
    "carry_dtype": lambda m: m.lax.scan(lambda c, x: (c + x, c), m.numpy.int32(0),
                                        m.numpy.arange(3.)),
    "carry_shape": lambda m: m.lax.scan(lambda c, x: (m.numpy.ones(2), c), 0.,
                                        m.numpy.arange(3.)),
    "carry_tree": lambda m: m.lax.scan(lambda c, x: ((c, c), c), 0., m.numpy.arange(3.)),
    "carry_component": lambda m: m.lax.scan(lambda c, x: ((c[0], c[0]), x),
                                            (0., m.numpy.zeros(2)), m.numpy.arange(3.)),
    "lengths_differ": lambda m: m.lax.scan(lambda c, x: (c, x), 0.,
                                           (m.numpy.arange(3.), m.numpy.arange(4.))),
    "length_disagrees": lambda m: m.lax.scan(lambda c, x: (c, x), 0., m.numpy.arange(3.),
                                             length=4),
    "no_length": lambda m: m.lax.scan(lambda c, x: (c, x), 0., None),
    "no_leading_axis": lambda m: m.lax.scan(lambda c, x: (c, x), 0., [1., 2.]),
    "not_pair": lambda m: m.lax.scan(lambda c, x: c, 0., m.numpy.arange(3.)),
    "not_pair3": lambda m: m.lax.scan(lambda c, x: (c, x, x), 0., m.numpy.arange(3.)),
    "negative_unroll": lambda m: m.lax.scan(lambda c, x: (c + x, x), 0., m.numpy.arange(3.),
                                            unroll=-1),
}


def _error(fn, module):
  with pytest.raises(Exception) as info:
    fn(module)
  return info.type.__name__, str(info.value)


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_errors_match_jax(case):
  real = oracle()
  ours = _error(ERROR_CASES[case], jax)
  theirs = _error(ERROR_CASES[case], real)
  assert ours[0] == theirs[0]
  assert ours[1].replace("purejax", "jax") == theirs[1]


def test_carry_error_text():
  with pytest.raises(TypeError, match="The input carry c has type int32"):
    lax.scan(lambda c, x: (c + x, c), jnp.int32(0), jnp.arange(3.))


# -- printed jaxprs ----------------------------------------------------------------------

def func11(np_mod, lax_mod):
  def func(arr, extra):
    ones = np_mod.ones(arr.shape)
    def body(carry, aelems):
      ae1, ae2 = aelems
      return (carry + ae1 * ae2 + extra, carry)
    return lax_mod.scan(body, 0., (arr, ones))
  return func


def test_spec_example_jaxpr_text():
  text = str(jax.make_jaxpr(func11(jnp, lax))(jnp.arange(16), 5.))
  assert "scan[" in text and "num_consts=1" in text and "length=16" in text
  real = oracle()
  want = str(real.make_jaxpr(func11(real.numpy, real.lax))(real.numpy.arange(16), 5.))
  assert text == want
  np.testing.assert_allclose(func11(jnp, lax)(jnp.arange(16), 5.)[1],
                             func11(real.numpy, real.lax)(real.numpy.arange(16), 5.)[1])


def test_reverse_unroll_jaxpr_text():
  real = oracle()
  fn = lambda m: lambda x: m.lax.scan(lambda c, x: (c * x, c), x, m.numpy.ones((3, 2)),
                                      reverse=True, unroll=2)
  assert str(jax.make_jaxpr(fn(jax))(jnp.ones(2))) == str(
      real.make_jaxpr(fn(real))(real.numpy.ones(2)))


# -- differentiation -------------------------------------------------------------------

def loss(c0, xs, w):
  def body(c, x):
    c = jnp.tanh(c * w + x)
    return c, c ** 2
  c, ys = lax.scan(body, c0, xs)
  return c.sum() + ys.sum()


def test_check_grads_x64(x64):
  rng = np.random.RandomState(0)
  c0, xs, w = rng.randn(2), rng.randn(5, 2), rng.randn(2)
  check_grads(loss, (c0, xs, w), order=2, modes=("fwd", "rev"))
  check_grads(lambda c, x: lax.scan(lambda c, x: (c * x, c + x), c, x, reverse=True),
              (rng.randn(3), rng.randn(4, 3)), order=1)


def test_grad_matches_unrolled_loop():
  c0, xs, w = np.float32([0.3, -0.2]), XS[:6].reshape(3, 2), np.float32([0.5, 1.5])

  def unrolled(c, xs, w):
    total = 0.
    for i in range(xs.shape[0]):
      c = jnp.tanh(c * w + xs[i])
      total = total + (c ** 2).sum()
    return c.sum() + total

  want = jax.grad(unrolled, argnums=(0, 1, 2))(c0, xs, w)
  assert_tree_close(jax.grad(loss, argnums=(0, 1, 2))(c0, xs, w), want, rtol=1e-5)
  assert_tree_close(jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(c0, xs, w), want, rtol=1e-5)
  assert_tree_close(jax.grad(jax.jit(loss), argnums=(0, 1, 2))(c0, xs, w), want, rtol=1e-5)


def test_jvp_with_zero_init_tangent():
  # Only w has a tangent: the carry's tangent appears after one iteration.
  f = lambda w: lax.scan(lambda c, x: (c * w + x, c), 1., XS)
  primal, tangent = jax.jvp(f, (np.float32(0.7),), (np.float32(1.),))
  eps = 1e-3
  fd = [(a - b) / (2 * eps) for a, b in zip(jax.tree_util.tree_leaves(f(np.float32(0.7 + eps))),
                                             jax.tree_util.tree_leaves(f(np.float32(0.7 - eps))))]
  for t, d in zip(jax.tree_util.tree_leaves(tangent), fd):
    np.testing.assert_allclose(t, d, rtol=2e-2, atol=2e-2)


def test_grad_integer_carry_and_nested_scan():
  def f(w):
    def outer(c, x):
      i, acc = c
      inner, _ = lax.scan(lambda a, y: (a * w + y, None), acc, x)
      return (i + 1, inner), inner
    (_, acc), ys = lax.scan(outer, (0, 0.), XS[:6].reshape(3, 2))
    return acc + ys.sum()

  def unrolled(w):
    acc, total = 0., 0.
    for row in XS[:6].reshape(3, 2):
      for y in row:
        acc = acc * w + y
      total = total + acc
    return acc + total

  np.testing.assert_allclose(jax.grad(f)(0.8), jax.grad(unrolled)(0.8), rtol=1e-5)
  np.testing.assert_allclose(jax.jit(jax.grad(f))(0.8), jax.grad(unrolled)(0.8), rtol=1e-5)


# -- batching ----------------------------------------------------------------------------

def test_vmap_batched_xs_init_consts():
  xs = np.random.RandomState(1).randn(3, 5, 2).astype(np.float32)   # batch 3
  inits = np.float32([[0.], [1.], [2.]]) * np.ones((3, 2), np.float32)
  ws = np.float32([0.5, 1.0, -0.5])

  def run(c, xs, w):
    return lax.scan(lambda c, x: (c * w + x, (c * x).sum()), c, xs)

  want = [py_scan(lambda c, x: (c * ws[b] + x, (c * x).sum()), inits[b], xs[b])
          for b in range(3)]
  stack = lambda trees: jax.tree_util.tree_map(lambda *v: np.stack(v), *trees)
  assert_tree_close(jax.vmap(run)(inits, xs, ws), stack(want))
  # batched xs only, along axis 1
  got = jax.vmap(run, in_axes=(None, 1, None))(inits[0], xs.transpose(1, 0, 2), ws[0])
  want = [py_scan(lambda c, x: (c * ws[0] + x, (c * x).sum()), inits[0], xs[b]) for b in range(3)]
  assert_tree_close(got, stack(want))
  # batched init only: the carry is batched, the xs are not
  got = jax.vmap(run, in_axes=(0, None, None))(inits, xs[0], ws[0])
  want = [py_scan(lambda c, x: (c * ws[0] + x, (c * x).sum()), inits[b], xs[0]) for b in range(3)]
  assert_tree_close(got, stack(want))
  # batched const only: the carry becomes batched through the body
  got = jax.jit(jax.vmap(run, in_axes=(None, None, 0)))(inits[0], xs[0], ws)
  want = [py_scan(lambda c, x: (c * ws[b] + x, (c * x).sum()), inits[0], xs[0]) for b in range(3)]
  assert_tree_close(got, stack(want))


def test_vmap_grad_and_grad_vmap():
  c0, xs = np.float32([0.3, -0.2]), XS[:6].reshape(3, 2)
  ws = np.float32([[0.5, 1.5], [1.0, -1.0], [0.2, 0.3]])
  per_example = jax.vmap(jax.grad(loss, argnums=2), in_axes=(None, None, 0))(c0, xs, ws)
  want = np.stack([jax.grad(loss, argnums=2)(c0, xs, w) for w in ws])
  np.testing.assert_allclose(per_example, want, rtol=1e-5, atol=1e-6)
  g = jax.grad(lambda ws: jax.vmap(loss, in_axes=(None, None, 0))(c0, xs, ws).sum())(ws)
  np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


def test_vmap_of_map_and_associative_scan():
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  np.testing.assert_allclose(jax.vmap(lambda r: lax.map(jnp.sin, r))(x), np.sin(x), rtol=1e-6)
  np.testing.assert_allclose(jax.vmap(lambda r: lax.associative_scan(jnp.add, r))(x),
                             np.cumsum(x, 1))


# -- against the oracle --------------------------------------------------------------------

def test_oracle_values_and_grads():
  real = oracle()

  def make(m):
    def f(c0, xs, w):
      def body(c, x):
        c = m.numpy.tanh(c * w + x)
        return c, m.numpy.sin(c) * x
      c, ys = m.lax.scan(body, c0, xs, reverse=True)
      return c.sum() + ys.sum()
    return f

  c0, xs, w = np.float32([0.3, -0.2]), XS[:6].reshape(3, 2), np.float32([0.5, 1.5])
  np.testing.assert_allclose(make(jax)(c0, xs, w), make(real)(c0, xs, w), rtol=1e-5)
  ours = jax.grad(make(jax), argnums=(0, 1, 2))(c0, xs, w)
  theirs = real.grad(make(real), argnums=(0, 1, 2))(c0, xs, w)
  assert_tree_close(ours, tuple(np.asarray(t) for t in theirs), rtol=1e-5)
  np.testing.assert_allclose(lax.associative_scan(jnp.multiply, XS, reverse=True),
                             real.lax.associative_scan(real.numpy.multiply, XS, reverse=True),
                             rtol=1e-5)


def test_forwarded_carry_and_ys_jaxpr_text():
  real = oracle()
  fn = lambda m: lambda xs: m.lax.scan(lambda c, x: ((c[0], c[1] + x), (x, c[1] * x)),
                                       (1., 0.), xs)
  xs = np.arange(3, dtype=np.float32)
  assert str(jax.make_jaxpr(fn(jax))(xs)) == str(real.make_jaxpr(fn(real))(xs))
  (c0, c1), (y0, y1) = fn(jax)(xs)
  assert c0 == 1.0 and float(c1) == 3.0
  np.testing.assert_array_equal(y0, xs)
  np.testing.assert_array_equal(y1, [0., 0., 2.])
  np.testing.assert_allclose(jax.grad(lambda xs: fn(jax)(xs)[1][1].sum())(xs), [3., 2., 1.])
