"""The differentiation API: jvp, linearize, vjp, grad, value_and_grad,
jacfwd, jacrev, hessian, linear_transpose."""

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src import source_info
from purejax._src import tree_util
from purejax._src.array import host_float0
from purejax._src.interpreters import ad


def check_callable(fun):
  if not callable(fun):
    raise TypeError(f"Expected a callable value, got {fun}")


def _flat_fun(fun, in_tree, out_tree_box, has_aux=False):
  """``fun`` on flat leaves; records the output tree (and aux) in the box."""

  def flat(*leaves):
    out = fun(*tree_util.tree_unflatten(in_tree, leaves))
    if has_aux:
      if not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError("has_aux=True requires the function to return a pair (out, aux), "
                        f"got {type(out)}")
      out, aux = out
      # aux leaves leave as primal values (JAX's aux is never differentiated)
      trace = core.current_trace()
      aux = tree_util.tree_map(
          lambda x: x.primal if isinstance(x, ad.JVPTracer) and x._trace is trace else x, aux)
      out_tree_box.append(("aux", aux))
    out_leaves, out_tree = tree_util.tree_flatten(out)
    out_tree_box.append(("out", out_tree))
    return out_leaves

  return flat


def _unbox(box):
  d = dict(box)
  return d["out"], d.get("aux")


# ---------------------------------------------------------------------------
# Forward mode

def _check_jvp_args(primals, tangents):
  for name, value in (("primals", primals), ("tangents", tangents)):
    if not isinstance(value, (tuple, list)):
      raise TypeError(f"{name} arguments to jax.jvp must be a tuple or a list; "
                      f"found {type(value).__name__}.")
  p_leaves, p_tree = tree_util.tree_flatten(primals)
  t_leaves, t_tree = tree_util.tree_flatten(tangents)
  if p_tree != t_tree:
    raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                    f"structure; primals have tree structure {p_tree} whereas tangents "
                    f"have tree structure {t_tree}.")
  for p, t in zip(p_leaves, t_leaves):
    p_aval, t_aval = core.get_aval(p), core.get_aval(t)
    if p_aval.shape != t_aval.shape:
      raise ValueError("jvp called with different primal and tangent shapes;"
                       f"Got primal shape {p_aval.shape} and tangent shape as {t_aval.shape}")
    expected = ad.tangent_dtype(p_aval.dtype)
    if t_aval.dtype != expected:
      raise TypeError(
          "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, "
          "or in case of int/bool primal dtype the tangent dtype must be float0."
          f"Got primal dtype {core.dtype_name(p_aval.dtype)} and so expected tangent "
          f"dtype {core.dtype_name(expected)}, but got tangent dtype "
          f"{core.dtype_name(t_aval.dtype)} instead.")
  return p_leaves, t_leaves, p_tree


def jvp(fun, primals, tangents, has_aux=False):
  """(fun(*primals), the directional derivative of fun along tangents)."""
  check_callable(fun)
  p_leaves, t_leaves, in_tree = _check_jvp_args(primals, tangents)
  box = []
  out_p, out_t = ad.jvp_flat(_flat_fun(fun, in_tree, box, has_aux), p_leaves, t_leaves)
  out_tree, aux = _unbox(box)
  out_t = [host_float0(ad.instantiate(t)) for t in out_t]
  result = (tree_util.tree_unflatten(out_tree, out_p), tree_util.tree_unflatten(out_tree, out_t))
  return (*result, aux) if has_aux else result


