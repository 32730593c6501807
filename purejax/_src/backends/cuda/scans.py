"""CUDA kernels for the cumulative reductions (cumsum, cumprod,
cumlogsumexp, cummax, cummin) in ``lax.scan_order``'s block order, the
order of the C backend and the NumPy implementation: the same bits.

Along the scanned axis (``n`` elements; ``outer`` and ``inner`` elements
before and after it) the elements are cut into blocks of ``SCAN_BLOCK``:

- ``_blocks``: a thread per (outer, block, inner) scans its block
  sequentially from the block's first element, writing the running values
  (scratch ``L``, or the result when there is one block) and the block's
  total (scratch ``T``);
- the block totals are scanned exclusively (``_exclusive``: the same
  block structure, recursively, in place);
- ``_finish``: a thread per element combines its block's offset with its
  running value and stores it (block 0 has no offset).

Accumulators and the combining expressions are the C backend's
(``cpu.sort_scan._accumulator``): float sums, products and log-sum-exps in
double, integer sums and products in wide unsigned types (wrapping),
extrema in their own type; extrema and integer results do not depend on
the order.  Complex cummax/cummin take one block (a thread scans each
lane in order), as the C backend: with NaNs XLA's rule is not associative.
"""
import numpy as np

from purejax._src.backends.cpu import codegen_ops, sort_scan
from purejax._src.backends.cuda.kernels import SCRATCH_DTYPES, GroupKernels, Launch, grid_stride
from purejax._src.lax import scan_order

NAMES = ("cumsum", "cumprod", "cumlogsumexp", "cummax", "cummin")
B = scan_order.SCAN_BLOCK


def build(eqn, name):
  """The GroupKernels computing cumulative reduction ``eqn`` (kernels named
  ``name_*``)."""
  return _Scan(eqn, name).build()


