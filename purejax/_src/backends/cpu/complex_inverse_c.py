"""The complex inverse trigonometric and hyperbolic functions (casin, cacos,
catan, casinh, cacosh, catanh) as glibc computes them, for the CUDA device
prelude, which includes ``SOURCE`` after ``complex_c.ANNEX_G``.

Like ``ANNEX_G``, these are ports of glibc's algorithms (its
math/s_c*_template.c and the kernel casinh, cacos and cacosh share): the
same special values, branches, scalings and real functions (hypot, log1p,
atan2, sqrt..., ANNEX_G's clog and csqrt and glibc's x^2 + y^2 - 1), so
that where the device's real functions are glibc's, as in the emulation,
the results are glibc's bits.  Written in ``complex_c``'s neutral spelling
and expanded for float and double by ``complex_c.expand``; the C backend
calls glibc itself.
"""
from purejax._src.backends.cpu.complex_c import expand

# The C library's complex functions SOURCE defines, as pj_c99_<name>f and
# pj_c99_<name>.
ON_DEVICE = ("casin", "cacos", "catan", "casinh", "cacosh", "catanh")

# glibc's M_PI_2, M_PI_4, M_PI and M_LN2; for float its M_PI_2f...: float
# literals ('@'), rounded once from the decimal.
_CONSTANTS = (("$PI_2", "1.57079632679489661923@"), ("$PI_4", "0.78539816339744830962@"),
              ("$PI", "3.14159265358979323846@"), ("$LN2", "0.69314718055994530942@"))


def _expand(template):
  for name, value in _CONSTANTS:
    template = template.replace(name, value)
  return expand(template)


