"""C code generation for the kernels of a fusion plan: one function per group
(``program`` assembles them into entry points).

A kernel walks its iteration space with loops whose index expressions are
built symbolically (``indexing``), so broadcasts, transposes and reshapes
become index arithmetic on reads; adjacent loop dimensions that every index
walks in row-major order share one loop variable, so an elementwise chain
over whole arrays is one flat, vectorizable loop.  Loops over at least
``PARALLEL_MIN_POINTS`` points get an OpenMP ``parallel for``.

Reductions run their reduced loops innermost with scalar accumulators, or,
when some kept axes come after the reduced ones (column sums), with a block
of accumulators along those axes so that reads stay contiguous.  Float sums
and products follow ``lax.reduction_order`` (the order the NumPy backend
computes too): along rows, ``LANES`` explicit accumulators per block of
``BLOCK`` elements (float32 lanes folding runs of ``RUN`` in float32 before
their float64 accumulators), a halving tree over the lanes, a pairwise tree
over the blocks; down columns (``column_reductions``), blocks of ``COLUMN_BLOCK``
rows folded in order, paired the same way.
"""
import re

import numpy as np

from purejax._src.backends.cpu import (codegen_ops, codegen_reductions, column_reductions,
                                      row_epilogue, row_tiles)
from purejax._src.backends.cpu.indexing import (
    Ix, LoopNest, ZERO, all_ixs, flatten, mergeable, run_variables, unflatten)
from purejax._src.backends.cpu.lane_tree import (
    block_final, block_merge, block_stack_decls, is_ordered, lane_tree, run_end_flush,
    run_flush, run_names)
from purejax._src.config import thread_count
from purejax._src.jaxpr import Literal
from purejax._src.lax import reduction_order
from purejax._src.lax.reduction_order import BLOCK, LANES

PARALLEL_MIN_POINTS = 1 << 15
_MAX_BLOCK = 512   # accumulators per block when reducing over outer axes
_MAX_ORDERED_BLOCK = 64   # the same for ordered sums (their float64 accumulators in registers)
_MAX_CHUNKS = 4096   # whole-array reductions: partial results kept on the stack
_ARG_BUFFER = 4096   # longest argmax axis whose values a kernel keeps on its stack


