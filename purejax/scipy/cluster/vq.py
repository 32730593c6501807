"""purejax.scipy.cluster.vq: assigning observations to code-book entries."""
from purejax._src.scipy.cluster_vq import vq

__all__ = ["vq"]
