"""Debugging from inside transformed code: ``debug.print``, ``debug.callback``
and ``debug.breakpoint``.

``debug_callback_p`` and ``debug_print_p`` have no outputs; their impl calls
the user's Python function on the runtime values (as purejax Arrays), so a
jitted function prints on every call.  They are *effectful*
(``prim.effectful``): nothing that drops unused equations may drop them.
Under ``jvp``/``grad`` they see only primal values, under ``vmap`` they run
once per batch element, and inside loops once per iteration.  purejax runs
a program's equations in order on one host thread, so ``ordered=True``
(program order) holds for every callback; the flag is kept for the jaxpr.
"""
import copy
import logging
import string
import sys

import numpy as np

from purejax._src import core
from purejax._src import source_info
from purejax._src import tree_util
from purejax._src.array import wrap_numpy


class DebugEffect:
  """The effect a debug callback has (printed in jaxprs as JAX does)."""
  __slots__ = ("name",)

  def __init__(self, name):
    self.name = name

  def __repr__(self):
    return self.name

  __str__ = __repr__


debug_effect = DebugEffect("Debug")
ordered_debug_effect = DebugEffect("OrderedDebug")


def as_arrays(values):
  """Runtime (NumPy) values as purejax Arrays, which JAX's callbacks get.
  Each wraps a view: a value may be a caller's array (a jit argument passed
  straight to the callback), whose own flags must stay as they are."""
  return [x if isinstance(x, core.ArrayBase) else
          wrap_numpy(np.asarray(x).view(), core.ShapedArray(np.shape(x), np.asarray(x).dtype))
          for x in values]


def _eager_array(x):
  """A NumPy array or scalar argument as the Array JAX would pass (a copy,
  of canonical dtype, weak for a Python scalar)."""
  aval = core.get_aval(x)
  return wrap_numpy(np.array(x, dtype=aval.dtype), aval)


def split_callback_args(args, kwargs):
  """(tree of (args, kwargs), array leaves, {leaf position: static leaf})."""
  leaves, in_tree = tree_util.tree_flatten((args, kwargs))
  dynamic, static = [], {}
  for i, leaf in enumerate(leaves):
    if core.is_array_like(leaf):
      dynamic.append(leaf)
    else:
      static[i] = leaf
  return in_tree, dynamic, static


def merge_callback_args(in_tree, dynamic, static):
  """The inverse of ``split_callback_args``: (args, kwargs)."""
  static = dict(static)
  dyn = iter(dynamic)
  leaves = [static[i] if i in static else next(dyn)
            for i in range(len(static) + len(dynamic))]
  return tree_util.tree_unflatten(in_tree, leaves)


# -- the primitives -----------------------------------------------------------------

def _no_outputs(*avals, **params):
  return []


def _jvp_on_primals(primitive):
  """Tangents are ignored: the callback sees the primal values only."""
  def rule(primals, tangents, **params):
    return primitive.bind(*primals, **params), []
  return rule


def _transpose_nothing(cts, *args, **params):
  return [None] * len(args)


def _unrolled_batch(primitive):
  """One call per batch element (unbatched operands are passed whole)."""
  def rule(axis_size, vals, dims, **params):
    from purejax._src.lax.slicing import index_in_dim
    for i in range(axis_size):
      primitive.bind(*[x if d is None else index_in_dim(x, i, d, keepdims=False)
                       for x, d in zip(vals, dims)], **params)
    return [], []
  return rule


def _debug_primitive(name, impl):
  prim = core.Primitive(name, multiple_results=True)
  prim.impl = impl
  prim.abstract_eval = _no_outputs
  prim.jvp = _jvp_on_primals(prim)
  prim.transpose = _transpose_nothing
  prim.batch = _unrolled_batch(prim)
  prim.c_code = None          # a host step of the C backend
  prim.effectful = True       # never dropped, though it has no outputs
  return prim


def _debug_callback_impl(*args, callback, effect, partitioned):
  from purejax._src.callbacks import call_user
  call_user(callback, as_arrays(args))
  return []


debug_callback_p = _debug_primitive("debug_callback", _debug_callback_impl)


def _debug_print_impl(*args, fmt, has_placeholders, in_tree, logging_record,
                      np_printoptions, ordered, partitioned, static_args):
  c_args, c_kwargs = merge_callback_args(in_tree, as_arrays(args), static_args)
  if has_placeholders:
    with np.printoptions(**dict(np_printoptions)):
      message = fmt.format(*c_args, **c_kwargs)
  else:
    message = " ".join([fmt, *map(str, c_args)])
  if logging_record is None:
    sys.stdout.write(message + "\n")
  else:
    record = copy.copy(logging_record)
    record.msg = message
    logger.handle(record)
  return []


debug_print_p = _debug_primitive("debug_print", _debug_print_impl)


# -- the public functions -----------------------------------------------------------

