"""purejax.scipy.cluster: vector quantization (``vq``)."""
from purejax.scipy.cluster import vq as vq

__all__ = ["vq"]
