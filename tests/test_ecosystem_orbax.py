"""orbax-checkpoint, unedited, on purejax (``python -m purejax``): the same
programs save and restore checkpoints on purejax and on JAX, and what they
restore (values, dtypes, types, shardings, step lists) must agree.  Needs
the ``ecosystem`` extra: skipped without it, except under CI (the CI
variable set)."""
import numpy as np
import pytest

from tests.ecosystem import require, run_on_both

pytestmark = pytest.mark.ecosystem

# Describes a restored tree: per leaf, its type, dtype and values.
DESCRIBE = """
  def desc(t):
    return jax.tree.map(lambda x: ["Array" if isinstance(x, jax.Array) else type(x).__name__,
                                   str(getattr(x, "dtype", type(x).__name__)),
                                   np.asarray(x, dtype=np.float64).tolist()], t)
"""

CHECKPOINTERS = """
  import json, os, tempfile
  import numpy as np
  import jax, jax.numpy as jnp
  import orbax.checkpoint as ocp
""" + DESCRIBE + """
  root = tempfile.mkdtemp()
  events = []
  jax.monitoring.register_event_listener(lambda e, **kw: events.append(e))
  jax.monitoring.register_event_duration_secs_listener(lambda e, d, **kw: events.append(e))
  tree = {"f32": jnp.arange(6, dtype=jnp.float32).reshape(2, 3) * 0.5,
          "i32": jnp.array([1, -2, 3], jnp.int32),
          "bf16": jnp.array([0.25, -1.5, 3.0], jnp.bfloat16),
          "bool": jnp.array([True, False]),
          "np": np.arange(4, dtype=np.float64), "np_i": np.arange(3, dtype=np.int16),
          "int": 7, "float": 2.5,
          "nested": [jnp.ones((2,)), {"x": jnp.zeros((1, 1), jnp.int32)}]}
  out = {"jax": jax.__name__}
  ck = ocp.StandardCheckpointer()
  path = os.path.join(root, "std")
  ck.save(path, tree)
  ck.wait_until_finished()
  out["files"] = sorted(f for f in os.listdir(path) if not f.startswith("."))
  out["plain"] = desc(ck.restore(path))
  arrays = {k: v for k, v in tree.items() if isinstance(v, jax.Array)}
  ck.save(os.path.join(root, "arrays"), arrays)
  ck.wait_until_finished()
  abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding),
                          arrays)
  restored = ck.restore(os.path.join(root, "arrays"), abstract)
  out["abstract"] = desc(restored)
  out["abstract_sharding"] = jax.tree.map(lambda x: type(x.sharding).__name__, restored)
  out["eval_shape"] = desc(ck.restore(os.path.join(root, "arrays"), jax.eval_shape(lambda: arrays)))
  cast = dict(abstract, f32=jax.ShapeDtypeStruct((2, 3), jnp.bfloat16,
                                                 sharding=arrays["f32"].sharding))
  out["cast"] = desc(ck.restore(os.path.join(root, "arrays"), cast))["f32"]
  meta = ck.metadata(os.path.join(root, "arrays"))
  meta = getattr(meta, "item_metadata", meta)
  out["meta"] = {k: [list(v.shape), str(v.dtype)] for k, v in meta.items()}

  pc = ocp.PyTreeCheckpointer()
  pc.save(os.path.join(root, "pytree"), {"a": tree["f32"], "n": np.arange(3), "s": 5})
  out["pytree"] = desc(pc.restore(os.path.join(root, "pytree")))

  opts = ocp.CheckpointManagerOptions(max_to_keep=2, create=True)
  mgr = ocp.CheckpointManager(os.path.join(root, "mgr"), options=opts)
  state = arrays
  for step in range(4):
    state = jax.tree.map(lambda x: ~x if x.dtype == jnp.bool_ else x + 1, state)
    mgr.save(step, args=ocp.args.StandardSave(state))
  mgr.wait_until_finished()
  out["latest"] = mgr.latest_step()
  out["all_steps"] = list(mgr.all_steps())
  out["should_save"] = [mgr.should_save(s) for s in (3, 4)]
  out["restored"] = desc(mgr.restore(mgr.latest_step(),
                                     args=ocp.args.StandardRestore(jax.eval_shape(lambda: arrays))))
  mgr.close()
  again = ocp.CheckpointManager(os.path.join(root, "mgr"))
  out["reopened_steps"] = list(again.all_steps())
  out["reopened"] = desc(again.restore(2))
  again.close()
  out["events"] = sorted({e for e in events if e.startswith(("/jax/orbax", "/jax/checkpoint"))})
  print(json.dumps(out))
"""


