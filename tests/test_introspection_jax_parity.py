"""Types and introspection as JAX 0.10 shows them: tracers are Arrays, an
abstract value's sharding, typed keys as pytree leaves, complex ordering,
ShapeDtypeStruct, jaxpr reprs, vjp functions as pytrees, named residuals."""
import numpy as np
import pytest

from conftest import oracle
import purejax as jax
import purejax.numpy as jnp


# -- tracers are Arrays ------------------------------------------------------

@pytest.mark.parametrize("transform", ["jit", "grad", "vmap"])
def test_tracer_is_an_array(transform):
  seen = []

  def f(x):
    seen.append(isinstance(x, jax.Array))
    return jnp.sum(x)

  getattr(jax, transform)(f)(jnp.ones(3))
  assert seen == [True]


# -- abstract values' sharding -----------------------------------------------

def _sharding_reprs(jx, jxnp):
  seen = []
  jx.jit(lambda x: seen.append(repr(jx.typeof(x).sharding)) or x)(jxnp.ones((2, 3)))
  return [repr(jx.typeof(jxnp.ones(3)).sharding), repr(jx.typeof(jxnp.float32(1)).sharding),
          repr(jx.core.ShapedArray((4, 5, 6), jxnp.float32).sharding),
          repr(jx.typeof(jx.random.key(0)).sharding)] + seen


def test_typeof_sharding_matches_jax():
  real = oracle()
  import jax.numpy as real_jnp
  assert _sharding_reprs(jax, jnp) == _sharding_reprs(real, real_jnp)


def test_typeof_sharding_is_unsplit_over_the_empty_abstract_mesh():
  s = jax.typeof(jnp.ones((2, 3))).sharding
  assert isinstance(s, jax.sharding.NamedSharding)
  assert s.mesh == jax.sharding.AbstractMesh((), ())
  assert s.mesh.empty and s.mesh.axis_names == () and s.spec == jax.P(None, None)
  assert s.memory_kind is None and s.is_fully_replicated
  with pytest.raises(ValueError, match="device_set is not implemented"):
    s.device_set


def test_abstract_mesh_as_jax():
  real = oracle()
  for jx in (jax, real):
    AT = jx.sharding.AxisType
    m = jx.sharding.AbstractMesh((2, 3), ("x", "y"), axis_types=(AT.Explicit, AT.Auto))
    assert (m.size, m.shape_tuple, m.abstract_mesh is m) == (6, (("x", 2), ("y", 3)), True)
  rm = real.sharding.AbstractMesh((2, 3), ("x", "y"))
  pm = jax.sharding.AbstractMesh((2, 3), ("x", "y"))
  assert repr(pm) == repr(rm)
  assert repr(jax.sharding.NamedSharding(pm, jax.P("x"))) == \
      repr(real.sharding.NamedSharding(rm, real.P("x")))


# -- typed keys are leaves ---------------------------------------------------

def test_typed_key_is_a_pytree_leaf():
  real = oracle()
  tree = {"k": jax.random.key(0), "a": 1}
  assert str(jax.tree.structure(tree)) == str(real.tree.structure({"k": real.random.key(0), "a": 1}))
  leaves = jax.tree.leaves(tree)
  assert len(leaves) == 2 and jax.dtypes.issubdtype(leaves[1].dtype, jax.dtypes.prng_key)
  kinds = jax.tree.map(lambda v: isinstance(v, jax.Array) and v.shape == (), tree)
  assert kinds == {"k": True, "a": False}
  keys = jax.random.split(jax.random.key(1), 3)
  out = jax.tree.map(lambda k: jax.vmap(lambda kk: jax.random.uniform(kk, (2,)))(k), [keys])
  assert out[0].shape == (3, 2)   # the key array reached the function whole


# -- complex ordering ------------------------------------------------------------

_NAN = np.nan
_CX = np.array([0j, complex(_NAN, 0), complex(1, _NAN), 1 + 0j, complex(_NAN, _NAN), 1 + 2j,
                1j, complex(0, -0.0), complex(-0.0, 1), -3j, 2 + 0j], np.complex64)
_A, _B = np.repeat(_CX, len(_CX)), np.tile(_CX, len(_CX))


def _lex(op, x, y):   # NumPy reference: by real part, ties by imaginary part
  return np.where(x.real == y.real, op(x.imag, y.imag), op(x.real, y.real))


def _same_complex(got, want):
  got, want = np.asarray(got), np.asarray(want)
  for part in (np.real, np.imag):
    g, w = part(got), part(want)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    ok = ~np.isnan(w)
    np.testing.assert_array_equal(np.signbit(g[ok]), np.signbit(w[ok]))
    np.testing.assert_array_equal(g[ok], w[ok])


