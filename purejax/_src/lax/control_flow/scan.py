"""``scan``: a loop with a carried state and stacked per-iteration outputs.

``scan_p`` takes its operands as ``consts + carry + xs`` and holds the body
as a closed jaxpr ``(consts, carry, x) -> (carry, y)``.  Its rules are
written against that jaxpr: the JVP and batching rules transform the body
once (with a fixed point on which carries get tangents / a batch axis); the
reverse-mode rules live in ``scan_ad``.
"""
import inspect
import weakref

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src import tree_util
from purejax._src.interpreters import ad
from purejax._src.jaxpr import ClosedJaxpr, eval_jaxpr
from purejax._src.pjit import executable_for, trace_closed

scan_p = core.Primitive("scan", multiple_results=True)


def _split(xs, *sizes):
  out, start = [], 0
  for n in sizes:
    out.append(list(xs[start:start + n]))
    start += n
  out.append(list(xs[start:]))
  return out


def _stacked(aval, length):
  return aval.update(shape=(length,) + aval.shape)


def _unstacked(aval):
  return aval.update(shape=aval.shape[1:])


# -- evaluation ------------------------------------------------------------------

@scan_p.def_impl
def _scan_impl(*args, reverse, length, jaxpr, num_consts, num_carry, unroll):
  consts, carry, xs = _split(args, num_consts, num_carry)
  body = executable_for(jaxpr)
  y_avals = jaxpr.out_avals[num_carry:]
  ys = [[] for _ in y_avals]
  for i in (reversed(range(length)) if reverse else range(length)):
    outs = body(*consts, *carry, *[x[i] for x in xs])
    carry = outs[:num_carry]
    for acc, y in zip(ys, outs[num_carry:]):
      acc.append(y)
  if reverse:
    ys = [acc[::-1] for acc in ys]
  stacked = [np.stack([np.asarray(y, a.dtype) for y in acc]) if acc
             else np.zeros((0,) + a.shape, a.dtype) for acc, a in zip(ys, y_avals)]
  return [np.asarray(c, a.dtype) for c, a in zip(carry, jaxpr.out_avals)] + stacked


@scan_p.def_abstract_eval
def _scan_abstract_eval(*avals, reverse, length, jaxpr, num_consts, num_carry, unroll):
  outs = jaxpr.out_avals
  return list(outs[:num_carry]) + [_stacked(a, length) for a in outs[num_carry:]]


def scan_bind(consts, carry, xs, *, jaxpr, length, reverse, unroll):
  return scan_p.bind(*consts, *carry, *xs, reverse=reverse, length=length, jaxpr=jaxpr,
                     num_consts=len(consts), num_carry=len(carry), unroll=unroll)


# -- JVP -------------------------------------------------------------------------

_jvp_bodies = weakref.WeakKeyDictionary()


def _jvp_body(closed, num_consts, num_carry, nonzeros, instantiate):
  """The body's JVP, laid out for scan: (consts, const tangents, carry, carry
  tangents, xs, x tangents) -> (carry, carry tangents, ys, y tangents), with
  only nonzero tangents; ``instantiate`` forces output tangents to exist.
  Returns (jaxpr, its consts, which output tangents are nonzero)."""
  per = _jvp_bodies.setdefault(closed, {})
  key = (num_consts, num_carry, tuple(nonzeros), tuple(instantiate))
  if key in per:
    return per[key]
  avals = closed.in_avals
  groups = _split(list(range(len(avals))), num_consts, num_carry)
  layout = []   # (is_tangent, index) per input of the JVP body
  for group in groups:
    layout += [(False, i) for i in group] + [(True, i) for i in group if nonzeros[i]]
  out_nz = []

  def fun(*args):
    primals, tangents = [None] * len(avals), [None] * len(avals)
    for (is_t, i), a in zip(layout, args):
      (tangents if is_t else primals)[i] = a
    tangents = [ad.Zero(ad.tangent_aval(a)) if t is None else t
                for t, a in zip(tangents, avals)]
    outs_p, outs_t = ad.jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                 primals, tangents)
    outs_t = [ad.instantiate(t) if inst else t for t, inst in zip(outs_t, instantiate)]
    out_nz[:] = [type(t) is not ad.Zero for t in outs_t]
    res = []
    for lo, hi in ((0, num_carry), (num_carry, len(outs_p))):
      res += outs_p[lo:hi] + [t for t in outs_t[lo:hi] if type(t) is not ad.Zero]
    return res

  in_avals = [ad.tangent_aval(avals[i]) if is_t else avals[i] for is_t, i in layout]
  traced, consts = trace_closed(fun, in_avals)
  per[key] = (traced, consts, list(out_nz))
  return per[key]


