"""The small public pieces flax takes from JAX: ``interpreters.partial_eval``
(``PartialVal``, ``trace_to_jaxpr_nounits``), ``extend.core``'s
``get_opaque_trace_state``, ``extend.source_info_util.register_exclusion``,
``experimental.layout.Format``, ``jax.api_util`` as an attribute, and
``eval_shape`` of ``ShapedArray`` arguments (``nn.ConvLocal``)."""
import os
import subprocess
import sys

import pytest

import numpy as np

import purejax as jax
import purejax.numpy as jnp
from purejax.experimental.layout import Format, Layout
from purejax.extend import core as ext_core
from purejax.extend import linear_util as lu
from purejax.extend import source_info_util
from purejax.interpreters import partial_eval as pe


def test_known_outputs_are_computed_unknown_ones_typed():
  f = lu.wrap_init(lambda a, b: [a * 2, jnp.sin(b) + 1, a + b], debug_info=None)
  b = np.arange(3.0, dtype=np.float32)
  aval = jax.core.ShapedArray((3,), np.float32)
  jaxpr, outs, _ = pe.trace_to_jaxpr_nounits(f, [pe.PartialVal.unknown(aval),
                                                 pe.PartialVal.known(b)])
  assert [o.is_known() for o in outs] == [False, True, False]
  assert outs[0][0] == aval and outs[2].get_aval() == aval
  np.testing.assert_allclose(outs[1].get_known(), np.sin(b) + 1, rtol=1e-6)
  assert len(jaxpr.invars) == 1
  _, outs, _ = pe.trace_to_jaxpr_nounits(f, [pe.PartialVal.unknown(aval),
                                             pe.PartialVal.known(b)], instantiate=True)
  assert not any(o.is_known() for o in outs)


def test_known_outputs_beside_a_key_typed_unknown_input():
  # nn.scan splitting a dropout rng: the scanned inputs include typed keys
  f = lu.wrap_init(lambda keys, b: [jax.random.bits(keys[0]), b * 2.0], debug_info=None)
  keys = jax.random.split(jax.random.key(0), 3)
  _, outs, _ = pe.trace_to_jaxpr_nounits(f, [pe.PartialVal.unknown(jax.typeof(keys)),
                                             pe.PartialVal.known(np.float32(3.0))])
  assert [o.is_known() for o in outs] == [False, True]
  assert float(outs[1].get_known()) == 6.0


def test_api_util_is_an_attribute_of_a_fresh_import():
  done = subprocess.run([sys.executable, "-c", "import purejax; print(purejax.api_util.debug_info)"],
                        capture_output=True, text=True)
  assert done.returncode == 0, done.stderr


def test_tracing_takes_abstract_arguments_a_call_refuses_them():
  class Like:   # anything with a shape and a dtype
    shape, dtype = (2,), np.dtype(np.float64)
  f = lambda a: a * 2
  aval = jax.core.ShapedArray((2, 3), np.float32, weak_type=True)
  assert jax.eval_shape(f, aval) == jax.ShapeDtypeStruct((2, 3), np.float32, weak_type=True)
  assert jax.eval_shape(f, Like()) == jax.ShapeDtypeStruct((2,), np.float32)
  assert jax.jit(f).trace(aval).out_info.shape == (2, 3)
  assert jax.make_jaxpr(f)(Like()).in_avals[0].shape == (2,)
  # JAX's messages: a ShapeDtypeStruct by name and shape, others by value
  with pytest.raises(TypeError, match=r"^Argument 'a' of shape int32\[2\] of type "
                     r"<class '.*ShapeDtypeStruct'> is not a valid JAX type\.$"):
    jax.jit(f)(jax.ShapeDtypeStruct((2,), np.int32))
  for arg in (aval, Like()):
    with pytest.raises(TypeError) as refused:
      jax.jit(f)(arg)
    assert str(refused.value) == f"Argument '{arg}' of type {type(arg)} is not a valid JAX type."


def test_opaque_trace_state_tells_traces_apart():
  outside = ext_core.get_opaque_trace_state(convention="flax")
  assert outside == ext_core.get_opaque_trace_state()
  inside = []
  jax.jit(lambda x: inside.append(ext_core.get_opaque_trace_state()) or x)(1.0)
  assert inside[0] != outside


def test_registered_paths_are_not_the_users_code(tmp_path):
  lib = tmp_path / "mylib"
  lib.mkdir()
  (lib / "wrap.py").write_text("def call(f, x):\n  return f(x)\n")
  import sys
  sys.path.insert(0, str(tmp_path))
  try:
    from mylib import wrap
    jaxpr = jax.make_jaxpr(lambda x: wrap.call(jnp.sin, x))(1.0)
    assert "wrap.py" in str(jaxpr.eqns[0].source_info.filename)
    source_info_util.register_exclusion(os.path.dirname(wrap.__file__))
    jaxpr = jax.make_jaxpr(lambda x: wrap.call(jnp.sin, x))(1.0)
    assert "wrap.py" not in str(jaxpr.eqns[0].source_info.filename)
  finally:
    sys.path.remove(str(tmp_path))


def test_format_pairs_a_layout_and_a_sharding():
  s = jax.sharding.SingleDeviceSharding(jax.devices()[0])
  f = Format(Layout((1, 0)), s)
  assert f == Format(Layout((1, 0)), s) and f.sharding is s and f.layout.major_to_minor == (1, 0)
