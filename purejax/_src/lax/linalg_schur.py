"""schur (LAPACK gees) and hessenberg (LAPACK gehrd): no derivative rules,
as in JAX."""
import numpy as np

from purejax._src import core
from purejax._src.lax import lapack_schur
from purejax._src.lax.families import standard_primitive
from purejax._src.lax.linalg_util import (
    check_inexact, check_square, front_batch_rule, jnp, split_batch)


def _schur_abstract_eval(x, *, compute_schur_vectors, sort_eig_vals, select_callable):
  check_inexact("schur", x)
  _, ((n, n2),) = split_batch("schur", [x], [2])
  check_square("schur", (n, n2))
  return [core.ShapedArray(x.shape, x.dtype)] * (2 if compute_schur_vectors else 1)


def _schur_impl(x, *, compute_schur_vectors, sort_eig_vals, select_callable):
  with np.errstate(all="ignore"):
    return lapack_schur.gees(x, compute_schur_vectors=compute_schur_vectors)


schur_p = standard_primitive("schur", _schur_abstract_eval, _schur_impl,
                             multiple_results=True)
schur_p.library_call = "LAPACK gees"
schur_p.c_code = None
schur_p.batch = front_batch_rule(schur_p)


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
  """[t, vs] (or [t]): the Schur form of square x (quasi-triangular, 2 x 2
  blocks for complex pairs, when real) and its Schur vectors, x = vs t vs^H."""
  if sort_eig_vals:
    raise NotImplementedError(
        "The sort feature of LAPACK's gees routine is not implemented.")
  return schur_p.bind(jnp().asarray(x), compute_schur_vectors=bool(compute_schur_vectors),
                      sort_eig_vals=False, select_callable=select_callable)


def _hessenberg_abstract_eval(a):
  check_inexact("hessenberg", a)
  batch, ((n, n2),) = split_batch("hessenberg", [a], [2])
  if n != n2:
    raise ValueError("Argument to Hessenberg reduction must have shape [..., n, n], "
                     f"got shape {(n, n2)}")
  return [core.ShapedArray(a.shape, a.dtype),
          core.ShapedArray(batch + (max(n - 1, 0),), a.dtype)]


def _hessenberg_impl(a):
  return list(lapack_schur.gehrd(a))


hessenberg_p = standard_primitive("hessenberg", _hessenberg_abstract_eval, _hessenberg_impl,
                                  multiple_results=True)
hessenberg_p.library_call = "LAPACK gehrd"
hessenberg_p.c_code = None
hessenberg_p.batch = front_batch_rule(hessenberg_p)


def hessenberg(a):
  """(a, taus): square a reduced to upper Hessenberg form H = Q^H a Q, the
  Householder vectors of Q below the first subdiagonal (LAPACK's layout)."""
  return tuple(hessenberg_p.bind(jnp().asarray(a)))