def test_orbax_checkpointers_and_manager_match_jax(tmp_path):
  """StandardCheckpointer (plain, abstract and dtype-changing targets,
  metadata), PyTreeCheckpointer and a CheckpointManager keeping 2 of 4
  steps, over float32/int32/bfloat16/bool Arrays, NumPy arrays and scalars."""
  require("orbax.checkpoint")
  got, want = run_on_both(CHECKPOINTERS, tmp_path)
  assert got["plain"]["bf16"] == ["Array", "bfloat16", [0.25, -1.5, 3.0]]
  assert got["plain"]["np_i"] == ["ndarray", "int16", [0.0, 1.0, 2.0]]
  assert got["plain"]["int"] == ["int", "int", 7.0]
  assert got["cast"][1] == "bfloat16"
  assert got["latest"] == 3 and got["all_steps"] == [2, 3] == got["reopened_steps"]
  assert got["restored"]["i32"] == ["Array", "int32", [5.0, 2.0, 7.0]]
  if want is not None:
    for key in want.keys() - {"jax"}:
      assert got[key] == want[key], key


SHARDED = """
  import os
  os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
  import json, tempfile
  import numpy as np
  import jax, jax.numpy as jnp
  import orbax.checkpoint as ocp
  from jax.experimental import mesh_utils
  from jax.sharding import NamedSharding, PartitionSpec as P
  mesh = jax.sharding.Mesh(mesh_utils.create_device_mesh((2, 2)), ("x", "y"))
  tree = {"a": jax.device_put(jnp.arange(32, dtype=jnp.float32).reshape(8, 4),
                              NamedSharding(mesh, P("x", "y"))),
          "b": jax.device_put(jnp.arange(8, dtype=jnp.int32), NamedSharding(mesh, P("y"))),
          "c": jax.device_put(jnp.full((4, 4), 1.5, jnp.bfloat16), NamedSharding(mesh, P()))}
  path = os.path.join(tempfile.mkdtemp(), "sharded")
  ck = ocp.StandardCheckpointer()
  ck.save(path, tree)
  ck.wait_until_finished()
  def layout(v):
    return [np.asarray(v, dtype=np.float64).tolist(), str(v.dtype), str(v.sharding.spec),
            sorted([s.device.id, str(s.index), s.replica_id] for s in v.addressable_shards)]
  out = {"jax": jax.__name__}
  out["same"] = {k: layout(v) for k, v in ck.restore(path).items()}
  target = {"a": jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(mesh, P(None, "x"))),
            "b": jax.ShapeDtypeStruct((8,), jnp.int32, sharding=NamedSharding(mesh, P(("x", "y")))),
            "c": jax.ShapeDtypeStruct((4, 4), jnp.bfloat16, sharding=NamedSharding(mesh, P("y", "x")))}
  out["resharded"] = {k: layout(v) for k, v in ck.restore(path, target).items()}
  print(json.dumps(out))
"""


def test_orbax_sharded_arrays_match_jax(tmp_path):
  """Arrays laid out over a 2x2 mesh of 4 CPU devices: saved shard by shard,
  restored with their own layout and onto other layouts (each device's
  block and replica id as JAX gives them)."""
  require("orbax.checkpoint")
  got, want = run_on_both(SHARDED, tmp_path)
  np.testing.assert_array_equal(got["resharded"]["a"][0], np.arange(32).reshape(8, 4))
  assert got["same"]["a"][2] == "P('x', 'y')"
  assert got["resharded"]["b"][2] == "P(('x', 'y'),)"
  if want is not None:
    assert got == dict(want, jax="purejax")


