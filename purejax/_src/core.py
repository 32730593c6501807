"""The language: abstract values, primitives, traces and tracers.

Tracing is "stackless": there is one current trace.  ``Primitive.bind`` hands
the primitive to it; a trace's rules run with the trace's parent as the
current trace, so the values they compute go one level out.  The bottom trace
is ``EvalTrace``, which runs a primitive's implementation on concrete arrays.

Every trace object is its own tag: a tracer belongs to exactly one trace, and
a value that is not a tracer of the current trace is a constant to it.
"""
import contextlib
import threading
import itertools
import operator

import numpy as np

from purejax._src import allocation
from purejax._src import dtypes
from purejax._src import errors


# ---------------------------------------------------------------------------
# Abstract values

_SHORT_DTYPE_NAMES = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}


def short_dtype_name(dtype):
  name = dtype.name
  if dtype == dtypes.float0:
    return "float0"
  return _SHORT_DTYPE_NAMES.get(name, name)


def dtype_name(dtype):
  return "float0" if dtype == dtypes.float0 else dtype.name


class AbstractValue:
  """The base class of abstract values (``ShapedArray`` is the only one)."""
  __slots__ = ()


_NO_SHARDING = object()   # update(): keep the sharding when the shape is kept


class ShapedArray(AbstractValue):
  """The set of arrays with a given shape, dtype and weak type (and, for an
  array sharded over Explicit mesh axes, its ``explicit_sharding``: a
  NamedSharding over an AbstractMesh, else None)."""
  __slots__ = ("shape", "dtype", "weak_type", "explicit_sharding", "_hash")
  array_abstraction_level = 1

  def __init__(self, shape, dtype, weak_type=False, sharding=None):
    self.shape = tuple(shape)
    try:
      self.dtype = np.dtype(dtype)
    except TypeError:
      if not isinstance(dtype, dtypes.ExtendedDType):   # e.g. key<fry>
        raise
      self.dtype = dtype
    self.weak_type = bool(weak_type)
    self.explicit_sharding = sharding
    self._hash = None

  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: _prod(self.shape))

  def __eq__(self, other):
    return (type(other) is ShapedArray and self.shape == other.shape
            and self.dtype == other.dtype and self.weak_type == other.weak_type
            and self.explicit_sharding == other.explicit_sharding)

  def __hash__(self):
    if self._hash is None:
      self._hash = hash((self.shape, self.dtype, self.weak_type, self.explicit_sharding))
    return self._hash

  def update(self, shape=None, dtype=None, weak_type=None, sharding=_NO_SHARDING):
    # A new shape drops the sharding (a rule in sharding_types sets the new one).
    if sharding is _NO_SHARDING:
      sharding = self.explicit_sharding if shape is None or tuple(shape) == self.shape else None
    return ShapedArray(self.shape if shape is None else shape,
                       self.dtype if dtype is None else dtype,
                       self.weak_type if weak_type is None else weak_type, sharding)

  def strip_weak_type(self):
    return self.update(weak_type=False) if self.weak_type else self

  def to_tangent_aval(self):
    """The aval of this value's tangents (float0 for integers and bools)."""
    from purejax._src.interpreters.ad import tangent_aval
    return tangent_aval(self)

  @property
  def sharding(self):
    """As JAX types a value: its explicit sharding, else every dimension
    unsplit over the current abstract mesh (empty without a mesh)."""
    if self.explicit_sharding is not None:
      return self.explicit_sharding
    from purejax._src.mesh import NamedSharding, PartitionSpec
    from purejax._src.mesh_context import get_abstract_mesh
    return NamedSharding(get_abstract_mesh(), PartitionSpec(*[None] * len(self.shape)))

  def str_short(self, short_dtypes=False, mark_weak=False):
    name = short_dtype_name(self.dtype) if short_dtypes else dtype_name(self.dtype)
    sharding = self.explicit_sharding
    if sharding is None:
      shape = ",".join(map(str, self.shape))
      return f"{'~' if mark_weak and self.weak_type else ''}{name}[{shape}]"
    from purejax._src.sharding_types import shape_with_spec
    return f"{'~' if mark_weak and self.weak_type else ''}{name}{shape_with_spec(self.shape, sharding.spec)}"

  def __repr__(self):
    weak = ", weak_type=True" if self.weak_type else ""
    return f"ShapedArray({self.str_short()}{weak})"

  def __str__(self):   # JAX prints an aval as its short form, ~ marking weak types
    return self.str_short(mark_weak=True)

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]


