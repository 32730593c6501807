"""``sort`` and the cumulative reductions (cumsum, cumprod, cummax, cummin,
cumlogsumexp) as native steps.

sort: every row along the sort dimension is sorted by an LSD radix sort of
(key, index) records, one key operand at a time from the least significant
(``num_keys`` > 1 is lexicographic because each pass is stable); then each
operand is gathered through the sorted indices.  Keys are unsigned integers
ordered as lax orders the values: floats with -0.0 made 0.0 and every NaN the
same NaN (after +inf), so equal keys keep their index order.  The result is
always the stable order, which is unique: it cannot depend on the thread
count.  Rows are sorted in parallel (a row group of up to ``_GROUP`` adjacent
rows per task, so that rows along an inner axis are read in whole cache
lines); a few long rows are sorted one by one, each radix pass parallel over
``_CHUNKS`` fixed chunks.

Cumulative reductions: a scan along the axis in an accumulator type (float32
sums in double, integers in wide unsigned types that wrap as the dtype does).
The work is split into tasks of up to ``_WIDTH`` adjacent columns (the scan
is vectorized over them) and, when there are few tasks and long scans, into
blocks along the axis: each block's total is computed, the totals are
prefixed, and each block rescanned from its offset.  The split depends only
on the shape, so the bits do not depend on the thread count.

16-bit floats sort by keys made from their stored bits and scan as float
(sums, products, log-sum-exps in double, rounded once through float32, as
scan_order does; extrema exactly).  Complex sums and products accumulate in
double _Complex (NumPy's product formula); complex cummax/cummin run one
sequential pass per lane with XLA's elementwise rule (the later element
unless the running value comes strictly first), not in blocks: with NaNs
that rule is not associative.  A complex key sorts as two keys, its real
then its imaginary part (lax's lexicographic order, each part a float key).
"""
import numpy as np

from purejax._src.backends.cpu import codegen_ops
from purejax._src.jaxpr import DropVar, Literal
from purejax._src.lax import scan_order

CUMULATIVE = ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")
_GROUP = 16          # adjacent rows (along an inner axis) sorted by one task
_CHUNKS = 64         # chunks of one radix pass over a long row
_LONG_ROW = 1 << 16  # rows at least this long, when few, get parallel passes
_FEW = 16            # fewer tasks than this leave threads idle
_THREAD_BYTES = 32 << 20   # the most a thread allocates to sort its rows
_WIDTH = 256         # columns one cumulative task scans together
_ROW_LANES = 8       # rows one task scans together along a last axis
_BLOCK = 1 << 16     # elements per block when a scan is split along its axis
_PARALLEL_MIN = 1 << 15   # elements below which a step runs on one thread


def _prod(xs):
  return int(np.prod(xs, dtype=np.int64))


def _split(shape, axis):
  """(outer, n, inner): the sizes before, along and after ``axis``."""
  return _prod(shape[:axis]), shape[axis], _prod(shape[axis + 1:])


def supported(eqn):
  """Whether ``eqn`` (a sort or cumulative reduction) has C code: sorts of
  every numeric dtype (16-bit floats by their bits, complex keys by their
  parts), rows indexable by uint32; scans of every numeric dtype."""
  if eqn.primitive.name != "sort":
    return all(np.dtype(v.aval.dtype).kind in "iufc" or codegen_ops.is_half(v.aval.dtype)
               for v in eqn.invars)
  for v in eqn.invars:
    dtype = np.dtype(v.aval.dtype)
    if codegen_ops.is_half(dtype):
      continue   # keys from the stored bits; values only copied
    if dtype.kind not in "biufc":
      return False
  return eqn.invars[0].aval.shape[eqn.params["dimension"]] < 1 << 32


def emit(step, fn):
  if step.eqn.primitive.name == "sort":
    _emit_sort(step.eqn, fn)
  else:
    _emit_cumulative(step.eqn, fn)


def _pragma(fn, text, work=None):
  """An OpenMP pragma line (none without OpenMP), with the unit's thread
  count, parallel only when ``work`` elements are enough."""
  if not fn.unit.openmp:
    return []
  threads = (f" num_threads({fn.unit.num_threads})"
             if fn.unit.num_threads > 0 and text.startswith("parallel") else "")
  cond = f" if({work} >= {_PARALLEL_MIN})" if work is not None else ""
  return [f"#pragma omp {text}{threads}{cond}"]


# -- sort --------------------------------------------------------------------------------

_KEY_BITS = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}


