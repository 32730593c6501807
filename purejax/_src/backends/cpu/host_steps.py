"""Which equations of a compiled program still run on NumPy ("host steps"
between the compiled kernels), for ``Compiled.as_text()``, PUREJAX_DEBUG=2
and the tests that want none.

A host step of control flow (``scan``, ``while``, ``cond``, calls that were
not inlined) runs its NumPy ``impl``, which compiles each body on its own
(``pjit.executable_for``): the host steps of those bodies are listed too,
named after the equation and the body they are in (``scan body: sort``).
A program with no compiled kernel at all runs every equation on NumPy.
Index-only views that NumPy makes for a host step or an output (a transposed
gradient, zeros broadcast for a loop's initial carry) are not listed: they
compute nothing.  Nor are primitives whose implementation is one call into
an optimized library (a ``library_call`` attribute naming it: LAPACK,
pocketfft): those are listed apart, as library calls.
"""
from purejax._src.backends.cpu import fusion
from purejax._src.jaxpr import ClosedJaxpr, Jaxpr

HEADER = "purejax host steps (NumPy between compiled kernels)"
LIBRARY_HEADER = "library calls"
# How a body is named after the parameter holding it.
_LABELS = {"jaxpr": "body", "body_jaxpr": "body", "cond_jaxpr": "cond",
           "branches": "branch", "call_jaxpr": "body"}


def plan_host_steps(plan, library_calls=False):
  """The host steps of ``plan`` and of the bodies they compile, in order,
  one name per step (a primitive, or ``"<prim> <body>: <name>"``); with
  ``library_calls``, the library calls instead (``"lu (LAPACK getrf)"``)."""
  if plan.compiled_steps:
    eqns = [s.eqn for s in plan.steps if type(s) is fusion.HostStep]
  else:   # the NumPy backend runs the whole jaxpr
    eqns = plan.jaxpr.eqns
  names = []
  for eqn in eqns:
    if fusion.numpy_view(eqn):
      continue
    prim = eqn.primitive.name
    library = getattr(eqn.primitive, "library_call", None)
    if library_calls and library is not None:
      names.append(f"{prim} ({library})")
    elif not library_calls and library is None:
      names.append(prim)
    for label, body in _bodies(eqn):
      names += [f"{prim} {label}: {name}"
                for name in jaxpr_host_steps(body, library_calls=library_calls)]
  return names


def jaxpr_host_steps(jaxpr, library_calls=False):
  """The host steps (or library calls) of the C backend's executable of
  ``jaxpr`` (planned the way ``pjit.executable_for`` compiles it, nothing
  is compiled)."""
  from purejax._src.interpreters import partial_eval as pe
  from purejax._src.random import key_lowering
  jaxpr = pe.dce_jaxpr(jaxpr)
  lowered = key_lowering.lower_jaxpr(jaxpr)
  if lowered is not None:
    jaxpr = lowered[0]
  return plan_host_steps(fusion.plan_jaxpr(jaxpr), library_calls=library_calls)


def _bodies(eqn):
  """(label, const-free jaxpr) of each body ``eqn``'s impl compiles."""
  for key, value in eqn.params.items():
    many = isinstance(value, (tuple, list))
    for i, closed in enumerate(value if many else (value,)):
      if not isinstance(closed, ClosedJaxpr):
        continue
      label = _LABELS.get(key, key) + (str(i) if many else "")
      inner = closed.jaxpr
      if inner.constvars:   # its constants are inputs of the compiled body
        inner = Jaxpr([], list(inner.constvars) + list(inner.invars), inner.outvars,
                      inner.eqns)
      yield label, inner


def _counted(names):
  counts = {}
  for name in names:
    counts[name] = counts.get(name, 0) + 1
  return ", ".join(n if c == 1 else f"{n} (x{c})" for n, c in counts.items())


def summary(names, library=()):
  """One line naming the host steps ``names`` (repeats counted), and the
  ``library`` calls if any, for a comment."""
  line = f"{HEADER}: {_counted(names) or 'none'}"
  return f"{line}; {LIBRARY_HEADER}: {_counted(library)}" if library else line


def c_comment(names, library=()):
  return f"/* {summary(names, library)} */"


def plan_comment(plan):
  """The comment naming ``plan``'s host steps and library calls."""
  return c_comment(plan_host_steps(plan), plan_host_steps(plan, library_calls=True))
