"""Assembles a plan's C file: its kernels, native steps and entry points.

Each run of consecutive compiled steps (kernels and native steps) of the
top-level plan becomes one entry point ("segment") ``int seg_N(void* const*
ext)``: ``ext`` holds the buffers it exchanges with Python, inputs first,
then outputs, in ``Segment`` order.  The bodies of compiled control flow
become ``static int body_N(void* const* ext)`` over their jaxpr's inputs and
then outputs, every output written.  Each function allocates the buffers only
its own steps use and returns 0, or 1 when out of memory.
"""
import numpy as np

from purejax._src.backends.cpu import blas, codegen, codegen_ops, codegen_reductions, native, prelude
from purejax._src.backends.cpu.fusion import Group, HostStep
from purejax._src.jaxpr import DropVar, Literal


class Segment:
  """Consecutive compiled steps run by one entry point."""

  def __init__(self, name, steps):
    self.name, self.steps = name, steps
    self.inputs = []    # vars read from Python
    self.outputs = []   # vars handed back to Python


def generate(plan, *, num_threads=0, openmp=True):
  """C source for ``plan`` and its Segments (in plan order; host steps lie
  between them)."""
  unit = _Unit(num_threads, openmp)
  segments, current = [], None
  for step in plan.steps:
    if type(step) is HostStep:
      current = None
      continue
    if current is None:
      current = Segment(f"seg_{len(segments)}", [])
      segments.append(current)
    current.steps.append(step)
  _link_segments(unit, plan, segments)
  for seg in segments:
    fn = _Function(unit, plan, seg.steps, seg.inputs, seg.outputs)
    unit.functions.append(fn.source(f"int {seg.name}(void* const* ext)"))
  return unit.source(), segments


class _Unit:
  """One C file: its functions in definition order (callees first)."""

  def __init__(self, num_threads, openmp):
    self.num_threads, self.openmp = num_threads, openmp
    self.kernels = {}
    self.functions = []
    self.bodies = 0
    self.blas_bodies = set()   # names of body functions that call BLAS
    self.uses_blas = False
    self.kept_arenas = []
    self.helpers = set()

  def helper(self, key, make_source):
    """Adds the C helpers ``make_source()`` (once per ``key``) before the
    function being generated."""
    if key not in self.helpers:
      self.helpers.add(key)
      self.functions.append(make_source())

  def kernel(self, plan, group, may_alias=frozenset()):
    key = (group, may_alias)
    k = self.kernels.get(key)
    if k is None:
      k = self.kernels[key] = codegen.build_kernel(
          plan, group, f"kernel_{len(self.kernels)}", self.num_threads, self.openmp,
          may_alias)
      self.functions.append(k.source)
    return k

  def in_place_results(self, plan, pairs):
    """Which (input, result) pairs of ``pairs`` (vars of ``plan``'s jaxpr) a
    body function can take as one buffer: the input read by one step only,
    which writes the result, neither of them also returned elsewhere; the
    step a kernel reading the input at the elements it writes (an
    accumulation such as a scan's gradient sums), or an update of some
    elements (``dynamic_update_slice``, a scatter) of the input as its
    operand, which then writes only those, after any other step reading the
    input."""
    outvars = list(plan.jaxpr.outvars)
    readers = {}
    for step in plan.steps:
      for v in _reads(self, plan, step):
        readers.setdefault(v, []).append(step)
    ok = []
    for v, r in pairs:
      steps = readers.get(v, [])   # in execution order
      if (type(r) is Literal or v in outvars or outvars.count(r) != 1
          or r in plan.jaxpr.invars or not steps
          or any(type(step) is HostStep for step in steps)):
        continue
      last = steps[-1]
      if type(last) is Group:
        if (len(steps) == 1 and r in last.outputs
            and v in self.kernel(plan, last).same_index_inputs):
          ok.append((v, r))
      # An update may also follow other reads of its operand (x[i - 1] in
      # x.at[i].add(x[i - 1])): they are done when it writes.
      elif native.updates_operand(last, v, r):
        ok.append((v, r))
    return ok

  def body_function(self, plan, in_place=()):
    """The name of a new function running ``plan``'s jaxpr completely; the
    caller may pass one buffer for each (input, result) pair of
    ``in_place`` (pairs ``in_place_results`` allows)."""
    name = f"body_{self.bodies}"
    self.bodies += 1
    jaxpr = plan.jaxpr
    fn = _Function(unit=self, plan=plan, steps=plan.steps, inputs=list(jaxpr.invars),
                   outputs=[], result_vars=list(jaxpr.outvars), in_place=in_place)
    self.functions.append(fn.source(f"static int {name}(void* const* ext)"))
    if fn.uses_blas:
      self.blas_bodies.add(name)
    return name

  def source(self):
    head = [prelude.PRELUDE, "#include <string.h>", prelude.vector_math_declarations()]
    if self.uses_blas:
      head.append(blas.C_DECLARATIONS)
    # Frees the memory functions keep between calls (when the executable
    # goes), except blocks a call is using (taken as a call takes them): at
    # interpreter exit a daemon thread may still be running one.
    release = ["void pj_release(void) {"] + [
        f"  for (int i = 0; i < {_POOL}; i++)\n"
        f"    if (!__atomic_test_and_set(&{a[:-6]}_busy[i], __ATOMIC_ACQUIRE)) {{\n"
        f"      free({a}[i]); {a}[i] = 0; __atomic_clear(&{a[:-6]}_busy[i], __ATOMIC_RELEASE);\n"
        f"    }}"
        for a in self.kept_arenas] + ["}"]
    # How many blocks the functions keep (for tests of the pools).
    kept = ["int pj_kept_blocks(void) {", "  int n = 0;"] + [
        f"  for (int i = 0; i < {_POOL}; i++) n += {a}[i] != 0;" for a in self.kept_arenas]
    return "\n".join(head + self.functions + release + kept + ["  return n;", "}", ""])


