"""Everyday builtins in differentiated code (issue #15, items 1, 7, 8): zip and enumerate
(of tuples and of arrays), max/min of one sequence, dicts written in the function, *args
of a helper, integer math functions and type tests. Both modes against central finite
differences or the textbook derivative."""

import math
import statistics

import numpy as np
import pytest

import s2sad
from s2sad.errors import MissingRuleError, NonDifferentiableError, UnsupportedSyntaxError
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for


def zip_static(x):
    s = 0.0
    for a, b in zip((1.0, 2.0), (3.0, x)):
        s = s + a * b * x
    return s  # 3x + 2x^2


def enumerate_static(x):
    s = 0.0
    for i, a in enumerate((1.0, x, 3.0), start=1):
        s = s + i * a * x
    return s  # x + 2x^2 + 9x


def enumerate_array(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + i * v * v
    return s


def zip_arrays(x, y):
    s = 0.0
    for a, b in zip(x, y):  # stops at the shorter one
        s = s + np.sin(a) * b
    return s


def enumerate_zip_arrays(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        s = s + (i + 1) * np.sin(a) * b
    return s


def extremes(x):
    return max([x, 2.0 * x, 0.5]) + min((x, 1.0)) + sum([x, x])


def with_dict(x):
    d = {"a": x, "b": 2.0}
    d["c"] = x * x
    if x > 0:
        d["a"] = d["a"] * 3.0
    s = 0.0
    for _, v in d.items():
        s = s + v
    for k in d:
        s = s + d[k]
    return s + len(d) + d.get("missing", 0.0) + uses_dict(d) + dict(w=x)["w"]


def uses_dict(p):
    return p["b"] * p["c"]


def product_of(x, *factors):
    out = x
    for f in factors:
        out = out * f
    return out + len(factors)


def star_args_helper(x):
    return product_of(x, 2.0, x) + product_of(x)


def integer_math(x):
    return x * math.factorial(4) / math.comb(5, 2) + math.gcd(12, 8) * x


def type_tests(x):
    if isinstance(x, float) and type(x) is float:
        return x ** 3
    return x


SCALAR = [zip_static, enumerate_static, extremes, with_dict, star_args_helper, integer_math,
          type_tests]


@pytest.mark.parametrize("f", SCALAR, ids=[f.__name__ for f in SCALAR])
def test_scalar_functions(f):
    x = 1.3
    assert_close(s2sad.grad(f)(x), numerical_grad(f, (x,), (0,))[0], what="grad")
    out, out_dot = s2sad.jvp(f)(x, 0.7)
    assert_close(out, f(x), what="primal")
    assert_close(out_dot, numerical_jvp(f, (x,), (0,), (0.7,)), what="jvp")


def test_textbook_values():
    assert s2sad.grad(zip_static)(2.0) == pytest.approx(3 + 4 * 2.0)
    assert s2sad.grad(enumerate_static)(2.0) == pytest.approx(1 + 4 * 2.0 + 9)
    assert s2sad.grad(integer_math)(2.0) == pytest.approx(24 / 10 + 4)


def test_enumerate_and_zip_of_arrays():
    rng = rng_for("zip")
    x, y = rng.standard_normal(4), rng.standard_normal(3)
    assert_close(s2sad.grad(enumerate_array)(x), np.arange(4) * 2 * x, what="enumerate")
    gx, gy = s2sad.grad(zip_arrays, wrt=(0, 1))(x, y)
    assert_close(gx, np.append(np.cos(x[:3]) * y, 0.0), what="zip x")
    assert_close(gy, np.sin(x[:3]), what="zip y")
    vx, vy = rng.standard_normal(4), rng.standard_normal(3)
    _, out_dot = s2sad.jvp(zip_arrays)(x, y, vx, vy)
    assert_close(out_dot, numerical_jvp(zip_arrays, (x, y), (0, 1), (vx, vy)), what="jvp")


def test_enumerate_of_a_zip_of_arrays():
    """for i, (a, b) in enumerate(zip(x, y)): refused before as a zip used elsewhere than
    as a loop's iterable."""
    rng = rng_for("enumerate zip")
    x, y = rng.standard_normal(4), rng.standard_normal(3)
    gx, gy = s2sad.grad(enumerate_zip_arrays, wrt=(0, 1))(x, y)
    k = np.arange(1, 4)
    assert_close(gx, np.append(k * np.cos(x[:3]) * y, 0.0), what="x")
    assert_close(gy, k * np.sin(x[:3]), what="y")
    vx, vy = rng.standard_normal(4), rng.standard_normal(3)
    out, out_dot = s2sad.jvp(enumerate_zip_arrays)(x, y, vx, vy)
    assert_close(out, enumerate_zip_arrays(x, y), what="value")
    assert_close(out_dot, numerical_jvp(enumerate_zip_arrays, (x, y), (0, 1), (vx, vy)),
                 what="jvp")


def backwards_range(x, n):
    s = 0.0
    for i in reversed(range(n)):
        s = s * 0.5 + x[i] ** 2
    return s


def backwards_stepped(x, a, b):
    s = 0.0
    for i in reversed(range(a, b, 2)):
        s = s * x[i] + 1.0
    for i in reversed(range(b - 1, a, -3)):
        s = s * 0.5 + x[i]
    return s


def backwards_rows(x):
    s = 0.0
    for row in reversed(x):
        s = s * 0.5 + np.sum(row ** 2)
    for v in reversed((x[0, 0], 2.0 * x[1, 1], 3.0)):
        s = s * v + 1.0
    return s


@pytest.mark.parametrize("a, b", [(0, 7), (1, 6), (2, 3), (5, 5), (6, 2)])
def test_reversed_loops(a, b):
    """for i in reversed(range(...)) crashed (TypeError: 'reversed' has no len()), and
    reversed() over an array's rows or a tuple was refused."""
    rng = rng_for(f"reversed {a} {b}")
    x = rng.uniform(0.2, 1.0, 8)
    for f, args in ((backwards_range, (x, b)), (backwards_stepped, (x, a, b)),
                    (backwards_rows, (x.reshape(4, 2),))):
        value, g = s2sad.value_and_grad(f)(*args)
        assert value == pytest.approx(f(*args), rel=1e-14)
        assert_close(g, numerical_grad(f, args, (0,))[0], what=f.__name__)


def negative_integer_factor(x, n):
    k = n + (-2) * (n // 3)  # an index: it must stay an int (it became n - 2.0 * ...)
    return x[k] * x[0]


def test_integer_arithmetic_with_a_negative_factor_stays_integer():
    x = np.array([0.3, 0.5, 0.9, 1.1, 1.3])
    for n in (2, 4):
        k = n + (-2) * (n // 3)
        expected = np.zeros(5)
        expected[0] += x[k]
        expected[k] += x[0]
        np.testing.assert_array_equal(s2sad.grad(negative_integer_factor)(x, n), expected)


def returns_a_dict(x):
    return {"a": x}


def max_of_an_array(x):
    return max(x)


def extremes_of_arrays(x, y):
    # Python's max/min iterate over the entries of a 1-D array; max(a, b) of numbers
    return max(np.abs(x - y)) * min(x) + max(x[0], y[1]) - min(y ** 2)


def cubed_max(x):
    return max(x) ** 3 + np.sum(x ** 2)


def test_max_and_min_of_an_array():
    r = rng_for("extremes_of_arrays")
    x, y = r.uniform(-2, 2, 5), r.uniform(-2, 2, 5)
    expected = numerical_grad(extremes_of_arrays, (x, y), (0, 1))
    assert_close(s2sad.grad(extremes_of_arrays, wrt=(0, 1))(x, y), expected)
    u, v = r.standard_normal(5), r.standard_normal(5)
    _, out_dot = s2sad.jvp(extremes_of_arrays, wrt=(0, 1))(x, y, u, v)
    assert_close(out_dot, numerical_jvp(extremes_of_arrays, (x, y), (0, 1), (u, v)))
    # the value is Python's
    assert s2sad.vjp(extremes_of_arrays, wrt=(0, 1))(x, y)[0] == extremes_of_arrays(x, y)
    # second order: the gradient of a smooth function of the maximum
    hv = s2sad.hvp(cubed_max)(x, u)
    assert_close(hv, numerical_jvp(s2sad.grad(cubed_max), (x,), (0,), (u,)))


def test_max_of_an_array_ties_share_the_derivative():
    # (np.max's convention: tied entries share it evenly; Python returns the first of them)
    x = np.array([1.0, 3.0, 3.0, 2.0])
    np.testing.assert_allclose(s2sad.grad(max_of_an_array)(x), [0.0, 0.5, 0.5, 0.0])


def test_refusals():
    # (a dict returned is a structured output now, tests/test_output_structure.py; a
    # gradient refuses it as any output that is not one scalar)
    with pytest.raises(NonDifferentiableError, match="returns a dict") as e:
        s2sad.grad(returns_a_dict)(1.0)
    assert e.value.loc is not None
    # (max of a 1-D array is differentiated: test_max_and_min_of_an_array)
    with pytest.raises(MissingRuleError, match=r"1-D array, not an array of 2 axes") as e:
        s2sad.vjp(max_of_an_array)(np.ones((2, 3)))
    assert "np.max(x)" in e.value.hint and e.value.loc is not None


def through_a_library_function(x):
    # (variance's helper _ss calls a function value it computes; fmean, whose only obstacle
    # was a `try`, differentiates now: tests/frontend/test_library_try.py)
    return statistics.variance([x, 2.0 * x]) * x


def test_a_library_function_that_cannot_be_inlined_is_reported_at_the_users_line():
    from s2sad.errors import MissingRuleError

    with pytest.raises(MissingRuleError, match="library function `statistics._ss`") as e:
        s2sad.grad(through_a_library_function)(1.0)
    err = e.value
    assert err.loc.user.filename == __file__  # the user's call, not the library's line
    assert "statistics.py" in err.message  # the library's line, as a note
    assert len(err.errors) == 1
