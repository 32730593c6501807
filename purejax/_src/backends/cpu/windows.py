"""The windowed primitives as native steps: ``reduce_window_sum`` / ``_max`` /
``_min`` (sum, max and min pooling), the general ``reduce_window`` when its
computation is a chain of elementwise operations of ``codegen_ops``,
``select_and_gather_add`` (forward-mode max pooling) and
``select_and_scatter_add`` (the gradient of max pooling).

Semantics are those of the NumPy implementations (lax/windowed.py,
lax/windowed_numpy.py), which follow XLA's CPU loops: every output folds its
window's elements one at a time in row-major window order from the init
value, leaving out padding and the holes of base dilation.
``select_and_scatter_add`` first picks, in each window, the first element and
switches to a later one whenever ``select(picked, x)`` fails (padding takes
part, holding the losing key; a pick there is dropped), then each operand
element sums the source values of the windows that picked it, in row-major
window order, from 0.

Loops: the outputs are walked as rows (all dims but the last) cut into
chunks of at most ``_CHUNK`` elements; OpenMP threads share the chunks, and
each chunk is computed by one thread in one fixed order, so the bits do not
depend on the thread count.  Within a chunk the window offsets are the outer
loops and the chunk's elements the inner one (contiguous for NHWC pooling).
"""
import numpy as np

from purejax._src.backends.cpu import codegen_ops
from purejax._src.backends.cpu.indexing import strides
from purejax._src.jaxpr import Literal

MONOIDS = ("reduce_window_sum", "reduce_window_max", "reduce_window_min")
_MONOID_OPS = {"reduce_window_sum": "add", "reduce_window_max": "max", "reduce_window_min": "min"}
NAMES = MONOIDS + ("reduce_window", "select_and_gather_add", "select_and_scatter_add")

_CHUNK = 512               # output elements per work item (and local accumulators)
_PARALLEL_MIN_WORK = 1 << 15   # outputs x window elements worth threads


def _prod(xs):
  return int(np.prod(xs, dtype=np.int64))


# -- support -------------------------------------------------------------------------

class _Scratch:
  """Collects the temporaries ``codegen_ops`` expressions declare."""

  def __init__(self, prefix="t"):
    self.prefix, self.lines = prefix, []

  def tmp(self, ctype, expr):
    name = f"{self.prefix}{len(self.lines)}"
    self.lines.append(f"const {ctype} {name} = {expr};")
    return name


def _computation(jaxpr, consts, args, ctx):
  """C expressions of the scalar ``jaxpr``'s outputs over ``args`` (its
  inputs' C expressions), the statements going to ``ctx``; None when an
  equation has no C expression."""
  env = {}
  for v, c in zip(jaxpr.constvars, consts):
    if np.shape(c) != () or not codegen_ops.dtype_supported(v.aval.dtype):
      return None
    env[v] = codegen_ops.literal(np.asarray(c), v.aval.dtype)
  env.update(zip(jaxpr.invars, args))

  def read(v):
    return codegen_ops.literal(v.val, v.aval.dtype) if type(v) is Literal else env[v]

  for eqn in jaxpr.eqns:
    name = eqn.primitive.name
    if name not in codegen_ops.OPS or len(eqn.outvars) != 1:
      return None
    ins = [v.aval.dtype for v in eqn.invars]
    out = eqn.outvars[0].aval.dtype
    if (any(v.aval.shape for v in list(eqn.invars) + list(eqn.outvars))
        or not all(map(codegen_ops.dtype_supported, ins + [out]))
        or not codegen_ops.supported(name, ins, out, eqn.params)):
      return None
    expr = codegen_ops.emit(ctx, name, [read(v) for v in eqn.invars], ins, out, eqn.params)
    env[eqn.outvars[0]] = ctx.tmp(codegen_ops.ctype(out), expr)
  return [read(v) for v in jaxpr.outvars]


