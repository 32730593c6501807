"""Matrix decompositions: cholesky, qr, eigh, svd (and a private inverse used
by their derivative rules).

Every primitive works on the last two axes and accepts leading batch axes
(``np.linalg`` does the same), so the batching rule only moves the batch axis
to the front. Derivative rules are the standard matrix-calculus formulas.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.lax.families import check_dtype, inexact_dtypes, standard_primitive


def _lax():
  from purejax import lax
  return lax


def _jnp():
  from purejax import numpy as jnp
  return jnp


def _check_matrix(name, x, square=False):
  check_dtype(name, x.dtype, inexact_dtypes)
  if x.ndim < 2:
    raise ValueError(f"{name} requires an operand of rank >= 2, got {x.str_short()}")
  if square and x.shape[-1] != x.shape[-2]:
    raise ValueError(f"{name} requires square matrices, got {x.str_short()}")


def _real_dtype(dtype):
  return np.array(0, dtype).real.dtype


def _front_batch_rule(prim):
  """The ops take leading batch axes: put the vmapped one first."""

  def rule(axis_size, vals, dims, **params):
    (x,), (d,) = vals, dims
    out = prim.bind(batching.moveaxis(x, d, 0), **params)
    if prim.multiple_results:
      return out, [0] * len(out)
    return out, 0

  return rule


# -- small helpers over the last two axes (traceable) -------------------------

def _H(x):
  return _jnp().conj(_jnp().swapaxes(x, -1, -2))


def _T(x):
  return _jnp().swapaxes(x, -1, -2)


def _mm(a, b):
  return _jnp().matmul(a, b)


def _tril(x, k=0):
  """Lower triangle (the mask is a constant: the shape is static)."""
  m, n = core.get_aval(x).shape[-2:]
  mask = np.tri(m, n, k, dtype=bool)
  return _jnp().where(mask, x, _jnp().zeros_like(x))


def _eye_like(x):
  aval = core.get_aval(x)
  return np.eye(aval.shape[-1], dtype=aval.dtype)


def symmetrize(x):
  """(x + x^H) / 2, as JAX does before factorizing."""
  return (x + _H(x)) / 2


# -- matrix inverse (private: R^{-1}, L^{-1} in the JVP rules) ----------------

def _inv_abstract_eval(x):
  _check_matrix("inv", x, square=True)
  return core.ShapedArray(x.shape, x.dtype)


def _inv_impl(x):
  return np.linalg.inv(x).astype(x.dtype)


def _inv_jvp(g, x):
  # d(A^{-1}) = -A^{-1} dA A^{-1}
  xi = inv_p.bind(x)
  return -_mm(xi, _mm(g, xi))


inv_p = standard_primitive("inv", _inv_abstract_eval, _inv_impl)
inv_p.batch = _front_batch_rule(inv_p)
ad.defjvp(inv_p, _inv_jvp)


# -- cholesky -----------------------------------------------------------------

def _cholesky_abstract_eval(x):
  _check_matrix("cholesky", x, square=True)
  return core.ShapedArray(x.shape, x.dtype)


def _cholesky_impl(x):
  # LAPACK reads the lower triangle; failures give NaNs (as in JAX), not errors.
  try:
    return np.linalg.cholesky(x).astype(x.dtype)
  except np.linalg.LinAlgError:
    flat = x.reshape((-1,) + x.shape[-2:])
    out = np.empty_like(flat)
    for i, a in enumerate(flat):
      try:
        out[i] = np.linalg.cholesky(a)
      except np.linalg.LinAlgError:
        out[i] = np.tril(np.full(a.shape, np.nan))   # JAX's upper stays 0
    return out.reshape(x.shape)


def _cholesky_jvp(primals, tangents):
  (x,), (g,) = primals, tangents
  L = cholesky_p.bind(x)
  if type(g) is ad.Zero:
    return L, g
  g = symmetrize(g)
  # dL = L phi(L^{-1} dA L^{-H}), phi: lower triangle with a halved diagonal.
  Li = inv_p.bind(L)
  inner = _mm(Li, _mm(g, _H(Li)))
  phi = _tril(inner) * (1 - _eye_like(L) / 2)
  return L, _mm(L, phi)


cholesky_p = standard_primitive("cholesky", _cholesky_abstract_eval, _cholesky_impl)
cholesky_p.batch = _front_batch_rule(cholesky_p)
cholesky_p.jvp = _cholesky_jvp


# -- qr -----------------------------------------------------------------------

def _qr_shapes(shape, full_matrices):
  *batch, m, n = shape
  k = m if full_matrices else min(m, n)
  return tuple(batch) + (m, k), tuple(batch) + (k, n)


def _qr_abstract_eval(x, *, full_matrices):
  _check_matrix("qr", x)
  q_shape, r_shape = _qr_shapes(x.shape, full_matrices)
  return [core.ShapedArray(q_shape, x.dtype), core.ShapedArray(r_shape, x.dtype)]


def _qr_impl(x, *, full_matrices):
  q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
  return [q.astype(x.dtype), r.astype(x.dtype)]


def _qr_jvp(primals, tangents, *, full_matrices):
  (x,), (dx,) = primals, tangents
  q, r = qr_p.bind(x, full_matrices=full_matrices)
  *_, m, n = core.get_aval(x).shape
  if m < n or (full_matrices and m != n):
    raise NotImplementedError("Unimplemented case of QR decomposition derivative")
  # With dx R^{-1} and Q^H dx R^{-1}: dQ = Q (Ω - Q^H dx R^{-1}) + dx R^{-1},
  # dR = (Q^H dx R^{-1} - Ω) R, Ω the skew part built from the strict lower one.
  dx_rinv = _mm(dx, inv_p.bind(r))
  qt_dx_rinv = _mm(_H(q), dx_rinv)
  lower = _tril(qt_dx_rinv, -1)
  do = lower - _H(lower)
  if dtypes.issubdtype(core.get_aval(x).dtype, np.complexfloating):
    # the diagonal's imaginary part, so that R keeps a real diagonal
    do = do + (qt_dx_rinv - _jnp().real(qt_dx_rinv)) * _eye_like(x)
  dq = _mm(q, do - qt_dx_rinv) + dx_rinv
  dr = _mm(qt_dx_rinv - do, r)
  return [q, r], [dq, dr]


qr_p = standard_primitive("qr", _qr_abstract_eval, _qr_impl, multiple_results=True)
qr_p.batch = _front_batch_rule(qr_p)
qr_p.jvp = _qr_jvp


# -- eigh ---------------------------------------------------------------------

def _eigh_abstract_eval(x, *, lower):
  _check_matrix("eigh", x, square=True)
  return [core.ShapedArray(x.shape, x.dtype),
          core.ShapedArray(x.shape[:-1], _real_dtype(x.dtype))]


def _eigh_impl(x, *, lower):
  w, v = np.linalg.eigh(x, UPLO="L" if lower else "U")
  return [v.astype(x.dtype), w.astype(_real_dtype(x.dtype))]


def _eigh_jvp(primals, tangents, *, lower):
  (x,), (dx,) = primals, tangents
  v, w = eigh_p.bind(x, lower=lower)
  jnp = _jnp()
  # dw = diag(V^H dA V); dV = V (F * V^H dA V), F_ij = 1 / (w_j - w_i), F_ii = 0
  vdag_dx_v = _mm(_H(v), _mm(dx, v))
  eye = _eye_like(x)
  diff = jnp.expand_dims(w, -2) - jnp.expand_dims(w, -1)
  F = (1 / (diff + eye) - eye).astype(core.get_aval(x).dtype)
  dv = _mm(v, F * vdag_dx_v)
  dw = jnp.real(jnp.sum(vdag_dx_v * eye, axis=-1))
  return [v, w], [dv, dw]


eigh_p = standard_primitive("eigh", _eigh_abstract_eval, _eigh_impl,
                            multiple_results=True)
eigh_p.batch = _front_batch_rule(eigh_p)
eigh_p.jvp = _eigh_jvp


# -- svd ----------------------------------------------------------------------

def _svd_abstract_eval(x, *, full_matrices, compute_uv):
  _check_matrix("svd", x)
  *batch, m, n = x.shape
  k = min(m, n)
  s = core.ShapedArray(tuple(batch) + (k,), _real_dtype(x.dtype))
  if not compute_uv:
    return [s]
  cu, cv = (m, n) if full_matrices else (k, k)
  return [s, core.ShapedArray(tuple(batch) + (m, cu), x.dtype),
          core.ShapedArray(tuple(batch) + (cv, n), x.dtype)]


def _svd_impl(x, *, full_matrices, compute_uv):
  real = _real_dtype(x.dtype)
  if not compute_uv:
    return [np.linalg.svd(x, compute_uv=False).astype(real)]
  u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
  return [s.astype(real), u.astype(x.dtype), vh.astype(x.dtype)]


# No JVP rule yet: the AD core reports "Differentiation rule for 'svd'".
svd_p = standard_primitive("svd", _svd_abstract_eval, _svd_impl, multiple_results=True)
svd_p.batch = _front_batch_rule(svd_p)


# -- public wrappers (lax.linalg) ---------------------------------------------

def _asarray(x):
  return _jnp().asarray(x)


def cholesky(x, *, symmetrize_input=True):
  """Lower Cholesky factor L with x = L L^H (NaNs where x isn't positive definite)."""
  x = _asarray(x)
  if symmetrize_input:
    x = symmetrize(x)
  return cholesky_p.bind(x)


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
  """(q, r) with x = q r; LAPACK's (and JAX's) sign convention."""
  if pivoting:
    raise NotImplementedError("qr(pivoting=True) is not supported by purejax")
  q, r = qr_p.bind(_asarray(x), full_matrices=full_matrices)
  return q, r


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None):
  """(v, w): eigenvectors (columns) and ascending eigenvalues of a Hermitian x."""
  if subset_by_index is not None:
    raise NotImplementedError("eigh(subset_by_index=...) is not supported by purejax")
  x = _asarray(x)
  if symmetrize_input:
    x = symmetrize(x)
  v, w = eigh_p.bind(x, lower=lower)
  return v, w


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None,
        algorithm=None):
  """(u, s, vh) with x = u diag(s) vh, or just s when compute_uv=False."""
  if subset_by_index is not None:
    raise NotImplementedError("svd(subset_by_index=...) is not supported by purejax")
  out = svd_p.bind(_asarray(x), full_matrices=full_matrices, compute_uv=compute_uv)
  if not compute_uv:
    return out[0]
  s, u, vh = out
  return u, s, vh
