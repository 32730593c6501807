"""Random programs for benchmarks/fuzz.py: their inputs, their source, and
the generator that builds them one traced statement at a time.

A Program is Python source over jnp/lax (so a failure prints as a
reproducer) plus its inputs.  ``Gen(seed, family).program()`` grows one:
a builder from benchmarks/fuzz_ops.py proposes a statement over the values
in scope, and ``Gen.commit`` traces it on their shapes and dtypes; a
proposal that does not trace, is too big, or would feed an inexact float
into a discontinuity (see fuzz_bounds.taint_flow) is dropped.
"""
import collections
import warnings

import numpy as np

import purejax
import purejax.numpy as jnp
import purejax.scipy.special  # noqa: F401  (jax.scipy.special in programs)
from purejax import lax
from purejax._src.jaxpr import Jaxpr

from fuzz_bounds import _kind, _size, taint_flow

DTYPES = ("float32", "int32", "uint8", "bool", "int8", "uint32")
MAX_SIZE = 300_000   # elements of any value a program makes
NAMESPACE = {"jnp": jnp, "lax": lax, "jax": purejax, "np": np}


# -- inputs -------------------------------------------------------------------------------

_FLOAT_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 3.0, 1e-3,
                127.5, -128.5, 255.5, 256.0, 2.0 ** 31, -2.0 ** 31, 2.0 ** 32, 1e10, -1e10,
                3.4e38, -3.4e38, 1.2e-38, 1e-45, 88.7, -104.0, 0.9999999]


def make_input(shape, dtype, seed, kind="any"):
  """A deterministic random array mixing ordinary values with edge cases
  (NaN, infinities, -0.0, denormals, extreme integers); ``kind="small"``
  gives integers in [-12, 12] (index-like); ``kind="normal"`` is "any" with
  subnormal floats (and those within 2**24 of them) made 0 (XLA:CPU flushes
  them, purejax keeps them: a documented difference, so the comparison with
  JAX leaves them out)."""
  rng = np.random.default_rng(seed)
  shape, dtype = tuple(shape), np.dtype(dtype)
  if dtype == np.bool_:
    return rng.random(shape) < 0.5
  if dtype.kind in "iu":
    info = np.iinfo(dtype)
    small = rng.integers(max(info.min, -12), 13, shape)
    if kind == "small":
      return small.astype(dtype)
    full = rng.integers(info.min, info.max, shape, endpoint=True)
    vals = np.where(rng.random(shape) < 0.6, small, full)
    edges = np.array([info.min, info.max, info.max - 1, 0, 1, info.min + 1])
    vals = np.where(rng.random(shape) < 0.1, rng.choice(edges, shape), vals)
    return vals.astype(dtype)
  vals = rng.standard_normal(shape) * np.exp(rng.uniform(-6, 6, shape))
  vals = np.where(rng.random(shape) < 0.3, np.round(rng.uniform(-8, 8, shape) * 2) / 2, vals)
  with np.errstate(over="ignore"):
    edges = np.array(_FLOAT_EDGES, dtype)
    vals = np.where(rng.random(shape) < 0.1, rng.choice(edges, shape), vals.astype(dtype))
  vals = np.asarray(vals, dtype)
  if kind == "normal" and dtype.kind == "f":
    # also a margin above: XLA's approximations flush their own subnormal
    # intermediates (its arcsin(1.2e-38) is 0)
    small = np.abs(vals) < np.finfo(dtype).tiny * 2.0 ** 24
    vals = np.where(small, np.zeros((), dtype) * np.sign(vals), vals)
  return vals


# -- programs -------------------------------------------------------------------------------

def _dt(dtype):
  return "jnp.bool_" if np.dtype(dtype) == np.bool_ else f"jnp.{np.dtype(dtype).name}"


class Val:
  """A value of a program: its name, shape, dtype, and whether both
  backends must compute it bit for bit (``exact``)."""
  __slots__ = ("name", "shape", "dtype", "exact")

  def __init__(self, name, shape, dtype, exact=True):
    self.name, self.shape, self.dtype, self.exact = name, tuple(shape), np.dtype(dtype).name, exact

  @property
  def kind(self):
    return _kind(self.dtype)

  def __repr__(self):
    return f"{self.name}:{self.dtype}{list(self.shape)}{'' if self.exact else '~'}"


class Stmt:
  """Source lines defining ``outs`` from the values named in ``uses``."""

  def __init__(self, lines, outs, uses):
    self.lines, self.outs, self.uses = lines, outs, set(uses)


