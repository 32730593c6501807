"""scipy.spatial.transform's Rotation and Slerp as named tuples of arrays
(so they are pytrees that pass through jit, vmap and grad), as in JAX.

A rotation is stored as a unit quaternion, scalar last.  A single rotation
has quat of shape (4,), a stack of them (n, 4).  Conversions to Euler angles
follow Bernardes and Zanetti's direct quaternion formula; matrices become
quaternions by Shepperd's method (the best conditioned of four formulas).
"""
import typing

import numpy as np

import purejax.numpy as jnp
from purejax._src.numpy.util import check_arraylike, promote_dtypes_inexact

_AXES = {"x": 0, "y": 1, "z": 2}


def _as_float(name, x):
  check_arraylike(name, x)
  return promote_dtypes_inexact(x)[0]


def _check_last(name, x, size):
  if x.ndim not in (1, 2) or x.shape[-1] != size:
    raise ValueError(f"Rotation.{name}: expected shape ({size},) or (N, {size}), "
                     f"got {x.shape}")


def _normalize(q):
  return q / jnp.linalg.norm(q, axis=-1, keepdims=True)


def _compose(p, q):
  """The quaternion of applying q first, then p."""
  pv, pw = p[..., :3], p[..., 3:]
  qv, qw = q[..., :3], q[..., 3:]
  vector = pw * qv + qw * pv + jnp.cross(pv, qv)
  scalar = pw * qw - jnp.sum(pv * qv, axis=-1, keepdims=True)
  return jnp.concatenate([vector, scalar], axis=-1)


def _axis_quat(axis, angle):
  """Quaternions of rotations by angle (any shape) about a coordinate axis."""
  half = angle / 2
  zero = jnp.zeros_like(half)
  parts = [zero, zero, zero, jnp.cos(half)]
  parts[axis] = jnp.sin(half)
  return jnp.stack(parts, axis=-1)


def _rotvec_scale(angle, small, large):
  """large(angle) away from zero, the series small(angle) near it (both
  evaluated on safe arguments so that gradients stay finite)."""
  near = angle < 1e-3
  safe = jnp.where(near, 1.0, angle)
  return jnp.where(near, small(angle), large(safe))


def _parse_seq(seq):
  if not isinstance(seq, str) or not 1 <= len(seq) <= 3:
    raise ValueError(f"Expected axis specification to be a string of up to 3 characters, "
                     f"got {seq!r}")
  intrinsic = seq.isupper()
  if not (intrinsic or seq.islower()) or any(c not in _AXES for c in seq.lower()):
    raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                     f"['X', 'Y', 'Z'], got {seq}")
  axes = [_AXES[c] for c in seq.lower()]
  if any(a == b for a, b in zip(axes, axes[1:])):
    raise ValueError(f"Expected consecutive axes to be different, got {seq}")
  return axes, intrinsic


def _euler_from_quat(q, axes, intrinsic):
  if intrinsic:
    axes = axes[::-1]
  i, j, k = axes
  symmetric = i == k
  if symmetric:
    k = 3 - i - j
  sign = (i - j) * (j - k) * (k - i) // 2
  x = [q[..., n] for n in range(4)]
  if symmetric:
    a, b, c, d = x[3], x[i], x[j], x[k] * sign
  else:
    a, b, c, d = x[3] - x[j], x[i] + x[k] * sign, x[j] + x[3], x[k] * sign - x[i]
  middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
  half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
  eps = 1e-7
  at_zero, at_pi = jnp.abs(middle) <= eps, jnp.abs(middle - np.pi) <= eps
  # In gimbal lock only the sum (or difference) is defined: the last angle is set to zero.
  locked = at_zero | at_pi
  # In gimbal lock only the sum (or the difference) of the outer angles is
  # defined: the third angle of the sequence as given is set to zero.
  locked_angle = jnp.where(at_zero, 2 * half_sum, (1 if intrinsic else -1) * 2 * half_diff)
  first = jnp.where(locked, 0.0 if intrinsic else locked_angle, half_sum - half_diff)
  last = jnp.where(locked, locked_angle if intrinsic else 0.0, half_sum + half_diff)
  if not symmetric:
    last = last * sign
    middle = middle - np.pi / 2
  # The middle angle is already in range ([0, pi], or [-pi/2, pi/2]).
  wrap = lambda a: (a + np.pi) % (2 * np.pi) - np.pi
  angles = jnp.stack([wrap(first), middle, wrap(last)], axis=-1)
  return angles[..., ::-1] if intrinsic else angles


