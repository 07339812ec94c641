"""Reverse mode (VJP, grad, value_and_grad) on the whole corpus.

Oracle: central finite differences. For every case, at 3 random points:
- the pullback passes the dot-product test <u, J v> == <J^T u, v>, with J v
  from finite differences, and equals J^T u from the finite-difference
  Jacobian component by component;
- every cotangent has its argument's kind: a float for a Python float
  argument, an ndarray of the same shape for an array argument;
- grad / value_and_grad (scalar-output cases) equal the finite-difference
  gradient;
- JVP and VJP agree to ~1e-10: <u, jvp(v)> == <vjp(u), v> (in addition to
  the finite-difference checks, never instead of them).
"""

from __future__ import annotations

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
PRIMAL_RTOL, PRIMAL_ATOL = 1e-12, 1e-14
AGREE_RTOL = 1e-10


def _is_scalar_output(case) -> bool:
    out = case(*case.args(oracle.rng_for(case.name, "probe")))
    return not isinstance(out, (tuple, list)) and np.ndim(out) == 0


SCALAR_CASES = [c for c in programs.CASES if _is_scalar_output(c)]
SCALAR_IDS = [c.name for c in SCALAR_CASES]


def _tangents(rng, case, args):
    return [oracle.random_like(rng, args[i]) for i in case.wrt_idx]


def _grad_wrt(case):
    """What to pass to grad: the case's wrt, made explicit when it is None."""
    return case.wrt_idx if case.wrt is None else case.wrt


def _dot_scale(u, jv) -> float:
    return float(np.sum(np.abs(oracle.flatten(u) * oracle.flatten(jv))))


def _check_cotangent_kinds(case, args, cots, where):
    assert isinstance(cots, tuple), (
        f"{where}: pullback must return a tuple, got {type(cots).__name__}"
    )
    assert len(cots) == len(case.wrt_idx), (
        f"{where}: expected {len(case.wrt_idx)} cotangents, got {len(cots)}"
    )
    for i, cot in zip(case.wrt_idx, cots):
        oracle.assert_like(cot, args[i], what=f"cotangent of argument {i} of {where}")


@pytest.mark.parametrize("case", programs.CASES, ids=programs.CASE_IDS)
def test_vjp_matches_finite_differences(case):
    f_vjp = s2sad.vjp(case.fn, wrt=case.wrt)
    rng = oracle.rng_for(case.name, "reverse")
    for _ in range(N_POINTS):
        args = case.args(rng)
        expected_out = case(*args)
        where = f"{case.name} at args={args!r}"

        result = f_vjp(*args, **case.kwargs)
        assert isinstance(result, tuple) and len(result) == 2, "vjp must return (out, pullback)"
        out, pullback = result
        oracle.assert_close(out, expected_out, PRIMAL_RTOL, PRIMAL_ATOL, what=f"out of {where}")

        u = oracle.random_like(rng, expected_out)
        cots = pullback(u)
        _check_cotangent_kinds(case, args, cots, where)

        # dot-product test: <u, J v> (J v by finite differences) == <J^T u, v>
        v = _tangents(rng, case, args)
        jv = oracle.numerical_jvp(case.fn, args, case.wrt_idx, v, kwargs=case.kwargs)
        lhs = oracle.vdot(u, jv)
        rhs = sum(oracle.vdot(c, t) for c, t in zip(cots, v))
        oracle.assert_dot_close(
            lhs,
            rhs,
            scale=_dot_scale(u, jv),
            rtol=oracle.FD_RTOL,
            atol=oracle.FD_ATOL * float(np.sum(np.abs(oracle.flatten(u)))),
            what=f"<u, Jv> vs <J^T u, v> for {where} u={u!r}",
        )

        # and component by component: J^T u from the finite-difference Jacobian
        expected_cots = oracle.numerical_vjp(case.fn, args, case.wrt_idx, u, kwargs=case.kwargs)
        oracle.assert_close(
            cots, expected_cots, oracle.FD_RTOL, oracle.FD_ATOL, what=f"pullback({u!r}) of {where}"
        )


@pytest.mark.parametrize("case", programs.CASES, ids=programs.CASE_IDS)
def test_pullback_reusable_linear_non_mutating(case):
    """A pullback can be called twice with the same result; it is linear in
    out_bar (2u -> 2 J^T u, exact in floating point); neither the primal call
    nor the pullback modifies the arguments or out_bar in place."""
    f_vjp = s2sad.vjp(case.fn, wrt=case.wrt)
    rng = oracle.rng_for(case.name, "linear")
    args = case.args(rng)
    saved_args = _copy_tree(list(args))
    _, pullback = f_vjp(*args, **case.kwargs)
    u = oracle.random_like(rng, case(*args))
    saved_u = _copy_tree(u)
    first = pullback(u)
    _assert_unchanged(u, saved_u, f"out_bar passed to the pullback of {case.name}")
    twice = pullback(_scale_tree(u, 2.0))
    again = pullback(u)
    _assert_unchanged(list(args), saved_args, f"arguments of {case.name}")
    oracle.assert_close(again, first, 0.0, 0.0, what=f"second call of the pullback of {case.name}")
    oracle.assert_close(
        twice, _scale_tree(first, 2.0), 1e-14, 1e-300, what=f"pullback(2u) of {case.name}"
    )