def _scan_jvp(primals, tangents, *, reverse, length, jaxpr, num_consts, num_carry, unroll):
  nz = [type(t) is not ad.Zero for t in tangents]
  num_ys = len(jaxpr.out_avals) - num_carry
  carry_nz = nz[num_consts:num_consts + num_carry]
  while True:   # fixed point: a carry has a tangent if its init or its update does
    nonzeros = nz[:num_consts] + carry_nz + nz[num_consts + num_carry:]
    body, body_consts, out_nz = _jvp_body(jaxpr, num_consts, num_carry, nonzeros,
                                          carry_nz + [False] * num_ys)
    new = [a or b for a, b in zip(carry_nz, out_nz[:num_carry])]
    if new == carry_nz:
      break
    carry_nz = new
  tangents = [ad.instantiate(t) if k else t for t, k in zip(tangents, nonzeros)]
  c, c_t, i, i_t, x, x_t = [], [], [], [], [], []
  for n, (p, t, k) in enumerate(zip(primals, tangents, nonzeros)):
    which = (c, c_t) if n < num_consts else (i, i_t) if n < num_consts + num_carry else (x, x_t)
    which[0].append(p)
    if k:
      which[1].append(t)
  outs = scan_bind(list(body_consts) + c + c_t, i + i_t, x + x_t, jaxpr=body,
                   length=length, reverse=reverse, unroll=unroll)
  n_ct = sum(carry_nz)
  carry, carry_t, rest = _split(outs, num_carry, n_ct)
  ys, ys_t = rest[:num_ys], iter(rest[num_ys:])
  carry_t = iter(carry_t)
  out_avals = _scan_abstract_eval(reverse=reverse, length=length, jaxpr=jaxpr,
                                  num_consts=num_consts, num_carry=num_carry, unroll=unroll)
  tangents_out = []
  for k, (is_nz, a) in enumerate(zip(carry_nz + out_nz[num_carry:], out_avals)):
    src = carry_t if k < num_carry else ys_t
    tangents_out.append(next(src) if is_nz else ad.Zero(ad.tangent_aval(a)))
  return carry + ys, tangents_out


scan_p.jvp = _scan_jvp


# -- batching ----------------------------------------------------------------------

_batched_bodies = weakref.WeakKeyDictionary()


def _batch_body(closed, trace, in_dims, force):
  """The body on batched inputs (batch axis 0 or None); outputs batched where
  needed or ``force``d, always at axis 0.  Returns (jaxpr, consts, out_batched)."""
  from purejax._src.interpreters import batching
  per = _batched_bodies.setdefault(closed, {})
  key = (tuple(in_dims), tuple(force), trace.axis_size, trace.axis_name)
  if key in per:
    return per[key]
  size, out_batched = trace.axis_size, []

  def fun(*args):
    pairs = batching.eval_jaxpr_batched(closed, trace, in_dims, args)
    res = []
    out_batched[:] = [d is not None or f for (_, d), f in zip(pairs, force)]
    for (v, d), b in zip(pairs, out_batched):
      res.append(batching.matchaxis(v, d, 0, size) if b else v)
    return res

  avals = [a if d is None else a.update(shape=(size,) + a.shape)
           for a, d in zip(closed.in_avals, in_dims)]
  traced, consts = trace_closed(fun, avals)
  per[key] = (traced, consts, list(out_batched))
  return per[key]


