"""purejax.scipy.stats.gumbel_l: the left-skewed Gumbel (extreme value) distribution."""
from purejax._src.scipy.stats.gumbel_l import cdf, logcdf, logpdf, logsf, pdf, ppf, sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
