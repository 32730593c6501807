"""What jit reports about its cache misses: ``log_compiles`` lines,
``explain_cache_misses`` explanations and ``check_tracer_leaks`` checks.

Nothing here runs on a cache hit: ``api.PjitFunction._get_traced`` calls in
only when it traces a new signature.
"""
import gc
import logging
import sys

from purejax._src import source_info
from purejax._src.config import config

logger = logging.getLogger("purejax._src.dispatch")


def _level(flag):
  # JAX's convention: WARNING when the flag is on, else DEBUG.
  return logging.WARNING if config.read(flag) else logging.DEBUG


def log_traced(fun, in_avals, seconds):
  """The lines JAX logs when jit traces and compiles a new signature."""
  level = _level("jax_log_compiles")
  if not logger.isEnabledFor(level):
    return
  name = source_info.function_name(fun)
  logger.log(level, "Finished tracing + transforming %s for jit in %s sec", name, seconds)
  avals = tuple(in_avals)
  n = len(avals)
  mapping = "(" + ", ".join(["UnspecifiedValue"] * n) + ("," if n == 1 else "") + ")"
  logger.log(level, "Compiling jit(%s) with global shapes and types %r. Argument mapping: "
             "%s.", name, avals, mapping)


def explain_miss(fun, seen_keys, key, arg_names):
  """Logs why ``key`` (treedef, avals, statics, flags, axis env) missed the
  cache holding ``seen_keys``."""
  level = _level("jax_explain_cache_misses")
  if not logger.isEnabledFor(level):
    return
  where = source_info.function_location(fun)
  head = f"TRACING CACHE MISS at {_caller()}:\n  for {where}\n"
  seen_keys = list(seen_keys)
  if not seen_keys:
    logger.log(level, "%s  never seen function:\n  %s", head, where)
    return
  reasons = min((_differences(key, old, arg_names) for old in seen_keys), key=len)
  logger.log(level, "%s  all previously seen cache keys differ. For the closest previous "
             "key:\n  %s", head, "\n  ".join(reasons))


def _differences(new, old, arg_names):
  treedef, avals, statics, flags, axes = new[:5]   # (then the context mesh, if any)
  old_treedef, old_avals, old_statics, old_flags, old_axes = old[:5]
  out = []
  if new[5:] != old[5:]:
    out.append("a different context mesh (jax.set_mesh)")
  if treedef != old_treedef:
    out.append(f"different input pytree structure: now {treedef} and before {old_treedef}")
  elif avals != old_avals:
    out.append("different input types:")
    for i, (a, b) in enumerate(zip(avals, old_avals)):
      if a != b:
        name = arg_names[i] if i < len(arg_names) else f"args[{i}]"
        out.append(f"* at {name}, now {a.str_short(True, True)} and before "
                   f"{b.str_short(True, True)}")
  if statics != old_statics:
    out.append(f"different static arguments: now {statics} and before {old_statics}")
  if flags != old_flags:
    out.append("different values of configuration flags that affect tracing")
  if axes != old_axes:
    out.append(f"different bound axis names: now {axes} and before {old_axes}")
  return out or ["an equal key (the cached trace was dropped)"]


def _caller():
  """The user's call site (the first frame outside purejax)."""
  frame = sys._getframe(1)
  while frame is not None and "/purejax/" in frame.f_code.co_filename.replace("\\", "/"):
    frame = frame.f_back
  if frame is None:
    return "<unknown>"
  return f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"


def check_leaks(trace):
  """Raises if a tracer of the finished jit ``trace`` is still alive (e.g.
  stored in a global or an outer list): what ``check_tracer_leaks`` asks."""
  from purejax._src.interpreters.partial_eval import DynamicJaxprTracer
  internal = {id(t) for _, t in getattr(trace, "_const_tracers", {}).values()}
  gc.collect()
  leaked = [o for o in gc.get_referrers(trace)
            if type(o) is DynamicJaxprTracer and o._trace is trace and id(o) not in internal]
  if not leaked:
    return
  parts = []
  for tracer in leaked:
    holders = [r for r in gc.get_referrers(tracer)
               if r is not leaked and type(r).__name__ not in ("cell", "frame")]
    held = "".join(f"\n<{type(tracer).__name__} {id(tracer)}> is referred to by "
                   f"<{type(r).__name__} {id(r)}>" for r in holders[:3])
    parts.append(f"{tracer!r}{trace.describe_dependence(tracer)}{held}")
  del leaked
  raise Exception("Leaked trace DynamicJaxprTrace. Leaked tracer(s):\n\n"
                  + "\n\n".join(parts))
