"""purejax.scipy.stats.gamma: the gamma distribution with shape ``a``."""
from purejax._src.scipy.stats.gamma import cdf, logcdf, logpdf, logsf, pdf, sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
