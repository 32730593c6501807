"""The operations benchmarks/fuzz.py's programs are made of: each builder
proposes one statement (a jnp/lax expression, or a nested function and a
control-flow call) over values in scope; ``Gen.commit`` checks it.
"""
from fuzz_programs import (DTYPES, Cand, Val, _broadcastable, _DIMS, _dt, _indent, _size)


_F_UNARY = [
    "jnp.negative({})", "jnp.abs({})", "jnp.sign({})", "jnp.floor({})", "jnp.ceil({})",
    "jnp.round({})", "jnp.trunc({})", "lax.round({}, lax.RoundingMethod.AWAY_FROM_ZERO)",
    "jnp.sqrt({})", "lax.rsqrt({})", "jnp.square({})", "jnp.reciprocal({})", "jnp.exp({})",
    "jnp.exp2({})", "jnp.expm1({})", "jnp.log({})", "jnp.log1p({})", "jnp.log2({})",
    "jnp.tanh({})", "lax.logistic({})", "jnp.sin({})", "jnp.cos({})", "jnp.tan({})",
    "jnp.arctan({})", "jnp.arcsin({})", "jnp.arccos({})", "jnp.sinh({})", "jnp.cosh({})",
    "jnp.arcsinh({})", "jnp.arccosh({})", "jnp.arctanh({})", "jnp.cbrt({})",
    "jnp.isfinite({})", "jnp.isnan({})", "jnp.isinf({})", "jnp.signbit({})",
    "lax.integer_pow({}, {k})", "jax.nn.relu({})", "jax.nn.gelu({})", "jax.nn.softplus({})",
    "jax.nn.silu({})", "{} * 0.5 + 1", "-{}", "abs({})", "jnp.sqrt(jnp.abs({}))",
    "jnp.log(jnp.abs({}) + 1)"]
_I_UNARY = ["jnp.negative({})", "jnp.abs({})", "jnp.sign({})", "jnp.invert({})", "~{}",
            "lax.population_count({})", "lax.clz({})", "jnp.square({})",
            "lax.integer_pow({}, {k})", "-{}"]
_B_UNARY = ["jnp.logical_not({})", "~{}", "jnp.invert({})"]


def b_unary(g, scope):
  x = g.pick(scope)
  table = {"f": _F_UNARY, "b": _B_UNARY}.get(x.kind, _I_UNARY)
  k = g.choice([-3, -2, -1, 0, 1, 2, 3, 5, 7] if x.kind == "f" else [0, 1, 2, 3, 5])
  return Cand(g.choice(table).format(x.name, k=k), [x])


_JNP_BINARY = {
    "any": ["jnp.add", "jnp.subtract", "jnp.multiply", "jnp.maximum", "jnp.minimum",
            "jnp.equal", "jnp.not_equal", "jnp.less", "jnp.less_equal", "jnp.greater",
            "jnp.greater_equal"],
    "num": ["jnp.divide", "jnp.floor_divide", "jnp.remainder", "jnp.fmod", "jnp.power"],
    "f": ["jnp.arctan2", "jnp.nextafter", "jnp.hypot", "jnp.logaddexp", "jnp.copysign"],
    "iu": ["jnp.bitwise_and", "jnp.bitwise_or", "jnp.bitwise_xor", "jnp.left_shift",
           "jnp.right_shift"],
    "b": ["jnp.logical_and", "jnp.logical_or", "jnp.logical_xor", "jnp.bitwise_and"],
}
_INFIX = {"any": ["+", "-", "*", "<", "<=", "==", "!=", ">", ">="], "num": ["/", "//", "%", "**"],
          "iu": ["&", "|", "^", "<<", ">>"], "b": ["&", "|", "^"], "f": []}
_LAX_BINARY = {
    "any": ["lax.max", "lax.min", "lax.eq", "lax.ne", "lax.lt", "lax.le", "lax.gt", "lax.ge"],
    "num": ["lax.add", "lax.sub", "lax.mul", "lax.div", "lax.rem"],
    "f": ["lax.pow", "lax.atan2", "lax.nextafter"],
    "iu": ["lax.shift_left", "lax.shift_right_arithmetic", "lax.shift_right_logical",
           "lax.bitwise_and", "lax.bitwise_or", "lax.bitwise_xor"],
    "b": ["lax.bitwise_and", "lax.bitwise_or", "lax.bitwise_xor"],
}


