"""Reductions over outer axes whose kept axes are innermost: a matrix's
column sums, maxima, minima.

Exact ones (maxima, minima, integer sums) are read as whole rows.

Blocks of columns, each thread reading its block down all rows, read
memory in short runs far apart (512 columns of a 4096-wide float32 matrix
are 2 KB of each 16 KB row), at half the speed of reading whole rows.
Here threads take ranges of rows, each reduced into its own accumulators
and merged into the shared ones; the operators are exact, so any split
and merge order gives the same bits.

Float sums and products follow ``reduction_order``'s column order (each
column folds blocks of COLUMN_BLOCK rows in order, the blocks paired):
threads take tiles of columns (``ordered_tiles``), each tile's
accumulators a few vector registers wide, or, with few tiles and many
blocks, chunks of blocks (``ordered_row_chunks``): a power of two of them,
so that a chunk's result is a subtree of the pairing, its blocks read
whole rows at a time, the chunk results paired in order at the end.
"""
from purejax._src.backends.cpu.indexing import run_variables
from purejax._src.backends.cpu.codegen_reductions import CTYPE_SIZES, merge
from purejax._src.backends.cpu.lane_tree import (
    block_final, block_merge, block_stack_decls, decl_ctype, is_ordered)
from purejax._src.lax import reduction_order
from purejax._src.lax.reduction_order import COLUMN_BLOCK

EXACT_SHARED_BYTES = 64 << 10   # an exact reduction's shared accumulators (on the stack)
CHUNK_WIDTH = 4096     # columns one task's accumulators hold
ORDERED_STACK_BYTES = 64 << 10   # each thread's stack of block results (on its stack)
ORDERED_CHUNK_BYTES = 16 << 20   # the chunk results (a scratch buffer)
MAX_ORDERED_CHUNKS = 64


def _rows(nest, red):
  return nest.run_size([d for _, dims in red for d in dims])


def exact_fits(emitter, nest, red, decls, count):
  """Whether exact column reduction ``decls`` runs as row chunks."""
  width = sum(CTYPE_SIZES[decl_ctype(d)] for d, *_ in decls)
  return (all(d[3] and not is_ordered(d) for d in decls)
          and count * width <= EXACT_SHARED_BYTES and _rows(nest, red) >= 8 * emitter.threads())


def exact_row_chunks(emitter, nest, red, body, decls, folds, finals, count):
  """Each thread reduces a range of rows into its own accumulators, merged
  into the shared ones under a lock (any order: the operators are exact)."""
  n = _rows(nest, red)
  nch, width = emitter.threads(), min(count, CHUNK_WIDTH)
  each = "for (int64_t k = 0; k < kn; k++) {"
  lines = [f"{decl_ctype(d)} {nm}[{count}];" for d, nm, _, _ in decls]
  lines += [f"for (int64_t k = 0; k < {count}; k++) {{"]
  lines += [f"{nm}[k] = {init};" for _, nm, init, _ in decls] + ["}"]
  lines += [f"{decl_ctype(d)}* const {nm}_all = {nm};" for d, nm, _, _ in decls]
  lines += emitter.pragma("parallel for")
  lines.append(f"for (int64_t ci = 0; ci < {nch}; ci++) {{")
  lines.append(f"const int64_t rlo = {n} * ci / {nch}, rhi = {n} * (ci + 1) / {nch};")
  lines.append(f"for (int64_t kb = 0; kb < {count}; kb += {width}) {{")
  lines.append(f"const int64_t kn = {count} - kb < {width} ? {count} - kb : {width};")
  # The chunk's accumulators shadow the shared ones, which the folds name.
  lines += [f"{decl_ctype(d)} {nm}[{width}];" for d, nm, _, _ in decls]
  lines += [each] + [f"{nm}[k] = {init};" for _, nm, init, _ in decls] + ["}"]
  lines.append("for (int64_t rr = rlo; rr < rhi; rr++) {")
  lines += run_variables(nest, red, "rr")
  lines += emitter.pragma("simd")
  lines += [each, "const int64_t kin = kb + k;"] + body + folds + ["}", "}"]
  lines += emitter.pragma("critical")
  lines += [each] + [merge(op, f"{nm}_all[kb + k]", f"{nm}[k]") for _, nm, _, op in decls]
  lines += ["}", "}", "}"]
  lines += [f"for (int64_t k = 0; k < {count}; k++) {{", "const int64_t kin = k;"]
  return lines + finals + ["}"]


def _blocks_of(nest, red):
  return reduction_order.blocks(_rows(nest, red), COLUMN_BLOCK, 1)[0]


def _row_block(n):
  return [f"const int64_t rlo = rb * {COLUMN_BLOCK}, rhi = rlo + {COLUMN_BLOCK} < {n} ? "
          f"rlo + {COLUMN_BLOCK} : {n};"]


def _fold_rows(emitter, nest, red, body, decls, folds):
  """A tile's accumulators set to the identity, then the block's rows folded in."""
  each = "for (int64_t k = 0; k < kn; k++) {"
  lines = [each] + [f"{nm}[k] = {init};" for _, nm, init, _ in decls] + ["}"]
  lines.append("for (int64_t rr = rlo; rr < rhi; rr++) {")
  lines += run_variables(nest, red, "rr")
  lines += emitter.pragma("simd")
  return lines + [each, "const int64_t kin = kb + k;"] + body + folds + ["}", "}"]


