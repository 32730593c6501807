"""Stand-in for ``jax._src.traceback_util``, imported by flax when it loads
and by equinox. purejax does not filter its frames out of tracebacks:
``api_boundary`` leaves the function as it is; ``register_exclusion`` records
a path, which ``include_frame`` (equinox's error messages) then skips, as it
skips purejax's own frames (JAX's are excluded likewise)."""
import os

import purejax

_exclude_paths = [os.path.dirname(os.path.abspath(purejax.__file__))]


def api_boundary(fun):
  return fun


def register_exclusion(path):
  _exclude_paths.append(path)


def include_filename(filename):
  """Whether a frame of ``filename`` belongs in a user-facing stack (it is
  under none of the registered paths)."""
  return not any(os.path.commonpath([filename, path]) == os.path.normpath(path)
                 for path in _exclude_paths if os.path.isabs(filename) == os.path.isabs(path))


def include_frame(frame):
  return include_filename(frame.f_code.co_filename)
