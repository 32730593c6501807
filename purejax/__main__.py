"""``python -m purejax script.py [args]`` / ``python -m purejax -m module [args]``:
run a JAX program unedited on purejax (``import jax`` resolves to purejax)."""
import os
import runpy
import sys

USAGE = ("usage: python -m purejax script.py [args...]\n"
         "       python -m purejax -m module [args...]\n"
         "runs the program with `import jax` resolving to purejax")


def main(argv):
  if not argv or argv[0] in ("-h", "--help"):
    print(USAGE, file=sys.stdout if argv else sys.stderr)
    return 0 if argv else 2
  if argv[0].startswith("-") and (argv[0] != "-m" or len(argv) < 2):
    print(USAGE, file=sys.stderr)
    return 2
  from purejax import install_as_jax
  install_as_jax()
  if argv[0] == "-m":
    sys.argv = argv[1:]   # sys.path[0] is already the working directory, as for `python -m`
    runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
  else:
    sys.argv = argv
    sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))   # as `python script.py`
    runpy.run_path(argv[0], run_name="__main__")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
