"""purejax.lax: the primitive operations, with strict dtypes and shapes."""
from purejax._src.lax.api_elementwise import (
    RoundingMethod, abs, acos, acosh, add, asin, asinh, atan, atan2, atanh,
    bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clamp, clz, complex,
    conj, cos, cosh, div, eq, exp, exp2, expm1, floor, ge, gt, imag, integer_pow,
    is_finite, le, log, log1p, logistic, lt, max, min, mul, ne, neg, nextafter,
    population_count, pow, real, reciprocal, rem, round, rsqrt, select, select_n, shift_left,
    shift_right_arithmetic, shift_right_logical, sign, sin, sinh, sqrt, square,
    sub, tan, tanh)
from purejax._src.lax.convert import convert_element_type, convert_element_type_p
from purejax._src.lax.elementwise import (
    abs_p, acos_p, acosh_p, add_p, and_p, asin_p, asinh_p, atan2_p, atan_p, atanh_p,
    cbrt_p, ceil_p, clamp_p, clz_p, complex_p, conj_p, cos_p, cosh_p, div_p, eq_p, exp2_p,
    exp_p, expm1_p, floor_p, ge_p, gt_p, imag_p, integer_pow_p, is_finite_p, le_p,
    log1p_p, log_p, logistic_p, lt_p, max_p, min_p, mul_p, ne_p, neg_p, nextafter_p,
    not_p, or_p, population_count_p, pow_p, real_p, rem_p, round_p, rsqrt_p, select_n_p, shift_left_p,
    shift_right_arithmetic_p, shift_right_logical_p, sign_p, sin_p, sinh_p, sqrt_p,
    square_p, sub_p, tan_p, tanh_p, xor_p)
from purejax._src.lax.structural import (
    broadcast, broadcast_in_dim, broadcast_in_dim_p, broadcast_to_rank, collapse,
    concatenate, concatenate_p, copy_p, expand_dims, pad, pad_p, reshape, reshape_p,
    rev, rev_p, squeeze, squeeze_p, transpose, transpose_p)
from purejax._src.lax.slicing import (
    dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim, dynamic_slice_p,
    dynamic_update_index_in_dim, dynamic_update_slice, dynamic_update_slice_in_dim,
    dynamic_update_slice_p, index_in_dim, slice, slice_in_dim, slice_p)
from purejax._src.lax.creation import broadcasted_iota, full, full_like, iota, iota_p
from purejax._src.lax.reductions import (
    argmax, argmax_p, argmin, argmin_p, reduce, reduce_and, reduce_and_p, reduce_max,
    reduce_max_p, reduce_min, reduce_min_p, reduce_or, reduce_or_p, reduce_p,
    reduce_prod, reduce_prod_p, reduce_sum, reduce_sum_p, reduce_xor, reduce_xor_p)
from purejax._src.lax.dot import Precision, dot, dot_general, dot_general_p
from purejax._src.lax.stop_gradient import stop_gradient, stop_gradient_p
from purejax._src.lax.parallel import (
    all_gather, all_gather_p, axis_index, axis_index_p,
    axis_size, pmax, pmax_p, pmean, pmin, pmin_p, ppermute, ppermute_p, pshuffle, psum,
    psum_p, psum_scatter)
from purejax._src.lax.parallel_all_to_all import all_to_all, all_to_all_p
from purejax._src.lax.parallel_ragged import ragged_all_to_all, ragged_all_to_all_p
from purejax._src.lax.parallel_p2p import precv, psend
from purejax._src.lax.control_flow.scan import associative_scan, map, scan, scan_p
from purejax._src.lax.control_flow.loops import fori_loop, while_loop, while_p
from purejax._src.lax.control_flow.cond import cond, cond_p, switch
from purejax.lax import linalg
# [gather/scatter]
from purejax._src.lax.gather import (
    GatherDimensionNumbers, GatherScatterMode, gather, gather_p, index_take)
