"""``jax.experimental.compilation_cache.compilation_cache``: where compiled
code is kept on disk between runs.

JAX's persistent cache keeps XLA executables; purejax's keeps its compiled
kernels (shared libraries, purejax/_src/backends/cpu/cache.py), so these
functions act on that cache: ``set_cache_dir`` sets the
``purejax_cache_dir`` flag.  The cache is on by default in purejax
(``purejax_disk_cache``), and the directory must be private to the user (a
directory others can write is replaced, with a warning, by a private
temporary one)."""
import os as _os

from purejax._src.config import config as _config


def set_cache_dir(path):
  """Compiled kernels are kept in (and looked up in) ``path`` from now on;
  ``None`` restores the default (``~/.cache/purejax/kernels``)."""
  _config.update("purejax_cache_dir", None if path is None else _os.fspath(path))


def reset_cache():
  """Back to the uninitialized state.  purejax opens the cache directory
  afresh at each compilation, so there is no state to drop: kernels already
  loaded stay loaded (as JAX keeps its in-memory executables) and the next
  compilation uses the directory then configured."""