def linearize(fun, *primals, has_aux=False):
  """(fun(*primals), f_jvp): f_jvp evaluates the JVP at primals without
  recomputing the primal values."""
  check_callable(fun)
  p_leaves, in_tree = tree_util.tree_flatten(primals)
  box = []
  out_p, jaxpr, residuals = ad.linearize_flat(_flat_fun(fun, in_tree, box, has_aux), p_leaves)
  out_tree, aux = _unbox(box)
  in_avals = [ad.tangent_aval(core.get_aval(p)) for p in p_leaves]

  def f_jvp(residuals, *tangents):
    t_leaves, t_tree = tree_util.tree_flatten(tangents)
    if t_tree != in_tree:
      raise ValueError(f"linearized function called on tangent values inconsistent with "
                       f"the original primal values: expected {in_tree}, got {t_tree}")
    for t, aval in zip(t_leaves, in_avals):
      got = core.get_aval(t)
      if got.shape != aval.shape or got.dtype != aval.dtype:
        raise ValueError("linearized function called on tangent values inconsistent with "
                         f"the original primal values: got {got.str_short()} for primal "
                         f"aval {aval.str_short()}")
    from purejax._src.jaxpr import eval_jaxpr
    outs = eval_jaxpr(jaxpr, residuals, *t_leaves)
    return tree_util.tree_unflatten(out_tree, outs)

  # A Partial whose leaves are the residuals, as JAX's (see vjp).
  f_jvp = tree_util.Partial(f_jvp, list(residuals))
  out = tree_util.tree_unflatten(out_tree, out_p)
  return (out, f_jvp, aux) if has_aux else (out, f_jvp)


# ---------------------------------------------------------------------------
# Reverse mode

def vjp(fun, *primals, has_aux=False):
  """(fun(*primals), f_vjp): f_vjp maps output cotangents to input cotangents."""
  check_callable(fun)
  p_leaves, in_tree = tree_util.tree_flatten(primals)
  box = []
  out_p, jaxpr, residuals = ad.linearize_flat(_flat_fun(fun, in_tree, box, has_aux), p_leaves)
  out_tree, aux = _unbox(box)
  in_avals = [core.get_aval(p) for p in p_leaves]
  out_avals = [core.get_aval(p) for p in out_p]
  name = source_info.function_location(fun)

  def vjp_fun(residuals, cotangents):
    ct_leaves, ct_tree = tree_util.tree_flatten(cotangents)
    if ct_tree != out_tree:
      raise ValueError(
          "unexpected tree structure.\n\nThe argument to a VJP function returned by "
          "`jax.vjp` must match the pytree\nstructure of the differentiated function "
          f"{name}.\n\nBut the tree structures differ: expected {out_tree}, got {ct_tree}.")
    for ct, aval in zip(ct_leaves, out_avals):
      got = core.get_aval(ct)
      expected = ad.tangent_aval(aval)
      if got.shape != expected.shape or (got.dtype != expected.dtype
                                         and expected.dtype != dtypes.float0):
        raise ValueError(
            "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
            f"{got.str_short()}, but expected {expected.str_short()} because the "
            "corresponding output of the differentiated function had JAX type "
            f"{aval.str_short()}")
    cts_in = ad.backward_pass(jaxpr, residuals, ct_leaves)
    cts_in = [_input_cotangent(ad.instantiate(ct), aval) for ct, aval in zip(cts_in, in_avals)]
    return tree_util.tree_unflatten(in_tree, cts_in)

  # The residuals are the Partial's pytree leaves (as in JAX), so the function
  # passes through jit and vmap with them traced.
  f_vjp = tree_util.Partial(vjp_fun, list(residuals))
  out = tree_util.tree_unflatten(out_tree, out_p)
  return (out, f_vjp, aux) if has_aux else (out, f_vjp)


def _input_cotangent(ct, primal_aval):
  """A real cotangent carries its primal's weak type, as in JAX (whose
  transposes keep weak types where some of purejax's make them strong); a
  complex one is kept as the backward pass made it (strong once it went
  through a real or imaginary part, as JAX's transposes of those make it)."""
  if dtypes.issubdtype(core.get_aval(ct).dtype, np.complexfloating):
    return ct
  return _like_primal(ct, primal_aval)


