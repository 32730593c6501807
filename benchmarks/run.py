"""Side-by-side timings of the workloads in ``benchmarks/workloads.py``:
purejax with its C backend, purejax with its NumPy backend, hand-written
NumPy, and JAX when installed, all in one run.  Prints medians and ratios to
JAX, and writes ``results.md`` (plus ``results.png`` when matplotlib is
installed) into the output folder.

    python benchmarks/run.py                      # everything
    python benchmarks/run.py --quick              # tiny sizes, 1 repeat
    python benchmarks/run.py --only selu,dot --backends cpu,jax --out /tmp/b
    python benchmarks/run.py --parallel           # only the parallel section

The full run (no --only, with the cpu column) ends with the parallel
benchmarks of ``benchmarks/parallel.py`` (2 CPU devices, MPI; about a
minute); ``--parallel`` runs only those and writes ``parallel.md``,
``--no-parallel`` skips them.
"""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

import numpy as np

# Runs from a checkout: the sibling module and the repository's purejax.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]
import parallel  # noqa: E402
import workloads  # noqa: E402

import purejax  # noqa: E402
import purejax.numpy as pjnp  # noqa: E402
from purejax._src.config import config  # noqa: E402

COLUMNS = ("cpu", "gpu", "numpy", "plain", "jax")
DEFAULT_COLUMNS = ("cpu", "numpy", "plain", "jax")   # gpu: only where CuPy finds a GPU
LABELS = {"cpu": "purejax C", "gpu": "purejax GPU", "numpy": "purejax NumPy", "plain": "NumPy", "jax": "JAX"}
DEFAULT_OUT = os.path.join(_HERE, "results")
# Seconds of timed calls aimed at per cell (after warm-up), and the least and
# most repeats a median is taken over.
BUDGET_S, MIN_REPEAT, MAX_REPEAT = 1.0, 5, 31


def _median_per_call(thunk, block, kind):
  """Median seconds per call of ``thunk``, timeit-style: the number of calls per
  sample grows until a sample takes 20 ms, then enough samples fill the budget."""
  if kind == workloads.FIRST:
    # Each call is a new compilation: one call per sample, fewer when slow.
    t0 = time.perf_counter()
    block(thunk())
    first = time.perf_counter() - t0
    samples = [first]
    count = min(MAX_REPEAT, max(3, int(BUDGET_S / max(first, 1e-9))))
    for _ in range(count - 1):
      t0 = time.perf_counter()
      block(thunk())
      samples.append(time.perf_counter() - t0)
    return statistics.median(samples)
  number = 1
  while True:
    t0 = time.perf_counter()
    for _ in range(number):
      block(thunk())
    elapsed = time.perf_counter() - t0
    if elapsed >= 0.02 or number >= 1 << 20:
      break
    number *= 10 if elapsed < 0.002 else 2
  repeat = max(MIN_REPEAT, min(MAX_REPEAT, int(BUDGET_S / elapsed)))
  if elapsed > BUDGET_S:   # one slow call: a median of 3 is enough
    repeat = 3
  samples = [elapsed / number]
  for _ in range(repeat - 1):
    t0 = time.perf_counter()
    for _ in range(number):
      block(thunk())
    samples.append((time.perf_counter() - t0) / number)
  return statistics.median(samples)


def _time(thunk, block, kind, quick):
  """(seconds per call, outputs of the warm-up call)."""
  out = block(thunk())          # warm-up: traces and compiles
  if quick:
    t0 = time.perf_counter()
    block(thunk())
    return time.perf_counter() - t0, out
  return _median_per_call(thunk, block, kind), out


def _identity(x):
  return x


