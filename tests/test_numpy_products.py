"""Tests for jnp products and polynomials: kron, cross, trace, vecdot,
matvec, vecmat, einsum/einsum_path, and poly, polyadd, polysub, polymul,
polydiv, polyder, polyint, polyval, polyfit, roots.

Results are compared with the installed JAX (skipped if absent) for dtype,
weak type, shape and values, and with NumPy in float64; transformations
are checked with jit, vmap and finite-difference gradients.
"""
import warnings

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax._src import errors
from purejax.test_util import check_grads
from tests import jnp_oracle
from tests.jnp_oracle import oracle as _oracle
from tests.jnp_oracle import same as _same, to as _to


RNG = np.random.RandomState(0)
A = np.arange(12, dtype=np.int32).reshape(3, 4)
F = RNG.randn(3, 4).astype(np.float32)
G = RNG.randn(4, 5).astype(np.float32)
B3 = RNG.randn(2, 3, 4).astype(np.float32)
V3 = np.array([1., 2., 3.], np.float32)
P = np.array([1., -3., 2.], np.float32)
C = np.array([1 + 2j, 3j, -1], np.complex64)
X6 = np.arange(6, dtype=np.float32)

def _without_tolerance(case):
  """A case may end with its tolerance (a Python float)."""
  return case[:2] if isinstance(case[-1], float) else case


