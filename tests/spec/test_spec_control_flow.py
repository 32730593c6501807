"""The spec's structured control flow cells (000, 003, 004)."""
import pytest

import purejax.numpy as jnp
from purejax import lax, make_jaxpr


def test_fori_loop_and_iterators(capsys):
  array = jnp.arange(10)
  print(lax.fori_loop(0, 10, lambda i, x: x + array[i], 0))
  iterator = iter(range(10))
  print(lax.fori_loop(0, 10, lambda i, x: x + next(iterator), 0))
  assert capsys.readouterr().out == "45\n0\n"


def test_scan_jaxpr_of_func11():
  def func11(arr, extra):
    ones = jnp.ones(arr.shape)

    def body(carry, aelems):
      ae1, ae2 = aelems
      return (carry + ae1 * ae2 + extra, carry)

    return lax.scan(body, 0., (arr, ones))

  text = str(make_jaxpr(func11)(jnp.arange(16), 5.))
  assert "scan[" in text
  carry, ys = func11(jnp.arange(16), 5.)
  assert float(carry) == sum(range(16)) + 16 * 5.0
  assert ys.shape == (16,)


def test_cond_examples():
  operand = jnp.array([0.])
  assert repr(lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand)) == \
      "Array([1.], dtype=float32)"
  assert repr(lax.cond(False, lambda x: x + 1, lambda x: x - 1, operand)) == \
      "Array([-1.], dtype=float32)"


def test_while_and_fori_loop_examples():
  assert repr(lax.while_loop(lambda x: x < 10, lambda x: x + 1, 0)) == \
      "Array(10, dtype=int32, weak_type=True)"
  assert repr(lax.fori_loop(0, 10, lambda i, x: x + i, 0)) == \
      "Array(45, dtype=int32, weak_type=True)"
