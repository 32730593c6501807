"""Linear solves: triangular_solve, lu (with lu_pivots_to_permutation),
tridiagonal_solve, and the LU-based solve that jnp.linalg builds on.

They run on LAPACK (lax/lapack.py: trsm, getrf, gtsv), as JAX's CPU does
(a GPU's arrays: cuBLAS and cuSOLVER; tridiagonal_solve a kernel running gtsv);
tridiagonal_solve with ``perturb_singular`` runs the Thomas algorithm
instead, vectorized over the leading batch axes.  Singular systems give
infs/NaNs, never errors, as in JAX.
"""
import functools

import numpy as np

from purejax._src import core
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.interpreters.batching import not_mapped
from purejax._src.lax import lapack, linalg_util
from purejax._src.lax.families import check_dtype, int_dtypes, standard_primitive
from purejax._src.lax.linalg_util import (
    T, check_inexact, check_square, compute_dtype, front_batch_rule, jnp, lapack_of, lax, mm,
    split_batch, tril, triu)


def _errstate():
  return np.errstate(divide="ignore", invalid="ignore", over="ignore")


# -- triangular_solve -------------------------------------------------------------

def _triangular_solve_abstract_eval(a, b, *, left_side, lower, transpose_a,
                                    conjugate_a, unit_diagonal):
  name = "triangular_solve"
  check_inexact(name, a, b)
  split_batch(name, [a, b], [2, 2])
  a_core, b_core = a.shape[-2:], b.shape[-2:]
  batch_a, batch_b = a.shape[:-2], b.shape[:-2]
  if a_core[0] != a_core[1]:
    raise ValueError("The first input to triangular_solve must be a square matrix. "
                     f"Got shape {a_core}.")
  if a_core[-1] != b_core[-2 if left_side else -1]:
    raise ValueError(f"Incompatible shapes for arguments to triangular_solve: {a_core} "
                     f"and {b_core}.")
  if batch_a != batch_b:
    raise ValueError(f"triangular_solve requires equal batch shapes, got {batch_a} "
                     f"and {batch_b}.")
  return core.ShapedArray(b.shape, b.dtype)


def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
  return lapack_of(a, b).trsm(a, b, left_side=left_side, lower=lower,
                              transpose_a=transpose_a, conjugate_a=conjugate_a,
                              unit_diagonal=unit_diagonal)


# impl_on_gpu_arrays (here and for lu, lu_pivots_to_permutation): a GPU's
# arrays are solved there (cuBLAS, cuSOLVER; linalg_util.lapack_of)
triangular_solve_p = standard_primitive(
    "triangular_solve", _triangular_solve_abstract_eval, _triangular_solve_impl,
    impl_on_gpu_arrays=True)
triangular_solve_p.c_code = None
triangular_solve_p.library_call = "BLAS trsm"


def _triangular_solve_jvp(primals, tangents, **params):
  a, b = primals
  ga, gb = tangents
  ans = triangular_solve_p.bind(a, b, **params)
  out = ad.Zero.from_primal_value(ans)
  if type(gb) is not ad.Zero:
    out = ad.add_tangents(out, triangular_solve_p.bind(a, gb, **params))
  if type(ga) is not ad.Zero:
    out = ad.add_tangents(out, _triangular_solve_jvp_a(ga, ans, a, **params))
  return ans, out


