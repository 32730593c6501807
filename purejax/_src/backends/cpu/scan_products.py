"""Matrix products taken out of ``scan`` loops, where one large product
does the work of many small ones.

An RNN's scan makes two kinds of small products per step that need not be
made inside the loop:

- ``x_t @ u``, of a per-step input and a loop constant (the input
  projection): **hoisted**, computed for every step at once before the
  loop as one ``xs @ u`` and fed to the body as a new per-step input.
- In the backward pass, a weight gradient accumulated in a carry,
  ``dw = dw + h_t^T g_t`` (an outer product, or a product over a batch),
  where ``dw`` is read by nothing else: the body instead **emits** the
  factors computed in it as per-step outputs, and after the loop
  ``dw = dw_0 + H^T G``, one product contracting over the steps too.

A 1000-step RNN of width 128 runs its forward and backward pass in half
the time.  The sums are the same sums in another order (a blocked product
instead of a running sum), as deterministic as before: the bits depend on
the shapes only.  Products whose stacked operands or results would exceed
``MAX_STACKED_BYTES`` stay in the loop.
"""
import numpy as np

from purejax._src.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal, Var

MAX_STACKED_BYTES = 1 << 26
_ADDS = ("add_any", "add")


def rewrite(jaxpr):
  """``jaxpr`` with its scans' products hoisted and accumulations emitted."""
  eqns, changed = [], False
  for e in jaxpr.eqns:
    new = _rewrite_scan(e) if e.primitive.name == "scan" else None
    if new is None:
      eqns.append(e)
    else:
      eqns.extend(new)
      changed = True
  return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns) if changed else jaxpr


def _blas_dtype(*avals):
  from purejax._src.backends.cpu import native
  dtypes = {np.dtype(a.dtype) for a in avals}
  return len(dtypes) == 1 and dtypes.pop() in native.BLAS_DTYPES


def _nbytes(aval, length):
  return length * int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize


class _Scan:
  """A scan equation taken apart: its body's equations and the outer
  operands of its consts, carries and xs, rebuilt into new equations."""

  def __init__(self, eqn):
    from purejax._src.backends.cpu.fusion import inline_calls
    p = eqn.params
    body = inline_calls(p["jaxpr"].jaxpr)   # products inside calls in the body too
    self.eqn, self.length = eqn, p["length"]
    nc, nk = p["num_consts"], p["num_carry"]
    self.body_eqns = list(body.eqns)
    self.consts = list(zip(body.invars[:nc], eqn.invars[:nc]))
    self.carries = list(zip(body.invars[nc:nc + nk], eqn.invars[nc:nc + nk],
                            body.outvars[:nk], eqn.outvars[:nk]))
    self.xs = list(zip(body.invars[nc + nk:], eqn.invars[nc + nk:]))
    self.ys = list(zip(body.outvars[nk:], eqn.outvars[nk:]))
    self.before, self.after = [], []   # new outer equations

  def stacked(self, v):
    """The outer stacked value of body value ``v``, if it is an xs."""
    return next((outer for b, outer in self.xs if b is v), None)

  def const(self, v):
    return next((outer for b, outer in self.consts if b is v), None)

  def readers(self):
    count = {}
    for e in self.body_eqns:
      for v in e.invars:
        if type(v) is Var or type(v) is DropVar:
          count[v] = count.get(v, 0) + 1
    for v in [c[2] for c in self.carries] + [y[0] for y in self.ys]:
      if type(v) is not Literal:
        count[v] = count.get(v, 0) + 1
    return count

  def equation(self):
    p = self.eqn.params
    body = Jaxpr([], [c for c, _ in self.consts] + [k[0] for k in self.carries]
                 + [x for x, _ in self.xs],
                 [k[2] for k in self.carries] + [y for y, _ in self.ys], self.body_eqns)
    params = dict(p, jaxpr=ClosedJaxpr(body, []), num_carry=len(self.carries))
    invars = [o for _, o in self.consts] + [k[1] for k in self.carries] + [o for _, o in self.xs]
    outvars = [k[3] for k in self.carries] + [o for _, o in self.ys]
    return self.before + [self.eqn.replace(invars=invars, outvars=outvars, params=params)] \
        + self.after


def _rewrite_scan(eqn):
  p = eqn.params
  if p["jaxpr"].consts or p["jaxpr"].jaxpr.constvars or p["length"] < 2:
    return None
  scan = _Scan(eqn)
  hoisted = _hoist_products(scan)
  emitted = _emit_accumulations(scan)
  return scan.equation() if hoisted or emitted else None