def _block_size(count, threads, most=_MAX_BLOCK):
  """Accumulators per block of a reduction over outer axes: blocks of at
  most ``most`` lanes, as many as a multiple of the threads (so that
  every thread gets as many), a multiple of 8 lanes wide."""
  blocks = -(-count // most)
  blocks = -(-blocks // threads) * threads
  width = -(-count // blocks)
  return min(count, max(8, -(-width // 8) * 8))


def build_kernel(plan, group, name, num_threads=0, openmp=True, may_alias=frozenset()):
  """The C function computing ``group`` of ``plan``: a _Kernel.  The
  parameters of ``may_alias``'s vars are not ``restrict``: a caller may
  pass one buffer for an input of ``same_index_inputs`` and an output (an
  update in place)."""
  return _KernelBuilder(plan, group, name, num_threads, openmp, may_alias).build()


# -- kernels -----------------------------------------------------------------------------

class _Kernel:
  """``same_index_inputs``: the inputs whose elements are each read only
  where the kernel writes the same element of its outputs (a map kernel
  loading them at its own index), so an output may overwrite one."""

  def __init__(self, name, inputs, outputs, source, same_index_inputs=frozenset(), scratch=()):
    self.name, self.inputs, self.outputs, self.source = name, inputs, outputs, source
    self.same_index_inputs = same_index_inputs
    self.scratch = list(scratch)   # (C type, count) of buffers passed after the outputs


def _broadcast_index(operand_shape, out_shape, idx):
  """Where an elementwise operand (rank 0, or size-1 axes stretched) is read."""
  if len(operand_shape) == 0:
    return ()
  return tuple(ZERO if s == 1 and o != 1 else i
               for s, o, i in zip(operand_shape, out_shape, idx))


def _outer_product_index(eqn, idx):
  """Where each operand of a contraction-free dot_general is read for output
  index ``idx`` (batch dims, then the lhs's free dims, then the rhs's)."""
  _, (lb, rb) = eqn.params["dimension_numbers"]
  lhs, rhs = (v.aval.ndim for v in eqn.invars)
  lf = [d for d in range(lhs) if d not in lb]
  rf = [d for d in range(rhs) if d not in rb]
  nb = len(lb)
  return (tuple(idx[list(lb).index(d)] if d in lb else idx[nb + lf.index(d)]
                for d in range(lhs)),
          tuple(idx[list(rb).index(d)] if d in rb else idx[nb + len(lf) + rf.index(d)]
                for d in range(rhs)))


def _view_index(eqn, idx, sizes):
  """The index of a view equation's operand read for output index ``idx``."""
  name, params = eqn.primitive.name, eqn.params
  in_shape = tuple(eqn.invars[0].aval.shape)
  out_shape = tuple(eqn.outvars[0].aval.shape)
  if name == "broadcast_in_dim":
    dims = params["broadcast_dimensions"]
    return tuple(ZERO if s == 1 else idx[d] for s, d in zip(in_shape, dims))
  if name == "reshape":
    perm = params["dimensions"]
    moved = in_shape if perm is None else tuple(in_shape[p] for p in perm)
    moved_idx = unflatten(flatten(idx, out_shape), moved, sizes)
    if perm is None:
      return moved_idx
    out = [None] * len(in_shape)
    for k, p in enumerate(perm):
      out[p] = moved_idx[k]
    return tuple(out)
  if name == "squeeze":
    it = iter(idx)
    dims = set(params["dimensions"])
    return tuple(ZERO if d in dims else next(it) for d in range(len(in_shape)))
  if name == "transpose":
    out = [None] * len(in_shape)
    for i, p in enumerate(params["permutation"]):
      out[p] = idx[i]
    return tuple(out)
  if name == "slice":
    starts, steps = params["start_indices"], params["strides"]
    if steps is None:   # starts clamp as in the impl
      steps = (1,) * len(in_shape)
      starts = [min(max(int(s), 0), d - n) for s, n, d in zip(starts, out_shape, in_shape)]
    return tuple(i.scale(int(st)) + int(s) for i, s, st in zip(idx, starts, steps))
  if name == "rev":
    dims = set(params["dimensions"])
    return tuple(i.scale(-1) + (n - 1) if d in dims else i
                 for d, (i, n) in enumerate(zip(idx, in_shape)))
  return idx   # convert_element_type, copy, stop_gradient


class NotRowLocal(Exception):
  """A group with a prologue reads the prologue's results at another row."""


class KernelValues:
  """The values of one group's kernel as C expressions (shared by the C and
  the CUDA kernel builders).  Index expressions are emitted as placeholders
  (``ix``) and rendered once the loop structure is chosen (which depends on
  all of them)."""

  def __init__(self, plan, group, name):
    self.plan, self.group, self.name = plan, group, name
    self.sizes = group.shape
    self.loads = {}   # input var -> the indices it is loaded at
    self.body = []
    self.cache = {}
    self.inputs, self.outputs = [], []
    self.ixs = []
    self.ntmp = 0
    self.row_values = {}   # a row's result var -> (C element holding it, its index here)
    self.row_producers = {}   # var -> equation of a prologue's map group
    self.row_buffer = None   # building an epilogue: (var, index) -> its row buffer element

  # values ------------------------------------------------------------------------

  def ix(self, ix):
    self.ixs.append(ix)
    return f"@{len(self.ixs) - 1}@"

  def tmp(self, ctype, expr):
    name = f"t{self.ntmp}"
    self.ntmp += 1
    self.body.append(f"const {ctype} {name} = {expr};")
    return name

  def param(self, v):
    if v not in self.inputs:
      self.inputs.append(v)
    return f"p{self.inputs.index(v)}"

  def value(self, v, idx):
    """A C expression for ``v`` at index ``idx`` (a tuple of Ix)."""
    if type(v) is Literal:
      return codegen_ops.literal(v.val, v.aval.dtype)
    key = (v, idx)
    hit = self.cache.get(key)
    if hit is not None:
      return hit
    if self.row_buffer is not None:   # an epilogue's read of the row's values
      element = self.row_buffer(v, idx)
      if element is not None:
        expr = self.cache[key] = self.tmp(codegen_ops.ctype(v.aval.dtype), element)
        return expr
    row = self.row_values.get(v)
    if row is not None:   # a prologue reduction's result: this row's only
      name, at = row
      if idx != at:
        raise NotRowLocal(f"{v} read at another row")
      expr = self.cache[key] = self.tmp(codegen_ops.ctype(v.aval.dtype),
                                        codegen_ops.load(name, v.aval.dtype))
      return expr
    eqn = self.group.producer.get(v) or self.row_producers.get(v)
    if eqn is None and not self.plan.stored_before(v, self.group):
      eqn = self.plan.views.get(v)
    if eqn is None:
      self.loads.setdefault(v, set()).add(idx)
      expr = codegen_ops.load(f"{self.param(v)}[{self.ix(flatten(idx, v.aval.shape))}]",
                              v.aval.dtype)
    else:
      expr = self._apply(eqn, idx)
    if not expr.isidentifier():
      expr = self.tmp(codegen_ops.ctype(v.aval.dtype), expr)
    self.cache[key] = expr
    return expr

  def _apply(self, eqn, idx):
    name, params = eqn.primitive.name, eqn.params
    out = eqn.outvars[0].aval
    if name == "iota":
      return codegen_ops.round_to(
          f"(({codegen_ops.ctype(out.dtype)})({self.ix(idx[params['dimension']])}))", out.dtype)
    if name in ("broadcast_in_dim", "reshape", "squeeze", "transpose", "slice", "rev"):
      return self.value(eqn.invars[0], _view_index(eqn, idx, self.sizes))
    if name == "dot_general":   # without contraction: a product at mapped indices
      args = [self.value(u, i) for u, i in zip(eqn.invars, _outer_product_index(eqn, idx))]
      return codegen_ops.emit(self, "mul", args, [u.aval.dtype for u in eqn.invars],
                              out.dtype, {})
    args = [self.value(u, _broadcast_index(tuple(u.aval.shape), tuple(out.shape), idx))
            for u in eqn.invars]
    return codegen_ops.emit(self, name, args, [u.aval.dtype for u in eqn.invars], out.dtype,
                            params)

  def _out(self, v):
    self.outputs.append(v)
    return f"q{len(self.outputs) - 1}"

  def _runs(self, dims, prefix):
    """Greedily merges adjacent loop dims every index walks row-major."""
    ixs = [i for ix in self.ixs for i in all_ixs(ix)]
    runs = []
    for d in dims:
      if runs and mergeable(runs[-1][-1], d, ixs, self.sizes):
        runs[-1].append(d)
      else:
        runs.append([d])
    return [(f"{prefix}{i}", r) for i, r in enumerate(runs)]


class _KernelBuilder(KernelValues):
  """Builds one group's C function."""

  def __init__(self, plan, group, name, num_threads, openmp, may_alias=frozenset()):
    super().__init__(plan, group, name)
    self.num_threads, self.openmp = num_threads, openmp
    self.may_alias = may_alias
    self.scratch = []

  def scratch_buffer(self, ctype, count):
    """A parameter naming a buffer of ``count`` ``ctype`` values that the
    caller passes (from its arena), for this kernel's use only."""
    self.scratch.append((ctype, count))
    return f"w{len(self.scratch) - 1}"

  # the kernel --------------------------------------------------------------------

  def build(self):
    g = self.group
    shape = g.shape
    ident = tuple(Ix.dim(d) for d in range(len(shape)))
    stores, reductions = [], []
    axes = g.axes or ()
    kept = tuple(Ix.dim(d) for d in range(len(shape)) if d not in axes)
    prologue = self._prologue(ident, kept) if g.prologue is not None else None
    by_epilogue = set(g.epilogue.outputs) if g.epilogue is not None else set()
    for v in g.outputs:
      if (any(e.outvars[0] is v for e in g.reductions) or v in self.row_values
          or v in by_epilogue):
        continue
      val = self.value(v, ident)
      stores.append((self._out(v), self.ix(flatten(ident, shape)),
                     codegen_ops.store(val, v.aval.dtype)))
    for e in g.reductions:
      out = e.outvars[0]
      if out not in g.outputs:
        continue
      val = self.value(e.invars[0], ident)
      where = self.ix(flatten(kept, out.aval.shape))
      reductions.append((e, self._out(out), where, val))
    epilogue = (row_epilogue.build(self, ident, kept, reductions) if g.epilogue is not None
                else None)
    if g.axes is None:
      nest, loops = self._map_nest()
    else:
      nest, loops = self._reduce_nest(axes)
    body = self.body + [f"{o}[{w}] = {v};" for o, w, v in stores]
    text = self._emit(nest, loops, body, reductions, prologue, epilogue)
    text = re.sub(r"@(\d+)@", lambda m: nest.render(self.ixs[int(m.group(1))]), text)
    same_index = frozenset(
        v for v, idxs in self.loads.items()
        if g.axes is None and idxs == {ident} and tuple(v.aval.shape) == tuple(shape))
    return _Kernel(self.name, self.inputs, self.outputs, text, same_index, self.scratch)

  def _prologue(self, ident, kept):
    """The reductions of ``group.prologue`` (same space and axes), computed
    row by row before this group's own, in its loop over the kept axes:
    (reductions, their loop body, stores of the results read elsewhere).
    Their results are in ``pa{n}[0]``, which this group reads, directly or
    through the equations of ``group.prologue_maps`` (recomputed here)."""
    group, prologue = self.group, self.group.prologue
    self.group, reductions = prologue, []
    for n, e in enumerate(prologue.reductions):
      reductions.append((e, f"pa{n}", "0", self.value(e.invars[0], ident)))
    body, self.body, self.cache, self.group = self.body, [], {}, group
    stores = []
    for m in group.prologue_maps:
      self.row_producers.update(m.producer)
    for n, e in enumerate(prologue.reductions):
      out = e.outvars[0]
      self.row_values[out] = (f"pa{n}[0]", kept)
      if out in group.outputs:
        stores.append(f"{self._out(out)}[{self.ix(flatten(kept, out.aval.shape))}] = pa{n}[0];")
    return reductions, body, stores

  def _map_nest(self):
    big = [d for d, n in enumerate(self.sizes) if n > 1]
    runs = self._runs(big, "j")
    return LoopNest(self.sizes, runs), {"outer": runs}

  def _reduce_nest(self, axes):
    big = [d for d, n in enumerate(self.sizes) if n > 1]
    red = [d for d in big if d in axes]
    kept = [d for d in big if d not in axes]
    inner = [d for d in kept if red and d > red[-1]]
    outer = [d for d in kept if d not in inner]
    outer_runs = self._runs(outer, "j")
    red_runs = self._runs(red, "r")
    inner_runs = [("kin", inner)] if inner else []
    nest = LoopNest(self.sizes, outer_runs + red_runs + inner_runs)
    return nest, {"outer": outer_runs, "reduced": red_runs, "inner": inner_runs}

  def threads(self):
    return thread_count(self.num_threads)

  def pragma(self, text):
    if not self.openmp:
      return []
    threads = f" num_threads({self.num_threads})" if self.num_threads > 0 else ""
    return [f"#pragma omp {text}{threads if text.startswith('parallel') else ''}"]

  def _emit(self, nest, loops, body, reductions, prologue=None, epilogue=None):
    def qualifier(v):
      return "" if v in self.may_alias else " restrict"
    total = int(np.prod(self.sizes, dtype=np.int64))
    parallel = total >= PARALLEL_MIN_POINTS
    if self.group.axes is None:
      lines = self._emit_map(nest, loops["outer"], body, parallel)
    elif (prologue is not None or epilogue is not None) and (loops["inner"]
                                                             or not loops["outer"]):
      raise NotRowLocal("a prologue or epilogue needs rows: kept axes, none after the "
                        "reduced ones")
    elif loops["inner"]:
      lines = self._emit_blocked(nest, loops, body, reductions, parallel)
    else:
      lines = self._emit_scalar_reduce(nest, loops, body, reductions, parallel, prologue,
                                       epilogue)
    params = [f"const {codegen_ops.storage_ctype(v.aval.dtype)}*{qualifier(v)} p{i}"
              for i, v in enumerate(self.inputs)]
    params += [f"{codegen_ops.storage_ctype(v.aval.dtype)}*{qualifier(v)} q{i}"
               for i, v in enumerate(self.outputs)]
    params += [f"{ct}* restrict w{i}" for i, (ct, _) in enumerate(self.scratch)]
    head = f"static void {self.name}({', '.join(params)}) {{"
    if any("_Complex" in line for line in params + lines):
      head, lines = "PJ_SCALAR_COMPLEX " + head, _without_simd(lines)
    return "\n".join([head] + ["  " + line for line in lines] + ["}\n"])

  def _loop(self, nest, var, dims):
    return f"for (int64_t {var} = 0; {var} < {nest.run_size(dims)}; {var}++) {{"

  def _emit_map(self, nest, runs, body, parallel):
    lines = []
    for i, (var, dims) in enumerate(runs):
      if i == 0 and parallel:
        if len(runs) == 1:
          lines += self.pragma("parallel for simd")
        else:
          lines += self.pragma("parallel for" + (f" collapse({len(runs) - 1})"
                                                  if len(runs) > 2 else ""))
      elif i == len(runs) - 1:
        lines += self.pragma("simd")
      lines.append(self._loop(nest, var, dims))
    lines += body + ["}"] * len(runs)
    return lines

  def _accumulators(self, reductions, block=None, two_pass=False, first=0):
    """Per reduction: accumulator declarations (C declaration, name, initial
    value, simd operator), the statements folding the value in, and the
    final stores.  With ``two_pass``, argmax/argmin become a vectorizable
    extremum here plus a second loop (``second``: accumulators, folds,
    values needed) finding the first index that attains it."""
    decls, folds, finals = [], [], []
    second = ([], [])
    lane = "" if block is None else "[k]"
    size = "" if block is None else f"[{block}]"
    for n, (e, out, where, val) in enumerate(reductions, first):
      name = e.primitive.name
      x = e.invars[0].aval.dtype
      if name in ("argmax", "argmin"):
        ct = codegen_ops.ctype(x)
        at = self.ix(Ix.dim(e.params["axes"][0]))
        it = codegen_ops.ctype(e.params["index_dtype"])
        if two_pass:
          r = codegen_reductions.arg_extremum_value(name, x)
          names = [f"a{n}_{i}" for i in range(len(r.accs))]   # value (, NaN seen)
          decls += [(f"{ct} {nm}", nm, init, op) for nm, (ct, init, op) in zip(names, r.accs)]
          folds += r.combine(names, val)
          # Branch-free (``&``, ``|``), so that the loop vectorizes.
          # The values are kept for the second loop: recomputing them could
          # round differently (a vectorized libm call vs the scalar one).
          count = self.sizes[e.params["axes"][0]]
          decls.append((f"{ct} a{n}buf[{count}]", None, None, None))
          folds.append(f"a{n}buf[{at}] = {val};")
          v = f"a{n}buf[{at}]"
          # Branch-free (``&``, ``|``), so that the loop vectorizes.
          match = (f"(({names[1]} & ({v} != {v})) | (!{names[1]} & ({v} == {names[0]})))"
                   if len(names) > 1 else f"({v} == {names[0]})")
          # 32-bit indices when they fit: as wide as float32 vector lanes.
          wide = count >= 2 ** 31 - 1
          ity = "int64_t" if wide else "int32_t"
          second[0].append((f"{ity} a{n}i", f"a{n}i", "INT64_MAX" if wide else "INT32_MAX",
                            "min"))
          second[1].append(f"a{n}i = ({match} & (({ity})({at}) < a{n}i)) ? ({ity})({at}) : a{n}i;")
          finals.append(f"{out}[{where}] = ({it})a{n}i;")
          continue
        v, i = f"a{n}v", f"a{n}i"
        decls.append((f"{ct} {v}{size}", v, "0", None))
        decls.append((f"int64_t {i}{size}", i, "0", None))
        better = codegen_reductions.arg_better(name, x, val, v + lane)
        folds.append(f"if (({at}) == 0 || {better}) {{ {v}{lane} = {val}; {i}{lane} = {at}; }}")
        finals.append(f"{out}[{where}] = ({it}){i}{lane};")
        continue
      r = codegen_reductions.reducer(name, x)
      names = [f"a{n}_{i}" for i in range(len(r.accs))]
      if _ordered(e):   # in row order LANES lanes (first index), folded by the tree
        (ct, init, op), = r.accs
        rows = reduction_order.layout(self.sizes, self.group.axes)[1] > 1
        lanes = (f"[{LANES}]" if rows else "") + size
        # "runs": the lanes fold runs in float32 first (_ordered_block).
        runs = rows and not size and reduction_order.folds_runs(x, op, LANES)
        decls.append((f"{ct} {names[0]}{lanes}", names[0], init,
                      ("runs" if runs else "ordered", ct, op)))
        target = f"{names[0]}r[rl]" if runs else f"{names[0]}{'[rl]' if rows else ''}{lane}"
        folds += r.combine([target], val)
        final = codegen_ops.round_to(r.final([f'a{n}_t' + lane]), x)
        finals.append(f"{out}[{where}] = {codegen_ops.store(final, x)};")
        continue
      decls += [(f"{ct} {nm}{size}", nm, init, op) for nm, (ct, init, op) in zip(names, r.accs)]
      folds += r.combine([nm + lane for nm in names], val)
      final = codegen_ops.round_to(r.final([nm + lane for nm in names]), x)
      finals.append(f"{out}[{where}] = {codegen_ops.store(final, x)};")
    return decls, folds, finals, second

  def _emit_scalar_reduce(self, nest, loops, body, reductions, parallel, prologue=None,
                          epilogue=None):
    outer, red = loops["outer"], loops["reduced"]
    small = len(red) == 1 and nest.run_size(red[0][1]) <= _ARG_BUFFER
    first, head = 0, []
    if prologue is not None:   # its reductions first, at each point of the outer loops
      p_reductions, p_body, p_stores = prologue
      first = len(p_reductions)
      p_decls, p_folds, p_finals, p_second = self._accumulators(p_reductions, two_pass=small)
      head += [f"{codegen_ops.storage_ctype(e.outvars[0].aval.dtype)} {out}[1];"
               for e, out, _, _ in p_reductions]
      head += self._point_reduce(nest, red, p_decls, p_body + p_folds, p_second)
      head += p_finals + p_stores
    decls, folds, finals, second = self._accumulators(reductions, two_pass=small, first=first)
    n = nest.run_size([d for _, dims in red for d in dims])
    if (not outer and parallel and any(is_ordered(d) for d in decls) and not second[0]
        and reduction_order.blocks(n)[0] > 1 and all(d[3] for d in decls)):
      return self._ordered_chunks(nest, red, decls, body + folds) + finals
    if (prologue is None and epilogue is None and row_tiles.memory_bound(self.group)
        and row_tiles.applies(nest, outer, red, decls, second)):
      return row_tiles.emit(self, nest, outer, red, decls, body + folds, finals, parallel)
    lines = []
    if outer and parallel:
      lines += self.pragma("parallel for" + (f" collapse({len(outer)})"
                                              if len(outer) > 1 else ""))
    for var, dims in outer:
      lines.append(self._loop(nest, var, dims))
    if epilogue is not None:
      lines += epilogue.decls
    lines += head + self._point_reduce(nest, red, decls, body + folds, second,
                                       parallel=parallel and not outer)
    lines += finals
    if epilogue is not None:   # the row again, after its reductions
      lines += epilogue.head + self._reduce_loops(nest, red, [], epilogue.body)
    return lines + ["}"] * len(outer)

  def _point_reduce(self, nest, red, decls, body, second, parallel=False):
    """The reduced loops at one point of the outer loops."""
    if any(is_ordered(d) for d in decls):
      lines = self._ordered_loops(nest, red, decls, body)
    else:
      lines = self._reduce_loops(nest, red, decls, body, parallel=parallel and not second[0])
    if second[0]:
      lines += self._reduce_loops(nest, red, second[0], second[1])
    return lines

  def _reduce_loops(self, nest, red, decls, body, parallel=False):
    """The reduced loops folding into scalar accumulators.  With ``parallel``
    (a whole-array reduction), threads take parts of the first loop: only
    for operators exact in any order (``simd``: max, min, integer sums)."""
    lines = [f"{d};" if nm is None else f"{d} = {init};" for d, nm, init, _ in decls]
    decls = [d for d in decls if d[1] is not None]
    simd = all(op for *_, op in decls)
    clauses = " ".join(f"reduction({op}:{nm})" for _, nm, _, op in decls)
    for i, (var, dims) in enumerate(red):
      last = i == len(red) - 1
      if i == 0 and simd and parallel:
        lines += self.pragma(f"parallel for{' simd' if last else ''} {clauses}")
      elif last and simd:
        lines += self.pragma(f"simd {clauses}")
      lines.append(self._loop(nest, var, dims))
    return lines + body + ["}"] * len(red)

  def _ordered_loops(self, nest, red, decls, body):
    """The reduced loops in ``reduction_order``'s order: blocks of BLOCK
    elements of the flattened reduced index ``R``, LANES lanes each (the
    lane loop vectorizes; its width is fixed, not the machine's)."""
    n = nest.run_size([d for _, dims in red for d in dims])
    nb, _ = reduction_order.blocks(n)
    lanes = [d for d in decls if is_ordered(d)]
    scalars = [d for d in decls if not is_ordered(d)]
    lines = [f"{d};" if nm is None else f"{d} = {init};" for d, nm, init, _ in scalars]
    lines += [f"{d};" for d, *_ in lanes]
    lines += [f"{ct} {nm[:-2]}_t;" for _, nm, _, (_, ct, _) in lanes]
    lines += block_stack_decls(lanes, nb, "")
    lines.append(f"for (int64_t rb = 0; rb < {nb}; rb++) {{")
    lines += self._ordered_block(nest, red, lanes, scalars, body, n)
    lines += block_merge(lanes, nb, "")
    lines.append("}")
    lines += block_final(lanes, nb, "")
    return lines

  def _ordered_block(self, nest, red, lanes, scalars, body, n):
    """Block ``rb`` folded into its lanes, the lanes into the first one."""
    simd = all(op for _, nm, _, op in scalars if nm is not None)
    clauses = " ".join(f"reduction({op}:{nm})" for _, nm, _, op in scalars if nm is not None)
    lines = [f"const int64_t rlo = rb * {BLOCK}, rhi = rlo + {BLOCK} < {n} ? "
             f"rlo + {BLOCK} : {n};"]
    lines.append(f"for (int rl = 0; rl < {LANES}; rl++) {{")
    lines += [f"{nm}[rl] = {init};" for _, nm, init, _ in lanes] + ["}"]
    runs = run_names(lanes)
    lines += [f"float {nm}r[{LANES}] = {{0}};" for nm in runs]
    flush = run_flush(runs)
    run_end = lambda at: run_end_flush(runs, at)
    inner = nest.run_size(red[-1][1]) if red else 1
    vector = (self.pragma(f"simd {clauses}") if simd else [])
    vector.append(f"for (int rl = 0; rl < {LANES}; rl++) {{")
    if len(red) > 1 and inner % LANES == 0:
      # Every LANES elements lie in one run of the innermost reduced loop:
      # loops over the outer runs and over chunks of the innermost, all
      # affine (a flat index divided in the loop made gcc gather).
      var = red[-1][0]
      lines.append(f"for (int64_t ro = rlo / {inner}; ro * {inner} < rhi; ro++) {{")
      lines += run_variables(nest, red[:-1], "ro")
      lines.append(f"const int64_t clo = rlo > ro * {inner} ? rlo - ro * {inner} : 0;")
      lines.append(f"const int64_t chi = rhi < (ro + 1) * {inner} ? rhi - ro * {inner} : "
                   f"{inner};")
      lines += row_tiles.run_segments(inner, var, body, runs, "ro", vector) + ["}"]
      return lines + flush + lane_tree(lanes, "")
    lines.append("int64_t rr = rlo;")
    lines.append(f"for (; rr + {LANES} <= rhi; rr += {LANES}) {{")
    lines += vector + run_variables(nest, red, "rr + rl") + body + ["}"] + run_end("rr") + ["}"]
    lines.append("for (int rl = 0; rr + rl < rhi; rl++) {")
    lines += run_variables(nest, red, "rr + rl") + body + ["}"]
    return lines + flush + lane_tree(lanes, "")

  def _ordered_chunks(self, nest, red, decls, body):
    """A whole-array ordered reduction on all threads: they take chunks of
    ``per`` blocks (a power of two, so that a chunk is a subtree of the
    pairwise tree over the blocks, the last one its tail); the chunk
    results are then paired in order, as the blocks would be."""
    n = nest.run_size([d for _, dims in red for d in dims])
    nb, _ = reduction_order.blocks(n)
    per = 1
    while -(-nb // per) > _MAX_CHUNKS:
      per *= 2
    nch, full, tail = -(-nb // per), nb // per, nb % per
    lanes = [d for d in decls if is_ordered(d)]
    scalars = [d for d in decls if not is_ordered(d)]
    lines = [f"{d} = {init};" for d, nm, init, _ in scalars]
    lines += [f"{ct} {nm[:-2]}_c[{nch}];" for _, nm, _, (_, ct, _) in lanes]
    lines += [f"{ct} {nm[:-2]}_t;" for _, nm, _, (_, ct, _) in lanes]
    clauses = " ".join(f"reduction({op}:{nm})" for _, nm, _, op in scalars)
    lines += self.pragma(f"parallel for {clauses}")
    lines.append(f"for (int64_t ci = 0; ci < {nch}; ci++) {{")
    lines += [f"{d};" for d, *_ in lanes]
    lines += [f"{ct} {nm[:-2]}_t;" for _, nm, _, (_, ct, _) in lanes]
    lines += block_stack_decls(lanes, per, "")
    lines.append(f"const int64_t rb0 = ci * {per};")
    lines.append(f"for (int64_t rb = rb0; rb < rb0 + {per} && rb < {nb}; rb++) {{")
    lines += self._ordered_block(nest, red, lanes, scalars, body, n)
    lines += block_merge(lanes, per, "", counter="rb - rb0")
    lines.append("}")
    if per == 1:
      lines += [f"{nm[:-2]}_c[ci] = {nm[:-2]}_t;" for _, nm, *_ in lanes]
    else:
      lines.append(f"if (ci < {full}) {{")
      lines += block_final(lanes, per, "", target="{t}")
      if tail:
        lines.append("} else {")
        lines += (block_final(lanes, tail, "", target="{t}") if tail > 1 else
                  [f"{nm[:-2]}_t = {nm[:-2]}_s[0];" for _, nm, *_ in lanes])
      lines.append("}")
      lines += [f"{nm[:-2]}_c[ci] = {nm[:-2]}_t;" for _, nm, *_ in lanes]
    lines.append("}")
    lines += block_stack_decls(lanes, nch, "")
    lines.append(f"for (int64_t rb = 0; rb < {nch}; rb++) {{")
    lines += block_merge(lanes, nch, "", value="{base}_c[rb]")
    lines.append("}")
    return lines + block_final(lanes, nch, "")

  def _emit_blocked(self, nest, loops, body, reductions, parallel):
    outer, red, inner = loops["outer"], loops["reduced"], loops["inner"]
    count = nest.run_size(inner[0][1])
    ordered = any(_ordered(e) for e, *_ in reductions)
    block = _block_size(count, self.threads() if parallel else 1,
                        _MAX_ORDERED_BLOCK if ordered else _MAX_BLOCK)
    nblocks = -(-count // block)
    if ordered and parallel and not outer:
      width = min(count, _MAX_ORDERED_BLOCK)
      decls, folds, finals, _ = self._accumulators(reductions, width)
      per = column_reductions.ordered_chunk_blocks(self, nest, red, decls, count, width)
      if per:
        return column_reductions.ordered_row_chunks(self, nest, red, body, decls, folds,
                                                    finals, count, width, per)
    decls, folds, finals, _ = self._accumulators(reductions, block)
    if (parallel and not outer and not ordered
        and column_reductions.exact_fits(self, nest, red, decls, count)):
      return column_reductions.exact_row_chunks(self, nest, red, body, decls, folds, finals,
                                                count)
    if ordered:
      lines = self._blocks_head(nest, outer, parallel, count, block, nblocks, decls)
      return column_reductions.ordered_tiles(self, nest, red, body, decls, folds, finals,
                                             block, lines) + ["}"] * len(outer)
    lines = self._blocks_head(nest, outer, parallel, count, block, nblocks, decls)
    lanes = "for (int64_t k = 0; k < kn; k++) {"
    lines += [lanes] + [f"{nm}[k] = {init};" for _, nm, init, _ in decls] + ["}"]
    for var, dims in red:
      lines.append(self._loop(nest, var, dims))
    lines += self.pragma("simd")
    lines += [lanes, "const int64_t kin = kb + k;"] + body + folds + ["}"]
    lines += ["}"] * len(red)
    lines += [lanes, "const int64_t kin = kb + k;"] + finals + ["}"]
    lines += ["}"] + ["}"] * len(outer)
    return lines

  def _blocks_head(self, nest, outer, parallel, count, block, nblocks, decls):
    """The loops over the kept outer dimensions and the column blocks (threads
    take whole blocks), and the block's accumulator declarations."""
    lines = []
    if parallel:
      lines += self.pragma(f"parallel for collapse({len(outer) + 1})" if outer
                            else "parallel for")
    for var, dims in outer:
      lines.append(self._loop(nest, var, dims))
    lines.append(f"for (int64_t jb = 0; jb < {nblocks}; jb++) {{")
    lines.append(f"const int64_t kb = jb * {block};")
    lines.append(f"const int64_t kn = {count} - kb < {block} ? {count} - kb : {block};")
    return lines + [f"{d};" for d, *_ in decls]


def _ordered(eqn):
  """Whether reduction ``eqn`` follows ``reduction_order`` (float sums, products)."""
  return (eqn.primitive.name in ("reduce_sum", "reduce_prod")
          and np.dtype(eqn.invars[0].aval.dtype) in reduction_order.ORDERED_DTYPES)


def _without_simd(lines):
  """``lines`` with their OpenMP ``simd`` directives dropped (loops over
  complex values: see PJ_SCALAR_COMPLEX in the prelude)."""
  out = []
  for line in lines:
    text = line.strip()
    if text.startswith("#pragma omp simd"):
      continue
    out.append(line.replace("#pragma omp parallel for simd", "#pragma omp parallel for"))
  return out