def _reads(unit, plan, step):
  if type(step) is Group:
    return unit.kernel(plan, step).inputs
  return [v for v in step.inputs if type(v) is not Literal]


def _writes(step):
  return step.outputs if type(step) is Group else list(step.eqn.outvars)


def _link_segments(unit, plan, segments):
  """Which buffers each segment takes from and gives back to Python."""
  seg_of = {v: seg for seg in segments for step in seg.steps for v in _writes(step)}
  read_outside = {}   # var -> segments reading it, or None for Python
  for step in plan.steps:
    if type(step) is HostStep:
      for v in step.eqn.invars:
        if type(v) is not Literal:
          read_outside.setdefault(v, set()).add(None)
  for v in plan.jaxpr.outvars:
    if type(v) is not Literal:
      read_outside.setdefault(v, set()).add(None)
  for seg in segments:
    for step in seg.steps:
      for v in _reads(unit, plan, step):
        if seg_of.get(v) is not seg and v not in seg.inputs:
          seg.inputs.append(v)
        read_outside.setdefault(v, set()).add(seg)
  for seg in segments:
    for step in seg.steps:
      for v in _writes(step):
        if type(v) is not DropVar and read_outside.get(v, set()) - {seg}:
          seg.outputs.append(v)


class _Function:
  """One C function running ``steps``.  ``inputs`` and ``outputs`` come in
  ``ext``; ``result_vars`` (for bodies) are the jaxpr's outputs, each written
  to its own ``ext`` slot after the inputs, copied there when a step does
  not compute it in place."""

  def __init__(self, unit, plan, steps, inputs, outputs, result_vars=(), in_place=()):
    self.unit, self.plan, self.steps = unit, plan, steps
    self.may_alias = frozenset(v for pair in in_place for v in pair)
    self.in_place = frozenset(in_place)   # (input, result) pairs sharing a buffer
    self.ext = {}
    for v in list(inputs) + list(outputs):
      self.ext.setdefault(v, len(self.ext))
    self.result_vars = list(result_vars)
    self.copies = []   # (ext slot, var or Literal) written at the end
    written = {v for step in steps for v in _writes(step)}
    for j, v in enumerate(self.result_vars):
      slot = len(inputs) + j
      if type(v) is not Literal and v in written and v not in self.ext:
        self.ext[v] = slot
      else:
        self.copies.append((slot, v))
    self.temps = {}      # var -> C name of a malloc'd buffer
    self.lifetimes = {}  # var -> [first, last] index of the steps using its buffer
    self.scratches = []  # (C name, ctype, count, step index) of native steps' buffers
    self.step_index = 0
    self.literals = []   # declarations of literal operands
    self.lines = []
    self.uses_blas = False

  def ptr(self, v):
    """A C pointer expression to ``v``'s buffer, typed by its dtype."""
    ct = codegen_ops.storage_ctype(v.aval.dtype)
    if type(v) is Literal:
      name = f"lit{len(self.literals)}"
      self.literals.append(f"{ct} {name} = {codegen_ops.storage_literal(v.val, v.aval.dtype)};")
      return f"(&{name})"
    if v in self.ext:
      return f"(({ct}*)ext[{self.ext[v]}])"
    if v not in self.temps:
      self.temps[v] = f"b{len(self.temps)}"
      self.lifetimes[v] = [self.step_index, self.step_index]
    self.lifetimes[v][1] = self.step_index
    return self.temps[v]

  def scratch(self, v):
    """A new buffer shaped like ``v``, alive during the step being emitted."""
    return self.scratch_buffer(codegen_ops.storage_ctype(v.aval.dtype),
                               int(np.prod(v.aval.shape, dtype=np.int64)))

  def scratch_buffer(self, ctype, count):
    """A new buffer of ``count`` ``ctype`` values, alive during the step being
    emitted (the steps' scratch buffers share memory)."""
    name = f"s{len(self.scratches)}"
    self.scratches.append((name, ctype, count, self.step_index))
    return name

  def subfunction(self, plan, in_place=()):
    return self.unit.body_function(plan, in_place)

  def source(self, signature):
    for self.step_index, step in enumerate(self.steps):
      if type(step) is Group:
        k = self.unit.kernel(self.plan, step)
        aliased = self.may_alias & frozenset(k.inputs + k.outputs)
        if aliased:
          k = self.unit.kernel(self.plan, step, aliased)
        args = [self.ptr(v) for v in k.inputs] + [self.ptr(v) for v in k.outputs]
        args += [self.scratch_buffer(ct, count) for ct, count in k.scratch]
        self.lines.append(f"{k.name}({', '.join(args)});")
      else:
        native.emit(step, self)
    self.step_index = len(self.steps)   # the copies of results come last
    for slot, v in self.copies:
      ct = codegen_ops.storage_ctype(v.aval.dtype)
      if type(v) is Literal:
        self.lines.append(
            f"*({ct}*)ext[{slot}] = {codegen_ops.storage_literal(v.val, v.aval.dtype)};")
      else:
        nbytes = int(np.prod(v.aval.shape, dtype=np.int64)) * np.dtype(v.aval.dtype).itemsize
        self.lines.append(f"memcpy(ext[{slot}], {self.ptr(v)}, {nbytes});")
    self.unit.uses_blas |= self.uses_blas
    buffers = [(name, codegen_ops.storage_ctype(v.aval.dtype),
                int(np.prod(v.aval.shape, dtype=np.int64)), tuple(self.lifetimes[v]))
               for v, name in self.temps.items()]
    name = signature.split("(")[0].split()[-1]
    out = [signature + " {", "  int rc = 1;"]
    out += ["  " + d for d in self.literals]
    arena = _Arena(name, buffers, self.scratches)
    if arena.keep:
      self.unit.kept_arenas.append(f"{name}_arena")
    out += ["  " + line for line in arena.acquire()]
    out += ["  " + line for line in self.lines]
    out += ["  rc = 0;", "done:"]
    out += ["  " + line for line in arena.release()]
    out += ["  return rc;", "}", ""]
    return "\n".join(arena.statics() + out)