def supported(eqn):
  """The monoids whose operation ``codegen_ops`` computes on the dtype (16-bit
  floats in float32 rounded after every step; complex sums); the general
  reduce_window when its computation has a C expression; the select
  primitives on real keys (C's comparisons)."""
  name = eqn.primitive.name
  dtypes = [np.dtype(v.aval.dtype) for v in list(eqn.invars) + list(eqn.outvars)]
  if not all(map(codegen_ops.dtype_supported, dtypes)):
    return False
  if name in MONOIDS:
    d = dtypes[0]
    return d == np.bool_ or codegen_ops.supported(_MONOID_OPS[name], [d, d], d, {})
  if name != "reduce_window":
    return name in NAMES and not any(d.kind == "c" for d in dtypes)
  p = eqn.params
  n = len(eqn.invars) // 2
  args = [f"a{i}" for i in range(2 * n)]
  return _computation(p["jaxpr"], p["consts"], args, _Scratch()) is not None


# -- geometry --------------------------------------------------------------------------

class _Geometry:
  """A window's shape over an operand, rank >= 1 (a scalar gets a dim of 1)."""

  def __init__(self, in_shape, out_shape, p):
    rank = len(in_shape)
    ones = (1,) * rank
    self.x = tuple(in_shape) or (1,)
    self.o = tuple(out_shape) or (1,)
    self.w = tuple(p["window_dimensions"]) or (1,)
    self.s = tuple(p["window_strides"]) or (1,)
    self.lo = tuple(int(lo) for lo, _ in p["padding"]) or (0,)
    self.b = tuple(p.get("base_dilation", ones)) or (1,)
    self.d = tuple(p.get("window_dilation", ones)) or (1,)
    self.rank = len(self.x)
    self.xs, self.os, self.ws = strides(self.x), strides(self.o), strides(self.w)
    # The last coordinate of the base-dilated operand.
    self.top = [(n - 1) * b for n, b in zip(self.x, self.b)]


def _threads(fn):
  return f" num_threads({fn.unit.num_threads})" if fn.unit.num_threads > 0 else ""