def _like_primal(ct, primal_aval):
  """``ct`` with its primal's weak type (float0 values as NumPy arrays)."""
  aval = core.get_aval(ct)
  if aval.dtype == dtypes.float0:
    return host_float0(ct)
  if aval.weak_type == primal_aval.weak_type:
    return ct
  from purejax import lax
  return lax.convert_element_type(ct, aval.dtype, primal_aval.weak_type)


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
  """``vjp`` split in two reusable functions: ``fwd(*args)`` gives
  ``(fun(*args), residuals)`` (and ``aux`` with ``has_aux``), where the
  residuals are a pytree (the VJP function), and ``bwd(residuals, cotangent)``
  the cotangents of the ``argnums`` arguments (one, for an int).  Jitted by
  default, so that ``bwd`` compiles once however often ``fwd`` runs."""
  check_callable(fun)
  if not isinstance(argnums, (int, np.integer)):
    argnums = tuple(argnums)

  def fwd(*args):
    nums = _check_argnums(argnums, len(args), below_len=True)
    partial_fun, dyn_args = _partial_args(fun, args, {}, nums)
    return vjp(partial_fun, *dyn_args, has_aux=has_aux)

  def bwd(fun_vjp, cotangent):
    cts = fun_vjp(cotangent)
    return cts[0] if isinstance(argnums, (int, np.integer)) else cts

  if jitted:
    from purejax._src.api import jit
    return jit(fwd), jit(bwd)
  return fwd, bwd


def _check_argnums(argnums, nargs, below_len=False):
  """``argnums`` as a tuple; each must be at least -nargs (and, for the
  Jacobians, below nargs), as JAX checks positional indices."""
  nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
  if any(not isinstance(i, (int, np.integer)) for i in nums):
    raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums}")
  if not nums:
    raise ValueError("argnums must name at least one argument to differentiate with "
                     "respect to, got argnums=()")
  for i in nums:
    if i < -nargs or (below_len and i >= nargs):
      raise ValueError(
          "Positional argument indices, e.g. for `static_argnums`, must have value greater "
          "than or equal to -len(args) and less than len(args), but got value "
          f"{i} for len(args) == {nargs}.")
  if nums and max(nums) >= nargs:
    raise TypeError(f"differentiating with respect to argnums={argnums} requires at least "
                    f"{max(nums) + 1} positional arguments to be passed by the caller, "
                    f"but got only {nargs} positional arguments.")
  return nums


def _check_input_dtype(x, holomorphic, allow_int):
  dtype = core.get_aval(x).dtype
  if holomorphic and not dtypes.issubdtype(dtype, np.complexfloating):
    raise TypeError("grad with holomorphic=True requires inputs with complex dtype, "
                    f"but got {core.dtype_name(dtype)}.")
  if (dtypes.issubdtype(dtype, np.integer) or dtype == np.bool_
      or dtypes.is_extended(dtype)) and not allow_int:
    raise TypeError("grad requires real- or complex-valued inputs (input dtype that is a "
                    f"sub-dtype of np.inexact), but got {core.dtype_name(dtype)}. If you "
                    "want to use Boolean- or integer-valued inputs, use vjp or set "
                    "allow_int to True.")


def _check_output(out, holomorphic):
  aval = core.get_aval(out)
  if aval.shape:
    raise TypeError("Gradient only defined for scalar-output functions. "
                    f"Output had shape: {aval.shape}.")
  _check_output_dtype("grad", aval.dtype, holomorphic)


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
  """A function computing (fun(*args), the gradient of fun at args)."""
  check_callable(fun)

  @source_info.wraps(fun)
  def value_and_grad_f(*args, **kwargs):
    nums = _check_argnums(argnums, len(args))
    partial_fun, diff_args = _partial_args(fun, args, kwargs, nums)
    for leaf in tree_util.tree_leaves(diff_args):
      _check_not_ref(leaf)
      _check_input_dtype(leaf, holomorphic, allow_int)
    result = vjp(partial_fun, *diff_args, has_aux=has_aux)
    ans, f_vjp = result[0], result[1]
    _check_output(ans, holomorphic)
    one = _ones_like(ans)
    grads = f_vjp(one)
    g = grads[0] if isinstance(argnums, int) else tuple(grads)
    return ((ans, result[2]), g) if has_aux else (ans, g)

  return value_and_grad_f


