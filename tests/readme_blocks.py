"""Runs a README code block as a user would type it, checking the results
its comments show.  ``python tests/readme_blocks.py BLOCK_FILE [jax]`` prints
one JSON list of mismatches (empty: every result as written).

How a block states results:
- an expression statement with a comment at the end of its (last) line: the
  comment is the expression's ``repr``; lines below it holding only a
  comment in the same column continue it (a repr over several lines);
  ``Error: message ...`` means the statement raises that exception, whose
  message starts with the text before ``...``;
- a ``print(...)`` statement followed by lines that start with ``# ``: what
  it prints.
Comments anywhere else (on their own line, after an assignment or a ``def``)
are prose and are not checked.  With ``jax``, the block runs on real JAX
(``purejax`` replaced by ``jax`` in its imports), to check that its results
are JAX's.
"""
import ast
import contextlib
import io
import json
import re
import sys
import tokenize


def _comments(source):
  """{row: (col, text without '# ')} for every comment token."""
  out = {}
  for tok in tokenize.generate_tokens(io.StringIO(source).readline):
    if tok.type == tokenize.COMMENT:
      out[tok.start[0]] = (tok.start[1], tok.string[1:].removeprefix(" "))
  return out


def _expectations(source):
  """[(statement node, kind, expected text or None)] in order."""
  lines = source.splitlines()
  comments = _comments(source)
  result = []
  for node in ast.parse(source).body:
    end = node.end_lineno
    expected, kind = None, None
    is_print = (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "print")
    if is_print:
      printed, row = [], end + 1
      while row <= len(lines) and lines[row - 1].startswith("# "):
        printed.append(lines[row - 1][2:])
        row += 1
      if printed:
        expected, kind = "\n".join(printed), "printed"
    elif isinstance(node, ast.Expr) and end in comments:
      col, text = comments[end]
      if lines[end - 1][:col].strip():   # a trailing comment, not a line of its own
        parts, row = [text], end + 1
        while row in comments and comments[row][0] == col and not lines[row - 1][:col].strip():
          parts.append(comments[row][1])
          row += 1
        expected, kind = "\n".join(parts), "repr"
    result.append((node, kind, expected))
  return result


def _matches_error(expected, error):
  m = re.match(r"^(\w+): (.*)$", expected, re.S)
  if not m or m.group(1) != type(error).__name__:
    return False
  message = m.group(2)
  if message.endswith("..."):
    return str(error).startswith(message[:-3].rstrip())
  return str(error) == message


def run(source):
  """The mismatches between the block's stated results and what it does."""
  namespace, problems = {"__name__": "__readme__"}, []
  for node, kind, expected in _expectations(source):
    code = ast.get_source_segment(source, node, padded=True)
    label = f"line {node.lineno}: {code.strip().splitlines()[0]}"
    stdout = io.StringIO()
    try:
      with contextlib.redirect_stdout(stdout):
        if isinstance(node, ast.Expr):
          value = eval(compile(ast.Expression(node.value), "<README>", "eval"), namespace)
        else:
          exec(compile(ast.Module([node], []), "<README>", "exec"), namespace)
          value = None
    except Exception as e:   # noqa: BLE001 - reported, or checked against the comment
      if not (kind == "repr" and _matches_error(expected, e)):
        problems.append(dict(at=label, expected=expected, got=f"{type(e).__name__}: {e}"))
      continue
    if kind == "repr" and repr(value) != expected:
      problems.append(dict(at=label, expected=expected, got=repr(value)))
    elif kind == "printed" and stdout.getvalue().rstrip("\n") != expected:
      problems.append(dict(at=label, expected=expected, got=stdout.getvalue().rstrip("\n")))
  return problems


def for_jax(source):
  """The block with its purejax imports pointing at JAX."""
  return re.sub(r"\bpurejax\b", "jax", source)


if __name__ == "__main__":
  with open(sys.argv[1], encoding="utf-8") as f:
    block = f.read()
  if sys.argv[2:] == ["jax"]:
    block = for_jax(block)
  print(json.dumps(run(block)))
