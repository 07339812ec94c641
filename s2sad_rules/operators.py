"""Rules for Python's operators and the differentiable builtins (abs, min, max, float, pow).

Conventions for `x ** y` (and np.power, pow): the derivative in x is 0 where y == 0 (x**0 is
the constant 1, even at x = 0) and infinite at x = 0 for 0 < y < 1; the derivative in y is
0 at x == 0 (log(x) is taken as 0 there, as in JAX). `abs` of a complex z has tangent
Re(conj(z/|z|) dz) and cotangent g conj(z/|z|) (JAX's convention for complex cotangents:
g (d/dx - i d/dy) for z = x + iy); the derivative at 0 is 0.

The same rules serve NumPy's ufunc spellings (np.add, np.multiply, ...).
`unbroadcast(g, x)` sums a cotangent back to the shape of a broadcast operand;
the compiler removes it when the shapes are known to match.
"""

import operator

import numpy as np

from s2sad.ir.prims import cast_like, unbroadcast, zeros_like
from s2sad_rules.kind_tests import is_complex, is_none, is_safe_exponent
from s2sad.errors import MissingRuleError
from s2sad_rules.numpy_reductions import extreme_bar, extreme_tangent
from s2sad_rules.registry import Unknown, def_linear, defcheck, defjvp, defvjp


def real_like(z, a):
    """The cotangent of `a` from a complex z: z for a complex `a`, its real part for a real one
    (JAX's convention: a real input's cotangent is real)."""
    if is_complex(a):
        return z
    return np.real(z)


def mixed_bar(z, a, b):
    """The cotangent z of operand `a` of a binary operation with `b`: its real part where a is
    real and b complex (z is complex only then). Decided at compile time from the operands'
    kinds, never the cotangent's (which vector mode batches)."""
    if is_complex(b):
        return real_like(z, a)
    return z


@defjvp(operator.add, np.add)
def add_jvp(x, y, x_dot, y_dot):
    return x_dot + y_dot


@defvjp(operator.add, np.add)
def add_vjp(g, x, y):
    return unbroadcast(mixed_bar(g, x, y), x), unbroadcast(mixed_bar(g, y, x), y)


@defjvp(operator.sub, np.subtract)
def sub_jvp(x, y, x_dot, y_dot):
    return x_dot - y_dot


@defvjp(operator.sub, np.subtract)
def sub_vjp(g, x, y):
    return unbroadcast(mixed_bar(g, x, y), x), unbroadcast(mixed_bar(-g, y, x), y)


@defjvp(operator.mul, np.multiply)
def mul_jvp(x, y, x_dot, y_dot):
    return x_dot * y + x * y_dot


@defvjp(operator.mul, np.multiply)
def mul_vjp(g, x, y):
    return unbroadcast(mixed_bar(g * y, x, y), x), unbroadcast(mixed_bar(x * g, y, x), y)


@defjvp(operator.truediv, np.divide, np.true_divide)
def div_jvp(x, y, x_dot, y_dot, ans):
    return x_dot / y - ans * y_dot / y


@defvjp(operator.truediv, np.divide, np.true_divide)
def div_vjp(g, ans, x, y):
    return (unbroadcast(mixed_bar(g / y, x, y), x),
            unbroadcast(mixed_bar(-g * ans / y, y, x), y))


@defjvp(operator.neg, np.negative)
def neg_jvp(x, x_dot):
    return -x_dot


@defvjp(operator.neg, np.negative)
def neg_vjp(g, x):
    return -g


@defjvp(operator.pos, np.positive)
def pos_jvp(x, x_dot):
    return x_dot


@defvjp(operator.pos, np.positive)
def pos_vjp(g, x):
    return g


def times_pow_slope(t, x, y):
    """t * d(x**y)/dx = t * y * x**(y - 1), taken as 0 where y == 0 and x == 0 (x**0 is
    constant, even at x = 0; elsewhere the exponent is exactly y - 1, so that second
    derivatives are exact).

    np.power keeps NumPy's semantics for a zero base (inf, not ZeroDivisionError); a constant
    exponent >= 1 keeps the plain operator, which the simplifier folds (x ** 1 is x).
    """
    if is_safe_exponent(y):
        if y == 0:
            return t * zeros_like(x)
        return t * y * x ** (y - 1)
    return t * y * np.power(x, y - 1 + (y == 0) * (x == 0))


def pow_log_base(x, y):
    """log(x) for d(x**y)/dy = x**y * log(x), taken as 0 at x == 0 (where x**y is 0 or 1);
    the complex logarithm where y is complex (a negative real x then has a complex power)."""
    if is_complex(y):
        if is_complex(x):
            return np.log(x + (x == 0))
        return np.log(x + (x == 0) + 0j)
    return np.log(x + (x == 0))


