"""The parallel benchmarks of ``benchmarks/run.py`` (issue 12, Performance):

1. a data-parallel training step of the MLP workload (3x512, grad + Adam)
   on a global batch of 256: ``pmap`` over 2 CPU devices (128 examples
   each, gradients averaged with ``pmean``) against the same step ``jit``ted
   on 1 device, which either uses every core (its kernels' threads) or one
   core (``purejax_num_threads=1``; XLA: ``--xla_cpu_multi_thread_eigen=false``);
2. ``psum`` of 16 MB (4M float32 per device) across 2 devices inside
   ``pmap``, against a NumPy copy of the same 16 MB;
3. the step of 1. over 2 MPI processes x 1 device (``mpirun -n 2``)
   against 1 process running the whole batch.

Every measurement runs in a fresh subprocess (``--worker NAME``), so the
device count is set before purejax or JAX starts and no thread pool of one
measurement lingers in another.  Variants of one worker are interleaved
(rounds of a few calls each, medians over the rounds): on a small shared
machine timings drift.

    python benchmarks/parallel.py [--quick]        # prints the markdown section
    python benchmarks/run.py --parallel [--quick]  # the same, into results.md
"""
import argparse
import functools
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
sys.path.insert(0, _HERE)   # workloads.py, beside this file
DEVICES = 2
GLOBAL_BATCH = 256
PSUM_ELEMENTS = 4 << 20          # per device: 16 MB of float32
TARGET_SPEEDUP, TARGET_PSUM = 1.6, 2.0
_RESULT = "RESULT "               # prefix of a worker's JSON line on stdout


# -- the workloads, written once for purejax and JAX ---------------------------------

def _mlp_data(quick, batch):
  """The MLP workload's parameters (benchmarks/workloads.py) and a batch."""
  import workloads
  d = workloads._mlp_data(quick)
  width, classes = d["x"].shape[1], d["y"].shape[1]
  rng = np.random.RandomState(1)
  x = rng.standard_normal((batch, width)).astype(np.float32)
  y = np.eye(classes, dtype=np.float32)[rng.randint(0, classes, batch)]
  return d["params"], x, y


def _make_step(jax, jnp, axis_name=None):
  """One Adam step of the MLP workload; with ``axis_name``, the gradients and
  the loss are averaged over that axis (data parallelism)."""
  import workloads as w
  loss = w.mlp_loss(jax, jnp)

  def step(state, x, y):
    params, m, v, t = state
    value, grads = jax.value_and_grad(loss)(params, x, y)
    if axis_name is not None:
      grads = jax.lax.pmean(grads, axis_name)
      value = jax.lax.pmean(value, axis_name)
    return w.adam_update(jax, jnp, params, m, v, t, grads), value

  return step


def _initial_state(jax, jnp, params, copies=None):
  tree_map = jax.tree_util.tree_map
  if copies is not None:   # one replica per device, stacked
    params = tree_map(lambda p: np.stack([p] * copies), params)
  params = tree_map(jnp.asarray, params)
  zeros = tree_map(jnp.zeros_like, params)
  t = jnp.zeros((copies,) if copies else (), jnp.float32)
  return params, zeros, zeros, t


class _Loop:
  """A training loop: each call runs one step on the carried state."""

  def __init__(self, step, state, x, y, block):
    self.step, self.state, self.x, self.y, self.block = step, state, x, y, block
    self.losses = []

  def __call__(self):
    self.state, value = self.step(self.state, self.x, self.y)
    self.block(value)
    self.losses.append(float(np.asarray(value).reshape(-1)[0]))


def _interleaved(variants, quick, block, seconds=6.0, agree=lambda n: n):
  """Median seconds per call of each thunk in ``variants`` (name -> thunk),
  timed in alternating rounds; the first calls warm up (compile).  Several
  processes running collectives must make as many calls: ``agree`` turns
  each one's calls per round into the count they all use."""
  for thunk in variants.values():
    block(thunk())
  per_round = {}
  for name, thunk in variants.items():   # calls per round: ~50 ms each
    t0 = time.perf_counter()
    block(thunk())
    per_round[name] = agree(max(1, min(50, int(0.05 / max(time.perf_counter() - t0, 1e-6)))))
  rounds = 1 if quick else max(5, min(41, int(seconds / (0.05 * len(variants)))))
  samples = {name: [] for name in variants}
  for _ in range(rounds):
    for name, thunk in variants.items():
      n = 1 if quick else per_round[name]
      t0 = time.perf_counter()
      for _ in range(n):
        block(thunk())
      samples[name].append((time.perf_counter() - t0) / n)
  return {name: statistics.median(s) for name, s in samples.items()}


