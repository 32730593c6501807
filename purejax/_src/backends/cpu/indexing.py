"""Symbolic index arithmetic for the generated loops.

An index expression (``Ix``) is an integer affine combination of atoms plus a
constant.  An atom is a loop dimension (an int: the dimension of the
iteration space) or a ``DivMod`` (``inner / div % mod``, what un-flattening
an index into a reshaped array needs when it cannot be split exactly).
Broadcasts, transposes, slices and reverses map affine indices to affine
indices; reshapes flatten and un-flatten, which stays affine whenever the
reshape only merges or splits dimensions the loops walk over.

Rendering an ``Ix`` to C needs the loop structure (``LoopNest``): loop
dimensions are grouped into runs that one C loop variable walks, which is
exact for an index whose coefficients are those of a row-major run.
"""


class DivMod:
  """``inner / div % mod`` (``mod`` None: no modulo)."""
  __slots__ = ("inner", "div", "mod", "_hash")

  def __init__(self, inner, div, mod):
    self.inner, self.div, self.mod = inner, div, mod
    self._hash = hash((inner, div, mod))

  def __eq__(self, other):
    return (type(other) is DivMod and self.inner == other.inner and self.div == other.div
            and self.mod == other.mod)

  def __hash__(self):
    return self._hash

  def key(self):
    return (1, repr(self))

  def __repr__(self):
    return f"DivMod({self.inner!r}, {self.div}, {self.mod})"


def _atom_key(atom):
  return (0, atom) if type(atom) is int else atom.key()


class Ix:
  """``const + sum(coef * atom)``; immutable and hashable."""
  __slots__ = ("terms", "const", "_hash")

  def __init__(self, terms=(), const=0):
    merged = {}
    for atom, coef in terms:
      merged[atom] = merged.get(atom, 0) + coef
    self.terms = tuple(sorted(((a, c) for a, c in merged.items() if c),
                              key=lambda t: _atom_key(t[0])))
    self.const = const
    self._hash = hash((self.terms, const))

  @staticmethod
  def dim(d):
    return Ix(((d, 1),))

  def __eq__(self, other):
    return type(other) is Ix and self.terms == other.terms and self.const == other.const

  def __hash__(self):
    return self._hash

  def __repr__(self):
    return f"Ix({self.terms}, {self.const})"

  def __add__(self, other):
    if type(other) is int:
      return Ix(self.terms, self.const + other)
    return Ix(self.terms + other.terms, self.const + other.const)

  def scale(self, k):
    return Ix(tuple((a, c * k) for a, c in self.terms), self.const * k)

  def coef(self, atom):
    for a, c in self.terms:
      if a == atom:
        return c
    return 0


ZERO = Ix()


def atom_range(atom, sizes):
  if type(atom) is int:
    return 0, sizes[atom] - 1
  if atom.mod is not None:
    return 0, atom.mod - 1
  lo, hi = ix_range(atom.inner, sizes)
  return lo // atom.div, hi // atom.div


def ix_range(ix, sizes):
  lo = hi = ix.const
  for atom, coef in ix.terms:
    a_lo, a_hi = atom_range(atom, sizes)
    lo += min(coef * a_lo, coef * a_hi)
    hi += max(coef * a_lo, coef * a_hi)
  return lo, hi


def strides(shape):
  out, step = [], 1
  for size in reversed(shape):
    out.append(step)
    step *= size
  return tuple(reversed(out))


def flatten(index, shape):
  """The row-major offset of ``index`` (a tuple of Ix) in an array of ``shape``."""
  total = ZERO
  for ix, stride, size in zip(index, strides(shape), shape):
    if size != 1:
      total = total + ix.scale(stride)
  return _fold_digits(total) if any(type(a) is DivMod for a, _ in total.terms) else total


def _fold_digits(ix):
  """``ix`` with neighbouring digits of one offset put back together: ``c *
  (f / d % m) + c * m * (f / (d * m) % n)`` is ``c * (f / d % (m * n))`` (no
  modulo when the second has none) for an offset ``f >= 0``, and ``f / 1``
  is ``f``: flattening an index that un-flattened a row-major offset (a
  reshape read in the same order) gives back that offset, affine, instead
  of divisions that keep a loop from vectorizing."""
  terms = list(ix.terms)
  merged = True
  while merged:
    merged = False
    for i, (a, ca) in enumerate(terms):
      if type(a) is not DivMod or a.mod is None:
        continue
      for j, (b, cb) in enumerate(terms):
        if (type(b) is DivMod and b.inner == a.inner and b.div == a.div * a.mod
            and cb == ca * a.mod):
          whole = DivMod(a.inner, a.div, None if b.mod is None else a.mod * b.mod)
          terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [(whole, ca)]
          merged = True
          break
      if merged:
        break
  out = Ix((), ix.const)
  for a, c in terms:
    if type(a) is DivMod and a.div == 1 and a.mod is None:
      out = out + a.inner.scale(c)
    else:
      out = out + Ix(((a, c),))
  return out


