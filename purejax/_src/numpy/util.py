"""Helpers shared by the jnp functions: argument checks, dtype promotion,
NumPy-style rank promotion, and canonical shapes and axes.

Everything here works on abstract values (shape, dtype, weak type) and calls
``lax`` for anything touching array values, so it works under every trace.
"""
import operator
import warnings

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src import errors
from purejax._src import sharding_types
from purejax._src.mesh import NamedSharding, PartitionSpec
from purejax._src.config import config


# ---------------------------------------------------------------------------
# Argument checks

def is_arraylike(x):
  """Arrays, tracers, NumPy arrays/scalars and Python scalars (not lists)."""
  return core.is_array_like(x) or hasattr(x, "__jax_array__")


def check_arraylike(fun_name, *args):
  """JAX refuses lists and tuples where arrays are expected (it would trace
  every element separately); say so by name and position."""
  for pos, arg in enumerate(args):
    if not is_arraylike(arg):
      raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got "
                      f"{type(arg)} at position {pos}.")


def check_no_out(fun_name, out):
  """jnp functions return new arrays; NumPy's ``out=`` cannot be honoured."""
  if out is not None:
    raise NotImplementedError(f"The 'out' argument to jnp.{fun_name} is not supported.")


def aval_of(x):
  return core.get_aval(x)


def shape(x):
  return core.get_aval(x).shape


def ndim(x):
  return len(core.get_aval(x).shape)


def asarray(x):
  """``x`` as a purejax value: arrays and tracers as they are, anything else
  (Python or NumPy scalars, NumPy arrays) as a canonical-dtype Array."""
  if isinstance(x, core.ArrayBase):
    return x
  if hasattr(x, "__jax_array__"):
    return asarray(x.__jax_array__())
  aval = core.get_aval(x)
  return lax.convert_element_type(x, aval.dtype, aval.weak_type)


# ---------------------------------------------------------------------------
# Dtype promotion (JAX's lattice, from dtypes.result_type)

def _check_python_ints(args):
  """A Python int must fit the default integer type (int32 unless x64 is
  on) wherever it goes, as when JAX parses arguments of its jitted jnp
  functions; otherwise it would silently wrap."""
  for i, x in enumerate(args):
    if type(x) is int:
      info = np.iinfo(dtypes.default_int_dtype())
      if not info.min <= x <= info.max:
        # JAX names the parameter of its jitted jnp function (x, y for operators).
        path = ("x", "y")[i] if len(args) <= 2 else f"args[{i}]"
        raise OverflowError("An overflow was encountered while parsing an argument to a "
                            f"jitted computation, whose argument path is {path}. Got "
                            f"{type(x)} with value {x}")


def check_python_int_leaves(leaves, dtype):
  """Python ints becoming elements of an integer array of ``dtype`` must
  fit it, with NumPy's messages as JAX gives them (a 64-bit type reports
  the C conversion that fails)."""
  dtype = np.dtype(dtype)
  if dtype.kind not in "iu":
    return
  info = np.iinfo(dtype)
  for x in leaves:
    if type(x) is int and not info.min <= x <= info.max:
      if dtype.itemsize == 8 and (x > info.max or dtype.kind == "i"):
        raise OverflowError("Python int too large to convert to C long")
      raise OverflowError(f"Python integer {x} out of bounds for {dtype}")


def buffer_as_numpy(obj):
  """An object with the buffer protocol (memoryview, bytearray,
  array.array...) as a NumPy array, which JAX accepts as an array; other
  values as they are (``bytes`` stay text, which JAX rejects)."""
  if isinstance(obj, (core.ArrayBase, np.ndarray, np.generic, bytes, str, list, tuple,
                      bool, int, float, complex)) or obj is None:
    return obj
  try:
    memoryview(obj)
  except TypeError:
    return obj
  return np.asarray(obj)


def _convert_all(args, dtype, weak_type):
  _check_python_ints(args)
  return [lax.convert_element_type(x, dtype, weak_type) for x in args]


def promote_dtypes(*args):
  """Converts every argument to the dtype JAX promotes them to."""
  if len(args) < 2:
    return [asarray(x) for x in args]
  dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
  return _convert_all(args, dtype, weak)


def promote_dtypes_inexact(*args):
  """Like ``promote_dtypes``, then integers and bools become floats."""
  dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
  return _convert_all(args, dtypes.to_inexact_dtype(dtype), weak)


