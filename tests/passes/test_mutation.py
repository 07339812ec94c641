"""Writes into arrays (issue 8): against finite differences, aliasing refused, O(n) tapes."""

import math

import numpy as np
import pytest

import s2sad
from tests.passes import mutation_programs as P
from tests.passes.test_reverse import _stored_values

RNG = np.random.default_rng(3)


def fd_jacobian(f, args, i, eps=1e-6):
    x = np.asarray(args[i], dtype=float)
    cols = []
    for idx in np.ndindex(x.shape if x.shape else ()):
        e = np.zeros(x.shape)
        e[idx] = eps
        ap, am = list(args), list(args)
        ap[i] = x + e if x.shape else float(x) + eps
        am[i] = x - e if x.shape else float(x) - eps
        cols.append((np.asarray(f(*ap)) - np.asarray(f(*am))) / (2 * eps))
    J = np.stack(cols, axis=-1)
    return J.reshape(np.shape(f(*args)) + x.shape)


CASES = [
    (P.fill_elementwise, lambda: (RNG.uniform(0, 1, 5),), 0),
    (P.recurrence, lambda: (0.3, 0.8, 12), 0),
    (P.recurrence, lambda: (0.3, 0.8, 12), 1),
    (P.slice_updates, lambda: (RNG.uniform(0.5, 1, 4),), 0),
    (P.mask_write, lambda: (np.array([0.2, 0.7, 0.9, 0.1]),), 0),
    (P.add_at_repeated, lambda: (RNG.uniform(0.5, 1, 4), np.array([0, 2, 2, 1])), 0),
    (P.repeated_set, lambda: (RNG.uniform(0.5, 1, 4), np.array([0, 2, 2, 1])), 0),
    (P.write_in_branch, lambda: (RNG.uniform(0.5, 1, 3), 1.0), 0),
    (P.write_in_branch, lambda: (RNG.uniform(0.5, 1, 3), -1.0), 0),
    (P.ode_history, lambda: (np.array([0.5, 0.1]), 2.0, 20), 0),
    (P.ode_history, lambda: (np.array([0.5, 0.1]), 2.0, 20), 1),
    (P.writes_into_results, lambda: (RNG.uniform(0, 1, 5) * 0.98 + 0.01,), 0),
]
IDS = [f"{f.__name__}-wrt{w}" for f, _, w in CASES]


@pytest.mark.parametrize("f,make,wrt", CASES, ids=IDS)
def test_jvp_and_vjp_against_finite_differences(f, make, wrt):
    args = make()
    J = fd_jacobian(f, args, wrt)
    x = np.asarray(args[wrt])
    v = RNG.standard_normal(x.shape) if x.shape else 0.61
    out, out_dot = s2sad.jvp(f, wrt=wrt)(*args, v)
    np.testing.assert_allclose(out, f(*args), rtol=1e-13)
    Jv = J.reshape(np.shape(out) + (-1,)) @ np.ravel(v)
    np.testing.assert_allclose(out_dot, Jv.reshape(np.shape(out)), rtol=1e-6, atol=1e-8)
    _, pullback = s2sad.vjp(f, wrt=wrt)(*args)
    u = RNG.standard_normal(np.shape(out)) if np.shape(out) else 0.83
    (x_bar,) = pullback(u)
    JTu = np.ravel(u) @ J.reshape((np.size(out), -1))
    np.testing.assert_allclose(np.ravel(x_bar), JTu, rtol=1e-6, atol=1e-8)
    assert np.shape(x_bar) == x.shape


def test_the_callers_arrays_are_not_modified():
    x = RNG.uniform(0.5, 1, 4)
    saved = x.copy()
    out, pullback = s2sad.vjp(P.slice_updates)(x)
    u = np.ones(4)
    pullback(u)
    np.testing.assert_array_equal(x, saved)
    np.testing.assert_array_equal(u, np.ones(4))  # the seed is copied before writes


