"""Writing into an array argument of the differentiated function (`x[x <= tiny] = tiny`, as
`lmfit.lineshapes.lognormal` does): the derivative computes what the function computes, on
a private copy of the argument (it never modifies the caller's arrays). A helper writing
into the array its caller passed: the caller's name sees the write, as in Python. Refused
where another argument may be the same array (its name would see the write in Python).
Oracle: central differences of the function, called on copies."""

import lmfit.lineshapes as ls
import numpy as np
import pytest

import s2sad
from s2sad.errors import NonDifferentiableError
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for


def clamped_lognormal(x, amplitude, center, sigma):
    x[x <= 1e-3] = 1e-3  # (an argument that is not differentiated)
    return np.sum(amplitude / (x * sigma) * np.exp(-(np.log(x) - center) ** 2 / sigma ** 2))


def clipped_square(x):
    x[x < 0] = 0.0  # (the differentiated argument itself)
    return np.sum(x ** 2 * np.sin(x))


def scale_first(x):
    x[0] = 2.0 * x[1]


def caller_sees_the_write(x):
    scale_first(x)
    return np.sum(x ** 3)


def copies(f):
    """f called on copies of its array arguments (the oracle must not clamp them)."""
    return lambda *a: f(*[v.copy() if isinstance(v, np.ndarray) else v for v in a])


def test_a_written_argument_that_is_not_differentiated():
    x = np.linspace(-0.5, 3.0, 7)
    kept = x.copy()
    params = (1.2, 0.1, 0.8)
    expected = numerical_grad(copies(clamped_lognormal), (x,) + params, (1, 2, 3))
    assert_close(s2sad.grad(clamped_lognormal, wrt=(1, 2, 3))(x, *params), expected)
    v = (0.3, -0.7, 1.1)
    _, out_dot = s2sad.jvp(clamped_lognormal, wrt=(1, 2, 3))(x, *params, *v)
    assert_close(out_dot, numerical_jvp(copies(clamped_lognormal), (x,) + params, (1, 2, 3), v))
    np.testing.assert_array_equal(x, kept)  # the caller's array, unchanged
    out, _ = s2sad.vjp(clamped_lognormal, wrt=(1, 2, 3))(x, *params)
    assert out == clamped_lognormal(x.copy(), *params)


def test_a_written_differentiated_argument():
    x = rng_for("clipped_square").uniform(-1, 1, 6)
    x[np.abs(x) < 0.1] = 0.5  # (away from the kink)
    (expected,) = numerical_grad(copies(clipped_square), (x,), (0,))
    assert_close(s2sad.grad(clipped_square)(x), expected)
    u = rng_for("clipped_square", "u").standard_normal(6)
    _, out_dot = s2sad.jvp(clipped_square)(x, u)
    assert_close(out_dot, numerical_jvp(copies(clipped_square), (x,), (0,), (u,)))
    hv = s2sad.hvp(clipped_square)(x, u)
    assert_close(hv, numerical_jvp(s2sad.grad(clipped_square), (x,), (0,), (u,)))


def test_the_caller_of_a_helper_sees_its_write():
    x = rng_for("caller_sees_the_write").uniform(0.5, 1.5, 4)
    (expected,) = numerical_grad(copies(caller_sees_the_write), (x,), (0,))
    assert_close(s2sad.grad(caller_sees_the_write)(x), expected)
    u = np.array([0.2, -1.0, 0.4, 0.9])
    _, out_dot = s2sad.jvp(caller_sees_the_write)(x, u)
    assert_close(out_dot, numerical_jvp(copies(caller_sees_the_write), (x,), (0,), (u,)))


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_lmfit_lognormal(mode):
    x = np.linspace(0.3, 3.0, 6)
    params = (1.2, 0.1, 0.8)

    def total(x, a, c, s):
        return np.sum(ls.lognormal(x.copy(), a, c, s) * np.arange(1, 7))

    if mode == "grad":
        d = s2sad.grad(lambda x, a, c, s: np.sum(ls.lognormal(x, a, c, s) * np.arange(1, 7)),
                       wrt=(1, 2, 3))
        assert_close(d(x, *params), numerical_grad(total, (x,) + params, (1, 2, 3)))
    else:
        v = (1.0, -0.5, 0.25)
        _, out_dot = s2sad.jvp(ls.lognormal, wrt=(1, 2, 3))(x, *params, *v)
        expected = numerical_jvp(lambda *a: ls.lognormal(x.copy(), *a), params, (0, 1, 2), v)
        assert_close(out_dot, expected)


def writes_first(x, y):
    x[0] = 0.0
    return np.sum(x * y)


def test_refused_where_another_argument_may_be_the_same_array():
    with pytest.raises(NonDifferentiableError, match="`y`, another argument, may be the "
                       "same array") as e:
        s2sad.grad(writes_first, wrt=1)(np.ones(3), np.ones(3))
    assert e.value.loc is not None and "x.copy()" in e.value.hint
    # a number cannot be that array
    assert s2sad.grad(writes_first, wrt=1)(np.ones(3), 2.0) == pytest.approx(2.0)
