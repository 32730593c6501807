"""jnp.linalg: decompositions, solves, inverses and determinants, built on
lax.linalg (norms and products are in linalg_norms.py).

Signatures, result tuples and derivative rules follow JAX: det, slogdet and
pinv have JAX's custom JVPs; solve is differentiated with one factorization.
"""
import functools
import operator
from typing import NamedTuple

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.custom_jvp import custom_jvp
from purejax._src.lax import linalg as lax_linalg
from purejax._src.lax.linalg_solve import solve as _lax_solve
from purejax._src.lax.linalg_solve import take_rows
from purejax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from purejax import numpy as jnp


class EighResult(NamedTuple):
  eigenvalues: object
  eigenvectors: object


class EigResult(NamedTuple):
  eigenvalues: object
  eigenvectors: object


class QRResult(NamedTuple):
  Q: object
  R: object


class SlogdetResult(NamedTuple):
  sign: object
  logabsdet: object


class SVDResult(NamedTuple):
  U: object
  S: object
  Vh: object


def _H(x):
  return jnp.conj(jnp.matrix_transpose(x))


def _symmetrize(x):
  return (x + _H(x)) / 2


def _inexact(name, *args):
  check_arraylike(name, *args)
  return promote_dtypes_inexact(*args)


def _take_columns(x, idx):
  return jnp.swapaxes(take_rows(jnp.swapaxes(x, -1, -2), idx), -1, -2)


# -- decompositions ------------------------------------------------------------------

@functools.partial(jit, static_argnames=("upper", "symmetrize_input"))
def cholesky(a, *, upper=False, symmetrize_input=True):
  """Cholesky factor: lower L with a = L L^H, or its adjoint when ``upper``."""
  a, = _inexact("jnp.linalg.cholesky", a)
  L = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
  return jnp.conj(L.mT) if upper else L


@functools.partial(jit, static_argnames=("full_matrices", "compute_uv", "hermitian",
                                         "subset_by_index"))
def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
  """SVDResult(U, S, Vh), or S alone when not ``compute_uv``.  With
  ``hermitian`` it comes from eigh (singular values = |eigenvalues|)."""
  a, = _inexact("jnp.linalg.svd", a)
  if hermitian:
    vecs, vals = lax_linalg.eigh(a, subset_by_index=subset_by_index)
    s = lax.abs(vals)
    if not compute_uv:
      return lax.rev(lax.sort(s, dimension=-1), (s.ndim - 1,))
    sign = lax.sign(vals)
    idxs = lax.broadcasted_iota(np.int32, s.shape, s.ndim - 1)
    s, idxs, sign = lax.sort((s, idxs, sign), dimension=-1, num_keys=1)
    s, idxs, sign = (lax.rev(v, (s.ndim - 1,)) for v in (s, idxs, sign))
    u = _take_columns(vecs, idxs)
    vh = _H(u * sign[..., None, :].astype(u.dtype))
    return SVDResult(u, s, vh)
  if compute_uv:
    u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                              subset_by_index=subset_by_index)
    return SVDResult(u, s, vh)
  return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False,
                        subset_by_index=subset_by_index)


def svdvals(x, /):
  """The singular values of x, descending."""
  check_arraylike("jnp.linalg.svdvals", x)
  return svd(x, compute_uv=False, hermitian=False)


@functools.partial(jit, static_argnames=("mode",))
def qr(a, mode="reduced"):
  """QRResult(Q, R) ("reduced", "complete"), R alone ("r"), or LAPACK's
  Householder form (h, tau) ("raw")."""
  a, = _inexact("jnp.linalg.qr", a)
  if mode == "raw":
    h, taus = lax_linalg.geqrf(a)
    return QRResult(h.mT, taus)
  if mode in ("reduced", "r", "full"):
    full_matrices = False
  elif mode == "complete":
    full_matrices = True
  else:
    raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
  q, r = lax_linalg.qr(a, pivoting=False, full_matrices=full_matrices)
  return r if mode == "r" else QRResult(q, r)