def _chunked_rows(fn, shape, work, body):
  """The loop over ``shape``'s rows cut into chunks, in parallel when the
  ``work`` is worth it: ``body`` sees ``row``, the row's indices ``o0..``,
  and the chunk ``[j0, j1)`` of the last dim."""
  last = shape[-1]
  nchunk = -(-last // _CHUNK)
  rows = _prod(shape[:-1])
  lines = []
  if fn.unit.openmp and work >= _PARALLEL_MIN_WORK and rows * nchunk > 1:
    lines.append(f"#pragma omp parallel for schedule(static){_threads(fn)}")
  # An opaque trip count: gcc 12 (-O3 -march=native) miscompiles this loop
  # when it vectorizes it across rows after unrolling tiny constant windows.
  lines.append(f"for (int64_t item = 0; item < ({rows * nchunk} ^ (int64_t)pj_opaque_zero); "
               "item++) {")
  inner = [f"const int64_t row = item / {nchunk}, j0 = item % {nchunk} * {_CHUNK};",
           f"const int64_t j1 = j0 + {_CHUNK} < {last} ? j0 + {_CHUNK} : {last};",
           "int64_t rest = row; (void)rest;"]
  for k in reversed(range(len(shape) - 1)):
    inner.append(f"const int64_t o{k} = rest % {shape[k]}; rest /= {shape[k]};")
  inner += body
  lines += ["  " + s for s in inner] + ["}"]
  return lines


def _ceil_div(a, b):
  """C for ceil(a / b), ``b`` a positive literal, ``a`` any sign."""
  return f"(({a}) >= 0 ? (({a}) + {b - 1}) / {b} : -((-({a})) / {b}))"


# -- reductions over windows -------------------------------------------------------------

def _reduce_loops(g, init, fold):
  """The body of a chunk of outputs folding their windows: ``init`` lines,
  then for each window element in row-major order (padding and holes left
  out) the ``fold`` lines, with ``j`` the output's index in its row, ``a``
  its index in the chunk and ``xo`` the element's offset in the operand."""
  r = g.rank
  lines = list(init)
  depth = 0
  for k in range(r - 1):
    pad = "  " * depth
    lines.append(f"{pad}for (int64_t k{k} = 0; k{k} < {g.w[k]}; k{k}++) {{")
    q = f"q{k}"
    lines.append(f"{pad}  const int64_t {q} = o{k} * {g.s[k]} + k{k} * {g.d[k]} - {g.lo[k]};")
    cond = f"{q} < 0 || {q} > {g.top[k]}"
    if g.b[k] > 1:
      cond += f" || {q} % {g.b[k]}"
    lines.append(f"{pad}  if ({cond}) continue;")
    depth += 1
  pad = "  " * depth
  base = " + ".join(f"q{k} / {g.b[k]} * {g.xs[k]}" if g.b[k] > 1 else f"q{k} * {g.xs[k]}"
                    for k in range(r - 1)) or "0"
  last = r - 1
  s, b = g.s[last], g.b[last]
  lines += [f"{pad}const int64_t xb = {base};",
            f"{pad}for (int64_t kl = 0; kl < {g.w[last]}; kl++) {{",
            f"{pad}  const int64_t c = kl * {g.d[last]} - {g.lo[last]};",
            # The outputs whose window element kl lies in the operand.
            f"{pad}  int64_t lo = c >= 0 ? 0 : {_ceil_div('-c', s)};",
            f"{pad}  int64_t hi = {g.top[last]} - c < 0 ? 0 : ({g.top[last]} - c) / {s} + 1;",
            f"{pad}  if (lo < j0) lo = j0;",
            f"{pad}  if (hi > j1) hi = j1;",
            f"{pad}  for (int64_t j = lo; j < hi; j++) {{",
            f"{pad}    const int64_t q = j * {s} + c;"]
  if b > 1:
    lines.append(f"{pad}    if (q % {b}) continue;")
  lines += [f"{pad}    const int64_t a = j - j0, xo = xb + {'q / ' + str(b) if b > 1 else 'q'};",
            f"{pad}    (void)a;"]
  lines += [f"{pad}    {s_}" for s_ in fold]
  lines += [f"{pad}  }}", f"{pad}}}"]
  lines += ["  " * k + "}" for k in reversed(range(r - 1))]
  return lines


def _cptr(fn, v, const=True):
  """``v``'s buffer as a pointer to its stored elements (bits for half floats)."""
  ct = codegen_ops.storage_ctype(v.aval.dtype)
  return f"({'const ' if const else ''}{ct}*){fn.ptr(v)}"


def _emit_reduce(fn, comment, g, decls, init, fold):
  work = _prod(g.o) * _prod(g.w)
  row = [f"(void)o{k};" for k in range(g.rank - 1)]
  body = row + list(decls) + _reduce_loops(g, init, fold)
  lines = _chunked_rows(fn, g.o, work, body)
  fn.lines += [f"{{ /* {comment} */"] + ["  " + s for s in lines] + ["}"]


def _monoid(step, fn):
  eqn = step.eqn
  x, out = eqn.invars[0], eqn.outvars[0]
  dtype = np.dtype(out.aval.dtype)
  st = codegen_ops.storage_ctype(dtype)
  g = _Geometry(x.aval.shape, out.aval.shape, eqn.params)
  op = _MONOID_OPS[eqn.primitive.name]
  init = {"add": lambda: codegen_ops.literal(0, dtype), "max": lambda: codegen_ops.lowest(dtype),
          "min": lambda: codegen_ops.highest(dtype)}[op]()
  ctx = _Scratch()
  load = lambda e: codegen_ops.load(e, dtype)
  expr = codegen_ops.emit(ctx, op, [load("y[j]"), load("X[xo]")], [dtype, dtype], dtype, {})
  decls = [f"const {st}* restrict X = {_cptr(fn, x)};",
           f"{st}* restrict y = {_cptr(fn, out, const=False)} + row * {g.o[-1]};"]
  _emit_reduce(fn, eqn.primitive.name, g, decls,
               [f"for (int64_t j = j0; j < j1; j++) y[j] = {codegen_ops.store(init, dtype)};"],
               ctx.lines + [f"y[j] = {codegen_ops.store(expr, dtype)};"])


def _generic(step, fn):
  eqn, p = step.eqn, step.eqn.params
  n = len(eqn.invars) // 2
  xs, inits, outs = eqn.invars[:n], eqn.invars[n:], eqn.outvars
  g = _Geometry(xs[0].aval.shape, outs[0].aval.shape, p)
  dts = [np.dtype(v.aval.dtype) for v in outs]
  cts = [codegen_ops.ctype(d) for d in dts]
  sts = [codegen_ops.storage_ctype(d) for d in dts]
  ctx = _Scratch()
  args = ([codegen_ops.load(f"y{i}[j]", d) for i, d in enumerate(dts)]
          + [codegen_ops.load(f"X{i}[xo]", d) for i, d in enumerate(dts)])
  results = _computation(p["jaxpr"], p["consts"], args, ctx)
  decls = [f"const {st}* restrict X{i} = {_cptr(fn, x)};"
           for i, (st, x) in enumerate(zip(sts, xs))]
  decls += [f"{st}* restrict y{i} = {_cptr(fn, v, const=False)} + row * {g.o[-1]};"
            for i, (st, v) in enumerate(zip(sts, outs))]
  decls += [f"const {st} init{i} = *{_cptr(fn, v)};"
            for i, (st, v) in enumerate(zip(sts, inits))]
  init = ["for (int64_t j = j0; j < j1; j++) {"]
  init += [f"  y{i}[j] = init{i};" for i in range(n)] + ["}"]
  # Every result is computed before any accumulator changes.
  fold = ["{"] + ["  " + s for s in ctx.lines]
  fold += [f"  const {ct} r{i} = {e};" for i, (ct, e) in enumerate(zip(cts, results))]
  fold += [f"  y{i}[j] = {codegen_ops.store(f'r{i}', d)};" for i, d in enumerate(dts)] + ["}"]
  _emit_reduce(fn, "reduce_window", g, decls, init, fold)


def _keeps(select_prim, acc, v):
  """C for select(acc, v): the pick stays (ge for max, le for min)."""
  op = {"ge": ">=", "le": "<="}[select_prim.name]
  return f"({acc} {op} {v})"


def _select_fill(select_prim, dtype):
  return (codegen_ops.lowest(dtype) if select_prim.name == "ge"
          else codegen_ops.highest(dtype))


def _gather(step, fn):
  eqn, p = step.eqn, step.eqn.params
  t, x = eqn.invars
  out = eqn.outvars[0]
  kt, tt = codegen_ops.ctype(x.aval.dtype), codegen_ops.storage_ctype(t.aval.dtype)
  g = _Geometry(x.aval.shape, out.aval.shape, p)
  fill = _select_fill(p["select_prim"], x.aval.dtype)
  decls = [f"const {codegen_ops.storage_ctype(x.aval.dtype)}* restrict X = {_cptr(fn, x)};",
           f"const {tt}* restrict T = {_cptr(fn, t)};",
           f"{tt}* restrict y = {_cptr(fn, out, const=False)} + row * {g.o[-1]};",
           f"{kt} key[{_CHUNK}];"]
  # Tangents are copied as stored (a zero is all zero bits in every type).
  init = [f"for (int64_t j = j0; j < j1; j++) {{ key[j - j0] = {fill}; y[j] = 0; }}"]
  fold = [f"const {kt} v = {codegen_ops.load('X[xo]', x.aval.dtype)};",
          f"const int keep = {_keeps(p['select_prim'], 'key[a]', 'v')};",
          "key[a] = keep ? key[a] : v;",
          "y[j] = keep ? y[j] : T[xo];"]
  _emit_reduce(fn, "select_and_gather_add", g, decls, init, fold)


# -- select_and_scatter_add --------------------------------------------------------------

def _pick_loops(g, select_prim, fill, kt, it, load):
  """Body of a chunk of windows: ``pick[j]``, the row-major index of the
  element window j picks (padding holds ``fill`` and takes part); ``load``
  turns a stored element into its value."""
  r = g.rank
  lines = [f"{kt} key[{_CHUNK}];", f"{it} pk[{_CHUNK}];"]
  for k in range(r - 1):
    pad = "  " * k
    lines += [f"{pad}for (int64_t k{k} = 0; k{k} < {g.w[k]}; k{k}++) {{",
              f"{pad}  const int64_t q{k} = o{k} * {g.s[k]} + k{k} - {g.lo[k]};",
              f"{pad}  const int in{k} = {'in' + str(k - 1) + ' && ' if k else ''}"
              f"q{k} >= 0 && q{k} < {g.x[k]};"]
  pad = "  " * (r - 1)
  inside = f"in{r - 2}" if r > 1 else "1"
  base = " + ".join(f"q{k} * {g.xs[k]}" for k in range(r - 1)) or "0"
  kidx = " + ".join(f"k{k} * {g.ws[k]}" for k in range(r - 1)) or "0"
  s, last = g.s[-1], r - 1
  top = g.x[last] - 1

  def loop(value, decls=()):
    # Picks in a local array too (a char-typed pick buffer could alias
    # anything, and gcc would not vectorize), stored at the end.
    return [f"{pad}    {d}" for d in decls] + [
        f"{pad}    for (int64_t a = 0; a < j1 - j0; a++) {{",
        f"{pad}      const {kt} v = {value};",
        f"{pad}      const int keep = (kidx != 0) & {_keeps(select_prim, 'key[a]', 'v')};",
        f"{pad}      key[a] = keep ? key[a] : v;",
        f"{pad}      pk[a] = keep ? pk[a] : kidx;",
        f"{pad}    }}"]

  lines += [f"{pad}const int64_t xb = {inside} ? {base} : 0, kb = {kidx};",
            f"{pad}for (int64_t kl = 0; kl < {g.w[last]}; kl++) {{",
            f"{pad}  const {it} kidx = ({it})(kb + kl);",
            f"{pad}  const int64_t c = kl - {g.lo[last]};",
            # Windows whose element kl lies in the operand: all of the chunk's
            # (no padding, the usual case), or some.
            f"{pad}  if ({inside} && j0 * {s} + c >= 0 && (j1 - 1) * {s} + c <= {top}) {{"]
  lines += loop(load(f"xr[a * {s}]"), [f"const Xt* restrict xr = X + xb + j0 * {s} + c;"])
  lines += [f"{pad}  }} else {{"]
  lines += loop(f"{inside} && (j0 + a) * {s} + c >= 0 && (j0 + a) * {s} + c <= {top} ? "
                f"{load(f'X[xb + (j0 + a) * {s} + c]')} : {fill}")
  lines += [f"{pad}  }}", f"{pad}}}"]
  lines += ["  " * k + "}" for k in reversed(range(r - 1))]
  lines.append(f"memcpy(pick + j0, pk, (j1 - j0) * sizeof({it}));")
  return lines


def _spread_loops(g, add, zero, vt, it, load):
  """Body of a chunk of operand elements: ``y[j]`` sums, from ``zero``, the
  source values of the windows that picked it, in row-major window order
  (the window offsets descending)."""
  r = g.rank
  lines = [f"for (int64_t j = j0; j < j1; j++) y[j] = {zero};"]
  for k in range(r - 1):
    pad = "  " * k
    lines += [f"{pad}for (int64_t k{k} = {g.w[k] - 1}; k{k} >= 0; k{k}--) {{",
              f"{pad}  const int64_t t{k} = o{k} + {g.lo[k]} - k{k};",
              f"{pad}  if (t{k} < 0 || t{k} % {g.s[k]} || t{k} / {g.s[k]} >= {g.o[k]}) "
              "continue;"]
  pad = "  " * (r - 1)
  base = " + ".join(f"t{k} / {g.s[k]} * {g.os[k]}" for k in range(r - 1)) or "0"
  kidx = " + ".join(f"k{k} * {g.ws[k]}" for k in range(r - 1)) or "0"
  s, last = g.s[-1], r - 1
  lines += [f"{pad}const int64_t wb = {base}, kb = {kidx};",
            f"{pad}for (int64_t kl = {g.w[last] - 1}; kl >= 0; kl--) {{",
            f"{pad}  const {it} kidx = ({it})(kb + kl);",
            # Element j = w * s + c of the row is element kl of window w.
            f"{pad}  const int64_t c = kl - {g.lo[last]};",
            f"{pad}  int64_t lo = {_ceil_div('j0 - c', s)}, hi = {_ceil_div('j1 - c', s)};",
            f"{pad}  if (lo < 0) lo = 0;",
            f"{pad}  if (hi > {g.o[last]}) hi = {g.o[last]};",
            f"{pad}  for (int64_t w = lo; w < hi; w++) {{",
            f"{pad}    const int64_t j = w * {s} + c;",
            f"{pad}    const {vt} v = {load('S[wb + w]')};",
            f"{pad}    y[j] = {add('y[j]', f'(pick[wb + w] == kidx ? v : {zero})')};",
            f"{pad}  }}", f"{pad}}}"]
  lines += ["  " * k + "}" for k in reversed(range(r - 1))]
  return lines


def _scatter(step, fn):
  eqn, p = step.eqn, step.eqn.params
  src, x = eqn.invars
  out = eqn.outvars[0]
  g = _Geometry(x.aval.shape, src.aval.shape, p)
  kt, st = codegen_ops.ctype(x.aval.dtype), codegen_ops.storage_ctype(src.aval.dtype)
  sdtype, xdtype = np.dtype(src.aval.dtype), np.dtype(x.aval.dtype)
  fill = _select_fill(p["select_prim"], x.aval.dtype)
  # Picks as window offsets: one byte each for small windows (less memory traffic).
  it = "int8_t" if _prod(g.w) <= 127 else "int32_t"
  picks = fn.scratch_buffer(it, _prod(g.o))
  lines = []
  body = [f"(void)o{k};" for k in range(g.rank - 1)]
  body += [f"typedef {codegen_ops.storage_ctype(xdtype)} Xt;",
           f"const Xt* restrict X = {_cptr(fn, x)};",
           f"{it}* pick = {picks} + row * {g.o[-1]};"]
  body += _pick_loops(g, p["select_prim"], fill, kt, it,
                      lambda e: codegen_ops.load(e, xdtype))
  lines += _chunked_rows(fn, g.o, _prod(g.o) * _prod(g.w), body)
  load = lambda e: codegen_ops.load(e, sdtype)
  if sdtype == np.bool_:
    add, zero = (lambda a, b: f"({a} | {b})"), "0"
  else:   # into stored values: half floats loaded, added in float32, rounded, stored
    add = lambda a, b: codegen_ops.store(
        codegen_ops.emit(None, "add", [load(a), b], [sdtype, sdtype], sdtype, {}), sdtype)
    zero = codegen_ops.literal(0, sdtype)
  # The operand's rows now, each with its own index names o0.. .
  body = [f"(void)o{k};" for k in range(g.rank - 1)]
  body += [f"const {st}* restrict S = {_cptr(fn, src)};", f"const {it}* pick = {picks};",
           f"{st}* restrict y = {_cptr(fn, out, const=False)} + row * {g.x[-1]};"]
  body += _spread_loops(g, add, zero, codegen_ops.ctype(sdtype), it, load)
  lines += _chunked_rows(fn, g.x, _prod(g.x) * _prod(g.w), body)
  fn.lines += ["{ /* select_and_scatter_add */"] + ["  " + s for s in lines] + ["}"]


_EMITTERS = {**{name: _monoid for name in MONOIDS}, "reduce_window": _generic,
             "select_and_gather_add": _gather, "select_and_scatter_add": _scatter}


def emit(step, fn):
  _EMITTERS[step.eqn.primitive.name](step, fn)
