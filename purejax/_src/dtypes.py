"""Dtypes, x64 canonicalization and JAX's type-promotion lattice.

JAX promotes types on a lattice rather than with NumPy's value-based rules.
Python scalars (and arrays flagged ``weak_type``) are *weak*: they sit at
special nodes ``i*``, ``f*`` and ``c*`` low in the lattice, so they adopt the
type of whatever strong operand they meet (``int8 + 1 -> int8``).  The result
of a promotion is the least upper bound of the operands' nodes.

With ``jax_enable_x64`` off, 64-bit types are *canonicalized* to their 32-bit
counterparts; the flag is read at call time.
"""
import functools

import ml_dtypes
import numpy as np

from purejax._src.config import config


class TypePromotionError(ValueError):
  """Raised when operand dtypes have no implicit promotion path."""


# ---------------------------------------------------------------------------
# dtype objects

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

# The dtype of the tangent of an integer or boolean value: it has no data.
float0 = np.dtype([("float0", np.void, 0)])

# Aliases with JAX's meaning: the 64-bit types (canonicalized where used).
int_ = int64
uint = uint64
float_ = float64
complex_ = complex128


def _ml_dtypes(names):
  """The ml_dtypes types this installation of ml_dtypes provides."""
  found = {}
  for name in names:
    scalar_type = getattr(ml_dtypes, name, None)
    if scalar_type is not None:
      found[name] = np.dtype(scalar_type)
  return found


# Narrow types from ml_dtypes, by how JAX groups them in error messages.
_FLOAT8 = _ml_dtypes(("float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
                      "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"))
_FLOAT6 = _ml_dtypes(("float6_e2m3fn", "float6_e3m2fn"))
_FLOAT4 = _ml_dtypes(("float4_e2m1fn",))
_SUBBYTE_SIGNED = _ml_dtypes(("int1", "int2", "int4"))
_SUBBYTE_UNSIGNED = _ml_dtypes(("uint1", "uint2", "uint4"))

# Export them as module attributes (dtypes.int4, dtypes.float8_e4m3fn, ...).
globals().update(_FLOAT8, **_FLOAT6, **_FLOAT4, **_SUBBYTE_SIGNED, **_SUBBYTE_UNSIGNED)

_NARROW_FLOATS = {**_FLOAT8, **_FLOAT6, **_FLOAT4}
_SUBBYTE_INTS = {**_SUBBYTE_SIGNED, **_SUBBYTE_UNSIGNED}

# Bit widths that differ from itemsize * 8.
_NARROW_BITS = {dt: int("".join(c for c in name.split("_")[0] if c.isdigit()))
                for name, dt in {**_NARROW_FLOATS, **_SUBBYTE_INTS}.items()}

_BOOL_DTYPES = frozenset([bool_])
_SIGNED_DTYPES = frozenset([*_SUBBYTE_SIGNED.values(), int8, int16, int32, int64])
_UNSIGNED_DTYPES = frozenset([*_SUBBYTE_UNSIGNED.values(), uint8, uint16, uint32, uint64])
_INT_DTYPES = _SIGNED_DTYPES | _UNSIGNED_DTYPES
_FLOAT_DTYPES = frozenset([*_NARROW_FLOATS.values(), bfloat16, float16, float32, float64])
_COMPLEX_DTYPES = frozenset([complex64, complex128])
_INEXACT_DTYPES = _FLOAT_DTYPES | _COMPLEX_DTYPES
_NUMERIC_DTYPES = _INT_DTYPES | _INEXACT_DTYPES

# Every dtype a JAX array may have (float0 only for tangents).
_JAX_DTYPES = _BOOL_DTYPES | _NUMERIC_DTYPES
_VALID_DTYPES = _JAX_DTYPES | {float0}

# The dtype each Python scalar type stands for before canonicalization.
python_scalar_dtypes = {bool: bool_, int: int64, float: float64, complex: complex128}
_WEAK_PYTHON_TYPES = (int, float, complex)

_TO_32BIT = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


# ---------------------------------------------------------------------------
# Defaults and canonicalization

def default_int_dtype():
  return int64 if config.jax_enable_x64 else int32


def default_uint_dtype():
  return uint64 if config.jax_enable_x64 else uint32


def default_float_dtype():
  return float64 if config.jax_enable_x64 else float32


