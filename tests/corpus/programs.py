"""The correctness corpus: plain Python + NumPy programs s2sad must differentiate.

Each program is an ordinary module-level function written in the language
the compiler accepts (see DESIGN.md). Below each group, `Case` records say
how to draw random float64 arguments for it, which arguments are
differentiated (`wrt`, passed to s2sad as written) and which keyword
arguments to pass through.

Argument generators keep every point away from kinks (abs at 0, ties of
max/min, thresholds of data-dependent branches and loop conditions) by a
margin much larger than the finite-difference step, so the function is
smooth in a neighbourhood of every drawn point.

Nothing in this module calls s2sad.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy
import numpy as np
import numpy as xp
from numpy import cos, sin

try:  # works both with and without tests/__init__.py
    from tests import oracle
except ImportError:  # pragma: no cover - depends on how pytest set sys.path
    import oracle

distinct_uniform = oracle.distinct_uniform
draw_until = oracle.draw_until
uniform = oracle.uniform
uniform_away = oracle.uniform_away


# ==========================================================================
# the case record
# ==========================================================================


@dataclass(frozen=True)
class Case:
    """One corpus entry.

    fn        the program (a module-level function of this file)
    make_args rng -> tuple of positional arguments (floats and float64 arrays;
              ints only at positions not differentiated)
    wrt       what is passed to s2sad as `wrt` (None, index, name or tuple)
    kwargs    keyword arguments passed through (keyword-only parameters)
    group     the construct the case exercises
    """

    fn: Callable
    make_args: Callable[[np.random.Generator], tuple]
    wrt: Any = None
    kwargs: dict = field(default_factory=dict)
    group: str = ""

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def wrt_idx(self) -> tuple[int, ...]:
        """`wrt` resolved to a tuple of positional indices."""
        params = [
            p.name
            for p in inspect.signature(self.fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        if self.wrt is None:
            return tuple(range(len(params)))
        items = self.wrt if isinstance(self.wrt, tuple) else (self.wrt,)
        return tuple(params.index(w) if isinstance(w, str) else int(w) for w in items)

    @property
    def wrt_is_tuple(self) -> bool:
        return self.wrt is None or isinstance(self.wrt, tuple)

    def args(self, rng: np.random.Generator) -> tuple:
        return tuple(self.make_args(rng))

    def __call__(self, *args):
        return self.fn(*args, **self.kwargs)


CASES: list[Case] = []


def case(fn, make_args, wrt=None, kwargs=None, group=""):
    CASES.append(Case(fn, make_args, wrt, dict(kwargs or {}), group))
    return fn


def _vec(low, high, n):
    return lambda rng: (uniform(rng, low, high, (n,)),)


# ==========================================================================
# seeds from the spec
# ==========================================================================


def seed_vector(x):
    return np.array([x[0] + x[1], x[0] * x[1], np.sin(x[0])])


def seed_tuple(x1, x2):
    return (x1**2 + x2, np.sin(x1 * x2))


case(seed_vector, _vec(-2.0, 2.0, 2), group="seed")
case(seed_tuple, lambda rng: (uniform(rng, -2, 2), uniform(rng, -2, 2)), group="seed")


# ==========================================================================
# parameters, assignment, tuple unpacking, augmented assignment
# ==========================================================================


def poly_scalar(x):
    y = 3.0 * x * x - 2.0 * x + 1.0
    z = y * x
    return z - y


def kwonly_scale(x, *, scale=2.0, power=3):
    y = scale * x**power
    return y + x / scale


def kwonly_default(x, y, *, offset=0.5):
    return x * y + offset * np.sin(x)


def tuple_unpack_swap(a, b):
    a, b = b, a + b
    a, b = a * b, a - b
    return a + 2.0 * b


def augmented_scalar(x, y):
    z = x
    z += y
    z *= x
    z -= 2.0 * y
    z /= 1.0 + x * x
    return z


def augmented_array(x, y):
    z = x + 0.5
    z += y
    z *= x
    z -= 2.0 * y
    z /= 1.0 + x * x
    return z


case(poly_scalar, lambda rng: (uniform(rng, -2, 2),), group="assign")
case(kwonly_scale, lambda rng: (uniform(rng, -2, 2),), kwargs={"scale": 1.5}, group="assign")
case(
    kwonly_default,
    lambda rng: (uniform(rng, -2, 2, (3,)), uniform(rng, -2, 2, (3,))),
    group="assign",
)
case(tuple_unpack_swap, lambda rng: (uniform(rng, -2, 2), uniform(rng, -2, 2)), group="assign")
case(augmented_scalar, lambda rng: (uniform(rng, -2, 2), uniform(rng, -2, 2)), group="assign")
case(
    augmented_array,
    lambda rng: (uniform(rng, -2, 2, (2, 3)), uniform(rng, -2, 2, (3,))),
    group="assign",
)


# ==========================================================================
# arithmetic: + - * / ** @, unary -, abs, min/max of two scalars
# ==========================================================================


def arith_scalar(x, y):
    return x + y - x * y + x / y + x**2 - y**3 + x**y


def unary_neg_abs(x, y):
    return -x * abs(y) + abs(x - y) - (-y)


def min_max_scalar(x, y):
    a = max(x, y) * min(x, 2.0 * y)
    return a + max(x * x, 1.0) - min(-x, y)


def matmul_op(A, B):
    return A @ B


def matvec_loss(A, v):
    r = A @ v - 1.0
    return r @ r


def power_ops(x):
    return x**2.5 + 2.0**x + x**x - 1.0 / x


def _min_max_args(rng):
    def draw(r):
        return (uniform(r, 0.5, 2.0), uniform(r, 0.3, 2.0))

    def ok(a):
        x, y = a
        return (
            abs(x - y) > 0.1
            and abs(x - 2.0 * y) > 0.1
            and abs(x * x - 1.0) > 0.1
            and abs(-x - y) > 0.1
        )

    return draw_until(rng, draw, ok)


case(arith_scalar, lambda rng: (uniform(rng, 0.5, 2.0), uniform(rng, 0.5, 2.0)), group="arith")
case(
    unary_neg_abs,
    lambda rng: draw_until(
        rng,
        lambda r: (uniform_away(r, -2, 2), uniform_away(r, -2, 2)),
        lambda a: abs(a[0] - a[1]) > 0.1,
    ),
    group="arith",
)
case(min_max_scalar, _min_max_args, group="arith")
case(
    matmul_op, lambda rng: (uniform(rng, -1, 1, (2, 3)), uniform(rng, -1, 1, (3, 4))), group="arith"
)
case(
    matvec_loss, lambda rng: (uniform(rng, -1, 1, (4, 3)), uniform(rng, -1, 1, (3,))), group="arith"
)
case(power_ops, _vec(0.5, 2.0, 4), group="arith")


# ==========================================================================
# comparisons, and/or/not, conditional expressions, if/elif/else on data
# ==========================================================================


def cond_expr(x, y):
    a = x * y if x > y else x + y
    return a * a + (np.sin(a) if a >= 0.0 else np.cos(a))


def bool_ops_branch(x, y):
    if x > 0.0 and y > 0.0:
        r = x * y
    elif x < 0.0 or not (y < 1.0):
        r = x - y * y
    else:
        r = np.exp(x) + y
    return r


def if_elif_else_data(x):
    s = np.sum(x)
    if s > 1.0:
        y = x * s
    elif s > -1.0:
        y = np.sin(x) + s
    else:
        y = -x * x
    return y


def if_without_else(x, y):
    z = x * 2.0
    if np.mean(y) < 0.0:
        z = z + y
    return z * y


def _cond_expr_args(rng):
    def ok(a):
        x, y = a
        av = x * y if x > y else x + y
        return abs(x - y) > 0.1 and abs(av) > 0.1

    return draw_until(rng, lambda r: (uniform(r, -2, 2), uniform(r, -2, 2)), ok)


case(cond_expr, _cond_expr_args, group="branch")
case(
    bool_ops_branch,
    lambda rng: (uniform_away(rng, -2, 2), uniform_away(rng, -2, 2, avoid=(0.0, 1.0))),
    group="branch",
)
case(
    if_elif_else_data,
    lambda rng: draw_until(
        rng,
        lambda r: (uniform(r, -1.5, 1.5, (3,)),),
        lambda a: min(abs(np.sum(a[0]) - 1.0), abs(np.sum(a[0]) + 1.0)) > 0.1,
    ),
    group="branch",
)
case(
    if_without_else,
    lambda rng: draw_until(
        rng,
        lambda r: (uniform(r, -1, 1, (3,)), uniform(r, -1, 1, (3,))),
        lambda a: abs(np.mean(a[1])) > 0.05,
    ),
    group="branch",
)


# ==========================================================================
# calls with keyword arguments, attributes, array methods
# ==========================================================================


def sum_axis_keepdims(X):
    centred = X - np.sum(X, axis=0, keepdims=True) / 2.0
    return centred * np.mean(X, axis=1, keepdims=True)


def attributes(X):
    n = X.shape[0]
    d = X.ndim
    return (X.T @ X) / n + d * X[1:, :]


def array_methods(x, y):
    M = x.reshape(2, 3)
    r = M.sum(axis=1)
    return x.dot(y) * x.sum() + r[0] * r[1]


def max_axis(X):
    return np.max(X, axis=1) + np.max(X) * np.max(X, axis=0, keepdims=True)[0, :2]


case(sum_axis_keepdims, lambda rng: (uniform(rng, -1, 1, (2, 3)),), group="methods")
case(attributes, lambda rng: (uniform(rng, -1, 1, (4, 3)),), group="methods")
case(
    array_methods,
    lambda rng: (uniform(rng, -1, 1, (6,)), uniform(rng, -1, 1, (6,))),
    group="methods",
)
case(max_axis, lambda rng: (distinct_uniform(rng, -1, 1, (2, 3)),), group="methods")


# ==========================================================================
# subscript reads
# ==========================================================================


def index_int_neg(x):
    return x[0] * x[-1] + x[1] ** 2 - x[-2]


def index_slices(x):
    d = x[1:] - x[:-1]
    return d[::2] * x[::2][:4] + x[1:5:2].sum()


def index_tuple(X):
    return X[0, 1] * X[1:, 2] + X[:, -1][1:] - X[-1, :2].sum()


def index_none_ellipsis(x, y):
    outer = x[:, None] * y[None, :]
    return outer[..., 0] + outer[1, ...].sum() * x


def index_int_array(x):
    idx = np.array([0, 2, 2, 1])
    return x[idx] * 2.0 + x[idx] ** 2


case(index_int_neg, _vec(-2, 2, 4), group="subscript")
case(index_slices, _vec(-2, 2, 9), group="subscript")
case(index_tuple, lambda rng: (uniform(rng, -2, 2, (3, 4)),), group="subscript")
case(
    index_none_ellipsis,
    lambda rng: (uniform(rng, -1, 1, (3,)), uniform(rng, -1, 1, (2,))),
    group="subscript",
)
case(index_int_array, _vec(-2, 2, 3), group="subscript")


# ==========================================================================
# tuple / list literals, np.array of scalars
# ==========================================================================


def tuple_list_literals(x, y):
    t = (x, x * y)
    vals = [y, t[1], x - y]
    a, b = t
    return a * b + vals[0] * vals[2] - vals[-2]


def np_array_of_scalars(x, y):
    return np.array([x, y, x * y, np.sin(x)])


def returns_tuple_mixed(x, s):
    return (np.sum(x) * s, x * s, s * s)


case(tuple_list_literals, lambda rng: (uniform(rng, -2, 2), uniform(rng, -2, 2)), group="literals")
case(np_array_of_scalars, lambda rng: (uniform(rng, -2, 2), uniform(rng, -2, 2)), group="literals")
case(
    returns_tuple_mixed,
    lambda rng: (uniform(rng, -1, 1, (3,)), uniform(rng, -2, 2)),
    group="literals",
)


# ==========================================================================
# for loops over range (1, 2, 3 args), nested loops, branch in loop
# ==========================================================================


def for_range1_horner(x):
    acc = 0.0
    for i in range(5):
        acc = acc * x + i
    return acc


def for_range2(x):
    y = x
    for i in range(1, 4):
        y = y * x + np.sin(y) / i
    return y


def for_range3(x):
    s = x * 0.0
    for i in range(0, 6, 2):
        s = s + np.cos(x) * i
    for j in range(4, 0, -1):
        s = s * x + j
    return s


def for_fibonacci(a, b):
    for _ in range(6):
        a, b = b, a + b * 0.5
    return a * b


def for_count_arg(x, n):
    y = x
    for i in range(n):
        y = np.tanh(y) * x + 0.1 * i
    return y


def nested_loops(X):
    acc = 0.0
    scale = 1.0
    for i in range(2):
        for j in range(3):
            acc = acc + np.sin(X[i, j]) * scale
            scale = scale * X[i, j]
    return acc + scale


def branch_in_loop(x):
    acc = 0.0
    for i in range(4):
        if x[i] > 0.0:
            acc = acc + x[i] ** 2
        else:
            acc = acc - np.sin(x[i]) * acc
    return acc


case(for_range1_horner, lambda rng: (uniform(rng, -1.5, 1.5),), group="for")
case(for_range2, lambda rng: (uniform(rng, -1, 1),), group="for")
case(for_range3, _vec(-1, 1, 3), group="for")
case(for_fibonacci, lambda rng: (uniform(rng, -1, 1), uniform(rng, -1, 1)), group="for")
case(for_count_arg, lambda rng: (uniform(rng, -1, 1, (3,)), 4), wrt=0, group="for")
case(nested_loops, lambda rng: (uniform(rng, 0.5, 1.5, (2, 3)),), group="for")
case(branch_in_loop, lambda rng: (uniform_away(rng, -2, 2, (4,)),), group="for")


# ==========================================================================
# while loops with data-dependent conditions, break, continue
# ==========================================================================


def while_newton_sqrt(a):
    x = a
    it = 0
    while abs(x * x - a) > 1e-14 * a and it < 60:
        x = 0.5 * (x + a / x)
        it += 1
    return x


def _while_grow_ref(x, y):
    s = y
    trace = [s]
    while s < 10.0:
        s = s * x + 0.1
        trace.append(s)
    return trace


def while_grow(x, y):
    s = y
    k = 0
    while s < 10.0 and k < 100:
        s = s * x + 0.1
        k += 1
    return s / k


def for_break(x):
    s = 1.0
    for i in range(10):
        s = s * x + 0.5
        if s > 5.0:
            break
    return s


def _for_break_trace(x):
    s = 1.0
    trace = []
    for i in range(10):
        s = s * x + 0.5
        trace.append(s)
        if s > 5.0:
            break
    return trace


def while_break(x):
    s = x
    k = 0
    while True:
        s = s * s + 0.25
        k += 1
        if s > 3.0 or k >= 20:
            break
    return s


def _while_break_trace(x):
    s = x
    trace = []
    for k in range(20):
        s = s * s + 0.25
        trace.append(s)
        if s > 3.0:
            break
    return trace


def for_continue(x):
    acc = 0.0
    for i in range(6):
        if x[i] < 0.0:
            continue
        acc = acc + x[i] ** 3
    return acc + x[0]


def early_return(x, y):
    if x > y:
        return x * y
    if x < -1.0:
        return np.sin(x) * y
    return x + y * y


case(while_newton_sqrt, lambda rng: (uniform(rng, 0.5, 4.0),), group="while")
case(
    while_grow,
    lambda rng: draw_until(
        rng,
        lambda r: (uniform(r, 1.3, 2.0), uniform(r, 0.5, 2.0)),
        lambda a: min(abs(v - 10.0) for v in _while_grow_ref(*a)) > 0.1,
    ),
    group="while",
)
case(
    for_break,
    lambda rng: (
        draw_until(
            rng,
            lambda r: uniform(r, 0.8, 1.6),
            lambda x: min(abs(v - 5.0) for v in _for_break_trace(x)) > 0.1,
        ),
    ),
    group="while",
)
case(
    while_break,
    lambda rng: (
        draw_until(
            rng,
            lambda r: uniform(r, 0.8, 1.5),
            lambda x: (
                min(abs(v - 3.0) for v in _while_break_trace(x)) > 0.05
                and len(_while_break_trace(x)) < 20
            ),
        ),
    ),
    group="while",
)
case(for_continue, lambda rng: (uniform_away(rng, -2, 2, (6,)),), group="while")
case(
    early_return,
    lambda rng: draw_until(
        rng,
        lambda r: (uniform_away(r, -2, 2, avoid=(-1.0,)), uniform(r, -2, 2)),
        lambda a: abs(a[0] - a[1]) > 0.1,
    ),
    group="while",
)


# ==========================================================================
# user helper functions (defined before and after use, helper calling helper)
# ==========================================================================


def _affine_tanh(W, x, b):
    return np.tanh(W @ x + b)


def _scaled(x, factor=2.0):
    return factor * x


def uses_helper_before(W, x, b):
    h = _affine_tanh(W, x, b)
    return _scaled(h, factor=3.0) + _scaled(x[:2])


def uses_helper_after(x, y):
    return _later_outer(x, y) * x


def _later_outer(x, y):
    return _later_inner(x) + y * _later_inner(y)


def _later_inner(t):
    return t * t + math.sin(t)


def helper_in_loop(x):
    s = x
    for i in range(3):
        s = _later_inner(s) * 0.5
    return s


case(
    uses_helper_before,
    lambda rng: (uniform(rng, -1, 1, (2, 3)), uniform(rng, -1, 1, (3,)), uniform(rng, -1, 1, (2,))),
    group="helpers",
)
case(uses_helper_after, lambda rng: (uniform(rng, -2, 2), uniform(rng, -2, 2)), group="helpers")
case(helper_in_loop, lambda rng: (uniform(rng, -1, 1),), group="helpers")


# ==========================================================================
# math module on Python floats
# ==========================================================================


def math_funcs(x):
    a = math.sin(x) * math.exp(-x) + math.cos(x)
    b = math.log(x) + math.sqrt(x) + math.tanh(x)
    return a * b + math.pow(x, 1.5)


def math_pow_two(x, y):
    return math.pow(x, y) + math.exp(x * y) / math.sqrt(x + y)


case(math_funcs, lambda rng: (uniform(rng, 0.5, 2.0),), group="math")
case(math_pow_two, lambda rng: (uniform(rng, 0.5, 2.0), uniform(rng, 0.5, 2.0)), group="math")


# ==========================================================================
# numpy elementwise and reductions
# ==========================================================================


def np_trig(x):
    return np.sin(x) + np.cos(x) * np.tan(x)


def np_exp_log_sqrt(x):
    return np.exp(x) * np.log(x) + np.sqrt(x)


def np_hyperbolic(x):
    return np.tanh(x) + np.sinh(x) * np.cosh(x) + np.arctan(x)


def np_abs_square_power(x, y):
    return np.abs(x) * np.square(y) + np.power(y, 3) + np.power(np.abs(x), y)


def np_sum_mean_axis(X):
    return np.sum(X**2, axis=1) + np.mean(X, axis=0)[:2] + np.mean(X)


def np_softmax(X):
    e = np.exp(X - np.max(X, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def np_dot_matmul(A, x):
    return np.dot(A, x) + np.matmul(A, np.tanh(x))


def np_reshape_transpose(x):
    M = np.reshape(x, (2, 3))
    return np.transpose(M) @ M + M.T.sum()


def np_scalar_loss(W, b, x):
    h = np.tanh(np.dot(W, x) + b)
    return np.sum(h * h) + 0.5 * np.sum(W**2)


case(np_trig, _vec(-1, 1, 4), group="numpy")
case(np_exp_log_sqrt, _vec(0.5, 2, 4), group="numpy")
case(np_hyperbolic, _vec(-1, 1, 4), group="numpy")
case(
    np_abs_square_power,
    lambda rng: (uniform_away(rng, -2, 2, (3,)), uniform(rng, 0.5, 2, (3,))),
    group="numpy",
)
case(np_sum_mean_axis, lambda rng: (uniform(rng, -1, 1, (2, 3)),), group="numpy")
case(np_softmax, lambda rng: (distinct_uniform(rng, -1, 1, (2, 3)),), group="numpy")
case(
    np_dot_matmul,
    lambda rng: (uniform(rng, -1, 1, (2, 3)), uniform(rng, -1, 1, (3,))),
    group="numpy",
)
case(np_reshape_transpose, _vec(-1, 1, 6), group="numpy")
case(
    np_scalar_loss,
    lambda rng: (uniform(rng, -1, 1, (2, 3)), uniform(rng, -1, 1, (2,)), uniform(rng, -1, 1, (3,))),
    wrt=(0, 1),
    group="numpy",
)


# ==========================================================================
# name resolution variants
# ==========================================================================


def resolve_numpy_module(x):
    return numpy.sin(x) * numpy.exp(x)


def resolve_from_import(x):
    return sin(x) * cos(x) + sin(2.0 * x)


def resolve_alias(x):
    return xp.sin(x) + xp.sum(xp.exp(x))


case(resolve_numpy_module, _vec(-1, 1, 3), group="names")
case(resolve_from_import, _vec(-1, 1, 3), group="names")
case(resolve_alias, _vec(-1, 1, 3), group="names")


# ==========================================================================
# broadcasting, float/array mixes, wrt variants
# ==========================================================================


def broadcast_row(X, b):
    return np.tanh(X * b + b)


def broadcast_column(c, r):
    return c * r + np.sin(c - r)


def scalar_times_array(s, x):
    return s * x + s**2 - x / s


def scalar_array_loss(s, x):
    return np.sum(np.sin(s * x)) * s


def wrt_by_name(x, y):
    return np.sum(x * y) + np.sum(np.exp(y))


def wrt_mixed(x, n, y, z):
    return x * y[0] + y * n + np.sum(z * x)


case(
    broadcast_row,
    lambda rng: (uniform(rng, -1, 1, (2, 3)), uniform(rng, -1, 1, (3,))),
    group="broadcast",
)
case(
    broadcast_column,
    lambda rng: (uniform(rng, -1, 1, (2, 1)), uniform(rng, -1, 1, (3,))),
    group="broadcast",
)
case(
    scalar_times_array,
    lambda rng: (uniform(rng, 0.5, 2.0), uniform(rng, -1, 1, (3,))),
    group="broadcast",
)
case(
    scalar_array_loss,
    lambda rng: (uniform(rng, 0.5, 2.0), uniform(rng, -1, 1, (2, 3))),
    group="broadcast",
)
case(
    wrt_by_name,
    lambda rng: (uniform(rng, -1, 1, (3,)), uniform(rng, -1, 1, (3,))),
    wrt="y",
    group="broadcast",
)
case(
    wrt_mixed,
    lambda rng: (uniform(rng, -1, 1), 3, uniform(rng, -1, 1, (3,)), uniform(rng, -1, 1, (3,))),
    wrt=("x", 2),
    group="broadcast",
)


CASE_IDS = [c.name for c in CASES]
BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "duplicate case names"
