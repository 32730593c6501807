"""Looking inside jit: the stages' text (jaxpr, generated C), cost analysis,
PUREJAX_DEBUG output, and the switch that keeps compiled kernels off disk."""
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import purejax
import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src import cost_analysis
from purejax._src import stages
from purejax._src.backends.cpu import cache, executable, toolchain
from purejax._src.config import config

ROOT = pathlib.Path(purejax.__file__).parent.parent


@pytest.fixture
def cpu(tmp_path, monkeypatch):
  """The C backend, compiling synchronously into a fresh private cache."""
  monkeypatch.setattr(toolchain, "_libraries", {})
  with config.override("purejax_cache_dir", str(tmp_path / "kernels")):
    if not toolchain.compiler_available():
      pytest.skip("no C compiler")
    with config.override("purejax_backend", "cpu"), \
         config.override("purejax_compile_sync", True):
      yield tmp_path / "kernels"


def _x(n=100, dtype=np.float32):
  return jnp.asarray(np.linspace(0.5, 1.5, n, dtype=dtype))


# -- as_text ---------------------------------------------------------------------------------

def test_stages_are_in_their_module():
  lowered = jax.jit(lambda x: x + 1).lower(1.0)
  assert type(lowered) is stages.Lowered
  assert type(lowered.compile()) is stages.Compiled
  assert type(jax.jit(lambda x: x).trace(1.0)) is stages.Traced


def test_numpy_backend_as_text_is_the_jaxpr():
  f = lambda x: jnp.sin(x) * 2.0
  with config.override("purejax_backend", "numpy"):
    compiled = jax.jit(f).lower(_x()).compile()
    expected = str(jax.make_jaxpr(f)(_x()))
    assert compiled.as_text() == expected
    assert jax.jit(f).lower(_x()).as_text() == expected
    np.testing.assert_allclose(compiled(_x()), np.sin(_x()) * 2, rtol=1e-6)


def test_cpu_as_text_is_the_c_source(cpu):
  f = jax.jit(lambda x: jnp.sin(x) * 3.0)
  lowered = f.lower(_x())
  text = lowered.compile().as_text()
  assert "int " in text and "sinf(" in text and "#include" in text
  assert lowered.as_text() == str(jax.make_jaxpr(lambda x: jnp.sin(x) * 3.0)(_x()))
  np.testing.assert_allclose(lowered.compile()(_x()), np.sin(_x()) * 3, rtol=1e-6)


def test_cpu_as_text_waits_for_the_background_build(cpu):
  with config.override("purejax_compile_sync", False):
    compiled = jax.jit(lambda x: jnp.cos(x) - 7.0).lower(_x(50)).compile()
    assert "cosf(" in compiled.as_text()


def test_as_text_says_why_no_c_was_generated(cpu):
  text = jax.jit(lambda x: x).lower(_x()).compile().as_text()
  first, rest = text.split("\n", 1)
  assert first.startswith("# purejax: no C code was generated") and "no equation" in first
  assert rest == str(jax.make_jaxpr(lambda x: x)(_x()))


def test_as_text_names_a_missing_compiler(cpu, monkeypatch):
  def unavailable():
    raise toolchain.CompilerUnavailable("none for the test")
  monkeypatch.setattr(toolchain, "_get_toolchain", unavailable)
  monkeypatch.setattr(executable, "_warned", set())
  with pytest.warns(RuntimeWarning, match="none for the test"):
    text = jax.jit(lambda x: x * 5.0 + 2.0).lower(_x()).compile().as_text()
  assert text.startswith("# purejax: no C code was generated (no usable C compiler")
  assert "mul" in text


# -- cost analysis: hand-computed numbers ------------------------------------------------------

def _cost(f, *args):
  return jax.jit(f).lower(*args).cost_analysis()


def test_cost_analysis_elementwise():
  cost = _cost(lambda x: x * 2.0, _x())
  assert type(cost) is dict
  # The scalar is broadcast first (4 + 400 bytes), then 3 x 400 bytes.
  assert cost == {"flops": 100.0, "bytes accessed": 1604.0, "bytes accessed0{}": 404.0,
                  "bytes accessed1{}": 400.0, "bytes accessedout{}": 800.0}
  cost = _cost(lambda x: jnp.exp(x) + x, _x())
  assert (cost["flops"], cost["transcendentals"]) == (100.0, 100.0)
  assert "transcendentals" not in _cost(lambda x, y: x - y, _x(), _x())


