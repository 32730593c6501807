import pytest

from purejax._src.config import config


@pytest.fixture
def x64():
  """Runs a test with 64-bit types enabled."""
  with config.override("jax_enable_x64", True):
    yield


def oracle():
  """Real JAX, used only to compare against; skips the test when absent."""
  return pytest.importorskip("jax")
