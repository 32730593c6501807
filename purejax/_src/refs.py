"""Array refs (``jax.new_ref``): mutable arrays as a state effect.

A ``Ref`` made outside any staging trace is a box holding a value; reading
and writing it there is ordinary array code on that value, so ``grad`` and
``vmap`` of a function that makes its own refs need no rules of their own.
Inside ``jit``/``make_jaxpr``/loop bodies the reads and writes are staged as
the effectful primitives ``new_ref``, ``get``, ``swap``, ``addupdate`` and
``freeze``.  Before a staged jaxpr with refs runs (or is differentiated or
batched) it is *discharged*: ref inputs become value inputs plus final-value
outputs, and the caller writes those back into its boxes, in place.
"""
import numpy as np

from purejax._src import core
from purejax._src.interpreters import partial_eval as pe
from purejax._src.jaxpr import Literal


class AbstractRef(core.AbstractValue):
  """The type of a ref to arrays of ``inner_aval``: prints ``Ref{float32[3]}``."""
  __slots__ = ("inner_aval",)

  def __init__(self, inner_aval, memory_space=None, kind=None):
    self.inner_aval = inner_aval

  shape = property(lambda self: self.inner_aval.shape)
  dtype = property(lambda self: self.inner_aval.dtype)
  weak_type = property(lambda self: self.inner_aval.weak_type)
  ndim = property(lambda self: self.inner_aval.ndim)
  size = property(lambda self: self.inner_aval.size)

  def __eq__(self, other):
    return type(other) is AbstractRef and self.inner_aval == other.inner_aval

  def __hash__(self):
    return hash(("ref", self.inner_aval))

  def str_short(self, short_dtypes=False, mark_weak=False):
    return f"Ref{{{self.inner_aval.str_short(short_dtypes)}}}"

  __str__ = str_short

  def __repr__(self):
    return self.str_short()

  def strip_weak_type(self):
    return self


class Ref:
  """A mutable array reference (a box whose value reads and writes replace)."""
  __slots__ = ("_value", "_trace", "__weakref__")

  def __init__(self, value, trace):
    self._value = value
    self._trace = trace   # the trace that made it: there it is a plain box

  @property
  def aval(self):
    return AbstractRef(core.get_aval(self._value).update())

  shape = property(lambda self: self.aval.shape)
  dtype = property(lambda self: self.aval.dtype)
  ndim = property(lambda self: self.aval.ndim)
  size = property(lambda self: self.aval.size)

  def __getitem__(self, idx):
    return get(self, idx)

  def __setitem__(self, idx, value):
    set(self, idx, value)

  def addupdate(self, x, idx=None):
    addupdate(self, idx, x)

  def __hash__(self):
    return id(self)

  def __repr__(self):
    text = repr(self._value)
    return "Ref" + text[text.index("("):] if text.startswith("Array(") else f"Ref({text})"


core.ref_types = (Ref,)


# ---------------------------------------------------------------------------
# Indexers: static per-axis entries; integer indices are operands.

def _normalize(shape, idx):
  """``idx`` as (static spec, integer operands); a spec entry is "i" (the
  next operand) or a static (start, stop, step)."""
  if idx is None:
    idx = ()
  if not isinstance(idx, tuple):
    idx = (idx,)
  n_ell = sum(1 for i in idx if i is Ellipsis)
  if n_ell > 1:
    raise IndexError("an index can only have a single ellipsis ('...')")
  explicit = len(idx) - n_ell
  if explicit > len(shape):
    raise IndexError(f"Too many indices for ref of shape {shape}: got {explicit} indices")
  expanded = []
  for i in idx:
    if i is Ellipsis:
      expanded.extend([slice(None)] * (len(shape) - explicit))
    else:
      expanded.append(i)
  expanded.extend([slice(None)] * (len(shape) - len(expanded)))
  spec, operands = [], []
  for axis, i in zip(shape, expanded):
    if isinstance(i, slice):
      start, stop, step = i.indices(axis)
      spec.append((start, stop, step))
    elif i is None:
      raise IndexError("Ref indexing does not support None (newaxis)")
    else:
      aval = core.get_aval(i)
      if not np.issubdtype(aval.dtype, np.integer):
        raise IndexError(f"Ref indices must be integers or slices, got {aval.str_short()}")
      spec.append("i")
      operands.append(i)
  return tuple(spec), operands


def _rebuild(spec, operands):
  ops = iter(operands)
  return tuple(next(ops) if s == "i" else slice(*s) for s in spec)