def unflatten(flat, shape, sizes):
  """The index of row-major offset ``flat`` in ``shape``: affine when each
  term of ``flat`` falls within one dimension, else with DivMod atoms."""
  big = [d for d, size in enumerate(shape) if size != 1]
  if len(big) <= 1:
    return tuple(flat if d in big else ZERO for d in range(len(shape)))
  split = _split(flat, shape, sizes)
  if split is not None:
    return split
  st = strides(shape)
  return tuple(ZERO if shape[d] == 1 else
               Ix(((DivMod(flat, st[d], None if d == big[0] else shape[d]), 1),))
               for d in range(len(shape)))


def _split(flat, shape, sizes):
  st = strides(shape)
  parts = [[] for _ in shape]
  for atom, coef in flat.terms:
    # The outermost dimension whose stride divides the coefficient.
    for d in range(len(shape)):
      if shape[d] != 1 and coef % st[d] == 0:
        parts[d].append((atom, coef // st[d]))
        break
    else:
      return None
  const, consts = flat.const, []
  for d in range(len(shape)):
    consts.append(const // st[d])
    const %= st[d]
  out = []
  for d in range(len(shape)):
    ix = Ix(tuple(parts[d]), consts[d])
    lo, hi = ix_range(ix, sizes)
    if lo < 0 or hi >= shape[d]:
      return None
    out.append(ix)
  return tuple(out)


def all_ixs(ix):
  """``ix`` and the Ix nested in its DivMod atoms."""
  yield ix
  for atom, _ in ix.terms:
    if type(atom) is not int:
      yield from all_ixs(atom.inner)


class LoopNest:
  """Loop dimensions grouped into runs, each walked by one C variable.

  ``runs`` is a list of (variable name, [dims, outer to inner]); dimensions
  of size 1 belong to no run (their index is 0)."""

  def __init__(self, sizes, runs):
    self.sizes = sizes
    self.runs = runs
    self.run_of = {}
    for var, dims in runs:
      for d in dims:
        self.run_of[d] = (var, dims)

  def run_size(self, dims):
    n = 1
    for d in dims:
      n *= self.sizes[d]
    return n

  def render(self, ix):
    """C text of ``ix`` (an int64_t expression)."""
    pieces = []
    by_run = {}
    for atom, coef in ix.terms:
      if type(atom) is int:
        if self.sizes[atom] != 1:
          by_run.setdefault(self.run_of[atom][0], []).append((atom, coef))
      else:
        pieces.append(_times(f"(({self.render(atom.inner)}) / {atom.div}"
                             + (f" % {atom.mod})" if atom.mod is not None else ")"), coef))
    for var, dims in self.runs:
      terms = dict(by_run.get(var, ()))
      if not terms:
        continue
      if consistent(dims, terms, self.sizes):
        pieces.append(_times(var, terms.get(dims[-1], 0)))
        continue
      inner = 1
      for d in reversed(dims):   # each dimension from the run variable
        if d in terms:
          value = var if inner == 1 else f"({var} / {inner})"
          if d != dims[0]:
            value = f"({value} % {self.sizes[d]})"
          pieces.append(_times(value, terms[d]))
        inner *= self.sizes[d]
    if ix.const or not pieces:
      pieces.append(str(ix.const))
    return " + ".join(pieces)


def consistent(dims, coefs, sizes):
  """Whether coefficients ``coefs`` (dim -> coef) are those of a row-major
  walk of ``dims`` (so one variable times the innermost coefficient)."""
  for outer, inner in zip(dims, dims[1:]):
    if coefs.get(outer, 0) != coefs.get(inner, 0) * sizes[inner]:
      return False
  return True


def _times(text, coef):
  if coef == 1:
    return text
  if coef == 0:
    return "0"
  return f"{text} * {coef}"


def mergeable(outer, inner, ixs, sizes):
  """Whether loop dims ``outer`` and ``inner`` (adjacent in loop order) can
  share one variable for every index in ``ixs``."""
  for ix in ixs:
    if ix.coef(outer) != ix.coef(inner) * sizes[inner]:
      return False
  return True


def run_variables(nest, runs, flat):
  """C declarations of the variables of ``runs`` (loop runs of ``nest``,
  outer to inner) from ``flat``, their row-major flattened index."""
  lines, inner = [], 1
  for var, dims in reversed(runs):
    size = nest.run_size(dims)
    value = f"({flat})" if inner == 1 else f"(({flat}) / {inner})"
    if var != runs[0][0]:
      value = f"{value} % {size}"
    lines.append(f"const int64_t {var} = {value};")
    inner *= size
  return lines
