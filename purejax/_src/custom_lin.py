"""``custom_lin``: the linear stand-in for a custom_vjp function's tangents.

Bound on the input tangents (after the residuals), it can only be
transposed: its transpose calls the user's bwd.  Anything that would
evaluate it (forward mode) raises, as in JAX.
"""
from purejax._src import core
from purejax._src import dtypes
from purejax._src.custom_derivatives_common import SymbolicZero
from purejax._src.interpreters import ad
from purejax._src.interpreters.ad import Zero


def bind_custom_lin(bwd, symbolic_zeros, primals_out, res, tangents):
  """The output tangents of a custom_vjp call: ``custom_lin`` of the nonzero
  input tangents.  ``bwd(res, cts)`` maps flat residuals and output
  cotangents to one cotangent per input (``Zero`` allowed)."""
  in_zeros = tuple(type(t) is Zero for t in tangents)
  out_avals = tuple(ad.tangent_aval(core.get_aval(p)) for p in primals_out)
  outs = custom_lin_p.bind(*res, *[t for t in tangents if type(t) is not Zero],
                           num_res=len(res), bwd=bwd, out_avals=out_avals,
                           symbolic_zeros=symbolic_zeros, in_zeros=in_zeros)
  return [Zero(a) if a.dtype == dtypes.float0 else t for t, a in zip(outs, out_avals)]


def _custom_lin_error(*args, **params):
  raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_lin_abstract_eval(*avals, out_avals, **params):
  return list(out_avals)


def _custom_lin_transpose(cts, *invals, num_res, bwd, out_avals, symbolic_zeros, in_zeros):
  res = list(invals[:num_res])
  if symbolic_zeros:
    cts = [SymbolicZero(ct.aval) if type(ct) is Zero else ct for ct in cts]
  else:
    cts = [ad.instantiate(ct) for ct in cts]
  cts_in = bwd(res, cts)
  return [None] * num_res + [ct for ct, z in zip(cts_in, in_zeros) if not z]


custom_lin_p = core.Primitive("custom_lin", multiple_results=True)
custom_lin_p.impl = _custom_lin_error      # only transposing it has a meaning
custom_lin_p.abstract_eval = _custom_lin_abstract_eval
custom_lin_p.jvp = _custom_lin_error
custom_lin_p.transpose = _custom_lin_transpose
# Its transpose takes Zero cotangents: a symbolic_zeros bwd sees them as
# SymbolicZero, as in JAX.
custom_lin_p.symbolic_zero_cotangents = True
# Under vmap it only meets forward mode (jacfwd, vmap of jvp or of a
# linearized function): JAX raises there too, before evaluating anything.
custom_lin_p.batch = _custom_lin_error
custom_lin_p.is_linear = True
custom_lin_p.pp_params = lambda params: [
    ("bwd", params["bwd"]), ("in_zeros", list(params["in_zeros"])),
    ("num_res", params["num_res"]), ("symbolic_zeros", params["symbolic_zeros"])]
