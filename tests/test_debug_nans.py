"""jax_debug_nans / jax_debug_infs: eager checks, jit's de-optimized re-run,
the backward pass, and the details purejax adds to the message."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src import debug_nans
from purejax._src.config import config

_HERE = os.path.abspath(__file__)
_NOTICE = ("Invalid nan value encountered in the output of a jax.jit function. "
           "Calling the de-optimized version.")


def _line(marker):
  """The line number in this file of the line ending in ``# <marker>``."""
  with open(_HERE) as f:
    hits = [i for i, text in enumerate(f, 1) if text.rstrip().endswith(f"# {marker}")]
  assert len(hits) == 1, marker
  return hits[0]


@pytest.fixture
def nans():
  with purejax.debug_nans(True):
    yield


@pytest.fixture
def infs():
  with purejax.debug_infs(True):
    yield


# The spec's example.
@purejax.jit
def spec_f(x, y):
  a = x * y
  b = (x + y) / (x - y)  # spec-div
  c = a + 2
  return a + b * c


SPEC_X = np.array([2., 0.], np.float32)
SPEC_Y = np.array([3., 0.], np.float32)


def test_off_by_default():
  assert not config.jax_debug_nans and not config.jax_debug_infs
  assert not debug_nans.enabled
  assert np.isnan(float(jnp.divide(0., 0.)))
  out = spec_f(jnp.asarray(SPEC_X), jnp.asarray(SPEC_Y))
  np.testing.assert_array_equal(np.asarray(out), np.array([-34., np.nan], np.float32))
  assert out.dtype == np.float32


def test_flag_changes_reach_the_module_switch():
  with purejax.debug_nans(True):
    assert debug_nans.enabled
  assert not debug_nans.enabled
  with config.override("jax_debug_infs", True):
    assert debug_nans.enabled
  assert not debug_nans.enabled


def test_eager_divide_raises_at_the_users_line(nans):
  with pytest.raises(FloatingPointError) as info:
    jnp.divide(0., 0.)  # eager-div
  msg = str(info.value)
  assert msg.splitlines()[0] == "invalid value (nan) encountered in div"   # JAX's words
  assert "div(f32[], f32[])" in msg
  assert f"{_HERE}:{_line('eager-div')}" in msg


@pytest.mark.parametrize("op", [
    lambda: jnp.log(jnp.array([1., -1.])),                       # general path
    lambda: jnp.array([0., 1.]) / jnp.array([0., 1.]),           # binary fast path
    lambda: jnp.sqrt(jnp.array(-1.)),                            # unary fast path
    lambda: lax.log(jnp.array(-1., jnp.bfloat16)),               # not np.inexact
    lambda: jnp.array(1 + 0j, jnp.complex64) * jnp.array(np.nan, np.float32),
])
def test_eager_ops_are_checked(nans, op):
  with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in"):
    op()


