"""jraph, unedited, on purejax (``python -m purejax``): GraphsTuples batched
and padded, a GraphNetwork (segment_sum, segment_mean) trained with optax
under jit on the padded batch, GraphConvolution, GAT and jraph's segment
operations, compared with NumPy and with JAX. Needs the ``ecosystem`` extra:
skipped without it, except under CI (the CI variable set)."""
import numpy as np
import pytest

from tests.ecosystem import require, run_on_both

pytestmark = pytest.mark.ecosystem

PROGRAM = """
  import json
  import numpy as np
  import jax, jax.numpy as jnp
  import jraph, optax

  def make_graph(n_node, n_edge, seed):
    rng = np.random.RandomState(seed)
    return jraph.GraphsTuple(
        nodes=jnp.asarray(rng.normal(size=(n_node, 4)).astype(np.float32)),
        edges=jnp.asarray(rng.normal(size=(n_edge, 2)).astype(np.float32)),
        senders=jnp.asarray(rng.randint(0, n_node, n_edge).astype(np.int32)),
        receivers=jnp.asarray(rng.randint(0, n_node, n_edge).astype(np.int32)),
        globals=jnp.asarray(rng.normal(size=(1, 3)).astype(np.float32)),
        n_node=jnp.asarray([n_node]), n_edge=jnp.asarray([n_edge]))

  batch = jraph.batch([make_graph(5, 8, 0), make_graph(3, 4, 1), make_graph(6, 10, 2)])
  padded = jraph.pad_with_graphs(batch, n_node=20, n_edge=30, n_graph=4)
  mask = jraph.get_graph_padding_mask(padded)
  out = {"nodes": padded.nodes, "n_node": padded.n_node, "n_edge": padded.n_edge, "mask": mask,
         "senders": padded.senders, "receivers": padded.receivers,
         "unbatched": [int(g.n_node[0]) for g in jraph.unbatch(jraph.unpad_with_graphs(padded))]}

  def dense(key, n_in, n_out):
    return {"w": jax.random.normal(key, (n_in, n_out)) / np.sqrt(n_in), "b": jnp.zeros(n_out)}
  def apply(p, x):
    return x @ p["w"] + p["b"]
  keys = jax.random.split(jax.random.key(0), 3)
  params = {"edge": dense(keys[0], 13, 8), "node": dense(keys[1], 23, 8), "glob": dense(keys[2], 19, 2)}

  def net(params, graph):
    cat = lambda *xs: jnp.concatenate(xs, -1)
    gn = jraph.GraphNetwork(
        update_edge_fn=lambda e, s, r, g: jax.nn.relu(apply(params["edge"], cat(e, s, r, g))),
        update_node_fn=lambda n, s, r, g: jax.nn.relu(apply(params["node"], cat(n, s, r, g))),
        update_global_fn=lambda n, e, g: apply(params["glob"], cat(n, e, g)),
        aggregate_edges_for_nodes_fn=jraph.segment_sum,
        aggregate_nodes_for_globals_fn=jraph.segment_mean)
    return gn(graph).globals

  labels = jnp.array([0, 1, 0, 0])
  def loss(params, graph):
    ce = optax.softmax_cross_entropy_with_integer_labels(net(params, graph), labels)
    return jnp.sum(ce * mask) / jnp.sum(mask)   # padding graphs do not count

  opt = optax.adam(1e-2)
  state = opt.init(params)
  @jax.jit
  def step(params, state, graph):
    value, grads = jax.value_and_grad(loss)(params, graph)
    updates, state = opt.update(grads, state, params)
    return optax.apply_updates(params, updates), state, value
  losses = []
  for _ in range(15):
    params, state, value = step(params, state, padded)
    losses.append(float(value))
  out["losses"] = losses

  gcn = jraph.GraphConvolution(update_node_fn=lambda n: n * 2.0, add_self_edges=True,
                               symmetric_normalization=True)
  out["gcn"] = jax.jit(gcn)(padded).nodes
  gat = jraph.GAT(attention_query_fn=lambda n: n * 2.0,
                  attention_logit_fn=lambda s, r, e: jnp.sum(s * r, -1, keepdims=True),
                  node_update_fn=None)
  out["gat"] = gat(padded).nodes
  ids = jnp.array([0, 0, 1, 2, 2, 2])
  v = jnp.array([1.0, 5.0, 2.0, -1.0, 3.0, 0.5])
  for name in ("segment_max", "segment_min_or_constant", "segment_softmax", "segment_variance",
               "segment_normalize"):
    out[name] = getattr(jraph, name)(v, ids, 4)
  out = jax.tree.map(lambda x: np.asarray(x).tolist() if isinstance(x, (jax.Array, np.ndarray)) else x, out)
  print(json.dumps({"jax": jax.__name__, **out}))
"""


def _gcn_reference(nodes, senders, receivers):
  """GraphConvolution with self edges and symmetric normalization, in float64."""
  n = len(nodes)
  senders = np.concatenate([senders, np.arange(n)])
  receivers = np.concatenate([receivers, np.arange(n)])
  h = 2.0 * nodes
  out_deg = np.bincount(senders, minlength=n)
  in_deg = np.bincount(receivers, minlength=n)
  msg = h[senders] / np.sqrt(np.maximum(out_deg, 1))[senders, None]
  agg = np.zeros_like(h)
  np.add.at(agg, receivers, msg)
  return agg / np.sqrt(np.maximum(in_deg, 1))[:, None]


def test_jraph_graph_network_matches_jax(tmp_path):
  require("jraph")
  require("optax")
  got, want = run_on_both(PROGRAM, tmp_path)
  assert got["n_node"] == [5, 3, 6, 6] and got["n_edge"] == [8, 4, 10, 8]
  assert got["mask"] == [True, True, True, False]
  assert got["unbatched"] == [5, 3, 6]
  # The padding graph's edges connect its own nodes (the last ones).
  assert set(got["senders"][22:]) == {14} and set(got["receivers"][22:]) == {14}
  assert got["losses"][-1] < got["losses"][0]
  gcn = _gcn_reference(np.array(got["nodes"]), np.array(got["senders"]), np.array(got["receivers"]))
  np.testing.assert_allclose(got["gcn"], gcn, rtol=1e-5, atol=1e-6)
  ids, v = np.array([0, 0, 1, 2, 2, 2]), np.array([1.0, 5.0, 2.0, -1.0, 3.0, 0.5])
  segments = [v[ids == i] for i in range(3)]
  np.testing.assert_allclose(got["segment_max"], [5, 2, 3, -np.inf])
  np.testing.assert_allclose(got["segment_min_or_constant"], [1, 2, -1, 0])
  softmax = np.concatenate([np.exp(s - s.max()) / np.exp(s - s.max()).sum() for s in segments])
  np.testing.assert_allclose(got["segment_softmax"], softmax, rtol=1e-6)
  np.testing.assert_allclose(got["segment_variance"], [s.var() for s in segments] + [0], rtol=1e-6)
  if want is not None:
    for key in ("nodes", "n_node", "n_edge", "mask", "senders", "receivers", "unbatched", "segment_max",
                "segment_min_or_constant"):
      assert got[key] == want[key], key
    for key in ("losses", "gcn", "gat", "segment_softmax", "segment_variance", "segment_normalize"):
      np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-6, err_msg=key)
