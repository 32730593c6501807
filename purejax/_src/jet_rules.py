"""The jet rules: how each primitive maps a truncated Taylor series.

A rule ``rule(primals_in, series_in, **params) -> (primal_out, series_out)``
runs in the jet trace's parent; ``series_in[i]`` is the list of Taylor
coefficients ``[x_1, ..., x_K]`` of input ``i`` (``x_0`` is its primal).
Most rules are recurrences on coefficients (the product rule, and
``v' = c * u'`` for ``v = f(u)`` with ``c = f'(u)``), or compositions of
primitives that have rules.  The set of primitives covered is JAX's.
"""
import functools
import weakref

import numpy as np

from purejax._src import core
from purejax._src.jaxpr import eval_jaxpr
from purejax._src.jet import jet2, jet_flat, jet_rules, zero_series


def _lax():
  from purejax import lax
  return lax


def _jnp():
  from purejax import numpy as jnp
  return jnp


def _const(x, value):
  """A (strongly typed) constant of ``x``'s dtype."""
  return np.array(value, dtype=core.get_aval(x).dtype)


# ---------------------------------------------------------------------------
# Families of rules (public in JAX: users register their primitives with them)

def zero_prop(prim, primals_in, series_in, **params):
  """Piecewise-constant primitives (comparisons, rounding): no series out."""
  return prim.bind(*primals_in, **params), zero_series


def defzero(prim):
  jet_rules[prim] = functools.partial(zero_prop, prim)


def linear_prop(prim, primals_in, series_in, **params):
  """Linear primitives: each Taylor coefficient maps as the primal does."""
  primal_out = prim.bind(*primals_in, **params)
  series_out = [prim.bind(*terms, **params) for terms in zip(*series_in)]
  if prim.multiple_results:   # per term -> per output
    series_out = [list(s) for s in zip(*series_out)]
  return primal_out, series_out


def deflinear(prim):
  jet_rules[prim] = functools.partial(linear_prop, prim)


def _chain(c, u, v0):
  """Coefficients of ``v`` from ``v' = c u'``: ``k v_k = sum_j j c_{k-j} u_j``."""
  v = [v0] + [None] * (len(u) - 1)
  for k in range(1, len(v)):
    v[k] = sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k
  return v


def deriv_prop(prim, deriv, primals_in, series_in, **params):
  """A unary primitive from its derivative function ``deriv`` (itself jetted)."""
  x, = primals_in
  series, = series_in
  primal_out = prim.bind(x, **params)
  c0, cs = jet2(deriv, primals_in, series_in)
  primal_out, *series_out = _chain([c0] + cs, [x] + series, primal_out)
  return primal_out, series_out


def def_deriv(prim, deriv):
  jet_rules[prim] = functools.partial(deriv_prop, prim, deriv)


def def_comp(prim, comp, **kwargs):
  """A primitive as a composition ``comp`` of primitives that have rules."""
  jet_rules[prim] = functools.partial(jet2, comp, **kwargs)


# ---------------------------------------------------------------------------
# Rules by primitive

def _dynamic_slice_rule(primals_in, series_in, **params):
  prim = _lax().dynamic_slice_p
  operand, *starts = primals_in
  return (prim.bind(operand, *starts, **params),
          [prim.bind(t, *starts, **params) for t in series_in[0]])


def _dynamic_update_slice_rule(primals_in, series_in, **params):
  prim = _lax().dynamic_update_slice_p
  operand, update, *starts = primals_in
  return (prim.bind(operand, update, *starts, **params),
          [prim.bind(t, s, *starts, **params) for t, s in zip(*series_in[:2])])


def _cumulative_rule(combine, primals_in, series_in, *, axis, reverse, **_):
  # The parallel prefix scan, whose pieces all have rules.
  scan = functools.partial(_lax().associative_scan, combine, axis=axis, reverse=reverse)
  return jet2(scan, primals_in, series_in)


