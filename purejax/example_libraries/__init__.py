"""Small example libraries built on purejax's public API (as
``jax.example_libraries``): ``stax`` (neural-network layers) and
``optimizers`` (first-order optimizers on pytrees)."""