def _triangular_solve_jvp_a(ga, ans, a, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
  # d(op(A)^{-1} B) = -op(A)^{-1} op(dA) X, on the triangle the solve reads.
  k = 1 if unit_diagonal else 0
  ga = tril(ga, -k) if lower else triu(ga, k)
  ga = -ga
  ga = T(ga) if transpose_a else ga
  ga = jnp().conj(ga) if conjugate_a else ga
  params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
  inverse = lambda rhs: triangular_solve_p.bind(a, rhs, **params)
  m, n = core.get_aval(ans).shape[-2:]
  # Whichever order costs less: a solve costs about a matrix product.
  if left_side:
    return inverse(mm(ga, ans)) if m > n else mm(inverse(ga), ans)
  return inverse(mm(ans, ga)) if m < n else mm(ans, inverse(ga))


def _triangular_solve_transpose(ct, a, b, *, left_side, lower, transpose_a,
                                conjugate_a, unit_diagonal):
  # Linear in b only (like div in its numerator).
  if ad.is_undefined_primal(a):
    raise ValueError("triangular_solve is not linear in its first argument")
  if type(ct) is ad.Zero:
    return [None, ad.Zero(b.aval)]
  ct_b = triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                 transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                 unit_diagonal=unit_diagonal)
  return [None, ct_b]


def _triangular_solve_batch(axis_size, vals, dims, **params):
  (a, b), (da, db) = vals, dims
  if da is not_mapped:
    # One matrix for all: fold the batch axis into b's free axis.
    left_side = params["left_side"]
    b = batching.moveaxis(b, db, core.get_aval(b).ndim - (1 if left_side else 2))
    shape = core.get_aval(b).shape
    if left_side:
      flat = lax().reshape(b, shape[:-2] + (shape[-2] * shape[-1],))
      out_dim = len(shape) - 1
    else:
      flat = lax().reshape(b, shape[:-3] + (shape[-3] * shape[-2], shape[-1]))
      out_dim = len(shape) - 2
    out = triangular_solve_p.bind(a, flat, **params)
    return lax().reshape(out, shape), out_dim
  a = batching.bdim_at_front(a, da, axis_size)
  b = batching.bdim_at_front(b, db, axis_size)
  return triangular_solve_p.bind(a, b, **params), 0


triangular_solve_p.jvp = _triangular_solve_jvp
triangular_solve_p.transpose = _triangular_solve_transpose
triangular_solve_p.batch = _triangular_solve_batch


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
  """Solves op(a) x = b (left_side) or x op(a) = b, op(a) being the
  ``lower`` (else upper) triangle of a, maybe transposed and/or conjugated.
  A b with one axis fewer than a is a batch of vectors."""
  a, b = jnp().asarray(a), jnp().asarray(b)
  conjugate_a = bool(conjugate_a) and linalg_util.is_complex(a.dtype)
  singleton = b.ndim == a.ndim - 1
  if singleton:
    b = lax().expand_dims(b, (-1 if left_side else -2,))
  out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                transpose_a=bool(transpose_a), conjugate_a=conjugate_a,
                                unit_diagonal=bool(unit_diagonal))
  if singleton:
    out = out[..., 0] if left_side else out[..., 0, :]
  return out


# -- lu -----------------------------------------------------------------------------

def _lu_abstract_eval(x):
  _check_one("lu", x)
  batch, ((m, n),) = split_batch("lu", [x], [2])
  k = min(m, n)
  return [core.ShapedArray(x.shape, x.dtype),
          core.ShapedArray(batch + (k,), np.int32),
          core.ShapedArray(batch + (m,), np.int32)]


def _check_one(name, x):
  check_dtype(name, x.dtype, ("floating", "complexfloating"), position=0)


def _lu_impl(x):
  return list(lapack_of(x).getrf(x))


lu_p = standard_primitive("lu", _lu_abstract_eval, _lu_impl, multiple_results=True,
                          impl_on_gpu_arrays=True)
lu_p.library_call = "LAPACK getrf"
lu_p.c_code = None
lu_p.batch = front_batch_rule(lu_p)


def take_rows(x, idx):
  """x[..., idx[...], :] row by row, idx with x's batch axes (a gather)."""
  from purejax._src.vmap import vmap
  fn = lambda x, i: x[i]
  for _ in range(core.get_aval(idx).ndim - 1):
    fn = vmap(fn)
  return fn(x, idx)


