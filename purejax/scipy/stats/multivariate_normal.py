"""purejax.scipy.stats.multivariate_normal: the multivariate normal distribution."""
from purejax._src.scipy.stats.multivariate_normal import logpdf, pdf

__all__ = ["logpdf", "pdf"]