@functools.partial(jit, static_argnames=("UPLO", "symmetrize_input"))
def eigh(a, UPLO=None, symmetrize_input=True):
  """EighResult(eigenvalues ascending, eigenvectors) of a Hermitian matrix."""
  check_arraylike("jnp.linalg.eigh", a)
  if UPLO is None or UPLO == "L":
    lower = True
  elif UPLO == "U":
    lower = False
  else:
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
  a, = promote_dtypes_inexact(a)
  v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
  return EighResult(w, v)


@functools.partial(jit, static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
  """Eigenvalues (ascending) of a Hermitian matrix."""
  a, = _inexact("jnp.linalg.eigvalsh", a)
  w, _ = eigh(a, UPLO, symmetrize_input=symmetrize_input)
  return w


def eig(a):
  """EigResult(eigenvalues, right eigenvectors) of a general square matrix,
  complex; computed by LAPACK geev on the host, as JAX's CPU does."""
  a, = _inexact("jnp.linalg.eig", a)
  w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
  return EigResult(w, v)


@jit
def eigvals(a):
  """Eigenvalues of a general square matrix (complex)."""
  a, = _inexact("jnp.linalg.eigvals", a)
  return lax_linalg.eig(a, compute_left_eigenvectors=False,
                        compute_right_eigenvectors=False)[0]


# -- solves and inverses ---------------------------------------------------------------

@jit
def solve(a, b):
  """x with a x = b: b of shape (..., m) (vectors) or (..., m, n); the
  leading axes broadcast."""
  a, b = _inexact("jnp.linalg.solve", a, b)
  if a.ndim < 2:
    raise ValueError(f"left hand array must be at least two dimensional; got {a.shape=}")
  if (b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]
      and a.shape[-1] != b.shape[-2]):
    raise ValueError(
        f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX v0.5.0, this "
        "would have been treated as a batched 1-dimensional solve. To recover this "
        "behavior, use solve(a, b[..., None]).squeeze(-1).")
  vector = b.ndim == 1
  signature = "(m,m),(m)->(m)" if vector else "(m,m),(m,n)->(m,n)"
  m_b = b.shape[-1] if vector else b.shape[-2]
  if a.shape[-1] != a.shape[-2] or m_b != a.shape[-1]:
    bad, m = (a.shape[-1], a.shape[-2]) if a.shape[-1] != a.shape[-2] else (m_b, a.shape[-1])
    raise ValueError(f"inconsistent size for core dimension 'm': {bad} vs {m} on "
                     f"vectorized function with excluded=frozenset() and "
                     f"signature={signature!r}")
  if vector:
    b = b[:, None]
  batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
  a = jnp.broadcast_to(a, batch + a.shape[-2:])
  b = jnp.broadcast_to(b, batch + b.shape[-2:])
  x = _lax_solve(a, b)
  return x[..., 0] if vector else x


@jit
def inv(a):
  """The inverse of a square matrix (a solve against the identity)."""
  check_arraylike("jnp.linalg.inv", a)
  arr = jnp.asarray(a)
  if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
    raise ValueError(f"Argument to inv must have shape [..., n, n], got {arr.shape}.")
  eye = lax.broadcast(jnp.eye(arr.shape[-1], dtype=arr.dtype), arr.shape[:-2])
  return solve(arr, eye)


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
  """Moore-Penrose pseudo-inverse: singular values <= rtol * largest are
  dropped (rtol defaults to 10 * max(m, n) * eps).  ``rcond`` is rtol's old
  name."""
  if rcond is not None:
    if rtol is not None:
      raise ValueError("pinv: only one of rtol and rcond may be specified.")
    rtol = rcond
  return _pinv(a, rtol, hermitian)


@functools.partial(custom_jvp, nondiff_argnums=(1, 2))
@functools.partial(jit, static_argnames=("hermitian",))
def _pinv(a, rtol=None, hermitian=False):
  a, = _inexact("jnp.linalg.pinv", a)
  m, n = a.shape[-2:]
  if m == 0 or n == 0:
    return jnp.empty(a.shape[:-2] + (n, m), a.dtype)
  arr = jnp.conj(a)
  if rtol is None:
    rtol = 10. * max(m, n) * jnp.array(jnp.finfo(arr.dtype).eps)
  rtol = jnp.asarray(rtol)
  u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
  rtol = lax.expand_dims(rtol[..., None], range(s.ndim - rtol.ndim - 1))
  cutoff = rtol * s[..., 0:1]
  s = jnp.where(s > cutoff, s, np.inf).astype(u.dtype)
  res = jnp.matmul(vh.mT, jnp.divide(u.mT, s[..., None]), precision="highest")
  return lax.convert_element_type(res, arr.dtype)