def _memcpy(n):
  src, dst = np.ones(n, np.float32), np.empty(n, np.float32)
  return lambda: np.copyto(dst, src)


# -- workers (each in its own process) --------------------------------------------------

def worker_purejax(quick):
  """Data-parallel step and psum with purejax's C backend on 2 devices."""
  sys.path.insert(0, _ROOT)
  import purejax as jax
  import purejax.numpy as jnp
  from purejax._src.config import config
  jax.config.update("jax_num_cpu_devices", DEVICES)
  config.update("purejax_backend", "cpu")
  config.update("purejax_compile_sync", True)
  batch = 16 if quick else GLOBAL_BATCH
  params, x, y = _mlp_data(quick, batch)
  out = {"devices": len(jax.devices()), "batch": batch}

  step = _make_step(jax, jnp)
  # Separate jit objects: the thread count is built into the compiled code.
  one_all, one_core = jax.jit(step), jax.jit(lambda *a: step(*a))
  par = jax.pmap(_make_step(jax, jnp, "batch"), axis_name="batch")
  xs, ys = (jnp.asarray(a.reshape((DEVICES, -1) + a.shape[1:])) for a in (x, y))
  loops = {"jit_all": _Loop(one_all, _initial_state(jax, jnp, params), jnp.asarray(x),
                            jnp.asarray(y), jax.block_until_ready),
           "jit_1core": _Loop(one_core, _initial_state(jax, jnp, params), jnp.asarray(x),
                              jnp.asarray(y), jax.block_until_ready),
           "pmap": _Loop(par, _initial_state(jax, jnp, params, DEVICES), xs, ys,
                         jax.block_until_ready)}

  def in_one_core():
    with config.override("purejax_num_threads", 1):
      loops["jit_1core"]()
  variants = {"jit_all": loops["jit_all"], "jit_1core": in_one_core, "pmap": loops["pmap"]}
  out["mlp"] = _interleaved(variants, quick, lambda r: r)
  out["mlp_agree"] = _losses_agree(loops["jit_all"].losses, loops["pmap"].losses)

  n = 1024 if quick else PSUM_ELEMENTS
  xs = jnp.asarray(np.ones((DEVICES, n), np.float32))
  psum = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")
  ident = jax.pmap(lambda v: v, axis_name="i")
  out["psum"] = _interleaved({"psum": lambda: psum(xs), "identity": lambda: ident(xs),
                              "memcpy": _memcpy(n), "all_sum": _spmd_all_sum(n)},
                             quick, jax.block_until_ready)
  out["psum_bytes"] = 4 * n
  out["psum_agree"] = bool(np.all(np.asarray(psum(xs)) == DEVICES))
  return out


def _spmd_all_sum(n):
  """The collective alone: purejax's Communicator.all_sum over 2 device threads."""
  from purejax._src import spmd
  comm = spmd.Communicator(("i",), (DEVICES,))
  blocks = [(np.ones(n, np.float32),) for _ in range(DEVICES)]
  return lambda: spmd.run(comm, lambda pos, v: comm.all_sum(pos, v, ("i",)), blocks)


def _losses_agree(a, b):
  """Whether two runs of the same steps from the same start saw the same losses."""
  k = min(len(a), len(b))
  return bool(k and np.allclose(a[:k], b[:k], rtol=1e-3, atol=1e-4))


def worker_jax(quick, one_core=False):
  """The same with JAX (XLA_FLAGS gives it 2 CPU devices)."""
  import jax
  import jax.numpy as jnp
  batch = 16 if quick else GLOBAL_BATCH
  params, x, y = _mlp_data(quick, batch)
  out = {"devices": len(jax.devices()), "version": jax.__version__}
  step = _make_step(jax, jnp)
  one = _Loop(jax.jit(step), _initial_state(jax, jnp, params), jnp.asarray(x), jnp.asarray(y),
              jax.block_until_ready)
  if one_core:
    out["mlp"] = _interleaved({"jit_1core": one}, quick, lambda r: r)
    return out
  shard = jax.pmap(lambda a: a)   # lays the batch out over the devices once
  xs, ys = (shard(a.reshape((DEVICES, -1) + a.shape[1:])) for a in (x, y))
  par = _Loop(jax.pmap(_make_step(jax, jnp, "batch"), axis_name="batch"),
              _initial_state(jax, jnp, params, DEVICES), xs, ys, jax.block_until_ready)
  out["mlp"] = _interleaved({"jit_all": one, "pmap": par}, quick, lambda r: r)
  out["mlp_agree"] = _losses_agree(one.losses, par.losses)
  n = 1024 if quick else PSUM_ELEMENTS
  xs = shard(np.ones((DEVICES, n), np.float32))
  psum = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")
  ident = jax.pmap(lambda v: v, axis_name="i")
  out["psum"] = _interleaved({"psum": lambda: psum(xs), "identity": lambda: ident(xs),
                              "memcpy": _memcpy(n)}, quick, jax.block_until_ready)
  out["psum_agree"] = bool(np.all(np.asarray(psum(xs)) == DEVICES))
  return out


