"""purejax.scipy.fft: discrete cosine transforms (type 2, as in JAX)."""
from purejax._src.scipy.fft import dct, dctn, idct, idctn

__all__ = ["dct", "dctn", "idct", "idctn"]
