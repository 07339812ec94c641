"""Rules for NumPy's elementwise functions (ufuncs and friends).

`where` is NaN-safe in both modes: its JVP is the selected branch's tangent, and in reverse mode
the unselected branch gets an exact 0, the reverse pass repeating the selection on what every
elementwise VJP downstream of the `where` passes back (sqrt or log of an unselected entry at or
below 0 gives no NaN).
"""

import numpy as np

from s2sad.ir.prims import unbroadcast, zeros_like
from s2sad_rules.registry import defjvp, defvjp


@defjvp(np.sin)
def sin_jvp(x, x_dot):
    return x_dot * np.cos(x)


@defvjp(np.sin)
def sin_vjp(g, x):
    return g * np.cos(x)


@defjvp(np.cos)
def cos_jvp(x, x_dot):
    return -x_dot * np.sin(x)


@defvjp(np.cos)
def cos_vjp(g, x):
    return -g * np.sin(x)


@defjvp(np.tan)
def tan_jvp(x, x_dot, ans):
    return x_dot * (1.0 + ans * ans)


@defvjp(np.tan)
def tan_vjp(g, ans, x):
    return g * (1.0 + ans * ans)


@defjvp(np.arcsin)
def arcsin_jvp(x, x_dot):
    return x_dot / np.sqrt(1.0 - x * x)


@defvjp(np.arcsin)
def arcsin_vjp(g, x):
    return g / np.sqrt(1.0 - x * x)


@defjvp(np.arccos)
def arccos_jvp(x, x_dot):
    return -x_dot / np.sqrt(1.0 - x * x)


@defvjp(np.arccos)
def arccos_vjp(g, x):
    return -g / np.sqrt(1.0 - x * x)


@defjvp(np.arctan)
def arctan_jvp(x, x_dot):
    return x_dot / (1.0 + x * x)


@defvjp(np.arctan)
def arctan_vjp(g, x):
    return g / (1.0 + x * x)


@defjvp(np.sinh)
def sinh_jvp(x, x_dot):
    return x_dot * np.cosh(x)


@defvjp(np.sinh)
def sinh_vjp(g, x):
    return g * np.cosh(x)


@defjvp(np.cosh)
def cosh_jvp(x, x_dot):
    return x_dot * np.sinh(x)


@defvjp(np.cosh)
def cosh_vjp(g, x):
    return g * np.sinh(x)


@defjvp(np.tanh)
def tanh_jvp(x, x_dot, ans):
    return x_dot * (1.0 - ans * ans)


@defvjp(np.tanh)
def tanh_vjp(g, ans, x):
    return g * (1.0 - ans * ans)


@defjvp(np.exp)
def exp_jvp(x, x_dot, ans):
    return x_dot * ans


@defvjp(np.exp)
def exp_vjp(g, ans, x):
    return g * ans


@defjvp(np.expm1)
def expm1_jvp(x, x_dot, ans):
    return x_dot * (ans + 1.0)


@defvjp(np.expm1)
def expm1_vjp(g, ans, x):
    return g * (ans + 1.0)


# The log family divides by its argument, which may be a Python float: np.divide keeps
# NumPy's semantics there (1/0 is inf with a warning, as np.log(0.0) is -inf), where the
# `/` of two Python floats would raise ZeroDivisionError.


@defjvp(np.log)
def log_jvp(x, x_dot):
    return np.divide(x_dot, x)


@defvjp(np.log)
def log_vjp(g, x):
    return np.divide(g, x)


@defjvp(np.log1p)
def log1p_jvp(x, x_dot):
    return np.divide(x_dot, 1.0 + x)


@defvjp(np.log1p)
def log1p_vjp(g, x):
    return np.divide(g, 1.0 + x)


@defjvp(np.sqrt)
def sqrt_jvp(x, x_dot, ans):
    return x_dot / (2.0 * ans)


@defvjp(np.sqrt)
def sqrt_vjp(g, ans, x):
    return g / (2.0 * ans)


@defjvp(np.square)
def square_jvp(x, x_dot):
    return 2.0 * x * x_dot


@defvjp(np.square)
def square_vjp(g, x):
    return 2.0 * x * g


@defjvp(np.reciprocal)
def reciprocal_jvp(x, x_dot, ans):
    return -x_dot * ans * ans


