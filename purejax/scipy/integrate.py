"""purejax.scipy.integrate: the trapezoidal rule."""
from purejax._src.numpy.calculus import trapezoid

__all__ = ["trapezoid"]
