"""lax.gather and the scatter family: values against a per-window NumPy
reference and against JAX, shape-rule errors, printed jaxprs, derivatives
and batching."""
import warnings

import numpy as np
import pytest

import purejax
from purejax import lax
from purejax import jit, make_jaxpr, vmap
from purejax.test_util import check_grads

GD, SD, Mode = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers, lax.GatherScatterMode


def _jax():
  return pytest.importorskip("jax")


# (operand shape, indices, dimension numbers, slice sizes); indices include
# out-of-bounds and negative starts.
GATHER_CASES = {
    "scalar_rows": ((5,), [[1], [4], [7], [-2]], GD((), (0,), (0,)), (1,)),
    "rows": ((4, 5), [[3], [0], [9]], GD((1,), (0,), (0,)), (1, 5)),
    "windows": ((4, 5), [[1, 2], [3, 4], [-1, 0]], GD((1,), (0,), (0, 1)), (1, 2)),
    "columns_first": ((4, 5), [[[1], [4], [2]], [[0], [6], [3]]], GD((0,), (1,), (1,)),
                      (4, 1)),
    "uncollapsed": ((6,), [[0], [3], [5]], GD((1,), (), (0,)), (3,)),
    "batching": ((3, 4, 5), [[[1], [3]], [[0], [7]], [[2], [2]]],
                 GD((2,), (1,), (1,), (0,), (0,)), (1, 1, 5)),
    "batching_inner": ((3, 4, 5), [[[1], [3], [0]], [[0], [7], [2]]],
                       GD((2,), (1,), (1,), (0,), (1,)), (1, 1, 5)),
    "no_index": ((3, 4), np.zeros((2, 0), np.int32), GD((1, 2), (), ()), (3, 4)),
}


def _starts(indices, b, rank, dn):
  start = [0] * rank
  for k, d in enumerate(dn.start_index_map):
    start[d] = int(indices[b][k])
  for od, idim in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
    start[od] = b[idim]
  return start