def _table(tables, kind):
  k = "iu" if kind in "iu" else kind
  return tables["any"] + (tables["num"] if kind != "b" else []) + tables[k]


def b_binary(g, scope):
  a = g.pick(scope)
  mode = g.choice(["jnp", "jnp", "infix", "lax", "lax", "scalar"])
  if mode == "scalar":
    op, lit = g.choice(_table(_INFIX, a.kind)), g.literal(a)
    return Cand(f"{a.name} {op} {lit}" if g.chance(0.7) else f"{lit} {op} {a.name}", [a])
  if mode == "lax":
    b = g.pick(scope, lambda v: v.shape == a.shape and v.dtype == a.dtype and v is not a)
    ops, be = [a, b], b and b.name
    if b is None or g.chance(0.3):
      b = g.pick(scope)
      be = g.coerce(b, a.shape, a.dtype)
      ops = [a, b] if be else [a]
      be = be or a.name
    return Cand(f"{g.choice(_table(_LAX_BINARY, a.kind))}({a.name}, {be})", ops)
  same = g.chance(0.6)
  b = g.pick(scope, lambda v: _broadcastable(v.shape, a.shape) and (v.dtype == a.dtype or not same))
  if b is None:
    return None
  if mode == "infix":
    return Cand(f"{a.name} {g.choice(_table(_INFIX, a.kind))} {b.name}", [a, b])
  return Cand(f"{g.choice(_table(_JNP_BINARY, a.kind))}({a.name}, {b.name})", [a, b])


def b_select(g, scope):
  x = g.pick(scope)
  r = g.rng.random()
  c = g.pick(scope, lambda v: v.kind == "b" and _broadcastable(v.shape, x.shape))
  cexpr, cops = (c.name, [c]) if c is not None and g.chance(0.7) else (
      f"{x.name} > {g.literal(x)}", [x])
  if r < 0.35:
    y = g.pick(scope, lambda v: _broadcastable(v.shape, x.shape))
    ye = y.name if g.chance(0.7) else g.literal(x)
    return Cand(f"jnp.where({cexpr}, {x.name}, {ye})", [x, y] + cops)
  if r < 0.55 or r < 0.7 and x.kind == "b":
    y = g.pick(scope)
    ye = g.coerce(y, x.shape, x.dtype)
    ce = g.coerce(c, x.shape, "bool") if c is not None else None
    if ye is None or ce is None:
      return None
    return Cand(f"lax.select({ce}, {x.name}, {ye})", [x, y, c])
  if r < 0.7:
    i, y = g.pick(scope, lambda v: v.kind in "iu"), g.pick(scope)
    ye = g.coerce(y, x.shape, x.dtype)
    if i is None or ye is None:
      return None
    ie = g.coerce(i, x.shape, "int32")
    return Cand(f"lax.select_n(lax.clamp(0, {ie}, 2), {x.name}, {ye}, -{x.name})", [x, y, i])
  if x.kind == "b":
    return None
  lo, hi = g.literal(x), g.literal(x)
  if r < 0.85:
    y = g.pick(scope, lambda v: _broadcastable(v.shape, x.shape))
    lo = g.choice([lo, "None", y.name])
    return Cand(f"jnp.clip({x.name}, {lo}, {hi})", [x, y])
  return Cand(f"lax.clamp({g.scalar(x.dtype, lo)}, {x.name}, {g.scalar(x.dtype, hi)})", [x])


def b_convert(g, scope):
  x, d = g.pick(scope), g.choice(DTYPES)
  r = g.rng.random()
  if r < 0.1:
    widths = {"float32": 4, "int32": 4, "uint32": 4, "int8": 1, "uint8": 1}
    same = [t for t in widths if widths[t] == widths.get(x.dtype) and t != x.dtype]
    if same:
      return Cand(f"lax.bitcast_convert_type({x.name}, {_dt(g.choice(same))})", [x])
  if r < 0.15:   # through a dtype the C code does not support
    return Cand(f"{x.name}.astype(jnp.float16).astype({_dt(d)})", [x])
  form = g.choice(["{}.astype({})", "lax.convert_element_type({}, {})",
                   "jnp.asarray({}, dtype={})"])
  return Cand(form.format(x.name, _dt(d)), [x])


