"""Loop accumulator rewrites (s2sad/passes/loops.py): outer products summed over a loop
become one matrix product after it, and scatters into zeros at the loop index become
plain writes. Gradients are checked against central finite differences and,
through check_grads, the VJP against the JVP (dot-product test)."""

import numpy as np
import pytest

import s2sad
from s2sad.check import check_grads
from tests.oracle import assert_close, numerical_grad


def rnn(W, h0, x):
    h = h0
    for t in range(12):
        h = np.tanh(W @ h + x[t])
    return np.sum(h * h)


def rnn_with_decay(W, h0, x):
    """W's cotangent starts nonzero (from the penalty) before the loop adds to it."""
    h = h0
    for t in range(6):
        h = np.tanh(W @ h + x[t])
    return np.sum(h * h) + 0.1 * np.sum(W * W)


def two_layers(W, V, h0, x):
    h = h0
    for t in range(5):
        g = np.tanh(W @ h + x[t])
        h = np.sin(V @ g)
    return np.sum(h)


def epochs(W, h0, x):
    total = 0.0
    for e in range(3):
        h = h0
        for t in range(4):
            h = np.tanh(W @ h + x[t] * (e + 1.0))
        total = total + np.sum(h)
    return total


def args_for(n, m=None, steps=12, seed=0):
    rng = np.random.default_rng(seed)
    m = m or n
    return (rng.standard_normal((n, m)) * 0.3, rng.standard_normal(m) * 0.3,
            rng.standard_normal((steps, n)) * 0.5)


@pytest.mark.parametrize("f, wrt", [(rnn, 0), (rnn, (0, 1)), (rnn_with_decay, 0),
                                    (epochs, (0, 1))])
def test_batched_outer_products_give_the_gradient(f, wrt):
    args = args_for(16)
    g = s2sad.grad(f, wrt=wrt)
    got = g(*args)
    idx = wrt if isinstance(wrt, tuple) else (wrt,)
    expected = numerical_grad(f, args, idx)
    assert_close(got if isinstance(wrt, tuple) else (got,), expected, rtol=1e-6, atol=1e-8)
    # the per-step outer products are gone: one product of stacked rows after the loop
    assert "expand_dims" not in g.source and "W_bar_u[" in g.source


def test_two_matrices_in_one_loop_and_the_vjp_agrees_with_the_jvp():
    rng = np.random.default_rng(1)
    args = (rng.standard_normal((16, 16)) * 0.3, rng.standard_normal((16, 16)) * 0.3,
            rng.standard_normal(16) * 0.3, rng.standard_normal((5, 16)) * 0.5)
    check_grads(two_layers, args)
    g = s2sad.grad(two_layers, wrt=(0, 1))
    assert_close(g(*args), numerical_grad(two_layers, args, (0, 1)), rtol=1e-6, atol=1e-8)
    assert g.source.count(".T @ ") == 2


A3 = np.array([[0.3, -0.2, 0.1], [0.0, 0.4, -0.3], [0.2, 0.1, 0.25]])


def rnn_of_a_fixed_matrix(B, h0, x):
    W = A3 + B[0:3, 0:3]  # (3 x 3 whatever B's size: numbers, not size symbols)
    h = h0[0:3]
    for t in range(12):
        h = np.tanh(W @ h + x[t, 0:3])
    return np.sum(h * h)


def test_small_outer_products_stay_in_the_loop():
    args = args_for(3, steps=12)
    g = s2sad.grad(rnn, wrt=0)
    assert_close((g(*args),), numerical_grad(rnn, args, (0,)), rtol=1e-6, atol=1e-8)
    # (3 x 3 is a size symbol here, n x n, which may be large: rows, for every n)
    assert "W_bar_u" in g.source
    args = args_for(4, steps=12)
    g = s2sad.grad(rnn_of_a_fixed_matrix, wrt=0)
    assert_close((g(*args),), numerical_grad(rnn_of_a_fixed_matrix, args, (0,)), rtol=1e-6,
                 atol=1e-8)
    assert "W_bar_u" not in g.source  # 3 x 3: nine products are cheaper than rows