@defjvp(operator.pow, np.power, pow)
def pow_jvp(x, y, x_dot, y_dot, ans):
    return times_pow_slope(x_dot, x, y) + y_dot * ans * pow_log_base(x, y)


@defvjp(operator.pow, np.power, pow)
def pow_vjp(g, ans, x, y):
    return (unbroadcast(times_pow_slope(g, x, y), x),
            unbroadcast(g * ans * pow_log_base(x, y), y))


@defjvp(operator.matmul, np.matmul)
def matmul_jvp(x, y, x_dot, y_dot):
    return x_dot @ y + x @ y_dot


@defvjp(operator.matmul, np.matmul)
def matmul_vjp(g, x, y):
    return matmul_bar_left(g, x, y), matmul_bar_right(g, x, y)


# The cotangents of x @ y are the cheapest NumPy calls for the operands' ranks, which are
# known while compiling (each `np.ndim` test is folded): `g @ x` for a vector times a
# matrix, `x.T @ g` for two matrices, an outer product for two vectors; `np.swapaxes` and
# `np.tensordot` only for stacks of matrices.
def matmul_bar_left(g, x, y):
    """Cotangent of the left operand of x @ y (vectors are treated as in np.matmul)."""
    if np.ndim(y) == 1:
        if np.ndim(x) == 1:
            return g * y
        # (an outer product g[:, None] * y: loops.py sums those of a loop in one product)
        return unbroadcast(np.expand_dims(g, -1) * y, x)
    if np.ndim(x) == 1:
        if np.ndim(y) == 2:  # a vector times a matrix: g is a vector
            return y @ g
        return unbroadcast(np.matmul(y, np.expand_dims(g, -1))[..., 0], x)
    if np.ndim(y) == 2:
        return unbroadcast(g @ y.T, x)
    return unbroadcast(np.matmul(g, np.swapaxes(y, -1, -2)), x)


def matmul_bar_right(g, x, y):
    """Cotangent of the right operand of x @ y."""
    if np.ndim(x) == 1:
        if np.ndim(y) == 1:
            return g * x
        if np.ndim(y) == 2:  # a vector times a matrix: the outer product of x and g
            return np.expand_dims(x, -1) * g
        return unbroadcast(np.expand_dims(x, -1) * np.expand_dims(g, -2), y)
    if np.ndim(y) == 1:
        if np.ndim(x) == 2:  # a matrix times a vector: g is a vector
            return g @ x
        # g has x's leading axes: contract them all (a stack of matrices times one vector)
        return np.tensordot(g, x, np.ndim(g))
    if np.ndim(x) == 2:
        return unbroadcast(x.T @ g, y)
    return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), g), y)


def conj_direction(z):
    """conj(z) / |z|, 0 at z = 0 (np.sign is constant for real inputs only, so this is
    written out: it is differentiated again in second order)."""
    return np.conj(z) / (np.abs(z) + (z == 0))


@defjvp(abs, np.abs, np.absolute)
def abs_jvp(x, x_dot):
    if is_complex(x):
        return np.real(conj_direction(x) * x_dot)  # |z| changes by Re(conj(z/|z|) dz)
    return x_dot * np.sign(x)


@defvjp(abs, np.abs, np.absolute)
def abs_vjp(g, x):
    if is_complex(x):
        return g * conj_direction(x)  # JAX's convention: g (d/dx - i d/dy) |x + iy|
    return g * np.sign(x)


# max(a, b, ...) and min(...) of two to four numbers: the operands equal to the result
# share the derivative evenly (as np.max does among tied entries). max(x) and min(x) of one
# 1-D array (Python's iteration over its entries): np.max's and np.min's rules, ties sharing
# the derivative evenly too (Python returns the first of them; the derivative is a
# subgradient either way); other ranks are refused (extremum_check).


@defcheck(max, min)
def extremum_check(a, b=None):
    if b is None and isinstance(a, Unknown) and a.ndim != 1:
        raise MissingRuleError(
            "max() and min() of one iterable are differentiated for a tuple or list written "
            "in the function and for a 1-D array" +
            (f", not an array of {a.ndim} axes" if a.ndim is not None else ""),
            hint="write np.max(x) / np.min(x) (with axis= for the extremum along an axis), "
                 "or pass the items as separate arguments: max(a, b)")
    return None


@defjvp(max)
def max_jvp(a, b=None, c=None, d=None, a_dot=0.0, b_dot=0.0, c_dot=0.0, d_dot=0.0, ans=0.0):
    if is_none(b):
        return extreme_tangent(a, a_dot, ans, None, False, None, None)
    return extremum_tangent(max, a > b, a, b, c, d, a_dot, b_dot, c_dot, d_dot)


