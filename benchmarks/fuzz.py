"""A differential fuzz test of the C backend against the NumPy backend.

Random programs (chains of jnp/lax operations on random shapes and dtypes,
with broadcasts, reductions, indexing, dot products and control flow) are
traced, compiled with the C backend and run on both backends.  Every output
must agree: integers and booleans bit for bit; floats bit for bit where only
exactly rounded operations made them, otherwise within the error bound
fuzz_bounds.bounded_eval carries through the program (a few ulp per
transcendental function, the reassociation error of each sum, amplified by
what follows); NaN where NaN, the same dtypes and shapes.

    python benchmarks/fuzz.py --programs 5000 --seed 0
    python benchmarks/fuzz.py --programs 300 --family control --jobs 2
    python benchmarks/fuzz.py --programs 300 --target cuda_emulation

``--target cuda_emulation`` runs the GPU backend's kernels (emulated on
the CPU) in the C backend's place, against the same reference.

Many programs share one jitted function (one compilation).  Each batch runs
in a forked child, so a crash or a hang is reported rather than fatal; each
failure is printed with a reduced reproducer.  The generator lives in
fuzz_programs.py (programs) and fuzz_ops.py (operations), the bounds in
fuzz_bounds.py; tests/test_cpu_fuzz.py runs a few hundred fixed programs.
"""
import argparse
import collections
import os
import pickle
import select
import signal
import sys
import time
import traceback
import warnings

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
  sys.path.insert(0, _HERE)
if os.path.dirname(_HERE) not in sys.path:   # a checkout's purejax, unless one is on the path
  sys.path.append(os.path.dirname(_HERE))

from purejax._src import backends, core  # noqa: E402
from purejax._src.config import config  # noqa: E402
from purejax._src.pjit import trace_closed  # noqa: E402

import fuzz_bounds  # noqa: E402
from fuzz_bounds import bounded_eval, compare, describe_mismatch  # noqa: E402
from fuzz_programs import FAMILIES, Gen, Program, batch_function, make_input  # noqa: E402,F401

CRASHES = ("crash", "fallback", "timeout")


class Failure:
  """What went wrong: ``kind`` (mismatch, crash, fallback, timeout,
  generator), in which program of the batch and which of its outputs."""

  def __init__(self, kind, program=None, output=None, message="", details=(), positions=()):
    self.kind, self.program, self.output = kind, program, output
    self.message, self.details = message, list(details)
    self.positions = list(positions)   # of the first differing elements

  def __repr__(self):
    where = "" if self.program is None else f" program {self.program}"
    where += "" if self.output is None else f" output {self.output}"
    return f"{self.kind}{where}: {self.message}"


class Report:
  """The outcome of one batch."""

  def __init__(self):
    self.failures, self.stats, self.programs = [], collections.Counter(), None


# -- running a batch on both backends -------------------------------------------------------

def _layouts(arrays):
  """The arrays, every third one in another memory layout (Fortran order,
  or a strided view): the executables must accept any."""
  out = []
  for i, a in enumerate(arrays):
    a = np.asarray(a)
    if i % 3 == 2 and a.ndim >= 2:
      a = np.asfortranarray(a)
    elif i % 3 == 2 and a.ndim == 1:
      a = np.repeat(a, 2)[::2]
    out.append(a)
  return out


def _trace(programs):
  arrays = _layouts([a for p in programs for a in p.arrays()])
  avals = [core.ShapedArray(np.shape(a), np.asarray(a).dtype) for a in arrays]
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    closed, consts = trace_closed(batch_function(programs), avals)
  return closed.jaxpr, [np.asarray(c) for c in consts] + arrays


def _clear_warn_once():
  """Forgets which fallback warnings were given, so each batch reports its own."""
  getattr(backends, "_warned", set()).clear()
  try:
    from purejax._src.backends.cpu import executable
    getattr(executable, "_warned", set()).clear()
  except ImportError:
    pass


# The backend under test: "cpu" (the C backend) or "cuda_emulation" (the GPU
# backend's kernels, emulated on the CPU); set by main's --target.
TARGET = "cpu"


