"""``top_k`` as a native step.

Each row along the axis keeps its ``k`` best entries in a binary heap whose
root is the worst of them; a later entry enters only when strictly larger,
so of equal entries the lower index stays (lax's tie rule).  Values compare
by their raw bit patterns in lax's top_k order (-NaN < -inf < ... < -0.0 <
0.0 < ... < inf < NaN): the same unsigned keys as the sort's, without making
-0.0 equal to 0.0 or NaNs equal.  The heap is then sorted best first and the
values gathered through its indices.

Rows run in parallel.  A few long rows are split into ``_CHUNKS`` fixed
chunks whose own top ``k`` are found in parallel and then merged: the order
is total (value, then index), so the result is unique and cannot depend on
the thread count or the split.  Every real dtype is supported, 16-bit floats
included: nothing is computed, values are only compared and copied.
"""
import numpy as np

from purejax._src.backends.cpu import codegen_ops
from purejax._src.jaxpr import DropVar

_KEY_TYPES = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}
_CHUNKS = 64          # chunks of a long row searched in parallel
_LONG_ROW = 1 << 15   # rows at least this long, when few, are split
_FEW = 16             # fewer rows than this leave threads idle
_PARALLEL_MIN = 1 << 15   # elements below which the step runs on one thread


def supported(eqn):
  """Real dtypes whose values C can copy, rows indexable by int32."""
  v = eqn.invars[0]
  dtype = np.dtype(v.aval.dtype)
  if dtype.kind not in "biuf" or dtype.itemsize not in _KEY_TYPES:
    return False
  if dtype.kind == "f" and dtype.itemsize == 2 and not codegen_ops.is_half(dtype):
    return False
  if dtype.kind == "f" and dtype.itemsize == 1:
    return False
  return v.aval.shape[eqn.params["axis"]] < 1 << 31


def _key(dtype, value):
  """A C expression: an unsigned key of ``value`` increasing in top_k's order."""
  dtype = np.dtype(dtype)
  kt = _KEY_TYPES[dtype.itemsize]
  top = f"(({kt})1 << {8 * dtype.itemsize - 1})"
  if dtype.kind == "f":
    raw = {4: f"pj_bitsf({value})", 8: f"pj_bits({value})"}.get(dtype.itemsize, f"(({kt}){value})")
    # Sign-magnitude to an unsigned order: negatives reversed, below positives.
    return f"pj_topk_float_key_{kt}({raw})"
  if dtype.kind == "i":
    return f"(({kt})(({kt}){value} ^ {top}))"
  return f"(({kt}){value})"


def _helpers(kt):
  return rf"""
typedef struct {{ {kt} k; int32_t i; }} pj_top_{kt};
static inline {kt} pj_topk_float_key_{kt}({kt} u) {{
  const {kt} top = ({kt})1 << (8 * sizeof({kt}) - 1);
  return u & top ? ({kt})~u : ({kt})(u | top); }}
/* a is worse than b: a smaller value, or an equal value at a later index. */
static inline int pj_top_worse_{kt}(pj_top_{kt} a, pj_top_{kt} b) {{
  return a.k < b.k || (a.k == b.k && a.i > b.i); }}
static inline void pj_top_down_{kt}(pj_top_{kt}* h, int64_t at, int64_t size) {{
  const pj_top_{kt} v = h[at];
  for (;;) {{
    int64_t c = 2 * at + 1;
    if (c >= size) break;
    if (c + 1 < size && pj_top_worse_{kt}(h[c + 1], h[c])) c++;
    if (!pj_top_worse_{kt}(h[c], v)) break;
    h[at] = h[c];
    at = c;
  }}
  h[at] = v;
}}
/* Offer r to the heap h of size (< k: growing; == k: full, worst at root). */
static inline void pj_top_offer_{kt}(pj_top_{kt}* h, int64_t* size, int64_t k, pj_top_{kt} r) {{
  if (*size < k) {{
    int64_t at = (*size)++;
    while (at > 0) {{
      const int64_t p = (at - 1) / 2;
      if (!pj_top_worse_{kt}(r, h[p])) break;
      h[at] = h[p];
      at = p;
    }}
    h[at] = r;
  }} else if (pj_top_worse_{kt}(h[0], r)) {{
    h[0] = r;
    pj_top_down_{kt}(h, 0, k);
  }}
}}
/* Sort the heap best first (repeatedly move the worst to the end). */
static inline void pj_top_finish_{kt}(pj_top_{kt}* h, int64_t size) {{
  for (int64_t end = size - 1; end > 0; end--) {{
    const pj_top_{kt} t = h[0]; h[0] = h[end]; h[end] = t;
    pj_top_down_{kt}(h, 0, end);
  }}
}}
"""


