"""Equations compiled to C that are not loop kernels ("native steps"):
matrix products through BLAS, dynamic slices, updates and concatenation as
row copies,
gathers and scatters (``gather_scatter``), convolutions (``conv``), sorts and
cumulative reductions (``sort_scan``), pooling (``windows``), complex
max/min reductions folded in blocks (``complex_extremum_c``), and
``scan``, ``while`` and ``cond`` as C loops and branches over compiled
functions of their bodies.

A control-flow equation is native only when each of its bodies compiles
completely (every equation a kernel or a native step, no constants), so a
1000-step scan runs without returning to Python.  Otherwise it stays a host
step and its NumPy ``impl`` runs it.

``analyze(eqn)`` (used by ``fusion``) says whether an equation is native;
``emit(step, fn)`` (used by ``program``) writes its C statements into the
function being generated; ``fn`` gives buffers (``fn.ptr(v)``), function-level
scratch buffers (``fn.scratch``) and compiled bodies (``fn.subfunction``).
"""
import numpy as np

from purejax._src.backends.cpu import (blas, codegen_ops, complex_extremum_c, conv,
                                         gather_scatter, sort_scan, topk, windows)
from purejax._src.jaxpr import Literal

BLAS_DTYPES = {np.dtype(np.float32): "pj_gemm_f32", np.dtype(np.float64): "pj_gemm_f64",
                np.dtype(np.complex64): "pj_gemm_c64", np.dtype(np.complex128): "pj_gemm_c128"}


class NativeStep:
  """A native equation; ``plans`` are its bodies' fusion plans, by name;
  ``inputs`` the stored values it reads: its operands, each possibly
  replaced by the value it is a same-layout view of (``sources``), and a
  scatter's scalar ``fill`` in place of the broadcast operand it stands for."""

  def __init__(self, eqn, plans=None, layout=None, fill=None, sources=None):
    self.eqn, self.plans, self.layout, self.fill = eqn, plans or {}, layout, fill
    self.sources = sources or {}
    operands = list(eqn.invars) if fill is None else [fill] + list(eqn.invars[1:])
    self.inputs = [self.read(v) for v in operands]

  def read(self, v):
    """The stored value holding ``v``'s elements in ``v``'s C order."""
    return self.sources.get(v, v)

  def describe(self):
    inner = "".join(f"\n    {name}:\n" + "\n".join("  " + line for line in
                                                   plan.describe().splitlines())
                    for name, plan in self.plans.items())
    return f"native: {self.eqn.primitive.name}{inner}"


_ELEMENT_UPDATES = ("dynamic_update_slice",) + gather_scatter.SCATTERS


def updates_operand(step, v, r):
  """Whether native ``step`` computes ``r`` as its operand ``v`` with some
  elements updated, reading ``v`` nowhere else: given one buffer for both,
  it need not copy ``v`` (see ``in_place_results``)."""
  eqn = step.eqn
  return (eqn.primitive.name in _ELEMENT_UPDATES and step.fill is None
          and step.inputs[0] is v and step.inputs.count(v) == 1 and eqn.outvars[0] is r)


def operand_in_place(step, fn):
  """Whether ``step``'s output shares its operand's buffer in ``fn``."""
  return (step.inputs[0], step.eqn.outvars[0]) in fn.in_place


def _size(aval):
  return int(np.prod(aval.shape, dtype=np.int64))


def _plain(vars_):
  """All arrays non-empty, of dtypes C code handles."""
  return all(codegen_ops.dtype_supported(v.aval.dtype) and _size(v.aval) > 0 for v in vars_)