def cpu_backend_problem():
  """Why the C backend cannot be timed, or None when it can."""
  previous = config.purejax_backend
  try:
    config.update("purejax_backend", "cpu")
    with config.override("purejax_compile_sync", True):
      x = np.arange(4, dtype=np.float32)
      f = purejax.jit(lambda x: x * 2.0 + 1.0)
      if not np.array_equal(np.asarray(f(x)), x * 2 + 1):
        return "wrong result on a smoke test"
      # Until the backend is wired into jit, the executable is the NumPy one.
      from purejax._src import pjit
      exe = pjit.executable_for(f.trace(x).jaxpr)
      if (getattr(exe, "__module__", None) or "").endswith("numpy_backend"):
        return "jit does not use it yet"
  except Exception as e:  # noqa: BLE001  (report anything, go on)
    return f"selecting it failed: {type(e).__name__}: {e}"
  finally:
    config.update("purejax_backend", previous)
  return None


def _run_cell(column, w, data, quick, jax_mods):
  """Times one workload in one column: (seconds, outputs as NumPy) or an error."""
  if column == "plain":
    seconds, out = _time(w.numpy(data), _identity, w.kind, quick)
    return seconds, [np.asarray(v) for v in _leaves(w.check(out))]
  if column == "jax":
    jax, jnp = jax_mods
    seconds, out = _time(w.make(jax, jnp, data), jax.block_until_ready, w.kind, quick)
    return seconds, [np.asarray(v) for v in jax.tree_util.tree_leaves(w.check(out))]
  if column == "gpu":   # inputs made by jnp.asarray land on the GPU, and run there
    with config.override("jax_platforms", "cuda,cpu"):
      seconds, out = _time(w.make(purejax, pjnp, data), purejax.block_until_ready, w.kind,
                           quick)
      return seconds, [np.asarray(v) for v in purejax.tree_util.tree_leaves(w.check(out))]
  # Steady-state timings compile before the first call; time to first result
  # keeps the configured (by default tiered) compilation.
  sync = True if w.kind != workloads.FIRST else config.purejax_compile_sync
  with config.override("purejax_backend", column), config.override("purejax_compile_sync", sync):
    seconds, out = _time(w.make(purejax, pjnp, data), purejax.block_until_ready, w.kind, quick)
    return seconds, [np.asarray(v) for v in purejax.tree_util.tree_leaves(w.check(out))]


def _leaves(x):
  if isinstance(x, (list, tuple)):
    return [leaf for item in x for leaf in _leaves(item)]
  return [x]


def _agrees(got, want):
  if len(got) != len(want):
    return False
  for g, w in zip(got, want):
    if g.shape != w.shape:
      return False
    scale = float(np.max(np.abs(w))) if w.size else 0.0
    if not np.allclose(g, w, rtol=2e-3, atol=2e-3 * scale + 1e-6):
      return False
  return True


def run(names, columns, quick, log=print):
  """Times every workload in ``names`` in every column; returns the rows."""
  jax_mods, notes = None, {}
  if "jax" in columns:
    try:
      import jax
      import jax.numpy as jnp
      jax_mods = (jax, jnp)
    except ImportError:
      notes["jax"] = "not installed"
  if "cpu" in columns:
    problem = cpu_backend_problem()
    if problem:
      notes["cpu"] = problem
  if "gpu" in columns:
    from purejax._src.backends.cuda import gpu_runtime
    if not gpu_runtime.device_count():
      notes["gpu"] = "no GPU found through CuPy"
  rows = []
  for w in workloads.WORKLOADS:
    if w.name not in names:
      continue
    data = w.data(quick)
    row = {"workload": w, "times": {}, "errors": {}, "mismatch": []}
    reference = None
    for column in COLUMNS:
      if column not in columns or column in notes:
        continue
      try:
        seconds, values = _run_cell(column, w, data, quick, jax_mods)
      except Exception as e:  # noqa: BLE001  (a failing cell must not stop the run)
        row["errors"][column] = f"{type(e).__name__}: {e}"
        log(f"  {w.name} [{column}] failed:\n{traceback.format_exc()}")
        continue
      row["times"][column] = seconds
      # The first column that ran is the reference the others must agree with.
      if reference is None:
        reference = values
      elif w.kind != workloads.FIRST and not _agrees(values, reference):
        row["mismatch"].append(column)
    rows.append(row)
    log(_format_line(row, columns))
  return rows, notes


# -- reporting ----------------------------------------------------------------

