"""``jax.debug.visualize_sharding`` / ``visualize_array_sharding``: JAX
draws the device grid with the ``rich`` package and refuses without it.

purejax raises JAX's error when ``rich`` is missing; with ``rich`` present
the drawing is not implemented yet (it could not be checked against JAX
here), and says so rather than printing something different."""
import importlib.util


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9,
                       max_width=80, color_map=None):
  """Draws how ``sharding`` splits an array of ``shape`` over devices."""
  if importlib.util.find_spec("rich") is None:
    raise ValueError("`visualize_sharding` requires `rich` to be installed.")
  raise NotImplementedError("purejax cannot draw visualize_sharding yet; print "
                            "x.sharding or jax.typeof(x) instead")


def visualize_array_sharding(arr, **kwargs):
  """``visualize_sharding`` of the array ``arr``'s shape and sharding."""
  return visualize_sharding(arr.shape, arr.sharding, **kwargs)
