"""A function that updates an argument in place (`x *= c`), called with one array as two
arguments: Python's other argument sees the update, the derivative (which computes on its
own copy) would not. Such a call is refused, naming the update; any other call is right."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad

from .oracle import numerical_grad


def scaled_then_read_through_another(x, y, c):
    x *= c
    return np.sum(y ** 2) + np.sum(x)


def copies_before_updating(x, y, c):
    x = x.copy()
    x *= c
    return np.sum(y ** 2 * x)


def writes_an_entry(x, y, c):
    x[0] = c * x[0]
    return np.sum(y * x)


def test_distinct_arrays_are_differentiated():
    x, y = np.arange(1.0, 4.0), np.array([0.5, -1.0, 2.0])
    got = s2sad.grad(scaled_then_read_through_another, wrt=2)(x.copy(), y, 3.0)
    want = numerical_grad(scaled_then_read_through_another, (x.copy(), y, 3.0), (2,))[0]
    assert got == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("view", [lambda x: x, lambda x: x[:]])
def test_one_array_passed_twice_is_refused_at_the_update(view):
    x = np.arange(1.0, 4.0)
    g = s2sad.grad(scaled_then_read_through_another, wrt=2)
    for _ in range(3):  # (every call: no fast path skips the test)
        with pytest.raises(s2sad.AliasedArgumentsError) as info:
            g(x, view(x), 3.0)
        assert "x *= c" in str(info.value) and "`y`" in str(info.value)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])  # (nothing was computed)


def test_a_copy_made_first_is_not_an_update_of_the_argument():
    x = np.arange(1.0, 4.0)
    got = s2sad.grad(copies_before_updating, wrt=2)(x, x, 3.0)
    assert got == pytest.approx(np.sum(x ** 3), rel=1e-12)


def test_an_entry_written_into_an_argument_with_another_array_argument_is_refused():
    # (refused while compiling, whatever the call: another array argument may be the same)
    with pytest.raises(s2sad.S2SADError):
        s2sad.grad(writes_an_entry, wrt=2)(np.ones(3), np.ones(3), 2.0)
