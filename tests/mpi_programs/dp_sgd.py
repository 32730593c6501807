"""Data-parallel SGD on a synthetic linear regression, for
tests/test_distributed.py.

    [mpirun -n P] python dp_sgd.py MODE LOCAL_DEVICES OUT_PREFIX

Every process owns LOCAL_DEVICES devices; the global batch is split evenly
over all P * LOCAL_DEVICES devices and the gradients are averaged over the
global axis "batch" at every step.  MODE "pmap" uses ``pmap`` with
``lax.pmean``; MODE "spmd" runs the per-device step with purejax's SPMD
runtime directly (``spmd.run`` + ``Communicator.all_sum``).  Each process
saves the final parameters (and the per-step losses) to OUT_PREFIX<rank>.npz.
"""
import functools
import sys

import numpy as np

import purejax as jax
import purejax.numpy as jnp

MODE, LOCAL, OUT = sys.argv[1], int(sys.argv[2]), sys.argv[3]
BATCH, DIM, STEPS, LR = 64, 8, 20, 0.1

jax.config.update("jax_num_cpu_devices", LOCAL)
jax.distributed.initialize()
me, n_dev = jax.process_index(), jax.device_count()
assert jax.local_device_count() == LOCAL, jax.local_devices()
assert [d.process_index for d in jax.local_devices()] == [me] * LOCAL

rng = np.random.default_rng(0)   # every process makes the same global batch
X = rng.normal(size=(BATCH, DIM)).astype(np.float32)
y = (X @ rng.normal(size=DIM) + 0.5 + 0.1 * rng.normal(size=BATCH)).astype(np.float32)
# This process's share: the shards of its devices (global ids me*L .. me*L+L-1).
ids = [d.id for d in jax.local_devices()]
xs = X.reshape(n_dev, BATCH // n_dev, DIM)[ids]
ys = y.reshape(n_dev, BATCH // n_dev)[ids]


def loss(params, x, t):
  w, b = params
  return jnp.mean((x @ w + b - t) ** 2)


params = (np.zeros(DIM, np.float32), np.zeros((), np.float32))
losses = []

if MODE == "pmap":
  @functools.partial(jax.pmap, axis_name="batch")
  def step(params, x, t):
    value, grads = jax.value_and_grad(loss)(params, x, t)
    grads = jax.lax.pmean(grads, "batch")
    return jax.tree.map(lambda p, g: p - LR * g, params, grads), jax.lax.pmean(value, "batch")

  replicated = jax.tree.map(lambda p: np.stack([p] * LOCAL), params)
  for _ in range(STEPS):
    replicated, value = step(replicated, xs, ys)
    losses.append(np.asarray(value)[0])
  params = jax.tree.map(lambda p: np.asarray(p)[0], replicated)
  copies = jax.tree.map(np.asarray, replicated)
  assert all((c == c[0]).all() for c in jax.tree.leaves(copies))
elif MODE == "spmd":
  from purejax._src import spmd

  grad_fn = jax.jit(jax.value_and_grad(loss))
  grad_fn(params, xs[0], ys[0])   # compile once, before the device threads run it
  comm = spmd.make_communicator(("batch",), (n_dev,), jax.devices())
  assert list(comm.local_positions()) == ids

  def device_step(pos, params, x, t):
    value, grads = grad_fn(params, x, t)
    mean = lambda a: comm.all_sum(pos, np.asarray(a), ("batch",)) / np.float32(n_dev)
    grads = jax.tree.map(mean, grads)
    new = jax.tree.map(lambda p, g: (p - np.float32(LR) * g).astype(np.float32), params, grads)
    return new, mean(value)

  for _ in range(STEPS):
    outs = spmd.run(comm, device_step, [(params, x, t) for x, t in zip(xs, ys)])
    params, value = outs[0]
    losses.append(value)
else:
  raise SystemExit(f"unknown mode {MODE}")

np.savez(f"{OUT}{me}.npz", w=np.asarray(params[0]), b=np.asarray(params[1]),
         losses=np.asarray(losses, np.float32))
jax.distributed.shutdown()
