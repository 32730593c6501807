"""Mutable array references (``jax.ref``)."""
from purejax._src.refs import (AbstractRef, Ref, addupdate, freeze, get, new_ref, set,
                               swap)
from purejax._src import refs_discharge as _discharge

_discharge.install()   # jit and scan discharge refs

__all__ = ["AbstractRef", "Ref", "addupdate", "freeze", "get", "new_ref", "set", "swap"]
