"""purejax.scipy.stats.expon: the exponential distribution with rate 1/scale, shifted by loc."""
from purejax._src.scipy.stats.expon import cdf, logcdf, logpdf, logsf, pdf, ppf, sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
