"""purejax.scipy.stats.betabinom: the beta-binomial distribution."""
from purejax._src.scipy.stats.betabinom import logpmf, pmf

__all__ = ["logpmf", "pmf"]