def worker_mpi(quick):
  """The step over this MPI run's processes (1 device each), or, in a single
  process without mpirun, the whole batch on 1 device (1 core and all cores)."""
  sys.path.insert(0, _ROOT)
  import purejax as jax
  import purejax.numpy as jnp
  from purejax._src.config import config
  config.update("purejax_backend", "cpu")
  config.update("purejax_compile_sync", True)
  batch = 16 if quick else GLOBAL_BATCH
  params, x, y = _mlp_data(quick, batch)
  multi = "OMPI_COMM_WORLD_SIZE" in os.environ or "PMI_SIZE" in os.environ
  if not multi:
    step = _make_step(jax, jnp)
    loops = {"jit_all": _Loop(jax.jit(step), _initial_state(jax, jnp, params),
                              jnp.asarray(x), jnp.asarray(y), jax.block_until_ready),
             "jit_1core": _Loop(jax.jit(lambda *a: step(*a)), _initial_state(jax, jnp, params),
                                jnp.asarray(x), jnp.asarray(y), jax.block_until_ready)}

    def in_one_core():
      with config.override("purejax_num_threads", 1):
        loops["jit_1core"]()
    times = _interleaved({"jit_all": loops["jit_all"], "jit_1core": in_one_core}, quick,
                         lambda r: r)
    return {"mlp": times, "losses": loops["jit_all"].losses[:5]}
  jax.distributed.initialize()
  me, n_dev = jax.process_index(), jax.device_count()
  ids = [d.id for d in jax.local_devices()]
  xs = x.reshape((n_dev, -1) + x.shape[1:])[ids]
  ys = y.reshape((n_dev, -1) + y.shape[1:])[ids]
  par = _Loop(jax.pmap(_make_step(jax, jnp, "batch"), axis_name="batch"),
              _initial_state(jax, jnp, params, len(ids)), xs, ys, jax.block_until_ready)
  from mpi4py import MPI
  # Every process makes as many calls (each has its collectives).
  times = _interleaved({"pmap": par}, quick, lambda r: r,
                       agree=lambda n: MPI.COMM_WORLD.allreduce(n, op=MPI.MIN))
  out = {"mlp": times, "processes": jax.process_count(), "rank": me,
         "losses": par.losses[:5]}
  everyone = MPI.COMM_WORLD.gather(out, root=0)   # one line of output, from rank 0
  jax.distributed.shutdown()
  return {"ranks": everyone} if me == 0 else None


# -- orchestration -------------------------------------------------------------------

def _launch(cmd, env, timeout):
  """Runs a worker; (its result dict, None) or (None, why it failed)."""
  try:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=_ROOT)
  except subprocess.TimeoutExpired:
    return None, f"timed out after {timeout} s"
  lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(_RESULT)]
  if proc.returncode != 0 or len(lines) != 1:
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return None, f"exit status {proc.returncode}: {tail[:300]}"
  try:
    return json.loads(lines[0][len(_RESULT):]), None
  except ValueError as e:
    return None, f"unreadable result: {e}"


def _worker_cmd(name, quick, *extra):
  return [sys.executable, os.path.abspath(__file__), "--worker", name,
          *(["--quick"] if quick else []), *extra]


def _env(devices=None, xla_extra=""):
  env = dict(os.environ, PYTHONPATH=_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
  env.pop("XLA_FLAGS", None)
  if devices is not None:
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices} {xla_extra}".strip()
  return env


def mpi_problem():
  """Why the MPI benchmark cannot run here, or None."""
  if shutil.which("mpirun") is None:
    return "mpirun not found (apt-get install openmpi-bin libopenmpi-dev)"
  if importlib.util.find_spec("mpi4py") is None:
    return 'mpi4py not installed (pip install "purejax[mpi]")'
  return None


