"""Rules for `scipy.special`: logsumexp softmax log_softmax expit logit log_expit erf erfc
erfinv erfcinv ndtr log_ndtr ndtri ndtri_exp gammaln gamma rgamma loggamma digamma psi
polygamma multigammaln beta betaln poch gammainc gammaincc betainc j0 j1 y0 y1 jv yv yn i0 i1
i0e i1e iv ive xlogy xlog1py entr rel_entr kl_div huber pseudo_huber dawsn erfcx erfi wofz
spence owens_t zeta.

SciPy is optional (installed with the `numba` extra) and slow to import, so this module is
loaded only once a differentiated function calls one of these functions: the rule table
imports it on the first lookup of a `scipy.special` callable (registry.RuleTable). The
rules are for real arguments, complex ones are refused; except those of the holomorphic
`loggamma` (its slope psi(z)), `dawsn`, `erfcx`, `erfi` and `wofz` (the Faddeeva function,
w' = -2 z w + 2i / sqrt(pi); complex even for a real argument), which take complex
arguments in JAX's convention (a VJP is g f'(z)).

`logsumexp(a, axis, b, keepdims)` differentiates `a` and the weights `b` (its cotangent is
summed where `b` was broadcast); `return_sign=True` is refused. `polygamma(n, x)` is
differentiated in `x` (the order `n` is an integer); so are the Bessel functions `jv(v, x)`,
`yv`, `yn`, `iv`, `ive` in `x` (not in the order), `gammainc(a, x)`/`gammaincc(a, x)` in `x`
and `betainc(a, b, x)` in `x` (their derivatives in the shape parameters have no closed form),
and `multigammaln(a, d)` in `a`. Recurrences used: J_v' = (J_{v-1} - J_{v+1}) / 2 (the same
for Y), I_v' = (I_{v-1} + I_{v+1}) / 2, ive = iv e^{-|x|}; `i0e`/`i1e` likewise.

For the distributions of `scipy.stats`: `log1p`, `expm1`, `cosm1`, `exprel` (its slope by a
Taylor polynomial near 0, where the closed form cancels); the modified Bessel functions of
the second kind `k0`, `k1`, `k0e`, `k1e`, `kv(v, x)`, `kve(v, x)` in `x` (K_0' = -K_1,
K_v' = -(K_{v-1} + K_{v+1}) / 2, kve = kv e^x); the distribution functions `stdtr(df, t)`,
`chdtr(v, x)`, `chdtrc`, `fdtr(dfn, dfd, x)`, `fdtrc` and `betaincc(a, b, x)` in their last
argument (their slope is the density; in the degrees of freedom and shapes there is no
closed form); `boxcox(x, lmbda)`, `boxcox1p`, `inv_boxcox(y, lmbda)`, `inv_boxcox1p` in both
arguments, lmbda = 0 included (boxcox(x, l) = log(x) exprel(l log x), so the slope in lmbda
is log(x)^2 exprel'(l log x); the inverses by implicit differentiation); `tklmbda(x, lmbda)`
(the Tukey-lambda distribution function, defined through its quantile function
Q(p) = boxcox(p, l) - boxcox(1 - p, l): the slope in x is 1 / Q'(p), in lmbda
-dQ/dl / Q'(p)).

At the edges of their domains: `entr(x)` has the one-sided slope +inf at 0, `rel_entr(x, y)`
and `kl_div(x, y)` -inf in x at x = 0, and where a value is infinite (entr of x < 0,
rel_entr and kl_div outside x >= 0, y > 0, huber and pseudo_huber of delta < 0) the slopes
are 0, never NaN. `huber(delta, r)` is differentiated in both arguments (its slopes are
continuous at |r| = delta), `pseudo_huber(delta, r)` too (at delta = 0, where it is 0 for
every r: slope 0 in r, the one-sided |r| in delta). `poch(z, m)` in both (psi differences),
`owens_t(h, a)` in both, `spence(z)` (log(z) / (1 - z), a Taylor polynomial near 1).
`zeta(x, q)` is differentiated in q (-x zeta(x + 1, q)); in x it is refused (no closed form
in SciPy), and so is `out=`.
"""

import numpy as np
import scipy.special as sc

from s2sad.ir.prims import unbroadcast
from s2sad_rules.numpy_reductions import expand_reduced
from s2sad_rules.real_only import real_only
from s2sad_rules.refusals import supported
from s2sad_rules.registry import (TABLE, Unknown, def_linear, def_nondiff, defcheck, defjvp,
                                  defvjp, refuse_arguments)

_SQRT_PI = 1.7724538509055159
_SQRT_2PI = 2.5066282746310002
_LOG_2 = 0.6931471805599453
_SQRT_2 = 1.4142135623730951


@defcheck(sc.logsumexp)
def logsumexp_check(a, axis=None, b=None, keepdims=False, return_sign=False):
    if isinstance(return_sign, Unknown) or return_sign:
        return "return_sign=True (differentiate the logarithm of a positive sum)"
    ndim = a.ndim if isinstance(a, Unknown) else np.ndim(a)
    if ndim == 0 and (isinstance(keepdims, Unknown) or keepdims):
        return "keepdims=True for a number (SciPy returns an array of shape (1,) for it)"
    return None


def logsumexp_weights(a, ans, axis, keepdims):
    """exp(a - logsumexp(a)): each entry's share of the sum (before the weights b)."""
    return np.exp(a - expand_reduced(ans, a, axis, keepdims))


