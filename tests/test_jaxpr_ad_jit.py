"""Printed jaxprs of reverse-mode programs through ``jit``, compared with JAX's.

Under ``grad``/``vjp``/``linearize`` a ``jit`` splits into a known call
(the primal outputs and the residuals, without the known inputs and outputs
it would only forward) and a linear call, which transposes into a third
``jit`` of the backward pass (residuals first, then the nonzero
cotangents).  Each case's expected text is written here, so the tests run
without JAX; with JAX installed they are also checked against it.  The
values are checked against the same programs without ``jit`` and against
finite differences.
"""
import numpy as np
import pytest

import purejax
import purejax.numpy as pjnp
from purejax import lax as plax

CASES = {}


def case(fn):
  CASES[fn.__name__] = fn
  return fn


@case
def grad_of_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  return jax.make_jaxpr(jax.grad(f))(1.)

@case
def grad_two_argnums(jax, jnp, lax):
  f = jax.jit(lambda x, y: jnp.sin(x) * y + x)
  return jax.make_jaxpr(jax.grad(f, argnums=(0, 1)))(1., 2.)

@case
def grad_second_argnum(jax, jnp, lax):
  f = jax.jit(lambda x, y: jnp.sin(x) * y)
  return jax.make_jaxpr(jax.grad(f, argnums=1))(1., 2.)

@case
def several_outputs(jax, jnp, lax):
  f = jax.jit(lambda x: (jnp.sin(x), x * 2., x))
  def g(x):
    a, b, c = f(x)
    return a * b + c
  return jax.make_jaxpr(jax.grad(g))(1.)

@case
def closure_over_array(jax, jnp, lax):
  w = jnp.arange(3.)
  f = jax.jit(lambda x: jnp.sum(jnp.sin(x * w)))
  return jax.make_jaxpr(jax.grad(f))(jnp.ones(3))

@case
def nested_jit(jax, jnp, lax):
  inner = jax.jit(lambda x: jnp.cos(x) * x)
  f = jax.jit(lambda x: inner(x) * 3. + x)
  return jax.make_jaxpr(jax.grad(f))(1.)

@case
def vjp_of_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  def g(x):
    y, vjp = jax.vjp(f, x)
    return vjp(jnp.ones_like(y))
  return jax.make_jaxpr(g)(jnp.ones(3))

@case
def linearize_of_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  def g(x):
    _, lin = jax.linearize(f, x)
    return lin(x)
  return jax.make_jaxpr(g)(1.)

@case
def value_and_grad_of_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sum(jnp.sin(x) * x))
  return jax.make_jaxpr(jax.value_and_grad(f))(jnp.ones(3))

@case
def grad_jit_grad_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  return jax.make_jaxpr(jax.grad(jax.jit(jax.grad(f))))(1.)

@case
def integer_input(jax, jnp, lax):
  f = jax.jit(lambda x, n: jnp.sin(x) * n)
  return jax.make_jaxpr(jax.grad(f))(1., 3)

@case
def unused_input(jax, jnp, lax):
  f = jax.jit(lambda x, y: jnp.sin(x) * 2.)
  return jax.make_jaxpr(jax.grad(f, argnums=(0, 1)))(1., 2.)

@case
def static_argnums(jax, jnp, lax):
  f = jax.jit(lambda x, k: jnp.sin(x) * k, static_argnums=1)
  return jax.make_jaxpr(jax.grad(lambda x: f(x, 3.)))(1.)

@case
def output_is_input(jax, jnp, lax):
  f = jax.jit(lambda x: (x, jnp.sin(x)))
  def g(x):
    a, b = f(x)
    return a * b
  return jax.make_jaxpr(jax.grad(g))(1.)

@case
def linear_body(jax, jnp, lax):
  f = jax.jit(lambda x: x * 2.)
  return jax.make_jaxpr(jax.grad(f))(1.)

@case
def input_residual_and_output(jax, jnp, lax):
  f = jax.jit(lambda x, y: (x * y, y))
  def g(x, y):
    a, b = f(x, y)
    return a * b
  return jax.make_jaxpr(jax.grad(g, argnums=(0, 1)))(1., 2.)

@case
def jit_of_grad_of_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  return jax.make_jaxpr(jax.jit(jax.grad(f)))(1.)

