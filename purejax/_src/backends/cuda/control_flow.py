"""Control flow on a GPU: ``scan``, ``while`` and ``cond`` run their bodies'
compiled GPU code from a loop on the host.  Carried values, the scanned
slices and the stacked outputs stay on the device; a while's condition and
a cond's index are read back (one scalar per iteration or call).

``compile_step(eqn, device, compile_jaxpr)`` gives ``run(*buffers) ->
buffers`` for such an equation, or None for any other."""
import numpy as np


def compile_step(eqn, device, compile_jaxpr):
  make = _STEPS.get(eqn.primitive.name)
  if make is None:
    return None
  body = lambda closed: _compiled(closed, device, compile_jaxpr)   # noqa: E731
  return make(eqn.params, device, body)


def _compiled(closed, device, compile_jaxpr):
  if closed.consts:   # purejax hoists a body's constants into its inputs
    raise ValueError("a control-flow body with constants")
  return compile_jaxpr(closed.jaxpr, device)


def _scan(params, device, body_of):
  body = body_of(params["jaxpr"])
  n_consts, n_carry = params["num_consts"], params["num_carry"]
  length, reverse = params["length"], params["reverse"]
  y_avals = params["jaxpr"].out_avals[n_carry:]

  def run(*args):
    consts, carry = args[:n_consts], list(args[n_consts:n_consts + n_carry])
    xs = args[n_consts + n_carry:]
    ys = [device.empty((length,) + a.shape, a.dtype) for a in y_avals]
    for i in (reversed(range(length)) if reverse else range(length)):
      outs = body(*consts, *carry, *[x[i] for x in xs])
      carry = outs[:n_carry]
      for stacked, y in zip(ys, outs[n_carry:]):
        stacked[i] = y
    return list(carry) + ys
  run.bodies = [body]
  return run


def _while(params, device, body_of):
  cond, body = body_of(params["cond_jaxpr"]), body_of(params["body_jaxpr"])
  n_cond, n_body = params["cond_nconsts"], params["body_nconsts"]

  def run(*args):
    cond_consts, body_consts = args[:n_cond], args[n_cond:n_cond + n_body]
    carry = args[n_cond + n_body:]
    while bool(device.to_host(cond(*cond_consts, *carry)[0], np.bool_)):
      carry = body(*body_consts, *carry)
    return list(carry)
  return run


def _cond(params, device, body_of):
  branches = [body_of(b) for b in params["branches"]]

  def run(index, *ops):
    i = int(np.clip(device.to_host(index, np.int32), 0, len(branches) - 1))
    return branches[i](*ops)
  return run


_STEPS = {"scan": _scan, "while": _while, "cond": _cond}
