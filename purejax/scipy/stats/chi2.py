"""purejax.scipy.stats.chi2: the chi-squared distribution with ``df`` degrees of freedom."""
from purejax._src.scipy.stats.chi2 import cdf, logcdf, logpdf, logsf, pdf, sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
