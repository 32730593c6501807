"""Implicitly differentiated solvers: ``custom_linear_solve`` (the
``custom_linear_solve`` primitive, ``linear_solve_p``) and ``custom_root``.

``linear_solve_p`` carries four closed jaxprs (matvec, its transpose vecmat,
solve and transpose_solve), each taking its own constants first; the
operands are all constants, then the right-hand side b.  Its rules never
differentiate the solver: the JVP solves again for
``dx = A^-1 (db - dA x)``, the transpose swaps the roles (matvec <->
vecmat, solve <-> transpose_solve), and batching batches the four jaxprs
with one consistent choice of which parts of x and b are batched.

``custom_root`` is a ``custom_jvp`` function whose rule applies the implicit
function theorem, as in JAX.
"""
import dataclasses
import functools

from purejax._src import core
from purejax._src import tree_util
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.jaxpr import eval_jaxpr
from purejax._src.lax.control_flow import common


@dataclasses.dataclass(frozen=True)
class _LinearSolveTuple:
  """One entry per jaxpr of a linear solve (not a tuple, so that a jaxpr
  prints it as JAX does: ``_LinearSolveTuple(matvec=..., ...)``)."""
  matvec: object
  vecmat: object
  solve: object
  transpose_solve: object

  def __iter__(self):
    return iter((self.matvec, self.vecmat, self.solve, self.transpose_solve))

  def transpose(self):
    return _LinearSolveTuple(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _split(args, const_lengths):
  """(per-jaxpr constants as a _LinearSolveTuple, the rest)."""
  groups, start = [], 0
  for n in const_lengths:
    groups.append(list(args[start:start + n]))
    start += n
  return _LinearSolveTuple(*groups), list(args[start:])


def _flatten(groups):
  return [x for g in groups for x in g]


# -- the primitive --------------------------------------------------------------

linear_solve_p = core.Primitive("custom_linear_solve", multiple_results=True)
linear_solve_p.c_code = None


@linear_solve_p.def_impl
def _linear_solve_impl(*args, const_lengths, jaxprs):
  from purejax._src.pjit import executable_for
  params, b = _split(args, const_lengths)
  return executable_for(jaxprs.solve)(*params.solve, *b)


@linear_solve_p.def_abstract_eval
def _linear_solve_abstract_eval(*avals, const_lengths, jaxprs):
  b = list(avals[sum(const_lengths):])
  return b + list(jaxprs.solve.out_avals[len(b):])   # then solve's aux outputs


def _named_axes(params):
  return frozenset().union(*[batching._named_axes_of_jaxpr(j)
                             for j in params["jaxprs"] if j is not None])


linear_solve_p.axis_names = _named_axes


@linear_solve_p.def_jvp
def _linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs):
  # A x = b  =>  dA x + A dx = db  =>  dx = A^-1 (db - dA x)
  from purejax._src.lax.elementwise import neg_p
  kw = dict(const_lengths=const_lengths, jaxprs=jaxprs)
  x = linear_solve_p.bind(*primals, **kw)
  params, _ = _split(primals, const_lengths)
  params_dot, b_dot = _split(tangents, const_lengths)
  n = len(b_dot)
  rhs = list(b_dot)
  if any(type(t) is not ad.Zero for t in params_dot.matvec):
    matvec = jaxprs.matvec
    x_zeros = [ad.Zero.from_primal_value(v) for v in x[:n]]
    _, dA_x = ad.jvp_flat(lambda *a: eval_jaxpr(matvec.jaxpr, matvec.consts, *a),
                          params.matvec + list(x[:n]), params_dot.matvec + x_zeros)
    rhs = [t if type(m) is ad.Zero else ad.add_tangents(t, neg_p.bind(m))
           for t, m in zip(rhs, dA_x)]
  aux_zeros = [ad.Zero.from_primal_value(v) for v in x[n:]]
  if all(type(t) is ad.Zero for t in rhs):
    return x, [ad.Zero.from_primal_value(v) for v in x[:n]] + aux_zeros
  rhs = [ad.instantiate(t) for t in rhs]
  x_dot = linear_solve_p.bind(*_flatten(params), *rhs, **kw)
  return x, list(x_dot[:n]) + aux_zeros


@linear_solve_p.def_transpose
def _linear_solve_transpose(cts, *primals, const_lengths, jaxprs):
  if jaxprs.transpose_solve is None:
    raise TypeError("transpose_solve required for backwards mode automatic "
                    "differentiation of custom_linear_solve")
  params, b = _split(primals, const_lengths)
  if any(ad.is_undefined_primal(p) for p in _flatten(params)):
    raise NotImplementedError("custom_linear_solve is linear in b only: it cannot be "
                              "transposed with respect to the operator's constants")
  # The aux outputs' cotangents are ignored: aux data is not differentiable.
  x_ct = [ad.instantiate(ct) for ct in cts[:len(b)]]
  ct_b = linear_solve_p.bind(*_flatten(params.transpose()), *x_ct,
                             const_lengths=const_lengths.transpose(),
                             jaxprs=jaxprs.transpose())
  return [None] * sum(const_lengths) + list(ct_b[:len(b)])


