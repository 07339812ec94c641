"""Rules for `scipy.special`: logsumexp softmax log_softmax expit logit log_expit erf erfc
erfinv erfcinv ndtr log_ndtr gammaln gamma rgamma digamma psi polygamma multigammaln beta betaln
gammainc gammaincc betainc j0 j1 y0 y1 jv yv yn i0 i1 i0e i1e iv ive xlogy xlog1py.

SciPy is optional (installed with the `numba` extra) and slow to import, so this module is
loaded only once a differentiated function calls one of these functions: the rule table
imports it on the first lookup of a `scipy.special` callable (registry.RuleTable). The
rules are for real arguments; complex ones are refused.

`logsumexp(a, axis, b, keepdims)` differentiates `a` and the weights `b` (its cotangent is
summed where `b` was broadcast); `return_sign=True` is refused. `polygamma(n, x)` is
differentiated in `x` (the order `n` is an integer); so are the Bessel functions `jv(v, x)`,
`yv`, `yn`, `iv`, `ive` in `x` (not in the order), `gammainc(a, x)`/`gammaincc(a, x)` in `x`
and `betainc(a, b, x)` in `x` (their derivatives in the shape parameters have no closed form),
and `multigammaln(a, d)` in `a`. Recurrences used: J_v' = (J_{v-1} - J_{v+1}) / 2 (the same
for Y), I_v' = (I_{v-1} + I_{v+1}) / 2, ive = iv e^{-|x|}; `i0e`/`i1e` likewise.
"""

import numpy as np
import scipy.special as sc

from s2sad.ir.prims import unbroadcast
from s2sad_rules.numpy_reductions import expand_reduced
from s2sad_rules.real_only import real_only
from s2sad_rules.refusals import supported
from s2sad_rules.registry import TABLE, Unknown, def_linear, def_nondiff, defcheck, defjvp, defvjp

_SQRT_PI = 1.7724538509055159
_SQRT_2PI = 2.5066282746310002


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


SCIPY_SPECIAL = (sc.logsumexp, sc.softmax, sc.log_softmax, sc.expit, sc.logit, sc.log_expit,
                 sc.erf, sc.erfc, sc.erfinv, sc.erfcinv, sc.ndtr, sc.log_ndtr, sc.gammaln,
                 sc.gamma, sc.rgamma, sc.digamma, sc.psi, sc.polygamma, sc.multigammaln,
                 sc.beta, sc.betaln, sc.gammainc, sc.gammaincc, sc.betainc, sc.j0, sc.j1,
                 sc.y0, sc.y1, sc.jv, sc.yv, sc.yn, sc.i0, sc.i1, sc.i0e, sc.i1e, sc.iv,
                 sc.ive, sc.xlogy, sc.xlog1py)

def_linear(sc.xlogy, wrt=(0,))
def_nondiff(sc.gammasgn)  # the sign of Gamma: piecewise constant
for _fn in SCIPY_SPECIAL:
    defcheck(_fn)(real_only(TABLE.checks.get(_fn)))
