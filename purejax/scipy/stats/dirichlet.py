"""purejax.scipy.stats.dirichlet: the Dirichlet distribution."""
from purejax._src.scipy.stats.dirichlet import logpdf, pdf

__all__ = ["logpdf", "pdf"]
