"""A library's `try` (issue 33): its body differentiated where a derivative reaches it, the
library function called as it is where none does; np.iscomplex of real numbers decided while
compiling. Every derivative against central differences or an analytic formula."""

from __future__ import annotations

import statistics

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for

si = pytest.importorskip("scipy.integrate")
sp = pytest.importorskip("scipy.special")


def check_both_modes(f, args, wrt=(0,), rtol=1e-6):
    expected = numerical_grad(f, args, wrt)
    got = s2sad.grad(f, wrt=wrt if len(wrt) > 1 else wrt[0])(*args)
    got = got if len(wrt) > 1 else (got,)
    for g, e in zip(got, expected):
        assert_close(g, e, rtol=rtol, what="grad")
    r = rng_for(f.__name__, "tangent")
    tangents = [r.standard_normal(np.shape(args[i])) for i in wrt]
    _, out_dot = s2sad.jvp(f, wrt=wrt if len(wrt) > 1 else wrt[0])(*args, *tangents)
    assert_close(out_dot, numerical_jvp(f, args, wrt, tangents), rtol=rtol, what="jvp",
                 check_kind=False)


def trapezoid_squared(y, x):
    return si.trapezoid(y ** 2, x) * 3.0  # (trapezoid's `try` is inlined: y reaches it)


def trapezoid_beside(y, x):
    # (no derivative reaches trapezoid: it is called as it is, its `try` as written)
    return np.sum(np.sin(y)) * si.trapezoid(x ** 2, x)


def test_a_library_try_is_differentiated_where_a_derivative_reaches_it():
    r = rng_for("library-try")
    y, x = r.uniform(-1, 1, 6), np.sort(r.uniform(0, 3, 6))
    check_both_modes(si.trapezoid, (y, x), wrt=(0, 1))
    check_both_modes(trapezoid_squared, (y, x), wrt=(0, 1))
    check_both_modes(trapezoid_beside, (y, x), wrt=(0,))


def test_a_library_try_where_no_derivative_reaches_runs_as_written():
    r = rng_for("library-try-as-is")
    y, x = r.uniform(-1, 1, 6), np.sort(r.uniform(0, 3, 6))
    source = s2sad.grad(trapezoid_beside).source_for(y, x)
    assert "= trapezoid(" in source  # (the library's function, called)
    source = s2sad.grad(trapezoid_squared, wrt=(0, 1)).source_for(y, x)
    assert "= trapezoid(" not in source and "derivative_reaches" not in source


def through_fmean(x):
    return statistics.fmean([x, 2.0 * x]) * x  # (fmean's `try: n = len(data)`)


def test_a_library_function_whose_only_obstacle_was_a_try():
    for x in (0.5, 2.0):
        assert s2sad.grad(through_fmean)(x) == pytest.approx(3.0 * x, rel=1e-12)
        assert s2sad.jvp(through_fmean)(x, 1.0)[1] == pytest.approx(3.0 * x, rel=1e-12)


def test_iscomplex_of_real_values_is_known_while_compiling():
    """statsmodels' NegativeBinomial chooses `loggamma if np.iscomplex(...) else gammaln`:
    np.iscomplex of its real parameters is a fact of the compile (their dtype)."""
    sm = pytest.importorskip("statsmodels.api")
    r = rng_for("iscomplex")
    model = sm.NegativeBinomial(np.array([0.0, 1, 3, 2, 1, 0, 4, 2]),
                                r.standard_normal((8, 2)))
    params = np.array([0.1, -0.2, 0.4])

    def loglike(p):
        return model.loglike(p)
    loglike.__name__ = "negbin_loglike"
    check_both_modes(loglike, (params,))
    source = s2sad.grad(model.loglike).source_for(params)
    assert "gammaln" in source and "loggamma" not in source
