"""Array refs (jax.new_ref) against real JAX: eager, jit, scan/fori, grad, vmap."""
import numpy as np
import pytest

import purejax as pj
import purejax.numpy as pjnp
from purejax import lax as plax


@pytest.fixture
def jax():
  return pytest.importorskip("jax")


def _both(jax, program):
  """Runs ``program(jax, jnp, lax)`` on purejax and on JAX."""
  ours = program(pj, pjnp, plax)
  theirs = program(jax, jax.numpy, jax.lax)
  return ours, theirs


def _same(a, b):
  if isinstance(a, (list, tuple)):
    assert len(a) == len(b)
    for x, y in zip(a, b):
      _same(x, y)
  elif isinstance(a, str):
    assert a == b
  else:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    assert np.asarray(a).dtype == np.asarray(b).dtype


def _ref_value(r):
  return np.asarray(r[...])


def test_eager_reads_writes_and_repr(jax):
  def program(j, jnp, lax):
    r = j.new_ref(jnp.arange(5))
    r[3] = 100
    r[1:3] += 7
    prev = j.ref.swap(r, 0, 9)
    j.ref.addupdate(r, 4, 2)
    return [repr(r), str(j.typeof(r)), r.shape, str(r.dtype), prev, j.freeze(r),
            isinstance(r, j.Ref), repr(j.new_ref(1.0))]
  ours, theirs = _both(jax, program)
  _same([str(x) for x in ours], [str(x) for x in theirs])


def test_jit_ref_argument_updated_in_place(jax):
  def program(j, jnp, lax):
    r = j.new_ref(jnp.zeros(3))
    def f(r, x):
      r[...] += x
      return r[...] * 2
    f = j.jit(f)
    out1 = f(r, jnp.ones(3))
    out2 = f(r, jnp.arange(3.))
    return [out1, out2, _ref_value(r)]
  ours, theirs = _both(jax, program)
  _same(ours, theirs)


def test_jit_closed_over_ref_and_indexed_update(jax):
  def program(j, jnp, lax):
    x_ref = j.new_ref(jnp.zeros(3))
    @j.jit
    def f():
      x_ref[1] += 1.
    f(); f()
    return _ref_value(x_ref)
  ours, theirs = _both(jax, program)
  _same(ours, theirs)


def test_make_jaxpr_prints_ref_effects(jax):
  def program(j, jnp, lax):
    def f(r, x):
      r[...] += x
      r[1] = 3.
      return r[0] * 2 + r[1:].sum()
    def g(x):
      r = j.new_ref(x)
      r[...] = r[...] + 1
      return j.freeze(r)
    r = j.new_ref(jnp.zeros(3))
    return [str(j.make_jaxpr(f)(r, jnp.ones(3))), str(j.make_jaxpr(g)(jnp.ones(3)))]
  ours, theirs = _both(jax, program)
  assert ours == theirs


def test_refs_made_inside_jit_and_grad(jax):
  def program(j, jnp, lax):
    def pure2(x):
      ref = j.new_ref(x)
      ref[...] = ref[...] + ref[...]
      return ref[...]
    def g(x):
      r = j.new_ref(0.)
      r[...] = jnp.sin(x)
      return r[...]
    return [j.jit(pure2)(3.0), j.grad(pure2)(3.0), j.grad(j.jit(pure2))(3.0),
            j.grad(g)(1.0), j.vmap(pure2)(jnp.arange(3.))]
  ours, theirs = _both(jax, program)
  _same(ours, theirs)


def test_grad_with_plumbing_ref(jax):
  def program(j, jnp, lax):
    p = j.new_ref(0.)
    def foo(x, p):
      y = x * x
      p[...] += lax.stop_gradient(y)
      return y
    g1 = j.grad(foo)(3., p)
    g2 = j.grad(j.jit(foo))(2., p)
    return [g1, g2, _ref_value(p)]
  ours, theirs = _both(jax, program)
  _same(ours, theirs)


def test_grad_writing_differentiated_value_raises():
  p = pj.new_ref(0.)
  def err(x, p):
    p[...] += x
    return x
  with pytest.raises(Exception, match="differentiated value on a non-differentiated"):
    pj.grad(err)(1., p)


def test_grad_with_respect_to_a_ref_raises_jax_error(jax):
  def program(jax, jnp, lax):
    r = jax.new_ref(jnp.ones(3))
    with pytest.raises(ValueError) as info:
      jax.grad(lambda r: r[...].sum())(r)
    return str(info.value), jax.grad(lambda x, r: (x * r[...]).sum())(2., r)
  ours, theirs = _both(jax, program)
  assert ours[0] == theirs[0] == "Expected cotangent type Ref{float32[3]} but got float32[3]"
  _same(ours[1], theirs[1])