def gather_reference(operand, indices, dn, sizes, mode, fill):
  """Gather, one window at a time (XLA's definition)."""
  batch = indices.shape[:-1]
  windows = []
  for b in np.ndindex(*batch):
    start = _starts(indices, b, operand.ndim, dn)
    outside = any(not 0 <= start[d] <= operand.shape[d] - sizes[d] for d in dn.start_index_map)
    start = [min(max(s, 0), n - w) for s, n, w in zip(start, operand.shape, sizes)]
    w = operand[tuple(slice(s, s + n) for s, n in zip(start, sizes))].copy()
    if outside and mode == Mode.FILL_OR_DROP:
      w[...] = fill
    dropped = tuple(dn.collapsed_slice_dims) + tuple(dn.operand_batching_dims)
    windows.append(w.reshape([n for d, n in enumerate(w.shape) if d not in dropped]))
  kept = [n for d, n in enumerate(sizes)
          if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
  out = np.array(windows, operand.dtype).reshape(tuple(batch) + tuple(kept))
  rank = out.ndim
  batch_axes = iter(range(len(batch)))
  window_axes = iter(range(len(batch), rank))
  order = [next(window_axes) if d in dn.offset_dims else next(batch_axes) for d in range(rank)]
  return out.transpose(order)


def _operand(shape, dtype=np.float32):
  return (np.arange(int(np.prod(shape))).reshape(shape) * 1.5 - 4).astype(dtype)


@pytest.mark.parametrize("mode", [Mode.CLIP, Mode.FILL_OR_DROP, Mode.PROMISE_IN_BOUNDS])
@pytest.mark.parametrize("name", sorted(GATHER_CASES))
def test_gather_like_reference(name, mode):
  shape, indices, dn, sizes = GATHER_CASES[name]
  x, idx = _operand(shape), np.asarray(indices, np.int32)
  out = lax.gather(x, idx, dn, sizes, mode=mode, fill_value=-100.0)
  expected = gather_reference(x, idx, dn, sizes, mode, -100.0)
  assert out.shape == expected.shape and out.dtype == np.float32
  np.testing.assert_array_equal(np.asarray(out), expected)
  np.testing.assert_array_equal(
      np.asarray(jit(lambda x, i: lax.gather(x, i, dn, sizes, mode=mode, fill_value=-100.0))(
          x, idx)), expected)


def _inverse(dn):
  return SD(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
            dn.operand_batching_dims, dn.start_indices_batching_dims)


_NP_COMBINE = {"scatter": lambda a, b: b, "scatter_add": np.add, "scatter_sub": np.subtract,
               "scatter_mul": np.multiply, "scatter_min": np.minimum,
               "scatter_max": np.maximum}


def scatter_reference(op, operand, indices, updates, dn, mode):
  """Scatter, one update window at a time (XLA's definition)."""
  out = operand.copy()
  window_dims = tuple(dn.update_window_dims)
  scatter_axes = [d for d in range(updates.ndim) if d not in window_dims]
  moved = updates.transpose(scatter_axes + list(window_dims))
  sizes, kept = [], iter(updates.shape[d] for d in window_dims)
  for d in range(operand.ndim):
    inserted = d in dn.inserted_window_dims or d in dn.operand_batching_dims
    sizes.append(1 if inserted else next(kept))
  for b in np.ndindex(*indices.shape[:-1]):
    start = _starts(indices, b, operand.ndim,
                    GD((), (), dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                       dn.scatter_indices_batching_dims))
    if mode == Mode.CLIP:
      start = [min(max(s, 0), n - w) for s, n, w in zip(start, operand.shape, sizes)]
    elif any(not 0 <= s <= n - w for s, n, w in zip(start, operand.shape, sizes)):
      continue
    at = tuple(slice(s, s + n) for s, n in zip(start, sizes))
    out[at] = _NP_COMBINE[op](out[at], moved[b].reshape(sizes))
  return out


@pytest.mark.parametrize("mode", [Mode.CLIP, Mode.FILL_OR_DROP])
@pytest.mark.parametrize("op", sorted(_NP_COMBINE))
@pytest.mark.parametrize("name", ["scalar_rows", "rows", "windows", "columns_first",
                                  "batching", "batching_inner"])
def test_scatter_like_reference(name, op, mode):
  shape, indices, gdn, sizes = GATHER_CASES[name]
  x, idx, dn = _operand(shape), np.asarray(indices, np.int32), _inverse(GATHER_CASES[name][2])
  out_shape = gather_reference(x, idx, gdn, sizes, Mode.CLIP, 0).shape
  updates = (np.arange(int(np.prod(out_shape))).reshape(out_shape) % 7 - 3).astype(np.float32)
  out = getattr(lax, op)(x, idx, updates, dn, mode=mode)
  expected = scatter_reference(op, x, idx, updates, dn, mode)
  assert out.shape == x.shape and out.dtype == x.dtype
  np.testing.assert_array_equal(np.asarray(out), expected)


def test_repeated_indices_accumulate_or_last_wins():
  dn = SD((), (0,), (0,))
  idx = np.array([[1], [1], [3], [1]], np.int32)
  upd = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
  x = np.zeros(5, np.float32)
  assert lax.scatter_add(x, idx, upd, dn).tolist() == [0, 7, 0, 3, 0]
  assert lax.scatter_mul(x + 2, idx, upd, dn).tolist() == [2, 16, 2, 6, 2]
  assert lax.scatter(x, idx, upd, dn).tolist() == [0, 4, 0, 3, 0]
  assert lax.scatter_max(x, idx, -upd, dn).tolist() == [0, 0, 0, 0, 0]
  applied = lax.scatter_apply(x + 1, idx, lambda v: v * 3, dn, update_shape=(4,))
  assert applied.tolist() == [1, 27, 1, 3, 1]
  ints = lax.scatter_add(np.zeros(3, np.int8), np.array([[0]] * 3, np.int32),
                         np.array([100, 100, 100], np.int8), dn)
  assert ints.dtype == np.int8 and ints.tolist() == [44, 0, 0]   # wraps around


def test_mode_from_any():
  assert Mode.from_any(None) is Mode.FILL_OR_DROP
  assert Mode.from_any("fill") is Mode.FILL_OR_DROP is Mode.from_any("drop")
  assert Mode.from_any("clip") is Mode.CLIP
  assert Mode.from_any("promise_in_bounds") is Mode.PROMISE_IN_BOUNDS
  assert Mode.from_any(Mode.CLIP) is Mode.CLIP
  with pytest.raises(ValueError, match='Unknown gather mode "wrap"'):
    Mode.from_any("wrap")


def test_gather_default_fill_values():
  dn, idx = GD((), (0,), (0,)), np.array([[5]], np.int32)
  assert np.isnan(float(lax.gather(np.ones(3, np.float32), idx, dn, (1,), mode="fill")[0]))
  assert int(lax.gather(np.ones(3, np.int32), idx, dn, (1,), mode="fill")[0]) == -2 ** 31
  assert int(lax.gather(np.ones(3, np.uint8), idx, dn, (1,), mode="fill")[0]) == 255
  assert bool(lax.gather(np.zeros(3, bool), idx, dn, (1,), mode="fill")[0]) is True


# ---------------------------------------------------------------------------
# Against JAX: values, errors, printed jaxprs

@pytest.mark.oracle
@pytest.mark.parametrize("name", ["rows", "windows", "batching_inner"])
def test_gather_and_scatter_like_oracle(name):
  jax = _jax()
  shape, indices, dn, sizes = GATHER_CASES[name]
  x, idx = _operand(shape), np.asarray(indices, np.int32)
  for mode in ["clip", "fill", None]:
    ours = lax.gather(x, idx, dn, sizes, mode=mode)
    theirs = jax.lax.gather(x, idx, jax.lax.GatherDimensionNumbers(*dn), sizes, mode=mode)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    upd = np.ones(ours.shape, np.float32)
    for op in ["scatter", "scatter_add", "scatter_min"]:
      ours = getattr(lax, op)(x, idx, upd, _inverse(dn), mode=mode)
      theirs = getattr(jax.lax, op)(x, idx, upd, jax.lax.ScatterDimensionNumbers(*_inverse(dn)),
                                    mode=mode)
      np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def _error(fun):
  try:
    fun()
  except (TypeError, ValueError) as e:
    return type(e), str(e).split("\n")[0]
  return None


GATHER_ERRORS = [
    ((4, 5), (2, 1), GD((1,), (0,), (0,)), (2, 5)),      # collapsed dim with bound 2
    ((4, 5), (2, 1), GD((1,), (0,), (0,)), (1, 6)),      # slice size out of range
    ((4, 5), (2, 2), GD((1,), (0,), (0,)), (1, 5)),      # start_index_map too short
    ((4, 5), (2, 1), GD((2,), (0,), (0,)), (1, 5)),      # offset dim out of bounds
    ((4, 5), (2, 1), GD((1,), (1, 0), (0,)), (1, 1)),    # unsorted collapsed dims
    ((4, 5), (2, 1), GD((1,), (0,), (0,)), (1, 5, 1)),   # one slice size too many
    ((3, 4), (2, 1), GD((1,), (1,), (1,), (0,), (0,)), (1, 1)),  # batch shapes differ
]


@pytest.mark.oracle
@pytest.mark.parametrize("case", range(len(GATHER_ERRORS)))
def test_gather_errors_like_oracle(case):
  jax = _jax()
  shape, ishape, dn, sizes = GATHER_ERRORS[case]
  x, idx = np.ones(shape, np.float32), np.zeros(ishape, np.int32)
  theirs = _error(lambda: jax.lax.gather(x, idx, jax.lax.GatherDimensionNumbers(*dn), sizes))
  assert theirs is not None
  assert _error(lambda: lax.gather(x, idx, dn, sizes)) == theirs
  float_idx = idx.astype(np.float32)
  assert _error(lambda: lax.gather(x, float_idx, GD((1,), (0,), (0,)), (1,) + shape[1:])) == \
      _error(lambda: jax.lax.gather(x, float_idx, jax.lax.GatherDimensionNumbers((1,), (0,), (0,)),
                                    (1,) + shape[1:]))


SCATTER_ERRORS = [
    ((4, 5), (2, 1), (2, 5), SD((1,), (0,), (0,)), np.int32),    # dtypes differ
    ((4, 5), (2, 1), (3, 5), SD((1,), (0,), (0,)), np.float32),  # scatter bound differs
    ((4, 5), (2, 1), (2, 6), SD((1,), (0,), (0,)), np.float32),  # window too large
    ((4, 5), (2, 1), (2,), SD((1,), (0,), (0,)), np.float32),    # wrong rank
    ((4, 5), (2, 1), (2, 5), SD((1,), (), (0,)), np.float32),    # window size vs rank
]


@pytest.mark.oracle
@pytest.mark.parametrize("case", range(len(SCATTER_ERRORS)))
def test_scatter_errors_like_oracle(case):
  jax = _jax()
  shape, ishape, ushape, dn, udtype = SCATTER_ERRORS[case]
  x, idx, upd = np.ones(shape, np.float32), np.zeros(ishape, np.int32), np.ones(ushape, udtype)
  theirs = _error(lambda: jax.lax.scatter_add(x, idx, upd,
                                              jax.lax.ScatterDimensionNumbers(*dn)))
  assert theirs is not None
  assert _error(lambda: lax.scatter_add(x, idx, upd, dn)) == theirs


@pytest.mark.oracle
def test_jaxprs_like_oracle():
  jax = _jax()
  dn, sdn = GD((1,), (0,), (0,)), SD((1,), (0,), (0,))
  jdn, jsdn = jax.lax.GatherDimensionNumbers(*dn), jax.lax.ScatterDimensionNumbers(*sdn)
  x, idx, upd = np.ones((4, 5), np.float32), np.zeros((2, 1), np.int32), np.ones((2, 5),
                                                                                np.float32)
  pairs = [
      (lambda m, d: lambda x, i: m.gather(x, i, d, (1, 5)), dn, jdn),
      (lambda m, d: lambda x, i: m.gather(x, i, d, (1, 5), mode="fill", fill_value=2), dn, jdn),
      (lambda m, d: lambda x, i: m.scatter_add(x, i, upd, d), sdn, jsdn),
      (lambda m, d: lambda x, i: m.scatter_max(x, i, upd, d, mode="clip"), sdn, jsdn),
      (lambda m, d: lambda x, i: m.scatter(x, i, upd, d, unique_indices=True), sdn, jsdn),
      (lambda m, d: lambda x, i: m.scatter_apply(x, i, m.exp, d, update_shape=(2, 5)), sdn,
       jsdn),
  ]
  for make, ours_dn, their_dn in pairs:
    expected = str(jax.make_jaxpr(make(jax.lax, their_dn))(x, idx))
    assert str(make_jaxpr(make(lax, ours_dn))(x, idx)) == expected


# ---------------------------------------------------------------------------
# Derivatives and batching

def _f64(shape, seed=0):
  return np.random.RandomState(seed).randn(*shape)


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather_grads(x64, mode):
  shape, indices, dn, sizes = GATHER_CASES["windows"]
  idx = np.asarray(indices, np.int32)
  check_grads(lambda x: lax.gather(x, idx, dn, sizes, mode=mode, fill_value=0.0),
              (_f64(shape),), order=2, modes=("fwd", "rev"))
  shape, indices, dn, sizes = GATHER_CASES["batching"]
  check_grads(lambda x: lax.gather(x, np.asarray(indices, np.int32), dn, sizes, mode=mode,
                                   fill_value=0.0),
              (_f64(shape),), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("op", ["scatter_add", "scatter_sub", "scatter_min", "scatter_max",
                                "scatter"])
def test_scatter_grads_with_repeated_indices(x64, op):
  dn = SD((1,), (0,), (0,))
  idx = np.array([[1], [3], [1], [7]], np.int32)      # repeats and one dropped
  x, upd = _f64((5, 3)), _f64((4, 3), 1)
  check_grads(lambda x, u: getattr(lax, op)(x, idx, u, dn), (x, upd), order=2,
              modes=("fwd", "rev"))


def test_scatter_mul_grads_need_unique_indices(x64):
  dn = SD((1,), (0,), (0,))
  idx = np.array([[1], [3]], np.int32)
  x, upd = _f64((5, 3)), _f64((2, 3), 1)
  check_grads(lambda x, u: lax.scatter_mul(x, idx, u, dn, unique_indices=True), (x, upd),
              order=2, modes=("fwd", "rev"))
  check_grads(lambda x: lax.scatter_mul(x, idx, upd, dn), (x,), order=1, modes=("rev",))
  with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
    purejax.grad(lambda u: lax.scatter_mul(x, idx, u, dn).sum())(upd)
  with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
    purejax.jvp(lambda x: lax.scatter_apply(x, idx, lax.sin, dn,
                                            update_shape=(2, 3)), (x,), (x,))


@pytest.mark.oracle
def test_extremum_and_set_jvp_ties_like_oracle():
  jax = _jax()
  dn = SD((), (0,), (0,))
  idx = np.array([[1], [1], [2], [0]], np.int32)
  x = np.array([1.0, 2.0, 0.0], np.float32)
  upd = np.array([2.0, 2.0, -1.0, 5.0], np.float32)
  tx, tu = np.array([1.0, 10.0, 100.0], np.float32), np.array([1.0, 2.0, 3.0, 4.0], np.float32)
  for op in ["scatter_max", "scatter_min", "scatter"]:
    ours = purejax.jvp(lambda x, u: getattr(lax, op)(x, idx, u, dn), (x, upd), (tx, tu))
    theirs = jax.jvp(lambda x, u: getattr(jax.lax, op)(x, idx, u, jax.lax.ScatterDimensionNumbers(
        *dn)), (x, upd), (tx, tu))
    for a, b in zip(ours, theirs):
      np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0), (1, 0)])
