"""Typed PRNG key arrays (``random.key``) and the key-checking helpers.

A typed key array has a dtype of its own, ``key<fry>`` (``KeyTy``): its
avals are ``ShapedArray(shape, key<fry>)``, it is a pytree leaf, and under a
trace it is a tracer of that dtype.  The random functions act on keys by the
``random_*`` primitives (``key_primitives``); ordinary structural operations
(indexing, reshape, concatenate...) apply to key arrays as to any array.

At run time a key array of shape ``s`` is its uint32 key data of shape
``(*s, 2)``: an eager ``PRNGKeyArray`` holds that data, and jaxprs are
rewritten to it before they run (``key_lowering``).  Raw keys (``PRNGKey``:
uint32[2]) are wrapped on the way into a sampler and unwrapped on the way
out, as JAX does.
"""
import warnings

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.config import config


class PRNGImpl:
  """A PRNG implementation: its name, key shape and dtype tag."""

  def __init__(self, name, tag, key_shape):
    self.name, self.tag, self.key_shape = name, tag, key_shape

  def __repr__(self):
    return f"PRNGImpl({self.name!r})"

  def __str__(self):   # jaxprs print ``random_seed[impl=fry]``
    return self.tag


threefry_impl = PRNGImpl("threefry2x32", "fry", (2,))
prngs = {threefry_impl.name: threefry_impl}


class KeyTy(dtypes.ExtendedDType):
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


def is_key_dtype(dtype):
  return type(dtype) is KeyTy


