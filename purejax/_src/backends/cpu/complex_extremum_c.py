"""reduce_max / reduce_min of complex values folded in several blocks, in C.

A reduction XLA folds as one block is a fused kernel (``codegen_ops``); a
longer one (a reduced axis over 32 elements) follows ``lax.complex_extremum``'s
order here: for each output element, every block (a combination of one
segment per reduced axis, in row-major order) folds its elements in
row-major order from the identity, and the blocks' results fold left to
right.  Output elements are independent: any thread count gives the same bits.
"""
import numpy as np

from purejax._src.backends.cpu import codegen_ops
from purejax._src.lax import complex_extremum

NAMES = ("reduce_max", "reduce_min")
_PARALLEL_MIN = 1 << 15   # elements read before a loop gets threads


def supported(eqn):
  x = eqn.invars[0].aval
  return (np.dtype(x.dtype).kind == "c"
          and len(complex_extremum.blocks([x.shape[a] for a in eqn.params["axes"]])) > 1)


def _strides(shape):
  return [int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))]


def emit(step, fn):
  eqn = step.eqn
  x, out = eqn.invars[0], eqn.outvars[0]
  shape, axes = tuple(x.aval.shape), sorted(eqn.params["axes"])
  kept = [d for d in range(len(shape)) if d not in axes]
  strides = _strides(shape)
  dtype = np.dtype(x.aval.dtype)
  ct, part = codegen_ops.ctype(dtype), codegen_ops.ctype(np.finfo(dtype).dtype)
  is_max = eqn.primitive.name == "reduce_max"
  pick = f"pj_c{'max' if is_max else 'min'}{'f' if dtype == np.complex64 else ''}"
  identity = f"PJ_COMPLEX(({part}){'-INFINITY' if is_max else 'INFINITY'}, ({part})0)"
  outputs = int(np.prod([shape[d] for d in kept], dtype=np.int64))
  src, dst = fn.ptr(step.inputs[0]), fn.ptr(out)

  lines = []
  for a in axes:   # each reduced axis's segments: (start, stop) pairs in fold order
    bounds = [str(b) for seg in complex_extremum.segments(shape[a]) for b in seg]
    lines.append(f"static const int64_t seg{a}[] = {{{', '.join(bounds)}}};")
  if fn.unit.openmp:
    threads = f" num_threads({fn.unit.num_threads})" if fn.unit.num_threads > 0 else ""
    lines.append(f"#pragma omp parallel for{threads} if({int(np.prod(shape))} >= {_PARALLEL_MIN})")
  lines += [f"for (int64_t o = 0; o < {outputs}; o++) {{",
            "  int64_t rest = o, base = 0;"]
  for d in reversed(kept):   # the output's coordinates, row-major over the kept axes
    lines.append(f"  base += (rest % {shape[d]}) * {strides[d]}; rest /= {shape[d]};")
  lines += [f"  {ct} result = {identity};", "  int started = 0;"]
  loops = []   # the blocks in row-major order of their segments, then their elements
  for a in axes:
    loops.append(f"for (int64_t s{a} = 0; s{a} < {len(complex_extremum.segments(shape[a]))}; "
                 f"s{a}++)")
  block = [f"{ct} acc = {identity};"]
  for depth, a in enumerate(axes):
    block.append("  " * depth + f"for (int64_t i{a} = seg{a}[2 * s{a}]; "
                 f"i{a} < seg{a}[2 * s{a} + 1]; i{a}++)")
  index = " + ".join(f"i{a} * {strides[a]}" for a in axes)
  block.append("  " * len(axes) + f"acc = {pick}(acc, {src}[base + {index}]);")
  block.append(f"result = started ? {pick}(result, acc) : acc;")
  block.append("started = 1;")
  lines += ["  " + "  " * depth + loop for depth, loop in enumerate(loops)]
  indent = "  " * (len(axes) + 1)
  lines += [indent + "{"] + [indent + "  " + b for b in block] + [indent + "}"]
  lines += [f"  {dst}[o] = result;", "}"]
  fn.lines += ["{ /* complex " + eqn.primitive.name + " */"] + ["  " + s for s in lines] + ["}"]
