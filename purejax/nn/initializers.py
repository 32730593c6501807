"""purejax.nn.initializers: functions ``init(key, shape, dtype)`` that make
parameters, and the builders that return them (JAX's names)."""
from purejax._src.nn.initializers import (
    Initializer, constant, delta_orthogonal, glorot_normal, glorot_uniform, he_normal,
    he_uniform, kaiming_normal, kaiming_uniform, lecun_normal, lecun_uniform, normal,
    ones, orthogonal, truncated_normal, uniform, variance_scaling, xavier_normal,
    xavier_uniform, zeros)

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
    "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
    "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
    "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]
