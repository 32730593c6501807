"""Configuration flags, with JAX's names.

A flag is read as ``config.jax_enable_x64`` (or ``config.read(name)``), set
with ``config.update(name, value)``, and temporarily with the context manager
returned by the flag's name in ``purejax`` (e.g. ``purejax.enable_x64``) or
``config.override(name, value)``.  Defaults come from environment variables
with JAX's names (``JAX_ENABLE_X64=1``).
"""
import contextlib
import os

_TRUE = ("1", "true", "t", "yes", "y", "on")
_FALSE = ("0", "false", "f", "no", "n", "off", "")


def _parse_bool(name, text):
  lowered = text.strip().lower()
  if lowered in _TRUE:
    return True
  if lowered in _FALSE:
    return False
  raise ValueError(f"invalid truth value {text!r} for environment variable {name}")


class _Flag:
  __slots__ = ("name", "default", "kind", "help", "choices", "validator")

  def __init__(self, name, default, kind, help, choices=None, validator=None):
    self.name, self.default, self.kind, self.help = name, default, kind, help
    self.choices = choices
    self.validator = validator   # value -> value, or raises (after ``check``)

  def parse_env(self):
    text = os.environ.get(self.name.upper())
    if text is None:
      return self.default
    if self.kind is bool:
      return _parse_bool(self.name.upper(), text)
    if self.kind in (int, float):
      return self.kind(text)
    return text

  def check(self, value):
    if self.kind is bool:
      if not isinstance(value, (bool, int)):
        raise ValueError(f"{self.name} must be a bool, got {value!r}")
      return bool(value)
    if self.kind in (int, float):
      return self.kind(value)
    if self.choices is not None and value not in self.choices:
      if value is None and self.default is None:
        return value
      if self.name == "jax_numpy_dtype_promotion":   # an Enum-typed flag in JAX
        if isinstance(value, str):
          raise ValueError(f"{value!r} is not a valid NumpyDtypePromotion")
        raise TypeError("new enum value must be an instance of <enum 'NumpyDtypePromotion'>, "
                        f"got {value} of type {type(value)}.")
      # JAX's enum-flag message
      allowed = ("None or in " if self.default is None else "in ") + str(list(self.choices))
      raise ValueError(f"new enum value must be {allowed}, got {value} of type "
                       f"{type(value)}.")
    return value


class Config:
  """Holds every flag's current value; flags are also readable as attributes."""

  def __init__(self):
    object.__setattr__(self, "_flags", {})
    object.__setattr__(self, "_values", {})
    object.__setattr__(self, "_watchers", [])

  def define(self, name, default, kind=bool, help="", choices=None, validator=None):
    flag = _Flag(name, default, kind, help, choices, validator)
    self._flags[name] = flag
    self._values[name] = flag.check(flag.parse_env()) if kind is bool else flag.parse_env()
    self._changed()
    return name

  def _changed(self):
    object.__setattr__(self, "_trace_state", None)
    object.__setattr__(self, "_backend_key", None)

  def add_watcher(self, callback):
    """``callback()`` runs after any flag changes (used to clear caches)."""
    self._watchers.append(callback)

  def __getattr__(self, name):
    try:
      return self._values[name]
    except KeyError:
      raise AttributeError(f"Unrecognized config option: {name}") from None

  def __setattr__(self, name, value):
    raise AttributeError("use config.update(name, value) to change a flag")

  def read(self, name):
    return getattr(self, name)

  def update(self, name, value):
    if name not in self._flags:
      raise AttributeError(f"Unrecognized config option: {name}")
    flag = self._flags[name]
    value = flag.check(value)
    if flag.validator is not None:
      value = flag.validator(value)
    self._values[name] = value
    self._changed()
    for callback in self._watchers:
      callback()

  @contextlib.contextmanager
  def override(self, name, value):
    old = self.read(name)
    self.update(name, value)
    try:
      yield
    finally:
      self.update(name, old)

  def values(self):
    return dict(self._values)

  def backend_key(self):
    """(backend, thread count): what a compiled executable depends on
    (cached: read on every jit call)."""
    key = self.__dict__.get("_backend_key")
    if key is None:
      v = self._values
      key = (v["purejax_backend"], v["purejax_num_threads"] if v["purejax_backend"] == "cpu"
             else None)
      object.__setattr__(self, "_backend_key", key)
    return key

  def trace_state(self):
    """The flags that change what tracing produces (part of jit's cache key)."""
    state = self.__dict__.get("_trace_state")
    if state is None:
      state = self._compute_trace_state()
      object.__setattr__(self, "_trace_state", state)
    return state

  def _compute_trace_state(self):
    v = self._values
    return (v["jax_enable_x64"], v["jax_numpy_rank_promotion"],
            v["jax_numpy_dtype_promotion"], v["jax_default_matmul_precision"],
            v["jax_threefry_partitionable"], v["jax_debug_nans"], v["jax_debug_infs"],
            v["jax_high_dynamic_range_gumbel"], v["jax_softmax_custom_jvp"],
            v["jax_random_seed_offset"])

  # absl integration is not supported; these exist so that code written for
  # JAX that calls them keeps running.
  def config_with_absl(self):
    pass

  def parse_flags_with_absl(self):
    pass


