"""jnp.linalg against NumPy (float64), finite differences and live JAX
(values, dtypes, errors and gradients)."""
import inspect

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax.test_util import check_grads
from conftest import oracle

RNG = np.random.RandomState(1)
SQ = RNG.randn(4, 4)
SPD = SQ @ SQ.T + 4 * np.eye(4)
TALL = RNG.randn(5, 3)
BATCH = RNG.randn(2, 3, 3)
SING = np.array([[1., 2, 3], [2, 4, 6], [1, 0, 1]])   # rank 2
f32 = lambda x: np.asarray(x, np.float32)


def _close(a, b, tol=1e-5):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# -- values against NumPy, in float64 ------------------------------------------------------

CASES = [
    ("det", (SQ,), {}), ("det", (BATCH,), {}), ("det", (RNG.randn(2, 2),), {}),
    ("slogdet", (SQ,), {}), ("slogdet", (BATCH,), {}), ("inv", (BATCH,), {}),
    ("solve", (SQ, RNG.randn(4)), {}), ("solve", (BATCH, RNG.randn(3, 2)), {}),
    ("pinv", (TALL,), {}), ("pinv", (SPD,), dict(hermitian=True)),
    ("matrix_rank", (SING,), {}), ("matrix_rank", (BATCH,), {}),
    ("matrix_power", (SQ, 5), {}), ("matrix_power", (SQ, -2), {}),
    ("matrix_power", (SQ, 0), {}),
    ("cholesky", (SPD,), {}), ("cholesky", (SPD,), dict(upper=True)),
    ("eigvalsh", (SPD,), {}), ("eigvals", (SPD,), {}), ("svdvals", (TALL,), {}),
    ("qr", (TALL,), dict(mode="r")), ("cond", (SQ,), {}), ("cond", (SQ,), dict(p="fro")),
    ("cond", (SQ,), dict(p=-np.inf)), ("cond", (SING,), dict(p=1)),
    ("tensorinv", (RNG.randn(4, 2, 2),), dict(ind=1)),
    ("tensorsolve", (RNG.randn(2, 3, 6), RNG.randn(2, 3)), {}),
    ("multi_dot", ([RNG.randn(3), RNG.randn(3, 4), RNG.randn(4, 2)],), {}),
    ("cross", (RNG.randn(2, 3), RNG.randn(2, 3)), {}),
    ("outer", (RNG.randn(3), RNG.randn(2)), {}),
    ("matrix_transpose", (BATCH,), {}), ("diagonal", (BATCH,), dict(offset=1)),
    ("trace", (BATCH,), {}), ("vecdot", (BATCH, BATCH), {}),
    ("vector_norm", (BATCH,), dict(ord=3)), ("matrix_norm", (BATCH,), dict(ord="nuc")),
]


