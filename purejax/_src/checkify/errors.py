"""The error value that ``checkify`` threads through a program, its error
categories and the exception ``Error.throw`` raises.

An error is a bool flag (did anything fail), an int32 code (which check
failed first) and, per check site that may fire, the arrays its message is
formatted from.  The sites (static: error class, message) are the pytree's
auxiliary data; the flag, code and payloads are its leaves, so an error
passes through jit, vmap and loops like any other value.
"""
import itertools

import numpy as np

from purejax._src import tree_util


class JaxRuntimeError(ValueError):
  """Raised by ``Error.throw`` and by a failing ``check`` run eagerly."""


class JaxException(Exception):
  """Base of the error categories: ``Error.get_exception`` returns one."""

  def __init__(self, message=""):
    super().__init__()
    self._message = message

  def __str__(self):
    return self._message


class BatchedError(JaxException):
  """The failures of a mapped error (``checkify`` of ``vmap`` or ``pmap``),
  by mapped index."""

  def __init__(self, error_mapping):
    super().__init__()
    self.error_mapping = error_mapping

  def __str__(self):
    return "\n".join(f"at mapped index {', '.join(map(str, idx))}: {e}"
                     for idx, e in self.error_mapping.items())


ErrorCategory = type[JaxException]


class FailedCheckError(JaxException):
  """A user ``check`` whose predicate was False."""


class NaNError(JaxException):
  """A primitive produced a NaN."""


class OOBError(JaxException):
  """An out-of-bounds index in a gather, scatter or dynamic slice."""


class DivisionByZeroError(JaxException):
  """A division by zero."""


user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks

_codes = itertools.count()


class Site:
  """One place that may fail: its category, its code and how its message is
  made from the payload's values (NumPy arrays)."""
  __slots__ = ("error_class", "code", "format", "num_payload")

  def __init__(self, error_class, format, num_payload):
    self.error_class = error_class
    self.code = next(_codes)
    self.format = format
    self.num_payload = num_payload

  def __repr__(self):
    return f"{self.error_class.__name__}#{self.code}"


def _np(x):
  return np.asarray(x)


class Error:
  """What ``checkify(f)`` returns beside ``f``'s output."""

  def __init__(self, flag, code, payloads, sites):
    self._flag = flag
    self._code = code
    self._payloads = tuple(tuple(p) for p in payloads)
    self._sites = tuple(sites)

  def _messages(self):
    """(mapped index, a tuple, () if unmapped; message; site) for each
    failing element."""
    flag, code = _np(self._flag), _np(self._code)
    by_code = {s.code: k for k, s in enumerate(self._sites)}
    out = []
    for idx in np.ndindex(flag.shape):
      if not flag[idx]:
        continue
      k = by_code[int(code[idx])]
      # (payloads stay Arrays: a key array is formatted as one)
      values = [p[idx] if idx else p for p in self._payloads[k]]
      out.append((idx, self._sites[k].format(values), self._sites[k]))
    return out

  def get(self):
    """The failure message (one line per failing mapped index), or None."""
    exception = self.get_exception()
    return None if exception is None else str(exception)

  def get_exception(self):
    """The failure as an instance of its error category (of a mapped error:
    a ``BatchedError`` holding each failing index's), or None."""
    msgs = self._messages()
    if not msgs:
      return None
    if np.ndim(self._flag) == 0:
      return msgs[0][2].error_class(msgs[0][1])
    return BatchedError({idx: site.error_class(m) for idx, m, site in msgs})

  def throw(self):
    """Raises ``JaxRuntimeError`` with the message if a check failed; of a
    mapped error, as JAX does, only the last failing index's message."""
    msgs = self._messages()
    if msgs:
      raise JaxRuntimeError(msgs[-1][1])

  def __str__(self):
    return f"Error({self.get()})"

  __repr__ = __str__


def _flatten(err):
  leaves = [err._flag, err._code]
  for ps in err._payloads:
    leaves.extend(ps)
  return leaves, err._sites


def _unflatten(sites, leaves):
  flag, code, rest = leaves[0], leaves[1], list(leaves[2:])
  payloads = []
  for s in sites:
    payloads.append(rest[:s.num_payload])
    rest = rest[s.num_payload:]
  return Error(flag, code, payloads, sites)


tree_util.register_pytree_node(Error, _flatten, _unflatten)


def no_error():
  """An error with nothing failed and no sites."""
  from purejax._src.array import wrap_numpy
  from purejax._src import core
  f, c = np.bool_(False), np.int32(-1)
  return Error(wrap_numpy(np.asarray(f), core.get_aval(f)),
               wrap_numpy(np.asarray(c), core.get_aval(c)), [], [])


def _batch_shape(err):
  return tuple(np.shape(err._flag))


def _broadcast(err, batch):
  """``err`` with leading axes ``batch`` (its own batch axes stretched): a
  failure of an unmapped check counts at every mapped index."""
  from purejax import numpy as jnp
  own = _batch_shape(err)
  if own == batch:
    return err

  def spread(x):
    x = jnp.asarray(x)
    x = x.reshape((1,) * (len(batch) - len(own)) + x.shape)
    return jnp.broadcast_to(x, batch + x.shape[len(batch):])
  return Error(spread(err._flag), spread(err._code),
               [[spread(p) for p in ps] for ps in err._payloads], err._sites)


def merge(first, second):
  """The error of running ``first`` then ``second``: the first failure wins.
  An error mapped over devices (``checkify`` of ``pmap``) has leading batch
  axes on its flag, code and payloads; the other is spread over them."""
  from purejax import numpy as jnp
  if not second._sites:
    return first
  batch = np.broadcast_shapes(_batch_shape(first), _batch_shape(second))
  first, second = _broadcast(first, batch), _broadcast(second, batch)
  f1 = first._flag

  def pick(a, b):   # first's payload where first failed
    a, b = jnp.asarray(a), jnp.asarray(b)
    return jnp.where(jnp.reshape(f1, batch + (1,) * (a.ndim - len(batch))), a, b)
  mine = dict(zip(first._sites, first._payloads))
  theirs = dict(zip(second._sites, second._payloads))
  sites = list(first._sites) + [s for s in second._sites if s not in mine]
  payloads = []
  for s in sites:
    if s in mine and s in theirs:
      payloads.append([pick(a, b) for a, b in zip(mine[s], theirs[s])])
    else:
      payloads.append(mine[s] if s in mine else theirs[s])
  return Error(jnp.logical_or(f1, second._flag), jnp.where(f1, first._code, second._code),
               payloads, sites)


def single(failed, site, payload):
  """The error of one site: ``failed`` (a bool scalar) with its payload."""
  from purejax import numpy as jnp
  return Error(jnp.asarray(failed, dtype=bool),
               jnp.where(failed, np.int32(site.code), np.int32(-1)),
               [list(payload)], [site])