def _erf_inv_rule(primals_in, series_in, **params):
  # (erf^-1)'(x) = sqrt(pi)/2 exp(y^2) with y = erf^-1(x): the derivative's
  # coefficients c follow y's, one order behind.
  lax = _lax()
  x, = primals_in
  series, = series_in
  u = [x] + series
  y0 = lax.erf_inv_p.bind(x, **params)
  half_sqrt_pi = np.sqrt(np.pi) / 2.
  v = [y0] + [None] * len(series)
  c = [lax.mul(_const(x, half_sqrt_pi), lax.exp(lax.square(y0)))] + [None] * len(series)
  sq = [lax.square(y0)] + [None] * len(series)      # y^2
  ex = [lax.exp(sq[0])] + [None] * len(series)      # exp(y^2)
  for k in range(1, len(v)):
    v[k] = sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k
    if k < len(series):
      sq[k] = sum(v[k - j] * v[j] for j in range(k + 1))
      ex[k] = sum(j * ex[k - j] * sq[j] for j in range(1, k + 1)) / k
      c[k] = half_sqrt_pi * ex[k]
  return v[0], v[1:]


def _exp_rule(primals_in, series_in, **params):
  x, = primals_in
  u = [x] + series_in[0]
  v = [_lax().exp_p.bind(x, **params)] + [None] * len(series_in[0])
  for k in range(1, len(v)):   # v' = v u'
    v[k] = sum(j * v[k - j] * u[j] for j in range(1, k + 1)) / k
  return v[0], v[1:]


def _pow_rule(primals_in, series_in, **params):
  # x^y = exp(y log x): the exponent's series, then exp's recurrence.
  lax = _lax()
  x, y = primals_in
  e0, es = jet2(lambda a, b: lax.mul(b, lax.log(a)), primals_in, series_in)
  u = [e0] + es
  v = [x ** y] + [None] * len(es)
  for k in range(1, len(v)):
    v[k] = sum(j * v[k - j] * u[j] for j in range(1, k + 1)) / k
  return v[0], v[1:]


