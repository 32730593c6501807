"""QR decompositions: qr (optionally column-pivoted), geqrf (LAPACK's raw
Householder form, for jnp.linalg.qr(mode="raw") and slogdet(method="qr"))
and householder_product (Q from those reflectors).
"""
import numpy as np

from purejax._src import core
from purejax._src.interpreters import ad
from purejax._src.lax import lapack
from purejax._src.lax.families import standard_primitive
from purejax._src.lax.linalg_solve import lu, lu_solve, take_rows, triangular_solve
from purejax._src.lax.linalg_util import (
    H, check_inexact, compute_dtype, flat_batch, front_batch_rule, jnp, mm, split_batch,
    tril)


# -- qr -----------------------------------------------------------------------

def _qr_abstract_eval(x, *, pivoting, full_matrices, use_magma):
  check_inexact("qr", x)
  batch, ((m, n),) = split_batch("qr", [x], [2])
  k = m if full_matrices else min(m, n)
  outs = [core.ShapedArray(batch + (m, k), x.dtype),
          core.ShapedArray(batch + (k, n), x.dtype)]
  if pivoting:
    outs.append(core.ShapedArray(batch + (n,), np.int32))
  return outs


def _pivot_order(a):
  """Column order of a Householder QR that picks, at each step, the column
  of largest remaining norm (what LAPACK's geqp3 computes)."""
  r = a.astype(np.result_type(a.dtype, np.float64), copy=True)
  m, n = r.shape
  order = np.arange(n)
  for j in range(min(m, n)):
    norms = np.sum(np.abs(r[j:, j:]) ** 2, axis=0)
    q = j + int(np.argmax(norms))
    r[:, [j, q]], order[[j, q]] = r[:, [q, j]], order[[q, j]]
    x = r[j:, j]
    alpha = np.linalg.norm(x)
    if alpha == 0:
      continue
    v = x.copy()
    phase = x[0] / abs(x[0]) if x[0] != 0 else 1
    v[0] += phase * alpha
    v /= np.linalg.norm(v)
    r[j:, j:] -= 2 * np.outer(v, v.conj() @ r[j:, j:])
  return order


def _qr_impl(x, *, pivoting, full_matrices, use_magma):
  dtype = x.dtype
  *batch, m, n = x.shape
  batch = tuple(batch)
  k = m if full_matrices else min(m, n)
  if lapack.available() and m and n:
    return lapack.qr(x, pivoting=pivoting, full_matrices=full_matrices)
  perm = None
  if pivoting:
    flat = flat_batch(x)
    perm = np.stack([_pivot_order(a) for a in flat]).astype(np.int32) if len(flat) \
        else np.zeros((0, n), np.int32)
    x = np.take_along_axis(flat, perm[:, None, :], axis=-1).reshape(x.shape)
    perm = perm.reshape(batch + (n,))
  if m == 0 or n == 0:
    q = np.broadcast_to(np.eye(m, k, dtype=dtype), batch + (m, k)).copy()
    r = np.zeros(batch + (k, n), dtype)
  else:
    q, r = np.linalg.qr(x.astype(compute_dtype(dtype)),
                        mode="complete" if full_matrices else "reduced")
  outs = [q.astype(dtype), r.astype(dtype)]
  return outs + [perm] if pivoting else outs


qr_p = standard_primitive("qr", _qr_abstract_eval, _qr_impl, multiple_results=True)
qr_p.c_code = None
qr_p.batch = front_batch_rule(qr_p)


def _thin_qr_jvp(q, r, dx):
  """(dQ, dR) for m >= n and reduced factors (a skew-Hermitian correction
  keeps Q orthonormal and R triangular with a real diagonal)."""
  dx_rinv = triangular_solve(r, dx)
  qt_dx_rinv = mm(H(q), dx_rinv)
  lower = tril(qt_dx_rinv, -1)
  do = lower - H(lower)
  n = core.get_aval(r).shape[-1]
  eye = np.eye(n, dtype=core.get_aval(do).dtype)
  do = do + eye * (qt_dx_rinv - jnp().real(qt_dx_rinv).astype(core.get_aval(do).dtype))
  dq = mm(q, do - qt_dx_rinv) + dx_rinv
  dr = mm(qt_dx_rinv - do, r)
  return dq, dr


def _permute_columns(x, p):
  np_ = jnp()
  return np_.swapaxes(take_rows(np_.swapaxes(x, -1, -2), p), -1, -2)