def test_cost_analysis_dot_general():
  a, b = jnp.ones((8, 16)), jnp.ones((16, 4))
  cost = _cost(lambda a, b: a @ b, a, b)
  assert cost["flops"] == 2 * 8 * 4 * 16
  assert cost["bytes accessed"] == 4 * (8 * 16 + 16 * 4 + 8 * 4)
  batched = _cost(lambda a, b: jnp.einsum("bij,bjk->bik", a, b), jnp.ones((3, 4, 5)),
                  jnp.ones((3, 5, 6)))
  assert batched["flops"] == 2 * 3 * 4 * 6 * 5


def test_cost_analysis_reductions_and_sort():
  cost = _cost(lambda a: a.sum(0), jnp.ones((8, 16)))
  assert cost["flops"] == 7 * 16 and cost["bytes accessed"] == 512 + 4 + 64
  assert _cost(jnp.sort, jnp.ones(1000))["flops"] == 1000 * 10


def test_cost_analysis_scan_counts_the_body_once():
  body = lambda c, y: (c + jnp.sin(y), None)
  cost = _cost(lambda xs: lax.scan(body, jnp.zeros(10), xs)[0], jnp.ones((7, 10)))
  assert cost["transcendentals"] == 10 and cost["flops"] == 10


def test_cost_analysis_while_counts_the_body_once():
  def f(x):
    return lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1]
  assert _cost(f, _x())["flops"] == 1 + 1 + 100   # test, counter, body


def test_cost_analysis_cond_takes_the_costliest_branch():
  f = lambda p, x: lax.cond(p, jnp.sin, lambda x: x * 2.0 + 1.0, x)
  cost = _cost(f, True, _x())
  assert cost["transcendentals"] == 100 and cost["flops"] == 1 + 200


def test_cost_analysis_nested_jit_and_integer_pow():
  inner = jax.jit(lambda y: y * 3.0)
  assert _cost(lambda x: inner(x) + 1.0, _x())["flops"] == 200
  assert _cost(lambda x: lax.integer_pow(x, 5), _x())["flops"] == 300   # x2, x4, x4*x
  assert _cost(lambda x: lax.integer_pow(x, -2), _x())["flops"] == 200   # x*x, 1/_


def test_cost_analysis_of_nothing_is_empty():
  assert _cost(lambda x: x, _x()) == {}


def test_cost_analysis_skips_dead_code():
  # JAX drops unused equations before lowering (flax's tabulate counts a
  # module called only for what it sows): 100 flops for the add alone.
  def f(x):
    jnp.sin(x) * 2.0
    inner = jax.jit(lambda y: (y * 3.0, jnp.exp(y)))
    return inner(x)[0] + 1.0
  cost = _cost(f, _x())
  assert cost["flops"] == 200 and "transcendentals" not in cost
  assert jax.jit(f).lower(_x()).compile().cost_analysis()["flops"] == 200


def test_compiled_cost_counts_fused_kernels(cpu):
  f = lambda x: jnp.exp(x) * x + 1.0
  compiled = jax.jit(f).lower(_x()).compile()
  cost = compiled.cost_analysis()
  assert cost["flops"] == 200 and cost["transcendentals"] == 100
  assert cost["bytes accessed"] == 800   # one kernel: x in, the result out
  assert jax.jit(f).lower(_x()).cost_analysis()["bytes accessed"] == 3604


def test_compiled_cost_on_the_numpy_backend_is_unfused():
  with config.override("purejax_backend", "numpy"):
    lowered = jax.jit(lambda x: x * 2.0).lower(_x())
    assert lowered.compile().cost_analysis() == lowered.cost_analysis()


def test_fused_bytes_reads_a_view_source_once():
  from purejax._src.backends.cpu import fusion
  closed = jax.make_jaxpr(lambda x, y: (x[None, :] + y) * x[None, :])(_x(4), jnp.ones((3, 4)))
  bytes_ = cost_analysis.fused_bytes(fusion.plan_jaxpr(closed.jaxpr))
  assert bytes_["bytes accessed"] == 16 + 48 + 48


