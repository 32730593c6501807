"""CUDA C kernels for the Groups of a fusion plan.

A map group is one kernel: a grid-stride loop over the flat output index,
each loop run's variable (``indexing``'s runs, as the C backend merges
them) derived from it by division.  A reduction group is two kernels:

- ``<name>_part``: thread ``t`` of ``M * NB * U`` takes output ``m``, block
  ``b`` (``BLOCK`` elements of the flattened reduced index ``r``) and lane
  ``l``: elements ``r = b * BLOCK + l + k * LANES`` in increasing ``r``,
  folded into the accumulators (float32 sums in float32 runs of ``RUN``
  elements first, as ``reduction_order`` says), written to scratch slot ``t`` (``U =
  min(LANES, n)`` lanes when one block holds all ``n``: the others would
  stay empty); BLOCK and LANES are ``reduction_order.layout``'s, one lane
  in column order;
- ``<name>_final``: thread ``m`` folds its slots in ``reduction_order``'s
  order, in place: the lanes of each block by halving, then the blocks
  pairwise, level by level; then stores the result.

Every float sum or product is thus computed in the order the C backend and
the NumPy tier use (skipped empty lanes hold the identity, which changes no
partial result), so results are the same bits.  Extrema, integer and
boolean reductions are exact in any order; argmax/argmin carry the index
and prefer the smaller one on ties.  The partition depends on the shapes
only: ``THREADS`` threads per block, at most ``MAX_BLOCKS`` blocks.  The
scratch of a reduction holds ``M * NB * U`` slots per accumulator: at most
about as many as its input has elements (a coarser partition, several lanes
a thread, would shrink it; left for the GPU tuning).
"""
import re

import numpy as np

from purejax._src.backends.cpu import codegen_ops, codegen_reductions
from purejax._src.backends.cpu.codegen import KernelValues
from purejax._src.backends.cpu.indexing import Ix, LoopNest, flatten, run_variables
from purejax._src.lax import reduction_order

THREADS = 256
MAX_BLOCKS = 4096
_ARG_EMPTY = "-1"   # the index of an argmax lane that saw no element

# C types of accumulators -> NumPy dtypes of their scratch buffers.
SCRATCH_DTYPES = {"double": np.float64, "float": np.float32, "int": np.int32,
                   "int8_t": np.int8, "int16_t": np.int16, "int32_t": np.int32,
                   "int64_t": np.int64, "uint8_t": np.uint8, "uint16_t": np.uint16,
                   "uint32_t": np.uint32, "uint64_t": np.uint64,
                   "float _Complex": np.complex64, "double _Complex": np.complex128}


class UnsupportedOnGpu(NotImplementedError):
  """A computation the GPU backend has no kernel for (yet)."""