def ordered_tiles(emitter, nest, red, body, decls, folds, finals, width, head):
  """Ordered column reductions by tiles of ``width`` columns (``head``: the
  loops over the tiles, from ``_blocks_head``); exact ones may come along."""
  n, nb = _rows(nest, red), _blocks_of(nest, red)
  ordered = [d for d in decls if is_ordered(d)]
  exact = [d for d in decls if not is_ordered(d)]
  each = "for (int64_t k = 0; k < kn; k++) {"
  lines = list(head)
  lines += [f"{ct} {nm[:-2]}_t[{width}];" for _, nm, _, (_, ct, _) in ordered]
  lines += block_stack_decls(ordered, nb, f"[{width}]")
  lines += [each] + [f"{nm}[k] = {init};" for _, nm, init, _ in exact] + ["}"]
  lines.append(f"for (int64_t rb = 0; rb < {nb}; rb++) {{")
  lines += _row_block(n)
  lines += _fold_rows(emitter, nest, red, body, ordered, folds)
  lines += [each] + block_merge(ordered, nb, "[k]", value="{nm}{k}") + ["}"]
  lines.append("}")
  lines += [each, "const int64_t kin = kb + k;"] + block_final(ordered, nb, "[k]")
  return lines + finals + ["}", "}"]


def ordered_chunk_blocks(emitter, nest, red, decls, count, width):
  """Blocks per chunk for ``ordered_row_chunks`` (a power of two), or None
  where tiles of ``width`` columns are better: too few blocks, too many
  columns, or enough tiles for the threads."""
  nb, tiles = _blocks_of(nest, red), -(-count // width)
  if not all(is_ordered(d) for d in decls) or nb < 2:
    return None
  row = sum(CTYPE_SIZES[decl_ctype(d[0])] for d in decls) * count
  per = 1
  while -(-nb // per) > min(MAX_ORDERED_CHUNKS, ORDERED_CHUNK_BYTES // row):
    per *= 2
  nch = -(-nb // per)
  if (nch < max(2, min(2 * emitter.threads(), tiles))
      or per.bit_length() * row > ORDERED_STACK_BYTES):
    return None
  return per


def ordered_row_chunks(emitter, nest, red, body, decls, folds, finals, count, width, per):
  """Ordered column reductions by chunks of ``per`` blocks of rows: each
  chunk's blocks folded tile by tile and paired into the chunk's result,
  the chunk results then paired in order."""
  n, nb = _rows(nest, red), _blocks_of(nest, red)
  nch, full, tail = -(-nb // per), nb // per, nb % per
  each = "for (int64_t k = 0; k < kn; k++) {"
  cts = [(nm[:-2], ct) for _, nm, _, (_, ct, _) in decls]
  lines = [f"{ct} (* const {base}_c)[{count}] = ({ct} (*)[{count}]){emitter.scratch_buffer(ct, nch * count)};"
           for base, ct in cts]
  lines += [f"{ct}* const {base}_t = {emitter.scratch_buffer(ct, count)};" for base, ct in cts]
  lines += emitter.pragma("parallel for")
  lines.append(f"for (int64_t ci = 0; ci < {nch}; ci++) {{")
  lines += block_stack_decls(decls, per, f"[{count}]")
  lines.append(f"const int64_t rb0 = ci * {per};")
  lines.append(f"for (int64_t rb = rb0; rb < rb0 + {per} && rb < {nb}; rb++) {{")
  lines += _row_block(n)
  lines.append(f"for (int64_t kb = 0; kb < {count}; kb += {width}) {{")
  lines.append(f"const int64_t kn = {count} - kb < {width} ? {count} - kb : {width};")
  lines += [f"{d};" for d, *_ in decls]
  lines += _fold_rows(emitter, nest, red, body, decls, folds)
  if per == 1:
    lines += [each] + [f"{base}_c[ci][kb + k] = {base}_0[k];" for base, _ in cts] + ["}"]
  else:
    lines += [each] + block_merge(decls, per, "[kb + k]", counter="rb - rb0",
                                  value="{nm}[k]") + ["}"]
  lines += ["}", "}"]
  if per > 1:
    # The chunk's stack folded: a whole subtree of ``per`` blocks, or the tail.
    lines.append(f"for (int64_t k = 0; k < {count}; k++) {{")
    lines += [f"{ct} {base}_t;" for base, ct in cts]
    lines.append(f"if (ci < {full}) {{")
    lines += block_final(decls, per, "[k]", target="{t}")
    if tail:
      lines.append("} else {")
      lines += (block_final(decls, tail, "[k]", target="{t}") if tail > 1 else
                [f"{base}_t = {base}_s[0][k];" for base, _ in cts])
    lines.append("}")
    lines += [f"{base}_c[ci][k] = {base}_t;" for base, _ in cts] + ["}"]
  lines.append("}")
  lines += [f"for (int64_t k = 0; k < {count}; k++) {{", "const int64_t kin = k;"]
  lines += block_stack_decls(decls, nch, "")
  lines.append(f"for (int64_t rb = 0; rb < {nch}; rb++) {{")
  lines += block_merge(decls, nch, "", value="{base}_c[rb][k]") + ["}"]
  return lines + block_final(decls, nch, "", target="{t}[k]") + finals + ["}"]