# -- cost analysis against live JAX ------------------------------------------------------------

# name -> (function of (jnp, lax) making the function, argument shapes)
_ORACLE_CASES = {
    "mul": (lambda np_, lax_: lambda x: x * 2.0, [(100,)]),
    "add": (lambda np_, lax_: lambda x, y: x + y, [(100,), (100,)]),
    "sin": (lambda np_, lax_: np_.sin, [(100,)]),
    "exp_mul": (lambda np_, lax_: lambda x: np_.exp(x) * x + 1, [(100,)]),
    "where": (lambda np_, lax_: lambda x: np_.where(x > 0, x, 2 * x), [(100,)]),
    "dot": (lambda np_, lax_: lambda a, b: a @ b, [(8, 16), (16, 4)]),
    "matvec": (lambda np_, lax_: lambda a, b: a @ b, [(4, 5), (5,)]),
    "sum": (lambda np_, lax_: lambda x: x.sum(), [(100,)]),
    "max_axis": (lambda np_, lax_: lambda x: x.max(0), [(8, 16)]),
    "argmax": (lambda np_, lax_: lambda x: np_.argmax(x, axis=1), [(4, 25)]),
    "square": (lambda np_, lax_: lambda x: x ** 2, [(100,)]),
    "ipow": (lambda np_, lax_: lambda x: x ** 5, [(100,)]),
    "broadcast": (lambda np_, lax_: lambda x: np_.broadcast_to(x, (3, 100)), [(100,)]),
    "concat": (lambda np_, lax_: lambda x: np_.concatenate([x, x]), [(100,)]),
    "slice": (lambda np_, lax_: lambda x: x[10:20], [(100,)]),
    "cumsum": (lambda np_, lax_: lambda x: np_.cumsum(x, axis=1), [(4, 25)]),
    "sort": (lambda np_, lax_: lambda x: np_.sort(x, axis=1), [(4, 25)]),
    "cond": (lambda np_, lax_: lambda x: lax_.cond(x[0] > 0, np_.sin, lambda v: v * 2.0, x),
             [(100,)]),
    "dead_code": (lambda np_, lax_: lambda x: (np_.sin(x) * 2, np_.maximum(x, 0), x + 1)[2],
                  [(100,)]),
}
_EXACT = ("mul", "add", "sin", "dot", "sum", "where", "argmax", "dead_code")


@pytest.mark.parametrize("name", sorted(_ORACLE_CASES))
def test_lowered_cost_analysis_matches_jax(name):
  real = pytest.importorskip("jax")
  make, shapes = _ORACLE_CASES[name]
  args = [np.linspace(-1, 2, int(np.prod(s)), dtype=np.float32).reshape(s) for s in shapes]
  ours = jax.jit(make(jnp, lax)).lower(*args).cost_analysis()
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    theirs = real.jit(make(real.numpy, real.lax)).lower(*args).cost_analysis()
  assert type(ours) is type(theirs) is dict
  theirs = {k: v for k, v in theirs.items() if not k.startswith("utilization")}
  if name == "cond":   # the predicate's computation differs; the branches agree
    keys = ("transcendentals",)
    assert ours["flops"] == 100 + 2
  else:
    keys = ("flops", "transcendentals", "bytes accessed")
  for key in keys:
    assert ours.get(key) == theirs.get(key), key
  if name in _EXACT:
    assert ours == theirs


def test_scan_cost_is_jax_body_cost():
  real = pytest.importorskip("jax")
  body = lambda c, y: (c + jnp.sin(y), None)
  xs = np.ones((7, 10), np.float32)
  ours = _cost(lambda xs: lax.scan(body, jnp.zeros(10), xs)[0], xs)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    rbody = lambda c, y: (c + real.numpy.sin(y), None)
    theirs = real.jit(lambda xs: real.lax.scan(rbody, real.numpy.zeros(10), xs)[0]).lower(
        xs).cost_analysis()
  assert ours["transcendentals"] == theirs["transcendentals"]