@defjvp(sc.logsumexp)
def logsumexp_jvp(a, axis=None, b=None, keepdims=False, return_sign=False, a_dot=0.0,
                  b_dot=0.0, ans=0.0):
    share = logsumexp_weights(a, ans, axis, keepdims)
    if b is None:
        return np.sum(share * a_dot, axis=axis, keepdims=keepdims)
    return np.sum(share * (b * a_dot + b_dot), axis=axis, keepdims=keepdims)


@defvjp(sc.logsumexp, wrt=("a", "b"))
def logsumexp_vjp(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    share = expand_reduced(g, a, axis, keepdims) * logsumexp_weights(a, ans, axis, keepdims)
    if b is None:
        return share, None
    return unbroadcast(share * b, a), unbroadcast(share, b)


@defjvp(sc.softmax)
def softmax_jvp(x, axis=None, x_dot=0.0, ans=0.0):
    return ans * (x_dot - np.sum(ans * x_dot, axis=axis, keepdims=True))


@defvjp(sc.softmax)
def softmax_vjp(g, ans, x, axis=None):
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))


@defjvp(sc.log_softmax)
def log_softmax_jvp(x, axis=None, x_dot=0.0, ans=0.0):
    return x_dot - np.sum(np.exp(ans) * x_dot, axis=axis, keepdims=True)


@defvjp(sc.log_softmax)
def log_softmax_vjp(g, ans, x, axis=None):
    return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)


@defjvp(sc.expit)
def expit_jvp(x, x_dot, ans):
    return x_dot * ans * (1.0 - ans)


@defvjp(sc.expit)
def expit_vjp(g, ans, x):
    return g * ans * (1.0 - ans)


@defjvp(sc.logit)
def logit_jvp(x, x_dot):
    return x_dot / (x * (1.0 - x))


@defvjp(sc.logit)
def logit_vjp(g, x):
    return g / (x * (1.0 - x))


@defjvp(sc.log_expit)
def log_expit_jvp(x, x_dot):
    return x_dot * sc.expit(-x)


@defvjp(sc.log_expit)
def log_expit_vjp(g, x):
    return g * sc.expit(-x)


@defjvp(sc.erf)
def erf_jvp(x, x_dot):
    return x_dot * (2.0 / _SQRT_PI) * np.exp(-x * x)


@defvjp(sc.erf)
def erf_vjp(g, x):
    return g * (2.0 / _SQRT_PI) * np.exp(-x * x)


@defjvp(sc.erfc)
def erfc_jvp(x, x_dot):
    return x_dot * (-2.0 / _SQRT_PI) * np.exp(-x * x)


@defvjp(sc.erfc)
def erfc_vjp(g, x):
    return g * (-2.0 / _SQRT_PI) * np.exp(-x * x)


@defjvp(sc.erfinv)
def erfinv_jvp(x, x_dot, ans):
    return x_dot * (_SQRT_PI / 2.0) * np.exp(ans * ans)


@defvjp(sc.erfinv)
def erfinv_vjp(g, ans, x):
    return g * (_SQRT_PI / 2.0) * np.exp(ans * ans)


@defjvp(sc.erfcinv)
def erfcinv_jvp(x, x_dot, ans):
    return x_dot * (-_SQRT_PI / 2.0) * np.exp(ans * ans)


@defvjp(sc.erfcinv)
def erfcinv_vjp(g, ans, x):
    return g * (-_SQRT_PI / 2.0) * np.exp(ans * ans)


@defjvp(sc.ndtr)
def ndtr_jvp(x, x_dot):
    return x_dot * np.exp(-0.5 * x * x) / _SQRT_2PI


@defvjp(sc.ndtr)
def ndtr_vjp(g, x):
    return g * np.exp(-0.5 * x * x) / _SQRT_2PI


@defjvp(sc.log_ndtr)
def log_ndtr_jvp(x, x_dot, ans):
    # the normal density over its distribution function, without dividing small numbers
    return x_dot * np.exp(-0.5 * x * x - ans) / _SQRT_2PI


@defvjp(sc.log_ndtr)
def log_ndtr_vjp(g, ans, x):
    return g * np.exp(-0.5 * x * x - ans) / _SQRT_2PI


@defjvp(sc.gammaln)
def gammaln_jvp(x, x_dot):
    return x_dot * sc.digamma(x)


@defvjp(sc.gammaln)
def gammaln_vjp(g, x):
    return g * sc.digamma(x)


@defjvp(sc.gamma)
def gamma_jvp(x, x_dot, ans):
    return x_dot * ans * sc.digamma(x)


@defvjp(sc.gamma)
def gamma_vjp(g, ans, x):
    return g * ans * sc.digamma(x)


@defjvp(sc.rgamma)
def rgamma_jvp(x, x_dot, ans):
    return -x_dot * ans * sc.digamma(x)


@defvjp(sc.rgamma)
def rgamma_vjp(g, ans, x):
    return -g * ans * sc.digamma(x)


def beta_slopes(a, b):
    """d log B(a, b) / da and / db."""
    both = sc.digamma(a + b)
    return sc.digamma(a) - both, sc.digamma(b) - both


@defjvp(sc.betaln)
def betaln_jvp(a, b, a_dot, b_dot):
    da, db = beta_slopes(a, b)
    return a_dot * da + b_dot * db


@defvjp(sc.betaln)
def betaln_vjp(g, a, b):
    da, db = beta_slopes(a, b)
    return unbroadcast(g * da, a), unbroadcast(g * db, b)


