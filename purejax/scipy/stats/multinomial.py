"""purejax.scipy.stats.multinomial: the multinomial distribution (counts ``x`` on the last axis)."""
from purejax._src.scipy.stats.multinomial import logpmf, pmf

__all__ = ["logpmf", "pmf"]
