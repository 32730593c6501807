"""lax.conv_general_dilated and friends, jnp.convolve and jnp.correlate:
values against a float64 NumPy reference and the installed JAX, gradients
against JAX's and finite differences, vmap against a loop, jit against eager,
errors and printed jaxprs against JAX."""
import warnings

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.lax import convolution
from purejax.test_util import check_grads


@pytest.fixture(scope="module")
def jax():
  return pytest.importorskip("jax")


def _rand(shape, dtype=np.float32, seed=0):
  rng = np.random.RandomState(seed)
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.rand(*shape) > 0.5
  if np.issubdtype(dtype, np.integer):
    return rng.randint(-3, 4, shape).astype(dtype)
  if np.issubdtype(dtype, np.complexfloating):
    return (rng.randn(*shape) + 1j * rng.randn(*shape)).astype(dtype)
  return rng.randn(*shape).astype(dtype)


def _reference(lhs, rhs, strides, padding, lhs_dil, rhs_dil, dnums, fgc, bgc):
  """A float64 convolution, one kernel tap at a time (independent of the
  strided-view implementation under test)."""
  spec = lax.conv_dimension_numbers(lhs.shape, rhs.shape, dnums)
  x = np.transpose(lhs, spec.lhs_spec).astype(np.float64)
  w = np.transpose(rhs, spec.rhs_spec).astype(np.float64)
  if isinstance(padding, str):
    window = [(k - 1) * r + 1 for k, r in zip(w.shape[2:], rhs_dil)]
    padding = lax.padtype_to_pads(x.shape[2:], window, strides, padding)
  dilated = np.zeros(x.shape[:2] + tuple((n - 1) * d + 1 for n, d in zip(x.shape[2:], lhs_dil)))
  dilated[(slice(None),) * 2 + tuple(slice(None, None, d) for d in lhs_dil)] = x
  pos = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
  x = np.pad(dilated, [(0, 0), (0, 0)] + pos)
  x = x[(slice(None),) * 2 + tuple(slice(max(-lo, 0), n - max(-hi, 0))
                                   for n, (lo, hi) in zip(x.shape[2:], padding))]
  g = max(fgc, bgc)
  xs = np.split(x, bgc, axis=0) if bgc > 1 else np.split(x, fgc, axis=1)
  ws = np.split(w, g, axis=0)
  outs = []
  for xg, wg in zip(xs, ws):
    out_space = [max((n - ((k - 1) * r + 1)) // s + 1, 0)
                 for n, k, r, s in zip(x.shape[2:], w.shape[2:], rhs_dil, strides)]
    acc = np.zeros((xg.shape[0], wg.shape[0]) + tuple(out_space))
    for tap in np.ndindex(*w.shape[2:]):
      sl = tuple(slice(t * r, t * r + (m - 1) * s + 1, s)
                 for t, r, m, s in zip(tap, rhs_dil, out_space, strides))
      acc += np.einsum("nc...,oc->no...", xg[(slice(None),) * 2 + sl],
                       wg[(slice(None),) * 2 + tap])
    outs.append(acc)
  out = np.concatenate(outs, axis=1)
  return np.transpose(out, np.argsort(spec.out_spec))


# (lhs shape, rhs shape, strides, padding, lhs_dilation, rhs_dilation,
#  dimension_numbers, feature_group_count, batch_group_count)
CONFIGS = [
    ((2, 3, 9), (4, 3, 3), (1,), "VALID", None, None, None, 1, 1),
    ((2, 3, 9), (4, 3, 3), (2,), "SAME", None, None, None, 1, 1),
    ((1, 2, 10), (3, 2, 4), (3,), "SAME_LOWER", None, (2,), None, 1, 1),
    ((2, 2, 7), (2, 2, 3), (2,), [(1, 2)], (2,), (3,), None, 1, 1),
    ((2, 4, 6), (6, 2, 2), (1,), [(-1, 2)], None, None, None, 2, 1),
    ((4, 2, 8), (6, 2, 3), (1,), "VALID", None, None, None, 1, 2),
    ((2, 9, 2), (3, 1, 2), (1,), [(2, 1)], None, None, ("NWC", "WIO", "NCW"), 2, 1),
    ((4, 1, 8), (2, 1, 3), (1,), "SAME", None, None, None, 1, 2),
    ((2, 3, 6, 5), (4, 3, 3, 2), (1, 1), "SAME", None, None, None, 1, 1),
    ((2, 3, 7, 6), (4, 3, 3, 2), (2, 3), [(1, 0), (2, -1)], (1, 2), (2, 1), None, 1, 1),
    ((2, 6, 5, 3), (3, 2, 3, 4), (1, 2), "VALID", None, None, ("NHWC", "HWIO", "NHWC"), 1, 1),
    ((2, 5, 4, 6), (3, 2, 2, 6), (1, 1), "SAME", None, (2, 1), ("NWHC", "HWIO", "NCHW"), 3, 1),
    ((6, 5, 2, 6), (3, 3, 2, 6), (2, 1), [(1, 1), (0, 0)], None, None, ("HWCN", "HWIO", "NHWC"), 1, 3),
    ((1, 2, 4, 5, 4), (3, 2, 2, 3, 2), (1, 2, 1), "SAME", None, None, None, 1, 1),
    ((2, 4, 3, 4, 4), (2, 2, 3, 2, 2), (2, 1, 1), [(1, 1), (0, 1), (2, 0)], (1, 1, 2), None,
     ("NDHWC", "DHWIO", "NCDHW"), 2, 1),
    ((3, 4), (5, 4), (), [], None, None, None, 1, 1),
    ((2, 3, 2), (4, 3, 5), (1,), "VALID", None, None, None, 1, 1),   # empty output
]


def _cfg_id(cfg):
  lhs, rhs, strides, padding, ld, rd, dn, fgc, bgc = cfg
  return f"{lhs}x{rhs}-s{strides}-{padding}-ld{ld}-rd{rd}-{dn}-f{fgc}-b{bgc}".replace(" ", "")


def _conv_fn(module, cfg, **extra):
  _, _, strides, padding, ld, rd, dn, fgc, bgc = cfg
  return lambda x, w: module.lax.conv_general_dilated(
      x, w, strides, padding, ld, rd, dn, feature_group_count=fgc, batch_group_count=bgc,
      **extra)


def _args(cfg, dtype=np.float32):
  return _rand(cfg[0], dtype, 1), _rand(cfg[1], dtype, 2)


@pytest.mark.parametrize("cfg", CONFIGS, ids=_cfg_id)
def test_conv_matches_reference_and_jit(cfg):
  x, w = _args(cfg)
  f = _conv_fn(purejax, cfg)
  out = f(x, w)
  strides, padding, ld, rd, dn, fgc, bgc = cfg[2:]
  nsp = len(cfg[0]) - 2
  ref = _reference(x, w, strides, padding, ld or (1,) * nsp, rd or (1,) * nsp, dn, fgc, bgc)
  assert out.shape == ref.shape and out.dtype == np.float32
  np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(purejax.jit(f)(x, w), out, rtol=1e-6, atol=1e-6)


@pytest.mark.oracle
@pytest.mark.parametrize("cfg", CONFIGS, ids=_cfg_id)
def test_conv_and_grads_match_jax(jax, cfg):
  x, w = _args(cfg)

  def value_and_grads(m):
    f = _conv_fn(m, cfg)
    out, vjp = m.vjp(f, x, w)
    return out, vjp(m.numpy.cos(out))   # cotangent: anything not constant

  ours, theirs = value_and_grads(purejax), jax.jit(value_and_grads, static_argnums=0)(jax)
  a, b = ours[0], theirs[0]
  assert (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type)
  for u, v in zip(purejax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
    assert u.shape == v.shape and u.dtype == v.dtype
    np.testing.assert_allclose(u, v, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cfg", [CONFIGS[i] for i in (3, 4, 5, 6, 9, 12, 13)], ids=_cfg_id)
def test_conv_grads_finite_differences(cfg, x64):
  x, w = (a.astype(np.float64) for a in _args(cfg))
  check_grads(_conv_fn(purejax, cfg), (x, w), order=2, modes=("fwd", "rev"))


def _stacked(f, in_axes, args):
  size = next(np.shape(a)[d] for a, d in zip(args, in_axes) if d is not None)
  pick = lambda a, d, i: a if d is None else np.take(a, i, axis=d)
  return np.stack([f(*[pick(a, d, i) for a, d in zip(args, in_axes)]) for i in range(size)])


VMAP_CASES = [(CONFIGS[i], axes) for i in (1, 4, 5, 7, 10, 12)
              for axes in ((0, None), (None, 0), (1, 2))]


@pytest.mark.parametrize("cfg,in_axes", VMAP_CASES,
                         ids=[f"{_cfg_id(c)}-{a}" for c, a in VMAP_CASES])
def test_conv_vmap_matches_loop(cfg, in_axes):
  x, w = _args(cfg)
  xs = x if in_axes[0] is None else np.stack([x, 2 * x, -x], axis=in_axes[0])
  ws = w if in_axes[1] is None else np.stack([w, w[::-1] * 0.5, -w], axis=in_axes[1])
  f = _conv_fn(purejax, cfg)
  out = purejax.vmap(f, in_axes)(xs, ws)
  np.testing.assert_allclose(out, _stacked(f, in_axes, (xs, ws)), rtol=1e-5, atol=1e-5)


def test_conv_vmap_of_grad_and_zero_size_batch():
  cfg = CONFIGS[5]
  x, w = _args(cfg)
  f = _conv_fn(purejax, cfg)
  g = purejax.grad(lambda x, w: (f(x, w) ** 2).sum(), 1)
  xs = np.stack([x, -2 * x])
  np.testing.assert_allclose(purejax.vmap(g, (0, None))(xs, w),
                             _stacked(g, (0, None), (xs, w)), rtol=1e-5)
  empty = purejax.vmap(f, (0, None))(np.zeros((0,) + x.shape, np.float32), w)
  assert empty.shape == (0,) + f(x, w).shape


@pytest.mark.oracle
@pytest.mark.parametrize("dtype,preferred", [
    (np.int32, None), (np.int8, np.int32), (np.int8, np.float32), (np.bool_, None),
    (np.float16, None), ("bfloat16", None), ("bfloat16", np.float32), (np.complex64, None)])
def test_conv_dtypes_match_jax(jax, dtype, preferred):
  if dtype == "bfloat16":
    dtype = jax.numpy.bfloat16
  cfg = CONFIGS[9]
  x, w = _rand(cfg[0], dtype, 1), _rand(cfg[1], dtype, 2)
  a = _conv_fn(purejax, cfg, preferred_element_type=preferred)(x, w)
  b = _conv_fn(jax, cfg, preferred_element_type=preferred)(x, w)
  assert (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type)
  tol = 1e-2 if np.dtype(dtype).itemsize == 2 else 1e-5
  np.testing.assert_allclose(np.asarray(a, np.complex128), np.asarray(b, np.complex128),
                             rtol=tol, atol=tol)


@pytest.mark.oracle
def test_conv_grad_with_preferred_element_type_matches_jax(jax):
  cfg = CONFIGS[8]
  x, w = (a.astype(jax.numpy.bfloat16) for a in _args(cfg))
  loss = lambda m: lambda x, w: _conv_fn(m, cfg, preferred_element_type=np.float32)(
      x, w).sum()
  for a, b in zip(purejax.grad(loss(purejax), (0, 1))(x, w),
                  jax.jit(jax.grad(loss(jax), (0, 1)))(x, w)):
    assert a.dtype == b.dtype
    np.testing.assert_allclose(np.float32(a), np.float32(b), rtol=2e-2, atol=2e-2)


def _conv_call(module, lhs=(2, 4, 5, 5), rhs=(6, 4, 3, 3), dtype=np.float32, **kw):
  args = dict(window_strides=(1, 1), padding="VALID")
  args.update(kw)
  rhs_dtype = args.pop("rhs_dtype", dtype)
  return module.lax.conv_general_dilated(np.ones(lhs, dtype), np.ones(rhs, rhs_dtype), **args)


ERROR_CASES = [
    dict(rhs_dtype=np.float16),
    dict(dtype=np.int8, preferred_element_type=np.uint32),
    dict(preferred_element_type=np.float16),
    dict(preferred_element_type=np.int32),
    dict(padding="FOO"),
    dict(padding=[(1, 1)]),
    dict(padding=[1, 2]),
    dict(window_strides=(1,)),
    dict(padding="SAME", lhs_dilation=(2, 2)),
    dict(rhs_dilation=(0, 1)),
    dict(feature_group_count=2),
    dict(feature_group_count=3),
    dict(feature_group_count=0),
    dict(batch_group_count=4),
    dict(batch_group_count=2, rhs=(5, 4, 3, 3)),
    dict(feature_group_count=2, batch_group_count=2, lhs=(2, 8, 5, 5)),
    dict(rhs=(6, 4, 3, 3, 1)),
    dict(dimension_numbers=("NCHW", "OIHW")),
    dict(dimension_numbers=("NCHW", "OIHW", "NCH")),
    dict(dimension_numbers=("NCHW", "OIHW", "NCHX")),
    dict(dimension_numbers=("NCHH", "OIHW", "NCHW")),
    dict(dimension_numbers=("NCHW", "OXHW", "NCHW")),
    dict(dimension_numbers=("NCHW", 5, "NCHW")),
    dict(dimension_numbers=5),
    dict(precision="bad"),
    dict(lhs=(2, 5, 5, 5)),
]


@pytest.mark.oracle
@pytest.mark.parametrize("kw", ERROR_CASES, ids=lambda kw: str(kw).replace(" ", ""))
def test_conv_errors_match_jax(jax, kw):
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with pytest.raises(Exception) as theirs:
      _conv_call(jax, **kw)
    with pytest.raises(type(theirs.value)) as ours:
      _conv_call(purejax, **kw)
  assert str(ours.value) == str(theirs.value)


def test_conv_errors_jax_reports_when_compiling():
  # Zero strides and empty windows pass JAX's shape rule and fail in XLA.
  with pytest.raises(ValueError, match="window_strides must be positive"):
    _conv_call(purejax, window_strides=(0, 1))
  with pytest.raises(ValueError, match="positive size"):
    _conv_call(purejax, rhs=(6, 4, 0, 3))


@pytest.mark.oracle
@pytest.mark.parametrize("kw", [
    dict(padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), lhs=(1, 5, 5, 2),
         rhs=(3, 3, 2, 4)),
    dict(padding=[(1, 2), (0, 0)], window_strides=(2, 1), lhs_dilation=(1, 2),
         rhs_dilation=(2, 1), feature_group_count=2, rhs=(6, 2, 3, 3)),
    dict(precision="highest", preferred_element_type=np.float32, dtype=np.float16),
    dict(precision=("high", "fastest")),
])
def test_conv_jaxpr_matches_jax(jax, kw):
  f = lambda m: lambda: _conv_call(m, **kw)
  assert str(purejax.make_jaxpr(f(purejax))()) == str(jax.make_jaxpr(f(jax))())


@pytest.mark.oracle
def test_grad_jaxpr_matches_jax(jax):
  def f(m):
    return m.grad(lambda x, w: m.lax.conv_general_dilated(
        x, w, (2,), [(1, 2)], lhs_dilation=(2,), rhs_dilation=(3,),
        feature_group_count=2).sum(), (0, 1))
  x, w = np.ones((2, 4, 7), np.float32), np.ones((4, 2, 3), np.float32)
  ours = str(purejax.make_jaxpr(f(purejax))(x, w))
  theirs = str(jax.make_jaxpr(f(jax))(x, w))
  assert ours.count("conv_general_dilated") == theirs.count("conv_general_dilated") == 3
  key = lambda text: sorted(line.strip() for line in text.splitlines()
                            if "=" in line and "jaxpr" not in line)
  assert key(ours) == key(theirs)


@pytest.mark.oracle
@pytest.mark.parametrize("padding", ["SAME", "VALID", [(1, 2), (0, 1)]])
@pytest.mark.parametrize("strides,rhs_dilation", [((2, 2), None), ((1, 3), (2, 1))])
@pytest.mark.parametrize("transpose_kernel,consistent", [(False, False), (True, False),
                                                         (False, True)])
def test_conv_transpose_matches_jax(jax, padding, strides, rhs_dilation, transpose_kernel,
                                    consistent):
  x, w = _rand((2, 5, 4, 3), seed=1), _rand((3, 2, 3, 3), seed=2)
  f = lambda m: m.lax.conv_transpose(
      x, w, strides, padding, rhs_dilation=rhs_dilation, transpose_kernel=transpose_kernel,
      use_consistent_padding=consistent)
  a, b = f(purejax), f(jax)
  assert a.shape == b.shape and a.dtype == b.dtype
  np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.oracle
def test_shape_helpers_match_jax(jax):
  for name, args in [
      ("conv_shape_tuple", ((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), "SAME")),
      ("conv_shape_tuple", ((4, 3, 9), (4, 3, 3), (2,), [(1, -1)], 2)),
      ("conv_general_shape_tuple", ((2, 9, 8, 3), (3, 2, 3, 4), (2, 1), "VALID",
                                    ("NHWC", "HWIO", "NCHW"))),
      ("conv_transpose_shape_tuple", ((2, 9, 8, 3), (3, 2, 3, 4), (2, 3), "SAME",
                                      ("NHWC", "HWIO", "NHWC"))),
      ("conv_transpose_shape_tuple", ((2, 9, 8, 3), (3, 2, 3, 4), (2, 3), [(1, 0), (2, 1)],
                                      ("NHWC", "HWIO", "NHWC"))),
      ("conv_general_permutations", (("NHWC", "WHIO", "CWNH"),)),
      ("conv_dimension_numbers", ((1, 2, 3, 4), (1, 2, 3, 4), ("NHWC", "HWIO", "NHWC"))),
      ("conv_dimension_numbers", ((1, 2, 3), (1, 2, 3), None)),
      ("padtype_to_pads", ((9, 8, 7), (3, 4, 1), (2, 3, 1), "SAME")),
      ("padtype_to_pads", ((9, 8, 7), (3, 4, 1), (2, 3, 1), "SAME_LOWER")),
      ("padtype_to_pads", ((9, 8), (3, 4), (2, 3), "valid"))]:
    ours, theirs = getattr(lax, name)(*args), getattr(jax.lax, name)(*args)
    assert tuple(map(tuple, ours)) == tuple(map(tuple, theirs)) if name in (
        "conv_general_permutations", "conv_dimension_numbers", "padtype_to_pads") \
        else ours == theirs, name
  assert isinstance(lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None),
                    lax.ConvDimensionNumbers)


@pytest.mark.oracle
def test_conv_wrappers_match_jax(jax):
  x, w = _rand((2, 3, 7, 6), seed=1), _rand((4, 3, 2, 3), seed=2)
  for f in [lambda m: m.lax.conv(x, w, (2, 1), "SAME"),
            lambda m: m.lax.conv_with_general_padding(x, w, (1, 2), [(1, 0), (0, 2)],
                                                      (2, 1), (1, 2))]:
    np.testing.assert_allclose(f(purejax), f(jax), rtol=1e-5, atol=1e-5)


def test_conv_blocks_big_inputs(monkeypatch):
  cfg = CONFIGS[9]
  x, w = _args(cfg)
  whole = _conv_fn(purejax, cfg)(x, w)
  monkeypatch.setattr(convolution, "_BLOCK_ELEMENTS", 50)
  np.testing.assert_allclose(_conv_fn(purejax, cfg)(x, w), whole, rtol=1e-6, atol=1e-6)


# -- jnp.convolve / jnp.correlate ----------------------------------------------------------

def test_spec_example_convolve_is_a_conv():
  x, y = jnp.array([1, 2, 1]), jnp.ones(10)
  conv = lax.conv_general_dilated(x.reshape(1, 1, 3).astype(float), y.reshape(1, 1, 10),
                                  window_strides=(1,), padding=[(9, 9)])
  out = jnp.convolve(x, y)
  assert out.dtype == np.float32 and out.shape == (12,)
  np.testing.assert_array_equal(conv[0, 0], out)
  np.testing.assert_array_equal(out, np.convolve([1, 2, 1], np.ones(10)))


SIGNAL_INPUTS = [([1, 2, 3, 4, 5], [1, 2]), ([1, 2], [1, 2, 3, 4, 5]), ([3, -1, 2], [2]),
                 ([1.5, 2, -3, 0.5], [1, 0, -2, 4]), ([3 + 1j, 2, 4 - 3j], [1, 2 - 3j, 4 + 5j]),
                 ([1, 2 - 1j], [1j, 2, 3, -1])]


@pytest.mark.parametrize("op", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("a,v", SIGNAL_INPUTS)
def test_convolve_correlate_match_numpy(op, mode, a, v):
  out = getattr(jnp, op)(jnp.array(a), jnp.array(v), mode=mode)
  ref = getattr(np, op)(np.array(a), np.array(v), mode=mode)
  expected = np.complex64 if np.iscomplexobj(ref) else np.float32
  assert out.dtype == expected and out.shape == ref.shape
  np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.oracle
@pytest.mark.parametrize("op", ["convolve", "correlate"])
@pytest.mark.parametrize("dtypes,preferred", [
    ((np.int32, np.int32), None), ((np.int8, np.int16), None), ((np.int32, np.int32), np.int32),
    ((np.bool_, np.bool_), None), ((np.float16, np.float32), None),
    ((np.int8, np.int8), np.float32)])
def test_convolve_dtypes_match_jax(jax, op, dtypes, preferred):
  a, v = _rand((5,), dtypes[0], 1), _rand((3,), dtypes[1], 2)
  ours = getattr(jnp, op)(a, v, "same", preferred_element_type=preferred)
  theirs = getattr(jax.numpy, op)(a, v, "same", preferred_element_type=preferred)
  assert (ours.dtype, ours.shape, ours.weak_type) == (theirs.dtype, theirs.shape,
                                                      theirs.weak_type)
  np.testing.assert_allclose(ours, theirs, rtol=1e-3)


@pytest.mark.oracle
@pytest.mark.parametrize("args", [
    (np.ones((2, 2)), np.ones(3)), (np.ones(3), 2.0), (np.ones(0), np.ones(3)),
    (np.ones(3), np.ones(2), "other"), ([1, 2], np.ones(2))])
@pytest.mark.parametrize("op", ["convolve", "correlate"])
def test_convolve_errors_match_jax(jax, op, args):
  with pytest.raises(Exception) as theirs:
    getattr(jax.numpy, op)(*args)
  with pytest.raises(type(theirs.value)) as ours:
    getattr(jnp, op)(*args)
  assert str(ours.value) == str(theirs.value)


@pytest.mark.oracle
@pytest.mark.parametrize("op", ["convolve", "correlate"])
def test_convolve_jaxpr_matches_jax(jax, op):
  args = (np.ones(3, np.float32), np.ones(5, np.float32))
  ours = purejax.make_jaxpr(getattr(jnp, op))(*args)
  assert str(ours) == str(jax.make_jaxpr(getattr(jax.numpy, op))(*args))


@pytest.mark.parametrize("op", ["convolve", "correlate"])
def test_convolve_grad_vmap_jit(op):
  f = lambda a, v: getattr(jnp, op)(a, v, mode="full")
  a, v = _rand((6,), np.float32, 1), _rand((3,), np.float32, 2)
  # Bilinear, so wide central differences are exact up to float32 rounding.
  check_grads(f, (a, v), order=1, modes=("fwd", "rev"), eps=0.1)
  np.testing.assert_allclose(purejax.jit(f)(a, v), f(a, v), rtol=1e-6)
  vs = np.stack([v, 2 * v, -v])
  np.testing.assert_allclose(purejax.vmap(f, (None, 0))(a, vs),
                             _stacked(f, (None, 0), (a, vs)), rtol=1e-5, atol=1e-6)


# -- patches and unshared convolutions ------------------------------------------------------

PATCH_CASES = [(None, (2, 3), (1, 2), "SAME", (2, 1)),
               (("NHWC", "OIWH", "CWNH"), (2, 2), (1, 1), "VALID", None),
               (("NCHW", "HWIO", "NHWC"), (3, 1), (2, 1), [(1, 0), (0, 2)], None)]


@pytest.mark.oracle
@pytest.mark.parametrize("dn,filter_shape,strides,padding,rhs_dilation", PATCH_CASES)
def test_patches_match_jax(jax, dn, filter_shape, strides, padding, rhs_dilation):
  x = _rand((2, 3, 6, 5), seed=1)
  f = lambda m: m.lax.conv_general_dilated_patches(
      x, filter_shape, strides, padding, rhs_dilation=rhs_dilation, dimension_numbers=dn)
  a, b = f(purejax), f(jax)
  assert a.shape == b.shape and a.dtype == b.dtype
  np.testing.assert_array_equal(a, b)


def test_local_conv_with_shared_kernel_is_a_conv():
  x, w = _rand((2, 3, 7, 6), seed=1), _rand((4, 3, 2, 3), seed=2)
  conv = lax.conv_general_dilated(x, w, (2, 1), "SAME")
  oh, ow = conv.shape[2:]
  local_rhs = np.broadcast_to(w.reshape(4, -1).T, (oh, ow, 18, 4))
  local = lax.conv_general_dilated_local(x, local_rhs, (2, 1), "SAME", (2, 3),
                                         dimension_numbers=("NCHW", "HWIO", "NCHW"))
  np.testing.assert_allclose(local, conv, rtol=1e-5, atol=1e-5)


@pytest.mark.oracle
def test_local_conv_and_grads_match_jax(jax):
  lhs, rhs = _rand((2, 3, 6, 5), seed=1), _rand((5, 4, 12, 7), seed=2)
  def f(m):
    return lambda a, b: m.lax.conv_general_dilated_local(
        a, b, (1, 1), "VALID", (2, 2), dimension_numbers=("NCHW", "HWIO", "NHWC"))
  a, b = f(purejax)(lhs, rhs), f(jax)(lhs, rhs)
  assert a.shape == b.shape
  np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
  loss = lambda m: lambda x, w: (f(m)(x, w) ** 2).sum()
  for u, v in zip(purejax.grad(loss(purejax), (0, 1))(lhs, rhs),
                  jax.jit(jax.grad(loss(jax), (0, 1)))(lhs, rhs)):
    np.testing.assert_allclose(u, v, rtol=1e-4, atol=1e-4)