def _factorization(g, size, rank):
  dims = [1] * rank
  n, p = size, 2
  while n > 1 and rank:
    while n % p:
      p += 1
    dims[int(g.rng.integers(rank))] *= p
    n //= p
  return tuple(dims) if rank else ()


def b_shape(g, scope):
  x = g.pick(scope, lambda v: _size(v.shape) > 0)
  if x is None:
    return None
  n, r, s = x.name, len(x.shape), x.shape
  op = g.choice(["reshape", "transpose", "slice", "slice", "rev", "squeeze", "expand",
                 "broadcast", "broadcast", "concat", "pad", "tile", "iota"])
  if op == "reshape":
    shape = _factorization(g, _size(s), g.choice([0, 1, 2, 3, 4]) if _size(s) == 1 else
                           g.choice([1, 2, 2, 3, 4]))
    if shape and g.chance(0.3):
      shape = tuple(-1 if i == 0 else d for i, d in enumerate(shape))
    return Cand(g.choice([f"{n}.reshape({shape})", f"jnp.reshape({n}, {shape})"]), [x])
  if op == "transpose" and r >= 2:
    perm = tuple(int(i) for i in g.rng.permutation(r))
    return Cand(g.choice([f"jnp.transpose({n}, {perm})", f"{n}.T",
                          f"jnp.swapaxes({n}, 0, -1)"]), [x])
  if op == "slice" and r >= 1:
    if g.chance(0.3):
      start = [int(g.rng.integers(d)) for d in s]
      limit = [int(g.rng.integers(a + 1, d + 1)) for a, d in zip(start, s)]
      strides = [g.choice([1, 1, 2, 3]) for _ in s]
      return Cand(f"lax.slice({n}, {tuple(start)}, {tuple(limit)}, {tuple(strides)})", [x])
    parts = []
    for d in s:
      k = g.rng.random()
      if k < 0.3:
        parts.append(":")
      elif k < 0.45:
        parts.append(str(int(g.rng.integers(-d, d))))
      else:
        a, b = sorted(int(t) for t in g.rng.integers(-d - 1, d + 2, 2))
        parts.append(f"{a}:{b}:{g.choice([1, 2, -1, -2, 3])}")
    return Cand(f"{n}[{', '.join(parts)}]", [x])
  if op == "rev" and r >= 1:
    dims = tuple(sorted({int(g.rng.integers(r)) for _ in range(2)}))
    return Cand(g.choice([f"lax.rev({n}, {dims})", f"jnp.flip({n}, {dims[0]})"]), [x])
  if op == "squeeze" and 1 in s:
    ax = g.choice([i for i, d in enumerate(s) if d == 1])
    return Cand(g.choice([f"jnp.squeeze({n}, {ax})", f"lax.squeeze({n}, ({ax},))"]), [x])
  if op in ("squeeze", "expand"):
    return Cand(g.choice([f"jnp.expand_dims({n}, {int(g.rng.integers(-r - 1, r + 1))})",
                          f"{n}[None]"]), [x])
  if op == "broadcast":
    lead = tuple(g.choice(_DIMS) for _ in range(g.choice([0, 1, 1, 2])))
    shape = lead + tuple(g.choice(_DIMS) if d == 1 else d for d in s)
    if shape == s:
      lead, shape = (2,) + lead, (2,) + shape
    dims = tuple(range(len(lead), len(shape)))
    return Cand(g.choice([f"jnp.broadcast_to({n}, {shape})",
                          f"lax.broadcast_in_dim({n}, {shape}, {dims})"]), [x])
  if op == "concat" and r >= 1:
    ax = int(g.rng.integers(r))
    y = g.pick(scope, lambda v: v.dtype == x.dtype or g.chance(0.3))
    shape2 = s[:ax] + (g.choice([1, 2, 3, 5]),) + s[ax + 1:]
    ye = g.coerce(y, shape2, x.dtype)
    if ye is None:
      return None
    if g.chance(0.2):
      ye2 = g.coerce(y, s, x.dtype)
      return Cand(f"jnp.stack([{n}, {ye2}], axis={int(g.rng.integers(-r - 1, r + 1))})", [x, y])
    return Cand(f"jnp.concatenate([{n}, {ye}], axis={ax})", [x, y])
  if op == "pad" and r >= 1:
    if g.chance(0.5):
      cfg = [(int(g.rng.integers(-1, 3)), int(g.rng.integers(-1, 3)), g.choice([0, 0, 1]))
             for _ in s]
      return Cand(f"lax.pad({n}, {g.scalar(x.dtype)}, {cfg})", [x])
    widths = [(g.choice([0, 1, 2]), g.choice([0, 1, 3])) for _ in s]
    mode = g.choice(["constant", "edge", "reflect", "wrap", "symmetric"])
    return Cand(f"jnp.pad({n}, {widths}, mode={mode!r})", [x])
  if op == "tile" and r >= 1:
    ax = int(g.rng.integers(r))
    return Cand(g.choice([f"jnp.tile({n}, {tuple(g.choice([1, 2, 3]) for _ in s)})",
                          f"jnp.repeat({n}, {g.choice([2, 3])}, axis={ax})",
                          f"jnp.roll({n}, {int(g.rng.integers(-5, 6))}, axis={ax})"]), [x])
  if op == "iota" and r >= 1:
    d = int(g.rng.integers(r))
    return Cand(f"{n} + lax.broadcasted_iota({_dt(x.dtype)}, {s}, {d})", [x])
  return None


