"""Printed jaxprs of purejax.random programs equal JAX's: the samplers are
jitted helpers (``jit[name=_uniform ...]``, ``_normal``/``_normal_real``,
``_gamma`` binding ``random_gamma``...) with JAX's names and static args.

A few expected texts are written here (they run without JAX); the rest are
compared with the installed JAX, with typed and raw keys."""
import textwrap

import numpy as np
import pytest

import purejax
import purejax.numpy as pjnp
import purejax.random as prandom


def _text(s):
  return textwrap.dedent(s).strip()


UNIFORM_3 = _text("""
    let _uniform = { lambda ; a:key<fry>[] b:f32[] c:f32[]. let
        d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
        e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
        f:f32[1] = broadcast_in_dim d
        g:f32[1] = broadcast_in_dim e
        h:u32[3] = random_bits[bit_width=32 shape=(3,)] a
        i:u32[3] = shift_right_logical h 9:u32[]
        j:u32[3] = or i 1065353216:u32[]
        k:f32[3] = bitcast_convert_type[new_dtype=float32] j
        l:f32[3] = sub k 1.0:f32[]
        m:f32[1] = sub g f
        n:f32[3] = mul l m
        o:f32[3] = add n f
        p:f32[3] = max f o
      in (p,) } in
    { lambda ; q:key<fry>[]. let
        r:f32[3] = jit[name=_uniform jaxpr=_uniform] q 0.0:f32[] 1.0:f32[]
      in (r,) }
    """)

GAMMA_RAW_KEY = _text("""
    { lambda ; a:u32[2]. let
        b:key<fry>[] = random_wrap[impl=fry] a
        c:f32[3] = jit[
          name=_gamma
          jaxpr={ lambda ; b:key<fry>[] d:f32[]. let
              e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
              f:f32[3] = broadcast_in_dim e
              c:f32[3] = random_gamma[log_space=False] b f
            in (c,) }
        ] b 2.0:f32[]
      in (c,) }
    """)

EXPONENTIAL_TAIL = _text("""
    { lambda ; q:key<fry>[]. let
        r:f32[2] = jit[
          name=_exponential
          jaxpr={ lambda ; q:key<fry>[]. let
              s:f32[2] = jit[name=_uniform jaxpr=_uniform] q 0.0:f32[] 1.0:f32[]
              t:f32[2] = neg s
              u:f32[2] = log1p t
              r:f32[2] = neg u
            in (r,) }
        ] q
      in (r,) }
    """)


def test_uniform_prints_a_shared_jitted_helper():
  text = str(purejax.make_jaxpr(lambda k: prandom.uniform(k, (3,)))(prandom.key(0)))
  assert text == UNIFORM_3


def test_gamma_binds_random_gamma():
  f = lambda k: prandom.gamma(k, 2., (3,))
  assert str(purejax.make_jaxpr(f)(prandom.PRNGKey(0))) == GAMMA_RAW_KEY


def test_exponential_nests_uniform():
  text = str(purejax.make_jaxpr(lambda k: prandom.exponential(k, (2,)))(prandom.key(0)))
  assert text.endswith(EXPONENTIAL_TAIL)


def test_normal_nests_normal_real_and_uniform():
  text = str(purejax.make_jaxpr(lambda k: prandom.normal(k, (3,)))(prandom.key(0)))
  assert "name=_normal\n" in text and "name=_normal_real\n" in text
  assert "jit[name=_uniform jaxpr=_uniform]" in text


def test_eager_values_unchanged_by_the_jit_wrappers():
  k = prandom.PRNGKey(0)
  a = prandom.normal(k, (5,))
  b = purejax.jit(lambda k: prandom.normal(k, (5,)))(k)
  np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  g = prandom.gamma(k, np.array([0.5, 2.0, 7.0], np.float32))
  gj = purejax.jit(lambda k: prandom.gamma(k, np.array([0.5, 2.0, 7.0], np.float32)))(k)
  np.testing.assert_array_equal(np.asarray(g), np.asarray(gj))


def test_gamma_primitive_vmap_and_grad():
  keys = prandom.split(prandom.key(1), 3)
  a = pjnp.array([0.5, 1.5, 4.0])
  batched = purejax.vmap(lambda k, x: prandom.gamma(k, x))(keys, a)
  single = [prandom.gamma(keys[i], a[i]) for i in range(3)]
  np.testing.assert_array_equal(np.asarray(batched), np.asarray(single))
  g = purejax.grad(lambda x: prandom.gamma(prandom.key(0), x))(2.0)
  assert np.isfinite(float(g)) and float(g) > 0


# ---------------------------------------------------------------------------
# against JAX