def analyze(eqn, views=None):
  """A NativeStep for ``eqn``, or None when it must run on NumPy; ``views``
  (var -> view equation) lets a scatter fill its output with the scalar a
  broadcast operand repeats."""
  name = eqn.primitive.name
  if not _plain(list(eqn.invars) + list(eqn.outvars)):
    return None
  if name == "dot_general":
    layout = gemm_layout(eqn)
    return None if layout is None else NativeStep(eqn, layout=layout)
  if name in ("dynamic_slice", "dynamic_update_slice", "concatenate"):
    return NativeStep(eqn)
  if name == "conv_general_dilated":
    return NativeStep(eqn) if conv.supported(eqn) else None
  if name == "sort" or name in sort_scan.CUMULATIVE:
    return NativeStep(eqn) if sort_scan.supported(eqn) else None
  if name == "top_k":
    return NativeStep(eqn) if topk.supported(eqn) else None
  if name in complex_extremum_c.NAMES:   # (a fused kernel when one block)
    return NativeStep(eqn) if complex_extremum_c.supported(eqn) else None
  if name == "gather" or name in gather_scatter.SCATTERS:
    if not gather_scatter.supported(eqn):
      return None
    views = views or {}
    sources = {v: same_layout_source(v, views) for v in eqn.invars}
    return NativeStep(eqn, fill=gather_scatter.scalar_fill(eqn, views), sources=sources)
  if name in windows.NAMES:
    return NativeStep(eqn) if windows.supported(eqn) else None
  bodies = {"scan": ("jaxpr",), "while": ("cond_jaxpr", "body_jaxpr")}.get(name)
  if name == "cond":
    bodies = tuple(f"branch{i}" for i in range(len(eqn.params["branches"])))
  if bodies is None:
    return None
  plans = {}
  for body in bodies:
    closed = (eqn.params["branches"][int(body[6:])] if name == "cond" else eqn.params[body])
    if body in ("jaxpr", "body_jaxpr"):
      closed = _updates_after_reads(closed, _carried(eqn, body))
    plan = _complete_plan(closed)
    if plan is None:
      return None
    plans[body] = plan
  return NativeStep(eqn, plans)


def _same_layout(eqn):
  """Whether view ``eqn`` only renames its operand's shape (its elements in
  the same C order): a reshape, a squeeze, a broadcast adding unit dims."""
  name = eqn.primitive.name
  if name in ("reshape", "squeeze"):
    return name == "squeeze" or eqn.params.get("dimensions") is None
  if name == "broadcast_in_dim":
    dims = list(eqn.params["broadcast_dimensions"])
    return (dims == sorted(dims) and eqn.invars[0].aval.shape != () and
            _size(eqn.invars[0].aval) == _size(eqn.outvars[0].aval))
  return False


def same_layout_source(v, views):
  """The value ``v`` (a view) reshapes, following such views, or ``v``."""
  while type(v) is not Literal and v in views and _same_layout(views[v]):
    v = views[v].invars[0]
  return v


def _carried(eqn, body):
  """The invars of a loop's body jaxpr that are its carries."""
  invars = eqn.params[body].jaxpr.invars
  if body == "jaxpr":   # scan: consts, carries, then the xs
    first = eqn.params["num_consts"]
    return invars[first:first + eqn.params["num_carry"]]
  return invars[eqn.params["body_nconsts"]:]


def _updates_after_reads(closed, carried):
  """``closed`` with each element update of a carry (its
  dynamic_update_slice or scatter) moved after every equation that does not
  need its result, the carry's other reads among them, so that the update
  may write the carry in place (``in_place_results``).  Unchanged where a
  read of the old carry needs the update's result, or where moving
  equations could reorder effects."""
  from purejax._src.interpreters import partial_eval as pe
  from purejax._src.jaxpr import ClosedJaxpr, Jaxpr
  eqns = list(closed.jaxpr.eqns)
  if pe.jaxpr_has_effects(closed.jaxpr):
    return closed
  moved = False
  for v in carried:
    updates = [k for k, e in enumerate(eqns)
               if e.primitive.name in _ELEMENT_UPDATES and e.invars[0] is v]
    if len(updates) != 1:
      continue
    at = updates[0]
    needs, later = set(eqns[at].outvars), []   # the update and what needs it
    for k in range(at + 1, len(eqns)):
      if any(type(x) is not Literal and x in needs for x in eqns[k].invars):
        needs.update(eqns[k].outvars)
        later.append(k)
    if any(v in eqns[k].invars for k in later) or len(later) == len(eqns) - at - 1:
      continue   # the old carry read after the update, or nothing to move
    after = set(later)
    rest = [e for k, e in enumerate(eqns[at + 1:], at + 1) if k not in after]
    eqns = eqns[:at] + rest + [eqns[at]] + [eqns[k] for k in later]
    moved = True
  if not moved:
    return closed
  jaxpr = closed.jaxpr
  return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns), closed.consts)