@defvjp(max, wrt=("a", "b", "c", "d"))
def max_vjp(g, ans, a, b=None, c=None, d=None):
    if is_none(b):
        return extreme_bar(g, ans, a, None, False), None, None, None
    return extremum_cotangents(max, a > b, g, a, b, c, d)


@defjvp(min)
def min_jvp(a, b=None, c=None, d=None, a_dot=0.0, b_dot=0.0, c_dot=0.0, d_dot=0.0, ans=0.0):
    if is_none(b):
        return extreme_tangent(a, a_dot, ans, None, False, None, None)
    return extremum_tangent(min, a < b, a, b, c, d, a_dot, b_dot, c_dot, d_dot)


@defvjp(min, wrt=("a", "b", "c", "d"))
def min_vjp(g, ans, a, b=None, c=None, d=None):
    if is_none(b):
        return extreme_bar(g, ans, a, None, False), None, None, None
    return extremum_cotangents(min, a < b, g, a, b, c, d)


def extremum_tangent(pick, first_wins, a, b, c, d, a_dot, b_dot, c_dot, d_dot):
    """The tangent of pick(a, b[, c[, d]]) (max or min); `first_wins`: a beats b."""
    if is_none(c):
        wa = first_wins + 0.5 * (a == b)
        return wa * a_dot + (1.0 - wa) * b_dot
    m = pick(a, b, c) if is_none(d) else pick(a, b, c, d)
    return tie_share(m, a, b, c, d, a_dot, b_dot, c_dot, d_dot)


def extremum_cotangents(pick, first_wins, g, a, b, c, d):
    """The cotangents of the operands of pick(a, b[, c[, d]]) (max or min)."""
    if is_none(c):
        wa = first_wins + 0.5 * (a == b)
        return wa * g, (1.0 - wa) * g, None, None
    m = pick(a, b, c) if is_none(d) else pick(a, b, c, d)
    return tie_shares(g, m, a, b, c, d)


def tie_share(m, a, b, c, d, a_dot, b_dot, c_dot, d_dot):
    """The tangent of the extremum `m` of three or four operands (d may be None)."""
    if is_none(d):
        n = (a == m) + (b == m) + (c == m)
        return ((a == m) * a_dot + (b == m) * b_dot + (c == m) * c_dot) / n
    n = (a == m) + (b == m) + (c == m) + (d == m)
    return ((a == m) * a_dot + (b == m) * b_dot + (c == m) * c_dot + (d == m) * d_dot) / n


def tie_shares(g, m, a, b, c, d):
    """The cotangents of three or four operands of the extremum `m` (d may be None)."""
    if is_none(d):
        share = g / ((a == m) + (b == m) + (c == m))
        return (a == m) * share, (b == m) * share, (c == m) * share, None
    share = g / ((a == m) + (b == m) + (c == m) + (d == m))
    return (a == m) * share, (b == m) * share, (c == m) * share, (d == m) * share


@defjvp(float)
def float_jvp(x, x_dot):
    return x_dot


@defvjp(float)
def float_vjp(g, x):
    return g


# NumPy's float scalar types called as casts: np.float64(x) as float(x); np.float32(x) and
# np.float16(x) round the value, and their tangent alike (the cotangent goes back in x's own
# precision: a float64 array's through np.float32 is float64)


@defjvp(np.float64)
def float64_jvp(x, x_dot):
    return np.float64(x_dot)


@defjvp(np.float32)
def float32_jvp(x, x_dot):
    return np.float32(x_dot)


@defjvp(np.float16)
def float16_jvp(x, x_dot):
    return np.float16(x_dot)


@defvjp(np.float64, np.float32, np.float16)
def float_type_vjp(g, x):
    return cast_like(g, x)


# complex(x), np.complex128(x), np.complex64(x) of one number or array: casts (the tangent
# alike; the cotangent of a real x is the real part, JAX's convention). Without rules they
# were called as opaque functions of unknown kind, taken for real numbers: the cotangent
# of `np.complex64(2.0) * z` lost its imaginary part where added to another complex value.


@defjvp(complex)
def complex_jvp(real, real_dot):
    return complex(real_dot)


@defjvp(np.complex128)
def complex128_jvp(x, x_dot):
    return np.complex128(x_dot)


@defjvp(np.complex64)
def complex64_jvp(x, x_dot):
    return np.complex64(x_dot)


@defvjp(complex)
def complex_vjp(g, real):
    return real_like(g, real)


@defvjp(np.complex128, np.complex64)
def complex_type_vjp(g, x):
    return real_like(g, x)


def_linear(operator.neg, np.negative, operator.pos, np.positive, float, np.float64,
           np.float32, np.float16, complex, np.complex128, np.complex64)
def_linear(operator.mul, np.multiply, wrt=(0, 1))
def_linear(operator.truediv, np.divide, np.true_divide, wrt=(0,))
def_linear(operator.matmul, np.matmul, wrt=(0, 1))
