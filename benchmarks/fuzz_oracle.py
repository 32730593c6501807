"""benchmarks/fuzz.py's oracle mode: the same random programs run by purejax
(jit, C backend) and by the real JAX, when it is installed; outputs compared
dtype-aware: integers and booleans exactly, floats within ``ULPS`` float32
ulps or a relative tolerance, NaN where NaN, the same dtypes and shapes.

JAX is imported here only (never by the purejax package).  ``--x64`` turns
on 64-bit types in both.  Where JAX itself deviates (fuzz_deviations.py:
its less accurate cumulative sums, abs(x * x) simplified on wrapping ints,
64-bit gather indices truncated, subnormals flushed), an output is accepted
only as that deviation predicts, and counted.  JAX runs in a child process
of its own: the programs on which JAX itself dies are counted apart, and
so are the outputs it computes differently on repeated calls.
"""
import ctypes
import importlib.util
import os
import pickle
import signal
import sys
import traceback
import warnings

import numpy as np

from fuzz import Failure, Report, run_c, _trace
from fuzz_programs import NAMESPACE, batch_function
import fuzz_deviations
import fuzz_deviations_products

ULPS = 4
RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


def available():
  # Not imported here: JAX runs in processes of its own (run_jax_apart).
  return importlib.util.find_spec("jax") is not None


def _jax_namespace():
  import jax
  import jax.numpy as jnp
  import jax.scipy.special  # noqa: F401
  from jax import lax
  return dict(NAMESPACE, jax=jax, jnp=jnp, lax=lax)


def _jax_function(programs):
  return batch_function(programs, _jax_namespace())


class JaxOutputs(list):
  """JAX's outputs; ``unstable``: the indices of those that JAX computed
  differently on repeated calls of the same jitted function (XLA:CPU's
  multithreaded reductions can race: the var of a large broadcast came
  out 19.63, 29.1 and 33.3 on three calls)."""
  unstable = ()


_CALLS = 3


def run_jax(programs, x64):
  import jax
  before = jax.config.jax_enable_x64
  jax.config.update("jax_enable_x64", bool(x64))
  args = [a for p in programs for a in p.arrays()]
  try:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      f = jax.jit(_jax_function(programs))
      runs = [[np.asarray(o) for o in f(*args)] for _ in range(_CALLS)]
  finally:   # (the rule tests run JAX in the test process, beside other oracle tests)
    jax.config.update("jax_enable_x64", before)
  out = JaxOutputs(runs[0])
  out.unstable = tuple(k for k, o in enumerate(out)
                       if not all(_same_bits(o, r[k]) for r in runs[1:]))
  return out


def _same_bits(a, b):
  if a.dtype.kind in "fc":
    return a.tobytes() == b.tobytes() or bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))
  return np.array_equal(a, b)


def run_jax_apart(programs, x64):
  """``run_jax`` in a forked child, so that JAX dying (it folds an integer
  0 / 0 into a SIGFPE) is reported rather than fatal: ("ok", outputs),
  ("raised", traceback lines) or ("died", the signal's name).  In a process
  that has imported JAX already (its threads may hold locks), in place."""
  if "jax" in sys.modules or not hasattr(os, "fork"):
    try:
      return "ok", run_jax(programs, x64)
    except Exception:
      return "raised", traceback.format_exc(limit=-2).splitlines()
  r, w = os.pipe()
  pid = os.fork()
  if pid == 0:   # the child: dies with its parent (a batch killed on its timeout)
    os.close(r)
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    try:
      data = pickle.dumps(("ok", run_jax(programs, x64)))
    except BaseException:
      data = pickle.dumps(("raised", traceback.format_exc(limit=-2).splitlines()))
    with os.fdopen(w, "wb") as f:
      f.write(data)
    os._exit(0)
  os.close(w)
  with os.fdopen(r, "rb") as f:
    data = f.read()
  _, status = os.waitpid(pid, 0)
  if data and os.WIFEXITED(status):
    return pickle.loads(data)
  sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
  return "died", signal.Signals(sig).name if sig else f"exit status {os.WEXITSTATUS(status)}"


def _float_ok(e, g):
  e64, g64 = e.astype(np.float64), g.astype(np.float64)
  same = (e64 == g64) | (np.isnan(e64) & np.isnan(g64))
  tiny = np.finfo(e.dtype).tiny
  with np.errstate(all="ignore"):
    spacing = np.spacing(np.abs(e).astype(np.float32 if e.itemsize <= 4 else e.dtype))
    diff = np.abs(e64 - g64)
    close = (diff <= ULPS * np.maximum(spacing.astype(np.float64), tiny)) | (
        diff <= RTOL.get(e.dtype, 1e-5) * np.abs(e64))
  return same | (np.isfinite(e64) & np.isfinite(g64) & close)


