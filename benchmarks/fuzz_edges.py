"""Builders for benchmarks/fuzz.py's "edges" family: operations on the
dtypes and values where purejax once differed from JAX (issue 20): integer
power of 8/16-bit ints with large exponents, arithmetic shifts of unsigned
ints, integer fmod/rem by zero, unsigned indices near the top of their range
(take, take_along_axis), long float cumulative sums, erf/erfc of huge
float64, floor division by (signed) zero, modf of infinities.  With x64 on,
64-bit dtypes join in.
"""
from purejax._src.config import config

from fuzz_programs import Cand, _size

_SPECIAL = "[0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 5.0, -5.0, np.inf, -np.inf, np.nan, 1e300, -1e300]"


def _x64():
  return bool(config.jax_enable_x64)


def _ints(g, small_only=False):
  ts = ["int8", "uint8", "int16", "uint16"] + ([] if small_only else ["int32", "uint32"])
  return g.choice(ts + (["int64", "uint64"] if _x64() and not small_only else []))


def _operand(g, scope):
  v = g.pick(scope, lambda v: v.exact and v.kind != "b" and _size(v.shape) > 0)
  return v


def b_int_power(g, scope):
  a, b = _operand(g, scope), _operand(g, scope)
  if a is None or b is None or a.kind == "f" and not a.exact:
    return None
  t = _ints(g, small_only=g.chance(0.7))
  exp = f"(jnp.asarray({b.name}).astype(jnp.{t}) & jnp.{t}(31))"
  if g.chance(0.3):
    exp = f"jnp.full({a.shape}, {g.choice([16, 17, 23, 31, 40])}, jnp.{t})"
  return Cand(f"jnp.power(jnp.asarray({a.name}).astype(jnp.{t}), {exp})", [a, b])


def b_unsigned_shift(g, scope):
  a, b = _operand(g, scope), _operand(g, scope)
  if a is None or b is None:
    return None
  t = g.choice(["uint8", "uint16", "uint32"] + (["uint64"] if _x64() else []))
  op = g.choice(["lax.shift_right_arithmetic", "lax.shift_right_logical", "lax.shift_left"])
  x = f"jnp.asarray({a.name}).astype(jnp.{t})"
  return Cand(f"{op}({x}, jnp.broadcast_to(jnp.asarray({b.name}).astype(jnp.{t}), "
              f"jnp.shape({x})))", [a, b])


def b_int_div_zero(g, scope):
  a, b = _operand(g, scope), _operand(g, scope)
  if a is None or b is None:
    return None
  t = _ints(g)
  x = f"jnp.asarray({a.name}).astype(jnp.{t})"
  y = f"jnp.where(jnp.asarray({b.name}) % 3 == 0, 0, {b.name}).astype(jnp.{t})"
  op = g.choice(["jnp.fmod({}, {})", "jnp.remainder({}, {})", "{} % {}", "{} // {}",
                 "jnp.floor_divide({}, {})", "lax.rem({}, jnp.broadcast_to({}, jnp.shape({})))"])
  return Cand(op.format(x, y, x), [a, b])


def b_unsigned_index(g, scope):
  x = g.pick(scope, lambda v: _size(v.shape) > 0)
  if x is None:
    return None
  t = g.choice(["uint32", "uint64"] if _x64() else ["uint32"])
  top = 2 ** (64 if t == "uint64" else 32)
  idx = f"jnp.array([{top - 1}, {top // 2}, {top // 2 - 1}, 0, 1, 2, {top - 2}], jnp.{t})"
  if g.chance(0.5):
    mode = g.choice(["'clip'", "'fill'", "None", "'wrap'"])
    return Cand(f"jnp.take(jnp.ravel({x.name}), {idx}, mode={mode})", [x])
  return Cand(f"jnp.take_along_axis(jnp.ravel({x.name}), {idx}, axis=0, "
              f"mode={g.choice(['None', repr('clip'), repr('fill')])})", [x])


def b_long_cumsum(g, scope):
  n = g.choice([65537, 131072, 262144])
  dt = g.choice(["float32"] + (["float64"] if _x64() else []))
  fn = g.choice(["jnp.cumsum", "jnp.cumprod", "lax.cumlogsumexp"])
  if fn == "jnp.cumprod":   # JAX's float32 products drift by ~n ulps: keep within tolerance
    n = g.choice([1024, 4096])
  base = {"jnp.cumsum": "0.1", "jnp.cumprod": "1.00001", "lax.cumlogsumexp": "0.0"}[fn]
  rev = g.choice(["", ", reverse=True"]) if fn.startswith("lax") else ""
  x = g.pick(scope, lambda v: v.exact and v.kind == "f" and _size(v.shape) > 0)
  shift = f" + 0 * jnp.ravel({x.name})[0]" if x is not None and g.chance(0.3) else ""
  extra = ", 0" if fn.startswith("lax") else ""
  return Cand(f"{fn}(jnp.full(({n},), {base}, jnp.{dt}){shift}{extra}{rev})",
              [x] if shift else [])


def b_special_float(g, scope):
  a = g.pick(scope, lambda v: v.exact and v.kind == "f")
  dt = g.choice(["float32"] + (["float64"] if _x64() else []))
  vals = f"jnp.array({_SPECIAL}, jnp.{dt})"
  x = f"jnp.asarray({a.name}).astype(jnp.{dt})" if a is not None and g.chance(0.5) else vals
  r = g.rng.random()
  if r < 0.4:
    return Cand(f"jnp.floor_divide({vals}[:, None], {vals}[None, :])", [])
  if r < 0.55:
    return Cand(f"jnp.floor_divide({x}, {g.choice(['0.0', '-0.0', '-5.0', 'np.inf'])})",
                [a] if x != vals else [])
  if r < 0.75:
    return Cand(f"jnp.modf({x})", [a] if x != vals else [], nout=2, lhs="{0}, {1}")
  fn = g.choice(["jax.scipy.special.erf", "jax.scipy.special.erfc"])
  scale = g.choice(["1e150", "1e200", "1e300", "-1e300"])   # huge: the results are exact
  return Cand(f"{fn}({x} * {scale})", [a] if x != vals else [])


BUILDERS = [b_int_power, b_unsigned_shift, b_int_div_zero, b_unsigned_index, b_long_cumsum,
            b_special_float]
