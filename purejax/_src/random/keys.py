"""Typed PRNG key arrays (``random.key``) and the key-checking helpers.

A typed key array of shape ``s`` overlays uint32 key data of shape
``(*s, 2)``.  It is a pytree whose one leaf is that data, so ``jit``,
``vmap``, ``scan`` and friends carry keys through unchanged; its dtype prints
as JAX's ``key<fry>``.  Raw keys (``PRNGKey``: uint32[2]) are wrapped on the
way into a sampler and unwrapped on the way out, as JAX does.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src import tree_util


class PRNGImpl:
  """A PRNG implementation: its name, key shape and dtype tag."""

  def __init__(self, name, tag, key_shape):
    self.name, self.tag, self.key_shape = name, tag, key_shape

  def __repr__(self):
    return f"PRNGImpl({self.name!r})"

  def __str__(self):
    return self.name


threefry_impl = PRNGImpl("threefry2x32", "fry", (2,))
prngs = {threefry_impl.name: threefry_impl}


class KeyTy:
  """The dtype of typed key arrays: ``key<fry>``."""
  type = dtypes.prng_key

  def __init__(self, impl):
    self._impl = impl

  name = property(lambda self: f"key<{self._impl.tag}>")
  itemsize = property(lambda self: 4 * int(np.prod(self._impl.key_shape)))
  kind = "V"

  def __repr__(self):
    return self.name

  __str__ = __repr__

  def __eq__(self, other):
    return type(other) is KeyTy and other._impl is self._impl

  def __hash__(self):
    return hash((KeyTy, self._impl.name))


def resolve_impl(spec):
  """The PRNGImpl named by ``spec`` (None: the configured default)."""
  from purejax._src.config import config
  if spec is None:
    spec = config.read("jax_default_prng_impl")
  if isinstance(spec, PRNGImpl):
    return spec
  if isinstance(spec, KeyTy):
    return spec._impl
  if isinstance(spec, str):
    if spec in prngs:
      return prngs[spec]
    names = ", ".join(f'"{s}"' for s in prngs)
    raise ValueError(f'unrecognized PRNG implementation "{spec}". Did you mean one of: {names}?')
  raise TypeError(f"unrecognized type {type(spec)} for specifying PRNG implementation.")


class PRNGKeyArray:
  """An array of typed PRNG keys (what ``random.key`` returns)."""
  __slots__ = ("_impl", "_base")
  __array_priority__ = 100

  def __init__(self, impl, key_data):
    self._impl = impl
    self._base = key_data   # uint32[*shape, *impl.key_shape] (maybe a tracer)

  @property
  def _nkey(self):
    return len(self._impl.key_shape)

  shape = property(lambda self: tuple(core.get_aval(self._base).shape[:-self._nkey]))
  dtype = property(lambda self: KeyTy(self._impl))
  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
  weak_type = False

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]

  def __iter__(self):
    if not self.shape:
      raise TypeError("iteration over a 0-d key array")
    return (self[i] for i in range(self.shape[0]))

  def __getitem__(self, idx):
    idx = idx if isinstance(idx, tuple) else (idx,)
    if not self.shape and any(i is not None and i is not Ellipsis for i in idx):
      raise IndexError(f"Too many indices: array is 0-dimensional, but {len(idx)} were indexed")
    # Index the leading (key array) axes only; the key data axes stay whole.
    if any(i is Ellipsis for i in idx):
      idx = idx + (slice(None),) * self._nkey
    return PRNGKeyArray(self._impl, self._base[idx])

  def reshape(self, *shape):
    from purejax import lax
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    shape = tuple(int(d) for d in shape)
    if -1 in shape:
      known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
      shape = tuple(self.size // max(known, 1) if d == -1 else d for d in shape)
    return PRNGKeyArray(self._impl, lax.reshape(self._base, shape + self._impl.key_shape))

  def ravel(self):
    return self.reshape((self.size,))

  flatten = ravel

  def __eq__(self, other):
    from purejax import lax
    if not isinstance(other, PRNGKeyArray):
      return NotImplemented
    return lax.reduce_and(lax.eq(self._base, other._base), (self.ndim,))

  def __ne__(self, other):
    from purejax import lax
    eq = self.__eq__(other)
    return eq if eq is NotImplemented else lax.bitwise_not(eq)

  __hash__ = None

  def block_until_ready(self):
    return self

  def __repr__(self):
    if isinstance(self._base, core.Tracer):
      return f"Key{self._base!r}"
    return (f"Array({self.shape}, dtype={self.dtype}) overlaying:\n"
            f"{np.asarray(self._base)}")

  __str__ = __repr__


tree_util.register_pytree_node(
    PRNGKeyArray, lambda k: ((k._base,), k._impl),
    lambda impl, children: PRNGKeyArray(impl, children[0]))


def is_typed_key(x):
  return isinstance(x, PRNGKeyArray)


def _invalid(msg):
  return TypeError(f"JAX encountered invalid PRNG key data: {msg}")


def random_wrap(data, impl):
  """A typed key array over the uint32 key data ``data``."""
  from purejax._src.array import Array
  if not hasattr(data, "dtype") or not hasattr(data, "shape"):
    raise _invalid(f"expected key_data to have ndim, shape, and dtype attributes. Got {data}")
  if isinstance(data, np.ndarray):
    data = Array(data)
  shape = tuple(np.shape(data))
  nkey = len(impl.key_shape)
  if shape[len(shape) - nkey:] != impl.key_shape or len(shape) < nkey:
    raise _invalid(f"expected key_data.shape to end with {impl.key_shape}; got "
                   f"shape={shape} for impl={impl}")
  if np.dtype(data.dtype) != np.uint32:
    raise _invalid(f"expected key_data.dtype = uint32; got dtype={np.dtype(data.dtype)}")
  return PRNGKeyArray(impl, data)


def random_unwrap(keys):
  return keys._base


def check_prng_key(name, key, allow_batched=False):
  """(typed key, whether it came in raw) for a sampler's ``key`` argument."""
  if isinstance(key, PRNGKeyArray):
    typed, wrapped = key, False
  elif isinstance(key, (core.ArrayBase, core.Tracer, np.ndarray, np.generic)):
    typed, wrapped = random_wrap(key, resolve_impl(None)), True
  elif isinstance(key, (int, float, complex, bool)):
    raise _invalid(f"expected key_data to have ndim, shape, and dtype attributes. Got {key}")
  else:
    raise TypeError(f"unexpected PRNG key type {type(key)}")
  if not allow_batched and typed.ndim:
    raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                     f"{tuple(np.shape(key) if wrapped else typed.shape)} != (). "
                     "Use jax.vmap for batching.")
  return typed, wrapped


def return_keys(was_wrapped, keys):
  """Raw keys in, raw keys out; typed in, typed out."""
  return random_unwrap(keys) if was_wrapped else keys
