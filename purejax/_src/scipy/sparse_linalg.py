"""scipy.sparse.linalg's Krylov solvers as JAX has them: ``cg``,
``bicgstab`` and restarted ``gmres``, for a matrix or a matvec function and
a right-hand side that may be a pytree.

Each solver is one ``while_loop`` wrapped in ``lax.custom_linear_solve``, so
derivatives solve the system again instead of differentiating the iterations.
Tolerances are SciPy's "non-legacy" ones: stop when
``norm(residual) <= max(tol * norm(b), atol)``."""
import functools
import operator

import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src import dtypes
from purejax._src import tree_util
from purejax._src.array import Array
from purejax._src.devices import device_put
from purejax._src.scipy.linalg import solve, solve_triangular

_HIGHEST = lax.Precision.HIGHEST


# -- vector arithmetic on pytrees --------------------------------------------------------

def tree_sum(values):
  return functools.reduce(operator.add, values)


def vdot_real(x, y):
  """Re <x, y> for arrays whose product with the operator is Hermitian:
  the cross terms of the real and imaginary parts cancel, so they are left out."""
  out = jnp.vdot(x.real, y.real, precision=_HIGHEST)
  if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
    out = out + jnp.vdot(x.imag, y.imag, precision=_HIGHEST)
  return out


def tree_vdot_real(x, y):
  return tree_sum(tree_util.tree_leaves(tree_util.tree_map(vdot_real, x, y)))


def tree_vdot(x, y):
  return tree_sum(tree_util.tree_leaves(tree_util.tree_map(
      functools.partial(jnp.vdot, precision=_HIGHEST), x, y)))


def tree_norm(x):
  return jnp.sqrt(tree_sum([vdot_real(v, v) for v in tree_util.tree_leaves(x)]))


def scale(s, x):
  return tree_util.tree_map(lambda v: s * v, x)


def add(x, y):
  return tree_util.tree_map(operator.add, x, y)


def sub(x, y):
  return tree_util.tree_map(operator.sub, x, y)


def leaves_type(tree):
  """(dtype, weak) that the leaves of ``tree`` promote to."""
  return dtypes.result_type(*tree_util.tree_leaves(tree), return_weak_type_flag=True)


@tree_util.Partial
def identity(x):
  return x


def as_matvec(a):
  """A function computing ``a @ x``: ``a`` itself when callable, else a square matrix."""
  if callable(a):
    return a
  shape = getattr(a, "shape", None)
  if shape is None or not hasattr(a, "__matmul__"):
    raise TypeError(f"linear operator must be either a function or ndarray: {a}")
  if len(shape) != 2 or shape[0] != shape[1]:
    raise ValueError(f"linear operator must be a square matrix, but has shape: {shape}")
  if isinstance(a, (np.ndarray, Array)):
    return functools.partial(jnp.dot, a, precision=_HIGHEST)
  return functools.partial(operator.matmul, a)


def leaves_size(tree):
  return sum(np.size(v) for v in tree_util.tree_leaves(tree))


def check_same_structure(x0, b):
  if tree_util.tree_structure(x0) != tree_util.tree_structure(b):
    raise ValueError("x0 and b must have matching tree structure: "
                     f"{tree_util.tree_structure(x0)} vs {tree_util.tree_structure(b)}")


# -- conjugate gradients, BiCGSTAB -----------------------------------------------------

def _squared_threshold(b, tol, atol):
  return jnp.maximum(jnp.square(tol) * tree_vdot_real(b, b), jnp.square(atol))


def _cg_loop(A, b, x0, *, maxiter, tol, atol, M):
  """Preconditioned conjugate gradients (Hestenes and Stiefel)."""
  threshold = _squared_threshold(b, tol, atol)
  r0 = sub(b, A(x0))
  z0 = M(r0)
  dtype = dtypes.result_type(*tree_util.tree_leaves(z0))
  rz0 = tree_vdot_real(r0, z0).astype(dtype)

  def not_converged(state):
    _, r, rz, _, k = state
    # <r, M r> is the squared residual when there is no preconditioner.
    rr = rz.real if M is identity else tree_vdot_real(r, r)
    return (rr > threshold) & (k < maxiter)

  def step(state):
    x, r, rz, p, k = state
    Ap = A(p)
    alpha = rz / tree_vdot_real(p, Ap).astype(dtype)
    x = add(x, scale(alpha, p))
    r = sub(r, scale(alpha, Ap))
    z = M(r)
    rz_next = tree_vdot_real(r, z).astype(dtype)
    p = add(z, scale(rz_next / rz, p))
    return x, r, rz_next, p, k + 1

  return lax.while_loop(not_converged, step, (x0, r0, rz0, z0, 0))[0]