def _copy_tree(t):
    if isinstance(t, (tuple, list)):
        return type(t)(_copy_tree(x) for x in t)
    return np.copy(t) if isinstance(t, np.ndarray) else t


def _assert_unchanged(t, saved, what):
    if isinstance(saved, (tuple, list)):
        for k, (a, b) in enumerate(zip(t, saved)):
            _assert_unchanged(a, b, f"{what}[{k}]")
        return
    assert np.array_equal(np.asarray(t), np.asarray(saved)), f"{what} was modified in place"


def _scale_tree(t, a):
    if isinstance(t, (tuple, list)):
        return type(t)(_scale_tree(x, a) for x in t)
    if isinstance(t, np.ndarray):
        return t * a
    return float(t) * a


@pytest.mark.parametrize("case", SCALAR_CASES, ids=SCALAR_IDS)
def test_grad_matches_finite_differences(case):
    wrt = _grad_wrt(case)
    df = s2sad.grad(case.fn, wrt=wrt)
    rng = oracle.rng_for(case.name, "grad")
    for _ in range(N_POINTS):
        args = case.args(rng)
        expected = oracle.numerical_grad(case.fn, args, case.wrt_idx, kwargs=case.kwargs)
        if not isinstance(wrt, tuple):
            expected = expected[0]
        g = df(*args, **case.kwargs)
        oracle.assert_close(
            g, expected, oracle.FD_RTOL, oracle.FD_ATOL, what=f"grad of {case.name} at {args!r}"
        )


@pytest.mark.parametrize(
    "case",
    [c for c in SCALAR_CASES if 0 in c.wrt_idx],
    ids=[c.name for c in SCALAR_CASES if 0 in c.wrt_idx],
)
def test_grad_default_wrt_is_first_argument(case):
    rng = oracle.rng_for(case.name, "grad-default")
    args = case.args(rng)
    expected = oracle.numerical_grad(case.fn, args, (0,), kwargs=case.kwargs)[0]
    g = s2sad.grad(case.fn)(*args, **case.kwargs)
    oracle.assert_close(
        g, expected, oracle.FD_RTOL, oracle.FD_ATOL, what=f"grad (wrt=0) of {case.name} at {args!r}"
    )


@pytest.mark.parametrize("case", SCALAR_CASES, ids=SCALAR_IDS)
def test_value_and_grad_matches_finite_differences(case):
    wrt = _grad_wrt(case)
    vdf = s2sad.value_and_grad(case.fn, wrt=wrt)
    rng = oracle.rng_for(case.name, "value_and_grad")
    for _ in range(N_POINTS):
        args = case.args(rng)
        expected = oracle.numerical_grad(case.fn, args, case.wrt_idx, kwargs=case.kwargs)
        if not isinstance(wrt, tuple):
            expected = expected[0]
        result = vdf(*args, **case.kwargs)
        assert isinstance(result, tuple) and len(result) == 2, (
            "value_and_grad must return (value, grad)"
        )
        value, g = result
        where = f"{case.name} at {args!r}"
        oracle.assert_close(value, case(*args), PRIMAL_RTOL, PRIMAL_ATOL, what=f"value of {where}")
        oracle.assert_close(g, expected, oracle.FD_RTOL, oracle.FD_ATOL, what=f"grad of {where}")


@pytest.mark.parametrize("case", programs.CASES, ids=programs.CASE_IDS)
def test_jvp_vjp_agree(case):
    f_jvp = s2sad.jvp(case.fn, wrt=case.wrt)
    f_vjp = s2sad.vjp(case.fn, wrt=case.wrt)
    rng = oracle.rng_for(case.name, "agree")
    for _ in range(N_POINTS):
        args = case.args(rng)
        v = _tangents(rng, case, args)
        _, jv = f_jvp(*args, *v, **case.kwargs)
        out, pullback = f_vjp(*args, **case.kwargs)
        u = oracle.random_like(rng, out)
        cots = pullback(u)
        lhs = oracle.vdot(u, jv)
        rhs = sum(oracle.vdot(c, t) for c, t in zip(cots, v))
        scale = _dot_scale(u, jv) + sum(_dot_scale(c, t) for c, t in zip(cots, v))
        oracle.assert_dot_close(
            lhs,
            rhs,
            scale,
            AGREE_RTOL,
            1e-300,
            what=f"<u, jvp(v)> vs <vjp(u), v> for {case.name} at {args!r}",
        )
