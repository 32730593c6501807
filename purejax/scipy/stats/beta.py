"""purejax.scipy.stats.beta: the beta distribution on [loc, loc + scale]."""
from purejax._src.scipy.stats.beta import cdf, logcdf, logpdf, logsf, pdf, sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
