"""Stand-in for ``jax._src.state``: see ``types``."""