def _fmt_time(seconds):
  if seconds is None:
    return "n/a"
  if seconds < 1e-3:
    return f"{seconds * 1e6:.1f} us"
  if seconds < 1:
    return f"{seconds * 1e3:.2f} ms"
  return f"{seconds:.2f} s"


def _ratio(row, column):
  t, ref = row["times"].get(column), row["times"].get("jax")
  return None if t is None or ref is None else t / ref


def _fmt_ratio(r):
  if r is None:
    return "n/a"
  return f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x"


def _format_line(row, columns):
  w = row["workload"]
  parts = [f"{w.name:17s}"]
  for c in columns:
    parts.append(f"{c}={_fmt_time(row['times'].get(c)):>10s}")
  for c in columns:
    if c != "jax" and _ratio(row, c) is not None:
      parts.append(f"{c}/jax={_fmt_ratio(_ratio(row, c))}")
  if row["mismatch"]:
    parts.append("MISMATCH: " + ",".join(row["mismatch"]))
  return "  ".join(parts)


def machine_description():
  """CPU model, cores and versions, as markdown list items."""
  model = platform.processor() or platform.machine()
  try:
    with open("/proc/cpuinfo") as f:
      for line in f:
        if line.startswith("model name"):
          model = line.split(":", 1)[1].strip()
          break
  except OSError:
    pass
  try:
    usable = len(os.sched_getaffinity(0))
  except AttributeError:
    usable = os.cpu_count()
  try:
    cc = subprocess.run(["cc", "--version"], capture_output=True, text=True,
                        timeout=10).stdout.splitlines()[0]
  except (OSError, IndexError, subprocess.SubprocessError):
    cc = "none found"
  try:
    import jax
    jax_version = jax.__version__
  except ImportError:
    jax_version = "not installed"
  try:
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
  except OSError:
    load = "unknown"
  return [
      f"CPU: {model}, {os.cpu_count()} logical cores ({usable} usable); "
      f"load average at the end: {load}",
      f"OS: {platform.platform()}",
      f"Python {platform.python_version()}, NumPy {np.__version__}, "
      f"purejax {purejax.__version__}, JAX {jax_version}",
      f"C compiler: {cc}",
      f"purejax_num_threads={config.purejax_num_threads} (0: one per core)",
  ]


def to_markdown(rows, columns, notes, quick, png_note):
  shown = [c for c in COLUMNS if c in columns]
  ratio_cols = [c for c in shown if c != "jax"] if "jax" in shown else []
  lines = ["# purejax benchmarks", "",
           f"Run on {datetime.datetime.now():%Y-%m-%d %H:%M}"
           f"{' with --quick (tiny sizes, 1 repeat)' if quick else ''}; "
           "medians of warm calls (time to first result: of fresh functions).", ""]
  lines += [f"- {item}" for item in machine_description()]
  for c in shown:
    if c in notes:
      lines.append(f"- {LABELS[c]}: n/a ({notes[c]})")
  lines.append("")
  header = ["workload"] + [LABELS[c] for c in shown]
  header += [f"{LABELS[c]} / JAX" for c in ratio_cols]
  if "cpu" in ratio_cols:
    header.append("target (C / JAX)")
  lines.append("| " + " | ".join(header) + " |")
  lines.append("|" + "---|" * len(header))
  for row in rows:
    w = row["workload"]
    cells = [f"{w.name}: {w.title}"]
    for c in shown:
      text = _fmt_time(row["times"].get(c))
      if c in row["errors"]:
        text = "error"
      if c in row["mismatch"]:
        text += " (MISMATCH)"
      cells.append(text)
    cells += [_fmt_ratio(_ratio(row, c)) for c in ratio_cols]
    if "cpu" in ratio_cols:
      r = _ratio(row, "cpu")
      met = "" if r is None else (" met" if r <= w.target else " missed")
      cells.append(f"<= {w.target:.1f}x{met}")
    lines.append("| " + " | ".join(cells) + " |")
  errors = [(row["workload"].name, c, e) for row in rows for c, e in row["errors"].items()]
  if errors:
    lines += ["", "Errors:", ""]
    lines += [f"- {name} [{LABELS[c]}]: {e.splitlines()[0][:200]}" for name, c, e in errors]
  lines += ["", png_note, ""]
  return "\n".join(lines)