@case
def unused_output(jax, jnp, lax):
  f = jax.jit(lambda x: (jnp.sin(x), jnp.cos(x)))
  return jax.make_jaxpr(jax.grad(lambda x: f(x)[0]))(1.)

@case
def same_jit_twice(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x))
  return jax.make_jaxpr(jax.grad(lambda x: f(x) * f(x)))(1.)

@case
def residual_is_output(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.exp(x))
  return jax.make_jaxpr(jax.grad(f))(1.)

@case
def vjp_two_outputs(jax, jnp, lax):
  f = jax.jit(lambda x, y: (x * y, jnp.sin(y)))
  def g(x, y):
    out, vjp = jax.vjp(f, x, y)
    return vjp(out)
  return jax.make_jaxpr(g)(1., 2.)

@case
def dead_code_in_body(jax, jnp, lax):
  f = jax.jit(lambda x: (jnp.cos(x), jnp.sin(x) * x)[1])
  return jax.make_jaxpr(jax.grad(f))(1.)

@case
def unused_output_and_input(jax, jnp, lax):
  f = jax.jit(lambda x, y: (jnp.sin(x) * y, jnp.cos(y) * x))
  return jax.make_jaxpr(jax.grad(lambda x, y: f(x, y)[1], argnums=(0, 1)))(1., 2.)

