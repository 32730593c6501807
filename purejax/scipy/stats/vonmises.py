"""purejax.scipy.stats.vonmises: the von Mises distribution on the circle."""
from purejax._src.scipy.stats.vonmises import logpdf, pdf

__all__ = ["logpdf", "pdf"]
