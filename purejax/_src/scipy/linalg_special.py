"""scipy.linalg's special matrices (companion, Pascal, Hilbert, DFT, ...),
qr_multiply and eigh_tridiagonal, on purejax.numpy.

Matrices that depend only on a static size are built exactly with NumPy
(integers, then cast), so their entries are the exact values rounded once.
"""
import math

import numpy as np

import purejax.numpy as jnp
from purejax._src import dtypes
from purejax._src.numpy.util import promote_args_inexact, promote_dtypes_inexact
from purejax._src.scipy.linalg import eigh, qr


def _float_dtype():
  return dtypes.canonicalize_dtype(np.float64)


def _vector(name, a):
  a = jnp.asarray(a)
  if a.ndim != 1:
    raise ValueError(f"{name}: input must be one-dimensional, got shape {a.shape}.")
  return a


def companion(a):
  a, = promote_args_inexact("companion", a)
  a = _vector("companion", a)
  n = a.shape[0]
  if n < 2:
    raise ValueError("The length of `a` must be at least 2.")
  first_row = -a[1:] / a[0]
  return jnp.concatenate([first_row[None, :], jnp.eye(n - 2, n - 1, dtype=a.dtype)], axis=0)


def fiedler_companion(a):
  a, = promote_args_inexact("fiedler_companion", a)
  a = _vector("fiedler_companion", a)
  n = a.shape[0]
  if n < 2:
    raise ValueError("The length of `a` must be at least 2.")
  if n == 2:
    return (-a[1:] / a[0])[None, :]
  c = a[1:] / a[0]
  m = n - 1
  # Even row i holds -c[i] at column i-1 (column 0 for row 0), -c[i+1] at
  # column i+1 and a one at column i+2; odd row i holds a one at column i-2 (column 0 for row 1).
  rows, cols, vals = [], [], []
  ones_r, ones_c = [], []
  for i in range(0, m, 2):
    rows.append(i), cols.append(max(i - 1, 0)), vals.append(i)
    if i + 1 < m:
      rows.append(i), cols.append(i + 1), vals.append(i + 1)
    if i + 2 < m:
      ones_r.append(i), ones_c.append(i + 2)
  for i in range(1, m, 2):
    ones_r.append(i), ones_c.append(max(i - 2, 0))
  out = jnp.zeros((m, m), a.dtype).at[np.array(rows), np.array(cols)].set(-c[np.array(vals)])
  return out.at[np.array(ones_r, int), np.array(ones_c, int)].set(1)


def fiedler(a):
  a = _vector("fiedler", jnp.asarray(a))
  return jnp.abs(a[:, None] - a[None, :])


def convolution_matrix(a, n, mode="full"):
  a = _vector("convolution_matrix", jnp.asarray(a))
  n = int(n)
  if n <= 0:
    raise ValueError("n must be a positive integer.")
  if mode not in ("full", "same", "valid"):
    raise ValueError(f"mode must be 'full', 'same' or 'valid'; got {mode!r}.")
  m = a.shape[0]
  rows = m + n - 1
  # Column j of the full matrix is `a` shifted down by j.
  i = np.arange(rows)[:, None] - np.arange(n)[None, :]
  full = jnp.where(jnp.asarray((i >= 0) & (i < m)), a[np.clip(i, 0, m - 1)], 0).astype(a.dtype)
  if mode == "full":
    return full
  if mode == "same":
    start = (min(n, m) - 1) // 2
    return full[start:start + max(m, n)]
  start = min(n, m) - 1
  return full[start:start + max(m, n) - min(m, n) + 1]


def dft(n, scale=None, *, dtype=None):
  n = int(n)
  if scale not in (None, "sqrtn", "n"):
    raise ValueError(f"scale must be None, 'sqrtn', or 'n'; {scale!r} is not valid.")
  dtype = dtypes.canonicalize_dtype(dtype or np.complex128)
  k = np.arange(n)
  m = np.exp(-2j * np.pi * (np.outer(k, k) % n) / n)   # reduced: exact phases
  if scale == "sqrtn":
    m = m / math.sqrt(n)
  elif scale == "n":
    m = m / n
  return jnp.asarray(m.astype(dtype))


