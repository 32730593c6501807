"""``jax.experimental.multihost_utils``: exchanging values between the
processes of a multi-process run.

In a single process every function has JAX's single-process meaning
(gathers stack one copy, broadcasts return the input as NumPy, barriers
return at once).  Across processes (``purejax.distributed.initialize()``
under ``mpirun``) they are real collectives through MPI: every process must
call them at the same point with values of the same shapes and dtypes.

One difference follows from purejax's arrays: an Array laid out over the
devices of several processes holds the whole global value in every process
(purejax/_src/sharded_array.py), so "gathering" one reads it locally.
"""
import zlib

import numpy as np

from purejax._src import core
from purejax._src import devices as _devices
from purejax._src import distributed
from purejax._src import dtypes
from purejax._src import tree_util
from purejax._src.array import Array


def _comm():
  """purejax's MPI communicator, or None in a single process."""
  return distributed.global_state.comm


def _spans_processes(x):
  """Whether ``x`` is an Array laid out over devices of other processes too
  (JAX's "not fully addressable")."""
  if not isinstance(x, Array) or _comm() is None:
    return False
  me = _devices.process_index()
  return any(getattr(d, "process_index", 0) != me for d in x.sharding.device_set)


def _canonical_host(x):
  """``x`` as a NumPy array of the dtype a device would hold (int64 becomes
  int32 without x64), as JAX's collectives see it."""
  host = np.asarray(x)
  return host.astype(dtypes.canonicalize_dtype(host.dtype), copy=False)


def _gather_same(values, what):
  """Every process's ``values`` (a list of arrays), in process order;
  ValueError on every process unless their shapes and dtypes agree."""
  parts = _comm().allgather(values)
  described = [[(v.shape, v.dtype.name) for v in part] for part in parts]
  if any(d != described[0] for d in described):
    lines = "; ".join(f"process {p}: {d}" for p, d in enumerate(described))
    raise ValueError(f"{what}: every process must pass values of the same shapes and "
                     f"dtypes, got {lines}")
  return parts


# ---------------------------------------------------------------------------
# gather, broadcast, barrier

def process_allgather(in_tree, tiled=False):
  """Every process's value of each leaf of ``in_tree``, as NumPy arrays:
  stacked on a new leading axis (``tiled=False``) or concatenated along
  axis 0 (``tiled=True``; scalars are stacked either way).  An Array laid
  out over several processes is already global: its whole value is
  returned (only with ``tiled=True``, as in JAX)."""
  leaves, treedef = tree_util.tree_flatten(in_tree)
  out = [None] * len(leaves)
  local = []
  for i, x in enumerate(leaves):
    if _spans_processes(x):
      if not tiled:
        raise ValueError("Gathering global non-fully-addressable arrays only supports "
                         "tiled=True")
      out[i] = np.asarray(x)
    elif _comm() is None:
      host = np.asarray(x)
      out[i] = host if tiled else np.expand_dims(host, axis=0)
    else:
      host = _canonical_host(x)
      local.append((i, host if host.ndim and tiled else np.expand_dims(host, axis=0)))
  if local:
    parts = _gather_same([v for _, v in local], "process_allgather")
    for k, (i, _) in enumerate(local):
      out[i] = np.concatenate([part[k] for part in parts], axis=0)
  return tree_util.tree_unflatten(treedef, out)


def broadcast_one_to_all(in_tree, is_source=None):
  """Every leaf of ``in_tree`` as the source process (default: process 0)
  has it, as NumPy arrays.  Every process passes leaves of the same shapes;
  several sources add up their values, as in JAX."""
  if _comm() is None:
    return tree_util.tree_map(np.asarray, in_tree)
  if is_source is None:
    is_source = _devices.process_index() == 0
  leaves, treedef = tree_util.tree_flatten(in_tree)
  host = [_canonical_host(x) for x in leaves]
  flags = _comm().allgather(bool(is_source))
  parts = _gather_same(host, "broadcast_one_to_all")
  out = []
  for k, x in enumerate(host):
    terms = [part[k] if source else np.zeros_like(x) for part, source in zip(parts, flags)]
    out.append(np.sum(np.stack(terms), axis=0, dtype=x.dtype))
  return tree_util.tree_unflatten(treedef, out)


def assert_equal(in_tree, fail_message=""):
  """AssertionError (with ``fail_message``) unless every process passes
  equal values (compared with ``==``: a NaN is never equal)."""
  count = _devices.process_count()

  def repeated(x):
    if _spans_processes(x):
      return np.asarray(x)
    x = np.asarray(x)
    return np.concatenate([np.expand_dims(x, 0) if x.ndim == 0 else x] * count)

  gathered = process_allgather(in_tree, tiled=True)
  expected = tree_util.tree_map(repeated, in_tree)
  same = tree_util.tree_map(lambda a, b: bool(np.all(np.equal(a, b))), expected, gathered)
  if not all(tree_util.tree_leaves(same)):
    raise AssertionError(f"{fail_message}. Expected: {gathered}; got: {in_tree}.")


def sync_global_devices(name):
  """A barrier: returns once every process has called it (with the same
  ``name``, else AssertionError)."""
  digest = np.uint32(zlib.crc32(name.encode()))
  assert_equal(digest, f"sync_global_devices name mismatch ('{name}')")


def reached_preemption_sync_point(step_id):
  """Whether the processes reached the step at which to save before a
  preemption.  JAX answers False when no coordination client runs (one
  process); purejax has no preemption notice service (MPI coordinates its
  processes), so no sync point is ever announced: False."""
  del step_id
  return False


