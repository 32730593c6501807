"""Typed PRNG keys as a dtype: ``key<fry>`` avals, the ``random_*``
primitives in jaxprs, keys as pytree leaves, and keys under jit, vmap,
grad and loops (on both backends).  Printed jaxprs are compared with JAX
when it is installed."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax, random
from purejax._src.config import config
from tests.conftest import oracle

KEY0 = [[0, 0]]


def data(keys):
  return np.asarray(random.key_data(keys))


# ---------------------------------------------------------------------------
# Printed jaxprs, as JAX prints them

def _programs(jx):
  r, np_ = jx.random, jx.numpy
  k, rk = r.key(0), r.PRNGKey(0)

  def body(c, _):
    c, s = r.split(c)
    return c, r.bits(s)

  return {
      "split": (lambda k: r.split(k), (k,)),
      "split3": (lambda k: r.split(k, 3), (k,)),
      "split_shape": (lambda k: r.split(k, (2, 3)), (k,)),
      "split_raw": (lambda k: r.split(k), (rk,)),
      "unpack": (lambda k: tuple(r.split(k)), (k,)),
      "fold_in": (lambda k: r.fold_in(k, 3), (k,)),
      "fold_in_raw": (lambda k: r.fold_in(k, 3), (rk,)),
      "bits": (lambda k: r.bits(k, (3,)), (k,)),
      "bits_u8": (lambda k: r.bits(k, (2,), np_.uint8), (k,)),
      "bits_raw": (lambda k: r.bits(k, (3,)), (rk,)),
      "key": (lambda s: r.key(s), (0,)),
      "PRNGKey": (lambda s: r.PRNGKey(s), (0,)),
      "key_data": (lambda k: r.key_data(k), (k,)),
      "wrap_key_data": (lambda d: r.wrap_key_data(d), (rk,)),
      "vmap_split": (jx.vmap(lambda k: r.split(k)), (r.split(k, 4),)),
      "vmap_bits": (jx.vmap(lambda k: r.bits(k, (2,))), (r.split(k, 4),)),
      "vmap_fold_in": (jx.vmap(lambda k, i: r.fold_in(k, i)), (r.split(k, 4), np_.arange(4))),
      "index": (lambda k: k[1], (r.split(k, 3),)),
      "reshape": (lambda k: k.reshape(3, 1), (r.split(k, 3),)),
      "scan": (lambda k: jx.lax.scan(body, k, None, length=3), (k,)),
      "jit_split": (jx.jit(lambda k: r.split(k)), (k,)),
  }


PROGRAMS = sorted(_programs(jax))


@pytest.mark.parametrize("name", PROGRAMS)
def test_jaxpr_text_matches_jax(name):
  real = oracle()
  fun, args = _programs(jax)[name]
  real_fun, real_args = _programs(real)[name]
  assert str(jax.make_jaxpr(fun)(*args)) == str(real.make_jaxpr(real_fun)(*real_args))


def test_jaxpr_text_written_out():
  k = random.key(0)
  assert str(jax.make_jaxpr(lambda k: random.split(k))(k)) == (
      "{ lambda ; a:key<fry>[]. let\n"
      "    b:key<fry>[2] = random_split[shape=(2,)] a\n"
      "  in (b,) }")
  assert str(jax.make_jaxpr(lambda s: random.key(s))(0)) == (
      "{ lambda ; a:i32[]. let b:key<fry>[] = random_seed[impl=fry] a in (b,) }")
  assert str(jax.make_jaxpr(lambda k: random.key_data(k))(k)) == (
      "{ lambda ; a:key<fry>[]. let b:u32[2] = random_unwrap a in (b,) }")
  assert str(jax.make_jaxpr(lambda k: random.fold_in(k, 3))(k)) == (
      "{ lambda ; a:key<fry>[]. let b:key<fry>[] = random_fold_in a 3:u32[] in (b,) }")


@pytest.mark.parametrize("sampler", ["uniform", "normal"])
def test_samplers_stage_random_bits(sampler):
  text = str(jax.make_jaxpr(lambda k: getattr(random, sampler)(k, (3,)))(random.key(0)))
  assert "a:key<fry>[]" in text
  assert "random_bits[bit_width=32 shape=(3,)] a" in text
  assert "threefry2x32" not in text


# ---------------------------------------------------------------------------
# The key dtype

def test_key_is_a_pytree_leaf():
  k = random.key(0)
  assert str(jax.tree.structure({"k": k})) == "PyTreeDef({'k': *})"
  assert jax.tree.leaves({"k": k})[0] is k


def test_issubdtype():
  k = random.key(0)
  assert jax.dtypes.issubdtype(k.dtype, jax.dtypes.prng_key)
  assert jnp.issubdtype(k.dtype, jax.dtypes.prng_key)
  assert jnp.issubdtype(k.dtype, jax.dtypes.extended)
  assert not jnp.issubdtype(k.dtype, np.integer)
  assert not jnp.issubdtype(k.dtype, np.floating)
  assert jnp.issubdtype(k.dtype, random.key_dtype())
  assert not jnp.issubdtype(np.uint32, jax.dtypes.prng_key)


def test_key_aval_and_attributes():
  k = random.key(0)
  assert repr(jax.typeof(k)) == "ShapedArray(key<fry>[])"
  assert str(k.dtype) == "key<fry>" and k.shape == () and k.ndim == 0 and k.size == 1
  ks = random.split(k, 3)
  assert ks.shape == (3,) and len(ks) == 3 and ks.itemsize == 8
  assert repr(jax.eval_shape(lambda k: random.split(k), k)) == (
      "ShapeDtypeStruct(shape=(2,), dtype=key<fry>)")


def test_astype_errors_as_in_jax():
  k = random.key(0)
  with pytest.raises(NotImplementedError, match="Cannot call abstract method astype"):
    k.astype(jnp.float32)

  def f(k):
    return k.astype(jnp.float32)
  with pytest.raises(ValueError, match="Cannot convert_element_type from key<fry> to float32"):
    jax.jit(f)(k)
  with pytest.raises(ValueError, match="Cannot convert_element_type from key<fry> to float32"):
    lax.convert_element_type(k, jnp.float32)


def test_key_is_an_array():
  assert isinstance(random.key(0), jax.Array)


def _key_arithmetic_errors(jax, jnp):
  k = jax.random.key(0)
  out = []
  for f in (lambda: k + 1, lambda: jnp.multiply(k, 2.0), lambda: jax.jit(lambda k: k - 1)(k)):
    with pytest.raises(TypeError) as e:
      f()
    out.append((type(e.value), str(e.value)))
  return out


_KEY_ARITHMETIC = [(TypeError, "add does not accept dtypes key<fry>, int32."),
                   (TypeError, "multiply does not accept dtypes key<fry>, float32."),
                   (TypeError, "subtract does not accept dtypes key<fry>, int32.")]


def test_arithmetic_on_keys_is_a_type_error():
  assert _key_arithmetic_errors(jax, jnp) == _KEY_ARITHMETIC


def test_arithmetic_on_keys_is_a_type_error_like_oracle():
  real = pytest.importorskip("jax")
  assert _key_arithmetic_errors(real, real.numpy) == _KEY_ARITHMETIC


# ---------------------------------------------------------------------------
# Values: eager, jit (both backends), vmap, loops, grad

SPLIT = [[1797259609, 2579123966], [928981903, 3453687069]]


@pytest.fixture(params=["numpy", "cpu"])
def backend(request):
  with config.override("purejax_backend", request.param), \
       config.override("purejax_compile_sync", True):
    yield request.param


def test_split_values():
  np.testing.assert_array_equal(data(random.split(random.key(0))), SPLIT)
  np.testing.assert_array_equal(data(random.key(0)), [0, 0])


def test_jit_takes_and_returns_keys(backend):
  k = random.key(0)
  f = jax.jit(lambda k: (random.split(k), random.normal(k, (3,)),
                         random.bits(k, (4,), jnp.uint8)))
  keys, normal, bits8 = f(k)
  assert keys.dtype == k.dtype and keys.shape == (2,)
  np.testing.assert_array_equal(data(keys), SPLIT)
  np.testing.assert_array_equal(np.asarray(normal), np.asarray(random.normal(k, (3,))))
  np.testing.assert_array_equal(np.asarray(bits8), np.asarray(random.bits(k, (4,), jnp.uint8)))
  keys, _, _ = f(k)   # the cached executable
  np.testing.assert_array_equal(data(keys), SPLIT)


def test_jit_makes_keys(backend):
  np.testing.assert_array_equal(data(jax.jit(lambda s: random.key(s))(3)), [0, 3])
  np.testing.assert_array_equal(np.asarray(jax.jit(lambda s: random.PRNGKey(s))(3)), [0, 3])


def test_jit_caches_on_the_key_aval():
  traces = []

  @jax.jit
  def f(k):
    traces.append(k)
    return random.key_data(k)

  k = random.key(0)
  f(k)
  f(random.key(1))
  assert len(traces) == 1
  assert repr(traces[0]) == "JitTracer(key<fry>[])"
  f(random.split(k, 2))   # a new aval: key<fry>[2]
  assert len(traces) == 2


def test_jit_indexes_keys(backend):
  ks = random.split(random.key(0), 3)
  got = jax.jit(lambda ks, i: ks[i])(ks, 2)
  np.testing.assert_array_equal(data(got), data(ks)[2])
  got = jax.jit(lambda ks: ks.reshape(3, 1)[1:, 0])(ks)
  np.testing.assert_array_equal(data(got), data(ks)[1:])
  pred = jnp.array([True, False, True])
  got = jax.jit(lambda p, a, b: jnp.where(p, a, b))(pred, ks, random.split(random.key(1), 3))
  np.testing.assert_array_equal(data(got)[1], data(random.split(random.key(1), 3))[1])
  np.testing.assert_array_equal(data(got)[0], data(ks)[0])


def test_vmap_over_keys(backend):
  ks = random.split(random.key(0), 3)
  got = jax.vmap(lambda k: random.uniform(k))(ks)
  want = [float(random.uniform(k)) for k in ks]
  np.testing.assert_array_equal(np.asarray(got), np.asarray(want, np.float32))
  split = jax.vmap(lambda k: random.split(k))(ks)
  assert split.shape == (3, 2)
  for i in range(3):
    np.testing.assert_array_equal(data(split)[i], data(random.split(ks[i])))
  folded = jax.jit(jax.vmap(lambda k, i: random.fold_in(k, i)))(ks, jnp.arange(3))
  for i in range(3):
    np.testing.assert_array_equal(data(folded)[i], data(random.fold_in(ks[i], i)))


def _scan_body(c, _):
  c, s = random.split(c)
  return c, random.uniform(s)


def test_scan_carries_a_key(backend):
  k = random.key(0)
  eager = lax.scan(_scan_body, k, None, length=3)
  jitted = jax.jit(lambda k: lax.scan(_scan_body, k, None, length=3))(k)
  for got in (eager, jitted):
    np.testing.assert_array_equal(data(got[0]), [683029726, 1624662641])
    np.testing.assert_array_equal(np.asarray(got[1]).view(np.uint32),
                                  [1005519104, 1037407792, 1034497072])


def test_while_and_cond_carry_keys(backend):
  k = random.key(0)
  loop = lambda k: lax.fori_loop(0, 3, lambda i, k: random.fold_in(k, i), k)  # noqa: E731
  for got in (loop(k), jax.jit(loop)(k)):
    np.testing.assert_array_equal(data(got), [276444683, 838309524])
  branch = lambda k, p: lax.cond(p, lambda k: random.split(k)[0], lambda k: k, k)  # noqa: E731
  for p, want in ((True, SPLIT[0]), (False, [0, 0])):
    np.testing.assert_array_equal(data(branch(k, p)), want)
    np.testing.assert_array_equal(data(jax.jit(branch)(k, p)), want)


def test_grad_with_keys():
  k = random.key(0)
  assert float(jax.grad(lambda x, k: x * random.uniform(k))(1.0, k)) == pytest.approx(0.947667)
  g = jax.grad(lambda x: (x * random.normal(k, (3,))).sum())(jnp.ones(3))
  np.testing.assert_array_equal(np.asarray(g), np.asarray(random.normal(k, (3,))))
  g = jax.jit(jax.grad(lambda x, k: x * random.uniform(k)))(1.0, k)
  assert float(g) == pytest.approx(0.947667)


def test_key_tangents_are_float0():
  k = random.key(0)
  out, tangent = jax.jvp(lambda k: random.split(k), (k,), (np.zeros((), jax.dtypes.float0),))
  np.testing.assert_array_equal(data(out), SPLIT)
  assert tangent.dtype == jax.dtypes.float0 and tangent.shape == (2,)
  _, vjp = jax.vjp(lambda x, k: x * random.uniform(k), 1.0, k)
  ct_x, ct_k = vjp(1.0)
  assert ct_k.dtype == jax.dtypes.float0 and ct_k.shape == ()


def test_bits_match_jax_under_jit(backend):
  real = oracle()
  for seed in (0, 7):
    want = np.asarray(real.random.bits(real.random.key(seed), (5,)))
    k = random.key(seed)
    np.testing.assert_array_equal(np.asarray(random.bits(k, (5,))), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda k: random.bits(k, (5,)))(k)), want)
    want = np.asarray(real.vmap(lambda k: real.random.normal(k, (2,)))(
        real.random.split(real.random.key(seed), 3)))
    got = jax.jit(jax.vmap(lambda k: random.normal(k, (2,))))(random.split(k, 3))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_eager_key_array_operations():
  k = random.key(0)
  ks = random.split(k, 3)
  assert jnp.stack([k, k]).shape == (2,)
  assert jnp.concatenate([ks, ks]).shape == (6,)
  np.testing.assert_array_equal(np.asarray(random.split(k) == random.split(k)), [True, True])
  np.testing.assert_array_equal(data(ks[1]), data(ks)[1])
  np.testing.assert_array_equal(data(list(ks)[2]), data(ks)[2])


def test_grad_with_respect_to_a_key_is_an_error():
  with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs .* "
                     "but got key<fry>"):
    jax.grad(lambda k: random.uniform(k))(random.key(0))


def test_pmap_over_keys(cpu_devices):
  cpu_devices(2)
  ks = random.split(random.key(0), 2)
  got = jax.pmap(lambda k: random.uniform(k, (2,)))(ks)
  want = jax.vmap(lambda k: random.uniform(k, (2,)))(ks)
  np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
  split = jax.pmap(lambda k: random.split(k))(ks)
  assert split.shape == (2, 2) and split.dtype == ks.dtype
  np.testing.assert_array_equal(data(split)[1], data(random.split(ks[1])))


def test_scatter_into_key_arrays(backend):
  k = random.key(0)
  ks = random.split(k, 2)
  for got in (ks.at[0].set(k), jax.jit(lambda ks, k: ks.at[0].set(k))(ks, k)):
    assert got.dtype == k.dtype
    np.testing.assert_array_equal(data(got), [[0, 0], SPLIT[1]])


def _key_comparisons(jax, jnp, lax):
  k = jax.random.split(jax.random.key(1), 3)
  j = jax.random.split(jax.random.key(2), 3)
  out = {"lax.eq": lax.eq(k, k[1]), "lax.ne jit": jax.jit(lax.ne)(k, k[1]),
         "jnp.equal": jnp.equal(k, j), "vmap eq": jax.vmap(lax.eq)(k, k),
         "array_equal": jnp.array_equal(k, k), "==": k == j.at[0].set(k[0])}
  try:
    lax.lt(k, j)
  except TypeError as e:
    out["lt"] = str(e)
  return {name: v if isinstance(v, str) else np.asarray(v).tolist() for name, v in out.items()}


def test_eq_and_ne_compare_keys_as_jax(backend):
  """lax.eq and lax.ne take typed keys (equal where all their key data is),
  eagerly and jitted; the jaxpr has one eq on the keys; order comparisons
  refuse them."""
  got = _key_comparisons(jax, jnp, lax)
  assert got["lax.eq"] == [False, True, False] and got["lax.ne jit"] == [True, False, True]
  assert got["vmap eq"] == [True] * 3 and got["array_equal"] is True
  assert got["=="] == [True, False, False] and got["jnp.equal"] == [False] * 3
  assert got["lt"].startswith("lt does not accept dtype key<fry> at position 0")
  k = random.split(random.key(1))
  assert str(jax.make_jaxpr(lax.eq)(k, k)) == (
      "{ lambda ; a:key<fry>[2] b:key<fry>[2]. let c:bool[2] = eq a b in (c,) }")
  real = pytest.importorskip("jax")
  assert got == _key_comparisons(real, real.numpy, real.lax)
