"""`return` inside loops (an early exit): lowered as a flag, the value and a `break` out of
each enclosing loop, with the `return` after the outermost one (frontend/normalize.py).
Refused before ("`return` inside a loop is not supported"). Derivatives against finite
differences, values against Python's own."""

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for


def first_column_above(x):
    for i in range(3):
        if np.sum(x[:, i]) > 0.5:
            return np.sum(x[:, i] ** 3)
    return np.sum(x)


def cube_root_by_newton(x):
    y = 1.2
    for _ in range(60):
        step = (y * y * y - 2.0 - x[0, 1] ** 2) / (3.0 * y * y)
        y = y - step
        if abs(step) < 1e-13:
            return y * x[1, 0]
    return -1.0


def from_a_nested_loop(x):
    s = 0.0
    for i in range(2):
        for j in range(3):
            s = s + x[i, j] ** 2
            if s > 1.0:
                return s * x[0, 0]
        s = s * 0.5
    return s


def from_a_while_loop(x):
    k = 0
    t = np.sum(x)
    while k < 10:
        t = np.tanh(t) + x[0, 0]
        if t > 0.9:
            return t * 2.0
        k += 1
    return t


def from_a_helper(x):
    def first_big(v):
        for i in range(3):
            if v[i] > 0.2:
                return v[i] ** 2
        return 0.0
    return first_big(x[0]) + first_big(x[1]) * x[0, 0]


def array_result(x):
    acc = np.zeros(3)
    for i in range(2):
        acc = acc + np.sin(x[i])
        if np.max(acc) > 0.8:
            return acc * x[1 - i]
    return acc


SCALAR = [first_column_above, cube_root_by_newton, from_a_nested_loop, from_a_while_loop,
          from_a_helper]


@pytest.mark.parametrize("f", SCALAR, ids=lambda f: f.__name__)
def test_against_finite_differences(f):
    rng = rng_for(f.__name__)
    for _ in range(8):  # (points that leave the loop early, and points that run it out)
        x = rng.uniform(-0.5, 1.0, (2, 3))
        value, grad = s2sad.value_and_grad(f)(x)
        assert value == f(x)
        assert_close(grad, numerical_grad(f, (x,), (0,))[0], rtol=1e-5, atol=1e-7)
        v = rng.standard_normal(x.shape)
        _, tangent = s2sad.jvp(f)(x, v)
        assert_close(tangent, numerical_jvp(f, (x,), (0,), (v,)), rtol=1e-5, atol=1e-7)


def test_both_exits_analytically():
    early = np.array([[0.1, 0.4, 0.0], [0.1, 0.3, 0.0]])  # column 1 sums to 0.7: returned
    late = np.array([[0.1, 0.2, 0.0], [0.1, 0.2, 0.1]])  # no column above 0.5: np.sum(x)
    g = s2sad.grad(first_column_above)
    expected = np.zeros((2, 3))
    expected[:, 1] = 3.0 * early[:, 1] ** 2
    np.testing.assert_allclose(g(early), expected, rtol=1e-15)
    np.testing.assert_array_equal(g(late), np.ones((2, 3)))


def test_hessian_through_an_early_return():
    rng = rng_for("hessian")
    x = rng.uniform(-0.5, 1.0, (2, 3))
    g = s2sad.grad(from_a_nested_loop)
    h = s2sad.hessian(from_a_nested_loop)(x)
    for k in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[k] = 1e-5
        assert_close(h[(...,) + k], (g(x + e) - g(x - e)) / 2e-5, rtol=1e-5, atol=1e-6)


def test_an_array_returned_from_a_loop():
    rng = rng_for("array")
    for _ in range(4):
        x = rng.uniform(0.0, 1.0, (2, 3))
        u = rng.standard_normal(3)
        out, pullback = s2sad.vjp(array_result)(x)
        np.testing.assert_array_equal(out, array_result(x))
        (x_bar,) = pullback(u)
        along_u = lambda y, u=u: float(np.dot(u, array_result(y)))
        assert_close(x_bar, numerical_grad(along_u, (x,), (0,))[0], rtol=1e-5, atol=1e-7)


def test_the_generated_code_names_the_flag():
    source = s2sad.grad(first_column_above).source_for(np.ones((2, 3)))
    assert "returned" in source and "__return" not in source
