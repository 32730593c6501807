"""Convolutions compiled by the C backend (im2col + BLAS, backends/cpu/conv.py)
in every case the primitive has: strides, padding, input and kernel dilation,
feature and batch groups, 1-D to 3-D, float32 and float64, and the gradients
that use them.  Each jitted function is compiled before its first call, its
fusion plan must have no conv host step, and its values must match a float64
NumPy reference and JAX; the bits must not depend on the thread count."""
import numpy as np
import pytest

import purejax
from purejax import lax
from purejax._src import pjit
from purejax._src.backends.cpu import conv, toolchain
from purejax._src.config import config
from tests.test_lax_conv import CONFIGS, _cfg_id, _conv_fn, _rand, _reference

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(),
                                reason="no C compiler")

NONEMPTY = [c for c in CONFIGS if c[1] != (4, 3, 5)]


@pytest.fixture(autouse=True)
def _compiled():
  with config.override("purejax_backend", "cpu"), \
       config.override("purejax_compile_sync", True):
    yield


def _executable(f, *args, num_threads=None):
  closed = purejax.jit(f).trace(*args).jaxpr
  return pjit.executable_for(closed, num_threads=num_threads)


def _host_steps(exe):
  return [s.eqn.primitive.name for s in exe.plan.steps if type(s).__name__ == "HostStep"]


def _check_compiled(f, *args):
  exe = _executable(f, *args)
  assert hasattr(exe, "plan"), "the C backend did not compile the program"
  assert "conv_general_dilated" not in _host_steps(exe)
  assert any(type(s).__name__ == "NativeStep" and s.eqn.primitive.name ==
             "conv_general_dilated" for s in exe.plan.steps)


def _ref(cfg, x, w):
  strides, padding, ld, rd, dn, fgc, bgc = cfg[2:]
  nsp = len(cfg[0]) - 2
  return _reference(x, w, strides, padding, ld or (1,) * nsp, rd or (1,) * nsp, dn, fgc, bgc)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cfg", NONEMPTY, ids=_cfg_id)
