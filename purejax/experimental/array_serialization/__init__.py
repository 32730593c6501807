"""``jax.experimental.array_serialization``: saving Arrays with TensorStore."""
