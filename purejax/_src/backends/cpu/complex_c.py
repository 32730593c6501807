"""complex64/complex128 C helpers, in one neutral spelling for the C backend
and the CUDA device prelude.

Complex values are written ``T _Complex`` (the CUDA prelude's ``for_cuda``
renames the type to its ``pj_c64``/``pj_c128`` structs), built with
``PJ_COMPLEX(re, im)`` and taken apart with ``PJ_REAL(z)``/``PJ_IMAG(z)``:
GCC's ``__builtin_complex``/``__real__``/``__imag__`` in C, the structs'
constructor and members in CUDA.  Only ``+``, ``-``, ``==``, ``!=`` and
conversions are operators in both; products and quotients are NumPy's
formulas below (``pj_cmul``, ``pj_cdiv``).

``BASIC`` and ``DERIVED`` are shared; between them the C backend declares
glibc's complex functions (cexp, clog, csqrt...), while CUDA, which has no
<complex.h>, takes ``ANNEX_G``: those functions as glibc computes them
(C99 Annex G's special values; the same scalings, branches and real
functions, so that where the device's real functions are glibc's, as in
the emulation, the results are glibc's bits; the inverse trigonometric
and hyperbolic ones are ``complex_inverse_c``'s).  ``expand`` writes a
template out for float (suffix ``f``) and double.
"""
import re

# Per-type constants of the templates: the largest finite value, the
# smallest normal, the epsilon, the mantissa digits, glibc's overflow
# thresholds t = (int)((MAX_EXP - 1) ln 2) for exp and t / 2 for tanh.
_CONSTANTS = {
    "float": {"$MAX": "0x1.fffffep+127f", "$MIN": "0x1p-126f", "$EPS": "0x1p-23f",
              "$MANT": "24", "$TEXP": "88", "$TTANH": "44"},
    "double": {"$MAX": "0x1.fffffffffffffp+1023", "$MIN": "0x1p-1022", "$EPS": "0x1p-52",
               "$MANT": "53", "$TEXP": "709", "$TTANH": "354"},
}


def expand(template):
  """``template`` for float (``T`` float, ``@`` f) then double (``@`` empty)."""
  out = []
  for t, suffix in (("float", "f"), ("double", "")):
    text = re.sub(r"\bT\b", t, template).replace("@", suffix)
    for k, v in _CONSTANTS[t].items():
      text = text.replace(k, v)
    out.append(text)
  return "".join(out)


# Multiplication and division are NumPy's formulas, written out (C's
# operators would recover infinities from NaN results, which NumPy does
# not): the product without rescaling, the quotient by Smith's algorithm
# (no overflow for large operands).
BASIC = expand(r"""
/* max/min of complex values as XLA computes them: a where it comes
   strictly first by (real, imaginary), else b (ties and NaNs give b). */
static inline int pj_cgt@(T _Complex a, T _Complex b) {
  const T ar = PJ_REAL(a), br = PJ_REAL(b);
  return ar == br ? PJ_IMAG(a) > PJ_IMAG(b) : ar > br;
}
static inline int pj_clt@(T _Complex a, T _Complex b) {
  const T ar = PJ_REAL(a), br = PJ_REAL(b);
  return ar == br ? PJ_IMAG(a) < PJ_IMAG(b) : ar < br;
}
static inline T _Complex pj_cmax@(T _Complex a, T _Complex b) {
  return pj_cgt@(a, b) ? a : b;
}
static inline T _Complex pj_cmin@(T _Complex a, T _Complex b) {
  return pj_clt@(a, b) ? a : b;
}
static inline T _Complex pj_cmul@(T _Complex a, T _Complex b) {
  const T ar = PJ_REAL(a), ai = PJ_IMAG(a), br = PJ_REAL(b), bi = PJ_IMAG(b);
  return PJ_COMPLEX(ar * br - ai * bi, ar * bi + ai * br);
}
static inline T _Complex pj_cdiv@(T _Complex a, T _Complex b) {
  const T ar = PJ_REAL(a), ai = PJ_IMAG(a), br = PJ_REAL(b), bi = PJ_IMAG(b);
  const T abr = fabs@(br), abi = fabs@(bi);
  if (abr >= abi) {
    if (abr == 0 && abi == 0) return PJ_COMPLEX(ar / abr, ai / abr);
    const T rat = bi / br, scl = (T)1 / (br + bi * rat);
    return PJ_COMPLEX((ar + ai * rat) * scl, (ai - ar * rat) * scl);
  }
  const T rat = br / bi, scl = (T)1 / (bi + br * rat);
  return PJ_COMPLEX((ar * rat + ai) * scl, (ai * rat - ar) * scl);
}
/* NumPy's reciprocal (not 1 / z by Smith's algorithm: other roundings). */
static inline T _Complex pj_crecip@(T _Complex a) {
  const T ar = PJ_REAL(a), ai = PJ_IMAG(a);
  if (fabs@(ai) <= fabs@(ar)) {
    const T r = ai / ar, d = ar + ai * r;
    return PJ_COMPLEX((T)1 / d, -r / d);
  }
  const T r = ar / ai, d = ar * r + ai;
  return PJ_COMPLEX(r / d, (T)-1 / d);
}
static inline T pj_cabs@(T _Complex a) { return hypot@(PJ_REAL(a), PJ_IMAG(a)); }
static inline T _Complex pj_csign@(T _Complex a) {
  const T m = pj_cabs@(a);
  return m == 0 ? a : pj_cdiv@(a, PJ_COMPLEX(m, (T)0));
}
""")

