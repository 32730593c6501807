"""lax.create_token and lax.after_all: token values, their jaxprs (``Tok``)
and the clear error when a token crosses a jit boundary."""
import numpy as np
import pytest

import purejax
from purejax import lax

from conftest import oracle


def test_tokens_eager_and_traced():
  t = lax.create_token()
  assert type(lax.after_all(t, t)) is type(t)
  assert type(lax.after_all()) is type(t)
  assert type(lax.create_token(np.ones(3))) is type(t)
  text = str(purejax.make_jaxpr(lambda x: (lax.after_all(lax.create_token(x)), x * 2))(1.0))
  assert "Tok = create_token" in text and "Tok = after_all" in text


def test_same_jaxpr_as_jax():
  jax = oracle()
  ours = purejax.make_jaxpr(lambda: lax.after_all(lax.create_token(), lax.create_token()))()
  theirs = jax.make_jaxpr(
      lambda: jax.lax.after_all(jax.lax.create_token(), jax.lax.create_token()))()
  assert str(ours) == str(theirs)
  assert type(jax.lax.create_token()).__name__ == type(lax.create_token()).__name__


def test_jit():
  # Tokens used inside a jitted function are fine; at its boundary they are refused.
  f = purejax.jit(lambda x: (lax.after_all(lax.create_token(x)), x * 2)[1])
  np.testing.assert_array_equal(f(np.ones(3)), 2 * np.ones(3))
  with pytest.raises(NotImplementedError, match="tokens"):
    purejax.jit(lambda x: (lax.create_token(x), x))(1.0)


def test_after_all_rejects_arrays():
  with pytest.raises(TypeError, match="tokens"):
    lax.after_all(np.ones(2))
