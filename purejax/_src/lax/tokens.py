"""Tokens (lax.create_token, lax.after_all): values that carry no data and
only order side effects, as in JAX.  Their type prints as ``Tok``; inside
compiled code a token is an empty boolean array, so every backend passes it
through unchanged."""
import numpy as np

from purejax._src import core
from purejax._src.interpreters import batching
from purejax._src.lax.families import standard_primitive


class AbstractToken(core.ShapedArray):
  """The type of tokens (an empty array to the backends)."""
  __slots__ = ()
  is_token = True

  def __init__(self, *args, **kwargs):
    super().__init__((0,), np.bool_)

  def __eq__(self, other):
    return type(other) is AbstractToken

  def __hash__(self):
    return hash("token")

  def update(self, *args, **kwargs):
    return self

  def str_short(self, short_dtypes=False, mark_weak=False):
    return "Tok"

  __str__ = str_short

  def __repr__(self):
    return "AbstractToken()"


abstract_token = AbstractToken()


class Token:
  """A token value: ordering only, no data."""
  __slots__ = ()
  aval = abstract_token

  def block_until_ready(self):
    return self


def _create_token_impl(*operands):
  return Token()


create_token_p = standard_primitive("create_token", lambda *avals: abstract_token,
                                    _create_token_impl)


create_token_p.batch = lambda axis_size, vals, dims, **params: (
    create_token_p.bind(), batching.not_mapped)

after_all_p = standard_primitive("after_all", lambda *avals: abstract_token,
                                 lambda *tokens: Token())


def _after_all_batch(axis_size, vals, dims, **params):
  return after_all_p.bind(*vals), batching.not_mapped


after_all_p.batch = _after_all_batch


def create_token(_=None):
  """A new token (the argument, accepted for compatibility, is ignored)."""
  return create_token_p.bind()


def after_all(*operands):
  """A token that follows all the given tokens."""
  for t in operands:
    if not isinstance(core.get_aval(t), AbstractToken):
      raise TypeError(f"after_all expects tokens, got {core.get_aval(t)}")
  return after_all_p.bind(*operands)