def _key_type(dtype):
  return _KEY_BITS[np.dtype(dtype).itemsize]


def _key(dtype, value):
  """A C expression: the unsigned key of ``value`` ordered as lax sorts."""
  dtype = np.dtype(dtype)
  kt = _key_type(dtype)
  if codegen_ops.is_half(dtype):   # ``value`` is the stored bits
    return f"pj_sort_key_{dtype.name}({value})"
  if dtype.kind == "f":
    return f"pj_sort_key_{'f32' if dtype == np.float32 else 'f64'}({value})"
  if dtype.kind == "i":   # flipping the sign bit orders two's complement as unsigned
    return f"(({kt})(({kt}){value} ^ ({kt})1 << {8 * dtype.itemsize - 1}))"
  return f"(({kt}){value})"


def _sort_helpers(fn):
  """The radix sorts, per key type (``a`` and ``b`` hold n records; the
  result is in the one returned)."""
  par = "\n".join(_pragma(fn, "parallel for schedule(static)"))
  out = [r"""
/* Sort keys: unsigned integers ordered as lax orders floats (-0.0 == 0.0,
   NaNs equal and last). */
static inline uint32_t pj_sort_key_f32(float x) {
  uint32_t u = x != x ? 0x7fc00000u : x == 0.0f ? 0u : pj_bitsf(x);
  return u & 0x80000000u ? ~u : u | 0x80000000u; }
static inline uint64_t pj_sort_key_f64(double x) {
  uint64_t u = x != x ? 0x7ff8000000000000ULL : x == 0.0 ? 0ULL : pj_bits(x);
  return u & 0x8000000000000000ULL ? ~u : u | 0x8000000000000000ULL; }
/* 16-bit floats from their bits: NaN when the magnitude is above infinity's. */
static inline uint16_t pj_sort_key_half(uint16_t u, uint16_t inf, uint16_t nan) {
  const uint16_t m = u & 0x7fff;
  u = m > inf ? nan : m == 0 ? 0 : u;
  return u & 0x8000 ? (uint16_t)~u : (uint16_t)(u | 0x8000); }
static inline uint16_t pj_sort_key_float16(uint16_t u) {
  return pj_sort_key_half(u, 0x7c00, 0x7e00); }
static inline uint16_t pj_sort_key_bfloat16(uint16_t u) {
  return pj_sort_key_half(u, 0x7f80, 0x7fc0); }
"""]
  for kt in _KEY_BITS.values():
    out.append(rf"""
typedef struct {{ {kt} k; uint32_t i; }} pj_rec_{kt};
/* One row, on one thread: insertion sort when short, else one digit
   histogram pass and a scatter per byte (bytes all alike are skipped). */
static pj_rec_{kt}* pj_sort_{kt}(pj_rec_{kt}* a, pj_rec_{kt}* b, int64_t n) {{
  if (n <= 32) {{
    for (int64_t i = 1; i < n; i++) {{
      const pj_rec_{kt} v = a[i];
      int64_t j = i;
      for (; j > 0 && a[j - 1].k > v.k; j--) a[j] = a[j - 1];
      a[j] = v;
    }}
    return a;
  }}
  enum {{ NB = sizeof({kt}) }};
  uint32_t cnt[NB][256];
  memset(cnt, 0, sizeof cnt);
  for (int64_t i = 0; i < n; i++) {{
    const {kt} k = a[i].k;
    for (int d = 0; d < NB; d++) cnt[d][(k >> (8 * d)) & 255]++;
  }}
  for (int d = 0; d < NB; d++) {{
    uint32_t* c = cnt[d];
    if (c[(a[0].k >> (8 * d)) & 255] == n) continue;
    uint32_t run = 0;
    for (int v = 0; v < 256; v++) {{ const uint32_t t = c[v]; c[v] = run; run += t; }}
    for (int64_t i = 0; i < n; i++) {{
      const pj_rec_{kt} r = a[i];
      b[c[(r.k >> (8 * d)) & 255]++] = r;
    }}
    pj_rec_{kt}* s = a; a = b; b = s;
  }}
  return a;
}}
/* One long row: each pass histograms {_CHUNKS} fixed chunks in parallel,
   then scatters them in parallel (chunk c's records of digit v go after
   those of smaller digits and of earlier chunks).  hist: {_CHUNKS} x 256. */
static pj_rec_{kt}* pj_sort_par_{kt}(pj_rec_{kt}* a, pj_rec_{kt}* b, int64_t n,
                                     int64_t* hist) {{
  for (int d = 0; d < (int)sizeof({kt}); d++) {{
    const int sh = 8 * d;
{par}
    for (int c = 0; c < {_CHUNKS}; c++) {{
      int64_t* h = hist + c * 256;
      memset(h, 0, 256 * sizeof(int64_t));
      for (int64_t i = n * c / {_CHUNKS}; i < n * (c + 1) / {_CHUNKS}; i++)
        h[(a[i].k >> sh) & 255]++;
    }}
    int same = 0;
    for (int v = 0; v < 256 && !same; v++) {{
      int64_t t = 0;
      for (int c = 0; c < {_CHUNKS}; c++) t += hist[c * 256 + v];
      same = t == n;
    }}
    if (same) continue;
    int64_t run = 0;
    for (int v = 0; v < 256; v++)
      for (int c = 0; c < {_CHUNKS}; c++) {{
        const int64_t t = hist[c * 256 + v]; hist[c * 256 + v] = run; run += t; }}
{par}
    for (int c = 0; c < {_CHUNKS}; c++) {{
      int64_t* h = hist + c * 256;
      for (int64_t i = n * c / {_CHUNKS}; i < n * (c + 1) / {_CHUNKS}; i++) {{
        const pj_rec_{kt} r = a[i];
        b[h[(r.k >> sh) & 255]++] = r;
      }}
    }}
    pj_rec_{kt}* s = a; a = b; b = s;
  }}
  return a;
}}
""")
  return "".join(out)