def test_compiled_conv_matches_reference(cfg, dtype, x64):
  x, w = _rand(cfg[0], dtype, 1), _rand(cfg[1], dtype, 2)
  f = _conv_fn(purejax, cfg)
  _check_compiled(f, x, w)
  out = purejax.jit(f)(x, w)
  ref = _ref(cfg, x.astype(np.float64), w.astype(np.float64))
  assert out.dtype == dtype and out.shape == ref.shape
  tol = 1e-5 if dtype == np.float32 else 1e-12
  np.testing.assert_allclose(out, ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("cfg", NONEMPTY, ids=_cfg_id)
def test_compiled_conv_grads_have_no_host_step(cfg):
  x, w = _rand(cfg[0], np.float32, 1), _rand(cfg[1], np.float32, 2)
  f = _conv_fn(purejax, cfg)

  def grads(x, w):
    out, vjp = purejax.vjp(f, x, w)
    return vjp(purejax.numpy.cos(out))

  exe = _executable(grads, x, w)
  assert "conv_general_dilated" not in _host_steps(exe)
  gx, gw = purejax.jit(grads)(x, w)
  # The gradients against float64 ones computed the same way on NumPy.
  with config.override("purejax_backend", "numpy"):
    rx, rw = purejax.jit(grads)(x.astype(np.float64), w.astype(np.float64))
  np.testing.assert_allclose(gx, rx, rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(gw, rw, rtol=1e-4, atol=1e-4)


@pytest.mark.oracle
@pytest.mark.parametrize("cfg", NONEMPTY, ids=_cfg_id)
def test_compiled_conv_and_grads_match_jax(cfg):
  jax = pytest.importorskip("jax")
  x, w = _rand(cfg[0], np.float32, 1), _rand(cfg[1], np.float32, 2)

  def value_and_grads(m):
    out, vjp = m.vjp(_conv_fn(m, cfg), x, w)
    return out, vjp(m.numpy.sin(out))

  ours = purejax.jit(value_and_grads, static_argnums=0)(purejax)
  theirs = jax.jit(value_and_grads, static_argnums=0)(jax)
  for u, v in zip(purejax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
    assert u.shape == v.shape and u.dtype == v.dtype
    np.testing.assert_allclose(u, v, rtol=1e-4, atol=1e-4)


def _net_in(m):
  """A conv net in module ``m`` (purejax or jax): a stride-2 conv, a grouped
  conv, a dilated conv, NHWC/HWIO."""
  def net(params, x):
    dn = ("NHWC", "HWIO", "NHWC")
    h = m.lax.conv_general_dilated(x, params[0], (2, 2), "SAME", dimension_numbers=dn)
    h = m.nn.relu(h)
    h = m.lax.conv_general_dilated(h, params[1], (1, 1), "SAME", dimension_numbers=dn,
                                   feature_group_count=4)
    h = m.nn.relu(h)
    h = m.lax.conv_general_dilated(h, params[2], (1, 1), [(2, 2), (2, 2)],
                                   rhs_dilation=(2, 2), dimension_numbers=dn)
    return m.numpy.mean(h ** 2)
  return net


_net = _net_in(purejax)


def _net_args(dtype=np.float32, batch=8, size=16):
  rng = np.random.RandomState(3)
  params = [(0.2 * rng.randn(*s)).astype(dtype)
            for s in [(3, 3, 8, 16), (3, 3, 4, 16), (3, 3, 16, 16)]]
  return params, rng.randn(batch, size, size, 8).astype(dtype)


@pytest.mark.oracle
def test_net_training_step_compiled_and_matches_jax():
  jax = pytest.importorskip("jax")
  params, x = _net_args()
  step = purejax.value_and_grad(_net)
  assert "conv_general_dilated" not in _host_steps(_executable(step, params, x))
  loss, grads = purejax.jit(step)(params, x)
  # The same net in JAX: _net written against the module it is given.
  jloss, jgrads = jax.jit(jax.value_and_grad(_net_in(jax)))(params, x)
  np.testing.assert_allclose(loss, jloss, rtol=1e-5)
  for g, jg in zip(grads, jgrads):
    np.testing.assert_allclose(g, jg, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("block_bytes", [conv._BLOCK_BYTES, 1 << 12])
def test_bits_do_not_depend_on_thread_count(monkeypatch, block_bytes):
  # Small blocks: many blocks, whole blocks per thread for the kernel's
  # gradient (few tiles, a long contraction).
  monkeypatch.setattr(conv, "_BLOCK_BYTES", block_bytes)
  params, x = _net_args(batch=16, size=32)
  step = purejax.jit(purejax.value_and_grad(_net)).trace(params, x).jaxpr
  args = [np.asarray(a) for a in purejax.tree_util.tree_leaves((params, x))]
  results = []
  for threads in (1, 2, 4):
    exe = pjit.executable_for(step, num_threads=threads)
    assert "conv_general_dilated" not in _host_steps(exe)
    results.append([np.asarray(r) for r in exe(*args)])
  for other in results[1:]:
    for a, b in zip(results[0], other):
      assert a.tobytes() == b.tobytes()
  # Same values as the NumPy backend's float64 run.
  with config.override("purejax_backend", "numpy"):
    ref = pjit.executable_for(purejax.jit(purejax.value_and_grad(_net)).trace(
        [p.astype(np.float64) for p in params], x.astype(np.float64)).jaxpr)(
            *[a.astype(np.float64) for a in args])
  for a, r in zip(results[0], ref):
    np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-5)


def test_by_block_mode_is_used_for_kernel_gradients(monkeypatch):
  """The weight gradient (a small output, a long contraction) runs whole
  blocks per thread; same bits as one thread sharing each block."""
  monkeypatch.setattr(conv, "_BLOCK_BYTES", 1 << 14)
  x = _rand((8, 16, 16, 32), np.float32, 1)
  ct = _rand((8, 16, 16, 32), np.float32, 2)

  w = np.zeros((3, 3, 32, 32), np.float32)

  def wgrad(x, ct, w):
    f = lambda w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                           dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return purejax.vjp(f, w)[1](ct)[0]

  closed = purejax.jit(wgrad).trace(x, ct, w).jaxpr
  one = pjit.executable_for(closed, num_threads=1)
  two = pjit.executable_for(closed, num_threads=2)
  assert "omp_get_thread_num" in two.source and "omp_get_thread_num" not in one.source
  a, b = one(x, ct, w)[0], two(x, ct, w)[0]
  assert a.tobytes() == b.tobytes()
  ref = np.einsum("nhwc,nhwo->co", x.astype(np.float64), ct.astype(np.float64))
  np.testing.assert_allclose(a[1, 1], ref, rtol=1e-4, atol=1e-3)


SOME = NONEMPTY[::3]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
@pytest.mark.parametrize("cfg", SOME, ids=_cfg_id)
def test_complex_conv_compiles_without_conjugation(cfg, dtype, x64):
  re_x, im_x = _rand(cfg[0], np.float64, 1), _rand(cfg[0], np.float64, 3)
  re_w, im_w = _rand(cfg[1], np.float64, 2), _rand(cfg[1], np.float64, 4)
  x, w = (re_x + 1j * im_x).astype(dtype), (re_w + 1j * im_w).astype(dtype)
  f = _conv_fn(purejax, cfg)
  _check_compiled(f, x, w)
  out = np.asarray(purejax.jit(f)(x, w))
  # The convolution is bilinear: (a + ib) * (c + id) = ac - bd + i(ad + bc).
  ref = (_ref(cfg, re_x, re_w) - _ref(cfg, im_x, im_w)
         + 1j * (_ref(cfg, re_x, im_w) + _ref(cfg, im_x, re_w)))
  assert out.dtype == dtype
  tol = 1e-5 if dtype == np.complex64 else 1e-12
  np.testing.assert_allclose(out, ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("cfg", SOME, ids=_cfg_id)
def test_half_conv_is_a_float32_conv_rounded_once(cfg, dtype):
  dtype = purejax.numpy.dtype(dtype)
  x, w = _rand(cfg[0], np.float32, 1).astype(dtype), _rand(cfg[1], np.float32, 2).astype(dtype)
  f = _conv_fn(purejax, cfg)
  exe = _executable(f, x, w)
  assert _host_steps(exe) == []
  out = np.asarray(purejax.jit(f)(x, w))
  ref = _ref(cfg, x.astype(np.float64), w.astype(np.float64))
  assert out.dtype == dtype
  # Within one rounding of the half type (plus float32's accumulation).
  eps = float(purejax.numpy.finfo(dtype).eps)
  np.testing.assert_allclose(out.astype(np.float64), ref, rtol=eps, atol=eps)


@pytest.mark.oracle
def test_half_and_complex_convs_match_jax():
  real_jax = pytest.importorskip("jax")
  cfg = SOME[1]
  for dtype in ("bfloat16", "float16", "complex64"):
    dtype = purejax.numpy.dtype(dtype)
    x, w = _rand(cfg[0], np.float32, 1), _rand(cfg[1], np.float32, 2)
    if dtype.kind == "c":
      x, w = x + 1j * x[::-1], w - 0.5j * w
    x, w = x.astype(dtype), w.astype(dtype)
    got = np.asarray(purejax.jit(_conv_fn(purejax, cfg))(x, w))
    want = np.asarray(real_jax.jit(_conv_fn(real_jax, cfg))(x, w))
    if dtype.kind == "c":
      np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:   # one float32 convolution rounded once: JAX's bits
      np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