@pytest.mark.parametrize("jit", [False, True])
def test_scan_and_fori_loop_bodies(jax, jit):
  def program(j, jnp, lax):
    r = j.new_ref(jnp.zeros(3))
    def body(i, c):
      r[i] += c
      return c + 1.
    def sbody(c, x):
      r[...] += x
      return c + x.sum(), c
    def run(xs):
      out = lax.fori_loop(0, 3, body, 1.)
      return out, lax.scan(sbody, 0., xs)
    run = j.jit(run) if jit else run
    out = run(jnp.arange(6.).reshape(2, 3))
    return [out[0], out[1][0], out[1][1], _ref_value(r)]
  ours, theirs = _both(jax, program)
  _same(ours, theirs)


def test_jit_errors(jax):
  for j, jnp in ((pj, pjnp), (jax, jax.numpy)):
    r = j.new_ref(jnp.zeros(3))
    with pytest.raises(ValueError, match="mutable array references cannot be returned"):
      j.jit(lambda r: r)(r)
    with pytest.raises(ValueError, match="mutable array references cannot be returned"):
      j.jit(lambda x: j.new_ref(x))(jnp.ones(3))
    with pytest.raises(ValueError, match="only one reference to a mutable array"):
      j.jit(lambda a, b: a[...] + b[...])(r, r)


@pytest.mark.parametrize("jit", [False, True])
def test_while_cond_and_traced_fori_bodies(jax, jit):
  def program(j, jnp, lax):
    r = j.new_ref(jnp.zeros(3))
    def fori(n):
      def body(i, c):
        r[i % 3] += c
        return c + 1.
      return lax.fori_loop(0, n, body, 1.)
    def loop(x):
      def body(s):
        r[1] += 1.
        return s + 1
      return lax.while_loop(lambda s: s < 4, body, x)
    def branch(p, x):
      def yes(x):
        r[0] = x
        return x * 2
      def no(x):
        r[2] += x
        return x
      return lax.cond(p, yes, no, x)
    wrap = j.jit if jit else (lambda f: f)
    outs = [wrap(fori)(5), _ref_value(r), wrap(loop)(0.), _ref_value(r)]
    for p in (True, False, False):
      outs += [wrap(branch)(p, 5.), _ref_value(r)]
    return outs
  ours, theirs = _both(jax, program)
  _same(ours, theirs)


def test_refs_made_inside_while_and_cond_under_grad(jax):
  def program(j, jnp, lax):
    def doubled(x):
      s = j.new_ref(x)
      lax.while_loop(lambda i: i < 3, lambda i: (s.__setitem__(..., s[...] * 2), i + 1)[1], 0)
      return s[...]
    def branch(x):
      s = j.new_ref(x)
      lax.cond(x > 0, lambda: s.__setitem__(..., jnp.sin(s[...])), lambda: None)
      return s[...]
    return [doubled(1.5), j.jit(doubled)(1.5), j.grad(branch)(0.7), j.jit(j.grad(branch))(0.7),
            j.vmap(doubled)(jnp.array([-1., 0.5]))]
  ours, theirs = _both(jax, program)
  _same(ours, theirs)


def test_make_jaxpr_of_ref_writes_in_loop_bodies(jax):
  def program(j, jnp, lax):
    r = j.new_ref(jnp.zeros(3))
    def fori(n):
      return lax.fori_loop(0, n, lambda i, c: (r.__setitem__(i, c), c + 1.)[1], 1.)
    def branch(p, x):
      def yes(x):
        r[0] = x
        return x * 2
      return lax.cond(p, yes, lambda x: x, x)
    def sc(xs):
      def b(c, x):
        r[...] = r[...] + x
        return c, r[0]
      return lax.scan(b, 0., xs)
    def g(r, x):
      j.jit(lambda r, x: r.__setitem__(..., x))(r, x)
      return x
    return [str(j.make_jaxpr(fori)(5)), str(j.make_jaxpr(branch)(True, 1.)),
            str(j.make_jaxpr(sc)(jnp.ones((2, 3)))), str(j.make_jaxpr(g)(r, jnp.ones(3)))]
  ours, theirs = _both(jax, program)
  for a, b in zip(ours, theirs):
    assert a == b