def run_c(jaxpr, args):
  """The outputs of the backend under test (TARGET) and the fallback
  warnings it gave."""
  with warnings.catch_warnings(record=True) as caught, \
       config.override("purejax_backend", "cpu"), config.override("purejax_compile_sync", True):
    warnings.simplefilter("always")
    _clear_warn_once()
    exe = backends.compile_jaxpr(jaxpr, TARGET)
    got = exe(*args)
  fallbacks = sorted({str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)
                      and str(w.message).startswith("purejax")})
  return got, getattr(exe, "source", None) is not None, fallbacks


def check_batch(programs):
  """Runs ``programs`` as one jitted function on both backends and compares."""
  report = Report()
  try:
    jaxpr, args = _trace(programs)
  except Exception:   # find the programs that do not trace (a generator bug)
    bad = []
    for i, p in enumerate(programs):
      try:
        _trace([p])
      except Exception:
        report.failures.append(Failure("generator", i, None, "does not trace",
                                       traceback.format_exc(limit=-3).splitlines()))
        bad.append(i)
    rest = check_batch([p for i, p in enumerate(programs) if i not in bad]) if bad else Report()
    keep = [i for i in range(len(programs)) if i not in bad]
    for f in rest.failures:
      f.program = None if f.program is None else keep[f.program]
    report.failures += rest.failures
    report.stats.update(rest.stats)
    return report
  try:
    with config.override("purejax_backend", "numpy"):
      expected = backends.compile_jaxpr(jaxpr, "numpy")(*args)
      bounded = bounded_eval(jaxpr, args)
  except Exception:   # not the C backend's doing
    report.failures.append(Failure("generator", None, None, "the reference run raised",
                                   traceback.format_exc(limit=-4).splitlines()))
    return report
  try:
    got, compiled, fallbacks = run_c(jaxpr, args)
  except Exception:
    report.failures.append(Failure("crash", None, None, "the C backend raised",
                                   traceback.format_exc(limit=-4).splitlines()))
    return report
  report.stats["compiled batches"] += compiled
  for message in fallbacks:
    report.failures.append(Failure("fallback", None, None, message))
  where = [(i, j) for i, p in enumerate(programs) for j in range(len(p.outputs))]
  for (i, j), e, g, (value, bound) in zip(where, expected, got, bounded):
    report.stats["outputs"] += 1
    if compare(e, value, None)[0] is not None:   # two runs of the same NumPy code
      report.failures.append(Failure("generator", i, j, "the bound evaluation disagrees with "
                                     "the NumPy backend"))
      continue
    message, idx = compare(e, g, bound)
    _count_elements(report.stats, e, bound)
    if message:
      kind = "generator" if message.startswith("generator") else "mismatch"
      details, positions = [], []
      if idx is not None and idx.size:
        details = describe_mismatch(e, g, bound, idx)
        positions = [np.unravel_index(k, np.shape(e)) for k in idx[:4]]
      report.failures.append(Failure(kind, i, j, message, details, positions))
  report.stats["programs"] += len(programs)
  return report


def _count_elements(stats, expected, bound):
  n = np.size(expected)
  if bound is None:
    stats["elements compared bit for bit"] += n
  else:
    finite = int(np.isfinite(bound).sum())
    stats["elements compared within a bound"] += finite
    stats["elements not comparable (unbounded)"] += n - finite


# -- running in a child process ----------------------------------------------------------------

