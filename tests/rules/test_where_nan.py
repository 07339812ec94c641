"""NaN-safe np.where: a branch np.where did not select contributes an exact 0, even where the
branch's own derivative is inf or NaN (sqrt or log at or below 0), in both modes."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.rules.test_issue13_regressions import check_both_modes


def sqrt_where_positive(x): return np.sum(np.where(x > 0, np.sqrt(x), 0.0))
def log_or_identity(x): return np.where(x > 0, np.log(x), x)
def nested(x): return np.where(x > -0.5, np.where(x > 0, np.sqrt(x) * 2.0, x), np.log(-x))
def unselected_second(x): return np.where(x <= 0, x * x, np.sqrt(x) / x)


@pytest.fixture(autouse=True)
def quiet():
    with np.errstate(all="ignore"):
        yield


def test_sqrt_of_the_unselected_entries_does_not_poison_the_gradient():
    x = np.array([-1.0, 0.0, 4.0])
    assert np.array_equal(s2sad.grad(sqrt_where_positive)(x), [0.0, 0.0, 0.25])
    _, t = s2sad.jvp(sqrt_where_positive)(x, np.array([1.0, 1.0, 1.0]))
    assert t == 0.25


def test_log_at_zero_in_the_unselected_branch():
    x = np.array([-1.0, 0.0, 4.0])
    (x_bar,) = s2sad.vjp(log_or_identity)(x)[1](np.ones(3))
    assert np.array_equal(x_bar, [1.0, 1.0, 0.25])
    _, t = s2sad.jvp(log_or_identity)(x, np.ones(3))
    assert np.array_equal(t, [1.0, 1.0, 0.25])


def test_nested_where_and_the_second_branch():
    x = np.array([-2.0, -0.25, 0.0, 4.0])
    (x_bar,) = s2sad.vjp(nested)(x)[1](np.ones(4))
    assert np.array_equal(x_bar, [-0.5, 1.0, 1.0, 0.5])
    (x_bar,) = s2sad.vjp(unselected_second)(np.array([-1.0, 0.0, 4.0]))[1](np.ones(3))
    assert np.allclose(x_bar, [-2.0, 0.0, -1.0 / 16.0])


@pytest.mark.parametrize("f", [log_or_identity, nested, unselected_second])
def test_away_from_the_boundary_both_modes_match_finite_differences(f):
    x = np.array([-1.7, -0.3, 0.6, 2.5])
    check_both_modes(f, [x])