class Launch:
  """One kernel launch: ``function`` over ``count`` work items, its
  arguments ``args`` as ("in" | "out" | "scratch", index) pairs."""

  def __init__(self, function, count, args):
    self.function, self.count, self.args = function, count, args
    self.threads = THREADS
    self.grid = max(1, min(MAX_BLOCKS, -(-count // THREADS)))


class GroupKernels:
  """The kernels of one group: the vars they read (``inputs``) and write
  (``outputs``), the ``scratch`` buffers they need ((dtype, size) each),
  their ``functions`` ((name, [parameter C types]) each), the ``source``
  and the ``launches`` in order."""

  def __init__(self, inputs, outputs, scratch, functions, source, launches):
    self.inputs, self.outputs, self.scratch = inputs, outputs, scratch
    self.functions, self.source, self.launches = functions, source, launches


def build_group(plan, group, name):
  """The GroupKernels computing ``group`` of ``plan``; raises
  UnsupportedOnGpu for an operation or dtype with no CUDA code."""
  return _Builder(plan, group, name).build()


def function_text(name, params, lines):
  """The C text of kernel ``name`` with parameters ``params`` and body
  ``lines`` (before ``codegen_ops.for_cuda``)."""
  return "\n".join([f'extern "C" __global__ void {name}({", ".join(params)}) {{']
                   + ["  " + line for line in lines] + ["}\n"])


def grid_stride(var, count):
  return (f"for (int64_t {var} = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; "
          f"{var} < {count}; {var} += (int64_t)blockDim.x * gridDim.x) {{")


class _Reduction:
  """One reduction of a group: its accumulators (C type, initial value,
  merge operator), the statements folding value ``val`` in, merging two
  scratch slots, and the final store."""

  def __init__(self, eqn, out, val, lanes):
    self.eqn, self.out, self.val = eqn, out, val
    name, x = eqn.primitive.name, eqn.invars[0].aval.dtype
    self.arg = name in ("argmax", "argmin")
    if self.arg:
      self.accs = [(codegen_ops.ctype(x), "0", None), ("int64_t", _ARG_EMPTY, None)]
      self.reducer = None
    else:
      self.reducer = codegen_reductions.reducer(name, x)
      if self.reducer is None:
        raise UnsupportedOnGpu(f"{name} on {np.dtype(x).name} is unsupported on the GPU "
                               f"backend")
      self.accs = self.reducer.accs
    # No merge operators (complex max/min: XLA's fold is not associative
    # with NaNs): each output folded by one thread, in order.
    self.sequential = not self.arg and None in self.reducer.tree
    self.order_dependent = name in ("reduce_sum", "reduce_prod") and np.dtype(x).kind in "fc"
    # Whether each lane folds float32 runs first (``lanes``: the layout's).
    self.runs = (name == "reduce_sum" and np.dtype(x) in reduction_order.ORDERED_DTYPES
                 and reduction_order.folds_runs(x, "+", lanes))

  def place(self, first_scratch):
    """Puts the accumulators in scratch buffers ``first_scratch``, ...;
    returns the next free one."""
    self.scratch = list(range(first_scratch, first_scratch + len(self.accs)))
    self.names = [f"a{k}" for k in self.scratch]
    return first_scratch + len(self.accs)

  def folds(self, at):
    e, x = self.eqn, self.eqn.invars[0].aval.dtype
    if self.arg:
      v, i = self.names
      better = codegen_reductions.arg_better(e.primitive.name, x, self.val, v)
      return [f"if ({i} < 0 || {better}) {{ {v} = {self.val}; {i} = {at}; }}"]
    if self.runs:
      return self.reducer.combine([self.names[0] + "r"], self.val)
    return self.reducer.combine(self.names, self.val)

  def merge(self, a, b):
    """Slot ``a`` of each scratch buffer combined with slot ``b``."""
    if not self.arg:
      return [codegen_reductions.merge(op, f"s{k}[{a}]", f"s{k}[{b}]")
              for k, op in zip(self.scratch, self.reducer.tree)]
    e, x = self.eqn, self.eqn.invars[0].aval.dtype
    (sv, si) = (f"s{k}" for k in self.scratch)
    va, ia, vb, ib = f"{sv}[{a}]", f"{si}[{a}]", f"{sv}[{b}]", f"{si}[{b}]"
    better = codegen_reductions.arg_better(e.primitive.name, x, vb, va)
    tie = f"({vb} == {va} || ({vb} != {vb} && {va} != {va}))"
    return [f"if ({ib} >= 0 && ({ia} < 0 || {better} || ({tie} && {ib} < {ia}))) "
            f"{{ {va} = {vb}; {ia} = {ib}; }}"]

  def final(self, out, slot):
    e, x = self.eqn, self.eqn.invars[0].aval.dtype
    if self.arg:
      it = codegen_ops.ctype(e.params["index_dtype"])
      return f"{out}[m] = ({it})s{self.scratch[1]}[{slot}];"
    names = [f"s{k}[{slot}]" for k in self.scratch]
    value = codegen_ops.round_to(self.reducer.final(names), x)
    return f"{out}[m] = {codegen_ops.store(value, x)};"


def _place(reductions):
  """Numbers the reductions' scratch buffers from 0, in order."""
  k = 0
  for r in reductions:
    k = r.place(k)


class _Builder(KernelValues):

  def _apply(self, eqn, idx):
    name = eqn.primitive.name
    ins = [u.aval.dtype for u in eqn.invars]
    out = eqn.outvars[0].aval.dtype
    if not codegen_ops.cuda_supported(name, ins, out):
      raise UnsupportedOnGpu(f"{name} on {', '.join(np.dtype(d).name for d in ins)} is "
                             f"unsupported on the GPU backend")
    return super()._apply(eqn, idx)

  def build(self):
    g = self.group
    shape = g.shape
    ident = tuple(Ix.dim(d) for d in range(len(shape)))
    reduced_outs = {e.outvars[0] for e in g.reductions}
    stores = []
    for v in g.outputs:
      if v not in reduced_outs:
        val = self.value(v, ident)
        stores.append((self._out(v), self.ix(flatten(ident, shape)),
                       codegen_ops.store(val, v.aval.dtype)))
    lanes = reduction_order.layout(self.sizes, g.axes)[1] if g.axes is not None else 1
    reductions = [_Reduction(e, e.outvars[0], self.value(e.invars[0], ident), lanes)
                  for e in g.reductions if e.outvars[0] in g.outputs]
    body = self.body + [f"{o}[{w}] = {v};" for o, w, v in stores]
    if g.axes is None:
      return self._map(body)
    stored = list(range(len(self.outputs)))
    sequential = [r for r in reductions if r.sequential]
    if not sequential or not any(r.order_dependent for r in reductions):
      _place(reductions)
      return self._reduce(body, reductions, self.name, stored)
    # A complex max/min folds each output in one thread, in order, and a
    # float sum or product in reduction_order's partition: two passes over
    # the group's values, the second storing only its reductions.
    ordered = [r for r in reductions if not r.sequential]
    _place(ordered + sequential)
    first = self._reduce(body, ordered, self.name, stored)
    second = self._reduce(self.body, sequential, self.name + "_seq", [])
    return GroupKernels(list(self.inputs), list(self.outputs), first.scratch + second.scratch,
                        first.functions + second.functions, first.source + second.source,
                        first.launches + second.launches)

  def _params(self, outputs, scratch_types=()):
    params = [f"const {codegen_ops.storage_ctype(v.aval.dtype)}* __restrict__ p{i}"
              for i, v in enumerate(self.inputs)]
    params += [f"{codegen_ops.storage_ctype(self.outputs[j].aval.dtype)}* __restrict__ q{j}"
               for j in outputs]
    params += [f"{ct}* __restrict__ s{k}" for k, ct in scratch_types]
    return params

  def _function(self, name, params, lines, nest):
    text = function_text(name, params, lines)
    text = re.sub(r"@(\d+)@", lambda m: nest.render(self.ixs[int(m.group(1))]), text)
    return codegen_ops.for_cuda(text)

  def _map(self, body):
    big = [d for d, n in enumerate(self.sizes) if n > 1]
    runs = self._runs(big, "j")
    nest = LoopNest(self.sizes, runs)
    total = int(np.prod(self.sizes, dtype=np.int64))
    lines = [grid_stride("i", total)] + ["  " + s for s in run_variables(nest, runs, "i")
                                           + body] + ["}"]
    params = self._params(range(len(self.outputs)))
    source = self._function(self.name, params, lines, nest)
    args = ([("in", i) for i in range(len(self.inputs))]
            + [("out", j) for j in range(len(self.outputs))])
    return GroupKernels(list(self.inputs), list(self.outputs), [],
                        [(self.name, params)], source, [Launch(self.name, total, args)])

  def _layout(self, reductions, n):
    """(elements per block, lanes): reduction_order's, or one of each (a
    thread folds each output in order) for reductions with no merge."""
    if not any(r.sequential for r in reductions):
      return reduction_order.layout(self.sizes, self.group.axes)
    return max(1, n), 1

  def _reduce(self, body, reductions, name, stored):
    """The kernels ``name``_part and ``name``_final computing
    ``reductions`` (and, in the first, the outputs ``stored``)."""
    axes = self.group.axes
    big = [d for d, n in enumerate(self.sizes) if n > 1]
    kept_runs = self._runs([d for d in big if d not in axes], "j")
    red_runs = self._runs([d for d in big if d in axes], "r")
    nest = LoopNest(self.sizes, kept_runs + red_runs)
    m_total = int(np.prod([n for d, n in enumerate(self.sizes) if d not in axes],
                          dtype=np.int64))
    n = int(np.prod([self.sizes[d] for d in axes], dtype=np.int64))
    block, step = self._layout(reductions, n)
    nb, _ = reduction_order.blocks(n, block, step)
    lanes = step if nb > 1 else min(step, n)
    per_output = nb * lanes
    parts = m_total * per_output
    scratch_types = [(k, ct) for r in reductions for k, (ct, _, _) in zip(r.scratch, r.accs)]

    lines = [grid_stride("t", parts)]
    inner = [f"const int64_t m = t / {per_output}, b = (t / {lanes}) % {nb}, "
             f"l = t % {lanes};"]
    inner += run_variables(nest, kept_runs, "m")
    inner += [f"{ct} {nm} = {init};" for r in reductions
              for nm, (ct, init, _) in zip(r.names, r.accs)]
    runs = [r.names[0] for r in reductions if r.runs]
    # reduction_order's runs: each RUN elements of the lane folded in float32.
    flush = [f"{nm} += {nm}r; {nm}r = 0.0f;" for nm in runs]
    inner += [f"float {nm}r = 0.0f;" for nm in runs] + (["int kr = 0;"] if runs else [])
    inner.append(f"const int64_t rhi = b * {block} + {block} < {n} ? "
                 f"b * {block} + {block} : {n};")
    inner.append(f"for (int64_t rr = b * {block} + l; rr < rhi; rr += {step}) {{")
    folds = [f for r in reductions for f in r.folds("rr")]
    if runs:
      folds += [f"if (++kr == {reduction_order.RUN}) {{ {' '.join(flush)} kr = 0; }}"]
    inner += ["  " + s for s in run_variables(nest, red_runs, "rr") + body + folds] + ["}"]
    inner += flush
    inner += [f"s{k}[t] = {nm};" for r in reductions for k, nm in zip(r.scratch, r.names)]
    lines += ["  " + s for s in inner] + ["}"]
    part = f"{name}_part"
    part_params = self._params(stored, scratch_types)
    source = self._function(part, part_params, lines, nest)

    first_out = len(self.outputs)
    outs = [self._out(r.out) for r in reductions]
    red_outputs = list(range(first_out, len(self.outputs)))
    final_params = ([f"{ct}* __restrict__ s{k}" for k, ct in scratch_types]
                    + [f"{codegen_ops.storage_ctype(r.out.aval.dtype)}* __restrict__ {o}"
                       for r, o in zip(reductions, outs)])
    merge = lambda a, b: [s for r in reductions for s in r.merge(a, b)]
    lines = [grid_stride("m", m_total), f"  const int64_t base = m * {per_output};"]
    if lanes > 1:
      lines += [f"  for (int64_t b = 0; b < {nb}; b++) {{",
                f"    const int64_t o = base + b * {lanes};",
                f"    for (int h = {step // 2}; h >= 1; h /= 2) {{",
                f"      for (int i = 0; i < h && i + h < {lanes}; i++) {{"]
      lines += ["        " + s for s in merge("o + i", "o + i + h")] + ["      }", "    }", "  }"]
    if nb > 1:
      lines += [f"  for (int64_t w = 1; w < {nb}; w *= 2) {{",
                f"    for (int64_t b = 0; b + w < {nb}; b += 2 * w) {{"]
      lines += ["      " + s for s in merge(f"base + b * {lanes}", f"base + (b + w) * {lanes}")]
      lines += ["    }", "  }"]
    lines += ["  " + r.final(o, "base") for r, o in zip(reductions, outs)] + ["}"]
    final = f"{name}_final"
    source += self._function(final, final_params, lines, nest)

    scratch = [(np.dtype(SCRATCH_DTYPES[ct]), parts) for _, ct in scratch_types]
    ins = [("in", i) for i in range(len(self.inputs))]
    sc = [("scratch", k) for k, _ in scratch_types]
    launches = [Launch(part, parts, ins + [("out", j) for j in stored] + sc),
                Launch(final, m_total, sc + [("out", j) for j in red_outputs])]
    return GroupKernels(list(self.inputs), list(self.outputs), scratch,
                        [(part, part_params), (final, final_params)], source, launches)