def _lu_jvp(primals, tangents):
  (a,), (a_dot,) = primals, tangents
  lu, pivots, perm = lu_p.bind(a)
  zeros = [ad.Zero.from_primal_value(pivots), ad.Zero.from_primal_value(perm)]
  if type(a_dot) is ad.Zero:
    return [lu, pivots, perm], [a_dot] + zeros
  # L'U + LU' = P dA  =>  L' = L tril(X, -1), U' = triu(X) U, X = L^{-1} P dA U^{-1}
  *batch, m, n = core.get_aval(a).shape
  k = min(m, n)
  dtype = core.get_aval(a).dtype
  l = _pad_to(tril(lu[..., :, :k], -1), (m, m)) + np.eye(m, dtype=dtype)
  u_eye = np.zeros((n, n), dtype)
  u_eye[k:, k:] = np.eye(n - k, dtype=dtype)
  u = _pad_to(triu(lu[..., :k, :]), (n, n)) + u_eye
  la = triangular_solve(l, take_rows(a_dot, perm), left_side=True, lower=True,
                        unit_diagonal=True)
  lau = triangular_solve(u, la, left_side=False, lower=False)
  lu_dot = mm(l, tril(lau, -1)) + mm(triu(lau), u)
  return [lu, pivots, perm], [lu_dot] + zeros


def _pad_to(x, shape):
  """Pads the last two axes of x with zeros at the end, up to ``shape``."""
  aval = core.get_aval(x)
  config = [(0, 0, 0)] * (aval.ndim - 2)
  config += [(0, shape[0] - aval.shape[-2], 0), (0, shape[1] - aval.shape[-1], 0)]
  return lax().pad(x, np.zeros((), aval.dtype), config)


lu_p.jvp = _lu_jvp


def lu(x):
  """LU decomposition with partial pivoting: (lu, pivots, permutation) with
  P x = L U, L unit lower (below lu's diagonal) and U upper."""
  lu_, pivots, perm = lu_p.bind(jnp().asarray(x))
  return lu_, pivots, perm


# -- lu_pivots_to_permutation ---------------------------------------------------------

def _pivots_abstract_eval(pivots, *, permutation_size):
  if pivots.dtype != np.int32:
    check_dtype("lu_pivots_to_permutation", pivots.dtype, int_dtypes, position=0)
    raise TypeError("lu_pivots_to_permutation does not accept dtype "
                    f"{core.dtype_name(pivots.dtype)} at position 0. Accepted dtypes at "
                    "position 0 are subtypes of int32.")
  batch, ((k,),) = split_batch("lu_pivots_to_permutation", [pivots], [1])
  if not permutation_size >= k:
    raise ValueError(f"Output permutation size {permutation_size} has to exceed the "
                     f"trailing dimension of the pivots. Got pivots size {k}")
  return core.ShapedArray(batch + (permutation_size,), np.int32)


def _pivots_impl(pivots, *, permutation_size):
  routines = lapack_of(pivots)
  if routines is lapack:
    pivots = np.asarray(pivots, np.int32)
  return routines.permutation_from_pivots(pivots, permutation_size)


lu_pivots_to_permutation_p = standard_primitive(
    "lu_pivots_to_permutation", _pivots_abstract_eval, _pivots_impl,
    impl_on_gpu_arrays=True)
lu_pivots_to_permutation_p.c_code = None
lu_pivots_to_permutation_p.batch = front_batch_rule(lu_pivots_to_permutation_p)
ad.defjvp_zero(lu_pivots_to_permutation_p)


def lu_pivots_to_permutation(pivots, permutation_size):
  """The permutation (int32, size ``permutation_size``) made by LU's row swaps."""
  return lu_pivots_to_permutation_p.bind(jnp().asarray(pivots),
                                         permutation_size=int(permutation_size))


# -- solves with an LU factorization --------------------------------------------------