def _complete_plan(closed):
  from purejax._src.backends.cpu import fusion
  if closed.consts or closed.jaxpr.constvars:
    return None
  jaxpr = closed.jaxpr
  if not _plain(list(jaxpr.invars) + [v for v in jaxpr.outvars if type(v) is not Literal]):
    return None
  plan = fusion.plan_jaxpr(jaxpr, native_only=True, row_prologues=True)
  return plan if plan.complete else None


# -- matrix products ---------------------------------------------------------------------

def _contiguous(dims):
  return list(dims) == list(range(dims[0], dims[0] + len(dims))) if dims else True


def gemm_layout(eqn):
  """How ``dot_general`` maps onto gemm calls over leading batch dims:
  (batch, M, N, K, lhs contracting dims last, rhs contracting dims first),
  or None when the operands' dims are not in such an order."""
  if not blas.available():
    return None
  (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
  lhs, rhs = (v.aval for v in eqn.invars)
  out = eqn.outvars[0].aval
  dtype = np.dtype(out.dtype)
  pref = eqn.params.get("preferred_element_type")
  if (dtype not in BLAS_DTYPES or lhs.dtype != dtype or rhs.dtype != dtype
      or (pref is not None and np.dtype(pref) != dtype) or not lc):
    return None
  nb = len(lb)
  if tuple(lb) != tuple(range(nb)) or tuple(rb) != tuple(range(nb)):
    return None
  if not (_contiguous(lc) and _contiguous(rc)):
    return None
  lhs_last = lc[-1] == lhs.ndim - 1
  rhs_first = rc[0] == nb
  if not (lhs_last or lc[0] == nb) or not (rhs_first or rc[-1] == rhs.ndim - 1):
    return None
  batch = int(np.prod(lhs.shape[:nb], dtype=np.int64))
  k = int(np.prod([lhs.shape[d] for d in lc], dtype=np.int64))
  m = _size(lhs) // max(1, batch * k)
  n = _size(rhs) // max(1, batch * k)
  if max(m, n, k) > blas.MAX_DIM:
    return None
  return batch, m, n, k, lhs_last, rhs_first


def _emit_dot(step, fn):
  batch, m, n, k, lhs_last, rhs_first = step.layout
  eqn = step.eqn
  dtype = np.dtype(eqn.outvars[0].aval.dtype)
  gemm = BLAS_DTYPES[dtype]
  lhs, rhs, out = fn.ptr(eqn.invars[0]), fn.ptr(eqn.invars[1]), fn.ptr(eqn.outvars[0])
  threads = fn.unit.num_threads if fn.unit.openmp else 1
  if batch * m * n * k < blas.PARALLEL_MIN_FLOPS:
    threads = 1
  elif threads <= 0:
    threads = "omp_get_max_threads()"
  fn.lines.append(f"{gemm}({batch}, {m}, {n}, {k}, {int(lhs_last)}, {int(rhs_first)}, "
                  f"{lhs}, {rhs}, {out}, {threads});   /* dot_general */")
  fn.uses_blas = True


# -- dynamic slices ------------------------------------------------------------------------

def _clamped_start(fn, index, hi):
  """A C expression of start ``index`` (a scalar var) clamped into [0, hi]."""
  ct = codegen_ops.ctype(index.aval.dtype)
  v = f"(*(const {ct}*){fn.ptr(index)})"
  if np.dtype(index.aval.dtype).kind == "u":
    return f"((uint64_t){v} > {hi}ULL ? (int64_t){hi} : (int64_t){v})"
  return f"((int64_t){v} < 0 ? 0 : (int64_t){v} > {hi} ? (int64_t){hi} : (int64_t){v})"


def _copy_block(lines, shape, big_shape, itemsize, src, dst, src_is_big):
  """Copies a block of ``shape`` between a contiguous buffer and the region
  of a ``big_shape`` array at offsets ``st[k]``, one memcpy per row."""
  rank = len(shape)
  strides = [int(np.prod(big_shape[k + 1:], dtype=np.int64)) for k in range(rank)]
  rows = int(np.prod(shape[:-1], dtype=np.int64)) if rank else 1
  row = shape[-1] if rank else 1
  lines.append(f"for (int64_t o = 0; o < {rows}; o++) {{")
  lines.append("  int64_t rest = o, off = 0;")
  for k in reversed(range(rank - 1)):
    lines.append(f"  off += (rest % {shape[k]} + st[{k}]) * {strides[k]}; rest /= {shape[k]};")
  if rank:
    lines.append(f"  off += st[{rank - 1}];")
  big, small = f"(char*){src if src_is_big else dst} + off * {itemsize}", \
      f"(char*){dst if src_is_big else src} + o * {row * itemsize}"
  pair = (small, big) if src_is_big else (big, small)
  lines.append(f"  memcpy({pair[0]}, {pair[1]}, {row * itemsize});")
  lines.append("}")


def _emit_dynamic_slice(step, fn):
  eqn = step.eqn
  x, starts, out = eqn.invars[0], eqn.invars[1:], eqn.outvars[0]
  sizes, dims = eqn.params["slice_sizes"], x.aval.shape
  lines = [f"int64_t st[{max(1, len(dims))}];"]
  lines += [f"st[{k}] = {_clamped_start(fn, i, d - n)};"
            for k, (i, d, n) in enumerate(zip(starts, dims, sizes))]
  _copy_block(lines, tuple(sizes), dims, np.dtype(x.aval.dtype).itemsize, fn.ptr(x),
              fn.ptr(out), src_is_big=True)
  fn.lines += ["{ /* dynamic_slice */"] + ["  " + s for s in lines] + ["}"]


def _emit_dynamic_update_slice(step, fn):
  eqn = step.eqn
  x, update, starts, out = eqn.invars[0], eqn.invars[1], eqn.invars[2:], eqn.outvars[0]
  sizes, dims = update.aval.shape, x.aval.shape
  lines = [f"int64_t st[{max(1, len(dims))}];"]
  lines += [f"st[{k}] = {_clamped_start(fn, i, d - n)};"
            for k, (i, d, n) in enumerate(zip(starts, dims, sizes))]
  if not operand_in_place(step, fn):
    lines.append(f"memcpy({fn.ptr(out)}, {fn.ptr(x)}, {_nbytes(x)});")
  _copy_block(lines, tuple(sizes), dims, np.dtype(x.aval.dtype).itemsize, fn.ptr(update),
              fn.ptr(out), src_is_big=False)
  fn.lines += ["{ /* dynamic_update_slice */"] + ["  " + s for s in lines] + ["}"]


def _emit_concatenate(step, fn):
  eqn = step.eqn
  out, axis = eqn.outvars[0], eqn.params["dimension"]
  rank = out.aval.ndim
  lines, offset = [f"int64_t st[{rank}] = {{0}};"], 0
  for x in eqn.invars:
    lines.append(f"st[{axis}] = {offset};")
    _copy_block(lines, tuple(x.aval.shape), tuple(out.aval.shape),
                np.dtype(x.aval.dtype).itemsize, fn.ptr(x), fn.ptr(out), src_is_big=False)
    offset += x.aval.shape[axis]
  fn.lines += ["{ /* concatenate */"] + ["  " + s for s in lines] + ["}"]


# -- control flow -----------------------------------------------------------------------

def _nbytes(v):
  return _size(v.aval) * np.dtype(v.aval.dtype).itemsize


def _carry_buffers(fn, carry_vars, init_vars, in_place=()):
  """Two scratch buffers per carried value (read one, write the other),
  the first holding the initial value; one for those updated ``in_place``
  (indices)."""
  cur, nxt = [], []
  for j, (v, init) in enumerate(zip(carry_vars, init_vars)):
    a = fn.scratch(v)
    b = a if j in in_place else fn.scratch(v)
    fn.lines.append(f"  memcpy({a}, {fn.ptr(init)}, {_nbytes(v)});")
    cur.append(a)
    nxt.append(b)
  return cur, nxt


def _swap(carry_vars, in_place=()):
  return [f"{{ void* s = cur[{j}]; cur[{j}] = nxt[{j}]; nxt[{j}] = s; }}"
          for j in range(len(carry_vars)) if j not in in_place]


def _single_blas(fn, bodies):
  """C statements entering and leaving OpenBLAS's single-threaded mode once
  around a loop whose ``bodies`` call BLAS (the products inside then skip
  the mode's lock and thread-count changes), or empty ones."""
  if not any(b in fn.unit.blas_bodies for b in bodies):
    return "", ""
  fn.uses_blas = True
  return ("if (pj_single_enter) pj_single_enter(0);",
          "if (pj_single_leave) pj_single_leave(0);")


def _emit_scan(step, fn):
  eqn, p = step.eqn, step.eqn.params
  nconst, ncarry, length = p["num_consts"], p["num_carry"], p["length"]
  consts = eqn.invars[:nconst]
  init = eqn.invars[nconst:nconst + ncarry]
  xs = eqn.invars[nconst + ncarry:]
  carry_out, ys = eqn.outvars[:ncarry], eqn.outvars[ncarry:]
  plan = step.plans["jaxpr"]
  # Carries the body updates element by element (gradient sums) are
  # updated in place: no second buffer to write and then swap in.
  pairs = [(plan.jaxpr.invars[nconst + j], plan.jaxpr.outvars[j]) for j in range(ncarry)]
  in_place = fn.unit.in_place_results(plan, pairs)
  in_place_carries = {j for j, pair in enumerate(pairs) if pair in in_place}
  body = fn.subfunction(plan, in_place)
  enter, leave = _single_blas(fn, [body])
  n_in = nconst + ncarry + len(xs)
  fn.lines.append(f"{{ /* scan, length {length}{', reversed' if p['reverse'] else ''} */")
  cur, nxt = _carry_buffers(fn, carry_out, init, in_place_carries)
  lines = [f"void* cur[{max(1, ncarry)}] = {{{', '.join(cur) or '0'}}};",
           f"void* nxt[{max(1, ncarry)}] = {{{', '.join(nxt) or '0'}}};",
           f"void* args[{n_in + ncarry + len(ys)}];"]
  lines += [f"args[{i}] = (void*){fn.ptr(v)};" for i, v in enumerate(consts)]
  lines.append(enter)
  lines.append(f"for (int64_t it = 0; it < {length}; it++) {{")
  lines.append(f"  const int64_t t = {f'{length - 1} - it' if p['reverse'] else 'it'};")
  lines += [f"  args[{nconst + j}] = cur[{j}];" for j in range(ncarry)]
  lines += [f"  args[{nconst + ncarry + i}] = (char*){fn.ptr(x)} + t * {_nbytes(x) // length};"
            for i, x in enumerate(xs)]
  lines += [f"  args[{n_in + j}] = nxt[{j}];" for j in range(ncarry)]
  lines += [f"  args[{n_in + ncarry + i}] = (char*){fn.ptr(y)} + t * {_nbytes(y) // length};"
            for i, y in enumerate(ys)]
  lines.append(f"  if ({body}(args)) {{ {leave} goto done; }}")
  lines += ["  " + s for s in _swap(carry_out, in_place_carries)] + ["}", leave]
  lines += [f"memcpy({fn.ptr(v)}, cur[{j}], {_nbytes(v)});" for j, v in enumerate(carry_out)]
  fn.lines += ["  " + s for s in lines] + ["}"]


def _emit_while(step, fn):
  eqn, p = step.eqn, step.eqn.params
  nc, nb = p["cond_nconsts"], p["body_nconsts"]
  cconsts, bconsts = eqn.invars[:nc], eqn.invars[nc:nc + nb]
  init, outs = eqn.invars[nc + nb:], eqn.outvars
  n = len(outs)
  cond = fn.subfunction(step.plans["cond_jaxpr"])
  # Carries the body updates element by element (x.at[i].set(...)) are
  # updated in place, as a scan's: the body does not copy them.
  plan = step.plans["body_jaxpr"]
  pairs = [(plan.jaxpr.invars[nb + j], plan.jaxpr.outvars[j]) for j in range(n)]
  in_place = fn.unit.in_place_results(plan, pairs)
  in_place_carries = {j for j, pair in enumerate(pairs) if pair in in_place}
  body = fn.subfunction(plan, in_place)
  enter, leave = _single_blas(fn, [cond, body])
  pred_type = codegen_ops.ctype(step.plans["cond_jaxpr"].jaxpr.outvars[0].aval.dtype)
  fn.lines.append("{ /* while */")
  cur, nxt = _carry_buffers(fn, outs, init, in_place_carries)
  lines = [f"void* cur[{max(1, n)}] = {{{', '.join(cur) or '0'}}};",
           f"void* nxt[{max(1, n)}] = {{{', '.join(nxt) or '0'}}};",
           f"{pred_type} pred = 0;",
           f"void* cargs[{nc + n + 1}];", f"void* bargs[{nb + 2 * n}];"]
  lines += [f"cargs[{i}] = (void*){fn.ptr(v)};" for i, v in enumerate(cconsts)]
  lines += [f"bargs[{i}] = (void*){fn.ptr(v)};" for i, v in enumerate(bconsts)]
  lines.append(f"cargs[{nc + n}] = &pred;")
  lines += [enter, "for (;;) {"]
  lines += [f"  cargs[{nc + j}] = cur[{j}];" for j in range(n)]
  lines += [f"  if ({cond}(cargs)) {{ {leave} goto done; }}", "  if (!pred) break;"]
  lines += [f"  bargs[{nb + j}] = cur[{j}]; bargs[{nb + n + j}] = nxt[{j}];" for j in range(n)]
  lines.append(f"  if ({body}(bargs)) {{ {leave} goto done; }}")
  lines += ["  " + s for s in _swap(outs, in_place_carries)] + ["}", leave]
  lines += [f"memcpy({fn.ptr(v)}, cur[{j}], {_nbytes(v)});" for j, v in enumerate(outs)]
  fn.lines += ["  " + s for s in lines] + ["}"]


def _emit_cond(step, fn):
  eqn = step.eqn
  index, ops, outs = eqn.invars[0], eqn.invars[1:], eqn.outvars
  branches = [fn.subfunction(step.plans[f"branch{i}"])
              for i in range(len(eqn.params["branches"]))]
  last = len(branches) - 1
  it = codegen_ops.ctype(index.aval.dtype)
  lines = [f"const int64_t i = (int64_t)*(const {it}*){fn.ptr(index)};",
           f"void* args[{len(ops) + len(outs)}];"]
  lines += [f"args[{i}] = (void*){fn.ptr(v)};" for i, v in enumerate(ops + outs)]
  # The index clamps into range, as the impl does.
  lines.append("int rc;")
  lines += [f"{'if' if b == 0 else 'else if'} (i <= {b}) rc = {name}(args);"
            for b, name in enumerate(branches[:-1])]
  lines.append(f"{'else ' if last else ''}rc = {branches[-1]}(args);")
  lines.append("if (rc) goto done;")
  fn.lines += ["{ /* cond */"] + ["  " + s for s in lines] + ["}"]


_EMITTERS = {"dot_general": _emit_dot, "scan": _emit_scan, "while": _emit_while,
             "cond": _emit_cond, "dynamic_slice": _emit_dynamic_slice,
             "dynamic_update_slice": _emit_dynamic_update_slice,
             "concatenate": _emit_concatenate,
             "gather": gather_scatter.emit_gather,
             "conv_general_dilated": conv.emit, "top_k": topk.emit,
             **{name: complex_extremum_c.emit for name in complex_extremum_c.NAMES},
             **{name: sort_scan.emit for name in ("sort",) + sort_scan.CUMULATIVE},
             **{name: gather_scatter.emit_scatter for name in gather_scatter.SCATTERS},
             **{name: windows.emit for name in windows.NAMES}}


def emit(step, fn):
  _EMITTERS[step.eqn.primitive.name](step, fn)
