"""``jax.extend.source_info_util``: where traced equations come from.
``register_exclusion(path)`` makes frames under ``path`` count as library
code (as purejax's own), so that source locations name the user's line."""
from purejax._src.jaxpr import SourceInfo  # noqa: F401
from purejax._src.source_info import current_source_info as current  # noqa: F401
from purejax._src.source_info import register_exclusion  # noqa: F401
