"""``gather`` and the ``scatter`` family as native steps: C loops over the
index rows and each row's window, with the NumPy implementations' semantics
(lax/gather.py, lax/scatter.py): starts in int64, clamped into range; gather
fills (FILL_OR_DROP) or clamps out-of-bounds windows, scatter drops them
(clamps with CLIP); updates apply in row order, window elements in C order,
so repeated positions combine exactly as NumPy's ``ufunc.at`` does.
"""
import numpy as np

from purejax._src.backends.cpu import codegen_ops
from purejax._src.backends.cpu.indexing import strides
from purejax._src.lax.gather import GatherScatterMode

SCATTERS = ("scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min",
            "scatter-max")


def supported(eqn):
  """Gathers, and scatters that replace or combine with a ufunc (not a
  general combiner jaxpr; no bool arithmetic)."""
  name = eqn.primitive.name
  if name == "gather":
    return True
  if name == "scatter":
    return eqn.params.get("update_jaxpr") is None
  dtype = np.dtype(eqn.outvars[0].aval.dtype)
  if codegen_ops.is_half(dtype) or dtype.kind == "c":   # their combiners are not C's
    return False                                          # operators on stored values
  return name in SCATTERS and dtype != np.bool_


def _prod(xs):
  return int(np.prod(xs, dtype=np.int64))


def _row_starts(fn, indices, rank, index_map, operand_batching, indices_batching):
  """C lines (run inside ``for r``) setting ``st[d]``, the row's start in
  every operand dim."""
  batch_shape = indices.aval.shape[:-1]
  nidx = indices.aval.shape[-1]
  bstrides = strides(batch_shape)
  ct = codegen_ops.ctype(indices.aval.dtype)
  lines = [f"int64_t st[{max(1, rank)}] = {{0}};"]
  lines += [f"st[{d}] = (int64_t)((const {ct}*){fn.ptr(indices)})[r * {nidx} + {j}];"
            for j, d in enumerate(index_map)]
  lines += [f"st[{od}] = (r / {bstrides[idim]}) % {batch_shape[idim]};"
            for od, idim in zip(operand_batching, indices_batching)]
  return lines


def _in_bounds(shape, window, index_map):
  terms = [f"(st[{d}] >= 0 && st[{d}] <= {shape[d] - window[d]})" for d in index_map]
  return " && ".join(terms) or "1"


def _clamp(shape, window):
  lines = []
  for d, (n, w) in enumerate(zip(shape, window)):
    hi = max(n - w, 0)
    lines.append(f"st[{d}] = st[{d}] < 0 ? 0 : st[{d}] > {hi} ? {hi} : st[{d}];")
  return lines


def _window_offsets(window, xstrides, kept, other_strides):
  """Lines (inside ``for w``) adding window element w's offsets to ``xoff``
  (the operand) and ``yoff`` (the other array, whose stride for kept dim
  ``kept[i]`` is ``other_strides[i]``)."""
  lines = ["int64_t rest = w;"]
  for d in reversed(range(len(window))):
    if window[d] == 1:
      continue
    lines.append(f"{{ const int64_t i = rest % {window[d]}; rest /= {window[d]};")
    lines.append(f"  xoff += i * {xstrides[d]};")
    if d in kept:
      lines.append(f"  yoff += i * {other_strides[kept.index(d)]};")
    lines.append("}")
  return lines


