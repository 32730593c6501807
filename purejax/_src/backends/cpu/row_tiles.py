"""Reductions over axes around a kept one, read a whole row at a time.

Summing a (256, 256, 256) array over axes (0, 2) in ``reduction_order``'s
row order, one output after another, reads each output's elements as 256
pieces of 1 KB, 256 KB apart: every piece starts on a new page, so the
hardware prefetcher restarts for each, and a core waits on memory.  Here a
thread takes a tile of consecutive outputs and walks the outer reduced
axes outermost: for each of their points it reads the tile's pieces, which
lie side by side (a contiguous stretch of memory), into the tile's lanes.
Each output still folds its own elements in the same order, with the same
flushes, lane tree and block pairing, so the bits are those of
``reduction_order``; only the outputs' work is interleaved.  Reductions
exact in any order (max, min, integer sums) keep one accumulator per
output in the tile.

The tile's accumulators live on the thread's stack (``TILE_BYTES``), in
L1/L2.  They are loaded and stored for each piece, and a store followed by
loads of the next piece at the same address modulo 4 KB stalls the loads
(4K aliasing): where memory is the bottleneck this is hidden, but a body
that computes much per element (``exp``, ``log``) ran up to 2x slower
than output by output, depending on where the stack lies.  Only cheap
bodies (``memory_bound``) are tiled.
"""
from purejax._src.backends.cpu.codegen_reductions import CTYPE_SIZES
from purejax._src.backends.cpu.fusion import CHEAP_PRIMS, INDEX_PRIMS
from purejax._src.backends.cpu.indexing import run_variables
from purejax._src.backends.cpu.lane_tree import (
    block_final, block_merge, decl_ctype, is_ordered, lane_tree, run_end_flush, run_flush,
    run_names)
from purejax._src.lax import reduction_order
from purejax._src.lax.reduction_order import LANES, RUN

TILE_BYTES = 64 << 10   # one tile's accumulators (on the thread's stack)


def applies(nest, outer, red, decls, second):
  """Whether the scalar reduction with loops ``outer`` (kept) and ``red``
  (reduced) is read better as row tiles: some reduced axis outside a kept
  one; accumulators that are ordered lanes (then the innermost reduced run
  a multiple of LANES) or exact in any order (a simd operator: max, min,
  integer sums); no second pass."""
  if not outer or len(red) < 2 or second[0] or not decls:
    return False
  if not all(is_ordered(d) or (d[1] is not None and d[3]) for d in decls):
    return False
  if any(is_ordered(d) for d in decls) and nest.run_size(red[-1][1]) % LANES:
    return False
  return min(red[0][1]) < max(d for _, dims in outer for d in dims)


_CHEAP = CHEAP_PRIMS | INDEX_PRIMS | {"div"}


def memory_bound(group):
  """Whether ``group`` computes little per element (arithmetic, comparisons,
  indexing; no transcendental function): its time is then the memory's."""
  return all(e.primitive.name in _CHEAP for e in group.producer.values())


def _bytes_per_output(lanes, scalars, nb):
  total = sum(CTYPE_SIZES[decl_ctype(d)] for d, *_ in scalars)
  for _, _, _, (kind, ct, _) in lanes:
    size = CTYPE_SIZES[ct]
    total += LANES * size + (LANES * 4 if kind == "runs" else 0)
    total += nb.bit_length() * size if nb > 1 else 0
  return total


