"""Chained assignment `a = b = value` (found by the real-modules sweep once a library
function without a rule became an opaque call: it was an internal IRVerificationError)."""

import numpy as np

import s2sad
from tests.oracle import numerical_grad, rng_for


def chained(x):
    a = b = x * np.sin(x)
    b = b * 2.0
    return np.sum(a + b)


def chained_in_a_branch(x):
    if np.sum(x) > 0:
        a = b = np.exp(x)
    else:
        a, b = x, x ** 2
    return np.sum(a * b)


def test_chained_assignment():
    for f in (chained, chained_in_a_branch):
        for sign in (1.0, -1.0):
            x = sign * rng_for(f.__name__).uniform(0.1, 1.0, 3)
            np.testing.assert_allclose(s2sad.grad(f)(x), numerical_grad(f, [x], (0,))[0],
                                       rtol=1e-6, atol=1e-8)
            v = np.ones(3)
            _, out_dot = s2sad.jvp(f)(x, v)
            assert np.isclose(out_dot, s2sad.grad(f)(x) @ v)


def declares_then_assigns(x):
    n: int  # a declaration: nothing runs
    scale: float = 2.0
    return np.sum(x ** 2) * scale


def test_annotated_assignments_with_and_without_a_value():
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(s2sad.grad(declares_then_assigns)(x), 4.0 * x, rtol=1e-12)
