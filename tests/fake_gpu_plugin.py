"""A pytest plugin (``-p tests.fake_gpu_plugin``): the tests run with the
stand-in GPU of tests/fake_cupy.py as the default device
(JAX_PLATFORMS=cuda,cpu), so that every eager operation and jitted call
goes through the GPU backend's code paths (kernels in emulation)."""
from purejax._src.backends.cuda import gpu_runtime
from purejax._src.config import config
from tests.fake_cupy import FakeCupy

gpu_runtime.use(FakeCupy(1))
config.update("jax_platforms", "cuda,cpu")