def promote_dtypes_numeric(*args):
  """Like ``promote_dtypes``, then bools become integers."""
  dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
  return _convert_all(args, dtypes.to_numeric_dtype(dtype), weak)


def promote_dtypes_complex(*args):
  dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
  return _convert_all(args, dtypes.to_complex_dtype(dtype), weak)


# ---------------------------------------------------------------------------
# Shapes and broadcasting

def broadcast_shapes(*shapes):
  """NumPy's broadcast of several shapes, with JAX's error message."""
  rank = max((len(s) for s in shapes), default=0)
  padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
  out = []
  for sizes in zip(*padded):
    big = {d for d in sizes if d != 1}
    if len(big) > 1:
      raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(map(tuple, shapes))}")
    out.append(big.pop() if big else 1)
  return tuple(out)


def expand_to_rank(x, rank):
  """Adds leading size-1 axes so that ``x`` has ``rank`` dimensions."""
  return expand_dims_at(x, tuple(range(rank - ndim(x))))


def expand_dims_at(x, axes):
  """Inserts size-1 axes at ``axes`` (positions in the result)."""
  if not axes:
    return x
  in_shape = shape(x)
  rank = len(in_shape) + len(axes)
  axes = sorted(a % rank for a in axes)
  kept = [d for d in range(rank) if d not in axes]
  out_shape = [1] * rank
  for d, size in zip(kept, in_shape):
    out_shape[d] = size
  return lax.broadcast_in_dim(x, tuple(out_shape), tuple(kept))


def _rank_promotion_check(fun_name, shapes):
  """jax_numpy_rank_promotion: "warn" warns, "raise" raises (JAX's texts)."""
  mode = config.jax_numpy_rank_promotion
  if mode == "allow":
    return
  shapes_text = " ".join(str(s) for s in shapes)
  if mode == "warn":
    warnings.warn(f"Following NumPy automatic rank promotion for {fun_name} on shapes "
                  f"{shapes_text}. Set the jax_numpy_rank_promotion config option to 'allow' "
                  "to disable this warning; for more information, see "
                  "https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
                  stacklevel=dtypes._caller_stacklevel())
  else:
    raise ValueError(f"Operands could not be broadcast together for {fun_name} on shapes "
                     f"{shapes_text} and with the config option "
                     "jax_numpy_rank_promotion='raise'. For more information, see "
                     "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def promote_shapes(fun_name, *args):
  """NumPy rank promotion: lower-rank operands get leading unit axes.

  Only ranks are matched: lax's binary ops broadcast size-1 axes and rank-0
  operands themselves, so nothing else is emitted (as in JAX's jaxprs).
  """
  if len(args) < 2:
    return list(args)
  shapes = [shape(x) for x in args]
  if all(s == shapes[0] for s in shapes[1:]):
    return list(args)
  if len({len(s) for s in shapes if s}) < 2:
    return list(args)
  _rank_promotion_check(fun_name, shapes)
  rank = len(broadcast_shapes(*shapes))
  return [expand_to_rank(x, rank) for x in args]


def promote_args(fun_name, *args):
  """Checks, promotes dtypes, then ranks: what a NumPy binary op does."""
  check_arraylike(fun_name, *args)
  try:
    promoted = promote_dtypes(*args)
  except dtypes.KeyPromotionError as e:
    raise e.with_name(fun_name) from None
  return promote_shapes(fun_name, *promoted)


def promote_args_inexact(fun_name, *args):
  check_arraylike(fun_name, *args)
  return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name, *args):
  check_arraylike(fun_name, *args)
  return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


def broadcast_to(x, target, out_spec=None):
  """``x`` broadcast (NumPy rules) to the shape ``target``; with
  ``out_spec`` (explicit sharding's spec entries, on the current mesh)
  typed so, where ``x``'s own splits agree with it."""
  x = asarray(x)
  x_shape = shape(x)
  target = tuple(target)
  aval = aval_of(x)
  x_spec = sharding_types.spec_of(aval)
  out_spec = None if out_spec is None else tuple(out_spec)
  if x_shape == target and (out_spec is None or x_spec == out_spec):
    return x
  missing = len(target) - len(x_shape)
  if missing < 0:
    raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape={x_shape} "
                     f"shape={target}")
  if not all(d == 1 or d == t for d, t in zip(x_shape, target[missing:])) or (
      out_spec is not None and any(e not in (None, o)
                                   for e, o in zip(x_spec, out_spec[missing:]))):
    requested = core.ShapedArray(target, aval.dtype)
    if out_spec is not None:
      requested = sharding_types._with_spec(requested, _current_abstract_mesh(), out_spec)
    raise ValueError(f"Incompatible types for broadcasting: input type={aval.str_short()} "
                     f"and requested type={requested.str_short()}")
  # broadcast_in_dim grows size-1 operand axes itself.
  sharding = None
  if out_spec is not None:
    sharding = NamedSharding(_current_abstract_mesh(), PartitionSpec(*out_spec))
  return lax.broadcast_in_dim(x, target, tuple(range(missing, len(target))),
                              out_sharding=sharding)