class Program:
  """A random function: inputs (each a ``make_input`` spec or an array),
  statements, and the names it returns."""

  def __init__(self, inputs, stmts, outputs, label=""):
    self.inputs, self.stmts, self.outputs, self.label = inputs, stmts, outputs, label

  def source(self, name="f"):
    params = ", ".join(v.name for v, _ in self.inputs)
    body = [line for s in self.stmts for line in s.lines]
    body.append(f"return [{', '.join(self.outputs)}]")
    return f"def {name}({params}):\n" + "".join(f"  {line}\n" for line in body)

  def function(self, namespace=None):
    """The program as a Python function over ``namespace`` (default purejax's)."""
    ns = dict(NAMESPACE if namespace is None else namespace)
    exec(compile(self.source(), f"<fuzz {self.label}>", "exec"), ns)
    return ns["f"]

  def arrays(self):
    return [make_input(v.shape, v.dtype, *spec[1:]) if spec[0] == "gen" else spec[1]
            for v, spec in self.inputs]

  def values_by_name(self):
    return {v.name: v for v, _ in self.inputs} | {v.name: v for s in self.stmts for v in s.outs}

  def restricted(self, outputs):
    """The program computing only ``outputs`` (the statements they need)."""
    need, stmts = set(outputs), []
    for s in reversed(self.stmts):
      if any(v.name in need for v in s.outs):
        stmts.append(s)
        need |= s.uses
    inputs = [(v, spec) for v, spec in self.inputs if v.name in need]
    return Program(inputs, stmts[::-1], list(outputs), self.label)

  def materialized(self, stmt, arrays):
    """The program with ``stmt`` replaced by inputs holding ``arrays``."""
    inputs = self.inputs + [(v, ("value", a)) for v, a in zip(stmt.outs, arrays)]
    return Program(inputs, [s for s in self.stmts if s is not stmt], self.outputs, self.label)


# -- the generator ---------------------------------------------------------------------------

class Cand:
  """A proposed statement: ``pre`` lines (nested functions), then
  ``lhs = expr`` where ``lhs`` formats the output names."""

  def __init__(self, expr, operands, pre=(), nout=1, lhs="{0}"):
    self.expr, self.operands, self.pre, self.nout, self.lhs = expr, operands, list(pre), nout, lhs


class Block:
  """The values visible in a function body (its parameters and the outer
  values it may close over) and its statements."""

  def __init__(self, params, closure=()):
    self.scope, self.stmts = list(params) + list(closure), []
    self.params = {v.name for v in params}

  def free(self):
    defined = self.params | {v.name for s in self.stmts for v in s.outs}
    return set().union(*[s.uses for s in self.stmts]) - defined if self.stmts else set()


FAMILIES = {
    # family: (category weights, input dtype weights, shapes)
    "elementwise": ({"unary": 4, "binary": 4, "select": 2, "convert": 1, "shape": 1},
                    (6, 1, 1, 1, 1, 1), "small"),
    "integer": ({"unary": 3, "binary": 5, "select": 1, "convert": 1, "shape": 1, "reduce": 1},
                (1, 4, 3, 1, 3, 3), "small"),
    "convert": ({"convert": 4, "unary": 1, "binary": 1, "select": 1}, (4, 2, 2, 1, 2, 2), "small"),
    "shape": ({"shape": 5, "unary": 1, "binary": 2, "select": 1}, (3, 2, 1, 1, 1, 1), "small"),
    "reduce": ({"reduce": 4, "unary": 1, "binary": 2, "shape": 1}, (4, 2, 1, 1, 1, 1), "small"),
    "index": ({"index": 4, "dot": 2, "shape": 1, "binary": 1}, (4, 3, 1, 1, 1, 1), "small"),
    "control": ({"control": 3, "unary": 1, "binary": 2, "select": 1, "shape": 1, "reduce": 1},
                (4, 3, 1, 1, 1, 1), "small"),
    "big": ({"unary": 3, "binary": 3, "select": 1, "convert": 1, "shape": 1, "reduce": 2,
             "index": 0.5, "dot": 0.5}, (4, 2, 1, 1, 1, 1), "big"),
    # issue 20's wrong answers (fuzz_edges.py), for the JAX oracle
    "edges": ({"edges": 4, "unary": 1, "binary": 1, "convert": 1}, (3, 2, 2, 1, 2, 2), "small"),
    "mixed": ({"unary": 3, "binary": 3, "select": 1, "convert": 1, "shape": 2, "reduce": 2,
               "index": 1, "dot": 1, "control": 1}, (4, 2, 1, 1, 1, 1), "small"),
}
_BODY_WEIGHTS = {"unary": 3, "binary": 3, "select": 1, "convert": 1, "shape": 1, "reduce": 1,
                 "index": 1, "dot": 0.5}
_DIMS = [1, 1, 2, 3, 3, 4, 5, 7, 8, 13, 16, 31]
_BIG_SHAPES = [(40961,), (257, 163), (3, 129, 113), (64, 1025), (11, 2, 41, 47), (45000, 1)]


