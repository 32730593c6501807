"""``jax.experimental.array_serialization.serialization``: the interface of
asynchronous array checkpointing (``GlobalAsyncCheckpointManagerBase``,
which libraries such as orbax test against).  JAX's TensorStore
implementation (``GlobalAsyncCheckpointManager``, ``async_serialize``,
``async_deserialize``, ...) is not in purejax: use orbax.checkpoint, which
writes purejax Arrays with TensorStore itself."""
import abc


class GlobalAsyncCheckpointManagerBase(abc.ABC):
  """Interface of a manager that writes arrays in the background: one
  checkpoint is being committed while training goes on, and the next one
  waits for it."""

  @abc.abstractmethod
  def check_for_errors(self):
    """Raises an error of the background writing, without waiting."""

  @abc.abstractmethod
  def wait_until_finished(self):
    """Blocks until the writing has finished."""

  @abc.abstractmethod
  def serialize(self, arrays, tensorstore_specs, *, on_commit_callback):
    """Writes ``arrays`` to TensorStore."""

  @abc.abstractmethod
  def deserialize(self, shardings, tensorstore_specs, global_shapes=None, dtypes=None):
    """Reads arrays laid out by ``shardings`` from TensorStore."""


def __getattr__(name):
  if name.startswith("__"):
    raise AttributeError(name)
  raise AttributeError(
      f"module {__name__!r} has no attribute {name!r}: purejax has only the interface "
      "GlobalAsyncCheckpointManagerBase, not JAX's TensorStore implementation (use "
      "orbax.checkpoint to save and restore arrays)")