def test_compiled_elementwise_bytes_match_jax(cpu):
  real = pytest.importorskip("jax")
  x = np.ones(100, np.float32)
  ours = jax.jit(lambda x: jnp.tanh(x) * 2.0 + x).lower(x).compile().cost_analysis()
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    rnp = real.numpy
    theirs = real.jit(lambda x: rnp.tanh(x) * 2.0 + x).lower(x).compile().cost_analysis()
  for key in ("flops", "transcendentals", "bytes accessed"):
    assert ours[key] == theirs[key], key


# -- PUREJAX_DEBUG -----------------------------------------------------------------------------

def test_debug_1_prints_traced_jaxprs(capsys):
  with config.override("purejax_debug", 1):
    jax.jit(lambda x: jnp.cos(x) * 11.0)(_x(3))
  err = capsys.readouterr().err
  assert "purejax: jit traced <lambda>" in err and "cos" in err and "11.0" in err
  assert "generated C" not in err
  jax.jit(lambda x: jnp.cos(x) * 12.0)(_x(3))
  assert capsys.readouterr().err == ""


def test_debug_2_prints_plans_sources_and_the_cache(cpu, capsys):
  with config.override("purejax_debug", 2):
    jax.jit(lambda x: jnp.sin(x) * 13.0)(_x(3))
  err = capsys.readouterr().err
  for part in ("jit traced", "fusion plan", "generated C", "int seg_", "compiled in"):
    assert part in err, part


def test_debug_environment_variable():
  code = ("import purejax, purejax.numpy as jnp\n"
          "print(purejax.jit(lambda x: jnp.tanh(x) + 1.5)(jnp.ones(2)))\n")
  env = dict(os.environ, PUREJAX_DEBUG="1", PUREJAX_BACKEND="numpy",
             PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
  proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                        env=env, timeout=120, check=True)
  assert "tanh" in proc.stderr and "jit traced" in proc.stderr
  assert "tanh" not in proc.stdout


def test_debug_flag_documents_its_levels():
  help_text = config._flags["purejax_debug"].help
  assert "1" in help_text and "2" in help_text and "C source" in help_text


# -- the disk-cache switch ---------------------------------------------------------------------

def test_disk_cache_off_writes_nothing(cpu, monkeypatch):
  built = []
  real_dir = cache.private_build_dir

  def recording():
    cm = real_dir()
    path = cm.__enter__()
    built.append(path)
    assert oct(path.stat().st_mode & 0o777) == oct(0o700)
    class Wrapper:
      def __enter__(self):
        return path
      def __exit__(self, *exc):
        return cm.__exit__(*exc)
    return Wrapper()

  monkeypatch.setattr(cache, "private_build_dir", recording)
  unused = cpu.parent / "unused-kernels"
  with config.override("purejax_cache_dir", str(unused)), \
       config.override("purejax_disk_cache", False):
    out = jax.jit(lambda x: jnp.exp(x) * 17.0)(_x(8))
    lib = toolchain.compile_library("int pj_t(int a) { return a * 3; }\n")
  np.testing.assert_allclose(out, np.exp(_x(8)) * 17, rtol=1e-6)
  assert lib.pj_t(5) == 15
  assert len(built) == 2 and not any(p.exists() for p in built)
  assert not unused.exists()


def test_disk_cache_off_reads_nothing(cpu, monkeypatch):
  src = "int pj_u(int a) { return a + 4; }\n"
  toolchain.compile_library(src)
  assert any(p.suffix == ".so" for p in cpu.iterdir())
  monkeypatch.setattr(toolchain, "_libraries", {})
  monkeypatch.setattr(cache, "load", lambda path: pytest.fail("read the disk cache"))
  with config.override("purejax_disk_cache", False):
    assert toolchain.compile_library(src).pj_u(1) == 5
    assert toolchain._probe_record_path(toolchain._get_toolchain().argv) is None


def test_disk_cache_environment_variable(monkeypatch):
  flag = config._flags["purejax_disk_cache"]
  assert flag.default is True
  monkeypatch.setenv("PUREJAX_DISK_CACHE", "0")
  assert flag.parse_env() is False
  monkeypatch.setenv("PUREJAX_DISK_CACHE", "1")
  assert flag.parse_env() is True
