"""purejax: JAX, written in Python."""
