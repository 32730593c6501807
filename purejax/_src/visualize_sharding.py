"""``jax.debug.visualize_sharding`` / ``visualize_array_sharding``: draws which
devices hold which block of a 1-D or 2-D array as a ``rich`` table, sized
like JAX's (a 2-D grid is about 25 columns by 10 lines per unit of ``scale``,
stretched by the array's aspect ratio); without ``rich`` it raises JAX's
error."""

# Character cells are about 2.5 times taller than wide, so a square array
# gets a grid this many columns wide and lines tall (at scale 1).
_GRID_COLUMNS = 25
_GRID_LINES = 10
_PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
            "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")


def _block_starts(index_map, axis):
  """The sorted distinct start offsets of the blocks along ``axis``."""
  return sorted({(idx[axis].start or 0) for idx in index_map.values()})


def _device_blocks(shape, sharding):
  """({(row, col): sorted device ids}, rows, cols, platform) of the grid."""
  index_map = sharding.devices_indices_map(tuple(shape))
  row_starts = _block_starts(index_map, 0) if len(shape) == 2 else [0]
  col_axis = len(shape) - 1
  col_starts = _block_starts(index_map, col_axis)
  blocks, platform = {}, "cpu"
  for device, idx in index_map.items():
    row = row_starts.index(idx[0].start or 0) if len(shape) == 2 else 0
    col = col_starts.index(idx[col_axis].start or 0)
    blocks.setdefault((row, col), []).append(device.id)
    platform = device.platform
  return ({k: sorted(v) for k, v in blocks.items()}, len(row_starts), len(col_starts),
          platform)


def _cell_color(ids, all_ids, use_color, color_map):
  if not use_color:
    return None
  rank = sorted(all_ids).index(ids)
  if color_map is None:
    return f"black on {_PALETTE[rank % len(_PALETTE)]}"
  r, g, b, *_ = color_map(rank / max(len(all_ids) - 1, 1))
  return f"black on rgb({int(r * 255)},{int(g * 255)},{int(b * 255)})"


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9,
                       max_width=80, color_map=None):
  """Draws how ``sharding`` splits an array of ``shape`` over devices."""
  try:
    from rich import box
  except ImportError:
    raise ValueError("`visualize_sharding` requires `rich` to be installed.") from None
  from rich.console import Console
  from rich.padding import Padding
  from rich.table import Table
  from rich.text import Text

  shape = tuple(shape)
  if len(shape) not in (1, 2):
    raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
  blocks, rows, cols, platform = _device_blocks(shape, sharding)
  # The grid's width in characters follows the array's aspect ratio (a 1-D
  # array of n counts as n by 1, rounded before scaling); each block's share
  # includes one border.
  if len(shape) == 2:
    wide = scale * _GRID_COLUMNS * shape[1] / shape[0]
  else:
    wide = scale * int(_GRID_COLUMNS / shape[0])
  width = max(min(int(wide / cols), max_width), min_width)
  # A 1-D array is one line of blocks; a 2-D grid is _GRID_LINES * scale tall.
  height = int(scale * _GRID_LINES) // rows if len(shape) == 2 else 2
  inner = width - 2
  pad_lines = max(height - 2, 0)
  top = pad_lines // 2

  table = Table(show_header=False, show_lines=True, padding=0, box=box.SQUARE,
                highlight=False)
  for _ in range(cols):
    table.add_column()
  all_ids = {tuple(v) for v in blocks.values()}
  for r in range(rows):
    cells = []
    for c in range(cols):
      ids = blocks[(r, c)]
      label = f"{platform.upper()} {','.join(map(str, ids))}"
      spare = max(inner - len(label), 0)
      left = spare // 2
      style = _cell_color(tuple(ids), all_ids, use_color, color_map)
      cells.append(Padding(Text(label, style=style or ""),
                           (top, spare - left, pad_lines - top, left), style=style or ""))
    table.add_row(*cells)
  Console(width=max_width).print(table)


def visualize_array_sharding(arr, **kwargs):
  """``visualize_sharding`` of the array ``arr``'s shape and sharding."""
  return visualize_sharding(arr.shape, arr.sharding, **kwargs)
