"""In-place updates that another name sees: refused; those nothing else sees: differentiated.

`a += b` on an array updates it in place in NumPy, so a name that refers to the same array
(`c = a`), to a view of it, or to the array `a` looks into, sees the change (for a helper,
the caller's name too). The derivative code gives each version its own variable, so it
would not: these were silently wrong values and derivatives. The same goes for `a[i] = v`
through a loop's variable. A name bound to the very same array (`c = a`, the caller's name
of a helper's argument) takes the new version, where the array is known to be one (an
argument's kind, what NumPy computes from one) and nothing keeps it from being rebound (a
loop that does not carry it); a view, or a name a loop does not carry, is refused. On
numbers, `+=` rebinds, and the same code is differentiated. Oracle: central differences on
the original function.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, rng_for


def alias_then_update(x):
    y = x * 1.0
    z = y
    z *= 2.0
    return np.sum(y * x)


def view_then_update(x):
    y = x * 1.0
    v = y[1:3]
    v += 1.0
    return np.sum(y * x)


def update_seen_by_a_view(x):
    z = x * 1.0
    w = z[1:]
    z *= 2.0
    return np.sum(w * x[1:])


def row_of_a_matrix(x):
    m = np.outer(x, x)
    r = m[0]
    r += x
    return np.sum(m * m)


def alias_updated_in_a_loop(x):
    z = x * 1.0
    y = z
    for _ in range(3):
        z += x
    return np.sum(y * x)


def alias_updated_in_a_branch(x):
    z = x * 1.0
    y = z
    if x[0] > -10.0:
        z *= 2.0
    return np.sum(y * x)


def alias_written_in_a_loop(x):
    z = x * 1.0
    y = z
    for i in range(3):
        z[i] = z[i] * x[i + 1]
    return np.sum(y * x)


def add_into(h, v):
    h += v
    return h


def helper_updates_the_callers_array(x):
    y = x * 1.0
    z = add_into(y, x)
    return np.sum(y * z)


def argument_alias(x):
    x0 = x
    x += 1.0
    return np.sum(x * x0)


def alias_made_in_a_branch(x):
    # the alias is made by one branch (`y` is not merged, `z` is): the check followed what
    # the written array may be, not what the other name may be, and missed it
    y = x * 1.0
    if x[0] > -10.0:
        z = y
    else:
        z = x * 2.0
    y[0] = x[1] * x[2]
    return np.sum(z * x)


def alias_made_in_a_loop(x):
    y = x * 1.0
    z = x * 2.0
    for _ in range(2):
        z = y
    y[0] = x[1] * x[2]
    return np.sum(z * x)


def alias_updated_after_a_branch(x):
    y = x * 1.0
    if x[0] > -10.0:
        z = y
    else:
        z = x * 2.0
    y += x
    return np.sum(z * x)


REFUSED = [view_then_update, update_seen_by_a_view, row_of_a_matrix,
           alias_updated_in_a_loop, alias_written_in_a_loop, alias_made_in_a_branch,
           alias_made_in_a_loop, alias_updated_after_a_branch]


@pytest.mark.parametrize("f", REFUSED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["grad", "jvp", "vjp"])
def test_an_update_another_name_sees_is_refused_with_its_place(f, mode):
    x = rng_for(f.__name__).standard_normal(4)
    args = (x, np.ones(4)) if mode == "jvp" else (x,)
    with pytest.raises(s2sad.NonDifferentiableError) as e:
        getattr(s2sad, mode)(f)(*args)
    err = e.value
    assert err.filename.endswith("test_aliasing.py") and err.lineno is not None
    assert "refers to the same array" in str(err) and "copy" in str(err)


def update_nobody_else_sees(x):
    y = x * 1.0
    z = add_into(y, x)
    return np.sum(z * z)


def argument_updated(x):
    for _ in range(3):
        x += 0.1 * np.sin(x)
    return np.sum(x ** 2)


def accumulator(x):
    acc = np.zeros(4)
    for i in range(3):
        acc += x * i
    return np.sum(acc * x)


def entry_then_update(x):
    s = x[0]
    t = s
    s += x[1]  # x[0] of a vector is a number: rebound
    return s * t


def view_of_a_temporary(x):
    v = (x * 2.0)[1:]
    v *= x[:3]
    return np.sum(v)


ACCEPTED = [update_nobody_else_sees, argument_updated, accumulator, entry_then_update,
            view_of_a_temporary,
            # the same array under another name: rebound to the new version, as Python sees
            alias_then_update, alias_updated_in_a_branch, helper_updates_the_callers_array,
            argument_alias]


@pytest.mark.parametrize("f", ACCEPTED, ids=lambda f: f.__name__)
def test_an_update_nothing_else_sees_is_differentiated(f):
    x = rng_for(f.__name__).standard_normal(4)
    (expected,) = numerical_grad(f, (x.copy(),), (0,))
    assert_close(s2sad.grad(f)(x.copy()), expected, what=f.__name__)


def numbers(x, y):
    z = x
    z += y  # numbers: z is a new number, x is unchanged
    z *= x
    return z


def test_on_numbers_augmented_assignment_rebinds():
    assert s2sad.grad(numbers, wrt=(0, 1))(2.0, 3.0) == pytest.approx((7.0, 2.0))
    # on arrays `z += y` changes x too (the same array): z *= x is (x + y) * (x + y)
    x, y = np.full(2, 2.0), np.full(2, 3.0)
    out, pullback = s2sad.vjp(numbers, wrt=(0, 1))(x.copy(), y)
    np.testing.assert_allclose(out, numbers(x.copy(), y))
    np.testing.assert_allclose(pullback(np.ones(2)), (2 * (x + y), 2 * (x + y)))


def grows_in_place(x):
    y = np.zeros(3)
    y += x
    return np.sum(y * y)


def floats_into_ints(x):
    y = np.zeros(3, dtype=int)
    y += x
    return np.sum(y * x)


def accumulates(x):
    acc = np.zeros(3)
    for i in range(x.shape[0]):
        acc += x[i] * x[i]
    acc *= 2
    n = 0
    n += 1.5
    return np.sum(acc) * n


@pytest.mark.parametrize("f, what", [(grows_in_place, "shape from (3,) to (2, 3)"),
                                     (floats_into_ints, "floats in `y`, an array of integers")],
                         ids=["shape", "dtype"])
def test_an_update_numpy_cannot_do_in_place_is_refused(f, what):
    """`y += x` where NumPy raises (y cannot take the broadcast shape, or the values' dtype):
    the derivative code, which rebinds y, computed a value and a gradient of a function that
    does not run."""
    x = np.full((2, 3) if f is grows_in_place else (3,), 0.5)
    with pytest.raises(ValueError if f is grows_in_place else TypeError):
        f(x)
    with pytest.raises(s2sad.NonDifferentiableError, match=re.escape(what)) as e:
        s2sad.grad(f)(x)
    assert e.value.lineno == f.__code__.co_firstlineno + 2


def test_updates_numpy_does_in_place_are_accepted():
    x = np.random.default_rng(5).uniform(-1, 1, (4, 3))
    value, g = s2sad.value_and_grad(accumulates)(x)
    assert value == pytest.approx(accumulates(x), rel=1e-14)
    assert_close(g, numerical_grad(accumulates, (x,), (0,))[0])
