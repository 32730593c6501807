"""Which jaxprs may run their first calls on the NumPy tier.

A jitted function must give the same bits on every call, whichever backend
computes it (README: "Compilation is tiered").  The NumPy tier may stand in
for the compiled C code only where both compute exactly the same thing:
correctly rounded arithmetic, comparisons, data movement, integer code, and
the float reductions (both backends sum in ``lax.reduction_order``'s fixed
order), cumulative sums and products (``lax.scan_order``'s), float32 exp, log, logistic and tanh (the C code's ``pj_``
helpers, whose NumPy twins in ``lax/math_f32.py`` are the primitives'
``jit_impl``), and float32 erf (its C code is the NumPy impl step for step,
``cpu/erf_c.py``).  Other transcendental functions are not on the list: the C
code's (glibc, libmvec) and NumPy's own SIMD versions round differently in
the last ulp; nor are matrix products (NumPy's BLAS and SciPy's), sorting,
the other cumulative reductions and library calls.  A jaxpr using any of those compiles before its first call.
"""
import numpy as np

from purejax._src.jaxpr import sub_jaxprs
from purejax._src.lax import reduction_order

# Primitives whose NumPy impl and C code agree bit for bit (on half floats
# too: both compute in float32 and round once, except where listed below).
SAME_IN_BOTH = frozenset("""
  add sub mul div neg abs sign max min sqrt rsqrt square integer_pow floor ceil round
  is_finite nextafter rem clamp select_n eq ne lt le gt ge and or not xor
  shift_left shift_right_logical shift_right_arithmetic population_count clz
  convert_element_type bitcast_convert_type broadcast_in_dim reshape transpose squeeze
  expand_dims slice dynamic_slice dynamic_update_slice concatenate pad rev iota
  reduce_sum reduce_prod reduce_max reduce_min reduce_and reduce_or reduce_xor
  argmax argmin stop_gradient copy copy_p gather threefry2x32 random_bits random_wrap
  random_unwrap random_seed pjit jit closed_call core_call custom_jvp_call
  custom_vjp_call custom_vjp_call_jaxpr remat remat2 checkpoint scan while cond
  optimization_barrier cumsum cumprod
""".split())


# Primitives that both tiers compute bit for bit on float32 operands only.
SAME_IN_BOTH_FLOAT32 = frozenset(("exp", "log", "logistic", "tanh", "erf"))
# Not on half floats: the NumPy impl rounds to the half type twice (1 / sqrt
# x), the C code once.
NOT_SAME_ON_HALF = frozenset(("rsqrt",))


def _has_half(eqn):
  return any(np.dtype(v.aval.dtype) in reduction_order.HALF_DTYPES
             for v in list(eqn.invars) + list(eqn.outvars) if hasattr(v.aval, "dtype"))


def _same_in_both(eqn):
  name = eqn.primitive.name
  if name in NOT_SAME_ON_HALF and _has_half(eqn):
    return False
  if name in SAME_IN_BOTH:
    return True
  return name in SAME_IN_BOTH_FLOAT32 and all(
      np.dtype(v.aval.dtype) == np.float32 for v in eqn.invars)


def _c_types_only(eqn):
  """No complex results (their C code and NumPy's may round differently)."""
  return all(np.dtype(v.aval.dtype).kind != "c" for v in eqn.outvars
             if hasattr(v.aval, "dtype"))


def numpy_tier_exact(jaxpr, _memo=None):
  """Whether the NumPy backend computes ``jaxpr`` bit for bit as the C code."""
  for e in jaxpr.eqns:
    if not _same_in_both(e) or not _c_types_only(e):
      return False
    if not all(numpy_tier_exact(j) for j in sub_jaxprs(e.params)):
      return False
  return True
