"""Conventions at kinks and boundaries (documented in docs/rules.md), and the missing-rule error."""


import numpy as np
import pytest

import s2sad


def f_abs(x): return np.abs(x)
def f_max2(x, y): return np.maximum(x, y)
def f_max(x): return np.max(x)
def f_sqrt(x): return np.sqrt(x)
def f_norm(x): return np.linalg.norm(x)
def f_norm_axis(x): return np.linalg.norm(x, axis=1)
def f_where_sqrt(x): return np.where(x > 0.0, np.sqrt(x), x)
def f_where_sqrt_safe(x):
    safe = np.where(x > 0.0, x, 1.0)
    return np.where(x > 0.0, np.sqrt(safe), x)
def f_where_inputs(c, x, y): return np.where(c, x, y)


def test_abs_at_zero_is_zero():
    x = np.array([-1.0, 0.0, 2.0])
    assert np.array_equal(s2sad.jvp(f_abs)(x, np.ones(3))[1], [-1.0, 0.0, 1.0])
    assert np.array_equal(s2sad.vjp(f_abs)(x)[1](np.ones(3))[0], [-1.0, 0.0, 1.0])


def test_ties_split_evenly():
    x, y = np.array([1.0, 2.0]), np.array([1.0, 0.0])
    _, pb = s2sad.vjp(f_max2)(x, y)
    xb, yb = pb(np.ones(2))
    assert np.array_equal(xb, [0.5, 1.0]) and np.array_equal(yb, [0.5, 0.0])
    g = s2sad.grad(f_max)(np.array([3.0, 1.0, 3.0]))
    assert np.array_equal(g, [0.5, 0.0, 0.5])
    assert s2sad.jvp(f_max)(np.array([3.0, 1.0, 3.0]), np.array([1.0, 5.0, 3.0]))[1] == 2.0


def test_sqrt_at_zero_is_infinite():
    with np.errstate(divide="ignore"):
        g = s2sad.vjp(f_sqrt)(np.array([0.0, 4.0]))[1](np.ones(2))[0]
    assert g[0] == np.inf and g[1] == 0.25


def test_norm_at_zero_is_the_zero_subgradient():
    assert np.array_equal(s2sad.grad(f_norm)(np.zeros(3)), np.zeros(3))
    assert s2sad.jvp(f_norm)(np.zeros(3), np.ones(3))[1] == 0.0
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    xb = s2sad.vjp(f_norm_axis)(x)[1](np.ones(2))[0]
    assert np.array_equal(xb, [[0.0, 0.0], [0.6, 0.8]])


def test_where_jvp_ignores_nan_in_the_unselected_branch():
    x = np.array([-1.0, 4.0])
    with np.errstate(invalid="ignore"):
        out, t = s2sad.jvp(f_where_sqrt)(x, np.ones(2))
    assert np.array_equal(t, [1.0, 0.25])


def test_where_vjp_gives_an_exact_zero_to_the_unselected_branch():
    c = np.array([True, False])
    x, y = np.array([1.0, np.inf]), np.array([np.nan, 2.0])
    _, pb = s2sad.vjp(f_where_inputs, wrt=(1, 2))(c, x, y)
    xb, yb = pb(np.array([3.0, 5.0]))
    assert np.array_equal(xb, [3.0, 0.0]) and np.array_equal(yb, [0.0, 5.0])


def test_where_vjp_through_a_nan_branch_is_nan_safe():
    # the selection is repeated on what sqrt passes back: no 0 * NaN at the unselected entry
    x = np.array([-1.0, 4.0])
    with np.errstate(invalid="ignore", divide="ignore"):
        g = s2sad.vjp(f_where_sqrt)(x)[1](np.ones(2))[0]
    assert np.array_equal(g, [1.0, 0.25])
    g = s2sad.vjp(f_where_sqrt_safe)(x)[1](np.ones(2))[0]
    assert np.array_equal(g, [1.0, 0.25])


def uses_unregistered(x):
    return np.i0(x) * 2.0


def test_missing_rule_is_a_compile_time_error_naming_the_callable():
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.grad(uses_unregistered)(1.0)
    msg = str(err.value)
    assert "np.i0" in msg and "defjvp" in msg and "defvjp" in msg
    assert "test_conventions.py" in msg