config = Config()
config.define("jax_enable_x64", False, help="Enable 64-bit types.")
config.define("jax_debug_nans", False, help="Raise on NaN results.")
config.define("jax_debug_infs", False, help="Raise on Inf results.")
config.define("jax_disable_jit", False, help="Run jitted functions eagerly.")
config.define("jax_enable_checks", False, help="Type-check jaxprs after each transformation.")
config.define("jax_threefry_partitionable", True, help="Partitionable threefry PRNG.")
config.define("jax_numpy_rank_promotion", "allow", kind=str,
              choices=("allow", "warn", "raise"), help="Implicit rank promotion.")
config.define("jax_numpy_dtype_promotion", "standard", kind=str,
              choices=("standard", "strict"), help="Dtype promotion mode.")
config.define("jax_default_matmul_precision", None, kind=str, help="Matmul precision.",
              choices=("default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
                       "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
                       "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32",
                       "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3",
                       "BF16_BF16_F32_X6", "BF16_BF16_F32_X9", "TF32_TF32_F32",
                       "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64"))
config.define("jax_high_dynamic_range_gumbel", False,
              help="gumbel draws two samples per value by default.")
config.define("jax_softmax_custom_jvp", False,
              help="softmax uses a custom JVP instead of stop_gradient of its max.")
config.define("jax_default_prng_impl", "threefry2x32", kind=str, help="Default PRNG.")
config.define("jax_platforms", None, kind=str, help="Platforms to use.")
config.define("jax_platform_name", None, kind=str, help="Platform to use.")
config.define("jax_log_compiles", False, help="Log each compilation.")
config.define("jax_check_tracer_leaks", False, help="Check for leaked tracers.")
config.define("jax_traceback_filtering", "auto", kind=str, help="Traceback filtering.")
# The compiler backend for jit (PUREJAX_BACKEND=cpu|numpy, ...).
# cuda_emulation (internal, for tests): the GPU backend's kernels run on the CPU.
config.define("purejax_backend", "cpu", kind=str, choices=("cpu", "numpy", "cuda_emulation"),
              help="Backend that runs jitted computations: cpu (compiled C, NumPy where "
                   "no C compiler is found) or numpy (one NumPy call per primitive).")
config.define("purejax_num_threads", 0, kind=int,
              help="Threads of compiled kernels (0: one per core).")


def thread_count(num_threads=None):
  """The threads ``num_threads`` (default: the purejax_num_threads flag)
  stands for: 0 is one per core this process may run on."""
  n = config.purejax_num_threads if num_threads is None else num_threads
  if n > 0:
    return n
  try:
    return max(1, len(os.sched_getaffinity(0)))
  except AttributeError:
    return os.cpu_count() or 1


config.define("purejax_cache_dir", None, kind=str,
              help="Directory of compiled kernels (default: the user's cache directory).")
config.define("purejax_cache_max_bytes", 1 << 30, kind=int,
              help="Size cap of the compiled-kernel cache (least recently used go first).")
config.define("purejax_compile_sync", False,
              help="Compile before the first call instead of in the background.")


def _positive(name):
  def validate(value):
    if not value > 0:
      raise ValueError(f"{name} must be positive, got {value!r}")
    return value
  return validate


config.define("purejax_compile_timeout", 60.0, kind=float,
              validator=_positive("purejax_compile_timeout"),
              help="Seconds a compilation may run the C compiler (probing it included) "
                   "before the compiler is killed and the NumPy backend runs the program.")
config.define("purejax_disk_cache", True,
              help="Keep compiled kernels in purejax_cache_dir (PUREJAX_DISK_CACHE=0: build "
                   "each in a private temporary directory, removed once loaded).")
config.define("purejax_malloc_tuning", True,
              help="Read when purejax is imported (PUREJAX_MALLOC_TUNING=0 turns it off): "
                   "on glibc, keep the memory of freed large arrays for reuse instead of "
                   "returning it to the system (mallopt thresholds), which saves page faults "
                   "on every large temporary; the process keeps up to its peak heap size.")
