"""``purejax.install_as_jax()``: ``import jax`` (and every public ``jax.X``)
resolves to purejax in this process, so a JAX program or library runs on
purejax unedited.

A meta path finder, first on ``sys.meta_path``, answers for the name ``jax``
and its submodules. ``jax.X.Y`` is aliased, when first imported, to the
module ``purejax.X.Y`` itself (``jax.numpy is purejax.numpy``), so nothing is
loaded twice and both names share one state. JAX's internals
(``jax._src.*``) are not imitated: only the few modules that widely used
libraries import when they load get a minimal stand-in, from
``purejax._src.jax_private`` (see ``JAX_PRIVATE_STAND_INS``). ``jaxlib`` is
left alone.
"""
import importlib
import importlib.abc
import importlib.util
import sys
import types

# The JAX release whose API purejax implements. Under the alias,
# ``jax.__version__`` reads this: libraries choose code paths by it.
JAX_API_VERSION = "0.10.2"

# jax._src modules that get a stand-in, and the library that needs each.
JAX_PRIVATE_STAND_INS = {
    "compiler": "chex (chex.restrict_backends)",
    "core": "flax (flax.linen.fp8_ops: ShapedArray), numpyro (trace_state_clean)",
    "dtypes": "flax (flax.linen.fp8_ops: extended, ExtendedDType, DType), equinox "
              "(TypePromotionError)",
    "traceback_util": "flax (flax.traceback_util: api_boundary, register_exclusion), equinox",
    "xla_bridge": "chex (chex.set_n_cpu_devices: _backends)",
    "tree_util": "flax (flax.nnx: _registry), orbax (flatten_one_level)",
    "state": "flax (flax.nnx: state.types.AbstractRef)",
    "state.types": "flax (flax.nnx: AbstractRef)",
    "checkify": "flax (flax.nnx: the checkify API, Out)",
    "dispatch": "equinox (equinox.filter_jit: wait_for_tokens)",
    "ad_util": "lineax (stop_gradient_p, for its transpose rule)",
    "flatten_util": "blackjax (ravel_pytree)",
    "distributed": "orbax (global_state: process_id, client)",
}

_PRIVATE = "purejax._src.jax_private"


def _target_name(name):
  """The purejax module that stands for ``name`` (``jax`` or ``jax.*``)."""
  if name == "jax._src" or name.startswith("jax._src."):
    return _PRIVATE + name[len("jax._src"):]
  return "purejax" + name[len("jax"):]


def _resolve(name):
  """The module object for ``name``, or ModuleNotFoundError as JAX gives."""
  target = _target_name(name)
  parent_name, _, child = target.rpartition(".")
  try:
    module = importlib.import_module(target)
  except ModuleNotFoundError as err:
    if err.name != target:      # the module exists but one of its imports failed
      raise
  else:
    # A file whose name the package rebinds to something else is not a module
    # of JAX's (``jax.config`` is the Config object, and `import jax.config` fails).
    if getattr(sys.modules.get(parent_name), child, module) is module:
      return module
    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
  # A public module that purejax defines as an attribute (not a file).
  parent = sys.modules.get(parent_name)
  found = getattr(parent, child, None)
  if isinstance(found, types.ModuleType):
    return found
  if target.startswith(_PRIVATE):
    why = ("JAX's internals are not imitated; stand-ins exist for jax._src."
           + ", jax._src.".join(JAX_PRIVATE_STAND_INS))
  else:
    why = "purejax has no such module"
  raise ModuleNotFoundError(f"No module named {name!r} ({why}; `jax` is purejax here, "
                            "through purejax.install_as_jax)", name=name)


class _AliasLoader(importlib.abc.Loader):
  """Hands back an already imported purejax module under its ``jax`` name."""

  def __init__(self, module):
    self.module = module
    self.own_spec = getattr(module, "__spec__", None)

  def create_module(self, spec):
    return self.module

  def exec_module(self, module):
    # The import system stamped the alias's spec onto the module: the module
    # keeps its own (its name stays purejax.*, reloading works).
    module.__spec__ = self.own_spec


class JaxAliasFinder(importlib.abc.MetaPathFinder):
  """Answers for ``jax`` and ``jax.*`` with the matching purejax module."""

  def find_spec(self, name, path=None, target=None):
    if name != "jax" and not name.startswith("jax."):
      return None
    module = _resolve(name)
    return importlib.util.spec_from_loader(
        name, _AliasLoader(module), is_package=hasattr(module, "__path__"))


def _installed():
  return any(isinstance(f, JaxAliasFinder) for f in sys.meta_path)


def install_as_jax():
  """Make ``import jax`` and every ``jax.X`` import resolve to purejax.

  Call it before anything imports ``jax``. Idempotent. Raises RuntimeError
  when the real JAX is already imported in this process.
  """
  import purejax
  loaded = sys.modules.get("jax")
  if loaded is not None and loaded is not purejax:
    raise RuntimeError(
        "install_as_jax(): the real `jax` is already imported in this process; "
        "call install_as_jax() before anything imports jax (or run the program "
        "with `python -m purejax script.py`)")
  stale = [m for m in sys.modules if m.startswith("jax.") and
           not sys.modules[m].__name__.startswith("purejax")]
  if stale:
    raise RuntimeError(f"install_as_jax(): {stale[0]} (real JAX) is already imported")
  if _installed():
    return
  sys.meta_path.insert(0, JaxAliasFinder())
  info = tuple(int(part) for part in JAX_API_VERSION.split("."))
  purejax.__version__ = purejax.version.__version__ = JAX_API_VERSION
  purejax.__version_info__ = purejax.version.__version_info__ = info
  importlib.import_module("jax")
