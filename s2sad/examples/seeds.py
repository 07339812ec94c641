"""The worked examples of the design notes, as plain Python + NumPy."""

import numpy as np


def f(x):
    """f(x) = [x0 + x1, x0 * x1, sin(x0)]: its JVPs along e0, e1 are the Jacobian's columns."""
    return np.array([x[0] + x[1], x[0] * x[1], np.sin(x[0])])


def g(x1, x2):
    """g(x1, x2) = (x1**2 + x2, sin(x1 * x2))."""
    return (x1 ** 2 + x2, np.sin(x1 * x2))


def loss(w, x, y):
    """A small model: squared error of a tanh layer, with an L2 penalty."""
    h = np.tanh(x @ w)
    err = h - y
    return np.mean(err * err) + 0.01 * np.sum(w * w)


def newton_sqrt(a):
    """Square root by Newton's method: reverse mode differentiates through the while loop."""
    x = a
    while abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x
