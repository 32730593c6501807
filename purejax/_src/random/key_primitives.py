"""The primitives of typed PRNG keys, each with all its rules.

``random_seed``, ``random_split``, ``random_fold_in``, ``random_bits``,
``random_wrap`` and ``random_unwrap`` act on arrays of dtype ``key<fry>``;
key arrays of any shape are accepted (``vmap`` batches by adding leading
axes).  Every primitive has:

* ``abstract_eval``: shapes and dtypes, with key avals;
* ``physical``: the same operation on the uint32 key data (``(*shape, 2)``
  per key array), written with the threefry lax code.  The key lowering pass
  (``key_lowering``) rewrites jaxprs with it before a backend runs them, and
  eager calls run it directly on the data;
* ``impl``: ``physical`` on NumPy data (the NumPy backend's reference);
* ``jvp``: zero tangents (float0 for keys), ``batch``: keys batched at 0.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.random import keys as keys_lib

_U32 = np.dtype(np.uint32)
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}


class KeyPrimitive(core.Primitive):
  """A primitive over key arrays: run eagerly on the key data."""

  def __init__(self, name):
    super().__init__(name)
    self.physical = None

  def bind(self, *args, **params):
    ctx = core._ctx
    if ctx.trace is core.eval_trace and ctx.bind_hook is None:
      from purejax._src.random import key_lowering
      return key_lowering.apply_eager(self, args, params)
    return super().bind(*args, **params)


def _key_aval(aval, name):
  if not keys_lib.is_key_dtype(aval.dtype):
    raise TypeError(f"{name} accepts key arrays (dtype key<impl>), got {aval.str_short()}")
  return aval


def _zero_jvp(prim):
  def rule(primals, tangents, **params):
    out = prim.bind(*primals, **params)
    return out, ad.Zero.from_primal_value(out)
  return rule


def _keys_first_batch(prim):
  """Batching: every operand's batch axis first (unbatched ones broadcast)."""
  def rule(axis_size, vals, dims, **params):
    moved = [batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
    return prim.bind(*moved, **params), 0
  return rule


def _numpy_impl(prim):
  """``physical`` on NumPy key data: the NumPy backend's implementation."""
  def impl(*vals, **params):
    from purejax._src.array import Array
    with core.eval_context():
      out = prim.physical(*[Array(np.asarray(v)) for v in vals], **params)
    return np.asarray(out._value)
  return impl


def _per_key(fun, batch_shape, *data):
  """``fun`` applied to each key (and its matching operands) of key arrays
  of shape ``batch_shape``: directly for a single key, else mapped over
  the flattened keys."""
  from purejax import lax
  from purejax._src.vmap import vmap
  if not batch_shape:
    return fun(*data)
  n = int(np.prod(batch_shape, dtype=np.int64))
  flat = [lax.reshape(x, (n,) + tuple(x.shape[len(batch_shape):])) for x in data]
  out = vmap(fun)(*flat)
  return lax.reshape(out, tuple(batch_shape) + tuple(out.shape[1:]))


def _new(name, abstract_eval, physical, batch=None):
  prim = KeyPrimitive(name)
  prim.abstract_eval = abstract_eval
  prim.physical = physical
  prim.impl = _numpy_impl(prim)
  prim.jvp = _zero_jvp(prim)
  prim.batch = batch or _keys_first_batch(prim)
  return prim


# -- random_seed -----------------------------------------------------------------

def _seed_abstract_eval(seeds, *, impl):
  if not dtypes.issubdtype(seeds.dtype, np.integer):
    raise TypeError(f"PRNG key seed must be an integer; got {seeds.str_short()}")
  return core.ShapedArray(seeds.shape, keys_lib.KeyTy(impl))


def _seed_physical(seeds, *, impl):
  from purejax._src.random.prng import threefry_seed
  return _per_key(threefry_seed, core.get_aval(seeds).shape, seeds)


random_seed_p = _new("random_seed", _seed_abstract_eval, _seed_physical)


# -- random_split ----------------------------------------------------------------

def _split_abstract_eval(keys, *, shape):
  _key_aval(keys, "random_split")
  return core.ShapedArray(keys.shape + tuple(shape), keys.dtype)


def _split_physical(keys, *, shape):
  from purejax._src.random.prng import threefry_split
  batch = core.get_aval(keys).shape[:-1]
  return _per_key(lambda k: threefry_split(k, shape), batch, keys)


random_split_p = _new("random_split", _split_abstract_eval, _split_physical)


# -- random_fold_in ----------------------------------------------------------------

def _fold_in_abstract_eval(keys, msgs):
  _key_aval(keys, "random_fold_in")
  if msgs.dtype != _U32 or msgs.shape != keys.shape:
    raise TypeError(f"random_fold_in takes uint32 data of the keys' shape {keys.shape}, "
                    f"got {msgs.str_short()}")
  return core.ShapedArray(keys.shape, keys.dtype)


def _fold_in_physical(keys, msgs):
  from purejax._src.random.prng import threefry_fold_in
  return _per_key(threefry_fold_in, core.get_aval(msgs).shape, keys, msgs)


random_fold_in_p = _new("random_fold_in", _fold_in_abstract_eval, _fold_in_physical)


# -- random_bits ---------------------------------------------------------------------

def _bits_abstract_eval(keys, *, bit_width, shape):
  _key_aval(keys, "random_bits")
  if bit_width not in _UINT:
    raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
  return core.ShapedArray(keys.shape + tuple(shape), _UINT[bit_width])


def _bits_physical(keys, *, bit_width, shape):
  from purejax._src.random.prng import threefry_random_bits
  batch = core.get_aval(keys).shape[:-1]
  return _per_key(lambda k: threefry_random_bits(k, bit_width, shape), batch, keys)


random_bits_p = _new("random_bits", _bits_abstract_eval, _bits_physical)


# -- random_wrap / random_unwrap -------------------------------------------------

def _wrap_abstract_eval(data, *, impl):
  nkey = len(impl.key_shape)
  if data.dtype != _U32 or data.shape[data.ndim - nkey:] != impl.key_shape:
    raise TypeError(f"random_wrap takes uint32 key data of shape (..., "
                    f"{', '.join(map(str, impl.key_shape))}), got {data.str_short()}")
  return core.ShapedArray(data.shape[:data.ndim - nkey], keys_lib.KeyTy(impl))


random_wrap_p = _new("random_wrap", _wrap_abstract_eval, lambda data, *, impl: data)


def _unwrap_abstract_eval(keys):
  _key_aval(keys, "random_unwrap")
  return core.ShapedArray(keys.shape + keys.dtype._impl.key_shape, _U32)


random_unwrap_p = _new("random_unwrap", _unwrap_abstract_eval, lambda keys: keys)


KEY_PRIMITIVES = (random_seed_p, random_split_p, random_fold_in_p, random_bits_p,
                  random_wrap_p, random_unwrap_p)
