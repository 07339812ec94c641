"""Library code as its users call it (issues 32 and 33): a differentiated function whose
own signature takes `**kwargs` (SciPy's `rv_continuous.logpdf(x, *args, **kwds)`), wrt
naming a primitive's options by position, frozen distributions, discrete distributions,
quantile functions, `multivariate_normal`, a library object made of constants inside the
function, and a callable object held by a global. Every derivative against central
differences, in both modes, and the JVP and VJP against each other."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.oracle import numerical_grad, numerical_jvp, numerical_vjp, rng_for

st = pytest.importorskip("scipy.stats")


def power_sum(x, **kw):
    return np.sum(x ** kw.get("p", 2)) * kw.get("scale", 1.0)


def pops_options(x, **kw):
    p = kw.pop("p", 2)
    scale = kw.pop("scale", 1.0)
    return np.sum(x ** p) * scale + len(kw)  # (what is left: the keys not popped)


def star_and_keywords(x, *args, **kw):
    return np.sum(np.sin(x) * args[0]) + kw.get("shift", 0.0) * np.sum(x)


def _check_scalar(f, args, wrt=(0,), **kw):
    got = s2sad.grad(f, wrt=wrt)(*args, **kw)
    got = got if isinstance(got, tuple) else (got,)
    want = numerical_grad(f, args, wrt, kwargs=kw)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


def test_a_function_taking_kwargs_is_differentiated_with_and_without_keywords():
    x = rng_for("kwargs").uniform(0.5, 2.0, 4)
    _check_scalar(power_sum, (x,))
    _check_scalar(power_sum, (x,), p=3)
    _check_scalar(power_sum, (x,), p=3, scale=2.0)
    # the keywords given decide the specialisation: another set compiles another
    g = s2sad.grad(power_sum)
    np.testing.assert_allclose(g(x, p=3), 3 * x ** 2, rtol=1e-12)
    np.testing.assert_allclose(g(x), 2 * x, rtol=1e-12)


def test_kwargs_pop_takes_the_key_out():
    x = rng_for("pop").uniform(0.5, 2.0, 3)
    for kw in ({}, {"p": 3}, {"p": 3, "scale": 2.0, "other": 1}):
        _check_scalar(pops_options, (x,), **kw)
        np.testing.assert_allclose(s2sad.grad(pops_options)(x, **kw),
                                   kw.get("p", 2) * kw.get("scale", 1.0) * x ** (kw.get("p", 2) - 1))


def test_star_args_and_kwargs_in_both_modes():
    rng = rng_for("star-kw")
    x, v = rng.uniform(-1, 1, 3), rng.normal(size=3)
    f = star_and_keywords
    _check_scalar(f, (x, 2.0), shift=0.5)
    # the JVP's tangents come before the extra arguments, as for f(x, *args)
    out, out_dot = s2sad.jvp(f)(x, v, 2.0, shift=0.5)
    np.testing.assert_allclose(out, f(x, 2.0, shift=0.5))
    want = numerical_jvp(lambda x: f(x, 2.0, shift=0.5), (x,), (0,), (v,))
    np.testing.assert_allclose(out_dot, want, rtol=1e-6)


def test_scipy_distribution_methods_passed_directly():
    rng = rng_for("rv-direct")
    x, u, v = rng.uniform(-2, 2, 5), rng.normal(size=5), rng.normal(size=5)
    for f in (st.logistic.logpdf, st.norm.cdf, st.t.logpdf):
        args = (x, 3.0) if f == st.t.logpdf else (x,)
        out, pullback = s2sad.vjp(f)(*args)
        (ct,) = pullback(u)
        want = numerical_vjp(f, args, (0,), u)[0]
        np.testing.assert_allclose(ct, want, rtol=1e-6, atol=1e-9)
        _, out_dot = s2sad.jvp(f, wrt=(0,))(x, v, *args[1:])
        np.testing.assert_allclose(np.dot(u, out_dot), np.dot(ct, v), rtol=1e-10)


def test_wrt_names_a_primitives_options_by_position():
    rng = rng_for("options-wrt")
    y = rng.normal(size=5)
    f = st.norm.logpdf
    u = rng.normal(size=5)
    _, pullback = s2sad.vjp(f, wrt=(0, 1, 2))(y, 0.2, 1.5)
    got = pullback(u)
    want = numerical_vjp(f, (y, 0.2, 1.5), (0, 1, 2), u)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("make, method, x0, points", [
    (lambda mu: st.norm(mu, 2.0), "logpdf", 0.3, np.array([0.3, -0.2, 1.1])),
    (lambda s: st.gamma(2.5, scale=s), "logpdf", 1.3, np.array([0.3, 0.2, 1.1])),
    (lambda m: st.t(3.0, loc=m), "cdf", 0.1, np.array([0.3, -0.2, 1.1])),
    (lambda m: st.logistic(m, 1.5), "logsf", -0.2, np.array([0.3, -0.2, 1.1])),
    (lambda s: st.gamma(2.0, scale=s), "ppf", 1.3, np.array([0.2, 0.7])),
], ids=["norm.logpdf", "gamma.logpdf", "t.cdf", "logistic.logsf", "gamma.ppf"])
def test_frozen_distributions(make, method, x0, points):
    def f(p):
        return np.sum(getattr(make(p), method)(points))

    _check_scalar(f, (x0,))
    out, out_dot = s2sad.jvp(f)(x0, 1.0)
    np.testing.assert_allclose(out_dot, numerical_jvp(f, (x0,), (0,), (1.0,)), rtol=1e-6)
    # second order: the derivative of the gradient
    h = s2sad.grad(s2sad.grad(f))(x0)
    np.testing.assert_allclose(h, numerical_grad(s2sad.grad(f), (x0,), (0,))[0], rtol=1e-5,
                               atol=1e-7)


def test_discrete_distributions_log_pmf_and_pmf():
    k = np.array([0.0, 1.0, 3.0, 2.0, 7.0])
    for f, x0 in [(lambda mu: np.sum(st.poisson.logpmf(k, mu)), 1.7),
                  (lambda p: np.sum(st.binom.logpmf(k, 8, p)), 0.35),
                  (lambda mu: np.sum(st.poisson(mu).pmf(k)), 1.7),
                  (lambda p: np.sum(st.geom.logpmf(k + 1, p)), 0.35)]:
        _check_scalar(f, (x0,))


def test_discrete_log_pmf_outside_the_support_is_minus_infinity_with_no_derivative():
    k = np.array([-1.0, 0.5, 2.0])  # (below the support, not an integer, inside)
    f = lambda mu: st.poisson.logpmf(k, mu)  # noqa: E731
    out, pullback = s2sad.vjp(f)(1.5)
    np.testing.assert_array_equal(out, f(1.5))
    (ct,) = pullback(np.array([0.0, 0.0, 1.0]))
    np.testing.assert_allclose(ct, 2.0 / 1.5 - 1.0)


def test_quantile_functions_including_the_supports_ends():
    q = np.array([0.0, 0.2, 0.7, 1.0])  # (the ends: a and b of the support)
    f = lambda s: st.gamma.ppf(q, 2.0, loc=0.5, scale=s)  # noqa: E731
    out, pullback = s2sad.vjp(f)(1.3)
    np.testing.assert_array_equal(out, f(1.3))
    (ct,) = pullback(np.array([0.0, 1.0, 1.0, 0.0]))
    inner = lambda s: np.sum(f(s)[1:3])  # noqa: E731 (the ends are 0.5 and inf: no slope)
    np.testing.assert_allclose(ct, numerical_grad(inner, (1.3,), (0,))[0], rtol=1e-6)
    (ct,) = pullback(np.array([1.0, 1.0, 1.0, 0.0]))  # (the lower end moves with loc only)
    assert np.isfinite(ct)
    np.testing.assert_allclose(ct, numerical_grad(inner, (1.3,), (0,))[0], rtol=1e-6)
    _check_scalar(lambda q0: np.sum(st.logistic.ppf(q0 * q[1:3], 0.5, 2.0)), (1.0,))


def _spd(rng, n):
    a = rng.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def test_multivariate_normal_in_mean_and_covariance():
    rng = rng_for("mvn")
    S, y, m0 = _spd(rng, 3), rng.normal(size=(4, 3)), rng.normal(size=3)
    mvn = st.multivariate_normal
    _check_scalar(lambda m: np.sum(mvn.logpdf(y, m, S)), (m0,))
    _check_scalar(lambda m: mvn.logpdf(y[0], m, S), (m0,))  # one point: a number
    _check_scalar(lambda m: np.sum(mvn.logpdf(y, mean=m, cov=2.0)), (m0,))
    _check_scalar(lambda v: np.sum(mvn.pdf(y, m0, v)), (np.array([1.0, 2.0, 3.0]),))
    # the covariance: SciPy reads its lower triangle, and so does the derivative
    _check_scalar(lambda C: np.sum(mvn.logpdf(y, m0, C)), (S + np.triu(np.ones((3, 3)), 1),))
    # the dot-product test, and the values themselves against SciPy
    f = lambda m, C: mvn.logpdf(y, m, C)  # noqa: E731
    u, dm, dC = rng.normal(size=4), rng.normal(size=3), rng.normal(size=(3, 3))
    out, pullback = s2sad.vjp(f, wrt=(0, 1))(m0, S)
    np.testing.assert_allclose(out, f(m0, S), rtol=1e-12)
    cm, cC = pullback(u)
    _, out_dot = s2sad.jvp(f, wrt=(0, 1))(m0, S, dm, dC)
    np.testing.assert_allclose(u @ out_dot, np.sum(cm * dm) + np.sum(cC * dC), rtol=1e-10)
    # second order in the mean: the Hessian is -n S^-1
    H = s2sad.hessian(lambda m: np.sum(mvn.logpdf(y, m, S)))(m0)
    np.testing.assert_allclose(H, -4 * np.linalg.inv(S), rtol=1e-10)


def test_a_library_object_made_of_constants_inside_the_function():
    sm = pytest.importorskip("statsmodels.api")
    rng = rng_for("made-inside")
    mu, y = rng.uniform(0.5, 3, 6), rng.integers(0, 5, 6).astype(float)
    f = lambda mu, y: sm.families.Poisson().loglike(y, mu)  # noqa: E731
    _check_scalar(f, (mu, y))
    np.testing.assert_allclose(s2sad.grad(f)(mu, y), y / mu - 1.0, rtol=1e-12)


class Scaled:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return self.k * np.sin(x)


SCALED = Scaled(2.0)


def through_a_global_callable(x):
    return np.sum(SCALED(x) ** 2)


def test_a_callable_object_held_by_a_global_is_read_and_guarded():
    x = rng_for("callable-global").uniform(-1, 1, 4)
    g = s2sad.grad(through_a_global_callable)
    np.testing.assert_allclose(g(x), 8 * np.sin(x) * np.cos(x), rtol=1e-12)
    SCALED.k = 3.0  # (what the object holds is guarded like a global)
    try:
        np.testing.assert_allclose(g(x), 18 * np.sin(x) * np.cos(x), rtol=1e-12)
    finally:
        SCALED.k = 2.0


class Tally:
    """Stands for a library class whose `__init__` the compiler does not read (a `try`)."""

    def __init__(self, scale):
        try:
            self.scale = float(scale)
        except TypeError:
            self.scale = 1.0
        self.calls = 0

    def value(self, x):
        return self.scale * np.sum(x ** 2)

    def counted(self, x):
        self.calls += 1
        return self.scale * np.sum(x ** 2)


def test_a_library_object_made_while_compiling_may_not_keep_state(monkeypatch):
    from s2sad.frontend import lower_calls
    library = lower_calls.is_library_function
    monkeypatch.setattr(lower_calls, "is_library_function",
                        lambda fn: fn is Tally.__init__ or library(fn))
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(s2sad.grad(lambda x: Tally(3.0).value(x))(x), 6.0 * x)
    # (a method writing the object's attribute: made once, it would keep the count)
    with pytest.raises(s2sad.UnsupportedSyntaxError, match="made once while compiling"):
        s2sad.grad(lambda x: Tally(3.0).counted(x))(x)