_JNP_REDUCE = ["sum", "max", "min", "prod", "mean", "any", "all", "var", "argmax", "argmin"]


def b_reduce(g, scope):
  x = g.pick(scope, lambda v: _size(v.shape) > 0)
  if x is None:
    return None
  n, r = x.name, len(x.shape)
  kind = g.rng.random()
  axis = None if r == 0 or g.chance(0.2) else int(g.rng.integers(-r, r))
  if kind < 0.5:
    fn = g.choice(_JNP_REDUCE)
    if fn not in ("argmax", "argmin") and r >= 2 and g.chance(0.3):
      axis = tuple(sorted({int(a) for a in g.rng.integers(0, r, 2)}))
    return Cand(f"jnp.{fn}({n}, axis={axis}, keepdims={g.chance(0.3)})", [x])
  if kind < 0.7 and r >= 1:
    axes = tuple(sorted({int(a) for a in g.rng.integers(0, r, g.choice([1, 1, 2]))}))
    fn = g.choice(["reduce_max", "reduce_min", "reduce_sum", "reduce_prod", "reduce_and",
                   "reduce_or", "argmax", "argmin"])
    if fn in ("argmax", "argmin"):
      return Cand(f"lax.{fn}({n}, {axes[0]}, jnp.int32)", [x])
    return Cand(f"lax.{fn}({n}, {axes})", [x])
  if kind < 0.9 and r >= 1:
    ax = int(g.rng.integers(r))
    return Cand(g.choice([f"jnp.cumsum({n}, axis={ax})", f"jnp.cumprod({n}, axis={ax})",
                          f"lax.cummax({n}, axis={ax}, reverse={g.chance(0.5)})",
                          f"lax.cummin({n}, axis={ax}, reverse={g.chance(0.5)})",
                          f"lax.cumsum({n}, axis={ax}, reverse={g.chance(0.5)})"]), [x])
  if x.kind == "f" and r >= 1:
    return Cand(g.choice([f"jax.nn.softmax({n}, axis=-1)", f"jax.nn.log_softmax({n}, axis=0)",
                          f"{n} - jnp.mean({n}, axis=-1, keepdims=True)"]), [x])
  return None


def _index_array(g, scope, n):
  """An integer index array expression (maybe out of bounds) and operands."""
  v = g.pick(scope, lambda v: v.kind in "iu" and 0 < _size(v.shape) <= 64 and len(v.shape) <= 2)
  if v is None or g.chance(0.3):
    idx = [int(i) for i in g.rng.integers(-n - 2, n + 3, g.choice([1, 2, 3, 5]))]
    return f"jnp.array({idx})", []
  return v.name, [v]


