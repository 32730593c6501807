"""The SPMD machinery's speed paths (spmd.py, backends/psum_fusion.py, the C
functions' scratch pools): ``Communicator.all_sum_many`` against NumPy and
``all_sum``; independent psums fused into one exchange on both backends,
with the same results as one exchange per psum; scratch blocks kept per
concurrent caller of a compiled function."""
import gc
import threading

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src import spmd
from purejax._src.backends import numpy_backend, psum_fusion
from purejax._src.backends.cpu import executable, toolchain
from purejax._src.config import config

RNG = np.random.RandomState(0)
needs_cc = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")


class _Counting(spmd.Communicator):
  """Counts each device's barrier waits (the exchanges' cost)."""

  def __init__(self, names, sizes):
    super().__init__(names, sizes)
    self.waits = [0] * self.size

  def _wait(self):
    pos = spmd.current()[1]
    self.waits[pos] += 1
    super()._wait()


def _values(n):
  """Per device: small, large (split between members), 0-d, transposed and
  strided large, int."""
  big = spmd.SMALL_SUM_BYTES // 4 + 1000
  return [[RNG.randn(3, 4).astype(np.float32),
           RNG.randn(big).astype(np.float32),
           np.float64(RNG.randn()),
           RNG.randn(300, 400).astype(np.float32).T,
           RNG.randn(400, 400).astype(np.float32)[:, ::2],
           RNG.randint(-5, 5, (7,)).astype(np.int32)] for _ in range(n)]


def _ordered_sum(parts):
  out = parts[0] + parts[1]
  for p in parts[2:]:
    out = out + p
  return out


@pytest.mark.parametrize("n", [2, 3])
def test_all_sum_many_matches_numpy_and_all_sum(n):
  values = _values(n)
  comm = _Counting(("i",), (n,))
  many = spmd.run(comm, lambda pos, *vs: comm.all_sum_many(pos, vs, ("i",)), values)
  assert comm.waits == [2] * n   # one exchange with large values: two barriers
  one = spmd.run(comm, lambda pos, *vs: [comm.all_sum(pos, v, ("i",)) for v in vs], values)
  for k in range(len(values[0])):
    want = _ordered_sum([np.asarray(v[k]) for v in values])
    for pos in range(n):
      got = many[pos][k]
      assert got.dtype == want.dtype and got.shape == want.shape
      np.testing.assert_array_equal(got, want)       # the same order of additions
      np.testing.assert_array_equal(got, one[pos][k])


def test_all_sum_many_of_small_values_meets_once():
  comm = _Counting(("i",), (2,))
  vals = [[np.float32(1 + p), np.arange(5, dtype=np.float32) * p] for p in range(2)]
  out = spmd.run(comm, lambda pos, *vs: comm.all_sum_many(pos, vs, ("i",)), vals)
  assert comm.waits == [1, 1]
  for got in out:
    assert got[0] == 3 and got[1].tolist() == [0, 1, 2, 3, 4]