def _prod(xs):
  out = 1
  for x in xs:
    out *= x
  return out


_PYTHON_SCALAR_KINDS = {int: "int", float: "float", complex: "complex", bool: "bool"}


def python_scalar_aval(x):
  """Python scalars are weakly typed (bools are not)."""
  kind = type(x)
  if kind is bool:
    return ShapedArray((), np.dtype(bool), False)
  if kind is int:
    dtype = dtypes.default_int_dtype()
    _check_int_fits(x, dtype)
    return ShapedArray((), dtype, True)
  if kind is float:
    return ShapedArray((), dtypes.default_float_dtype(), True)
  return ShapedArray((), dtypes.default_complex_dtype(), True)


def _check_int_fits(x, dtype):
  info = np.iinfo(dtype)
  if not info.min <= x <= info.max:
    raise OverflowError(f"Python int {x} too large to convert to {dtype.name}")


def _numpy_aval(x):
  return ShapedArray(x.shape, dtypes.array_dtype(x.dtype), False)


# Types that libraries declare to be arrays (JAX's public ``jax.core.pytype_aval_mappings``:
# TensorFlow Probability registers its NumPy-backed variables): type -> the
# function giving a value's aval.  get_aval looks here for types it does not know.
pytype_aval_mappings = {np.ndarray: _numpy_aval, np.generic: _numpy_aval}

# ``jax.interpreters.xla.canonicalize_dtype_handlers``: type -> the function
# turning such a value into a NumPy array before it becomes an operand.
canonicalize_value_handlers = {}


def registered_for(registry, kind):
  """The entry of ``registry`` for ``kind`` or its nearest base class, or None."""
  for base in kind.__mro__:
    found = registry.get(base)
    if found is not None:
      return found
  return None


def get_aval(x):
  """The abstract value of any array-like value (Array, tracer, scalar...)."""
  aval = getattr(x, "aval", None)
  if aval is not None:
    return aval
  kind = type(x)
  if kind in _PYTHON_SCALAR_KINDS:
    return python_scalar_aval(x)
  if isinstance(x, (np.ndarray, np.generic)):
    return _numpy_aval(x)
  for base in (bool, int, float, complex):  # subclasses, e.g. IntEnum
    if isinstance(x, base):
      return python_scalar_aval(base(x))
  aval_of = registered_for(pytype_aval_mappings, kind)
  if aval_of is not None:
    return aval_of(x)
  raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type")


def shaped_abstractify(x):
  """The abstract value to trace an argument with (``eval_shape``,
  ``jit(f).trace``, ``make_jaxpr``): a value's aval, an abstract value
  itself, or the ShapedArray of anything with a shape and a dtype, as JAX
  accepts (flax's ``ConvLocal`` passes a ``ShapedArray`` to ``eval_shape``)."""
  if isinstance(x, AbstractValue):
    return x
  try:
    return get_aval(x)
  except TypeError:
    if not (hasattr(x, "shape") and hasattr(x, "dtype")):
      raise
  dtype = x.dtype if dtypes.is_extended(x.dtype) else dtypes.array_dtype(np.dtype(x.dtype))
  return ShapedArray(np.shape(x), dtype, getattr(x, "weak_type", False))


ref_types = ()   # refs.Ref, set when that module loads