ORACLE_CASES = {
    "kron": (lambda m, a: m.kron(a[:2, :2], m.ones((2, 3))), A),
    "kron_ranks": (lambda m, a: m.kron(m.arange(3), a), A),
    "kron_scalar": (lambda m: m.kron(2, m.arange(3.)),),
    "kron_int8_weak": (lambda m: m.kron(m.arange(2, dtype=m.int8), 3),),
    "cross3": (lambda m, v: m.cross(v, v[::-1]), V3),
    "cross2": (lambda m: m.cross(m.array([1, 2]), m.array([4, 5])),),
    "cross23": (lambda m: m.cross(m.array([1, 2]), m.array([4, 5, 6])),),
    "cross_axisa": (lambda m: m.cross(m.arange(6.).reshape(3, 2), m.arange(6.).reshape(2, 3),
                                      axisa=0),),
    "cross_axis": (lambda m, a: m.cross(a[:, :3].T, a[:, 1:].T, axis=0), F),
    "cross_axisc": (lambda m: m.cross(m.arange(6.).reshape(2, 3), m.arange(3.), axisc=0),),
    "cross_bcast": (lambda m: m.cross(m.arange(6.).reshape(2, 3), m.ones((4, 1, 3))),),
    "trace": (lambda m, a: m.trace(a), A),
    "trace_offset": (lambda m, a: m.trace(a, 1), A),
    "trace_neg": (lambda m, a: m.trace(a, -2), A),
    "trace_axes": (lambda m, b: m.trace(b, 0, 1, 2), B3),
    "trace_dtype": (lambda m, a: m.trace(a, dtype=m.float32), A),
    "trace_bool": (lambda m: m.trace(m.ones((3, 3), dtype=bool)),),
    "trace_int8": (lambda m: m.trace(m.ones((3, 3), dtype=m.int8)),),
    "trace_array_offset": (lambda m, a: m.trace(a, m.array(1)), F),
    "vecdot": (lambda m, a: m.vecdot(a, a[0]), F),
    "vecdot_axis": (lambda m, a: m.vecdot(a, a[:, 0], axis=0), F),
    "vecdot_complex": (lambda m, c: m.vecdot(c, c[::-1]), C),
    "vecdot_preferred": (lambda m: m.vecdot(m.arange(3), m.arange(3),
                                            preferred_element_type=m.float32),),
    "matvec": (lambda m, b: m.matvec(b, b[0, 0]), B3),
    "vecmat": (lambda m, a: m.vecmat(a[:, 0], a), F),
    "vecmat_complex": (lambda m, c: m.vecmat(c, m.arange(9.).reshape(3, 3)), C),
    "vecmat_int": (lambda m: m.vecmat(m.arange(2), m.arange(6).reshape(2, 3)),),
    # einsum
    "einsum_matmul": (lambda m, a, b: m.einsum("ij,jk->ik", a, b), F, G),
    "einsum_implicit": (lambda m, a, b: m.einsum("ij,jk", a, b), F, G),
    "einsum_trace": (lambda m, a: m.einsum("ii", a[:, :3]), A),
    "einsum_diag": (lambda m, a: m.einsum("ii->i", a[:, :3]), A),
    "einsum_diag3": (lambda m: m.einsum("iij->ji", m.arange(18).reshape(3, 3, 2)),),
    "einsum_triple": (lambda m: m.einsum("iii->", m.arange(27).reshape(3, 3, 3)),),
    "einsum_sum": (lambda m, a: m.einsum("ij->", a), A),
    "einsum_transpose": (lambda m, a: m.einsum("ij->ji", a), A),
    "einsum_dot": (lambda m, v: m.einsum("i,i", v, v), V3),
    "einsum_outer": (lambda m, v: m.einsum("i,j->ij", v, m.arange(2)), V3),
    "einsum_batch": (lambda m, b: m.einsum("bij,bkj->bik", b, b), B3),
    "einsum_ellipsis": (lambda m, b, g: m.einsum("...ij,jk->...ik", b, g), B3, G),
    "einsum_chain": (lambda m, a, b: m.einsum("ij,jk,kl->il", a, b, b.T), F, G),
    "einsum_unoptimized": (lambda m, a, b: m.einsum("ij,jk,kl->il", a, b, b.T, optimize=False),
                           F, G),
    "einsum_greedy": (lambda m, a, b: m.einsum("ij,jk,kl->il", a, b, b.T, optimize="greedy"),
                      F, G),
    "einsum_path_given": (lambda m, a, b: m.einsum("ij,jk,kl->il", a, b, b.T,
                                                   optimize=[(1, 2), (0, 1)]), F, G),
    "einsum_interleaved": (lambda m, a: m.einsum(a, [0, 1], a[0], [1], [0]), A),
    "einsum_preferred": (lambda m, a: m.einsum("ij,kj->ik", a, a,
                                               preferred_element_type=m.float32), A),
    "einsum_int8": (lambda m: m.einsum("ij,jk->ik", m.ones((2, 3), m.int8),
                                       m.ones((3, 2), m.int8)),),
    "einsum_mixed": (lambda m, a: m.einsum("ij,j->i", a, 2 * m.ones(4, m.bfloat16)), F),
    "einsum_bool": (lambda m: m.einsum("i,i->", m.array([True, False]), m.array([True, True])),),
    "einsum_singleton": (lambda m: m.einsum("ij,ij->i", m.ones((2, 1)), m.ones((2, 3))),),
    "einsum_scalar_operand": (lambda m, v: m.einsum("i,->i", v, 2), V3),
    "einsum_batch3": (lambda m: m.einsum("ijk,ikl,ilm->ijm", m.ones((2, 3, 4)),
                                         m.ones((2, 4, 5)), m.ones((2, 5, 6))),),
    "einsum_disjoint": (lambda m: m.einsum("ab,cd,ef->", m.ones((2, 2)), m.ones((2, 2)),
                                           m.ones((2, 2))),),
    "einsum_complex": (lambda m, c: m.einsum("i,j->ij", c, c), C),
    # polynomials
    "poly": (lambda m, p: m.poly(p), P),
    "poly_int": (lambda m: m.poly(m.array([1, 2])),),
    "poly_empty": (lambda m: m.poly(m.array([])),),
    "poly_scalar": (lambda m: m.poly(3),),
    "poly_complex": (lambda m: m.poly(m.array([1 + 1j, 1 - 1j])),),
    "polyadd": (lambda m, p: m.polyadd(m.array([1, 2]), p), P),
    "polyadd_int": (lambda m: m.polyadd(m.array([1, 2]), m.array([3])),),
    "polysub": (lambda m, p: m.polysub(m.array([1, 2]), p), P),
    "polysub_int": (lambda m: m.polysub(m.array([1, 2, 3]), m.array([5])),),
    "polymul": (lambda m, p: m.polymul(p, p[:2]), P),
    "polymul_int": (lambda m: m.polymul(m.array([1, 2]), m.array([1, 2, 3])),),
    "polymul_trim": (lambda m: m.polymul(m.array([0, 0, 1, 2]), m.array([1, 2, 3]),
                                         trim_leading_zeros=True),),
    "polymul_zeros": (lambda m: m.polymul(m.array([0, 0, 1, 2]), m.array([1, 2, 3])),),
    "polymul_complex": (lambda m: m.polymul(m.array([1j, 2]), m.array([3.])),),
    "polymul_empty": (lambda m: m.polymul(m.array([]), m.array([3.])),),
    "polydiv": (lambda m: m.polydiv(m.array([1., 2, 3, 4]), m.array([1., 2])),),
    "polydiv_short": (lambda m: m.polydiv(m.array([1., 2]), m.array([1., 2, 3])),),
    "polydiv_trim": (lambda m: m.polydiv(m.array([1., 3, 3, 1]), m.array([1., 1]),
                                         trim_leading_zeros=True),),
    "polydiv_int": (lambda m: m.polydiv(m.array([2, 3, 3, 1]), m.array([2, 1])),),
    "polyder": (lambda m: m.polyder(m.array([1, 2, 3, 4]), 2),),
    "polyder_0": (lambda m, p: m.polyder(p, 0), P),
    "polyder_high": (lambda m, p: m.polyder(p, 5), P),
    "polyint": (lambda m: m.polyint(m.array([1, 2, 3])),),
    "polyint_k": (lambda m: m.polyint(m.array([1, 2, 3]), 2, k=m.array([1., 2.])),),
    "polyint_k_scalar": (lambda m: m.polyint(m.array([1, 2, 3]), 3, k=5),),
    "polyint_0": (lambda m, p: m.polyint(p, 0), P),
    "polyval_int": (lambda m: m.polyval(m.array([1, 2, 3]), 2),),
    "polyval": (lambda m, p, x: m.polyval(p, x), P, F),
    "polyval_weak": (lambda m: m.polyval(m.array([1, 2, 3]), 2.5),),
    "polyval_batched": (lambda m: m.polyval(m.arange(6.).reshape(3, 2),
                                            m.array([[1.], [2.]])),),
    "polyval_unroll": (lambda m, p, x: m.polyval(p, x, unroll=1), P, V3),
    "polyfit": (lambda m, x: m.polyfit(x, x ** 2 + 1, 2), X6, 1e-4),
    "polyfit_2d": (lambda m, x: m.polyfit(x, m.stack([x ** 2, x], 1), 1), X6, 1e-4),
    "polyfit_full": (lambda m, x: m.polyfit(x, x ** 2 + 1, 1, full=True), X6, 1e-4),
    "polyfit_w": (lambda m, x: m.polyfit(x, x ** 2 + 1, 1, w=x + 1), X6, 1e-4),
    "polyfit_cov": (lambda m, x: m.polyfit(x, x ** 2 + 1, 1, cov=True), X6, 1e-4),
    "polyfit_unscaled": (lambda m, x: m.polyfit(x, x ** 2 + 1, 1, cov="unscaled"), X6, 1e-4),
    "polyfit_cov_2d": (lambda m, x: m.polyfit(x, m.stack([x ** 2, x + 1], 1), 1, cov=True),
                       X6, 1e-4),
    "roots": (lambda m, p: m.roots(p), P),
    "roots_leading_zeros": (lambda m: m.roots(m.array([0, 0, 1., -3, 2])),),
    "roots_trailing_zeros": (lambda m: m.roots(m.array([1., -3, 2, 0, 0])),),
    "roots_complex": (lambda m: m.roots(m.array([1, 0, 1])),),
    "roots_nostrip": (lambda m: m.roots(m.array([0., 1., -3, 2]), strip_zeros=False),),
    "roots_all_zero": (lambda m: m.roots(m.array([0., 0.]), strip_zeros=False),),
    "roots_constant": (lambda m: m.roots(m.array([5.])),),
}


