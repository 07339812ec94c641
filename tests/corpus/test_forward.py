"""Forward mode (JVP) on the whole corpus, against central finite differences.

For every corpus case: `s2sad.jvp(f, wrt=...)` at 3 random float64 points
(seeded from the case name), one random tangent per point, compared with
central differences (oracle.numerical_jvp). The primal output returned
alongside the tangent must equal f(*args). Plus the two analytic seeds of
the spec.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import s2sad

try:  # works both with and without tests/__init__.py
    from tests import oracle
    from tests.corpus import programs
except ImportError:  # pragma: no cover
    import oracle
    from corpus import programs

N_POINTS = 3
# primal values recomputed inside generated code may be re-associated
PRIMAL_RTOL, PRIMAL_ATOL = 1e-12, 1e-14


def _tangents(rng, case, args):
    return [oracle.random_like(rng, args[i]) for i in case.wrt_idx]


@pytest.mark.parametrize("case", programs.CASES, ids=programs.CASE_IDS)
def test_jvp_matches_finite_differences(case):
    f_jvp = s2sad.jvp(case.fn, wrt=case.wrt)
    rng = oracle.rng_for(case.name, "forward")
    for _ in range(N_POINTS):
        args = case.args(rng)
        tangents = _tangents(rng, case, args)
        expected_out = case(*args)
        expected_dot = oracle.numerical_jvp(
            case.fn, args, case.wrt_idx, tangents, kwargs=case.kwargs
        )

        result = f_jvp(*args, *tangents, **case.kwargs)

        assert isinstance(result, tuple) and len(result) == 2, "jvp must return (out, out_dot)"
        out, out_dot = result
        where = f"{case.name} at args={args!r} tangents={tangents!r}"
        oracle.assert_close(out, expected_out, PRIMAL_RTOL, PRIMAL_ATOL, what=f"out of {where}")
        oracle.assert_close(
            out_dot, expected_dot, oracle.FD_RTOL, oracle.FD_ATOL, what=f"out_dot of {where}"
        )


@pytest.mark.parametrize("case", programs.CASES, ids=programs.CASE_IDS)
def test_jvp_does_not_mutate_arguments(case):
    f_jvp = s2sad.jvp(case.fn, wrt=case.wrt)
    rng = oracle.rng_for(case.name, "mutate")
    args = case.args(rng)
    tangents = _tangents(rng, case, args)
    saved_args = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    saved_tangents = [np.copy(t) if isinstance(t, np.ndarray) else t for t in tangents]
    f_jvp(*args, *tangents, **case.kwargs)
    for a, s in zip(args, saved_args):
        np.testing.assert_array_equal(a, s)
    for t, s in zip(tangents, saved_tangents):
        np.testing.assert_array_equal(t, s)


@pytest.mark.parametrize("case", programs.CASES, ids=programs.CASE_IDS)
def test_jvp_source_is_python(case):
    src = s2sad.jvp(case.fn, wrt=case.wrt).source
    assert isinstance(src, str) and src.strip()
    compile(src, f"<jvp of {case.name}>", "exec")


# --------------------------------------------------------------------------
# analytic seeds from the spec
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "v, expected",
    [
        (np.array([1.0, 0.0]), np.array([1.0, 3.0, math.cos(2.0)])),
        (np.array([0.0, 1.0]), np.array([1.0, 2.0, 0.0])),
    ],
    ids=["e0", "e1"],
)
def test_seed_vector_analytic(v, expected):
    # f(x) = [x0 + x1, x0 * x1, sin x0] at x = [2, 3]
    x = np.array([2.0, 3.0])
    out, out_dot = s2sad.jvp(programs.seed_vector)(x, v)
    oracle.assert_close(out, np.array([5.0, 6.0, math.sin(2.0)]), 1e-15, 1e-15)
    oracle.assert_close(out_dot, expected, 1e-15, 1e-15)


def test_seed_tuple_analytic():
    # f(x1, x2) = (x1**2 + x2, sin(x1 x2)) at (2, 3), v = (1, 0): (4, 3 cos 6)
    out, out_dot = s2sad.jvp(programs.seed_tuple)(2.0, 3.0, 1.0, 0.0)
    oracle.assert_close(out, (7.0, math.sin(6.0)), 1e-15, 1e-15)
    oracle.assert_close(out_dot, (4.0, 3.0 * math.cos(6.0)), 1e-14, 1e-15)


def test_seed_tuple_analytic_second_direction():
    # v = (0, 1): (1, 2 cos 6)
    _, out_dot = s2sad.jvp(programs.seed_tuple)(2.0, 3.0, 0.0, 1.0)
    oracle.assert_close(out_dot, (1.0, 2.0 * math.cos(6.0)), 1e-14, 1e-15)


def test_kwonly_passes_through():
    # kwonly_scale(x, *, scale, power) = scale x**power + x/scale
    # d/dx = scale power x**(power-1) + 1/scale
    f_jvp = s2sad.jvp(programs.kwonly_scale, wrt=0)
    x = 1.3
    for scale, power in [(2.0, 3), (1.5, 3), (0.5, 2)]:
        out, out_dot = f_jvp(x, 1.0, scale=scale, power=power)
        oracle.assert_close(out, scale * x**power + x / scale, 1e-14, 1e-15)
        oracle.assert_close(out_dot, scale * power * x ** (power - 1) + 1.0 / scale, 1e-14, 1e-15)
    out, out_dot = f_jvp(x, 1.0)  # defaults: scale=2.0, power=3
    oracle.assert_close(out, 2.0 * x**3 + x / 2.0, 1e-14, 1e-15)
    oracle.assert_close(out_dot, 6.0 * x**2 + 0.5, 1e-14, 1e-15)