@defjvp(sc.beta)
def beta_jvp(a, b, a_dot, b_dot, ans):
    da, db = beta_slopes(a, b)
    return ans * (a_dot * da + b_dot * db)


@defvjp(sc.beta)
def beta_vjp(g, ans, a, b):
    da, db = beta_slopes(a, b)
    return unbroadcast(g * ans * da, a), unbroadcast(g * ans * db, b)


def gamma_density(a, x):
    """d gammainc(a, x) / dx = x^(a-1) e^-x / Gamma(a), in logarithms (no overflow)."""
    return np.exp((a - 1.0) * np.log(x) - x - sc.gammaln(a))


@defjvp(sc.gammainc)
def gammainc_jvp(a, x, x_dot):
    return x_dot * gamma_density(a, x)


@defvjp(sc.gammainc, wrt=("x",))
def gammainc_vjp(g, a, x):
    return unbroadcast(g * gamma_density(a, x), x)


@defjvp(sc.gammaincc)
def gammaincc_jvp(a, x, x_dot):
    return -x_dot * gamma_density(a, x)


@defvjp(sc.gammaincc, wrt=("x",))
def gammaincc_vjp(g, a, x):
    return unbroadcast(-g * gamma_density(a, x), x)


def beta_density(a, b, x):
    """d betainc(a, b, x) / dx = x^(a-1) (1-x)^(b-1) / B(a, b)."""
    return np.exp((a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) - sc.betaln(a, b))


@defjvp(sc.betainc)
def betainc_jvp(a, b, x, x_dot):
    return x_dot * beta_density(a, b, x)


@defvjp(sc.betainc, wrt=("x",))
def betainc_vjp(g, a, b, x):
    return unbroadcast(g * beta_density(a, b, x), x)


@defjvp(sc.j0)
def j0_jvp(x, x_dot):
    return -x_dot * sc.j1(x)


@defvjp(sc.j0)
def j0_vjp(g, x):
    return -g * sc.j1(x)


@defjvp(sc.j1)
def j1_jvp(x, x_dot):
    return x_dot * 0.5 * (sc.j0(x) - sc.jv(2.0, x))


@defvjp(sc.j1)
def j1_vjp(g, x):
    return g * 0.5 * (sc.j0(x) - sc.jv(2.0, x))


@defjvp(sc.y0)
def y0_jvp(x, x_dot):
    return -x_dot * sc.y1(x)


@defvjp(sc.y0)
def y0_vjp(g, x):
    return -g * sc.y1(x)


@defjvp(sc.y1)
def y1_jvp(x, x_dot):
    return x_dot * 0.5 * (sc.y0(x) - sc.yv(2.0, x))


@defvjp(sc.y1)
def y1_vjp(g, x):
    return g * 0.5 * (sc.y0(x) - sc.yv(2.0, x))


@defjvp(sc.jv)
def jv_jvp(v, x, x_dot):
    return x_dot * 0.5 * (sc.jv(v - 1.0, x) - sc.jv(v + 1.0, x))


@defvjp(sc.jv, wrt=("x",))
def jv_vjp(g, v, x):
    return unbroadcast(g * 0.5 * (sc.jv(v - 1.0, x) - sc.jv(v + 1.0, x)), x)


@defjvp(sc.yv)
def yv_jvp(v, x, x_dot):
    return x_dot * 0.5 * (sc.yv(v - 1.0, x) - sc.yv(v + 1.0, x))


@defvjp(sc.yv, wrt=("x",))
def yv_vjp(g, v, x):
    return unbroadcast(g * 0.5 * (sc.yv(v - 1.0, x) - sc.yv(v + 1.0, x)), x)


@defjvp(sc.yn)
def yn_jvp(n, x, x_dot):
    return x_dot * 0.5 * (sc.yn(n - 1, x) - sc.yn(n + 1, x))


@defvjp(sc.yn, wrt=("x",))
def yn_vjp(g, n, x):
    return unbroadcast(g * 0.5 * (sc.yn(n - 1, x) - sc.yn(n + 1, x)), x)


@defjvp(sc.i0)
def i0_jvp(x, x_dot):
    return x_dot * sc.i1(x)


@defvjp(sc.i0)
def i0_vjp(g, x):
    return g * sc.i1(x)


@defjvp(sc.i1)
def i1_jvp(x, x_dot):
    return x_dot * 0.5 * (sc.i0(x) + sc.iv(2.0, x))


@defvjp(sc.i1)
def i1_vjp(g, x):
    return g * 0.5 * (sc.i0(x) + sc.iv(2.0, x))


@defjvp(sc.i0e)
def i0e_jvp(x, x_dot, ans):
    return x_dot * (sc.i1e(x) - np.sign(x) * ans)


@defvjp(sc.i0e)
def i0e_vjp(g, ans, x):
    return g * (sc.i1e(x) - np.sign(x) * ans)


@defjvp(sc.i1e)
def i1e_jvp(x, x_dot, ans):
    return x_dot * (0.5 * (sc.i0e(x) + sc.ive(2.0, x)) - np.sign(x) * ans)


@defvjp(sc.i1e)
def i1e_vjp(g, ans, x):
    return g * (0.5 * (sc.i0e(x) + sc.ive(2.0, x)) - np.sign(x) * ans)


@defjvp(sc.iv)
def iv_jvp(v, x, x_dot):
    return x_dot * 0.5 * (sc.iv(v - 1.0, x) + sc.iv(v + 1.0, x))


@defvjp(sc.iv, wrt=("x",))
def iv_vjp(g, v, x):
    return unbroadcast(g * 0.5 * (sc.iv(v - 1.0, x) + sc.iv(v + 1.0, x)), x)


