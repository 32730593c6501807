"""QR decompositions: qr (optionally column-pivoted), geqrf (LAPACK's raw
Householder form, for jnp.linalg.qr(mode="raw") and slogdet(method="qr"))
and householder_product (Q from those reflectors).
"""
import numpy as np

from purejax._src import core
from purejax._src.interpreters import ad
from purejax._src.lax.families import standard_primitive
from purejax._src.lax.linalg_solve import lu, lu_solve, take_rows, triangular_solve
from purejax._src.lax.linalg_util import (
    H, check_inexact, front_batch_rule, jnp, lapack_of, mm, split_batch, tril)


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


def _qr_impl(x, *, pivoting, full_matrices, use_magma):
  # geqrf (geqp3 when pivoting) then orgqr/ungqr; an empty matrix gives an
  # identity Q, a zero R and the identity permutation.
  return lapack_of(x).qr(x, pivoting=pivoting, full_matrices=full_matrices)


# impl_on_gpu_arrays (here and for geqrf, householder_product): a GPU's
# arrays are factored there (cuSOLVER; linalg_util.lapack_of), except with
# pivoting (cuSOLVER has no geqp3), which runs on host copies.
qr_p = standard_primitive("qr", _qr_abstract_eval, _qr_impl, multiple_results=True,
                          impl_on_gpu_arrays=lambda eqn: not eqn.params["pivoting"])
qr_p.c_code = None
qr_p.library_call = "LAPACK geqrf/geqp3 + orgqr"
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
  # An empty matrix comes back unchanged, with no taus.
  return list(lapack_of(x).geqrf(x))


geqrf_p = standard_primitive("geqrf", _geqrf_abstract_eval, _geqrf_impl,
                             multiple_results=True, impl_on_gpu_arrays=True)
geqrf_p.c_code = None
geqrf_p.library_call = "LAPACK geqrf"
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
  # Q = H_0 H_1 ... H_{k-1} applied to I's first n columns (orgqr/ungqr).
  return lapack_of(a, taus).orgqr(a, taus)


householder_product_p = standard_primitive(
    "householder_product", _householder_abstract_eval, _householder_impl,
    impl_on_gpu_arrays=True)
householder_product_p.c_code = None
householder_product_p.library_call = "LAPACK orgqr"
householder_product_p.batch = front_batch_rule(householder_product_p)


def householder_product(a, taus):
  """The unitary Q (shape of a) of the Householder reflectors stored below
  a's diagonal, scaled by ``taus`` (LAPACK's orgqr/ungqr)."""
  return householder_product_p.bind(jnp().asarray(a), jnp().asarray(taus))
