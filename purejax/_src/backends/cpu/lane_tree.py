"""The C statements of ``reduction_order``'s fixed order, shared by the
kernel emitters: LANES lane accumulators folded by halving into ``a{n}_t``
(``lane_tree``), and block results paired level by level through a stack
of partial results (``block_merge``, ``block_final``).

An accumulator declaration is a tuple (C declaration, name, initial value,
operator): the operator is a simd reduction operator ("+", "max", ...),
None (folded in loop order), or for an accumulator in ``reduction_order``
("ordered", C type, operator): LANES lanes in row order, one per kept
column in column order."""
from purejax._src.lax.reduction_order import LANES, RUN


def is_ordered(decl):
  """Whether accumulator declaration ``decl`` follows ``reduction_order``."""
  return type(decl[3]) is tuple


def run_names(lanes):
  """The names of the lanes arrays that fold runs in float32 first (each
  has a float32 twin ``{name}r``)."""
  return [nm for _, nm, _, (kind, _, _) in lanes if kind == "runs"]


def run_flush(runs):
  """A run's float32 lanes added to the float64 ones, then cleared (an
  extra flush of cleared lanes adds +0: no change)."""
  if not runs:
    return []
  return ([f"for (int rl = 0; rl < {LANES}; rl++) {{"]
          + [f"{nm}[rl] += {nm}r[rl]; {nm}r[rl] = 0;" for nm in runs] + ["}"])


def run_end_flush(runs, at):
  """The flush after the chunk of LANES elements starting at flat index
  ``at`` when it ends a run."""
  if not runs:
    return []
  return [f"if ((({at}) + {LANES}) % {RUN * LANES} == 0) {{"] + run_flush(runs) + ["}"]


def lane_tree(lanes, k):
  """Each lanes array folded into its first lane by halving, then into ``_t``."""
  lines = []
  for _, nm, _, (_, _, op) in lanes:
    h = LANES // 2
    while h >= 1:
      # A loop per level, not h statements: gcc vectorizes it whole.
      lines += [f"for (int i = 0; i < {h}; i++) {nm}[i]{k} = {nm}[i]{k} {op} {nm}[i + {h}]{k};"]
      h //= 2
  return lines


def block_stack_decls(lanes, nb, k):
  """The stacks of partial block results (none for one block)."""
  if nb == 1:
    return []
  return [f"{ct} {nm[:-2]}_s[{nb.bit_length()}]{k};" for _, nm, _, (_, ct, _) in lanes]


def block_merge(lanes, nb, k, counter="rb", value="{nm}[0]{k}"):
  """Block ``counter``'s result (``value``) pushed on the stack of pairwise
  partial results (a binary counter: the same tree as pairing neighbours
  level by level)."""
  lines = []
  for _, nm, _, (_, ct, op) in lanes:
    t, v = nm[:-2] + "_t", value.format(nm=nm, base=nm[:-2], k=k)
    if nb == 1:
      lines.append(f"{t}{k} = {v};")
      continue
    st = nm[:-2] + "_s"
    lines.append(f"{{ {ct} v = {v}; int64_t c = {counter}; int lvl = 0; "
                 f"while (c & 1) {{ v = {st}[lvl]{k} {op} v; c >>= 1; lvl++; }} "
                 f"{st}[lvl]{k} = v; }}")
  return lines


def block_final(lanes, nb, k, target="{t}{k}"):
  """The stack's partial results folded from the last (smallest) up."""
  lines = []
  if nb == 1:
    return lines
  for _, nm, _, (_, _, op) in lanes:
    t, st = nm[:-2] + "_t", nm[:-2] + "_s"
    levels = [lvl for lvl in range(nb.bit_length()) if nb >> lvl & 1]
    expr = f"{st}[{levels[0]}]{k}"
    for lvl in levels[1:]:
      expr = f"({st}[{lvl}]{k} {op} {expr})"
    lines.append(f"{target.format(t=t, nm=nm, k=k)} = {expr};")
  return lines


def decl_ctype(declaration):
  """The element C type of an accumulator's C declaration ("double a0_0[8]")."""
  return declaration.split("[")[0].rsplit(" ", 1)[0]
