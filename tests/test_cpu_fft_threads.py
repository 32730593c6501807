"""FFTs are one call of SciPy's multi-threaded pocketfft (``workers=`` from
purejax_num_threads), eagerly and as a jitted function's host step: values
against NumPy in float64 and against JAX (single precision for complex64,
as XLA computes it), the same bits for any thread count, and no NumPy FFT
on the way."""
import numpy as np
import pytest
import scipy.fft

import purejax
import purejax.numpy as jnp
from purejax._src import pjit
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

# (name, input kind, kwargs): the jnp.fft functions over lax.fft's four types.
CASES = [
    ("fft", "complex", {}), ("ifft", "complex", {}), ("rfft", "real", {}),
    ("irfft", "complex", {"n": 14}), ("fftn", "complex", {}), ("ifftn", "complex", {}),
    ("rfftn", "real", {}), ("irfftn", "complex", {"s": (6, 14), "axes": (1, 2)}), ("fft2", "real", {}),
    ("rfft2", "real", {}), ("fft", "real", {"axis": 0}),
]
SHAPE = (3, 6, 14)


def _input(kind, dtype, shape=SHAPE, seed=0):
  rng = np.random.RandomState(seed)
  x = rng.randn(*shape)
  if kind == "complex":
    x = x + 1j * rng.randn(*shape)
  return x.astype(dtype)


def _dtypes(kind):
  return ([np.complex64, np.complex128] if kind == "complex" else [np.float32, np.float64])


def _case_ids(case):
  return f"{case[0]}-{case[1]}-{'-'.join(map(str, case[2].values()))}"


def _params():
  return [(c, d) for c in CASES for d in _dtypes(c[1])]


def _rel_error(got, ref):
  return np.max(np.abs(got - ref)) / np.max(np.abs(ref))


@pytest.mark.parametrize("case,dtype", _params(), ids=lambda v: getattr(v, "__name__", None)
                         or (_case_ids(v) if isinstance(v, tuple) else str(v)))
def test_values_and_dtypes_against_numpy_float64(case, dtype, x64):
  name, kind, kw = case
  x = _input(kind, dtype)
  got = getattr(jnp.fft, name)(x, **kw)
  ref = getattr(np.fft, name)(x.astype(np.complex128 if kind == "complex" else np.float64),
                              **kw)
  single = np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64))
  assert got.shape == ref.shape
  expected = {("c", True): np.complex64, ("c", False): np.complex128,
              ("f", True): np.float32, ("f", False): np.float64}[ref.dtype.kind, single]
  assert got.dtype == expected
  assert _rel_error(np.asarray(got), ref) < (1e-6 if single else 1e-14)
  # jit (a compiled host step) gives the eager bits.
  assert np.asarray(purejax.jit(lambda x: getattr(jnp.fft, name)(x, **kw))(x)).tobytes() \
      == np.asarray(got).tobytes()


@pytest.mark.oracle
@pytest.mark.parametrize("case", CASES, ids=_case_ids)
@pytest.mark.parametrize("single", [True, False])
def test_matches_jax_in_dtype_and_accuracy(case, single, x64):
  """Single precision stays single precision, as in XLA: its error against
  a float64 reference is JAX's, within a small factor."""
  jax = pytest.importorskip("jax")
  name, kind, kw = case
  dtype = _dtypes(kind)[0 if single else 1]
  x = _input(kind, dtype, (4, 32, 48))
  sizes = {"n": lambda n: 2 * n + 20, "s": lambda s: tuple(2 * n + 4 for n in s)}
  kw = {k: sizes.get(k, lambda v: v)(v) for k, v in kw.items()}
  ref = getattr(np.fft, name)(x.astype(np.complex128 if kind == "complex" else np.float64),
                              **kw)
  with jax.enable_x64(True):
    theirs = getattr(jax.numpy.fft, name)(x, **kw)
  ours = purejax.jit(lambda x: getattr(jnp.fft, name)(x, **kw))(x)
  assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
  ours_err, their_err = _rel_error(np.asarray(ours), ref), _rel_error(np.asarray(theirs), ref)
  assert ours_err <= 4 * their_err + (1e-7 if single else 1e-15)
  if single:   # single precision: not the float64 answer rounded
    assert ours_err > 1e-8


def _spy(monkeypatch):
  """Records the ``workers`` of every scipy.fft call; NumPy's FFT fails."""
  seen = []
  for fname in ("fftn", "ifftn", "rfftn", "irfftn"):
    real = getattr(scipy.fft, fname)

    def spy(*args, _real=real, **kw):
      seen.append(kw.get("workers"))
      return _real(*args, **kw)

    monkeypatch.setattr(scipy.fft, fname, spy)

    def refuse(*args, **kw):
      raise AssertionError("NumPy's FFT was called")

    monkeypatch.setattr(np.fft, fname, refuse)
  return seen


def _fft_program(x, y):
  z = jnp.sin(x) + 1j * y
  a = jnp.fft.fft(z * 2.0, axis=-1)
  b = jnp.fft.irfft(jnp.fft.rfft2(x + 1.0), n=x.shape[-1])
  return jnp.abs(jnp.fft.ifft(a)) + b * 0.5, jnp.fft.fftn(z)


@pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bits_do_not_depend_on_thread_count(monkeypatch, dtype, x64):
  seen = _spy(monkeypatch)
  x, y = _input("real", dtype, (64, 256), 1), _input("real", dtype, (64, 256), 2)
  results = []
  for threads in (1, 2, 4):
    with config.override("purejax_num_threads", threads), \
         config.override("purejax_compile_sync", True):
      seen.clear()
      jf = purejax.jit(_fft_program)
      out = jf(x, y)
      exe = pjit.executable_for(jf.trace(x, y).jaxpr)
      assert hasattr(exe, "plan"), "the C backend did not compile the program"
      hosts = [s.eqn.primitive.name for s in exe.plan.steps
               if type(s).__name__ == "HostStep"]
      assert "fft" in hosts   # one library call between the kernels
      assert seen and set(seen) == {threads}
      eager = _fft_program(x, y)
      results.append([np.asarray(o).tobytes() for o in out + eager])
  assert results[0] == results[1] == results[2]


def test_all_cores_when_num_threads_is_zero(monkeypatch):
  from purejax._src.config import thread_count
  seen = _spy(monkeypatch)
  with config.override("purejax_num_threads", 0):
    jnp.fft.fft(np.ones(8, np.complex64))
  assert seen == [thread_count(0)] and thread_count(0) >= 1


def test_grad_through_fft_matches_numpy_float64(x64):
  x = _input("real", np.float64, (5, 12))

  def f(x):
    return jnp.sum(jnp.abs(jnp.fft.rfft(x * x)) ** 2)

  g = purejax.jit(purejax.grad(f))(x)
  # With F the half-spectrum DFT matrix: d/dy |F y|^2 = 2 Re(F^H F y), y = x^2.
  n = x.shape[-1]
  dft = np.exp(-2j * np.pi * np.outer(np.arange(n // 2 + 1), np.arange(n)) / n)
  dy = 2 * np.real((x * x) @ dft.T @ dft.conj())
  np.testing.assert_allclose(g, dy * 2 * x, rtol=1e-10, atol=1e-10)
