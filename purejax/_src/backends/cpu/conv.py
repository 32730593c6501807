"""``conv_general_dilated`` as a native step: im2col and BLAS products.

Supported: float32/float64 and complex64/complex128 (no conjugation, as
lax), with every option of the primitive: any dimension numbers, strides, padding (negative too), input (lhs) and kernel (rhs)
dilation, feature groups and batch groups (which gradients use).  The input
is first copied into (batch, spatial..., feature) order and the kernel into
(group, window..., in feature, out feature of the group) order, so that every
row of a group's im2col matrix is a sequence of contiguous feature runs
(zeros where the window leaves the input or falls between the points of a
dilated input).  Rows are built and multiplied in blocks, one product per
group (``pj_gemm``'s batch), keeping the im2col buffer under
``_BLOCK_BYTES``; the product lands in (batch, spatial..., out feature)
order, directly in the output when that is its layout.

The blocks and each product's tiles are fixed by the shapes alone, so the
bits do not depend on the thread count.  Threads take whole blocks each
(one parallel region: no barrier per block, which costs much on a loaded
machine), or, when there are fewer blocks than threads and each block's
product has tiles enough, share each block (its rows, then its tiles).
"""
import numpy as np

from purejax._src.backends.cpu import blas, codegen_ops
from purejax._src.backends.cpu.indexing import strides
from purejax._src.config import thread_count

# An im2col block stays in cache between being built and multiplied; the
# blocks of all convolutions add up in the scratch arena a call keeps.
_BLOCK_BYTES = 1 << 20
_DTYPES = {np.dtype(np.float32): "pj_gemm_f32", np.dtype(np.float64): "pj_gemm_f64",
           np.dtype(np.complex64): "pj_gemm_c64", np.dtype(np.complex128): "pj_gemm_c128"}
_PARALLEL_MIN_ELEMENTS = 1 << 15   # copies smaller than this run on one thread


def _prod(xs):
  return int(np.prod(xs, dtype=np.int64))


