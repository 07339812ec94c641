"""Rule inlining at the top level of a reverse sweep copies only the calls the simplifier
would keep (passes/inline_rules.py, `needed`): not the conditions the operands' kinds
decide (`is_complex(x)`), not what computes only a contribution to a constant operand
from the rule's own values. Inside a reversed loop every call is copied. The derivatives
are checked against central finite differences (tests/oracle.py), never against s2sad.
"""

import numpy as np

import s2sad
from s2sad.ir import prims
from s2sad.ir.kinds import infer_kinds, kind_of_value
from s2sad.ir.nodes import Call, Const
from s2sad.passes.reverse import reverse_pass
from s2sad.transform import lowered
from s2sad_rules import TABLE
from s2sad_rules.kind_tests import is_complex
from tests.oracle import assert_close, numerical_grad


def scaled(x, y):
    return np.sum(0.5 * np.sin(x) * y + 2.0 * x * x)


def scaled_in_loop(x, y, n):
    for _ in range(n):
        x = 0.5 * np.sin(x) * y + 2.0 * x
    return np.sum(x * x)


def _reverse_sweep(func, args, wrt) -> list:
    """The top-level calls of `func`'s reverse pass after the sweep boundary."""
    ir = lowered(func)
    kinds = infer_kinds(ir, {p: kind_of_value(a) for p, a in zip(ir.params, args)})
    stmts = list(reverse_pass(ir, kinds, wrt, TABLE).body.stmts)
    at = next(i for i, s in enumerate(stmts) if getattr(s, "fn", None) is prims.sweep_boundary)
    return [s for s in stmts[at + 1:] if type(s) is Call]


def test_top_level_copies_leave_out_decided_conditions_and_constants_contributions():
    args = (np.linspace(0.1, 0.9, 5), np.linspace(1.0, 2.0, 5))
    calls = _reverse_sweep(scaled, args, (0,))
    assert not [s for s in calls if s.fn is is_complex]
    assert not [s for s in calls if s.fn is prims.unbroadcast and isinstance(s.args[1], Const)]


def test_gradients_with_constant_and_inactive_operands_match_finite_differences():
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0.2, 1.0, 5), rng.uniform(0.5, 1.5, 5)
    for wrt in (0, 1, (0, 1)):
        got = s2sad.grad(scaled, wrt=wrt)(x, y)
        want = numerical_grad(scaled, (x, y), wrt if isinstance(wrt, tuple) else (wrt,))
        assert_close(got if isinstance(wrt, tuple) else (got,), want)


def test_gradients_through_a_reversed_loop_match_finite_differences():
    rng = np.random.default_rng(4)
    x, y = rng.uniform(0.2, 1.0, 4), rng.uniform(0.5, 1.5, 4)
    for wrt in (0, 1, (0, 1)):
        got = s2sad.grad(scaled_in_loop, wrt=wrt)(x, y, 3)
        want = numerical_grad(scaled_in_loop, (x, y, 3),
                              wrt if isinstance(wrt, tuple) else (wrt,))
        assert_close(got if isinstance(wrt, tuple) else (got,), want)


def test_contextual_questions_are_asked_once_and_kept_whole_when_unhashable():
    from s2sad.ir.kinds import Kind
    from s2sad.passes.inline_rules import _questions

    real = Kind("array", "f", (3,))
    yes = Kind("scalar", "b", (), value=True)
    asked = [(is_complex, [real], [], yes), (is_complex, [real], [], yes)]
    assert _questions(asked) == (asked[0],)
    odd = Kind("object", value=[1, 2])  # a known value that cannot be hashed
    asked = [(is_complex, [odd], [], yes), (is_complex, [odd], [], yes)]
    assert _questions(asked) == tuple(asked)
