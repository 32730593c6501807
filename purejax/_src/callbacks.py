"""Calling Python from traced code: ``pure_callback`` and ``io_callback``.

Both primitives' impl calls the user's function on the runtime values (as
purejax Arrays) and checks what it returns against ``result_avals``; the C
backend runs them as host steps.  ``pure_callback`` is a pure function to
the transformations (no JVP: use ``custom_jvp``); under vmap it does what
its ``vmap_method`` says.  ``io_callback`` is effectful
(``prim.effectful``): it is never dropped, and runs once per batch element
under vmap (``ordered=True`` refuses vmap, as in JAX).
"""
import traceback

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src import errors
from purejax._src import tree_util
from purejax._src.debugging import as_arrays


class FlatCallback:
  """The user's callback called with flat arguments, returning flat results.

  Equal for the same function and argument structure, so retracing the same
  code gives equal jaxprs."""
  __slots__ = ("callback_func", "in_tree")

  def __init__(self, callback_func, in_tree):
    self.callback_func = callback_func
    self.in_tree = in_tree

  def __call__(self, *flat_args):
    args, kwargs = tree_util.tree_unflatten(self.in_tree, flat_args)
    return tree_util.tree_leaves(self.callback_func(*args, **kwargs))

  def __eq__(self, other):
    return (type(other) is FlatCallback and self.callback_func == other.callback_func
            and self.in_tree == other.in_tree)

  def __hash__(self):
    return hash((self.callback_func, self.in_tree))

  def __repr__(self):
    return f"_FlatCallback(callback_func={self.callback_func!r}, in_tree={self.in_tree})"


def call_user(callback, args):
  """``callback(*args)``; an exception it raises reaches the caller as
  JAX's runtime error (an XLA CPU callback failure), with the traceback in
  the message and the original as ``__cause__``."""
  try:
    return callback(*args)
  except Exception as e:   # noqa: BLE001  (any error of the user's function)
    trace = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    raise errors.JaxRuntimeError(
        f"INTERNAL: CpuCallback error calling callback: {trace.rstrip()}") from e


def _run_callback(name, callback, args, result_avals):
  """Calls ``callback`` on Arrays and returns its results as NumPy arrays
  of ``result_avals`` (an error names any mismatch)."""
  outs = call_user(callback, as_arrays(args))
  if len(outs) != len(result_avals):
    raise errors.JaxRuntimeError(
        f"{name}: the callback returned {len(outs)} arrays, but result_shape_dtypes "
        f"declares {len(result_avals)}")
  results = []
  for i, (out, aval) in enumerate(zip(outs, result_avals)):
    value = np.asarray(out)
    if value.shape != aval.shape:
      raise errors.JaxRuntimeError(
          f"{name}: result {i} of the callback has shape {value.shape}, but "
          f"result_shape_dtypes declares {aval.str_short()}")
    if value.dtype != aval.dtype and dtypes.canonicalize_dtype(value.dtype) != aval.dtype:
      raise errors.JaxRuntimeError(
          f"{name}: result {i} of the callback has dtype {value.dtype.name}, but "
          f"result_shape_dtypes declares {aval.str_short()}")
    results.append(value.astype(aval.dtype, copy=False))
  return results


def _result_avals(result_shape_dtypes):
  def aval(x):
    dtype = np.dtype(x.dtype)
    if dtypes.canonicalize_dtype(dtype) != dtype:
      raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                       "`jax_enable_x64` is disabled")
    return core.ShapedArray(x.shape, dtype)
  leaves, out_tree = tree_util.tree_flatten(result_shape_dtypes)
  return tuple(aval(x) for x in leaves), out_tree


def _outputs(*avals, result_avals, **params):
  return list(result_avals)


def _no_jvp(message):
  def rule(primals, tangents, **params):
    raise ValueError(message)
  return rule


def _moved_to_front(vals, dims):
  from purejax._src.interpreters.batching import moveaxis
  return [x if d is None else moveaxis(x, d, 0) for x, d in zip(vals, dims)]


def _per_element(bind_one, vals, dims, unroll=1):
  """A scan over the batch axis calling ``bind_one`` on each element."""
  from purejax._src.lax.control_flow.scan import scan
  vals = _moved_to_front(vals, dims)
  batched = [d is not None for d in dims]
  xs = [x for x, b in zip(vals, batched) if b]

  def body(carry, x_elems):
    it = iter(x_elems)
    return carry, bind_one([next(it) if b else v for v, b in zip(vals, batched)])

  _, outs = scan(body, (), xs, unroll=unroll)
  return list(outs)


# -- pure_callback --------------------------------------------------------------------

pure_callback_p = core.Primitive("pure_callback", multiple_results=True)
pure_callback_p.abstract_eval = _outputs
pure_callback_p.c_code = None


@pure_callback_p.def_impl
def _pure_callback_impl(*args, callback, result_avals, sharding, vmap_method):
  return _run_callback("pure_callback", callback, args, result_avals)