def test_eager_results_without_nans_are_unchanged(nans):
  x = jnp.array([1., 4.])
  np.testing.assert_allclose(np.asarray(jnp.sqrt(x) / x), [1., 0.5])
  # Integers and booleans are never checked.
  assert int(jnp.array(7) // jnp.array(0)) == -2
  assert not bool((jnp.array([True]) & jnp.array([False]))[0])


def test_masked_nan_is_still_caught_eagerly(nans):
  # As in JAX: the check is per primitive, before where() discards it.
  with pytest.raises(FloatingPointError, match="encountered in log"):
    jnp.where(jnp.array([True, False]), 1., jnp.log(jnp.array([1., -1.])))


def test_spec_jit_example_names_the_division(nans, capsys):
  x, y = jnp.asarray(SPEC_X), jnp.asarray(SPEC_Y)
  for _ in range(3):   # later calls too: no fast path may skip the check
    with pytest.raises(FloatingPointError) as info:
      spec_f(x, y)
    msg = str(info.value)
    assert msg.splitlines()[0] == "invalid value (nan) encountered in div"
    assert "div(f32[2], f32[2])" in msg
    assert f"{_HERE}:{_line('spec-div')}" in msg
    assert "spec_f" in msg
  # As JAX: one notice for the jit, one for the eager operation re-run in it.
  assert capsys.readouterr().out.splitlines() == [_NOTICE] * 6


def test_jit_without_nans_matches_eager(nans, capsys):
  x, y = jnp.array([2., 1.]), jnp.array([3., 5.])
  for _ in range(3):
    out = spec_f(x, y)
  with purejax.disable_jit():
    expected = spec_f(x, y)
  np.testing.assert_allclose(np.asarray(out), np.asarray(expected), rtol=1e-6)
  assert capsys.readouterr().out == ""


def test_flag_off_again_returns_nan(capsys):
  x, y = jnp.asarray(SPEC_X), jnp.asarray(SPEC_Y)
  spec_f(x, y)
  with purejax.debug_nans(True):
    with pytest.raises(FloatingPointError):
      spec_f(x, y)
  out = spec_f(x, y)
  assert np.isnan(np.asarray(out)[1])


def nested(x):
  inner = purejax.jit(lambda y: jnp.log(y))  # nested-log
  return inner(x) * 2.


def in_cond(x):
  return lax.cond(x > 0, jnp.log, lambda v: jnp.log(v - 1.), x)  # cond-log


def in_scan(xs):
  return lax.scan(lambda c, x: (c + jnp.log(x), c), 0., xs)  # scan-log


def in_while(x):
  return lax.while_loop(lambda c: c[0] < 3,
                        lambda c: (c[0] + 1, jnp.log(c[1] - 2.)), (0, x))  # while-log


def in_fori(x):
  return lax.fori_loop(0, 3, lambda i, v: jnp.log(v - 1.5), x)  # fori-log


@pytest.mark.parametrize("fun,arg,marker", [
    (nested, -1., "nested-log"),
    (in_cond, -1., "cond-log"),
    (in_scan, np.array([1., -1.], np.float32), "scan-log"),
    (in_while, 1., "while-log"),
    (in_fori, 2., "fori-log"),
])
def test_deoptimized_run_goes_into_bodies(nans, capsys, fun, arg, marker):
  with pytest.raises(FloatingPointError) as info:
    purejax.jit(fun)(arg)
  msg = str(info.value)
  assert msg.splitlines()[0] == "invalid value (nan) encountered in log"
  assert f"{_HERE}:{_line(marker)}" in msg
  # As JAX: a notice per jit on the way (the nested one too); none inside
  # loop bodies.  (In cond, purejax's eager re-run runs the branch's log
  # eagerly: one notice more than JAX's.)
  count = {"nested-log": 3, "cond-log": 2}.get(marker, 1)
  assert capsys.readouterr().out.splitlines() == [_NOTICE] * count


def test_jit_under_vmap_is_deoptimized(nans):
  with pytest.raises(FloatingPointError) as info:
    purejax.vmap(purejax.jit(lambda x: jnp.log(x)))(jnp.array([1., -1.]))  # vmap-log
  msg = str(info.value)
  assert msg.splitlines()[0] == "invalid value (nan) encountered in log"
  assert "log(f32[2])" in msg
  assert f"{_HERE}:{_line('vmap-log')}" in msg


def sqrt_times_zero(x):
  return jnp.sqrt(x) * 0.  # bwd-sqrt


@pytest.mark.parametrize("jitted", [False, True])
def test_backward_pass_names_the_transposed_primitive(nans, jitted):
  # Forward: sqrt(0) * 0 = 0; backward: 0 times sqrt's infinite slope.
  fun = purejax.jit(sqrt_times_zero) if jitted else sqrt_times_zero
  assert float(fun(0.)) == 0.
  with pytest.raises(FloatingPointError) as info:
    purejax.grad(fun)(0.)  # bwd-call
  msg = str(info.value)
  assert re.match(r"invalid value \(nan\) encountered in \w+", msg)
  assert "in the backward pass: the transpose of " in msg
  assert f"traced at {_HERE}:{_line('bwd-sqrt')}" in msg   # re-traced jaxprs keep it
  assert f"from line {_HERE}:{_line('bwd-call')}" in msg


def test_grad_under_jit_is_deoptimized(nans, capsys):
  with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in"):
    purejax.jit(purejax.grad(sqrt_times_zero))(0.)
  # The jit's notice and the eager re-run's (JAX shows only the first).
  assert capsys.readouterr().out.splitlines() == [_NOTICE] * 2


def test_nan_operand_is_pointed_out(nans):
  with pytest.raises(FloatingPointError) as info:
    purejax.jit(lambda x: x + jnp.nan)(1.)
  assert "encountered in add" in str(info.value)
  assert "an operand already held a nan" in str(info.value)


def test_nan_passed_through_is_reported_as_not_reproduced(nans, capsys):
  x = np.array([np.nan], np.float32)
  with pytest.raises(FloatingPointError, match="no primitive produced a nan"):
    purejax.jit(lambda v: v)(x)
  assert capsys.readouterr().out.strip() == _NOTICE


def test_integer_outputs_are_not_checked(nans):
  assert int(purejax.jit(lambda v: v // 0)(1)) == -2   # JAX's value too
  assert int(purejax.jit(lambda v: v + 1)(2)) == 3


def test_debug_infs(infs, capsys):
  with pytest.raises(FloatingPointError) as info:
    jnp.log(0.)
  assert str(info.value).splitlines()[0] == "invalid value (inf) encountered in log"
  with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in div"):
    purejax.jit(lambda x: 1 / x)(jnp.float32(0.))
  # As JAX: the eager log announces its re-run; the jit and its division too.
  assert capsys.readouterr().out.splitlines() == [_NOTICE] * 3
  # The de-optimized re-run calls the function on the arguments as given: a
  # Python float divides in Python, as with JAX.
  with pytest.raises(ZeroDivisionError):
    purejax.jit(lambda x: 1 / x)(0.)
  assert np.isnan(float(jnp.divide(0., 0.)))   # only infs are asked about


def test_config_update_spelling():
  config.update("jax_debug_nans", True)
  try:
    with pytest.raises(FloatingPointError):
      jnp.divide(0., 0.)
  finally:
    config.update("jax_debug_nans", False)
  assert np.isnan(float(jnp.divide(0., 0.)))


def test_environment_variable():
  code = ("import purejax.numpy as jnp\n"
          "try:\n  jnp.divide(0., 0.)\nexcept FloatingPointError as e:\n  print('raised', e)\n")
  env = dict(os.environ, JAX_DEBUG_NANS="True", PUREJAX_BACKEND="numpy")
  root = os.path.dirname(os.path.dirname(_HERE))
  env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=60)
  assert "raised invalid value (nan) encountered in div" in out.stdout, out.stderr


def test_matches_jax(nans, capsys):
  jax = pytest.importorskip("jax")
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError) as expected:
      jax.numpy.divide(0., 0.)
    with pytest.raises(FloatingPointError) as expected_jit:
      # spec_f, on JAX's arrays.
      jax.jit(lambda x, y: x * y + (x + y) / (x - y) * (x * y + 2))(
          jax.numpy.asarray(SPEC_X), jax.numpy.asarray(SPEC_Y))
  with pytest.raises(FloatingPointError) as got:
    jnp.divide(0., 0.)
  with pytest.raises(FloatingPointError) as got_jit:
    spec_f(SPEC_X, SPEC_Y)
  assert str(got.value).splitlines()[0] == str(expected.value)
  assert str(got_jit.value).splitlines()[0] == str(expected_jit.value)
  printed = capsys.readouterr().out
  assert _NOTICE in printed


def test_notices_match_jax(nans, capsys):
  # What JAX prints: one notice per jit on the way to the failing operation,
  # which is re-run as a jit of its own (eagerly too).
  with pytest.raises(FloatingPointError, match=r"encountered in log"):
    jnp.log(-1.)
  assert capsys.readouterr().out.splitlines() == [_NOTICE]
  with pytest.raises(FloatingPointError, match=r"encountered in log"):
    purejax.vmap(purejax.jit(jnp.log))(jnp.array([1., -1.]))
  assert capsys.readouterr().out.splitlines() == [_NOTICE] * 2
  with pytest.raises(FloatingPointError, match=r"no primitive produced a nan"):
    purejax.jit(lambda v: v)(np.array([np.nan], np.float32))
  assert capsys.readouterr().out.splitlines() == [_NOTICE]
