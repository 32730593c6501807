"""lax.fft (the fft primitive and its rules) and jnp.fft, against NumPy's
pocketfft in float64 and live JAX in float32."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax.test_util import check_grads
from conftest import oracle

RNG = np.random.RandomState(2)
REAL = RNG.randn(4, 6)
CPLX = RNG.randn(4, 6) + 1j * RNG.randn(4, 6)
HALF = RNG.randn(4, 4) + 1j * RNG.randn(4, 4)   # a half spectrum (6 // 2 + 1 = 4)
f32 = lambda x: np.asarray(x, np.complex64 if np.iscomplexobj(x) else np.float32)


def _close(a, b, tol=1e-10):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# -- lax.fft ---------------------------------------------------------------------------

@pytest.mark.parametrize("fft_type,x,lengths,ref", [
    ("fft", CPLX, (6,), lambda x: np.fft.fft(x)),
    (lax.FftType.IFFT, CPLX, (4, 6), lambda x: np.fft.ifft2(x)),
    ("RFFT", REAL, (4, 6), lambda x: np.fft.rfft2(x)),
    ("irfft", HALF, (6,), lambda x: np.fft.irfft(x, 6)),
    ("irfft", HALF, (4, 7), lambda x: np.fft.irfft2(x, (4, 7))),
])
def test_lax_fft_matches_numpy(x64, fft_type, x, lengths, ref):
  out = lax.fft(x, fft_type, lengths)
  want = ref(x)
  assert out.shape == want.shape and out.dtype == want.dtype
  _close(out, want)


def test_lax_fft_keeps_single_precision():
  assert lax.fft(f32(REAL), "fft", (6,)).dtype == np.complex64
  assert lax.fft(f32(REAL), "rfft", (6,)).dtype == np.complex64
  assert lax.fft(f32(HALF), "irfft", (6,)).dtype == np.float32
  assert lax.fft(np.arange(6, dtype=np.int32), "fft", (6,)).dtype == np.complex64
  assert lax.fft(f32(REAL), "rfft", ()).dtype == np.float32


def test_lax_fft_errors():
  x = f32(REAL)
  with pytest.raises(ValueError, match="Unknown FFT type 'bad'"):
    lax.fft(x, "bad", (6,))
  with pytest.raises(TypeError, match="Unknown FFT type value '5'"):
    lax.fft(x, 5, (6,))
  with pytest.raises(ValueError, match="minor dimensions must be equal to fft_lengths"):
    lax.fft(x, "fft", (5,))
  with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
    lax.fft(f32(CPLX), "rfft", (6,))
  with pytest.raises(ValueError, match="must be float32 or float64, got float16"):
    lax.fft(x.astype(np.float16), "rfft", (6,))
  with pytest.raises(ValueError, match="Non-hashable static arguments"):
    lax.fft(x, "fft", [6])


@pytest.mark.parametrize("fft_type,x,lengths", [
    ("fft", CPLX, (6,)), ("ifft", CPLX, (4, 6)), ("rfft", REAL, (6,)), ("rfft", REAL, (4, 6)),
    ("irfft", HALF, (6,)), ("irfft", HALF, (4, 7))])
def test_lax_fft_grads(x64, fft_type, x, lengths):
  check_grads(lambda x: lax.fft(x, fft_type, lengths), (x,), 2)


@pytest.mark.parametrize("fft_type,x,lengths", [
    ("fft", CPLX, (6,)), ("ifft", CPLX, (6,)), ("rfft", REAL, (4, 6)),
    ("irfft", HALF, (6,)), ("irfft", HALF, (4, 7))])
def test_lax_fft_vjp_matches_jax(fft_type, x, lengths):
  jax = oracle()
  x = f32(x)
  out = lax.fft(x, fft_type, lengths)
  ct = f32(RNG.randn(*out.shape) + (1j * RNG.randn(*out.shape)
                                     if np.iscomplexobj(out) else 0))
  ours = purejax.vjp(lambda x: lax.fft(x, fft_type, lengths), x)[1](ct)[0]
  jax_fft = lambda x: jax.lax.fft(x, fft_type, lengths)
  theirs = jax.jit(lambda x, ct: jax.vjp(jax_fft, x)[1](ct)[0])(x, ct)
  assert ours.dtype == theirs.dtype
  _close(ours, theirs, 1e-4)


def test_lax_fft_vmap_and_jit():
  x = f32(CPLX)
  f = lambda v: lax.fft(v, "fft", (6,))
  _close(purejax.vmap(f)(x), np.stack([f(v) for v in x]), 1e-5)
  _close(purejax.vmap(f, in_axes=1)(x.T), np.fft.fft(x), 1e-4)
  _close(purejax.vmap(lambda v: lax.fft(v, "rfft", (2, 3)))(f32(REAL).reshape(4, 2, 3)),
         np.fft.rfft2(REAL.reshape(4, 2, 3)), 1e-4)
  _close(purejax.jit(lambda v: lax.fft(v, "irfft", (4, 6)))(f32(HALF)),
         lax.fft(f32(HALF), "irfft", (4, 6)), 1e-6)


def test_lax_fft_jaxpr_matches_jax():
  jax = oracle()
  for t, x, n in [("fft", REAL, (6,)), ("rfft", REAL, (4, 6)), ("irfft", HALF, (6,))]:
    ours = purejax.make_jaxpr(lambda v: lax.fft(v, t, n))(f32(x))
    theirs = jax.make_jaxpr(lambda v: jax.lax.fft(v, t, n))(f32(x))
    assert str(ours) == str(theirs)


# -- jnp.fft -----------------------------------------------------------------------------

X3 = RNG.randn(3, 4, 5)
C3 = RNG.randn(3, 4, 5) + 1j * RNG.randn(3, 4, 5)

ND_CASES = [
    ("fft", C3, {}), ("fft", X3, dict(n=7, axis=1, norm="ortho")),
    ("ifft", C3, dict(n=3, axis=0, norm="forward")), ("rfft", X3, dict(n=4, norm="ortho")),
    ("irfft", C3, dict(axis=1)), ("irfft", C3, dict(n=9, norm="forward")),
    ("hfft", C3, dict(n=6)), ("ihfft", X3, dict(axis=0, norm="ortho")),
    ("fft2", C3, dict(s=(3, 6))), ("ifft2", C3, dict(axes=(0, 2), norm="ortho")),
    ("rfft2", X3, dict(axes=(2, 0))), ("irfft2", C3, dict(s=(5, 8), norm="forward")),
    ("fftn", C3, {}), ("ifftn", C3, dict(s=(2, 3), axes=(0, 1))),
    ("rfftn", X3, dict(axes=(1, 0))), ("irfftn", C3, dict(s=(4, 4, 4))),
    ("irfftn", C3, dict(axes=(2, 0), norm="ortho")), ("fftn", C3, dict(s=(2, 2))),
]


@pytest.mark.parametrize("name,x,kwargs", ND_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(ND_CASES)])
def test_jnp_fft_matches_numpy(x64, name, x, kwargs):
  got = getattr(jnp.fft, name)(x, **kwargs)
  if "s" in kwargs and "axes" not in kwargs:   # NumPy 2 wants explicit axes
    kwargs = dict(kwargs, axes=tuple(range(x.ndim - len(kwargs["s"]), x.ndim)))
  want = getattr(np.fft, name)(x, **kwargs)
  assert got.shape == want.shape and got.dtype == want.dtype
  _close(got, want, 1e-9)


@pytest.mark.parametrize("name,x,kwargs", ND_CASES[::2])
def test_jnp_fft_matches_jax(name, x, kwargs):
  jax = oracle()
  x = f32(x)
  ours = getattr(jnp.fft, name)(x, **kwargs)
  theirs = getattr(jax.numpy.fft, name)(x, **kwargs)
  assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
  _close(ours, theirs, 1e-4)


def test_jnp_fft_jit_vmap_grad(x64):
  f = lambda x: jnp.fft.irfft(jnp.fft.rfft(x, n=8) * jnp.arange(1, 6), n=8, norm="ortho")
  x = RNG.randn(3, 6)
  _close(purejax.jit(f)(x), f(x))
  _close(purejax.vmap(f)(x), np.stack([f(v) for v in x]))
  check_grads(f, (x,), 2)
  check_grads(lambda c: jnp.fft.fftn(c, axes=(0, 1), norm="ortho"), (C3,), 1)


def test_freqs_and_shifts(x64):
  for n, d in [(8, 1.0), (7, 0.1)]:
    _close(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d))
    _close(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d))
  assert jnp.fft.fftfreq(4, dtype=np.float32).dtype == np.float32
  for axes in [None, 1, (0, 2)]:
    _close(jnp.fft.fftshift(X3, axes), np.fft.fftshift(X3, axes))
    _close(jnp.fft.ifftshift(X3, axes), np.fft.ifftshift(X3, axes))


def test_freqs_match_jax():
  jax = oracle()
  for f in ["fftfreq", "rfftfreq"]:
    ours, theirs = getattr(jnp.fft, f)(9, 0.5), getattr(jax.numpy.fft, f)(9, 0.5)
    assert ours.dtype == theirs.dtype
    _close(ours, theirs, 1e-6)


def test_jnp_fft_errors():
  x = f32(C3)
  with pytest.raises(ValueError, match="does not support multiple axes"):
    jnp.fft.fft(x, axis=(0, 1))
  with pytest.raises(ValueError, match="only supports 2 axes"):
    jnp.fft.fft2(x, axes=(0, 1, 2))
  with pytest.raises(ValueError, match="does not support repeated axes"):
    jnp.fft.fftn(x, axes=(1, 1))
  with pytest.raises(ValueError, match="Shape and axes have different lengths"):
    jnp.fft.fftn(x, s=(2,), axes=(0, 1))
  with pytest.raises(ValueError, match="Shape should be positive"):
    jnp.fft.fft(x, n=0)
  with pytest.raises(ValueError, match="Invalid norm value"):
    jnp.fft.fft(x, norm="bad")
  with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
    jnp.fft.fft([1.0, 2.0])