config.define("purejax_cuda_graphs", False,
              help="GPU backend (PUREJAX_CUDA_GRAPHS=1): replay each jitted function that "
                   "reads nothing back to the host as one CUDA graph from its third call "
                   "on (its second captures it), instead of launching each kernel from "
                   "Python.")
config.define("purejax_debug", 0, kind=int,
              help="What to print to stderr: 1 (PUREJAX_DEBUG=1) each jaxpr jit traces; 2 "
                   "also each fusion plan, the host steps it leaves to NumPy, its generated C "
                   "source and the kernel cache's hits and compilations.")


# [api extras flags] Flags of JAX's that purejax records, checks or refuses.
def _refuse(name, bad, why):
  """A validator: setting ``name`` to a value in ``bad`` raises (the check
  that value promises is not implemented)."""
  def validate(value):
    if value in bad:
      raise NotImplementedError(f"purejax does not support {name}={value!r}: {why}")
    return value
  return validate


def _validate_default_device(value):
  # As JAX: a platform absent here ('gpu' without one, 'tpu') is accepted
  # and raises where an array or computation would go to it.
  if value is None or value in ("cpu", "gpu", "tpu") or \
      type(value).__name__ in ("Device", "CudaDevice"):
    return value
  raise ValueError("jax.default_device must be passed either a Device object (e.g. "
                   "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or "
                   f"'gpu', got: {value!r}")


_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_GUARD_DIRECTIONS = ("host_to_device", "device_to_device", "device_to_host")


def _set_all_guards(value):
  # jax_transfer_guard is set-only: it sets the three directions.
  if value is not None:
    for direction in _GUARD_DIRECTIONS:
      config.update(f"jax_transfer_guard_{direction}", value)
  return value


config.define("jax_explain_cache_misses", False,
              help="Log (WARNING) why each jit tracing cache miss happened.")
config.define("jax_enable_custom_prng", False, validator=_refuse(
    "jax_enable_custom_prng", (True,), "use jax.random.key for typed keys."),
    help="PRNGKey returns typed keys (not supported).")
config.define("jax_debug_key_reuse", False, validator=_refuse(
    "jax_debug_key_reuse", (True,), "key reuse checking is not implemented."),
    help="Check for reuse of typed PRNG keys (not supported).")
config.define("jax_default_device", None, kind=object, validator=_validate_default_device,
              help="Default device of arrays and jitted calls (jax.default_device).")
config.define("jax_allow_f16_reductions", True, validator=_refuse(
    "jax_allow_f16_reductions", (False,), "reductions of float16/bfloat16 are always "
    "allowed."), help="If False, reductions on f16/bf16 raise (not supported).")
config.define("jax_array_garbage_collection_guard", None, kind=str,
              choices=("allow", "log", "fatal"), validator=_refuse(
                  "jax_array_garbage_collection_guard", ("log", "fatal"),
                  "Arrays hold host memory, freed by reference counting or the "
                  "garbage collector alike; nothing is guarded."),
              help="What happens when an Array is garbage collected (only 'allow').")
config.define("jax_thread_guard", False,
              help="Multi-process operations only from the setting thread (one process: "
                   "there are none, so nothing to check).")
for _direction in _GUARD_DIRECTIONS:
  config.define(f"jax_transfer_guard_{_direction}", None, kind=str, choices=_GUARD_LEVELS,
                help=f"Transfer guard level for {_direction.replace('_', '-')} transfers "
                     "(recorded only: host and device memory are the same).")
config.define("jax_transfer_guard", None, kind=str, choices=_GUARD_LEVELS,
              validator=_set_all_guards, help="Transfer guard level for all transfers.")
config.define("jax_no_tracing", False, help="Refuse to trace a function for jit.")
config.define("jax_no_execution", False, help="Refuse to run anything (eager or jitted).")
config.define("jax_random_seed_offset", 0, kind=int,
              help="Added to every seed of random.key / random.PRNGKey.")
config.define("jax_legacy_prng_key", "allow", kind=str, choices=("allow", "warn", "error"),
              help="What a raw uint32 key passed to a jax.random function does.")
# JAX's persistent compilation cache is purejax's compiled-kernel cache:
# jax_compilation_cache_dir stands for purejax_cache_dir where that is unset,
# and jax_enable_compilation_cache=False turns the disk cache off.
config.define("jax_compilation_cache_dir", None, kind=str,
              help="Directory of compiled code (purejax's kernel cache, when "
                   "purejax_cache_dir is unset).")