@_pinv.defjvp
def _pinv_jvp(rtol, hermitian, primals, tangents):
  # Golub & Pereyra (1973): the derivative of the pseudo-inverse.
  a, = primals
  a_dot, = tangents
  p = pinv(a, rtol=rtol, hermitian=hermitian)
  if hermitian:
    a, a_dot = _symmetrize(a), _symmetrize(a_dot)
  m, n = a.shape[-2:]
  if m >= n:
    s = (p @ _H(p)) @ _H(a_dot)
    t = (_H(a_dot) @ _H(p)) @ p
    p_dot = -(p @ a_dot) @ p + s - (s @ a) @ p + t - (p @ a) @ t
  else:
    s = p @ (_H(p) @ _H(a_dot))
    t = _H(a_dot) @ (_H(p) @ p)
    p_dot = -p @ (a_dot @ p) + s - s @ (a @ p) + t - p @ (a @ t)
  return p, p_dot


def lstsq(a, b, rcond=None, *, numpy_resid=False):
  """(x, residuals, rank, s): least squares by SVD.  Residuals are always
  computed unless ``numpy_resid`` (then NumPy's empty cases, eagerly)."""
  check_arraylike("jnp.linalg.lstsq", a, b)
  if numpy_resid:
    return _lstsq(a, b, rcond, numpy_resid=True)
  return _jit_lstsq(a, b, rcond)


def _lstsq(a, b, rcond, *, numpy_resid=False):
  a, b = promote_dtypes_inexact(a, b)
  if a.shape[0] != b.shape[0]:
    raise ValueError("Leading dimensions of input arrays must match")
  b_orig_ndim = b.ndim
  if b_orig_ndim == 1:
    b = b[:, None]
  if a.ndim != 2:
    raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
  if b.ndim != 2:
    raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or "
                    "two-dimensional")
  m, n = a.shape
  dtype = a.dtype
  if a.size == 0:
    s = jnp.empty(0, dtype=a.dtype)
    rank = jnp.array(0, dtype=int)
    x = jnp.zeros((n, *b.shape[1:]), dtype=a.dtype)
  else:
    if rcond is None:
      rcond = float(jnp.finfo(dtype).eps) * max(n, m)
    else:
      rcond = jnp.where(rcond < 0, jnp.finfo(dtype).eps, rcond)
    u, s, vt = svd(a, full_matrices=False)
    mask = (s > 0) & (s >= jnp.array(rcond, dtype=s.dtype) * s[0])
    rank = mask.sum()
    safe_s = jnp.where(mask, s, 1).astype(a.dtype)
    s_inv = jnp.where(mask, 1 / safe_s, 0)[:, None]
    uTb = jnp.matmul(jnp.conj(u).T, b, precision="highest")
    x = jnp.matmul(jnp.conj(vt).T, s_inv * uTb, precision="highest")
  if numpy_resid and (rank < n or m <= n):
    resid = jnp.asarray([])
  else:
    b_estimate = jnp.matmul(a, x, precision="highest")
    from purejax._src.numpy.linalg_norms import norm
    resid = norm(b - b_estimate, axis=0) ** 2
  if b_orig_ndim == 1:
    x = x.ravel()
  return x, resid, rank, s


_jit_lstsq = jit(functools.partial(_lstsq, numpy_resid=False))


# -- determinants -------------------------------------------------------------------------

def _slogdet_from_det(det):
  return jnp.sign(det), jnp.real(jnp.log(jnp.abs(det)))


