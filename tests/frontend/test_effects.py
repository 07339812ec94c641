"""print(), assert and f-strings in a differentiated function (issue #15, item 8): kept in
the primal part of the derivative, run once per call, with no derivative; the derivative's
numbers are unchanged (central finite differences)."""

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp


def noisy(x, y):
    assert y > 0, "y must be positive"
    z = np.sin(x) * y
    print("z =", z)
    print(f"x0={x[0]:.3f} total={np.sum(z):.4f} {{braces}}", end="!\n")
    return np.sum(z * z)


X = np.array([0.1, 0.2])


def _expected_output(x, y):
    z = np.sin(x) * y
    return f"z = {z}\nx0={x[0]:.3f} total={np.sum(z):.4f} {{braces}}!\n"


@pytest.mark.parametrize("mode", ["grad", "jvp", "vjp", "hessian"])
def test_prints_once_per_call_and_derivatives_are_unchanged(mode, capsys):
    fd = numerical_grad(lambda x: _quiet(x, 2.0), (X,), (0,))[0]
    if mode == "grad":
        assert_close(s2sad.grad(noisy)(X, 2.0), fd, what="grad")
    elif mode == "jvp":
        v = np.array([0.3, -1.0])
        _, out_dot = s2sad.jvp(noisy, wrt=0)(X, 2.0, v)
        assert_close(out_dot, numerical_jvp(lambda x: _quiet(x, 2.0), (X,), (0,), (v,)))
    elif mode == "vjp":
        _, pullback = s2sad.vjp(noisy, wrt=0)(X, 2.0)
        assert_close(pullback(1.0)[0], fd, what="vjp")
        pullback(2.0)  # the pullback does not print again
    else:
        # d2/dx2 of y^2 sin(x)^2 summed = 2 y^2 cos(2x) on the diagonal
        assert_close(s2sad.hessian(noisy)(X, 2.0), np.diag(8.0 * np.cos(2 * X)), what="H")
    assert capsys.readouterr().out == _expected_output(X, 2.0)


def _quiet(x, y):
    return np.sum((np.sin(x) * y) ** 2)


def test_assert_is_kept(capsys):
    with pytest.raises(AssertionError, match="y must be positive"):
        s2sad.grad(noisy)(X, -1.0)


def test_generated_source_shows_them():
    src = s2sad.grad(noisy).source_for(X, 2.0)
    assert "assert y > 0, 'y must be positive'" in src
    assert "print('z =', z)" in src
    assert ".format(x[0], " in src
