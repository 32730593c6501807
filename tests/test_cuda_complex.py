"""complex64/complex128 in the GPU backend's CUDA kernels, run in emulation
and compared with the C backend and with NumPy in complex128.

The device prelude's complex functions are ports of glibc's (which the C
backend calls): with the emulation's real functions being glibc's too, the
bits are the C backend's, special values (zeros, infinities, NaNs, huge
and subnormal parts) included.  Products and quotients are NumPy's
formulas in both, unfused (the C backend does not vectorize loops over
complex values, whose products GCC would fuse).
"""
import warnings

import numpy as np
import pytest

import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends.cpu import codegen_ops, fusion, toolchain
from purejax._src.config import config

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

from purejax._src.backends.cuda import kernels, runner  # noqa: E402
from purejax._src.backends.cuda import module as cuda_module  # noqa: E402
from tests.test_cuda_emulation import assert_same, run_both  # noqa: E402
from tests.tier_pair import trace  # noqa: E402

DTYPES = ["complex64", "complex128"]


def _parts(dtype):
  return np.float32 if dtype == "complex64" else np.float64


def _operands(dtype):
  """Every pair of special and ordinary parts, then random values; and the
  same reversed (a second operand)."""
  real = _parts(dtype)
  tiny = 1e-40 if real == np.float32 else 1e-310
  huge = 3e38 if real == np.float32 else 1e300
  special = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1, -1, 0.5, 0.75, 2, 1e-3, tiny, 100,
                      -100, 1e30, huge], real)
  re, im = np.meshgrid(special, special)
  rng = np.random.RandomState(0)
  z = np.empty(re.size + 300, dtype)
  z.real = np.concatenate([re.ravel(), rng.randn(300) * 3])   # (x + 1j * inf is NaN + inf j)
  z.imag = np.concatenate([im.ravel(), rng.randn(300) * 3])
  return z, z[::-1].copy()


def _bits_per_part(c, g, what):
  if c.dtype.kind == "c":
    assert_same(c.real.copy(), g.real.copy(), what=what + " (real)")
    assert_same(c.imag.copy(), g.imag.copy(), what=what + " (imag)")
  else:
    assert_same(c, g, what=what)


FUNCTIONS = {
    "exp": jnp.exp, "log": jnp.log, "sqrt": jnp.sqrt, "sin": jnp.sin, "cos": jnp.cos,
    "tanh": jnp.tanh, "tan": jnp.tan, "expm1": jnp.expm1, "log1p": jnp.log1p,
    "exp2": jnp.exp2, "sign": jnp.sign, "rsqrt": lax.rsqrt, "logistic": lax.logistic,
    "abs": jnp.abs, "neg": jnp.negative, "conj": jnp.conj, "real": jnp.real, "imag": jnp.imag,
    "reciprocal cube": lambda z: lax.integer_pow(z, -3),
    "to float32": lambda z: z.astype(jnp.float32), "to int32": lambda z: z.astype(jnp.int32),
    "to complex64": lambda z: z.astype(jnp.complex64),
    "from its parts": lambda z: lax.complex(jnp.imag(z), jnp.real(z)),
}
# complex_inverse_c's ports of glibc's.
INVERSE = {"arcsin": jnp.arcsin, "arccos": jnp.arccos, "arctan": jnp.arctan,
           "arcsinh": jnp.arcsinh, "arccosh": jnp.arccosh, "arctanh": jnp.arctanh}
FUNCTIONS.update(INVERSE)
BINARY = {"add": lambda z, w: z + w, "sub": lambda z, w: z - w, "eq": lambda z, w: z == w,
          "ne": lambda z, w: z != w, "pow": lambda z, w: z ** w,
          "select": lambda z, w: jnp.where(jnp.real(z) > 0, z, w),
          "clamp": lambda z, w: lax.clamp(w, z, w + 1)}
# NumPy's product and quotient formulas.
ARITHMETIC = {"mul": lambda z, w: z * w, "div": lambda z, w: z / w,
              "square": lambda z, w: jnp.square(z), "cube": lambda z, w: lax.integer_pow(z, 3)}


@pytest.mark.parametrize("dtype", DTYPES)
def test_complex_elementwise_matches_c_backend_bit_for_bit(dtype):
  z, w = _operands(dtype)
  with config.override("jax_enable_x64", dtype == "complex128"):
    c, g = run_both(lambda z, w: [f(z) for f in FUNCTIONS.values()]
                    + [f(z, w) for f in BINARY.values()], z, w)
  for name, a, b in zip(list(FUNCTIONS) + list(BINARY), c, g):
    _bits_per_part(a, b, name)


