"""Rules for the NumPy binary elementwise functions not in operators.py / numpy_elementwise.py.

Conventions: ties in `fmax`/`fmin` split the derivative evenly (as `maximum`);
`fmax`/`fmin` route the whole derivative to the non-NaN operand; `mod`,
`remainder` and `fmod` have derivative 1 in the dividend and -floor(x/y)
(-trunc(x/y) for fmod) in the divisor, away from their jumps; `divmod` (builtin and
np.divmod) is (floor division, mod): the quotient is piecewise constant (tangent 0), the
remainder differentiates as `mod`; `copysign` is
constant in its second argument.
"""

import operator

import numpy as np

from s2sad.ir.prims import make_tuple, unbroadcast, zeros_like
from s2sad_rules.kind_tests import is_complex
from s2sad_rules.numpy_elementwise import gap_to_result, infinite_split
from s2sad_rules.registry import defjvp, defvjp

LN2 = 0.6931471805599453


@defjvp(np.float_power)
def float_power_jvp(x1, x2, x1_dot, x2_dot, ans):
    return x1_dot * x2 * np.float_power(x1, x2 - 1.0) + x2_dot * ans * power_log(x1, x2)


@defvjp(np.float_power)
def float_power_vjp(g, ans, x1, x2):
    return (unbroadcast(g * x2 * np.float_power(x1, x2 - 1.0), x1),
            unbroadcast(g * ans * power_log(x1, x2), x2))


def power_log(x1, x2):
    """log(x1), the complex logarithm for a real x1 with a complex exponent (a negative x1
    then has a complex power)."""
    if is_complex(x2):
        if is_complex(x1):
            return np.log(x1)
        return np.log(x1 + 0j)
    return np.log(x1)


def fmax_weight(x1, x2):
    """Share of the derivative that goes to x1: 1, 0, or 1/2 on a tie; all of it if x2 is NaN."""
    return (x1 > x2) + 0.5 * (x1 == x2) + np.isnan(x2)


@defjvp(np.fmax)
def fmax_jvp(x1, x2, x1_dot, x2_dot):
    w = fmax_weight(x1, x2)
    return w * x1_dot + (1.0 - w) * x2_dot


@defvjp(np.fmax)
def fmax_vjp(g, x1, x2):
    w = fmax_weight(x1, x2)
    return unbroadcast(g * w, x1), unbroadcast(g * (1.0 - w), x2)


@defjvp(np.fmin)
def fmin_jvp(x1, x2, x1_dot, x2_dot):
    w = fmax_weight(x2, x1)
    return w * x1_dot + (1.0 - w) * x2_dot


@defvjp(np.fmin)
def fmin_vjp(g, x1, x2):
    w = fmax_weight(x2, x1)
    return unbroadcast(g * w, x1), unbroadcast(g * (1.0 - w), x2)


def logaddexp2_share(x, other, ans):
    """x's share 2 ** (x - ans) of logaddexp2, finite at infinite arguments (as
    numpy_elementwise.logaddexp_share)."""
    return infinite_split(x, other, np.exp2(gap_to_result(x, ans)))


@defjvp(np.logaddexp2)
def logaddexp2_jvp(x1, x2, x1_dot, x2_dot, ans):
    return x1_dot * logaddexp2_share(x1, x2, ans) + \
        x2_dot * logaddexp2_share(x2, x1, ans)


@defvjp(np.logaddexp2)
def logaddexp2_vjp(g, ans, x1, x2):
    return unbroadcast(g * logaddexp2_share(x1, x2, ans), x1), \
        unbroadcast(g * logaddexp2_share(x2, x1, ans), x2)


@defjvp(np.mod, np.remainder, operator.mod)
def mod_jvp(x1, x2, x1_dot, x2_dot):
    return x1_dot - x2_dot * np.floor_divide(x1, x2)


@defvjp(np.mod, np.remainder, operator.mod)
def mod_vjp(g, x1, x2):
    return unbroadcast(g, x1), unbroadcast(-g * np.floor_divide(x1, x2), x2)


@defjvp(np.divmod, divmod)
def divmod_jvp(x1, x2, x1_dot, x2_dot, ans):
    return make_tuple(zeros_like(ans[0]), x1_dot - x2_dot * ans[0])


@defvjp(np.divmod, divmod)
def divmod_vjp(g, ans, x1, x2):
    return unbroadcast(g[1], x1), unbroadcast(-g[1] * ans[0], x2)


@defjvp(np.fmod)
def fmod_jvp(x1, x2, x1_dot, x2_dot):
    return x1_dot - x2_dot * np.trunc(x1 / x2)


@defvjp(np.fmod)
def fmod_vjp(g, x1, x2):
    return unbroadcast(g, x1), unbroadcast(-g * np.trunc(x1 / x2), x2)


@defjvp(np.copysign)
def copysign_jvp(x1, x2, x1_dot, x2_dot, ans):
    # x2 only chooses a sign: its derivative is 0 (x2_dot is accepted and ignored)
    return x1_dot * np.sign(x1) * np.sign(ans)


@defvjp(np.copysign)
def copysign_vjp(g, ans, x1, x2):
    return unbroadcast(g * np.sign(x1) * np.sign(ans), x1), zeros_like(x2)
