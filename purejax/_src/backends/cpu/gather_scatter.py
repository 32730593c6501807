"""``gather`` and the ``scatter`` family as native steps: C loops over the
index rows and each row's window, with the NumPy implementations' semantics
(lax/gather.py, lax/scatter.py): starts in int64, clamped into range; gather
fills (FILL_OR_DROP) or clamps out-of-bounds windows, scatter drops them
(clamps with CLIP); updates apply in row order, window elements in C order,
so repeated positions combine exactly as NumPy's ``ufunc.at`` does.

A window is walked as a few loops over runs of its dims merged where they
are contiguous, the innermost one, when contiguous on both sides, a plain
vectorizable copy or combine of a row slice.

Gathers run their index rows in parallel (each row writes its own window).
A scatter is parallel by ownership: each thread owns a contiguous range of
the output, initializes it (a copy of the operand, or the fill value when
the operand is a broadcast scalar, so no zeros are stored and copied), then
walks every index row in order and applies only the updates landing in its
range.  Each output element therefore sees its updates in row order, the same
sequence for any number of threads: the bits never depend on it.
"""
import numpy as np

from purejax._src.backends.cpu import codegen_ops
from purejax._src.backends.cpu.indexing import strides
from purejax._src.lax.gather import GatherScatterMode

SCATTERS = ("scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min",
            "scatter-max")
# A gather or scatter touching at least this many elements runs on all threads.
PARALLEL_MIN_POINTS = 1 << 15
_ALIGN_BYTES = 64   # threads' output ranges start on cache lines
# Scatters whose index rows update at least this many elements each run
# them on all threads, each thread applying those in its own output range.
_OWNED_MIN_WINDOW = 16
_FILL_BLOCK = 1 << 14   # elements per parallel block initializing an output


def supported(eqn):
  """Gathers, and scatters that replace or combine with a ufunc (not a
  general combiner jaxpr; no bool arithmetic)."""
  name = eqn.primitive.name
  if name == "gather":
    return True
  if name == "scatter":
    return eqn.params.get("update_jaxpr") is None
  dtype = np.dtype(eqn.outvars[0].aval.dtype)
  return name in SCATTERS and dtype != np.bool_


def scalar_fill(eqn, views):
  """For a scatter whose operand is a view broadcasting a scalar (the zeros
  of a gradient or a ``segment_sum``), that scalar: the scatter fills its
  output with it instead of copying a stored operand."""
  if eqn.primitive.name not in SCATTERS:
    return None
  view = views.get(eqn.invars[0])
  if view is None or view.primitive.name != "broadcast_in_dim":
    return None
  source = view.invars[0]
  return source if source.aval.shape == () else None


def _prod(xs):
  return int(np.prod(xs, dtype=np.int64))


def _row_starts(fn, step, indices, rank, index_map, operand_batching, indices_batching):
  """C lines (run inside ``for r``) setting ``st[d]``, the row's start in
  every operand dim."""
  batch_shape = indices.aval.shape[:-1]
  nidx = indices.aval.shape[-1]
  bstrides = strides(batch_shape)
  ct = codegen_ops.ctype(indices.aval.dtype)
  lines = [f"int64_t st[{max(1, rank)}] = {{0}};"]
  base = fn.ptr(step.read(indices))

  def read(j):
    value = f"((const {ct}*){base})[r * {nidx} + {j}]"
    if np.dtype(indices.aval.dtype) == np.uint64:   # past int64: out of bounds, not negative
      return f"({value} > INT64_MAX ? INT64_MAX : (int64_t){value})"
    return f"(int64_t){value}"
  lines += [f"st[{d}] = {read(j)};" for j, d in enumerate(index_map)]
  lines += [f"st[{od}] = (r / {bstrides[idim]}) % {batch_shape[idim]};"
            for od, idim in zip(operand_batching, indices_batching)]
  return lines


def _in_bounds(shape, window, index_map):
  terms = [f"(st[{d}] >= 0 && st[{d}] <= {shape[d] - window[d]})" for d in index_map]
  return " && ".join(terms) or "1"


