"""Google Tangent's test corpus (`tests/functions.py` and the HVP test functions),
re-expressed in our own words, with the argument kinds Tangent tests each one on.

Tangent picks a function's test inputs from its parameter names: `a`, `b`, `c` are
scalars, `n` a small positive int, `x` a vector, `sqm` a square matrix; a few functions
have dedicated tests (logistic regression, rnn, bilinear, dicts and tuples). Each
program below keeps the construct its Tangent twin exercises (control flow, NumPy call,
subscript, augmented assignment, tuple, helper call, loop...) and gets an `Entry`
saying how to draw its arguments away from kinks and branch thresholds, what to
differentiate, and whether Tangent also tests it at second order (reverse over reverse
for the scalar functions, Hessian-vector products for the two HVP programs).

Refused, and asserted so: writes into an argument array (s2sad never modifies the
caller's arrays), Tangent's literal `np.arctan(b, a)` (a positional `out`), and its
listcomp over a scalar (the primal raises a TypeError).

Left out, having no s2sad counterpart: Tangent's tape API (`tangent.Stack`,
`tangent.push`/`pop`: stack_pushing, useless_stack_ops, redefining_var_as_list), its
`insert_grad_of` context manager (inlining_contextmanager), `tangent.trace` and every
TensorFlow-eager function (tfe_*). Its `preserve_result` option is s2sad's
value_and_grad, its split motion s2sad's vjp.

Nothing in this module calls s2sad.
"""

# the programs below copy deliberately odd code (a / a, a - a, dead stores)
# ruff: noqa: F841, B007, PLR1714
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

try:  # works both with and without tests/__init__.py
    from tests import oracle
except ImportError:  # pragma: no cover - depends on how pytest set sys.path
    import oracle


@dataclass(frozen=True)
class Entry:
    """One program of the corpus.

    fn           the program (a module-level function of this file)
    make_args    rng -> tuple of positional arguments
    wrt          what s2sad differentiates (index or tuple of indices)
    second_order Tangent differentiates it twice: check the Hessian (and HVP)
    refused      the S2SADError subclass s2sad answers with (by name), "" if none
    refused_in   the modes that refuse it ("fwd", "rev")
    marker       text on the refused line, where the error's column points
    """

    fn: Callable
    make_args: Callable[[np.random.Generator], tuple]
    wrt: Any = 0
    second_order: bool = False
    refused: str = ""
    refused_in: tuple = ("fwd", "rev")
    marker: str = ""

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def wrt_idx(self) -> tuple[int, ...]:
        return self.wrt if isinstance(self.wrt, tuple) else (self.wrt,)


ENTRIES: list[Entry] = []


def entry(fn, make_args, wrt=0, second_order=False, **refusal):
    ENTRIES.append(Entry(fn, make_args, wrt, second_order, **refusal))
    return fn


# Tangent draws its scalars from [-2, 2] and its ints from {1, 2, 3}.
def _scalar(avoid=(0.0,), low=-2.0, high=2.0, margin=0.15):
    return lambda rng: oracle.uniform_away(rng, low, high, avoid=avoid, margin=margin)


def unary(avoid=(0.0,), low=-2.0, high=2.0):
    draw = _scalar(avoid, low, high)
    return lambda rng: (draw(rng),)


def binary(avoid=(0.0,)):
    draw = _scalar(avoid)
    return lambda rng: (draw(rng), draw(rng))


def ternary(avoid=(0.0,)):
    draw = _scalar(avoid)
    return lambda rng: (draw(rng), draw(rng), draw(rng))


def scalar_and_int(low=-2.0, high=2.0, avoid=(0.0,)):
    draw = _scalar(avoid, low, high)
    return lambda rng: (draw(rng), int(rng.integers(1, 4)))


def vector(n=5, low=-2.0, high=2.0):
    return lambda rng: (oracle.uniform_away(rng, low, high, (n,), margin=0.1),)


# ==========================================================================
# straight-line scalar code (a)
# ==========================================================================


def same(a):
    return a


def negated(a):
    return -a


def hyperbolic_tangent(a):
    return np.tanh(a)


def copied(a):
    b = a
    return b


def plus_one(a):
    return a + 1


def named_like_a_cotangent(a):
    da = a * a  # the name Tangent would give a's cotangent
    return da


def times_three(a):
    return a * 3.0


