"""Every rule in the table, JVP and VJP, checked against central finite differences.

The cases live in tests/rules/cases.py; a rule that no case exercises fails
`test_every_rule_is_exercised`, so nothing enters the table unchecked.
"""

from __future__ import annotations


import numpy as np
import pytest

import s2sad
from s2sad_rules.numpy_linalg import EIG_RETURNS_COMPLEX
from s2sad.frontend.lower import lower
from s2sad.ir import prims
from s2sad.ir.nodes import Call, ForRange, If, While
from s2sad_rules import TABLE
from tests.oracle import (
    assert_close,
    assert_dot_close,
    flatten,
    numerical_jvp,
    numerical_vjp,
    random_like,
    rng_for,
    vdot,
)
from tests.rules.cases import CASES

# Keys whose rules are exercised elsewhere rather than by a case of their own.
COVERED_ELSEWHERE: dict = {
    # compiler intrinsics of `a[i] = v` and of loop tapes: tests/passes/test_mutation.py
    prims.index_update: "tests/passes/test_mutation.py",
    prims.take_slot: "tests/passes/test_mutation.py",
    prims.sum_to_shape: "tests/passes/test_mutation.py (shapes taped instead of arrays)",
    # `ys.append(y)` and a grown list handed back: tests/frontend/test_lists.py
    prims.list_append: "tests/frontend/test_lists.py",
    prims.as_list: "tests/frontend/test_lists.py",
    # np.prod's own cotangent helper (its rules give np.prod's second derivatives):
    # tests/rules/test_property_regressions.py and the np.prod cases here
    prims.prod_others: "tests/rules/test_property_regressions.py (np.prod at zeros, second order)",
    # the marker of np.cumprod's exact derivative at zero factors (differentiated again: NaN)
    prims.once_differentiable: "tests/rules/test_property_regressions.py (np.cumprod at zeros)",
    # casts to fewer bits: finite differences would see the rounding, analytic derivatives
    np.float32: "tests/rules/test_conventions.py",
    np.float16: "tests/rules/test_conventions.py",
    np.complex64: "tests/rules/test_session10_rules.py",
}
try:  # the run-time halves of the ODE rules, called by them alone (SciPy is optional)
    from s2sad_rules.scipy_integrate import HALVES
    for _half in HALVES:
        COVERED_ELSEWHERE[_half] = "tests/rules/test_scipy_integrate.py (second order refused)"
except ImportError:
    pass
if EIG_RETURNS_COMPLEX:  # eig's eigenvalues are complex on this NumPy: no real-spectrum check
    from s2sad_rules.numpy_linalg import real_spectrum
    COVERED_ELSEWHERE[real_spectrum] = "eig's real-spectrum check, not used on this NumPy"


def called_primitives(fn) -> set:
    """The primitives a wrapper calls (found by lowering it)."""
    out = set()

    def walk(stmts):
        for s in stmts:
            match s:
                case Call(fn=f):
                    out.add(f)
                case If(then=t, orelse=e):
                    walk(t.stmts)
                    walk(e.stmts)
                case ForRange(body=b) | While(body=b):
                    walk(b.stmts)

    walk(lower(fn, TABLE).body.stmts)
    return out


def float_positions(args):
    return tuple(i for i, a in enumerate(args)
                 if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))


def setup(case, salt=""):
    rng = rng_for(case.name, salt)
    args = case.make_args(rng)
    wrt = case.wrt if case.wrt is not None else float_positions(args)
    return rng, args, wrt


def params(cases, kind):
    """pytest params; a case failing because of a known core bug is a strict xfail."""
    out = []
    for c in cases:
        reason = c.core_bugs.get(kind)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(c, id=c.name, marks=marks))
    return out


def builtin_keys(rules: dict) -> set:
    """The primitives whose rule is one of s2sad_rules' own (not a user's, registered by a test)."""
    return {k for k, r in rules.items() if r.func.__module__.startswith("s2sad_rules")}


def test_every_rule_is_exercised():
    keys = builtin_keys(TABLE.jvp_rules) | builtin_keys(TABLE.vjp_rules)
    covered = set()
    for c in CASES:
        covered |= called_primitives(c.fn)
    missing = [k for k in keys if k not in covered and k not in COVERED_ELSEWHERE]
    assert not missing, f"rules with no test case in tests/rules/cases.py: {missing}"


def test_every_builtin_rule_has_both_modes():
    one_sided = list(builtin_keys(TABLE.jvp_rules) ^ builtin_keys(TABLE.vjp_rules))
    assert not one_sided, f"primitives with only one of JVP/VJP: {one_sided}"


@pytest.mark.parametrize("case", params(CASES, "jvp"))
def test_jvp_matches_finite_differences(case):
    rng, args, wrt = setup(case)
    tangents = [random_like(rng, args[i]) for i in wrt]
    out, out_dot = s2sad.jvp(case.fn, wrt=wrt)(*args, *tangents)
    expected = numerical_jvp(case.fn, args, wrt, tangents)
    assert_close(out_dot, expected, rtol=case.rtol, atol=case.rtol * 1e-2, what="jvp")


@pytest.mark.parametrize("case", params(CASES, "vjp"))
def test_vjp_matches_finite_differences(case):
    rng, args, wrt = setup(case)
    f_vjp = s2sad.vjp(case.fn, wrt=wrt)
    out, pullback = f_vjp(*args)
    u = random_like(rng, out)
    cot = pullback(u)
    expected = numerical_vjp(case.fn, args, wrt, u)
    assert_close(tuple(cot), expected, rtol=case.rtol, atol=case.rtol * 1e-2, what="vjp")


@pytest.mark.parametrize("case", params(CASES, "vjp"))
def test_jvp_and_vjp_agree(case):
    """<u, J v> from the JVP equals <J^T u, v> from the VJP (no finite differences)."""
    rng, args, wrt = setup(case, "dot")
    v = [random_like(rng, args[i]) for i in wrt]
    out, jv = s2sad.jvp(case.fn, wrt=wrt)(*args, *v)
    u = random_like(rng, out)
    _, pullback = s2sad.vjp(case.fn, wrt=wrt)(*args)
    jtu = tuple(pullback(u))
    lhs, rhs = vdot(u, jv), vdot(jtu, tuple(v))
    scale = float(np.sum(np.abs(flatten(u) * flatten(jv))))
    assert_dot_close(lhs, rhs, scale, rtol=1e-9, atol=1e-12)


def scalar_output(case) -> bool:
    _, args, _ = setup(case)
    with np.errstate(all="ignore"):
        return isinstance(case.fn(*args), float)


SECOND = [c for c in CASES if c.second_order and scalar_output(c)]


@pytest.mark.parametrize("case", params(SECOND, "second"))
def test_rule_bodies_differentiate(case):
    """Second order: the generated gradient (VJP rule bodies inlined) differentiated again by
    forward mode, against finite differences of that gradient.

    Forward-over-forward is not checked: differentiating a generated JVP clashes with its
    `x_dot` parameters (see the report in docs/rules.md)."""
    rng, args, wrt = setup(case, "second")
    f_grad = s2sad.grad(case.fn, wrt=tuple(wrt))
    f_grad(*args)
    generated = f_grad.compiled_function
    dirs = [random_like(rng, args[i]) for i in wrt]
    _, second = s2sad.jvp(generated, wrt=wrt)(*args, *dirs)
    expected = numerical_jvp(generated, args, wrt, dirs)
    assert_close(second, expected, rtol=1e-5, atol=1e-7, what="second order",
                 check_kind=False)
