"""lax.psend and lax.precv: staged as JAX stages them; running them raises
JAX's NotImplementedError on the CPU (JAX implements them on GPUs only)."""
import numpy as np
import pytest

import purejax as jax
from purejax import lax
from purejax._src.mesh import Mesh, PartitionSpec as P

from tests.jax_devices_oracle import jax_stdout

PERM = [(0, 1), (1, 0)]


def body(x):
  token = lax.psend(x, "i", PERM)
  return lax.precv(token, jax.ShapeDtypeStruct(x.shape, x.dtype), "i", PERM)


def test_staged_and_refused_as_jax(cpu_devices):
  mesh = Mesh(np.array(cpu_devices(2)), ("i",))
  f = jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"), check_vma=False)
  x = np.arange(4.0, dtype=np.float32)
  text = str(jax.make_jaxpr(f)(x))
  assert "d:Tok = psend[axis_name=('i',) perm=((0, 1), (1, 0))] c" in text
  assert "out_shape=float32[2]" in text
  want = jax_stdout("""
import numpy as np, jax
from jax.sharding import PartitionSpec as P
mesh = jax.make_mesh((2,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
def body(x):
  t = jax.lax.psend(x, "i", [(0, 1), (1, 0)])
  return jax.lax.precv(t, jax.ShapeDtypeStruct(x.shape, x.dtype), "i", [(0, 1), (1, 0)])
f = jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"), check_vma=False)
try:
  jax.jit(f)(np.arange(4.0, dtype=np.float32))
except Exception as e:
  print(type(e).__name__, e)
""", 2)
  with pytest.raises(NotImplementedError) as got:
    jax.jit(f)(x)
  assert want == f"NotImplementedError {got.value}"


def test_unbound_axis_name():
  with pytest.raises(NameError):
    jax.make_jaxpr(lambda x: lax.psend(x, "i", PERM))(np.ones(2, np.float32))
