"""``custom_vjp``: a function whose VJP the user defines as ``fwd`` and ``bwd``.

Under a JVP trace fwd runs in the parent trace and ``custom_lin`` stands for
the output tangents (its transpose runs bwd).  Staged (jit, make_jaxpr,
vmap), the call is a ``custom_vjp_call`` of the function's jaxpr whose
``fwd_jaxpr_thunk`` traces fwd lazily.
"""
import functools

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src import errors
from purejax._src import tree_util
from purejax._src.custom_derivatives_batching import Axis, BatchedFwd
from purejax._src.custom_derivatives_common import (
    Call, CustomVJPException, CustomVJPPrimal, Named, SymbolicZero, bind_by_trace,
    call_prim, check_no_closed_over_perturbation, fun_name, lazy_trace, resolve_kwargs,
    same_type, split_nondiff, types_text)
from purejax._src.custom_lin import bind_custom_lin
from purejax._src.interpreters import ad
from purejax._src.interpreters import partial_eval as pe
from purejax._src.interpreters.ad import Zero
from purejax._src.jaxpr import ClosedJaxpr, eval_jaxpr
from purejax._src.pjit import batch_jaxpr


class custom_vjp:
  """A function with a custom VJP: ``fwd`` computes the output and residuals,
  ``bwd`` maps residuals and output cotangents to input cotangents."""

  def __init__(self, fun, nondiff_argnums=()):
    functools.update_wrapper(self, fun)
    self.fun = fun
    self.nondiff_argnums = tuple(nondiff_argnums)
    self.fwd = None
    self.bwd = None
    self.symbolic_zeros = False
    self.optimize_remat = False

  def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
    """``fwd(*args) -> (out, residuals)``; ``bwd(*nondiff_args, residuals,
    out_cotangent) -> tuple of input cotangents`` (``None`` for zeros)."""
    self.fwd = fwd
    self.bwd = bwd
    self.symbolic_zeros = symbolic_zeros
    self.optimize_remat = optimize_remat   # accepted; residuals are always saved

  def __call__(self, *args, **kwargs):
    name = fun_name(self.fun)
    if self.fwd is None:
      raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
    args = resolve_kwargs(self.fun, args, kwargs, "custom_vjp")
    n = len(args)
    for i in self.nondiff_argnums:
      if -n <= i < n and any(isinstance(x, core.Tracer)
                             for x in tree_util.tree_leaves(args[i])):
        raise errors.UnexpectedTracerError(
            "Found a JAX Tracer object passed as an argument to a custom_vjp function "
            "in a position indicated by nondiff_argnums as non-differentiable. Tracers "
            "cannot be passed as non-differentiable arguments to custom_vjp functions; "
            "instead, nondiff_argnums should only be used for arguments that can't be "
            "or contain JAX tracers, e.g. function-valued arguments. In particular, "
            "array-valued arguments should typically not be indicated as nondiff_argnums.")
    if type(core.current_trace()) is core.EvalTrace:
      return self.fun(*args)
    static, dyn, rebuild = split_nondiff(args, self.nondiff_argnums)
    leaves, in_tree = tree_util.tree_flatten(dyn)
    call = _VJPCall(self, static, rebuild, in_tree, leaves)
    outs, out_tree = bind_by_trace(call, leaves, _custom_vjp_jvp_eager, _stage_custom_vjp)
    return tree_util.tree_unflatten(out_tree, outs)