def default_complex_dtype():
  return complex128 if config.jax_enable_x64 else complex64


def _wide_default_for_kind(dt):
  """The x64 default dtype of dt's kind (what a weak value of that kind
  becomes, once canonicalized)."""
  if dt in _SIGNED_DTYPES:
    return int64
  if dt in _UNSIGNED_DTYPES:
    return uint64
  if dt in _FLOAT_DTYPES:
    return float64
  if dt in _COMPLEX_DTYPES:
    return complex128
  return dt


def _to_np_dtype(x):
  """np.dtype(x), with Python scalar types mapped platform-independently."""
  if isinstance(x, np.dtype):
    return x
  if isinstance(x, type) and x in python_scalar_dtypes:
    return python_scalar_dtypes[x]
  return np.dtype(x)


def _canonical(dt, x64=None):
  """Canonicalize an np.dtype for x64 (default: the current setting)."""
  if x64 is None:
    x64 = config.jax_enable_x64
  return dt if x64 else _TO_32BIT.get(dt, dt)


_canonicalize_cache = {}


def canonicalize_dtype(dtype, allow_extended_dtype=False):
  """The dtype arrays of ``dtype`` actually get: 64-bit types become 32-bit
  when x64 is off.  Non-JAX dtypes pass through unchanged."""
  del allow_extended_dtype  # purejax has no extended dtypes.
  x64 = config.jax_enable_x64
  if isinstance(dtype, np.dtype):  # the common case needs no cache
    return dtype if x64 else _TO_32BIT.get(dtype, dtype)
  key = (dtype, x64)
  # Only cache dtype specifiers; caching arbitrary objects would keep them alive.
  cacheable = isinstance(dtype, (type, str))
  if cacheable:
    try:
      return _canonicalize_cache[key]
    except KeyError:
      pass
  result = _canonical(_to_np_dtype(dtype), x64)
  if cacheable:
    _canonicalize_cache[key] = result
  return result


# ---------------------------------------------------------------------------
# Dtypes of values

def is_python_scalar(x):
  return type(x) in python_scalar_dtypes


def is_weakly_typed(x):
  """Python int/float/complex are weak; so is anything with weak_type=True."""
  if type(x) in _WEAK_PYTHON_TYPES:
    return True
  if type(x) is bool:
    return False
  return bool(getattr(x, "weak_type", False))


def _invalid_value_error(x, dt):
  return TypeError(f"Value '{x}' with dtype {dt} is not a valid JAX array type. "
                   "Only arrays of numeric types are supported by JAX.")


def array_dtype(dt):
  """The canonical dtype of a NumPy array of dtype ``dt``; JAX's TypeError
  for what no JAX array may hold (object, str, float128, datetime...)."""
  if dt in _VALID_DTYPES:
    return canonicalize_dtype(dt)
  if not dt.isnative and dt.newbyteorder("=") in _VALID_DTYPES:
    return canonicalize_dtype(dt.newbyteorder("="))
  raise TypeError(f"Dtype {dt} is not a valid JAX array type. Only arrays of numeric "
                  "types are supported by JAX.")


def _checked(x, dt):
  """dt if it is a dtype JAX arrays may have, else TypeError."""
  if dt in _VALID_DTYPES:
    return dt
  if not dt.isnative:
    native = dt.newbyteorder("=")
    if native in _VALID_DTYPES:
      return native
  raise _invalid_value_error(x, dt)


def _python_scalar_dtype(x):
  """The dtype of an instance of a (subclass of a) Python scalar type, or None."""
  for scalar_type, dt in python_scalar_dtypes.items():
    if isinstance(x, scalar_type):
      return dt
  return None


def _raw_dtype(x):
  """The uncanonicalized dtype of a value or dtype specifier."""
  if isinstance(x, np.dtype):
    return _checked(x, x)
  dt = python_scalar_dtypes.get(type(x))
  if dt is not None:
    return dt
  if x is None:
    raise ValueError(f"Invalid argument to dtype: {x}.")
  attr = getattr(x, "dtype", None)
  if isinstance(attr, np.dtype):  # arrays, NumPy scalars, tracers, jnp.float32
    return _checked(x, attr)
  if isinstance(x, (str, type)):
    return _checked(x, _to_np_dtype(x))
  dt = _python_scalar_dtype(x)
  if dt is not None:
    return dt
  raise TypeError(f"Cannot determine dtype of {x}")


