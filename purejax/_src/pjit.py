"""The call primitive that ``jit`` stages into an enclosing trace.

``pjit_p`` carries a closed jaxpr (constants already turned into leading
inputs).  Its rules for each interpreter are written against that jaxpr.
"""
import weakref

from purejax._src import core
from purejax._src.backends import numpy_backend

pjit_p = core.Primitive("jit", multiple_results=True)
pjit_p.call_jaxpr_param = "jaxpr"

# One executable per jaxpr, kept alive only as long as the jaxpr is.
_executables = weakref.WeakKeyDictionary()


def executable_for(closed_jaxpr):
  exe = _executables.get(closed_jaxpr)
  if exe is None:
    exe = _executables[closed_jaxpr] = numpy_backend.compile_jaxpr(closed_jaxpr.jaxpr)
  return exe


@pjit_p.def_impl
def _pjit_impl(*args, jaxpr, name):
  return executable_for(jaxpr)(*args)


@pjit_p.def_abstract_eval
def _pjit_abstract_eval(*avals, jaxpr, name):
  return jaxpr.out_avals


pjit_p.pp_params = lambda params: [("name", params["name"]), ("jaxpr", params["jaxpr"])]
