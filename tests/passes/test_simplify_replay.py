"""The simplifier's replays (s2sad/passes/simplify.py): a round keeps a call the previous
round kept, without rewriting it again, when every definition its rewrite read and every
use-count test it made give the same answer. Replaying must never change the result: the
derivative IR simplified with replays equals the one simplified by rewriting every call in
every round, and the derivative stays right (central finite differences)."""

import numpy as np
import pytest

import s2sad
from s2sad.ir.kinds import kind_of_value
from s2sad.ir.printer import format_function
from s2sad.passes.simplify import Simplifier
from s2sad.transform import derivative_ir
from tests.oracle import assert_close, numerical_grad


def chain(w, x, c):
    # products read once and twice, constant factors, sums of broadcasts: the use counts
    # that the rewrites test change between rounds as the is_complex tests are folded
    h = np.tanh(x @ w)
    for_sum = 0.0
    h0 = np.sin(h * 1.5) + c * h
    h = h + 0.5 * h0 * np.exp(-h0 * h0)
    h1 = np.sin(h * 2.0) + c * h
    h = h - h1 * h1 * 0.25
    for_sum = for_sum + np.sum(h * h) + c * c
    return for_sum + 0.01 * np.sum(w * w)


def scaled_terms(x, y):
    u = 3.0 * x
    v = -(2.0 * u) + y * u
    return np.sum(v * v) + np.sum(-(x * y))


def with_branch_and_loop(x, n):
    total = 0.0
    for i in range(n):
        total = total + np.sum(x * x) * (i + 1.0)
    if total > 0.0:
        total = total * 2.0
    return total


RNG = np.random.default_rng(5)
CASES = [
    (chain, (RNG.standard_normal((3, 4)), RNG.standard_normal((2, 3)), 0.7), (0, 1, 2)),
    (scaled_terms, (RNG.standard_normal(5), RNG.standard_normal(5)), (0, 1)),
    (with_branch_and_loop, (RNG.standard_normal(4), 3), (0,)),
]


def _ir_text(func, args, wrt) -> str:
    kinds = [kind_of_value(a, keep_value=False) for a in args]
    return format_function(derivative_ir(func, "grad", wrt, kinds, {}))


@pytest.mark.parametrize("func,args,wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_replaying_changes_nothing(func, args, wrt, monkeypatch):
    replayed = _ir_text(func, args, wrt)
    monkeypatch.setattr(Simplifier, "replay", False)
    assert _ir_text(func, args, wrt) == replayed


@pytest.mark.parametrize("func,args,wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_replayed_derivative_is_right(func, args, wrt):
    grads = s2sad.grad(func, wrt=wrt)(*args)
    expected = numerical_grad(func, args, wrt)
    for g, e in zip(grads if isinstance(grads, tuple) else (grads,), expected):
        assert_close(g, e)