def dtype(x, canonicalize=False):
  """The dtype of a value (array, scalar, Python number) or dtype specifier.

  Python scalars get int64/float64/complex128/bool; ``canonicalize=True``
  applies the x64 setting.
  """
  ext = x if isinstance(x, ExtendedDType) else getattr(x, "dtype", None)
  if isinstance(ext, ExtendedDType):   # typed PRNG keys
    return ext
  dt = _raw_dtype(x)
  return _canonical(dt) if canonicalize else dt


def dtype_and_weak_type(x, canonicalize=True):
  """(dtype, weak_type) of a value, as type promotion sees it."""
  dt, weak = _dtype_and_weak(x, canonicalize)
  return dt, weak and dt != bool_


def _dtype_and_weak(x, canonicalize=True):
  # A weak bool stays flagged here: it counts when deciding whether *all*
  # operands are weak, though a bool result is never weak.
  aval = getattr(x, "aval", None)
  if aval is not None and not canonicalize:   # arrays and tracers: the fast path
    return aval.dtype, aval.weak_type
  if type(x) in _WEAK_PYTHON_TYPES:
    dt, weak = python_scalar_dtypes[type(x)], True
  elif x is None:
    dt, weak = float64, False  # np.dtype(None)
  elif isinstance(x, type) and x in _WEAK_PYTHON_TYPES:
    dt, weak = python_scalar_dtypes[x], True  # result_type(int) is weak, as in JAX
  elif isinstance(x, ExtendedDType):
    return x, False
  else:
    dt = _raw_dtype(x)
    weak = bool(getattr(x, "weak_type", False))
  return (_canonical(dt) if canonicalize else dt), weak


def scalar_type_of(x):
  """The Python scalar type (bool/int/float/complex) matching x's dtype."""
  dt = dtype(x, canonicalize=True)
  if dt in _BOOL_DTYPES:
    return bool
  if dt in _INT_DTYPES:
    return int
  if dt in _FLOAT_DTYPES:
    return float
  if dt in _COMPLEX_DTYPES:
    return complex
  raise TypeError(f"Invalid scalar value {x}")


def itemsize_bits(dtype):
  """Bits per element: 4 for int4, 16 for bfloat16, 8 for bool."""
  dt = _to_np_dtype(dtype)
  if dt not in _JAX_DTYPES:
    raise ValueError(f"unexpected input: dtype={dt!r}")
  return _NARROW_BITS.get(dt, dt.itemsize * 8)


# ---------------------------------------------------------------------------
# Kinds

def _as_dtype(x):
  """np.dtype of a dtype-like (or of anything with a .dtype)."""
  if isinstance(x, np.dtype):
    return x
  attr = getattr(x, "dtype", None)
  if isinstance(attr, np.dtype):
    return attr
  return _to_np_dtype(x)


def kind_of(dtype):
  """NumPy-style kind letter that also knows ml_dtypes types ('V' for those
  in NumPy): 'b', 'i', 'u', 'f', 'c', or NumPy's own kind otherwise."""
  dt = _as_dtype(dtype)
  if dt in _BOOL_DTYPES:
    return "b"
  if dt in _SIGNED_DTYPES:
    return "i"
  if dt in _UNSIGNED_DTYPES:
    return "u"
  if dt in _FLOAT_DTYPES:
    return "f"
  if dt in _COMPLEX_DTYPES:
    return "c"
  return dt.kind


def is_bool(dtype):
  return _as_dtype(dtype) in _BOOL_DTYPES


def is_signed_int(dtype):
  return _as_dtype(dtype) in _SIGNED_DTYPES


def is_unsigned_int(dtype):
  return _as_dtype(dtype) in _UNSIGNED_DTYPES


def is_int(dtype):
  return _as_dtype(dtype) in _INT_DTYPES


def is_float(dtype):
  """Real floating point, including bfloat16 and the narrow ml_dtypes floats."""
  return _as_dtype(dtype) in _FLOAT_DTYPES


def is_complex(dtype):
  return _as_dtype(dtype) in _COMPLEX_DTYPES


def is_inexact(dtype):
  return _as_dtype(dtype) in _INEXACT_DTYPES


