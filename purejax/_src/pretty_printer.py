"""A small Wadler-style pretty printer: documents of text, breaks and groups.

A group is laid out flat when its own contents fit in what is left of the
line, otherwise each break directly inside it becomes a newline (breaks in
nested groups decide for themselves).
"""


class Doc:
  __slots__ = ()

  def __add__(self, other):
    return concat([self, other])

  def format(self, width=80):
    return _format(self, width)

  def __str__(self):
    return self.format()


class Text(Doc):
  __slots__ = ("text",)

  def __init__(self, text):
    self.text = text


class Concat(Doc):
  __slots__ = ("children",)

  def __init__(self, children):
    self.children = children


class Brk(Doc):
  """A space (``text``) when flat; a newline plus indentation when broken."""
  __slots__ = ("text",)

  def __init__(self, text=" "):
    self.text = text


class Nest(Doc):
  __slots__ = ("n", "child")

  def __init__(self, n, child):
    self.n, self.child = n, child


class Group(Doc):
  __slots__ = ("child",)

  def __init__(self, child):
    self.child = child


def text(s):
  return Text(s)


def concat(docs):
  return Concat(list(docs))


def brk(s=" "):
  return Brk(s)


def nest(n, doc):
  return Nest(n, doc)


def group(doc):
  return Group(doc)


def nil():
  return Concat([])


def join(sep, docs):
  out = []
  for i, d in enumerate(docs):
    if i:
      out.append(sep)
    out.append(d)
  return Concat(out)


_FLAT, _BREAK = 0, 1


def _fits(doc, width):
  """Whether ``doc`` laid out flat takes at most ``width`` columns."""
  stack = [doc]
  while stack and width >= 0:
    d = stack.pop()
    kind = type(d)
    if kind is Text or kind is Brk:
      width -= len(d.text)
    elif kind is Concat:
      stack.extend(reversed(d.children))
    else:  # Nest, Group
      stack.append(d.child)
  return width >= 0


def _format(doc, width):
  out = []
  col = 0
  agenda = [(0, _BREAK, doc)]
  while agenda:
    indent, mode, d = agenda.pop()
    kind = type(d)
    if kind is Text:
      out.append(d.text)
      col += len(d.text)
    elif kind is Concat:
      agenda.extend((indent, mode, c) for c in reversed(d.children))
    elif kind is Brk:
      if mode == _FLAT:
        out.append(d.text)
        col += len(d.text)
      else:
        out.append("\n" + " " * indent)
        col = indent
    elif kind is Nest:
      agenda.append((indent + d.n, mode, d.child))
    elif kind is Group:
      flat = mode == _FLAT or _fits(d.child, width - col)
      agenda.append((indent, _FLAT if flat else _BREAK, d.child))
  return "".join(out)
