"""``tridiagonal_solve`` (without ``perturb_singular``) as a CUDA kernel: a
thread per system runs LAPACK's gtsv, Gaussian elimination with partial
pivoting, as the reference gtsv.f does it (the same comparisons,
operations and order, none contracted), so the results are the CPU
backend's LAPACK bits; a singular system gives NaNs, as there.

The kernel works on copies of the diagonals (the elimination overwrites
them) and of the right-hand sides (the result).  Other dtypes and
``perturb_singular`` run their NumPy implementation on host copies.
"""
import numpy as np

from purejax._src.backends.cpu import codegen_ops
from purejax._src.backends.cuda.kernels import Launch, function_text, grid_stride


def supported(eqn):
  return (eqn.primitive.name == "tridiagonal_solve" and not eqn.params["perturb_singular"]
          and np.dtype(eqn.outvars[0].aval.dtype) in (np.dtype(np.float32),
                                                      np.dtype(np.float64))
          and all(int(np.prod(v.aval.shape)) > 0 for v in eqn.invars))


class TridiagonalKernel:
  """The step of a tridiagonal_solve equation (its operands are the
  equation's: ``native`` is None)."""

  native = None

  def __init__(self, eqn, name):
    self.eqn, self.name = eqn, name
    b = eqn.invars[3].aval
    self.m, self.k = b.shape[-2], b.shape[-1]
    self.count = int(np.prod(b.shape[:-2], dtype=np.int64))
    t = codegen_ops.ctype(b.dtype)
    f = "f" if np.dtype(b.dtype) == np.float32 else ""
    m, k = self.m, self.k
    params = [f"{t}* __restrict__ dl", f"{t}* __restrict__ d", f"{t}* __restrict__ du",
              f"{t}* __restrict__ b"]
    # LAPACK's DL(i) is the sub-diagonal's element i + 1 (row i + 1, column i).
    body = [f"{t}* L = dl + s * {m} + 1; {t}* D = d + s * {m}; {t}* U = du + s * {m};",
            f"{t}* B = b + s * {m * k};",
            f"{t} fact, temp;",
            f"for (int64_t i = 0; i + 1 < {m}; i++) {{",
            f"  if (fabs{f}(D[i]) >= fabs{f}(L[i])) {{",
            "    if (D[i] == 0) goto singular;",
            "    fact = L[i] / D[i];",
            "    D[i + 1] = D[i + 1] - fact * U[i];",
            f"    for (int64_t j = 0; j < {k}; j++) "
            f"B[(i + 1) * {k} + j] = B[(i + 1) * {k} + j] - fact * B[i * {k} + j];",
            f"    if (i + 2 < {m}) L[i] = 0;",
            "  } else {",
            "    fact = D[i] / L[i];",
            "    D[i] = L[i];",
            "    temp = D[i + 1];",
            "    D[i + 1] = U[i] - fact * temp;",
            f"    if (i + 2 < {m}) {{ L[i] = U[i + 1]; U[i + 1] = -fact * L[i]; }}",
            "    U[i] = temp;",
            f"    for (int64_t j = 0; j < {k}; j++) {{",
            f"      temp = B[i * {k} + j];",
            f"      B[i * {k} + j] = B[(i + 1) * {k} + j];",
            f"      B[(i + 1) * {k} + j] = temp - fact * B[(i + 1) * {k} + j];",
            "    }",
            "  }",
            "}",
            f"if (D[{m - 1}] == 0) goto singular;",
            f"for (int64_t j = 0; j < {k}; j++) {{",
            f"  B[{(m - 1) * k} + j] = B[{(m - 1) * k} + j] / D[{m - 1}];",
            f"  B[{(m - 2) * k} + j] = (B[{(m - 2) * k} + j] - U[{m - 2}] "
            f"* B[{(m - 1) * k} + j]) / D[{m - 2}];" if m > 1 else "",
            f"  for (int64_t i = {m - 3}; i >= 0; i--) B[i * {k} + j] = (B[i * {k} + j] - "
            f"U[i] * B[(i + 1) * {k} + j] - L[i] * B[(i + 2) * {k} + j]) / D[i];",
            "}",
            "continue;",
            f"singular: for (int64_t i = 0; i < {m * k}; i++) B[i] = ({t})NAN;"]
    lines = [grid_stride("s", self.count)] + ["  " + line for line in body if line] + ["}"]
    self.functions = [(name, params)]
    self.source = codegen_ops.for_cuda(function_text(name, params, lines))

  def describe(self):
    return f"kernels {self.name}: tridiagonal_solve (LAPACK's gtsv)"

  def run(self, args, kernels, device):
    """[the solutions] (a new device array) of the operands ``args``."""
    dl, d, du, b = args
    rows = (self.count, self.m)
    copies = [v.reshape(rows).copy() for v in (dl, d, du)]
    out = b.reshape((self.count, self.m, self.k)).copy()
    kernels.launch(Launch(self.name, self.count, ()), copies + [out])
    return [out.reshape(b.shape)]
