import numpy as np
import pytest

from purejax._src.config import config


@pytest.fixture(autouse=True, scope="session")
def _type_check_every_jaxpr():
  """Every traced jaxpr goes through the type checker in the tests."""
  config.update("jax_enable_checks", True)
  yield


@pytest.fixture
def x64():
  """Runs a test with 64-bit types enabled."""
  with config.override("jax_enable_x64", True):
    yield


def oracle():
  """Real JAX, used only to compare against; skips the test when absent."""
  return pytest.importorskip("jax")


@pytest.fixture(autouse=True)
def _reseed_module_rng(request):
  """A test module's ``RNG`` restarts for every test, so that a test sees
  the same data however pytest-xdist distributes the tests."""
  rng = getattr(request.module, "RNG", None)
  if isinstance(rng, np.random.RandomState):
    rng.seed(0)


@pytest.fixture
def cpu_devices():
  """A factory: ``cpu_devices(n)`` gives the test n CPU devices (the
  ``jax_num_cpu_devices`` flag, restored afterwards) and returns them."""
  old = config.jax_num_cpu_devices

  def set_count(n):
    config.update("jax_num_cpu_devices", n)
    from purejax._src.devices import devices
    return devices()

  yield set_count
  config.update("jax_num_cpu_devices", old)


@pytest.fixture
def kernels(tmp_path, monkeypatch):
  """A fresh private kernel cache directory and an empty memory cache (the
  C backend's tests of its cache)."""
  from purejax._src.backends.cpu import toolchain
  monkeypatch.setattr(toolchain, "_libraries", {})
  d = tmp_path / "kernels"
  with config.override("purejax_cache_dir", str(d)):
    if not toolchain.compiler_available():
      pytest.skip("no C compiler")
    yield d
