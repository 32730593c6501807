"""purejax.scipy.stats.wrapcauchy: the wrapped Cauchy distribution on [0, 2 pi]."""
from purejax._src.scipy.stats.wrapcauchy import logpdf, pdf

__all__ = ["logpdf", "pdf"]
