"""The gamma-family special functions now live in purejax.lax (special.py,
special_gamma.py); these names stay importable from here."""
from purejax._src.lax.special import (  # noqa: F401
    digamma, digamma_p, lgamma, lgamma_p, random_gamma_grad, random_gamma_grad_p)
from purejax._src.lax.special_gamma import (  # noqa: F401
    digamma_np, lgamma_np, random_gamma_grad_np)

__all__ = ["digamma", "digamma_np", "digamma_p", "lgamma", "lgamma_np", "lgamma_p",
           "random_gamma_grad", "random_gamma_grad_np", "random_gamma_grad_p"]
