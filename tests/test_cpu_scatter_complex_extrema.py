"""Complex scatter_max/scatter_min compile to C (no NumPy host step) with
XLA's rule applied in scatter order: the old value is kept only where it
comes strictly first by (real, imaginary) part, ties and NaNs take the
update.  Both tiers agree bit for bit, with a sequential reference loop
and with real JAX."""
import numpy as np
import pytest

import purejax as jax
from purejax import lax
from purejax._src import pjit
from purejax._src.backends.cpu import host_steps, toolchain
from purejax._src.config import config

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

RNG = np.random.RandomState(0)
PARTS = np.array([np.nan, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf])
DN = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                 scatter_dims_to_operand_dims=(0,))


def _complex(shape, dtype):
  x = np.empty(shape, dtype)
  for part in ("real", "imag"):   # few values: many ties, NaN parts
    setattr(x, part, np.where(RNG.rand(*shape) < 0.5, RNG.choice(PARTS, shape),
                              RNG.randint(-3, 4, shape)))
  return x


def _reference(operand, idx, updates, is_max):
  """A loop in scatter order with XLA's elementwise rule."""
  out = operand.copy()
  for r, i in enumerate(idx[:, 0]):
    for j in range(out.shape[1]):
      a, b = out[i, j], updates[r, j]
      first = (a.imag > b.imag if a.real == b.real else a.real > b.real) if is_max else (
          a.imag < b.imag if a.real == b.real else a.real < b.real)
      out[i, j] = a if first else b
  return out


def _bits(x):
  return np.ascontiguousarray(x).view(np.uint32 if x.dtype == np.complex64 else np.uint64)


def _case(dtype, rows, width):
  operand = _complex((10, width), dtype)
  idx = RNG.randint(0, 10, (rows, 1)).astype(np.int32)   # many repeats
  return operand, idx, _complex((rows, width), dtype)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
@pytest.mark.parametrize("width", [3, 40])   # one thread in order; owned output ranges
@pytest.mark.parametrize("name", ["scatter_max", "scatter_min"])
def test_complex_scatter_extrema_compile(name, width, dtype):
  with jax.enable_x64(dtype == np.complex128):
    operand, idx, updates = _case(dtype, 300, width)
    f = lambda o, i, u: getattr(lax, name)(o, i, u, DN)
    jf = jax.jit(f)
    assert host_steps.jaxpr_host_steps(jf.trace(operand, idx, updates).jaxpr.jaxpr) == []
    with config.override("purejax_compile_sync", True), \
        config.override("purejax_backend", "cpu"):
      got = np.asarray(jf(operand, idx, updates))
      assert hasattr(pjit.executable_for(jf.trace(operand, idx, updates).jaxpr), "source")
    with config.override("purejax_backend", "numpy"):
      want = np.asarray(jax.jit(f)(operand, idx, updates))
    ref = _reference(operand, idx, updates, name == "scatter_max")
    np.testing.assert_array_equal(_bits(got), _bits(ref))
    np.testing.assert_array_equal(_bits(want), _bits(ref))


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["scatter_max", "scatter_min"])
def test_complex_scatter_extrema_against_jax(name):
  real_jax = pytest.importorskip("jax")
  operand, idx, updates = _case(np.complex64, 200, 5)
  with config.override("purejax_compile_sync", True):
    got = np.asarray(jax.jit(lambda o, i, u: getattr(lax, name)(o, i, u, DN))(
        operand, idx, updates))
  jdn = real_jax.lax.ScatterDimensionNumbers(update_window_dims=(1,),
                                             inserted_window_dims=(0,),
                                             scatter_dims_to_operand_dims=(0,))
  want = np.asarray(real_jax.jit(lambda o, i, u: getattr(real_jax.lax, name)(o, i, u, jdn))(
      operand, idx, updates))
  np.testing.assert_array_equal(_bits(got), _bits(want))