def _branch_operands(dtype):
  """Every pair of parts on either side of the thresholds of glibc's
  inverse functions (eps^2, eps / 8, eps, 1/2, 3/4, 1, 3/2, 1 / eps,
  16 / eps; subnormal, huge and special parts), then random values near
  the branch points +-1 and +-i."""
  real = _parts(dtype)
  fi = np.finfo(real)
  eps = fi.eps
  parts = [0, fi.smallest_subnormal * 3, fi.tiny, eps * eps / 4, eps * eps * 4, eps / 16,
           eps / 4, eps, 0.25, 0.5, 0.625, 0.75, 0.875, 1, 1.25, 1.5, 1.75, 3, 1 / eps / 2,
           2 / eps, 8 / eps, 32 / eps, fi.max / 2, fi.max, np.inf, np.nan]
  parts = np.array(parts, real)
  parts = np.concatenate([parts, np.nextafter(parts[1:-2], real(0)),
                          np.nextafter(parts[1:-3], real(np.inf)), [real(1 + eps)]])
  parts = np.concatenate([parts, -parts])
  re, im = np.meshgrid(parts, parts)
  rng = np.random.RandomState(3)
  near = (1 + rng.randn(400) * 1e-3 * rng.choice([1, 1e-3, 1e-6], 400)).astype(real)
  small = (rng.randn(400) * 10.0 ** rng.uniform(-12, 0, 400)).astype(real)
  z = np.empty(re.size + 800, dtype)
  z.real = np.concatenate([re.ravel(), near, small])
  z.imag = np.concatenate([im.ravel(), small, near])
  return z