def _starts(g, scope, rank):
  """Start indices for a dynamic slice: literals or scalars from integer
  values (all of one dtype, as lax requires)."""
  starts, ops = zip(*[g.int_scalar(scope) for _ in range(rank)])
  if len({o[0].dtype if o else "int32" for o in ops}) > 1:   # a literal is an int32
    starts = [f"{e}.astype(jnp.int32)" if o else e for e, o in zip(starts, ops)]
  return starts, ops


def b_index(g, scope):
  x = g.pick(scope, lambda v: _size(v.shape) > 0 and len(v.shape) >= 1)
  if x is None:
    return None
  n, r, s = x.name, len(x.shape), x.shape
  op = g.choice(["dslice", "dslice", "dupdate", "gather", "gather", "take", "scatter"])
  starts, ops = _starts(g, scope, r)
  if op == "dslice":
    sizes = tuple(int(g.rng.integers(1, d + 1)) for d in s)
    return Cand(f"lax.dynamic_slice({n}, ({''.join(e + ', ' for e in starts)}), {sizes})",
                [x] + sum(ops, []))
  if op == "dupdate":
    y = g.pick(scope)
    ue = g.coerce(y, tuple(int(g.rng.integers(1, d + 1)) for d in s), x.dtype)
    if ue is None:
      return None
    return Cand(f"lax.dynamic_update_slice({n}, {ue}, ({''.join(e + ', ' for e in starts)}))",
                [x, y] + sum(ops, []))
  idx, ops = _index_array(g, scope, s[0])
  if op == "gather":
    if r >= 2 and g.chance(0.3):
      idx2, ops2 = _index_array(g, scope, s[1])
      return Cand(f"{n}[{idx}, jnp.resize({idx2}, jnp.shape({idx}))]", [x] + ops + ops2)
    return Cand(g.choice([f"{n}[{idx}]", f"{n}[..., {idx}]"]), [x] + ops)
  if op == "take":
    ax = int(g.rng.integers(r))
    mode = g.choice(["'clip'", "'fill'", "'wrap'", "None"])
    if g.chance(0.3):
      return Cand(f"{n}.at[{idx}].get(mode='fill', fill_value={g.literal(x)})", [x] + ops)
    return Cand(f"jnp.take({n}, {idx}, axis={ax}, mode={mode})", [x] + ops)
  upd = g.choice(["add", "max", "min", "set", "mul"])
  if upd == "set":   # distinct indices: which duplicate wins is unspecified
    idx, ops = f"jnp.array({sorted(set(int(i) for i in g.rng.integers(0, s[0], 3)))})", []
  y = g.pick(scope)
  ye = g.literal(x) if g.chance(0.3) else None
  mode = g.choice(["", ", mode='drop'", ", mode='clip'"])
  src = f"{n}.at[{idx}].{upd}({{}}{mode})"
  if ye is not None:
    return Cand(src.format(ye), [x] + ops)
  # The update has the shape of x[idx]: idx's shape then x's other axes.
  update = f"jnp.resize({y.name}, jnp.shape({idx}) + {s[1:]}).astype({_dt(x.dtype)})"
  return Cand(src.format(update), [x, y] + ops)