def _linear_solve_batch(trace, vals, dims, *, const_lengths, jaxprs):
  from purejax._src.lax.control_flow.cond import _batch_branch
  from purejax._src.pjit import batch_jaxpr
  size = trace.axis_size
  params, b = _split(vals, const_lengths)
  params_dims, b_dims = _split(dims, const_lengths)
  params = _LinearSolveTuple(*[[batching.moveaxis(p, d, 0) if d is not None else p
                                for p, d in zip(ps, ds)] for ps, ds in zip(params, params_dims)])
  params_dims = _LinearSolveTuple(*[[None if d is None else 0 for d in ds]
                                    for ds in params_dims])
  n = len(b)
  n_aux = len(jaxprs.solve.out_avals) - n
  # x and b share a structure: find which of their leaves are batched in any
  # of the four maps, until nothing changes.
  batched = [d is not None for d in b_dims]
  while True:
    grown = list(batched)
    for jaxpr, pdims in zip(jaxprs, params_dims):
      if jaxpr is not None:
        in_dims = pdims + [0 if k else None for k in batched]
        out_dims = batch_jaxpr(jaxpr, trace, in_dims)[2][:n]
        grown = [g or d is not None for g, d in zip(grown, out_dims)]
    if grown == batched:
      break
    batched = grown
  new_jaxprs, new_consts = [], []
  for jaxpr, pdims, ps in zip(jaxprs, params_dims, params):
    if jaxpr is None:
      new_jaxprs.append(None)
      new_consts.append([])
      continue
    outs = batched + [True] * (len(jaxpr.out_avals) - n)   # aux always batched
    closed, consts = _batch_branch(jaxpr, trace, pdims + [0 if k else None for k in batched],
                                   outs)
    new_jaxprs.append(closed)
    new_consts.append(list(consts) + ps)
  b = [batching.bdim_at_front(x, d, size) if k else x
       for x, d, k in zip(b, b_dims, batched)]
  outs = linear_solve_p.bind(*_flatten(new_consts), *b,
                             const_lengths=_LinearSolveTuple(*map(len, new_consts)),
                             jaxprs=_LinearSolveTuple(*new_jaxprs))
  return outs, [0 if k else None for k in batched] + [0] * n_aux


_linear_solve_batch.needs_trace = True
linear_solve_p.batch = _linear_solve_batch


# -- custom_linear_solve ----------------------------------------------------------------

def _trace(fun, args_tree, avals, what):
  return common.trace_fun(fun, args_tree, avals, what)


def _check_tree(func_name, expected_name, actual, expected, has_aux=False):
  if has_aux:
    children = actual.children()
    if len(children) != 2:
      raise ValueError(f"{func_name}() produced a pytree with structure {actual}, but a "
                       "pytree tuple with auxiliary output was expected because has_aux "
                       "was set to True.")
    actual = children[0]
  if actual != expected:
    raise TypeError(f"{func_name}() output pytree structure must match {expected_name}, "
                    f"got {actual} and {expected}.")


def _shape_checked(fun, name, b_shapes, has_aux):
  def checked(x):
    out = fun(x)
    y = out[0] if has_aux else out
    shapes = [core.get_aval(v).shape for v in tree_util.tree_leaves(y)]
    if shapes != b_shapes:
      raise ValueError(f"{name}() output shapes must match b, got {shapes} and {b_shapes}")
    return out
  return checked


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
  """``solve(matvec, b)``, differentiated implicitly: derivatives solve the
  linear system again (with ``transpose_solve`` in reverse mode) instead of
  differentiating ``solve``."""
  if transpose_solve is None and symmetric:
    transpose_solve = solve
  b_flat, args_tree = tree_util.tree_flatten((b,))
  tree = args_tree.children()[0]
  avals = [core.get_aval(x) for x in b_flat]
  b_shapes = [a.shape for a in avals]

  def traced(fun, name, aux, check=True):
    if check:
      fun = _shape_checked(fun, name, b_shapes, aux)
    closed, consts, out_tree = _trace(fun, args_tree, avals, "custom_linear_solve")
    _check_tree(name, "b", out_tree, tree, aux)
    return closed, consts, out_tree

  matvec_jaxpr, matvec_consts, _ = traced(matvec, "matvec", False)
  solve_jaxpr, solve_consts, out_tree = traced(functools.partial(solve, matvec), "solve",
                                               has_aux)
  vecmat_jaxpr = tr_solve_jaxpr = None
  vecmat_consts = tr_solve_consts = []
  if transpose_solve is not None:
    if symmetric:
      vecmat, vecmat_jaxpr, vecmat_consts = matvec, matvec_jaxpr, matvec_consts
    else:
      vecmat = _transpose_one_output(matvec, b)
      vecmat_jaxpr, vecmat_consts, _ = traced(vecmat, "vecmat", False, check=False)
    tr_solve_jaxpr, tr_solve_consts, _ = traced(
        functools.partial(transpose_solve, vecmat), "transpose_solve", has_aux)
  all_consts = [matvec_consts, vecmat_consts, solve_consts, tr_solve_consts]
  outs = linear_solve_p.bind(
      *_flatten(all_consts), *b_flat,
      const_lengths=_LinearSolveTuple(*map(len, all_consts)),
      jaxprs=_LinearSolveTuple(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, tr_solve_jaxpr))
  return tree_util.tree_unflatten(out_tree, outs)


