"""purejax.scipy.stats.t: student's t distribution."""
from purejax._src.scipy.stats.t import logpdf, pdf

__all__ = ["logpdf", "pdf"]
