"""purejax.scipy.stats.gennorm: the generalized normal distribution with shape ``beta``."""
from purejax._src.scipy.stats.gennorm import cdf, logpdf, pdf

__all__ = ["cdf", "logpdf", "pdf"]