def _clamp(shape, window, dims):
  lines = []
  for d in dims:
    hi = max(shape[d] - window[d], 0)
    lines.append(f"st[{d}] = st[{d}] < 0 ? 0 : st[{d}] > {hi} ? {hi} : st[{d}];")
  return lines


def _window_runs(shape, window, kept, other_strides):
  """The window's loops, outermost first, as (count, operand stride, other
  stride); dims of size 1 dropped, neighbours contiguous on both sides merged."""
  xstrides = strides(shape)
  runs = []
  for d in reversed(range(len(shape))):
    if window[d] == 1:
      continue
    n, xs, ys = window[d], xstrides[d], other_strides[kept.index(d)]
    if runs and runs[-1][1] * runs[-1][0] == xs and runs[-1][2] * runs[-1][0] == ys:
      m, xs, ys = runs.pop()
      n *= m
    runs.append((n, xs, ys))
  return runs[::-1]


class _Walk:
  """How one row's window is walked: ``loops`` (outer runs), and the inner
  contiguous slice of ``length`` elements (1 when none is contiguous)."""

  def __init__(self, shape, window, kept, other_strides):
    runs = _window_runs(shape, window, kept, other_strides)
    if runs and runs[-1][1] == 1 and runs[-1][2] == 1:
      self.length = runs.pop()[0]
    else:
      self.length = 1
    self.loops = runs
    # The distance from a window's first element to its last.
    self.span = sum((n - 1) * xs for n, xs, _ in runs) + self.length - 1

  def nest(self, statement):
    """Lines running ``statement`` (lines using ``xo``, ``yo``: the slice's
    first offsets) for each slice of the row at ``base``/``ybase``."""
    lines, pad = [], ""
    for k, (n, _, _) in enumerate(self.loops):
      lines.append(f"{pad}for (int64_t w{k} = 0; w{k} < {n}; w{k}++) {{")
      pad += "  "
    xo = " + ".join(["base"] + [f"w{k} * {xs}" for k, (_, xs, _) in enumerate(self.loops)])
    yo = " + ".join(["ybase"] + [f"w{k} * {ys}" for k, (_, _, ys) in enumerate(self.loops)])
    lines += [f"{pad}{{ const int64_t xo = {xo}, yo = {yo};"]
    lines += [f"{pad}  {s}" for s in statement]
    lines.append(pad + "}")
    for _ in self.loops:
      pad = pad[:-2]
      lines.append(pad + "}")
    return lines


def _row_offsets(shape, batch_shape, other_batch_strides):
  """Lines computing ``base`` (the window's first operand offset, from
  ``st``) and ``ybase`` (the other array's, from the row number)."""
  xstrides = strides(shape)
  bstrides = strides(batch_shape)
  terms = [f"st[{d}] * {xstrides[d]}" for d in range(len(shape))] or ["0"]
  yterms = [f"(r / {bstrides[j]}) % {n} * {other_batch_strides[j]}"
            for j, n in enumerate(batch_shape) if n > 1] or ["0"]
  return [f"const int64_t base = {' + '.join(terms)};",
          f"const int64_t ybase = {' + '.join(yterms)};"]


def _parallel_pragma(fn, points, text):
  if not fn.unit.openmp or points < PARALLEL_MIN_POINTS:
    return []
  threads = fn.unit.num_threads
  return [f"#pragma omp {text}" + (f" num_threads({threads})" if threads > 0 else "")]


