"""Assignments at an index that names a position twice (`a[[0, 0, 1]] = v`, `a[i] += v`).

NumPy keeps the last write at a repeated position (and `a[i] += v` reads all of `a[i]`
before it writes, so it adds once, not twice like `np.add.at`). Only the last write's value
reaches the result, so only it has a cotangent. The index may be an array or a list of
ints, alone or in a tuple with other indices. Oracles: central differences, the dot-product
test, and a loop that assigns one position at a time.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from s2sad.ir.prims import take_slot
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for

W = rng_for("repeated-indices weights").standard_normal((3, 4))


def rows_list(x):
    y = x * 1.0
    y[[1, 1]] = x[:2] * 2.0
    return np.sum(y * W)


def rows_array(x):
    y = x * 1.0
    y[np.array([0, 2, 0])] = np.sin(x)
    return np.sum(y * W)


def pairs_of_lists(x):
    y = x * 1.0
    y[[0, 2, 0], [1, 1, 1]] = x[0, :3] ** 2
    return np.sum(y * W)


def columns(x):
    y = x * 1.0
    y[:, [1, 1, 3]] = np.sin(x[:, :3])
    return np.sum(y * W)


def negative_and_positive(x):
    y = x * 1.0
    y[[-1, 2], 0] = x[:2, 1] * 3.0
    return np.sum(y * W)


def two_dimensional_index(x):
    y = x * 1.0
    i = np.array([[0, 0], [1, 0]])
    y[i, 2] = x[i, 1] ** 2
    return np.sum(y * W)


def augmented_list(x):
    y = x * 1.0
    y[[0, 0, 1]] += x[:3] * 2.0
    return np.sum(y * y * W)


def augmented_scalar(x):
    y = x * 1.0
    y[[2, 2], [0, 0]] += x[0, 0] * x[1, 1]
    return np.sum(y * y * W)


def in_a_loop(x):
    y = np.zeros((3, 4))
    for k in range(3):
        y[[k, 0]] = x[[0, k]] * (k + 1.0)
    return np.sum(y * W)


PROGRAMS = [rows_list, rows_array, pairs_of_lists, columns, negative_and_positive,
            two_dimensional_index, augmented_list, augmented_scalar, in_a_loop]


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_gradient_against_differences_and_the_dot_product_test(f):
    rng = rng_for(f.__name__)
    x = rng.standard_normal((3, 4))
    (expected,) = numerical_grad(f, (x,), (0,))
    assert_close(s2sad.grad(f)(x), expected, what=f.__name__)
    v = rng.standard_normal((3, 4))
    _, tangent = s2sad.jvp(f)(x, v)
    assert tangent == pytest.approx(numerical_jvp(f, (x,), (0,), (v,)), rel=1e-6, abs=1e-8)
    _, pullback = s2sad.vjp(f)(x)
    u = 0.7
    (x_bar,) = pullback(u)
    assert u * tangent == pytest.approx(float(np.sum(x_bar * v)), rel=1e-10, abs=1e-12)


def _last_write_slots(g, index):
    """The oracle for take_slot, from NumPy itself: assign each entry's own number at
    `index` and read back which entry's number each position kept; an entry keeps its
    slot of g where its number survived, and gets 0 where a later entry overwrote it."""
    n = np.size(g[index])
    numbers = np.arange(n).reshape(np.shape(g[index]))
    written = np.full(np.shape(g), -1)
    written[index] = numbers
    kept = written[index] == numbers
    return np.where(kept, g[index], 0.0)


INDICES = [
    [1, 1, 0],
    np.array([2, -1, 2, 0]),
    ([0, 0, 2], [1, 1, 1]),
    (slice(None), [3, 3, 0]),
    (np.array([[0, 0], [1, 0]]), 2),
    (0, [1, 1]),
    ([0, 1], slice(1, 3)),
]


@pytest.mark.parametrize("index", INDICES, ids=["list", "array-negative", "two-lists",
                                                 "slice-list", "2d-array-int", "int-list",
                                                 "list-slice"])
def test_take_slot_keeps_the_last_write_of_each_position(index):
    g = rng_for(repr(index)).standard_normal((3, 4))
    expected = _last_write_slots(g, index)
    np.testing.assert_array_equal(take_slot(g, index), expected)


def last_write_squares(x):
    y = np.zeros(4)
    y[[0, 1, 1]] = x[:3] ** 2  # y = [x0^2, x2^2, 0, 0]
    return np.sum(y * x)  # x0^3 + x2^2 x1


@pytest.mark.parametrize("how", ["hessian", "jacrev(grad)", "jacfwd(grad)"])
def test_second_derivatives_through_a_repeated_index(how):
    # reverse over reverse transposes take_slot: the masked occurrence must not leak back
    x = np.array([0.3, -1.2, 0.9, 0.7])
    expected = np.array([[6 * x[0], 0, 0, 0], [0, 0, 2 * x[2], 0],
                         [0, 2 * x[2], 2 * x[1], 0], [0, 0, 0, 0]])
    hessian = {"hessian": s2sad.hessian(last_write_squares),
               "jacrev(grad)": s2sad.jacrev(s2sad.grad(last_write_squares)),
               "jacfwd(grad)": s2sad.jacfwd(s2sad.grad(last_write_squares))}[how]
    np.testing.assert_allclose(hessian(x), expected, rtol=1e-12, atol=1e-15)