def _transpose_one_output(linear_fun, primals):
  from purejax._src.ad_api import linear_transpose
  transpose_fun = linear_transpose(linear_fun, primals)

  def transposed(x):
    (y,) = transpose_fun(x)
    return y

  return transposed


# -- custom_root ------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _RootTuple:
  f: object
  solve: object
  l_and_s: object

  def __iter__(self):
    return iter((self.f, self.solve, self.l_and_s))


def _split_root(args, const_lengths):
  groups, start = [], 0
  for n in const_lengths:
    groups.append(list(args[start:start + n]))
    start += n
  return _RootTuple(*groups), list(args[start:])


def _run(closed, *args):
  return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _custom_root_fun(const_lengths, jaxprs, *args):
  params, guess = _split_root(args, const_lengths)
  return _run(jaxprs.solve, *params.solve, *guess)


_custom_root_fun.__name__ = "_custom_root"


def _root_jvp(const_lengths, jaxprs, primals, tangents):
  # F(m, u*(m)) = 0 for the root u* at parameters m, so
  # du* = -(d_u F)^-1 (d_m F dm): the tangent solve of minus F's parameter JVP.
  from purejax._src.lax.elementwise import neg_p
  params, _ = _split_root(primals, const_lengths)
  sol = _custom_root(const_lengths, jaxprs, *primals)
  n = len(jaxprs.f.out_avals)
  solution, aux = list(sol[:n]), list(sol[n:])
  params_dot, _ = _split_root(tangents, const_lengths)
  _, rhs = ad.jvp_flat(lambda *p: _run(jaxprs.f, *p, *solution), params.f, params_dot.f)
  rhs = [ad.instantiate(t) for t in rhs]
  solved = _run(jaxprs.l_and_s, *params.l_and_s, *solution, *rhs)
  solution_dot = [neg_p.bind(v) for v in solved]
  aux_dot = [ad.zeros_like_aval(ad.tangent_aval(core.get_aval(a))) for a in aux]
  return solution + aux, solution_dot + aux_dot


_root_jvp.__name__ = "_root_jvp"


def _make_custom_root():
  from purejax._src.custom_jvp import custom_jvp
  fn = custom_jvp(_custom_root_fun, nondiff_argnums=(0, 1))
  fn.defjvp(_root_jvp)
  return fn


_custom_root = _make_custom_root()


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
  """``solve(f, initial_guess)``, a root of ``f``, differentiated with the
  implicit function theorem through the values ``f`` closes over
  (``tangent_solve(g, y)`` solves the linearized system ``g(x) = y``)."""
  from purejax._src.ad_api import linearize
  guess_flat, args_tree = tree_util.tree_flatten((initial_guess,))
  tree = args_tree.children()[0]
  avals = [core.get_aval(x) for x in guess_flat]
  f_jaxpr, f_consts, out_tree = _trace(f, args_tree, avals, "custom_root")
  _check_tree("f", "initial_guess", out_tree, tree)
  solve_jaxpr, solve_consts, solution_tree = _trace(functools.partial(solve, f), args_tree,
                                                    avals, "custom_root solve")
  _check_tree("solve", "initial_guess", solution_tree, tree, has_aux)

  def linearize_and_solve(x, b):
    _, f_jvp = linearize(f, x)
    return tangent_solve(f_jvp, b)

  pair_tree = tree_util.tree_structure((initial_guess, initial_guess))
  l_and_s_jaxpr, l_and_s_consts, out_tree = _trace(
      linearize_and_solve, pair_tree, avals + avals, "custom_root tangent_solve")
  _check_tree("tangent_solve", "x", out_tree, tree)
  all_consts = [f_consts, solve_consts, l_and_s_consts]
  solution = _custom_root(_RootTuple(*map(len, all_consts)),
                          _RootTuple(f_jaxpr, solve_jaxpr, l_and_s_jaxpr),
                          *_flatten(all_consts), *guess_flat)
  return tree_util.tree_unflatten(solution_tree, solution)