def is_array_like(x):
  """True for values JAX accepts as arrays (not lists or tuples)."""
  return (isinstance(x, (ArrayBase, np.ndarray, np.generic) + ref_types)
          or type(x) in _PYTHON_SCALAR_KINDS
          or isinstance(x, (bool, int, float, complex)))


def concrete_numpy_value(x):
  """``x`` as a canonical-dtype NumPy array (x must be concrete)."""
  if isinstance(x, ArrayBase):
    v = x._value
    return v if type(v) is np.ndarray else x._host   # on a GPU: a host copy
  if canonicalize_value_handlers:
    convert = registered_for(canonicalize_value_handlers, type(x))
    if convert is not None:
      x = convert(x)
  aval = get_aval(x)
  return np.asarray(x, dtype=aval.dtype)


# ---------------------------------------------------------------------------
# Primitives

sharding_rule = None   # set by sharding_types: explicit sharding's output rule


class Primitive:
  """A primitive operation; every rule about it is an attribute of it.

  ``impl(*numpy_arrays, **params)`` computes it on NumPy arrays (the
  reference backend); ``abstract_eval(*avals, **params)`` gives the output
  aval (a list of them when ``multiple_results``).  The interpreters look
  up their own rules here: ``jvp``, ``transpose``, ``batch``, ``c_code``.
  """
  multiple_results = False

  def __init__(self, name, multiple_results=False):
    self.name = name
    self.multiple_results = multiple_results
    self.impl = None
    self.abstract_eval = None
    self.jvp = None
    self.transpose = None
    self.batch = None
    self.c_code = None
    self.is_linear = False
    self.elementwise = False
    self._aval_cache = {}

  def __repr__(self):
    return self.name

  def bind(self, *args, **params):
    ctx = _ctx
    if ctx.bind_hook is not None:    # shard_map(check_vma=True) tracing (vma.py)
      return ctx.bind_hook(self, args, params)
    return ctx.trace.process_primitive(self, args, params)

  def eval_avals(self, avals, params):
    """``abstract_eval`` with a cache, for eager dispatch (it runs on every
    op): the results will be concrete arrays, so one too large to allocate
    raises here, once per signature (a refused signature is not cached)."""
    try:
      key = (avals, tuple(params.items()))
      hit = self._aval_cache.get(key)
    except TypeError:   # an unhashable param: compute without caching
      return self._concrete_avals(avals, params)
    if hit is None:
      hit = self._concrete_avals(avals, params)
      if len(self._aval_cache) > 4096:
        self._aval_cache.clear()
      self._aval_cache[key] = hit
    return hit

  def _concrete_avals(self, avals, params):
    out = self.typed_abstract_eval(avals, params)
    allocation.check_avals(out if self.multiple_results else (out,))
    return out

  def typed_abstract_eval(self, avals, params):
    """``abstract_eval``, with the output shardings of explicit sharding
    (sharding_types.py) when an input carries one."""
    out = self.abstract_eval(*avals, **params)
    if sharding_rule is not None:
      if params.get("out_sharding") is not None or params.get("sharding") is not None:
        return sharding_rule(self, avals, params, out)
      for a in avals:
        if getattr(a, "explicit_sharding", None) is not None:
          return sharding_rule(self, avals, params, out)
    return out

  # Decorators, so that a primitive's rules are written right below it.
  def def_impl(self, f):
    self.impl = f
    return f

  def def_abstract_eval(self, f):
    self.abstract_eval = f
    return f

  def def_jvp(self, f):
    self.jvp = f
    return f

  def def_transpose(self, f):
    self.transpose = f
    return f

  def def_batch(self, f):
    self.batch = f
    return f

  def get_bind_params(self, params):
    """The keyword arguments that re-bind an equation of this primitive
    (``prim.bind(*args, **prim.get_bind_params(eqn.params))``), as custom
    jaxpr interpreters written against JAX's API do."""
    return params