# The C library's complex functions the expressions call (glibc's in C).
LIBRARY = ("cexp", "clog", "csqrt", "csin", "ccos", "ctanh", "ctan", "casin", "cacos",
           "catan", "casinh", "cacosh", "catanh", "cpow")

# The helpers calling those (cexp, cpow): NumPy's formulas.
DERIVED = expand(r"""
/* 2^z as NumPy: exp(z ln 2), each part scaled. */
static inline T _Complex pj_cexp2@(T _Complex a) {
  const T ln2 = (T)0.693147180559945309417232121458176568;
  return cexp@(PJ_COMPLEX(PJ_REAL(a) * ln2, PJ_IMAG(a) * ln2));
}
/* a^b as NumPy's power: 1 for b = 0, 0 or NaN for a = 0, repeated squaring
   (NumPy's order, its quotient for 1 / a^-n) for integer b in (-100, 100),
   else the C library's cpow.  Products not contracted to FMAs, as NumPy's. */
PJ_NO_CONTRACT
static T _Complex pj_cpow@(T _Complex a, T _Complex b) {
  const T ar = PJ_REAL(a), ai = PJ_IMAG(a), br = PJ_REAL(b), bi = PJ_IMAG(b);
  if (br == 0 && bi == 0) return PJ_COMPLEX((T)1, (T)0);
  if (ar == 0 && ai == 0)
    return br > 0 ? PJ_COMPLEX((T)0, (T)0) : PJ_COMPLEX((T)NAN, (T)NAN);
  if (bi == 0 && br > -100 && br < 100 && br == (T)(int)br) {
    const int n = (int)br, m = n < 0 ? -n : n;
    if (n == 1) return a;
    if (n == 2) return pj_cmul@(a, a);
    if (n == 3) return pj_cmul@(a, pj_cmul@(a, a));
    T _Complex acc = PJ_COMPLEX((T)1, (T)0), p = a;
    for (int mask = 1;; mask <<= 1) {
      if (m & mask) acc = pj_cmul@(acc, p);
      if (m < (mask << 1)) break;
      p = pj_cmul@(p, p);
    }
    return n < 0 ? pj_cdiv@(PJ_COMPLEX((T)1, (T)0), acc) : acc;
  }
  return cpow@(a, b);
}
static inline T _Complex pj_cexpm1@(T _Complex a) {
  const T x = PJ_REAL(a), y = PJ_IMAG(a), h = sin@(y / 2);
  return PJ_COMPLEX(expm1@(x) * cos@(y) - 2 * h * h, exp@(x) * sin@(y));
}
static inline T _Complex pj_clog1p@(T _Complex a) {
  const T x = PJ_REAL(a) + 1, y = PJ_IMAG(a);
  return PJ_COMPLEX(log@(hypot@(x, y)), atan2@(y, x));
}
""")

