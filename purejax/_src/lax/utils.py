"""Small helpers shared by the lax primitive families: shapes, axes, avals."""
import operator

import numpy as np

from purejax._src import core
from purejax._src import dtypes


def aval(x):
  return core.get_aval(x)


def is_tracer(x):
  return isinstance(x, core.Tracer)


def prod(xs):
  out = 1
  for x in xs:
    out *= int(x)
  return out


def safe_zip(*seqs):
  """zip that insists on equal lengths (with JAX's message when they differ)."""
  n = len(seqs[0])
  for i, s in enumerate(seqs[1:], start=2):
    if len(s) != n:
      longer = "longer" if len(s) > n else "shorter"
      raise ValueError(f"safe_map() argument {i} is {longer} than argument 1")
  return list(zip(*seqs))


def _dim_value(d):
  """A concrete integer dimension, or None when ``d`` is not one."""
  if isinstance(d, core.Tracer):
    value = d.to_concrete_value()
    if value is None:
      return None
    d = value
  if isinstance(d, (bool, np.bool_)):
    return None
  if isinstance(d, (float, complex, np.inexact)):
    return None
  try:
    return operator.index(d)
  except TypeError:
    return None


def canonicalize_shape(shape):
  """A shape as a tuple of Python ints; ``shape`` may also be one int."""
  if isinstance(shape, np.ndarray) and shape.ndim == 1:
    shape = tuple(shape.tolist())
  elif not isinstance(shape, (tuple, list)):
    shape = (shape,)
  dims = [_dim_value(d) for d in shape]
  if any(d is None for d in dims):
    raise _bad_shape_error(tuple(shape))
  return tuple(dims)


def _bad_shape_error(shape):
  msg = f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
  tracers = [d for d in shape if isinstance(d, core.Tracer)]
  if tracers:
    t = tracers[0]
    msg += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to "
            "smaller subfunctions." + t._trace.describe_dependence(t))
  return TypeError(msg)


def int_tuple(xs):
  """Static integer params (axes, permutations...) as a tuple of ints."""
  if isinstance(xs, np.ndarray):
    xs = xs.tolist()
  return tuple(operator.index(x) for x in xs)


def check_shape_elements(name, shape, what="shape"):
  """Every element of a param shape is a nonnegative integer."""
  if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape):
    kinds = ", ".join(str(type(d)) for d in shape)
    raise TypeError(f"{name} {what} must have every element be an integer type, "
                    f"got ({kinds}{',' if len(shape) == 1 else ''}).")
  if any(d < 0 for d in shape):
    raise TypeError(f"{name} {what} must have every element be nonnegative, got {shape}.")


def canonicalize_axis(axis, ndim):
  """``axis`` in [-ndim, ndim) as a nonnegative int (NumPy's error otherwise)."""
  axis = operator.index(axis)
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return axis % ndim if ndim else axis


def scalar_of(dtype, value):
  """A rank-0 NumPy constant of ``dtype`` (a strongly typed literal in a jaxpr)."""
  return np.array(value, dtype=dtype)


def default_int_dtype():
  return dtypes.default_int_dtype()


_ARRAY_TYPES = (core.ArrayBase, np.ndarray, np.generic, bool, int, float, complex)


def check_operands(name, args):
  """JAX's bind-time error for operands that are not arrays (lists, strings)."""
  for i, x in enumerate(args):
    if not isinstance(x, _ARRAY_TYPES):
      raise TypeError(
          f"Error interpreting argument to {name} as a JAX value. The problematic "
          f"value is of type {type(x)} and was passed to {name} at position {i}.\n")


def bind(prim, *args, **params):
  """``prim.bind``, with JAX's message when an operand is not an array."""
  try:
    return prim.bind(*args, **params)
  except TypeError:
    check_operands(prim.name, args)
    raise


def with_weak_type(x, weak):
  """``x`` with the weak type ``weak``: for rules that compute a primitive's
  result with other primitives, whose weak types may come out differently."""
  aval = core.get_aval(x)
  if aval.weak_type == weak:
    return x
  from purejax._src.lax.convert import convert_element_type_p
  return convert_element_type_p.bind(x, new_dtype=aval.dtype, weak_type=weak)
