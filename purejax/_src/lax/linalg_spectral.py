"""Spectral decompositions: eigh (Hermitian), eig (general, LAPACK geev's
conventions) and svd, with their derivative rules (nondegenerate
perturbation theory, as JAX).
"""
import enum

import numpy as np

from purejax._src import array_namespace, core
from purejax._src.interpreters import ad
from purejax._src.lax import lapack
from purejax._src.lax.families import standard_primitive
from purejax._src.lax.linalg_solve import solve
from purejax._src.lax.linalg_util import (
    H, T, cast, check_inexact, check_square, complex_dtype, construct_diagonal,
    extract_diagonal, front_batch_rule, jnp, lapack_of, lax, mm, real_dtype, split_batch,
    symmetrize)


class EighImplementation(enum.Enum):
  """eigh's algorithm (accepted for compatibility; LAPACK syevd runs)."""
  QR = "qr"
  JACOBI = "jacobi"
  QDWH = "qdwh"


class EigImplementation(enum.Enum):
  """eig's implementation (accepted for compatibility; LAPACK geev runs)."""
  CUSOLVER = "cusolver"
  MAGMA = "magma"
  LAPACK = "lapack"


class SvdAlgorithm(enum.Enum):
  """svd's algorithm (accepted for compatibility; LAPACK gesdd runs)."""
  DEFAULT = "default"
  QR = "QR"
  JACOBI = "Jacobi"
  POLAR = "polar"
  DIVIDE_AND_CONQUER = "divide_and_conquer"


def _subset(subset_by_index, n):
  return (0, n) if subset_by_index is None else tuple(subset_by_index)


# -- eigh -----------------------------------------------------------------------

def _eigh_abstract_eval(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  check_inexact("eigh", x)
  batch, ((n, n2),) = split_batch("eigh", [x], [2])
  if n != n2:
    raise ValueError("Argument to symmetric eigendecomposition must have shape "
                     f"[..., n, n], got shape {(n, n2)}")
  start, end = _subset(subset_by_index, n)
  d = end - start
  return [core.ShapedArray(batch + (n, d), x.dtype),
          core.ShapedArray(batch + (d,), real_dtype(x.dtype))]


def _eigh_impl(x, *, lower, sort_eigenvalues, subset_by_index, algorithm, vectors=True):
  n = x.shape[-1]
  start, end = _subset(subset_by_index, n)
  v, w = lapack_of(x).syevd(x, lower=lower, vectors=vectors)
  return [v[..., start:end] if vectors else None,
          w[..., start:end].astype(real_dtype(x.dtype))]


def _eigh_for_used_outputs(used, x, **params):
  # In a jitted function whose eigenvectors nothing reads (eigvalsh,
  # eigh(a)[0]), LAPACK skips computing them: about half the time.
  return _eigh_impl(x, vectors=used[0], **params)


# impl_on_gpu_arrays (here and for svd): a GPU's arrays are decomposed
# there (cuSOLVER's syevd and gesvd; linalg_util.lapack_of)
eigh_p = standard_primitive("eigh", _eigh_abstract_eval, _eigh_impl,
                            multiple_results=True, impl_on_gpu_arrays=True)
eigh_p.impl_for_used_outputs = _eigh_for_used_outputs
eigh_p.c_code = None
eigh_p.library_call = "LAPACK syevd"
eigh_p.batch = front_batch_rule(eigh_p)


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  (a,), (a_dot,) = primals, tangents
  n = core.get_aval(a).shape[-1]
  if _subset(subset_by_index, n) != (0, n):
    raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
  v, w_real = eigh_p.bind(symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                          subset_by_index=subset_by_index, algorithm=algorithm)
  # dw = diag(V^H dA V); dV = V (F * V^H dA V), F_ij = 1 / (w_j - w_i), F_ii = 0
  dtype = core.get_aval(a).dtype
  w = cast(w_real, dtype)
  eye = np.eye(n, dtype=dtype)
  F = lax().integer_pow(eye + w[..., None, :] - w[..., :, None], -1) - eye
  vdag_adot_v = mm(mm(H(v), ad.instantiate(a_dot)), v)
  dv = mm(v, F * vdag_adot_v)
  dw = extract_diagonal(jnp().real(vdag_adot_v))
  return [v, w_real], [dv, dw]


eigh_p.jvp = _eigh_jvp


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None, implementation=None):
  """(v, w): eigenvectors (columns) and ascending eigenvalues of Hermitian x.
  ``subset_by_index=(start, end)`` keeps eigenpairs start..end-1 (JAX's CPU
  refuses it; here the full problem is solved, then sliced)."""
  x = jnp().asarray(x)
  if symmetrize_input:
    x = symmetrize(x)
  if subset_by_index is not None:
    subset_by_index = tuple(int(i) for i in subset_by_index)
  v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                     subset_by_index=subset_by_index, algorithm=implementation)
  return v, w


