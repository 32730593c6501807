"""Exact reductions over outer axes whose kept axes are innermost (a
matrix's column maxima, minima, integer sums), read as whole rows.

Blocks of columns, each thread reading its block down all rows, read
memory in short runs far apart (512 columns of a 4096-wide float32 matrix
are 2 KB of each 16 KB row), at half the speed of reading whole rows.
Here threads take ranges of rows, each reduced into its own accumulators
and merged into the shared ones; the operators are exact, so any split
and merge order gives the same bits.  (Ordered float sums keep column
blocks: their LANES accumulators per column would not fit a cache for
whole rows; tried with lane groups in a scratch buffer, it was slower.)
"""
from purejax._src.backends.cpu.indexing import run_variables
from purejax._src.backends.cpu.codegen_ops import CTYPE_SIZES, merge
from purejax._src.backends.cpu.lane_tree import decl_ctype, is_lanes

EXACT_SHARED_BYTES = 64 << 10   # an exact reduction's shared accumulators (on the stack)
CHUNK_WIDTH = 4096     # columns one task's accumulators hold


def _rows(nest, red):
  return nest.run_size([d for _, dims in red for d in dims])


def exact_fits(emitter, nest, red, decls, count):
  """Whether exact column reduction ``decls`` runs as row chunks."""
  width = sum(CTYPE_SIZES[decl_ctype(d)] for d, *_ in decls)
  return (all(d[3] and not is_lanes(d) for d in decls)
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