def _check_not_ref(x):
  """A Ref has no cotangent type: JAX's error when one is differentiated."""
  from purejax._src import refs
  if refs._is_ref(x):
    aval = core.get_aval(x)
    raise ValueError(f"Expected cotangent type {aval.str_short()} but got "
                     f"{aval.inner_aval.str_short()}")


def _ones_like(x):
  from purejax import lax
  aval = core.get_aval(x)
  return lax.convert_element_type(1, aval.dtype, aval.weak_type)


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
  """A function computing the gradient of scalar-valued ``fun``."""
  check_callable(fun)
  vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

  @source_info.wraps(fun)
  def grad_f(*args, **kwargs):
    if has_aux:
      (_, aux), g = vg(*args, **kwargs)
      return g, aux
    return vg(*args, **kwargs)[1]

  return grad_f


# ---------------------------------------------------------------------------
# Jacobians (one JVP or VJP per basis vector; vmap will batch these)

def _check_jac_input(x, name, holomorphic, allow_int):
  dtype = core.get_aval(x).dtype
  if holomorphic and not dtypes.issubdtype(dtype, np.complexfloating):
    raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                    f"but got {core.dtype_name(dtype)}.")
  if name == "jacfwd" and not holomorphic and not dtypes.issubdtype(dtype, np.floating):
    raise TypeError("jacfwd requires real-valued inputs (input dtype that is a sub-dtype "
                    f"of np.floating), but got {core.dtype_name(dtype)}. For holomorphic "
                    "differentiation, pass holomorphic=True. For differentiation of "
                    "non-holomorphic functions involving complex inputs or integer "
                    "inputs, use jax.jvp directly.")
  if not dtypes.issubdtype(dtype, np.inexact) and not allow_int:
    raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that is "
                    f"a sub-dtype of np.inexact), but got {core.dtype_name(dtype)}. If you "
                    "want to use Boolean- or integer-valued inputs, use vjp or set "
                    "allow_int to True.")


def _std_basis(leaves):
  """Rows of the identity over all of ``leaves``' elements: a list with, for
  each leaf, an array of shape (N,) + leaf.shape (N the total size)."""
  import purejax.numpy as jnp
  from purejax import lax
  avals = [core.get_aval(x) for x in leaves]
  dtype = dtypes.result_type(*[a.dtype for a in avals]) if avals else np.float32
  total = sum(a.size for a in avals)
  eye = jnp.eye(total, dtype=dtype)
  out, start = [], 0
  for a in avals:
    block = eye if len(avals) == 1 else lax.slice(eye, (0, start), (total, start + a.size))
    out.append(lax.reshape(lax.convert_element_type(block, ad.tangent_dtype(a.dtype)),
                           (total,) + a.shape))
    start += a.size
  return out


def _split_rows(x, sizes, shapes, trailing_shape, axis):
  """Splits axis ``axis`` of ``x`` (the stacked basis axis) into blocks of
  ``sizes``, each reshaped to ``shapes[k]`` at that position."""
  from purejax import lax
  blocks, start = [], 0
  for size, shape in zip(sizes, shapes):
    block = x if len(sizes) == 1 else lax.slice_in_dim(x, start, start + size, axis=axis)
    if axis == 0:
      blocks.append(lax.reshape(block, tuple(shape) + tuple(trailing_shape)))
    else:
      blocks.append(lax.reshape(block, tuple(trailing_shape) + tuple(shape)))
    start += size
  return blocks


def _partial_args(fun, args, kwargs, nums):
  def partial_fun(*diff_args):
    full = list(args)
    for i, x in zip(nums, diff_args):
      full[i] = x
    return fun(*full, **kwargs)
  return partial_fun, [args[i] for i in nums]


