"""purejax: JAX, written in Python.

``import purejax as jax`` and ``import purejax.numpy as jnp`` give JAX's
API: jit, make_jaxpr, pytrees, a NumPy API on a strict primitive layer
(``purejax.lax``), and more as the status table in the README says.
"""
import warnings as _warnings

# The old-style module ``purejax.config`` is imported first so that the name
# ``purejax.config`` ends up bound to the Config object, as in JAX.
import purejax.config as _config_module
from purejax._src.config import config
from purejax._src.config import (
    debug_infs, debug_nans, default_matmul_precision, enable_checks, enable_x64,
    numpy_dtype_promotion, numpy_rank_promotion)
from purejax._src.api import (
    ShapeDtypeStruct, block_until_ready, disable_jit, eval_shape, jit, make_jaxpr)
from purejax._src.ad_api import (
    fwd_and_bwd, grad, hessian, jacfwd, jacobian, jacrev, jvp, linear_transpose, linearize,
    value_and_grad, vjp)
from purejax._src.custom_derivatives import custom_jvp, custom_vjp
from purejax._src.lax.stop_gradient import stop_gradient
from purejax._src.remat import checkpoint, checkpoint_policies, remat
from purejax._src.vmap import vmap
from purejax._src.basearray import Array
from purejax._src.devices import (
    default_backend, device_count, devices, local_device_count, local_devices,
    process_count, process_index)

from purejax import dtypes
from purejax import errors
from purejax import lax
from purejax import numpy
from purejax import tree
from purejax import tree_util
from purejax import ops
from purejax import random
from purejax._src.random.keys import PRNGKeyArray as _PRNGKeyArray
Array.register(_PRNGKeyArray)   # typed key arrays are jax.Arrays, as in JAX
from purejax import nn
from purejax import scipy
from purejax import ad_checkpoint
from purejax import custom_derivatives
from purejax import core
from purejax import test_util

# [debugging area]
from purejax import debug
from purejax import experimental
from purejax._src.callbacks import pure_callback
# [end debugging area]
# [nans area]
# [end nans area]
# [runtime area]
from purejax._src.devices import (
    Device, SingleDeviceSharding, device_get, device_put)
from purejax._src.naming import ensure_compile_time_eval, named_call, named_scope
from purejax import sharding
# [end runtime area]
# [devices area]
from purejax._src.mesh import NamedSharding, make_mesh
from purejax._src.mesh_context import set_mesh
from purejax._src.mesh import PartitionSpec as P
from purejax._src.sharded_array import (
    make_array_from_callback, make_array_from_process_local_data,
    make_array_from_single_device_arrays)
# [end devices area]
# [pmap area]
from purejax._src.pmap import pmap
from purejax._src.shard_map import shard_map
# [end pmap area]
# [distributed area]
from purejax import distributed
# [end distributed area]
# [api extras area]
from purejax._src.config import (
    allow_f16_reductions, array_garbage_collection_guard, check_tracer_leaks, checking_leaks,
    debug_key_reuse, default_device, default_prng_impl, enable_custom_prng,
    explain_cache_misses, legacy_prng_key, log_compiles, no_execution, no_tracing,
    softmax_custom_jvp, thread_guard,
    threefry_partitionable, transfer_guard, transfer_guard_device_to_device,
    transfer_guard_device_to_host, transfer_guard_host_to_device)
from purejax._src.api_extras import (
    clear_caches, closure_convert, copy_to_host_async, custom_gradient, effects_barrier,
    host_count, host_id, host_ids, live_arrays, print_environment_info, process_indices,
    typeof)
from purejax._src.dtypes import float0
from purejax import version
from purejax import typing
from purejax import stages
from purejax import image
from purejax import custom_batching
from purejax import dlpack
from purejax import profiler
from purejax import monitoring
from purejax import interpreters   # the extension API's rule registries (ad, batching)
from purejax import ref
from purejax import api_util   # flax.linen's scan reads jax.api_util.debug_info
from purejax.ref import Ref, freeze, new_ref
# [end api extras area]

__version__ = "0.1.0"


def tree_map(f, tree_, *rest, is_leaf=None):
  """Deprecated alias of ``purejax.tree.map`` (kept for old JAX code; current
  JAX has removed it)."""
  _warnings.warn("jax.tree_map is deprecated: use jax.tree.map (or "
                 "jax.tree_util.tree_map) instead.", DeprecationWarning, stacklevel=2)
  return tree_util.tree_map(f, tree_, *rest, is_leaf=is_leaf)

# Running JAX programs unedited: `import jax` resolves to purejax.
from purejax._src.jax_alias import install_as_jax