def _scan_batch(trace, vals, dims, *, reverse, length, jaxpr, num_consts, num_carry, unroll):
  from purejax._src.interpreters import batching
  size = trace.axis_size
  num_ys = len(jaxpr.out_avals) - num_carry
  batched = [d is not None for d in dims]
  carry_b = batched[num_consts:num_consts + num_carry]
  while True:   # fixed point: a carry is batched if its init or its update is
    in_b = batched[:num_consts] + carry_b + batched[num_consts + num_carry:]
    body, body_consts, out_b = _batch_body(jaxpr, trace, [0 if b else None for b in in_b],
                                           carry_b + [False] * num_ys)
    new = [a or b for a, b in zip(carry_b, out_b[:num_carry])]
    if new == carry_b:
      break
    carry_b = new
  moved = []
  for n, (v, d, b) in enumerate(zip(vals, dims, in_b)):
    is_x = n >= num_consts + num_carry
    if b:   # batch axis at 0 in the body, so at 1 for the scanned xs
      v = batching.matchaxis(v, d, 1 if is_x else 0, size)
    moved.append(v)
  consts, carry, xs = _split(moved, num_consts, num_carry)
  outs = scan_bind(list(body_consts) + consts, carry, xs, jaxpr=body, length=length,
                   reverse=reverse, unroll=unroll)
  out_dims = [(0 if k < num_carry else 1) if b else None for k, b in enumerate(out_b)]
  return outs, out_dims


_scan_batch.needs_trace = True
scan_p.batch = _scan_batch


# -- the user-facing function -----------------------------------------------------


def _infer_length(xs_leaves, length):
  if any(not hasattr(x, "shape") for x in xs_leaves):
    bad = ", ".join(str(x) for x in xs_leaves if not hasattr(x, "shape"))
    raise ValueError(f"scan got value with no leading axis to scan over: {bad}.")
  lengths = [x.shape[0] for x in xs_leaves]
  if length is not None:
    length = int(core.concrete_numpy_value(length)) if isinstance(length, core.ArrayBase) \
        else int(length)
    if not all(length == n for n in lengths):
      raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                       f"leading axis sizes {lengths}.")
    return length
  if len(set(lengths)) > 1:
    raise ValueError("scan got values with different leading axis sizes: "
                     f"{', '.join(str(n) for n in lengths)}.")
  if not lengths:
    raise ValueError("scan got no values to scan over and `length` not provided.")
  return lengths[0]


def _trace_body(f, init_avals, init_tree, x_avals, xs_tree):
  """Traces ``f(carry, x)``: (jaxpr taking consts first, consts, carry tree,
  carry out avals, ys tree)."""
  box = []

  def flat_fun(*flat):
    carry = tree_util.tree_unflatten(init_tree, flat[:len(init_avals)])
    x = tree_util.tree_unflatten(xs_tree, flat[len(init_avals):])
    out = f(carry, x)
    leaves, out_tree = tree_util.tree_flatten(out)
    for i, leaf in enumerate(leaves):
      if not core.is_array_like(leaf):
        raise TypeError(f"function {_fun_name(f)} traced for scan returned a value of "
                        f"type {type(leaf)} at output component [{i}], which is not a "
                        "valid JAX type")
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
      avals = [core.get_aval(x) for x in leaves]
      shown = (avals[0].str_short(mark_weak=True) if tree_util.treedef_is_leaf(out_tree)
               else tree_util.tree_unflatten(out_tree, avals))
      raise TypeError(f"scan body output must be a pair, got {shown}.")
    carry_leaves, carry_tree = tree_util.tree_flatten(out[0])
    box[:] = [carry_tree, tree_util.tree_structure(out[1]), out[0], len(carry_leaves)]
    return leaves

  closed, consts = trace_closed(flat_fun, list(init_avals) + list(x_avals))
  carry_tree, ys_tree, carry_out, num_carry_out = box
  carry_out_avals = closed.out_avals[:num_carry_out]
  return closed, consts, carry_tree, carry_out_avals, ys_tree, carry_out


def _fun_name(f):
  name = getattr(f, "__name__", type(f).__name__)
  code = getattr(f, "__code__", None)
  return f"{name} at {code.co_filename}:{code.co_firstlineno}" if code else name


def _carry_name(f):
  try:
    params = list(inspect.signature(f).parameters)
  except (TypeError, ValueError):
    return None
  return params[0] if params else None


