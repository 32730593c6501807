"""``jax.experimental.sparse``, in part: ``BCOO`` sparse matrices (COO
format, JAX's batched-COO class) of two dimensions, without batch or dense
dimensions.

A ``BCOO`` holds ``data`` (nse,) and ``indices`` (nse, 2); it is a pytree of
the two, so it passes through ``jit``, ``grad`` and ``vmap``, and its
products are ordinary lax operations (a gather and a scatter-add).
Supported: ``BCOO((data, indices), shape=...)``, ``fromdense``,
``from_scipy_sparse``, ``todense``, ``@`` with dense arrays on either side,
``.T``/``transpose``, multiplication by a scalar, ``sum``, and the
functions ``bcoo_fromdense``, ``bcoo_todense`` and ``todense``.  Other
layouts (batch or dense dimensions, more or fewer than two sparse ones) and
the rest of JAX's sparse API (``sparsify``, ``BCSR``, sparse-sparse
products) raise NotImplementedError saying so.
"""
import numpy as np

from purejax import numpy as jnp
from purejax._src import core
from purejax._src import tree_util
from purejax._src.numpy.util import concrete_or_error


def _only_2d(shape, what):
  if len(shape) != 2:
    raise NotImplementedError(
        f"purejax's BCOO supports matrices of two sparse dimensions only, not {what} "
        f"of shape {tuple(shape)} (no batch or dense dimensions)")


@tree_util.register_pytree_node_class
class BCOO:
  """A sparse matrix in coordinate format: ``data[i]`` at ``indices[i]``
  (duplicates add up)."""

  def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
    data, indices = args
    self.data, self.indices = jnp.asarray(data), jnp.asarray(indices)
    self.shape = tuple(int(d) for d in shape)
    _only_2d(self.shape, "a BCOO")
    if self.indices.ndim != 2 or self.indices.shape[1] != 2 or self.data.ndim != 1 or \
        self.data.shape[0] != self.indices.shape[0]:
      raise NotImplementedError(
          "purejax's BCOO takes data of shape (nse,) and indices of shape (nse, 2), got "
          f"{self.data.shape} and {self.indices.shape}")
    self.indices_sorted, self.unique_indices = indices_sorted, unique_indices

  # -- pytree ---------------------------------------------------------------------------
  def tree_flatten(self):
    return (self.data, self.indices), (self.shape, self.indices_sorted, self.unique_indices)

  @classmethod
  def tree_unflatten(cls, aux, children):
    shape, indices_sorted, unique_indices = aux
    out = object.__new__(cls)
    out.data, out.indices = children
    out.shape, out.indices_sorted, out.unique_indices = shape, indices_sorted, unique_indices
    return out

  # -- attributes -----------------------------------------------------------------------
  dtype = property(lambda self: self.data.dtype)
  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: int(np.prod(self.shape)))
  nse = property(lambda self: self.indices.shape[0])
  n_batch = n_dense = 0
  n_sparse = 2

  def __repr__(self):
    return f"BCOO({core.dtype_name(self.dtype)}{list(self.shape)}, nse={self.nse})"

  # -- construction and conversion --------------------------------------------------------
  @classmethod
  def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
    """The nonzero elements of ``mat`` in row-major order (``nse`` of them:
    with ``nse`` given, padded with zeros at the out-of-bounds index
    ``mat.shape``, which products and ``todense`` drop, or cut)."""
    if n_dense or n_batch:
      raise NotImplementedError("purejax's BCOO.fromdense: no batch or dense dimensions")
    mat = jnp.asarray(mat)
    _only_2d(mat.shape, "a dense operand")
    if nse is None:
      nse = jnp.count_nonzero(mat)
      nse = int(concrete_or_error(nse, (
          "\nThe error arose for the nse argument of bcoo_fromdense. In order for\n"
          "BCOO.fromdense() to be used in traced/compiled code, you must pass a concrete\n"
          "value to the nse (number of stored elements) argument.\n")))
    rows, cols = jnp.nonzero(mat, size=nse, fill_value=mat.shape)   # padding: out of bounds
    indices = jnp.stack([rows, cols], axis=1).astype(index_dtype)
    return cls((mat[rows, cols], indices), shape=mat.shape, indices_sorted=True,
               unique_indices=True)

  @classmethod
  def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0):
    """From a scipy.sparse matrix, its stored elements in its COO order."""
    if n_dense:
      raise NotImplementedError("purejax's BCOO.from_scipy_sparse: no dense dimensions")
    mat = mat.tocoo()
    index_dtype = index_dtype or np.int32
    indices = np.column_stack([mat.row, mat.col]).astype(index_dtype)
    return cls((np.asarray(mat.data), indices), shape=mat.shape)

  def todense(self):
    """The dense matrix (duplicates added)."""
    out = jnp.zeros(self.shape, self.dtype)
    return out.at[self.indices[:, 0], self.indices[:, 1]].add(self.data)

  # -- operations -----------------------------------------------------------------------
  def transpose(self, axes=None):
    if axes is not None and tuple(axes) != (1, 0):
      raise NotImplementedError(f"purejax's BCOO.transpose: axes {axes}")
    return BCOO((self.data, self.indices[:, ::-1]), shape=self.shape[::-1])

  T = property(transpose)

  def __matmul__(self, other):
    """This matrix times a dense vector (n,) or a stack of matrices (..., n, k)."""
    if isinstance(other, BCOO):
      raise NotImplementedError("purejax's BCOO: products of two sparse matrices")
    x = jnp.asarray(other)
    rows, cols = self.indices[:, 0], self.indices[:, 1]
    dtype = jnp.result_type(self.dtype, x.dtype)
    if x.ndim == 1:
      return jnp.zeros(self.shape[0], dtype).at[rows].add(self.data * x[cols])
    picked = x[..., cols, :] * self.data[:, None]
    out = jnp.zeros(x.shape[:-2] + (self.shape[0], x.shape[-1]), dtype)
    return out.at[..., rows, :].add(picked)

  def __rmatmul__(self, other):
    """A dense vector (m,) or stack of matrices (..., k, m) times this matrix."""
    x = jnp.asarray(other)
    if x.ndim == 1:
      return self.T @ x
    return jnp.swapaxes(self.T @ jnp.swapaxes(x, -1, -2), -1, -2)

  def __mul__(self, other):
    if jnp.ndim(other) != 0:
      raise NotImplementedError("purejax's BCOO: elementwise products with arrays (only "
                                "with scalars)")
    return BCOO((self.data * other, self.indices), shape=self.shape)

  __rmul__ = __mul__

  def __neg__(self):
    return BCOO((-self.data, self.indices), shape=self.shape)

  def sum(self, axis=None):
    """The sum over ``axis`` (None: all), dense."""
    if axis is None:
      return self.data.sum()
    axis = axis % 2
    keep = self.indices[:, 1 - axis]
    return jnp.zeros(self.shape[1 - axis], self.dtype).at[keep].add(self.data)


def bcoo_fromdense(mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
  return BCOO.fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                        n_batch=n_batch)


def bcoo_todense(mat):
  return mat.todense()


def todense(arr):
  """``arr`` dense: a BCOO's matrix, any other array as it is."""
  return arr.todense() if isinstance(arr, BCOO) else jnp.asarray(arr)


__all__ = ["BCOO", "bcoo_fromdense", "bcoo_todense", "todense"]
