"""Stand-in for ``jax._src.xla_bridge``, read by chex's ``set_n_cpu_devices``
(``chex.set_n_cpu_devices``): it looks in ``_backends`` for a CPU backend to
tell whether the CPU device count is already fixed.  In purejax the count
from ``XLA_FLAGS`` (``--xla_force_host_platform_device_count``) is fixed
when the devices are first listed; until then ``_backends`` is empty, after
it holds one ``cpu`` entry, as in JAX once its backends are initialized."""
from purejax._src import devices as _devices


# The CPU devices' client (``Device.client``), as in JAX.
_cpu_backend = _devices.client("cpu")


def __getattr__(name):
  # Computed on each read: the device count is fixed at its first use.
  if name == "_backends":
    return {"cpu": _cpu_backend} if _devices.xla_flags_read() else {}
  raise AttributeError(f"module {__name__!r} has no attribute {name!r} (purejax's stand-in "
                       "for jax._src.xla_bridge has only _backends)")