# Negative iteration counts stop BiCGSTAB: the method broke down.
_RHO_BREAKDOWN, _ALPHA_OMEGA_BREAKDOWN = -10, -11


def _bicgstab_loop(A, b, x0, *, maxiter, tol, atol, M):
  """Preconditioned BiCGSTAB (van der Vorst), with the shadow residual r0."""
  threshold = _squared_threshold(b, tol, atol)
  r0 = sub(b, A(x0))
  one = lax.convert_element_type(1, *leaves_type(b))

  def not_converged(state):
    r, k = state[1], state[-1]
    return (tree_vdot_real(r, r) > threshold) & (k < maxiter) & (k >= 0)

  def step(state):
    x, r, r_shadow, alpha, omega, rho, p, v, k = state
    rho_next = tree_vdot(r_shadow, r)
    beta = rho_next / rho * alpha / omega
    p = add(r, scale(beta, sub(p, scale(omega, v))))
    p_hat = M(p)
    v = A(p_hat)
    alpha = rho_next / tree_vdot(r_shadow, v)
    s = sub(r, scale(alpha, v))
    done = tree_vdot_real(s, s) < threshold    # s is small enough: skip the second half step
    s_hat = M(s)
    t = A(s_hat)
    omega = tree_vdot(t, s) / tree_vdot(t, t)
    where_done = functools.partial(jnp.where, done)
    x = tree_util.tree_map(where_done, add(x, scale(alpha, p_hat)),
                           add(x, add(scale(alpha, p_hat), scale(omega, s_hat))))
    r = tree_util.tree_map(where_done, s, sub(s, scale(omega, t)))
    k = jnp.where((omega == 0) | (alpha == 0), _ALPHA_OMEGA_BREAKDOWN, k + 1)
    k = jnp.where(rho_next == 0, _RHO_BREAKDOWN, k)
    return x, r, r_shadow, alpha, omega, rho_next, p, v, k

  state = (x0, r0, r0, one, one, one, r0, r0, 0)
  return lax.while_loop(not_converged, step, state)[0]


def _arguments(A, b, x0, maxiter, M):
  """The solvers' common defaults and checks: (matvec, b, x0, maxiter,
  preconditioner)."""
  if x0 is None:
    x0 = tree_util.tree_map(jnp.zeros_like, b)
  b, x0 = device_put((b, x0))
  if maxiter is None:
    maxiter = 10 * leaves_size(b)   # SciPy's default
  A = as_matvec(A)
  M = identity if M is None else as_matvec(M)
  check_same_structure(x0, b)
  return A, b, x0, maxiter, M


