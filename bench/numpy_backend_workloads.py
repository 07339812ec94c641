"""Problems for the NumPy backend's speed against hand-written NumPy (issue 35, part 4):
each written the way a numerical programmer writes it, with a hand-written gradient in the
same style next to it (`tests/test_gradbench.py` checks both against finite differences).

* `rnn_loss`     tanh RNN h = tanh(W @ h + U @ x_t) over T steps, loss sum(h_T**2)
* `kernel_fill`  a matrix filled element by element in a double loop,
                 K[i, j] = exp(-(x[i] - x[j])**2), loss y @ K @ y
* `lv_rk4`       RK4 time stepping of the Lotka-Volterra equations, 100 steps, the
                 gradient with respect to the four parameters (and the initial state)

`Problem` is gradbench_workloads.Problem: `make_args(rng, small)` gives the benchmark
sizes, or small ones for the finite-difference test.
"""

from __future__ import annotations

import numpy as np

from gradbench_workloads import Problem, ode_args, ode_grad, ode_solve

# ==========================================================================
# tanh RNN, gradient with respect to both weight matrices


def rnn_loss(W, U, h0, xs):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h * h)


def rnn_grad(W, U, h0, xs):
    steps = xs.shape[0]
    hs = np.empty((steps + 1, h0.shape[0]))
    hs[0] = h0
    for t in range(steps):
        hs[t + 1] = np.tanh(W @ hs[t] + U @ xs[t])
    h_bar = 2.0 * hs[steps]
    a_bars = np.empty((steps, h0.shape[0]))
    for t in reversed(range(steps)):
        a_bar = h_bar * (1.0 - hs[t + 1] * hs[t + 1])
        a_bars[t] = a_bar
        h_bar = a_bar @ W
    # the outer products of all steps summed in one product each
    return a_bars.T @ hs[:steps], a_bars.T @ xs


def rnn_args(rng, small=False):
    n, m, steps = (5, 3, 4) if small else (64, 32, 100)
    W = rng.standard_normal((n, n)) * (0.9 / np.sqrt(n))
    U = rng.standard_normal((n, m)) * (0.5 / np.sqrt(m))
    h0 = rng.standard_normal(n) * 0.1
    xs = rng.standard_normal((steps, m))
    return W, U, h0, xs


# ==========================================================================
# a matrix filled element by element in a double loop


def kernel_fill(x, y):
    n = x.shape[0]
    K = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            d = x[i] - x[j]
            K[i, j] = np.exp(-d * d)
    return y @ K @ y


def kernel_fill_grad(x, y):
    n = x.shape[0]
    K = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            d = x[i] - x[j]
            K[i, j] = np.exp(-d * d)
    y_bar = K @ y + y @ K
    K_bar = np.outer(y, y)
    x_bar = np.zeros(n)
    for i in range(n):
        for j in range(n):
            d = x[i] - x[j]
            d_bar = -2.0 * d * K[i, j] * K_bar[i, j]
            x_bar[i] += d_bar
            x_bar[j] -= d_bar
    return x_bar, y_bar


def kernel_fill_args(rng, small=False):
    n = 4 if small else 30
    return rng.uniform(-1.0, 1.0, n), rng.standard_normal(n)


# ==========================================================================
# RK4 of the Lotka-Volterra equations; gradient with respect to the parameters p and the
# initial state y0


def lv_rhs(y, p):
    return np.array([p[0] * y[0] - p[1] * y[0] * y[1],
                     p[3] * y[0] * y[1] - p[2] * y[1]])


def lv_rk4(p, y0):
    h = 0.05
    y = y0
    for _ in range(100):
        k1 = lv_rhs(y, p)
        k2 = lv_rhs(y + 0.5 * h * k1, p)
        k3 = lv_rhs(y + 0.5 * h * k2, p)
        k4 = lv_rhs(y + h * k3, p)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(y * y)


def _lv_rhs_vjp(y, p, z_bar):
    """(y_bar, p_bar) of lv_rhs."""
    y_bar = np.array([(p[0] - p[1] * y[1]) * z_bar[0] + p[3] * y[1] * z_bar[1],
                      -p[1] * y[0] * z_bar[0] + (p[3] * y[0] - p[2]) * z_bar[1]])
    p_bar = np.array([y[0] * z_bar[0], -y[0] * y[1] * z_bar[0],
                      -y[1] * z_bar[1], y[0] * y[1] * z_bar[1]])
    return y_bar, p_bar


def lv_rk4_grad(p, y0):
    h = 0.05
    y = y0
    stages = []
    for _ in range(100):
        k1 = lv_rhs(y, p)
        y2 = y + 0.5 * h * k1
        k2 = lv_rhs(y2, p)
        y3 = y + 0.5 * h * k2
        k3 = lv_rhs(y3, p)
        y4 = y + h * k3
        k4 = lv_rhs(y4, p)
        stages.append((y, y2, y3, y4))
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    y_bar = 2.0 * y
    p_bar = np.zeros(4)
    for y, y2, y3, y4 in reversed(stages):
        k_bar = h / 6.0 * y_bar
        y4_bar, pb = _lv_rhs_vjp(y4, p, k_bar)
        p_bar += pb
        y3_bar, pb = _lv_rhs_vjp(y3, p, 2.0 * k_bar + h * y4_bar)
        p_bar += pb
        y2_bar, pb = _lv_rhs_vjp(y2, p, 2.0 * k_bar + 0.5 * h * y3_bar)
        p_bar += pb
        y1_bar, pb = _lv_rhs_vjp(y, p, k_bar + 0.5 * h * y2_bar)
        p_bar += pb
        y_bar = y_bar + y4_bar + y3_bar + y2_bar + y1_bar
    return p_bar, y_bar


def lv_rk4_args(rng, small=False):
    p = np.array([1.1, 0.4, 0.4, 0.1]) + 0.05 * rng.standard_normal(4)
    y0 = np.array([10.0, 5.0]) + 0.5 * rng.standard_normal(2)
    if small:
        y0 = y0 / 5.0
    return p, y0


PROBLEMS = [
    Problem("rnn", "tanh RNN, W @ h + U @ x_t (64x64, 64x32, 100 steps)", rnn_loss, rnn_grad,
            rnn_args, wrt=(0, 1)),
    Problem("fill", "matrix filled element by element (30x30), y @ K @ y", kernel_fill,
            kernel_fill_grad, kernel_fill_args, wrt=(0, 1)),
    Problem("rk4", "RK4 Lotka-Volterra, 100 steps, wrt parameters and y0", lv_rk4,
            lv_rk4_grad, lv_rk4_args, wrt=(0, 1)),
    Problem("ode", "GradBench ODE, RK4 (n=1000, 20 steps)", ode_solve, ode_grad, ode_args,
            wrt=0),
]
