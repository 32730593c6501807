"""Functions of functions: vectorize (NumPy's generalized ufuncs, on vmap),
apply_along_axis, apply_over_axes and piecewise.

All of them are built on ``vmap`` and ``lax.switch``, so the user's function
is traced once, never called per element.
"""
import functools
import re
import warnings

import numpy as np

from purejax import lax
from purejax._src.config import config
from purejax._src.numpy import creation
from purejax._src.numpy import shape_ops
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike
from purejax._src.vmap import vmap as _vmap


# ---------------------------------------------------------------------------
# vectorize

_DIM = r"\w+"
_CORE = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_SIGNATURE = rf"^{_CORE}(?:,{_CORE})*->{_CORE}(?:,{_CORE})*$"


def _parse_signature(signature):
  """'(m,n),(n)->(m)' as ([('m', 'n'), ('n',)], [('m',)])."""
  if not re.match(_SIGNATURE, signature):
    raise ValueError(f"not a valid gufunc signature: {signature}")
  ins, outs = signature.split("->")
  parse = lambda text: [tuple(re.findall(_DIM, arg)) for arg in re.findall(_CORE, text)]
  return parse(ins), parse(outs)


def _update_sizes(sizes, shape, core, context, is_input):
  """Checks ``shape`` against the core dims, recording their sizes."""
  if is_input and len(shape) < len(core):
    raise ValueError(f"input with shape {shape!r} does not have enough dimensions for all "
                     f"core dimensions {core!r} {context}")
  if not is_input and len(shape) != len(core):
    raise ValueError(f"output shape {shape!r} does not match core dimensions {core!r} "
                     f"{context}")
  for dim, size in zip(core, shape[len(shape) - len(core):] if core else ()):
    if sizes.setdefault(dim, size) != size:
      raise ValueError(f"inconsistent size for core dimension {dim!r}: {size!r} vs "
                       f"{sizes[dim]!r} {context}")


def _checked_outputs(func, sizes, out_core, context):
  def wrapped(*args):
    out = func(*args)
    outs = out if isinstance(out, tuple) else [out]
    if len(out_core) > 1 and not isinstance(out, tuple):
      raise TypeError("output must be a tuple when multiple outputs are expected, "
                      f"got: {out!r}\n{context}")
    if len(outs) != len(out_core):
      raise TypeError(f"wrong number of output arguments: expected {len(out_core)!r}, got "
                      f"{len(outs)!r} {context}")
    seen = dict(sizes)
    for o, core in zip(outs, out_core):
      _update_sizes(seen, np.shape(o), core, context, False)
    return out
  return wrapped


def _without(func, excluded, args, kwargs):
  """``func`` with the excluded positional and keyword arguments bound."""
  if not excluded:
    return func, list(args), kwargs
  fixed = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
           if i < len(args)]
  fixed_kwargs = {k: v for k, v in kwargs.items() if k in excluded}
  rest = [a for i, a in enumerate(args) if i not in excluded]
  rest_kwargs = {k: v for k, v in kwargs.items() if k not in excluded}

  def bound(*args, **kwargs):
    args = list(args)
    for i, a in fixed:
      args.insert(i, a)
    return func(*args, **kwargs, **fixed_kwargs)

  return bound, rest, rest_kwargs


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
  """``pyfunc`` broadcast over leading axes like a NumPy (generalized) ufunc,
  by ``vmap`` over each loop axis rather than a Python loop."""
  if any(not isinstance(e, (str, int)) for e in excluded):
    raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, "
                    f"but excluded={excluded!r}")
  if any(isinstance(e, int) and e < 0 for e in excluded):
    raise ValueError(f"excluded={excluded!r} contains negative numbers")

  @functools.wraps(pyfunc)
  def wrapped(*args, **kwargs):
    context = (f"on vectorized function with excluded={excluded!r} and "
               f"signature={signature!r}")
    func, args, kwargs = _without(pyfunc, excluded, args, kwargs)
    if signature is None:
      in_core, out_core = [()] * len(args), None
    else:
      in_core, out_core = _parse_signature(signature)
    nones = {i for i, a in enumerate(args) if a is None}
    if nones:
      if any(in_core[i] != () for i in nones):
        raise ValueError(f"Cannot pass None at locations {nones} with {signature=}")
      func, args, _ = _without(func, nones, args, {})
      in_core = [c for i, c in enumerate(in_core) if i not in nones]
    args = [creation.asarray(a) for a in args]
    if len(args) != len(in_core):
      raise TypeError(f"wrong number of positional arguments: expected {len(in_core)!r}, "
                      f"got {len(args)!r} {context}")
    sizes, loop_shapes = {}, []
    for a, core in zip(args, in_core):
      _update_sizes(sizes, util.shape(a), core, context, True)
      loop_shapes.append(util.shape(a)[:util.ndim(a) - len(core)])
    loop_shape = util.broadcast_shapes(*loop_shapes)
    if out_core is not None:
      func = _checked_outputs(func, sizes, out_core, context)
    _rank_check(args, in_core, loop_shapes, signature)
    return _vectorized_call(func, args, kwargs, loop_shapes, loop_shape)

  return wrapped


