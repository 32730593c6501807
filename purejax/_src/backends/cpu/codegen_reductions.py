"""The C code of reductions, shared by the C and CUDA code generators: how
each reduction primitive accumulates (``Reducer``: accumulators, the fold
of one value, the merge of partial accumulators, the final value), and
argmax/argmin's comparisons."""
import numpy as np

from purejax._src.backends.cpu.codegen_ops import (
    ctype, dtype_kind, float_suffix, highest, lowest, wide_unsigned)


class Reducer:
  """How a reduction accumulates: its accumulators (C type, initial value,
  OpenMP ``simd reduction`` operator), the statements folding a value ``v``
  into accumulators ``names``, and the final value.  Every operator is
  exact under reassociation, so the loops may be vectorized.  ``tree``:
  the operators merging partial accumulators (the GPU's partition), where
  they are not the simd operators (complex sums and products, which C
  folds in loop order)."""

  def __init__(self, accs, combine, final, tree=None):
    self.accs, self.combine, self.final = accs, combine, final
    self.tree = tree if tree is not None else [op for _, _, op in accs]


def merge(op, a, b):
  """Accumulator ``a`` combined with ``b`` (a Reducer's simd operator ``op``)."""
  if op in ("max", "min"):
    return f"{a} = {b} {'>' if op == 'max' else '<'} {a} ? {b} : {a};"
  if op.startswith("pj_"):   # a helper function
    return f"{a} = {op}({a}, {b});"
  return f"{a} = {a} {op} {b};"


# Bytes of the C types of buffers and accumulators.
CTYPE_SIZES = {"float": 4, "double": 8, "float _Complex": 8, "double _Complex": 16,
               "uint8_t": 1, "int8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4,
               "int": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8}


def _float_extremum(name, dtype):
  # One accumulator: the values' total-order keys (pj_order_key) reduced by
  # integer max/min, which vectorizes; a NaN takes the key that wins (so it
  # propagates), and -0.0 orders below +0.0 as lax's max and min define it.
  ct, f, is_max = ctype(dtype), float_suffix(dtype), name == "reduce_max"
  kt, top = ("int32_t", "INT32_MAX") if ct == "float" else ("int64_t", "INT64_MAX")
  nan_key = top if is_max else f"(-{top} - 1)"
  identity = f"pj_order_key{f}({lowest(dtype) if is_max else highest(dtype)})"
  cmp = ">" if is_max else "<"

  def combine(names, v):
    k, = names
    return [f"{{ const {kt} x = {v} != {v} ? {nan_key} : pj_order_key{f}({v}); "
            f"{k} = x {cmp} {k} ? x : {k}; }}"]

  def final(names):
    k, = names
    return f"({k} == {nan_key} ? ({ct})NAN : pj_from_order_key{f}({k}))"

  return Reducer([(kt, identity, "max" if is_max else "min")], combine, final)


def arg_extremum_value(name, dtype):
  """argmax/argmin's vectorizable first pass: the extremum, and on floats
  the extremum of the non-NaN values and a "saw a NaN" flag.  Zeros of
  either sign compare equal here, as NumPy's argmax finds the first."""
  ct, is_max = ctype(dtype), name == "argmax"
  if dtype_kind(dtype) != "f":
    return reducer("reduce_max" if is_max else "reduce_min", dtype)
  skip = lowest(dtype) if is_max else highest(dtype)
  cmp = ">" if is_max else "<"

  def combine(names, v):
    m, nan = names
    return [f"{{ const {ct} x = {v} != {v} ? {skip} : {v}; {m} = x {cmp} {m} ? x : {m}; }}",
            f"{nan} |= ({v} != {v});"]

  return Reducer([(ct, skip, "max" if is_max else "min"), ("int", "0", "|")], combine, None)


