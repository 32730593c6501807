"""``jax.interpreters.pxla``: JAX's XLA executables over device meshes.
purejax compiles jaxprs itself and has none of them: importing the module
works (libraries import it for code paths purejax never takes, e.g. orbax's
Pathways plugin) and reading any name raises AttributeError saying so."""


def __getattr__(name):
  if name.startswith("__"):
    raise AttributeError(name)
  raise AttributeError(
      f"module {__name__!r} has no attribute {name!r}: purejax has no XLA executables "
      "(jax.interpreters.pxla's result handlers and mesh computations do not exist here)")