pure_callback_p.jvp = _no_jvp(
    "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks "
    "while taking gradients.")


def _pure_callback_transpose(cts, *args, **params):
  raise ValueError("Pure callbacks do not support transpose. Please use "
                   "`jax.custom_vjp` to use callbacks while taking gradients.")


pure_callback_p.transpose = _pure_callback_transpose

_VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized", None]


def _batched_aval(aval, size):
  return core.ShapedArray((size,) + aval.shape, aval.dtype, aval.weak_type)


def _pure_callback_batch(axis_size, vals, dims, *, vmap_method, result_avals, **params):
  from purejax._src.lax.structural import broadcast
  batched_avals = tuple(_batched_aval(a, axis_size) for a in result_avals)
  if vmap_method == "legacy_vectorized":
    outs = pure_callback_p.bind(*_moved_to_front(vals, dims), vmap_method=vmap_method,
                                result_avals=batched_avals, **params)
  elif vmap_method in ("expand_dims", "broadcast_all"):
    size = axis_size if vmap_method == "broadcast_all" else 1
    args = [broadcast(x, (size,)) if d is None else x
            for x, d in zip(_moved_to_front(vals, dims), dims)]
    outs = pure_callback_p.bind(*args, vmap_method=vmap_method,
                                result_avals=batched_avals, **params)
  elif vmap_method in ("sequential", "sequential_unrolled"):
    outs = _per_element(
        lambda args: pure_callback_p.bind(*args, vmap_method=vmap_method,
                                          result_avals=result_avals, **params),
        vals, dims, unroll=axis_size if vmap_method == "sequential_unrolled" else 1)
  else:
    raise NotImplementedError(
        "vmap is only supported for the pure_callback primitive when vmap_method is one "
        "of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
        f"'legacy_vectorized'. Got {vmap_method=}.")
  return list(outs), [0] * len(outs)


pure_callback_p.batch = _pure_callback_batch


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
  """Calls the pure Python function ``callback(*args, **kwargs)`` from traced
  code; it gets purejax Arrays and returns arrays matching
  ``result_shape_dtypes`` (a pytree of objects with ``shape`` and ``dtype``).

  Under vmap, ``vmap_method`` decides: "sequential" (a loop, one call per
  element), "sequential_unrolled", "expand_dims" (unbatched arguments get a
  leading axis of size 1), "broadcast_all" (tiled to the batch size),
  "legacy_vectorized"; None refuses vmap.  Not differentiable (use
  ``custom_jvp``/``custom_vjp``).  ``sharding`` is accepted and ignored
  (one device).
  """
  if vmap_method not in _VMAP_METHODS:
    raise ValueError(f"vmap_method must be on of the allowed methods {_VMAP_METHODS}, "
                     f"but got: {vmap_method}")
  flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
  result_avals, out_tree = _result_avals(result_shape_dtypes)
  outs = pure_callback_p.bind(*flat_args, callback=FlatCallback(callback, in_tree),
                              result_avals=result_avals, sharding=sharding,
                              vmap_method=vmap_method)
  return tree_util.tree_unflatten(out_tree, outs)


# -- io_callback ----------------------------------------------------------------------

io_callback_p = core.Primitive("io_callback", multiple_results=True)
io_callback_p.abstract_eval = _outputs
io_callback_p.c_code = None
io_callback_p.effectful = True   # never dropped, even when its results are unused


@io_callback_p.def_impl
def _io_callback_impl(*args, callback, result_avals, sharding, ordered):
  return _run_callback("io_callback", callback, args, result_avals)


io_callback_p.jvp = _no_jvp("IO callbacks do not support JVP.")


def _io_callback_transpose(cts, *args, **params):
  raise ValueError("IO callbacks do not support transpose.")


io_callback_p.transpose = _io_callback_transpose


def _io_callback_batch(axis_size, vals, dims, *, ordered, **params):
  if ordered:
    raise ValueError("Cannot `vmap` ordered IO callback.")
  outs = _per_element(lambda args: io_callback_p.bind(*args, ordered=False, **params),
                      vals, dims)
  return outs, [0] * len(outs)


io_callback_p.batch = _io_callback_batch


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False,
                **kwargs):
  """Calls the impure Python function ``callback(*args, **kwargs)`` from
  traced code (every time the code runs; it is never dropped), with purejax
  Arrays; it returns arrays matching ``result_shape_dtypes``.  Under vmap it
  is called once per batch element, in a loop (``ordered=True`` refuses
  vmap, as in JAX).  Not differentiable.  ``sharding`` is ignored.
  """
  flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
  result_avals, out_tree = _result_avals(result_shape_dtypes)
  outs = io_callback_p.bind(*flat_args, callback=FlatCallback(callback, in_tree),
                            result_avals=result_avals, sharding=sharding, ordered=ordered)
  return tree_util.tree_unflatten(out_tree, outs)