def _jac_structure(argnums, out_tree, in_tree, blocks):
  """blocks[j][i]: the Jacobian of output leaf j w.r.t. input leaf i."""
  per_out = [tree_util.tree_unflatten(in_tree, row) for row in blocks]
  per_out = [p[0] if isinstance(argnums, int) else p for p in per_out]
  return tree_util.tree_unflatten(out_tree, per_out)


def _jac_inputs(name, fun, args, kwargs, argnums, holomorphic, allow_int):
  """The differentiated arguments of a Jacobian call, checked and flattened."""
  nums = _check_argnums(argnums, len(args), below_len=True)
  partial_fun, diff_args = _partial_args(fun, args, kwargs, nums)
  in_leaves, in_tree = tree_util.tree_flatten(tuple(diff_args))
  # Checked with tree_map, as JAX does: a pytree node is rebuilt (with None
  # leaves), so an unflatten function that rejects None raises here.
  tree_util.tree_map(lambda x: _check_jac_input(x, name, holomorphic, allow_int),
                     tuple(diff_args))
  return partial_fun, diff_args, in_leaves, in_tree


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
  """The Jacobian of ``fun`` by forward mode: a JVP vmapped over the
  standard basis of the inputs."""
  from purejax._src.vmap import vmap
  check_callable(fun)

  @source_info.wraps(fun)
  def jacfun(*args, **kwargs):
    partial_fun, diff_args, in_leaves, in_tree = _jac_inputs(
        "jacfwd", fun, args, kwargs, argnums, holomorphic, False)
    in_avals = [core.get_aval(x) for x in in_leaves]

    def pushfwd(*basis):
      res = jvp(partial_fun, tuple(diff_args), tuple(tree_util.tree_unflatten(in_tree, basis)),
                has_aux=has_aux)
      return res if has_aux else (*res, None)

    out, jac, aux = vmap(pushfwd, out_axes=(None, -1, None))(*_std_basis(in_leaves))
    out_leaves, out_tree = tree_util.tree_flatten(out)
    # A Jacobian block carries its output's weak type, as in JAX.
    blocks = [_split_rows(_like_primal(j, core.get_aval(o)), [a.size for a in in_avals],
                          [a.shape for a in in_avals], core.get_aval(o).shape, axis=-1)
              for j, o in zip(tree_util.tree_leaves(jac), out_leaves)]
    jac = _jac_structure(argnums, out_tree, in_tree, blocks)
    return (jac, aux) if has_aux else jac

  return jacfun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
  """The Jacobian of ``fun`` by reverse mode: the VJP vmapped over the
  standard basis of the outputs."""
  from purejax._src.vmap import vmap
  check_callable(fun)

  @source_info.wraps(fun)
  def jacfun(*args, **kwargs):
    partial_fun, diff_args, in_leaves, in_tree = _jac_inputs(
        "jacrev", fun, args, kwargs, argnums, holomorphic, allow_int)
    res = vjp(partial_fun, *diff_args, has_aux=has_aux)
    out, f_vjp = res[0], res[1]
    out_leaves, out_tree = tree_util.tree_flatten(out)
    out_avals = [core.get_aval(o) for o in out_leaves]
    for aval in out_avals:
      _check_output_dtype("jacrev", aval.dtype, holomorphic)
    pullback = lambda *basis: f_vjp(tree_util.tree_unflatten(out_tree, basis))
    jac_in = tree_util.tree_leaves(vmap(pullback)(*_std_basis(out_leaves)))
    jac_in = [_like_primal(j, core.get_aval(x)) for j, x in zip(jac_in, in_leaves)]
    per_in = [_split_rows(j, [a.size for a in out_avals], [a.shape for a in out_avals],
                          core.get_aval(x).shape, axis=0)
              for j, x in zip(jac_in, in_leaves)]
    blocks = [[per_in[i][j] for i in range(len(in_leaves))] for j in range(len(out_leaves))]
    jac = _jac_structure(argnums, out_tree, in_tree, blocks)
    return (jac, res[2]) if has_aux else jac

  return jacfun