@pytest.mark.parametrize("dtype", DTYPES)
def test_inverse_functions_match_c_backend_bit_for_bit(dtype):
  """casin, cacos, catan, casinh, cacosh and catanh in every branch of
  glibc's algorithms: glibc's bits."""
  z = _branch_operands(dtype)
  with config.override("jax_enable_x64", dtype == "complex128"):
    c, g = run_both(lambda z: [f(z) for f in INVERSE.values()], z)
  for name, a, b in zip(INVERSE, c, g):
    assert a.dtype == b.dtype == np.dtype(dtype), name
    _bits_per_part(a, b, name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_complex_products_and_quotients_match_c_backend(dtype):
  z, w = _operands(dtype)
  with config.override("jax_enable_x64", dtype == "complex128"):
    c, g = run_both(lambda z, w: [f(z, w) for f in ARITHMETIC.values()], z, w)
  eps = np.finfo(_parts(dtype)).eps
  for name, a, b in zip(ARITHMETIC, c, g):
    assert a.dtype == b.dtype == np.dtype(dtype), name
    np.testing.assert_array_equal(np.isnan(b), np.isnan(a), err_msg=name)
    finite = np.isfinite(a)
    np.testing.assert_array_equal(b[~finite & ~np.isnan(a)], a[~finite & ~np.isnan(a)])
    np.testing.assert_allclose(b[finite], a[finite], rtol=8 * eps, atol=0, err_msg=name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_complex_functions_match_numpy(dtype):
  """On ordinary values, against NumPy's complex128 functions."""
  rng = np.random.RandomState(1)
  z = (rng.randn(64) * 2 + 1j * rng.randn(64) * 2).astype(dtype)
  w = (rng.rand(64) + 0.5 + 1j * rng.randn(64)).astype(dtype)
  exact = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
           "tanh": np.tanh, "tan": np.tan, "expm1": np.expm1, "log1p": np.log1p,
           "exp2": np.exp2, "rsqrt": lambda z: 1 / np.sqrt(z),
           "logistic": lambda z: 1 / (1 + np.exp(-z)), "abs": np.abs,
           "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan,
           "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh}
  with config.override("jax_enable_x64", dtype == "complex128"):
    _, g = run_both(lambda z, w: [FUNCTIONS[n](z) for n in exact] + [z ** w, z * w / (w - z)],
                    z, w)
  z64, w64 = z.astype(np.complex128), w.astype(np.complex128)
  want = [f(z64) for f in exact.values()] + [z64 ** w64, z64 * w64 / (w64 - z64)]
  rtol = 1e-5 if dtype == "complex64" else 1e-13
  for name, got, expected in zip(list(exact) + ["pow", "arithmetic"], g, want):
    np.testing.assert_allclose(got, expected, rtol=rtol, err_msg=name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_complex_reductions(dtype):
  """Sums and products (complex64 sums accumulate in complex128) fold in
  the GPU's partition, the C backend's in loop order: close; max/min (XLA's
  fold, NaNs included) and the cumulative extrema are one thread per
  output, in order: the C backend's bits."""
  rng = np.random.RandomState(2)
  z = (rng.randn(6, 5000) + 1j * rng.randn(6, 5000)).astype(dtype)
  small = z[:, :24].copy()
  small[1, 3] = np.nan
  small[2, 5] = complex(np.nan, 1)
  small[3, 0] = complex(-np.inf, -1)
  with config.override("jax_enable_x64", dtype == "complex128"):
    c, g = run_both(lambda z: [z.sum(1), z.sum(0), (z[:, :40] / 2).prod(1), jnp.cumsum(z, 1),
                               jnp.cumprod(z[:, :30], 0)], z)
    ce, ge = run_both(lambda s: [s.max(1), s.min(0), s.max(), lax.cummax(s, 1),
                                 lax.cummin(s, 0, reverse=True)], small)
  rtol = 1e-6 if dtype == "complex64" else 1e-14
  for a, b in zip(c, g):
    assert a.dtype == b.dtype == np.dtype(dtype)
    np.testing.assert_allclose(b, a, rtol=rtol)
  z128 = z.astype(np.complex128)
  np.testing.assert_allclose(g[0], z128.sum(1), rtol=rtol)
  np.testing.assert_allclose(g[3], np.cumsum(z128, 1), rtol=rtol, atol=rtol * 100)
  for i, (a, b) in enumerate(zip(ce, ge)):
    _bits_per_part(a, b, f"extremum {i}")


def test_jitted_complex_code_runs_on_the_device():
  """No host fallback, no warning: the kernels compute complex values."""
  z = np.array([1 + 1j, -2j, 0.5, 3, -1.5 + 0.25j], np.complex64)
  jaxpr, _ = trace(lambda z: [jnp.exp(z) * 2 + jnp.sqrt(z), jnp.abs(z).sum(), jnp.cumsum(z)], z)
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    run = runner.compile_jaxpr(jaxpr)
  assert not hasattr(run, "on_host") and "pj_c64" in run.source
  assert all(type(s) is not cuda_module.HostNumpyStep for s in run.module.steps)
  z64 = z.astype(np.complex128)
  got = run(z)
  np.testing.assert_allclose(got[0], np.exp(z64) * 2 + np.sqrt(z64), rtol=1e-6)
  np.testing.assert_allclose(got[1], np.abs(z64).sum(), rtol=1e-6)
  np.testing.assert_allclose(got[2], np.cumsum(z64), rtol=1e-6)


def test_what_has_no_cuda_code_runs_on_the_host_with_a_warning(monkeypatch):
  """An operation with no device code (no complex function is left: the
  test takes asinh's away) is a clear error naming it, and the runner
  runs such a jaxpr on the host, saying so once."""
  supported = codegen_ops.cuda_supported
  monkeypatch.setattr(codegen_ops, "cuda_supported",
                      lambda name, ins, out: name != "asinh" and supported(name, ins, out))
  z = np.array([1 + 1j, -2j, 0.5, 3], np.complex64)
  jaxpr, _ = trace(lambda z: [jnp.arcsinh(z) * 2], z)
  with pytest.raises(kernels.UnsupportedOnGpu, match="asinh on complex64 is unsupported"):
    cuda_module.generate(fusion.plan_jaxpr(jaxpr))
  monkeypatch.setattr(runner, "_warned", set())
  with pytest.warns(RuntimeWarning, match="asinh on complex64 is unsupported on the GPU "
                    "backend; such computations run on the host"):
    run = runner.compile_jaxpr(jaxpr)
  assert run.on_host
  np.testing.assert_allclose(run(z)[0], np.arcsinh(z.astype(np.complex128)) * 2, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_complex_max_fused_with_a_sum_runs_in_two_passes(dtype):
  """XLA's complex max is folded by one thread per output, a float sum in
  the GPU's partition: a group with both is two pairs of kernels over its
  values, the second storing only the extrema (the C backend's bits)."""
  rng = np.random.RandomState(6)
  z = (rng.randn(3, 8) + 1j * rng.randn(3, 8)).astype(dtype)
  z[1, 2] = np.nan
  z[2, 4] = complex(1, np.nan)
  f = lambda z: [(z * 2).sum(1), (z * 2).max(1), (z - 1).min(1), jnp.abs(z).sum(1), z * 3]
  jaxpr, _ = trace(f, z)
  mod = cuda_module.generate(fusion.plan_jaxpr(jaxpr))
  names = [name for s in mod.steps if hasattr(s, "functions") for name, _ in s.functions]
  assert any(name.endswith("_seq_part") for name in names), names
  with config.override("jax_enable_x64", dtype == "complex128"):
    c, g = run_both(f, z)
  # complex sums fold in the GPU's partition (close, as in test_complex_reductions)
  np.testing.assert_allclose(g[0], c[0], rtol=1e-6 if dtype == "complex64" else 1e-14)
  for i, (a, b) in enumerate(zip(c[1:], g[1:]), start=1):
    _bits_per_part(a, b, f"output {i}")


def test_expressions_are_spelled_for_both_compilers():
  """The table's complex expressions use the neutral macros, which the C
  prelude and the device prelude define; CUDA renames the types and the C
  library's functions."""
  expr = codegen_ops.literal(1 - 2j, np.complex64)
  assert expr.startswith("PJ_COMPLEX(")
  text = codegen_ops.for_cuda(f"float _Complex a = cexpf({expr}); double _Complex b = cpow(b, b);")
  assert text.startswith("pj_c64 a = pj_c99_cexpf(PJ_COMPLEX(")
  assert "pj_c128 b = pj_c99_cpow(b, b)" in text
  assert codegen_ops.for_cuda("catanhf(a) + cacos(b)") == "pj_c99_catanhf(a) + pj_c99_cacos(b)"
  for name in codegen_ops._COMPLEX_MATH:   # every complex function has device code
    assert codegen_ops.cuda_supported(name, [np.complex64], np.complex64), name
  assert codegen_ops.cuda_supported("asin", [np.float32], np.float32)
  assert codegen_ops.cuda_supported("expm1", [np.complex128], np.complex128)