@case
def vmap_of_grad(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  return jax.make_jaxpr(jax.vmap(jax.grad(f)))(jnp.ones(3))

@case
def grad_of_vmap(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  return jax.make_jaxpr(jax.grad(lambda x: jnp.sum(jax.vmap(f)(x))))(jnp.ones(3))

@case
def jvp_of_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  return jax.make_jaxpr(lambda x: jax.jvp(f, (x,), (x,)))(1.)

@case
def integer_output(jax, jnp, lax):
  f = jax.jit(lambda x: (jnp.sin(x), jnp.argmax(x)))
  return jax.make_jaxpr(jax.grad(lambda x: jnp.sum(f(x)[0])))(jnp.ones(3))

@case
def jit_in_cond_branch_linear(jax, jnp, lax):
  inner = jax.jit(lambda x: x * 3.)
  def f(x):
    return jnp.sin(inner(x))
  return jax.make_jaxpr(jax.grad(f))(1.)

@case
def dict_args(jax, jnp, lax):
  f = jax.jit(lambda p, x: jnp.sum(jnp.sin(x @ p["w"]) * p["b"]))
  p = {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}
  return jax.make_jaxpr(jax.grad(f))(p, jnp.ones((4, 3)))


EXPECTED = {
    'grad_of_jit': """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          c:f32[] = sin a
          b:f32[] = cos a
          _:f32[] = mul c a
        in (_, b, c) }
    ] a
    d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] c:f32[] e:f32[]. let
          f:f32[] = mul c e
          g:f32[] = mul e a
          h:f32[] = mul g b
          d:f32[] = add_any f h
        in (d,) }
    ] b a c 1.0:f32[]
  in (d,) }""",
    'grad_two_argnums': """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] c:f32[] d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          d:f32[] = sin a
          c:f32[] = cos a
          e:f32[] = mul d b
          _:f32[] = add e a
        in (_, c, d) }
    ] a b
    f:f32[] g:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] b:f32[] d:f32[] h:f32[]. let
          g:f32[] = mul d h
          i:f32[] = mul h b
          j:f32[] = mul i c
          f:f32[] = add_any h j
        in (f, g) }
    ] c b d 1.0:f32[]
  in (f, g) }""",
    'grad_second_argnum': """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          c:f32[] = sin a
          _:f32[] = mul c b
        in (_, c) }
    ] a b
    d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] e:f32[]. let d:f32[] = mul c e in (d,) }
    ] c 1.0:f32[]
  in (d,) }""",
    'several_outputs': """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[] d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          b:f32[] = sin a
          d:f32[] = cos a
          c:f32[] = mul a 2.0:f32[]
        in (b, c, d) }
    ] a
    e:f32[] = mul b c
    _:f32[] = add e a
    f:f32[] = mul b 1.0:f32[]
    g:f32[] = mul 1.0:f32[] c
    h:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; d:f32[] g:f32[] f:f32[] i:f32[]. let
          j:f32[] = mul f 2.0:f32[]
          k:f32[] = add_any i j
          l:f32[] = mul g d
          h:f32[] = add_any k l
        in (h,) }
    ] d g f 1.0:f32[]
  in (h,) }""",
    'closure_over_array': """\
{ lambda a:f32[3]; b:f32[3]. let
    _:f32[] c:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda d:f32[3]; b:f32[3]. let
          e:f32[3] = mul b d
          f:f32[3] = sin e
          c:f32[3] = cos e
          _:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
        in (_, c) }
    ] b
    g:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3] c:f32[3] h:f32[]. let
          i:f32[3] = broadcast_in_dim h
          j:f32[3] = mul i c
          g:f32[3] = mul j a
        in (g,) }
    ] a c 1.0:f32[]
  in (g,) }""",
    'nested_jit': """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          d:f32[] b:f32[] c:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; a:f32[]. let
                c:f32[] = cos a
                b:f32[] = sin a
                d:f32[] = mul c a
              in (d, b, c) }
          ] a
          e:f32[] = mul d 3.0:f32[]
          _:f32[] = add e a
        in (_, b, c) }
    ] a
    f:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] c:f32[] g:f32[]. let
          h:f32[] = mul g 3.0:f32[]
          i:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; b:f32[] a:f32[] c:f32[] h:f32[]. let
                j:f32[] = mul c h
                k:f32[] = mul h a
                l:f32[] = neg k
                m:f32[] = mul l b
                i:f32[] = add_any j m
              in (i,) }
          ] b a c h
          f:f32[] = add_any g i
        in (f,) }
    ] b a c 1.0:f32[]
  in (f,) }""",
    'vjp_of_jit': """\
{ lambda ; a:f32[3]. let
    _:f32[3] b:f32[3] c:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let
          c:f32[3] = sin a
          b:f32[3] = cos a
          _:f32[3] = mul c a
        in (_, b, c) }
    ] a
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[3] a:f32[3] c:f32[3] d:f32[3]. let
          f:f32[3] = mul c d
          g:f32[3] = mul d a
          h:f32[3] = mul g b
          e:f32[3] = add_any f h
        in (e,) }
    ] b a c d
  in (e,) }""",
    'linearize_of_jit': """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          c:f32[] = sin a
          b:f32[] = cos a
          _:f32[] = mul c a
        in (_, b, c) }
    ] a
    d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] c:f32[] e:f32[]. let
          f:f32[] = mul e b
          g:f32[] = mul f a
          h:f32[] = mul c e
          d:f32[] = add_any g h
        in (d,) }
    ] b a c a
  in (d,) }""",
    'value_and_grad_of_jit': """\
{ lambda ; a:f32[3]. let
    b:f32[] c:f32[3] d:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let
          d:f32[3] = sin a
          c:f32[3] = cos a
          e:f32[3] = mul d a
          b:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
        in (b, c, d) }
    ] a
    f:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[3] a:f32[3] d:f32[3] g:f32[]. let
          h:f32[3] = broadcast_in_dim g
          i:f32[3] = mul d h
          j:f32[3] = mul h a
          k:f32[3] = mul j c
          f:f32[3] = add_any i k
        in (f,) }
    ] c a d 1.0:f32[]
  in (b, f) }""",
    'grad_jit_grad_jit': """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] c:f32[] d:f32[] e:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          d:f32[] f:f32[] b:f32[] c:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; a:f32[]. let
                f:f32[] = sin a
                b:f32[] = cos a
                d:f32[] = cos a
                c:f32[] = sin a
              in (d, f, b, c) }
          ] a
          _:f32[] e:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; d:f32[] a:f32[] f:f32[] g:f32[]. let
                h:f32[] = mul f g
                e:f32[] = mul g a
                i:f32[] = mul e d
                _:f32[] = add_any h i
              in (_, e) }
          ] d a f 1.0:f32[]
        in (_, b, c, d, e) }
    ] a
    j:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] c:f32[] d:f32[] e:f32[] k:f32[]. let
          l:f32[] m:f32[] n:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; o:f32[] d:f32[] e:f32[] k:f32[]. let
                l:f32[] = mul e k
                p:f32[] = mul k d
                m:f32[] = mul o p
                n:f32[] = mul k o
              in (l, m, n) }
          ] 1.0:f32[] d e k
          q:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; b:f32[] c:f32[] l:f32[] n:f32[]. let
                r:f32[] = neg l
                s:f32[] = mul r c
                t:f32[] = mul n b
                q:f32[] = add_any s t
              in (q,) }
          ] b c l n
          j:f32[] = add_any m q
        in (j,) }
    ] b c d e 1.0:f32[]
  in (j,) }""",
    'integer_input': """\
{ lambda ; a:f32[] b:i32[]. let
    _:f32[] c:f32[] d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:i32[]. let
          e:f32[] = sin a
          c:f32[] = cos a
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=True] b
          _:f32[] = mul e d
        in (_, c, d) }
    ] a b
    f:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] d:f32[] g:f32[]. let
          h:f32[] = mul g d
          f:f32[] = mul h c
        in (f,) }
    ] c d 1.0:f32[]
  in (f,) }""",
    'unused_input': """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          d:f32[] = sin a
          c:f32[] = cos a
          _:f32[] = mul d 2.0:f32[]
        in (_, c) }
    ] a b
    e:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] f:f32[]. let
          g:f32[] = mul f 2.0:f32[]
          e:f32[] = mul g c
        in (e,) }
    ] c 1.0:f32[]
  in (e, 0.0:f32[]) }""",
    'static_argnums': """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          c:f32[] = sin a
          b:f32[] = cos a
          _:f32[] = mul c 3.0:f32[]
        in (_, b) }
    ] a
    d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] e:f32[]. let
          f:f32[] = mul e 3.0:f32[]
          d:f32[] = mul f b
        in (d,) }
    ] b 1.0:f32[]
  in (d,) }""",
    'output_is_input': """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos a in (b, c) }
    ] a
    _:f32[] = mul a b
    d:f32[] = mul a 1.0:f32[]
    e:f32[] = mul 1.0:f32[] b
    f:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] e:f32[] d:f32[]. let
          g:f32[] = mul d c
          f:f32[] = add_any e g
        in (f,) }
    ] c e d
  in (f,) }""",
    'linear_body': """\
{ lambda ; a:f32[]. let
    _:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let _:f32[] = mul a 2.0:f32[] in (_,) }
    ] a
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[]. let b:f32[] = mul c 2.0:f32[] in (b,) }
    ] 1.0:f32[]
  in (b,) }""",
    'input_residual_and_output': """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b in (c,) }
    ] a b
    _:f32[] = mul c b
    d:f32[] = mul c 1.0:f32[]
    e:f32[] = mul 1.0:f32[] b
    f:f32[] g:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] e:f32[] d:f32[]. let
          h:f32[] = mul a e
          g:f32[] = add_any d h
          f:f32[] = mul e b
        in (f, g) }
    ] b a e d
  in (f, g) }""",
    'jit_of_grad_of_jit': """\
{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          c:f32[] d:f32[] e:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; a:f32[]. let
                e:f32[] = sin a
                d:f32[] = cos a
                c:f32[] = mul e a
              in (c, d, e) }
          ] a
          b:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; d:f32[] a:f32[] e:f32[] f:f32[]. let
                g:f32[] = mul e f
                h:f32[] = mul f a
                i:f32[] = mul h d
                b:f32[] = add_any g i
              in (b,) }
          ] d a e 1.0:f32[]
        in (b,) }
    ] a
  in (b,) }""",
    'unused_output': """\
{ lambda ; a:f32[]. let
    _:f32[] _:f32[] b:f32[] _:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          _:f32[] = sin a
          b:f32[] = cos a
          _:f32[] = cos a
          _:f32[] = sin a
        in (_, _, b, _) }
    ] a
    c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] d:f32[]. let c:f32[] = mul d b in (c,) }
    ] b 1.0:f32[]
  in (c,) }""",
    'same_jit_twice': """\
let lambda = { lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = cos a
  in (b, c) } in
let lambda1 = { lambda ; d:f32[] e:f32[]. let f:f32[] = mul e d in (f,) } in
{ lambda ; g:f32[]. let
    h:f32[] i:f32[] = jit[name=<lambda> jaxpr=lambda] g
    j:f32[] k:f32[] = jit[name=<lambda> jaxpr=lambda] g
    _:f32[] = mul h j
    l:f32[] = mul h 1.0:f32[]
    m:f32[] = mul 1.0:f32[] j
    n:f32[] = jit[name=<lambda> jaxpr=lambda1] k l
    o:f32[] = jit[name=<lambda> jaxpr=lambda1] i m
    p:f32[] = add_any n o
  in (p,) }""",
    'residual_is_output': """\
{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let b:f32[] = exp a in (b,) }
    ] a
    c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] d:f32[]. let c:f32[] = mul d b in (c,) }
    ] b 1.0:f32[]
  in (c,) }""",
    'vjp_two_outputs': """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] d:f32[] e:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          c:f32[] = mul a b
          d:f32[] = sin b
          e:f32[] = cos b
        in (c, d, e) }
    ] a b
    f:f32[] g:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] e:f32[] c:f32[] d:f32[]. let
          h:f32[] = mul d e
          i:f32[] = mul a c
          g:f32[] = add_any h i
          f:f32[] = mul c b
        in (f, g) }
    ] b a e c d
  in (f, g) }""",
    'dead_code_in_body': """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          c:f32[] = sin a
          b:f32[] = cos a
          _:f32[] = mul c a
        in (_, b, c) }
    ] a
    d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] c:f32[] e:f32[]. let
          f:f32[] = mul c e
          g:f32[] = mul e a
          h:f32[] = mul g b
          d:f32[] = add_any f h
        in (d,) }
    ] b a c 1.0:f32[]
  in (d,) }""",
    'unused_output_and_input': """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] _:f32[] _:f32[] _:f32[] c:f32[] d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          _:f32[] = sin a
          _:f32[] = cos a
          _:f32[] = mul _ b
          d:f32[] = cos b
          c:f32[] = sin b
          _:f32[] = mul d a
        in (_, _, _, _, c, d) }
    ] a b
    e:f32[] f:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] a:f32[] d:f32[] g:f32[]. let
          e:f32[] = mul d g
          h:f32[] = mul g a
          i:f32[] = neg h
          f:f32[] = mul i c
        in (e, f) }
    ] c a d 1.0:f32[]
  in (e, f) }""",
    'vmap_of_grad': """\
{ lambda ; a:f32[3]. let
    _:f32[3] b:f32[3] c:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let
          c:f32[3] = sin a
          b:f32[3] = cos a
          _:f32[3] = mul c a
        in (_, b, c) }
    ] a
    d:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[3] a:f32[3] c:f32[3] e:f32[]. let
          f:f32[3] = mul c e
          g:f32[3] = mul e a
          h:f32[3] = mul g b
          d:f32[3] = add_any f h
        in (d,) }
    ] b a c 1.0:f32[]
  in (d,) }""",
    'grad_of_vmap': """\
{ lambda ; a:f32[3]. let
    b:f32[3] c:f32[3] d:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let
          d:f32[3] = sin a
          c:f32[3] = cos a
          b:f32[3] = mul d a
        in (b, c, d) }
    ] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    e:f32[3] = broadcast_in_dim 1.0:f32[]
    f:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[3] a:f32[3] d:f32[3] e:f32[3]. let
          g:f32[3] = mul d e
          h:f32[3] = mul e a
          i:f32[3] = mul h c
          f:f32[3] = add_any g i
        in (f,) }
    ] c a d e
  in (f,) }""",
    'jvp_of_jit': """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] d:f32[]. let
          e:f32[] = sin a
          f:f32[] = cos a
          g:f32[] = mul d f
          b:f32[] = mul e a
          h:f32[] = mul g a
          i:f32[] = mul e d
          c:f32[] = add_any h i
        in (b, c) }
    ] a a
  in (b, c) }""",
    'integer_output': """\
{ lambda ; a:f32[3]. let
    b:f32[3] _:i32[] c:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let
          b:f32[3] = sin a
          c:f32[3] = cos a
          _:i32[] = argmax[axes=(0,) index_dtype=int32] a
        in (b, _, c) }
    ] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[3] d:f32[3]. let e:f32[3] = mul d c in (e,) }
    ] c d
  in (e,) }""",
    'jit_in_cond_branch_linear': """\
{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let b:f32[] = mul a 3.0:f32[] in (b,) }
    ] a
    _:f32[] = sin b
    c:f32[] = cos b
    d:f32[] = mul 1.0:f32[] c
    e:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; d:f32[]. let e:f32[] = mul d 3.0:f32[] in (e,) }
    ] d
  in (e,) }""",
    'dict_args': """\
{ lambda ; a:f32[2] b:f32[3,2] c:f32[4,3]. let
    _:f32[] d:f32[4,2] e:f32[1,2] f:f32[4,2] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[2] b:f32[3,2] c:f32[4,3]. let
          g:f32[4,2] = dot_general[
            dimension_numbers=(([1], [0]), ([], []))
            preferred_element_type=float32
          ] c b
          f:f32[4,2] = sin g
          d:f32[4,2] = cos g
          e:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] a
          h:f32[4,2] = mul f e
          _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] h
        in (_, d, e, f) }
    ] a b c
    i:f32[2] j:f32[3,2] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[4,3] d:f32[4,2] e:f32[1,2] f:f32[4,2] k:f32[]. let
          l:f32[4,2] = broadcast_in_dim k
          m:f32[4,2] = mul f l
          n:f32[2] = reduce_sum[axes=(0,) out_sharding=None] m
          o:f32[1,2] = reshape[dimensions=None new_sizes=(1, 2) sharding=None] n
          p:f32[4,2] = mul l e
          i:f32[2] = reduce_sum[axes=(0,) out_sharding=None] o
          q:f32[4,2] = mul p d
          r:f32[2,3] = dot_general[
            dimension_numbers=(([0], [0]), ([], []))
            preferred_element_type=float32
          ] q c
          j:f32[3,2] = transpose[permutation=(1, 0)] r
        in (i, j) }
    ] c d e f 1.0:f32[]
  in (i, j) }""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_printed_jaxpr(name):
  assert str(CASES[name](purejax, pjnp, plax)) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_printed_jaxpr_matches_jax(name):
  jax = pytest.importorskip("jax")
  import jax.numpy as jnp
  assert str(CASES[name](jax, jnp, jax.lax)) == str(CASES[name](purejax, pjnp, plax))


# ---------------------------------------------------------------------------
# Values: the same derivatives with and without jit, and finite differences.

@pytest.fixture(params=["numpy", "cpu"])
def backend(request):
  from purejax._src.config import config
  with config.override("purejax_backend", request.param), \
       config.override("purejax_compile_sync", True):
    yield request.param


def _f_multi(x, y, n):
  a = pjnp.sin(x) * y + x * n
  return pjnp.sum(a * pjnp.cos(y)), a


def _f_nested(x, y):
  inner = purejax.jit(lambda u, v: (pjnp.tanh(u) * v, u))
  a, b = inner(x, y)
  return pjnp.sum(a * b + pjnp.exp(-b * b))


def _f_scan(c0, xs):
  body = purejax.jit(lambda c, x: (pjnp.sin(c) * x + c, c * x))
  c, ys = plax.scan(lambda c, x: body(c, x), c0, xs)
  return c + pjnp.sum(ys)


def _f_cond(p, x):
  inner = purejax.jit(lambda x: pjnp.sin(x) * x)
  return plax.cond(p, inner, lambda x: x * 2., x)


def _f_remat(x):
  g = purejax.checkpoint(lambda y: pjnp.sin(pjnp.sin(y)))
  return pjnp.sum(g(x) * x)


def _finite_difference(f, x, eps=1e-3):
  x = np.asarray(x, np.float64)
  grad = np.zeros_like(x)
  for i in np.ndindex(x.shape):
    d = np.zeros_like(x)
    d[i] = eps
    grad[i] = (float(f(x + d)) - float(f(x - d))) / (2 * eps)
  return grad


def test_grad_values(backend):
  x = pjnp.array([0.3, -1.2, 2.0])
  y = pjnp.array([1.5, 0.7, -0.4])
  loss = lambda f: (lambda x, y: f(x, y, 3)[0])
  want = purejax.grad(loss(_f_multi), argnums=(0, 1))(x, y)
  for got in [purejax.grad(loss(purejax.jit(_f_multi)), argnums=(0, 1))(x, y),
              purejax.jit(purejax.grad(loss(purejax.jit(_f_multi)), argnums=(0, 1)))(x, y)]:
    for g, w in zip(got, want):
      np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
  fd = _finite_difference(lambda x: np.asarray(loss(_f_multi)(pjnp.asarray(x, np.float32), y)),
                          np.asarray(x))
  np.testing.assert_allclose(np.asarray(want[0]), fd, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("fun,args", [
    (_f_nested, (np.array([0.3, -1.2], np.float32), np.array([1.5, 0.7], np.float32))),
    (_f_scan, (np.float32(0.4), np.array([0.5, -0.2, 1.1], np.float32))),
    (_f_remat, (np.array([0.3, -1.2, 2.0], np.float32),)),
])
def test_nested_values_against_finite_differences(backend, fun, args):
  argnums = tuple(range(len(args)))
  eager = purejax.grad(fun, argnums=argnums)(*args)
  jitted = purejax.grad(purejax.jit(fun), argnums=argnums)(*args)
  staged = purejax.jit(purejax.grad(purejax.jit(fun), argnums=argnums))(*args)
  for i, arg in enumerate(args):
    np.testing.assert_allclose(np.asarray(jitted[i]), np.asarray(eager[i]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(staged[i]), np.asarray(eager[i]), rtol=1e-5, atol=1e-6)
    def partial(xi, i=i):
      full = list(args)
      full[i] = np.asarray(xi, np.float32)
      return fun(*full)
    fd = _finite_difference(partial, arg)
    np.testing.assert_allclose(np.asarray(eager[i]), fd, rtol=2e-2, atol=2e-2)


def test_cond_and_vjp_values(backend):
  x = np.float32(0.7)
  for p in (True, False):
    want = purejax.grad(lambda x: _f_cond(p, x))(x)
    got = purejax.jit(purejax.grad(purejax.jit(lambda x: _f_cond(p, x))))(x)
    np.testing.assert_allclose(float(got), float(want), rtol=1e-6)
  f = purejax.jit(lambda x, y: (x * y, pjnp.sin(y)))
  out, vjp = purejax.vjp(f, 2., 3.)
  ct = vjp((1.5, -0.5))
  np.testing.assert_allclose([float(c) for c in ct], [1.5 * 3., 1.5 * 2. - 0.5 * np.cos(3.)],
                             rtol=1e-6)


def test_second_order_values(backend):
  f = purejax.jit(lambda x: pjnp.sin(x) * x)
  d2 = purejax.grad(purejax.jit(purejax.grad(f)))(0.8)
  np.testing.assert_allclose(float(d2), 2 * np.cos(0.8) - 0.8 * np.sin(0.8), rtol=1e-5)
  h = purejax.hessian(purejax.jit(lambda x: pjnp.sum(pjnp.sin(x) * x)))(pjnp.array([0.1, 0.5]))
  want = np.diag([2 * np.cos(v) - v * np.sin(v) for v in (0.1, 0.5)])
  np.testing.assert_allclose(np.asarray(h), want, rtol=1e-5, atol=1e-6)


def test_symbolic_zero_cotangent_and_integer_inputs(backend):
  f = purejax.jit(lambda x, n: (pjnp.sin(x) * n, pjnp.cos(x)))
  g = purejax.grad(lambda x: f(x, 3)[0])(0.4)
  np.testing.assert_allclose(float(g), 3 * np.cos(0.4), rtol=1e-6)
  _, vjp = purejax.vjp(lambda x: f(x, 2), 0.4)
  ct = vjp((pjnp.zeros(()), pjnp.ones(())))
  np.testing.assert_allclose(float(ct[0]), -np.sin(0.4), rtol=1e-6)


def test_eager_backward_pass_is_compiled_once():
  from purejax._src import pjit
  f = purejax.jit(lambda x, w: pjnp.sum(pjnp.tanh(x @ w)))
  g = purejax.grad(f, argnums=1)
  x, w = pjnp.ones((4, 3)), pjnp.ones((3, 2))
  g(x, w)
  closed = [k for k in pjit._transposed_jaxprs.keys()]
  sizes = {k: len(v) for k, v in pjit._executables.items()}
  for _ in range(3):
    g(x, w)
  assert {k: len(v) for k, v in pjit._executables.items()} == sizes
  assert [k for k in pjit._transposed_jaxprs.keys()] == closed
