"""Scatters on 16-bit floats and complex numbers compiled to C
(backends/cpu/gather_scatter.py): each combine of a half float computed in
float32 and rounded to the type (as NumPy's ufunc.at on ml_dtypes and
XLA:CPU do), complex sums and products as NumPy's; repeated indices
combine in index order; no host step."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax._src import stages
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")
RNG = np.random.RandomState(0)
OPS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum, "set": None}


def _data(dtype, n=40, rows=600, width=8):
  x, u = RNG.randn(n, width), RNG.randn(rows, width)
  if np.dtype(dtype).kind == "c":
    x, u = x + 1j * RNG.randn(n, width), u + 1j * RNG.randn(rows, width)
  return x.astype(dtype), u.astype(dtype), RNG.randint(0, n, rows).astype(np.int32)


def _reference(op, x, idx, u):
  """The update applied one row at a time, in index order, in x's type."""
  out = x.copy()
  for i, row in zip(idx, u):
    out[i] = row if OPS[op] is None else OPS[op](out[i], row)
  return out


def _compiled(op, x, idx, u):
  with config.override("purejax_compile_sync", True):
    compiled = jax.jit(lambda x, u: getattr(x.at[idx], op)(u)).lower(x, u).compile()
    out = np.asarray(compiled(x, u))
  assert stages.host_steps(compiled) == []
  return out


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_scatters_round_every_combine(dtype, op):
  dtype = jnp.dtype(dtype)
  x, u, idx = _data(dtype)
  got = _compiled(op, x, idx, u)
  want = _reference(op, x, idx, u)   # ml_dtypes: float32 arithmetic rounded each time
  assert got.dtype == dtype
  np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("op", ["add", "mul", "set"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_scatters(dtype, op, x64):
  x, u, idx = _data(dtype, rows=200)
  if op == "mul":
    u = u / np.abs(u)   # unit factors: no overflow after many products
  got = _compiled(op, x, idx, u)
  want = _reference(op, x.astype(np.complex128), idx, u.astype(np.complex128))
  assert got.dtype == dtype
  tol = 1e-5 if dtype == np.complex64 else 1e-12
  np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", ["bfloat16", "complex64"])
def test_scatter_add_against_jax(dtype):
  real_jax = pytest.importorskip("jax")
  x, u, idx = _data(jnp.dtype(dtype))
  got = _compiled("add", x, idx, u)
  want = np.asarray(real_jax.jit(lambda x, u: x.at[idx].add(u))(x, u))
  if jnp.dtype(dtype).kind == "c":
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
  else:
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
