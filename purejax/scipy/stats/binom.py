"""purejax.scipy.stats.binom: the binomial distribution."""
from purejax._src.scipy.stats.binom import logpmf, pmf

__all__ = ["logpmf", "pmf"]
