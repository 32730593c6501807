"""Primitives the C backend does not generate code for run as host steps (their
NumPy ``impl`` between compiled kernels): each test jits a function that mixes
a family of such primitives with fusible elementwise ops before and after
them, and checks that the C backend computes what the NumPy backend does.

The ops around the host steps are exactly rounded (add, mul, sub, max, sqrt),
so floats agree to the last bit unless a primitive itself is compiled; the
tolerance allows a few ulps for that case.  Each test is one compilation (a
gcc run, cached on disk), so every family shares one jitted function.
"""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src import pjit
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(),
                                reason="no C compiler")

RNG = np.random.RandomState(0)


def _normal(*shape, dtype=np.float32):
  return RNG.standard_normal(shape).astype(dtype)


def _names(jaxpr, out=None):
  """Every primitive name in ``jaxpr`` and its sub-jaxprs."""
  out = set() if out is None else out
  for eqn in jaxpr.eqns:
    out.add(eqn.primitive.name)
    for value in eqn.params.values():
      for sub in value if isinstance(value, (tuple, list)) else [value]:
        inner = getattr(sub, "jaxpr", sub)
        if hasattr(inner, "eqns"):
          _names(inner, out)
  return out


def _host_names(exe):
  """The primitives the compiled executable runs with NumPy."""
  plan = getattr(exe, "plan", None)
  steps = getattr(plan, "steps", [])
  return {s.eqn.primitive.name for s in steps if type(s).__name__ == "HostStep"}


def check_backends(f, args, prims, rtol=1e-6, atol=1e-6):
  """Runs ``jit(f)`` on the NumPy and the C backend and compares the outputs:
  bit for bit for integers and booleans, within ``rtol``/``atol`` for floats.
  ``prims`` must all appear in the traced program, and the C backend must
  really have compiled it (not fallen back to NumPy)."""
  jf = purejax.jit(f)
  with config.override("purejax_backend", "numpy"):
    expected = purejax.tree_util.tree_leaves(jf(*args))
  with config.override("purejax_backend", "cpu"), \
       config.override("purejax_compile_sync", True):
    got = purejax.tree_util.tree_leaves(jf(*args))
    closed = jf.trace(*args).jaxpr
    exe = pjit.executable_for(closed)
  missing = set(prims) - _names(closed.jaxpr)
  assert not missing, f"not in the traced program: {sorted(missing)}"
  assert hasattr(exe, "source"), "the C backend did not compile the program"
  assert len(got) == len(expected)
  for i, (e, g) in enumerate(zip(expected, got)):
    e, g = np.asarray(e), np.asarray(g)
    assert g.dtype == e.dtype and g.shape == e.shape, f"output {i}"
    if e.dtype.kind in "fc":
      np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"output {i}")
    else:
      np.testing.assert_array_equal(g, e, err_msg=f"output {i}")
  return exe


# -- convolutions and windows ---------------------------------------------------------------

def _convnet(x, w):
  dims = ("NHWC", "HWIO", "NHWC")

  def loss(x, w):
    h = lax.conv_general_dilated(x * 0.5 + 1.0, w, (1, 1), "SAME", dimension_numbers=dims)
    h = jnp.maximum(h, 0.0)
    p = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return jnp.sum(p * p)

  y = lax.conv_general_dilated(x - 1.0, w * 2.0, (2, 1), [(1, 0), (0, 2)], (1, 2), (2, 1),
                               dims) * 3.0
  s = lax.reduce_window(x * 2.0, 0.0, lax.add, (1, 3, 2, 1), (1, 1, 2, 1), "SAME")
  mn = lax.reduce_window(x + 1.0, jnp.inf, lax.min, (1, 2, 2, 1), (1, 1, 1, 1),
                         [(0, 0), (1, 1), (0, 1), (0, 0)])
  prod = lax.reduce_window(x * 0.5, 1.0, lax.mul, (1, 2, 1, 1), (1, 1, 1, 1), "VALID")
  gx, gw = purejax.grad(loss, (0, 1))(x, w)
  # Forward mode of max pooling gathers the tangents (select_and_gather_add).
  pool = lambda v: lax.reduce_window(v, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 1, 1, 1), "SAME")
  _, jt = purejax.jvp(pool, (x,), (x * x,))
  return y, s - 1.0, mn * 2.0, prod + 1.0, gx * 2.0, gw - 1.0, jt + 0.5


