"""Sizes that depend on values only known at run time. Evaluated on stand-in values at
compile time, they came out as the stand-ins' sizes and were folded into the code: silently
wrong values, not only derivatives (len(np.arange(x, x + 3.0)) was 0, len(np.where(x > 0.5)[0])
the number of entries). Values against Python's, derivatives against finite differences."""

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad


def arange_length(x):
    return len(np.arange(x[0], x[0] + 3.0)) * x[1]


def arange_sum(x):
    return np.sum(np.arange(x[0], x[0] + 3.0) * x[1])


def arange_step(x):
    return np.sum(np.arange(0.25, 2.0, x[0]) ** 2)


def where_indices(x):
    idx = np.where(x > 0.5)[0]
    return len(idx) * x[0] + np.sum(x[idx] ** 2)


def deleted(x, idx):
    return np.sum(x ** 2) * len(np.delete(np.arange(4.0), idx))


def trimmed(x):
    return np.sum(x) * np.trim_zeros(np.floor(2.0 * x)).size


def set_ops(x, a):
    return len(np.union1d(a, a + 1)) * x[0] + len(np.setdiff1d(a, [0, 1])) * x[1]


CASES = [
    (arange_length, lambda: (np.array([0.6, 0.7, 0.2, 0.1]),)),
    (arange_sum, lambda: (np.array([0.6, 0.7, 0.2, 0.1]),)),
    (arange_step, lambda: (np.array([0.45, 0.7, 0.2, 0.1]),)),
    (where_indices, lambda: (np.array([0.6, 0.7, 0.2, 0.1]),)),
    (deleted, lambda: (np.array([0.6, 0.7, 0.2, 0.1]), np.array([0, 2]))),
    (trimmed, lambda: (np.array([0.1, 0.6, 0.7, 0.2, 0.4, 0.1]),)),
    (set_ops, lambda: (np.array([0.6, 0.7]), np.array([0, 1, 1, 3]))),
]


@pytest.mark.parametrize("f, make", CASES, ids=[f.__name__ for f, _ in CASES])
def test_values_and_gradients(f, make):
    args = make()
    value, g = s2sad.value_and_grad(f)(*args)
    assert value == pytest.approx(f(*args), rel=1e-14)
    assert_close(g, numerical_grad(f, args, (0,))[0], rtol=1e-6, atol=1e-8)
    other = tuple(a * 0.5 if a.dtype.kind == "f" else a[:3] for a in args)  # other sizes
    assert s2sad.value_and_grad(f)(*other)[0] == pytest.approx(f(*other), rel=1e-14)
