"""``jax.experimental.colocated_python`` (see purejax/_src/colocated_python.py)."""
from purejax._src.colocated_python import (colocated_cpu_devices, colocated_python,
                                           colocated_python_class)

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class"]
