"""purejax.scipy.interpolate: RegularGridInterpolator (linear and nearest)."""
from purejax._src.scipy.interpolate import RegularGridInterpolator

__all__ = ["RegularGridInterpolator"]