# ---------------------------------------------------------------------------
# Traces

class _TraceContext(threading.local):
  """The current trace, per thread: the async-dispatch worker and device
  threads run callbacks that may trace while the main thread traces too."""

  def __init__(self):
    self.trace = eval_trace if "eval_trace" in globals() else None
    self.bind_hook = None


_ctx = _TraceContext()


def current_trace():
  return _ctx.trace


def find_top_trace(_):
  """The current trace (JAX's stackless tracing ignores the arguments)."""
  return _ctx.trace


@contextlib.contextmanager
def set_current_trace(trace):
  prev = _ctx.trace
  _ctx.trace = trace
  try:
    yield trace
  finally:
    _ctx.trace = prev


@contextlib.contextmanager
def eval_context():
  """Runs the block in the eval trace: operations run eagerly on concrete
  values, even inside a transformation."""
  with set_current_trace(eval_trace):
    yield


def _constant_dim(d, context):
  # Dimensions are ints here (purejax has no symbolic shapes).
  if isinstance(d, Tracer):
    value = d.to_concrete_value()
    if value is None:
      raise errors.ConcretizationTypeError(d, context + d._trace.describe_dependence(d))
    d = value
  operator.index(d)
  return d


def max_dim(d1, d2):
  """``max(d1, d2)`` for dimension sizes (ints; purejax has no symbolic ones)."""
  return max(_constant_dim(d1, "argument `d1` of `core.max_dim`"),
             _constant_dim(d2, "argument `d2` of `core.max_dim`"))


def min_dim(d1, d2):
  """``min(d1, d2)`` for dimension sizes (ints; purejax has no symbolic ones)."""
  return min(_constant_dim(d1, "argument `d1` of `core.min_dim`"),
             _constant_dim(d2, "argument `d2` of `core.min_dim`"))


_trace_ids = itertools.count()


class Trace:
  """A transformation in progress.  Subclasses define ``process_primitive``."""

  def __init__(self, parent=None):
    self.parent = parent
    self.id = next(_trace_ids)
    self.valid = True

  def process_primitive(self, primitive, args, params):
    raise TypeError(f"{type(self).__name__} cannot process {primitive}")

  def describe_dependence(self, tracer):
    """Text for concretization errors: what the value depends on."""
    return ""

  def invalidate(self):
    self.valid = False

  @property
  def main(self):
    # JAX's older name for what identifies a transformation (its tag):
    # libraries compare ``tracer._trace.main`` by identity.
    return self

  def __repr__(self):
    return f"{type(self).__name__}(id={self.id})"


class EvalTrace(Trace):
  """The bottom trace: runs primitives on concrete values (eager mode)."""
  main = None   # as JAX's eval trace, which has no tag

  def process_primitive(self, primitive, args, params):
    return _apply_primitive(primitive, args, params)


def _apply_primitive(primitive, args, params):
  # dispatch imports this module: look it up on first use, then call it directly.
  global _apply_primitive
  from purejax._src.interpreters import dispatch
  _apply_primitive = dispatch.apply_primitive
  return _apply_primitive(primitive, args, params)


eval_trace = EvalTrace()
_ctx.trace = eval_trace


def axis_env():
  """The named axes bound around the current trace: name -> size.

  A mapping trace (vmap's; later pmap's) binds its ``axis_name`` for
  everything traced inside it; an inner binding of a name shadows an outer
  one.  Collectives check their axis names here, and jit keys its cache on
  it (``pmean`` bakes the axis size into the jaxpr).
  """
  env = {}
  trace = _ctx.trace
  while trace is not None:
    name = getattr(trace, "axis_name", None)
    if name is not None and name not in env:
      env[name] = trace.axis_size
    trace = trace.parent
  return env


