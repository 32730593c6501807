"""jaxtyping, unedited, on purejax (``python -m purejax``): ``Float[Array,
"b n"]`` annotations checked by ``jaxtyped`` with beartype, eagerly and
under jit, grad and vmap (tracers have shapes and dtypes too), PyTree
annotations and isinstance checks; a wrong shape or dtype raises the same
error as under JAX. Needs the ``ecosystem`` extra: skipped without it, except
under CI (the CI variable set)."""
import pytest

from tests.ecosystem import require, run_on_both

pytestmark = pytest.mark.ecosystem

PROGRAM = """
  import json
  import jax, jax.numpy as jnp
  from beartype import beartype
  from jaxtyping import Array, Float, Int, PyTree, Shaped, jaxtyped

  @jaxtyped(typechecker=beartype)
  def matmul(x: Float[Array, "b n"], y: Float[Array, "n m"]) -> Float[Array, "b m"]:
    return x @ y

  @jaxtyped(typechecker=beartype)
  def total(x: Int[Array, " n"]) -> Int[Array, ""]:
    return jnp.sum(x)

  @jaxtyped(typechecker=beartype)
  def tree_total(p: PyTree[Float[Array, " n"]]) -> Float[Array, ""]:
    return sum(jnp.sum(v) for v in jax.tree_util.tree_leaves(p))

  def error(f, *args):
    try:
      f(*args)
    except Exception as e:
      return [type(e).__module__ + "." + type(e).__qualname__, [c.__name__ for c in type(e).__mro__],
              "b m" in str(e) or "n m" in str(e) or " n" in str(e)]
    return "no error"

  a, b = jnp.ones((2, 3)), jnp.ones((3, 4))
  out = {"eager": matmul(a, b).shape, "jit": jax.jit(matmul)(a, b).shape,
         "grad": jax.grad(lambda t: jnp.sum(matmul(t, b)))(a).tolist(),
         "vmap": jax.vmap(matmul, in_axes=(0, None))(jnp.ones((5, 2, 3)), b).shape,
         "int": int(total(jnp.arange(4))), "tree": float(tree_total({"a": jnp.ones(3), "b": jnp.ones(3)}))}
  out["bad_shape"] = error(matmul, a, jnp.ones((4, 4)))
  out["bad_shape_jit"] = error(jax.jit(matmul), a, jnp.ones((4, 4)))
  out["bad_shape_vmap"] = error(jax.vmap(matmul, in_axes=(0, None)), jnp.ones((5, 2, 3)), jnp.ones((2, 4)))
  out["bad_dtype"] = error(matmul, jnp.ones((2, 3), jnp.int32), b)
  out["bad_int"] = error(total, jnp.arange(4.0))
  out["bad_tree"] = error(tree_total, {"a": jnp.ones(3), "b": jnp.ones(4)})
  out["isinstance"] = [isinstance(a, Float[Array, "2 3"]), isinstance(a, Float[Array, "3 2"]),
                       isinstance(a, Int[Array, "..."]), isinstance(jnp.arange(3), Shaped[Array, "_"]),
                       isinstance(a, Float[jax.Array, "..."]), isinstance(a.astype(jnp.bfloat16), Float[Array, "2 3"])]
  seen = []
  @jax.jit
  def traced(x):
    seen.append([isinstance(x, Float[Array, "2 3"]), isinstance(x, Float[Array, "3 3"])])
    return x
  traced(a)
  out["tracer"] = seen
  print(json.dumps({"jax": jax.__name__, **out}))
"""


def test_jaxtyping_checks_shapes_as_under_jax(tmp_path):
  require("jaxtyping")
  require("beartype")
  got, want = run_on_both(PROGRAM, tmp_path)
  assert got["eager"] == got["jit"] == [2, 4]
  assert got["vmap"] == [5, 2, 4]
  assert got["grad"] == [[4.0] * 3] * 2
  assert (got["int"], got["tree"]) == (6, 6.0)
  for key in ("bad_shape", "bad_shape_jit", "bad_shape_vmap", "bad_dtype", "bad_int", "bad_tree"):
    assert got[key][0] == "jaxtyping.TypeCheckError", key
    assert "TypeError" in got[key][1], key
  assert got["isinstance"] == [True, False, False, True, True, True]
  assert got["tracer"] == [[True, False]]
  if want is not None:
    assert got == dict(want, jax="purejax")