def test_gather_vmap(axes):
  shape, indices, dn, sizes = GATHER_CASES["windows"]
  xs = np.stack([_operand(shape) + k for k in range(3)], axes[0] or 0)
  idx = np.asarray(indices, np.int32)
  idxs = np.stack([np.roll(idx, k, 0) for k in range(3)])
  f = lambda x, i: lax.gather(x, i, dn, sizes, mode="fill", fill_value=-1.0)   # noqa: E731
  x_arg = xs if axes[0] is not None else xs.take(0, 0)
  i_arg = idxs if axes[1] is not None else idx
  out = vmap(f, axes)(x_arg, i_arg)
  expected = np.stack([f(np.take(x_arg, k, axes[0]) if axes[0] is not None else x_arg,
                         i_arg[k] if axes[1] is not None else i_arg) for k in range(3)])
  np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("op", ["scatter", "scatter_add", "scatter_mul", "scatter_max"])
@pytest.mark.parametrize("axes", [(0, None, None), (None, 0, None), (None, None, 0),
                                  (0, 0, 0), (1, None, 0)])
def test_scatter_vmap(op, axes):
  dn = SD((1,), (0,), (0,))
  x, idx, upd = _operand((4, 3)), np.array([[1], [3], [1], [5]], np.int32), _operand((4, 3)) / 5
  stacked = [np.stack([a + k for k in range(3)], ax or 0) if ax is not None else a
             for a, ax in zip((x, idx, upd), axes)]
  stacked[1] = np.stack([np.roll(idx, k, 0) for k in range(3)]) if axes[1] is not None else idx
  f = lambda x, i, u: getattr(lax, op)(x, i, u, dn)   # noqa: E731
  out = vmap(f, axes)(*stacked)
  pick = lambda a, ax, k: a if ax is None else np.take(a, k, ax)   # noqa: E731
  expected = np.stack([f(*[pick(a, ax, k) for a, ax in zip(stacked, axes)]) for k in range(3)])
  np.testing.assert_array_equal(np.asarray(out), expected)


def test_scatter_transposes_to_gather_and_back(x64):
  # grad of a gather is a scatter-add; grad of that scatter-add is a gather.
  dn = GD((1,), (0,), (0,))
  idx = np.array([[2], [0], [2]], np.int32)
  x = _f64((3, 2))
  g = purejax.grad(lambda x: (lax.gather(x, idx, dn, (1, 2)) ** 2).sum())(x)
  expected = np.zeros_like(x)
  np.add.at(expected, idx[:, 0], 2 * x[idx[:, 0]])
  np.testing.assert_allclose(np.asarray(g), expected)
  text = str(make_jaxpr(purejax.grad(lambda x: lax.gather(x, idx, dn, (1, 2)).sum()))(x))
  assert "scatter-add" in text
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    assert lax.index_take(x, (np.array([0, -1]),), (0,)).tolist() == [list(x[0]), list(x[2])]
