"""purejax.experimental.ode: ``odeint`` (Dormand-Prince with adjoint gradients)."""
from purejax._src.ode import odeint

__all__ = ["odeint"]