def agree(expected, got):
  """Elementwise: integers equal, floats within the tolerance (same dtype
  and shape assumed)."""
  expected, got = np.asarray(expected), np.asarray(got)
  if expected.dtype.kind == "c":
    return _float_ok(expected.real, got.real) & _float_ok(expected.imag, got.imag)
  if expected.dtype.kind == "f":
    return np.asarray(_float_ok(expected, got))
  return np.asarray(expected == got)


def compare_oracle(expected, got):
  """(message, flat indices of bad elements) or (None, None)."""
  expected, got = np.asarray(expected), np.asarray(got)
  if got.dtype != expected.dtype or got.shape != expected.shape:
    return (f"JAX gives {expected.dtype}{list(expected.shape)}, purejax "
            f"{got.dtype}{list(got.shape)}", np.zeros(0, int))
  idx = np.flatnonzero(~agree(expected, got))
  return (None, None) if idx.size == 0 else ("values differ from JAX", idx)


def _describe(e, g, idx, limit=4):
  lines = []
  for i in idx[:limit]:
    pos = np.unravel_index(i, e.shape) if e.ndim else ()
    lines.append(f"at {tuple(int(k) for k in pos)}: JAX {e.reshape(-1)[i]!r}, "
                 f"purejax {g.reshape(-1)[i]!r}")
  if len(idx) > limit:
    lines.append(f"... {len(idx)} of {e.size} elements differ")
  return lines


def _close(a, b, bound):
  """Elementwise: ``agree``, or within the output's largest rounding bound
  (JAX's value against the emulated one: a rewrite may move elements, and
  their bounds with them)."""
  ok = agree(a, b)
  if bound is None or np.asarray(a).dtype.kind != "f":
    return ok
  finite = np.asarray(bound)[np.isfinite(bound)]
  if finite.size == 0:
    return ok
  return ok | (fuzz_deviations._dist(a, b) <= finite.max())


def check_batch_oracle(programs, x64=False):
  """Runs ``programs`` (one jitted function) by purejax's C backend and by JAX."""
  from purejax._src.config import config
  import fuzz_bounds
  fuzz_bounds.against_jax()
  report = Report()
  with config.override("jax_enable_x64", bool(x64)):
    try:
      jaxpr, args = _trace(programs)
      got, _, _ = run_c(jaxpr, args)
    except Exception:
      report.failures.append(Failure("generator", None, None, "purejax raised",
                                     traceback.format_exc(limit=-3).splitlines()))
      return report
  status, expected = run_jax_apart(programs, x64)
  if status != "ok":   # find the programs JAX rejects or dies on
    if len(programs) == 1 and status == "died":
      report.stats[f"programs JAX itself died on ({expected})"] += 1
      report.stats["programs"] += 1
      return report
    if len(programs) == 1:
      report.failures.append(Failure("mismatch", 0, None, "JAX raised where purejax did not",
                                     expected))
      return report
    for i, p in enumerate(programs):
      sub = check_batch_oracle([p], x64)
      for f in sub.failures:
        f.program = i
      report.failures += sub.failures
      report.stats.update(sub.stats)
    return report
  where = [(i, j) for i, p in enumerate(programs) for j in range(len(p.outputs))]
  # _trace puts the programs' constants (made by jnp.array, known to XLA)
  # before their inputs.
  constants = len(args) - sum(len(p.arrays()) for p in programs)
  known = _KnownDeviations(jaxpr, args, x64, constants)
  unstable = getattr(expected, "unstable", ())
  for k, ((i, j), e, g) in enumerate(zip(where, expected, got)):
    report.stats["outputs"] += 1
    if k in unstable:
      report.stats["outputs JAX computed differently on repeated calls (not compared)"] += 1
      continue
    e, g = np.asarray(e), np.asarray(g)
    message, idx = compare_oracle(e, g)
    deviation = known.explains(k, e, g) if message and idx is not None and idx.size else None
    if deviation:
      report.stats[f"outputs where JAX deviates as known: {deviation}"] += 1
    elif message:
      details = _describe(e, g, idx) if idx is not None and idx.size else []
      positions = [np.unravel_index(k, e.shape) for k in idx[:4]] if idx is not None else []
      report.failures.append(Failure("mismatch", i, j, message, details, positions))
  report.stats["programs"] += len(programs)
  return report