def test_convolution_and_windows():
  x, w = _normal(2, 6, 5, 3), _normal(3, 3, 3, 4)
  check_backends(_convnet, (x, w), {
      "conv_general_dilated", "reduce_window_sum", "reduce_window_max",
      "reduce_window_min", "reduce_window", "select_and_scatter_add",
      "select_and_gather_add"}, rtol=1e-5, atol=1e-5)


# -- cumulative reductions, sorting -----------------------------------------------------------

def _cumulative_and_sort(x, k):
  y = x * 2.0 + 1.0
  cums = (lax.cumsum(y, axis=1), lax.cumprod(y * 0.5, axis=0, reverse=True),
          lax.cummax(y, axis=1), lax.cummin(y, axis=0), lax.cumlogsumexp(y, axis=1))
  srt = lax.sort(y - 1.0, dimension=1)
  a, b = lax.sort((k % 3, y), dimension=0, num_keys=1, is_stable=True)
  vals, idx = lax.top_k(y * 3.0, 3)
  sk, sv = lax.sort_key_val(y, k, dimension=1)
  return [c * 2.0 for c in cums] + [srt + 1.0, a + 1, b * 2.0, vals - 1.0, idx + 1,
                                    sk * 0.5, sv * 2, jnp.argmax(y, 1) + 1]


def test_cumulative_and_sorting():
  x, k = _normal(5, 7), RNG.randint(-9, 9, (5, 7)).astype(np.int32)
  check_backends(_cumulative_and_sort, (x, k), {
      "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp", "sort", "top_k"},
      rtol=1e-5, atol=1e-6)


# -- gather and scatter -----------------------------------------------------------------------

def _gather_scatter(x, i, u):
  y = x * 2.0 + 1.0
  g = y[i] * 3.0
  g2 = jnp.take_along_axis(y, (jnp.abs(y) * 3.0).astype(np.int32) % 4, axis=1) - 1.0
  d = lax.dynamic_slice(y, (i[0], 1), (2, 2)) + 1.0
  outs = [y.at[i].set(u * 2.0), y.at[i].add(u), y.at[i].multiply(u + 2.0),
          y.at[i].min(u), y.at[i].max(u), y.at[i, 1:3].set(-u[:, :2]),
          lax.dynamic_update_slice(y, u[:2] * 0.5, (i[1], 0))]
  return [g, g2, d] + [o - 2.0 for o in outs]


def test_gather_and_scatter():
  x, u = _normal(6, 4), _normal(3, 4)
  i = np.array([4, -1, 1], np.int32)   # a negative index wraps
  check_backends(_gather_scatter, (x, i, u), {
      "gather", "scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max",
      "dynamic_slice", "dynamic_update_slice"})


# -- linear algebra ---------------------------------------------------------------------------

def _linalg(a, b, dl, d, du):
  spd = a @ a.T + 4.0 * jnp.eye(a.shape[0], dtype=a.dtype)
  chol = lax.linalg.cholesky(spd * 0.5)
  q, r = lax.linalg.qr(a + 1.0)
  w, v = lax.linalg.eigh(spd)
  s = lax.linalg.svd(a - 1.0, compute_uv=False)
  lu, piv, perm = lax.linalg.lu(a * 2.0)
  tri = lax.linalg.triangular_solve(chol, b * 2.0, left_side=True, lower=True)
  tds = lax.linalg.tridiagonal_solve(dl * 0.1, d + 4.0, du * 0.1, b)
  # Signs of eigenvectors and of Q's columns are free: compare invariants.
  return (chol + 1.0, jnp.abs(q) * 2.0, r * r, w - 1.0, jnp.abs(v), s * 2.0, lu + 1.0,
          piv + 1, perm, tri - 1.0, tds * 3.0)


def test_linalg():
  n = 4
  a, b = _normal(n, n), _normal(n, 2)
  dl, d, du = _normal(n), _normal(n), _normal(n)
  dl[0] = du[-1] = 0.0
  check_backends(_linalg, (a, b, dl, d, du), {
      "cholesky", "qr", "eigh", "svd", "lu", "triangular_solve", "tridiagonal_solve"},
      rtol=1e-5, atol=1e-5)