def b_dot(g, scope):
  a = g.pick(scope, lambda v: v.kind in "fiu" and 1 <= len(v.shape) <= 3 and _size(v.shape) > 0)
  if a is None:
    return None
  y = g.pick(scope, lambda v: v.kind in "fiu" and _size(v.shape) > 0)
  dtype = y.dtype if g.chance(0.6) else a.dtype
  n, s = a.name, a.shape
  k, m2 = s[-1], g.choice([1, 2, 3, 5, 8])
  if len(s) == 1:
    b = g.coerce(y, (k,), dtype)
    forms = [f"jnp.dot({n}, {b})", f"jnp.inner({n}, {b})", f"jnp.outer({n}, {b})",
             f"{n} @ {g.coerce(y, (k, m2), dtype)}"]
  elif len(s) == 2:
    b, bt = g.coerce(y, (k, m2), dtype), g.coerce(y, (m2, k), dtype)
    same = g.coerce(y, (k, m2), a.dtype)
    forms = [f"{n} @ {b}", f"jnp.dot({n}, {b})", f"jnp.matmul({n}, {g.coerce(y, (k,), dtype)})",
             f"jnp.einsum('ij,kj->ik', {n}, {bt})",
             f"lax.dot_general({n}, {same}, (((1,), (0,)), ((), ())))",
             f"jnp.tensordot({n}, {b}, axes=1)",
             # transposed operands (BLAS reads them in place)
             f"{n}.T @ {g.coerce(y, (s[0], m2), dtype)}",
             f"{g.coerce(y, (m2, s[0]), dtype)} @ {n}",
             f"jnp.einsum('ji,jk->ik', {n}, {g.coerce(y, (s[0], m2), dtype)})",
             f"jnp.einsum('ij,kj->ki', {n}, {bt})"]
  else:
    b = g.coerce(y, (s[0], k, m2), dtype)
    same = g.coerce(y, (s[0], k, m2), a.dtype)
    forms = [f"jnp.matmul({n}, {b})", f"jnp.einsum('bij,bjk->bik', {n}, {b})",
             f"lax.dot_general({n}, {same}, (((2,), (1,)), ((0,), (0,))))"]
  if None in (b,):
    return None
  form = g.choice(forms)
  return None if "None" in form else Cand(form, [a, y])


# -- control flow ---------------------------------------------------------------------------

def _params(g, vals, loose=False, prefix="a"):
  """Fresh parameters with the shapes and dtypes of ``vals`` (floats marked
  inexact when ``loose``, so the body keeps them away from discontinuities)."""
  return [Val(g.fresh(prefix), v.shape, v.dtype, v.exact and not (loose and v.kind == "f"))
          for v in vals]


def _carried(g, scope, k):
  vals = [v for v in scope if _size(v.shape) <= 5000]
  if not vals:
    return []
  return [vals[i] for i in g.rng.choice(len(vals), min(k, len(vals)), replace=False)]


def _ret(exprs):
  return "(" + "".join(e + ", " for e in exprs) + ")"


def _def(name, params, block, returns):
  return ([f"def {name}({params}):"] + _indent([line for s in block.stmts for line in s.lines])
          + [f"  return {returns}"])


def b_cond(g, scope):
  ops = _carried(g, scope, int(g.rng.integers(1, 4)))
  if not ops:
    return None
  pred, pops = g.predicate(scope)
  nbranch = g.choice([2, 2, 3])
  blocks, lines, names, targets = [], [], [], None
  for _ in range(nbranch):
    params = _params(g, ops)
    block = g.body(params, scope)
    if targets is None:
      made = [v for st in block.stmts for v in st.outs] or params
      targets = [made[-1]] + ([g.choice(made)] if g.chance(0.4) else [])
    rets = [g.coerce_from(block, t)[0] for t in targets]
    name = g.fresh("branch")
    lines += _def(name, ", ".join(p.name for p in params), block, _ret(rets))
    blocks.append(block)
    names.append(name)
  free = set().union(*[b.free() for b in blocks])
  extra = [v for v in scope if v.name in free]
  args = ", ".join(v.name for v in ops)
  if nbranch == 2:
    expr = f"lax.cond({pred}, {names[0]}, {names[1]}, {args})"
  else:
    i, iops = g.int_scalar(scope)
    expr, pops = f"lax.switch({i}, [{', '.join(names)}], {args})", iops
  lhs = _ret([f"{{{j}}}" for j in range(len(targets))])
  return Cand(expr, ops + pops + extra, lines, len(targets), lhs)