@defjvp(sc.ive)
def ive_jvp(v, x, x_dot, ans):
    return x_dot * (0.5 * (sc.ive(v - 1.0, x) + sc.ive(v + 1.0, x)) - np.sign(x) * ans)


@defvjp(sc.ive, wrt=("x",))
def ive_vjp(g, ans, v, x):
    return unbroadcast(g * (0.5 * (sc.ive(v - 1.0, x) + sc.ive(v + 1.0, x))
                            - np.sign(x) * ans), x)


def multigammaln_slope(a, d):
    """d multigammaln(a, d) / da = sum_{j < d} digamma(a - j / 2)."""
    return np.sum(sc.digamma(np.expand_dims(a, -1) - 0.5 * np.arange(d)), -1)


@defjvp(sc.multigammaln)
def multigammaln_jvp(a, d, a_dot):
    return a_dot * multigammaln_slope(a, d)


@defvjp(sc.multigammaln, wrt=("a",))
def multigammaln_vjp(g, a, d):
    return g * multigammaln_slope(a, d)


@defjvp(sc.digamma, sc.psi)
def digamma_jvp(x, x_dot):
    return x_dot * sc.polygamma(1, x)


@defvjp(sc.digamma, sc.psi)
def digamma_vjp(g, x):
    return g * sc.polygamma(1, x)


@defjvp(sc.polygamma)
def polygamma_jvp(n, x, x_dot):
    return x_dot * sc.polygamma(n + 1, x)


@defvjp(sc.polygamma, wrt=("x",))
def polygamma_vjp(g, n, x):
    return g * sc.polygamma(n + 1, x)


@defjvp(sc.xlogy)
def xlogy_jvp(x1, x2, x1_dot, x2_dot):
    return x1_dot * np.log(x2) + x2_dot * (x1 / x2)


@defvjp(sc.xlogy)
def xlogy_vjp(g, x1, x2):
    return unbroadcast(g * np.log(x2), x1), unbroadcast(g * (x1 / x2), x2)


@defjvp(sc.xlog1py)
def xlog1py_jvp(x1, x2, x1_dot, x2_dot):
    return x1_dot * np.log1p(x2) + x2_dot * (x1 / (1.0 + x2))


@defvjp(sc.xlog1py)
def xlog1py_vjp(g, x1, x2):
    return unbroadcast(g * np.log1p(x2), x1), unbroadcast(g * (x1 / (1.0 + x2)), x2)


# -- for the distributions of scipy.stats ---------------------------------------------------


@defjvp(sc.log1p)
def sc_log1p_jvp(x, x_dot):
    return x_dot / (1.0 + x)


@defvjp(sc.log1p)
def sc_log1p_vjp(g, x):
    return g / (1.0 + x)


@defjvp(sc.expm1)
def sc_expm1_jvp(x, x_dot, ans):
    return x_dot * (ans + 1.0)


@defvjp(sc.expm1)
def sc_expm1_vjp(g, ans, x):
    return g * (ans + 1.0)


@defjvp(sc.cosm1)
def cosm1_jvp(x, x_dot):
    return -x_dot * np.sin(x)


@defvjp(sc.cosm1)
def cosm1_vjp(g, x):
    return -g * np.sin(x)


def exprel_slope(x, ans):
    """d/dx (e^x - 1) / x = ans + (1 - ans) / x (ans = exprel(x); no e^x to overflow); near 0,
    where that cancels, its Taylor polynomial sum n x^(n-1) / (n+1)!, so that the slope is
    itself differentiable there (exprel''(0) = 1/3)."""
    small = np.abs(x) < 1e-2
    safe_x = np.where(small, 1.0, x)
    series = 0.5 + x * (1.0 / 3.0 + x * (0.125 + x * (1.0 / 30.0 + x * (1.0 / 144.0
                                                                         + x / 840.0))))
    return np.where(small, series, ans + (1.0 - ans) / safe_x)


@defjvp(sc.exprel)
def exprel_jvp(x, x_dot, ans):
    return x_dot * exprel_slope(x, ans)


@defvjp(sc.exprel)
def exprel_vjp(g, ans, x):
    return g * exprel_slope(x, ans)


@defjvp(sc.k0)
def k0_jvp(x, x_dot):
    return -x_dot * sc.k1(x)


@defvjp(sc.k0)
def k0_vjp(g, x):
    return -g * sc.k1(x)


@defjvp(sc.k1)
def k1_jvp(x, x_dot, ans):
    return -x_dot * (sc.k0(x) + ans / x)


@defvjp(sc.k1)
def k1_vjp(g, ans, x):
    return -g * (sc.k0(x) + ans / x)


@defjvp(sc.k0e)
def k0e_jvp(x, x_dot, ans):
    return x_dot * (ans - sc.k1e(x))


@defvjp(sc.k0e)
def k0e_vjp(g, ans, x):
    return g * (ans - sc.k1e(x))


@defjvp(sc.k1e)
def k1e_jvp(x, x_dot, ans):
    return x_dot * (ans - ans / x - sc.k0e(x))


@defvjp(sc.k1e)
def k1e_vjp(g, ans, x):
    return g * (ans - ans / x - sc.k0e(x))


@defjvp(sc.kv)
def kv_jvp(v, x, x_dot):
    return -x_dot * 0.5 * (sc.kv(v - 1.0, x) + sc.kv(v + 1.0, x))


