"""``conv_general_dilated`` as a native step: im2col and a BLAS product.

Supported: float32/float64, any dimension numbers, strides, padding and
kernel (rhs) dilation, one feature group and one batch group, no input (lhs)
dilation; the others run on NumPy.  The input is first copied into
(batch, spatial..., feature) order and the kernel into (window..., in
feature, out feature) order, so that every row of the im2col matrix is a
sequence of contiguous feature runs (zeros where the window leaves the
input).  Rows are built and multiplied in blocks, keeping the im2col buffer
under ``_BLOCK_BYTES``; the product lands in (batch, spatial..., out feature)
order, directly in the output when that is its layout.
"""
import numpy as np

from purejax._src.backends.cpu import blas, codegen_ops
from purejax._src.backends.cpu.indexing import strides

_BLOCK_BYTES = 8 << 20
_DTYPES = {np.dtype(np.float32): "pj_gemm_f32", np.dtype(np.float64): "pj_gemm_f64"}


def supported(eqn):
  p = eqn.params
  dtype = np.dtype(eqn.outvars[0].aval.dtype)
  pref = p.get("preferred_element_type")
  return (blas.available() and dtype in _DTYPES
          and all(np.dtype(v.aval.dtype) == dtype for v in eqn.invars)
          and (pref is None or np.dtype(pref) == dtype)
          and p["feature_group_count"] == 1 and p["batch_group_count"] == 1
          and all(d == 1 for d in p["lhs_dilation"]))


def _prod(xs):
  return int(np.prod(xs, dtype=np.int64))


def _permuted_copy(lines, dst, src, sizes, src_strides, parallel):
  """Nested loops copying ``src`` (read with ``src_strides`` per dst dim)
  into the row-major ``dst`` of shape ``sizes``."""
  n = len(sizes)
  dst_strides = strides(sizes)
  if parallel and n:
    lines.append("#pragma omp parallel for")
  for k in range(n):
    lines.append(f"for (int64_t i{k} = 0; i{k} < {sizes[k]}; i{k}++)")
  d = " + ".join(f"i{k} * {dst_strides[k]}" for k in range(n)) or "0"
  s = " + ".join(f"i{k} * {src_strides[k]}" for k in range(n)) or "0"
  lines.append(f"  {dst}[{d}] = {src}[{s}];")


def _in_order(fn, lines, v, order, parallel):
  """A pointer to ``v``'s values with its dims in ``order``: ``v`` itself
  when that is its layout, else a permuted copy."""
  if order == list(range(len(order))):
    return fn.ptr(v)
  shape = v.aval.shape
  steps = strides(shape)
  buf = fn.scratch_buffer(codegen_ops.ctype(v.aval.dtype), _prod(shape))
  _permuted_copy(lines, buf, fn.ptr(v), [shape[d] for d in order],
                 [steps[d] for d in order], parallel)
  return buf