@pytest.mark.parametrize("name,op", [("less", np.less), ("less_equal", np.less_equal),
                                     ("greater", np.greater),
                                     ("greater_equal", np.greater_equal)])
def test_complex_comparisons_are_lexicographic(name, op):
  fn = getattr(jnp, name)
  want = _lex(op, _A, _B)
  np.testing.assert_array_equal(fn(_A, _B), want)
  np.testing.assert_array_equal(jax.jit(fn)(_A, _B), want)


def test_complex_comparison_operators_and_jaxpr_match_jax():
  real = oracle()
  import jax.numpy as real_jnp
  np.testing.assert_array_equal(jnp.array([1 + 2j, -3j]) > 0, [True, False])
  np.testing.assert_array_equal(jnp.asarray(_A) <= _B, real_jnp.asarray(_A) <= _B)
  mine = str(jax.make_jaxpr(jnp.less)(_A, _B))
  assert mine == str(real.make_jaxpr(real_jnp.less)(_A, _B))


@pytest.mark.parametrize("name", ["lt", "le", "gt", "ge"])
def test_lax_ordering_rejects_complex_as_jax(name):
  real = oracle()
  with pytest.raises(TypeError) as want:
    getattr(real.lax, name)(_A, _B)
  with pytest.raises(TypeError) as got:
    getattr(jax.lax, name)(_A, _B)
  assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name,op", [("max", np.greater), ("min", np.less)])
def test_complex_max_min_as_xla(name, op):
  # XLA keeps x where it comes strictly first, else y (ties and NaNs: y).
  want = np.where(_lex(op, _A, _B), _A, _B)
  fn = getattr(jax.lax, name)
  _same_complex(fn(_A, _B), want)
  _same_complex(jax.jit(fn)(_A, _B), want)
  jfn = jnp.maximum if name == "max" else jnp.minimum
  _same_complex(jfn(_A, _B), want)
  _same_complex(jax.jit(jfn)(_A, _B), want)
  real = oracle()
  _same_complex(fn(_A, _B), getattr(real.lax, name)(_A, _B))


def test_complex_reductions_sort_and_errors_as_jax():
  real = oracle()
  import jax.numpy as real_jnp
  v = np.array([1 + 1j, -3j, 1 + 3j, 1 + 5j, 0j, 1 + 0j, -3 + 1j], np.complex64)
  for name in ("max", "min", "sort", "argsort"):
    want = getattr(real_jnp, name)(v)
    _same_complex(getattr(jnp, name)(v), want)
    _same_complex(jax.jit(getattr(jnp, name))(v), want)
  for name in ("argmax", "argmin"):
    with pytest.raises(TypeError) as want:
      getattr(real_jnp, name)(v)
    with pytest.raises(TypeError) as got:
      getattr(jnp, name)(v)
    assert str(got.value) == str(want.value)
  with pytest.raises(ValueError, match="Complex values have no ordering"):
    jnp.clip(v, 0, 1)
  with pytest.raises(ValueError, match="Complex values have no ordering"):
    jnp.clip(np.ones(2, np.float32), 0j, 1)


# -- ShapeDtypeStruct.like, ClosedJaxpr.literals ---------------------------------

def test_shape_dtype_struct_like_as_jax():
  real = oracle()
  for x in (np.ones((2, 3)), np.arange(4, dtype=np.int8), jnp.ones(2)):
    want = real.ShapeDtypeStruct.like(np.asarray(x))
    got = jax.ShapeDtypeStruct.like(x)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
  got = jax.ShapeDtypeStruct.like(jax.ShapeDtypeStruct((4,), jnp.int32))
  assert (got.shape, got.dtype) == ((4,), np.int32)


def test_closed_jaxpr_literals_are_its_consts():
  c = np.array([1., 2.], np.float32)
  closed = jax.make_jaxpr(lambda x: x + jnp.asarray(c))(jnp.ones(2))
  assert len(closed.literals) == 1
  np.testing.assert_array_equal(closed.literals[0], c)


# -- Var and Literal reprs ---------------------------------------------------

