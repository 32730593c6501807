"""Scalar type objects of ``purejax.numpy`` (``jnp.float32`` and friends).

NumPy has a scalar class per dtype; JAX instead represents scalars as 0-d
arrays.  ``jnp.float32`` is therefore a class whose call builds an Array of
that dtype.  It compares and hashes equal to ``np.float32`` and has a
``.dtype``, so ``np.dtype(jnp.float32)`` and ``issubdtype`` accept it.
"""
import numpy as np

from purejax._src import dtypes


class _ScalarMeta(type):
  """Metaclass of the scalar types: a class-level view of one np.dtype."""

  @property
  def __numpy_dtype__(cls):
    return cls.dtype

  def __hash__(cls):
    return hash(cls.dtype.type)

  def __eq__(cls, other):
    if other is cls or other is cls.dtype.type:
      return True
    return NotImplemented  # lets np.dtype(...) == jnp.float32 decide

  def __instancecheck__(cls, instance):
    # NumPy scalars of the dtype count (as in JAX); purejax arrays do not.
    return isinstance(instance, cls.dtype.type)

  def __call__(cls, x):
    # Imported here: creation imports this module's package.
    from purejax._src.numpy import creation
    return creation.asarray(x, dtype=cls.dtype)


def _make_scalar_type(name, dtype):
  doc = (f"Scalar constructor for dtype {dtype.name}.\n\n"
         "  purejax has no scalar objects: calling it returns a zero-dimensional\n"
         "  (or, given a sequence, n-dimensional) Array of this dtype.\n")
  return _ScalarMeta(name, (object,), {
      "dtype": dtype, "__module__": "purejax.numpy", "__qualname__": name,
      "__doc__": doc,
  })


def _concrete_dtypes():
  """(name, dtype) of every dtype that gets a scalar type, in a stable order."""
  names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "bfloat16", "float16", "float32", "float64", "complex64",
           "complex128"]
  found = [(name, getattr(dtypes, "bool_" if name == "bool" else name)) for name in names]
  for group in (dtypes._SUBBYTE_SIGNED, dtypes._SUBBYTE_UNSIGNED, dtypes._NARROW_FLOATS):
    found.extend(sorted(group.items()))
  return found


scalar_types = {name: _make_scalar_type(name, dt) for name, dt in _concrete_dtypes()}

# JAX's aliases: they name the 64-bit types whatever the x64 setting.
_ALIASES = {
    "bool_": "bool", "int_": "int64", "uint": "uint64", "float_": "float64",
    "complex_": "complex128", "single": "float32", "double": "float64",
    "csingle": "complex64", "cdouble": "complex128",
}

# Abstract types are NumPy's own, as in JAX.
_ABSTRACT = {
    "generic": np.generic, "number": np.number, "integer": np.integer,
    "signedinteger": np.signedinteger, "unsignedinteger": np.unsignedinteger,
    "inexact": np.inexact, "floating": np.floating,
    "complexfloating": np.complexfloating, "character": np.character,
    "flexible": np.flexible, "object_": np.object_,
}

globals().update(scalar_types)
globals().update({alias: scalar_types[target] for alias, target in _ALIASES.items()})
globals().update(_ABSTRACT)

__all__ = [*scalar_types, *_ALIASES, *_ABSTRACT]