@defvjp(sc.kv, wrt=("x",))
def kv_vjp(g, v, x):
    return unbroadcast(-g * 0.5 * (sc.kv(v - 1.0, x) + sc.kv(v + 1.0, x)), x)


@defjvp(sc.kve)
def kve_jvp(v, x, x_dot, ans):
    return x_dot * (ans - 0.5 * (sc.kve(v - 1.0, x) + sc.kve(v + 1.0, x)))


@defvjp(sc.kve, wrt=("x",))
def kve_vjp(g, ans, v, x):
    return unbroadcast(g * (ans - 0.5 * (sc.kve(v - 1.0, x) + sc.kve(v + 1.0, x))), x)


def t_density(df, t):
    """d stdtr(df, t) / dt, Student's t density: (1 + t^2/df)^(-(df+1)/2) / (sqrt(df)
    B(df/2, 1/2)), in logarithms. An infinite df (stdtr is ndtr there) is taken as 1e30
    (a float32 too), whose density is the normal one to 1e-14 (no branch: a constant df
    folds away)."""
    safe_df = np.minimum(df, 1e30)
    return np.exp(-(0.5 * np.log(safe_df) + sc.betaln(0.5 * safe_df, 0.5))
                  - 0.5 * (safe_df + 1.0) * np.log1p(t * t / safe_df))


@defjvp(sc.stdtr)
def stdtr_jvp(df, t, t_dot):
    return t_dot * t_density(df, t)


@defvjp(sc.stdtr, wrt=("t",))
def stdtr_vjp(g, df, t):
    return unbroadcast(g * t_density(df, t), t)


def chi2_density(v, x):
    """d chdtr(v, x) / dx = x^(v/2-1) e^(-x/2) / (2^(v/2) Gamma(v/2)), in logarithms (xlogy:
    the finite density at 0 for v = 2)."""
    half = 0.5 * v
    return np.exp(sc.xlogy(half - 1.0, 0.5 * x) - 0.5 * x - (sc.gammaln(half) + _LOG_2))


@defjvp(sc.chdtr)
def chdtr_jvp(v, x, x_dot):
    return x_dot * chi2_density(v, x)


@defvjp(sc.chdtr, wrt=("x",))
def chdtr_vjp(g, v, x):
    return unbroadcast(g * chi2_density(v, x), x)


@defjvp(sc.chdtrc)
def chdtrc_jvp(v, x, x_dot):
    return -x_dot * chi2_density(v, x)


@defvjp(sc.chdtrc, wrt=("x",))
def chdtrc_vjp(g, v, x):
    return unbroadcast(-g * chi2_density(v, x), x)


def f_density(dfn, dfd, x):
    """d fdtr(dfn, dfd, x) / dx: the F density (dfn/dfd)^(dfn/2) x^(dfn/2-1)
    (1 + dfn x/dfd)^(-(dfn+dfd)/2) / B(dfn/2, dfd/2), in logarithms."""
    ratio = dfn / dfd
    return np.exp((0.5 * dfn * np.log(ratio) - sc.betaln(0.5 * dfn, 0.5 * dfd))
                  + sc.xlogy(0.5 * dfn - 1.0, x) - 0.5 * (dfn + dfd) * np.log1p(ratio * x))


@defjvp(sc.fdtr)
def fdtr_jvp(dfn, dfd, x, x_dot):
    return x_dot * f_density(dfn, dfd, x)


@defvjp(sc.fdtr, wrt=("x",))
def fdtr_vjp(g, dfn, dfd, x):
    return unbroadcast(g * f_density(dfn, dfd, x), x)


@defjvp(sc.fdtrc)
def fdtrc_jvp(dfn, dfd, x, x_dot):
    return -x_dot * f_density(dfn, dfd, x)


@defvjp(sc.fdtrc, wrt=("x",))
def fdtrc_vjp(g, dfn, dfd, x):
    return unbroadcast(-g * f_density(dfn, dfd, x), x)


@defjvp(sc.betaincc)
def betaincc_jvp(a, b, x, x_dot):
    return -x_dot * beta_density(a, b, x)


@defvjp(sc.betaincc, wrt=("x",))
def betaincc_vjp(g, a, b, x):
    return unbroadcast(-g * beta_density(a, b, x), x)


def boxcox_lmbda_slope(log_x, lmbda):
    """d boxcox(x, lmbda) / d lmbda: boxcox(x, l) = L exprel(l L) with L = log(x), so the slope
    is L^2 exprel'(l L) (log(x)^2 / 2 at lmbda = 0, without cancelling near it)."""
    u = lmbda * log_x
    return log_x * log_x * exprel_slope(u, sc.exprel(u))


@defjvp(sc.boxcox)
def boxcox_jvp(x, lmbda, x_dot, lmbda_dot):
    log_x = np.log(x)
    return x_dot * np.exp((lmbda - 1.0) * log_x) + lmbda_dot * boxcox_lmbda_slope(log_x, lmbda)


@defvjp(sc.boxcox)
def boxcox_vjp(g, x, lmbda):
    log_x = np.log(x)
    return (unbroadcast(g * np.exp((lmbda - 1.0) * log_x), x),
            unbroadcast(g * boxcox_lmbda_slope(log_x, lmbda), lmbda))


@defjvp(sc.boxcox1p)
def boxcox1p_jvp(x, lmbda, x_dot, lmbda_dot):
    log_x = np.log1p(x)
    return x_dot * np.exp((lmbda - 1.0) * log_x) + lmbda_dot * boxcox_lmbda_slope(log_x, lmbda)


