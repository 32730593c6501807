"""purejax.nn's implementation: activations, normalizing functions,
attention and initializers."""