class _Scan:

  def __init__(self, eqn, name):
    x = eqn.invars[0]
    self.eqn, self.name, self.x, self.y = eqn, name, x, eqn.outvars[0]
    self.prim = eqn.primitive.name
    shape, axis = tuple(x.aval.shape), eqn.params["axis"]
    self.outer, self.n, self.inner = sort_scan._split(shape, axis)
    sequential = np.dtype(x.aval.dtype).kind == "c" and self.prim in ("cummax", "cummin")
    self.block = max(1, self.n) if sequential else B
    self.reverse = eqn.params["reverse"]
    self.acc, self.identity, self.combine = sort_scan._accumulator(self.prim, x.aval.dtype)
    self.functions, self.launches, self.scratch, self.sources = [], [], [], []

  def build(self):
    outer, n, inner = self.outer, self.n, self.inner
    if outer * n * inner:
      nb = -(-n // self.block)
      if nb == 1:
        self._blocks(("in", 0), ("out", 0), None, n, exclusive=False)
      else:
        running, totals = self._new_scratch(outer * n * inner), self._new_scratch(outer * nb * inner)
        self._blocks(("in", 0), running, totals, n, exclusive=False)
        self._exclusive(totals, nb)
        self._finish(running, totals, ("out", 0), n, store=True)
    return GroupKernels([self.x], [self.y], self.scratch, self.functions,
                        "\n".join(self.sources), self.launches)

  def _new_scratch(self, size):
    self.scratch.append((np.dtype(SCRATCH_DTYPES[self.acc]), size))
    return ("scratch", len(self.scratch) - 1)

  def _param(self, arg):
    kind, _ = arg
    if kind == "in":
      return f"const {codegen_ops.storage_ctype(self.x.aval.dtype)}* __restrict__ x"
    if kind == "out":
      return f"{codegen_ops.storage_ctype(self.y.aval.dtype)}* __restrict__ y"
    return None

  def _kernel(self, suffix, count, args, names, lines):
    """One kernel over ``count`` threads (``t``) reading and writing
    ``args``, called ``names`` in ``lines``."""
    fname = f"{self.name}_{suffix}{len(self.functions)}"
    params = []
    for arg, nm in zip(args, names):
      params.append(self._param(arg) or f"{self.acc}* __restrict__ {nm}")
    body = [grid_stride("t", count)] + ["  " + s for s in lines] + ["}"]
    self.sources.append(codegen_ops.for_cuda("\n".join(
        [f'extern "C" __global__ void {fname}({", ".join(params)}) {{']
        + ["  " + s for s in body] + ["}\n"])))
    self.functions.append((fname, params))
    self.launches.append(Launch(fname, count, list(args)))

  def _element(self, p):
    """Operand element at position ``p`` of the scan (reversed: from the end)."""
    at = f"({self.n - 1} - ({p}))" if self.reverse else f"({p})"
    return f"({self.acc}){codegen_ops.load(f'x[base + {at} * {self.inner}]', self.x.aval.dtype)}"

  def _blocks(self, source, dest, totals, m, exclusive):
    """Each (outer, block, inner) of ``m`` values scanned from the block's
    first value: inclusively from the operand into ``dest`` (the result
    when there is one block), or exclusively in place (``source`` is
    ``dest``: the totals of a lower level); the block totals into ``totals``."""
    outer, inner, combine = self.outer, self.inner, self.combine
    nb = -(-m // self.block)
    lines = [f"const int64_t o = t / {nb * inner}, b = t / {inner} % {nb}, j = t % {inner};",
             f"const int64_t base = o * {m * inner} + j;",
             f"const int64_t lo = b * {self.block}, "
             f"hi = lo + {self.block} < {m} ? lo + {self.block} : {m};"]
    if exclusive:
      lines += [f"{self.acc} run = s[base + lo * {inner}];",
                f"s[base + lo * {inner}] = {self.identity};",
                "for (int64_t p = lo + 1; p < hi; p++) {",
                f"  const {self.acc} v = s[base + p * {inner}];",
                f"  s[base + p * {inner}] = run;",
                f"  run = {combine('run', 'v')};",
                "}"]
      args, names = [dest], ["s"]
    else:
      if dest[0] == "out":   # one block: the result itself
        at = (lambda p: f"({self.n - 1} - ({p}))") if self.reverse else (lambda p: p)
        put = lambda p: (f"y[base + {at(p)} * {inner}] = "
                         f"{sort_scan._store(self.y, 'run')};")
      else:
        put = lambda p: f"r[base + {p} * {inner}] = run;"
      lines += [f"{self.acc} run = {self._element('lo')};", put("lo"),
                "for (int64_t p = lo + 1; p < hi; p++) {",
                f"  run = {combine('run', self._element('p'))};", "  " + put("p"), "}"]
      args, names = [source, dest], ["x", "r"]
    if totals is not None:
      lines.append(f"tot[(o * {nb} + b) * {inner} + j] = run;")
      args, names = args + [totals], names + ["tot"]
    self._kernel("blocks", outer * nb * inner, args, names, lines)

  def _exclusive(self, totals, m):
    """The exclusive scan of ``m`` totals per (outer, inner), in place
    (scan_order._exclusive)."""
    if m <= self.block:
      self._blocks(totals, totals, None, m, exclusive=True)
      return
    g = -(-m // self.block)
    upper = self._new_scratch(self.outer * g * self.inner)
    self._blocks(totals, totals, upper, m, exclusive=True)
    self._exclusive(upper, g)
    self._finish(totals, upper, totals, m, store=False)

  def _finish(self, running, offsets, dest, m, store):
    """Each of ``m`` running values per (outer, inner) combined with its
    block's offset (block 0: none): stored as the result, or in place."""
    outer, inner, nb = self.outer, self.inner, -(-m // self.block)
    lines = [f"const int64_t o = t / {m * inner}, p = t / {inner} % {m}, j = t % {inner};",
             f"const int64_t b = p / {self.block}, base = o * {m * inner} + j;",
             f"const {self.acc} v = r[base + p * {inner}];",
             f"const {self.acc} w = b == 0 ? v : "
             f"{self.combine(f'off[(o * {nb} + b) * {inner} + j]', 'v')};"]
    if store:
      at = f"({self.n - 1} - p)" if self.reverse else "p"
      lines.append(f"y[base + {at} * {inner}] = {sort_scan._store(self.y, 'w')};")
      args, names = [running, offsets, dest], ["r", "off", "y"]
    else:
      lines.append(f"r[base + p * {inner}] = w;")
      args, names = [running, offsets], ["r", "off"]
    self._kernel("finish", outer * m * inner, args, names, lines)