def emit(step, fn):
  eqn, p = step.eqn, step.eqn.params
  lhs, rhs = eqn.invars
  out = eqn.outvars[0]
  dn = p["dimension_numbers"]
  dtype = np.dtype(out.aval.dtype)
  ct, gemm = codegen_ops.ctype(dtype), _DTYPES[dtype]
  lshape, rshape, oshape = lhs.aval.shape, rhs.aval.shape, out.aval.shape
  lb, lf, lsp = dn.lhs_spec[0], dn.lhs_spec[1], list(dn.lhs_spec[2:])
  ro, ri, rsp = dn.rhs_spec[0], dn.rhs_spec[1], list(dn.rhs_spec[2:])
  ob, of, osp = dn.out_spec[0], dn.out_spec[1], list(dn.out_spec[2:])
  batch, cin, cout = lshape[lb], lshape[lf], rshape[ro]
  in_sp = [lshape[d] for d in lsp]
  win = [rshape[d] for d in rsp]
  out_sp = [oshape[d] for d in osp]
  nsp = len(in_sp)
  size = dtype.itemsize
  threads = fn.unit.num_threads if fn.unit.openmp else 1
  threads = "omp_get_max_threads()" if threads <= 0 else threads
  big = _prod(lshape) >= 1 << 15
  lines = []
  # The input as (batch, spatial..., feature), the kernel as (window...,
  # in feature, out feature): contiguous feature runs, a row-major matrix.
  xc = _in_order(fn, lines, lhs, [lb] + lsp + [lf], big)
  wc = _in_order(fn, lines, rhs, rsp + [ri, ro], _prod(rshape) >= 1 << 15)
  rows = batch * _prod(out_sp)
  cols = _prod(win) * cin
  block = max(1, min(rows, _BLOCK_BYTES // max(1, cols * size)))
  cols_buf = fn.scratch_buffer(ct, block * cols)
  direct = [ob] + osp + [of] == list(range(len(oshape)))
  res = fn.ptr(out) if direct else fn.scratch_buffer(ct, _prod(oshape))
  xs = strides([batch] + in_sp + [cin])
  osz = strides([batch] + out_sp)
  lines.append(f"for (int64_t r0 = 0; r0 < {rows}; r0 += {block}) {{")
  lines.append(f"  const int64_t nr = {rows} - r0 < {block} ? {rows} - r0 : {block};")
  if big:
    lines.append("  #pragma omp parallel for")
  lines.append("  for (int64_t r = 0; r < nr; r++) {")
  body = [f"const int64_t row = r0 + r, b = row / {osz[0]};"]
  for k in range(nsp):
    body.append(f"const int64_t o{k} = row / {osz[k + 1]} % {out_sp[k]};")
  body.append(f"{ct}* dst = {cols_buf} + r * {cols};")
  for k in range(nsp):
    body.append(f"for (int64_t w{k} = 0; w{k} < {win[k]}; w{k}++) {{")
    lo, stride, dil = p["padding"][k][0], p["window_strides"][k], p["rhs_dilation"][k]
    body.append(f"const int64_t x{k} = o{k} * {stride} - {lo} + w{k} * {dil};")
  inside = " && ".join(f"x{k} >= 0 && x{k} < {in_sp[k]}" for k in range(nsp)) or "1"
  src = " + ".join([f"b * {xs[0]}"] + [f"x{k} * {xs[k + 1]}" for k in range(nsp)])
  wpos = " + ".join(f"w{k} * {strides(win)[k]}" for k in range(nsp)) or "0"
  body.append(f"{ct}* run = dst + ({wpos}) * {cin};")
  body.append(f"if ({inside}) memcpy(run, {xc} + {src}, {cin * size});")
  body.append(f"else memset(run, 0, {cin * size});")
  body += ["}"] * nsp
  lines += ["    " + s for s in body] + ["  }"]
  lines.append(f"  {gemm}(1, (int)nr, {cout}, {cols}, 1, 1, {cols_buf}, {wc}, "
               f"{res} + r0 * {cout}, {threads});")
  lines.append("}")
  if not direct:   # (batch, spatial..., feature) into the output's layout
    os_ = strides(oshape)
    sizes = [batch] + out_sp + [cout]
    n = len(sizes)
    if _prod(oshape) >= 1 << 15:
      lines.append("#pragma omp parallel for")
    for k in range(n):
      lines.append(f"for (int64_t i{k} = 0; i{k} < {sizes[k]}; i{k}++)")
    dst_strides = [os_[ob]] + [os_[d] for d in osp] + [os_[of]]
    d = " + ".join(f"i{k} * {dst_strides[k]}" for k in range(n))
    s = " + ".join(f"i{k} * {st}" for k, st in enumerate(strides(sizes)))
    lines.append(f"  {fn.ptr(out)}[{d}] = {res}[{s}];")
  fn.lines += ["{ /* conv_general_dilated */"] + ["  " + s for s in lines] + ["}"]
  fn.uses_blas = True