def three_times(a):
    return 3.0 * a


def squared(a):
    return a * a


def over_three(a):
    return a / 3.0


def three_over(a):
    return 3.0 / a


def over_itself(a):
    return a / a


def minus_three(a):
    return a - 3.0


def three_minus(a):
    return 3.0 - a


def minus_itself(a):
    return a - a


def plus_three(a):
    return a + 3.0


def three_plus(a):
    return 3.0 + a


def doubled(a):
    return a + a


def np_multiply_three(a):
    return np.multiply(a, 3.0)


def list_summed(a):
    items = [1, a * a, 2]
    return np.sum(items)


def list_element_product(a):
    row = [1.0, a, 3.0]
    return row[0] * row[1]


def rebinds_argument(a):
    a = a * 3.0
    return a


def rebinds_copy(a):
    b = a
    b = b * 3.0
    return b


def cube_by_products(a):
    return a * a * a


def cube_by_power(a):
    return a**3


def augmented_square(a):
    y = a * a
    y *= y
    return y


def square_twice(a):
    a = a * a
    y = a * a
    return y


def chain_of_squares(a):
    b = a  # a dead copy, overwritten at once
    b = a * a
    c = b * b
    d = c * c
    return d


for _fn in (
    same, negated, hyperbolic_tangent, copied, plus_one, named_like_a_cotangent,
    times_three, three_times, squared, over_three, three_over, over_itself, minus_three,
    three_minus, minus_itself, plus_three, three_plus, doubled, np_multiply_three,
    list_summed, list_element_product, rebinds_argument, rebinds_copy, cube_by_products,
    cube_by_power, augmented_square, square_twice, chain_of_squares,
):
    entry(_fn, unary(), second_order=True)


def twice_and_itself(a):
    return 2 * a, a


entry(twice_and_itself, unary())


# ==========================================================================
# branches (a), (a, b)
# ==========================================================================


def sign_scaled(a):
    if a > 0:
        a = a * 3.0
    else:
        a = a * 2.0
    return a


def nested_branches(a):
    if a > 0:
        if a < 10:
            a = a * a
    else:
        a = 3.0 * a
    return a


def tangled_branches(a):
    if a * a / 3.0 > 0:
        factor = 3.0
    else:
        factor = 4.0
    a = a * factor
    if a < factor - a * factor:
        a = a * a
    elif a > factor + 3.0 * a:
        if a / 2.0 < 0:
            a = a / factor
        else:
            a = a * factor
    else:
        a = -a
    return a


def branches_in_sequence(a):
    if a > 0:
        a = a * a
    a = a + a
    if a < 0:
        a = 3.0 * a
    return a


def branch_inside_branch(a):
    if a > 0:
        a = a * 3.0
        if a < 10:
            a = a * a
        else:
            a = a * 2.0
    return a


def three_way_branch(a):
    if a > 0:
        a = a * 3.0
    elif 0 > a:
        a = a * 2.0
    else:
        a = 1.0 * a
    return a


def square_root_of_magnitude(a):
    if a >= 0:
        root = np.sqrt(a)
    else:
        root = np.sqrt(-a)
    return root


entry(sign_scaled, unary(), second_order=True)
entry(nested_branches, unary((0.0, 10.0)), second_order=True)
entry(tangled_branches, unary((0.0, 0.25)), second_order=True)
entry(branches_in_sequence, unary(), second_order=True)
entry(branch_inside_branch, unary((0.0, 10.0 / 3.0)), second_order=True)
entry(three_way_branch, unary(), second_order=True)
entry(square_root_of_magnitude, unary(), second_order=True)


def larger_squared(a, b):
    if a > b:
        a = a * a
    else:
        a = a * b
    return a


def _apart(rng):
    return oracle.draw_until(
        rng,
        lambda r: (oracle.uniform(r, -2, 2), oracle.uniform(r, -2, 2)),
        lambda ab: abs(ab[0] - ab[1]) > 0.15,
    )


entry(larger_squared, _apart, wrt=(0, 1), second_order=True)


# ==========================================================================
# loops (a), (a, n)
# ==========================================================================


def cube_by_loop_from_one(a):
    acc = 1
    for i in range(3):
        acc = acc * a
    return acc


def cube_by_loop_from_a(a):
    acc = a
    for i in range(3 - 1):
        acc = acc * a
    return acc