def write_chart(rows, columns, path):
  """A grouped bar chart (log scale) of times relative to JAX, or of absolute
  times without JAX; returns a line for the markdown file."""
  try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
  except ImportError:
    return "(No chart: matplotlib is not installed.)"
  relative = "jax" in columns and any("jax" in r["times"] for r in rows)
  shown = [c for c in COLUMNS if c in columns and (c != "jax" or not relative)
           and any(c in r["times"] for r in rows)]
  fig, ax = plt.subplots(figsize=(11, 5))
  width = 0.8 / max(len(shown), 1)
  xs = np.arange(len(rows))
  for i, c in enumerate(shown):
    vals = [(_ratio(r, c) if relative else r["times"].get(c)) or np.nan for r in rows]
    ax.bar(xs + (i - (len(shown) - 1) / 2) * width, vals, width, label=LABELS[c])
  ax.set_yscale("log")
  if relative:
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylabel("time / JAX time (lower is better)")
  else:
    ax.set_ylabel("seconds per call (lower is better)")
  ax.set_xticks(xs)
  ax.set_xticklabels([r["workload"].name for r in rows], rotation=30, ha="right")
  ax.legend()
  ax.set_title("purejax benchmarks")
  fig.tight_layout()
  fig.savefig(path, dpi=100)
  plt.close(fig)
  return f"![chart]({os.path.basename(path)})"


def _split_list(text, allowed, what):
  items = [s.strip() for s in text.split(",") if s.strip()]
  unknown = [s for s in items if s not in allowed]
  if unknown:
    raise SystemExit(f"unknown {what}: {', '.join(unknown)} (choose from {', '.join(allowed)})")
  return items


def main(argv=None):
  names = [w.name for w in workloads.WORKLOADS]
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--quick", action="store_true", help="tiny sizes, 1 repeat")
  parser.add_argument("--only", default=",".join(names),
                      help=f"comma-separated workloads ({', '.join(names)})")
  parser.add_argument("--backends", default=",".join(DEFAULT_COLUMNS),
                      help="comma-separated columns: cpu (purejax C), gpu (purejax on "
                           "the first GPU, through CuPy), numpy (purejax NumPy backend), "
                           "plain (hand-written NumPy), jax (on its default device)")
  parser.add_argument("--out", default=DEFAULT_OUT, help="folder for results.md/.png")
  parser.add_argument("--parallel", action="store_true",
                      help="only the parallel benchmarks (2 devices, MPI): parallel.md")
  parser.add_argument("--no-parallel", action="store_true",
                      help="skip the parallel benchmarks of a full run")
  args = parser.parse_args(argv)
  only = _split_list(args.only, names, "workloads")
  columns = _split_list(args.backends, COLUMNS, "backends")
  os.makedirs(args.out, exist_ok=True)
  if args.parallel:
    md = parallel.to_markdown(parallel.run(args.quick, "jax" in columns), args.quick)
    with open(os.path.join(args.out, "parallel.md"), "w") as f:
      f.write(md)
    print(md)
    return 0
  rows, notes = run(only, columns, args.quick)
  for c, note in notes.items():
    print(f"{LABELS[c]}: n/a ({note})")
  png_note = write_chart(rows, columns, os.path.join(args.out, "results.png"))
  md = to_markdown(rows, columns, notes, args.quick, png_note)
  # The parallel section is part of a full run of the C backend.
  if "cpu" in columns and len(only) == len(names) and not args.no_parallel:
    print("parallel benchmarks (2 devices, MPI):")
    md += "\n" + parallel.to_markdown(parallel.run(args.quick, "jax" in columns), args.quick)
  with open(os.path.join(args.out, "results.md"), "w") as f:
    f.write(md)
  print(md)
  return 0


if __name__ == "__main__":
  sys.exit(main())
