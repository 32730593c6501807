"""How much of jax.numpy purejax.numpy covers.

tests/data/jax_numpy_names.txt lists the public names of jax.numpy (JAX
0.10.2).  Every name must exist in purejax.numpy, except those listed in
NOT_PROVIDED with the reason (the README repeats the list).  Run this file
as a module (`python -m tests.test_numpy_coverage`) to print the figure.
"""
import pathlib

import purejax.numpy as jnp

NAMES_FILE = pathlib.Path(__file__).parent / "data" / "jax_numpy_names.txt"

# name -> why purejax.numpy does not provide it.
NOT_PROVIDED = {}


def jax_numpy_names():
  lines = NAMES_FILE.read_text().splitlines()
  return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def missing_names():
  return sorted(name for name in jax_numpy_names() if not hasattr(jnp, name))


def test_every_jax_numpy_name_is_provided_or_explained():
  missing = set(missing_names())
  unexplained = missing - set(NOT_PROVIDED)
  assert not unexplained, f"jax.numpy names missing from purejax.numpy: {sorted(unexplained)}"
  stale = set(NOT_PROVIDED) - missing
  assert not stale, f"listed as not provided but present: {sorted(stale)}"


def test_names_file_is_complete_against_installed_jax():
  import pytest
  jax_numpy = pytest.importorskip("jax.numpy")
  installed = {n for n in dir(jax_numpy) if not n.startswith("_")}
  assert set(jax_numpy_names()) <= installed | {"fft", "linalg"}


if __name__ == "__main__":
  names = jax_numpy_names()
  missing = missing_names()
  print(f"purejax.numpy provides {len(names) - len(missing)} of the {len(names)} public "
        f"names of jax.numpy; missing: {', '.join(missing) or 'none'}")