def _atom_reprs(jx, jxnp):
  import re
  fns = [(lambda x: jxnp.sin(x) * 2.0 + 1, jxnp.ones(2)),
         (lambda x: x + jxnp.int32(3), jxnp.ones(2, jxnp.int32)),
         (lambda x: x * True, jxnp.ones(2, bool)),
         (lambda x: x * 0.1, jxnp.ones((2, 3), jxnp.float16)),
         (lambda x: x * jxnp.bfloat16(0.1), jxnp.ones(3, jxnp.bfloat16)),
         (lambda x: x * (1 + 2j), jxnp.ones(3, jxnp.complex64)),
         (lambda x: jxnp.float32(0.1) * x, 1.0),
         (lambda k: k, jx.random.key(0))]
  out = []
  for f, x in fns:
    j = jx.make_jaxpr(f)(x).jaxpr
    atoms = list(j.invars) + [a for e in j.eqns for a in e.invars + e.outvars] + list(j.outvars)
    out.append([re.sub(r"id=\d+", "id=N", s) for a in atoms for s in (repr(a), str(a))])
    out.append([str(e) for e in j.eqns] + [repr(e) for e in j.eqns])
  return out


def test_var_and_literal_reprs_match_jax():
  real = oracle()
  import jax.numpy as real_jnp
  assert _atom_reprs(jax, jnp) == _atom_reprs(real, real_jnp)


def test_var_repr_names_its_identity():
  import re
  j = jax.make_jaxpr(lambda x: x * 2.0)(jnp.ones(2)).jaxpr
  # ids differ between variables and are the Python object's identity
  a, b = j.invars[0], j.eqns[0].outvars[0]
  assert re.fullmatch(r"Var\(id=\d+\):float32\[2\]", repr(a))
  assert repr(a) == f"Var(id={id(a)}):float32[2]" and repr(a) != repr(b)
  assert repr(j.eqns[0].invars[1]) == "Literal(2.0)"


# -- the function jax.vjp returns is a pytree of its residuals ---------------

_VJP_FUNS = [lambda m: m.sin, lambda m: (lambda x: m.sin(x) * m.cos(x)),
             lambda m: (lambda x: m.exp(x).sum()), lambda m: (lambda x: (x @ x) * x)]


@pytest.mark.parametrize("make", _VJP_FUNS)
def test_vjp_function_leaves_are_its_residuals_as_jax(make):
  real = oracle()
  import jax.numpy as real_jnp
  x = np.arange(3.0, dtype=np.float32)
  got = jax.tree.leaves(jax.vjp(make(jnp), jnp.asarray(x))[1])
  want = real.tree.leaves(real.vjp(make(real_jnp), real_jnp.asarray(x))[1])
  assert [(g.shape, g.dtype) for g in got] == [(w.shape, w.dtype) for w in want]
  for g, w in zip(got, want):
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


@pytest.mark.parametrize("make", _VJP_FUNS)
def test_linearize_function_leaves_are_its_residuals_as_jax(make):
  real = oracle()
  import jax.numpy as real_jnp
  x = np.arange(3.0, dtype=np.float32)
  out, f_jvp = jax.linearize(make(jnp), jnp.asarray(x))
  want_fn = real.linearize(make(real_jnp), real_jnp.asarray(x))[1]
  got, want = jax.tree.leaves(f_jvp), real.tree.leaves(want_fn)
  assert type(f_jvp).__name__ == type(want_fn).__name__ == "Partial"
  assert [(g.shape, g.dtype) for g in got] == [(w.shape, w.dtype) for w in want]
  for g, w in zip(got, want):
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
  t = np.linspace(-1, 1, 3).astype(np.float32)   # it still computes the JVP, also under jit
  np.testing.assert_allclose(np.asarray(jax.jit(lambda f, t: f(t))(f_jvp, t)),
                             np.asarray(want_fn(t)), rtol=1e-6)


def test_checkpoint_prints_as_jax():
  real = oracle()
  import jax.numpy as real_jnp
  texts = []
  for m, mnp in ((jax, jnp), (real, real_jnp)):
    f = lambda x: mnp.sin(x) * x
    texts.append([str(m.make_jaxpr(m.checkpoint(f, policy=p))(1.0))
                  for p in (None, m.checkpoint_policies.nothing_saveable,
                            m.checkpoint_policies.dots_saveable, lambda *a, **k: True)])
  assert texts[0] == texts[1]


@pytest.mark.parametrize("make", _VJP_FUNS)
def test_vjp_function_passes_through_jit_with_traced_residuals(make):
  f = make(jnp)
  x = jnp.arange(3.0)
  out, f_vjp = jax.vjp(f, x)
  seen = []

  def apply(fv, ct):
    seen.extend(isinstance(l, jax.core.Tracer) for l in jax.tree.leaves(fv))
    return fv(ct)

  ct = jnp.ones_like(out)
  got, = jax.jit(apply)(f_vjp, ct)
  want, = f_vjp(ct)
  assert seen and all(seen)
  np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
  # residuals replaced by others of the same type: the same function at another point
  x2 = jnp.arange(3.0) + 0.5
  f_vjp2 = jax.tree.unflatten(jax.tree.structure(f_vjp), jax.tree.leaves(jax.vjp(f, x2)[1]))
  np.testing.assert_allclose(np.asarray(jax.jit(apply)(f_vjp2, ct)[0]),
                             np.asarray(jax.vjp(f, x2)[1](ct)[0]), rtol=1e-6)


