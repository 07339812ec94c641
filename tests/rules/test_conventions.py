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


def f_max3(x, y, z): return max(x, y, z)
def f_min4(x, y, z, w): return min(x, y, z, w)


@pytest.mark.parametrize("args, shares", [
    ((1.0, 1.0, 0.5), (0.5, 0.5, 0.0)),
    ((2.0, 2.0, 2.0), (1 / 3, 1 / 3, 1 / 3)),
    ((0.5, 3.0, 3.0), (0.0, 0.5, 0.5)),
])
def test_builtin_max_of_three_shares_ties_evenly(args, shares):
    """As np.max among tied entries: each operand equal to the result gets an equal share
    (a subgradient; nesting max(max(a, b), c) would give 1/4, 1/4, 1/2 to a three-way tie)."""
    g = s2sad.grad(f_max3, wrt=(0, 1, 2))(*args)
    np.testing.assert_allclose(g, shares, rtol=0, atol=1e-15)
    out, t = s2sad.jvp(f_max3, wrt=(0, 1, 2))(*args, 1.0, 10.0, 100.0)
    assert out == max(args) and abs(t - np.dot(shares, (1.0, 10.0, 100.0))) < 1e-12


def test_builtin_min_of_four_shares_ties_evenly():
    g = s2sad.grad(f_min4, wrt=(0, 1, 2, 3))(0.2, -1.0, 0.3, -1.0)
    assert g == (0.0, 0.5, 0.0, 0.5)


def f_float32(x): return np.float32(x) * 3.0 + x
def f_float16(x): return np.sum(np.float16(x * x))


@pytest.mark.parametrize("x", [0.7, np.array([0.25, -1.5, 3.0])])
def test_casts_to_fewer_bits_pass_the_derivative_through(x):
    """np.float32(x) and np.float16(x) round the value: their derivative is 1 (the analytic
    one; finite differences would see the rounding), the tangent rounded like the value."""
    v = np.ones_like(x) * 0.5
    _, t = s2sad.jvp(f_float32)(x, v)
    np.testing.assert_allclose(t, 4.0 * v, rtol=1e-6)
    _, pb = s2sad.vjp(f_float32)(x)
    np.testing.assert_allclose(pb(np.ones_like(x) * 2.0)[0], 8.0 * np.ones_like(x), rtol=1e-6)
    if np.ndim(x):
        g = s2sad.grad(f_float16)(x)
        np.testing.assert_allclose(g, 2.0 * x, rtol=1e-3)  # (x * x rounded to float16)


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


def f_asarray_on_a_device(x):
    return np.asarray(x, dtype=np.float64, device=None) ** 2 + np.asarray(x, device="cpu")


def test_asarray_on_numpys_one_device_passes_the_derivative():
    """np.asarray(x, device=...) (scikit-learn's array-API code passes NumPy's `device`)."""
    from tests.rules.test_issue13_regressions import check_both_modes

    check_both_modes(f_asarray_on_a_device, (np.array([0.5, -1.5, 2.0]),))
