"""Rules for `scipy.special`: logsumexp softmax log_softmax expit logit log_expit erf erfc
erfinv ndtr log_ndtr gammaln gamma digamma psi polygamma xlogy xlog1py.

SciPy is optional (installed with the `numba` extra) and slow to import, so this module is
loaded only once a differentiated function calls one of these functions: the rule table
imports it on the first lookup of a `scipy.special` callable (registry.RuleTable). The
rules are for real arguments; complex ones are refused.

`logsumexp(a, axis, b, keepdims)` differentiates `a` and the weights `b` (its cotangent is
summed where `b` was broadcast); `return_sign=True` is refused. `polygamma(n, x)` is
differentiated in `x` (the order `n` is an integer).
"""

import numpy as np
import scipy.special as sc

from s2sad.ir.prims import unbroadcast
from s2sad_rules.numpy_reductions import expand_reduced
from s2sad_rules.real_only import real_only
from s2sad_rules.refusals import supported
from s2sad_rules.registry import TABLE, Unknown, defcheck, defjvp, defvjp, def_linear

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
                 sc.erf, sc.erfc, sc.erfinv, sc.ndtr, sc.log_ndtr, sc.gammaln, sc.gamma,
                 sc.digamma, sc.psi, sc.polygamma, sc.xlogy, sc.xlog1py)

def_linear(sc.xlogy, wrt=(0,))
for _fn in SCIPY_SPECIAL:
    defcheck(_fn)(real_only(TABLE.checks.get(_fn)))