def b_loop(g, scope):
  kind = g.choice(["scan", "fori", "while"])
  carries = _carried(g, scope, int(g.rng.integers(1, 3)))
  if not carries:
    return None
  loose = g.chance(0.5)
  cparams = _params(g, carries, loose, "c")
  extra_params, operands = [], list(carries)
  xs = None
  if kind == "scan":
    xs = g.pick(scope, lambda v: len(v.shape) >= 1 and v.shape[0] >= 1 and _size(v.shape) <= 20000)
    if xs is not None:
      operands.append(xs)
      xe = xs.name if xs.shape[0] <= 9 else f"{xs.name}[:{g.choice([3, 7])}]"
      extra_params = _params(g, [Val("", xs.shape[1:], xs.dtype, xs.exact)], loose, "x")
  elif kind == "fori":
    extra_params = [Val(g.fresh("i"), (), "int32")]
  block = g.body(cparams + extra_params, scope)
  new = [g.coerce_from(block, c)[0] for c in cparams]
  init = _ret([v.name for v in carries])
  unpack = f"  {_ret([p.name for p in cparams])} = carry"
  name = g.fresh("body")
  if kind == "scan":
    made = [v for st in block.stmts for v in st.outs]
    y = made[-1].name if made and g.chance(0.7) else None
    sig = f"carry, {extra_params[0].name}" if xs is not None else "carry, _"
    lines = _def(name, sig, block, f"{_ret(new)}, {y}")
    lines.insert(1, unpack)
    length = "" if xs is not None else f", length={g.choice([1, 3, 4])}"
    expr = (f"lax.scan({name}, {init}, {xe if xs is not None else 'None'}{length}, "
            f"reverse={g.chance(0.3)})")
    lhs = _ret([f"{{{j}}}" for j in range(len(carries))])
    lhs += f", {{{len(carries)}}}" if y else ", _"
    return Cand(expr, operands + [v for v in scope if v.name in block.free()], lines,
                len(carries) + (1 if y else 0), lhs)
  if kind == "fori":
    lines = _def(name, f"{extra_params[0].name}, carry", block, _ret(new))
    lines.insert(1, unpack)
    lo, hi, ops = g.choice([0, 1]), g.choice([0, 2, 3, 5]), []
    if g.chance(0.4):   # traced bounds: a while loop
      e, ops = g.int_scalar(scope)
      hi = f"lax.clamp(0, jnp.asarray({e}).astype(jnp.int32), 5)"
    expr = f"lax.fori_loop({lo}, {hi}, {name}, {init})"
    return Cand(expr, operands + ops + [v for v in scope if v.name in block.free()], lines,
                len(carries), _ret([f"{{{j}}}" for j in range(len(carries))]))
  # while: a counter bounds the trip count; the carries may end it earlier.
  counter = g.fresh("n")
  limit = g.choice([0, 1, 3, 4])
  cond_name = g.fresh("cond")
  extra_pred = ""
  intc = [p for p in cparams if p.kind in "iub" and p.exact and _size(p.shape) > 0]
  if intc and g.chance(0.5):
    pe, _ = g.predicate(intc)
    extra_pred = f" & jnp.logical_not({pe})"
  lines = ([f"def {cond_name}(state):", f"  {counter}, {_ret([p.name for p in cparams])} = state",
            f"  return ({counter} < {limit}){extra_pred}"] +
           _def(name, "state", block, f"({counter} + 1, {_ret(new)})"))
  lines.insert(4, f"  {counter}, {_ret([p.name for p in cparams])} = state")
  expr = f"lax.while_loop({cond_name}, {name}, (jnp.int32(0), {init}))"
  lhs = "{0}, " + _ret([f"{{{j + 1}}}" for j in range(len(carries))])
  return Cand(expr, operands + [v for v in scope if v.name in block.free()], lines,
              len(carries) + 1, lhs)


def b_jit(g, scope):
  ops = _carried(g, scope, int(g.rng.integers(1, 3)))
  if not ops:
    return None
  params = _params(g, ops)
  block = g.body(params, scope)
  made = [v for st in block.stmts for v in st.outs] or params
  name = g.fresh("inner")
  lines = _def(name, ", ".join(p.name for p in params), block, made[-1].name)
  return Cand(f"jax.jit({name})({', '.join(v.name for v in ops)})",
              ops + [v for v in scope if v.name in block.free()], lines)


from fuzz_edges import BUILDERS as EDGE_BUILDERS  # noqa: E402

BUILDERS = {"edges": EDGE_BUILDERS, "unary": [b_unary], "binary": [b_binary], "select": [b_select],
            "convert": [b_convert], "shape": [b_shape], "reduce": [b_reduce],
            "index": [b_index], "dot": [b_dot], "control": [b_cond, b_loop, b_loop, b_jit]}
