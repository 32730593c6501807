"""purejax.scipy.stats.poisson: the Poisson distribution with mean ``mu``."""
from purejax._src.scipy.stats.poisson import cdf, entropy, logpmf, pmf

__all__ = ["cdf", "entropy", "logpmf", "pmf"]