# -- eig --------------------------------------------------------------------------

def _eig_abstract_eval(x, *, compute_left_eigenvectors, compute_right_eigenvectors,
                       enable_eigvec_derivs, implementation):
  check_inexact("eig", x)
  batch, ((n, n2),) = split_batch("eig", [x], [2])
  check_square("eig", (n, n2), "The input to eig must be a square matrix.")
  dtype = complex_dtype(x.dtype)
  count = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
  return ([core.ShapedArray(batch + (n,), dtype)]
          + [core.ShapedArray(x.shape, dtype)] * count)


def _eig_impl(x, *, compute_left_eigenvectors, compute_right_eigenvectors,
              enable_eigvec_derivs, implementation):
  # NaNs where geev fails, as JAX; an empty batch or matrix gives empty outputs.
  with np.errstate(all="ignore"):
    outs = lapack.geev(x, left=compute_left_eigenvectors, right=compute_right_eigenvectors)
  return [o.astype(complex_dtype(x.dtype), copy=False) for o in outs]


eig_p = standard_primitive("eig", _eig_abstract_eval, _eig_impl, multiple_results=True)
eig_p.library_call = "LAPACK geev"
eig_p.c_code = None
eig_p.batch = front_batch_rule(eig_p)


def _eig_vec_jvp(w, v, da):
  # The tangent of eigenvectors fixed by geev's normalization (unit norm,
  # largest component real): dv_j = u_j + c_j v_j with c_j chosen to keep it.
  n = core.get_aval(w).shape[-1]
  dtype = core.get_aval(w).dtype
  eye = np.eye(n, dtype=dtype)
  F = lax().reciprocal(eye + w[..., None, :] - w[..., :, None]) - eye
  P = mm(solve(v, da), v)
  dw = extract_diagonal(P)
  U = mm(v, F * P)
  np_ = jnp()
  vdim = core.get_aval(v).ndim - 2
  k = lax().argmax(lax().abs(v), vdim, np.int32)
  rows = lax().broadcasted_iota(np.int32, core.get_aval(v).shape, vdim)
  mask = cast(lax().eq(rows, lax().expand_dims(k, (vdim,))), dtype)
  re = -np_.real(np_.sum(np_.conj(v) * U, axis=-2))
  im = -np_.imag(np_.sum(mask * U, axis=-2)) / np_.real(np_.sum(mask * v, axis=-2))
  c = lax().complex(re, im)
  return dw, U + v * lax().expand_dims(c, (vdim,))


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs, implementation):
  (a,), (da,) = primals, tangents
  left, right = compute_left_eigenvectors, compute_right_eigenvectors
  if (left or right) and not enable_eigvec_derivs:
    raise NotImplementedError(
        "Derivatives of non-symmetric eigenvectors are only valid under assumptions on "
        "the input that JAX cannot check (see the enable_eigvec_derivs argument to "
        "jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to "
        "opt in. See https://github.com/jax-ml/jax/issues/2748 for discussion.")
  outs = eig_p.bind(a, compute_left_eigenvectors=left, compute_right_eigenvectors=True,
                    enable_eigvec_derivs=enable_eigvec_derivs,
                    implementation=implementation)
  w, vr = outs[0], outs[-1]
  da = cast(ad.instantiate(da), core.get_aval(vr).dtype)
  if not (left or right):
    return [w], [jnp().sum(solve(vr, da) * T(vr), axis=-1)]
  dw, dvr = _eig_vec_jvp(w, vr, da)
  primal_out, tangent_out = [w], [dw]
  if left:
    _, dvl = _eig_vec_jvp(jnp().conj(w), outs[1], H(da))
    primal_out.append(outs[1])
    tangent_out.append(dvl)
  if right:
    primal_out.append(vr)
    tangent_out.append(dvr)
  return primal_out, tangent_out


eig_p.jvp = _eig_jvp


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        enable_eigvec_derivs=False, implementation=None, use_magma=None):
  """[w, vl, vr] (vectors as requested) of a general square x, complex as
  LAPACK geev returns them.  Runs on SciPy's LAPACK, eager or jit."""
  return eig_p.bind(jnp().asarray(x),
                    compute_left_eigenvectors=bool(compute_left_eigenvectors),
                    compute_right_eigenvectors=bool(compute_right_eigenvectors),
                    enable_eigvec_derivs=bool(enable_eigvec_derivs),
                    implementation=implementation)


# -- svd -----------------------------------------------------------------------------

