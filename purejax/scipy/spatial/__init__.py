"""purejax.scipy.spatial: rotations (``transform``)."""
from purejax.scipy.spatial import transform as transform

__all__ = ["transform"]
