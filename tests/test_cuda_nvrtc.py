"""Every kind of generated CUDA module compiles with NVRTC, the runtime
compiler CuPy uses on a GPU (``gpu_runtime.DeviceModule``), with the same
options.  NVRTC compiles without a GPU; its library comes from NVIDIA's
``nvidia-cuda-nvrtc-cu12`` wheel (the test extra, on Linux x86-64), and the
test skips without it.  NVRTC is stricter than nvcc and the emulation's
C++ compiler (no designated initializers, no system headers)."""
import ctypes
import glob
import os

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends.cpu import fusion
from purejax._src.backends.cuda import gpu_runtime, module as cuda_module
from purejax._src.config import config
from tests.tier_pair import trace


def _nvrtc():
  try:
    import nvidia.cuda_nvrtc as package
  except ImportError:
    return None
  paths = glob.glob(os.path.join(list(package.__path__)[0], "lib", "libnvrtc.so*"))
  paths = [p for p in paths if "alt" not in os.path.basename(p)]
  return ctypes.CDLL(sorted(paths)[0]) if paths else None


NVRTC = _nvrtc()
pytestmark = pytest.mark.skipif(NVRTC is None, reason="no NVRTC (nvidia-cuda-nvrtc-cu12)")


def nvrtc_compile(source):
  """(NVRTC's result code, its log) for ``source``."""
  program = ctypes.c_void_p()
  assert NVRTC.nvrtcCreateProgram(ctypes.byref(program), source.encode(), b"module.cu", 0,
                                  None, None) == 0
  options = list(gpu_runtime.NVRTC_OPTIONS) + ["-arch=compute_80"]
  result = NVRTC.nvrtcCompileProgram(program, len(options),
                                     (ctypes.c_char_p * len(options))(*[o.encode()
                                                                        for o in options]))
  size = ctypes.c_size_t()
  NVRTC.nvrtcGetProgramLogSize(program, ctypes.byref(size))
  log = ctypes.create_string_buffer(size.value)
  NVRTC.nvrtcGetProgramLog(program, log)
  NVRTC.nvrtcDestroyProgram(ctypes.byref(program))
  return result, log.value.decode(errors="replace")


def _source(f, *args):
  from purejax._src.random import key_lowering
  jaxpr, _ = trace(f, *args)
  lowered = key_lowering.lower_jaxpr(jaxpr)   # typed keys: their uint32 data, as jit runs
  return cuda_module.generate(fusion.plan_jaxpr(lowered[0] if lowered else jaxpr)).source