def _iota_along(fn, v, dimension):
  """Whether operand ``v`` is an iota along the sort dimension (argsort's):
  its values are then the sorted indices themselves."""
  view = fn.plan.views.get(v)
  return (view is not None and view.primitive.name == "iota"
          and view.params["dimension"] == dimension
          and np.dtype(v.aval.dtype).kind in "iuf" and not codegen_ops.is_half(v.aval.dtype))


def _read_vars(jaxpr):
  """The variables something in ``jaxpr`` reads (its outputs included)."""
  read = {v for e in jaxpr.eqns for v in e.invars if type(v) is not Literal}
  return read | {v for v in jaxpr.outvars if type(v) is not Literal}


def _emit_sort(eqn, fn):
  p = eqn.params
  dim, num_keys = p["dimension"], p["num_keys"]
  shape = tuple(eqn.invars[0].aval.shape)
  outer, n, inner = _split(shape, dim)
  fn.unit.helper("sort", lambda: _sort_helpers(fn))
  xs = [fn.ptr(v) for v in eqn.invars]
  # (operand, dtype, part) of each radix key, most significant first: a
  # complex operand is its real part's key, then its imaginary part's.
  parts = []
  for kk, v in enumerate(eqn.invars[:num_keys]):
    dtype = np.dtype(v.aval.dtype)
    if dtype.kind == "c":
      real = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
      parts += [(kk, real, "__real__ "), (kk, real, "__imag__ ")]
    else:
      parts.append((kk, dtype, ""))
  rec = 16 if any(dtype.itemsize == 8 for _, dtype, _ in parts) else 8
  # A few long rows, or rows too long for a buffer per thread, are sorted
  # one at a time with parallel passes.
  long_rows = n >= _LONG_ROW and (outer * inner < _FEW or 2 * n * rec > _THREAD_BYTES)
  group = 1 if long_rows else max(1, min(inner, _GROUP, _THREAD_BYTES // (2 * n * rec)))
  groups = -(-inner // group)
  items = outer * groups
  # Per task: two record buffers and (several keys) the permutation so far.
  rec_bytes, perm_count = group * n * rec, group * n if len(parts) > 1 else 0
  body = [f"const int64_t o = it / {groups}, j0 = it % {groups} * {group};",
          f"const int64_t gw = {inner} - j0 < {group} ? {inner} - j0 : {group};",
          f"const int64_t base = o * {n * inner} + j0;"]
  par = _pragma(fn, "parallel for schedule(static)", n) if long_rows else []
  for rank, kk in enumerate(reversed(range(len(parts)))):
    first, last = rank == 0, kk == 0
    operand, dtype, part = parts[kk]
    kt = _key_type(dtype)
    src = "i" if first else f"perm[g * {n} + i]"
    value = _key(dtype, f"{part}{xs[operand]}[base + g + (int64_t)src * {inner}]")
    sort = (f"pj_sort_par_{kt}(r, t, {n}, hist)" if long_rows
            else f"pj_sort_{kt}(r, t, {n})")
    body += [f"/* key operand {operand} {part} */",
             f"pj_rec_{kt}* s{kk}[{group}];"] + par + [
             f"for (int64_t i = 0; i < {n}; i++)",
             "  for (int64_t g = 0; g < gw; g++) {",
             f"    pj_rec_{kt}* r = (pj_rec_{kt}*)(ra + g * {n * rec});",
             f"    const uint32_t src = {src};",
             f"    r[i].k = {value}; r[i].i = src;",
             "  }",
             "for (int64_t g = 0; g < gw; g++) {",
             f"  pj_rec_{kt}* r = (pj_rec_{kt}*)(ra + g * {n * rec});",
             f"  pj_rec_{kt}* t = (pj_rec_{kt}*)(rb + g * {n * rec});",
             f"  s{kk}[g] = {sort};",
             "}"]
    if not last:
      body += par + [f"for (int64_t i = 0; i < {n}; i++)",
                     "  for (int64_t g = 0; g < gw; g++)",
                     f"    perm[g * {n} + i] = s{kk}[g][i].i;"]
  # Rows along an inner axis: each operand's group of rows is first copied
  # into contiguous rows (whole cache lines read), then gathered from there.
  stage = not long_rows and group > 1
  perm_bytes = -(-4 * perm_count // 8) * 8
  staged, gathers, stage_bytes = [], [], 0
  read = _read_vars(fn.plan.jaxpr)
  for x, v, y in zip(xs, eqn.invars, eqn.outvars):
    if type(y) is DropVar or y not in read:   # argsort's sorted keys
      continue
    ct = codegen_ops.storage_ctype(v.aval.dtype)   # values are copied as stored
    pos = f"base + g + i * {inner}"
    if _iota_along(fn, v, dim):
      gathers.append(f"    {fn.ptr(y)}[{pos}] = ({ct})s0[g][i].i;")
    elif stage:
      row = f"(({ct}*)(vals + {stage_bytes}))"
      staged.append(f"    {row}[g * {n} + i] = {x}[{pos}];")
      gathers.append(f"    {fn.ptr(y)}[{pos}] = {row}[g * {n} + s0[g][i].i];")
      stage_bytes += -(-group * n * np.dtype(v.aval.dtype).itemsize // 8) * 8
    else:
      gathers.append(f"    {fn.ptr(y)}[{pos}] = {x}[base + g + (int64_t)s0[g][i].i * {inner}];")
  if staged:
    body += [f"for (int64_t i = 0; i < {n}; i++)",
             "  for (int64_t g = 0; g < gw; g++) {"] + staged + ["  }"]
  body += par + [f"for (int64_t i = 0; i < {n}; i++)",
                 "  for (int64_t g = 0; g < gw; g++) {"] + gathers + ["  }"]
  lines = []
  if long_rows:
    ra = fn.scratch_buffer("uint64_t", rec_bytes // 8)
    rb = fn.scratch_buffer("uint64_t", rec_bytes // 8)
    lines += [f"char* ra = (char*){ra}; char* rb = (char*){rb};",
              f"int64_t* hist = {fn.scratch_buffer('int64_t', _CHUNKS * 256)};"]
    if perm_count:
      lines.append(f"uint32_t* perm = {fn.scratch_buffer('uint32_t', perm_count)};")
    lines.append(f"for (int64_t it = 0; it < {items}; it++) {{")
    lines += ["  " + s for s in body] + ["}"]
  else:
    # Each thread allocates its buffers once, for all its rows.
    lines += ["int failed = 0;"] + _pragma(fn, "parallel", outer * n * inner) + ["{",
              f"  char* ra = (char*)malloc({2 * rec_bytes + perm_bytes + stage_bytes});",
              f"  char* rb = ra + {rec_bytes};",
              f"  uint32_t* perm = (uint32_t*)(rb + {rec_bytes}); (void)perm;",
              f"  char* vals = (char*)perm + {perm_bytes}; (void)vals;",
              "  if (!ra) {"] + ["  " + s for s in _pragma(fn, "atomic write")] + [
              "    failed = 1;", "  }"]
    lines += ["  " + s for s in _pragma(fn, "for schedule(dynamic, 1)")]
    lines += [f"  for (int64_t it = 0; it < {items}; it++) {{", "    if (!ra) continue;"]
    lines += ["    " + s for s in body] + ["  }", "  free(ra);", "}",
                                            "if (failed) goto done;"]
  fn.lines += [f"{{ /* sort along axis {dim} of {list(shape)}, {num_keys} key(s) */"]
  fn.lines += ["  " + s for s in lines] + ["}"]


# -- cumulative reductions ----------------------------------------------------------------

LOGADDEXP = r"""
/* log(exp(a) + exp(b)) without overflow, as NumPy's logaddexp (scan_order's
   twin): equal operands (infinities of one sign too) give a + ln 2, a NaN
   difference gives it. */
static inline double pj_logaddexp(double a, double b) {
  if (a == b) return a + %r;
  const double d = a - b;
  return d > 0 ? a + log1p(exp(-d)) : d <= 0 ? b + log1p(exp(d)) : d;
}
""" % scan_order.LOGE2


def _accumulator(name, dtype):
  """(accumulator C type, its identity, combine(a, b) with ``a`` the earlier
  prefix): float sums, products and log-sum-exps in double, integer sums
  and products in wide unsigned types."""
  dtype = np.dtype(dtype)
  ct = codegen_ops.ctype(dtype)
  f = dtype.kind == "f" or codegen_ops.is_half(dtype)
  c = dtype.kind == "c"
  if name in ("cumsum", "cumprod"):
    acc = "double _Complex" if c else "double" if f else codegen_ops.wide_unsigned(dtype)
    op = "+" if name == "cumsum" else "*"
    # -0.0 + x is x for every x, -0.0 included.
    identity = ("(-0.0)" if name == "cumsum" else "1.0") if f or c else (
        "0" if op == "+" else "1")
    if c and op == "*":   # NumPy's product formula
      return acc, f"(({acc}){identity})", lambda a, b: f"pj_cmul({a}, {b})"
    return acc, f"(({acc}){identity})", lambda a, b: f"({a} {op} {b})"
  if name == "cumlogsumexp":
    return "double", "(-(double)INFINITY)", lambda a, b: f"pj_logaddexp({a}, {b})"
  is_max = name == "cummax"
  if c:   # pj_cmax(a, b) is b unless a is strictly first: (-inf, -inf) never is
    inf = codegen_ops.literal(-np.inf if is_max else np.inf, codegen_ops.real_dtype(dtype))
    helper = f"pj_c{'max' if is_max else 'min'}{'f' if dtype == np.complex64 else ''}"
    return ct, f"PJ_COMPLEX({inf}, {inf})", lambda a, b: f"{helper}({a}, {b})"
  identity = codegen_ops.lowest(dtype) if is_max else codegen_ops.highest(dtype)
  if f:
    helper = f"pj_{'max' if is_max else 'min'}{'' if dtype == np.float64 else 'f'}"
    return ct, identity, lambda a, b: f"{helper}({a}, {b})"
  cmp = ">" if is_max else "<"
  return ct, identity, lambda a, b: f"({b} {cmp} {a} ? {b} : {a})"


def _lanes(shape, axis):
  """(lanes, width, lane_stride, step, rows): lanes scanned together are
  adjacent columns of an inner axis (vectorized), or adjacent rows when the
  axis is the last one (independent chains)."""
  outer, n, inner = _split(shape, axis)
  if inner > 1:
    return inner, min(inner, _WIDTH), 1, inner, outer
  return outer, min(outer, _ROW_LANES), n, 1, 1


def _load(v, expr):
  """The value of element ``expr`` of ``v`` (half floats from their bits)."""
  return codegen_ops.load(expr, v.aval.dtype)


def _store(v, value):
  """Value ``value`` (of the accumulator) as stored in ``v``: rounded to
  float first, then to a half float (scan_order's rounding)."""
  dtype = v.aval.dtype
  if codegen_ops.is_half(dtype):
    return codegen_ops.store(codegen_ops.round_to(f"(float)({value})", dtype), dtype)
  return f"({codegen_ops.ctype(dtype)})({value})"


def _decompose(fn, x, shape, axis, ct, acc, blocks, block):
  outer, n, inner = _split(shape, axis)
  lanes, width, lane_stride, step, rows = _lanes(shape, axis)
  chunks = -(-lanes // width)
  return [f"const int64_t task = q / {blocks}, b = q % {blocks};",
          f"const int64_t o = task / {chunks}, j0 = task % {chunks} * {width};",
          f"const int64_t w = {lanes} - j0 < {width} ? {lanes} - j0 : {width};",
          f"const int64_t lo = b * {block}, hi = lo + {block} < {n} ? lo + {block} : {n};",
          f"const {codegen_ops.storage_ctype(x.aval.dtype)}* xb = {fn.ptr(x)} "
          f"+ o * {n * inner} + j0 * {lane_stride};",
          f"{acc} a[{width}];"]


def _emit_cumulative(eqn, fn):
  name, x = eqn.primitive.name, eqn.invars[0]
  if name in scan_order.ORDERED and (np.dtype(x.aval.dtype).kind in "fc"
                                     or codegen_ops.is_half(x.aval.dtype)):
    _emit_ordered(eqn, fn)
  else:
    _emit_exact(eqn, fn)


def _xscan_helper(fn, name, combine, identity, acc):
  """C twin of scan_order._exclusive: the exclusive scan of ``m`` totals
  (stride ``s``, of type ``acc``) in place, recursively by blocks; ``tmp``
  holds scan_order.exclusive_scan_sizes(m) of them."""
  B = scan_order.SCAN_BLOCK
  fname = f"pj_xscan_{name}{'_complex' if 'Complex' in acc else ''}"
  fn.unit.helper(fname, lambda: rf"""
static void {fname}({acc}* t, int64_t m, int64_t s, {acc}* tmp) {{
  if (m <= {B}) {{
    {acc} run = t[0];
    t[0] = {identity};
    for (int64_t i = 1; i < m; i++) {{
      const {acc} v = t[i * s]; t[i * s] = run; run = {combine('run', 'v')};
    }}
    return;
  }}
  const int64_t g = (m + {B - 1}) / {B};
  for (int64_t k = 0; k < g; k++) {{
    const int64_t lo = k * {B}, hi = lo + {B} < m ? lo + {B} : m;
    {acc} run = t[lo * s];
    t[lo * s] = {identity};
    for (int64_t i = lo + 1; i < hi; i++) {{
      const {acc} v = t[i * s]; t[i * s] = run; run = {combine('run', 'v')};
    }}
    tmp[k] = run;
  }}
  {fname}(tmp, g, 1, tmp + g);
  for (int64_t k = 1; k < g; k++) {{
    const int64_t lo = k * {B}, hi = lo + {B} < m ? lo + {B} : m;
    for (int64_t i = lo; i < hi; i++) t[i * s] = {combine('tmp[k]', 't[i * s]')};
  }}
}}
""")
  return fname


def _scan_parts(eqn):
  """What every cumulative emitter starts from: the primitive's name, operand
  and result, shape, axis, direction, the sizes around the axis, the C type
  and the accumulator (type, identity, combine)."""
  name, p = eqn.primitive.name, eqn.params
  x, y = eqn.invars[0], eqn.outvars[0]
  shape = tuple(x.aval.shape)
  axis, reverse = p["axis"], p["reverse"]
  outer, n, inner = _split(shape, axis)
  return (name, x, y, shape, axis, reverse, outer, n, inner, codegen_ops.ctype(x.aval.dtype),
          *_accumulator(name, x.aval.dtype))


def _emit_ordered(eqn, fn):
  """A float sum, product or log-sum-exp in scan_order's block order: each
  block scanned from its first element, its offset the recursive exclusive
  scan of the block totals (the same bits as the NumPy implementation)."""
  (name, x, y, shape, axis, reverse, outer, n, inner, ct,
   acc, identity, combine) = _scan_parts(eqn)
  if name == "cumlogsumexp":
    fn.unit.helper("logaddexp", lambda: LOGADDEXP)
  lanes, width, lane_stride, step, rows = _lanes(shape, axis)
  tasks = rows * -(-lanes // width)
  block = scan_order.SCAN_BLOCK
  blocks = -(-n // block)
  items = tasks * blocks
  total = outer * n * inner
  decompose = _decompose(fn, x, shape, axis, ct, acc, blocks, block)
  at = (lambda i: f"({n - 1} - ({i}))") if reverse else (lambda i: i)
  x_at = lambda i: f"({acc}){_load(x, f'xb[{at(i)} * {step} + j * {lane_stride}]')}"
  y_at = f"yb[{at('p')} * {step} + j * {lane_stride}]"
  # Each block runs from its first element (identity-free: exact signs of zero).
  scan = [f"  for (int64_t j = 0; j < {width}; j++) a[j] = {identity};",
          f"  for (int64_t j = 0; j < w; j++) a[j] = {x_at('lo')};"]
  if 1 < blocks <= block and tasks >= _FEW:
    # Enough tasks: each scans its lanes whole in one pass, the block
    # offsets (one level of block totals) running along.
    _emit_ordered_one_pass(fn, eqn, x, y, ct, acc, identity, combine, x_at, y_at, scan,
                           _decompose(fn, x, shape, axis, ct, acc, 1, n), tasks, blocks,
                           width, total)
    return
  lines = []
  if blocks > 1:
    tot = fn.scratch_buffer(acc, items * width)
    tmp_each = max(1, scan_order.exclusive_scan_sizes(blocks))
    tmp = fn.scratch_buffer(acc, tasks * width * tmp_each)
    xscan = _xscan_helper(fn, name, combine, identity, acc)
    lines += _pragma(fn, "parallel for schedule(static)", total)
    lines += [f"for (int64_t q = 0; q < {items}; q++) {{"] + ["  " + s for s in decompose] + scan + [
        "  for (int64_t p = lo + 1; p < hi; p++)",
        f"    for (int64_t j = 0; j < w; j++) a[j] = {combine('a[j]', x_at('p'))};",
        f"  for (int64_t j = 0; j < {width}; j++) {tot}[q * {width} + j] = a[j];",
        "}",
        "/* each block's offset: the exclusive scan of the block totals */"]
    lines += _pragma(fn, "parallel for schedule(static)", tasks * width * blocks)
    lines += [f"for (int64_t k = 0; k < {tasks * width}; k++)",
              f"  {xscan}({tot} + k / {width} * {blocks * width} + k % {width}, {blocks}, "
              f"{width}, {tmp} + k * {tmp_each});"]
  lines += _pragma(fn, "parallel for schedule(static)", total)
  lines += [f"for (int64_t q = 0; q < {items}; q++) {{"] + ["  " + s for s in decompose] + [
      f"  {codegen_ops.storage_ctype(y.aval.dtype)}* yb = {fn.ptr(y)} + o * {n * inner} + j0 * {lane_stride};"] + scan + [
      "  if (b == 0) {",
      f"    for (int64_t j = 0; j < w; j++) {{ const int64_t p = lo; {y_at} = {_store(y, 'a[j]')}; }}",
      "    for (int64_t p = lo + 1; p < hi; p++)",
      "      for (int64_t j = 0; j < w; j++) {",
      f"        a[j] = {combine('a[j]', x_at('p'))};",
      f"        {y_at} = {_store(y, 'a[j]')};",
      "      }"]
  if blocks > 1:
    off = f"{tot}[q * {width} + j]"
    lines += [
      "  } else {",
      f"    for (int64_t j = 0; j < w; j++) {{ const int64_t p = lo; "
      f"{y_at} = {_store(y, combine(off, 'a[j]'))}; }}",
      "    for (int64_t p = lo + 1; p < hi; p++)",
      "      for (int64_t j = 0; j < w; j++) {",
      f"        a[j] = {combine('a[j]', x_at('p'))};",
      f"        {y_at} = {_store(y, combine(off, 'a[j]'))};",
      "      }"]
  lines += ["  }", "}"]
  what = f"{name}{' reversed' if reverse else ''} along axis {axis} of {list(shape)}"
  fn.lines += [f"{{ /* {what}: {blocks} block(s) in scan order */"] + [
      "  " + s for s in lines] + ["}"]


def _emit_ordered_one_pass(fn, eqn, x, y, ct, acc, identity, combine, x_at, y_at, scan,
                           decompose, tasks, blocks, width, total):
  """_emit_ordered's order when the block totals fit one level of
  scan_order._exclusive: block b's offset is the running combination of the
  totals before it (block 0 none)."""
  block, n = scan_order.SCAN_BLOCK, eqn.invars[0].aval.shape[eqn.params["axis"]]
  p = eqn.params
  lines = _pragma(fn, "parallel for schedule(static)", total)
  lines += [f"for (int64_t q = 0; q < {tasks}; q++) {{"] + ["  " + s for s in decompose] + [
      f"  {codegen_ops.storage_ctype(y.aval.dtype)}* yb = {fn.ptr(y)} + o * {n * _split(x.aval.shape, p['axis'])[2]} "
      f"+ j0 * {_lanes(x.aval.shape, p['axis'])[2]};",
      f"  {acc} off[{width}];",
      f"  for (int64_t bb = 0; bb < {blocks}; bb++) {{",
      f"    const int64_t lo = bb * {block}, hi = lo + {block} < {n} ? lo + {block} : {n};"]
  lines += ["  " + s for s in scan]
  lines += [
      "    if (bb == 0) {",
      f"      for (int64_t j = 0; j < w; j++) {{ const int64_t p = lo; {y_at} = {_store(y, 'a[j]')}; }}",
      "      for (int64_t p = lo + 1; p < hi; p++)",
      "        for (int64_t j = 0; j < w; j++) {",
      f"          a[j] = {combine('a[j]', x_at('p'))};",
      f"          {y_at} = {_store(y, 'a[j]')};",
      "        }",
      "      for (int64_t j = 0; j < w; j++) off[j] = a[j];",
      "    } else {",
      f"      for (int64_t j = 0; j < w; j++) {{ const int64_t p = lo; "
      f"{y_at} = {_store(y, combine('off[j]', 'a[j]'))}; }}",
      "      for (int64_t p = lo + 1; p < hi; p++)",
      "        for (int64_t j = 0; j < w; j++) {",
      f"          a[j] = {combine('a[j]', x_at('p'))};",
      f"          {y_at} = {_store(y, combine('off[j]', 'a[j]'))};",
      "        }",
      f"      for (int64_t j = 0; j < w; j++) off[j] = {combine('off[j]', 'a[j]')};",
      "    }",
      "  }",
      "}"]
  name, reverse, axis = eqn.primitive.name, p["reverse"], p["axis"]
  what = f"{name}{' reversed' if reverse else ''} along axis {axis} of {list(x.aval.shape)}"
  fn.lines += [f"{{ /* {what}: {blocks} blocks in scan order, one pass */"] + [
      "  " + s for s in lines] + ["}"]


def _emit_exact(eqn, fn):
  """Integer sums and products (wrapping) and extrema: exact in any order."""
  (name, x, y, shape, axis, reverse, outer, n, inner, ct,
   acc, identity, combine) = _scan_parts(eqn)
  lanes, width, lane_stride, step, rows = _lanes(shape, axis)
  chunks = -(-lanes // width)
  tasks = rows * chunks
  # Blocks along the axis only when few tasks have long scans (complex
  # extrema never: their rule is not associative).
  sequential = tasks >= _FEW or n * width <= _BLOCK or np.dtype(x.aval.dtype).kind == "c"
  block = n if sequential else max(1, _BLOCK // width)
  blocks = -(-n // block)
  items = tasks * blocks
  total = outer * n * inner
  decompose = _decompose(fn, x, shape, axis, ct, acc, blocks, block)
  at = f"({n - 1} - p)" if reverse else "p"
  x_at, y_at = (f"{v}[{at} * {step} + j * {lane_stride}]" for v in ("xb", "yb"))
  x_at = _load(x, x_at)
  lines = []
  if blocks > 1:
    tot = fn.scratch_buffer(acc, items * width)
    lines += _pragma(fn, "parallel for schedule(static)", total)
    lines += [f"for (int64_t q = 0; q < {items}; q++) {{"] + ["  " + s for s in decompose] + [
        f"  for (int64_t j = 0; j < {width}; j++) a[j] = {identity};",
        "  for (int64_t p = lo; p < hi; p++)",
        f"    for (int64_t j = 0; j < w; j++) a[j] = {combine('a[j]', f'({acc}){x_at}')};",
        f"  for (int64_t j = 0; j < {width}; j++) {tot}[q * {width} + j] = a[j];",
        "}",
        "/* each block's offset: the combined totals of the blocks before it */",
        f"for (int64_t k = 0; k < {tasks * width}; k++) {{",
        f"  {acc}* t = {tot} + k / {width} * {blocks * width} + k % {width};",
        f"  {acc} run = {identity};",
        f"  for (int64_t b = 0; b < {blocks}; b++) {{",
        f"    const {acc} v = t[b * {width}]; t[b * {width}] = run; run = {combine('run', 'v')};",
        "  }",
        "}"]
  start = f"{tot}[q * {width} + j]" if blocks > 1 else identity
  lines += _pragma(fn, "parallel for schedule(static)", total)
  lines += [f"for (int64_t q = 0; q < {items}; q++) {{"] + ["  " + s for s in decompose] + [
      f"  {codegen_ops.storage_ctype(y.aval.dtype)}* yb = {fn.ptr(y)} + o * {n * inner} + j0 * {lane_stride};",
      f"  for (int64_t j = 0; j < {width}; j++) a[j] = {start};",
      "  for (int64_t p = lo; p < hi; p++)",
      "    for (int64_t j = 0; j < w; j++) {",
      f"      a[j] = {combine('a[j]', f'({acc}){x_at}')};",
      f"      {y_at} = {_store(y, 'a[j]')};",
      "    }",
      "}"]
  what = f"{name}{' reversed' if reverse else ''} along axis {axis} of {list(shape)}"
  fn.lines += [f"{{ /* {what}: {blocks} block(s) */"] + ["  " + s for s in lines] + ["}"]
