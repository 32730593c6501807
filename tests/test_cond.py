"""lax.cond and lax.switch: values, errors, printed jaxprs, and every
transformation (jit, jvp/grad, vmap with batched operands or index)."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.config import config
from purejax.test_util import check_grads


def f_cond(x):
  return lax.cond(x > 0, lambda x: jnp.sin(x) * x, lambda x: x * x * x, x)


def f_py(x):
  return np.sin(x) * x if x > 0 else x * x * x


# -- values ------------------------------------------------------------------------

def test_spec_examples():
  out = lax.cond(True, lambda x: x + 1, lambda x: x - 1, jnp.array([0.]))
  assert repr(out) == "Array([1.], dtype=float32)"
  out = lax.cond(False, lambda x: x + 1, lambda x: x - 1, jnp.array([0.]))
  assert repr(out) == "Array([-1.], dtype=float32)"


@pytest.mark.parametrize("x", [2.0, -1.5, 0.0])
def test_values_eager_and_jit(x):
  expected = np.float32(f_py(np.float32(x)))
  np.testing.assert_allclose(f_cond(x), expected, rtol=1e-6)
  np.testing.assert_allclose(jax.jit(f_cond)(x), expected, rtol=1e-6)


def test_both_branches_traced_one_runs():
  traced, ran = [], []

  def branch(name, op):
    def fun(x):
      traced.append(name)
      return op(x)
    return fun

  out = lax.cond(False, branch("t", lambda x: x + 1), branch("f", lambda x: x - 1), 1.)
  assert traced == ["t", "f"] and float(out) == 0.


def test_pytree_operands_and_outputs():
  ops = {"a": jnp.ones(2), "b": (jnp.float32(3.), jnp.int32(2))}
  fun = lambda p, ops: lax.cond(p, lambda d: {"s": d["a"] * d["b"][0], "i": d["b"][1] + 1},
                                lambda d: {"s": d["a"] - 1, "i": d["b"][1]}, ops)
  for p in (True, False):
    for out in (fun(p, ops), jax.jit(fun)(p, ops)):
      np.testing.assert_allclose(out["s"], [3., 3.] if p else [0., 0.])
      assert int(out["i"]) == (3 if p else 2) and out["i"].dtype == np.int32


def test_int_and_float_predicates():
  assert float(lax.cond(jnp.int8(3), lambda: 1., lambda: 2.)) == 1.
  assert float(lax.cond(0.0, lambda: 1., lambda: 2.)) == 2.
  assert float(jax.jit(lambda p: lax.cond(p, lambda: 1., lambda: 2.))(0.5)) == 1.


def test_switch_clamps_index():
  branches = [lambda x: x + 1, lambda x: x * 2, lambda x: x - 10]
  for i, expected in [(-3, 2.), (0, 2.), (1, 2.), (2, -9.), (7, -9.)]:
    assert float(lax.switch(i, branches, 1.)) == expected
    assert float(jax.jit(lambda i: lax.switch(i, branches, 1.))(i)) == expected


def test_operand_keyword_and_per_branch_form():
  assert float(lax.cond(True, lambda x: x * 2, lambda x: x, operand=3.)) == 6.
  assert float(lax.cond(True, 1., lambda x: x + 1, 2., lambda x: x - 1)) == 2.
  assert float(lax.cond(False, 1., lambda x: x + 1, 2., lambda x: x - 1)) == 1.


def test_weak_types_follow_false_branch():
  assert lax.cond(True, lambda x: x, lambda x: 2., jnp.float32(1)).weak_type
  assert not lax.cond(True, lambda x: 2., lambda x: x, jnp.float32(1)).weak_type


def test_forwarded_operand_is_an_array():
  out = lax.cond(True, lambda x: x, lambda x: x, 1.)
  assert repr(out) == "Array(1., dtype=float32, weak_type=True)"


def test_disable_jit_runs_only_one_branch():
  seen = []
  with jax.disable_jit():
    lax.cond(True, lambda x: seen.append("t") or x, lambda x: seen.append("f") or x, 1.)
  assert seen == ["t"]


# -- errors ------------------------------------------------------------------------

ERROR_CASES = [
    lambda L, n: L.cond(n.array([True, False]), lambda x: x, lambda x: x, 1.),
    lambda L, n: L.cond(True, lambda x: (x, x), lambda x: x, 1.),
    lambda L, n: L.cond(True, lambda x: x, lambda x: n.int32(1), 1.),
    lambda L, n: L.cond(True, lambda x: x, lambda x: n.ones(2), 1.),
    lambda L, n: L.cond(True, lambda x: (x, n.ones(2)), lambda x: (1, 2.), 1.),
    lambda L, n: L.cond(True, lambda x: {"a": x}, lambda x: {"b": x}, 0.),
    lambda L, n: L.cond(True, lambda x: {"a": x}, lambda x: {"a": x, "b": x}, 0.),
    lambda L, n: L.cond(True, lambda x: [x], lambda x: (x,), 1.),
    lambda L, n: L.cond("a", lambda x: x, lambda x: x, 1.),
    lambda L, n: L.cond(None, lambda x: x, lambda x: x, 1.),
    lambda L, n: L.cond(True, 1, lambda x: x, 1.),
    lambda L, n: L.cond(1 + 2j, lambda x: x, lambda x: x, 1.),
    lambda L, n: L.cond(True, lambda x: x, lambda x: x, 2., operand=1.),
    lambda L, n: L.switch(1.5, [lambda x: x + 1, lambda x: x * 2], 1.),
    lambda L, n: L.switch(True, [lambda x: x + 1, lambda x: x * 2], 1.),
    lambda L, n: L.switch(n.array([1]), [lambda x: x + 1, lambda x: x * 2], 1.),
    lambda L, n: L.switch(1, [], 1.),
    lambda L, n: L.switch(1, [lambda x: x, lambda x: (x, x), lambda x: x], 1.),
    lambda L, n: L.switch(1, [lambda x: x, lambda x: x, lambda x: 1], 1.),
]


def _error(fn, L, n):
  with pytest.raises((TypeError, ValueError)) as info:
    fn(L, n)
  return type(info.value), str(info.value)


def test_errors_raise():
  for case in ERROR_CASES:
    kind, _ = _error(case, lax, jnp)
    assert kind in (TypeError, ValueError)
  kind, msg = _error(ERROR_CASES[0], lax, jnp)
  assert msg == "Pred must be a scalar, got [ True False] of shape (2,)."


def test_traced_nonscalar_pred_error():
  with pytest.raises(TypeError, match=r"Pred must be a scalar, got JitTracer\(float32\[2\]\)"):
    jax.jit(lambda p: lax.cond(p, lambda x: x, lambda x: x, 1.))(jnp.ones(2))


# -- jaxprs ------------------------------------------------------------------------

def test_make_jaxpr_text():
  text = str(jax.make_jaxpr(lambda p, x: lax.cond(p, lambda x: x + 1, lambda x: x - 1, x))(
      True, jnp.array([0.])))
  assert text == """{ lambda ; a:bool[] b:f32[1]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[1] = cond[
      branches=(
        { lambda ; e:f32[1]. let f:f32[1] = sub e 1.0:f32[] in (f,) }
        { lambda ; g:f32[1]. let h:f32[1] = add g 1.0:f32[] in (h,) }
      )
    ] c b
  in (d,) }"""


# -- differentiation -------------------------------------------------------------------

@pytest.mark.parametrize("x", [1.3, -0.7])
def test_check_grads(x):
  with config.override("jax_enable_x64", True):
    check_grads(f_cond, (np.float64(x),), order=2, modes=("fwd", "rev"))
    g = lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda x: x ** 3], x)
    for i in range(3):
      check_grads(lambda x: g(i, x), (np.float64(x),), order=2, modes=("fwd", "rev"))


def test_grad_values_and_under_jit():
  for x in (1.5, -1.5):
    expected = np.cos(x) * x + np.sin(x) if x > 0 else 3 * x * x
    np.testing.assert_allclose(jax.grad(f_cond)(x), expected, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.grad(f_cond))(x), expected, rtol=1e-5)
    np.testing.assert_allclose(jax.grad(jax.jit(f_cond))(x), expected, rtol=1e-5)


def test_grad_closed_over_and_pytree():
  w = jnp.array([1., 2.])

  def loss(w, x):
    out = lax.cond(x > 0, lambda ops: {"y": ops[0] * ops[1]}, lambda ops: {"y": ops[0] + w}, (w, x))
    return out["y"].sum()

  np.testing.assert_allclose(jax.grad(loss)(w, 2.), [2., 2.])
  np.testing.assert_allclose(jax.grad(loss)(w, -2.), [2., 2.])
  np.testing.assert_allclose(jax.grad(loss, 1)(w, 2.), 3.)
  np.testing.assert_allclose(jax.grad(loss, 1)(w, -2.), 0.)


def test_nested_cond_grad():
  f = lambda x: lax.cond(x > 0, lambda x: lax.cond(x > 1, jnp.sin, jnp.cos, x),
                         lambda x: x * 2, x)
  np.testing.assert_allclose(jax.grad(f)(1.5), np.cos(1.5), rtol=1e-5)
  np.testing.assert_allclose(jax.grad(f)(0.5), -np.sin(0.5), rtol=1e-5)
  np.testing.assert_allclose(jax.grad(f)(-0.5), 2.)
  np.testing.assert_allclose(jax.jit(jax.grad(jax.grad(f)))(1.5), -np.sin(1.5), rtol=1e-5)


def test_grad_through_checkpoint_and_linearize():
  np.testing.assert_allclose(jax.grad(jax.checkpoint(f_cond))(1.5), jax.grad(f_cond)(1.5))
  _, lin = jax.linearize(f_cond, -1.5)
  np.testing.assert_allclose(lin(2.), 2 * 3 * 2.25, rtol=1e-6)


def test_one_branch_output_unknown_partial_eval():
  # One branch returns a constant (known), the other depends on x: the
  # output must come out of the linear part with the right tangent.
  f = lambda x: lax.cond(x > 0, lambda x: 3.0, lambda x: x * x, x)
  np.testing.assert_allclose(jax.grad(f)(2.), 0.)
  np.testing.assert_allclose(jax.grad(f)(-2.), -4.)


# -- batching ----------------------------------------------------------------------------

def test_vmap_batched_operands():
  xs = jnp.array([1., -2., 3.])
  g = lambda p, x: lax.cond(p, lambda x: (x * 2, x), lambda x: (x + 1, x * x), x)
  out = jax.vmap(g, (None, 0))(True, xs)
  np.testing.assert_allclose(out[0], [2., -4., 6.])
  out = jax.vmap(g, (None, 0))(False, xs)
  np.testing.assert_allclose(out[1], [1., 4., 9.])


def test_vmap_batched_predicate_vs_loop():
  xs = np.array([1., -2., 3., -0.5], np.float32)
  out = jax.vmap(f_cond)(xs)
  np.testing.assert_allclose(out, [f_py(x) for x in xs], rtol=1e-6)
  out = jax.jit(jax.vmap(f_cond))(xs)
  np.testing.assert_allclose(out, [f_py(x) for x in xs], rtol=1e-6)


def test_vmap_switch_batched_index_unbatched_operand():
  idx = jnp.array([0, 5, -1, 1])
  out = jax.vmap(lambda i: lax.switch(i, [jnp.sin, jnp.cos, lambda x: x * 3.], 2.))(idx)
  np.testing.assert_allclose(out, [np.sin(2.), 6., np.sin(2.), np.cos(2.)], rtol=1e-6)


def test_vmap_grad_and_grad_vmap():
  xs = jnp.array([1., -2., 3.])
  expected = [np.cos(x) * x + np.sin(x) if x > 0 else 3 * x * x for x in np.asarray(xs)]
  np.testing.assert_allclose(jax.vmap(jax.grad(f_cond))(xs), expected, rtol=1e-5)
  np.testing.assert_allclose(jax.grad(lambda xs: jax.vmap(f_cond)(xs).sum())(xs), expected,
                             rtol=1e-5)


def test_vmap_of_nested_cond():
  f = lambda p, x: lax.cond(p, lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x), lambda x: -x, x)
  xs = jnp.array([1., -1., 2.])
  ps = jnp.array([True, True, False])
  np.testing.assert_allclose(jax.vmap(f)(ps, xs), [np.sin(1.), np.cos(-1.), -2.], rtol=1e-6)
  np.testing.assert_allclose(jax.vmap(f, (None, 0))(True, xs),
                             [np.sin(1.), np.cos(-1.), np.sin(2.)], rtol=1e-6)


# -- against JAX ---------------------------------------------------------------------------

@pytest.mark.oracle
def test_error_messages_match_jax():
  jax_ = pytest.importorskip("jax")
  for case in ERROR_CASES:
    mine = _error(case, lax, jnp)
    theirs = _error(case, jax_.lax, jax_.numpy)
    assert mine == theirs


JAXPR_CASES = [
    (lambda L, n: lambda i, x: L.switch(i, [lambda x: x + 1, lambda x: x * 2, n.sin], x), (1, 1.)),
    (lambda L, n: lambda p, x: L.cond(p, lambda x: (x, 1), lambda x: (x, 2), x),
     (True, np.ones(3, np.float32))),
    (lambda L, n: lambda p, x: L.cond(p, lambda x: x, lambda x: 2., x), (True, 1.)),
    (lambda L, n: lambda x: L.cond(True, lambda x: x + 1, lambda x: x - 1, x), (1.,)),
    (lambda L, n: lambda p, x: L.cond(p, lambda x: x * 2, lambda x: x, x),
     (np.float32(1), np.ones(2, np.float32))),
]


@pytest.mark.oracle
@pytest.mark.parametrize("case", range(len(JAXPR_CASES)))
def test_jaxprs_match_jax(case):
  jax_ = pytest.importorskip("jax")
  make, args = JAXPR_CASES[case]
  mine = str(jax.make_jaxpr(make(lax, jnp))(*args))
  theirs = str(jax_.make_jaxpr(make(jax_.lax, jax_.numpy))(*args))
  assert mine == theirs


@pytest.mark.oracle
def test_batched_predicate_jaxpr_matches_jax():
  jax_ = pytest.importorskip("jax")
  make = lambda J, L, n: lambda p, x, y: J.vmap(lambda p, x: L.cond(
      p, lambda x: (n.sin(x), y), lambda x: (x * x, y * 2), x))(p, x)
  args = (np.ones(3) > 0, np.ones((3, 2), np.float32), np.float32(1.))
  mine = str(jax.make_jaxpr(make(jax, lax, jnp))(*args))
  theirs = str(jax_.make_jaxpr(make(jax_, jax_.lax, jax_.numpy))(*args))
  assert mine == theirs


@pytest.mark.oracle
def test_values_and_grads_match_jax():
  jax_ = pytest.importorskip("jax")
  make = lambda J, L, n: lambda x: L.switch(
      (x > 0).astype(int) + (x > 1).astype(int), [n.sin, lambda x: x * x, n.tanh], x)
  xs = np.array([-1., 0.5, 2.], np.float32)
  for fn in (lambda J, L, n: J.vmap(make(J, L, n)),
             lambda J, L, n: J.vmap(J.grad(make(J, L, n)))):
    np.testing.assert_allclose(fn(jax, lax, jnp)(xs), fn(jax_, jax_.lax, jax_.numpy)(xs),
                               rtol=1e-6)