def is_numeric(dtype):
  return _as_dtype(dtype) in _NUMERIC_DTYPES


def to_inexact_dtype(dtype):
  """The inexact dtype integer/bool data promotes to (int64 -> float64, others
  -> float32); inexact dtypes are returned unchanged."""
  dt = _as_dtype(dtype)
  if dt in _INEXACT_DTYPES:
    return dt
  return float64 if dt.itemsize >= 8 else float32


def to_floating_dtype(dtype):
  """Like to_inexact_dtype, but complex dtypes give their real component type."""
  dt = _as_dtype(dtype)
  if dt == complex64:
    return float32
  if dt == complex128:
    return float64
  return to_inexact_dtype(dt)


def to_complex_dtype(dtype):
  """The complex dtype holding values of dtype (64-bit inputs -> complex128)."""
  dt = _as_dtype(dtype)
  if dt in _COMPLEX_DTYPES:
    return dt
  return complex128 if dt.itemsize >= 8 else complex64


def to_numeric_dtype(dtype):
  """bool becomes int32 (for reductions like sum); numeric dtypes unchanged."""
  dt = _as_dtype(dtype)
  return int32 if dt == bool_ else dt


@functools.lru_cache(maxsize=None)
def _supports_inf(dt):
  if dt in _COMPLEX_DTYPES:
    return True
  if dt not in _FLOAT_DTYPES:
    return False
  with np.errstate(all="ignore"):
    return bool(np.isinf(np.array(np.inf, np.float32).astype(dt)))


def supports_inf(dtype):
  """Whether the dtype can represent infinity (the *fn float8 types cannot)."""
  return _supports_inf(_as_dtype(dtype))


def short_dtype_name(dtype):
  """Compact name as in printed jaxprs: f32, i8, u4, bf16, c64, f8_e4m3fn."""
  dt = _as_dtype(dtype)
  if dt == float0:
    return "float0"
  name = dt.name
  if name == "bfloat16":
    return "bf16"
  for long, short in (("uint", "u"), ("int", "i"), ("complex", "c"), ("float", "f")):
    if name.startswith(long):
      return short + name[len(long):]
  return name


# ---------------------------------------------------------------------------
# issubdtype / isdtype

class extended(np.generic):
  """Abstract scalar type of extended dtypes (typed PRNG keys' ``key<fry>``)."""
  __module__ = "purejax.dtypes"


class prng_key(extended):
  """Abstract scalar type of typed PRNG key dtypes."""
  __module__ = "purejax.dtypes"


class ExtendedDType:
  """Base class of dtypes that are not NumPy dtypes (``key<fry>``).

  ``type`` is the abstract scalar type it is filed under for ``issubdtype``;
  ``name`` prints in avals and jaxprs.
  """
  type = extended
  name = "extended"


def is_extended(dtype):
  return isinstance(dtype, ExtendedDType)


_ABSTRACT_TYPES = frozenset([np.generic, np.number, np.integer, np.signedinteger,
                             np.unsignedinteger, np.inexact, np.floating,
                             np.complexfloating, np.flexible, np.character,
                             extended, prng_key])

# ml_dtypes scalar types derive straight from np.generic; JAX files them under
# NumPy's abstract hierarchy, so we do too.
_ML_PARENT = {}
for _dt in _NARROW_FLOATS.values():
  _ML_PARENT[_dt.type] = np.floating
_ML_PARENT[bfloat16.type] = np.floating
for _dt in _SUBBYTE_SIGNED.values():
  _ML_PARENT[_dt.type] = np.signedinteger
for _dt in _SUBBYTE_UNSIGNED.values():
  _ML_PARENT[_dt.type] = np.unsignedinteger


def _scalar_type(x):
  """The NumPy scalar type a dtype-like names (abstract types stay as is)."""
  if isinstance(x, type) and issubclass(x, np.generic):
    return x
  if isinstance(x, ExtendedDType):
    return x.type
  return _as_dtype(x).type


def _is_subclass(sub, parent):
  ml_parent = _ML_PARENT.get(sub)
  if ml_parent is not None:
    return sub is parent or issubclass(ml_parent, parent)
  return issubclass(sub, parent)


