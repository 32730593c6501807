"""purejax.nn: JAX's neural-network functions (activations, softmax,
one_hot, dot_product_attention) and ``purejax.nn.initializers``."""
from purejax.numpy import tanh
from purejax.nn import initializers
from purejax._src.nn.activations import (
    celu, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh, identity,
    leaky_relu, log1mexp, log_sigmoid, mish, relu, relu6, selu, sigmoid, silu,
    soft_sign, softplus, sparse_plus, sparse_sigmoid, squareplus, swish)
from purejax._src.nn.functions import (
    log_softmax, logmeanexp, logsumexp, one_hot, softmax, standardize)
from purejax._src.nn.attention import (
    dot_product_attention, get_scaled_dot_general_config, scaled_dot_general,
    scaled_matmul)

__all__ = [
    "celu", "dot_product_attention", "elu", "gelu", "get_scaled_dot_general_config", "glu",
    "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity", "initializers",
    "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "mish",
    "one_hot", "relu", "relu6", "scaled_dot_general", "scaled_matmul", "selu", "sigmoid",
    "silu", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus",
    "standardize", "swish", "tanh"]
