"""purejax.scipy.stats.uniform: the uniform distribution on [loc, loc + scale]."""
from purejax._src.scipy.stats.uniform import cdf, logpdf, pdf, ppf

__all__ = ["cdf", "logpdf", "pdf", "ppf"]