FLAX = """
  import json, os, tempfile
  import numpy as np
  import jax, jax.numpy as jnp
  import optax
  import orbax.checkpoint as ocp
  from flax import nnx, linen as nn
  from flax.training import train_state
  root = tempfile.mkdtemp()
  out = {"jax": jax.__name__}
  x = jnp.linspace(-1, 1, 6, dtype=jnp.float32).reshape(2, 3)

  class MLP(nnx.Module):
    def __init__(self, rngs):
      self.l1 = nnx.Linear(3, 4, rngs=rngs)
      self.bn = nnx.BatchNorm(4, rngs=rngs)
      self.l2 = nnx.Linear(4, 2, rngs=rngs)
    def __call__(self, x):
      return self.l2(nnx.relu(self.bn(self.l1(x))))

  model = MLP(nnx.Rngs(0))
  _, state = nnx.split(model)
  ck = ocp.StandardCheckpointer()
  ck.save(os.path.join(root, "nnx"), state)
  ck.wait_until_finished()
  graphdef, abstract_state = nnx.split(nnx.eval_shape(lambda: MLP(nnx.Rngs(1))))
  restored = ck.restore(os.path.join(root, "nnx"), abstract_state)
  model2 = nnx.merge(graphdef, restored)
  out["nnx_equal"] = all(bool(np.array_equal(a, b)) for a, b in
                         zip(jax.tree.leaves(nnx.state(model2)), jax.tree.leaves(state)))
  out["nnx_out"] = np.asarray(model2(x)).tolist()
  out["nnx_leaves"] = sorted(str(v.dtype) + str(v.shape) for v in jax.tree.leaves(restored))

  class Dense(nn.Module):
    @nn.compact
    def __call__(self, x):
      return nn.Dense(2)(nn.tanh(nn.Dense(4)(x)))

  m = Dense()
  def create(seed):
    return train_state.TrainState.create(apply_fn=m.apply, params=m.init(jax.random.key(seed), x),
                                         tx=optax.adam(0.1))
  def loss(p):
    return jnp.mean(m.apply(p, x) ** 2)
  @jax.jit
  def step(s):
    return s.apply_gradients(grads=jax.grad(loss)(s.params))
  st = step(create(0))
  mgr = ocp.CheckpointManager(os.path.join(root, "ts"))
  mgr.save(1, args=ocp.args.StandardSave(st))
  mgr.wait_until_finished()
  back = mgr.restore(1, args=ocp.args.StandardRestore(create(1)))
  mgr.close()
  out["ts_step"] = int(back.step)
  out["ts_equal"] = all(bool(np.array_equal(a, b))
                        for a, b in zip(jax.tree.leaves(back), jax.tree.leaves(st)))
  out["ts_types"] = [[type(a).__name__, str(np.asarray(a).dtype)] for a in jax.tree.leaves(back)]
  out["ts_next_loss"] = [float(loss(step(back).params)), float(loss(step(st).params))]
  print(json.dumps(out))
"""


def test_orbax_flax_nnx_and_linen_train_state_match_jax(tmp_path):
  """A flax.nnx model's state restored into an abstract model, and a
  flax.linen TrainState with Adam restored over a fresh one: both equal
  what was saved, and training goes on from them as from the originals."""
  require("orbax.checkpoint")
  require("flax")
  got, want = run_on_both(FLAX, tmp_path)
  assert got["nnx_equal"] and got["ts_equal"] and got["ts_step"] == 1
  assert got["ts_next_loss"][0] == got["ts_next_loss"][1]
  if want is not None:
    assert got["nnx_leaves"] == want["nnx_leaves"]
    assert [t[1] for t in got["ts_types"]] == [t[1] for t in want["ts_types"]]
    np.testing.assert_allclose(got["nnx_out"], want["nnx_out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["ts_next_loss"], want["ts_next_loss"], rtol=1e-5)
