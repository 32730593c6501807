"""Stand-ins for the few of JAX's private modules (``jax._src.X``) that widely
used libraries import when they load; ``install_as_jax`` aliases
``jax._src.X`` to ``purejax._src.jax_private.X``. Each is minimal: it lets the
import succeed and says what purejax does instead. JAX's internals are
otherwise not imitated."""
# chex reads ``jax._src.xla_bridge`` as an attribute, without importing it;
# orbax so reads ``jax._src.distributed`` and ``jax._src.tree_util``.
from purejax._src.jax_private import xla_bridge  # noqa: E402
from purejax._src.jax_private import distributed  # noqa: E402
from purejax._src.jax_private import tree_util  # noqa: E402

__all__ = ["distributed", "tree_util", "xla_bridge"]
