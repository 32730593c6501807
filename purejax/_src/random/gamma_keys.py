"""The few key operations the gamma-family samplers use, in one place.

Thin wrappers over the PRNG core, so that the samplers read like the
algorithms (``split2`` for "key, subkey = split(key)") and a change in the
core's API touches only this file.  Keys here are typed (``key<fry>``).
"""
from purejax._src.random import basic
from purejax._src.random import keys as keys_lib
from purejax._src.random import prng


def check_key(name, key):
  """``key`` as a single typed key, or JAX's error for the sampler ``name``."""
  return keys_lib.check_prng_key(name, key)[0]


def split_n(key, num):
  return prng._split(key, num)


def split2(key):
  k1, k2 = prng._split(key, 2)   # unpacked, as JAX unpacks (slices of stride 1)
  return k1, k2


def split3(key):
  k1, k2, k3 = prng._split(key, 3)
  return k1, k2, k3


def normal(key, dtype, shape=()):
  return basic.normal(key, shape, dtype)


def uniform(key, dtype, shape=()):
  return basic.uniform(key, shape, dtype)


def rademacher(key, shape, dtype):
  """Random signs +-1 of ``dtype`` (fair coin flips)."""
  from purejax._src.random.distributions import rademacher as _rademacher
  return _rademacher(key, shape, dtype)


def require_threefry(name, key):
  """poisson's loops assume threefry2x32 keys (as in JAX)."""
  impl = key.dtype._impl.name
  if impl != "threefry2x32":
    raise NotImplementedError(
        f"`{name}` is only implemented for the threefry2x32 RNG, not {impl}")
