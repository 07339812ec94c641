"""scipy.linalg.cholesky(a, lower, check_finite=False) as NumPy's factorisation of the same
triangle, and cho_solve((c, lower), b, check_finite=False) as its two triangular solves
(GaussianProcessRegressor's log-marginal likelihood calls both). Oracle: central
differences, both modes; the values are SciPy's."""

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for

linalg = pytest.importorskip("scipy.linalg")
B = rng_for("cholesky B").standard_normal((3, 2))


def log_likelihood_lower(a):
    K = np.outer(a, a) + np.eye(3)
    L = linalg.cholesky(K, lower=True, check_finite=False)
    return -np.sum(np.log(np.diag(L))) - 0.5 * np.sum(B * linalg.cho_solve(
        (L, True), B, check_finite=False))


def log_likelihood_upper(a):
    K = np.outer(a, a) + np.diag(a ** 2) + np.eye(3)
    U = linalg.cholesky(K, check_finite=False)
    return -np.sum(np.log(np.diag(U))) - 0.5 * np.sum(B * linalg.cho_solve(
        (U, False), B, check_finite=False))


@pytest.mark.parametrize("f", [log_likelihood_lower, log_likelihood_upper])
def test_cholesky_and_cho_solve(f):
    a = rng_for(f.__name__).uniform(-1, 1, 3)
    (expected,) = numerical_grad(f, (a,), (0,))
    assert_close(s2sad.grad(f)(a), expected)
    v = rng_for(f.__name__, "v").standard_normal(3)
    out, out_dot = s2sad.jvp(f)(a, v)
    assert_close(out_dot, numerical_jvp(f, (a,), (0,), (v,)))
    assert_close(out, f(a))


def with_check(a):
    return np.sum(linalg.cholesky(np.outer(a, a) + np.eye(3)))


def test_check_finite_is_read_as_written():
    # (SciPy's default check_finite=True: its code, refused where a derivative reaches it)
    with pytest.raises(s2sad.S2SADError):
        s2sad.grad(with_check)(np.ones(3))