def test_vjp_function_under_vmap_and_out_of_jit():
  def make(x):
    return jax.vjp(jnp.sin, x)[1]

  xs = np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3)
  f_batched = jax.vmap(make)(jnp.asarray(xs))
  assert [l.shape for l in jax.tree.leaves(f_batched)] == [(4, 3)]
  got, = jax.vmap(lambda f, c: f(c))(f_batched, jnp.ones((4, 3)))
  np.testing.assert_allclose(np.asarray(got), np.cos(xs.astype(np.float64)), rtol=1e-6)
  f_jitted = jax.jit(make)(jnp.asarray(xs[0]))
  np.testing.assert_allclose(np.asarray(f_jitted(jnp.ones(3))[0]), np.cos(xs[0]), rtol=1e-6)
  _, f_vjp = jax.vjp(jnp.sin, jnp.asarray(xs[0]))
  rows, = jax.vmap(f_vjp)(jnp.eye(3))
  np.testing.assert_allclose(np.asarray(rows), np.diag(np.cos(xs[0])), rtol=1e-6, atol=1e-7)


# -- named residuals: checkpoint_name, policies, print_saved_residuals -------

def _real_with_ad_checkpoint():
  import importlib
  real = oracle()
  importlib.import_module("jax.ad_checkpoint")   # JAX does not import it itself
  return real


def _named_fns(jx, jxnp):
  ac = jx.ad_checkpoint

  def f(x):
    a = ac.checkpoint_name(jxnp.sin(x), "a")
    b = ac.checkpoint_name(jxnp.cos(a) * x, "b")
    c = ac.checkpoint_name(jxnp.exp(b) @ jxnp.ones((3, 3)), "c")
    return jxnp.sum(c * a * jxnp.tanh(c))

  def g(x, w):
    h = ac.checkpoint_name(jxnp.tanh(x @ w), "h")
    return jxnp.sum(ac.checkpoint_name(h * h, "sq") @ w)

  return [(f, (jxnp.linspace(0.1, 1.0, 3),)),
          (g, (jxnp.linspace(-1.0, 1.0, 6).reshape(2, 3), jxnp.linspace(0.5, 1.5, 9).reshape(3, 3)))]


def _policies(jx):
  P = jx.checkpoint_policies
  return [None, P.everything_saveable, P.nothing_saveable, P.dots_saveable,
          P.dots_with_no_batch_dims_saveable, P.save_only_these_names("a"),
          P.save_only_these_names("a", "c", "h"), P.save_any_names_but_these("b"),
          P.save_any_names_but_these("sq"), P.save_anything_except_these_names("a"),
          P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("a"))]


def _saved(jx, f, args, capsys):
  import re
  jx.ad_checkpoint.print_saved_residuals(f, *args)
  # The file part of a location differs only where the code was traced from.
  return [re.sub(r" from .*:(\d+:\d+ \()", r" from \1", line)
          for line in capsys.readouterr().out.splitlines()]


def test_print_saved_residuals_with_name_policies_matches_jax(capsys):
  real = _real_with_ad_checkpoint()
  import jax.numpy as real_jnp
  for (pf, pargs), (rf, rargs) in zip(_named_fns(jax, jnp), _named_fns(real, real_jnp)):
    for pp, rp in zip(_policies(jax), _policies(real)):
      got = _saved(jax, jax.checkpoint(pf, policy=pp), pargs, capsys)
      want = _saved(real, real.checkpoint(rf, policy=rp), rargs, capsys)
      assert sorted(got) == sorted(want), (pf.__name__, rp)


