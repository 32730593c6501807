"""Stand-in for ``jax._src.compiler``, imported by chex
(``chex.restrict_backends``). purejax does not compile through XLA backends, so
it has neither ``backend_compile`` nor ``backend_compile_and_load``: chex then
patches nothing and ``restrict_backends`` forbids nothing."""
