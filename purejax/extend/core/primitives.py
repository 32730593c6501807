"""``jax.extend.core.primitives``: JAX's standard primitives, by JAX's names.

Each name is purejax's own primitive object (``add_p is purejax.lax.add_p``),
so a custom interpreter can compare ``eqn.primitive`` with them.  JAX's
``jit_p`` is purejax's ``pjit_p`` (printed ``jit``) and ``add_jaxvals_p`` its
``add_any_p``.  JAX primitives purejax does not have are absent, except
``call_p`` and ``closed_call_p``: purejax stages every call as ``jit_p``, so
no jaxpr of purejax's holds them, but code that walks jaxprs keys its rules
by them (numpyro); binding one raises NotImplementedError.
"""
from purejax.lax import (  # noqa: F401
    abs_p, acos_p, acosh_p, add_p, all_gather_p, all_to_all_p, and_p, approx_top_k_p,
    argmax_p, argmin_p, asin_p, asinh_p, atan2_p, atan_p, atanh_p, axis_index_p,
    bessel_i0e_p, bessel_i1e_p, bitcast_convert_type_p, broadcast_in_dim_p, cbrt_p,
    ceil_p, clamp_p, clz_p, complex_p, concatenate_p, cond_p, conj_p,
    conv_general_dilated_p, convert_element_type_p, copy_p, cos_p, cosh_p,
    cumlogsumexp_p, cummax_p, cummin_p, cumprod_p, cumsum_p, device_put_p, digamma_p,
    div_p, dot_general_p, dynamic_slice_p, dynamic_update_slice_p, eq_p, eq_to_p,
    erf_inv_p, erf_p, erfc_p, exp2_p, exp_p, expm1_p, fft_p, floor_p, gather_p, ge_p,
    gt_p, igamma_grad_a_p, igamma_p, igammac_p, imag_p, integer_pow_p, iota_p,
    is_finite_p, le_p, le_to_p, lgamma_p, linear_solve_p, log1p_p, log_p, logistic_p,
    lt_p, lt_to_p, max_p, min_p, mul_p, ne_p, neg_p, nextafter_p, not_p, or_p, pad_p,
    pmax_p, pmin_p, polygamma_p, population_count_p, pow_p, ppermute_p, psum_p,
    ragged_all_to_all_p, real_p,
    reduce_and_p, reduce_max_p, reduce_min_p, reduce_or_p, reduce_p, reduce_precision_p,
    reduce_prod_p, reduce_sum_p, reduce_window_max_p, reduce_window_min_p,
    reduce_window_p, reduce_window_sum_p, reduce_xor_p, regularized_incomplete_beta_p,
    rem_p, reshape_p, rev_p, rng_bit_generator_p, rng_uniform_p, round_p, rsqrt_p,
    scan_p, scatter_add_p, scatter_max_p, scatter_min_p, scatter_mul_p, scatter_p,
    select_and_gather_add_p, select_and_scatter_add_p, select_n_p,
    sharding_constraint_p, shift_left_p, shift_right_arithmetic_p,
    shift_right_logical_p, sign_p, sin_p, sinh_p, slice_p, sort_p, sqrt_p, square_p,
    squeeze_p, stop_gradient_p, sub_p, tan_p, tanh_p, top_k_p, transpose_p, while_p,
    xor_p, zeta_p)
from purejax._src.lax.linalg import (  # noqa: F401
    cholesky_p, eig_p, eigh_p, householder_product_p, lu_p, qr_p, svd_p,
    triangular_solve_p, tridiagonal_solve_p)
from purejax._src.custom_derivatives import (  # noqa: F401
    custom_jvp_call_p, custom_lin_p, custom_vjp_call_p)
from purejax._src.remat import (  # noqa: F401
    remat_p)
from purejax._src.random.threefry import (  # noqa: F401
    threefry2x32_p)
from purejax._src.random.key_primitives import (  # noqa: F401
    random_bits_p, random_fold_in_p, random_seed_p, random_split_p)
from purejax._src.random.gamma import (  # noqa: F401
    random_gamma_p)
from purejax._src.pjit import pjit_p as jit_p  # noqa: F401
from purejax._src.lax.linalg_extra import tridiagonal_p  # noqa: F401
from purejax._src.lax.tokens import after_all_p, create_token_p  # noqa: F401
from purejax._src.lax.windowed_select_scatter import select_and_scatter_p  # noqa: F401
from purejax._src.interpreters.ad import add_any_p as add_jaxvals_p  # noqa: F401
from purejax._src.lax.linalg_schur import hessenberg_p, schur_p  # noqa: F401
from purejax._src.checkpoint_names import name_p  # noqa: F401
from purejax._src.refs import get_p, swap_p  # noqa: F401


def _never_staged(name):
  """A JAX call primitive that purejax never stages (see the docstring)."""
  from purejax._src import core

  def refuse(*args, **params):
    raise NotImplementedError(f"purejax stages calls as jit_p, not {name}: bind jit_p (or "
                              "call the function under purejax.jit) instead")
  prim = core.Primitive(name, multiple_results=True)
  prim.impl = refuse
  prim.abstract_eval = refuse
  return prim


call_p = _never_staged("call")
closed_call_p = _never_staged("closed_call")