@defvjp(sc.boxcox1p)
def boxcox1p_vjp(g, x, lmbda):
    log_x = np.log1p(x)
    return (unbroadcast(g * np.exp((lmbda - 1.0) * log_x), x),
            unbroadcast(g * boxcox_lmbda_slope(log_x, lmbda), lmbda))


# inv_boxcox(y, l) = x solves boxcox(x, l) = y: dx/dy = x^(1-l), dx/dl = -x^(1-l) times
# boxcox's slope in lmbda at x


@defjvp(sc.inv_boxcox)
def inv_boxcox_jvp(y, lmbda, y_dot, lmbda_dot, ans):
    log_x = np.log(ans)
    slope = np.exp((1.0 - lmbda) * log_x)
    return slope * (y_dot - lmbda_dot * boxcox_lmbda_slope(log_x, lmbda))


@defvjp(sc.inv_boxcox)
def inv_boxcox_vjp(g, ans, y, lmbda):
    log_x = np.log(ans)
    g_y = g * np.exp((1.0 - lmbda) * log_x)
    return unbroadcast(g_y, y), unbroadcast(-g_y * boxcox_lmbda_slope(log_x, lmbda), lmbda)


@defjvp(sc.inv_boxcox1p)
def inv_boxcox1p_jvp(y, lmbda, y_dot, lmbda_dot, ans):
    log_x = np.log1p(ans)
    slope = np.exp((1.0 - lmbda) * log_x)
    return slope * (y_dot - lmbda_dot * boxcox_lmbda_slope(log_x, lmbda))


@defvjp(sc.inv_boxcox1p)
def inv_boxcox1p_vjp(g, ans, y, lmbda):
    log_x = np.log1p(ans)
    g_y = g * np.exp((1.0 - lmbda) * log_x)
    return unbroadcast(g_y, y), unbroadcast(-g_y * boxcox_lmbda_slope(log_x, lmbda), lmbda)


def tukey_slopes(p, lmbda):
    """The slopes of p = tklmbda(x, l) in x and in l, from its quantile function
    Q(p) = boxcox(p, l) - boxcox(1 - p, l): 1 / Q'(p) with Q'(p) = p^(l-1) + (1-p)^(l-1), and
    -(dQ/dl) / Q'(p); 0 where p is 0 or 1 (outside the support when l > 0)."""
    inside = (p > 0.0) & (p < 1.0)
    safe_p = np.where(inside, p, 0.5)
    log_p, log_q = np.log(safe_p), np.log1p(-safe_p)
    dx = 1.0 / (np.exp((lmbda - 1.0) * log_p) + np.exp((lmbda - 1.0) * log_q))
    dl = dx * (boxcox_lmbda_slope(log_q, lmbda) - boxcox_lmbda_slope(log_p, lmbda))
    return np.where(inside, dx, 0.0), np.where(inside, dl, 0.0)


@defjvp(sc.tklmbda)
def tklmbda_jvp(x, lmbda, x_dot, lmbda_dot, ans):
    dx, dl = tukey_slopes(ans, lmbda)
    return x_dot * dx + lmbda_dot * dl


@defvjp(sc.tklmbda)
def tklmbda_vjp(g, ans, x, lmbda):
    dx, dl = tukey_slopes(ans, lmbda)
    return unbroadcast(g * dx, x), unbroadcast(g * dl, lmbda)



# -- more of scipy.special ------------------------------------------------------------------


@defjvp(sc.ndtri)
def ndtri_jvp(p, p_dot, ans):
    # the inverse of ndtr: one over the normal density at the quantile
    return p_dot * _SQRT_2PI * np.exp(0.5 * ans * ans)


@defvjp(sc.ndtri)
def ndtri_vjp(g, ans, p):
    return g * _SQRT_2PI * np.exp(0.5 * ans * ans)


@defjvp(sc.ndtri_exp)
def ndtri_exp_jvp(y, y_dot, ans):
    # ndtri(exp(y)): exp(y) over the normal density at the quantile, in one exponential
    return y_dot * _SQRT_2PI * np.exp(y + 0.5 * ans * ans)


@defvjp(sc.ndtri_exp)
def ndtri_exp_vjp(g, ans, y):
    return g * _SQRT_2PI * np.exp(y + 0.5 * ans * ans)


def entr_slope(x):
    """d/dx -x log(x) = -log(x) - 1: +inf at 0 (the one-sided slope, as sqrt's at 0), 0 where
    x < 0 (entr is -inf there)."""
    return np.where(x < 0.0, 0.0, -np.log(np.abs(x)) - 1.0)


@defjvp(sc.entr)
def entr_jvp(x, x_dot):
    return x_dot * entr_slope(x)


@defvjp(sc.entr)
def entr_vjp(g, x):
    return g * entr_slope(x)


def rel_entr_slopes(x, y):
    """d/dx and d/dy of x log(x / y): log(x / y) + 1 and -x / y where x > 0 and y > 0; at
    x = 0 (rel_entr is 0 there for y >= 0) the one-sided slopes -inf and 0; 0 and 0 where
    rel_entr is inf."""
    inside = (x > 0.0) & (y > 0.0)
    safe_x = np.where(inside, x, 1.0)
    safe_y = np.where(inside, y, 1.0)
    at_zero = (x == 0.0) & (y >= 0.0)
    dx = np.where(inside, np.log(safe_x / safe_y) + 1.0, np.where(at_zero, -np.inf, 0.0))
    return dx, np.where(inside, -safe_x / safe_y, 0.0)


