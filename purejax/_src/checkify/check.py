"""``check``: the primitive a user's runtime assertion binds.

Run eagerly it raises at once; under ``checkify`` its trace turns it into
an error value; staged without ``checkify`` (jit, scan) it cannot run, and
compiling it raises the ValueError JAX raises.
"""
import functools

import numpy as np

from purejax._src import core
from purejax._src import tree_util
from purejax._src.checkify import errors

NOT_FUNCTIONALIZED = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
    "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
    "functionalizing it through `checkify.checkify`.")


def format_check_message(msg, fmt_tree):
  """The message formatter of a user check site: its values are formatted
  as Arrays, as JAX's are (a dict of them prints ``Array(-1., dtype=float32)``)."""
  def format(values):
    from purejax import numpy as jnp
    from purejax._src.random.keys import is_typed_key
    arrays = [v if is_typed_key(v) else jnp.asarray(v) for v in values]
    args, kwargs = tree_util.tree_unflatten(fmt_tree, arrays)
    return f"{msg.format(*args, **kwargs)} (`check` failed)"
  return format


check_p = core.Primitive("check", multiple_results=True)
check_p.effectful = True        # never dropped, though it has no outputs
check_p.unstaged_error = NOT_FUNCTIONALIZED   # refused by the compilers
check_p.c_code = None


@check_p.def_impl
def _check_impl(pred, *payload, site):
  if not bool(np.asarray(pred)):
    raise errors.JaxRuntimeError(site.format(payload))
  return []


@check_p.def_abstract_eval
def _check_abstract_eval(pred, *payload, site):
  return []


def _check_jvp(primals, tangents, *, site):
  check_p.bind(*primals, site=site)
  return [], []


check_p.jvp = _check_jvp
check_p.transpose = lambda cts, *args, **params: [None] * len(args)


def _check_batch(axis_size, vals, dims, *, site, bind=check_p.bind):
  """A batched predicate becomes one check: it fails if any element fails,
  reporting the last failing element's payload (as JAX does)."""
  from purejax import lax
  from purejax import numpy as jnp
  from purejax._src.interpreters import batching
  pred, payload = vals[0], vals[1:]
  pred = batching.bdim_at_front(pred, dims[0], axis_size)
  failed = jnp.logical_not(pred)
  last = (axis_size - 1) - jnp.argmax(failed[::-1]).astype(np.int32)
  picked = [p if d is None else lax.dynamic_index_in_dim(
                batching.moveaxis(p, d, 0), last, 0, keepdims=False)
            for p, d in zip(payload, dims[1:])]
  bind(jnp.logical_not(jnp.any(failed)), *picked, site=site)
  return [], []


check_p.batch = _check_batch


# -- debug_check: a check that only checkify runs ---------------------------------------
# Outside checkify it does nothing: eagerly, and under jit, where it is
# staged (so that a checkify around the jit still finds it) and then compiled
# to nothing.

debug_check_p = core.Primitive("check", multiple_results=True)
debug_check_p.effectful = True       # kept by transformations...
debug_check_p.compiled_away = True   # ...and dropped when compiled
debug_check_p.def_impl(lambda pred, *payload, site, debug: [])
debug_check_p.def_abstract_eval(lambda pred, *payload, site, debug: [])


def _debug_check_jvp(primals, tangents, *, site, debug):
  debug_check_p.bind(*primals, site=site, debug=debug)
  return [], []


debug_check_p.jvp = _debug_check_jvp
debug_check_p.transpose = lambda cts, *args, **params: [None] * len(args)
debug_check_p.batch = lambda axis_size, vals, dims, *, site, debug: _check_batch(
    axis_size, vals, dims, site=site, bind=functools.partial(debug_check_p.bind, debug=debug))


def _is_array(x):
  return isinstance(x, (core.ArrayBase, np.ndarray, np.generic))


def _check(pred, msg, fmt_args, fmt_kwargs, debug):
  if not (isinstance(pred, (bool, np.bool_)) or _is_array(pred)):
    raise TypeError(f"check takes a scalar pred as argument, got {pred}")
  if _is_array(pred) and (np.ndim(pred) if not isinstance(pred, core.ArrayBase)
                          else pred.ndim) != 0:
    raise TypeError(f"check takes a scalar pred as argument, got {pred}")
  leaves, fmt_tree = tree_util.tree_flatten((fmt_args, fmt_kwargs))
  for leaf in leaves:
    if not _is_array(leaf):
      raise TypeError("Formatting arguments to checkify.check need to be PyTrees of "
                      f"arrays, but got {leaf!r} of type {type(leaf)}.")
  site = errors.Site(errors.FailedCheckError, format_check_message(msg, fmt_tree),
                     len(leaves))
  if debug:
    debug_check_p.bind(pred, *leaves, site=site, debug=True)
  else:
    check_p.bind(pred, *leaves, site=site)


def check(pred, msg, *fmt_args, **fmt_kwargs):
  """Checks that ``pred`` holds; ``msg`` is formatted with the arguments
  (arrays) when it does not.  Needs ``checkify`` to run under jit."""
  _check(pred, msg, fmt_args, fmt_kwargs, debug=False)


def debug_check(pred, msg, *fmt_args, **fmt_kwargs):
  """As ``check`` under ``checkify``; anywhere else (eagerly, under jit) it
  does nothing."""
  _check(pred, msg, fmt_args, fmt_kwargs, debug=True)


def check_error(error):
  """Raises ``error`` (eagerly) or adds it to the enclosing checkify's error."""
  if not isinstance(error, errors.Error):
    raise TypeError(f"check_error takes an Error as argument, got type {type(error)} "
                    "instead.")
  if core.current_trace() is core.eval_trace:
    error.throw()
    return
  from purejax._src.checkify.trace import CheckifyTrace
  trace = core.current_trace()
  while trace is not None and not isinstance(trace, CheckifyTrace):
    trace = trace.parent
  if trace is None:
    raise ValueError(NOT_FUNCTIONALIZED)
  trace.add_error(error)
