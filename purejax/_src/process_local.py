"""The blocks of a shard_map's values when its devices span processes.

A shard_map (or pmap) run over an MPI-spanning mesh executes only this
process's devices.  Its values are described by their blocks, one per
mesh position (purejax/_src/shard_map.py ``_block_index``); this module
answers, for one global value:

- which positions hold each distinct block (``blocks``; positions that
  differ only along mesh axes the spec does not name hold copies);
- which part of it this process holds: its *box*, the smallest slab
  covering its devices' blocks (``local_box``), which must consist of
  those blocks only -- the process-local data of a multi-process pmap;
- the blocks no local device computed, gathered from the processes that
  did (``gather_missing``, one MPI allgather).
"""
import functools
import math


def _shard_map():
  from purejax._src import shard_map   # (it imports this module lazily)
  return shard_map


@functools.lru_cache(maxsize=4096)   # read for every output of every run
def blocks(shape, spec, mesh, names, axis_sizes):
  """((index, positions), ...) per distinct block of a value of ``shape``:
  its slices and the positions holding it, in increasing order."""
  sm = _shard_map()
  used = {n for ns in sm._spec_names(spec, len(shape)) for n in ns}
  groups = {}
  for pos in range(math.prod(axis_sizes)):
    where = sm._where(mesh, names, axis_sizes, pos)
    key = tuple(where[n] for n in names if n in used)
    if key not in groups:
      groups[key] = (sm._block_index(shape, spec, mesh.shape, where), [])
    groups[key][1].append(pos)
  return tuple((index, tuple(positions)) for index, positions in groups.values())


def inside(index, box):
  return all(box_s.start <= s.start and s.stop <= box_s.stop for s, box_s in zip(index, box))


def shift(index, box):
  """``index`` (global slices) relative to the start of ``box``."""
  return tuple(slice(s.start - b.start, s.stop - b.start) for s, b in zip(index, box))


@functools.lru_cache(maxsize=4096)   # read for every input and output of every run
def local_box(shape, spec, mesh, names, axis_sizes, local, what):
  """The slab of a global value of ``shape`` that this process's positions
  ``local`` hold.  Raises ValueError unless every block inside it is held
  by one of them (the process's blocks must tile one slab)."""
  held = set(local)
  parts = blocks(shape, spec, mesh, names, axis_sizes)
  mine = [index for index, positions in parts if held.intersection(positions)]
  box = tuple(slice(min(ix[d].start for ix in mine), max(ix[d].stop for ix in mine))
              for d in range(len(shape)))
  covered = [index for index, _ in parts if inside(index, box)]
  if len(covered) != len(mine):
    raise ValueError(
        f"{what}: this process's devices hold {len(mine)} blocks of the global "
        f"{list(shape)} value with spec {spec}, which do not tile one slab of it "
        f"(the slab {[(s.start, s.stop) for s in box]} has {len(covered)} blocks), so "
        "its process-local part cannot be given as one array")
  return box


def gather_missing(comm, results, outs):
  """The blocks of outputs ``outs`` ([(shape, spec, mesh, names, axis_sizes)])
  that some process's devices did not compute, as {(output, position):
  block}, gathered through MPI from the processes that did.  Every process
  calls it with the same ``outs`` (the same program); it communicates only
  when some process lacks a block.  ``results``: position -> outputs of
  this process's devices."""
  owner = getattr(comm, "owner", None)
  if owner is None:   # one process holds every position
    return {}
  wanted = []
  for i, (shape, spec, mesh, names, axis_sizes) in enumerate(outs):
    for _, positions in blocks(shape, spec, mesh, names, axis_sizes):
      holders = {owner(p) for p in positions}
      if len(holders) < comm.process_count:
        wanted.append((i, positions[0]))
  if not wanted:
    return {}
  mine = {(i, p): results[p][i] for i, p in wanted if p in results}
  table = {}
  for part in comm.allgather_objects(mine):
    table.update(part)
  return table