@pytest.mark.parametrize("name", sorted(ORACLE_CASES))
def test_like_oracle(name):
  theirs = jnp_oracle.oracle_results(ORACLE_CASES, _without_tolerance)[name]
  case = ORACLE_CASES[name]
  tol = case[-1] if isinstance(case[-1], float) else 1e-5
  fun, *args = case[:-1] if isinstance(case[-1], float) else case
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    ours = fun(jnp, *[_to(jnp, a) for a in args])
  _same(ours, theirs, rtol=tol, atol=tol)


NUMPY_CASES = {
    "kron": lambda m: m.kron(m.asarray(F), m.asarray(G[:2, :3])),
    "cross": lambda m: m.cross(m.asarray(B3[..., :3]), m.asarray(B3[..., 1:])),
    "trace": lambda m: m.trace(m.asarray(B3), -1, 2, 1),
    "einsum": lambda m: m.einsum("bij,jk,bik->bk", m.asarray(B3), m.asarray(G),
                                 m.asarray(np.ones((2, 3, 5), np.float32))),
    "einsum_diag": lambda m: m.einsum("iij,jk->ik", m.asarray(B3.reshape(3, 4, 2)[:, :3]),
                                      m.asarray(G[:2])),
    "polyval": lambda m: m.polyval(m.asarray(P), m.asarray(F)),
    "polymul": lambda m: m.polymul(m.asarray(F[0]), m.asarray(G[0])),
    "polydiv": lambda m: m.polydiv(m.asarray(G[0]), m.asarray(P))[0],
    "polyint": lambda m: m.polyint(m.asarray(G[0]), 2, k=m.asarray([1.0, 2.0])),
    "polyder": lambda m: m.polyder(m.asarray(G[0]), 2),
    "polyfit": lambda m: m.polyfit(m.asarray(X6), m.asarray(np.cos(X6)), 3),
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
def test_values_like_numpy(name):
  expected = NUMPY_CASES[name](np)
  ours = NUMPY_CASES[name](jnp)
  assert ours.shape == expected.shape
  np.testing.assert_allclose(np.asarray(ours, np.float64), expected, rtol=2e-4, atol=2e-4)


ERROR_CASES = {
    "cross_dims": lambda m: m.cross(m.arange(4.), m.arange(3.)),
    "trace_same_axes": lambda m: m.trace(m.ones((2, 3, 4)), 0, 2, -1),
    "trace_1d": lambda m: m.trace(m.ones(3)),
    "vecdot_axes": lambda m: m.vecdot(m.ones((2, 3)), m.ones(2)),
    "matvec_dims": lambda m: m.matvec(m.ones((2, 3)), m.ones(2)),
    "einsum_sizes": lambda m: m.einsum("ij,jk->ik", m.ones((2, 3)), m.ones((4, 5))),
    "einsum_count": lambda m: m.einsum("ij,jk->ik", m.ones((2, 3))),
    "einsum_output": lambda m: m.einsum("ij->ik", m.ones((2, 3))),
    "einsum_list": lambda m: m.einsum("ij,jk->ik", [[1, 2]], m.ones((2, 5))),
    "einsum_out": lambda m: m.einsum("i->i", m.ones(2), out=m.ones(2)),
    "poly_shape": lambda m: m.poly(m.ones((2, 3))),
    "polyder_negative": lambda m: m.polyder(m.array([1., 2]), -1),
    "polyint_k_shape": lambda m: m.polyint(m.array([1, 2, 3]), 2, k=m.array([1., 2., 3.])),
    "polyfit_deg": lambda m: m.polyfit(m.arange(6.), m.arange(6.), -1),
    "polyfit_x": lambda m: m.polyfit(m.ones((2, 2)), m.arange(6.), 1),
    "polyfit_len": lambda m: m.polyfit(m.arange(6.), m.arange(5.), 1),
    "polyfit_cov_points": lambda m: m.polyfit(m.arange(3.), m.arange(3.), 2, cov=True),
    "polyfit_int": lambda m: m.polyfit(m.arange(6), m.arange(6), 1),
    "roots_2d": lambda m: m.roots(m.ones((2, 2))),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_like_oracle(name):
  _, jjnp = _oracle()
  fun = ERROR_CASES[name]
  with pytest.raises(Exception) as theirs:
    fun(jjnp)
  with pytest.raises(type(theirs.value)) as ours:
    fun(jnp)
  assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("bij,bkj->bik", [(2, 3, 4), (2, 5, 4)]),
    ("ij->", [(2, 3)]),
])
def test_einsum_jaxpr_like_oracle(spec, shapes):
  jax, jjnp = _oracle()
  xs = [np.ones(s, np.float32) for s in shapes]
  theirs = str(jax.make_jaxpr(lambda *a: jjnp.einsum(spec, *a))(*xs))
  ours = str(purejax.make_jaxpr(lambda *a: jnp.einsum(spec, *a))(*xs))
  assert ours == theirs