@custom_jvp
def _slogdet_small(a):
  n = a.shape[-1]
  if n == 1:
    return _slogdet_from_det(a[..., 0, 0])
  return _slogdet_from_det(a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0])


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals, tangents):
  x, = primals
  g, = tangents
  sign, ans = _slogdet_small(x)
  if x.shape[-1] == 1:
    ans_dot = g[..., 0, 0] / x[..., 0, 0]
  else:
    x00, x01, x10, x11 = x[..., 0, 0], x[..., 0, 1], x[..., 1, 0], x[..., 1, 1]
    det = x00 * x11 - x01 * x10
    ans_dot = (g[..., 0, 0] * x11 - g[..., 0, 1] * x10
               - g[..., 1, 0] * x01 + g[..., 1, 1] * x00) / det
  return _slogdet_tangents(x, sign, ans, ans_dot)


def _slogdet_tangents(x, sign, ans, ans_dot):
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    sign_dot = (ans_dot - jnp.real(ans_dot).astype(ans_dot.dtype)) * sign
    ans_dot = jnp.real(ans_dot)
  else:
    sign_dot = jnp.zeros_like(sign)
  return (sign, ans), (sign_dot, ans_dot)


def _parity(pivots, n):
  iota = lax.expand_dims(jnp.arange(n, dtype=pivots.dtype), range(pivots.ndim - 1))
  return jnp.count_nonzero(pivots != iota, axis=-1)


@custom_jvp
def _slogdet_lu(a):
  dtype = a.dtype
  lu, pivot, _ = lax_linalg.lu(a)
  diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
  is_zero = jnp.any(diag == jnp.array(0, dtype=dtype), axis=-1)
  parity = _parity(pivot, a.shape[-1])
  if jnp.iscomplexobj(a):
    sign = jnp.prod(diag / jnp.abs(diag).astype(diag.dtype), axis=-1)
  else:
    sign = jnp.array(1, dtype=dtype)
    parity = parity + jnp.count_nonzero(diag < 0, axis=-1)
  sign = jnp.where(is_zero, jnp.array(0, dtype=dtype),
                   sign * jnp.array(-2 * (parity % 2) + 1, dtype=dtype))
  logdet = jnp.where(is_zero, jnp.array(-np.inf, dtype=dtype),
                     jnp.sum(jnp.log(jnp.abs(diag)).astype(dtype), axis=-1))
  return sign, jnp.real(logdet)


@custom_jvp
def _slogdet_qr(a):
  if dtypes.issubdtype(a.dtype, np.complexfloating):
    raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
  n = a.shape[-1]
  h, taus = lax_linalg.geqrf(a)
  diag = jnp.diagonal(h, axis1=-2, axis2=-1)
  log_abs_det = jnp.sum(jnp.log(jnp.abs(diag)), axis=-1)
  sign_diag = jnp.prod(jnp.sign(diag), axis=-1)
  # Each reflector actually applied (tau != 0) has determinant -1.
  sign_taus = jnp.prod(jnp.where(taus[..., :n - 1] != 0, -1, 1), axis=-1)
  return sign_diag * sign_taus.astype(sign_diag.dtype), log_abs_det


def _slogdet_jvp(primals, tangents):
  x, = primals
  g, = tangents
  sign, ans = slogdet(x)
  ans_dot = jnp.trace(solve(x, g), axis1=-1, axis2=-2)
  return _slogdet_tangents(x, sign, ans, ans_dot)


_slogdet_lu.defjvp(_slogdet_jvp)
_slogdet_qr.defjvp(_slogdet_jvp)


@functools.partial(jit, static_argnames=("method",))
def slogdet(a, *, method=None):
  """SlogdetResult(sign, log|det|), by LU ("lu", the default) or QR."""
  a, = _inexact("jnp.linalg.slogdet", a)
  if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
    raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {a.shape}")
  if method is None or method == "lu":
    if a.shape[-1] in (1, 2):
      return SlogdetResult(*_slogdet_small(a))
    return SlogdetResult(*_slogdet_lu(a))
  if method == "qr":
    return SlogdetResult(*_slogdet_qr(a))
  raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                   "(`None`), and 'qr'.")