def emit_gather(step, fn):
  eqn, p = step.eqn, step.eqn.params
  dn = p["dimension_numbers"]
  x, indices = eqn.invars
  out = eqn.outvars[0]
  shape, window = tuple(x.aval.shape), tuple(p["slice_sizes"])
  rank = len(shape)
  dtype = np.dtype(x.aval.dtype)
  ct = codegen_ops.storage_ctype(dtype)
  batch_shape = indices.aval.shape[:-1]
  rows = _prod(batch_shape)
  dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
  kept = [d for d in range(rank) if d not in dropped]
  ostrides = strides(out.aval.shape)
  batch_out = [d for d in range(out.aval.ndim) if d not in dn.offset_dims]
  walk = _Walk(shape, window, kept, [ostrides[dn.offset_dims[i]] for i in range(len(kept))])
  xs, ys = f"((const {ct}*){fn.ptr(step.read(x))})", f"(({ct}*){fn.ptr(out)})"
  body = _row_starts(fn, step, indices, rank, dn.start_index_map, dn.operand_batching_dims,
                     dn.start_indices_batching_dims)
  copy = f"for (int64_t j = 0; j < {walk.length}; j++) {ys}[yo + j] = {xs}[xo + j];"
  if p["mode"] == GatherScatterMode.FILL_OR_DROP:
    with np.errstate(invalid="ignore", over="ignore"):
      value = np.array(p["fill_value"] if p["fill_value"] is not None else 0).astype(dtype)
    fill = codegen_ops.storage_literal(value[()], dtype)
    body.append(f"const int ok = {_in_bounds(shape, window, dn.start_index_map)};")
    copy = (f"if (ok) {copy} else for (int64_t j = 0; j < {walk.length}; j++) "
            f"{ys}[yo + j] = {fill};")
  # Every start is clamped (fill mode included), so no read leaves the operand.
  body += _clamp(shape, window, sorted(set(dn.start_index_map)))
  body += _row_offsets(shape, batch_shape, [ostrides[d] for d in batch_out])
  body += walk.nest([copy])
  lines = _parallel_pragma(fn, _prod(out.aval.shape), "parallel for schedule(static)")
  lines += [f"for (int64_t r = 0; r < {rows}; r++) {{"] + ["  " + s for s in body] + ["}"]
  fn.lines += ["{ /* gather */"] + ["  " + s for s in lines] + ["}"]


def combine(name, dtype, old, new):
  """The scatter's update of ``old`` by ``new`` (stored values), as the impl
  computes it: half floats in float32, each result rounded to the type;
  complex products as NumPy's."""
  if name == "scatter":
    return new
  op = {"scatter-add": "+", "scatter-sub": "-", "scatter-mul": "*"}.get(name)
  if codegen_ops.is_half(dtype):
    a, b = codegen_ops.load(old, dtype), codegen_ops.load(new, dtype)
    value = (f"pj_{'min' if name == 'scatter-min' else 'max'}f({a}, {b})" if op is None
             else codegen_ops.round_to(f"({a} {op} {b})", dtype))
    return codegen_ops.store(value, dtype)
  if name in ("scatter-min", "scatter-max"):
    which = "min" if name == "scatter-min" else "max"
    if dtype.kind == "f":   # lax's: NaN propagates, -0.0 orders below +0.0
      return f"pj_{which}{'f' if dtype == np.float32 else ''}({old}, {new})"
    if dtype.kind == "c":   # XLA's lexicographic rule, in scatter order
      return f"pj_c{which}{'f' if dtype == np.complex64 else ''}({old}, {new})"
    op = "<=" if which == "min" else ">="
    return f"(({old} {op} {new}) ? {old} : {new})"
  if dtype.kind == "c" and op == "*":
    return f"pj_cmul{'f' if dtype == np.complex64 else ''}({old}, {new})"
  if dtype.kind in "fc":
    return f"({old} {op} {new})"
  u = codegen_ops.wide_unsigned(dtype)
  return f"(({codegen_ops.ctype(dtype)})(({u}){old} {op} ({u}){new}))"