def _free_dims_only(dot):
  (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
  return not lb and not rb


def _hoist_products(scan):
  """Moves each body product of one per-step input and one constant out of
  the loop (in order, so a product of a hoisted product is hoisted too)."""
  from purejax._src.lax.structural import transpose_p
  hoisted = False
  for dot in list(scan.body_eqns):
    if dot.primitive.name != "dot_general" or not _free_dims_only(dot):
      continue
    lhs, rhs = dot.invars
    out = dot.outvars[0]
    if type(lhs) is Literal or type(rhs) is Literal:
      continue
    stacked = [scan.stacked(lhs), scan.stacked(rhs)]
    fixed = [scan.const(lhs), scan.const(rhs)]
    if sum(s is not None for s in stacked) != 1 or sum(f is not None for f in fixed) != 1:
      continue
    if not _blas_dtype(lhs.aval, rhs.aval, out.aval) or \
        _nbytes(out.aval, scan.length) > MAX_STACKED_BYTES:
      continue
    (lc, rc), _ = dot.params["dimension_numbers"]
    stacked_aval = out.aval.update(shape=(scan.length,) + out.aval.shape)
    result = Var(stacked_aval)
    if stacked[0] is not None:   # the steps are the first free dims of lhs: out's axis 0
      numbers = ((tuple(d + 1 for d in lc), tuple(rc)), ((), ()))
      scan.before.append(dot.replace(invars=[stacked[0], fixed[1]], outvars=[result],
                                     params=dict(dot.params, dimension_numbers=numbers)))
    else:                        # the steps come after lhs's free dims: moved to the front
      numbers = ((tuple(lc), tuple(d + 1 for d in rc)), ((), ()))
      nl = lhs.aval.ndim - len(lc)
      shape = out.aval.shape[:nl] + (scan.length,) + out.aval.shape[nl:]
      product = Var(out.aval.update(shape=shape))
      scan.before.append(dot.replace(invars=[fixed[0], stacked[1]], outvars=[product],
                                     params=dict(dot.params, dimension_numbers=numbers)))
      perm = (nl,) + tuple(range(nl)) + tuple(range(nl + 1, len(shape)))
      scan.before.append(dot.replace(invars=[product], outvars=[result],
                                     primitive=transpose_p, params={"permutation": perm}))
    scan.body_eqns.remove(dot)
    scan.xs.append((out, result))
    hoisted = True
  return hoisted


def _producer(scan, v):
  return next((e for e in scan.body_eqns if v in e.outvars), None)


def _emit_accumulations(scan):
  """Carries ``c = c + dot(a_t, b_t)`` (no batch dims, maybe transposed),
  read by nothing else, summed after the loop by one product that also
  contracts the steps."""
  emitted = False
  for carry in list(scan.carries):
    plan = _accumulation(scan, carry)
    if plan is None:
      continue
    add, transpose, dot, operands = plan
    for e in (add, transpose, dot):
      if e is not None:
        scan.body_eqns.remove(e)
    scan.carries.remove(carry)
    body_in, init, body_out, final = carry
    if type(final) is DropVar:
      emitted = True
      continue
    stacks = []
    for v in operands:
      outer = scan.stacked(v) or next(
          (o for y, o in scan.ys if y is v and type(o) is not DropVar), None)
      if outer is None:   # computed in the body: a new per-step output
        outer = Var(v.aval.update(shape=(scan.length,) + v.aval.shape))
        scan.ys.append((v, outer))
      stacks.append(outer)
    total = Var(dot.outvars[0].aval)
    (lc, rc), _ = dot.params["dimension_numbers"]   # the steps contracted too
    numbers = (((0,) + tuple(d + 1 for d in lc), (0,) + tuple(d + 1 for d in rc)), ((), ()))
    scan.after.append(dot.replace(invars=stacks, outvars=[total],
                                  params=dict(dot.params, dimension_numbers=numbers)))
    if transpose is not None:
      moved = Var(transpose.outvars[0].aval)
      scan.after.append(transpose.replace(invars=[total], outvars=[moved]))
      total = moved
    scan.after.append(add.replace(invars=[init, total], outvars=[final]))
    emitted = True
  return emitted


def _accumulation(scan, carry):
  """(add, transpose or None, product, its two operands) when
  ``carry`` is such an accumulator, else None."""
  body_in, init, body_out, _ = carry
  if type(body_out) is Literal or type(init) is Literal:
    return None
  readers = scan.readers()
  add = _producer(scan, body_out)
  if (add is None or add.primitive.name not in _ADDS or readers.get(body_out) != 1
      or readers.get(body_in) != 1 or body_in not in add.invars):
    return None
  delta = add.invars[1] if add.invars[0] is body_in else add.invars[0]
  if type(delta) is Literal or readers.get(delta) != 1 or delta is body_in:
    return None
  transpose = _producer(scan, delta)
  if transpose is not None and transpose.primitive.name == "transpose":
    product = transpose.invars[0]
    if type(product) is Literal or readers.get(product) != 1:
      return None
  else:
    transpose, product = None, delta
  dot = _producer(scan, product)
  if dot is None or dot.primitive.name != "dot_general" or not _free_dims_only(dot):
    return None
  operands = dot.invars
  if any(type(v) is Literal or scan.const(v) is not None for v in operands):
    return None
  if not _blas_dtype(*(v.aval for v in operands), product.aval, body_out.aval):
    return None
  if any(scan.stacked(v) is None and _nbytes(v.aval, scan.length) > MAX_STACKED_BYTES
         for v in operands):
    return None
  return add, transpose, dot, list(operands)
