"""Large host arrays taken in by purejax are copied into their own mappings
(host_memory.py): the copies must equal NumPy's, conversions included, and
share nothing with the caller's array."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax._src import host_memory

BIG = host_memory.LARGE_BYTES // 4 + 1000   # float32 elements past the threshold


@pytest.mark.parametrize("source,target", [("float32", None), ("float64", "float32"),
                                           ("int64", "int32"), ("float32", "bfloat16"),
                                           ("uint8", None), ("complex128", "complex64")])
def test_copies_equal_numpys_conversion(source, target):
  rng = np.random.default_rng(0)
  x = (rng.standard_normal(BIG) * 1e6).astype(source)
  if np.dtype(source).kind == "f":
    x[:4] = [np.nan, np.inf, -np.inf, 1e300 if source == "float64" else 3e38]
  dtype = None if target is None else jnp.dtype(target)
  with np.errstate(over="ignore"):
    got = host_memory.copy(x, dtype)
    want = np.array(x, dtype=dtype)
  assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
  assert got.tobytes() == want.tobytes()
  assert not np.shares_memory(got, x)


def test_strided_and_small_sources():
  x = np.arange(BIG * 2, dtype=np.float32).reshape(2, -1)[:, ::2]
  got = host_memory.copy(x)
  np.testing.assert_array_equal(got, x)
  assert got.flags.c_contiguous
  small = np.arange(10.0)
  assert host_memory.copy(small).tobytes() == small.tobytes()


def test_transfers_use_it_and_do_not_alias():
  x = np.arange(BIG, dtype=np.float32)
  for a in (jnp.asarray(x), purejax.device_put(x)):
    x[0] = -1
    assert float(a[0]) == 0.0
    x[0] = 0
  total = purejax.jit(lambda v: v.sum())(x)
  np.testing.assert_allclose(float(total), x.astype(np.float64).sum(), rtol=1e-6)