def _cofactor_solve(a, b):
  """(det a, det(a) a^{-1} b), finite even for singular a of rank n - 1 (the
  adjugate), from one LU factorization; a and b are (..., m, m)."""
  m = a.shape[-1]
  if m == 1:
    return a[..., 0, 0], b
  lu, pivots, permutation = lax_linalg.lu(a)
  dtype = a.dtype
  batch = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
  x = jnp.broadcast_to(b, batch + b.shape[-2:])
  lu = jnp.broadcast_to(lu, batch + lu.shape[-2:])
  diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
  sign = jnp.asarray(-2 * (_parity(pivots, m) % 2) + 1, dtype=dtype)
  # partial_det[..., -1] is det(a); partial_det[..., -2] is det(u) / u_nn.
  partial_det = jnp.cumprod(diag, axis=-1) * sign[..., None]
  lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
  permutation = jnp.broadcast_to(permutation, batch + (m,))
  # Rank-deficient beyond n - 1: the answer is zero.
  d = jnp.ones(x.shape[:-1], x.dtype)
  d = lax_linalg.triangular_solve(lu, d, left_side=True, lower=False)
  d = jnp.any(jnp.isnan(d) | jnp.isinf(d), axis=-1)[..., None, None]
  x = jnp.where(d, jnp.zeros_like(x), x)
  x = take_rows(x, permutation)
  x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
  x = jnp.concatenate((x[..., :-1, :] * partial_det[..., -1, None, None],
                       x[..., -1:, :]), axis=-2)
  x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
  x = jnp.where(d, jnp.zeros_like(x), x)
  return partial_det[..., -1], x


@custom_jvp
def _det(a):
  sign, logdet = slogdet(a)
  return sign * jnp.exp(logdet).astype(sign.dtype)


@_det.defjvp
def _det_jvp(primals, tangents):
  x, = primals
  g, = tangents
  y, z = _cofactor_solve(x, g)
  return y, jnp.trace(z, axis1=-1, axis2=-2)


@jit
def det(a):
  """Determinant (closed forms for 2x2 and 3x3, else by LU); its derivative
  uses the adjugate, so it is right at singular matrices too."""
  a, = _inexact("jnp.linalg.det", a)
  shape = a.shape
  if len(shape) >= 2 and shape[-1] == shape[-2] == 2:
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
  if len(shape) >= 2 and shape[-1] == shape[-2] == 3:
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2]
            + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
            + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1]
            - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
            - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1]
            - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])
  if len(shape) >= 2 and shape[-1] == shape[-2]:
    return _det(a)
  raise ValueError(f"Argument to _det() must have shape [..., n, n], got {shape}")


# -- powers and ranks -----------------------------------------------------------------------

@functools.partial(jit, static_argnames=("n",))
def matrix_power(a, n):
  """a raised to the integer power n (negative: of the inverse), by squaring."""
  check_arraylike("jnp.linalg.matrix_power", a)
  arr = jnp.asarray(a)
  if arr.ndim < 2:
    raise TypeError(f"{arr.ndim}-dimensional array given. Array must be at least "
                    "two-dimensional")
  if arr.shape[-2] != arr.shape[-1]:
    raise TypeError("Last 2 dimensions of the array must be square")
  try:
    n = operator.index(n)
  except TypeError as err:
    raise TypeError(f"exponent must be an integer, got {n}") from err
  if n == 0:
    return jnp.broadcast_to(jnp.eye(arr.shape[-2], dtype=arr.dtype), arr.shape)
  if n < 0:
    arr, n = inv(arr), -n
  if n == 1:
    return arr
  if n == 2:
    return arr @ arr
  if n == 3:
    return (arr @ arr) @ arr
  z = result = None
  while n > 0:
    z = arr if z is None else z @ z
    n, bit = divmod(n, 2)
    if bit:
      result = z if result is None else result @ z
  return result


@functools.partial(jit, static_argnames=("hermitian",))
def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
  """The number of singular values above rtol * largest (rtol defaults to
  max(m, n) * eps); ``tol`` is rtol's old name."""
  check_arraylike("jnp.linalg.matrix_rank", M)
  if tol is not None:
    if rtol is not None:
      raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
    rtol = tol
  M, = promote_dtypes_inexact(M)
  if M.ndim < 2:
    return (M != 0).any().astype(np.int32)
  S = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
  if rtol is None:
    rtol = S.max(-1) * np.array(max(M.shape[-2:]), S.dtype) * jnp.finfo(S.dtype).eps
  rtol = jnp.expand_dims(rtol, np.ndim(rtol))
  return jnp.sum(S > rtol, axis=-1)
