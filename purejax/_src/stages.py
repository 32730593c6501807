"""The stages of ``jit``: ``jit(f).trace(*args)`` is a ``Traced``, its
``.lower()`` a ``Lowered``, whose ``.compile()`` is a ``Compiled``.

Each stage shows what purejax made of the call: the jaxpr (purejax's
lowered form is the jaxpr itself), the generated C source of the ``cpu``
backend (``Compiled.as_text()``), and XLA-style cost estimates
(``cost_analysis()``, see ``cost_analysis.py``).
"""
from purejax._src import cost_analysis as costs
from purejax._src import tree_util
from purejax._src.config import config


def _shape_dtype_structs(avals):
  from purejax._src.api import ShapeDtypeStruct   # api imports this module
  return [ShapeDtypeStruct(a.shape, a.dtype) for a in avals]


def _live_cost(closed):
  """The unfused Cost of ``closed`` without its dead code: JAX eliminates
  that before lowering, so XLA never counts it."""
  from purejax._src.interpreters.partial_eval import dce_with_rules
  return costs.jaxpr_cost(dce_with_rules(closed.jaxpr)[0])


class Traced:
  """``jit(f).trace(*args)``: the jaxpr of one call."""

  def __init__(self, traced, name):
    self._traced = traced
    self._name = name

  @property
  def jaxpr(self):
    # JAX's form: the constants are constvars, with their values.
    from purejax._src.jaxpr import ClosedJaxpr, Jaxpr
    from purejax._src.pjit import close_consts
    inner, consts = self._traced.jaxpr.jaxpr, self._traced.consts
    k = len(consts)
    opened = Jaxpr(inner.invars[:k], inner.invars[k:], inner.outvars, inner.eqns)
    return ClosedJaxpr(*close_consts(opened, consts))

  @property
  def fun_name(self):
    return self._name

  @property
  def out_info(self):
    return self._traced.out_tree.unflatten(_shape_dtype_structs(self._traced.jaxpr.out_avals))

  def lower(self, *, lowering_platforms=None):
    """The Lowered stage (``lowering_platforms`` is ignored: one CPU)."""
    return Lowered(self._traced, self._name)


class Lowered:
  """``jit(f).lower(*args)``.  purejax's lowered form is the jaxpr itself."""

  def __init__(self, traced, name):
    self._traced = traced
    self._name = name

  @property
  def out_info(self):
    return self._traced.out_tree.unflatten(_shape_dtype_structs(self._traced.jaxpr.out_avals))

  def as_text(self, dialect=None, *, debug_info=False):
    """The jaxpr's text (JAX gives StableHLO; ``dialect`` is ignored)."""
    return str(self._traced.jaxpr)

  def cost_analysis(self):
    """XLA-style estimates for the unfused program, as a dict: ``flops``,
    ``transcendentals``, ``bytes accessed`` and per-operand
    ``bytes accessed{i}{}`` / ``bytes accessedout{}`` (zero counts left out).

    Dead code is not counted (JAX lowers without it).  Agrees with JAX for
    elementwise operations, ``dot_general`` (2*M*N*K), reductions and
    sorts.  Differs where XLA's lowering expands an operation into several
    (``asin``, ``lgamma``, complex ``exp``...: one transcendental here),
    for padded convolutions, and for ``scan``, whose body JAX counts once
    (XLA runs it as a while loop) and we count ``length`` times;
    ``while_loop`` bodies count once in both, ``cond`` its costliest
    branch.  XLA's ``utilization`` keys are not reported.
    """
    return _live_cost(self._traced.jaxpr).result()

  def compile(self, compiler_options=None, **kwargs):
    """Compiles for the configured backend.  XLA's options mean nothing to
    purejax's compilers and are ignored; a name that is no XLA option is
    refused, as XLA refuses it."""
    _check_compiler_options(compiler_options)
    return Compiled(self._traced, self._name)


# XLA's option names: its debug options (all named xla_*) and the build
# options JAX forwards.  purejax cannot tell a misspelt xla_* flag apart.
_BUILD_OPTIONS = frozenset(("exec_time_optimization_effort", "memory_fitting_effort",
                            "optimization_level", "memory_fitting_level"))


def _check_compiler_options(options):
  from purejax._src.errors import JaxRuntimeError
  for name in options or ():
    if not (str(name).startswith("xla_") or name in _BUILD_OPTIONS):
      raise JaxRuntimeError(f"INVALID_ARGUMENT: No such compile option: '{name}'")