def _broadcastable(a, b):
  """Whether shapes ``a`` and ``b`` broadcast together (NumPy's rule)."""
  return all(x == y or x == 1 or y == 1 for x, y in zip(a[::-1], b[::-1]))


def _broadcasts_to(a, shape):
  return len(a) <= len(shape) and all(x == y or x == 1 for x, y in zip(a[::-1], shape[::-1]))


class Gen:
  """Builds random Programs: ``Gen(seed, family).program()``."""

  def __init__(self, seed, family="mixed", max_ops=10):
    self.rng = np.random.default_rng(seed)
    self.seed, self.family, self.max_ops = seed, family, max_ops
    self.weights, self.dtype_weights, self.shapes = FAMILIES[family]
    self.count = 0
    self.rejected = collections.Counter()
    self.input_kind = "any"   # "normal" against JAX: XLA flushes subnormals
    from fuzz_ops import BUILDERS   # the builders use this module's classes
    self.builders = BUILDERS
    self.depth = 0

  # random helpers
  def chance(self, p):
    return self.rng.random() < p

  def choice(self, seq):
    return seq[int(self.rng.integers(len(seq)))]

  def fresh(self, prefix="v"):
    self.count += 1
    return f"{prefix}{self.count}"

  def pick(self, scope, ok=lambda v: True):
    cands = [v for v in scope if ok(v)]
    return self.choice(cands) if cands else None

  def literal(self, v):
    k = v.kind
    if k == "f":
      return self.choice(["0.5", "-1.5", "2.0", "3.0", "1e-3", "100.0", "-0.0", "0.0"])
    if k == "b":
      return self.choice(["True", "False"])
    return str(self.choice([0, 1, 2, 3, 7] + ([-1, -3] if k == "i" else [])))

  def scalar(self, dtype, value=None):
    """A numpy scalar of ``dtype`` (a literal that keeps its dtype)."""
    if value is None:
      value = self.literal(Val("", (), dtype))
    return f"np.{np.dtype(dtype).name}({value})"

  def int_scalar(self, scope):
    """An exact integer scalar expression (maybe out of range) and its operands."""
    v = self.pick(scope, lambda v: v.kind in "iu" and _size(v.shape) > 0)
    if v is None or self.chance(0.3):
      return str(self.choice([0, 1, 2, -1, -4, 3, 100])), []
    k = int(self.rng.integers(_size(v.shape)))
    return f"{v.name}.reshape(-1)[{k}]", [v]

  def predicate(self, scope):
    """An exact boolean scalar expression and its operands."""
    v = self.pick(scope, lambda v: v.exact and _size(v.shape) > 0)
    if v is None:
      return self.choice(["True", "False"]), []
    if v.kind == "b":
      return self.choice([f"jnp.any({v.name})", f"{v.name}.reshape(-1)[0]"]), [v]
    return self.choice([f"jnp.max({v.name}) > {self.literal(v)}",
                        f"{v.name}.reshape(-1)[-1] <= {self.literal(v)}"]), [v]

  def coerce(self, v, shape, dtype):
    """An expression of ``v`` with ``shape`` and ``dtype`` (None if that
    would turn an inexact float into an integer)."""
    e = v.name
    if v.dtype != np.dtype(dtype).name:
      if v.kind == "f" and not v.exact and _kind(dtype) != "f":
        return None
      e = f"{e}.astype({_dt(dtype)})"
    if v.shape != tuple(shape):
      if _broadcasts_to(v.shape, shape):
        e = f"jnp.broadcast_to({e}, {tuple(shape)})"
      elif _size(v.shape) > 0:
        e = f"jnp.resize({e}, {tuple(shape)})"
      else:
        return None
    return e

  def coerce_from(self, block, target):
    """An expression from ``block``'s values with ``target``'s shape and
    dtype, preferring values the block computed."""
    made = [v for st in block.stmts for v in st.outs]
    rest = [v for v in block.scope if v not in made]
    for vals in (made, rest):
      order = [vals[i] for i in self.rng.permutation(len(vals))]
      order.sort(key=lambda v: (v.shape != target.shape) + (v.dtype != target.dtype))
      for v in order[:4]:
        e = self.coerce(v, target.shape, target.dtype)
        if e is not None:
          return e, v
    return f"jnp.zeros({target.shape}, {_dt(target.dtype)})", None

  def shape(self):
    if self.shapes == "big":
      return self.choice(_BIG_SHAPES)
    while True:
      rank = self.choice([0, 1, 1, 2, 2, 2, 3, 3, 4])
      s = tuple(self.choice(_DIMS) for _ in range(rank))
      if _size(s) <= 3000:
        return s

  def input_shape(self, base):
    r = self.rng.random()
    if r < 0.5 or not base:
      return base
    if r < 0.75:
      return tuple(1 if self.chance(0.4) else d for d in base)
    if r < 0.88:
      return base[int(self.rng.integers(len(base) + 1)):]
    if r < 0.9:   # an empty array
      return tuple(0 if i == 0 else d for i, d in enumerate(base))
    return ()

  # programs
  def program(self, n_ops=None):
    base = self.shape()
    inputs = []
    for _ in range(int(self.rng.integers(1, 5))):
      w = np.array(self.dtype_weights, float)
      dtype = DTYPES[int(self.rng.choice(len(DTYPES), p=w / w.sum()))]
      kind = "small" if _kind(dtype) in "iu" and self.chance(0.35) else self.input_kind
      v = Val(self.fresh("x"), self.input_shape(base), dtype)
      inputs.append((v, ("gen", int(self.rng.integers(1 << 31)), kind)))
    block = Block([v for v, _ in inputs])
    n_ops = n_ops or int(self.rng.integers(min(3, self.max_ops), self.max_ops + 1))
    for _ in range(n_ops):
      self.step(block, self.weights)
    used = set().union(*[s.uses for s in block.stmts]) if block.stmts else set()
    made = [v for s in block.stmts for v in s.outs]
    outs = [v.name for v in made if v.name not in used or self.chance(0.2)]
    if not outs:
      outs = [v.name for v, _ in inputs[:1]]
    return Program(inputs, block.stmts, outs, f"{self.family}/{self.seed}")

  def step(self, block, weights, tries=12):
    cats = list(weights)
    w = np.array([weights[c] for c in cats], float)
    for _ in range(tries):
      cat = cats[int(self.rng.choice(len(cats), p=w / w.sum()))]
      if cat == "control" and self.depth >= 1:
        continue
      builder = self.choice(self.builders[cat])
      cand = builder(self, block.scope)
      if cand is not None and self.commit(block, cand, builder.__name__):
        return True
    return False

  def commit(self, block, cand, what=""):
    """Traces ``cand`` on its operands' shapes; adds it to ``block`` if it is
    valid, small enough, and keeps inexact values out of discontinuities."""
    ops = {v.name: v for v in cand.operands}
    names = [self.fresh() for _ in range(cand.nout)]
    lines = cand.pre + [f"{cand.lhs.format(*names)} = {cand.expr}"]
    src = (f"def _cand({', '.join(ops)}):\n" + "".join(f"  {line}\n" for line in lines) +
           f"  return ({''.join(n + ', ' for n in names)})\n")
    ns = dict(NAMESPACE)
    try:
      exec(src, ns)
      with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        closed = purejax.make_jaxpr(ns["_cand"])(
            *[purejax.ShapeDtypeStruct(v.shape, v.dtype) for v in ops.values()])
    except Exception as e:   # an invalid proposal: try another
      self.rejected[f"{what}: {type(e).__name__}"] += 1
      return False
    avals = closed.out_avals
    if any(_size(a.shape) > MAX_SIZE for a in avals) or len(avals) != len(names):
      self.rejected[f"{what}: too big"] += 1
      return False
    in_taint = [False] * len(closed.jaxpr.constvars) + [
        v.kind == "f" and not v.exact for v in ops.values()]
    ok, out_taint = taint_flow(_with_consts_as_inputs(closed.jaxpr), in_taint)
    if not ok:
      self.rejected[f"{what}: discontinuous"] += 1
      return False
    outs = [Val(n, a.shape, a.dtype, not t) for n, a, t in zip(names, avals, out_taint)]
    block.stmts.append(Stmt(lines, outs, ops))
    block.scope.extend(outs)
    return True

  def body(self, params, outer, n_ops=None):
    """A nested function body over ``params`` that may close over up to two
    of the ``outer`` values."""
    k = min(len(outer), int(self.rng.integers(0, 3)))
    closure = [outer[i] for i in self.rng.choice(len(outer), k, replace=False)] if k else []
    block = Block(params, closure)
    self.depth += 1
    try:
      for _ in range(n_ops or int(self.rng.integers(1, 5))):
        self.step(block, _BODY_WEIGHTS)
    finally:
      self.depth -= 1
    return block


def _with_consts_as_inputs(jaxpr):
  return Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns)


def _indent(lines):
  return ["  " + line for line in lines]


def batch_function(programs, namespace=None):
  """One function running all ``programs`` (their inputs concatenated),
  returning all their outputs: one jaxpr, one compilation."""
  fns = [p.function(namespace) for p in programs]
  counts = [len(p.inputs) for p in programs]

  def f(*args):
    outs, k = [], 0
    for fn, c in zip(fns, counts):
      outs += list(fn(*args[k:k + c]))
      k += c
    return outs

  return f
