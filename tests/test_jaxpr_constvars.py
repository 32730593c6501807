"""Constants in printed jaxprs, as JAX prints them: concrete arrays a traced
function captures (or makes) are constvars of the jaxpr, with their values
in ``ClosedJaxpr.consts``; Python and NumPy scalars are literals, and a
conversion of a constant array is an equation (JAX folds scalars only)."""
import numpy as np
import pytest

import purejax
import purejax.numpy as pjnp
from purejax._src.jaxpr import jaxpr_as_fun

from conftest import oracle


def _text(closed):
  return str(closed) + "\n"


# Each case builds its constants with the given modules and returns the
# ClosedJaxpr (make_jaxpr's, or jit(...).trace(...).jaxpr).
def _closure_jnp(jax, jnp):
  c = jnp.array([1, 2])
  return jax.make_jaxpr(lambda y: c + y)(2.)


def _closure_np(jax, jnp):
  n = np.array([1., 2.], np.float32)
  return jax.make_jaxpr(lambda y: n * y)(2.)


def _closure_np_int(jax, jnp):
  n = np.array([1, 2])
  return jax.make_jaxpr(lambda y: n + y)(2.)


def _closure_scalar_array(jax, jnp):
  s = jnp.array(3)
  return jax.make_jaxpr(lambda y: s * y)(2.)


def _scalars_are_literals(jax, jnp):
  s = np.float32(3.)
  return jax.make_jaxpr(lambda y: (y * s, y * jnp.float32(0.5), y * jnp.asarray(2),
                                   y.astype(jnp.int8) * jnp.int8(3)))(2.)


def _array_literal_inside(jax, jnp):
  return jax.make_jaxpr(lambda x: jnp.array([1, 2]) + x)(2.)


def _array_with_dtype_inside(jax, jnp):
  return jax.make_jaxpr(lambda x: (jnp.array([1, 2], dtype=jnp.float32) + x,
                                   jnp.asarray(np.arange(3.)) * x))(2.)


def _arange_inside(jax, jnp):
  return jax.make_jaxpr(lambda y: jnp.arange(3) * y)(2.)


def _under_jit(jax, jnp):
  c = jnp.array([1, 2])
  return jax.make_jaxpr(jax.jit(lambda y: c * y))(2.)


def _nested_jit(jax, jnp):
  c = jnp.array([1, 2])
  n = np.array([3., 4.], np.float32)
  f = lambda y: jax.jit(lambda z: jax.jit(lambda w: c * w + n)(z) * c)(y) + n[0]
  return jax.make_jaxpr(f)(2.)


def _under_grad(jax, jnp):
  c = jnp.array([1, 2])
  return jax.make_jaxpr(jax.grad(lambda y: (c * y).sum()))(2.)


def _jit_under_vmap(jax, jnp):
  c = jnp.array([1., 2.])
  return jax.make_jaxpr(jax.vmap(lambda y: jax.jit(lambda z: z * c.sum())(y)))(jnp.ones(3))


def _cond_branches(jax, jnp):
  c = jnp.array([1, 2])
  return jax.make_jaxpr(
      lambda y: jax.lax.cond(y > 0, lambda: c * y, lambda: c + y))(2.)


def _traced_jaxpr(jax, jnp):
  c = jnp.array([1, 2])
  return jax.jit(lambda y: c * y).trace(2.).jaxpr


def _dot_transpose(jax, jnp):
  x = jnp.arange(4.)
  return jax.make_jaxpr(jax.grad(lambda W: jnp.dot(W, x).sum()))(jnp.ones((3, 4)))


CASES = {
    "closure_jnp": _closure_jnp,
    "closure_np": _closure_np,
    "closure_np_int": _closure_np_int,
    "closure_scalar_array": _closure_scalar_array,
    "scalars_are_literals": _scalars_are_literals,
    "array_literal_inside": _array_literal_inside,
    "array_with_dtype_inside": _array_with_dtype_inside,
    "arange_inside": _arange_inside,
    "under_jit": _under_jit,
    "nested_jit": _nested_jit,
    "under_grad": _under_grad,
    "jit_under_vmap": _jit_under_vmap,
    "cond_branches": _cond_branches,
    "traced_jaxpr": _traced_jaxpr,
    "dot_transpose": _dot_transpose,
}