def _row_window_loops(body, rows, batch_shape, other_batch_strides, shape, window, kept,
                      other_window_strides, statement):
  """The loops over index rows and their windows: ``body`` (the row's
  starts, bounds handling) then, per window element, ``statement`` with
  ``xoff`` the operand offset and ``yoff`` the other array's."""
  xstrides = strides(shape)
  bstrides = strides(batch_shape)
  body = list(body) + ["int64_t base = 0, ybase = 0;"]
  body += [f"base += st[{d}] * {xstrides[d]};" for d in range(len(shape))]
  body += [f"ybase += (r / {bstrides[j]}) % {n} * {other_batch_strides[j]};"
           for j, n in enumerate(batch_shape)]
  body.append(f"for (int64_t w = 0; w < {_prod(window)}; w++) {{")
  inner = ["int64_t xoff = base, yoff = ybase;"]
  inner += _window_offsets(window, xstrides, kept, other_window_strides)
  inner.append(statement)
  body += ["  " + s for s in inner] + ["}"]
  return [f"for (int64_t r = 0; r < {rows}; r++) {{"] + ["  " + s for s in body] + ["}"]


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
  dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
  kept = [d for d in range(rank) if d not in dropped]
  ostrides = strides(out.aval.shape)
  batch_out = [d for d in range(out.aval.ndim) if d not in dn.offset_dims]
  fill = "0"
  check = p["mode"] == GatherScatterMode.FILL_OR_DROP
  if check:
    with np.errstate(invalid="ignore", over="ignore"):
      value = np.array(p["fill_value"] if p["fill_value"] is not None else 0).astype(dtype)
    fill = codegen_ops.storage_literal(value[()], dtype)
  xs, ys = f"((const {ct}*){fn.ptr(x)})", f"(({ct}*){fn.ptr(out)})"
  body = _row_starts(fn, indices, rank, dn.start_index_map, dn.operand_batching_dims,
                     dn.start_indices_batching_dims)
  body.append(f"const int ok = {_in_bounds(shape, window, dn.start_index_map) if check else 1};")
  body += _clamp(shape, window)
  lines = _row_window_loops(body, _prod(batch_shape), batch_shape,
                            [ostrides[d] for d in batch_out], shape, window, kept,
                            [ostrides[dn.offset_dims[i]] for i in range(len(kept))],
                            f"{ys}[yoff] = ok ? {xs}[xoff] : {fill};")
  fn.lines += ["{ /* gather */"] + ["  " + s for s in lines] + ["}"]


def _combine(name, dtype, old, new):
  """The scatter's update of ``old`` by ``new``, as the impl computes it."""
  if name == "scatter":
    return new
  if name in ("scatter-min", "scatter-max"):
    which = "min" if name == "scatter-min" else "max"
    if dtype.kind == "f":   # lax's: NaN propagates, -0.0 orders below +0.0
      return f"pj_{which}{'f' if dtype == np.float32 else ''}({old}, {new})"
    op = "<=" if which == "min" else ">="
    return f"(({old} {op} {new}) ? {old} : {new})"
  op = {"scatter-add": "+", "scatter-sub": "-", "scatter-mul": "*"}[name]
  if dtype.kind == "f":
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
  dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
  kept = [d for d in range(rank) if d not in dropped]
  window = [1] * rank
  for i, d in enumerate(kept):
    window[d] = ushape[dn.update_window_dims[i]]
  ustrides = strides(ushape)
  scatter_axes = [d for d in range(len(ushape)) if d not in dn.update_window_dims]
  batch_shape = indices.aval.shape[:-1]
  us, ys = f"((const {ct}*){fn.ptr(updates)})", f"(({ct}*){fn.ptr(out)})"
  nbytes = _prod(shape) * dtype.itemsize
  lines = [f"memcpy({fn.ptr(out)}, {fn.ptr(x)}, {nbytes});"]
  body = _row_starts(fn, indices, rank, dn.scatter_dims_to_operand_dims,
                     dn.operand_batching_dims, dn.scatter_indices_batching_dims)
  if p["mode"] == GatherScatterMode.CLIP:
    body += _clamp(shape, window)
  else:
    body.append(f"if (!({_in_bounds(shape, window, dn.scatter_dims_to_operand_dims)})) "
                "continue;")
  update = _combine(eqn.primitive.name, dtype, f"{ys}[xoff]", f"{us}[yoff]")
  lines.extend(_row_window_loops(
      body, _prod(batch_shape), batch_shape, [ustrides[a] for a in scatter_axes], shape,
      window, kept, [ustrides[dn.update_window_dims[i]] for i in range(len(kept))],
      f"{ys}[xoff] = {update};"))
  fn.lines += [f"{{ /* {eqn.primitive.name} */"] + ["  " + s for s in lines] + ["}"]