def _pragma(fn, text, work):
  if not fn.unit.openmp:
    return []
  threads = f" num_threads({fn.unit.num_threads})" if fn.unit.num_threads > 0 else ""
  return [f"#pragma omp {text}{threads} if({work} >= {_PARALLEL_MIN})"]


def emit(step, fn):
  eqn = step.eqn
  k, axis = eqn.params["k"], eqn.params["axis"]
  x = eqn.invars[0]
  dtype = np.dtype(x.aval.dtype)
  shape = tuple(x.aval.shape)
  n = shape[axis]
  outer = int(np.prod(shape[:axis], dtype=np.int64))
  inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
  rows = outer * inner
  if k == 0 or rows == 0:
    return
  kt = _KEY_TYPES[dtype.itemsize]
  fn.unit.helper(f"top_k_{kt}", lambda: _helpers(kt))
  values, indices = eqn.outvars
  src = fn.ptr(x)
  key = _key(dtype, f"{src}[base + i * {inner}]")
  write = [f"{fn.ptr(indices)}[obase + t * {inner}] = h[t].i;"]
  if type(values) is not DropVar:
    write.append(f"{fn.ptr(values)}[obase + t * {inner}] = {src}[base + (int64_t)h[t].i * {inner}];")
  row = ["const int64_t o = r / {0}, j = r % {0};".format(inner),
         f"const int64_t base = o * {n * inner} + j, obase = o * {k * inner} + j;"]
  out = ["  pj_top_finish_{0}(h, size);".format(kt),
         f"  for (int64_t t = 0; t < {k}; t++) {{"] + ["    " + s for s in write] + ["  }"]
  def scan(lo, hi):   # offers the row's elements lo .. hi - 1 to the heap h
    return ["int64_t size = 0;",
            f"for (int64_t i = {lo}; i < {hi}; i++) {{",
            f"  const pj_top_{kt} rec = {{ {key}, (int32_t)i }};",
            f"  pj_top_offer_{kt}(h, &size, {k}, rec);",
            "}"]
  chunks = _CHUNKS if (rows < _FEW and n >= _LONG_ROW and k * _CHUNKS <= n) else 1
  lines = []
  if chunks == 1:
    # Each thread allocates its heap once, for all its rows.
    atomic = ["#pragma omp atomic write"] if fn.unit.openmp else []
    lines += ["int failed = 0;"] + _pragma(fn, "parallel", rows * n) + [
        "{",
        f"  pj_top_{kt}* h = (pj_top_{kt}*)malloc({k} * sizeof(pj_top_{kt}));",
        "  if (!h) {"] + ["    " + s for s in atomic] + ["    failed = 1;", "  }"]
    lines += ["  #pragma omp for schedule(dynamic, 16)"] if fn.unit.openmp else []
    lines += [f"  for (int64_t r = 0; r < {rows}; r++) {{", "    if (!h) continue;"]
    lines += ["    " + s for s in row]
    lines += ["    " + s for s in scan("0", str(n))]
    lines += ["  " + s for s in out]
    lines += ["  }", "  free(h);", "}", "if (failed) goto done;"]
  else:
    # Each (row, chunk) keeps its own top k in a fixed slot; then each row
    # merges its chunks' candidates.  (Records are at most 16 bytes.)
    cand = f"((pj_top_{kt}*){fn.scratch_buffer('uint64_t', 2 * rows * chunks * k)})"
    merged = f"((pj_top_{kt}*){fn.scratch_buffer('uint64_t', 2 * k)})"
    sizes = fn.scratch_buffer("int64_t", rows * chunks)
    lines += _pragma(fn, "parallel for schedule(dynamic, 1)", rows * n) + [
        f"for (int64_t rch = 0; rch < {rows * chunks}; rch++) {{",
        f"  const int64_t r = rch / {chunks}, c = rch % {chunks};"]
    lines += ["  " + s for s in row]
    lines += [f"  pj_top_{kt}* h = {cand} + rch * {k};",
              ] + ["  " + s for s in scan(f"{n} * c / {chunks}", f"{n} * (c + 1) / {chunks}")] + [
              f"  {sizes}[rch] = size;",
              "}",
              f"for (int64_t r = 0; r < {rows}; r++) {{"]
    lines += ["  " + s for s in row]
    lines += [f"  pj_top_{kt}* h = {merged};",
              "  int64_t size = 0;",
              f"  for (int64_t c = 0; c < {chunks}; c++) {{",
              f"    const pj_top_{kt}* part = {cand} + (r * {chunks} + c) * {k};",
              f"    const int64_t m = {sizes}[r * {chunks} + c];",
              f"    for (int64_t t = 0; t < m; t++) pj_top_offer_{kt}(h, &size, {k}, part[t]);",
              "  }"]
    lines += out + ["}"]
  fn.lines += [f"{{ /* top_k k={k} along axis {axis} of {list(shape)} */"]
  fn.lines += ["  " + s for s in lines] + ["}"]
