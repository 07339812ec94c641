"""Minimal reproducers of what the corpus found wrong (tests/realcode/expected.py's BUG
entries), and of one refusal that DESIGN.md says should not happen.

Each test states the right behaviour: the derivative (against an analytic formula), or an
S2SADError where s2sad cannot do it; never another exception. All six are fixed (session
12): they stay as regression tests.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("scipy")

import scipy.special as sp  # noqa: E402
import scipy.stats as st  # noqa: E402

import s2sad  # noqa: E402


def derivative_or_refusal(compute, expected) -> None:
    """`compute()` equals `expected`, or raises an S2SADError (a refusal is allowed)."""
    try:
        got = compute()
    except s2sad.S2SADError:
        return
    np.testing.assert_allclose(got, expected, rtol=1e-10)


class Unhashable:
    """A class with __eq__ and no __hash__, as scikit-learn's kernels are."""

    def __init__(self, scale):
        self.scale = scale

    def __eq__(self, other):
        return self is other

    def __call__(self, x):
        return self.scale * x * x


A, B = Unhashable(2.0), Unhashable(3.0)


def pick(x):
    if x > 0.0:
        k = A
    else:
        k = B
    return k.scale * x


def test_unhashable_callable_object_as_the_function():
    derivative_or_refusal(lambda: s2sad.grad(Unhashable(2.0))(3.0), 12.0)


def test_unhashable_constant_merged_after_a_branch():
    derivative_or_refusal(lambda: (s2sad.grad(pick)(1.5), s2sad.grad(pick)(-1.0)), (2.0, 3.0))


def test_jvp_of_a_ufunc_without_a_rule():
    x, v = np.array([0.2, 0.6]), np.array([1.0, -0.5])
    slope = np.sqrt(2 * np.pi) * np.exp(sp.ndtri(x) ** 2 / 2)
    derivative_or_refusal(lambda: s2sad.jvp(sp.ndtri, wrt=0)(x, v)[1], slope * v)


def test_vjp_of_norm_cdf_with_loc_and_scale_by_position():
    x, g = np.array([0.2, 0.6]), np.array([1.0, -0.5])
    derivative_or_refusal(lambda: s2sad.vjp(st.norm.cdf, wrt=0)(x, 0.3, 1.7)[1](g)[0],
                          g * st.norm.pdf(x, 0.3, 1.7))


def three_pieces(z):
    """The shape of statsmodels' Hampel.psi: masked writes, one of a constant-slope value."""
    za = np.abs(z)
    t1 = za <= 1.0
    t2 = (za <= 2.0) * (za > 1.0)
    t3 = za > 2.0
    v = np.zeros(z.shape)
    s = np.sign(z)
    v[t1] = z[t1]
    v[t2] = 2.0 * s[t2]
    v[t3] = s[t3] * (4.0 - za[t3])
    return v


def test_jvp_of_masked_writes_with_a_zero_tangent():
    z, v = np.array([-2.5, 0.5, 1.5, 0.2]), np.array([1.0, 2.0, 3.0, 4.0])
    slope = np.array([-1.0, 1.0, 0.0, 1.0])
    derivative_or_refusal(lambda: s2sad.jvp(three_pieces)(z, v)[1], slope * v)


class Model:
    """statsmodels' pattern: an optional attribute tested with hasattr(self, ...)."""

    def __init__(self, y):
        self.y = y

    def loglike(self, params):
        resid = self.y - params
        if hasattr(self, "offset"):
            resid = resid - self.offset
        return -0.5 * np.sum(resid ** 2)


def test_hasattr_self_prunes_the_dead_branch():
    y, p = np.array([1.0, 2.0]), np.array([0.5, 0.1])
    np.testing.assert_allclose(s2sad.grad(Model(y).loglike)(p), y - p)