RNG = np.random.RandomState(0)
F32 = RNG.randn(6, 9).astype(np.float32)
PROGRAMS = {
    "float32 elementwise and reductions": (lambda x: [jnp.tanh(x) * 2 + jnp.exp(x), x.sum(0),
                                                      x.max(1), jnp.argmax(x, 1),
                                                      jax_softmax(x), lax.erf_inv(x * 0.1)],
                                           F32),
    "half floats": (lambda x: [(x * 2 + 1).sum(0), jnp.sqrt(jnp.abs(x))],
                    F32.astype(jnp.bfloat16)),
    "float16": (lambda x: [x * x - 1, x.min(0)], F32.astype(np.float16)),
    "integers and booleans": (lambda i: [(i * 7) // 3 % 5 + (i >> 1), lax.population_count(i),
                                         lax.clz(i), (i > 2).any(0), i.prod(1)],
                              RNG.randint(-9, 9, (6, 9)).astype(np.int32)),
    "small integers": (lambda i: [i * 3 + 1, i.max(0)], RNG.randint(0, 9, (6, 9)).astype(np.uint8)),
    "bit casts": (lambda x: [lax.bitcast_convert_type(x, np.int32),
                             lax.bitcast_convert_type(lax.bitcast_convert_type(x, np.uint32)
                                                      | 1, np.float32)], F32),
    "random bits": (lambda k: [purejax.random.normal(k, (64,)),   # a raw uint32 key
                               purejax.random.uniform(k, (5, 3))],
                    np.array([0, 42], np.uint32)),
    "complex64": (lambda z: [z * z - z / (z + 1), jnp.exp(z), jnp.log(z), jnp.sqrt(z),
                             jnp.sin(z) + jnp.cos(z), jnp.tanh(z), jnp.tan(z), z ** (z * 0.5),
                             jnp.expm1(z), jnp.log1p(z), jnp.exp2(z), jnp.sign(z), lax.rsqrt(z),
                             lax.logistic(z), jnp.abs(z), z.sum(0), z.prod(1), jnp.cumsum(z, 1),
                             lax.cummin(z, 0), z == z.conj(), jnp.real(z).astype(np.int32),
                             jnp.arcsin(z), jnp.arccos(z), jnp.arctan(z), jnp.arcsinh(z),
                             jnp.arccosh(z), jnp.arctanh(z)],
                  F32 + 1j * F32[::-1]),
    "complex extrema": (lambda z: [z.max(1), (z * 2).min(0)], (F32 - 1j * F32).astype(np.complex64)),
    "dynamic slices": (lambda x: [lax.dynamic_slice(x, (x[0, 0].astype(np.int32), 2), (2, 3)),
                                  lax.dynamic_update_slice(x, x[:2, :2] * 2,
                                                           (x[1, 1].astype(np.uint8),
                                                            np.uint8(4)))],
                       F32),
    "tridiagonal solve": (lambda x: [lax.linalg.tridiagonal_solve(x[0], x[1], x[2], x[3:].T)],
                          F32),
    "scatters": (lambda x: [x.at[jnp.array([1, 1, 7])].add(1.0),
                            x.at[jnp.array([0, 3])].max(x[:2] * 2, mode="drop"),
                            x.astype(jnp.bfloat16).at[jnp.array([2])].mul(3.0),
                            (x + 1j * x).astype(np.complex64).at[jnp.array([4, 4])].min(1j)],
                 F32),
    "cumulative reductions": (lambda x: [lax.cumsum(x, 1, reverse=True), lax.cumlogsumexp(x, 0),
                                         lax.cummax(x.astype(jnp.bfloat16), 1),
                                         lax.cumprod(x.astype(np.int8), 0),
                                         lax.cumsum(jnp.tile(x, (1, 8000)), 1)], F32),
}


def jax_softmax(x):
  return purejax.nn.softmax(x, axis=-1)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_generated_modules_compile_with_nvrtc(name):
  f, x = PROGRAMS[name]
  result, log = nvrtc_compile(_source(f, x))
  assert result == 0, log[-3000:]


def test_linear_algebra_kernel_compiles_with_nvrtc():
  """The LU pivots' permutation kernel (cuda/solver.py)."""
  from purejax._src.backends.cuda import solver
  result, log = nvrtc_compile(solver.pivots_source(3, 4, 5))
  assert result == 0, log[-3000:]


def test_float64_modules_compile_with_nvrtc():
  with config.override("jax_enable_x64", True):
    x = F32.astype(np.float64)
    source = _source(lambda x: [lax.erf_inv(x * 0.1), jnp.exp(x).sum(0),
                                lax.bitcast_convert_type(x, np.int64), x.astype(np.int64) * 3],
                     x)
  result, log = nvrtc_compile(source)
  assert result == 0, log[-3000:]


def test_complex128_modules_compile_with_nvrtc():
  with config.override("jax_enable_x64", True):
    z = (F32 + 1j * F32[::-1]).astype(np.complex128)
    source = _source(lambda z: [z * z / (z - 1), jnp.exp(z) ** z, jnp.log(z).sum(0),
                                jnp.tan(z), jnp.cumprod(z, 1), z.astype(np.complex64),
                                jnp.sqrt(z).max(1), jnp.arcsin(z), jnp.arccos(z),
                                jnp.arctan(z), jnp.arcsinh(z), jnp.arccosh(z),
                                jnp.arctanh(z)], z)
  assert "pj_c128" in source
  result, log = nvrtc_compile(source)
  assert result == 0, log[-3000:]