# ---------------------------------------------------------------------------
# host-local <-> global arrays

def _pspec_leaves(pspecs, tree, what):
  """One PartitionSpec per leaf of ``tree`` (``pspecs``: one spec or a
  pytree prefix of ``tree``)."""
  from purejax._src.mesh import PartitionSpec
  is_none = lambda v: v is None
  if pspecs is None or isinstance(pspecs, PartitionSpec):
    return [pspecs] * len(tree_util.tree_leaves(tree))
  errors = tree_util.prefix_errors(pspecs, tree, is_leaf=is_none)
  if errors:
    raise errors[0](f"{what} pspecs")
  return tree_util.broadcast_prefix(pspecs, tree, is_leaf=is_none)


def _check_pspec(pspec):
  if pspec is None:
    raise ValueError("`None` is not a valid input to the pspecs argument. Please use "
                     "jax.sharding.PartitionSpec() if you wanted to replicate your input.")


def _under_trace(x, api):
  """Whether ``x`` is traced.  In one process the local and global values
  are the same, so a traced value passes through unchanged (as JAX's
  primitive lowers to the identity); across processes purejax has no
  traced form."""
  if not isinstance(x, core.Tracer):
    return False
  if _comm() is not None:
    raise NotImplementedError(f"multihost_utils.{api} under a transformation (jit, grad, "
                              "vmap) in a multi-process run is not supported by purejax; "
                              "call it on concrete values")
  return True


def _host_value(x):
  """A concrete leaf as something ``device_put`` takes (float0: bool zeros)."""
  if not hasattr(x, "dtype"):
    x = np.asarray(x)
  if x.dtype == dtypes.float0:
    return np.zeros(x.shape, dtype=np.dtype(bool))
  return x


def _no_keys_across_processes(x, api):
  from purejax._src.random.keys import PRNGKeyArray
  if isinstance(x, PRNGKeyArray) and _comm() is not None:
    raise NotImplementedError(f"multihost_utils.{api} of typed PRNG key arrays in a "
                              "multi-process run is not supported by purejax; pass "
                              "jax.random.key_data(keys)")


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
  """Each process's leaves of ``local_inputs`` as parts of global Arrays laid
  out by ``NamedSharding(global_mesh, pspec)``: a dimension split over mesh
  axes that span processes grows by the number of processes along them.
  In one process the local value is the global value."""
  from purejax._src.mesh import NamedSharding
  from purejax._src.sharded_array import make_array_from_process_local_data, put
  leaves, treedef = tree_util.tree_flatten(local_inputs)
  specs = _pspec_leaves(pspecs, local_inputs, "input")
  out = []
  for x, pspec in zip(leaves, specs):
    _check_pspec(pspec)
    if _under_trace(x, "host_local_array_to_global_array") or _spans_processes(x):
      out.append(x)
      continue
    _no_keys_across_processes(x, "host_local_array_to_global_array")
    sharding = NamedSharding(global_mesh, pspec)
    if _comm() is None:
      out.append(put(_host_value(x), sharding))
    else:
      out.append(make_array_from_process_local_data(sharding, _canonical_host(_host_value(x))))
  return tree_util.tree_unflatten(treedef, out)


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
  """The inverse: each leaf's part held by this process's devices, laid out
  by ``NamedSharding(local mesh, pspec)`` (the local mesh: this process's
  devices of ``global_mesh``, which must form a sub-block of it).  In one
  process an Array is returned as it is and other values are put on the
  mesh."""
  from purejax._src.mesh import NamedSharding
  from purejax._src.sharded_array import put
  leaves, treedef = tree_util.tree_flatten(global_inputs)
  specs = _pspec_leaves(pspecs, global_inputs, "output")
  out = []
  for x, pspec in zip(leaves, specs):
    _check_pspec(pspec)
    if _under_trace(x, "global_array_to_host_local_array"):
      out.append(x)
    elif _comm() is None:
      out.append(x if isinstance(x, Array) else put(_host_value(x), NamedSharding(global_mesh,
                                                                                pspec)))
    elif isinstance(x, Array) and not _spans_processes(x):
      out.append(x)   # already host-local
    else:
      _no_keys_across_processes(x, "global_array_to_host_local_array")
      out.append(_local_part(_canonical_host(_host_value(x)), global_mesh, pspec))
  return tree_util.tree_unflatten(treedef, out)


def _local_part(value, global_mesh, pspec):
  """This process's slab of the global ``value`` as an Array on the local mesh."""
  from purejax._src.mesh import NamedSharding
  from purejax._src.sharded_array import _local_slab, put
  slab = _local_slab(NamedSharding(global_mesh, pspec), value.shape)
  block = value[tuple(slice(start, stop) for start, stop in slab)]
  return put(block, NamedSharding(_local_mesh(global_mesh), pspec))


def _local_mesh(mesh):
  """The sub-mesh of ``mesh`` made of this process's devices."""
  from purejax._src.mesh import Mesh
  me = _devices.process_index()
  where = np.argwhere(np.vectorize(lambda d: d.process_index == me, otypes=[bool])(mesh.devices))
  if not len(where):
    raise ValueError(f"none of the devices of {mesh} belong to process {me}")
  box = tuple(slice(lo, hi + 1) for lo, hi in zip(where.min(axis=0), where.max(axis=0)))
  sub = mesh.devices[box]
  if sub.size != len(where):
    raise ValueError(f"the devices of process {me} do not form a contiguous block of "
                     f"{mesh}: the mesh must be contiguous (each process's devices a sub-block)")
  return Mesh(sub, mesh.axis_names, mesh.axis_types)