def _check_output_dtype(transform, dtype, holomorphic):
  """Reverse mode needs real (or, holomorphic, complex) outputs: JAX's errors."""
  name = core.dtype_name(dtype)
  if holomorphic:
    if not dtypes.issubdtype(dtype, np.complexfloating):
      raise TypeError(f"{transform} with holomorphic=True requires outputs with complex "
                      f"dtype, but got {name}.")
    return
  if dtypes.issubdtype(dtype, np.floating):
    return
  real_only = (f"{transform} requires real-valued outputs (output dtype that is a "
               f"sub-dtype of np.floating), but got {name}. ")
  if dtypes.issubdtype(dtype, np.complexfloating):
    raise TypeError(real_only + "For holomorphic differentiation, pass holomorphic=True. "
                    "For differentiation of non-holomorphic functions involving complex "
                    "outputs, use jax.vjp directly.")
  raise TypeError(real_only + "For differentiation of functions with integer outputs, use "
                  "jax.vjp directly.")


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
  """The Hessian of scalar ``fun``: ``jacfwd(jacrev(fun))``."""
  check_callable(fun)
  return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
                argnums, has_aux=has_aux, holomorphic=holomorphic)


def _as_array(x):
  """A cotangent given as a Python or NumPy value, as an Array of its
  canonical dtype (a Python scalar stays weakly typed)."""
  from purejax._src.array import Array
  aval = core.get_aval(x)
  return Array(np.asarray(x, aval.dtype), weak_type=aval.weak_type)


def linear_transpose(fun, *primals, reduce_axes=()):
  """The transpose of the linear function ``fun`` at arguments like ``primals``."""
  if not callable(fun):
    raise TypeError("the first argument must be callable")
  from purejax._src.interpreters import partial_eval as pe
  in_leaves, in_tree = tree_util.tree_flatten(primals)
  # Only shapes and dtypes are read (a ShapedArray or ShapeDtypeStruct does);
  # weak types are kept, as JAX does.
  in_avals = [core.shaped_abstractify(x) for x in in_leaves]
  in_dtypes = [a.dtype for a in in_avals]
  box = []
  jaxpr, consts = pe.trace_to_jaxpr(_flat_fun(fun, in_tree, box), in_avals)
  out_tree, _ = _unbox(box)
  out_avals = jaxpr.out_avals
  out_dtypes = [a.dtype for a in out_avals]
  if not (all(dtypes.issubdtype(d, np.inexact) for d in in_dtypes + out_dtypes)
          or all(dtypes.issubdtype(d, np.integer) for d in in_dtypes + out_dtypes)):
    raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                    "complex], and integer -> integer functions, but got "
                    f"{in_dtypes} -> {out_dtypes}.")

  def transposed_fun(out_cotangent):
    ct_leaves, ct_tree = tree_util.tree_flatten(out_cotangent)
    if ct_tree != out_tree:
      raise TypeError("cotangent tree does not match function output, expected "
                      f"{out_tree} but got {ct_tree}")
    ct_leaves = [x if isinstance(x, core.ArrayBase) else _as_array(x) for x in ct_leaves]
    for ct, aval in zip(ct_leaves, out_avals):
      got = core.get_aval(ct)
      if got.shape != aval.shape or got.dtype != aval.dtype:
        raise TypeError("cotangent type does not match function output, expected "
                        f"{tuple(out_avals)} but got {ct_leaves}")
    cts_in = ad.backward_pass(jaxpr, consts, ct_leaves)
    cts_in = [ad.instantiate(ct) for ct in cts_in]
    return tree_util.tree_unflatten(in_tree, cts_in)

  return tree_util.Partial(transposed_fun)
