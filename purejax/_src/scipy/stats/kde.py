"""scipy.stats.gaussian_kde: a weighted Gaussian kernel density estimate,
a pytree of its arrays (the bandwidth is fixed when it is built, as in JAX).

The kernel covariance is the data's weighted covariance times factor**2,
with Scott's or Silverman's factor from the effective sample size.
"""
import dataclasses

import numpy as np

import purejax.numpy as jnp
from purejax import random
from purejax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from purejax._src.scipy.logsumexp import logsumexp
from purejax._src.scipy.special_ndtr import ndtr
from purejax._src.tree_util import register_pytree_node


def _bandwidth_factor(bw_method, neff, d, kde):
  if bw_method is None or bw_method == "scott":
    return jnp.power(neff, -1.0 / (d + 4))
  if bw_method == "silverman":
    return jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
  if isinstance(bw_method, str):
    raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
  if callable(bw_method):
    return bw_method(kde)
  return jnp.asarray(bw_method)


def _gaussian_sum(differences, covariance, weights):
  """sum_i weights[i] * N(differences[:, i, j]; 0, covariance) for each j."""
  d = covariance.shape[0]
  chol = jnp.linalg.cholesky(covariance)
  whitened = jnp.linalg.solve(chol, differences.reshape(d, -1)).reshape(differences.shape)
  energy = jnp.sum(whitened * whitened, axis=0) / 2
  log_norm = jnp.sum(jnp.log(jnp.diag(chol))) + d * np.log(2 * np.pi) / 2
  return jnp.sum(weights[:, None] * jnp.exp(-energy - log_norm), axis=0)


@dataclasses.dataclass(frozen=True)
class gaussian_kde:
  """Kernel density estimate of ``dataset`` (shape (d, n), or (n,) for d = 1)."""
  neff: object
  dataset: object
  weights: object
  covariance: object
  inv_cov: object

  def __init__(self, dataset, bw_method=None, weights=None):
    check_arraylike("gaussian_kde", dataset)
    dataset = jnp.atleast_2d(dataset)
    if jnp.issubdtype(dataset.dtype, jnp.complexfloating):
      raise NotImplementedError("gaussian_kde does not support complex data")
    if not dataset.size > 1:
      raise ValueError("`dataset` input should have multiple elements.")
    d, n = dataset.shape
    if weights is not None:
      dataset, weights = promote_dtypes_inexact(dataset, weights)
      weights = jnp.atleast_1d(weights)
      weights = weights / jnp.sum(weights)
      if weights.ndim != 1:
        raise ValueError("`weights` input should be one-dimensional.")
      if weights.shape[0] != n:
        raise ValueError("`weights` input should be of length n")
    else:
      dataset, = promote_dtypes_inexact(dataset)
      weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
    neff = 1 / jnp.sum(weights ** 2)
    object.__setattr__(self, "neff", neff)
    object.__setattr__(self, "dataset", dataset)
    object.__setattr__(self, "weights", weights)
    factor = _bandwidth_factor(bw_method, neff, d, self)
    centered = dataset - jnp.sum(dataset * weights, axis=1, keepdims=True)
    data_covariance = (centered * weights) @ centered.T / (1 - jnp.sum(weights ** 2))
    covariance = data_covariance * factor ** 2
    object.__setattr__(self, "covariance", covariance)
    object.__setattr__(self, "inv_cov", jnp.linalg.inv(covariance))

  @property
  def d(self):
    return self.dataset.shape[0]

  @property
  def n(self):
    return self.dataset.shape[1]

  def _points(self, points):
    points = jnp.atleast_2d(promote_dtypes_inexact(points)[0])
    if points.shape[0] != self.d:
      if points.shape == (1, self.d):
        return points.T
      raise ValueError(f"points have dimension {points.shape[0]}, dataset has dimension "
                       f"{self.d}")
    return points

  def evaluate(self, points):
    """The estimated density at points (shape (d, m))."""
    points = self._points(points)
    differences = self.dataset[:, :, None] - points[:, None, :]
    return _gaussian_sum(differences, self.covariance, self.weights)

  __call__ = evaluate
  pdf = evaluate

  def logpdf(self, x):
    """The log of the estimated density at x (shape (d, m)), computed stably."""
    points = self._points(x)
    differences = self.dataset[:, :, None] - points[:, None, :]
    chol = jnp.linalg.cholesky(self.covariance)
    whitened = jnp.linalg.solve(chol, differences.reshape(self.d, -1)).reshape(
        differences.shape)
    energy = jnp.sum(whitened * whitened, axis=0) / 2
    log_norm = jnp.sum(jnp.log(jnp.diag(chol))) + self.d * np.log(2 * np.pi) / 2
    return logsumexp(-energy, axis=0, b=self.weights[:, None]) - log_norm

  def integrate_gaussian(self, mean, cov):
    """The integral of the estimate times the Gaussian N(mean, cov)."""
    mean = jnp.atleast_1d(jnp.squeeze(jnp.asarray(mean)))
    cov = jnp.atleast_2d(jnp.asarray(cov))
    if mean.shape != (self.d,):
      raise ValueError(f"mean does not have dimension {self.d}")
    if cov.shape != (self.d, self.d):
      raise ValueError(f"covariance does not have dimension {self.d}")
    differences = (self.dataset - mean[:, None])[:, :, None]
    return _gaussian_sum(differences, self.covariance + cov, self.weights)[0]

  def integrate_box_1d(self, low, high):
    """The probability mass of a 1-d estimate in [low, high]."""
    if self.d != 1:
      raise ValueError("integrate_box_1d() only handles 1D pdfs")
    sigma = jnp.sqrt(self.covariance[0, 0])
    low = (low - self.dataset[0]) / sigma
    high = (high - self.dataset[0]) / sigma
    return jnp.sum(self.weights * (ndtr(high) - ndtr(low)))

  def integrate_kde(self, other):
    """The integral of the product of two estimates of the same dimension."""
    if other.d != self.d:
      raise ValueError("KDEs are not the same dimensionality")
    differences = self.dataset[:, :, None] - other.dataset[:, None, :]
    per_point = _gaussian_sum(differences, self.covariance + other.covariance,
                              self.weights)
    return jnp.sum(per_point * other.weights)

  def resample(self, key, shape=()):
    """Draws shape samples (returned with shape (d,) + shape): a data point
    chosen by weight plus kernel noise."""
    choice_key, noise_key = random.split(key, 2)
    index = random.choice(choice_key, self.n, shape=shape, p=self.weights)
    noise = random.multivariate_normal(noise_key, jnp.zeros(self.d, self.covariance.dtype),
                                       self.covariance, shape=shape)
    return self.dataset[:, index] + jnp.moveaxis(noise, -1, 0)

  def integrate_box(self, low_bounds, high_bounds, maxpts=None):
    """Not provided, as in JAX (use integrate_box_1d)."""
    raise NotImplementedError(
        "only 1D box integrations are supported; use `integrate_box_1d`")

  def set_bandwidth(self, bw_method=None):
    """Not provided: the bandwidth is fixed when the estimate is built."""
    raise NotImplementedError(
        "dynamically changing the bandwidth method is not supported")

  def tree_flatten(self):
    return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

  @classmethod
  def tree_unflatten(cls, aux, children):
    kde = object.__new__(cls)
    for field, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"), children):
      object.__setattr__(kde, field, value)
    return kde


register_pytree_node(gaussian_kde, gaussian_kde.tree_flatten, gaussian_kde.tree_unflatten)