def test_a_write_is_seen_by_a_name_of_the_same_array():
    out, out_dot = s2sad.jvp(P.writes_into_alias)(0.5, 1.0)  # b = a; a[0] = x; return b
    np.testing.assert_array_equal(out, [0.5, 0.0, 0.0])
    np.testing.assert_array_equal(out_dot, [1.0, 0.0, 0.0])


def test_a_write_into_an_argument_is_into_a_private_copy():
    # (the caller's array is left as it was: tests/frontend/test_argument_writes.py)
    x, v = np.array([0.5, 2.0, -1.0]), np.array([1.0, 2.0, 3.0])
    out, out_dot = s2sad.jvp(P.writes_into_argument)(x, v)
    np.testing.assert_array_equal(out, [1.0, 2.0, -1.0])
    np.testing.assert_array_equal(out_dot, [0.0, 2.0, 3.0])
    np.testing.assert_array_equal(x, [0.5, 2.0, -1.0])
    with pytest.raises(s2sad.NonDifferentiableError, match="may be the same array"):
        s2sad.jvp(P.writes_into_argument_with_another)(x, x, v, v)


@pytest.mark.parametrize("f,arg", [(P.writes_into_view, 0.5),
                                   (P.writes_into_diff_of_order_0, np.ones(3))],
                         ids=lambda v: getattr(v, "__name__", "arg"))
def test_writes_that_python_would_show_elsewhere_are_refused(f, arg):
    with pytest.raises(s2sad.NonDifferentiableError) as info:
        s2sad.jvp(f)(arg, arg)
    assert info.value.lineno is not None
    assert "copy" in str(info.value)


def writes_with_np_put(x):
    z = np.zeros(4)
    np.put(z, [1, 2], x[:2])
    return np.sum(z * x)


def test_an_in_place_numpy_call_is_refused_as_such():
    """np.put(z, ...) was refused as "an expression statement has no effect"; a write that
    carries no derivative now runs as written (tests/frontend/test_inactive.py), one that
    carries a derivative into `z` is refused as a write in place, at its line."""
    with pytest.raises(s2sad.NonDifferentiableError) as info:
        s2sad.grad(writes_with_np_put)(np.ones(4))
    e = info.value
    assert "in place" in e.message and "z[i] = v" in e.hint
    assert e.lineno == writes_with_np_put.__code__.co_firstlineno + 2


def test_10000_step_fill_stores_o_of_n_values():
    n = 10_000
    x = 0.7
    expected = sum(math.cos(0.001 * i) for i in range(n))
    assert s2sad.grad(P.long_fill)(x, n) == pytest.approx(expected, rel=1e-12)
    _, pullback = s2sad.vjp(P.long_fill, wrt=0)(x, n)
    assert _stored_values(pullback) <= n  # no array is taped per step
    src = s2sad.grad(P.recurrence).source_for(0.3, 0.8, 10)
    assert "h[t + 1] = " in src or "h[t + 1] =" in src  # written in place


def test_recurrence_tape_holds_scalars_per_step():
    n = 10_000
    _, pullback = s2sad.vjp(P.recurrence, wrt=(0, 1))(0.3, 0.8, n)
    assert _stored_values(pullback) == 2 * n
    # analytic check of d/dh0 by the chain rule
    h, d = 0.3, 1.0
    total = h * h
    dtotal = 2 * h
    for _ in range(n):
        th = math.tanh(0.8 * h)
        d *= 0.8 * (1 - th * th)
        h = th + 0.1
        total += h * h
        dtotal += 2 * h * d
    assert pullback(1.0)[0] == pytest.approx(dtotal, rel=1e-9)


def taped_then_updated(v):
    for i in range(2):
        s = np.mean(v + 1.0)
        v = v / (1.5 + s * s) + v
    return v


def test_an_array_on_the_tape_is_never_updated_in_place():
    # regression (fuzz seed 25): `acc += g` on an array a tape still held
    v = RNG.uniform(0.5, 1.0, 3)
    J = fd_jacobian(taped_then_updated, (v,), 0)
    _, pullback = s2sad.vjp(taped_then_updated)(v)
    u = RNG.standard_normal(3)
    np.testing.assert_allclose(pullback(u)[0], u @ J, rtol=1e-6, atol=1e-8)
