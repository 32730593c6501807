"""purejax.scipy.stats.geom: the geometric distribution (number of trials to the first success)."""
from purejax._src.scipy.stats.geom import logpmf, pmf

__all__ = ["logpmf", "pmf"]
