"""Helpers for tests comparing backends: ``jit(f)`` on the C backend and on
the NumPy tier, and a function traced to a const-free jaxpr."""
import numpy as np

import purejax as jax
from purejax._src import core, pjit
from purejax._src.backends.cpu import host_steps
from purejax._src.config import config


def c_and_numpy_tier(f, *args):
  """(C backend's result, NumPy tier's result), as NumPy arrays (pytrees)."""
  jf = jax.jit(f)
  assert host_steps.jaxpr_host_steps(jf.trace(*args).jaxpr.jaxpr) == []
  with config.override("purejax_compile_sync", True), config.override("purejax_backend", "cpu"):
    got = jf(*args)
    assert hasattr(pjit.executable_for(jf.trace(*args).jaxpr), "source")
  with config.override("purejax_backend", "numpy"):
    want = jax.jit(f)(*args)
  return jax.tree_util.tree_map(np.asarray, (got, want))


def trace(f, *args):
  """The const-free jaxpr of ``f`` (returning a list of arrays) and its consts."""
  avals = [core.ShapedArray(np.shape(a), np.asarray(a).dtype) for a in args]
  closed, consts = pjit.trace_closed(lambda *xs: list(f(*xs)), avals)
  return closed.jaxpr, [np.asarray(c) for c in consts]


def run_traced(f, args, *compilers):
  """``f`` traced on ``args`` and run by each ``compile_jaxpr`` of
  ``compilers``: [(executable, its outputs)], in order."""
  jaxpr, consts = trace(f, *args)
  args = [np.asarray(a) for a in args]
  runs = []
  with np.errstate(all="ignore"):
    for compile_jaxpr in compilers:
      run = compile_jaxpr(jaxpr)
      runs.append((run, run(*consts, *args)))
  return runs