@pytest.mark.parametrize("name,args,kwargs", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_numpy(x64, name, args, kwargs):
  if name == "cholesky" and kwargs.get("upper"):
    want = np.linalg.cholesky(*args).T
  elif name == "eigvals":
    want = np.sort(np.linalg.eigvals(*args))
  elif name == "tensorinv":
    want = np.linalg.tensorinv(*args, ind=1)
  else:
    want = getattr(np.linalg, name)(*args, **kwargs)
  got = getattr(jnp.linalg, name)(*args, **kwargs)
  if name == "eigvals":
    got = np.sort(np.asarray(got))
  for g, w in zip(got if isinstance(got, tuple) else [got],
                  want if isinstance(want, tuple) else [want]):
    assert np.shape(g) == np.shape(w)
    _close(g, w, 1e-8)


@pytest.mark.parametrize("ord", [None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norms(x64, ord, keepdims):
  x = RNG.randn(3, 2, 4)
  got = jnp.linalg.norm(x, ord=ord, axis=(2, 0), keepdims=keepdims)
  _close(got, np.linalg.norm(x, ord=ord, axis=(2, 0), keepdims=keepdims), 1e-10)


@pytest.mark.parametrize("ord", [None, 0, 1, 2, 3, 0.5, np.inf, -np.inf])
def test_vector_norms(x64, ord):
  x = RNG.randn(3, 4)
  x[0, 0] = 0
  _close(jnp.linalg.norm(x, ord=ord, axis=1), np.linalg.norm(x, ord=ord, axis=1), 1e-10)
  _close(jnp.linalg.norm(x), np.linalg.norm(x), 1e-10)


def test_decompositions_reconstruct(x64):
  u, s, vh = jnp.linalg.svd(TALL, full_matrices=False)
  _close((u * s) @ vh, TALL, 1e-12)
  assert jnp.linalg.svd(TALL).U.shape == (5, 5)
  q, r = jnp.linalg.qr(TALL, mode="complete")
  _close(q @ r, TALL, 1e-12)
  assert q.shape == (5, 5)
  w, v = jnp.linalg.eigh(SPD, UPLO="U")
  _close((v * w) @ v.T, SPD, 1e-10)
  w, v = jnp.linalg.eig(SQ)
  _close(SQ @ v, v * w, 1e-10)
  u, s, vh = jnp.linalg.svd(SPD - 6 * np.eye(4), hermitian=True)
  _close(s, np.linalg.svd(SPD - 6 * np.eye(4), compute_uv=False), 1e-10)
  _close((u * s) @ vh, SPD - 6 * np.eye(4), 1e-10)
  x, resid, rank, sv = jnp.linalg.lstsq(TALL, SQ[:, :1].repeat(2, 0)[:5])
  want = np.linalg.lstsq(TALL, SQ[:, :1].repeat(2, 0)[:5], rcond=None)
  for a, b in zip((x, resid, rank, sv), want):
    _close(a, b, 1e-10)


def test_det_of_singular_matrix_has_adjugate_gradient(x64):
  # d det(A) = tr(adj(A) dA): finite where A is singular (rank n - 1), where
  # a solve would fail.  Row 2 is the sum of rows 0 and 1.
  a = np.array([[2., 1, 0, 1], [1, 3, 1, 0], [3, 4, 1, 1], [0, 1, 2, 5]])
  want = np.array([[-10., 12, -26, 8], [-10, 12, -26, 8], [10, -12, 26, -8], [0, 0, 0, 0]])
  _close(purejax.grad(jnp.linalg.det)(a), want, 1e-9)


def test_errors():
  with pytest.raises(ValueError, match="inconsistent size for core dimension 'm'"):
    jnp.linalg.solve(f32(SQ), f32(np.ones(3)))
  with pytest.raises(ValueError, match="batched 1-dimensional solve"):
    jnp.linalg.solve(f32(BATCH), f32(np.ones((2, 3))))
  with pytest.raises(ValueError, match=r"shape \[..., n, n\]"):
    jnp.linalg.det(f32(TALL))
  with pytest.raises(ValueError, match="Unknown slogdet method"):
    jnp.linalg.slogdet(f32(SQ), method="foo")
  with pytest.raises(ValueError, match="UPLO must be one of"):
    jnp.linalg.eigh(f32(SPD), UPLO="X")
  with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
    jnp.linalg.qr(f32(SQ), mode="x")
  with pytest.raises(ValueError, match="Invalid order '3' for matrix norm"):
    jnp.linalg.norm(f32(SQ), ord=3)
  with pytest.raises(ValueError, match="Improper number of axes"):
    jnp.linalg.norm(f32(BATCH), axis=(0, 1, 2))
  with pytest.raises(TypeError, match="exponent must be an integer"):
    jnp.linalg.matrix_power(f32(SQ), 1.5)
  with pytest.raises(ValueError, match="only one of tol or rtol"):
    jnp.linalg.matrix_rank(f32(SQ), 0.1, tol=0.1)
  with pytest.raises(ValueError, match="3-dimensional vectors"):
    jnp.linalg.cross(f32(np.ones(2)), f32(np.ones(3)))
  with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
    jnp.linalg.solve([[1., 0], [0, 1]], [1., 1])


# -- derivatives --------------------------------------------------------------------------

@pytest.mark.parametrize("name,arg,order", [
    ("det", SQ, 2), ("slogdet", SQ, 1), ("inv", SQ, 2), ("pinv", TALL, 1),
    ("cholesky", SPD, 1), ("eigvalsh", SPD, 1), ("norm", TALL, 2), ("svdvals", TALL, 1),
    ("matrix_power", SQ, 1), ("cond", SQ, 1)])
def test_grads_finite_differences(x64, name, arg, order):
  f = getattr(jnp.linalg, name)
  if name == "matrix_power":
    f = lambda x: jnp.linalg.matrix_power(x, -3)
  check_grads(f, (arg,), order)


def test_solve_grads(x64):
  check_grads(jnp.linalg.solve, (SQ, RNG.randn(4, 2)), 2)
  check_grads(jnp.linalg.solve, (BATCH, RNG.randn(3)), 1)


@pytest.mark.parametrize("name", ["det", "det4", "slogdet", "inv", "solve", "pinv",
                                  "cholesky", "eigh", "svd", "qr", "lstsq"])
def test_grads_match_jax(name):
  jax = oracle()
  a5 = f32(RNG.randn(5, 5))
  w = f32(RNG.randn(4, 4))

  def pick(np_):
    L = np_.linalg
    return {
        "det": lambda x: L.det(x),
        "det4": lambda x: L.det(x @ a5[:4, :4]),   # the LU path (n > 3)
        "slogdet": lambda x: L.slogdet(x)[1],
        "inv": lambda x: (L.inv(x) * w).sum(),
        "solve": lambda x: (L.solve(x, w[:, :2]) * w[:, 2:]).sum() + L.solve(x, w[0]).sum(),
        "pinv": lambda x: (L.pinv(x[:, :3]) * w[:3]).sum(),
        "cholesky": lambda x: (L.cholesky(x @ x.T + 4 * np.eye(4, dtype=np.float32)) * w
                               ).sum(),
        "eigh": lambda x: sum((t ** 2 * w[0]).sum() for t in L.eigh(x + x.T)),
        "svd": lambda x: sum(np_.abs(t).sum() for t in L.svd(x, full_matrices=False)),
        "qr": lambda x: sum((t * w).sum() for t in L.qr(x)),
        "lstsq": lambda x: (L.lstsq(x, w[:, 0])[0] * w[0]).sum(),
    }[name]

  a = f32(SQ)
  _close(purejax.grad(pick(jnp))(a), jax.jit(jax.grad(pick(jax.numpy)))(a), 1e-4)


def test_values_and_dtypes_match_jax():
  jax = oracle()
  jl, ol = jax.numpy.linalg, jnp.linalg
  a, b = f32(SQ), f32(RNG.randn(4, 2))
  calls = [("det", (a,)), ("slogdet", (a,)), ("inv", (a,)), ("solve", (a, b)),
           ("pinv", (a,)), ("matrix_rank", (a,)), ("norm", (a,)), ("cond", (a,)),
           ("qr", (a,)), ("eigvalsh", (a,)), ("svdvals", (a,)), ("lstsq", (a, b)),
           ("det", (np.eye(3, dtype=np.int32),)), ("norm", (np.arange(4),))]
  for name, args in calls:
    ours = getattr(ol, name)(*args)
    theirs = getattr(jl, name)(*args)
    for o, t in zip(ours if isinstance(ours, tuple) else [ours],
                    theirs if isinstance(theirs, tuple) else [theirs]):
      assert o.dtype == t.dtype and o.shape == t.shape, name
      _close(o, t, 1e-4)


def test_signatures_match_jax():
  jax = oracle()
  names = [n for n in dir(jax.numpy.linalg) if not n.startswith("_")]
  assert len(names) > 25
  for name in names:
    ours, theirs = getattr(jnp.linalg, name), getattr(jax.numpy.linalg, name)
    assert list(inspect.signature(ours).parameters) == \
        list(inspect.signature(theirs).parameters), name


# -- transformations -------------------------------------------------------------------

@pytest.mark.parametrize("name", ["det", "slogdet", "inv", "pinv", "eigh", "svd", "qr",
                                  "cholesky", "matrix_rank", "norm"])
def test_jit_and_vmap(name):
  f = getattr(jnp.linalg, name)
  xs = f32(np.stack([SPD, SPD + np.eye(4), 2 * SPD]))
  as_list = lambda t: list(t) if isinstance(t, tuple) else [t]
  eager = [as_list(f(x)) for x in xs]
  jitted = as_list(purejax.jit(f)(xs[0]))
  batched = as_list(purejax.vmap(f)(xs))
  for k, (j, b) in enumerate(zip(jitted, batched)):
    assert j.dtype == eager[0][k].dtype and j.shape == eager[0][k].shape
    _close(j, eager[0][k], 1e-6)
    _close(b, np.stack([e[k] for e in eager]), 1e-4)
