"""A key dtype (``key<fry>``) as the ``dtype=`` argument of jnp functions:
``astype``/``asarray``/``array`` of a key array to its own dtype are no-ops
(optax's MultiSteps does ``jnp.astype(jnp.where(c, new, old), old.dtype)`` on
every state leaf, keys included), the fill functions make key arrays whose key
data all equal the fill value, and anything else raises JAX's errors. Compared
with JAX when it is installed."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import random
from tests.conftest import oracle


def _cases(jx):
  jnp_, r = jx.numpy, jx.random
  k = r.key(0)
  ks = r.split(k, 3)
  return {
      "astype": lambda: jnp_.astype(ks, ks.dtype),
      "astype_copy": lambda: jnp_.astype(ks, ks.dtype, copy=True),
      "asarray": lambda: jnp_.asarray(k, dtype=k.dtype),
      "array": lambda: jnp_.array(ks, dtype=k.dtype),
      "jit_where_astype": lambda: jx.jit(lambda a, b: jnp_.astype(jnp_.where(True, a, b), a.dtype))(
          ks[0], ks[1]),
      "zeros": lambda: jnp_.zeros((2,), k.dtype),
      "ones": lambda: jnp_.ones((2, 3), k.dtype),
      "empty": lambda: jnp_.empty((2,), k.dtype),
      "full": lambda: jnp_.full((2,), 7, k.dtype),
      "zeros_like": lambda: jnp_.zeros_like(ks),
      "ones_like": lambda: jnp_.ones_like(k),
      "full_like": lambda: jnp_.full_like(ks, 5),
      "jit_zeros_like": lambda: jx.jit(jnp_.zeros_like)(ks),
  }


ERRORS = {
    "array_of_list": (lambda: jnp.array([1, 2], dtype=random.key(0).dtype),
                      TypeError, "Cannot interpret 'key<fry>' as a data type"),
    "asarray_of_numpy": (lambda: jnp.asarray(np.ones(2, np.uint32), dtype=random.key(0).dtype),
                         TypeError, "Cannot interpret 'key<fry>' as a data type"),
    "astype_uint32_to_key": (lambda: jnp.astype(jnp.ones(2, jnp.uint32), random.key(0).dtype),
                             ValueError, "Cannot convert_element_type from uint32 to key<fry>"),
    "astype_key_to_float": (lambda: jnp.astype(random.key(0), jnp.float32),
                            ValueError, "Cannot convert_element_type from key<fry> to float32"),
}


@pytest.mark.parametrize("name", sorted(_cases(jax)))
def test_key_dtype_argument_matches_jax(name):
  real = oracle()
  got = _cases(jax)[name]()
  want = _cases(real)[name]()
  assert str(got.dtype) == str(want.dtype) == "key<fry>"
  assert got.shape == want.shape
  np.testing.assert_array_equal(np.asarray(random.key_data(got)),
                                np.asarray(real.random.key_data(want)))


def test_key_dtype_argument_written_out():
  k = random.key(0)
  ks = random.split(k, 3)
  assert jnp.astype(k, k.dtype) is k
  np.testing.assert_array_equal(random.key_data(jnp.astype(ks, ks.dtype)), random.key_data(ks))
  out = jnp.full((2,), 7, k.dtype)
  assert out.dtype == k.dtype and out.shape == (2,)
  np.testing.assert_array_equal(random.key_data(out), [[7, 7], [7, 7]])
  assert str(jax.make_jaxpr(lambda k: jnp.zeros_like(k))(k)) == (
      "{ lambda ; a:key<fry>[]. let\n"
      "    b:u32[2] = broadcast_in_dim 0:u32[]\n"
      "    c:key<fry>[] = random_wrap[impl=fry] b\n"
      "  in (c,) }")


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_key_dtype_argument_errors(name):
  fun, cls, msg = ERRORS[name]
  with pytest.raises(cls, match=msg):
    fun()
