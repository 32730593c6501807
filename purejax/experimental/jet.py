"""purejax.experimental.jet: Taylor-mode differentiation (``jet``) and its rule table."""
from purejax._src.jet import (
    JetTrace, JetTracer, ZeroSeries, ZeroTerm, fact, jet, jet2, jet_rules, zero_series,
    zero_term)
from purejax._src.jet_rules import (
    def_comp, def_deriv, deflinear, defzero, deriv_prop, linear_prop, zero_prop)

__all__ = ["JetTrace", "JetTracer", "ZeroSeries", "ZeroTerm", "def_comp", "def_deriv",
           "deflinear", "defzero", "deriv_prop", "fact", "jet", "jet2", "jet_rules",
           "linear_prop", "zero_prop", "zero_series", "zero_term"]
