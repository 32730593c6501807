"""scipy.cluster.vq.vq: the nearest code-book entry of each observation."""
import purejax.numpy as jnp
from purejax._src.numpy.util import check_arraylike, promote_dtypes_inexact


def vq(obs, code_book, check_finite=True):
  """(index of the nearest code, Euclidean distance to it) for each row of obs.

  ``check_finite`` is accepted for SciPy's signature; traced values cannot be
  checked.
  """
  del check_finite
  check_arraylike("scipy.cluster.vq.vq", obs, code_book)
  obs, code_book = promote_dtypes_inexact(obs, code_book)
  if obs.ndim != code_book.ndim:
    raise ValueError("Observation and code_book should have the same rank")
  if obs.ndim == 1:
    obs, code_book = obs[:, None], code_book[:, None]
  if obs.ndim != 2:
    raise ValueError("ndim different than 1 or 2 are not supported")
  if obs.shape[1] != code_book.shape[1]:
    raise ValueError(f"obs and code_book have {obs.shape[1]} and {code_book.shape[1]} "
                     "features; they must have the same number")
  distances = jnp.sqrt(jnp.sum((obs[:, None, :] - code_book[None, :, :]) ** 2, axis=-1))
  code = jnp.argmin(distances, axis=1)
  return code, jnp.min(distances, axis=1)
