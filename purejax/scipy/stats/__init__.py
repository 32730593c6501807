"""purejax.scipy.stats: probability distributions (SciPy's API, as in JAX).

Each distribution is a module of functions (``norm.logpdf(x, loc, scale)``),
not a SciPy frozen-distribution object; ``gaussian_kde``, ``mode``,
``rankdata`` and ``sem`` are as in SciPy.
"""
from purejax._src.scipy.stats.core import mode, rankdata, sem
from purejax._src.scipy.stats.kde import gaussian_kde
from purejax.scipy.stats import bernoulli as bernoulli
from purejax.scipy.stats import beta as beta
from purejax.scipy.stats import betabinom as betabinom
from purejax.scipy.stats import binom as binom
from purejax.scipy.stats import cauchy as cauchy
from purejax.scipy.stats import chi2 as chi2
from purejax.scipy.stats import dirichlet as dirichlet
from purejax.scipy.stats import expon as expon
from purejax.scipy.stats import gamma as gamma
from purejax.scipy.stats import gennorm as gennorm
from purejax.scipy.stats import geom as geom
from purejax.scipy.stats import gumbel_l as gumbel_l
from purejax.scipy.stats import gumbel_r as gumbel_r
from purejax.scipy.stats import laplace as laplace
from purejax.scipy.stats import logistic as logistic
from purejax.scipy.stats import multinomial as multinomial
from purejax.scipy.stats import multivariate_normal as multivariate_normal
from purejax.scipy.stats import nbinom as nbinom
from purejax.scipy.stats import norm as norm
from purejax.scipy.stats import pareto as pareto
from purejax.scipy.stats import poisson as poisson
from purejax.scipy.stats import t as t
from purejax.scipy.stats import truncnorm as truncnorm
from purejax.scipy.stats import uniform as uniform
from purejax.scipy.stats import vonmises as vonmises
from purejax.scipy.stats import wrapcauchy as wrapcauchy

__all__ = [
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
    "gamma", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
    "logistic", "mode", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto",
    "poisson", "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]