class _VJPCall(Call):
  def __init__(self, custom, static, rebuild, in_tree, leaves):
    super().__init__(custom.fun, static, rebuild, in_tree, custom.symbolic_zeros)
    self.fwd, self.bwd = custom.fwd, custom.bwd
    self.fwd_name, self.bwd_name = fun_name(custom.fwd), fun_name(custom.bwd)
    self.in_avals = [core.get_aval(x) for x in leaves]
    self.num_args = len(in_tree.children())

  def run_fwd(self, primals, in_zeros):
    """fwd on flat primals: (primal out leaves, primal tree, residual leaves,
    residual tree)."""
    if self.symbolic_zeros:
      primals = [CustomVJPPrimal(p, not z) for p, z in zip(primals, in_zeros)]
    out = self.fwd(*self.rebuild(self.in_tree.unflatten(primals)))
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
      raise TypeError(
          f"Custom VJP fwd rule {self.fwd_name} for function {self.name} must produce a "
          "pair (list or tuple of length two) where the first element represents the "
          f"primal output (equal to those of the custom_vjp-decorated function "
          f"{self.name}) and the second element represents residuals (i.e. values "
          "stored from the forward pass for use on the backward pass), but instead of "
          f"a pair the fwd rule {self.fwd_name} produced {out}.")
    p_leaves, p_tree = tree_util.tree_flatten(out[0])
    res_leaves, res_tree = tree_util.tree_flatten(out[1])
    scalars = {i: type(x) for i, x in enumerate(res_leaves) if type(x) in _PYTHON_SCALARS}
    return p_leaves, p_tree, res_leaves, _ResidualTree(res_tree, scalars)

  def check_primals(self, p_tree, p_avals, out_tree, out_avals):
    what = "container/pytree structure"
    if p_tree == out_tree:
      if all(same_type(a, b) for a, b in zip(p_avals, out_avals)):
        return
      what = "shapes/dtypes of"
    end = "." if p_tree != out_tree else ""
    raise TypeError(
        f"Custom VJP fwd rule {self.fwd_name} for function {self.name} must produce a "
        "pair (list or tuple of length two) where the first element represents the "
        "primal output (equal to the output of the custom_vjp-decorated function "
        f"{self.name}) and the second element represents residuals (i.e. values stored "
        "from the forward pass for use on the backward pass), but instead the fwd rule "
        f"output's first element had {what}:\n    {types_text(p_tree, p_avals)}\n"
        f"while the custom_vjp-decorated function {self.name} had output {what}:\n"
        f"    {types_text(out_tree, out_avals)}{end}")

  def run_bwd(self, res, cts):
    """bwd on a residual pytree and output cotangents; returns one cotangent
    per flat input (Zero where bwd said None, or the input is an integer)."""
    out = self.bwd(*self.static, res, cts)
    if isinstance(out, list) and len(out) == self.num_args:
      out = tuple(out)
    dummy = self.in_tree.unflatten(range(self.in_tree.num_leaves))
    primal_paths = [p for p, _ in tree_util.tree_flatten_with_path(dummy)[0]]
    matched = _match_cotangents(out, primal_paths) if isinstance(out, tuple) else None
    if matched is None or len(out) != self.num_args:
      raise TypeError(
          "Custom VJP bwd rule must produce an output with the same container (pytree) "
          "structure as the args tuple of the primal function, and in particular must "
          "produce a tuple of length equal to the number of arguments to the primal "
          f"function, but got bwd output structure {tree_util.tree_structure(out)} for "
          f"primal input structure {self.in_tree}.")
    results = []
    for path, ct, aval in zip(primal_paths, matched, self.in_avals):
      t_aval = ad.tangent_aval(aval)
      if ct is None or t_aval.dtype == dtypes.float0 or type(ct) is SymbolicZero:
        results.append(Zero(t_aval))
        continue
      ct_aval = core.get_aval(ct)
      if ct_aval.shape != aval.shape:
        raise ValueError(
            "Custom VJP bwd rule must produce an output with the same type as the args "
            f"tuple of the primal function, but at output{tree_util.keystr(path)} the "
            f"bwd rule produced an output of type {ct_aval.str_short()} corresponding "
            f"to an input of type {aval.str_short()}, so the shapes do not match")
      results.append(ct)
    return results


def _match_cotangents(out, primal_paths):
  """bwd's output leaf for each primal leaf path, where a ``None`` stands for
  a whole subtree of zeros; None if the structures don't match."""
  items = tree_util.tree_flatten_with_path(out, is_leaf=lambda x: x is None)[0]
  matched, i = [], 0
  for path, leaf in items:
    if leaf is None:
      while i < len(primal_paths) and primal_paths[i][:len(path)] == path:
        matched.append(None)
        i += 1
    elif i < len(primal_paths) and primal_paths[i] == path:
      matched.append(leaf)
      i += 1
    else:
      return None
  return matched if i == len(primal_paths) else None


# Residual leaves that bwd gets as Python scalars again, as in JAX (equinox
# keeps Python bools there); they pass through the jaxpr as constants.
_PYTHON_SCALARS = (bool, int, float, complex)


def _as_python(x, kind):
  if isinstance(x, core.Tracer):   # (made a traced value by a transformation)
    return x
  return kind(np.asarray(x).item())


class _ResidualTree:
  """A residual pytree's structure and which of its leaves were Python
  scalars (by position, with their types)."""

  def __init__(self, tree, scalars):
    self.tree, self.scalars = tree, scalars

  def unflatten(self, leaves):
    return self.tree.unflatten([_as_python(x, self.scalars[i]) if i in self.scalars else x
                                for i, x in enumerate(leaves)])


class _Bwd:
  """bwd on flat residuals and cotangents (custom_lin's ``bwd`` param)."""

  def __init__(self, call, res_tree, out_tree):
    self.call = call
    self.res_tree = res_tree
    self.out_tree = out_tree

  def __call__(self, res, cts):
    return self.call.run_bwd(self.res_tree.unflatten(res), self.out_tree.unflatten(cts))

  def __str__(self):
    return self.call.bwd_name

  __repr__ = __str__


def _custom_vjp_jvp_eager(parent, call, primals, tangents):
  """Under a JVP trace: fwd runs in the parent trace; custom_lin stands for
  the tangents."""
  in_zeros = [type(t) is Zero for t in tangents]
  with core.set_current_trace(parent):
    p_leaves, p_tree, res, res_tree = call.run_fwd(primals, in_zeros)
    t_out = bind_custom_lin(_Bwd(call, res_tree, p_tree), call.symbolic_zeros,
                            p_leaves, res, tangents)
  return p_leaves, t_out, p_tree