def _complex_extremum(name, dtype):
  # XLA's fold, in loop order from the identity (+-inf + 0i), of a reduction
  # that is one block of complex_extremum's order (fusion checks the sizes);
  # one element is returned as it is.  No simd: the order decides NaNs.
  ct, f, is_max = ctype(dtype), float_suffix(dtype), name == "reduce_max"
  part = ctype(np.finfo(dtype).dtype)
  inf = "-INFINITY" if is_max else "INFINITY"
  identity = f"PJ_COMPLEX(({part}){inf}, ({part})0)"
  pick = f"pj_c{'max' if is_max else 'min'}{f}"

  def combine(names, v):
    acc, count, first = names
    return [f"{{ const {ct} x = {v}; {first} = {count} == 0 ? x : {first}; "
            f"{count} += 1; {acc} = {pick}({acc}, x); }}"]

  return Reducer([(ct, identity, None), ("int64_t", "0", None), (ct, identity, None)],
                 combine, lambda names: f"({names[1]} == 1 ? {names[2]} : {names[0]})")


def reducer(name, dtype):
  """The Reducer of reduction primitive ``name`` on ``dtype`` (None: no C)."""
  kind, ct = dtype_kind(dtype), ctype(dtype)
  if kind == "c" and name in ("reduce_sum", "reduce_prod"):
    # complex64 sums accumulate in complex128; products in their type,
    # NumPy's product.  In loop order (no simd reduction of complex values).
    f = float_suffix(dtype)
    acc = "double _Complex" if name == "reduce_sum" else ct
    fold = ("{0} += {1};" if name == "reduce_sum" else "{0} = pj_cmul" + f + "({0}, {1});")
    init = "0" if name == "reduce_sum" else "1"
    return Reducer([(acc, f"(({acc}){init})", None)],
                   lambda names, v: [fold.format(names[0], v)],
                   lambda names: f"(({ct}){names[0]})",
                   tree=["+" if name == "reduce_sum" else f"pj_cmul{f}"])
  if kind == "c" and name in ("reduce_max", "reduce_min"):
    return _complex_extremum(name, dtype)
  if kind == "c":
    return None
  if name in ("reduce_sum", "reduce_prod"):
    if kind == "b":
      return None
    op = "+" if name == "reduce_sum" else "*"
    init = "0" if op == "+" else "1"
    if kind == "f":
      # float32 sums accumulate in double (more accurate than NumPy's
      # pairwise sum); products stay in their type (same overflows).
      acc = "double" if op == "+" else ct
      return Reducer([(acc, f"(({acc}){init})", op)],
                     lambda names, v: [f"{names[0]} {op}= {v};"],
                     lambda names: f"(({ct}){names[0]})")
    acc = wide_unsigned(dtype)
    return Reducer([(acc, f"(({acc}){init})", op)],
                   lambda names, v: [f"{names[0]} = {names[0]} {op} ({acc}){v};"],
                   lambda names: f"(({ct}){names[0]})")
  if name in ("reduce_max", "reduce_min"):
    is_max = name == "reduce_max"
    if kind == "f":
      return _float_extremum(name, dtype)
    init = lowest(dtype) if is_max else highest(dtype)
    if kind == "b":
      op = "|" if is_max else "&"
      return Reducer([(ct, init, op)], lambda names, v: [f"{names[0]} {op}= {v};"],
                     lambda names: names[0])
    cmp = ">" if is_max else "<"
    return Reducer([(ct, init, "max" if is_max else "min")],
                   lambda names, v: [f"{names[0]} = {v} {cmp} {names[0]} ? {v} : {names[0]};"],
                   lambda names: names[0])
  if name in ("reduce_and", "reduce_or", "reduce_xor"):
    if kind not in "iub":
      return None
    op = {"reduce_and": "&", "reduce_or": "|", "reduce_xor": "^"}[name]
    init = ("1" if kind == "b" else f"(({ct})~({ct})0)") if op == "&" else "0"
    return Reducer([(ct, init, op)], lambda names, v: [f"{names[0]} {op}= {v};"],
                   lambda names: names[0])
  return None


def arg_better(name, dtype, v, best):
  """The C condition under which ``v`` replaces ``best`` in argmax/argmin (the
  first NaN wins, else the first extremum, as NumPy's argmax)."""
  cmp = ">" if name == "argmax" else "<"
  if dtype_kind(dtype) == "f":
    return f"({v} {cmp} {best} || ({v} != {v} && {best} == {best}))"
  return f"({v} {cmp} {best})"