def _iterative_solve(loop, A, b, x0, tol, atol, maxiter, M, symmetric_if_real):
  A, b, x0, maxiter, M = _arguments(A, b, x0, maxiter, M)
  x0_shapes = [np.shape(v) for v in tree_util.tree_leaves(x0)]
  b_shapes = [np.shape(v) for v in tree_util.tree_leaves(b)]
  if x0_shapes != b_shapes:
    raise ValueError(f"arrays in x0 and b must have matching shapes: {x0_shapes} vs {b_shapes}")
  solve = functools.partial(loop, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
  # A real positive definite operator is symmetric: its transpose solve is the solve.
  symmetric = symmetric_if_real and not any(
      dtypes.is_complex(v.dtype) for v in tree_util.tree_leaves(b))
  x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
  return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
  """Solves ``A x = b`` for a Hermitian positive definite ``A`` by conjugate
  gradients: ``(x, None)``. ``A`` and the preconditioner ``M`` are matrices or
  functions; ``b`` and ``x0`` are arrays or pytrees of arrays."""
  return _iterative_solve(_cg_loop, A, b, x0, tol, atol, maxiter, M, symmetric_if_real=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
  """Solves ``A x = b`` for a general ``A`` by BiCGSTAB: ``(x, None)``.
  Arguments as in ``cg``."""
  return _iterative_solve(_bicgstab_loop, A, b, x0, tol, atol, maxiter, M,
                          symmetric_if_real=False)


# -- GMRES -----------------------------------------------------------------------------

def _normalize(x, thresh=None):
  """(x / |x|, |x|), or zeros and 0 where |x| <= thresh (default: machine epsilon)."""
  norm = tree_norm(x)
  dtype, weak = leaves_type(x)
  if thresh is None:
    thresh = jnp.finfo(norm.dtype).eps
  thresh = jnp.asarray(thresh).astype(dtype).real
  nonzero = norm > thresh
  divisor = lax.convert_element_type(norm, dtype, weak)
  unit = tree_util.tree_map(lambda v: jnp.where(nonzero, v / divisor, 0.0), x)
  return unit, jnp.where(nonzero, norm, 0.0)


def _column(V, k):
  return tree_util.tree_map(lambda X: X[..., k], V)


def _arnoldi_step(k, A, M, V, H):
  """Appends the normalized component of ``M(A(V[:, k]))`` orthogonal to V's
  first columns to V as column k + 1, its coordinates to H as row k."""
  dtype = leaves_type(V)[0]
  v = M(A(_column(V, k)))
  _, v_norm = _normalize(v)
  # One pass of classical Gram-Schmidt (JAX's test for a second pass never passes).
  h = tree_sum(tree_util.tree_leaves(tree_util.tree_map(
      lambda X, y: jnp.einsum("...n,...->n", X.conj(), y, precision=_HIGHEST), V, v)))
  v = sub(v, tree_util.tree_map(lambda X: jnp.dot(X, h, precision=_HIGHEST), V))
  # A vector this small relative to A(v) means an invariant subspace was found.
  unit, rest_norm = _normalize(v, thresh=jnp.finfo(dtype).eps * v_norm)
  V = tree_util.tree_map(lambda X, u: X.at[..., k + 1].set(u), V, unit)
  H = H.at[k, :].set(h.at[k + 1].set(rest_norm.astype(dtype)))
  return V, H, rest_norm == 0.0


def _rotate(v, i, cos, sin):
  """Rotates the pair (v[i], v[i + 1]) by a Givens rotation."""
  a, b = v[i], v[i + 1]
  v = v.at[i].set(cos.conj() * a - sin.conj() * b)
  return v.at[i + 1].set(sin * a + cos * b)


def _givens(a, b):
  """(cos, sin) of the rotation that zeroes b in (a, b)."""
  b_is_zero = abs(b) == 0
  a_smaller = abs(a) < abs(b)
  t = -jnp.where(a_smaller, a, b) / jnp.where(a_smaller, b, a)
  r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
  cos = jnp.where(b_is_zero, 1, jnp.where(a_smaller, r * t, r))
  sin = jnp.where(b_is_zero, 0, jnp.where(a_smaller, r, r * t))
  return cos, sin


def _krylov_basis(unit_residual, restart):
  return tree_util.tree_map(
      lambda v: jnp.pad(v[..., None], ((0, 0),) * v.ndim + ((0, restart),)), unit_residual)


def _restart_end(A, b, x0, M, V, y):
  x = add(x0, tree_util.tree_map(lambda X: jnp.dot(X[..., :-1], y, precision=_HIGHEST), V))
  unit_residual, residual_norm = _normalize(M(sub(b, A(x))))
  return x, unit_residual, residual_norm


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
  """One restart, QR-factorizing the Hessenberg matrix by Givens rotations as
  it grows: the residual is known at each step, so the restart can stop early."""
  V = _krylov_basis(unit_residual, restart)
  dtype = dtypes.result_type(*tree_util.tree_leaves(b))
  R = jnp.eye(restart, restart + 1, dtype=dtype)   # not singular if the loop ends early
  rotations = jnp.zeros((restart, 2), dtype=dtype)
  beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

  def not_converged(state):
    k, err = state[:2]
    return (k < restart) & (err > ptol)

  def step(state):
    k, _, V, R, beta, rotations = state
    V, H, _ = _arnoldi_step(k, A, M, V, R)
    row = lax.fori_loop(0, k, lambda i, row: _rotate(row, i, *rotations[i, :]), H[k, :])
    rotation = _givens(row[k], row[k + 1])
    rotations = rotations.at[k, :].set(rotation)
    R = R.at[k, :].set(_rotate(row, k, *rotation))
    beta = _rotate(beta, k, *rotation)
    return k + 1, abs(beta[k + 1]), V, R, beta, rotations

  state = lax.while_loop(not_converged, step, (0, residual_norm, V, R, beta, rotations))
  _, _, V, R, beta, _ = state
  y = solve_triangular(R[:, :-1].T, beta[:-1])
  return _restart_end(A, b, x0, M, V, y)


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
  """One restart building the whole Krylov basis, then solving the least
  squares problem by its normal equations."""
  del ptol   # no early stop within a restart
  V = _krylov_basis(unit_residual, restart)
  dtype, weak = leaves_type(b)
  H = lax.convert_element_type(jnp.eye(restart, restart + 1, dtype=dtype), dtype, weak)

  def not_done(state):
    _, _, breakdown, k = state
    return (k < restart) & ~breakdown

  def step(state):
    V, H, _, k = state
    V, H, breakdown = _arnoldi_step(k, A, M, V, H)
    return V, H, breakdown, k + 1

  V, H, _, _ = lax.while_loop(not_done, step, (V, H, False, 0))
  beta = jnp.zeros_like(H, shape=(restart + 1,)).at[0].set(residual_norm.astype(dtype))
  Ht = H.T
  normal = jnp.dot(Ht.T.conj(), Ht, precision=_HIGHEST)
  y = solve(normal, jnp.dot(Ht.T.conj(), beta, precision=_HIGHEST), assume_a="pos")
  return _restart_end(A, b, x0, M, V, y)


_GMRES_RESTARTS = {"incremental": _gmres_incremental, "batched": _gmres_batched}


def _gmres_loop(A, b, x0, atol, ptol, restart, maxiter, M, one_restart):
  unit_residual, residual_norm = _normalize(M(sub(b, A(x0))))

  def not_converged(state):
    _, k, _, residual_norm = state
    return (k < maxiter) & (residual_norm > atol)

  def step(state):
    x, k, unit_residual, residual_norm = state
    x, unit_residual, residual_norm = one_restart(
        A, b, x, unit_residual, residual_norm, ptol, restart, M)
    return x, k + 1, unit_residual, residual_norm

  return lax.while_loop(not_converged, step, (x0, 0, unit_residual, residual_norm))[0]


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
  """Solves ``A x = b`` for a general ``A`` by restarted GMRES: ``(x, info)``,
  info 0, or -1 where x has a NaN. ``restart`` is the Krylov subspace's
  dimension, ``maxiter`` the number of restarts; ``solve_method`` is
  "batched" (the least squares problem solved once per restart) or
  "incremental" (Givens rotations each step, stopping early)."""
  A, b, x0, maxiter, M = _arguments(A, b, x0, maxiter, M)
  restart = min(restart, leaves_size(b))
  b_norm = tree_norm(b)
  atol = jnp.maximum(tol * b_norm, atol)
  # The tolerance within a restart is on the preconditioned residual.
  ptol = tree_norm(M(b)) * jnp.minimum(1.0, atol / b_norm)
  if solve_method not in _GMRES_RESTARTS:
    raise ValueError(f"invalid solve_method {solve_method}, must be either "
                     "'incremental' or 'batched'")
  one_restart = _GMRES_RESTARTS[solve_method]

  def solve(A, b):
    return _gmres_loop(A, b, x0, atol, ptol, restart, maxiter, M, one_restart)

  x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
  info = jnp.where(jnp.isnan(tree_norm(x)), -1, 0)
  return x, info
