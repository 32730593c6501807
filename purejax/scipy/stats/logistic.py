"""purejax.scipy.stats.logistic: the logistic distribution."""
from purejax._src.scipy.stats.logistic import cdf, isf, logpdf, pdf, ppf, sf

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]
