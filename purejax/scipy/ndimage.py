"""purejax.scipy.ndimage: map_coordinates (orders 0 and 1, as in JAX)."""
from purejax._src.scipy.ndimage import map_coordinates

__all__ = ["map_coordinates"]
