"""custom_derivatives.linear_call: a linear function with a custom transpose,
eagerly, under jit, jvp, grad and linear_transpose, compared with closed forms
and with real JAX."""
import functools

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax.custom_derivatives import linear_call

from conftest import oracle


def _div(r, x):
  return x / r


def _div_transpose(r, ct):
  return ct / r


def _div_add(lc, x, denom):
  return x + lc(_div, _div_transpose, denom, x)


def _custom_id(lc, x):
  """The identity whose transpose (deliberately not the identity's) is 7."""
  return lc(lambda _, x: x, lambda _, t: 7., (), x)


def _transpose(jax, f, example):
  return lambda y: jax.linear_transpose(f, example)(y)[0]


def test_values_and_custom_transpose():
  assert float(_div_add(linear_call, 9., 3.)) == 12.0
  # the transpose uses _div_transpose: 18 + 18 / 3
  assert float(_transpose(purejax, functools.partial(_div_add, linear_call, denom=3.),
                          1.)(18.)) == 24.0
  ident = functools.partial(_custom_id, linear_call)
  assert float(ident(1.)) == 1.0
  assert float(_transpose(purejax, ident, 1.)(1.)) == 7.0
  # the transpose of the transpose is the function again
  twice = _transpose(purejax, _transpose(purejax, ident, 1.), 1.)
  assert float(twice(1.)) == 1.0
  assert float(_transpose(purejax, twice, 1.)(1.)) == 7.0


def test_grad_jit_and_jvp_use_the_custom_rules():
  ident = functools.partial(_custom_id, linear_call)
  # the custom transpose ignores its cotangent (2): 7, not 2
  assert float(purejax.grad(lambda x: ident(x) * 2.)(3.)) == 7.0
  f = lambda x: _div_add(linear_call, x, 4.)
  assert float(purejax.grad(f)(3.)) == 1.25
  assert float(purejax.jit(purejax.grad(f))(3.)) == 1.25
  primal, tangent = purejax.jvp(f, (3.,), (2.,))
  assert (float(primal), float(tangent)) == (3.75, 2.5)


def test_pytrees_closures_and_compiled_inline():
  w = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  W = jnp.asarray(w)

  def g(x):
    return linear_call(lambda r, x: {"y": W @ x["a"] * r},
                       lambda r, ct: {"a": W.T @ ct["y"] * r}, 2., {"a": x})["y"].sum()

  want = 2 * w.T @ np.ones(2, np.float32)
  np.testing.assert_allclose(purejax.grad(g)(jnp.ones(3)), want)
  jitted = purejax.jit(purejax.grad(g))
  np.testing.assert_allclose(jitted(jnp.ones(3)), want)
  text = jitted.lower(jnp.ones(3)).compile().as_text()
  assert "host steps (NumPy between compiled kernels): none" in text
  assert "linear_call[" in str(purejax.make_jaxpr(g)(jnp.ones(3)))


def test_errors():
  with pytest.raises(ValueError, match="residual_args"):
    purejax.grad(lambda r: _div_add(linear_call, 3., r))(2.)
  bad = lambda x: linear_call(_div, lambda r, c: (c, c), 2., x)
  with pytest.raises(TypeError, match="transpose output pytree structure must match that "
                     r"of linear inputs, got output structure PyTreeDef\(\(\*, \*\)\) and "
                     r"input structure PyTreeDef\(\*\)\."):
    purejax.grad(bad)(1.)
  with pytest.raises(NotImplementedError, match="Batching rule for 'linear_call'"):
    purejax.vmap(lambda x: linear_call(_div, _div_transpose, 2., x))(jnp.ones(3))


def _programs(jax):
  from importlib import import_module
  lc = import_module(jax.__name__ + ".custom_derivatives").linear_call
  f = functools.partial(_div_add, lc, denom=4.)
  ident = functools.partial(_custom_id, lc)
  return [f(9.), jax.grad(f)(3.), jax.jit(jax.grad(lambda x: ident(x) * x))(2.),
          *jax.jvp(f, (3.,), (2.,)), _transpose(jax, _transpose(jax, ident, 1.), 1.)(5.)]


def test_matches_jax():
  jax = oracle()
  for got, want in zip(_programs(purejax), _programs(jax), strict=True):
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