def _pow_by_squaring(x, n):
  if n < 0:
    return _pow_by_squaring(1 / x, -n)
  if n == 0:
    return 1
  if n % 2 == 0:
    return _pow_by_squaring(x * x, n // 2)
  return x * _pow_by_squaring(x * x, (n - 1) // 2)


def _integer_pow_rule(primals_in, series_in, *, y):
  if y == 0:
    return jet2(_jnp().ones_like, primals_in, series_in)
  return jet2(lambda x: _pow_by_squaring(x, y), primals_in, series_in)


def _logistic_series(x, series):
  # s' = e u' with e = s (1 - s), and e's coefficients from s's.
  lax = _lax()
  u = [x] + series
  v = [lax.logistic(x)] + [None] * len(series)
  e = [v[0] * (1 - v[0])] + [None] * len(series)
  for k in range(1, len(v)):
    v[k] = sum(j * e[k - j] * u[j] for j in range(1, k + 1)) / k
    e[k] = (1 - v[0]) * v[k] - sum(v[j] * v[k - j] for j in range(1, k + 1))
  return v[0], v[1:]


def _logistic_rule(primals_in, series_in, **_):
  return _logistic_series(primals_in[0], series_in[0])


def _tanh_rule(primals_in, series_in, **_):
  # tanh(x) = 2 logistic(2x) - 1
  x, = primals_in
  s0, ss = _logistic_series(2 * x, [2 * t for t in series_in[0]])
  series_out = [2 * t for t in ss]
  return 2 * s0 - 1, series_out


def _log_rule(primals_in, series_in, **params):
  # u v' = u' (v = log u), solved for v_k.
  x, = primals_in
  u = [x] + series_in[0]
  v = [_lax().log_p.bind(x, **params)] + [None] * len(series_in[0])
  for k in range(1, len(v)):
    conv = sum(j * v[j] * u[k - j] for j in range(1, k))
    v[k] = (u[k] - conv / k) / u[0]
  return v[0], v[1:]


def _atan2_rule(primals_in, series_in, **params):
  # atan2(x, y) = atan(x / y), with atan' = 1 / (1 + z^2).
  lax = _lax()
  primal_out = lax.atan2_p.bind(*primals_in, **params)
  z, zs = jet2(lax.div, primals_in, series_in)
  one = _const(z, 1)
  c0, cs = jet2(lambda t: lax.div(one, 1 + lax.square(t)), (z,), (zs,))
  primal_out, *series_out = _chain([c0] + cs, [z] + zs, primal_out)
  return primal_out, series_out


def _div_rule(primals_in, series_in, **_):
  # u = v w, solved for v_k.
  x, y = primals_in
  u = [x] + series_in[0]
  w = [y] + series_in[1]
  v = [None] * len(u)
  for k in range(len(v)):
    conv = sum(v[j] * w[k - j] for j in range(k))
    v[k] = (u[k] - conv) / w[0]
  return v[0], v[1:]


def _sinusoidal_rule(sign, fns, which, primals_in, series_in, **_):
  # s' = c u', c' = sign s u'  (sin/cos: sign -1; sinh/cosh: +1)
  x, = primals_in
  u = [x] + series_in[0]
  s = [fns[0](x)] + [None] * len(series_in[0])
  c = [fns[1](x)] + [None] * len(series_in[0])
  for k in range(1, len(s)):
    s[k] = sum(j * u[j] * c[k - j] for j in range(1, k + 1)) / k
    c[k] = sum(j * u[j] * s[k - j] for j in range(1, k + 1)) / k * sign
  out = (s, c)[which]
  return out[0], out[1:]


def _bilinear_rule(prim, primals_in, series_in, **params):
  # The product rule: v_k = sum_j op(u_j, w_{k-j}).
  u = [primals_in[0]] + series_in[0]
  w = [primals_in[1]] + series_in[1]
  v = [sum(prim.bind(u[j], w[k - j], **params) for j in range(k + 1)) for k in range(len(u))]
  return v[0], v[1:]


def _gather_rule(primals_in, series_in, **params):
  prim = _lax().gather_p
  operand, indices = primals_in
  return (prim.bind(operand, indices, **params),
          [prim.bind(t, indices, **params) for t in series_in[0]])


def _reduce_chooser_rule(prim, primals_in, series_in, **params):
  # The terms of the chosen elements; ties share equally.
  lax = _lax()
  operand, = primals_in
  terms, = series_in
  primal_out = prim.bind(operand, **params)
  axes = params["axes"]
  kept_shape = [1 if i in axes else d for i, d in enumerate(core.get_aval(operand).shape)]
  chosen = lax.convert_element_type(
      lax.eq(operand, lax.reshape(primal_out, kept_shape)), core.get_aval(terms[0]).dtype)
  counts = lax.reduce_sum(chosen, axes)
  return primal_out, [lax.div(lax.reduce_sum(lax.mul(t, chosen), axes), counts) for t in terms]


def _abs_rule(primals_in, series_in, **params):
  lax = _lax()
  x, = primals_in
  zero = lax.full_like(x, 0, shape=())
  primal_out = lax.abs_p.bind(x, **params)
  signs = lax.select(lax.lt(x, zero), lax.full_like(x, -1), lax.full_like(x, 1.0))
  return primal_out, [signs * t for t in series_in[0]]


def _select_n_rule(primals_in, series_in, **_):
  lax = _lax()
  which, *cases = primals_in
  return (lax.select_n(which, *cases),
          [lax.select_n(which, *terms[1:]) for terms in zip(*series_in)])


def _max_rule(primals_in, series_in, **_):
  # The larger operand's terms; their mean where the operands tie.
  lax, jnp = _lax(), _jnp()
  x, y = jnp.broadcast_arrays(*primals_in)
  greater, equal = x > y, x == y

  def pick(xt, yt):
    chosen = lax.select(greater, xt, yt)
    return lax.select(equal, (xt + yt) / 2, chosen)
  return (lax.select(greater, x, y),
          [pick(*jnp.broadcast_arrays(*terms)) for terms in zip(*series_in)])


def _min_rule(primals_in, series_in, **_):
  # As JAX's: unlike max's, the operands are not broadcast against each other.
  lax = _lax()
  x, y = primals_in
  less, equal = x < y, x == y

  def pick(xt, yt):
    chosen = lax.select(less, xt, yt)
    return lax.select(equal, (xt + yt) / 2, chosen)
  return lax.select(less, x, y), [pick(*terms) for terms in zip(*series_in)]


def _scatter_add_rule(primals_in, series_in, **params):
  prim = _lax().scatter_add_p
  operand, indices, updates = primals_in
  return (prim.bind(operand, indices, updates, **params),
          [prim.bind(o, indices, u, **params) for o, _, u in zip(*series_in)])


# -- jit: the call's jaxpr gets a jet jaxpr, called with the series as more inputs

_jet_jaxprs = weakref.WeakKeyDictionary()   # closed jaxpr -> {(order, avals): traced}


def _jet_jaxpr(closed, order, avals):
  from purejax._src.pjit import _inherit_hoisted, trace_closed
  per_jaxpr = _jet_jaxprs.setdefault(closed, {})
  key = (order, avals)
  if key in per_jaxpr:
    return per_jaxpr[key]
  n = len(closed.in_avals)

  def fun(*args):
    primals, terms = args[:n], args[n:]
    series = [list(terms[i * order:(i + 1) * order]) for i in range(n)]
    outs, out_series, _ = jet_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                   primals, series, order)
    return list(outs) + [t for s in out_series for t in s]
  traced, consts = trace_closed(fun, avals)
  _inherit_hoisted(traced, len(consts), closed)
  if not any(isinstance(c, core.Tracer) for c in consts):
    per_jaxpr[key] = (traced, consts)
  return traced, consts


def _jit_rule(primals_in, series_in, *, jaxpr, **params):
  from purejax._src.pjit import pjit_p
  order = len(series_in[0])
  flat_series = [t for s in series_in for t in s]
  avals = tuple(core.get_aval(x) for x in (*primals_in, *flat_series))
  traced, consts = _jet_jaxpr(jaxpr, order, avals)
  outs = pjit_p.bind(*consts, *primals_in, *flat_series, jaxpr=traced, **params)
  m = len(jaxpr.out_avals)
  return outs[:m], [list(outs[m + i * order:m + (i + 1) * order]) for i in range(m)]


# ---------------------------------------------------------------------------
# The table

def _register():
  from purejax import lax
  from purejax._src.interpreters.ad import add_any_p
  from purejax._src.pjit import pjit_p
  for p in (lax.le_p, lax.lt_p, lax.gt_p, lax.ge_p, lax.eq_p, lax.ne_p, lax.not_p,
            lax.and_p, lax.or_p, lax.xor_p, lax.floor_p, lax.ceil_p, lax.round_p,
            lax.sign_p, lax.stop_gradient_p, lax.is_finite_p, lax.shift_left_p,
            lax.shift_right_arithmetic_p, lax.shift_right_logical_p,
            lax.bitcast_convert_type_p):
    defzero(p)
  for p in (lax.neg_p, lax.real_p, lax.complex_p, lax.conj_p, lax.imag_p, lax.add_p,
            add_any_p, lax.sub_p, lax.convert_element_type_p, lax.broadcast_in_dim_p,
            lax.concatenate_p, lax.split_p, lax.stack_p, lax.unstack_p, lax.pad_p,
            lax.reshape_p, lax.squeeze_p, lax.rev_p, lax.transpose_p, lax.slice_p,
            lax.reduce_sum_p, lax.reduce_window_sum_p, lax.fft_p, lax.copy_p,
            lax.device_put_p, lax.cumsum_p):
    deflinear(p)
  jet_rules[lax.dynamic_slice_p] = _dynamic_slice_rule
  jet_rules[lax.dynamic_update_slice_p] = _dynamic_update_slice_rule
  jet_rules[lax.cumprod_p] = functools.partial(_cumulative_rule, lax.mul)
  jet_rules[lax.cummax_p] = functools.partial(_cumulative_rule, lax.max)
  jet_rules[lax.cummin_p] = functools.partial(_cumulative_rule, lax.min)

  def_deriv(lax.erf_p, lambda x: lax.mul(_const(x, 2. / np.sqrt(np.pi)),
                                         lax.exp(lax.neg(lax.square(x)))))
  def_comp(lax.expm1_p, lambda x: lax.exp(x) - 1)
  def_comp(lax.log1p_p, lambda x: lax.log(1 + x))
  def_comp(lax.sqrt_p, lambda x: x ** 0.5)
  def_comp(lax.square_p, lambda x: x * x)
  def_comp(lax.rsqrt_p, lambda x: x ** -0.5)
  def_comp(lax.asinh_p, lambda x: lax.log(x + lax.sqrt(lax.square(x) + 1)))
  def_comp(lax.acosh_p, lambda x: lax.log(x + lax.sqrt(lax.square(x) - 1)))
  def_comp(lax.atanh_p, lambda x: 0.5 * lax.log(lax.div(1 + x, 1 - x)))
  def_comp(lax.erfc_p, lambda x: 1 - lax.erf(x))
  def_comp(lax.rem_p, lambda x, y: x - y * lax.floor(x / y))
  def_comp(lax.clamp_p, lambda a, x, b: lax.min(lax.max(a, x), b))

  jet_rules[lax.erf_inv_p] = _erf_inv_rule
  jet_rules[lax.exp_p] = _exp_rule
  jet_rules[lax.pow_p] = _pow_rule
  jet_rules[lax.integer_pow_p] = _integer_pow_rule
  jet_rules[lax.logistic_p] = _logistic_rule
  jet_rules[lax.tanh_p] = _tanh_rule
  jet_rules[lax.log_p] = _log_rule
  jet_rules[lax.atan2_p] = _atan2_rule
  jet_rules[lax.div_p] = _div_rule
  jet_rules[lax.sin_p] = functools.partial(_sinusoidal_rule, -1, (lax.sin, lax.cos), 0)
  jet_rules[lax.cos_p] = functools.partial(_sinusoidal_rule, -1, (lax.sin, lax.cos), 1)
  jet_rules[lax.sinh_p] = functools.partial(_sinusoidal_rule, 1, (lax.sinh, lax.cosh), 0)
  jet_rules[lax.cosh_p] = functools.partial(_sinusoidal_rule, 1, (lax.sinh, lax.cosh), 1)
  for p in (lax.dot_general_p, lax.mul_p, lax.conv_general_dilated_p):
    jet_rules[p] = functools.partial(_bilinear_rule, p)
  jet_rules[lax.gather_p] = _gather_rule
  jet_rules[lax.reduce_max_p] = functools.partial(_reduce_chooser_rule, lax.reduce_max_p)
  jet_rules[lax.reduce_min_p] = functools.partial(_reduce_chooser_rule, lax.reduce_min_p)
  jet_rules[lax.abs_p] = _abs_rule
  jet_rules[lax.select_n_p] = _select_n_rule
  jet_rules[lax.max_p] = _max_rule
  jet_rules[lax.min_p] = _min_rule
  jet_rules[lax.scatter_add_p] = _scatter_add_rule
  jet_rules[pjit_p] = _jit_rule


_register()