def test_einsum_path_like_oracle():
  _, jjnp = _oracle()
  ops = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))]
  for optimize in ("auto", False, True, "greedy"):
    assert (jnp.einsum_path("ij,jk,kl->il", *ops, optimize=optimize)[0]
            == jjnp.einsum_path("ij,jk,kl->il", *ops, optimize=optimize)[0])


def test_roots_and_matrix_poly_need_concrete_values():
  with pytest.raises(errors.ConcretizationTypeError):
    purejax.jit(jnp.roots)(P)
  with pytest.raises(errors.ConcretizationTypeError):
    purejax.jit(jnp.poly)(F[:, :3])
  np.testing.assert_allclose(np.asarray(jnp.poly(F[:, :3])), np.poly(F[:, :3]),
                             rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------
# jit, vmap and gradients

X = RNG.randn(3, 4).astype(np.float32)
W = RNG.randn(5).astype(np.float32)

TRANSFORM_CASES = {
    "kron": (lambda x: jnp.kron(x, x[:2, :2]), X),
    "cross": (lambda x: jnp.cross(x[:, :3], x[:, 1:]), X),
    "trace": (lambda x: jnp.trace(x, 1), X),
    "vecdot": (lambda x: jnp.vecdot(x, x), X),
    "matvec": (lambda x: jnp.matvec(x, x[0]), X),
    "vecmat": (lambda x: jnp.vecmat(x[:, 0], x), X),
    "einsum": (lambda x: jnp.einsum("ij,kj->ik", x, x), X),
    "einsum_diag": (lambda x: jnp.einsum("ii->i", x[:, :3]), X),
    "einsum_chain": (lambda x: jnp.einsum("ij,jk,kl->il", x, x.T, x), X),
    "poly": (lambda w: jnp.poly(w), W),
    "polymul": (lambda w: jnp.polymul(w, w[:3]), W),
    "polydiv": (lambda w: jnp.polydiv(w, w[:3] + 3.)[0], W),
    "polyder": (lambda w: jnp.polyder(w, 2), W),
    "polyint": (lambda w: jnp.polyint(w, 2), W),
    "polyval": (lambda w: jnp.polyval(w, w), W),
    "polysub": (lambda w: jnp.polysub(w, w[:2]), W),
    "polyfit": (lambda w: jnp.polyfit(jnp.arange(5.), w, 2), W),
}


@pytest.mark.parametrize("name", sorted(TRANSFORM_CASES))
def test_jit_vmap_grad(name):
  f, x = TRANSFORM_CASES[name]
  y = f(x)
  np.testing.assert_allclose(np.asarray(purejax.jit(f)(x)), np.asarray(y), rtol=1e-5,
                             atol=1e-6)
  xs = np.stack([x, 2 * x + 1])
  np.testing.assert_allclose(np.asarray(purejax.vmap(f)(xs)),
                             np.stack([np.asarray(f(xx)) for xx in xs]), rtol=1e-4, atol=1e-5)
  check_grads(f, (x,), order=1, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)