def _svd_abstract_eval(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
  check_inexact("svd", x)
  batch, ((m, n),) = split_batch("svd", [x], [2])
  rank = min(m, n)
  if subset_by_index is not None:
    if full_matrices and tuple(subset_by_index) != (0, rank):
      raise ValueError("full_matrices and subset_by_index cannot both be set")
    rank = min(rank, subset_by_index[1] - subset_by_index[0])
  s = core.ShapedArray(batch + (rank,), real_dtype(x.dtype))
  if not compute_uv:
    return [s]
  return [s, core.ShapedArray(batch + (m, m if full_matrices else rank), x.dtype),
          core.ShapedArray(batch + (n if full_matrices else rank, n), x.dtype)]


def _svd_impl(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
  *batch, m, n = x.shape
  batch, dtype, real = tuple(batch), x.dtype, real_dtype(x.dtype)
  start, end = _subset(subset_by_index, min(m, n))
  if min(m, n) == 0:   # gesdd is not called: full U and V^H are identities
    xp = array_namespace.of(x)
    s = xp.zeros(batch + (0,), real)
    if not compute_uv:
      return [s]
    eye = lambda k, c: xp.broadcast_to(xp.eye(k, c, dtype=dtype), batch + (k, c)).copy()
    if full_matrices:
      return [s, eye(m, m), eye(n, n)]
    return [s, xp.zeros(batch + (m, 0), dtype), xp.zeros(batch + (0, n), dtype)]
  outs = lapack_of(x).gesdd(x, full_matrices=full_matrices, compute_uv=compute_uv)
  s = outs[0][..., start:end].astype(real)
  if not compute_uv:
    return [s]
  u, vh = outs[1], outs[2]
  if subset_by_index is not None:
    u, vh = u[..., :, start:end], vh[..., start:end, :]
  return [s, u, vh]


svd_p = standard_primitive("svd", _svd_abstract_eval, _svd_impl, multiple_results=True,
                           impl_on_gpu_arrays=True)
svd_p.library_call = "LAPACK gesdd"
svd_p.c_code = None
svd_p.batch = front_batch_rule(svd_p)


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index,
             algorithm):
  (A,), (dA,) = primals, tangents
  s, U, Vt = svd_p.bind(A, full_matrices=False, compute_uv=True,
                        subset_by_index=subset_by_index, algorithm=algorithm)
  m, n = core.get_aval(A).shape[-2:]
  if compute_uv and full_matrices and m != n:
    raise NotImplementedError(
        "Singular value decomposition JVP not implemented for full matrices")
  dtype = core.get_aval(A).dtype
  dA = ad.instantiate(dA)
  Ut, V = H(U), H(Vt)
  s_dim = s[..., None, :]
  dS = mm(mm(Ut, dA), V)
  ds = extract_diagonal(jnp().real(dS))
  if not compute_uv:
    return [s], [ds]
  k = core.get_aval(s).shape[-1]
  s_diffs = (s_dim + T(s_dim)) * (s_dim - T(s_dim))
  eye = np.eye(k, dtype=core.get_aval(s).dtype)
  F = 1 / (s_diffs + eye) - eye
  s_c = cast(s_dim, dtype)
  dSS = s_c * dS             # dS diag(s)
  SdS = T(s_c) * dS          # diag(s) dS
  s_zeros = cast(lax().eq(s, np.zeros((), core.get_aval(s).dtype)), core.get_aval(s).dtype)
  s_inv = 1 / (s + s_zeros) - s_zeros
  dUdV_diag = .5 * (dS - H(dS)) * cast(construct_diagonal(s_inv), dtype)
  F_c = cast(F, dtype)
  dU = mm(U, F_c * (dSS + H(dSS)) + dUdV_diag)
  dV = mm(V, F_c * (SdS + H(SdS)))
  if m > n:
    dAV = mm(dA, V)
    dU = dU + (dAV - mm(U, mm(Ut, dAV))) / s_c
  if n > m:
    dAHU = mm(H(dA), U)
    dV = dV + (dAHU - mm(V, mm(Vt, dAHU))) / s_c
  return [s, U, Vt], [ds, dU, H(dV)]


svd_p.jvp = _svd_jvp


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None,
        algorithm=None):
  """(u, s, vh) with x = u diag(s) vh (s descending), or s alone when not
  ``compute_uv``; ``subset_by_index=(start, end)`` keeps singular triplets
  start..end-1 (JAX's CPU refuses it).  ``algorithm`` is accepted, and
  LAPACK's gesdd runs."""
  if subset_by_index is not None:
    subset_by_index = tuple(int(i) for i in subset_by_index)
  if algorithm is not None and not isinstance(algorithm, SvdAlgorithm):
    raise TypeError(f"algorithm must be None or a SvdAlgorithm, got {algorithm!r}")
  out = svd_p.bind(jnp().asarray(x), full_matrices=bool(full_matrices),
                   compute_uv=bool(compute_uv), subset_by_index=subset_by_index,
                   algorithm=algorithm)
  if not compute_uv:
    return out[0]
  s, u, vh = out
  return u, s, vh
