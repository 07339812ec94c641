"""functools.partial objects and objects with a Python `__call__` (a model called like a
function) are inlined like the functions they stand for (both were refused: "no derivative
rule for `P`"). What they hold is guarded like a global: rebinding the partial, or changing
the object's attribute, makes the next call compile again."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import s2sad
from tests.oracle import numerical_grad


def helper(x, a, b=1.0):
    return np.sin(a * x) * b


SCALED = functools.partial(helper, b=3.0)
FIXED_X = functools.partial(helper, 1.5)  # binds the first argument
WEIGHTS = np.array([1.0, 2.0, 3.0])
DOT_W = functools.partial(np.dot, WEIGHTS)


class Model:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.sum(self.w * np.tanh(x))

    def loss(self, x):
        return self(x) ** 2


MODEL = Model(np.array([0.5, -1.0, 2.0]))


def partial_keyword(x): return SCALED(x, 2.0)
def partial_keyword_overridden(x): return SCALED(x, 2.0, b=0.5)
def partial_positional(a): return FIXED_X(a)
def partial_of_numpy(x): return DOT_W(x) ** 2
def called_object(x): return MODEL(x) + MODEL.loss(x)


def fd(f, x):
    return numerical_grad(f, (x,), (0,))[0]


@pytest.mark.parametrize("f, x", [
    (partial_keyword, 0.7), (partial_keyword_overridden, 0.7), (partial_positional, 0.7),
    (partial_of_numpy, np.array([0.3, 0.5, 0.9])), (called_object, np.array([0.3, 0.5, 0.9])),
])
def test_callables_against_finite_differences(f, x):
    assert np.allclose(s2sad.grad(f)(x), fd(f, x), rtol=1e-6, atol=1e-9)


def test_rebinding_a_partial_or_changing_the_object_is_seen(monkeypatch):
    x = np.array([0.3, 0.5, 0.9])
    d = s2sad.grad(called_object)
    assert np.allclose(d(x), fd(called_object, x), rtol=1e-6)
    monkeypatch.setattr(MODEL, "w", np.array([1.0, 1.0, 4.0]))
    assert np.allclose(d(x), fd(called_object, x), rtol=1e-6)
    dp = s2sad.grad(partial_keyword)
    assert np.isclose(dp(0.7), fd(partial_keyword, 0.7), rtol=1e-6)
    monkeypatch.setattr(f"{__name__}.SCALED", functools.partial(helper, b=-2.0))
    assert np.isclose(dp(0.7), fd(partial_keyword, 0.7), rtol=1e-6)


COEFFS = [2.0]
HELD = functools.partial(lambda c, x, k=None: c[0] * x * x * (k[0] if k else 1.0), COEFFS,
                         k=[1.0])


def partial_holding_lists(x):
    return HELD(x)


def test_a_list_a_partial_holds_changed_in_place_is_seen():
    """The partial's arguments and keywords are guarded like a global's value: a list among
    them changed in place, or its keywords dict changed, compile again (the derivative was
    the first call's, 4.0 where 6.0 and then 30.0 were due)."""
    d = s2sad.grad(partial_holding_lists)
    assert np.isclose(d(1.0), fd(partial_holding_lists, 1.0), rtol=1e-6)  # 2 c x = 4
    COEFFS[0] = 3.0
    assert np.isclose(d(1.0), fd(partial_holding_lists, 1.0), rtol=1e-6)  # 6
    HELD.keywords["k"] = [5.0]
    assert np.isclose(d(1.0), fd(partial_holding_lists, 1.0), rtol=1e-6)  # 30
    assert np.isclose(d(1.0), 30.0)