def run_isolated(jobs, timeout, parallel=1, fork=True):
  """Runs each thunk of ``jobs`` (returning a Report) in a forked child, at
  most ``parallel`` at a time; yields (index, Report).  A child that dies
  or runs past ``timeout`` seconds gives a crash or timeout failure."""
  if not fork:
    for i, job in enumerate(jobs):
      yield i, _guarded(job)
    return
  pending, running = list(enumerate(jobs)), {}
  while pending or running:
    while pending and len(running) < parallel:
      i, job = pending.pop(0)
      r, w = os.pipe()
      pid = os.fork()
      if pid == 0:   # the child
        os.close(r)
        try:
          data = pickle.dumps(_guarded(job))
        except BaseException:
          data = pickle.dumps(_crash_report(traceback.format_exc()))
        with os.fdopen(w, "wb") as f:
          f.write(data)
        os._exit(0)
      os.close(w)
      running[r] = (i, pid, time.monotonic() + timeout, [])
    ready, _, _ = select.select(list(running), [], [], 0.5)
    now = time.monotonic()
    for r in list(running):
      i, pid, deadline, chunks = running[r]
      if r in ready:
        chunk = os.read(r, 1 << 20)
        if chunk:
          chunks.append(chunk)
          continue
      elif now < deadline:
        continue
      else:
        os.kill(pid, signal.SIGKILL)
      os.close(r)
      del running[r]
      _, status = os.waitpid(pid, 0)
      if chunks and os.WIFEXITED(status):
        yield i, pickle.loads(b"".join(chunks))
      elif now >= deadline:
        report = Report()
        report.failures.append(Failure("timeout", None, None, f"no result in {timeout} s"))
        yield i, report
      else:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        name = signal.Signals(sig).name if sig else f"exit status {os.WEXITSTATUS(status)}"
        yield i, _crash_report(f"the process died ({name})")


def _guarded(job):
  try:
    return job()
  except Exception:
    return _crash_report(traceback.format_exc())


def _crash_report(text):
  report = Report()
  report.failures.append(Failure("crash", None, None, text.strip().splitlines()[-1],
                                 text.strip().splitlines()[-12:]))
  return report


# -- reducing a failure -------------------------------------------------------------------------

def _fails_like(report, failure, program=None):
  for f in report.failures:
    if failure.kind == "mismatch" and f.kind == "mismatch" and (program is None or
                                                                  f.program == program):
      return f
    if failure.kind in CRASHES and f.kind in CRASHES:
      return f
  return None


