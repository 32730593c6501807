"""The devices purejax runs on: one CPU device."""


class Device:
  """A device arrays live on.  purejax has exactly one, the host CPU."""
  platform = "cpu"
  device_kind = "cpu"
  process_index = 0

  def __init__(self, id=0):
    self.id = id

  def __repr__(self):
    return f"CpuDevice(id={self.id})"

  def __str__(self):
    return f"{self.platform}:{self.id}"

  def __eq__(self, other):
    return isinstance(other, Device) and other.id == self.id

  def __hash__(self):
    return hash(("cpu", self.id))


CPU = Device(0)


def devices(backend=None):
  _check_backend(backend)
  return [CPU]


local_devices = devices


def device_count(backend=None):
  return len(devices(backend))


local_device_count = device_count


def default_backend():
  return "cpu"


def process_index():
  return 0


def process_count():
  return 1


def _check_backend(backend):
  if backend not in (None, "cpu"):
    raise RuntimeError(f"Unknown backend {backend}: purejax runs only on 'cpu'")
