"""Finding the user's code: the innermost stack frame outside purejax, and
the names of the user's functions."""
import functools
import os
import sys

from purejax._src import jaxpr as _jaxpr
from purejax._src.jaxpr import SourceInfo

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Paths whose frames are not the user's: purejax's, and what libraries built
# on it register (``jax.extend.source_info_util.register_exclusion``).
_EXCLUDED = [_PACKAGE_DIR, "<frozen"]


def register_exclusion(path):
  _EXCLUDED.append(str(path))


def _is_internal(filename):
  return filename.startswith(tuple(_EXCLUDED))


def user_frame():
  frame = sys._getframe(1)
  while frame is not None and _is_internal(frame.f_code.co_filename):
    frame = frame.f_back
  return frame


def current_source_info():
  if _jaxpr.replayed_source_info is not None:
    return _jaxpr.replayed_source_info
  frame = user_frame()
  if frame is None:
    return None
  return SourceInfo(frame.f_code.co_filename, frame.f_lineno,
                    _column(frame), getattr(frame.f_code, "co_qualname", frame.f_code.co_name))


def _column(frame):
  """The column of the instruction being run (Python 3.11+), else None."""
  positions = getattr(frame.f_code, "co_positions", None)
  if positions is None:
    return None
  index = frame.f_lasti // 2
  for i, pos in enumerate(positions()):
    if i == index:
      return pos[2]
  return None


def function_location(fun):
  """``name at file:line`` for a Python callable, as JAX's messages show it."""
  target = fun
  while hasattr(target, "__wrapped__"):
    target = target.__wrapped__
  func = getattr(target, "func", target)   # functools.partial
  code = getattr(func, "__code__", None)
  name = getattr(func, "__name__", type(func).__name__)
  if code is None:
    return name
  return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def function_name(fun):
  target = getattr(fun, "func", fun)
  return getattr(target, "__name__", type(target).__name__)


def update_wrapper(wrapper, wrapped, updated=("__dict__",)):
  """``functools.update_wrapper`` that, as JAX's transformations, never
  fails: a callable object whose ``__name__`` & co. are not a function's
  (a pytree node's field of that name, say) leaves the wrapper's own.  As
  in JAX, a callable with no name (but a partial's function's) is named
  ``<unnamed function>``."""
  target = wrapped
  while getattr(target, "__name__", None) is None and isinstance(target, functools.partial):
    target = target.func
  name = getattr(target, "__name__", "<unnamed function>")
  values = {"__name__": name, "__qualname__": getattr(wrapped, "__qualname__", name)}
  for attr in functools.WRAPPER_ASSIGNMENTS:
    try:
      setattr(wrapper, attr, values[attr] if attr in values else getattr(wrapped, attr))
    except (AttributeError, TypeError):
      pass
  for attr in updated:
    try:
      getattr(wrapper, attr).update(getattr(wrapped, attr, {}))
    except (AttributeError, TypeError, ValueError):
      pass
  wrapper.__wrapped__ = wrapped
  return wrapper


def wraps(wrapped):
  """``functools.wraps`` with ``update_wrapper``'s leniency."""
  return functools.partial(update_wrapper, wrapped=wrapped)
