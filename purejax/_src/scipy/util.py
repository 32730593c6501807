"""Small helpers shared by the purejax.scipy modules."""
import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy import util


def const(x, value):
  """A strongly typed scalar constant of ``x``'s dtype."""
  dtype = util.aval_of(x).dtype
  return lax.convert_element_type(np.array(value, dtype), dtype, False)


def dtype_of(x):
  return util.aval_of(x).dtype


def real_only(name, x):
  """SciPy functions JAX defines on reals only refuse complex inputs."""
  if dtypes.issubdtype(dtype_of(x), np.complexfloating):
    raise ValueError(f"{name} does not support complex-valued inputs.")
