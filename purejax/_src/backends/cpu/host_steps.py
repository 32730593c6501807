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
compute nothing.
"""
from purejax._src.backends.cpu import fusion
from purejax._src.jaxpr import ClosedJaxpr, Jaxpr

HEADER = "purejax host steps (NumPy between compiled kernels)"
# How a body is named after the parameter holding it.
_LABELS = {"jaxpr": "body", "body_jaxpr": "body", "cond_jaxpr": "cond",
           "branches": "branch", "call_jaxpr": "body"}


def plan_host_steps(plan):
  """The host steps of ``plan`` and of the bodies they compile, in order,
  one name per step (a primitive, or ``"<prim> <body>: <name>"``)."""
  if plan.compiled_steps:
    eqns = [s.eqn for s in plan.steps if type(s) is fusion.HostStep]
  else:   # the NumPy backend runs the whole jaxpr
    eqns = plan.jaxpr.eqns
  names = []
  for eqn in eqns:
    if fusion.numpy_view(eqn):
      continue
    prim = eqn.primitive.name
    names.append(prim)
    for label, body in _bodies(eqn):
      names += [f"{prim} {label}: {name}" for name in jaxpr_host_steps(body)]
  return names


def jaxpr_host_steps(jaxpr):
  """The host steps of the C backend's executable of ``jaxpr`` (planned the
  way ``pjit.executable_for`` compiles it, nothing is compiled)."""
  from purejax._src.interpreters import partial_eval as pe
  from purejax._src.random import key_lowering
  jaxpr = pe.dce_jaxpr(jaxpr)
  lowered = key_lowering.lower_jaxpr(jaxpr)
  if lowered is not None:
    jaxpr = lowered[0]
  return plan_host_steps(fusion.plan_jaxpr(jaxpr))


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


def summary(names):
  """One line naming ``names`` (repeats counted), for a comment."""
  if not names:
    return f"{HEADER}: none"
  counts = {}
  for name in names:
    counts[name] = counts.get(name, 0) + 1
  return f"{HEADER}: " + ", ".join(n if c == 1 else f"{n} (x{c})" for n, c in counts.items())


def c_comment(names):
  return f"/* {summary(names)} */"