def eighth_power(a):
    for i in range(3):
        a = a * a
    return a


def square_while_small(a):
    for i in range(3):
        if a < 20:
            a = a * a
    return a


def squares_if_small(a):
    if a < 20:
        for i in range(3):
            a = a * a
    return a


def nested_loops_power(a):
    for i in range(2):
        for j in range(3):
            a = a * a
    return a


def cube_three_times(a):
    for i in range(3):
        a = a * a * a
    return a


def halve_until_small(a):
    while np.abs(a) > 0.1:
        a = a * 0.5
    return a


entry(cube_by_loop_from_one, unary(), second_order=True)
entry(cube_by_loop_from_a, unary(), second_order=True)
entry(eighth_power, unary(low=-1.3, high=1.3), second_order=True)
entry(square_while_small, unary(), second_order=True)
entry(squares_if_small, unary(low=-1.3, high=1.3), second_order=True)
entry(nested_loops_power, unary(low=-1.05, high=1.05), second_order=True)
entry(cube_three_times, unary(low=-1.2, high=1.2), second_order=True)
# the trip count changes where |a| crosses 0.1 * 2**k
entry(
    halve_until_small,
    unary(tuple(s * 0.1 * 2.0**k for k in range(6) for s in (1, -1))),
    second_order=True,
)


def repeated_squares_then_triples(a, n):
    for i in range(n):
        a = a * a
    a = 2.0 * a
    for i in range(n + 1):
        a = a * 3.0
    return a


def branch_then_loop(a, n):
    if a > 0:
        a = a * a
    a = 2.0 * a
    for i in range(n):
        a = a * a
    return a


def loop_then_branch(a, n):
    for i in range(n):
        a = a * a
    a = 2.0 * a
    if a > 0:
        a = a * a
    return a


def repeated_squares(a, n):
    for i in range(n):
        a = a * a
    return a


entry(repeated_squares_then_triples, scalar_and_int(-1.3, 1.3))
entry(branch_then_loop, scalar_and_int(-1.3, 1.3))
entry(loop_then_branch, scalar_and_int(-1.3, 1.3))
entry(repeated_squares, scalar_and_int(-1.3, 1.3))


# ==========================================================================
# helper calls (a, b), (a, n), (a, b, c)
# ==========================================================================


def product(a, b):
    return a * b


def total(a, b):
    return a + b


def product_via_helper(a, b):
    return product(a, b)


def helper_in_branches(a, b):
    if a > b:
        out = product(a, b)
    else:
        out = product(b, a)
    return out


def helper_via_helper(a, b):
    return product_via_helper(a, b)


def repeated_squares_via_helper(a, n):
    for i in range(n):
        a = product(a, a)
    return a


def repeated_squares_via_local_def(a, n):
    def scale(u, v):
        return u * v

    for i in range(n):
        a = scale(a, a)
    return a


def chain_of_helper_squares(a):
    b = product(a, a)
    c = product(b, b)
    d = product(c, c)
    return d


def fused_multiply_add(a, b, c):
    return a * b + c


def fused_via_helpers(a, b, c):
    return total(product(a, b), c)


def fused_in_steps(a, b, c):
    t1 = a * b
    t2 = t1 + c
    return t2


def fused_rebinding(a, b, c):
    t = a * b
    t = t + c
    return t


entry(product, binary(), wrt=(0, 1), second_order=True)
entry(total, binary(), wrt=(0, 1), second_order=True)
entry(product_via_helper, binary(), wrt=(0, 1), second_order=True)
entry(helper_in_branches, _apart, wrt=(0, 1), second_order=True)
entry(helper_via_helper, binary(), wrt=(0, 1), second_order=True)
entry(repeated_squares_via_helper, scalar_and_int(-1.3, 1.3))
entry(repeated_squares_via_local_def, scalar_and_int(-1.3, 1.3))
entry(chain_of_helper_squares, unary(low=-1.2, high=1.2), second_order=True)
for _fn in (fused_multiply_add, fused_via_helpers, fused_in_steps, fused_rebinding):
    entry(_fn, ternary(), wrt=(0, 1, 2), second_order=True)


def power_of_magnitude(a, b):
    if a >= 0:
        a = a**b
    else:
        a = (-a) ** b
    return a


