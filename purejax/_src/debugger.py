"""``debug.breakpoint``: a small pdb-like debugger (``jdb``) over the values
of the frames that called it.

The breakpoint captures the caller's frames when it is traced (their
locals: arrays and tracers become operands of a staged debug callback,
other values are kept as they are), so under ``jit``, inside ``cond``
branches or loops it stops only when the equation runs, with the runtime
values; a branch never taken never stops.  Commands are read from stdin:
``p``/``pp`` EXPR, ``l``/``list``, ``w``/``where``/``bt``, ``u``/``up``,
``d``/``down``, ``c``/``cont``/``continue``, ``q``/``quit``/``exit``.
"""
import cmd
import inspect
import linecache
import os
import pprint
import sys
import traceback

from purejax._src import core

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class DebuggerFrame:
  """What the debugger shows of one frame: where it is, its source and its
  locals and globals (traced locals replaced by their runtime values)."""
  __slots__ = ("filename", "lineno", "source", "offset", "locals", "globals")

  def __init__(self, filename, lineno, source, offset, locals_, globals_):
    self.filename, self.lineno = filename, lineno
    self.source, self.offset = source, offset   # source lines; first line's number
    self.locals, self.globals = locals_, globals_


def _source_of(frame):
  """The frame's function source (the whole file for module code), as lines,
  and the number of its first line."""
  try:
    if frame.f_code.co_name == "<module>":
      lines, offset = linecache.getlines(frame.f_code.co_filename), 1
    else:
      lines, offset = inspect.getsourcelines(frame.f_code)
  except (OSError, TypeError):
    return [], frame.f_lineno
  return "".join(lines).split("\n"), offset


def _is_internal(frame):
  filename = os.path.abspath(frame.f_code.co_filename)
  return filename.startswith(_PACKAGE_DIR + os.sep) or filename.startswith("<frozen")


def _is_dynamic(value):
  if isinstance(value, core.Tracer):
    return value._trace.valid
  return isinstance(value, core.ArrayBase)


def capture_frames(frame, filter_frames=True, num_frames=None):
  """The frames from ``frame`` outwards (innermost first), each split into
  static parts and its array locals: ``(frames, dynamic_values)`` where
  ``frames`` holds (frame info, {name: static value}, [dynamic names])."""
  frames, dynamic = [], []
  while frame is not None and (num_frames is None or len(frames) < num_frames):
    if not (filter_frames and _is_internal(frame)):
      source, offset = _source_of(frame)
      static, names = {}, []
      for name, value in frame.f_locals.items():
        if _is_dynamic(value):
          names.append(name)
          dynamic.append(value)
        else:
          static[name] = value
      info = (frame.f_code.co_filename, frame.f_lineno, source, offset, frame.f_globals)
      frames.append((info, static, names))
    frame = frame.f_back
  return frames, dynamic


def rebuild_frames(frames, values):
  """The DebuggerFrames (innermost first) with the runtime ``values``."""
  values = iter(values)
  out = []
  for (filename, lineno, source, offset, globals_), static, names in frames:
    locals_ = dict(static)
    locals_.update((name, next(values)) for name in names)
    out.append(DebuggerFrame(filename, lineno, source, offset, locals_, globals_))
  return out


class CliDebugger(cmd.Cmd):
  """The ``cli`` backend: a command loop over the captured frames."""
  prompt = "(jdb) "

  def __init__(self, frames, stdin=None, stdout=None):
    super().__init__(stdin=stdin, stdout=stdout)
    self.use_rawinput = stdin is None
    self.frames = frames           # innermost first
    self.index = 0

  def _frame(self):
    return self.frames[self.index]

  def _print(self, text):
    self.stdout.write(text + "\n")

  def _error(self, exc):
    self._print("".join(traceback.format_exception_only(type(exc), exc)).rstrip()
                .replace(f"{type(exc).__name__}:", f"*** {type(exc).__name__}:", 1))

  def _eval(self, expr):
    frame = self._frame()
    return eval(expr, frame.globals, dict(frame.locals))

  def default(self, line):
    self._print(f"*** Unknown syntax: {line}")

  def emptyline(self):
    return False

  def do_p(self, arg):
    """p expression: prints the value of the expression."""
    try:
      self._print(repr(self._eval(arg)))
    except Exception as e:   # noqa: BLE001 -- reported at the prompt, as pdb does
      self._error(e)

  def do_pp(self, arg):
    """pp expression: pretty-prints the value of the expression."""
    try:
      self._print(pprint.pformat(self._eval(arg)))
    except Exception as e:   # noqa: BLE001
      self._error(e)

  def do_list(self, arg):
    """l(ist): shows the source around the current line."""
    frame = self._frame()
    self._print(f"> {frame.filename}({frame.lineno})")
    here = frame.lineno - frame.offset
    for i in range(max(here - 3, 0), min(here + 3, len(frame.source))):
      mark = "->  " if i == here else "    "
      self._print(mark + frame.source[i])

  do_l = do_list

  def do_where(self, arg):
    """w(here): prints the frames, outermost first."""
    self._print("Traceback:")
    for frame in reversed(self.frames):
      self._print(f'  File "{frame.filename}", line {frame.lineno}')
      i = frame.lineno - frame.offset
      if 0 <= i < len(frame.source):
        self._print("    " + frame.source[i].strip())

  do_w = do_bt = do_where

  def do_up(self, arg):
    """u(p): moves to the caller's frame."""
    if self.index + 1 >= len(self.frames):
      self._print("At topmost frame.")
    else:
      self.index += 1
    self.do_list("")

  do_u = do_up

  def do_down(self, arg):
    """d(own): moves to the called frame."""
    if self.index == 0:
      self._print("At bottommost frame.")
    else:
      self.index -= 1
    self.do_list("")

  do_d = do_down

  def do_continue(self, arg):
    """c(ont(inue)): continues the program."""
    return True

  do_c = do_cont = do_continue

  def do_quit(self, arg):
    """q(uit), exit: ends the program."""
    sys.exit(0)

  do_q = do_exit = do_quit

  def do_EOF(self, arg):
    """End of input: continues the program."""
    self._print("")
    return True

  def run(self):
    self._print("Entering jdb:")
    self.cmdloop()


def run_debugger(frames, stdin=None, stdout=None):
  """Opens the debugger on ``frames`` (DebuggerFrames, innermost first)."""
  CliDebugger(frames, stdin, stdout or sys.stdout).run()