def _current_abstract_mesh():
  from purejax._src.mesh_context import get_abstract_mesh
  return get_abstract_mesh()


def broadcast_arrays(*args):
  """Every argument broadcast to their common shape."""
  shapes = [shape(x) for x in args]
  if not shapes or all(s == shapes[0] for s in shapes):
    return [asarray(x) for x in args]
  target = broadcast_shapes(*shapes)
  return [broadcast_to(x, target) for x in args]


# ---------------------------------------------------------------------------
# Static shapes and axes

def _shape_error(shape_value):
  """JAX's error for a shape that is not a sequence of concrete integers;
  when a tracer is to blame it says what the tracer depends on."""
  text = (f"Shapes must be 1D sequences of concrete values of integer type, got "
          f"{shape_value}.\nIf using `jit`, try using `static_argnums` or applying "
          "`jit` to smaller subfunctions.")
  items = shape_value if isinstance(shape_value, (tuple, list)) else [shape_value]
  for d in items:
    if isinstance(d, core.Tracer):
      text += d._trace.describe_dependence(d)
      break
  return TypeError(text)


def _dimension(d):
  """One shape entry as a Python int, or None if it cannot be one."""
  if isinstance(d, (bool, np.bool_)):
    return None
  if isinstance(d, core.Tracer):
    if d.shape != () or not dtypes.issubdtype(d.dtype, np.integer):
      return None
    value = d.to_concrete_value()
    return None if value is None else int(value)
  if isinstance(d, core.ArrayBase):
    if d.shape != () or not dtypes.issubdtype(d.dtype, np.integer):
      return None
    return int(core.concrete_numpy_value(d))
  try:
    return operator.index(d)
  except TypeError:
    return None


def canonicalize_shape(shape_value):
  """A shape argument (an int or a sequence of ints) as a tuple of ints.

  The one place every shape-taking function (zeros, full, reshape,
  broadcast_to...) checks its shape: traced values are refused with the
  error JAX gives.
  """
  items = shape_value
  if not isinstance(shape_value, (tuple, list)):
    if isinstance(shape_value, (core.ArrayBase, np.ndarray)) and np.ndim(shape_value) == 1 \
        and not isinstance(shape_value, core.Tracer):
      items = list(np.asarray(shape_value))
    else:
      items = (shape_value,)
      shape_value = items
  out = []
  for d in items:
    value = _dimension(d)
    if value is None:
      raise _shape_error(shape_value)
    out.append(value)
  return tuple(out)


def canonicalize_axis(axis, num_dims):
  """A possibly negative axis as a non-negative one, checked against ndim."""
  try:
    axis = operator.index(axis)
  except TypeError:
    raise TypeError(f"axis must be an integer, got {axis!r}") from None
  if not -num_dims <= axis < num_dims:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {num_dims}")
  return axis % num_dims if num_dims else axis


def canonicalize_axes(axis, num_dims):
  """``axis`` (None, an int or a sequence) as a tuple of non-negative axes."""
  if axis is None:
    return tuple(range(num_dims))
  if isinstance(axis, (tuple, list)):
    axes = tuple(canonicalize_axis(a, num_dims) for a in axis)
    if len(set(axes)) != len(axes):
      raise ValueError(f"duplicate value in 'axis': {axis}")
    return axes
  return (canonicalize_axis(axis, num_dims),)


def concrete_or_error(value, context):
  """A Python value for an argument that must be static (not traced)."""
  if isinstance(value, core.Tracer):
    concrete = value.to_concrete_value()
    if concrete is None:
      raise errors.ConcretizationTypeError(value, context + value._trace.describe_dependence(value))
    return concrete
  if isinstance(value, core.ArrayBase):
    return core.concrete_numpy_value(value)
  return value
