"""purejax.scipy.stats.cauchy: the Cauchy distribution."""
from purejax._src.scipy.stats.cauchy import cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