class Rotation(typing.NamedTuple):
  """A rotation, or a stack of them, in 3 dimensions."""
  quat: typing.Any

  @classmethod
  def concatenate(cls, rotations):
    """One stack of all the given rotations."""
    return cls(jnp.concatenate([jnp.atleast_2d(r.quat) for r in rotations]))

  @classmethod
  def from_euler(cls, seq, angles, degrees=False):
    """Rotations by angles about the axes of seq: lower case for extrinsic
    (fixed) axes, upper case for intrinsic (rotating) ones."""
    axes, intrinsic = _parse_seq(seq)
    angles = _as_float("from_euler", angles)
    if angles.ndim == 0 and len(axes) == 1:
      angles = angles[None]
    if angles.shape[-1] != len(axes) or angles.ndim > 2:
      raise ValueError(f"Expected angles of shape ({len(axes)},) or (N, {len(axes)}), "
                       f"got {angles.shape}")
    if degrees:
      angles = jnp.deg2rad(angles)
    quat = _axis_quat(axes[0], angles[..., 0])
    for n, axis in enumerate(axes[1:], 1):
      step = _axis_quat(axis, angles[..., n])
      quat = _compose(quat, step) if intrinsic else _compose(step, quat)
    return cls(quat)

  @classmethod
  def from_matrix(cls, matrix):
    """Rotations from 3x3 rotation matrices."""
    m = _as_float("from_matrix", matrix)
    if m.shape[-2:] != (3, 3) or m.ndim not in (2, 3):
      raise ValueError(f"Expected matrix of shape (3, 3) or (N, 3, 3), got {m.shape}")
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    candidates = []
    for i in range(3):
      j, k = (i + 1) % 3, (i + 2) % 3
      q = [None] * 4
      q[i] = 1 - trace + 2 * m[..., i, i]
      q[j] = m[..., j, i] + m[..., i, j]
      q[k] = m[..., k, i] + m[..., i, k]
      q[3] = m[..., k, j] - m[..., j, k]
      candidates.append(jnp.stack(q, axis=-1))
    candidates.append(jnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                                 m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1))
    decision = jnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1)
    choice = jnp.argmax(decision, axis=-1)
    stacked = jnp.stack(candidates, axis=-2)
    quat = jnp.take_along_axis(stacked, choice[..., None, None], axis=-2)[..., 0, :]
    return cls(_normalize(quat))

  @classmethod
  def from_mrp(cls, mrp):
    """Rotations from modified Rodrigues parameters."""
    p = _as_float("from_mrp", mrp)
    _check_last("from_mrp", p, 3)
    norm2 = jnp.sum(p * p, axis=-1, keepdims=True)
    return cls(jnp.concatenate([2 * p, 1 - norm2], axis=-1) / (1 + norm2))

  @classmethod
  def from_quat(cls, quat):
    """Rotations from quaternions (scalar last), normalized."""
    q = _as_float("from_quat", quat)
    _check_last("from_quat", q, 4)
    return cls(_normalize(q))

  @classmethod
  def from_rotvec(cls, rotvec, degrees=False):
    """Rotations from rotation vectors (axis times angle)."""
    v = _as_float("from_rotvec", rotvec)
    _check_last("from_rotvec", v, 3)
    if degrees:
      v = jnp.deg2rad(v)
    angle = jnp.linalg.norm(v, axis=-1, keepdims=True)
    scale = _rotvec_scale(angle, lambda a: 0.5 - a ** 2 / 48 + a ** 4 / 3840,
                          lambda a: jnp.sin(a / 2) / a)
    return cls(jnp.concatenate([scale * v, jnp.cos(angle / 2)], axis=-1))

  @classmethod
  def identity(cls, num=None, dtype=float):
    """The identity rotation (a single one; stacks are not supported, as in JAX)."""
    if num is not None:
      raise NotImplementedError("Rotation.identity: only num=None is supported")
    return cls(jnp.array([0, 0, 0, 1], dtype=dtype))

  @classmethod
  def random(cls, random_key, num=None):
    """Not provided, as in JAX."""
    raise NotImplementedError("Rotation.random is not implemented (JAX has no implementation either)")

  def __getitem__(self, indexer):
    if self.single:
      raise TypeError("Single rotation is not subscriptable.")
    return Rotation(self.quat[indexer])

  def __len__(self):
    if self.single:
      raise TypeError("Single rotation has no len().")
    return self.quat.shape[0]

  def __mul__(self, other):
    """The rotation that applies other, then self."""
    return Rotation(_compose(self.quat, other.quat))

  @property
  def single(self):
    """Whether this holds one rotation rather than a stack."""
    return self.quat.ndim == 1

  def apply(self, vectors, inverse=False):
    """Rotates vectors (shape (3,) or (N, 3)); inverse applies the inverse rotation."""
    v = _as_float("apply", vectors)
    _check_last("apply", v, 3)
    matrix = self.as_matrix()
    if inverse:
      matrix = jnp.swapaxes(matrix, -1, -2)
    return jnp.matmul(matrix, v[..., None])[..., 0]

  def as_euler(self, seq, degrees=False):
    """Euler angles for the axis sequence seq (see from_euler)."""
    axes, intrinsic = _parse_seq(seq)
    if len(axes) != 3:
      raise ValueError(f"Expected 3 axes, got {seq}.")
    angles = _euler_from_quat(self.quat, axes, intrinsic)
    return jnp.rad2deg(angles) if degrees else angles

  def as_matrix(self):
    """3x3 rotation matrices."""
    x, y, z, w = (self.quat[..., n] for n in range(4))
    rows = [[w * w + x * x - y * y - z * z, 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), w * w - x * x + y * y - z * z, 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), w * w - x * x - y * y + z * z]]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)

  def as_mrp(self):
    """Modified Rodrigues parameters (of the quaternion with non-negative scalar)."""
    q = self._positive_scalar()
    return q[..., :3] / (1 + q[..., 3:])

  def as_quat(self, canonical=False, scalar_first=False):
    """Unit quaternions, scalar last unless scalar_first; canonical picks the
    sign with a positive scalar part (or, when it is zero, the first nonzero
    vector part positive), as SciPy does."""
    q = self.quat
    if canonical:
      x, y, z, w = (q[..., n] for n in range(4))
      flip = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
      q = jnp.where(flip[..., None], -q, q)
    if scalar_first:
      q = jnp.concatenate([q[..., 3:], q[..., :3]], axis=-1)
    return q

  def as_rotvec(self, degrees=False):
    """Rotation vectors (axis times angle, the angle in [0, pi])."""
    q = self._positive_scalar()
    v = q[..., :3]
    angle = 2 * jnp.arctan2(jnp.linalg.norm(v, axis=-1, keepdims=True), q[..., 3:])
    scale = _rotvec_scale(angle, lambda a: 2 + a ** 2 / 12 + 7 * a ** 4 / 2880,
                          lambda a: a / jnp.sin(a / 2))
    rotvec = scale * v
    return jnp.rad2deg(rotvec) if degrees else rotvec

  def inv(self):
    """The inverse rotations."""
    return Rotation(jnp.concatenate([-self.quat[..., :3], self.quat[..., 3:]], axis=-1))

  def magnitude(self):
    """Rotation angles in [0, pi]."""
    return 2 * jnp.arctan2(jnp.linalg.norm(self.quat[..., :3], axis=-1),
                           jnp.abs(self.quat[..., 3]))

  def mean(self, weights=None):
    """The (weighted) mean rotation: the dominant eigenvector of the weighted
    sum of the quaternions' outer products."""
    q = jnp.atleast_2d(self.quat)
    w = jnp.ones(q.shape[0], q.dtype) if weights is None else _as_float("mean", weights)
    if w.ndim != 1 or w.shape[0] != q.shape[0]:
      raise ValueError("Expected weights to be a 1-d array with one weight per rotation, "
                       f"got shape {w.shape}")
    k = jnp.einsum("n,ni,nj->ij", w, q, q)
    _, vectors = jnp.linalg.eigh(k)
    return Rotation(vectors[:, -1])

  def _positive_scalar(self):
    q = self.quat
    return jnp.where(q[..., 3:] < 0, -q, q)