def emit_scatter(step, fn):
  eqn, p = step.eqn, step.eqn.params
  dn = p["dimension_numbers"]
  x, indices, updates = eqn.invars
  out = eqn.outvars[0]
  shape, ushape = tuple(x.aval.shape), tuple(updates.aval.shape)
  rank = len(shape)
  dtype = np.dtype(x.aval.dtype)
  ct = codegen_ops.storage_ctype(dtype)
  size = _prod(shape)
  dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
  kept = [d for d in range(rank) if d not in dropped]
  window = [1] * rank
  for i, d in enumerate(kept):
    window[d] = ushape[dn.update_window_dims[i]]
  ustrides = strides(ushape)
  scatter_axes = [d for d in range(len(ushape)) if d not in dn.update_window_dims]
  batch_shape = indices.aval.shape[:-1]
  walk = _Walk(shape, window, kept, [ustrides[dn.update_window_dims[i]]
                                     for i in range(len(kept))])
  us, ys = f"((const {ct}*){fn.ptr(step.read(updates))})", f"(({ct}*){fn.ptr(out)})"
  operand = None if step.fill is not None else fn.ptr(step.read(x))
  # The output shares the operand's buffer (a loop carry updated in place):
  # nothing to copy first.
  in_place = (step.inputs[0], out) in fn.in_place
  init = ("" if in_place else
          f"{{ const {ct} v = *{fn.ptr(step.fill)}; for (int64_t i = lo; i < hi; i++) "
          f"{ys}[i] = v; }}" if operand is None else
          f"memcpy({ys} + lo, {operand} + lo, (size_t)(hi - lo) * {dtype.itemsize});")
  body = _row_starts(fn, step, indices, rank, dn.scatter_dims_to_operand_dims,
                     dn.operand_batching_dims, dn.scatter_indices_batching_dims)
  if p["mode"] == GatherScatterMode.CLIP:
    body += _clamp(shape, window, range(rank))
  else:
    body.append(f"if (!({_in_bounds(shape, window, dn.scatter_dims_to_operand_dims)})) "
                "continue;")
  body += _row_offsets(shape, batch_shape, [ustrides[a] for a in scatter_axes])
  combined = combine(eqn.primitive.name, dtype, f"{ys}[xo + j]", f"{us}[yo + j]")
  update = f"{ys}[xo + j] = {combined};"
  rows, per_row = _prod(batch_shape), _prod(window)
  # Owning threads each walk every row; worth it only for rows of some
  # length (a scalar per row makes the ownership test the work itself).
  pragma = _parallel_pragma(fn, (0 if in_place else size) + rows * per_row, "parallel")
  if per_row >= _OWNED_MIN_WINDOW and pragma:
    lines = pragma + _owned_ranges(size, dtype, init, rows, body, walk, update)
  else:
    lines = _in_order(fn, size, init, rows, body, walk, update)
  fn.lines += [f"{{ /* {eqn.primitive.name} */"] + lines + ["}"]


def _row_loop(rows, body):
  return [f"for (int64_t r = 0; r < {rows}; r++) {{"] + ["  " + s for s in body] + ["}"]


def _owned_ranges(size, dtype, init, rows, body, walk, update):
  """A parallel region: each thread initializes its range [lo, hi) of the
  output (whole cache lines) and applies, in row order, the updates in it."""
  align = max(1, _ALIGN_BYTES // dtype.itemsize)
  body = body + [f"if (base + {walk.span} < lo || base >= hi) continue;"]
  body += walk.nest(["const int64_t j0 = lo > xo ? lo - xo : 0;",
                     f"const int64_t j1 = hi - xo < {walk.length} ? hi - xo : {walk.length};",
                     f"for (int64_t j = j0; j < j1; j++) {update}"])
  region = ["extern int omp_get_thread_num(void), omp_get_num_threads(void);",
            "const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();",
            f"const int64_t chunk = (({size} + nt - 1) / nt + {align - 1}) / {align} * {align};",
            f"const int64_t lo = t * chunk < {size} ? t * chunk : {size};",
            f"const int64_t hi = lo + chunk < {size} ? lo + chunk : {size};",
            init] + _row_loop(rows, body)
  return ["{"] + ["  " + s for s in region] + ["}"]


def _in_order(fn, size, init, rows, body, walk, update):
  """The output initialized in parallel blocks (unless it is updated in
  place: no ``init``), then the rows applied in order on one thread."""
  body = body + walk.nest([f"for (int64_t j = 0; j < {walk.length}; j++) {update}"])
  if not init:
    return _row_loop(rows, body)
  blocks = -(-size // _FILL_BLOCK)
  lines = _parallel_pragma(fn, size, "parallel for schedule(static)")
  lines += [f"for (int64_t b = 0; b < {blocks}; b++) {{",
            f"  const int64_t lo = b * {_FILL_BLOCK}, "
            f"hi = lo + {_FILL_BLOCK} < {size} ? lo + {_FILL_BLOCK} : {size};",
            "  " + init, "}"]
  return lines + _row_loop(rows, body)
