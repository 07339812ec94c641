"""The IR verifier and printer: invariants every pass must keep."""

import numpy as np
import pytest

import s2sad
from s2sad.ir.nodes import Block, Call, Const, Function, If, Var
from s2sad.ir.printer import format_function
from s2sad.ir.verify import IRVerificationError, verify
from s2sad.transform import derivative_ir, lowered
from s2sad.ir.kinds import kind_of_value
from tests.corpus import programs

import operator


def _fn(stmts, results, params=(Var("x"),)):
    return Function("f", tuple(params), Block(tuple(stmts), tuple(results)))


def test_single_assignment_is_enforced():
    x, y = Var("x"), Var("y")
    fn = _fn([Call(y, operator.neg, (x,)), Call(y, operator.neg, (x,))], [y])
    with pytest.raises(IRVerificationError, match="assigned twice"):
        verify(fn)


def test_use_before_definition_is_caught():
    x, y, z = Var("x"), Var("y"), Var("z")
    fn = _fn([Call(y, operator.neg, (z,)), Call(z, operator.neg, (x,))], [y])
    with pytest.raises(IRVerificationError, match="before it is defined"):
        verify(fn)


def test_branch_arity_is_checked():
    x, y = Var("x"), Var("y")
    bad = If(x, Block((), (x,)), Block((), ()), (y,))
    with pytest.raises(IRVerificationError, match="different number"):
        verify(_fn([bad], [y]))


def test_branch_locals_are_not_visible_after_the_branch():
    x, t, y = Var("x"), Var("t"), Var("y")
    inner = Block((Call(t, operator.neg, (x,)),), (t,))
    fn = _fn([If(x, inner, Block((), (x,)), (y,))], [t])
    with pytest.raises(IRVerificationError):
        verify(fn)


@pytest.mark.parametrize("case", programs.CASES[:25], ids=programs.CASE_IDS[:25])
def test_every_pass_leaves_verified_ir(case):
    """derivative_ir verifies after the pass and after simplification; check the results."""
    args = case.args(np.random.default_rng(0))
    kinds = [kind_of_value(a, keep_value=False) for a in args]
    wrt = case.wrt_idx
    for mode in ("jvp", "vjp"):
        verify(derivative_ir(case.fn, mode, wrt, kinds, {}))
    verify(lowered(case.fn))


def test_printer_shows_structure():
    text = format_function(lowered(programs.for_range2))
    assert text.startswith("func for_range2(x) {")
    assert "for i in range(1, 4, 1)" in text and "yield" in text
