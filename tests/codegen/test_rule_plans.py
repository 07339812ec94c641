"""Rule inlining keeps a plan per rule and operand kinds (passes/inline_rules.py); a rule
whose body asks a question the kinds alone do not answer (is_complex of an unknown dtype,
under undecided_complex) is planned at each use."""

import operator

from s2sad.ir.builder import Emitter, Namer
from s2sad.ir.kinds import UNKNOWN, array
from s2sad.ir.nodes import Var
from s2sad.passes.inline_rules import inline
from s2sad_rules import TABLE
from s2sad_rules.kind_tests import undecided_complex


def _inline_mul(kind) -> list:
    """The statements mul's VJP rule inlines to for operands and cotangent of `kind`."""
    rule = TABLE.vjp_rules[operator.mul]
    x, y, g = Var("plan_x"), Var("plan_y"), Var("plan_g")
    em = Emitter(Namer({"plan_x", "plan_y", "plan_g"}))
    inline(rule, TABLE, em, {"x": x, "y": y, "g": g}, ["x_bar", "y_bar"],
           kind_of=lambda a: kind, g_kind=kind)
    return [(type(s).__name__, getattr(s, "fn", None)) for s in em.stmts]


def test_a_plan_made_outside_undecided_complex_is_not_reused_inside_it():
    outside = _inline_mul(UNKNOWN)
    with undecided_complex():
        inside = _inline_mul(UNKNOWN)
    assert _inline_mul(UNKNOWN) == outside
    assert inside != outside  # the branch on is_complex is left to be decided there
    with undecided_complex():
        assert _inline_mul(UNKNOWN) == inside


def test_a_plan_is_the_same_when_reused():
    k = array("f", (3,))
    assert _inline_mul(k) == _inline_mul(k)