def _stage_custom_vjp(call, args):
  in_avals = [core.get_aval(x) for x in args]
  closed, consts, out_tree = call.trace_fun(in_avals)
  fwd = Named(call.fwd_name, _LazyFwd(call, in_avals, out_tree, closed.out_avals))
  outs = custom_vjp_call_p.bind(
      *consts, *args, call_jaxpr=closed, fwd_jaxpr_thunk=fwd, num_consts=len(consts),
      bwd=Named(call.bwd_name, call), out_trees=out_tree,
      symbolic_zeros=call.symbolic_zeros)
  return outs, out_tree


class _LazyFwd:
  """fwd of a staged call traced into a jaxpr (per pattern of zero input
  tangents, which a symbolic-zeros fwd sees): primals -> (primal outs,
  residuals), plus the matching bwd on flat residuals and cotangents."""

  def __init__(self, call, in_avals, out_tree, out_avals):
    self.call = call
    self.in_avals = in_avals
    self.out_tree = out_tree
    self.out_avals = out_avals
    self.cache = {}

  def __call__(self, in_zeros):
    key = in_zeros if self.call.symbolic_zeros else None
    return lazy_trace(self.cache, key, lambda: self._trace(in_zeros))

  def _trace(self, in_zeros):
    call, res_tree = self.call, []

    def fun(*primals):
      p_leaves, p_tree, res, tree = call.run_fwd(primals, in_zeros)
      call.check_primals(p_tree, [core.get_aval(p) for p in p_leaves],
                         self.out_tree, self.out_avals)
      res_tree[:] = [tree]
      return list(p_leaves) + list(res)

    jaxpr, consts = pe.trace_to_jaxpr(fun, self.in_avals)
    return ClosedJaxpr(jaxpr, consts), _Bwd(call, res_tree[0], self.out_tree)


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd_jaxpr_thunk, num_consts,
                         bwd, out_trees, symbolic_zeros):
  check_no_closed_over_perturbation(tangents, num_consts, CustomVJPException)
  args, arg_tangents = primals[num_consts:], tangents[num_consts:]
  in_zeros = tuple(type(t) is Zero for t in arg_tangents)
  closed, bwd_fun = fwd_jaxpr_thunk.value(in_zeros)
  outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
  n = len(call_jaxpr.out_avals)
  t_out = bind_custom_lin(bwd_fun, symbolic_zeros, outs[:n], outs[n:], arg_tangents)
  return outs[:n], t_out


def _custom_vjp_call_batch(trace, vals, dims, *, call_jaxpr, fwd_jaxpr_thunk, num_consts,
                           bwd, out_trees, symbolic_zeros):
  """Batches the function's jaxpr now, fwd when it is traced, and the bwd
  that comes with fwd (``bwd`` itself is kept only for its name)."""
  batched, consts, out_dims = batch_jaxpr(call_jaxpr, trace, dims)
  fwd = BatchedFwd(fwd_jaxpr_thunk.value, Axis(trace), dims[num_consts:], out_dims)
  outs = custom_vjp_call_p.bind(
      *consts, *vals, call_jaxpr=batched, fwd_jaxpr_thunk=Named(fwd_jaxpr_thunk.name, fwd),
      num_consts=len(consts) + num_consts, bwd=bwd, out_trees=out_trees,
      symbolic_zeros=symbolic_zeros)
  return outs, fwd.out_dims.settle()


_custom_vjp_call_batch.needs_trace = True


class _OpaqueRule:
  """fwd or bwd of a staged call, as ``get_bind_params`` hands them out: they
  can be bound back, but purejax's fwd and bwd take other arguments than
  JAX's, so calling them is refused."""

  def __init__(self, eqn_params, what):
    self.eqn_params = eqn_params
    self.what = what

  def __call__(self, *args):
    raise NotImplementedError(
        f"calling the {self.what} subfun of a custom_vjp_call's get_bind_params is not "
        "supported by purejax; bind custom_vjp_call_p with the subfuns instead")


custom_vjp_call_p = call_prim("custom_vjp_call")
custom_vjp_call_p.rule_subfuns = lambda params: [_OpaqueRule(params, "fwd"),
                                                 _OpaqueRule(params, "bwd")]
custom_vjp_call_p.jvp = _custom_vjp_call_jvp
custom_vjp_call_p.batch = _custom_vjp_call_batch


def _custom_vjp_call_pp(params):
  pairs = [("name", params["bwd"].value.name), ("bwd", params["bwd"]),
           ("call_jaxpr", params["call_jaxpr"]), ("fwd", params["fwd_jaxpr_thunk"])]
  if params["num_consts"]:
    pairs.append(("num_consts", params["num_consts"]))
  return pairs + [("symbolic_zeros", params["symbolic_zeros"])]


custom_vjp_call_p.pp_params = _custom_vjp_call_pp
