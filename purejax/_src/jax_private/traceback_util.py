"""Stand-in for ``jax._src.traceback_util``, imported by flax when it loads.
purejax does not filter its frames out of tracebacks: ``api_boundary`` leaves
the function as it is and ``register_exclusion`` only records the path."""
_exclude_paths = []


def api_boundary(fun):
  return fun


def register_exclusion(path):
  _exclude_paths.append(path)