def debug_callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
  """Calls ``callback(*args, **kwargs)`` with runtime values, also under jit,
  vmap (once per batch element), grad (primal values) and inside loops.

  ``debug_callback(ordered=True)`` returns the function to call with the
  callback and its arguments (JAX's two-call form).  Array leaves of the
  arguments reach the callback as purejax Arrays, other leaves unchanged.
  """
  def _debug_callback(callback, *c_args, **c_kwargs):
    if not callable(callback):
      raise TypeError("first argument to jax.debug.callback must be callable, but "
                      f"got an object of type {type(callback)}")
    in_tree, dynamic, static = split_callback_args(c_args, c_kwargs)

    def _flat_callback(*dyn):
      a, k = merge_callback_args(in_tree, dyn, static)
      callback(*a, **k)

    if core.current_trace() is core.eval_trace:
      # Eager, as in JAX: the function is called directly, its errors raised as they are.
      _flat_callback(*[x if isinstance(x, core.ArrayBase) else _eager_array(x)
                       for x in dynamic])
      return
    debug_callback_p.bind(*dynamic, callback=_flat_callback,
                          effect=ordered_debug_effect if ordered else debug_effect,
                          partitioned=partitioned)

  return _call_or_return("debug_callback", _debug_callback, callback, args, kwargs)


class _FormatChecker(string.Formatter):
  """Checks a format string against its arguments without formatting."""

  def format_field(self, value, format_spec):
    return ""

  def check_unused_args(self, used_args, args, kwargs):
    unused = [a for i, a in enumerate(args) if i not in used_args]
    if unused:
      raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
    unused_kw = [k for k in kwargs if k not in used_args]
    if unused_kw:
      raise ValueError(
          f"Unused keyword arguments to `jax.debug.print`: {unused_kw}. You may be "
          "passing an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead "
          "should pass in a regular string.")


_format_checker = _FormatChecker()


def debug_print(fmt=None, *args, ordered=False, partitioned=False,
                skip_format_check=False, _use_logging=False, **kwargs):
  """Prints ``fmt.format(*args, **kwargs)`` with runtime values, on every
  run of a jitted function (not at trace time), once per batch element under
  vmap and once per iteration inside loops.

  Use a plain format string, not an f-string (formatting is delayed).
  ``debug_print(ordered=True)`` returns the print function (two-call form).
  With ``_use_logging`` (``debug.log``) the message goes to the logger
  ``purejax._src.debugging`` at level INFO instead, from the calling line.
  """
  def do_print(fmt, *c_args, **c_kwargs):
    if not skip_format_check:
      _format_checker.format(fmt, *c_args, **c_kwargs)
    has_placeholders = False
    if fmt:
      _, field_name, _, _ = next(iter(string.Formatter().parse(fmt)))
      has_placeholders = field_name is not None
    in_tree, dynamic, static = split_callback_args(c_args, c_kwargs)
    debug_print_p.bind(
        *dynamic, fmt=fmt, has_placeholders=has_placeholders, in_tree=in_tree,
        logging_record=_logging_record() if _use_logging else None, np_printoptions=tuple(np.get_printoptions().items()),
        ordered=ordered, partitioned=partitioned, static_args=tuple(static.items()))

  return _call_or_return("debug_print", do_print, fmt, args, kwargs)


logger = logging.getLogger("purejax._src.debugging")


def _logging_record():
  """The record a ``debug.log`` message is sent with: the user's file and line
  at trace time (the message itself is formatted at run time)."""
  frame = source_info.user_frame()
  file_name, line = ("(unknown file)", 0) if frame is None else (
      frame.f_code.co_filename, frame.f_lineno)
  return logger.makeRecord(logger.name, logging.INFO, file_name, line, "", (), None)


def debug_log(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,
              **kwargs):
  """``debug.print`` to the logger ``purejax._src.debugging`` (INFO) instead of stdout."""
  return debug_print(fmt, *args, ordered=ordered, partitioned=partitioned,
                     skip_format_check=skip_format_check, _use_logging=True, **kwargs)


def _call_or_return(name, do, first, args, kwargs):
  """JAX's two forms: ``f(first, *args)`` runs ``do`` now; ``f(ordered=...)``
  with nothing else returns ``do`` to call later."""
  if first is not None:
    do(first, *args, **kwargs)
    return None
  if args or kwargs:
    raise TypeError(f"{name} received unexpected arguments in the two-call form:"
                    f" {args=} {kwargs=}")
  return do


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False,
               token=None, **kwargs):
  """Stops in a small debugger (``jdb``, reading commands from stdin) with
  the values of the calling frames.

  Staged like ``debug.callback``: under jit, in a ``cond`` branch or a loop
  it stops when the equation runs, with the runtime values of the frames'
  arrays (``p name`` prints one, ``c`` continues); under vmap once per
  batch element, under grad with the primal values.
  """
  from purejax._src import debugger
  if backend not in (None, "cli"):
    raise ValueError(f"purejax.debug.breakpoint supports only the 'cli' backend, "
                     f"got {backend!r}")
  frames, dynamic = debugger.capture_frames(sys._getframe(1), filter_frames, num_frames)

  def _run(*values):
    make_debugger(debugger.rebuild_frames(frames, values)).run()

  debug_callback_p.bind(*dynamic, callback=_run,
                        effect=ordered_debug_effect if ordered else debug_effect,
                        partitioned=False)
  return token


def make_debugger(frames):
  """The debugger ``breakpoint`` opens on ``frames`` (innermost first)."""
  from purejax._src import debugger
  return debugger.CliDebugger(frames)