def _tile(outputs, threads, per_output):
  """Outputs per tile: as many tiles as a multiple of the threads (every
  thread gets as many), each within TILE_BYTES."""
  most = max(1, TILE_BYTES // per_output)
  tiles = -(-outputs // most)
  tiles = -(-tiles // threads) * threads
  return -(-outputs // tiles)


def emit(emitter, nest, outer, red, decls, body, finals, parallel):
  """The tiled loops: threads take tiles of outputs; per block (of the
  ordered lanes; one block without them), the outer reduced points
  outermost, the tile's outputs, then the innermost run: in chunks of
  LANES (the vectorized lane loop) with lanes, else one simd loop.  Exact
  accumulators (``scalars``) are loaded from the tile for each piece of a
  row and stored back."""
  lanes = [d for d in decls if is_ordered(d)]
  scalars = [d for d in decls if not is_ordered(d)]
  outputs = nest.run_size([d for _, dims in outer for d in dims])
  n = nest.run_size([d for _, dims in red for d in dims])
  inner = nest.run_size(red[-1][1])
  nb, block = reduction_order.blocks(n) if lanes else (1, n)
  threads = emitter.threads() if parallel else 1
  tile = _tile(outputs, threads, _bytes_per_output(lanes, scalars, nb))
  tiles = -(-outputs // tile)
  runs = run_names(lanes)
  var = red[-1][0]

  def aliases():
    """Each lanes accumulator's name bound to the current output's row of
    the tile."""
    out = [f"{ct}* restrict {nm} = {nm}_tile[o - olo];" for _, nm, _, (_, ct, _) in lanes]
    out += [f"float* restrict {nm}r = {nm}r_tile[o - olo];" for nm in runs]
    if nb > 1:
      out += [f"{ct}* restrict {nm[:-2]}_s = {nm[:-2]}_s_tile[o - olo];"
              for _, nm, _, (_, ct, _) in lanes]
    return out

  load = [f"{decl_ctype(d)} {nm} = {nm}_tile[o - olo];" for d, nm, _, _ in scalars]
  store = [f"{nm}_tile[o - olo] = {nm};" for _, nm, _, _ in scalars]
  each_output = "for (int64_t o = olo; o < ohi; o++) {"
  lines = emitter.pragma("parallel for") if parallel and tiles > 1 else []
  lines.append(f"for (int64_t ot = 0; ot < {tiles}; ot++) {{")
  lines.append(f"const int64_t olo = ot * {tile}, ohi = olo + {tile} < {outputs} ? "
               f"olo + {tile} : {outputs};")
  lines += [f"{decl_ctype(d)} {nm}_tile[{tile}];" for d, nm, _, _ in scalars]
  lines += [f"{ct} {nm}_tile[{tile}][{LANES}];" for _, nm, _, (_, ct, _) in lanes]
  lines += [f"float {nm}r_tile[{tile}][{LANES}];" for nm in runs]
  if nb > 1:
    lines += [f"{ct} {nm[:-2]}_s_tile[{tile}][{nb.bit_length()}];"
              for _, nm, _, (_, ct, _) in lanes]
  if scalars:
    lines += [each_output] + [f"{nm}_tile[o - olo] = {init};" for _, nm, init, _ in scalars]
    lines.append("}")
  lines.append(f"for (int64_t rb = 0; rb < {nb}; rb++) {{")
  lines.append(f"const int64_t rlo = rb * {block}, rhi = rlo + {block} < {n} ? "
               f"rlo + {block} : {n};")
  if lanes:
    lines += [each_output, f"for (int rl = 0; rl < {LANES}; rl++) {{"]
    lines += [f"{nm}_tile[o - olo][rl] = {init};" for _, nm, init, _ in lanes]
    lines += [f"{nm}r_tile[o - olo][rl] = 0;" for nm in runs] + ["}", "}"]
  # The outer reduced points of this block (rows of the innermost run).
  lines.append(f"for (int64_t ro = rlo / {inner}; ro * {inner} < rhi; ro++) {{")
  lines += run_variables(nest, red[:-1], "ro")
  lines.append(f"const int64_t clo = rlo > ro * {inner} ? rlo - ro * {inner} : 0;")
  lines.append(f"const int64_t chi = rhi < (ro + 1) * {inner} ? rhi - ro * {inner} : {inner};")
  lines += [each_output] + run_variables(nest, outer, "o") + aliases() + load
  clauses = " ".join(f"reduction({op}:{nm})" for _, nm, _, op in scalars)
  simd = emitter.pragma(f"simd {clauses}".strip())
  if lanes:
    lane_loop = simd + [f"for (int rl = 0; rl < {LANES}; rl++) {{"]
    lines += run_segments(inner, var, body, runs, "ro", lane_loop)
  else:
    lines += simd + [f"for (int64_t {var} = clo; {var} < chi; {var}++) {{"] + body + ["}"]
  lines += store + ["}", "}"]
  # The block's end, per output: the last run flushed, the lanes folded,
  # the block result paired; after the last block, the output stored.
  lines += [each_output] + aliases() + run_flush(runs) + lane_tree(lanes, "")
  lines += [f"{ct} {nm[:-2]}_t;" for _, nm, _, (_, ct, _) in lanes]
  lines += block_merge(lanes, nb, "")
  lines.append(f"if (rb == {nb - 1}) {{")
  lines += run_variables(nest, outer, "o") + load + block_final(lanes, nb, "") + finals
  lines += ["}", "}", "}", "}"]
  return lines


def run_segments(inner, var, body, runs, row, lane_loop):
  """The chunks of LANES elements of one row (``clo`` to ``chi`` of the
  innermost reduced run, row ``row`` of it) folded into the lanes, the
  runs flushed as they end.  Where rows and runs align (one divides the
  other), a row is cut into segments of whole runs or whole rows, each a
  loop of a fixed number of chunks that gcc unrolls, keeping the lanes in
  registers across chunks instead of storing and reloading them.
  ``lane_loop`` opens the loop over the lanes (with its pragma)."""
  span = RUN * LANES
  if inner % span and span % inner:
    lines = [f"for (int64_t {var}_start = clo; {var}_start < chi; {var}_start += {LANES}) {{"]
    lines += lane_loop + [f"const int64_t {var} = {var}_start + rl;"] + body + ["}"]
    return lines + run_end_flush(runs, f"{row} * {inner} + {var}_start") + ["}"]
  seg = min(inner, span)
  lines = [f"for (int64_t {var}_seg = clo; {var}_seg < chi; {var}_seg += {seg}) {{"]
  lines.append(f"#pragma GCC unroll {seg // LANES}")
  lines.append(f"for (int64_t {var}_start = {var}_seg; {var}_start < {var}_seg + {seg}; "
               f"{var}_start += {LANES}) {{")
  lines += lane_loop + [f"const int64_t {var} = {var}_start + rl;"] + body + ["}", "}"]
  return lines + run_end_flush(runs, f"{row} * {inner} + {var}_seg + {seg - LANES}") + ["}"]