entry(power_of_magnitude, binary(), wrt=(0, 1), second_order=True)


# ==========================================================================
# NumPy functions of a scalar (a)
# ==========================================================================


def np_exp(a):
    return np.exp(a)


def np_exp_of_exp(a):
    return np.exp(np.exp(a))


def np_cos(a):
    return np.cos(a)


def np_sin(a):
    return np.sin(a)


def np_tan(a):
    return np.tan(a)


def np_cosh(a):
    return np.cosh(a)


def np_sinh(a):
    return np.sinh(a)


def np_tanh(a):
    return np.tanh(a)


def np_arccos(a):
    return np.arccos(a)


def np_arcsin(a):
    return np.arcsin(a)


def np_arctan(a):
    return np.arctan(a)


for _fn in (np_exp, np_exp_of_exp, np_cos, np_sin, np_cosh, np_sinh, np_tanh, np_arctan):
    entry(_fn, unary(), second_order=True)
entry(np_tan, unary((np.pi / 2, -np.pi / 2)), second_order=True)
entry(np_arccos, unary(low=-0.9, high=0.9), second_order=True)
entry(np_arcsin, unary(low=-0.9, high=0.9), second_order=True)


# ==========================================================================
# vectors (x): reductions, subscripts, slices, loops over elements
# ==========================================================================


def vector_sum(x):
    return np.sum(x)


def sum_of_array_copy(x):
    return np.sum(np.array(x))


def sum_then_square(x):
    x = np.sum(x)
    x = x * x
    return x


def list_with_element_products(x):
    items = [1, x[0] * x[1] * x[2], 3]
    return np.sum(items)


def first_times_second(x):
    first = x[0]
    second = x[1]
    return first * second


def store_product_in_first(x):
    first = x[0]
    second = x[1]
    x[0] = first * second
    return np.sum(x)


def store_square_product(x):
    sq = x**2.0
    x[0] = sq[1] * sq[2]
    return np.sum(x * sq)


def sum_by_iteration(x):
    acc = 0.0
    for item in x:
        acc += item
    return acc


def vector_mean(x):
    return np.mean(x)


def sum_at_least_1d(x):
    return np.sum(np.atleast_1d(x))


def sum_at_least_2d(x):
    return np.sum(np.atleast_2d(x))


def sum_at_least_3d(x):
    return np.sum(np.atleast_3d(x))


def sum_of_comprehension(x):
    return np.sum([item * 3 for item in x])


def copy_by_elements(x):
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = x[i]
    return np.sum(y)


def broadcast_rows(x):
    rows = np.zeros((len(x), 3))
    for t in range(len(rows)):
        rows[t] = x[t]
    return np.sum(rows)


def sum_of_tail(x):
    return np.sum(x[1:])


def sum_every_other_as_column(x):
    return np.sum(x[::2, np.newaxis])


for _fn in (
    vector_sum, sum_of_array_copy, sum_then_square, list_with_element_products,
    first_times_second, sum_by_iteration,
    vector_mean, sum_at_least_1d, sum_at_least_2d, sum_at_least_3d, sum_of_comprehension,
    copy_by_elements, broadcast_rows, sum_of_tail, sum_every_other_as_column,
):
    entry(_fn, vector())



def comprehension_over_a_number(a):
    return np.sum([item * 3 for item in a])


# Tangent's own listcomp(a) iterates over a scalar (it leaves it out of its tests: the
# primal raises a TypeError); s2sad says so while compiling, at the comprehension
entry(comprehension_over_a_number, unary(), refused="ArgumentTypeError", marker="a])")

# s2sad never writes into the caller's arrays (Tangent does): the derivative computes on
# a private copy of the argument it writes into (the caller's array is left unchanged)
for _fn in (store_product_in_first, store_square_product):
    entry(_fn, vector())


# ==========================================================================
# matrices, models
# ==========================================================================


def determinant(sqm):
    return np.linalg.det(sqm)


def _square_matrix(rng):
    # well conditioned: the identity plus a small perturbation
    return (np.eye(3) + oracle.uniform(rng, -0.4, 0.4, (3, 3)),)


entry(determinant, _square_matrix)


def logistic_loss(features, labels, W, b):
    logits = np.dot(features, W) + b
    prob = 0.5 * (np.tanh(logits) + 1)
    likelihood = prob * labels + (1 - prob) * (1 - labels)
    return -np.sum(np.log(likelihood))