SOURCE = _expand(r"""
/* asinh z for finite nonzero z, worked in the first quadrant, the signs
   restored at the end.  With adj, the imaginary part is pi/2 less it
   (cacos and cacosh: i asinh(i z) with no cancellation near pi/2). */
static T _Complex pj_casinh_kernel@(T _Complex z, int adj) {
  const T x = PJ_REAL(z), y = PJ_IMAG(z), rx = fabs@(x), ix = fabs@(y);
  T re, im;
  if (rx >= 1 / $EPS || ix >= 1 / $EPS) {
    /* z + sqrt(1 + z^2) is 2 z to working precision: log(z) + ln 2,
       with no overflow in the square */
    const T _Complex r = pj_c99_clog@(adj ? PJ_COMPLEX(copysign@(ix, y), rx)
                                         : PJ_COMPLEX(rx, ix));
    re = PJ_REAL(r) + $LN2;
    im = PJ_IMAG(r);
  } else if (rx >= (T)0.5 && ix < $EPS / 8) {
    const T s = hypot@((T)1, rx);
    re = log@(rx + s);
    im = adj ? atan2@(s, y) : atan2@(ix, s);
  } else if (rx < $EPS / 8 && ix >= (T)1.5) {
    const T s = sqrt@((ix + 1) * (ix - 1));
    re = log@(ix + s);
    im = adj ? atan2@(rx, copysign@(s, y)) : atan2@(s, rx);
  } else if (ix > 1 && ix < (T)1.5 && rx < (T)0.5) {
    /* near the branch point i: the real part through log1p */
    const T ix2m1 = (ix + 1) * (ix - 1);
    if (rx < $EPS * $EPS) {
      const T s = sqrt@(ix2m1);
      re = log1p@(2 * (ix2m1 + ix * s)) / 2;
      im = adj ? atan2@(rx, copysign@(s, y)) : atan2@(s, rx);
    } else {
      const T rx2 = rx * rx, f = rx2 * (2 + rx2 + 2 * ix * ix);
      const T d = sqrt@(ix2m1 * ix2m1 + f), dp = d + ix2m1, dm = f / dp;
      const T r1 = sqrt@((dm + rx2) / 2), r2 = rx * ix / r1;
      re = log1p@(rx2 + dp + 2 * (rx * r1 + ix * r2)) / 2;
      im = adj ? atan2@(rx + r1, copysign@(ix + r2, y)) : atan2@(ix + r2, rx + r1);
    }
  } else if (ix == 1 && rx < (T)0.5) {
    if (rx < $EPS / 8) {
      const T s = sqrt@(rx);
      re = log1p@(2 * (rx + s)) / 2;
      im = adj ? atan2@(s, copysign@((T)1, y)) : atan2@((T)1, s);
    } else {
      const T d = rx * sqrt@(4 + rx * rx);
      const T s1 = sqrt@((d + rx * rx) / 2), s2 = sqrt@((d - rx * rx) / 2);
      re = log1p@(rx * rx + d + 2 * (rx * s1 + s2)) / 2;
      im = adj ? atan2@(rx + s1, copysign@(1 + s2, y)) : atan2@(1 + s2, rx + s1);
    }
  } else if (ix < 1 && rx < (T)0.5) {
    if (ix >= $EPS) {
      const T onemix2 = (1 + ix) * (1 - ix);
      if (rx < $EPS * $EPS) {
        const T s = sqrt@(onemix2);
        re = log1p@(2 * rx / s) / 2;
        im = adj ? atan2@(s, y) : atan2@(ix, s);
      } else {
        const T rx2 = rx * rx, f = rx2 * (2 + rx2 + 2 * ix * ix);
        const T d = sqrt@(onemix2 * onemix2 + f), dp = d + onemix2, dm = f / dp;
        const T r1 = sqrt@((dp + rx2) / 2), r2 = rx * ix / r1;
        re = log1p@(rx2 + dm + 2 * (rx * r1 + ix * r2)) / 2;
        im = adj ? atan2@(rx + r1, copysign@(ix + r2, y)) : atan2@(ix + r2, rx + r1);
      }
    } else {
      const T s = hypot@((T)1, rx);
      re = log1p@(2 * rx * (rx + s)) / 2;
      im = adj ? atan2@(s, y) : atan2@(ix, s);
    }
  } else {   /* log(z + sqrt(1 + z^2)), 1 + z^2 formed without cancellation */
    const T _Complex w = pj_c99_csqrt@(PJ_COMPLEX((rx - ix) * (rx + ix) + 1, 2 * rx * ix));
    const T a = PJ_REAL(w) + rx, b = PJ_IMAG(w) + ix;
    const T _Complex r = pj_c99_clog@(adj ? PJ_COMPLEX(copysign@(b, y), a) : PJ_COMPLEX(a, b));
    re = PJ_REAL(r);
    im = PJ_IMAG(r);
  }
  return PJ_COMPLEX(copysign@(re, x), copysign@(im, adj ? (T)1 : y));
}
static T _Complex pj_c99_casinh@(T _Complex z) {
  const T x = PJ_REAL(z), y = PJ_IMAG(z);
  const int xfin = fabs@(x) <= $MAX, yfin = fabs@(y) <= $MAX;
  if (!xfin || !yfin) {
    if (fabs@(y) == (T)INFINITY)
      return PJ_COMPLEX(copysign@((T)INFINITY, x),
                        x != x ? (T)NAN : copysign@(xfin ? $PI_2 : $PI_4, y));
    if (!xfin)
      return PJ_COMPLEX(x, (x == x && yfin) || (x != x && y == 0) ? copysign@((T)0, y)
                                                                 : (T)NAN);
    return PJ_COMPLEX((T)NAN, (T)NAN);
  }
  if (x == 0 && y == 0) return z;
  return pj_casinh_kernel@(z, 0);
}
/* asin z = -i asinh(i z) */
static T _Complex pj_c99_casin@(T _Complex z) {
  const T x = PJ_REAL(z), y = PJ_IMAG(z);
  if (x != x || y != y) {
    if (x == 0) return z;
    if (fabs@(x) == (T)INFINITY || fabs@(y) == (T)INFINITY)
      return PJ_COMPLEX((T)NAN, copysign@((T)INFINITY, y));
    return PJ_COMPLEX((T)NAN, (T)NAN);
  }
  const T _Complex w = pj_c99_casinh@(PJ_COMPLEX(-y, x));
  return PJ_COMPLEX(PJ_IMAG(w), -PJ_REAL(w));
}
/* acos z = pi/2 - asin z: the kernel's adjusted i asinh(i z) for finite
   nonzero z */
static T _Complex pj_c99_cacos@(T _Complex z) {
  const T x = PJ_REAL(z), y = PJ_IMAG(z);
  if (!(fabs@(x) <= $MAX) || !(fabs@(y) <= $MAX) || (x == 0 && y == 0)) {
    const T _Complex w = pj_c99_casin@(z);
    T re = $PI_2 - PJ_REAL(w);
    if (re == 0) re = 0;   /* +0, never -0 */
    return PJ_COMPLEX(re, -PJ_IMAG(w));
  }
  const T _Complex w = pj_casinh_kernel@(PJ_COMPLEX(-y, x), 1);
  return PJ_COMPLEX(PJ_IMAG(w), PJ_REAL(w));
}
static T _Complex pj_c99_cacosh@(T _Complex z) {
  const T x = PJ_REAL(z), y = PJ_IMAG(z);
  const int xfin = fabs@(x) <= $MAX, yfin = fabs@(y) <= $MAX;
  if (!xfin || !yfin) {
    if (fabs@(y) == (T)INFINITY) {
      const T a = x == x && !xfin ? (x < 0 ? $PI - $PI_4 : $PI_4) : $PI_2;
      return PJ_COMPLEX((T)INFINITY, x != x ? (T)NAN : copysign@(a, y));
    }
    if (x == x && !xfin)
      return PJ_COMPLEX((T)INFINITY,
                        yfin ? copysign@(signbit(x) ? $PI : 0, y) : (T)NAN);
    return PJ_COMPLEX((T)NAN, x == 0 ? $PI_2 : (T)NAN);
  }
  if (x == 0 && y == 0) return PJ_COMPLEX((T)0, copysign@($PI_2, y));
  const T _Complex w = pj_casinh_kernel@(PJ_COMPLEX(-y, x), 1);
  return signbit(y) ? PJ_COMPLEX(PJ_REAL(w), -PJ_IMAG(w)) : PJ_COMPLEX(-PJ_REAL(w), PJ_IMAG(w));
}
/* 1 - x^2 - y^2 for catan and catanh (|x| >= |y| after the swap): the
   cancelling case by glibc's x^2 + y^2 - 1, an exact 0 made +0. */
static inline T pj_one_minus_x2y2@(T ax, T ay) {
  if (ax < ay) { const T t = ax; ax = ay; ay = t; }
  if (ay < $EPS / 2) {
    const T d = (1 - ax) * (1 + ax);
    return d == 0 ? (T)0 : d;
  }
  if (ax >= 1) return (1 - ax) * (1 + ax) - ay * ay;
  if (ax >= (T)0.75 || ay >= (T)0.5) return -pj_x2y2m1@(ax, ay);
  return (1 - ax) * (1 + ax) - ay * ay;
}
/* (1/4) log(((1 + a)^2 + b^2) / ((1 - a)^2 + b^2)), the part of catanh
   (a, b its real and imaginary parts; catan's swapped), for finite a, b
   below 16 / eps: through log1p where the quotient is at least 1/2, the
   pole at a = +-1, b = 0 by its asymptote. */
static inline T pj_atanh_real@(T a, T b) {
  if (fabs@(a) == 1 && fabs@(b) < $EPS * $EPS)
    return copysign@((T)0.5, a) * ($LN2 - log@(fabs@(b)));
  const T b2 = fabs@(b) >= $EPS * $EPS ? b * b : (T)0;
  T num = 1 + a, den = 1 - a;
  num = b2 + num * num;
  den = b2 + den * den;
  const T f = num / den;
  return f < (T)0.5 ? (T)0.25 * log@(f) : (T)0.25 * log1p@(4 * a / den);
}
static T _Complex pj_c99_catan@(T _Complex z) {
  const T x = PJ_REAL(z), y = PJ_IMAG(z);
  const int xfin = fabs@(x) <= $MAX, yfin = fabs@(y) <= $MAX;
  if (!xfin || !yfin) {
    if (x == x && !xfin) return PJ_COMPLEX(copysign@($PI_2, x), copysign@((T)0, y));
    if (y == y && !yfin)
      return PJ_COMPLEX(xfin ? copysign@($PI_2, x) : (T)NAN, copysign@((T)0, y));
    if (y == 0) return PJ_COMPLEX((T)NAN, copysign@((T)0, y));
    return PJ_COMPLEX((T)NAN, (T)NAN);
  }
  if (x == 0 && y == 0) return z;
  if (fabs@(x) >= 16 / $EPS || fabs@(y) >= 16 / $EPS) {   /* +-pi/2 - 1 / z, no overflow */
    T im;
    if (fabs@(x) <= 1) im = 1 / y;
    else if (fabs@(y) <= 1) im = y / x / x;
    else { const T h = hypot@(x / 2, y / 2); im = y / h / h / 4; }
    return PJ_COMPLEX(copysign@($PI_2, x), im);
  }
  const T den = pj_one_minus_x2y2@(fabs@(x), fabs@(y));
  return PJ_COMPLEX((T)0.5 * atan2@(2 * x, den), pj_atanh_real@(y, x));
}
static T _Complex pj_c99_catanh@(T _Complex z) {
  const T x = PJ_REAL(z), y = PJ_IMAG(z);
  const int xfin = fabs@(x) <= $MAX, yfin = fabs@(y) <= $MAX;
  if (!xfin || !yfin) {
    if (y == y && !yfin) return PJ_COMPLEX(copysign@((T)0, x), copysign@($PI_2, y));
    if ((x == x && !xfin) || x == 0)
      return PJ_COMPLEX(copysign@((T)0, x), yfin ? copysign@($PI_2, y) : (T)NAN);
    return PJ_COMPLEX((T)NAN, (T)NAN);
  }
  if (x == 0 && y == 0) return z;
  if (fabs@(x) >= 16 / $EPS || fabs@(y) >= 16 / $EPS) {   /* 1 / z +- i pi/2, no overflow */
    T re;
    if (fabs@(y) <= 1) re = 1 / x;
    else if (fabs@(x) <= 1) re = x / y / y;
    else { const T h = hypot@(x / 2, y / 2); re = x / h / h / 4; }
    return PJ_COMPLEX(re, copysign@($PI_2, y));
  }
  const T re = pj_atanh_real@(x, y);
  return PJ_COMPLEX(re, (T)0.5 * atan2@(2 * y, pj_one_minus_x2y2@(fabs@(x), fabs@(y))));
}
""")
