"""purejax.random: JAX's explicit, splittable PRNG (threefry2x32).

``key = random.key(0)`` (or the raw ``random.PRNGKey(0)``), then
``k1, k2 = random.split(key)`` and ``random.normal(k1, (3,))``: the same key
and call give the same bits as JAX, in both ``jax_threefry_partitionable``
modes.
"""
from purejax._src.random.prng import (
    PRNGKey, bits, clone, fold_in, key, key_data, key_dtype, key_impl, split,
    wrap_key_data)
from purejax._src.random.basic import bernoulli, normal, randint, uniform
from purejax._src.random.distributions import (
    ball, cauchy, double_sided_maxwell, exponential, geometric, gumbel, laplace,
    logistic, lognormal, maxwell, multivariate_normal, orthogonal, pareto, rademacher,
    rayleigh, triangular, truncated_normal, weibull_min)
from purejax._src.random.sampling import categorical, choice, permutation, shuffle
from purejax._src.random.gamma import gamma, loggamma, random_gamma_p
from purejax._src.random.gamma_derived import (
    beta, chisquare, dirichlet, f, generalized_normal, t, wald)
from purejax._src.random.poisson import binomial, multinomial, poisson
