"""``custom_derivatives.linear_call``: a function linear in some arguments,
with a user-given transpose.

``linear_call(fun, fun_transpose, residual_args, linear_args)`` computes
``fun(residual_args, linear_args)``.  Its JVP applies ``fun`` to the tangents
of ``linear_args`` (the residuals must not be differentiated), and its
transpose is a ``linear_call`` of ``fun_transpose`` whose own transpose is
``fun`` again.  The callee is an ordinary jaxpr: compiled code inlines it.
"""
from purejax._src import core
from purejax._src import tree_util
from purejax._src.interpreters import ad
from purejax._src.lax.control_flow.common import trace_fun
from purejax._src.pjit import executable_for

linear_call_p = core.Primitive("linear_call", multiple_results=True)
linear_call_p.call_jaxpr_param = "callee"
linear_call_p.call_shares_names = False   # JAX prints the callee with fresh names


def linear_call(fun, fun_transpose, residual_args, linear_args):
  """``fun(residual_args, linear_args)``, linear in ``linear_args``, whose
  transpose with respect to them is ``fun_transpose(residual_args, cotangents)``."""
  res_leaves, res_tree = tree_util.tree_flatten(residual_args)
  lin_leaves, lin_tree = tree_util.tree_flatten(linear_args)
  res_avals = [core.get_aval(x) for x in res_leaves]
  lin_avals = [core.get_aval(x) for x in lin_leaves]
  callee, callee_consts, out_tree = trace_fun(
      fun, tree_util.tree_structure((residual_args, linear_args)), res_avals + lin_avals,
      "linear_call fun")
  out_avals = callee.out_avals
  traced_transpose = []

  def transpose_thunk():
    """The transpose's jaxpr and consts, traced once, when first needed."""
    if not traced_transpose:
      in_tree = tree_util.tree_structure((residual_args, tree_util.tree_unflatten(
          out_tree, [0] * len(out_avals))))
      jaxpr, consts, t_out_tree = trace_fun(fun_transpose, in_tree, res_avals + out_avals,
                                            "linear_call fun_transpose")
      if t_out_tree != lin_tree:
        raise TypeError("transpose output pytree structure must match that of linear "
                        f"inputs, got output structure {t_out_tree} and input structure "
                        f"{lin_tree}.")
      traced_transpose.append((jaxpr, consts))
    return traced_transpose[0]

  outs = linear_call_p.bind(*callee_consts, *res_leaves, *lin_leaves, callee=callee,
                            transpose_thunk=transpose_thunk,
                            num_callee_consts=len(callee_consts), num_res=len(res_leaves))
  return tree_util.tree_unflatten(out_tree, outs)


@linear_call_p.def_impl
def _impl(*args, callee, transpose_thunk, num_callee_consts, num_res):
  return executable_for(callee)(*args)


@linear_call_p.def_abstract_eval
def _abstract_eval(*avals, callee, **params):
  return callee.out_avals


def _jvp(primals, tangents, *, callee, transpose_thunk, num_callee_consts, num_res):
  fixed = num_callee_consts + num_res
  if any(type(t) is not ad.Zero for t in tangents[:fixed]):
    raise ValueError("linear_call: residual_args (and values fun closes over) cannot be "
                     "differentiated; only linear_args can")
  params = dict(callee=callee, transpose_thunk=transpose_thunk,
                num_callee_consts=num_callee_consts, num_res=num_res)
  outs = linear_call_p.bind(*primals, **params)
  lin_tangents = [ad.instantiate(t) for t in tangents[fixed:]]
  return outs, linear_call_p.bind(*primals[:fixed], *lin_tangents, **params)


def _transpose(cts, *args, callee, transpose_thunk, num_callee_consts, num_res):
  transposed, t_consts = transpose_thunk()
  callee_consts = args[:num_callee_consts]
  residuals = args[num_callee_consts:num_callee_consts + num_res]
  if any(ad.is_undefined_primal(x) for x in residuals):
    raise ValueError("linear_call: it is linear in linear_args only, not in residual_args")
  cts = [ad.instantiate(ct) for ct in cts]
  outs = linear_call_p.bind(*t_consts, *residuals, *cts, callee=transposed,
                            transpose_thunk=lambda: (callee, list(callee_consts)),
                            num_callee_consts=len(t_consts), num_res=num_res)
  return [None] * (num_callee_consts + num_res) + list(outs)


linear_call_p.jvp = _jvp
linear_call_p.transpose = _transpose
