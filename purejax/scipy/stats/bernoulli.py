"""purejax.scipy.stats.bernoulli: the Bernoulli distribution."""
from purejax._src.scipy.stats.bernoulli import cdf, logpmf, pmf, ppf

__all__ = ["cdf", "logpmf", "pmf", "ppf"]
