"""purejax.scipy.optimize: ``minimize`` with methods "BFGS" and
"l-bfgs-experimental-do-not-rely-on-this", and ``OptimizeResults`` (JAX's
public names).  Line search and iteration counts follow Nocedal and Wright
and may differ from JAX's and SciPy's in the counts."""
from purejax._src.scipy.optimize_minimize import OptimizeResults, minimize

__all__ = ["OptimizeResults", "minimize"]
