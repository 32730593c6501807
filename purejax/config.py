"""``from jax.config import config`` (old style) keeps working."""
from purejax._src.config import config