def issubdtype(a, b):
  """np.issubdtype that also files bfloat16, float8 and int4 & co. under
  np.floating / np.signedinteger / np.unsignedinteger."""
  if isinstance(a, ExtendedDType) or isinstance(b, ExtendedDType):
    if isinstance(b, ExtendedDType):
      return a == b
    return isinstance(b, type) and issubclass(a.type, b)
  # float0 is a structured dtype: only itself (and np.generic) contain it.
  if isinstance(a, np.dtype) and a == float0:
    return b is np.generic or (not isinstance(b, type) and _as_dtype(b) == float0)
  if isinstance(b, np.dtype) and b == float0:
    return not isinstance(a, type) and _as_dtype(a) == float0
  sub = _scalar_type(a)
  if isinstance(b, type) and b in _ABSTRACT_TYPES:
    return _is_subclass(sub, b)
  return _is_subclass(sub, _scalar_type(b))


_ISDTYPE_KINDS = {
    "bool": _BOOL_DTYPES,
    "signed integer": _SIGNED_DTYPES,
    "unsigned integer": _UNSIGNED_DTYPES,
    "integral": _INT_DTYPES,
    "real floating": _FLOAT_DTYPES,
    "complex floating": _COMPLEX_DTYPES,
    "numeric": _NUMERIC_DTYPES,
}


def _isdtype_one(dt, kind):
  if isinstance(kind, str):
    members = _ISDTYPE_KINDS.get(kind)
    if members is not None:
      return dt in members
    try:
      return dt == np.dtype(kind)
    except TypeError:
      raise ValueError(f"Unrecognized kind={kind!r} expected one of {list(_ISDTYPE_KINDS)}, "
                       "or a compatible input for jnp.dtype()") from None
  if isinstance(kind, type) and kind in _ABSTRACT_TYPES:
    raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={kind}")
  try:
    return dt == _as_dtype(kind)
  except TypeError:
    raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={kind}") from None


def isdtype(dtype, kind):
  """Array-API dtype kind test: kind is a kind name, a dtype, or a tuple of them."""
  dt = _as_dtype(dtype)
  kinds = kind if isinstance(kind, tuple) else (kind,)
  return any(_isdtype_one(dt, k) for k in kinds)


finfo = ml_dtypes.finfo
iinfo = ml_dtypes.iinfo


# ---------------------------------------------------------------------------
# The promotion lattice.  Nodes are dtype names plus the weak nodes below.

_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "i*", "f*", "c*"
_WEAK_NODES = frozenset([_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX])
_WEAK_NODE_TYPES = {_WEAK_INT: int, _WEAK_FLOAT: float, _WEAK_COMPLEX: complex}
_WEAK_NODE_OF_TYPE = {t: n for n, t in _WEAK_NODE_TYPES.items()}
# What promote_types returns when the least upper bound is a weak node.
_WEAK_NODE_DTYPES = {_WEAK_INT: int64, _WEAK_FLOAT: float64, _WEAK_COMPLEX: complex128}

_NODE_OF_DTYPE = {dt: dt.name for dt in _JAX_DTYPES}
_DTYPE_OF_NODE = {**{dt.name: dt for dt in _JAX_DTYPES}, **_WEAK_NODE_DTYPES}


def _names(dtypes):
  return [dt.name for dt in dtypes]


def _standard_edges(x64):
  """Immediate supertypes in the standard lattice.

  Narrow ints and floats (int4, float8_*, ...) only meet bool and weak values:
  mixing them with anything else must be an explicit cast.
  """
  narrow_ints = _names(_SUBBYTE_INTS.values())
  narrow_floats = _names(_NARROW_FLOATS.values())
  return {
      "bool": [_WEAK_INT],
      _WEAK_INT: ["uint8", "int8", *narrow_ints],
      "uint8": ["int16", "uint16"],
      "uint16": ["int32", "uint32"],
      # Without x64, int32 is the widest practical signed type, so it absorbs
      # uint32 rather than promoting to int64.
      "uint32": ["int64", "uint64"] if x64 else ["int32", "uint64"],
      "uint64": [_WEAK_FLOAT],
      "int8": ["int16"],
      "int16": ["int32"],
      "int32": ["int64"],
      "int64": [_WEAK_FLOAT],
      _WEAK_FLOAT: [_WEAK_COMPLEX, "bfloat16", "float16", *narrow_floats],
      "bfloat16": ["float32"],
      "float16": ["float32"],
      "float32": ["float64", "complex64"],
      "float64": ["complex128"],
      _WEAK_COMPLEX: ["complex64"],
      "complex64": ["complex128"],
  }


