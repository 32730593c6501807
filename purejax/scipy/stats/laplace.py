"""purejax.scipy.stats.laplace: the Laplace (double exponential) distribution."""
from purejax._src.scipy.stats.laplace import cdf, logpdf, pdf

__all__ = ["cdf", "logpdf", "pdf"]
