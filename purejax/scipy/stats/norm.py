"""purejax.scipy.stats.norm: the normal distribution N(loc, scale^2)."""
from purejax._src.scipy.stats.norm import cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