def lu_solve(lu_, perm, b, trans=0):
  """Solves a x = b (trans 0), a^T x = b (1) or a^H x = b (2) from a's LU
  factors; lu, perm and b (..., m, k) share their batch axes."""
  if trans == 0:
    x = take_rows(b, perm)
    x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, x, left_side=True, lower=False)
  if trans not in (1, 2):
    raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
  conj = trans == 2
  x = triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True,
                       conjugate_a=conj)
  x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True,
                       transpose_a=True, conjugate_a=conj)
  return take_rows(x, jnp().argsort(perm, axis=-1))


@functools.cache
def _solve_matrix():
  """The custom-JVP solve (built on first use: custom_jvp sits above lax)."""
  from purejax._src.custom_jvp import custom_jvp

  @custom_jvp
  def solve(a, b):
    lu_, _, perm = lu(a)
    return lu_solve(lu_, perm, b)

  @solve.defjvp
  def solve_jvp(primals, tangents):
    # x = A^{-1} b  =>  dx = A^{-1} (db - dA x), reusing one factorization.
    a, b = primals
    da, db = tangents
    lu_, _, perm = lu(a)
    x = lu_solve(lu_, perm, b)
    return x, lu_solve(lu_, perm, db - mm(da, x))

  return solve


def solve(a, b):
  """x with a x = b; a (..., m, m), b (..., m, k) with a's batch shape.
  Differentiated as JAX's custom_linear_solve: one factorization."""
  check_square("solve", core.get_aval(a).shape[-2:])
  return _solve_matrix()(a, b)


# -- tridiagonal_solve ----------------------------------------------------------------

def _tridiagonal_abstract_eval(dl, d, du, b, *, perturb_singular):
  name = "tridiagonal_solve"
  check_inexact(name, dl, d, du, b)
  split_batch(name, [dl, d, du, b], [1, 1, 1, 2])
  if dl.shape != d.shape or dl.shape != du.shape:
    raise TypeError("tridiagonal_solve requires that all diagonal arguments have the "
                    "same shape.")
  if dl.shape != b.shape[:-1]:
    raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of "
                    "b equal the dimensions of the diagonal arguments.")
  return core.ShapedArray(b.shape, b.dtype)


def _tridiagonal_impl(dl, d, du, b, *, perturb_singular):
  # LAPACK's gtsv (partial pivoting; NaNs where singular) as JAX's CPU; with
  # perturb_singular the Thomas algorithm, which nudges tiny pivots.
  if not perturb_singular:
    return lapack.gtsv(dl, d, du, b)
  dtype = b.dtype
  work = compute_dtype(dtype)
  dl, d, du, b = (v.astype(work) for v in (dl, d, du, b))
  m = d.shape[-1]
  x = np.zeros_like(b)
  if m == 0:
    return x.astype(dtype)
  scale = np.max(np.abs(np.stack([dl, d, du])), axis=(0, -1))
  eps = np.finfo(work).eps

  def pivot(v):
    tiny = eps * scale
    sign = np.where(v.real < 0, -1, 1).astype(work)
    return np.where(np.abs(v) < tiny, sign * np.maximum(tiny, np.finfo(work).tiny), v)

  cp = np.zeros_like(d)
  dp = np.zeros_like(b)
  with _errstate():
    denom = pivot(d[..., 0])
    cp[..., 0] = du[..., 0] / denom
    dp[..., 0, :] = b[..., 0, :] / denom[..., None]
    for i in range(1, m):
      denom = pivot(d[..., i] - dl[..., i] * cp[..., i - 1])
      cp[..., i] = du[..., i] / denom
      dp[..., i, :] = (b[..., i, :] - dl[..., i, None] * dp[..., i - 1, :]) / denom[..., None]
    x[..., m - 1, :] = dp[..., m - 1, :]
    for i in range(m - 2, -1, -1):
      x[..., i, :] = dp[..., i, :] - cp[..., i, None] * x[..., i + 1, :]
  return x.astype(dtype)