def reduce_failure(programs, failure, run):
  """A smaller set of programs (ideally one short program) failing like
  ``failure``; ``run(programs)`` checks them (in a child).  Returns the
  programs and their failure."""
  def fails(progs, target=None):
    return _fails_like(run(progs), failure, target)

  if failure.program is not None:
    progs, target = programs, programs[failure.program]
    if fails([target]):
      progs = [target]
    else:   # it needs company: drop the others a half at a time
      others = [p for p in programs if p is not target]
      while others:
        half = others[:len(others) // 2] or others
        trial = [p for p in others if p not in half]
        if fails(trial + [target], len(trial)):
          others = trial
        elif len(half) == len(others):
          break
        else:
          others = others[len(others) // 2:] + half[:len(half) // 2]
          if not fails(others + [target], len(others)):
            others = [p for p in programs if p is not target]
            break
      progs = others + [target]
  else:
    progs = programs
    while len(progs) > 1:
      a, b = progs[:len(progs) // 2], progs[len(progs) // 2:]
      if fails(a):
        progs = a
      elif fails(b):
        progs = b
      else:
        break
  if len(progs) == 1:
    progs = [_reduce_program(progs[0], fails)]
  f = fails(progs, None if failure.kind in CRASHES else len(progs) - 1)
  return progs, f or failure


def _reduce_program(p, fails):
  """Fewer statements: the outputs it can do without dropped, then the
  earliest failing value alone, then statements replaced by their (small)
  values."""
  for name in list(p.outputs):
    if len(p.outputs) > 1:
      q = p.restricted([o for o in p.outputs if o != name])
      if fails([q], 0):
        p = q
  values = [v.name for s in p.stmts for v in s.outs]
  if len(values) > 1 and fails([Program(p.inputs, p.stmts, values, p.label)], 0):
    for name in values:   # the earliest value that differs, alone
      q = p.restricted([name])
      if fails([q], 0):
        p = q
        break
  for stmt in list(p.stmts[:-1])[::-1]:
    if stmt not in p.stmts or any(_size(v.shape) > 64 for v in stmt.outs):
      continue
    before = Program(p.inputs, p.stmts, [v.name for v in stmt.outs], p.label)
    jaxpr, args = _trace([before])
    with config.override("purejax_backend", "numpy"):
      arrays = backends.compile_jaxpr(jaxpr, "numpy")(*args)
    q = p.materialized(stmt, [np.asarray(a) for a in arrays]).restricted(p.outputs)
    if fails([q], 0):
      p = q
  return p


def _size(shape):
  return int(np.prod(shape, dtype=np.int64))


# -- printing a reproducer ------------------------------------------------------------------------

def _literal(a):
  a = np.asarray(a)
  text = repr(a.tolist()).replace("nan", "np.nan").replace("inf", "np.inf")
  dtype = "bool_" if a.dtype == np.bool_ else a.dtype.name
  return f"np.array({text}, dtype=np.{dtype})"


def reproducer(programs, failure, oracle_x64=None):
  """Python source reproducing ``failure`` with purejax alone (or, with
  ``oracle_x64`` not None, against JAX)."""
  lines = ["import numpy as np", "import purejax as jax", "import purejax.numpy as jnp",
           "from purejax import lax", "from purejax._src.config import config"]
  if any(spec[0] == "gen" and _size(v.shape) > 16 for p in programs for v, spec in p.inputs):
    lines += ["import sys; sys.path.insert(0, 'benchmarks')",
              "from fuzz_programs import make_input"]
  names, args = [], []
  for k, p in enumerate(programs):
    name = "f" if len(programs) == 1 else f"f{k}"
    lines += ["", p.source(name).rstrip()]
    names.append((name, len(p.inputs)))
    for v, spec in p.inputs:
      if spec[0] == "gen" and _size(v.shape) > 16:
        args.append(f"make_input({v.shape}, {v.dtype!r}, {spec[1]}, {spec[2]!r})")
      else:
        args.append(_literal(make_input(v.shape, v.dtype, *spec[1:]) if spec[0] == "gen"
                             else spec[1]))
  if len(programs) > 1:
    calls, k = [], 0
    for name, n in names:
      calls.append(f"{name}(*a[{k}:{k + n}])")
      k += n
    lines += ["", "def f(*a):", f"  return {' + '.join(calls)}"]
  lines += ["", "args = [" + ",\n        ".join(args) + "]"]
  if oracle_x64 is not None:
    from fuzz_oracle import oracle_tail
    defs = [p.source(n) for p, (n, _) in zip(programs, names)]
    if len(programs) > 1:
      defs.append("\n".join(lines[lines.index("def f(*a):"):][:2]))
    lines += ["SOURCE = " + repr("\n".join(defs))]
    lines += oracle_tail(oracle_x64)
  else:
    lines += ["with config.override('purejax_backend', 'numpy'):",
              "  expected = jax.jit(f)(*args)",
              "with config.override('purejax_backend', 'cpu'), "
              "config.override('purejax_compile_sync', True):",
              "  got = jax.jit(f)(*args)"]
  out = "" if failure.output is None else f"[{failure.output}]"
  lines += [f"# {failure.kind}: got{out} vs expected{out}: {failure.message}"]
  lines += [f"#   {d}" for d in failure.details]
  if len(programs) == 1 and failure.output is not None and failure.positions:
    lines += _inputs_at(programs[0], failure)
  return "\n".join(lines)


def _inputs_at(program, failure):
  """The inputs of the failing output's shape, at the differing elements."""
  out = program.values_by_name().get(program.outputs[failure.output])
  lines = []
  for (v, _), a in zip(program.inputs, program.arrays()):
    if out is not None and v.shape == out.shape and v.shape:
      vals = ", ".join(f"{a[tuple(int(k) for k in pos)]!r}" for pos in failure.positions)
      lines.append(f"#   {v.name} there: {vals}")
  return lines


# -- the script ---------------------------------------------------------------------------------

def batch_programs(seed, family, count, max_ops=10, oracle=None, x64=False):
  """The programs of one batch (the same for the same arguments) and their generator."""
  fuzz_bounds.against_jax(oracle == "jax")
  with config.override("jax_enable_x64", x64):
    gen = Gen(seed, family, max_ops)
    if oracle is not None:
      gen.input_kind = "normal"
    return [gen.program() for _ in range(count)], gen


def batch_job(seed, family, count, max_ops=10, oracle=None, x64=False):
  """A job: generate ``count`` programs from ``seed`` and check them (C
  against NumPy, or with ``oracle="jax"`` against JAX)."""
  def job():
    programs, gen = batch_programs(seed, family, count, max_ops, oracle, x64)
    report = checker(oracle, x64)(programs)
    report.stats.update({f"rejected: {k}": n for k, n in gen.rejected.items()})
    if report.failures:
      report.programs = programs
    return report
  return job


def checker(oracle, x64):
  """The check of a batch of programs for ``oracle`` (None: C vs NumPy)."""
  if oracle == "jax":
    from fuzz_oracle import check_batch_oracle
    return lambda programs: check_batch_oracle(programs, x64)

  def check(programs):
    with config.override("jax_enable_x64", x64):
      return check_batch(programs)
  return check


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--programs", type=int, default=1000)
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--family", choices=sorted(FAMILIES), action="append",
                  help="program families to draw from (default: all, in turn)")
  ap.add_argument("--per-batch", type=int, default=30, help="programs per compilation")
  ap.add_argument("--max-ops", type=int, default=10, help="statements per program, at most")
  ap.add_argument("--jobs", type=int, default=1, help="batches run at once")
  ap.add_argument("--timeout", type=float, default=300, help="seconds per batch")
  ap.add_argument("--no-fork", action="store_true", help="run in this process")
  ap.add_argument("--no-reduce", action="store_true", help="print failures unreduced")
  ap.add_argument("--max-reports", type=int, default=10, help="failures reduced and printed")
  ap.add_argument("--oracle", choices=["jax"], help="compare with the real JAX instead of "
                  "the NumPy backend (needs JAX installed)")
  ap.add_argument("--x64", action="store_true", help="64-bit types on (jax_enable_x64)")
  ap.add_argument("--target", choices=["cpu", "cuda_emulation"], default="cpu",
                  help="the backend tested: the C backend, or the GPU backend's kernels "
                       "emulated on the CPU")
  opts = ap.parse_args(argv)
  global TARGET
  TARGET = opts.target
  if opts.oracle == "jax":
    from fuzz_oracle import available
    if not available():
      ap.error("--oracle jax needs JAX installed")
  families = opts.family or sorted(FAMILIES)
  nbatch = -(-opts.programs // opts.per_batch)
  jobs = []
  for b in range(nbatch):
    count = min(opts.per_batch, opts.programs - b * opts.per_batch)
    jobs.append((opts.seed * 1_000_003 + b, families[b % len(families)], count, opts.max_ops,
                 opts.oracle, opts.x64))
  t0 = time.perf_counter()
  totals, failed = collections.Counter(), []
  for i, report in run_isolated([batch_job(*j) for j in jobs], opts.timeout, opts.jobs,
                                not opts.no_fork):
    totals.update(report.stats)
    seed, family = jobs[i][:2]
    programs = report.programs
    if programs is None and any(f.kind in CRASHES for f in report.failures):
      programs = batch_programs(*jobs[i])[0]   # the child died with them: make them again
    for f in report.failures:
      totals[f"failures: {f.kind}"] += 1
      failed.append((seed, family, programs, f))
      print(f"batch seed={seed} ({family}): {f!r}", flush=True)
  elapsed = time.perf_counter() - t0
  print(f"\n{opts.programs} programs in {nbatch} batches, {elapsed:.1f} s")
  for key in sorted(k for k in totals if not k.startswith("rejected")):
    print(f"  {key}: {totals[key]}")
  rejected = collections.Counter({k: n for k, n in totals.items() if k.startswith("rejected")})
  print("  proposals rejected by the generator (most common): " +
        ", ".join(f"{k[10:]} x{n}" for k, n in rejected.most_common(6)))
  for seed, family, programs, f in failed[:opts.max_reports]:
    print(f"\n==== {f.kind} in batch seed={seed} ({family})")
    if programs is None:
      print("\n".join([f.message] + f.details))
      continue
    if not opts.no_reduce and f.kind != "generator":
      def run(progs):
        check = checker(opts.oracle, opts.x64)
        return next(run_isolated([lambda: check(progs)], opts.timeout, 1,
                                 not opts.no_fork))[1]
      with config.override("jax_enable_x64", opts.x64):
        programs, f = reduce_failure(programs, f, run)
    elif f.program is not None:
      programs, f.program = [programs[f.program]], 0
    print(reproducer(programs, f, opts.x64 if opts.oracle else None))
  return 1 if any(f.kind != "generator" for *_, f in failed) else 0


if __name__ == "__main__":
  sys.exit(main())