# -- FFT and complex numbers ------------------------------------------------------------------

def _fft_complex(x, y):
  z = lax.complex(x * 2.0, y - 1.0)
  f = jnp.fft.fft(z * 2.0, axis=-1)
  fi = jnp.fft.ifft(f + 1.0)
  rf = jnp.fft.rfft(x + 1.0)
  irf = jnp.fft.irfft(rf * 0.5, n=x.shape[-1])
  f2 = jnp.fft.fftn(z, axes=(0, 1))
  return (f * 0.5, fi - 1.0, rf, irf * 2.0, f2, lax.real(z) + 1.0, lax.imag(z) * 2.0,
          lax.conj(z) * 3.0, lax.abs(z) - 1.0, jnp.angle(z))


def test_fft_and_complex():
  x, y = _normal(3, 8), _normal(3, 8)
  check_backends(_fft_complex, (x, y), {"fft", "complex", "real", "imag", "conj", "abs"},
                 rtol=1e-5, atol=1e-5)


# -- special functions ------------------------------------------------------------------------

def _special(x, y):
  p = x * x + 0.5          # positive
  u = p / (p + 1.0)        # in (0, 1)
  return (lax.erf_inv(u * 2.0 - 1.0) + 1.0, lax.lgamma(p) * 2.0, lax.digamma(p) - 1.0,
          lax.igamma(p, y * y + 0.1) * 2.0, lax.igammac(p, y * y + 0.1) + 1.0,
          lax.betainc(p, p + 1.0, u) * 3.0, lax.zeta(p + 1.5, p) - 1.0,
          lax.polygamma(jnp.ones_like(p), p) * 2.0, lax.bessel_i0e(x) + 1.0,
          lax.bessel_i1e(x) * 2.0, lax.erf(x) - 1.0, lax.erfc(x) * 2.0,
          lax.random_gamma_grad(p, y * y + 0.1) + 1.0)


def test_special_functions():
  x, y = _normal(4, 5), _normal(4, 5)
  check_backends(_special, (x, y), {
      "erf_inv", "lgamma", "digamma", "igamma", "igammac", "regularized_incomplete_beta",
      "zeta", "polygamma", "bessel_i0e", "bessel_i1e", "erf", "erfc", "random_gamma_grad"},
      rtol=2e-5, atol=1e-6)


# -- bits -------------------------------------------------------------------------------------

def _bits(x, k):
  y = x * 3.0 + 1.0
  as_int = lax.bitcast_convert_type(y, np.int32)
  as_float = lax.bitcast_convert_type(k * 7 + 1, np.float32)
  halves = lax.bitcast_convert_type(k + 3, np.uint16)
  return (as_int + 1, as_float * 2.0, halves * np.uint16(2),
          lax.reduce_precision(y, exponent_bits=5, mantissa_bits=10) * 2.0,
          lax.reduce_precision(y - 1.0, exponent_bits=8, mantissa_bits=7) + 1.0,
          lax.population_count(k * 3) + 1, lax.clz(k + 5) * 2,
          lax.population_count(k.astype(np.uint8)) + np.uint8(1))


def test_bits():
  x, k = _normal(16), RNG.randint(-1000, 1000, 16).astype(np.int32)
  check_backends(_bits, (x, k), {"bitcast_convert_type", "reduce_precision",
                                 "population_count", "clz"}, rtol=0, atol=0)


def test_host_steps_are_listed_in_the_plan():
  # FFTs are host steps by design (one call of SciPy's multi-threaded
  # pocketfft between C kernels); the convolutions are compiled.
  x, y = _normal(3, 8), _normal(3, 8)
  exe = check_backends(_fft_complex, (x, y), {"fft"}, rtol=1e-5, atol=1e-5)
  assert "fft" in _host_names(exe)
  x, w = _normal(2, 6, 5, 3), _normal(3, 3, 3, 4)
  exe = check_backends(_convnet, (x, w), {"conv_general_dilated"}, rtol=1e-5, atol=1e-5)
  assert "conv_general_dilated" not in _host_names(exe)