def test_print_saved_residuals_describes_arguments_constants_and_calls_as_jax(capsys):
  real = _real_with_ad_checkpoint()
  import jax.numpy as real_jnp
  C = np.arange(3.0, dtype=np.float32)

  def cases(jx, jxnp):
    def g(p, y):
      return jxnp.sum(jxnp.sin(p["w"] * y) * C) + jxnp.cos(p["b"][0])

    def h(x):
      y = jx.jit(lambda z: jx.ad_checkpoint.checkpoint_name(jxnp.sin(z), "q"))(x)
      return y * x

    return [(g, ({"w": jxnp.ones(3), "b": (jxnp.ones(()),)}, jxnp.ones(3))),
            (lambda x: jxnp.sin(x) * jxnp.asarray(C), (jxnp.ones(3),)),
            (h, (jxnp.ones(3),)), (lambda x, *a: x * a[0], (jxnp.ones(3), jxnp.ones(3))),
            (jx.checkpoint(lambda x: jxnp.sin(x) * jxnp.sin(x)), (jxnp.ones(3),))]

  for (pf, pargs), (rf, rargs) in zip(cases(jax, jnp), cases(real, real_jnp)):
    assert _saved(jax, pf, pargs, capsys) == _saved(real, rf, rargs, capsys)


def test_offload_policies_save_on_the_one_memory(capsys):
  # JAX moves offloaded residuals to host memory (f32<host>[..] output of
  # device_put); purejax has one memory, so they are saved as they are.
  real = _real_with_ad_checkpoint()
  import jax.numpy as real_jnp
  P, RP = jax.checkpoint_policies, real.checkpoint_policies
  cases = [(P.save_and_offload_only_these_names(
                names_which_can_be_saved=["a"], names_which_can_be_offloaded=["c"],
                offload_src="device", offload_dst="pinned_host"),
            RP.save_and_offload_only_these_names(
                names_which_can_be_saved=["a"], names_which_can_be_offloaded=["c"],
                offload_src="device", offload_dst="pinned_host"),
            P.save_only_these_names("a", "c")),
           (P.offload_dot_with_no_batch_dims("device", "pinned_host"),
            RP.offload_dot_with_no_batch_dims("device", "pinned_host"),
            P.dots_with_no_batch_dims_saveable)]
  (pf, pargs), = _named_fns(jax, jnp)[:1]
  (rf, rargs), = _named_fns(real, real_jnp)[:1]
  for pol, real_pol, same_as in cases:
    got = _saved(jax, jax.checkpoint(pf, policy=pol), pargs, capsys)
    want = _saved(real, real.checkpoint(rf, policy=real_pol), rargs, capsys)
    assert got == _saved(jax, jax.checkpoint(pf, policy=same_as), pargs, capsys)
    assert len(got) == len(want)
    assert {l for l in want if "<host>" not in l} <= set(got)


def test_checkpoint_name_is_an_identity_under_transforms():
  real = _real_with_ad_checkpoint()
  import jax.numpy as real_jnp
  from purejax._src import stages
  ac = jax.ad_checkpoint

  def f(x):
    return jnp.sum(ac.checkpoint_name(jnp.sin(x), "s") ** 2)

  x = jnp.linspace(0.0, 1.0, 5)
  # printed as JAX prints it; the tangent is not named
  rf = lambda x: real.ad_checkpoint.checkpoint_name(x * 2, "a")
  pf = lambda x: ac.checkpoint_name(x * 2, "a")
  assert str(jax.make_jaxpr(lambda x, t: jax.jvp(pf, (x,), (t,)))(1.0, 1.0)) == \
      str(real.make_jaxpr(lambda x, t: real.jvp(rf, (x,), (t,)))(1.0, 1.0))
  assert str(jax.make_jaxpr(jax.vmap(pf))(jnp.ones(3))) == \
      str(real.make_jaxpr(real.vmap(rf))(real_jnp.ones(3)))
  assert ac.checkpoint_name({"a": jnp.ones(2), "b": (jnp.ones(3),)}, "n")["b"][0].shape == (3,)
  want = np.sin(2 * np.asarray(x, np.float64))   # d/dx sin(x)^2 = sin(2x)
  for policy in (None, jax.checkpoint_policies.save_only_these_names("s")):
    g = jax.grad(jax.checkpoint(f, policy=policy))
    np.testing.assert_allclose(np.asarray(g(x)), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jax.jit(g)(x)), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jax.vmap(g)(x[None])[0]), want, rtol=1e-6, atol=1e-7)
  compiled = jax.jit(lambda x: ac.checkpoint_name(jnp.sin(x), "s") * 2).lower(x).compile()
  assert stages.host_steps(compiled) == []


def test_ad_checkpoint_and_policies_have_jax_names():
  real = _real_with_ad_checkpoint()
  public = lambda m: {n for n in dir(m) if not n.startswith("_")}
  assert public(real.checkpoint_policies) <= public(jax.checkpoint_policies)
  assert public(real.ad_checkpoint) <= public(jax.ad_checkpoint)
  assert repr(jax.checkpoint_policies.save_only_these_names("a")) == \
      repr(real.checkpoint_policies.save_only_these_names("a"))
