"""`+` and `*` on tuples and lists: concatenation and repetition, never arithmetic.

These were silently wrong gradients: `a + [b]` on lists (or tuples) reached the rules of
numeric addition, which summed the cotangent into the shorter operand. Lowering now
concatenates the tuples and lists it builds; a tuple or list argument is expanded item by
item once its kind is known (passes/sequences.py); `ys += [y]` extends a list in place,
like `ys.append(y)`. Oracle: central differences on the original function.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, rng_for


def concatenate_lists(x):
    a = [x[0], x[1]]
    a = a + [x[2]]
    return sum(a) * x[3]


def concatenate_tuples(x):
    a = (x[0], x[1])
    a += (x[2],)
    return sum(a) * x[3]


def extend_a_list(x):
    a = [x[0], x[1]]
    a += [x[2]]
    return sum(a) * x[3]


def extend_in_a_loop(x):
    a = []
    for i in range(3):
        a += [x[i] ** 2]
    return sum(a) * x[3]


def repeat_and_concatenate(x):
    a = [x[0]] + [x[1]] * 2
    return a[2] * x[3] + a[0] * a[1]


def pair(x):
    return [x[0], x[1]]


def concatenate_helper_results(x):
    a = pair(x) + pair(x[2:])
    return a[0] * a[3] + a[2]


def tuple_of_arrays_repeated(x):
    t = (x, x * 2.0) * 2
    return np.sum(t[3] * t[0])


def list_extended_by_a_tuple(x):
    a = [x[0]]
    a += (x[1], x[2])
    return sum(a) * x[3]


def aliased_then_extended(x):
    a = [x[0], x[1]]
    b = a
    a += [x[2]]  # in place: b sees x[2] too
    return sum(b) * x[3]


def extended_then_iterated(x):
    a = [x[0], x[1]]
    a += [x[2] * x[3]]
    return sum(v ** 2 for v in a)


def array_plus_a_list(x):  # NumPy arithmetic: the list is read as an array
    return np.sum((x + [1.0, 2.0, 3.0, 4.0]) * x) + np.sum([1.0, 2.0, 3.0, 4.0] * x ** 2)


PROGRAMS = [concatenate_lists, concatenate_tuples, extend_a_list, extend_in_a_loop,
            repeat_and_concatenate, concatenate_helper_results, tuple_of_arrays_repeated,
            list_extended_by_a_tuple, aliased_then_extended, extended_then_iterated,
            array_plus_a_list]


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_gradient_against_differences(f):
    x = rng_for(f.__name__).standard_normal(4)
    (expected,) = numerical_grad(f, (x,), (0,))
    assert_close(s2sad.grad(f)(x), expected, what=f.__name__)
    v = rng_for(f.__name__, "v").standard_normal(4)
    _, tangent = s2sad.jvp(f)(x, v)
    assert tangent == pytest.approx(float(expected @ v), rel=1e-6, abs=1e-8)


def extend_tuple_argument(t):
    u = t + (t[0] * 2.0,)
    return u[0] * u[2] + u[1]


def repeat_tuple_argument(t):
    u = t * 2
    return u[0] * u[3]


def concatenate_tuple_arguments(t, s):
    u = t + s
    return u[0] * u[2] + np.sum(u[1])


P = collections.namedtuple("P", "a b")


def extend_namedtuple(p):
    u = p + (p.a,)
    return u[0] * u[2] * u[1]


def test_tuple_arguments_are_concatenated_item_by_item():
    # u = (t0, t1, 2 t0): 2 t0^2 + t1
    assert s2sad.grad(extend_tuple_argument)((1.5, 2.0)) == pytest.approx((6.0, 1.0))
    # u = (t0, t1, t0, t1): t0 t1
    assert s2sad.grad(repeat_tuple_argument)((1.5, 2.0)) == pytest.approx((2.0, 1.5))
    # u = (t0, t1, s0): t0 s0 + sum(t1)
    (g_t0, g_t1), (g_s0,) = s2sad.grad(concatenate_tuple_arguments, wrt=(0, 1))(
        (1.5, np.ones(2)), (3.0,))
    assert (g_t0, g_s0) == pytest.approx((3.0, 1.5))
    np.testing.assert_array_equal(g_t1, np.ones(2))
    # u = (a, b, a): a^2 b
    assert tuple(s2sad.grad(extend_namedtuple)(P(2.0, 3.0))) == pytest.approx((12.0, 4.0))
    _, pullback = s2sad.vjp(extend_tuple_argument)((1.5, 2.0))
    assert pullback(1.0)[0] == pytest.approx((6.0, 1.0))


def tuple_plus_list(t):
    u = t + [1.0]
    return u[0]


def test_what_python_refuses_is_refused():
    with pytest.raises(s2sad.UnsupportedSyntaxError, match="cannot concatenate a tuple and a list"):
        s2sad.grad(tuple_plus_list)((1.5, 2.0))


def grown_then_concatenated(x):
    ys = []
    for i in range(3):
        ys.append(x[i])
    zs = ys + [x[3]]
    return sum(zs)


def held_then_extended(x):
    a = [x[0], x[1]]
    t = (a, 1.0)
    a += [x[2]]
    return sum(t[0]) * x[3]


@pytest.mark.parametrize("f", [grown_then_concatenated, held_then_extended],
                         ids=lambda f: f.__name__)
def test_lists_that_cannot_be_followed_are_refused_with_their_place(f):
    with pytest.raises(s2sad.UnsupportedSyntaxError) as e:
        s2sad.grad(f)(np.arange(1.0, 5.0))
    assert e.value.filename.endswith("test_sequence_arithmetic.py") and e.value.lineno


def joined_with_r_(x):
    return np.sum(np.r_[x[:2], x[3]] ** 2)


def test_np_r_of_computed_values_is_refused_with_what_to_use():
    # (it was refused as "getitem is not differentiable with respect to its index")
    with pytest.raises(s2sad.UnsupportedSyntaxError, match="np.concatenate") as e:
        s2sad.grad(joined_with_r_)(np.arange(1.0, 5.0))
    assert e.value.filename.endswith("test_sequence_arithmetic.py")


def dot_of_a_list(x):
    return np.dot(x, x) * x[0]


def square_of_a_list(x):
    return np.sum(np.square(x) * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("f", [dot_of_a_list, square_of_a_list], ids=lambda f: f.__name__)
@pytest.mark.parametrize("container", [list, tuple])
def test_a_list_of_numbers_given_to_numpy_is_read_as_an_array(f, container):
    # (the rules computed `2.0 * x` with the list itself: a TypeError in the generated code)
    x = [0.5, -1.5, 2.0]
    expected = numerical_grad(lambda a: f(container(a)), (np.array(x),), (0,))[0]
    got = s2sad.grad(f)(container(x))
    np.testing.assert_allclose(np.asarray(got, dtype=float), expected, rtol=1e-6, atol=1e-8)
    _, tangent = s2sad.jvp(f)(container(x), container([1.0, 0.0, -1.0]))
    assert tangent == pytest.approx(float(expected @ [1.0, 0.0, -1.0]), rel=1e-6)