class _KnownDeviations:
  """Whether a mismatch is explained by JAX's known deviations
  (fuzz_deviations), element by element; the references are computed on
  the first mismatch only."""

  def __init__(self, jaxpr, args, x64, constants=0):
    self.jaxpr, self.args, self.x64, self.refs = jaxpr, args, bool(x64), None
    # Which arguments XLA knows at compile time: the first ``constants``.
    self.arg_constant = [i < constants for i in range(len(args))]

  def _references(self):
    from purejax._src.config import config
    with config.override("jax_enable_x64", self.x64):
      self._compute_references()

  def _compute_references(self):
    n = len(self.jaxpr.outvars)
    self.refs, self.after_sum, self.emulated = [(None, None)] * n, [False] * n, None
    self.fired, self.fired_values = set(), set()
    self.flushed, self.nan_variants, self.unflushed = None, [], None
    self.every_product_fused = None
    try:
      self.refs = fuzz_deviations.references(self.jaxpr, self.args)
      self.after_sum = fuzz_deviations.after_float_sum(self.jaxpr)
    except Exception:   # no reference: the mismatches stand
      return
    try:
      self.emulated, self.producers = fuzz_deviations.emulate_jax(
          self.jaxpr, self.args, fired=self.fired, arg_constant=self.arg_constant)
    except Exception:   # an emulation bug: say so, rather than excuse nothing quietly
      traceback.print_exc(limit=-3)
    try:
      with fuzz_deviations_products.fusing_every_product():
        self.every_product_fused = fuzz_deviations.emulate_jax(
            self.jaxpr, self.args, fired=self.fired, arg_constant=self.arg_constant)[0]
      self.flushed = fuzz_deviations.emulate_jax(self.jaxpr, self.args, only="flush")[0]
      self.nan_variants = [fuzz_deviations.emulate_jax(self.jaxpr, self.args, only=mode)[0]
                           for mode in fuzz_deviations.NAN_MODES]
      self.unflushed = fuzz_deviations.emulate_jax(self.jaxpr, self.args, only="values",
                                                   fired=self.fired_values)[0]
    except Exception:
      traceback.print_exc(limit=-3)

  def explains(self, k, expected, got):
    """The deviations' names, or None."""
    if self.refs is None:
      self._references()
    value, bound = self.refs[k]
    if value is None:
      return None
    ok = agree(expected, got)
    why = set()
    rounded = fuzz_deviations.within_bound(value, bound, expected, got, self.after_sum[k])
    if (rounded & ~ok).any():
      why.add("float rounding within the bound")
    ok = ok | rounded
    if self.emulated is not None and not ok.all():
      plain = agree(value, got)
      if bound is not None and np.asarray(value).dtype.kind == "f":
        plain = plain | (fuzz_deviations._dist(got, value) <= np.asarray(bound))
      as_jax = _close(np.asarray(self.emulated[k]), expected, bound)
      if self.every_product_fused is not None:   # (n) as XLA may split its fusions
        as_jax |= _close(np.asarray(self.every_product_fused[k]), expected, bound)
      as_jax &= plain
      if (as_jax & ~ok).any():
        why |= self.fired
      ok = ok | as_jax
      nan_dropped = fuzz_deviations.nan_dropping_reduction(self.producers[k], expected)
      if nan_dropped is not None:
        nan_dropped = nan_dropped & agree(value, got)
        if (nan_dropped & ~ok).any():
          why.add("NaN dropped by a max/min reduction")
        ok = ok | nan_dropped
    if self.flushed is not None and not ok.all():
      flush_dependent = ~agree(value, np.asarray(self.flushed[k])) & agree(value, got)
      if (flush_dependent & ~ok).any():
        why.add("depends on a flushed subnormal")
      ok = ok | flush_dependent
    if self.unflushed is not None and self.fired_values and not ok.all():
      # (o) XLA's wrong function values, on subnormals it did not flush
      as_jax = _close(np.asarray(self.unflushed[k]), expected, bound) & agree(value, got)
      if (as_jax & ~ok).any():
        why |= self.fired_values
      ok = ok | as_jax
    if self.nan_variants and not ok.all():
      # (e) elements that a max/min reduction's NaNs change, whichever way
      depends = np.zeros(np.shape(value), bool)
      for variant in self.nan_variants:
        depends |= ~agree(value, np.asarray(variant[k]))
      nan_dependent = depends & agree(value, got)
      if (nan_dependent & ~ok).any():
        why.add("depends on a NaN a max/min reduction dropped")
      ok = ok | nan_dependent
    return (", ".join(sorted(why)) or None) if ok.all() else None


def oracle_tail(x64):
  """The reproducer's last lines: purejax's C backend against JAX."""
  # (``import jax.numpy`` would rebind ``jax``, purejax here, to JAX)
  return ["import jax as real_jax, jax.numpy as _, jax.scipy.special as _, jax.lax as _",
          f"real_jax.config.update('jax_enable_x64', {bool(x64)})",
          f"config.update('jax_enable_x64', {bool(x64)})",
          "with config.override('purejax_backend', 'cpu'), "
          "config.override('purejax_compile_sync', True):",
          "  got = jax.jit(f)(*args)",
          "ns = dict(globals(), jax=real_jax, jnp=real_jax.numpy, lax=real_jax.lax)",
          "exec(SOURCE, ns)",
          "expected = real_jax.jit(ns['f'])(*args)"]