def _rank_check(args, in_core, loop_shapes, signature):
  mode = config.jax_numpy_rank_promotion
  ranks = {len(s) for a, s in zip(args, loop_shapes) if util.ndim(a)}
  if mode == "allow" or len(ranks) <= 1:
    return
  msg = (f"operands with shapes {[util.shape(a) for a in args]} require rank promotion for "
         f"jnp.vectorize function with signature {signature}. Set the "
         "jax_numpy_rank_promotion config option to 'allow' to disable this message; for "
         "more information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
  if mode == "warn":
    warnings.warn(msg)
  else:
    raise ValueError(msg)


def _vectorized_call(func, args, kwargs, loop_shapes, loop_shape):
  """vmaps ``func`` once per loop axis, innermost last; size-1 loop axes are
  squeezed and broadcast back at the end."""
  squeezed, rev_shapes = [], []
  for a, s in zip(args, loop_shapes):
    rev_shapes.append(((1,) * (len(loop_shape) - len(s)) + s)[::-1])
    ones = tuple(i for i, d in enumerate(s) if d == 1)
    squeezed.append(lax.squeeze(a, ones) if ones else a)
  vectorized = lambda *a: func(*a, **kwargs)
  expand = []
  for negdim, sizes in enumerate(zip(*rev_shapes)):
    in_axes = tuple(None if d == 1 else 0 for d in sizes)
    if all(ax is None for ax in in_axes):
      expand.append(len(loop_shape) - 1 - negdim)
    else:
      vectorized = _vmap(vectorized, in_axes)
  out = vectorized(*squeezed)
  if not expand:
    return out
  grow = lambda x: util.expand_dims_at(util.asarray(x), tuple(sorted(expand)))
  return tuple(map(grow, out)) if isinstance(out, tuple) else grow(out)


# ---------------------------------------------------------------------------
# Along and over axes

def apply_along_axis(func1d, axis, arr, *args, **kwargs):
  """``func1d`` applied to each 1-D slice of ``arr`` along ``axis`` (vmapped
  over all the other axes)."""
  check_arraylike("apply_along_axis", arr)
  nd = util.ndim(arr)
  axis = util.canonicalize_axis(axis, nd)
  func = lambda x: func1d(x, *args, **kwargs)
  for i in range(1, nd - axis):
    func = _vmap(func, in_axes=i, out_axes=-1)
  for _ in range(axis):
    func = _vmap(func, in_axes=0, out_axes=0)
  return func(arr)


def apply_over_axes(func, a, axes):
  """``func(a, axis)`` applied for each axis in turn, keeping the rank."""
  check_arraylike("apply_over_axes", a)
  a = util.asarray(a)
  for axis in axes:
    b = func(a, axis)
    if util.ndim(b) == util.ndim(a) - 1:
      b = shape_ops.expand_dims(b, axis)
    elif util.ndim(b) != util.ndim(a):
      raise ValueError("function is not returning an array of the correct shape")
    a = b
  return a


# ---------------------------------------------------------------------------
# piecewise

def piecewise(x, condlist, funclist, *args, **kw):
  """``funclist[i](x)`` (or the constant ``funclist[i]``) where
  ``condlist[i]`` holds; the last true condition wins, and an extra last
  function gives the default (0 otherwise).  Every element picks its
  branch with ``lax.switch``, so all branches are traced."""
  check_arraylike("piecewise", x)
  x = util.asarray(x)
  nc, nf = len(condlist), len(funclist)
  if nf == nc + 1:
    funclist = list(funclist[-1:]) + list(funclist[:-1])
  elif nf == nc:
    funclist = [0] + list(funclist)
  else:
    raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                     f"expected; got {nf}")
  conds = creation.asarray(condlist, dtype=bool)
  dtype = util.aval_of(x).dtype
  # Branch k + 1 where condition k is the last true one, else branch 0.
  ranks = lax.broadcasted_iota(np.dtype(np.int32), util.shape(conds), 0)
  ranks = lax.add(ranks, np.int32(1))
  index = lax.reduce_max(lax.select(conds, ranks, creation.zeros_like(ranks)), (0,))

  def branch(f):
    if callable(f):
      return lambda v: lax.convert_element_type(f(v, *args, **kw), dtype, False)
    return lambda v: creation.array(f, dtype=dtype)

  branches = [branch(f) for f in funclist]
  return vectorize(lax.switch, excluded=(1,))(index, branches, x)
