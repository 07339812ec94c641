"""Reverse pass: long loops reverse without recursion, tapes store what is read, nothing more.

Derivatives are checked against the analytic recurrence (forward-mode chain rule computed
by hand in the test) or central finite differences, never against s2sad itself.
"""

import math

import numpy as np
import pytest

import s2sad
from tests.passes import loop_programs as P


def _tape_lists(pullback):
    """The lists a pullback closure holds (its tapes)."""
    pullback = getattr(pullback, "__wrapped__", pullback)  # the seed-checking wrapper
    return [c.cell_contents for c in (pullback.__closure__ or ())
            if isinstance(c.cell_contents, list)]


def _stored_values(pullback) -> int:
    total = 0
    for tape in _tape_lists(pullback):
        for entry in tape:
            total += len(entry) if isinstance(entry, tuple) else 1
    return total


def test_10000_iteration_scalar_loop_gradient_and_tape():
    n = 10_000
    x0 = 0.3
    # analytic: d x_{k+1} / d x_k = 0.9 cos(x_k)
    x, d = x0, 1.0
    for _ in range(n):
        d *= 0.9 * math.cos(x)
        x = math.sin(x) * 0.9 + 0.1
    out, pullback = s2sad.vjp(P.long_scalar_loop, wrt=0)(x0, n)
    assert out == pytest.approx(x, rel=1e-12)
    (x_bar,) = pullback(1.0)
    assert x_bar == pytest.approx(d, rel=1e-9)
    # one value per iteration is all the reverse sweep needs (x_k)
    assert _stored_values(pullback) == n
    # the pullback can run twice (the tape is read, not consumed)
    assert pullback(2.0)[0] == pytest.approx(2 * d, rel=1e-9)
    assert s2sad.grad(P.long_scalar_loop)(x0, n) == pytest.approx(d, rel=1e-9)


def test_200_step_array_loop_against_finite_differences():
    rng = np.random.default_rng(1)
    h0 = rng.standard_normal(8)
    W = rng.standard_normal((8, 8)) * 0.3
    steps = 200
    g = s2sad.grad(P.array_recurrence, wrt=(0, 1))
    h_bar, W_bar = g(h0, W, steps)
    v_h, v_W = rng.standard_normal(8), rng.standard_normal((8, 8))
    eps = 1e-6
    fd = (P.array_recurrence(h0 + eps * v_h, W + eps * v_W, steps)
          - P.array_recurrence(h0 - eps * v_h, W - eps * v_W, steps)) / (2 * eps)
    assert np.sum(h_bar * v_h) + np.sum(W_bar * v_W) == pytest.approx(fd, rel=1e-6, abs=1e-9)
    out, pullback = s2sad.vjp(P.array_recurrence, wrt=(0, 1))(h0, W, steps)
    # per step the reverse sweep reads h_t and tanh(W @ h_t): two arrays, no more
    assert _stored_values(pullback) == 2 * steps


def test_while_loop_records_trip_count():
    x0, n = 0.5, 3000
    x, d = x0, 1.0
    for _ in range(n):
        d *= 0.999 - 0.001 * math.sin(x)
        x = x * 0.999 + 0.001 * math.cos(x)
    assert s2sad.grad(P.while_countdown)(x0, n) == pytest.approx(d, rel=1e-9)
    _, pullback = s2sad.vjp(P.while_countdown, wrt=0)(x0, n)
    assert _stored_values(pullback) == n


def test_branches_inside_a_long_loop():
    x0, n = 0.7, 5000
    # analytic derivative of sum over even i of x*i minus sum over odd i of sin(x)/(i+1)
    d = sum(i for i in range(0, n, 2)) - sum(math.cos(x0) / (i + 1) for i in range(1, n, 2))
    assert s2sad.grad(P.branchy_loop)(x0, n) == pytest.approx(d, rel=1e-10)


def test_loop_reversal_reads_the_range_backwards_in_generated_code():
    src = s2sad.grad(P.long_scalar_loop).source_for(0.3, 10)
    assert " in reversed(tape):" in src  # the reversed loop takes the tape's items in turn
    assert "tape.append(" in src