class Compiled:
  """``jit(f).lower(*args).compile()``: callable with the lowered signature."""

  def __init__(self, traced, name=None):
    self._traced = traced
    self._name = name
    traced.executable()   # starts compiling (in the background on the cpu backend)

  @property
  def out_info(self):
    return self._traced.out_tree.unflatten(_shape_dtype_structs(self._traced.jaxpr.out_avals))

  def as_text(self):
    """The C source the ``cpu`` backend generated (waiting for a background
    build), after a first comment line naming the host steps (``host_steps``).
    On the ``numpy`` backend, the jaxpr it runs; on the ``cpu``
    backend when no C was generated, that jaxpr after a first ``#`` line
    saying why.  (JAX returns the optimized HLO.)"""
    exe = finished_executable(self._traced.executable())
    source = getattr(exe, "source", None)
    if source is not None:
      from purejax._src.backends.cpu import host_steps as hs
      return f"{hs.c_comment(host_steps(self), host_steps(self, library_calls=True))}\n{source}"
    text = str(self._traced.jaxpr)
    if config.purejax_backend != "cpu":
      return text
    return (f"# purejax: no C code was generated ({why_no_c(self._traced.jaxpr.jaxpr)}); "
            f"the NumPy backend runs this jaxpr.\n{text}")

  def cost_analysis(self):
    """As ``Lowered.cost_analysis()``, but where the ``cpu`` backend fused
    the program, ``bytes accessed`` counts each fused kernel's loads and
    stores (as XLA's estimate for its fused program does) rather than every
    equation's."""
    cost = _live_cost(self._traced.jaxpr)
    plan = getattr(finished_executable(self._traced.executable()), "plan", None)
    if plan is not None:
      try:
        fused = costs.fused_bytes(plan)
      except (AttributeError, KeyError, TypeError):   # a plan step we cannot read
        fused = None
      if fused is not None:
        ops = {k: cost[k] for k in (costs.FLOPS, costs.TRANSCENDENTALS) if k in cost}
        cost = costs.Cost(ops)
        cost += fused
    return cost.result()

  def __call__(self, *args, **kwargs):
    from purejax._src.api import _run_compiled   # api imports this module
    leaves = tree_util.tree_leaves((args, kwargs))
    outs = _run_compiled(self._traced, self._traced.consts + leaves)
    return self._traced.out_tree.unflatten(outs)


def host_steps(compiled, library_calls=False):
  """What the ``cpu`` backend runs on NumPy between its compiled kernels in
  ``compiled`` (a ``Compiled``): one primitive name per host step, in order,
  those in the bodies of host-step control flow as ``"scan body: sort"``;
  every equation where nothing compiled.  With ``library_calls``: the steps
  that are one call into an optimized library instead (``"lu (LAPACK
  getrf)"``).  Waits for a background build."""
  from purejax._src.backends.cpu import host_steps as hs
  plan = getattr(finished_executable(compiled._traced.executable()), "plan", None)
  if plan is not None:
    return hs.plan_host_steps(plan, library_calls=library_calls)
  return hs.jaxpr_host_steps(compiled._traced.jaxpr.jaxpr, library_calls=library_calls)


def finished_executable(exe):
  """The executable that runs ``exe``'s calls once its background C build
  (the cpu backend's tiered compilation) is done: the C executable, with
  ``.source`` and ``.plan``, or the NumPy backend's where it fell back."""
  wait = getattr(exe, "wait", None)
  if wait is None:
    return exe
  wait()
  return getattr(exe, "_compiled", None) or exe


def why_no_c(jaxpr):
  """Why the C backend runs ``jaxpr`` (const-free) on the NumPy backend."""
  try:
    from purejax._src.backends.cpu import fusion, toolchain
  except ImportError as e:
    return f"the C backend cannot be imported: {e}"
  if not toolchain.compiler_available():
    return "no usable C compiler was found"
  try:
    plan = fusion.plan_jaxpr(jaxpr)
    has_kernels = bool(getattr(plan, "compiled_steps", None) or plan.groups)
  except Exception as e:   # the planner failed: that is the reason
    return f"planning the fused kernels failed: {type(e).__name__}: {e}"
  if not has_kernels:
    return "no equation compiles to C; each runs its NumPy implementation"
  return "the C compiler failed; see the RuntimeWarning purejax gave"