class PRNGKeyArray(core.ArrayBase):
  """A concrete array of typed PRNG keys (what ``random.key`` returns).

  It holds the uint32 key data, shape ``(*self.shape, *impl.key_shape)``.
  Under a trace keys are tracers of dtype ``key<fry>`` instead; operations
  on this class bind the same primitives as on those, so both behave alike.
  """
  __slots__ = ("_impl", "_base")
  __array_priority__ = 100

  def __init__(self, impl, key_data):
    from purejax._src.array import Array
    if isinstance(key_data, core.Tracer):
      raise TypeError("PRNGKeyArray holds concrete key data only")
    if not isinstance(key_data, Array):
      key_data = Array(np.asarray(key_data, np.uint32))
    self._impl = impl
    self._base = key_data   # uint32[*shape, *impl.key_shape]

  @property
  def _nkey(self):
    return len(self._impl.key_shape)

  shape = property(lambda self: tuple(self._base.shape[:self._base.ndim - self._nkey]))
  dtype = property(lambda self: KeyTy(self._impl))
  @property
  def aval(self):
    aval = core.ShapedArray(self.shape, KeyTy(self._impl))
    sharding = getattr(self._base.aval, "explicit_sharding", None)
    if sharding is None:
      return aval
    return aval.update(sharding=_without_key_dims(sharding, self.ndim))

  @property
  def sharding(self):
    """The key data's sharding over the key array's own axes."""
    sharding = self._base.sharding
    if not hasattr(sharding, "spec"):
      return sharding
    return _without_key_dims(sharding, self.ndim)

  committed = property(lambda self: self._base.committed)
  device = property(lambda self: self._base.device)

  def devices(self):
    return self._base.devices()

  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
  itemsize = property(lambda self: self.dtype.itemsize)
  weak_type = False
  # The run-time value: the key data (jit passes it to compiled code).
  _value = property(lambda self: self._base._value)
  _host = property(lambda self: self._base._host)

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]

  def __iter__(self):
    if not self.shape:
      raise TypeError("iteration over a 0-d key array")
    return (self[i] for i in range(self.shape[0]))

  def _eager(self, idx=()):
    """Whether an operation can act on the key data right away."""
    return (core.current_trace() is core.eval_trace
            and not any(isinstance(i, core.Tracer) for i in idx))

  def __getitem__(self, idx):
    tup = idx if isinstance(idx, tuple) else (idx,)
    if not self._eager(tup):   # staged: jnp indexing binds key-dtype primitives
      return core.ArrayBase.__getitem__(self, idx)
    if not self.shape and any(i is not None and i is not Ellipsis for i in tup):
      raise IndexError(f"Too many indices: array is 0-dimensional, but {len(tup)} were indexed")
    # Index the leading (key array) axes only; the key data axes stay whole.
    if any(i is Ellipsis for i in tup):
      tup = tup + (slice(None),) * self._nkey
    return PRNGKeyArray(self._impl, self._base[tup])

  def reshape(self, *shape, order="C"):
    if not self._eager():
      return core.ArrayBase.reshape(self, *shape, order=order)
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    shape = tuple(int(d) for d in shape)
    if -1 in shape:
      known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
      shape = tuple(self.size // max(known, 1) if d == -1 else d for d in shape)
    return PRNGKeyArray(self._impl, self._base.reshape(shape + self._impl.key_shape))

  def ravel(self, order="C"):
    return self.reshape((self.size,))

  flatten = ravel

  def astype(self, dtype, copy=False, device=None):
    raise NotImplementedError("Cannot call abstract method astype")

  def __eq__(self, other):
    return _compare_keys("equal", self, other)

  def __ne__(self, other):
    return _compare_keys("not_equal", self, other)

  __hash__ = None

  def block_until_ready(self):
    return self

  def copy(self):
    return self

  def __repr__(self):
    return (f"Array({self.shape}, dtype={self.dtype}) overlaying:\n"
            f"{core.concrete_numpy_value(self._base)}")

  __str__ = __repr__


def _without_key_dims(sharding, ndim):
  """``sharding`` (of the key data) with the trailing key-data axes dropped
  (JAX spells a replicated scalar key's spec ``P()``)."""
  from purejax._src.mesh import NamedSharding, PartitionSpec
  spec = sharding.spec
  entries = tuple(spec)[:ndim]
  if len(spec):
    entries += (None,) * (ndim - len(entries))
  return NamedSharding(sharding.mesh, PartitionSpec(*entries, unreduced=spec.unreduced,
                                                    reduced=spec.reduced))


def _compare_keys(name, a, b):
  """``jnp.equal``/``not_equal`` of two key arrays (eq and ne compare their
  key data: key_lowering's rules), or NotImplemented for anything else."""
  if not (is_typed_key(a) and is_typed_key(b)):
    return NotImplemented
  from purejax import numpy as jnp
  return getattr(jnp, name)(a, b)


def is_typed_key(x):
  """A key array: concrete, or a tracer of a key dtype."""
  return (isinstance(x, PRNGKeyArray)
          or (isinstance(x, core.Tracer) and type(x.aval.dtype) is KeyTy))


def _invalid(msg):
  return TypeError(f"JAX encountered invalid PRNG key data: {msg}")


def random_wrap(data, impl):
  """A typed key array over the uint32 key data ``data``."""
  from purejax._src.array import Array
  from purejax._src.random.key_primitives import random_wrap_p
  if not hasattr(data, "dtype") or not hasattr(data, "shape"):
    raise _invalid(f"expected key_data to have ndim, shape, and dtype attributes. Got {data}")
  if isinstance(data, (np.ndarray, np.generic)):
    data = Array(np.asarray(data))
  shape = tuple(np.shape(data))
  nkey = len(impl.key_shape)
  if shape[len(shape) - nkey:] != impl.key_shape or len(shape) < nkey:
    raise _invalid(f"expected key_data.shape to end with {impl.key_shape}; got "
                   f"shape={shape} for impl={impl!r}")
  if not isinstance(data.dtype, np.dtype) or np.dtype(data.dtype) != np.uint32:
    raise _invalid(f"expected key_data.dtype = uint32; got dtype={data.dtype}")
  return random_wrap_p.bind(data, impl=impl)


def random_unwrap(keys):
  """The uint32 key data of the key array ``keys``."""
  from purejax._src.random.key_primitives import random_unwrap_p
  return random_unwrap_p.bind(keys)


def key_impl_of(keys):
  """The PRNGImpl of a key array (concrete or traced)."""
  return keys.dtype._impl


_LEGACY_KEY = ("Legacy uint32 key array passed as key to jax.random function. Please create "
               "keys using jax.random.key(). If use of a raw key array was intended, set "
               'jax_legacy_prng_key="allow".')


def _legacy_key_used():
  """A raw uint32 key reached a sampler: what ``jax_legacy_prng_key`` says."""
  if config.jax_legacy_prng_key == "error":
    raise ValueError(_LEGACY_KEY)
  warnings.warn(_LEGACY_KEY, stacklevel=4)


def check_prng_key(name, key, allow_batched=False):
  """(typed key, whether it came in raw) for a sampler's ``key`` argument."""
  if is_typed_key(key):
    typed, wrapped = key, False
  elif isinstance(key, (core.ArrayBase, core.Tracer, np.ndarray, np.generic)):
    typed, wrapped = random_wrap(key, resolve_impl(None)), True
  elif isinstance(key, (int, float, complex, bool)):
    raise _invalid(f"expected key_data to have ndim, shape, and dtype attributes. Got {key}")
  else:
    raise TypeError(f"unexpected PRNG key type {type(key)}")
  if wrapped and config.jax_legacy_prng_key != "allow":
    _legacy_key_used()
  if not allow_batched and typed.ndim:
    raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                     f"{tuple(np.shape(key) if wrapped else typed.shape)} != (). "
                     "Use jax.vmap for batching.")
  return typed, wrapped


def return_keys(was_wrapped, keys):
  """Raw keys in, raw keys out; typed in, typed out."""
  return random_unwrap(keys) if was_wrapped else keys
