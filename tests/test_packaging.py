"""What `pip install -e .` installs is what purejax imports."""
import ast
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Imported only where the user asks for them, with a clear error otherwise.
OPTIONAL = {"mpi4py": "mpi", "cupy": "cuda", "rich": "ecosystem"}   # rich: visualize_sharding, as JAX
# Import names whose distribution is named differently.
DISTRIBUTION = {"ml_dtypes": "ml_dtypes", "opt_einsum": "opt_einsum"}


def _project():
  tomllib = pytest.importorskip("tomllib")   # Python >= 3.11
  with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
    return tomllib.load(f)["project"]


def _names(requirements):
  import re
  return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].strip().lower() for r in requirements}


def _third_party_imports():
  """The top-level modules purejax's source imports, outside the standard library."""
  found = set()
  for folder, _, files in os.walk(os.path.join(ROOT, "purejax")):
    for name in files:
      if not name.endswith(".py"):
        continue
      with open(os.path.join(folder, name)) as f:
        tree = ast.parse(f.read())
      for node in ast.walk(tree):
        if isinstance(node, ast.Import):
          found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
          found.add(node.module.split(".")[0])
  return {m for m in found if m not in sys.stdlib_module_names and m != "purejax"}


def test_every_imported_library_is_a_dependency():
  project = _project()
  required = _names(project["dependencies"])
  assert "scipy" in required   # gammainc, betainc, Bessel functions, BLAS for jit
  for module in sorted(_third_party_imports()):
    if module in OPTIONAL:
      extra = project["optional-dependencies"][OPTIONAL[module]]
      # (CuPy's wheels are named per CUDA version: cupy-cuda12x)
      assert any(n == module or n.startswith(module + "-cuda") for n in _names(extra)), \
          (module, extra)
    else:
      assert DISTRIBUTION.get(module, module).lower() in required, module


def test_no_runtime_dependency_hides_in_an_extra():
  project = _project()
  required = _names(project["dependencies"])
  for extra, requirements in project["optional-dependencies"].items():
    if extra != "oracle":
      assert not (_names(requirements) & {"numpy", "scipy", "ml_dtypes", "opt_einsum"}) - required


def test_matrix_products_without_scipy_warn(monkeypatch):
  """A broken install without SciPy's BLAS says so instead of silently
  running matrix products on NumPy."""
  from purejax._src.backends.cpu import blas
  blas.gemm_pointers.cache_clear()
  import scipy.linalg
  monkeypatch.setitem(sys.modules, "scipy.linalg.cython_blas", None)
  monkeypatch.delattr(scipy.linalg, "cython_blas", raising=False)   # once imported, an attribute
  try:
    with pytest.warns(RuntimeWarning, match="matrix products run on NumPy"):
      assert blas.gemm_pointers() is None
  finally:
    blas.gemm_pointers.cache_clear()