config.define("jax_enable_compilation_cache", True, help="Keep compiled code on disk.")
# Settings of XLA's compiler and runtime, which purejax does not have:
# accepted with JAX's defaults and checks, and recorded only.
config.define("jax_persistent_cache_min_compile_time_secs", 1.0, kind=float,
              help="(XLA cache) Recorded only: purejax caches every kernel.")
config.define("jax_persistent_cache_min_entry_size_bytes", 0, kind=int,
              help="(XLA cache) Recorded only: purejax caches every kernel.")
config.define("jax_compilation_cache_max_size", -1, kind=int,
              help="(XLA cache) Recorded only: purejax_cache_max_bytes caps the kernel cache.")
config.define("jax_persistent_cache_enable_xla_caches", "xla_gpu_per_fusion_autotune_cache_dir",
              kind=str, help="(XLA cache) Recorded only.")
config.define("jax_raise_persistent_cache_errors", False, help="(XLA cache) Recorded only.")
config.define("jax_optimization_level", "UNKNOWN", kind=str,
              choices=("UNKNOWN", "O0", "O1", "O2", "O3"), help="(XLA) Recorded only.")
config.define("jax_memory_fitting_level", "O2", kind=str,
              choices=("UNKNOWN", "O0", "O1", "O2", "O3"), help="(XLA) Recorded only.")
config.define("jax_exec_time_optimization_effort", 0.0, kind=float, help="(XLA) Recorded only.")
config.define("jax_memory_fitting_effort", 0.0, kind=float, help="(XLA) Recorded only.")
config.define("jax_use_shardy_partitioner", True, help="(XLA) Recorded only.")
config.define("jax_pprint_use_color", True, help="Recorded only: jaxprs print without color.")
# [end api extras flags]


_NO_DEFAULT = object()


class State:
  """A flag's public handle, as JAX's: ``state(new_val)`` is a context
  manager (or decorator) setting the flag for its extent; ``state.value``
  reads it.  Boolean flags default ``new_val`` to True."""
  __slots__ = ("name", "__name__")

  def __init__(self, name):
    self.name = name
    self.__name__ = name[len("jax_"):]

  @property
  def value(self):
    return config.read(self.name)

  def __call__(self, new_val=_NO_DEFAULT):
    if new_val is _NO_DEFAULT:
      if config._flags[self.name].kind is not bool:
        raise TypeError(f"Context manager for {self.__name__} config option requires an "
                        "argument representing the new value for the config option.")
      new_val = True
    return config.override(self.name, new_val)

  def __repr__(self):
    return f"<purejax State {self.name}={self.value!r}>"


def _flag_context(name):
  return State(name)


enable_x64 = _flag_context("jax_enable_x64")
debug_nans = _flag_context("jax_debug_nans")
debug_infs = _flag_context("jax_debug_infs")
enable_checks = _flag_context("jax_enable_checks")
numpy_rank_promotion = _flag_context("jax_numpy_rank_promotion")
numpy_dtype_promotion = _flag_context("jax_numpy_dtype_promotion")
default_matmul_precision = _flag_context("jax_default_matmul_precision")
threefry_partitionable = _flag_context("jax_threefry_partitionable")

# [api extras states]
check_tracer_leaks = State("jax_check_tracer_leaks")
log_compiles = State("jax_log_compiles")
explain_cache_misses = State("jax_explain_cache_misses")
default_prng_impl = State("jax_default_prng_impl")
enable_custom_prng = State("jax_enable_custom_prng")
debug_key_reuse = State("jax_debug_key_reuse")
default_device = State("jax_default_device")
allow_f16_reductions = State("jax_allow_f16_reductions")
array_garbage_collection_guard = State("jax_array_garbage_collection_guard")
thread_guard = State("jax_thread_guard")
transfer_guard_host_to_device = State("jax_transfer_guard_host_to_device")
transfer_guard_device_to_device = State("jax_transfer_guard_device_to_device")
transfer_guard_device_to_host = State("jax_transfer_guard_device_to_host")
softmax_custom_jvp = State("jax_softmax_custom_jvp")


def checking_leaks():
  """Context manager: ``check_tracer_leaks(True)``."""
  return check_tracer_leaks(True)


@contextlib.contextmanager
def transfer_guard(new_val):
  """Context manager setting the transfer guard level of all three
  directions.  Recorded only: purejax's one device is the host, so there are
  no transfers to log or disallow."""
  with contextlib.ExitStack() as stack:
    for direction in _GUARD_DIRECTIONS:
      stack.enter_context(config.override(f"jax_transfer_guard_{direction}", new_val))
    yield
no_tracing = State("jax_no_tracing")
no_execution = State("jax_no_execution")
legacy_prng_key = State("jax_legacy_prng_key")
# [end api extras states]