def _indexed_aval(inner, spec, operand_avals):
  probe = np.empty(inner.shape, dtype=bool)
  out = probe[_rebuild(spec, [np.zeros(a.shape, np.int64) for a in operand_avals])]
  return core.ShapedArray(out.shape, inner.dtype, inner.weak_type)


def _spec_text(spec, shape, operand_texts):
  if all(s != "i" and s == (0, n, 1) for s, n in zip(spec, shape)):
    return "..."
  ops, parts = iter(operand_texts), []
  for s, n in zip(spec, shape):
    if s == "i":
      parts.append(next(ops))
    else:
      start, stop, step = s
      text = (f"{start if start else ''}:{stop if stop != n else ''}"
              + (f":{step}" if step != 1 else ""))
      parts.append(text)
  return ",".join(parts)


# ---------------------------------------------------------------------------
# Primitives (staged only; running them means discharging first)

def _effectful(name, multiple=False):
  p = core.Primitive(name, multiple)
  p.effectful = True      # never dropped by DCE nor merged by CSE
  p.c_code = None
  return p


new_ref_p = _effectful("new_ref")
get_p = _effectful("get")
swap_p = _effectful("swap")
addupdate_p = _effectful("addupdate", multiple=True)
freeze_p = _effectful("freeze")

new_ref_p.abstract_eval = lambda x, **_: AbstractRef(x)
new_ref_p.pp_params = lambda params: [("kind", None), ("memory_space", None)]
get_p.abstract_eval = lambda ref, *idx, spec: _indexed_aval(ref.inner_aval, spec, idx)
swap_p.abstract_eval = (lambda ref, val, *idx, spec:
                        _indexed_aval(ref.inner_aval, spec, idx))
addupdate_p.abstract_eval = lambda ref, val, *idx, spec: []
freeze_p.abstract_eval = lambda ref: ref.inner_aval


def _not_run(prim):
  def impl(*args, **params):
    raise NotImplementedError(f"{prim.name} runs only inside a discharged jaxpr; "
                              "evaluate the function rather than its jaxpr")
  prim.impl = impl


for _p in (new_ref_p, get_p, swap_p, addupdate_p, freeze_p):
  _not_run(_p)


def _index_atom(v, atom):
  return str(v.val) if type(v) is Literal else atom(v)


def _pp_eqn(eqn, atom, typed, unused):
  """JAX's notation: ``c <- a[...]``, ``a[1] <- v``, ``a[1] += v``."""
  prim, ins = eqn.primitive, eqn.invars
  ref = ins[0]
  if prim is get_p:
    where = _spec_text(eqn.params["spec"], ref.aval.shape, [_index_atom(v, atom) for v in ins[1:]])
    return f"{typed(eqn.outvars[0])} <- {atom(ref)}[{where}]"
  where = _spec_text(eqn.params["spec"], ref.aval.shape, [_index_atom(v, atom) for v in ins[2:]])
  target = f"{atom(ref)}[{where}]"
  if prim is addupdate_p:
    return f"{target} += {atom(ins[1])}"
  if eqn.outvars[0] in unused:
    return f"{target} <- {atom(ins[1])}"
  return f"{typed(eqn.outvars[0])}, {target} <- {target}, {atom(ins[1])}"


for _p in (get_p, swap_p, addupdate_p):
  _p.pp_eqn = _pp_eqn


# ---------------------------------------------------------------------------
# Where an operation on a ref happens

def is_staging(trace):
  """A trace that records operations (jit, make_jaxpr, loop bodies); the
  known half of linearize runs them at once."""
  return (isinstance(trace, pe.DynamicJaxprTrace)
          and not isinstance(trace, pe.PartialEvalTrace))


def _owner(ref):
  return ref._trace


def _staging_between(ref):
  """None when ``ref`` is a plain box (or its own staging trace's tracer)
  for the current trace; else the innermost staging trace, which must stage
  the operation (lifting an outer ref as a constant)."""
  owner = _owner(ref)
  t = core.current_trace()
  while t is not None and t is not owner:
    if is_staging(t):
      return t
    t = t.parent
  if t is None and owner is not core.eval_trace:
    raise ValueError(f"a mutable array reference of type {ref.aval.str_short()} was "
                     "used outside the transformation that created it")
  return None


def _foreign(value, ref):
  """Whether tracer ``value`` belongs to a trace inside ``ref``'s."""
  t = _owner(ref)
  while t is not None:
    if value._trace is t:
      return False
    t = t.parent
  return True