def _check_carry(f, init, init_tree, init_avals, out_tree, out_avals, carry_out):
  name = _carry_name(f)

  def component(path):
    if name:
      return (f"the input carry component {name}{tree_util.keystr(path)}" if path
              else f"the input carry {name}")
    return f"the input carry at path {tree_util.keystr(path)}" if path else "the input carry"

  if init_tree != out_tree:
    in_tree = tree_util.tree_unflatten(init_tree, init_avals)
    diffs = [f"{component(p)} is a {a} but the corresponding component of the carry "
             f"output is a {b}, so {why}"
             for p, a, b, why in _equality_errors((), in_tree, carry_out)]
    if not diffs:
      return
    raise TypeError("scan body function carry input and carry output must have the same "
                    f"pytree structure, but they differ:\n\n{_bullets(diffs)}\n"
                    "Revise the function so that the carry output has the same pytree "
                    "structure as the carry input.")
  paths = [p for p, _ in tree_util.tree_flatten_with_path(
      tree_util.tree_unflatten(init_tree, list(range(len(init_avals)))))[0]]
  diffs = []
  for p, a, b in zip(paths, init_avals, out_avals):
    why = [w for w, bad in (("the dtypes do not match", a.dtype != b.dtype),
                            ("the shapes do not match", a.shape != b.shape)) if bad]
    if why:
      diffs.append(f"{component(p)} has type {a.str_short()} but the corresponding output "
                   f"carry component has type {b.str_short()}, so {', and '.join(why)}")
  if diffs:
    raise TypeError("scan body function carry input and carry output must have equal "
                    f"types, but they differ:\n\n{_bullets(diffs)}\n"
                    "Revise the function so that all output types match the "
                    "corresponding input types.")


def _equality_errors(path, a, b):
  """(path, what a is, what b is, why) for each structural difference."""
  leaf = lambda t: tree_util.treedef_is_strict_leaf(tree_util.tree_structure(t))
  if leaf(a) and leaf(b):
    return
  if type(a) is not type(b):
    yield path, str(type(a)), str(type(b)), "their Python types differ"
    return
  if isinstance(a, (list, tuple)) and len(a) != len(b):
    kind = type(a).__name__
    yield (path, f"{kind} of length {len(a)}", f"{kind} of length {len(b)}",
           "the lengths do not match")
    return
  ka, kb = tree_util.flatten_one_level_with_keys(a), tree_util.flatten_one_level_with_keys(b)
  if len(ka[0]) != len(kb[0]) or [k for k, _ in ka[0]] != [k for k, _ in kb[0]]:
    plural = lambda n: "ren" if n > 1 else ""
    yield (path, f"{type(a)} with {len(ka[0])} child{plural(len(ka[0]))}",
           f"{type(b)} with {len(kb[0])} child{plural(len(kb[0]))}",
           "the numbers of children do not match")
    return
  for (k, ca), (_, cb) in zip(ka[0], kb[0]):
    yield from _equality_errors(path + (k,), ca, cb)


def _bullets(diffs):
  if len(diffs) == 1:
    return diffs[0][0].upper() + diffs[0][1:] + ".\n"
  return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
  """Loops ``f(carry, x) -> (carry, y)`` over the leading axis of ``xs``;
  returns the final carry and the stacked ``y``s."""
  if not callable(f):
    raise TypeError("lax.scan: f argument should be a callable.")
  init_leaves, init_tree = tree_util.tree_flatten(init)
  xs_leaves, xs_tree = tree_util.tree_flatten(xs)
  length = _infer_length(xs_leaves, length)
  x_avals = [_unstacked(core.get_aval(x)) for x in xs_leaves]
  init_avals = [core.get_aval(x) for x in init_leaves]
  traced = _trace_body(f, init_avals, init_tree, x_avals, xs_tree)
  closed, consts, carry_tree, out_avals, ys_tree, carry_out = traced
  if carry_tree == init_tree:
    # A weakly typed init whose update has another type takes the update's type.
    promoted, changed = [], False
    for x, a, b in zip(init_leaves, init_avals, out_avals):
      if a.weak_type and (a.dtype != b.dtype or a.shape != b.shape):
        from purejax import lax
        x = lax.convert_element_type(x, dtypes.result_type(x, b))
        changed = True
      promoted.append(x)
    if changed:
      init_leaves, init_avals = promoted, [core.get_aval(x) for x in promoted]
      traced = _trace_body(f, init_avals, init_tree, x_avals, xs_tree)
      closed, consts, carry_tree, out_avals, ys_tree, carry_out = traced
  _check_carry(f, init, init_tree, init_avals, carry_tree, out_avals, carry_out)
  unroll = _check_unroll(unroll, length)
  closed, moved, ys_fwd = _forward(closed, len(consts), len(init_leaves))
  outs = iter(scan_bind([x for x, m in zip(init_leaves, moved) if m] + list(consts),
                        [x for x, m in zip(init_leaves, moved) if not m], xs_leaves,
                        jaxpr=closed, length=length, reverse=bool(reverse), unroll=unroll))
  carry = [x if m else next(outs) for x, m in zip(init_leaves, moved)]
  ys = [next(outs) if f is None else xs_leaves[f] for f in ys_fwd]
  return (tree_util.tree_unflatten(carry_tree, carry), tree_util.tree_unflatten(ys_tree, ys))