def _logistic_args(rng):
    labels = np.zeros(5)
    labels[1] = 1.0
    return (
        oracle.uniform(rng, 0.0, 1.0, (3,)),
        labels,
        oracle.uniform(rng, -1.0, 1.0, (3, 5)),
        oracle.uniform(rng, -1.0, 1.0, (5,)),
    )


entry(logistic_loss, _logistic_args, wrt=(2, 3))


def recurrent_sum(inputs, W):
    state = np.zeros((4, 3))
    for t in range(3):
        state[t + 1] = np.dot(inputs[t], W) + state[t]
    return np.sum(state[1:])


entry(
    recurrent_sum,
    lambda rng: (oracle.uniform(rng, -1, 1, (3, 2)), oracle.uniform(rng, -1, 1, (2, 3))),
    wrt=(0, 1),
)


def bilinear_layer(x, h, U, W, b):
    y = np.dot(x, W)
    y = y + np.dot(h, U)
    y = y + b
    y = np.tanh(y)
    return np.sum(y)


entry(
    bilinear_layer,
    lambda rng: tuple(
        oracle.uniform(rng, -1, 1, shape) for shape in ((1, 3), (1, 3), (3, 3), (3, 3), (1, 3))
    ),
    wrt=(0, 1, 2, 3, 4),
)


# ==========================================================================
# tuples and dicts
# ==========================================================================


def fused_from_tuple(packed):
    a, b, c = packed
    return a * b + c


def fused_from_dict(d):
    return d["a"] * d["b"] + d["c"]


def fused_via_built_dict(packed):
    a, b, c = packed
    return fused_from_dict(dict(a=a, b=b, c=c))


def pick_from_tuple(a, b, c, i):
    packed = a, b, c
    return packed[i]


def overwrite_list_item(a):
    # Tangent's test_subscript_overwrite, left as a TODO (commented out) in its corpus
    row = [1, a * a, 3]
    row[1] = row[0] * row[1]
    return row[1] + row[1]


def first_of_tuple(packed):
    a, b, c = packed
    return a


def product_in_nested_dict(p):
    return p["i"]["j"] * p["i"]["k"]


def _triple(rng):
    return (tuple(oracle.uniform(rng, -2, 2) for _ in range(3)),)


entry(fused_from_tuple, _triple)
entry(fused_from_dict, lambda rng: ({k: oracle.uniform(rng, -2, 2) for k in "abc"},))
entry(fused_via_built_dict, _triple)
entry(first_of_tuple, _triple)
entry(overwrite_list_item, unary(), second_order=True)
entry(
    pick_from_tuple,
    lambda rng: (*(oracle.uniform(rng, -2, 2) for _ in range(3)), int(rng.integers(0, 3))),
    wrt=(0, 1, 2),
)
entry(
    product_in_nested_dict,
    lambda rng: ({"i": {"j": oracle.uniform(rng, -2, 2), "k": oracle.uniform(rng, -2, 2)}},),
)


# ==========================================================================
# misc: two outputs
# ==========================================================================


def to_polar(a, b):
    radius = np.sqrt(a**2.0 + b**2.0)
    angle = np.arctan2(b, a)  # Tangent writes np.arctan(b, a), meaning arctan2
    return radius, angle


entry(to_polar, binary(), wrt=(0, 1))


def to_polar_as_tangent_wrote_it(a, b):
    radius = np.sqrt(a**2.0 + b**2.0)
    angle = np.arctan(b, a)  # a's place is arctan's `out`: NumPy raises a TypeError
    return radius, angle


entry(to_polar_as_tangent_wrote_it, binary(), wrt=(0, 1), refused="UnsupportedSyntaxError",
      marker="np.arctan(b, a)")


# ==========================================================================
# Tangent's Hessian-vector-product programs (vectors)
# ==========================================================================


def straight_line(x):
    a = x * x * x
    b = a * x**2.0
    return np.sum(b)


def cubed(a):
    b = a * a * a
    return b


def through_a_call(x):
    a = cubed(x)
    b = a * x**2.0
    return np.sum(b)


entry(straight_line, vector(6), second_order=True)
entry(through_a_call, vector(6), second_order=True)

ENTRY_IDS = [e.name for e in ENTRIES]