def _check_value(ref, value, stage_at):
  """A value written to a ref may not carry a transformation inner to it."""
  if not isinstance(value, core.Tracer):
    return
  home = stage_at if stage_at is not None else _owner(ref)
  t = home
  while t is not None:
    if value._trace is t:
      return
    t = t.parent
  from purejax._src.interpreters import ad
  if isinstance(value._trace, ad.JVPTrace):
    raise Exception(
        "performing a set/swap operation with a differentiated value on a "
        f"non-differentiated array reference of type {ref.aval.str_short()}. Move the "
        "array reference to be an argument of the differentiated function?")
  raise ValueError(f"cannot write a value of {value._trace!r} to the mutable array "
                   f"reference of type {ref.aval.str_short()} made outside it")


def _is_ref(x):
  return isinstance(x, Ref) or (isinstance(x, core.Tracer)
                                and isinstance(getattr(x, "aval", None), AbstractRef))


def _as_value(ref, value, target_aval):
  from purejax import lax
  import purejax.numpy as jnp
  value = jnp.asarray(value) if not isinstance(value, core.Tracer) else value
  value = lax.convert_element_type(value, target_aval.dtype)
  if value.shape != target_aval.shape:
    value = jnp.broadcast_to(value, target_aval.shape)
  return value


# ---------------------------------------------------------------------------
# The public operations

def new_ref(init_val, *, memory_space=None, kind=None):
  """A new mutable array reference holding ``init_val``."""
  if _is_ref(init_val):
    raise TypeError("new_ref expects an array, got a mutable array reference")
  import purejax.numpy as jnp
  trace = core.current_trace()
  if is_staging(trace):
    return new_ref_p.bind(init_val)
  value = init_val if isinstance(init_val, core.Tracer) else jnp.asarray(init_val)
  if not isinstance(value, core.Tracer) and isinstance(init_val, (int, float, complex)):
    value = jnp.asarray(init_val)   # keeps Python scalars' weak type
  return Ref(value, trace)


def _run(prim, ref, idx, value=None):
  if not _is_ref(ref):
    raise TypeError(f"expected a mutable array reference, got {type(ref).__name__}")
  stage_at = _staging_between(ref)
  spec, operands = _normalize(ref.shape, idx)
  inner = ref.aval.inner_aval
  out_aval = _indexed_aval(inner, spec, [core.get_aval(o) for o in operands])
  if value is not None:
    value = _as_value(ref, value, out_aval)
    _check_value(ref, value, stage_at)
  if stage_at is None and isinstance(ref, Ref):   # a plain box: array code
    return _apply(prim, ref, spec, operands, value)
  trace = stage_at if stage_at is not None else ref._trace
  with core.set_current_trace(trace):
    args = [ref] if value is None else [ref, value]
    return prim.bind(*args, *operands, spec=spec)


def _apply(prim, box, spec, operands, value):
  index = _rebuild(spec, operands)
  if box._value is None:
    raise ValueError("the mutable array reference was frozen and can't be used")
  old = box._value
  if prim is get_p:
    return old[index]
  full = all(s != "i" and s == (0, n, 1) for s, n in zip(spec, old.shape))
  if prim is swap_p:
    box._value = value if full else old.at[index].set(value)
    return old if full else old[index]
  box._value = old + value if full else old.at[index].add(value)
  return []


def get(ref, idx=None):
  """``ref[idx]``: the indexed elements, as an Array."""
  return _run(get_p, ref, idx)


def swap(ref, idx, value, _function_name="ref_swap"):
  """Writes ``value`` at ``ref[idx]``; returns what was there."""
  return _run(swap_p, ref, idx, value)


def set(ref, idx, value):
  """``ref[idx] = value``."""
  _run(swap_p, ref, idx, value)


def addupdate(ref, idx, x):
  """``ref[idx] += x`` as one operation."""
  _run(addupdate_p, ref, idx, x)


def freeze(ref):
  """The final value of ``ref``; the ref is invalidated."""
  if not _is_ref(ref):
    raise TypeError(f"expected a mutable array reference, got {type(ref).__name__}")
  stage_at = _staging_between(ref)
  if stage_at is None and isinstance(ref, Ref):
    value = ref._value
    return value
  with core.set_current_trace(stage_at if stage_at is not None else ref._trace):
    return freeze_p.bind(ref)


def _tracer_getitem(tracer, idx):
  return get(tracer, idx)


def _tracer_setitem(tracer, idx, value):
  set(tracer, idx, value)