def test_rectangular_weights():
    rng = np.random.default_rng(2)

    def f(W, h0, x):
        h = h0
        for t in range(7):
            h = np.tanh(W @ np.tanh(W.T @ h) + x[t])
        return np.sum(h)

    args = (rng.standard_normal((12, 20)) * 0.3, rng.standard_normal(12) * 0.3,
            rng.standard_normal((7, 12)) * 0.5)
    check_grads(f, args)
    g = s2sad.grad(f, wrt=0)
    assert_close((g(*args),), numerical_grad(f, args, (0,)), rtol=1e-6, atol=1e-8)


def indexed_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i]
    return s


def wraps_around(x):
    s = 0.0
    for i in range(-3, 3):  # x[-3] and x[3] are one entry of a 6-vector: reached twice
        s = s + x[i] * x[i] * (i + 4.0)
    return s


def repeated_index(x):
    s = 0.0
    for i in range(6):
        s = s + np.cos(x[i % 3]) * (i + 1.0)
    return s


def also_read_whole(x):
    """The reverse sweep reaches the loop with x_bar already holding 2 x: it must add."""
    s = 0.0
    for i in range(1, 5, 2):
        s = s + x[i] ** 3
    return s + np.sum(x * x)


@pytest.mark.parametrize("f, plain_write", [(indexed_sum, True), (wraps_around, False),
                                            (repeated_index, False), (also_read_whole, False)])
def test_scatter_at_the_loop_index(f, plain_write):
    x = np.random.default_rng(3).uniform(-1.5, 1.5, 6)
    g = s2sad.grad(f)
    assert_close((g(x),), numerical_grad(f, (x,), (0,)), rtol=1e-6, atol=1e-8)
    check_grads(f, (x,))
    assert ("x_bar[i] = " in g.source) == plain_write, g.source


def nested(x, n):
    for i in range(n):
        for j in range(3):
            x = np.sin(x) * 0.9 + 0.1 * j
    return x


def newton(a):
    x = a
    dx = 1.0
    while abs(dx) > 1e-12:
        dx = (x * x * x - a) / (3.0 * x * x)
        x = x - dx
    return x


def test_a_loop_that_runs_once_takes_its_tape_items_in_turn():
    g = s2sad.grad(newton)
    # d/da of a ** (1/3), the cube root Newton converges to
    assert g(2.0) == pytest.approx(2.0 ** (-2.0 / 3.0) / 3.0, rel=1e-12)
    assert " in reversed(tape):" in g.source and "trips" not in g.source
    check_grads(newton, (2.0,))


def test_nested_loops_read_the_inner_tape_by_count():
    g = s2sad.grad(nested, wrt=0)
    assert_close((g(0.4, 3),), numerical_grad(nested, (0.4, 3), (0,)), rtol=1e-6, atol=1e-8)
    # the inner loop runs once per outer iteration: its tape holds every run's items
    assert "next(" in g.source
    check_grads(nested, (0.4, 3), wrt=0)


def rnn_over_the_sequence(W, U, h0, xs):
    h = h0
    for t in range(xs.shape[0]):  # (a size symbol: one specialisation for every length)
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h * h)


def test_outer_products_are_batched_over_a_loop_of_symbolic_length():
    g = s2sad.grad(rnn_over_the_sequence, wrt=(0, 1))
    for steps, n, m in ((9, 12, 5), (14, 12, 5), (3, 12, 5)):
        rng = np.random.default_rng(steps)
        args = (rng.standard_normal((n, n)) * 0.3, rng.standard_normal((n, m)) * 0.3,
                rng.standard_normal(n) * 0.3, rng.standard_normal((steps, m)))
        assert_close(g(*args), numerical_grad(rnn_over_the_sequence, args, (0, 1)),
                     rtol=1e-6, atol=1e-8)
    assert g._last.pattern is not None  # (the lengths 14 and 3 served by the first's code)
    assert "W_bar_u[t] = " in g.source and "W_bar_u.T @ W_bar_v" in g.source
    assert "expand_dims" not in g.source
    assert s2sad.check_grads(rnn_over_the_sequence, args, wrt=(0, 1))