@defvjp(np.reciprocal)
def reciprocal_vjp(g, ans, x):
    return -g * ans * ans


@defjvp(np.maximum)
def maximum_jvp(x, y, x_dot, y_dot):
    # ties split the derivative evenly between the operands
    wx = (x > y) + 0.5 * (x == y)
    return wx * x_dot + (1.0 - wx) * y_dot


@defvjp(np.maximum)
def maximum_vjp(g, x, y):
    wx = (x > y) + 0.5 * (x == y)
    return unbroadcast(g * wx, x), unbroadcast(g * (1.0 - wx), y)


@defjvp(np.minimum)
def minimum_jvp(x, y, x_dot, y_dot):
    wx = (x < y) + 0.5 * (x == y)
    return wx * x_dot + (1.0 - wx) * y_dot


@defvjp(np.minimum)
def minimum_vjp(g, x, y):
    wx = (x < y) + 0.5 * (x == y)
    return unbroadcast(g * wx, x), unbroadcast(g * (1.0 - wx), y)


@defjvp(np.arctan2)
def arctan2_jvp(y, x, y_dot, x_dot):
    return (x * y_dot - y * x_dot) / (x * x + y * y)


@defvjp(np.arctan2)
def arctan2_vjp(g, y, x):
    r2 = x * x + y * y
    return unbroadcast(g * x / r2, y), unbroadcast(-g * y / r2, x)


@defjvp(np.hypot)
def hypot_jvp(x, y, x_dot, y_dot, ans):
    return (x * x_dot + y * y_dot) / ans


@defvjp(np.hypot)
def hypot_vjp(g, ans, x, y):
    return unbroadcast(g * x / ans, x), unbroadcast(g * y / ans, y)


@defjvp(np.heaviside)
def heaviside_jvp(x1, x2, x1_dot, x2_dot):
    # a step in x1 (its derivative is 0, also at the step, as np.sign's); x2 is the value
    # taken where x1 == 0
    return (x1 == 0) * x2_dot


@defvjp(np.heaviside)
def heaviside_vjp(g, x1, x2):
    return zeros_like(x1), unbroadcast(g * (x1 == 0), x2)


@defjvp(np.logaddexp)
def logaddexp_jvp(x, y, x_dot, y_dot, ans):
    return x_dot * logaddexp_share(x, y, ans) + y_dot * logaddexp_share(y, x, ans)


@defvjp(np.logaddexp)
def logaddexp_vjp(g, ans, x, y):
    return unbroadcast(g * logaddexp_share(x, y, ans), x), \
        unbroadcast(g * logaddexp_share(y, x, ans), y)


def logaddexp_share(x, other, ans):
    """x's share exp(x - ans) of logaddexp, also at infinite arguments, as JAX: 1 where x is
    the infinite result (not exp(inf - inf)), 0 for -inf beside a larger argument, 1/2 each
    where both are the same infinity."""
    return infinite_split(x, other, np.exp(gap_to_result(x, ans)))


def gap_to_result(x, ans):
    """x - ans, 0 where x is the result itself (also an infinite one: no inf - inf)."""
    same = x == ans
    return np.where(same, 0.0, x) - np.where(same, 0.0, ans)


def infinite_split(x, other, share):
    """`share`, 1/2 where both arguments are the same infinity."""
    return np.where(np.isinf(x) & (x == other), 0.5, share)


@defjvp(np.where)
def where_jvp(condition, x, y, x_dot, y_dot):
    return np.where(condition, x_dot, y_dot)


@defvjp(np.where, wrt=("x", "y"))
def where_vjp(g, condition, x, y):
    # the unselected branch gets an exact zero, even where its value is NaN or inf
    return unbroadcast(np.where(condition, g, 0.0), x), unbroadcast(np.where(condition, 0.0, g), y)


@defjvp(np.clip)
def clip_jvp(a, a_min, a_max, a_dot):
    # inside the bounds, ends included; np.clip itself handles a bound given as None
    return a_dot * (np.clip(a, a_min, a_max) == a)


@defvjp(np.clip, wrt=("a",))
def clip_vjp(g, a, a_min, a_max):
    return unbroadcast(g * (np.clip(a, a_min, a_max) == a), a)


# np.where is linear in (x, y) jointly, not in each separately: no def_linear entry
