"""``jax.experimental.layout``: array layouts.  purejax's arrays are
row-major NumPy buffers, so a ``Layout`` only records what was asked;
``Format`` pairs a layout with a sharding as JAX's does, for libraries that
pass them through (flax)."""


class Layout:
  """A requested memory layout (dimension order major-to-minor, tiling)."""

  def __init__(self, major_to_minor=None, tiling=None, *, sub_byte_element_size_in_bits=0):
    self.major_to_minor = None if major_to_minor is None else tuple(major_to_minor)
    self.tiling = None if tiling is None else tuple(map(tuple, tiling))
    self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

  def __eq__(self, other):
    return (isinstance(other, Layout) and
            (self.major_to_minor, self.tiling) == (other.major_to_minor, other.tiling))

  def __hash__(self):
    return hash((Layout, self.major_to_minor, self.tiling))

  def __repr__(self):
    return f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling})"


class Format:
  """A layout and a sharding."""

  def __init__(self, layout=None, sharding=None):
    self.layout, self.sharding = layout, sharding

  def __eq__(self, other):
    return (isinstance(other, Format) and
            (self.layout, self.sharding) == (other.layout, other.sharding))

  def __hash__(self):
    return hash((Format, self.layout, self.sharding))

  def __repr__(self):
    return f"Format({self.layout}, {self.sharding})"


def with_layout_constraint(x, layout):
  """``x`` itself: purejax has one layout."""
  del layout
  return x