def test_all_sum_many_over_one_axis_of_a_grid():
  comm = spmd.Communicator(("x", "y"), (2, 3))
  big = spmd.SMALL_SUM_BYTES // 4 + 10
  vals = [[np.full(big, float(p), np.float32), np.array([p, 10 * p])] for p in range(6)]
  out = spmd.run(comm, lambda pos, *vs: comm.all_sum_many(pos, vs, ("y",)), vals)
  for pos in range(6):
    row = [q for q in range(6) if q // 3 == pos // 3]
    assert np.all(out[pos][0] == sum(row))
    assert out[pos][1].tolist() == [sum(row), 10 * sum(row)]


def test_all_sum_many_of_a_subclass_uses_its_all_sum():
  class Logged(spmd.Communicator):
    calls = 0

    def all_sum(self, pos, value, names):
      Logged.calls += 1
      return super().all_sum(pos, value, names)

  comm = Logged(("i",), (2,))
  vals = [[np.ones(3), np.ones(2) * p] for p in range(2)]
  out = spmd.run(comm, lambda pos, *vs: comm.all_sum_many(pos, vs, ("i",)), vals)
  assert Logged.calls == 4
  assert out[1][0].tolist() == [2, 2, 2] and out[0][1].tolist() == [1, 1]


# -- psum fusion in the backends ---------------------------------------------------------

def _program(a, b, c, k):
  s1 = lax.psum(a, "i")
  s2 = lax.psum(jnp.sin(b), "i")          # independent of s1: joins it
  y = s1 * 2.0                            # waits for s1
  s3 = lax.psum(c.T, "i")                 # joins s1, s2 (runs before y)
  s4 = lax.psum(y, "i")                   # needs y: a new exchange
  m = lax.pmax(a, "i")                    # a collective: ends the waiting
  s5 = lax.psum(k, "i")
  s6 = lax.psum(b, ("i", 0))              # positional axis: never fused
  return s1 + s4, s2, s3, m, s5, s6


def _args(n):
  return [(RNG.randn(5).astype(np.float32), RNG.randn(300, 300).astype(np.float32),
           RNG.randn(40, 30).astype(np.float32), RNG.randint(0, 9, (4,)).astype(np.int32))
          for _ in range(n)]


def _closed(n):
  return jax.make_jaxpr(_program, axis_env=[("i", n)])(*_args(1)[0])


def _unfused(jaxpr):
  """The jaxpr run equation by equation with the primitives' impls."""
  def run(*args):
    env = dict(zip(jaxpr.invars, args))
    read = lambda v: v.val if hasattr(v, "val") else env[v]   # noqa: E731
    for e in jaxpr.eqns:
      out = e.primitive.impl(*map(read, e.invars), **e.params)
      for var, val in zip(e.outvars, out if e.primitive.multiple_results else [out]):
        env[var] = np.asarray(val, var.aval.dtype)
    return [read(v) for v in jaxpr.outvars]
  return run


def test_schedule_fuses_independent_psums():
  eqns = numpy_backend._schedule(_closed(2).jaxpr.eqns)
  fused = [e for e in eqns if isinstance(e, psum_fusion.FusedEqn)]
  assert len(fused) == 1 and len(fused[0].invars) == 3
  names = [e.primitive.name for e in eqns]
  assert names.count("psum") == 3   # s4 alone, s5 after pmax, s6 (positional)
  assert names.index("psum (fused)") < names.index("pmax")
  assert len(eqns) == len(_closed(2).jaxpr.eqns) - 2


def _compare(run, unfused, jaxpr, args, calls=2):
  """``run`` (the program compiled with fusion) against ``unfused``: the
  same values, in fewer barriers."""
  n = len(args)
  for _ in range(calls):   # the NumPy backend's second call runs generated code
    base = _Counting(("i",), (n,))
    want = spmd.run(base, lambda pos, *a: unfused(*a), args)
    comm = _Counting(("i",), (n,))
    got = spmd.run(comm, lambda pos, *a: run(*a), args)
    assert all(w < b for w, b in zip(comm.waits, base.waits)), (comm.waits, base.waits)
    for g_dev, w_dev in zip(got, want):
      for g, w in zip(g_dev, w_dev):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
  with pytest.raises(NameError, match="unbound axis name: i"):
    run(*args[0])   # outside an SPMD run: the psums' own error


@pytest.mark.parametrize("n", [2, 3])
def test_fused_psums_match_unfused_numpy_backend(n):
  jaxpr = _closed(n).jaxpr
  _compare(numpy_backend.compile_jaxpr(jaxpr), _unfused(jaxpr), jaxpr, _args(n))


@needs_cc
@pytest.mark.parametrize("n", [2, 3])
def test_fused_psums_match_unfused_cpu_backend(n, monkeypatch):
  jaxpr = _closed(n).jaxpr
  with monkeypatch.context() as m:
    m.setattr(psum_fusion, "schedule", lambda items, **_: list(items))
    unfused = executable.compile_jaxpr(jaxpr, num_threads=1)
  _compare(executable.compile_jaxpr(jaxpr, num_threads=1), unfused, jaxpr, _args(n))


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_pmean_of_gradients_in_pmap_is_one_exchange(backend, cpu_devices, monkeypatch):
  if backend == "cpu" and not toolchain.compiler_available():
    pytest.skip("no C compiler")
  cpu_devices(2)
  seen = []
  original = spmd.Communicator.all_sum_many

  def recording(self, pos, values, names):
    seen.append(len(values))
    return original(self, pos, values, names)
  monkeypatch.setattr(spmd.Communicator, "all_sum_many", recording)

  def step(w, x):
    grads = jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w[0] + w[1]) ** 2))(w)
    return lax.pmean(grads, "d")

  w = (RNG.randn(2, 6, 4).astype(np.float32), RNG.randn(2, 4).astype(np.float32))
  x = RNG.randn(2, 3, 6).astype(np.float32)
  want = jax.vmap(step, axis_name="d")(w, x)
  with config.override("purejax_backend", backend), \
       config.override("purejax_compile_sync", True):
    got = jax.pmap(step, axis_name="d")(w, x)
  for g, v in zip(got, want):
    np.testing.assert_allclose(g, v, rtol=1e-5, atol=1e-6)
  assert seen == [2, 2]   # both leaves' psums in one exchange, on each device


# -- scratch pools of compiled functions -------------------------------------------------

@needs_cc
def test_concurrent_calls_keep_a_block_each():
  closed = jax.make_jaxpr(lambda a, b: jnp.tanh(a @ b) @ b + jnp.exp(a) @ b)(
      np.ones((300, 300), np.float32), np.ones((300, 300), np.float32))
  run = executable.compile_jaxpr(closed.jaxpr, num_threads=1)
  assert "_busy[" in run.source
  a = RNG.randn(300, 300).astype(np.float32) * 0.1
  b = RNG.randn(300, 300).astype(np.float32) * 0.1
  want = run(a, b)[0]
  assert run.kept_blocks() == 1
  results, most = [], 1
  for _ in range(6):
    start = threading.Barrier(3)

    def call():
      start.wait()
      for _ in range(4):
        results.append(run(a, b)[0])
    threads = [threading.Thread(target=call) for _ in range(3)]
    for t in threads:
      t.start()
    for t in threads:
      t.join()
    most = max(most, run.kept_blocks())
    assert run.kept_blocks() <= 3   # one per concurrent caller, reused
    if most > 1:
      break
  assert most > 1
  # The same bits: OpenBLAS runs single-threaded in every caller's products
  # (its thread count is one per process: openblas.py's modes).
  for r in results:
    np.testing.assert_array_equal(r, want)
  kept = run.kept_blocks
  run = None
  gc.collect()
  assert kept() == 0   # pj_release freed every block with the executable