tridiagonal_solve_p = standard_primitive(
    "tridiagonal_solve", _tridiagonal_abstract_eval, _tridiagonal_impl)
tridiagonal_solve_p.c_code = None
tridiagonal_solve_p.library_call = "LAPACK gtsv"


def _tridiagonal_product(dl, d, du, b):
  """A b for the tridiagonal A = (dl, d, du)."""
  np_ = jnp()
  y = d[..., None] * b
  below = dl[..., 1:, None] * b[..., :-1, :]
  above = du[..., :-1, None] * b[..., 1:, :]
  ndim = core.get_aval(b).ndim
  pad = lambda x, lo, hi: np_.pad(x, [(0, 0)] * (ndim - 2) + [(lo, hi), (0, 0)])
  return y + pad(below, 1, 0) + pad(above, 0, 1)


def _tridiagonal_jvp(primals, tangents, *, perturb_singular):
  *diags, b = primals
  *diag_dots, b_dot = tangents
  ans = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
  if all(type(t) is ad.Zero for t in diag_dots):
    rhs = b_dot
  else:
    rhs = ad.add_tangents(
        b_dot, -_tridiagonal_product(*map(ad.instantiate, diag_dots), ans))
  if type(rhs) is ad.Zero:
    return ans, rhs
  return ans, tridiagonal_solve_p.bind(*diags, rhs, perturb_singular=perturb_singular)


def _tridiagonal_transpose(ct, dl, d, du, b, *, perturb_singular):
  # Linear in b: solve with the transposed matrix (its sub/super diagonals swap).
  if any(ad.is_undefined_primal(v) for v in (dl, d, du)):
    raise ValueError("tridiagonal_solve is linear in b only")
  if type(ct) is ad.Zero:
    return [None, None, None, ad.Zero(b.aval)]
  np_ = jnp()
  ndim = core.get_aval(du).ndim
  pad = lambda x, lo, hi: np_.pad(x, [(0, 0)] * (ndim - 1) + [(lo, hi)])
  dl_t = pad(du[..., :-1], 1, 0)
  du_t = pad(dl[..., 1:], 0, 1)
  return [None, None, None,
          tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


def _tridiagonal_batch(axis_size, vals, dims, *, perturb_singular):
  dl, d, du, b = vals
  ddl, dd, ddu, db = dims
  if ddl is not_mapped and dd is not_mapped and ddu is not_mapped:
    # Shared matrix: the batch axis becomes more right-hand-side columns.
    b = batching.moveaxis(b, db, core.get_aval(b).ndim - 2)
    shape = core.get_aval(b).shape
    flat = lax().reshape(b, shape[:-3] + (shape[-3], shape[-2] * shape[-1]))
    out = tridiagonal_solve_p.bind(dl, d, du, flat, perturb_singular=perturb_singular)
    return lax().reshape(out, shape), len(shape) - 2
  vals = [batching.bdim_at_front(v, dim, axis_size) for v, dim in zip(vals, dims)]
  return tridiagonal_solve_p.bind(*vals, perturb_singular=perturb_singular), 0


tridiagonal_solve_p.jvp = _tridiagonal_jvp
tridiagonal_solve_p.transpose = _tridiagonal_transpose
tridiagonal_solve_p.batch = _tridiagonal_batch


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
  """Solves A x = b for tridiagonal A: dl (dl[0] = 0), d and du (du[-1] = 0)
  are its sub-, main and super-diagonals, b (..., m, k).  Computed by LAPACK's
  gtsv (partial pivoting), or with ``perturb_singular`` by the Thomas
  algorithm, which nudges tiny pivots instead of giving NaNs."""
  np_ = jnp()
  return tridiagonal_solve_p.bind(np_.asarray(dl), np_.asarray(d), np_.asarray(du),
                                  np_.asarray(b), perturb_singular=bool(perturb_singular))

