"""purejax.scipy.stats.truncnorm: the truncated normal distribution."""
from purejax._src.scipy.stats.truncnorm import cdf, logcdf, logpdf, logsf, pdf, sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
