"""purejax.scipy.stats.nbinom: the negative binomial distribution."""
from purejax._src.scipy.stats.nbinom import logpmf, pmf

__all__ = ["logpmf", "pmf"]
