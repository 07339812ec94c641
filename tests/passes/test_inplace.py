"""In-place updates must never touch an array something else still reads (regressions
found by the deep fuzz run), checked against finite differences."""

import numpy as np

import s2sad
from s2sad.check import check_grads


def loop_reuses_outer_sum(p0f, p1m, p2m):
    m = p2m
    p1m = m / (1.5 + (p0f * np.array([1.0, -0.5, 2.0])) ** 2)
    for i in range(2):
        p2m = p1m + m  # p1m's tangent is shared by both iterations: no `+=` into it
    return p2m


def branch_in_loop_reads_outer(p0f, p1f):
    v = p1f * (p0f * np.array([1.0, -0.5, 2.0]))
    for i in range(3):
        if v[i] > 0.0:
            pass
        else:
            p1f = (v + p1f)[-1]
    return p1f * np.array([0.5, -1.5])


def test_an_array_from_outside_a_loop_is_not_updated_in_place():
    rng = np.random.default_rng(0)
    check_grads(loop_reuses_outer_sum, (0.7, rng.random((2, 3)), rng.random((2, 3))))
    check_grads(branch_in_loop_reads_outer, (0.7, -0.4))
    check_grads(branch_in_loop_reads_outer, (0.7, 0.4))
    src = s2sad.jvp(loop_reuses_outer_sum).source_for(0.7, np.ones((2, 3)), np.ones((2, 3)),
                                                     1.0, np.ones((2, 3)), np.ones((2, 3)))
    assert "+=" not in src.split("for ")[1]


def scaled_sine(x):
    return np.sin(x) * 3.0


def weighted(x, y):
    return np.sum(scaled_sine(x) * y)


def test_a_pullback_never_updates_the_forward_sweeps_arrays():
    """y's cotangent is the forward value sin(x) * 3 times out_bar: computed into a new
    array, since the pullback may be called again (and the closure only reads)."""
    x, y = np.linspace(0.1, 1.0, 5), np.arange(5.0)
    out, pullback = s2sad.vjp(weighted)(x, y)
    first = pullback(1.0)
    again = pullback(2.0)
    np.testing.assert_allclose(first[1], 3.0 * np.sin(x), rtol=1e-13)
    np.testing.assert_allclose(again[1], 6.0 * np.sin(x), rtol=1e-13)
    np.testing.assert_allclose(again[0], 2.0 * 3.0 * np.cos(x) * y, rtol=1e-13)
    check_grads(weighted, (x, y))