EXPECTED = {
  'closure_jnp': '''\
{ lambda a:i32[2]; b:f32[]. let
    c:f32[2] = convert_element_type[new_dtype=float32 weak_type=True] a
    d:f32[2] = add c b
  in (d,) }
''',
  'closure_np': '''\
{ lambda a:f32[2]; b:f32[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[2] = mul a c
  in (d,) }
''',
  'closure_np_int': '''\
{ lambda a:i32[2]; b:f32[]. let
    c:f32[2] = convert_element_type[new_dtype=float32 weak_type=True] a
    d:f32[2] = add c b
  in (d,) }
''',
  'closure_scalar_array': '''\
{ lambda a:i32[]; b:f32[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=True] a
    d:f32[] = mul c b
  in (d,) }
''',
  'scalars_are_literals': '''\
{ lambda ; a:f32[]. let
    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[] = mul b 3.0:f32[]
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    e:f32[] = mul d 0.5:f32[]
    f:f32[] = mul a 2.0:f32[]
    g:i8[] = convert_element_type[new_dtype=int8 weak_type=False] a
    h:i8[] = mul g 3:i8[]
  in (c, e, f, h) }
''',
  'array_literal_inside': '''\
{ lambda a:i32[2]; b:f32[]. let
    c:f32[2] = convert_element_type[new_dtype=float32 weak_type=True] a
    d:f32[2] = add c b
  in (d,) }
''',
  'array_with_dtype_inside': '''\
{ lambda a:f32[2] b:f32[3]; c:f32[]. let
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    e:f32[2] = add a d
    f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    g:f32[3] = mul b f
  in (e, g) }
''',
  'arange_inside': '''\
{ lambda ; a:f32[]. let
    b:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] 
    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=True] b
    d:f32[3] = mul c a
  in (d,) }
''',
  'under_jit': '''\
{ lambda ; a:f32[]. let
    b:f32[2] = jit[
      name=<lambda>
      jaxpr={ lambda c:i32[2]; a:f32[]. let
          d:f32[2] = convert_element_type[new_dtype=float32 weak_type=True] c
          b:f32[2] = mul d a
        in (b,) }
    ] a
  in (b,) }
''',
  'nested_jit': '''\
{ lambda ; a:f32[]. let
    b:f32[2] = jit[
      name=<lambda>
      jaxpr={ lambda c:i32[2]; a:f32[]. let
          d:f32[2] = jit[
            name=<lambda>
            jaxpr={ lambda e:i32[2] f:f32[2]; a:f32[]. let
                g:f32[2] = convert_element_type[
                  new_dtype=float32
                  weak_type=True
                ] e
                h:f32[2] = mul g a
                i:f32[2] = convert_element_type[
                  new_dtype=float32
                  weak_type=False
                ] h
                d:f32[2] = add i f
              in (d,) }
          ] a
          j:f32[2] = convert_element_type[new_dtype=float32 weak_type=False] c
          b:f32[2] = mul d j
        in (b,) }
    ] a
    k:f32[2] = add b 3.0:f32[]
  in (k,) }
''',
  'under_grad': '''\
{ lambda a:i32[2]; b:f32[]. let
    c:f32[2] = convert_element_type[new_dtype=float32 weak_type=True] a
    d:f32[2] = mul c b
    e:f32[2] = convert_element_type[new_dtype=float32 weak_type=False] d
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
    f:f32[2] = broadcast_in_dim 1.0:f32[]
    g:f32[2] = convert_element_type[new_dtype=float32 weak_type=True] f
    h:f32[2] = mul c g
    i:f32[] = reduce_sum[axes=(0,) out_sharding=None] h
  in (i,) }
''',
  'jit_under_vmap': '''\
{ lambda ; a:f32[3]. let
    b:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda c:f32[2]; a:f32[3]. let
          d:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
          b:f32[3] = mul a d
        in (b,) }
    ] a
  in (b,) }
''',
  'cond_branches': '''\
{ lambda a:i32[2]; b:f32[]. let
    c:bool[] = gt b 0.0:f32[]
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
    e:f32[2] = cond[
      branches=(
        { lambda ; f:i32[2] g:f32[]. let
            h:f32[2] = convert_element_type[new_dtype=float32 weak_type=True] f
            i:f32[2] = add h g
          in (i,) }
        { lambda ; j:i32[2] k:f32[]. let
            l:f32[2] = convert_element_type[new_dtype=float32 weak_type=True] j
            m:f32[2] = mul l k
          in (m,) }
      )
    ] d a b
  in (e,) }
''',
  'traced_jaxpr': '''\
{ lambda a:i32[2]; b:f32[]. let
    c:f32[2] = convert_element_type[new_dtype=float32 weak_type=True] a
    d:f32[2] = mul c b
  in (d,) }
''',
  'dot_transpose': '''\
{ lambda a:f32[4]; b:f32[3,4]. let
    c:f32[3] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] b a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3,4] = dot_general[
      dimension_numbers=(([], []), ([], []))
      preferred_element_type=float32
    ] d a
  in (e,) }
''',
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_printed_as_jax(name):
  assert _text(CASES[name](purejax, pjnp)) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
  jax = oracle()
  import jax.numpy as jnp
  assert _text(CASES[name](purejax, pjnp)) == _text(CASES[name](jax, jnp))


def test_consts_hold_the_values():
  n = np.array([1., 2.], np.float32)
  closed = purejax.make_jaxpr(lambda y: n * y)(2.)
  assert len(closed.consts) == 1
  np.testing.assert_array_equal(np.asarray(closed.consts[0]), n)
  c = pjnp.array([1, 2])
  closed = CASES["under_jit"](purejax, pjnp)
  assert closed.consts == []
  inner = closed.eqns[0].params["jaxpr"]
  assert [np.asarray(v).tolist() for v in inner.consts] == [[1, 2]]


def test_printed_form_evaluates():
  # A call that keeps its constants (make_jaxpr's form) runs, compiles and
  # transforms like any other.
  c = pjnp.array([1, 2])
  n = np.array([3., 4.], np.float32)
  f = lambda y: purejax.jit(lambda z: purejax.jit(lambda w: c * w + n)(z) * c)(y) + n[0]
  g = jaxpr_as_fun(purejax.make_jaxpr(f)(2.))
  expected = np.array([8., 19.], np.float32)
  np.testing.assert_allclose(np.asarray(g(2.)[0]), expected)
  np.testing.assert_allclose(np.asarray(purejax.jit(g)(2.)[0]), expected)
  assert float(purejax.grad(lambda y: g(y)[0].sum())(2.)) == 5.0
  out = purejax.vmap(g)(pjnp.arange(3.))[0]
  np.testing.assert_allclose(np.asarray(out), [[6., 11.], [7., 15.], [8., 19.]])
  assert str(purejax.make_jaxpr(g)(2.)) == str(purejax.make_jaxpr(f)(2.))