def _forward(closed, num_consts, num_carry):
  """As JAX does: a carry the body returns unchanged becomes a const (its
  final value is its init), and a y that is just its x is the xs itself."""
  from purejax._src.jaxpr import Jaxpr
  body = closed.jaxpr
  consts_in, carry_in, xs_in = _split(body.invars, num_consts, num_carry)
  moved = [o is v for o, v in zip(body.outvars[:num_carry], carry_in)]
  xs_pos = {v: i for i, v in enumerate(xs_in)}
  ys_fwd = [xs_pos.get(o) for o in body.outvars[num_carry:]]
  if not any(moved) and all(f is None for f in ys_fwd):
    return closed, moved, ys_fwd
  invars = ([v for v, m in zip(carry_in, moved) if m] + consts_in
            + [v for v, m in zip(carry_in, moved) if not m] + xs_in)
  outvars = ([o for o, m in zip(body.outvars[:num_carry], moved) if not m]
             + [o for o, f in zip(body.outvars[num_carry:], ys_fwd) if f is None])
  return ClosedJaxpr(Jaxpr([], invars, outvars, body.eqns), []), moved, ys_fwd


def _check_unroll(unroll, length):
  if isinstance(unroll, core.Tracer):
    raise core.ConcretizationTypeError(
        unroll, "The `unroll` argument to `scan` expects a concrete `int` or `bool` value.")
  if isinstance(unroll, (bool, np.bool_)):
    return max(length, 1) if unroll else 1
  unroll = int(unroll)
  if unroll < 0:
    raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
  return unroll


def map(f, xs, *, batch_size=None):
  """``f`` applied to each slice of ``xs`` along its leading axis (a scan);
  with ``batch_size``, ``vmap(f)`` over chunks of that many slices."""
  if batch_size is None:
    return scan(lambda _, x: ((), f(x)), (), xs)[1]
  from purejax import lax
  from purejax._src.vmap import vmap
  leaves, tree = tree_util.tree_flatten(xs)
  n = _infer_length(leaves, None)
  batch_size = min(int(batch_size), n)
  n_full, rem = divmod(n, batch_size)
  heads = [lax.slice_in_dim(x, 0, n_full * batch_size) for x in leaves]
  heads = [lax.reshape(x, (n_full, batch_size) + x.shape[1:]) for x in heads]
  out = scan(lambda _, x: ((), vmap(f)(x)), (), tree_util.tree_unflatten(tree, heads))[1]
  out = tree_util.tree_map(lambda y: lax.reshape(y, (n_full * batch_size,) + y.shape[2:]), out)
  if rem:
    tails = [lax.slice_in_dim(x, n_full * batch_size, n) for x in leaves]
    tail_out = vmap(f)(tree_util.tree_unflatten(tree, tails))
    out = tree_util.tree_map(lambda a, b: lax.concatenate([a, b], 0), out, tail_out)
  return out


from purejax._src.lax.control_flow import scan_ad  # noqa: E402,F401  (reverse-mode rules)
from purejax._src.lax.control_flow.associative_scan import associative_scan  # noqa: E402,F401