@defjvp(sc.rel_entr)
def rel_entr_jvp(x, y, x_dot, y_dot):
    dx, dy = rel_entr_slopes(x, y)
    return x_dot * dx + y_dot * dy


@defvjp(sc.rel_entr)
def rel_entr_vjp(g, x, y):
    dx, dy = rel_entr_slopes(x, y)
    return unbroadcast(g * dx, x), unbroadcast(g * dy, y)


# kl_div(x, y) = rel_entr(x, y) - x + y: its slopes are rel_entr's minus 1 in x, plus 1 in y
# (where it is inf, 0 and 0)


@defjvp(sc.kl_div)
def kl_div_jvp(x, y, x_dot, y_dot):
    dx, dy = rel_entr_slopes(x, y)
    finite = (x >= 0.0) & (y >= 0.0) & ((x == 0.0) | (y > 0.0))
    return x_dot * np.where(finite, dx - 1.0, 0.0) + y_dot * np.where(finite, dy + 1.0, 0.0)


@defvjp(sc.kl_div)
def kl_div_vjp(g, x, y):
    dx, dy = rel_entr_slopes(x, y)
    finite = (x >= 0.0) & (y >= 0.0) & ((x == 0.0) | (y > 0.0))
    return (unbroadcast(g * np.where(finite, dx - 1.0, 0.0), x),
            unbroadcast(g * np.where(finite, dy + 1.0, 0.0), y))


def huber_slopes(delta, r):
    """d/d delta and d/dr of huber: r^2 / 2 where |r| <= delta, delta (|r| - delta / 2)
    elsewhere (both slopes continuous at |r| = delta); 0 where delta < 0 (huber is inf)."""
    size = np.abs(r)
    inner = size <= delta
    # (not `~(delta >= 0.0)`: of a Python float that is ~True, -2, a true value)
    d_delta = np.where(inner | (delta < 0.0), 0.0, size - delta)
    d_r = np.where(delta >= 0.0, np.where(inner, r, delta * np.sign(r)), 0.0)
    return d_delta, d_r


@defjvp(sc.huber)
def huber_jvp(delta, r, delta_dot, r_dot):
    d_delta, d_r = huber_slopes(delta, r)
    return delta_dot * d_delta + r_dot * d_r


@defvjp(sc.huber)
def huber_vjp(g, delta, r):
    d_delta, d_r = huber_slopes(delta, r)
    return unbroadcast(g * d_delta, delta), unbroadcast(g * d_r, r)


def pseudo_huber_slopes(delta, r):
    """d/d delta and d/dr of delta^2 (s - 1), s = sqrt(1 + (r / delta)^2): delta t^2 / s with
    t = s - 1 = v^2 / (s + 1), v = r / delta (no cancellation for small r), and r / s. At
    delta = 0, where pseudo_huber is 0 for every r: |r| (the one-sided slope) and 0; 0 and 0
    where delta < 0 (pseudo_huber is inf)."""
    positive = delta > 0.0
    safe_delta = np.where(positive, delta, 1.0)
    v = r / safe_delta
    s = np.sqrt(1.0 + v * v)
    t = v * v / (s + 1.0)
    d_delta = np.where(positive, safe_delta * t * t / s, np.where(delta == 0.0, np.abs(r), 0.0))
    return d_delta, np.where(positive, r / s, 0.0)


@defjvp(sc.pseudo_huber)
def pseudo_huber_jvp(delta, r, delta_dot, r_dot):
    d_delta, d_r = pseudo_huber_slopes(delta, r)
    return delta_dot * d_delta + r_dot * d_r


@defvjp(sc.pseudo_huber)
def pseudo_huber_vjp(g, delta, r):
    d_delta, d_r = pseudo_huber_slopes(delta, r)
    return unbroadcast(g * d_delta, delta), unbroadcast(g * d_r, r)


@defjvp(sc.poch)
def poch_jvp(z, m, z_dot, m_dot, ans):
    # poch(z, m) = Gamma(z + m) / Gamma(z)
    both = sc.digamma(z + m)
    return ans * (z_dot * (both - sc.digamma(z)) + m_dot * both)


@defvjp(sc.poch)
def poch_vjp(g, ans, z, m):
    both = g * ans * sc.digamma(z + m)
    return unbroadcast(both - g * ans * sc.digamma(z), z), unbroadcast(both, m)


def spence_slope(z):
    """d/dz of spence(z) = integral from 1 to z of log(t) / (1 - t) dt: log(z) / (1 - z),
    written -log1p(u) / u with u = z - 1; near 1 its Taylor polynomial -1 + u/2 - u^2/3 + ...,
    so that the slope is itself differentiable there (its own slope cancels in closed
    form)."""
    u = z - 1.0
    small = np.abs(u) < 1e-2
    safe_u = np.where(small, 1.0, u)
    series = -1.0 + u * (0.5 + u * (-1.0 / 3.0 + u * (0.25 + u * (-0.2 + u / 6.0))))
    return np.where(small, series, -np.log1p(safe_u) / safe_u)


@defjvp(sc.spence)
def spence_jvp(z, z_dot):
    return z_dot * spence_slope(z)


@defvjp(sc.spence)
def spence_vjp(g, z):
    return g * spence_slope(z)


def owens_t_slopes(h, a):
    """Owen's T(h, a) = 1/(2 pi) integral from 0 to a of exp(-h^2 (1 + x^2) / 2) / (1 + x^2)
    dx: d/dh = -phi(h) erf(a h / sqrt 2) / 2 (phi the normal density), d/da the integrand
    at a."""
    half_h2 = 0.5 * h * h
    one_a2 = 1.0 + a * a
    d_h = -0.5 * np.exp(-half_h2) / _SQRT_2PI * sc.erf(a * h / _SQRT_2)
    d_a = np.exp(-half_h2 * one_a2) / (2.0 * np.pi * one_a2)
    return d_h, d_a


