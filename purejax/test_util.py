"""Derivative checks against finite differences (JAX's ``jax.test_util``)."""
from purejax._src.test_util import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]