def _strict_edges():
  """Strict mode: strong types never mix; weak values join their own kind or
  a wider kind (a Python int may join a float array, not vice versa)."""
  return {
      _WEAK_INT: [*_names(_INT_DTYPES), _WEAK_FLOAT],
      _WEAK_FLOAT: [*_names(_FLOAT_DTYPES), _WEAK_COMPLEX],
      _WEAK_COMPLEX: _names(_COMPLEX_DTYPES),
  }


def _upper_bounds(edges):
  """node -> frozenset of every node >= it (reflexive-transitive closure)."""
  nodes = set(_DTYPE_OF_NODE) | _WEAK_NODES
  bounds = {}

  def visit(node):
    if node not in bounds:
      above = {node}
      for parent in edges.get(node, ()):
        above |= visit(parent)
      bounds[node] = frozenset(above)
    return bounds[node]

  for node in nodes:
    visit(node)
  return bounds


@functools.lru_cache(maxsize=None)
def _lattice(mode, x64):
  edges = _strict_edges() if mode == "strict" else _standard_edges(x64)
  return _upper_bounds(edges)


def _node_label(node):
  return str(_WEAK_NODE_TYPES[node]) if node in _WEAK_NODES else node


def _promotion_error(nodes, mode):
  inputs = str(tuple(_node_label(n) for n in nodes))
  if mode == "strict":
    return TypePromotionError(
        f"Input dtypes {inputs} have no available implicit dtype promotion path when "
        "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
        "output type, or set jax_numpy_dtype_promotion=standard.")
  present = {_DTYPE_OF_NODE[n] for n in nodes if n not in _WEAK_NODES}
  for group, what, target in ((_FLOAT8, "8-bit floats", "float32"),
                              (_FLOAT6, "6-bit floats", "float32"),
                              (_FLOAT4, "4-bit floats", "float32"),
                              (_SUBBYTE_INTS, "1-bit, 2-bit and 4-bit integers", "int32")):
    if present & set(group.values()):
      return TypePromotionError(
          f"Input dtypes {inputs} have no available implicit dtype promotion path. "
          f"To avoid unintended promotion, {what} do not support implicit promotion. "
          "If you'd like your inputs to be promoted to another type, you can do so "
          f"explicitly using e.g. x.astype('{target}')")
  return TypePromotionError(f"Input dtypes {inputs} have no available implicit dtype "
                            "promotion path.")


_lub_cache = {}


def _least_upper_bound(nodes, mode, x64):
  """The least node above all of `nodes` (a list), or TypePromotionError."""
  key = (frozenset(nodes), mode, x64)
  result = _lub_cache.get(key)
  if result is not None:
    return result
  bounds = _lattice(mode, x64)
  common = frozenset.intersection(*(bounds[n] for n in key[0]))
  # The least element is the one whose own upper bounds are exactly `common`.
  least = [c for c in common if bounds[c] == common]
  if not least:
    raise _promotion_error(list(dict.fromkeys(nodes)), mode)
  _lub_cache[key] = least[0]
  return least[0]


def _node(dt, weak=False):
  """Lattice node of a dtype (weak values go to their kind's weak node)."""
  if weak:
    if dt in _INT_DTYPES:
      return _WEAK_INT
    if dt in _FLOAT_DTYPES:
      return _WEAK_FLOAT
    if dt in _COMPLEX_DTYPES:
      return _WEAK_COMPLEX
  node = _NODE_OF_DTYPE.get(dt)
  if node is None:
    raise ValueError(f"dtype={dt!r} is not a valid dtype for JAX type promotion.")
  return node


def _promotion_node(x):
  """Node of a promote_types argument: Python scalar types are weak."""
  if isinstance(x, type) and x in _WEAK_NODE_OF_TYPE:
    return _WEAK_NODE_OF_TYPE[x]
  return _node(_as_dtype(x))


def promote_types(a, b):
  """The dtype JAX promotes a and b to (inputs are not canonicalized)."""
  mode = config.jax_numpy_dtype_promotion
  node = _least_upper_bound([_promotion_node(a), _promotion_node(b)], mode,
                            config.jax_enable_x64)
  return _DTYPE_OF_NODE[node]


