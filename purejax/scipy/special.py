"""purejax.scipy.special: SciPy's special functions (JAX's subset).

Differs from JAX: ``gamma`` and ``loggamma`` take real inputs only; ``hyp2f1``
is for x <= 1 (inf above, as JAX) and accurate below -1 where JAX's is not;
``bernoulli`` is exact (JAX's carries float32 rounding); ``wofz`` is 0 at
infinities (SciPy's limit; JAX gives NaN).
"""
from purejax._src.scipy.logsumexp import logsumexp
from purejax._src.scipy.special import (
    beta, betainc, betaln, boxcox, boxcox1p, comb, digamma, entr, erf, erfc, erfinv, expit,
    factorial, gamma, gammainc, gammaincc, gammaln, gammasgn, i0, i0e, i1, i1e, kl_div,
    log_softmax, loggamma, logit, multigammaln, poch, polygamma, rel_entr, softmax, xlog1py,
    xlogy, zeta)
from purejax._src.scipy.special_more import (
    bernoulli, bessel_jn, dawsn, erfcx, fresnel, hyp1f1, hyp2f1, owens_t, sici)
from purejax._src.scipy.special_expint import exp1, expi, expn, spence
from purejax._src.scipy.special_ndtr import log_ndtr, ndtr, ndtri
from purejax._src.scipy.special_sph_harm import sph_harm_y
from purejax._src.scipy.special_wofz import wofz

__all__ = [
    "bernoulli", "bessel_jn", "dawsn", "erfcx", "fresnel", "hyp1f1", "hyp2f1", "owens_t", "sici",
    "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "digamma", "entr", "erf",
    "erfc", "erfinv", "exp1", "expi", "expit", "expn", "factorial", "gamma", "gammainc",
    "gammaincc", "gammaln", "gammasgn", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr",
    "log_softmax", "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "poch",
    "polygamma", "rel_entr", "softmax", "spence", "sph_harm_y", "wofz", "xlog1py", "xlogy",
    "zeta"]
