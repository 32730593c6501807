"""Every primitive has the rules the interpreters that exist need."""
import pytest

from purejax import lax
from purejax._src import core
from purejax._src.pjit import pjit_p


def all_primitives():
  prims = {p for module in (lax, lax.linalg) for p in vars(module).values()
           if isinstance(p, core.Primitive)}
  prims.add(pjit_p)
  return sorted(prims, key=lambda p: p.name)


def test_lax_exports_the_primitives():
  names = {p.name for p in all_primitives()}
  for name in ["add", "sin", "convert_element_type", "broadcast_in_dim", "reshape",
               "dot_general", "reduce_sum", "select_n", "dynamic_slice", "jit"]:
    assert name in names


@pytest.mark.parametrize("prim", all_primitives(), ids=lambda p: p.name)
def test_primitive_has_eval_rules(prim):
  assert callable(prim.impl), f"{prim} has no NumPy implementation"
  assert callable(prim.abstract_eval), f"{prim} has no shape/dtype rule"