def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma):
  (x,), (dx,) = primals, tangents
  outs = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
  q, r = outs[:2]
  extra = [ad.Zero.from_primal_value(outs[2])] if pivoting else []
  dx = ad.instantiate(dx)
  *_, m, n = core.get_aval(x).shape
  if pivoting:
    x, dx = _permute_columns(x, outs[2]), _permute_columns(dx, outs[2])
  if m < n:
    # x = [x1 x2] = q [r1 r2]: x1 = q r1 is square, and r2 = q^H x2.
    dq, dr1 = _thin_qr_jvp(q, r[..., :, :m], dx[..., :, :m])
    dr2 = mm(H(dq), x[..., :, m:]) + mm(H(q), dx[..., :, m:])
    return outs, [dq, jnp().concatenate([dr1, dr2], axis=-1)] + extra
  q_mn = q[..., :, :n] if full_matrices else q
  r_nn = r[..., :n, :n] if full_matrices else r
  dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
  if not full_matrices or m == n:
    return outs, [dq_mn, dr_nn] + extra
  # The last m - n columns of a complete Q (arXiv:2409.13374, eqs. 32-33):
  # Z = Q_pn (Q_nn - I)^{-1}, found by a solve with (Q_nn - I)^H.
  q_nn, q_pn, q_mp = q_mn[..., :n, :], q_mn[..., n:, :], q[..., :, n:]
  dq_nn, dq_pn = dq_mn[..., :n, :], dq_mn[..., n:, :]
  lu_, _, perm = lu(q_nn - np.eye(n, dtype=core.get_aval(q).dtype))
  z_h = lu_solve(lu_, perm, H(q_pn), trans=2)
  z = H(z_h)
  dq_mp = mm(dq_mn, z_h) - mm(q_mn + mm(q_mp, z), H(dq_pn - mm(z, dq_nn)))
  dq = jnp().concatenate([dq_mn, dq_mp], axis=-1)
  dr = jnp().concatenate([dr_nn, jnp().zeros_like(r[..., n:, :])], axis=-2)
  return outs, [dq, dr] + extra


qr_p.jvp = _qr_jvp


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
  """(q, r) with x = q r (LAPACK's signs), or (q, r, p) with x[..., p] = q r
  when ``pivoting``; ``use_magma`` is accepted and ignored."""
  outs = qr_p.bind(jnp().asarray(x), pivoting=bool(pivoting),
                   full_matrices=bool(full_matrices), use_magma=use_magma)
  return tuple(outs)


# -- geqrf: the Householder form ------------------------------------------------

def _geqrf_abstract_eval(x):
  check_inexact("geqrf", x)
  batch, ((m, n),) = split_batch("geqrf", [x], [2])
  return [core.ShapedArray(x.shape, x.dtype),
          core.ShapedArray(batch + (min(m, n),), x.dtype)]


def _geqrf_impl(x):
  *batch, m, n = x.shape
  if m == 0 or n == 0 or not all(batch):
    return [x.copy(), np.zeros(tuple(batch) + (min(m, n),), x.dtype)]
  if lapack.available():
    return list(lapack.geqrf(x))
  h, taus = np.linalg.qr(x.astype(compute_dtype(x.dtype)), mode="raw")
  return [np.swapaxes(h, -1, -2).astype(x.dtype), taus.astype(x.dtype)]


geqrf_p = standard_primitive("geqrf", _geqrf_abstract_eval, _geqrf_impl,
                             multiple_results=True)
geqrf_p.c_code = None
geqrf_p.batch = front_batch_rule(geqrf_p)


def geqrf(x):
  """LAPACK's geqrf: R above the diagonal and the Householder vectors below,
  with their scale factors ``taus``."""
  a, taus = geqrf_p.bind(jnp().asarray(x))
  return a, taus


# -- householder_product ----------------------------------------------------------

def _householder_abstract_eval(a, taus):
  name = "householder_product"
  check_inexact(name, a, taus)
  _, ((m, n), (k,)) = split_batch(name, [a, taus], [2, 1])
  if m < n:
    raise ValueError("The first argument to householder_product must have at least as "
                     f"many rows as columns, got shape {(m, n)}")
  if k > min(m, n):
    raise ValueError("The second argument to householder_product must not have more "
                     "rows than the minimum of the first argument's rows and columns.")
  if a.shape[:-2] != taus.shape[:-1]:
    raise ValueError("householder_product requires equal batch shapes, got "
                     f"{a.shape[:-2]} and {taus.shape[:-1]}.")
  return core.ShapedArray(a.shape, a.dtype)


def _householder_impl(a, taus):
  # Q = H_0 H_1 ... H_{k-1} applied to I's first n columns, last reflector first.
  if lapack.available():
    return lapack.orgqr(a, taus)
  dtype = a.dtype
  work = compute_dtype(dtype)
  a, taus = a.astype(work), taus.astype(work)
  *batch, m, n = a.shape
  q = np.broadcast_to(np.eye(m, n, dtype=work), a.shape).copy()
  for i in range(taus.shape[-1] - 1, -1, -1):
    v = a[..., i:, i].copy()
    v[..., 0] = 1
    proj = np.einsum("...i,...ij->...j", v.conj(), q[..., i:, :])
    q[..., i:, :] -= taus[..., i, None, None] * v[..., :, None] * proj[..., None, :]
  return q.astype(dtype)


householder_product_p = standard_primitive(
    "householder_product", _householder_abstract_eval, _householder_impl)
householder_product_p.c_code = None
householder_product_p.batch = front_batch_rule(householder_product_p)


def householder_product(a, taus):
  """The unitary Q (shape of a) of the Householder reflectors stored below
  a's diagonal, scaled by ``taus`` (LAPACK's orgqr/ungqr)."""
  return householder_product_p.bind(jnp().asarray(a), jnp().asarray(taus))