# x^2 + y^2 - 1 for 0.5 <= x < 1, y <= x and x^2 + y^2 >= 0.5 (clog's
# cancelling case), as glibc: float in double; double as five exact terms
# (the products split by fma) summed from the smallest magnitude by exact
# two-sums, re-sorted after each.
_X2Y2M1 = r"""
static inline float pj_x2y2m1f(float x, float y) {
  const double dx = x, dy = y;
  return (float)((dx - 1) * (dx + 1) + dy * dy);
}
static inline void pj_sort_by_magnitude(double* v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && fabs(v[j]) < fabs(v[j - 1]); j--) {
      const double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t;
    }
}
static inline double pj_x2y2m1(double x, double y) {
  double v[5];
  v[1] = x * x; v[0] = fma(x, x, -v[1]);
  v[3] = y * y; v[2] = fma(y, y, -v[3]);
  v[4] = -1.0;
  pj_sort_by_magnitude(v, 5);
  for (int i = 0; i <= 3; i++) {
    const double hi = v[i + 1] + v[i];
    v[i] = (v[i + 1] - hi) + v[i];
    v[i + 1] = hi;
    pj_sort_by_magnitude(v + i + 1, 4 - i);
  }
  return v[4] + v[3] + v[2] + v[1] + v[0];
}
"""