def escaped_tracer_error(tracer, detail=""):
  return errors.UnexpectedTracerError(
      "Encountered an unexpected tracer. A function transformed by JAX had a "
      "side effect, allowing for a reference to an intermediate value with "
      f"type {tracer.aval.str_short()} wrapped in a "
      f"{type(tracer).__name__} to escape the scope of the transformation.\n"
      "JAX transformations require that functions explicitly return their "
      "outputs, and disallow saving intermediate values to global state."
      f"{detail}")


# ---------------------------------------------------------------------------
# Arrays and tracers share one base class; purejax.numpy fills in its
# operators and methods (``x + y``, ``x.sum()``...) when it is imported.

class ArrayBase:
  __slots__ = ()
  __array_priority__ = 100


class Tracer(ArrayBase):
  """A value being traced by ``_trace``; behaves like an array."""
  __slots__ = ("_trace", "__weakref__")

  # Subclasses define ``aval`` (attribute or property).

  @property
  def shape(self):
    return self.aval.shape

  @property
  def dtype(self):
    return self.aval.dtype

  @property
  def weak_type(self):
    return self.aval.weak_type

  @property
  def ndim(self):
    return len(self.aval.shape)

  @property
  def size(self):
    return self.aval.size

  def __len__(self):
    return len(self.aval)

  def to_concrete_value(self):
    """The concrete value this tracer stands for, if there is one."""
    return None

  def _short_description(self):
    return f"traced array with shape {self.aval.str_short()}"

  def _concrete_or_raise(self, error_class, context=""):
    value = self.to_concrete_value()
    if value is None:
      raise error_class(self, self._trace.describe_dependence(self) + context)
    return value

  def __bool__(self):
    return bool(self._concrete_or_raise(errors.TracerBoolConversionError))

  def __index__(self):
    return operator.index(self._concrete_or_raise(errors.TracerIntegerConversionError))

  def _conversion(self, name):
    hint = (f"\nThe problem arose with the `{name}` function. If trying to "
            "convert the data type of a value, try using "
            f"`x.astype({name})` or `jnp.array(x, {name})` instead.")
    value = self.to_concrete_value()
    if value is None:
      raise errors.ConcretizationTypeError(
          self, hint.lstrip("\n") + self._trace.describe_dependence(self))
    return value

  def __int__(self):
    return int(self._conversion("int"))

  def __float__(self):
    return float(self._conversion("float"))

  def __complex__(self):
    return complex(self._conversion("complex"))

  def __array__(self, dtype=None, copy=None):
    value = self._concrete_or_raise(errors.TracerArrayConversionError)
    return np.asarray(value, dtype=dtype)

  def item(self, *args):
    value = self.to_concrete_value()
    if value is None:
      raise errors.ConcretizationTypeError(
          self, "This occurred in the item() method of jax.Array"
          + self._trace.describe_dependence(self))
    return np.asarray(value).item(*args)

  def tolist(self):
    value = self.to_concrete_value()
    if value is None:
      raise errors.ConcretizationTypeError(
          self, "The tolist() method was called on traced array with shape "
          f"{self.aval.str_short()}." + self._trace.describe_dependence(self))
    return np.asarray(value).tolist()

  def __hash__(self):
    raise TypeError(f"unhashable type: {type(self).__name__}")

  def __setitem__(self, idx, value):
    if type(self.aval).__name__ == "AbstractRef":   # a staged ref: a write
      from purejax._src import refs
      return refs.set(self, idx, value)
    from purejax._src.array import immutable_error
    raise immutable_error()

  def __iter__(self):
    if not self.shape:
      raise TypeError("iteration over a 0-d array")
    from purejax import lax   # as JAX: a unit-stride slice and a squeeze per row
    return (lax.index_in_dim(self, i, keepdims=False) for i in range(self.shape[0]))

  def __repr__(self):
    return f"{self._tracer_name}({self.aval.str_short(mark_weak=True)})"

  __str__ = __repr__
  _tracer_name = "Tracer"

  def block_until_ready(self):
    return self
