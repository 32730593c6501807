"""purejax's version (``purejax.version.__version__``), as ``jax.version``."""
_version = "0.1.0"
__version__ = _version
__version_info__ = tuple(int(part) for part in _version.split("."))