@defjvp(sc.owens_t)
def owens_t_jvp(h, a, h_dot, a_dot):
    d_h, d_a = owens_t_slopes(h, a)
    return h_dot * d_h + a_dot * d_a


@defvjp(sc.owens_t)
def owens_t_vjp(g, h, a):
    d_h, d_a = owens_t_slopes(h, a)
    return unbroadcast(g * d_h, h), unbroadcast(g * d_a, a)


@defcheck(sc.zeta)
def zeta_check(out=None):
    if isinstance(out, Unknown) or out is not None:
        return "out= (compute zeta(x, q), then write it where you need it)"
    return None


@defjvp(sc.zeta)
def zeta_jvp(x, q=None, out=None, q_dot=0.0):
    # Hurwitz zeta(x, q) = sum over k >= 0 of (k + q)^-x
    return -q_dot * x * sc.zeta(x + 1.0, q)


@defvjp(sc.zeta, wrt=("q",))
def zeta_vjp(g, x, q=None, out=None):
    return unbroadcast(-g * x * sc.zeta(x + 1.0, q), q)


_ZETA_X = ("its derivative in x (a sum of -log(k + q) (k + q)^-x) has no closed form in SciPy",
           "differentiate zeta(x, q) in q only (x computed from values you do not "
           "differentiate), or wrap the call in a function of your own and give it rules with "
           "@s2sad.defjvp / @s2sad.defvjp")
refuse_arguments(zeta_jvp, zeta_vjp, x=_ZETA_X)


# -- rules that take complex arguments too (holomorphic functions: their VJP is g f'(z), JAX's
# convention, docs/rules.md "Complex numbers") ----------------------------------------------


@defjvp(sc.dawsn)
def dawsn_jvp(x, x_dot, ans):
    return x_dot * (1.0 - 2.0 * x * ans)


@defvjp(sc.dawsn)
def dawsn_vjp(g, ans, x):
    return g * (1.0 - 2.0 * x * ans)


@defjvp(sc.erfcx)
def erfcx_jvp(x, x_dot, ans):
    # erfcx = exp(x^2) erfc(x)
    return x_dot * (2.0 * x * ans - 2.0 / _SQRT_PI)


@defvjp(sc.erfcx)
def erfcx_vjp(g, ans, x):
    return g * (2.0 * x * ans - 2.0 / _SQRT_PI)


@defjvp(sc.erfi)
def erfi_jvp(x, x_dot):
    return x_dot * (2.0 / _SQRT_PI) * np.exp(x * x)


@defvjp(sc.erfi)
def erfi_vjp(g, x):
    return g * (2.0 / _SQRT_PI) * np.exp(x * x)


@defjvp(sc.wofz)
def wofz_jvp(z, z_dot, ans):
    # the Faddeeva function w(z) = exp(-z^2) erfc(-iz): w' = -2 z w + 2i / sqrt(pi)
    return z_dot * (2j / _SQRT_PI - 2.0 * z * ans)


@defvjp(sc.wofz)
def wofz_vjp(g, ans, z):
    return g * (2j / _SQRT_PI - 2.0 * z * ans)


@defjvp(sc.loggamma)
def loggamma_jvp(z, z_dot):
    return z_dot * sc.psi(z)


@defvjp(sc.loggamma)
def loggamma_vjp(g, z):
    return g * sc.psi(z)


# the rules above for which a complex argument is right (the others refuse one)
HOLOMORPHIC = (sc.dawsn, sc.erfcx, sc.erfi, sc.wofz, sc.loggamma)

SCIPY_SPECIAL = (sc.logsumexp, sc.softmax, sc.log_softmax, sc.expit, sc.logit, sc.log_expit,
                 sc.erf, sc.erfc, sc.erfinv, sc.erfcinv, sc.ndtr, sc.log_ndtr, sc.gammaln,
                 sc.gamma, sc.rgamma, sc.digamma, sc.psi, sc.polygamma, sc.multigammaln,
                 sc.beta, sc.betaln, sc.gammainc, sc.gammaincc, sc.betainc, sc.j0, sc.j1,
                 sc.y0, sc.y1, sc.jv, sc.yv, sc.yn, sc.i0, sc.i1, sc.i0e, sc.i1e, sc.iv,
                 sc.ive, sc.xlogy, sc.xlog1py, sc.log1p, sc.expm1, sc.cosm1, sc.exprel,
                 sc.k0, sc.k1, sc.k0e, sc.k1e, sc.kv, sc.kve, sc.stdtr, sc.chdtr, sc.chdtrc,
                 sc.fdtr, sc.fdtrc, sc.betaincc, sc.boxcox, sc.boxcox1p, sc.inv_boxcox,
                 sc.inv_boxcox1p, sc.tklmbda, sc.ndtri, sc.ndtri_exp, sc.entr, sc.rel_entr,
                 sc.kl_div, sc.huber, sc.pseudo_huber, sc.poch, sc.spence, sc.owens_t, sc.zeta)

def_linear(sc.xlogy, wrt=(0,))
def_nondiff(sc.gammasgn)  # the sign of Gamma: piecewise constant
for _fn in SCIPY_SPECIAL:
    defcheck(_fn)(real_only(TABLE.checks.get(_fn)))