def _mpirun(n):
  version = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout
  extra = ["--oversubscribe"] if "Open MPI" in version else []
  return ["mpirun", *extra, "-n", str(n)]


def run(quick=False, with_jax=True, log=print):
  """Runs every worker; returns {"purejax": ..., "jax": ..., "mpi": ...,
  "notes": {...}} (a missing part has a note saying why)."""
  timeout = 120 if quick else 300
  results, notes = {}, {}
  got, why = _launch(_worker_cmd("purejax", quick), _env(), timeout)
  if got:
    results["purejax"] = got
  else:
    notes["purejax"] = why
  log(f"  parallel [purejax]: {got or why}")
  if with_jax and importlib.util.find_spec("jax") is None:
    notes["jax"] = "not installed"
  elif with_jax:
    got, why = _launch(_worker_cmd("jax", quick), _env(DEVICES), timeout)
    if got:
      results["jax"] = got
      one, _ = _launch(_worker_cmd("jax", quick, "--one-core"),
                       _env(DEVICES, "--xla_cpu_multi_thread_eigen=false"), timeout)
      if one:
        results["jax"]["mlp"]["jit_1core"] = one["mlp"]["jit_1core"]
    else:
      notes["jax"] = why
    log(f"  parallel [jax]: {results.get('jax', why)}")
  problem = mpi_problem()
  if problem:
    notes["mpi"] = problem
    log(f"  parallel [mpi]: skipped: {problem}")
    return dict(results, notes=notes)
  env = dict(_env(), OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
  multi, single = [], []
  for _ in range(1 if quick else 2):   # alternate the launches: timings drift
    got, why = _launch(_mpirun(2) + _worker_cmd("mpi", quick), env, timeout)
    if not got:
      notes["mpi"] = why
      break
    multi.append(got["ranks"])
    got, why = _launch(_worker_cmd("mpi", quick), env, timeout)
    if not got:
      notes["mpi"] = why
      break
    single.append(got)
  if multi and single:
    results["mpi"] = {
        "pmap": statistics.median(max(r["mlp"]["pmap"] for r in m) for m in multi),
        "jit_1core": statistics.median(s["mlp"]["jit_1core"] for s in single),
        "jit_all": statistics.median(s["mlp"]["jit_all"] for s in single),
        "processes": multi[0][0]["processes"],
        "agree": all(_losses_agree(single[0]["losses"], r["losses"]) for r in multi[0])}
  log(f"  parallel [mpi]: {results.get('mpi', notes.get('mpi'))}")
  return dict(results, notes=notes)


# -- reporting ----------------------------------------------------------------------

def _ms(seconds):
  return "n/a" if seconds is None else f"{seconds * 1e3:.2f} ms"


def _x(r):
  return "n/a" if r is None else f"{r:.2f}x"


def _get(d, *keys):
  for k in keys:
    if not isinstance(d, dict) or k not in d:
      return None
    d = d[k]
  return d


def _div(a, b):
  return None if a is None or b is None or b == 0 else a / b


def _minus(a, b):
  """a - b, or 0 when noise makes it negative."""
  return None if a is None or b is None else max(0.0, a - b)


def _met(value, target, at_least):
  if value is None:
    return ""
  return " met" if (value >= target if at_least else value <= target) else " missed"


def rows(results):
  """The table rows: (measurement, purejax, JAX, target)."""
  p, j, m = results.get("purejax", {}), results.get("jax", {}), results.get("mpi", {})
  out = []
  b = p.get("batch", GLOBAL_BATCH)
  size = p.get("psum_bytes", 4 * PSUM_ELEMENTS)
  mb = f"{size / 2 ** 20:.3g} MB" if size >= 2 ** 20 else f"{size / 2 ** 10:.3g} KB"
  for key, text in (("jit_all", f"MLP step, batch {b}, jit on 1 device (all cores)"),
                    ("jit_1core", f"MLP step, batch {b}, jit on 1 device (1 core)"),
                    ("pmap", f"MLP step, batch {b}, pmap over 2 devices (pmean of grads)")):
    out.append((text, _ms(_get(p, "mlp", key)), _ms(_get(j, "mlp", key)), ""))
  for base, text in (("jit_1core", "1 core"), ("jit_all", "all cores")):
    rp = _div(_get(p, "mlp", base), _get(p, "mlp", "pmap"))
    rj = _div(_get(j, "mlp", base), _get(j, "mlp", "pmap"))
    target = f">= {TARGET_SPEEDUP}x{_met(rp, TARGET_SPEEDUP, True)}" if base == "jit_1core" else ""
    out.append((f"throughput, 2 devices / 1 device ({text})", _x(rp), _x(rj), target))
  psum_p, psum_j = (_minus(_get(r, "psum", "psum"), _get(r, "psum", "identity"))
                    for r in (p, j))
  out += [
      (f"psum {mb} over 2 devices: pmap call", _ms(_get(p, "psum", "psum")),
       _ms(_get(j, "psum", "psum")), ""),
      ("identity pmap of the same input (split + assemble)", _ms(_get(p, "psum", "identity")),
       _ms(_get(j, "psum", "identity")), ""),
      ("psum itself (pmap psum - identity pmap)", _ms(psum_p), _ms(psum_j), ""),
      ("the collective alone (spmd Communicator.all_sum)", _ms(_get(p, "psum", "all_sum")),
       "", ""),
      (f"NumPy copy of {mb} (memcpy)", _ms(_get(p, "psum", "memcpy")),
       _ms(_get(j, "psum", "memcpy")), "")]
  rp = _div(psum_p, _get(p, "psum", "memcpy"))
  out.append(("psum itself / memcpy", _x(rp), _x(_div(psum_j, _get(j, "psum", "memcpy"))),
              f"<= {TARGET_PSUM}x{_met(rp, TARGET_PSUM, False)}"))
  out.append(("pmap psum call / memcpy", _x(_div(_get(p, "psum", "psum"),
                                                  _get(p, "psum", "memcpy"))),
              _x(_div(_get(j, "psum", "psum"), _get(j, "psum", "memcpy"))), ""))
  if m:
    n = m.get("processes", 2)
    out += [(f"MLP step, batch {b}, pmap over {n} MPI processes x 1 device", _ms(m["pmap"]),
             "", ""),
            (f"MLP step, batch {b}, 1 process, 1 device (1 core / all cores)",
             f"{_ms(m['jit_1core'])} / {_ms(m['jit_all'])}", "", ""),
            (f"throughput, {n} processes / 1 process (1 core / all cores)",
             f"{_x(_div(m['jit_1core'], m['pmap']))} / {_x(_div(m['jit_all'], m['pmap']))}",
             "", "")]
  return out


def to_markdown(results, quick=False):
  """The parallel section of results.md."""
  batch = _get(results, "purejax", "batch") or GLOBAL_BATCH
  lines = ["## Parallel (2 CPU devices, issue 12)", "",
           f"{'With --quick (tiny sizes, 1 repeat): ' if quick else ''}"
           "Medians of interleaved rounds, each in a fresh process. MLP: the mlp_step "
           f"workload (3x512, grad + Adam) on a global batch of {batch}; pmap gives "
           f"each device {batch // DEVICES} examples and averages the gradients with "
           "pmean. A device's compiled code runs on cores/devices threads; 1 core: "
           "purejax_num_threads=1 (JAX: --xla_cpu_multi_thread_eigen=false).", ""]
  lines += ["| measurement | purejax C | JAX | target |", "|---|---|---|---|"]
  lines += ["| " + " | ".join(r) + " |" for r in rows(results)]
  checks = []
  for part in ("purejax", "jax"):
    for key, what in (("mlp_agree", "pmap and jit losses"), ("psum_agree", "psum values")):
      if _get(results, part, key) is False:
        checks.append(f"- MISMATCH [{part}]: {what} differ")
  if _get(results, "mpi", "agree") is False:
    checks.append("- MISMATCH [mpi]: the 2-process losses differ from 1 process's")
  notes = [f"- {k}: n/a ({v})" for k, v in results.get("notes", {}).items()]
  if checks or notes:
    lines += [""] + checks + notes
  lines.append("")
  return "\n".join(lines)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--quick", action="store_true", help="tiny sizes, 1 repeat")
  parser.add_argument("--worker", choices=("purejax", "jax", "mpi"), help=argparse.SUPPRESS)
  parser.add_argument("--one-core", action="store_true", help=argparse.SUPPRESS)
  parser.add_argument("--no-jax", action="store_true", help="skip JAX's numbers")
  args = parser.parse_args(argv)
  if args.worker:
    fn = {"purejax": worker_purejax, "mpi": worker_mpi,
          "jax": functools.partial(worker_jax, one_core=args.one_core)}[args.worker]
    out = fn(args.quick)
    if out is not None:
      print(_RESULT + json.dumps(out), flush=True)
    return 0
  print(to_markdown(run(args.quick, not args.no_jax), args.quick))
  return 0


if __name__ == "__main__":
  sys.exit(main())