def hadamard(n, dtype=int):
  n = int(n)
  if n < 1 or n & (n - 1):
    raise ValueError(f"n must be a positive power of 2; got {n}.")
  h = np.ones((1, 1), np.int64)
  while h.shape[0] < n:
    h = np.block([[h, h], [h, -h]])
  return jnp.asarray(h.astype(dtypes.canonicalize_dtype(dtype)))


def helmert(n, full=False):
  n = int(n)
  h = np.zeros((n, n))
  h[0] = 1 / math.sqrt(n)
  for i in range(1, n):
    h[i, :i] = 1 / math.sqrt(i * (i + 1))
    h[i, i] = -i / math.sqrt(i * (i + 1))
  return jnp.asarray((h if full else h[1:]).astype(_float_dtype()))


def hilbert(n):
  i = np.arange(int(n))
  return jnp.asarray((1 / (i[:, None] + i[None, :] + 1)).astype(_float_dtype()))


def invhilbert(n):
  n = int(n)
  out = np.zeros((n, n))
  for i in range(n):
    for j in range(n):
      v = ((-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
           * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2)
      out[i, j] = float(v)
  return jnp.asarray(out.astype(_float_dtype()))


def _pascal_lower(n):
  return np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], dtype=object)


def pascal(n, kind=None):
  n = int(n)
  kind = kind or "symmetric"
  if kind not in ("symmetric", "lower", "upper"):
    raise ValueError("Expected kind to be 'symmetric', 'lower', or 'upper'")
  low = _pascal_lower(n)
  m = {"lower": low, "upper": low.T, "symmetric": low.dot(low.T)}[kind]
  return jnp.asarray(m.astype(np.float64).astype(_float_dtype()))


def invpascal(n, kind=None):
  n = int(n)
  kind = kind or "symmetric"
  if kind not in ("symmetric", "lower", "upper"):
    raise ValueError("Expected kind to be 'symmetric', 'lower', or 'upper'")
  sign = np.array([[(-1) ** (i + j) for j in range(n)] for i in range(n)], dtype=object)
  inv_low = _pascal_lower(n) * sign
  m = {"lower": inv_low, "upper": inv_low.T, "symmetric": inv_low.T.dot(inv_low)}[kind]
  return jnp.asarray(m.astype(np.float64).astype(_float_dtype()))


def leslie(f, s):
  f, s = promote_args_inexact("leslie", f, s)
  f, s = _vector("leslie", f), _vector("leslie", s)
  n = f.shape[0]
  if s.shape[0] != n - 1:
    raise ValueError("Incorrect lengths for f and s. The length of s should be len(f) - 1.")
  return jnp.concatenate([f[None, :], jnp.diag(s, k=-1)[1:]], axis=0)


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
  del overwrite_a, overwrite_c
  if pivoting:
    raise NotImplementedError("qr_multiply: pivoting=True is not supported.")
  if mode not in ("left", "right"):
    raise ValueError(f"mode must be 'left' or 'right'; got {mode!r}.")
  a, c = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(c))   # no rank promotion
  q, r = qr(a, mode="economic")
  if conjugate:
    q = jnp.conj(q)
  if mode == "left":
    column = c.ndim == 1
    out = q @ (c[:, None] if column else c)
    return (out[:, 0] if column else out), r
  return c @ q, r


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):
  """Eigenvalues (ascending) of the symmetric tridiagonal matrix with diagonal
  ``d`` and off-diagonal ``e``, through the dense symmetric eigensolver."""
  del tol, key
  d, e = promote_args_inexact("eigh_tridiagonal", d, e)
  # select='v' (eigenvalues in a range: a data-dependent count) is
  # refused, as by JAX.
  if select == "v":
    raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
  if select not in ("a", "i"):
    raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
  m = jnp.diag(d) + jnp.diag(e, 1) + jnp.diag(jnp.conj(e), -1)
  w, v = eigh(m)
  if select == "i":
    lo, hi = select_range
    w, v = w[lo:hi + 1], v[:, lo:hi + 1]
  return w if eigvals_only else (w, v)
