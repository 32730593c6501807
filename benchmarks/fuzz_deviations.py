"""JAX's own known deviations, for benchmarks/fuzz_oracle.py: where JAX 0.10
(XLA:CPU) gives an answer purejax deliberately does not copy, the oracle
accepts JAX's answer only if it is exactly what the deviation predicts, and
purejax's only if it is the NumPy reference's.  Everything else stays strict.

(a) Cumulative float sums and products (cumsum, cumprod, cumlogsumexp): XLA
    evaluates them as a reduce-window / associative scan whose order adds
    more rounding error than purejax's; both answers are accepted within
    fuzz_bounds' reassociation bound, which scales with the scanned length
    and is measured against the float64 result.
(b) XLA's algebraic simplifier rewrites ``abs(x * x)`` to ``x * x``, also on
    signed integers, where ``x * x`` may wrap to a negative number:
    ``jnp.abs(jnp.int8(12) * jnp.int8(12))`` is -112 in JAX, 112 in NumPy
    and purejax.
(c) With x64, XLA:CPU's gather truncates 64-bit start indices to 32 bits
    before its bounds check (in every mode but clip, where jnp clamps first):
    ``jnp.take(x, jnp.array([2**32 + 3]))`` reads ``x[3]``.
(d) XLA:CPU flushes float32/float64 subnormals to zero, as inputs and as
    results (README, "Subnormal numbers are kept"): the oracle's inputs have
    none, but intermediate results can (``jax.nn.silu(-88.0)`` is -0.0 in
    JAX, -7e-37 in purejax).
(b), (c) and (d) are emulated by ``emulate_jax``, a NumPy-backend evaluation
of the jaxpr with those rewrites (not inside loop and cond bodies).
"""
import numpy as np

from purejax._src.backends import numpy_backend
from purejax._src.jaxpr import Literal, sub_jaxprs

from fuzz_bounds import _dist, bounded_eval

CUMULATIVE = frozenset({"cumsum", "cumprod", "cumlogsumexp"})


# -- (a) cumulative float ops ---------------------------------------------------------------------

def _has_cumulative(jaxpr):
  return any((e.primitive.name in CUMULATIVE and e.outvars[0].aval.dtype.kind in "fc") or
             any(_has_cumulative(j) for j in sub_jaxprs(e.params)) for e in jaxpr.eqns)


def after_cumulative(jaxpr):
  """For each output of ``jaxpr``, whether a float cumulative op feeds it."""
  tainted = set()
  for eqn in jaxpr.eqns:
    hit = (eqn.primitive.name in CUMULATIVE and eqn.outvars[0].aval.dtype.kind in "fc") or \
        any(_has_cumulative(j) for j in sub_jaxprs(eqn.params)) or \
        any(type(v) is not Literal and v in tainted for v in eqn.invars)
    if hit:
      tainted.update(eqn.outvars)
  return [type(v) is not Literal and v in tainted for v in jaxpr.outvars]


def within_cumulative_bound(value, bound, expected, got):
  """Whether JAX's and purejax's outputs are both within ``bound`` (the
  reassociation bound, finite) of the NumPy reference ``value``."""
  if bound is None or np.asarray(value).dtype.kind != "f":
    return False
  bound = np.asarray(bound)
  # Unbounded elements (a cumulative result that one order may overflow, or
  # that a later function is undefined just past) are not comparable, as in
  # the C-against-NumPy fuzz.
  return bool(np.all(~np.isfinite(bound) | ((_dist(expected, value) <= bound) &
                                           (_dist(got, value) <= bound))))


def cumulative_references(jaxpr, args):
  """(value, bound) per output: the NumPy reference and its error bound."""
  return bounded_eval(jaxpr, args)


# -- (b), (c): JAX's answers, emulated -------------------------------------------------------------

def _flushed(x, fired):
  """``x`` with float32/float64 subnormals made signed zeros (d)."""
  x = np.asarray(x)
  if x.dtype.kind == "c":
    return _flushed(x.real, fired) + 1j * _flushed(x.imag, fired)
  if x.dtype.kind != "f" or x.dtype == np.float16:
    return x
  sub = (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)
  if not sub.any():
    return x
  fired.add("subnormals flushed")
  return np.where(sub, np.copysign(np.zeros((), x.dtype), x), x).astype(x.dtype)


def _signed_int(aval):
  return np.dtype(aval.dtype).kind == "i"


def _abs_of_square(eqn, producers, read, fired):
  """JAX's abs(x * x) on a signed int: the product itself where XLA sees one
  operand twice (equal values here), else the abs; None if not that pattern."""
  if eqn.primitive.name != "abs" or not _signed_int(eqn.outvars[0].aval):
    return None
  src = eqn.invars[0]
  prod = producers.get(src) if type(src) is not Literal else None
  if prod is None:
    return None
  x = read(src)
  name = prod.primitive.name
  if name == "square" or (name == "integer_pow" and prod.params.get("y") == 2):
    same = np.ones(x.shape, bool)
  elif name == "mul":
    a, b = (np.asarray(read(v)) for v in prod.invars)
    same = np.broadcast_to(a == b, x.shape)
  else:
    return None
  if (same & (x < 0)).any():
    fired.add("abs(x*x) simplified")
  return np.where(same, x, np.abs(x)).astype(x.dtype)


def _truncated_gather_indices(eqn, vals, fired):
  """Gather's 64-bit indices as XLA:CPU uses them (outside clip mode)."""
  if eqn.primitive.name != "gather" or "CLIP" in str(eqn.params.get("mode")):
    return vals
  idx = np.asarray(vals[1])
  if idx.dtype.kind not in "iu" or idx.dtype.itemsize != 8:
    return vals
  short = idx.astype(np.int32)
  if (short != idx).any():
    fired.add("64-bit gather index truncated")
  return [vals[0], short] + list(vals[2:])


def emulate_jax(jaxpr, args, consts=(), fired=None):
  """``jaxpr``'s outputs by the NumPy backend with deviations (b), (c) and
  (d); the names of those that changed something are added to ``fired``."""
  fired = set() if fired is None else fired
  env, producers = dict(zip(jaxpr.constvars, (np.asarray(c) for c in consts))), {}
  env.update(zip(jaxpr.invars, (_flushed(a, fired) for a in args)))

  def read(v):
    return _flushed(v.val, fired) if type(v) is Literal else env[v]

  for eqn in jaxpr.eqns:
    vals = [read(v) for v in eqn.invars]
    param = getattr(eqn.primitive, "call_jaxpr_param", None)
    special = _abs_of_square(eqn, producers, read, fired)
    if special is not None:
      outs = [special]
    elif param and eqn.params.get(param) is not None:
      closed = eqn.params[param]
      outs = emulate_jax(closed.jaxpr, vals, closed.consts, fired)
    else:
      vals = _truncated_gather_indices(eqn, vals, fired)
      with np.errstate(all="ignore"):
        out = numpy_backend.jit_impl(eqn.primitive)(*vals, **eqn.params)
      outs = list(out) if eqn.primitive.multiple_results else [out]
    for v, o in zip(eqn.outvars, outs):
      env[v] = _flushed(np.asarray(o, v.aval.dtype), fired)
      producers[v] = eqn
  return [read(v) for v in jaxpr.outvars]
