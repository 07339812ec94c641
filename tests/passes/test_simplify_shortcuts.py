"""The simplifier's shortcuts for compile time (s2sad/passes/simplify.py, rewrites.py): a
product or sum tries only the rewrites that its operands trigger (rewrites._TRIGGERS), a
confirming round is checked without being built (Simplifier.confirm), and is_complex of a
value whose dtype is known is memoised (kinds.eval_kind). None may change the result: the
derivative IR equals the one simplified without the shortcut, and the derivatives stay
right (central finite differences)."""

import numpy as np
import pytest

import s2sad
from s2sad.ir.kinds import _MEMO, Kind, array, eval_kind, kind_of_value
from s2sad.ir.printer import format_function
from s2sad.passes import rewrites
from s2sad.passes.simplify import Simplifier
from s2sad.transform import derivative_ir
from s2sad_rules.kind_tests import is_complex, undecided_complex
from tests.oracle import assert_close, numerical_grad
from tests.passes.test_simplify_replay import CASES as REPLAY_CASES


def products_and_sums(x, y):
    # a negation and constant factors taken into sums, a broadcast made implicit, zeros
    # added, quotients and differences that cancel, like terms: each trigger of _TRIGGERS
    a = -x * y + 2.0 * (x * y)
    b = np.broadcast_to(np.sum(x), x.shape) * y
    z = np.zeros(x.shape) + a
    c = 3.0 * (x * x) + x * (2.0 * x)
    return np.sum(a / y * y) + np.sum(b + z) + np.sum((x - y) + y) + np.sum(c * c)


def full_sums(s, m):
    # a scalar times a matrix: its cotangent sums over every axis (np.sum(g), spelled as
    # the next round would spell it)
    return np.sum(np.sin(s * m)) * s + np.sum(m * m) * s


RNG = np.random.default_rng(11)
CASES = REPLAY_CASES + [
    (products_and_sums, (RNG.standard_normal(5), RNG.standard_normal(5) + 3.0), (0, 1)),
    (full_sums, (0.7, RNG.standard_normal((3, 4))), (0, 1)),
]
IDS = [c[0].__name__ for c in CASES]


def _ir_text(func, args, wrt) -> str:
    kinds = [kind_of_value(a, keep_value=False) for a in args]
    return format_function(derivative_ir(func, "grad", wrt, kinds, {}))


@pytest.mark.parametrize("func,args,wrt", CASES, ids=IDS)
def test_triggers_change_nothing(func, args, wrt, monkeypatch):
    shortcut = _ir_text(func, args, wrt)
    monkeypatch.setattr(rewrites, "_TRIGGERS", {})  # every rewrite tried on every call
    assert _ir_text(func, args, wrt) == shortcut


@pytest.mark.parametrize("func,args,wrt", CASES, ids=IDS)
def test_confirming_without_a_round_changes_nothing(func, args, wrt, monkeypatch):
    confirmed = _ir_text(func, args, wrt)
    monkeypatch.setattr(Simplifier, "confirm", lambda self: False)  # a round, built
    assert _ir_text(func, args, wrt) == confirmed


@pytest.mark.parametrize("func,args,wrt", CASES[-2:], ids=IDS[-2:])
def test_derivative_is_right(func, args, wrt):
    grads = s2sad.grad(func, wrt=wrt)(*args)
    expected = numerical_grad(func, args, wrt)
    for g, e in zip(grads, expected):
        assert_close(g, e)


def test_is_complex_of_a_known_dtype_is_memoised():
    real, cplx = array("f", (3,)), array("c", (3,))
    assert eval_kind(is_complex, [real], []).value is False
    assert eval_kind(is_complex, [cplx], []).value is True
    assert (is_complex, (real,), ()) in _MEMO
    with undecided_complex():  # (the context does not change a decided answer)
        assert eval_kind(is_complex, [real], []).value is False


def test_is_complex_of_an_unknown_dtype_reads_its_context():
    unknown = Kind("array", "", (3,))
    with undecided_complex():
        assert not eval_kind(is_complex, [unknown], []).known  # left to be decided
    assert eval_kind(is_complex, [unknown], []).value is False  # taken as real
    with undecided_complex():
        assert not eval_kind(is_complex, [unknown], []).known
    assert (is_complex, (unknown,), ()) not in _MEMO