# A function keeps its scratch memory between calls up to this size: fresh
# large allocations are fresh pages, and faulting them in costs more than
# the computation of many kernels.  (A whole training step compiled as one
# function, such as the convnet workload's, needs about 40 MB.)
_KEEP_BYTES = 64 << 20
# Blocks kept per function: concurrent calls (the devices of an SPMD run
# calling the same compiled body) each take their own; a call that finds
# all of them busy allocates and frees its own.
_POOL = 8


def _padded(n, ct):
  return -(-max(1, n) * codegen_reductions.CTYPE_SIZES[ct] // 64) * 64


def _pack(blocks):
  """Offsets for ``blocks`` ((size, (first, last step)) each) in one block,
  and its size: largest first, each at the lowest offset free of every
  placed block whose steps overlap its own (the shapes alone decide)."""
  order = sorted(range(len(blocks)), key=lambda i: (-blocks[i][0], i))
  placed, offsets, total = [], [0] * len(blocks), 0
  for i in order:
    size, (first, last) = blocks[i]
    busy = sorted((off, off + sz) for off, sz, (f, l) in placed if f <= last and first <= l)
    offset = 0
    for start, end in busy:
      if offset + size <= start:
        break
      offset = max(offset, end)
    placed.append((offset, size, (first, last)))
    offsets[i] = offset
    total = max(total, offset + size)
  return offsets, total


class _Arena:
  """A function's temporary buffers carved from one block; up to ``_POOL``
  blocks are kept for later calls (when small enough), each taken by one
  call at a time.  Buffers whose steps do not overlap share memory."""

  def __init__(self, name, buffers, scratches=()):
    # (name, ctype, count, (first, last step using it)); a step's scratch
    # buffers live during that step only.
    self.name = name
    self.buffers = list(buffers) + [(n, ct, c, (step, step)) for n, ct, c, step in scratches]
    self.offsets, self.total = _pack([(_padded(c, ct), life) for _, ct, c, life in self.buffers])
    self.keep = 0 < self.total <= _KEEP_BYTES

  def statics(self):
    if not self.keep:
      return []
    return [f"static char* {self.name}_arena[{_POOL}];",
            f"static volatile char {self.name}_busy[{_POOL}];"]

  def acquire(self):
    if not self.buffers:
      return []
    lines = ["char* arena = 0;"]
    if self.keep:
      # The first free slot's block (allocated on its first use).
      lines += ["int slot = -1;",
                f"for (int i = 0; i < {_POOL}; i++)",
                f"  if (!__atomic_test_and_set(&{self.name}_busy[i], __ATOMIC_ACQUIRE)) "
                "{ slot = i; break; }",
                f"if (slot >= 0) arena = {self.name}_arena[slot];"]
    lines += [f"if (!arena) arena = (char*)malloc({self.total});", "if (!arena) goto done;"]
    if self.keep:
      lines.append(f"if (slot >= 0) {self.name}_arena[slot] = arena;")
    lines += [f"{ct}* {name} = ({ct}*)(arena + {off});"
              for (name, ct, _, _), off in zip(self.buffers, self.offsets)]
    return lines

  def release(self):
    if not self.buffers:
      return []
    if not self.keep:
      return ["free(arena);"]
    return [f"if (slot >= 0) __atomic_clear(&{self.name}_busy[slot], __ATOMIC_RELEASE);",
            "else free(arena);"]