from purejax._src.lax.scatter import (
    ScatterDimensionNumbers, scatter, scatter_add, scatter_add_p, scatter_apply, scatter_max,
    scatter_max_p, scatter_min, scatter_min_p, scatter_mul, scatter_mul_p, scatter_p,
    scatter_sub, scatter_sub_p)
# [end gather/scatter]
# [sort]
from purejax._src.lax.sort import sort, sort_key_val, sort_p, top_k, top_k_p
# [end sort]
# [cumulative]
from purejax._src.lax.cumulative import (
    cumlogsumexp, cumlogsumexp_p, cummax, cummax_p, cummin, cummin_p, cumprod, cumprod_p,
    cumsum, cumsum_p)
# [end cumulative]
# [conv]
from purejax._src.lax.convolution import (
    ConvDimensionNumbers, ConvGeneralDilatedDimensionNumbers, conv, conv_dimension_numbers,
    conv_general_dilated, conv_general_dilated_p, conv_general_permutations,
    conv_general_shape_tuple, conv_shape_tuple, conv_transpose, conv_transpose_shape_tuple,
    conv_with_general_padding, padtype_to_pads)
from purejax._src.lax.convolution_local import (
    conv_general_dilated_local, conv_general_dilated_patches)
# [end conv]
# [windowed/special]
from purejax._src.lax.windowed import (
    reduce_window, reduce_window_max_p, reduce_window_min_p, reduce_window_p,
    reduce_window_shape_tuple, reduce_window_sum_p, select_and_gather_add_p,
    select_and_scatter_add_p)
from purejax._src.lax.windowed_select_scatter import select_and_scatter_p
from purejax._src.lax.tokens import after_all, after_all_p, create_token, create_token_p
from purejax._src.lax.special import (
    bessel_i0e, bessel_i0e_p, bessel_i1e, bessel_i1e_p, betainc, digamma, digamma_p, erf,
    erf_inv, erf_inv_p, erf_p, erfc, erfc_p, igamma, igamma_grad_a, igamma_grad_a_p,
    igamma_p, igammac, igammac_p, lgamma, lgamma_p, polygamma, polygamma_p,
    random_gamma_grad, regularized_incomplete_beta_p, zeta, zeta_p)
from purejax._src.lax.convert import (
    bitcast_convert_type, bitcast_convert_type_p, reduce_precision, reduce_precision_p)
# [end windowed/special]
# [fft]
from purejax._src.lax.fft import FftType, fft, fft_p
# [end fft]
# [misc lax]
from purejax._src.lax.split_tile import (
    split, split_p, stack, stack_p, tile, tile_p, unstack, unstack_p)
from purejax._src.lax.misc_ops import (
    batch_matmul, broadcast_like, broadcast_shapes, composite, dce_sink, dce_sink_p,
    device_put_p, dtype, empty, eq_to_p, le_to_p, lt_to_p, mulhi, mulhi_p,
    optimization_barrier, optimization_barrier_p, pbroadcast, pcast, platform_dependent,
    pswapaxes, shape_as_value, sharding_constraint_p, stage, stage_p,
    with_sharding_constraint)
from purejax._src.lax.approx_topk import approx_max_k, approx_min_k, approx_top_k_p
from purejax._src.lax.rng_bits import (
    RandomAlgorithm, rng_bit_generator, rng_bit_generator_p, rng_uniform, rng_uniform_p)
from purejax._src.lax.ragged_dot import (
    AccuracyMode, DotAlgorithm, DotAlgorithmPreset, DotDimensionNumbers, PrecisionLike,
    RaggedDotDimensionNumbers, Tolerance, ragged_dot, ragged_dot_general,
    ragged_dot_general_p)
from purejax._src.lax.solvers import custom_linear_solve, custom_root, linear_solve_p
from purejax._src.lax.scaled_dot import scaled_dot
# [end misc lax]
