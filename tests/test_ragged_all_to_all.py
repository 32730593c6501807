"""lax.ragged_all_to_all: row slices of varying length exchanged between the
instances of a named axis, under vmap, eager and jitted shard_map (devices as
threads), and its gradient; against a NumPy reference written from JAX's
description and its documented example (XLA:CPU cannot run JAX's: it has no
CPU implementation of the operation)."""
import numpy as np
import pytest

import purejax as jax
from purejax import lax
from purejax._src.mesh import Mesh, PartitionSpec as P

RNG = np.random.RandomState(0)


def reference(operand, output, input_offsets, send_sizes, output_offsets):
  """Loops: sender s's entry i goes to instance i // per, in sender order."""
  n, k = input_offsets.shape
  per = k // n
  result = output.copy()
  for r in range(n):
    for s in range(n):
      for i in range(r * per, (r + 1) * per):
        a, size, b = input_offsets[s, i], send_sizes[s, i], output_offsets[s, i]
        result[r, b:b + size] = operand[s, a:a + size]
  return result


def case(n, per, rows_in=6, rows_out=9, tail=(3,)):
  """Random slices: each receiver's slices from all senders do not overlap."""
  operand = RNG.randn(n, rows_in, *tail).astype(np.float32)
  output = RNG.randn(n, rows_out, *tail).astype(np.float32)
  sizes = RNG.randint(0, 3, (n, n * per)).astype(np.int32)
  starts = np.array([[RNG.randint(0, rows_in - z + 1) for z in row] for row in sizes], np.int32)
  out_offsets = np.zeros_like(sizes)
  for r in range(n):   # receiver r's slices laid out one after another, shuffled
    entries = [(s, i) for s in range(n) for i in range(r * per, (r + 1) * per)]
    RNG.shuffle(entries)
    at = 0
    for s, i in entries:
      out_offsets[s, i] = at
      at += sizes[s, i]
    assert at <= rows_out
  recv = np.stack([sizes[:, r * per:(r + 1) * per].reshape(-1) for r in range(n)])
  return operand, output, starts, sizes, out_offsets, recv


def vmapped(*args):
  return jax.vmap(lambda *a: lax.ragged_all_to_all(*a, axis_name="i"), axis_name="i")(*args)


@pytest.mark.parametrize("n,per", [(2, 1), (3, 1), (2, 2), (4, 1)])
def test_vmap_matches_the_reference(n, per):
  args = case(n, per)
  want = reference(*args[:5])
  np.testing.assert_array_equal(np.asarray(vmapped(*args)), want)
  np.testing.assert_array_equal(np.asarray(jax.jit(vmapped)(*args)), want)


def test_jaxs_documented_example_and_overlaps():
  operand = np.array([[1, 2, 2], [3, 4, 0]], np.float32)
  output = np.zeros((2, 4), np.float32)
  args = (operand, output, np.array([[0, 1], [0, 1]], np.int32),
          np.array([[1, 2], [1, 1]], np.int32), np.array([[0, 0], [1, 2]], np.int32),
          np.array([[1, 1], [2, 1]], np.int32))
  np.testing.assert_array_equal(np.asarray(vmapped(*args)), [[1, 3, 0, 0], [2, 2, 4, 0]])
  # overlapping slices: the later sender's rows win
  args = (operand, output, np.zeros((2, 2), np.int32), np.full((2, 2), 2, np.int32),
          np.zeros((2, 2), np.int32), np.full((2, 2), 2, np.int32))
  np.testing.assert_array_equal(np.asarray(vmapped(*args)), [[3, 4, 0, 0], [3, 4, 0, 0]])


def test_shard_map_on_devices_eager_and_jitted(cpu_devices):
  n, per = 4, 1
  mesh = Mesh(np.array(cpu_devices(n)), ("i",))
  args = case(n, per)
  want = reference(*args[:5])
  flat = [a.reshape((-1,) + a.shape[2:]) for a in args]
  f = jax.shard_map(lambda *a: lax.ragged_all_to_all(*a, axis_name="i"), mesh=mesh,
                    in_specs=(P("i"),) * 6, out_specs=P("i"))
  for g in (f, jax.jit(f)):
    np.testing.assert_array_equal(np.asarray(g(*flat)).reshape(want.shape), want)


def test_gradient_is_the_transposed_exchange():
  n, per = 3, 1
  args = case(n, per)
  w = RNG.randn(*args[1].shape).astype(np.float32)
  loss = lambda operand, output: (vmapped(operand, output, *args[2:]) * w).sum()
  g_operand, g_output = jax.grad(loss, argnums=(0, 1))(args[0], args[1])
  # the map is linear: its gradient is the reference's transpose, column by column
  eye = lambda shape: np.eye(int(np.prod(shape))).reshape((-1,) + shape)
  op_basis = [reference(e.astype(np.float32), np.zeros_like(args[1]), *args[2:5])
              for e in eye(args[0].shape)]
  out_basis = [reference(np.zeros_like(args[0]), e.astype(np.float32), *args[2:5])
               for e in eye(args[1].shape)]
  np.testing.assert_allclose(np.asarray(g_operand).reshape(-1),
                             [(b * w).sum() for b in op_basis], rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(np.asarray(g_output).reshape(-1),
                             [(b * w).sum() for b in out_basis], rtol=1e-5, atol=1e-6)


def test_errors_as_jax(cpu_devices):
  x = np.zeros((2, 4), np.float32)
  ints = np.zeros((2, 2), np.int32)
  with pytest.raises(ValueError, match="input_offsets must be integer type"):
    vmapped(x, x, ints.astype(np.float32), ints, ints, ints)
  with pytest.raises(ValueError, match="send_sizes must be rank 1"):
    vmapped(x, x, ints, np.zeros((2, 2, 1), np.int32), ints, ints)
  with pytest.raises(NameError):
    lax.ragged_all_to_all(x[0], x[0], ints[0], ints[0], ints[0], ints[0], axis_name="i")
