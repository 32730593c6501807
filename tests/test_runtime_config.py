"""Runtime flags (x64, rank/dtype promotion, matmul precision), named_call,
named_scope, ensure_compile_time_eval, eval_shape."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import purejax
from purejax._src.array import ArrayImpl
import purejax.numpy as jnp
from purejax._src import naming
from purejax._src.config import config
from purejax.dtypes import TypePromotionError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# -- jax_enable_x64 ------------------------------------------------------------

def test_x64_off_warns_and_truncates():
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in "
                    "zeros is not available, and will be truncated to dtype float32"):
    x = jnp.zeros(2, jnp.float64)
  assert x.dtype == np.float32
  assert jnp.asarray(np.ones(2)).dtype == np.float32


def test_x64_config_update():
  with config.override("jax_enable_x64", True):
    with warnings.catch_warnings():
      warnings.simplefilter("error")
      x = jnp.ones(3, jnp.float64)
    assert x.dtype == np.float64 and jnp.arange(3).dtype == np.int64
    assert purejax.jit(lambda v: v * 2)(np.ones(2)).dtype == np.float64
    assert purejax.grad(lambda v: (v * v).sum())(np.ones(2)).dtype == np.float64
    assert (jnp.ones(2, jnp.complex64) * 1j).dtype == np.complex64
    assert jnp.ones(2, jnp.complex128).dtype == np.complex128
  assert jnp.arange(3).dtype == np.int32


def test_x64_env_var():
  code = ("import numpy as np, purejax, purejax.numpy as jnp\n"
          "x = purejax.jit(lambda v: v * 2)(np.ones(2))\n"
          "print(purejax.config.jax_enable_x64, x.dtype, jnp.asarray(2**40).dtype)\n")
  env = dict(os.environ, JAX_ENABLE_X64="1", PYTHONPATH=ROOT)
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
  assert out.returncode == 0, out.stderr
  assert out.stdout.split() == ["True", "float64", "int64"]


# -- jax_numpy_rank_promotion --------------------------------------------------

_RANK_WARN = ("Following NumPy automatic rank promotion for add on shapes (3,) (2, 3). Set "
              "the jax_numpy_rank_promotion config option to 'allow' to disable this warning; "
              "for more information, see "
              "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
_RANK_RAISE = ("Operands could not be broadcast together for add on shapes (3,) (2, 3) and "
               "with the config option jax_numpy_rank_promotion='raise'. For more "
               "information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def test_rank_promotion_modes():
  x, y = jnp.ones(3), jnp.ones((2, 3))
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    assert (x + y).shape == (2, 3)          # "allow" is the default
  with purejax.numpy_rank_promotion("warn"):
    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter("always")
      x + y
      jnp.ones((1, 3)) + y                  # same rank: no warning
      x + 1.0                               # scalars: no warning
    assert [str(w.message) for w in caught] == [_RANK_WARN]
    assert caught[0].category is UserWarning and caught[0].filename == __file__
  with purejax.numpy_rank_promotion("raise"):
    with pytest.raises(ValueError) as info:
      jnp.add(x, y)
    assert str(info.value) == _RANK_RAISE
    with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
      purejax.jit(lambda a, b: a * b)(x, y)
    assert (jnp.ones(()) + y).shape == (2, 3)


def test_rank_promotion_messages_match_jax():
  jax = pytest.importorskip("jax")
  with jax.numpy_rank_promotion("raise"):
    with pytest.raises(ValueError) as info:
      jax.numpy.ones(3) + jax.numpy.ones((2, 3))
  assert str(info.value) == _RANK_RAISE


@pytest.mark.parametrize("flag, value, error, message", [
    ("jax_numpy_rank_promotion", "bad", ValueError,
     "new enum value must be in ['allow', 'warn', 'raise'], got bad of type <class 'str'>."),
    ("jax_numpy_dtype_promotion", "bad", ValueError, "'bad' is not a valid NumpyDtypePromotion"),
    ("jax_numpy_dtype_promotion", True, TypeError,
     "new enum value must be an instance of <enum 'NumpyDtypePromotion'>, got True of type "
     "<class 'bool'>."),
])
def test_enum_flag_errors(flag, value, error, message):
  with pytest.raises(error) as info:
    config.update(flag, value)
  assert str(info.value) == message
  assert config.read(flag) in ("allow", "standard")


# -- jax_numpy_dtype_promotion -------------------------------------------------

_STRICT_CASES = [
    lambda m: m.ones(2, "int32") + m.ones(2, "float32"),
    lambda m: m.ones(2, "int32") + 1.5,
    lambda m: m.ones(2, "float16") * m.ones(2, "float32"),
    lambda m: m.result_type(np.int8, np.int16),
    lambda m: m.promote_types("uint8", "int8"),
]


@pytest.mark.parametrize("case", range(len(_STRICT_CASES)))
def test_strict_promotion_errors(case):
  with purejax.numpy_dtype_promotion("strict"):
    with pytest.raises(TypePromotionError, match="no available implicit dtype promotion path "
                       "when jax_numpy_dtype_promotion=strict"):
      _STRICT_CASES[case](jnp)
  _STRICT_CASES[case](jnp)   # fine again in standard mode


def test_strict_promotion_allowed_cases():
  with purejax.numpy_dtype_promotion("strict"):
    assert (jnp.ones(2, "float32") + 1).dtype == np.float32       # weak int into float
    assert (jnp.ones(2, "int8") + 1).dtype == np.int8
    assert (jnp.ones(2, "float16") * 2.0).dtype == np.float16
    assert purejax.jit(lambda a: a + a)(jnp.ones(2, "int16")).dtype == np.int16


def test_strict_promotion_messages_match_jax():
  jax = pytest.importorskip("jax")
  for case in _STRICT_CASES:
    with purejax.numpy_dtype_promotion("strict"):
      with pytest.raises(TypePromotionError) as ours:
        case(jnp)
    with jax.numpy_dtype_promotion("strict"):
      with pytest.raises(jax.dtypes.TypePromotionError) as theirs:
        case(jax.numpy)
    assert str(ours.value) == str(theirs.value)


# -- jax_default_matmul_precision ----------------------------------------------

def test_matmul_precision_flag_values():
  for value in ("float32", "bfloat16", "tensorfloat32", "highest", "BF16_BF16_F32", None):
    with purejax.default_matmul_precision(value):
      assert config.jax_default_matmul_precision == value
      np.testing.assert_allclose(jnp.dot(jnp.ones((2, 2)), jnp.ones((2, 2))), 2.0)
  with pytest.raises(ValueError, match="new enum value must be None or in \\['default', "
                     "'high', 'highest', 'bfloat16'.*got fastest of type <class 'str'>"):
    config.update("jax_default_matmul_precision", "fastest")
  assert config.jax_default_matmul_precision is None


# -- named_call, named_scope ---------------------------------------------------

def test_named_scope_stack():
  assert naming.current_name_stack() == ()
  with purejax.named_scope("outer"):
    with purejax.named_scope("inner"):
      assert naming.current_name_stack() == ("outer", "inner")
    assert naming.current_name_stack() == ("outer",)
  assert naming.current_name_stack() == ()
  with pytest.raises(TypeError, match="named_scope name argument must be a string."):
    with purejax.named_scope(3):
      pass


def test_named_call():
  seen = []

  def g(x):
    seen.append(naming.current_name_stack())
    return jnp.sin(x) * 2

  h = purejax.named_call(g, name="my_g")
  assert h.__name__ == "g"
  np.testing.assert_allclose(h(1.0), np.sin(1.0) * 2, rtol=1e-6)
  np.testing.assert_allclose(purejax.grad(h)(1.0), np.cos(1.0) * 2, rtol=1e-6)
  np.testing.assert_allclose(purejax.jit(h)(1.0), np.sin(1.0) * 2, rtol=1e-6)
  assert seen[0] == ("my_g",)
  assert purejax.named_call(g)(0.0) == 0.0 and seen[-1] == ("g",)
  # The jaxpr is g's own: JAX stages no call for it either.
  assert str(purejax.make_jaxpr(h)(1.0)) == str(purejax.make_jaxpr(g)(1.0))


def test_named_scope_under_jit_keeps_the_jaxpr():
  def k(x):
    with purejax.named_scope("scope1"):
      y = jnp.sin(x)
    return y + 1
  assert str(purejax.make_jaxpr(k)(1.0)) == (
      "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = add b 1.0:f32[] in (c,) }")


# -- ensure_compile_time_eval --------------------------------------------------

def _folding(x):
  with purejax.ensure_compile_time_eval():
    n = jnp.sum(jnp.arange(4))
    assert type(n) is ArrayImpl and int(n) == 6     # concrete under jit
    k = purejax.random.randint(purejax.random.PRNGKey(0), (3,), 0, 10)
    m = purejax.jit(lambda a: a * 3)(jnp.ones(3))
    c = purejax.lax.cond(True, lambda: 1.0, lambda: 2.0)
    assert all(type(v) is ArrayImpl for v in (k, m, c))
    y = x * n + m.sum() + c                               # traced as usual
  return y


def test_ensure_compile_time_eval():
  assert float(_folding(1.0)) == 16.0
  assert float(purejax.jit(_folding)(1.0)) == 16.0
  assert float(purejax.grad(_folding)(1.0)) == 6.0
  assert float(purejax.jit(purejax.grad(_folding))(1.0)) == 6.0
  np.testing.assert_array_equal(purejax.vmap(_folding)(jnp.arange(2.0)), [10.0, 16.0])
  jaxpr = purejax.make_jaxpr(_folding)(1.0)
  assert "iota" not in str(jaxpr) and "reduce_sum" not in str(jaxpr)
  assert "threefry" not in str(jaxpr)


def test_ensure_compile_time_eval_inside_scan():
  def g(xs):
    def body(c, xi):
      with purejax.ensure_compile_time_eval():
        z = jnp.cos(0.0)
        assert type(z) is ArrayImpl
      return c + xi * z, z
    return purejax.lax.scan(body, 0.0, xs)
  total, zs = purejax.jit(g)(jnp.ones(3))
  assert float(total) == 3.0
  np.testing.assert_array_equal(zs, [1.0, 1.0, 1.0])


def test_ensure_compile_time_eval_restores_trace():
  @purejax.jit
  def f(x):
    with purejax.ensure_compile_time_eval():
      pass
    return jnp.sin(x)
  assert str(purejax.make_jaxpr(f)(1.0)).count("sin") == 1
  with purejax.ensure_compile_time_eval():   # eager: nothing to do
    assert float(jnp.ones(()) * 2) == 2.0


# -- eval_shape / ShapeDtypeStruct ---------------------------------------------

def test_eval_shape():
  S = purejax.ShapeDtypeStruct
  out = purejax.eval_shape(lambda x, y: {"a": x @ y, "b": (x.sum(), 1)},
                           S((2, 3), jnp.float32), S((3, 4), "float32"))
  assert out["a"] == S((2, 4), np.float32)
  assert repr(out["b"][1]) == "ShapeDtypeStruct(shape=(), dtype=int32, weak_type=True)"
  assert purejax.eval_shape(lambda x: x + 1, np.ones(3, np.int8)).dtype == np.int8
  with pytest.raises(TypeError, match="add got incompatible shapes for broadcasting"):
    purejax.eval_shape(lambda x, y: x + y, S((2,), np.float32), S((3,), np.float32))


@pytest.mark.parametrize("name", ["float32", "highest", "bfloat16", "tensorfloat32", "default",
                                  "high"])
def test_default_matmul_precision_is_recorded_as_jax_records_it(name):
  real = pytest.importorskip("jax")
  a = np.ones((2, 2), np.float32)
  with purejax.default_matmul_precision(name):
    ours = purejax.make_jaxpr(lambda a: a @ a)(a).eqns[0].params["precision"]
  with real.default_matmul_precision(name):
    theirs = real.make_jaxpr(lambda a: a @ a)(a).eqns[0].params["precision"]
  assert [p.name for p in ours] == [p.name for p in theirs]
  assert purejax.make_jaxpr(lambda a: a @ a)(a).eqns[0].params["precision"] is None


@pytest.mark.parametrize("preset", [None, "passive"])
def test_import_sets_the_openmp_wait_policy_unless_the_user_did(preset):
  # libgomp reads these when it loads (with the first kernel): the C backend's
  # keep barriers spinning briefly even when two threads run parallel kernels.
  env = {k: v for k, v in os.environ.items()
         if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
  if preset:
    env["OMP_WAIT_POLICY"] = preset
  out = subprocess.run(
      [sys.executable, "-c", "import os, purejax as jax; "
       "jax.config.update('purejax_compile_sync', True); jax.jit(lambda x: x + 1)(1.0); "
       "print(os.environ['OMP_WAIT_POLICY'], os.environ['GOMP_SPINCOUNT'])"],
      env=env, capture_output=True, text=True, check=True).stdout.split()
  assert out == [preset or "active", "10000"]
