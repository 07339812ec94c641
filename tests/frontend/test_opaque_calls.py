"""Calls that carry no derivative are values, not code to inline (issue #15, item 7): a
library function without a rule called on constants, a helper the compiler cannot read
whose arguments are not differentiated, a method of a run-time object — each is called as
it is at run time, once, in the primal part. If a differentiated value reaches one, the
reason it could not be read is the error, at the user's line.

The derivatives are checked against analytic values and central finite differences."""

import math
from fractions import Fraction

import numpy as np
import pytest

import s2sad
from s2sad.errors import MissingRuleError, UnsupportedSyntaxError
from tests.oracle import numerical_grad, rng_for

sp = pytest.importorskip("scipy.special")

CALLS = []


def logged(n):
    """A helper lowering refuses (try/except), with side effects."""
    try:
        CALLS.append(n)
        return float(n) * 2.0
    except ValueError:
        return 0.0


def library_of_constants(x):
    return np.sum(x * sp.gamma(4.0)) + np.sum(x) * sp.comb(5, 2)


def helper_of_an_integer(x, n):
    return np.sum(x ** 2) * logged(n)


def fraction_constant(x):
    return x * float(Fraction(1, 3))


def inactive_helper_in_a_loop(x):
    total = 0.0
    for i in range(3):
        total = total + x[i] ** 2 * logged(i)
    return total


def test_library_function_of_constants():
    x = rng_for("lib").standard_normal(3)
    g = s2sad.grad(library_of_constants)(x)
    np.testing.assert_allclose(g, 6.0 + 10.0, rtol=1e-12)  # Γ(4) = 3! and C(5, 2) = 10
    np.testing.assert_allclose(g, numerical_grad(library_of_constants, [x], (0,))[0],
                               rtol=1e-6)
    d = s2sad.grad(library_of_constants)
    d(x)
    # (sp.gamma has a rule now: of a constant, folded; sp.comb has none: called, imported)
    assert "from scipy.special import comb" in d.source  # the printed source imports it


def test_helper_called_at_run_time_once_per_call():
    x = rng_for("helper").standard_normal(3)
    CALLS.clear()
    g = s2sad.grad(helper_of_an_integer)(x, 3)
    np.testing.assert_allclose(g, 2 * x * 6.0, rtol=1e-12)
    assert CALLS == [3]  # in the primal part only: not again in the reverse sweep
    CALLS.clear()
    out, out_dot = s2sad.jvp(helper_of_an_integer, wrt=0)(x, 2, np.ones(3))
    assert CALLS == [2] and np.isclose(out_dot, np.sum(2 * x) * 4.0)


def test_helper_in_a_loop():
    x = rng_for("loop").standard_normal(3)
    CALLS.clear()
    g = s2sad.grad(inactive_helper_in_a_loop)(x)
    assert CALLS == [0, 1, 2]
    np.testing.assert_allclose(g, numerical_grad(inactive_helper_in_a_loop, [x], (0,))[0],
                               rtol=1e-6, atol=1e-8)


def test_other_constants():
    assert s2sad.grad(fraction_constant)(2.0) == pytest.approx(1 / 3)


def test_a_derivative_reaching_a_library_function_is_refused():
    def through(x):  # (sp.gamma and sp.beta have rules: tests/rules/test_scipy_special.py)
        return sp.struve(2.0, x) * math.pi

    with pytest.raises(MissingRuleError, match="sp.struve") as e:
        s2sad.grad(through)(2.0)
    assert "return sp.struve(2.0, x)" in str(e.value)


def test_a_derivative_reaching_an_unreadable_helper_points_into_it():
    def through(x):
        return logged(x) * x

    with pytest.raises(UnsupportedSyntaxError, match="`try`") as e:
        s2sad.grad(through)(2.0)
    assert "return float(n) * 2.0" in str(e.value)  # the helper's line inside its `try`


# A Fourier transform of constants (no rule: np.fft.hfft/ihfft, scipy.fft) is complex. Its
# kind was unknown, taken for real by the complex rules: the cotangent of a complex argument
# lost the conjugate (|w z|^2 had the gradient of |z|^2 rotated), and a real argument got a
# complex gradient. Such calls are run on examples while compiling to find their kinds.

def _ihfft_constant():
    return np.fft.ihfft(np.array([1.0, 2.0, 3.0, 4.0]))


def abs_square_of_product(z):
    w = np.fft.ihfft(np.array([1.0, 2.0, 3.0, 4.0]))[1]
    return np.abs(w * z) ** 2


def real_part_times_real(x):
    return np.sum(np.real(np.fft.ihfft(np.array([1.0, 2.0, 3.0, 4.0])) * x * x))


sfft = pytest.importorskip("scipy.fft")


def scipy_fft_times_real(x):
    return np.sum(np.real(sfft.fft(np.array([1.0, 2.0, 3.0])) * x * x))


def test_fft_of_constants_times_a_complex_argument():
    z, h = 0.3 + 0.4j, 1e-6
    f = abs_square_of_product
    d_re = (f(z + h) - f(z - h)) / (2 * h)
    d_im = (f(z + 1j * h) - f(z - 1j * h)) / (2 * h)
    w = _ihfft_constant()[1]
    assert abs(d_re - 2 * abs(w) ** 2 * z.real) < 1e-6  # the oracle itself: |w|^2 |z|^2
    got = s2sad.grad(f)(z)
    np.testing.assert_allclose(got, d_re - 1j * d_im, rtol=1e-6)  # JAX's convention
    _, t_re = s2sad.jvp(f)(z, 1.0 + 0j)
    _, t_im = s2sad.jvp(f)(z, 1j)
    np.testing.assert_allclose([t_re, t_im], [d_re, d_im], rtol=1e-6)
    assert np.isrealobj(t_re)


@pytest.mark.parametrize("f", [real_part_times_real, scipy_fft_times_real])
def test_fft_of_constants_times_a_real_argument(f):
    x = np.array([0.5, -0.3, 0.2])
    got = s2sad.grad(f)(x)
    assert got.dtype == np.float64  # a real argument's gradient is real
    np.testing.assert_allclose(got, numerical_grad(f, (x,), (0,))[0], rtol=1e-6, atol=1e-8)
