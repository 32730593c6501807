"""``jax.ad_checkpoint``: checkpoint (remat) and its saving policies."""
from purejax._src.remat import checkpoint, checkpoint_policies, remat
