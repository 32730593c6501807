"""purejax.scipy.stats.pareto: the Pareto distribution with shape ``b``."""
from purejax._src.scipy.stats.pareto import cdf, logcdf, logpdf, logsf, pdf, ppf, sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
