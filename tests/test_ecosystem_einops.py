"""einops, unedited, on purejax (``python -m purejax``): rearrange, reduce,
repeat, einsum, pack/unpack and parse_shape on jax arrays, eagerly and under
jit, grad and vmap, and einops.layers.flax in a flax.linen model, compared
with NumPy and with JAX. Needs the ``ecosystem`` extra: skipped without it,
except under CI (the CI variable set)."""
import numpy as np
import pytest

from tests.ecosystem import require, run_on_both

pytestmark = pytest.mark.ecosystem

PROGRAM = """
  import json
  import numpy as np
  import jax, jax.numpy as jnp
  import einops
  from einops import pack, rearrange, reduce, repeat, unpack
  import flax.linen as nn
  from einops.layers.flax import Rearrange, Reduce

  x = jnp.arange(2 * 3 * 4 * 5, dtype=jnp.float32).reshape(2, 3, 4, 5) * 0.1
  out = {}
  out["rearrange"] = rearrange(x, "b c h w -> b (h w) c")
  out["reduce_max"] = reduce(x, "b c (h h2) w -> b c h w", "max", h2=2)
  out["reduce_mean"] = reduce(x, "b c h w -> c", "mean")
  out["repeat"] = repeat(x[0, 0], "h w -> h w r", r=2)
  out["einsum"] = einops.einsum(x, x, "b c h w, b c h v -> b w v")
  packed, shapes = pack([x[:, 0], x[:, :, 0, 0]], "b *")
  first, second = unpack(packed, shapes, "b *")
  out["pack"] = packed
  out["unpack"] = [first, second]
  out["jit"] = jax.jit(lambda t: rearrange(reduce(t, "b c h w -> b h w", "sum"), "b h w -> (b h) w"))(x)
  out["grad"] = jax.grad(lambda t: jnp.sum(reduce(rearrange(t, "b c h w -> b (c h) w") ** 2, "b k w -> w", "max")))(x)
  out["vmap"] = jax.vmap(lambda t: rearrange(t, "c h w -> (w c) h"))(x)
  out["parse_shape"] = list(einops.parse_shape(x, "b c _ w").items())

  class Model(nn.Module):
    @nn.compact
    def __call__(self, t):
      t = Rearrange("b c h w -> b h w c")(t)
      t = nn.Dense(3)(t)
      return Reduce("b h w c -> b c", "mean")(t)
  model = Model()
  params = model.init(jax.random.key(0), x)
  out["flax"] = model.apply(params, x)
  out = jax.tree.map(lambda v: np.asarray(v).tolist() if isinstance(v, jax.Array) else v, out)
  print(json.dumps({"jax": jax.__name__, **out}))
"""


def test_einops_matches_numpy_and_jax(tmp_path):
  require("einops")
  require("flax")
  got, want = run_on_both(PROGRAM, tmp_path)
  x = (np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5) * np.float32(0.1))
  # Data movement is exact; reductions are float32 sums.
  np.testing.assert_array_equal(got["rearrange"], x.transpose(0, 2, 3, 1).reshape(2, 20, 3))
  np.testing.assert_array_equal(got["reduce_max"], x.reshape(2, 3, 2, 2, 5).max(3))
  np.testing.assert_allclose(got["reduce_mean"], x.mean((0, 2, 3)), rtol=1e-6)
  np.testing.assert_array_equal(got["repeat"], np.repeat(x[0, 0][..., None], 2, -1))
  np.testing.assert_allclose(got["einsum"], np.einsum("bchw,bchv->bwv", x, x), rtol=1e-5)
  np.testing.assert_array_equal(got["pack"], np.concatenate([x[:, 0].reshape(2, 20), x[:, :, 0, 0]], 1))
  np.testing.assert_array_equal(got["unpack"][0], x[:, 0])
  np.testing.assert_array_equal(got["unpack"][1], x[:, :, 0, 0])
  np.testing.assert_allclose(got["jit"], x.sum(1).reshape(8, 5), rtol=1e-6)
  np.testing.assert_array_equal(got["vmap"], x.transpose(0, 3, 1, 2).reshape(2, 15, 4))
  y = x.reshape(2, 12, 5)
  expected_grad = np.zeros_like(y)
  for w in range(5):   # the gradient of max over (b, k) of y**2 lands on the argmax
    b, k = np.unravel_index(np.argmax(y[:, :, w] ** 2), (2, 12))
    expected_grad[b, k, w] = 2 * y[b, k, w]
  np.testing.assert_allclose(got["grad"], expected_grad.reshape(x.shape), rtol=1e-6)
  assert got["parse_shape"] == [["b", 2], ["c", 3], ["w", 5]]
  assert np.shape(got["flax"]) == (2, 3)
  if want is not None:
    for key in ("rearrange", "reduce_max", "repeat", "pack", "unpack", "vmap", "parse_shape"):
      assert got[key] == want[key], key
    for key in ("reduce_mean", "einsum", "jit", "grad", "flax"):
      np.testing.assert_allclose(got[key], want[key], rtol=2e-6, atol=1e-6, err_msg=key)
