"""Lowering gives every value its own name, whatever names the user chose."""

import numpy as np

import s2sad
from tests.oracle import assert_close, numerical_grad


def reuses_numbered_names(x):
    t = x * 2.0
    t_1 = x * x
    t_1 = t_1 * t  # the user's own t_1, beside the second version of t
    t += t_1
    return np.sum(t)


def test_user_names_that_look_like_versions():
    x = np.array([0.3, -1.2])
    assert_close(s2sad.grad(reuses_numbered_names)(x),
                 numerical_grad(reuses_numbered_names, (x,), (0,))[0])
    assert_close(s2sad.grad(reuses_numbered_names)(x), 2.0 + 6.0 * x * x)