class _Geometry:
  """The convolution's sizes in the im2col formulation: ``groups`` products
  of (``rows`` x ``cols``) @ (``cols`` x ``group_out``)."""

  def __init__(self, eqn):
    p = eqn.params
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    dn = p["dimension_numbers"]
    self.dtype = np.dtype(out.aval.dtype)
    self.lshape, self.rshape, self.oshape = lhs.aval.shape, rhs.aval.shape, out.aval.shape
    self.lb, self.lf, self.lsp = dn.lhs_spec[0], dn.lhs_spec[1], list(dn.lhs_spec[2:])
    self.ro, self.ri, self.rsp = dn.rhs_spec[0], dn.rhs_spec[1], list(dn.rhs_spec[2:])
    self.ob, self.of, self.osp = dn.out_spec[0], dn.out_spec[1], list(dn.out_spec[2:])
    self.batch, self.cout = self.lshape[self.lb], self.rshape[self.ro]
    self.in_sp = [self.lshape[d] for d in self.lsp]
    self.win = [self.rshape[d] for d in self.rsp]
    self.out_sp = [self.oshape[d] for d in self.osp]
    self.fgc, self.bgc = p["feature_group_count"], p["batch_group_count"]
    self.groups = max(self.fgc, self.bgc)
    self.nb = self.batch // self.bgc            # output batch
    self.ci = self.rshape[self.ri]              # input features per group
    self.og = self.cout // self.groups          # output features per group
    self.rows = self.nb * _prod(self.out_sp)
    self.cols = _prod(self.win) * self.ci
    self.block = max(1, min(self.rows,
                            _BLOCK_BYTES // max(1, self.groups * self.cols * self.dtype.itemsize)))
    self.nblocks = -(-self.rows // self.block)


def supported(eqn):
  p = eqn.params
  dtype = np.dtype(eqn.outvars[0].aval.dtype)
  pref = p.get("preferred_element_type")
  if not (blas.available() and dtype in _DTYPES
          and all(np.dtype(v.aval.dtype) == dtype for v in eqn.invars)
          and (pref is None or np.dtype(pref) == dtype)):
    return False
  g = _Geometry(eqn)
  return max(g.block, g.og, g.cols) <= blas.MAX_DIM


def _copy_loops(lines, dst, dst_strides, src, src_strides, sizes, parallel):
  """Nested loops over ``sizes`` copying ``src`` into ``dst``, each read
  and written with its strides per dim."""
  n = len(sizes)
  if parallel and n:
    lines.append("#pragma omp parallel for")
  for k in range(n):
    lines.append(f"for (int64_t i{k} = 0; i{k} < {sizes[k]}; i{k}++)")
  d = " + ".join(f"i{k} * {dst_strides[k]}" for k in range(n)) or "0"
  s = " + ".join(f"i{k} * {src_strides[k]}" for k in range(n)) or "0"
  lines.append(f"  {dst}[{d}] = {src}[{s}];")


def _in_layout(fn, lines, v, sizes, src_strides):
  """A pointer to ``v``'s values as the row-major array ``sizes``, read
  from ``v`` with ``src_strides``: ``v`` itself when that is its layout,
  else a copy."""
  if all(a == b for a, b, n in zip(src_strides, strides(sizes), sizes) if n > 1):
    return fn.ptr(v)
  buf = fn.scratch_buffer(codegen_ops.ctype(v.aval.dtype), _prod(sizes))
  _copy_loops(lines, buf, strides(sizes), fn.ptr(v), src_strides, sizes,
              _prod(sizes) >= _PARALLEL_MIN_ELEMENTS)
  return buf


def _build_rows(g, p, xc, cb, parallel):
  """Lines filling ``cb`` with the im2col rows r0 .. r0 + nr of every group,
  as (group, row, (window..., feature)); x is the lhs in (batch, spatial...,
  feature) order."""
  ct, size, nsp = codegen_ops.ctype(g.dtype), g.dtype.itemsize, len(g.in_sp)
  xs = strides([g.batch] + g.in_sp + [g.fgc * g.ci])
  osz = strides([g.nb] + g.out_sp)
  lines = ["#pragma omp parallel for"] if parallel else []
  lines.append(f"for (int64_t t = 0; t < {g.groups} * nr; t++) {{")
  body = ["const int64_t grp = t / nr, row = r0 + t % nr;",
          f"const int64_t b = row / {osz[0]};"]
  for k in range(nsp):
    body.append(f"const int64_t o{k} = row / {osz[k + 1]} % {g.out_sp[k]};")
  # A batch group reads its own slice of the batch, a feature group its own
  # slice of the features.
  base = [f"(b + grp * {g.nb if g.bgc > 1 else 0}) * {xs[0]}"]
  if g.fgc > 1:
    base.append(f"grp * {g.ci}")
  body.append(f"const {ct}* src = {xc} + {' + '.join(base)};")
  body.append(f"{ct}* dst = {cb} + t * {g.cols};")
  inside = []
  for k in range(nsp):
    body.append(f"for (int64_t w{k} = 0; w{k} < {g.win[k]}; w{k}++) {{")
    lo, stride = p["padding"][k][0], p["window_strides"][k]
    rd, ld = p["rhs_dilation"][k], p["lhs_dilation"][k]
    # The window's point in the (dilated, padded) input, then in the input.
    pos = f"o{k} * {stride} - {lo} + w{k} * {rd}"
    if ld == 1:
      body.append(f"const int64_t x{k} = {pos};")
      inside.append(f"x{k} >= 0 && x{k} < {g.in_sp[k]}")
    else:
      body.append(f"const int64_t p{k} = {pos}, x{k} = p{k} / {ld};")
      inside.append(f"p{k} >= 0 && p{k} % {ld} == 0 && x{k} < {g.in_sp[k]}")
  src = " + ".join(f"x{k} * {xs[k + 1]}" for k in range(nsp)) or "0"
  wpos = " + ".join(f"w{k} * {strides(g.win)[k]}" for k in range(nsp)) or "0"
  body.append(f"{ct}* run = dst + ({wpos}) * {g.ci};")
  body.append(f"if ({' && '.join(inside) or '1'}) memcpy(run, src + {src}, {g.ci * size});")
  body.append(f"else memset(run, 0, {g.ci * size});")
  body += ["}"] * nsp
  return lines + ["  " + s for s in body] + ["}"]


def _block_lines(g, p, xc, wc, res, cb, gb, threads, parallel):
  """One block: its rows, its products and (with several groups) the copy
  of each group's columns into place."""
  size = g.dtype.itemsize
  lines = _build_rows(g, p, xc, cb, parallel)
  dst = f"{res} + r0 * {g.cout}" if g.groups == 1 else gb
  lines.append(f"{_DTYPES[g.dtype]}({g.groups}, (int)nr, {g.og}, {g.cols}, 1, 1, {cb}, {wc}, "
               f"{dst}, {threads});")
  if g.groups > 1:
    if parallel:
      lines.append("#pragma omp parallel for")
    lines += ["for (int64_t r = 0; r < nr; r++)",
              f"  for (int64_t grp = 0; grp < {g.groups}; grp++)",
              f"    memcpy({res} + (r0 + r) * {g.cout} + grp * {g.og}, "
              f"{gb} + (grp * nr + r) * {g.og}, {g.og * size});"]
  return lines


def emit(step, fn):
  eqn, p = step.eqn, step.eqn.params
  lhs, rhs = eqn.invars
  out = eqn.outvars[0]
  g = _Geometry(eqn)
  ct = codegen_ops.ctype(g.dtype)
  lines = []
  # The input as (batch, spatial..., feature); the kernel as (group,
  # window..., in feature, out feature): contiguous runs, row-major matrices.
  ls = strides(g.lshape)
  xc = _in_layout(fn, lines, lhs, [g.batch] + g.in_sp + [g.lshape[g.lf]],
                  [ls[g.lb]] + [ls[d] for d in g.lsp] + [ls[g.lf]])
  rs = strides(g.rshape)
  wc = _in_layout(fn, lines, rhs, [g.groups] + g.win + [g.ci, g.og],
                  [g.og * rs[g.ro]] + [rs[d] for d in g.rsp] + [rs[g.ri], rs[g.ro]])
  direct = [g.ob] + g.osp + [g.of] == list(range(len(g.oshape)))
  res = fn.ptr(out) if direct else fn.scratch_buffer(ct, _prod(g.oshape))
  cb_size, gb_size = g.groups * g.block * g.cols, g.groups * g.block * g.og
  threads = thread_count(fn.unit.num_threads) if fn.unit.openmp else 1
  small = g.groups * g.block * g.og * g.cols < blas.PARALLEL_MIN_FLOPS   # one block's
  by_block = (threads > 1 and g.nblocks > 1
              and g.groups * g.rows * g.og * g.cols >= blas.PARALLEL_MIN_FLOPS
              and (g.nblocks >= threads or g.groups * blas.gemm_tile_count(g.block, g.og) < threads))
  head = f"for (int64_t blk = 0; blk < {g.nblocks}; blk++) {{"
  bounds = [f"  const int64_t r0 = blk * {g.block};",
            f"  const int64_t nr = {g.rows} - r0 < {g.block} ? {g.rows} - r0 : {g.block};"]
  if by_block:   # each thread its own blocks and buffers
    slots = min(threads, g.nblocks)
    cbs = fn.scratch_buffer(ct, slots * cb_size)
    gbs = fn.scratch_buffer(ct, slots * gb_size) if g.groups > 1 else None
    lines.append(f"#pragma omp parallel for num_threads({slots}) schedule(dynamic, 1)")
    lines += [head] + bounds
    lines += ["  int tid = 0;", "#ifdef _OPENMP", "  tid = omp_get_thread_num();", "#endif",
              f"  {ct}* cb = {cbs} + tid * {cb_size};"]
    if gbs:
      lines.append(f"  {ct}* gb = {gbs} + tid * {gb_size};")
    lines += ["  " + s for s in _block_lines(g, p, xc, wc, res, "cb", "gb", 1, False)]
  else:
    cb = fn.scratch_buffer(ct, cb_size)
    gb = fn.scratch_buffer(ct, gb_size) if g.groups > 1 else None
    gemm_threads = 1 if small or threads == 1 else (
        fn.unit.num_threads if fn.unit.num_threads > 0 else "omp_get_max_threads()")
    parallel = fn.unit.openmp and g.groups * g.block * g.cols >= _PARALLEL_MIN_ELEMENTS
    lines += [head] + bounds
    lines += ["  " + s for s in _block_lines(g, p, xc, wc, res, cb, gb, gemm_threads,
                                            parallel)]
  lines.append("}")
  if not direct:   # (batch, spatial..., feature) into the output's layout
    os_ = strides(g.oshape)
    sizes = [g.nb] + g.out_sp + [g.cout]
    _copy_loops(lines, fn.ptr(out), [os_[g.ob]] + [os_[d] for d in g.osp] + [os_[g.of]],
                res, strides(sizes), sizes,
                fn.unit.openmp and _prod(g.oshape) >= _PARALLEL_MIN_ELEMENTS)
  fn.lines += ["{ /* conv_general_dilated */"] + ["  " + s for s in lines] + ["}"]
  fn.uses_blas = True
