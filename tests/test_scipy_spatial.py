"""purejax.scipy.spatial.transform's Rotation and Slerp against SciPy
(float64, Euler angles in gimbal lock included) and JAX, as pytrees under
jit, vmap and grad."""
import itertools

import numpy as np
import pytest

import purejax
from purejax.scipy.spatial.transform import Rotation, Slerp
from purejax._src.test_util import check_grads

from conftest import oracle

st = pytest.importorskip("scipy.spatial.transform")

RNG = np.random.RandomState(0)
SEQS = ["".join(p) for p in itertools.product("xyz", repeat=3) if p[0] != p[1] != p[2]]
SEQS += [s.upper() for s in SEQS]


def _quats(n=6):
  return RNG.randn(n, 4)


def _close(a, b, tol=1e-12):
  np.testing.assert_allclose(np.asarray(a), b, rtol=tol, atol=tol)


@pytest.mark.parametrize("seq", SEQS)
def test_euler_against_scipy(seq, x64):
  q = _quats()
  _close(Rotation.from_quat(q).as_euler(seq), st.Rotation.from_quat(q).as_euler(seq))
  _close(Rotation.from_quat(q).as_euler(seq, degrees=True),
         st.Rotation.from_quat(q).as_euler(seq, degrees=True), 1e-10)
  angles = RNG.uniform(-3, 3, size=(5, 3))
  _close(Rotation.from_euler(seq, angles).as_matrix(),
         st.Rotation.from_euler(seq, angles).as_matrix())
  # Gimbal lock: the middle angle at 0 or pi (symmetric sequences), +-pi/2 (others).
  locked = np.array([[0.3, 0., 0.5], [0.3, np.pi, 0.5], [0.3, np.pi / 2, 0.5],
                     [0.3, -np.pi / 2, 0.5], [0.3, 1.0, 0.5]])
  q = st.Rotation.from_euler(seq, locked).as_quat()
  _close(Rotation.from_quat(q).as_euler(seq), st.Rotation.from_quat(q).as_euler(seq), 1e-9)


def test_partial_sequences(x64):
  for seq, angles in (("x", 0.7), ("ZY", RNG.randn(4, 2)), ("X", RNG.randn(3, 1))):
    _close(Rotation.from_euler(seq, angles, degrees=True).as_quat(),
           st.Rotation.from_euler(seq, angles, degrees=True).as_quat())


def test_conversions_against_scipy(x64):
  q = _quats()
  q[0] = [0, 0, 0, 1]  # the identity: small-angle series
  q[1] = [1e-5, -2e-5, 0, 1]
  q[2] = [0.3, 0.1, 0.2, -0.9]  # negative scalar part
  ours, theirs = Rotation.from_quat(q), st.Rotation.from_quat(q)
  _close(ours.as_quat(), theirs.as_quat())
  _close(ours.as_quat(canonical=True, scalar_first=True),
         theirs.as_quat(canonical=True, scalar_first=True))
  for name in ("as_matrix", "as_rotvec", "as_mrp", "magnitude"):
    _close(getattr(ours, name)(), getattr(theirs, name)())
  _close(ours.as_rotvec(degrees=True), theirs.as_rotvec(degrees=True), 1e-10)
  _close(Rotation.from_matrix(theirs.as_matrix()).as_matrix(), theirs.as_matrix())
  _close(Rotation.from_rotvec(theirs.as_rotvec()).as_matrix(), theirs.as_matrix())
  _close(Rotation.from_mrp(theirs.as_mrp()).as_matrix(), theirs.as_matrix())
  _close((ours * ours[::-1]).as_matrix(), (theirs * theirs[::-1]).as_matrix())
  _close(ours.inv().as_matrix(), theirs.inv().as_matrix())
  v = RNG.randn(6, 3)
  _close(ours.apply(v), theirs.apply(v))
  _close(ours.apply(v, inverse=True), theirs.apply(v, inverse=True))
  _close(ours[2].apply(v), theirs[2].apply(v))
  _close(ours[2].apply(v[0]), theirs[2].apply(v[0]))
  w = RNG.uniform(0.5, 2, 6)
  _close(ours.mean(w).as_matrix(), theirs.mean(w).as_matrix(), 1e-10)
  _close(Rotation.concatenate([ours[0], ours[1:3]]).as_quat(),
         st.Rotation.concatenate([theirs[0], theirs[1:3]]).as_quat())
  assert len(ours) == 6 and ours[1].single and not ours.single


def test_slerp_against_scipy(x64):
  times = np.array([0., 1, 3, 3.5])
  rotations = Rotation.from_quat(_quats(4))
  ours = Slerp.init(times, rotations)
  theirs = st.Slerp(times, st.Rotation.from_quat(np.asarray(rotations.quat)))
  t = np.array([0, 0.5, 1, 2, 3, 3.2, 3.5])
  _close(ours(t).as_matrix(), theirs(t).as_matrix())
  assert ours(1.5).single


def test_against_jax():
  oracle()
  from jax.scipy.spatial.transform import Rotation as JR, Slerp as JS
  q = _quats().astype(np.float32)
  ours, theirs = Rotation.from_quat(q), JR.from_quat(q)
  for name in ("as_matrix", "as_rotvec", "as_mrp", "magnitude", "as_quat"):
    a, b = getattr(ours, name)(), getattr(theirs, name)()
    assert a.dtype == b.dtype
    _close(a, b, 2e-6)
  for seq in ("xyz", "ZXZ", "yzx"):
    _close(ours.as_euler(seq), theirs.as_euler(seq), 2e-6)
  assert Rotation.identity().quat.dtype == JR.identity().quat.dtype
  t = np.array([0., 1, 3], np.float32)
  _close(Slerp.init(t, ours[:3])(np.array([0.5, 2.], np.float32)).as_quat(),
         JS.init(t, theirs[:3])(np.array([0.5, 2.], np.float32)).as_quat(), 2e-6)


def test_errors():
  r = Rotation.from_quat(np.array([0., 0, 0, 1]))
  with pytest.raises(TypeError, match="no len"):
    len(r)
  with pytest.raises(TypeError, match="subscriptable"):
    r[0]
  with pytest.raises(ValueError, match="consecutive"):
    Rotation.from_euler("xxy", np.zeros(3))
  with pytest.raises(ValueError, match="shape"):
    Rotation.from_quat(np.ones(3))
  with pytest.raises(NotImplementedError):
    Rotation.random(None)


def test_pytree_jit_vmap_grad(x64):
  q = _quats()
  rotations = Rotation.from_quat(q)
  f = lambda r, v: r.apply(v)
  v = RNG.randn(6, 3)
  _close(purejax.jit(f)(rotations, v), f(rotations, v))
  _close(purejax.vmap(lambda q_, v_: Rotation.from_quat(q_).as_euler("xyz"))(q, v),
         np.stack([Rotation.from_quat(x).as_euler("xyz") for x in q]))
  check_grads(lambda x: Rotation.from_rotvec(x).as_matrix(), (RNG.randn(3),), order=1)
  check_grads(lambda x: Rotation.from_quat(x).as_rotvec(), (q[3],), order=1)