def _lattice_result(dtypes, weaks, mode, x64):
  """(dtype, weak) for canonical operand dtypes and their weak flags."""
  if len(dtypes) == 1:
    return dtypes[0], weaks[0]
  first = dtypes[0]
  if all(dt == first for dt in dtypes[1:]) and not all(weaks):
    return first, False  # identical strong types need no lattice (and allow float0)
  if all(weaks) and mode == "standard":
    # All weak: join the concrete types, then keep the result weak.  This
    # gives e.g. a weak uint8 plus a weak uint16 an unsigned result.
    node = _join_as_jax([_node(dt) for dt in dtypes], mode, x64)
    return _DTYPE_OF_NODE[node], True
  node = _join_as_jax([_node(dt, w) for dt, w in zip(dtypes, weaks)], mode, x64)
  return _DTYPE_OF_NODE[node], node in _WEAK_NODES


def _join_as_jax(nodes, mode, x64):
  """``_least_upper_bound``; on failure the error lists the inputs in the
  order JAX's set of (dtype or Python type) objects iterates them."""
  try:
    return _least_upper_bound(nodes, mode, x64)
  except TypePromotionError:
    objects = {}
    for n in nodes:
      objects.setdefault(_WEAK_NODE_TYPES[n] if n in _WEAK_NODES else _DTYPE_OF_NODE[n], n)
    raise _promotion_error([objects[o] for o in set(objects)], mode) from None


_result_cache = {}


class KeyPromotionError(TypeError):
  """Key arrays mixed with other dtypes; ``with_name`` says which operation
  refused them, as JAX's message does."""

  def __init__(self, dtypes, name="operation"):
    self.dtypes = dtypes
    super().__init__(f"{name} does not accept dtypes {', '.join(map(str, dtypes))}.")

  def with_name(self, name):
    return TypeError(f"{name} does not accept dtypes {', '.join(map(str, self.dtypes))}.")


def _compute_result_type(pairs, mode, x64):
  ext = [dt for dt, _ in pairs if isinstance(dt, ExtendedDType)]
  if ext:   # key arrays promote only with key arrays of their own dtype
    if len(ext) == len(pairs) and all(dt == ext[0] for dt in ext):
      return ext[0], False
    raise KeyPromotionError([dt if isinstance(dt, ExtendedDType) else _canonical(dt, x64)
                             for dt, _ in pairs])
  dtypes = [_canonical(dt, x64) for dt, _ in pairs]
  weaks = [weak for _, weak in pairs]
  dt, weak = _lattice_result(dtypes, weaks, mode, x64)
  weak = weak and dt != bool_
  if weak:
    dt = _wide_default_for_kind(dt)
  return _canonical(dt, x64), weak


def result_type(*args, return_weak_type_flag=False):
  """The dtype of an operation on args, under JAX's promotion rules.

  Python scalars and weakly typed arrays are weak; if the result is weak it
  takes the default dtype of its kind.  The result is canonicalized.
  """
  if not args:
    raise ValueError("at least one array or dtype is required")
  pairs = tuple(_dtype_and_weak(arg, canonicalize=False) for arg in args)
  key = (pairs, config.jax_numpy_dtype_promotion, config.jax_enable_x64)
  result = _result_cache.get(key)
  if result is None:
    result = _compute_result_type(*key)
    if len(_result_cache) > 4096:  # bound the cache for pathological callers
      _result_cache.clear()
    _result_cache[key] = result
  return result if return_weak_type_flag else result[0]


def safe_to_cast(input_dtype_or_value, output_dtype_or_value):
  """Whether casting input to output loses nothing under the promotion rules."""
  output = result_type(output_dtype_or_value)
  if result_type(input_dtype_or_value) == output:
    return True
  return result_type(input_dtype_or_value, output) == output


# ---------------------------------------------------------------------------
# User-requested dtypes (dtype= arguments): their own module, re-exported here.

from purejax._src.user_dtypes import (  # noqa: E402  (needs the names above)
    _caller_stacklevel, canonicalize_user_dtype, check_and_canonicalize_user_dtype,
    check_user_dtype_supported, to_numpy_dtype)