def _cases(R, jnp):
  return {
      "uniform": lambda k: R.uniform(k, (3,)),
      "uniform_f16": lambda k: R.uniform(k, (2, 3), jnp.float16, -1., 2.),
      "normal": lambda k: R.normal(k, (3,)),
      "normal_scalar": lambda k: R.normal(k),
      "normal_c64": lambda k: R.normal(k, (2,), jnp.complex64),
      "randint": lambda k: R.randint(k, (3,), 0, 10),
      "randint_u8": lambda k: R.randint(k, (3,), 0, 256, jnp.uint8),
      "bernoulli": lambda k: R.bernoulli(k, 0.3, (3,)),
      "bernoulli_default": lambda k: R.bernoulli(k),
      "bernoulli_high": lambda k: R.bernoulli(k, 0.3, (3,), mode="high"),
      "categorical": lambda k: R.categorical(k, jnp.zeros((2, 4))),
      "categorical_norep": lambda k: R.categorical(k, jnp.zeros((4,)), shape=(2,),
                                                   replace=False),
      "gumbel": lambda k: R.gumbel(k, (3,)),
      "gumbel_high": lambda k: R.gumbel(k, (3,), mode="high"),
      "gumbel_highest": lambda k: R.gumbel(k, (3,), mode="highest"),
      "exponential": lambda k: R.exponential(k, (3,)),
      "truncated_normal": lambda k: R.truncated_normal(k, -1., 1., (3,)),
      "choice": lambda k: R.choice(k, 5, (3,)),
      "choice_norep": lambda k: R.choice(k, 5, (3,), replace=False),
      "choice_p_norep": lambda k: R.choice(k, 3, (2,), replace=False,
                                           p=jnp.array([.2, .3, .5])),
      "permutation": lambda k: R.permutation(k, 5),
      "permutation_independent": lambda k: R.permutation(
          k, jnp.arange(6.).reshape(2, 3), independent=True),
      "gamma": lambda k: R.gamma(k, 2., (3,)),
      "gamma_default_shape": lambda k: R.gamma(k, jnp.ones(2)),
      "loggamma": lambda k: R.loggamma(k, 2., (3,)),
      "beta": lambda k: R.beta(k, 2., 3., (3,)),
      "dirichlet": lambda k: R.dirichlet(k, jnp.ones(3)),
      "poisson": lambda k: R.poisson(k, 3., (3,)),
      "laplace": lambda k: R.laplace(k, (3,)),
      "logistic": lambda k: R.logistic(k, (3,)),
      "cauchy": lambda k: R.cauchy(k, (3,)),
      "pareto": lambda k: R.pareto(k, 2., (3,)),
      "t": lambda k: R.t(k, 3., (3,)),
      "chisquare": lambda k: R.chisquare(k, 3., (3,)),
      "f": lambda k: R.f(k, 3., 4., (3,)),
      "rademacher": lambda k: R.rademacher(k, (3,)),
      "maxwell": lambda k: R.maxwell(k, (3,)),
      "double_sided_maxwell": lambda k: R.double_sided_maxwell(k, 0., 1., (3,)),
      "weibull_min": lambda k: R.weibull_min(k, 1., 2., (3,)),
      "generalized_normal": lambda k: R.generalized_normal(k, 2., (3,)),
      "rayleigh": lambda k: R.rayleigh(k, 1., (3,)),
      "wald": lambda k: R.wald(k, 1., (3,)),
      "geometric": lambda k: R.geometric(k, 0.3, (3,)),
      "triangular": lambda k: R.triangular(k, 0., .5, 1., (3,)),
      "lognormal": lambda k: R.lognormal(k, 1., (3,)),
      "multivariate_normal": lambda k: R.multivariate_normal(k, jnp.zeros(2), jnp.eye(2)),
      "bits": lambda k: R.bits(k, (3,)),
      "split": lambda k: R.split(k),
      "fold_in": lambda k: R.fold_in(k, 3),
  }


# Differences that lie outside purejax.random (jnp.take, jnp.searchsorted,
# jnp.linalg.diagonal, x ** int and binomial's Stirling table): not compared.
KNOWN_DIFFERENT = {
    "choice_arr": lambda R, jnp: lambda k: R.choice(k, jnp.arange(5.), (3,)),
    "choice_p": lambda R, jnp: lambda k: R.choice(k, 3, (2,), p=jnp.array([.2, .3, .5])),
    "permutation_axis": lambda R, jnp: lambda k: R.permutation(
        k, jnp.arange(6.).reshape(2, 3), axis=1),
    "orthogonal": lambda R, jnp: lambda k: R.orthogonal(k, 3),
    "ball": lambda R, jnp: lambda k: R.ball(k, 3),
    "binomial": lambda R, jnp: lambda k: R.binomial(k, 5., 0.3, (3,)),
}


def _both(name, key_ctor):
  jax = pytest.importorskip("jax")
  import jax.numpy as jjnp
  if name in KNOWN_DIFFERENT:
    jf, pf = KNOWN_DIFFERENT[name](jax.random, jjnp), KNOWN_DIFFERENT[name](prandom, pjnp)
  else:
    jf, pf = _cases(jax.random, jjnp)[name], _cases(prandom, pjnp)[name]
  expected = str(jax.make_jaxpr(jf)(getattr(jax.random, key_ctor)(0)))
  got = str(purejax.make_jaxpr(pf)(getattr(prandom, key_ctor)(0)))
  return expected, got


@pytest.mark.parametrize("key_ctor", ["key", "PRNGKey"])
@pytest.mark.parametrize("name", sorted(_cases(None, None)))   # names only
def test_printed_jaxpr_equals_jax(name, key_ctor):
  expected, got = _both(name, key_ctor)
  assert got == expected


@pytest.mark.parametrize("name", sorted(KNOWN_DIFFERENT))
def test_known_differences_still_differ(name):
  # When one of these starts to match (a jnp fix), move it to the list above.
  expected, got = _both(name, "key")
  if got == expected:
    pytest.skip(f"{name} now prints as JAX's: move it to the compared cases")
