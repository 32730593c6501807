"""purejax.scipy.spatial.transform: Rotation and Slerp (as in JAX)."""
from purejax._src.scipy.spatial_transform import Rotation, Slerp

__all__ = ["Rotation", "Slerp"]
