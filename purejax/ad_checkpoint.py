"""``jax.ad_checkpoint``: checkpoint (remat), its saving policies, named
values and a report of what a derivative saves."""
from purejax._src.checkpoint_names import Offloadable, Recompute, Saveable, checkpoint_name
from purejax._src.remat import checkpoint, checkpoint_policies, remat
from purejax._src.saved_residuals import print_saved_residuals, saved_residuals