# glibc's algorithms (math/s_c*_template.c), finite-ness tested by
# comparisons (no fpclassify on the device).
ANNEX_G = _X2Y2M1 + expand(r"""
/* cos a + i sin a; 1 + i a where |a| is at most the smallest normal. */
static inline T _Complex pj_cis@(T a) {
  return fabs@(a) > $MIN ? PJ_COMPLEX(cos@(a), sin@(a)) : PJ_COMPLEX((T)1, a);
}
/* cosh(h) c + i sinh(h) s for finite h, scaled by exp(t) steps where
   cosh h alone would overflow. */
static inline T _Complex pj_coshsinh@(T h, T c, T s) {
  const T t = (T)$TEXP;
  if (!(fabs@(h) > t)) return PJ_COMPLEX(cosh@(h) * c, sinh@(h) * s);
  const T exp_t = exp@(t);
  T rx = fabs@(h) - t;
  if (signbit(h)) s = -s;
  c *= exp_t / 2; s *= exp_t / 2;
  if (rx > t) { rx -= t; c *= exp_t; s *= exp_t; }
  if (rx > t) return PJ_COMPLEX($MAX * c, $MAX * s);
  const T e = exp@(rx);
  return PJ_COMPLEX(e * c, e * s);
}
static T _Complex pj_c99_cexp@(T _Complex z) {
  const T x = PJ_REAL(z), y = PJ_IMAG(z);
  const int yfin = fabs@(y) <= $MAX;
  if (fabs@(x) <= $MAX) {
    if (!yfin) return PJ_COMPLEX((T)NAN, (T)NAN);
    const T _Complex cs = pj_cis@(y);
    const T t = (T)$TEXP;
    T xr = x, c = PJ_REAL(cs), s = PJ_IMAG(cs);
    if (xr > t) {
      const T exp_t = exp@(t);
      xr -= t; s *= exp_t; c *= exp_t;
      if (xr > t) { xr -= t; s *= exp_t; c *= exp_t; }
    }
    if (xr > t) return PJ_COMPLEX($MAX * c, $MAX * s);
    const T e = exp@(xr);
    return PJ_COMPLEX(e * c, e * s);
  }
  if (x != x) return PJ_COMPLEX((T)NAN, y == 0 ? y : (T)NAN);
  if (yfin) {   /* x infinite */
    const T v = signbit(x) ? (T)0 : (T)INFINITY;
    if (y == 0) return PJ_COMPLEX(v, y);
    const T _Complex cs = pj_cis@(y);
    return PJ_COMPLEX(copysign@(v, PJ_REAL(cs)), copysign@(v, PJ_IMAG(cs)));
  }
  return signbit(x) ? PJ_COMPLEX((T)0, copysign@((T)0, y)) : PJ_COMPLEX((T)INFINITY, y - y);
}
static T _Complex pj_c99_clog@(T _Complex z) {
  const T x = PJ_REAL(z), y = PJ_IMAG(z);
  if (x == 0 && y == 0)
    return PJ_COMPLEX((T)-1 / fabs@(x),
                      copysign@(signbit(x) ? (T)3.14159265358979323846 : (T)0, y));
  if (x != x || y != y) {
    const int inf = fabs@(x) == (T)INFINITY || fabs@(y) == (T)INFINITY;
    return PJ_COMPLEX(inf ? (T)INFINITY : (T)NAN, (T)NAN);
  }
  T ax = fabs@(x), ay = fabs@(y), re;
  int scale = 0;
  if (ax < ay) { const T t = ax; ax = ay; ay = t; }
  if (ax > $MAX / 2) {
    scale = -1; ax = scalbn@(ax, scale); ay = ay >= $MIN * 2 ? scalbn@(ay, scale) : (T)0;
  } else if (ax < $MIN && ay < $MIN) {
    scale = $MANT; ax = scalbn@(ax, scale); ay = scalbn@(ay, scale);
  }
  if (ax == 1 && scale == 0) {
    re = log1p@(ay * ay) / 2;
  } else if (ax > 1 && ax < 2 && ay < 1 && scale == 0) {
    T d2m1 = (ax - 1) * (ax + 1);
    if (ay >= $EPS) d2m1 += ay * ay;
    re = log1p@(d2m1) / 2;
  } else if (ax < 1 && ax >= (T)0.5 && ay < $EPS / 2 && scale == 0) {
    re = log1p@((ax - 1) * (ax + 1)) / 2;
  } else if (ax < 1 && ax >= (T)0.5 && scale == 0 && ax * ax + ay * ay >= (T)0.5) {
    re = log1p@(pj_x2y2m1@(ax, ay)) / 2;
  } else {
    re = log@(hypot@(ax, ay)) - scale * (T)0.693147180559945309417232121458176568;
  }
  return PJ_COMPLEX(re, atan2@(y, x));
}
static T _Complex pj_c99_csqrt@(T _Complex z) {
  T x = PJ_REAL(z), y = PJ_IMAG(z);
  if (!(fabs@(x) <= $MAX) || !(fabs@(y) <= $MAX)) {
    if (fabs@(y) == (T)INFINITY) return PJ_COMPLEX((T)INFINITY, y);
    if (fabs@(x) == (T)INFINITY)
      return x < 0 ? PJ_COMPLEX(y != y ? (T)NAN : (T)0, copysign@((T)INFINITY, y))
                   : PJ_COMPLEX(x, y != y ? (T)NAN : copysign@((T)0, y));
    return PJ_COMPLEX((T)NAN, (T)NAN);
  }
  if (y == 0)
    return x < 0 ? PJ_COMPLEX((T)0, copysign@(sqrt@(-x), y))
                 : PJ_COMPLEX(fabs@(sqrt@(x)), copysign@((T)0, y));
  if (x == 0) {
    const T r = fabs@(y) >= 2 * $MIN ? sqrt@((T)0.5 * fabs@(y)) : (T)0.5 * sqrt@(2 * fabs@(y));
    return PJ_COMPLEX(r, copysign@(r, y));
  }
  int scale = 0;
  if (fabs@(x) > $MAX / 4) {
    scale = 1; x = scalbn@(x, -2); y = scalbn@(y, -2);
  } else if (fabs@(y) > $MAX / 4) {
    scale = 1; x = fabs@(x) >= 4 * $MIN ? scalbn@(x, -2) : (T)0; y = scalbn@(y, -2);
  } else if (fabs@(x) < 2 * $MIN && fabs@(y) < 2 * $MIN) {
    scale = -(($MANT + 1) / 2); x = scalbn@(x, -2 * scale); y = scalbn@(y, -2 * scale);
  }
  const T d = hypot@(x, y);
  T r, s;   /* 2 r s = y: no cancellation in d -+ x */
  if (x > 0) {
    r = sqrt@((T)0.5 * (d + x));
    if (scale == 1 && fabs@(y) < 1) { s = y / r; r = scalbn@(r, scale); scale = 0; }
    else s = (T)0.5 * (y / r);
  } else {
    s = sqrt@((T)0.5 * (d - x));
    if (scale == 1 && fabs@(y) < 1) { r = fabs@(y / s); s = scalbn@(s, scale); scale = 0; }
    else r = fabs@((T)0.5 * (y / s));
  }
  if (scale) { r = scalbn@(r, scale); s = scalbn@(s, scale); }
  return PJ_COMPLEX(r, copysign@(s, y));
}
static T _Complex pj_c99_csin@(T _Complex z) {
  const T x = PJ_REAL(z), y = PJ_IMAG(z), ax = fabs@(x);
  const int negate = signbit(x) != 0, xfin = ax <= $MAX;
  const T zero = negate ? (T)-0.0 : (T)0;
  if (fabs@(y) <= $MAX) {
    if (!xfin) return y == 0 ? PJ_COMPLEX(ax - ax, y) : PJ_COMPLEX((T)NAN, (T)NAN);
    const T _Complex cs = pj_cis@(ax);
    return pj_coshsinh@(y, negate ? -PJ_IMAG(cs) : PJ_IMAG(cs), PJ_REAL(cs));
  }
  if (y != y) return PJ_COMPLEX(x == 0 ? zero : (T)NAN, (T)NAN);
  if (x == 0) return PJ_COMPLEX(zero, y);   /* y infinite */
  if (!xfin) return PJ_COMPLEX(ax - ax, (T)INFINITY);
  const T _Complex cs = pj_cis@(ax);
  const T re = copysign@((T)INFINITY, PJ_IMAG(cs)), im = copysign@((T)INFINITY, PJ_REAL(cs));
  return PJ_COMPLEX(negate ? -re : re, signbit(y) ? -im : im);
}
static T _Complex pj_c99_ccosh@(T _Complex z) {
  const T x = PJ_REAL(z), y = PJ_IMAG(z);
  const int yfin = fabs@(y) <= $MAX;
  if (fabs@(x) <= $MAX) {
    if (!yfin) return PJ_COMPLEX(y - y, x == 0 ? (T)0 : (T)NAN);
    const T _Complex cs = pj_cis@(y);
    return pj_coshsinh@(x, PJ_REAL(cs), PJ_IMAG(cs));
  }
  if (x != x) return PJ_COMPLEX((T)NAN, y == 0 ? y : (T)NAN);
  if (yfin && y != 0) {   /* x infinite */
    const T _Complex cs = pj_cis@(y);
    return PJ_COMPLEX(copysign@((T)INFINITY, PJ_REAL(cs)),
                      copysign@((T)INFINITY, PJ_IMAG(cs)) * copysign@((T)1, x));
  }
  return PJ_COMPLEX((T)INFINITY, y == 0 ? y * copysign@((T)1, x) : y - y);
}
/* cos z = cosh(i z) */
static T _Complex pj_c99_ccos@(T _Complex z) {
  return pj_c99_ccosh@(PJ_COMPLEX(-PJ_IMAG(z), PJ_REAL(z)));
}
/* tanh z = (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y) */
static T _Complex pj_c99_ctanh@(T _Complex z) {
  const T x = PJ_REAL(z), y = PJ_IMAG(z);
  if (!(fabs@(x) <= $MAX) || !(fabs@(y) <= $MAX)) {
    if (fabs@(x) == (T)INFINITY)
      return PJ_COMPLEX(copysign@((T)1, x), copysign@((T)0, fabs@(y) <= $MAX && fabs@(y) > 1
                                                           ? sin@(y) * cos@(y) : y));
    if (y == 0) return z;
    return PJ_COMPLEX(x == 0 ? x : (T)NAN, (T)NAN);
  }
  const T t = (T)$TTANH;
  const T _Complex cs = pj_cis@(y);
  const T c = PJ_REAL(cs), s = PJ_IMAG(cs);
  if (fabs@(x) > t) {   /* 1 + i 4 sin y cos y / exp(2 |x|), without overflow */
    const T exp_2t = exp@(2 * t), ax = fabs@(x) - t;
    T im = 4 * s * c;
    im /= exp_2t;
    im /= ax > t ? exp_2t : exp@(2 * ax);
    return PJ_COMPLEX(copysign@((T)1, x), im);
  }
  T sh = x, ch = 1;
  if (fabs@(x) > $MIN) { sh = sinh@(x); ch = cosh@(x); }
  const T den = fabs@(sh) > fabs@(c) * $EPS ? sh * sh + c * c : c * c;
  return PJ_COMPLEX(sh * ch / den, s * c / den);
}
/* tan z = -i tanh(i z) */
static T _Complex pj_c99_ctan@(T _Complex z) {
  const T _Complex w = pj_c99_ctanh@(PJ_COMPLEX(-PJ_IMAG(z), PJ_REAL(z)));
  return PJ_COMPLEX(PJ_IMAG(w), -PJ_REAL(w));
}
/* C's product (libgcc's __mul?c3, Annex G): NumPy's, but infinities
   recovered where that gives NaN + i NaN. */
static T _Complex pj_c99_cmul@(T _Complex z, T _Complex w) {
  T a = PJ_REAL(z), b = PJ_IMAG(z), c = PJ_REAL(w), d = PJ_IMAG(w);
  const T ac = a * c, bd = b * d, ad = a * d, bc = b * c;
  const T x = ac - bd, y = ad + bc;
  if (x == x || y == y) return PJ_COMPLEX(x, y);
  const T inf = (T)INFINITY;
  int recalc = 0;
  if (fabs@(a) == inf || fabs@(b) == inf) {   /* z infinite: boxed, NaNs of w made 0 */
    a = copysign@(fabs@(a) == inf ? (T)1 : (T)0, a);
    b = copysign@(fabs@(b) == inf ? (T)1 : (T)0, b);
    if (c != c) c = copysign@((T)0, c);
    if (d != d) d = copysign@((T)0, d);
    recalc = 1;
  }
  if (fabs@(c) == inf || fabs@(d) == inf) {
    c = copysign@(fabs@(c) == inf ? (T)1 : (T)0, c);
    d = copysign@(fabs@(d) == inf ? (T)1 : (T)0, d);
    if (a != a) a = copysign@((T)0, a);
    if (b != b) b = copysign@((T)0, b);
    recalc = 1;
  }
  if (!recalc && (fabs@(ac) == inf || fabs@(bd) == inf || fabs@(ad) == inf
                  || fabs@(bc) == inf)) {   /* overflow: NaNs made 0 */
    if (a != a) a = copysign@((T)0, a);
    if (b != b) b = copysign@((T)0, b);
    if (c != c) c = copysign@((T)0, c);
    if (d != d) d = copysign@((T)0, d);
    recalc = 1;
  }
  if (!recalc) return PJ_COMPLEX(x, y);
  return PJ_COMPLEX(inf * (a * c - b * d), inf * (a * d + b * c));
}
/* a^b = exp(b log a), as glibc */
static T _Complex pj_c99_cpow@(T _Complex a, T _Complex b) {
  return pj_c99_cexp@(pj_c99_cmul@(b, pj_c99_clog@(a)));
}
""")

# The C library's complex functions ANNEX_G defines (complex_inverse_c
# defines the others).
ON_DEVICE = ("cexp", "clog", "csqrt", "csin", "ccos", "ctanh", "ctan", "cpow")
