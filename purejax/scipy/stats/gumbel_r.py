"""purejax.scipy.stats.gumbel_r: the right-skewed Gumbel (extreme value) distribution."""
from purejax._src.scipy.stats.gumbel_r import cdf, logcdf, logpdf, logsf, pdf, ppf, sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