class Slerp(typing.NamedTuple):
  """Spherical linear interpolation between rotations at increasing times
  (build it with Slerp.init)."""
  times: typing.Any
  timedelta: typing.Any
  rotations: Rotation
  rotvecs: typing.Any

  @classmethod
  def init(cls, times, rotations):
    """An interpolator through rotations[i] at times[i]."""
    if not isinstance(rotations, Rotation):
      raise TypeError("`rotations` must be a `Rotation` instance.")
    if rotations.single or len(rotations) == 1:
      raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
    times = _as_float("Slerp", times)
    if times.ndim != 1:
      raise ValueError(f"Expected times to be specified in a 1 dimensional array, got "
                       f"{times.ndim} dimensions.")
    if times.shape[0] != len(rotations):
      raise ValueError(f"Expected number of rotations to be equal to number of timestamps "
                       f"given, got {len(rotations)} rotations and {times.shape[0]} "
                       "timestamps.")
    start = rotations[:-1]
    rotvecs = (start.inv() * rotations[1:]).as_rotvec()
    return cls(times, jnp.diff(times), start, rotvecs)

  def __call__(self, times):
    """The interpolated rotations at times (a scalar gives a single rotation)."""
    t = _as_float("Slerp", times)
    if t.ndim > 1:
      raise ValueError("`times` must be at most 1-dimensional.")
    single = t.ndim == 0
    t = jnp.atleast_1d(t)
    index = jnp.clip(jnp.searchsorted(self.times, t) - 1, 0, self.times.shape[0] - 2)
    alpha = (t - self.times[index]) / self.timedelta[index]
    step = Rotation.from_rotvec(self.rotvecs[index] * alpha[:, None])
    result = self.rotations[index] * step
    return Rotation(result.quat[0]) if single else result
