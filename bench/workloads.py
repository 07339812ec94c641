"""Benchmark workloads: primal functions, hand-written derivatives, arguments.

Every primal is written in the language s2sad accepts: arithmetic, `math`
and `numpy` calls, `if` / `for ... in range` / `while`, tuples, indexing.
Every derivative next to it is written by hand, in the same style as the
primal, the way a careful person would write it:

* JVPs take `(x..., x_dot...)` and return `(out, out_dot)`;
* gradients take the primal's arguments and return the gradient with respect
  to the `wrt` arguments (a tuple when there are several);
* loops are reversed with a forward loop that stores, in a Python list, what
  the backward loop reads, followed by a reversed loop.

`bench/check_handwritten.py` checks every hand-written derivative against
central finite differences in float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Workload:
    key: str            # short id: "J1", "a", ...
    name: str           # human label
    primal: object      # the function to differentiate
    hand: object        # hand-written JVP or gradient
    make_args: object   # make_args(rng) -> tuple of primal args (JVP: primals + tangents)
    wrt: object = None  # gradient: int or tuple of ints (as passed to s2sad.grad)
    vectorised: bool = False
    # hand-written split form: hand_vjp(*args) -> (value, pullback); pullback(out_bar)
    # returns what `hand` returns, scaled by out_bar (bench_split.py compares s2sad.vjp to it)
    hand_vjp: object = None


# ==========================================================================
# JVP workloads
# ==========================================================================

# (J1) ~34 scalar operations on Python floats using `math`.
def scalar_fwd(x, y):
    a = math.sin(x) * y + math.exp(-x * x)
    b = math.log(1.0 + y * y) + math.cos(a) * x
    c = math.sqrt(a * a + b * b + 1.0)
    d = math.tanh(c - x) * b / (1.0 + a * a)
    e = math.sin(d) + x * y * c
    return e * e + math.sin(b) - math.exp(-c) * d


def scalar_fwd_jvp(x, y, x_dot, y_dot):
    sx = math.sin(x)
    g = math.exp(-x * x)
    a = sx * y + g
    a_dot = math.cos(x) * x_dot * y + sx * y_dot - 2.0 * x * x_dot * g
    u = 1.0 + y * y
    ca = math.cos(a)
    b = math.log(u) + ca * x
    b_dot = 2.0 * y * y_dot / u - math.sin(a) * a_dot * x + ca * x_dot
    c = math.sqrt(a * a + b * b + 1.0)
    c_dot = (a * a_dot + b * b_dot) / c
    t = math.tanh(c - x)
    t_dot = (1.0 - t * t) * (c_dot - x_dot)
    q = 1.0 + a * a
    q_dot = 2.0 * a * a_dot
    d = t * b / q
    d_dot = (t_dot * b + t * b_dot - d * q_dot) / q
    xy = x * y
    e = math.sin(d) + xy * c
    e_dot = math.cos(d) * d_dot + (x_dot * y + x * y_dot) * c + xy * c_dot
    emc = math.exp(-c)
    out = e * e + math.sin(b) - emc * d
    out_dot = 2.0 * e * e_dot + math.cos(b) * b_dot + emc * c_dot * d - emc * d_dot
    return out, out_dot


def scalar_fwd_args(rng):
    return (0.7, -1.3), (0.4, 0.9)


# (J2) vectorised elementwise ops and reductions on 1e5 elements.
N_J2 = 10**5


def vector_fwd(x, y):
    a = np.sin(x) * y
    b = np.exp(-x * x) + a
    c = np.tanh(b) * y + np.log(1.0 + y * y)
    return np.sum(c * c) + np.sum(a)


def vector_fwd_jvp(x, y, x_dot, y_dot):
    sx = np.sin(x)
    a = sx * y
    a_dot = np.cos(x) * x_dot * y + sx * y_dot
    g = np.exp(-x * x)
    b = g + a
    b_dot = -2.0 * x * x_dot * g + a_dot
    t = np.tanh(b)
    u = 1.0 + y * y
    c = t * y + np.log(u)
    c_dot = (1.0 - t * t) * b_dot * y + t * y_dot + 2.0 * y * y_dot / u
    out = np.sum(c * c) + np.sum(a)
    out_dot = 2.0 * np.sum(c * c_dot) + np.sum(a_dot)
    return out, out_dot


def vector_fwd_args(rng):
    x = rng.standard_normal(N_J2)
    y = rng.standard_normal(N_J2)
    return (x, y), (rng.standard_normal(N_J2), rng.standard_normal(N_J2))


# ==========================================================================
# Gradient workloads
# ==========================================================================

# (a) ~29 scalar operations on Python floats.
def scalar_rev(x, y, z):
    a = x * y + math.sin(z)
    b = math.exp(a * 0.1) * z - y
    c = math.log(x * x + 1.0) + b * b
    d = math.tanh(c) * a + math.cos(x * z)
    e = math.sqrt(d * d + a * a + 1.0) / (1.0 + y * y)
    return e * c - d * b + a


def scalar_rev_grad(x, y, z):
    # forward
    a = x * y + math.sin(z)
    ea = math.exp(a * 0.1)
    b = ea * z - y
    u = x * x + 1.0
    c = math.log(u) + b * b
    tc = math.tanh(c)
    xz = x * z
    d = tc * a + math.cos(xz)
    r = math.sqrt(d * d + a * a + 1.0)
    v = 1.0 + y * y
    e = r / v
    # backward: out = e * c - d * b + a
    e_bar = c
    c_bar = e
    d_bar = -b
    b_bar = -d
    a_bar = 1.0
    # e = r / v
    r_bar = e_bar / v
    v_bar = -e_bar * e / v
    # r = sqrt(d * d + a * a + 1)
    d_bar += r_bar * d / r
    a_bar += r_bar * a / r
    # v = 1 + y * y
    y_bar = 2.0 * y * v_bar
    # d = tanh(c) * a + cos(x * z)
    c_bar += d_bar * a * (1.0 - tc * tc)
    a_bar += d_bar * tc
    sxz = math.sin(xz)
    x_bar = -d_bar * sxz * z
    z_bar = -d_bar * sxz * x
    # c = log(u) + b * b
    x_bar += c_bar * 2.0 * x / u
    b_bar += 2.0 * b * c_bar
    # b = exp(0.1 a) * z - y
    a_bar += b_bar * z * ea * 0.1
    z_bar += b_bar * ea
    y_bar -= b_bar
    # a = x * y + sin(z)
    x_bar += a_bar * y
    y_bar += a_bar * x
    z_bar += a_bar * math.cos(z)
    return x_bar, y_bar, z_bar


def scalar_rev_args(rng):
    return (0.8, -0.6, 1.1)


# (b) 100-step explicit Euler integration of a damped pendulum
#     x'' = -a sin(x) - b x'; loss = x(T)^2 + v(T)^2.
def ode_euler(a, b):
    dt = 0.05
    x = 1.0
    v = 0.0
    for i in range(100):
        acc = -a * math.sin(x) - b * v
        x = x + dt * v
        v = v + dt * acc
    return x * x + v * v


def ode_euler_grad(a, b):
    dt = 0.05
    x = 1.0
    v = 0.0
    tape = []
    for i in range(100):
        tape.append((x, v))
        acc = -a * math.sin(x) - b * v
        x = x + dt * v
        v = v + dt * acc
    x_bar = 2.0 * x
    v_bar = 2.0 * v
    a_bar = 0.0
    b_bar = 0.0
    for i in reversed(range(100)):
        x, v = tape[i]
        # v_new = v + dt * acc
        acc_bar = dt * v_bar
        # x_new = x + dt * v
        v_bar = v_bar + dt * x_bar
        # acc = -a sin(x) - b v
        a_bar -= acc_bar * math.sin(x)
        b_bar -= acc_bar * v
        x_bar = x_bar - acc_bar * a * math.cos(x)
        v_bar = v_bar - acc_bar * b
    return a_bar, b_bar


def ode_euler_args(rng):
    return (1.3, 0.2)


# (c) Newton's method for x**3 = a, gradient wrt a through the iterations.
def newton_cbrt(a):
    x = a
    dx = 1.0
    while abs(dx) > 1e-12:
        dx = (x * x * x - a) / (3.0 * x * x)
        x = x - dx
    return x


def newton_cbrt_grad(a):
    x = a
    dx = 1.0
    tape = []
    while abs(dx) > 1e-12:
        tape.append(x)
        dx = (x * x * x - a) / (3.0 * x * x)
        x = x - dx
    x_bar = 1.0
    a_bar = 0.0
    for i in reversed(range(len(tape))):
        x = tape[i]
        # x_new = x - dx
        dx_bar = -x_bar
        # dx = u / w, u = x^3 - a, w = 3 x^2
        w = 3.0 * x * x
        u = x * x * x - a
        u_bar = dx_bar / w
        w_bar = -dx_bar * u / (w * w)
        x_bar = x_bar + u_bar * w + w_bar * 6.0 * x
        a_bar -= u_bar
    # x = a
    a_bar += x_bar
    return a_bar


def newton_cbrt_args(rng):
    return (2.0,)


# (d) logsumexp on 1e6 elements, stable form.
N_LSE = 10**6


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def logsumexp_grad(x):
    # The shift m has zero net gradient (d/dm cancels exactly), so the
    # gradient is softmax(x).
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def logsumexp_args(rng):
    return (rng.standard_normal(N_LSE),)


# (e) 2-layer tanh MLP, softmax cross-entropy; batch 64, 100 -> 200 -> 10.
def mlp_loss(W1, b1, W2, b2, x, y):
    h = np.tanh(x @ W1 + b1)
    z = h @ W2 + b2
    m = np.max(z, axis=1, keepdims=True)
    zs = z - m
    lse = np.log(np.sum(np.exp(zs), axis=1, keepdims=True))
    logp = zs - lse
    return -np.mean(np.sum(y * logp, axis=1))


def mlp_loss_grad(W1, b1, W2, b2, x, y):
    n = x.shape[0]
    h = np.tanh(x @ W1 + b1)
    z = h @ W2 + b2
    zs = z - np.max(z, axis=1, keepdims=True)
    ez = np.exp(zs)
    p = ez / np.sum(ez, axis=1, keepdims=True)
    # d loss / d z (the max shift cancels); general y, not only one-hot rows
    z_bar = (p * np.sum(y, axis=1, keepdims=True) - y) / n
    W2_bar = h.T @ z_bar
    b2_bar = np.sum(z_bar, axis=0)
    a_bar = (z_bar @ W2.T) * (1.0 - h * h)
    W1_bar = x.T @ a_bar
    b1_bar = np.sum(a_bar, axis=0)
    return W1_bar, b1_bar, W2_bar, b2_bar


def mlp_loss_vjp(W1, b1, W2, b2, x, y):
    """The split form by hand: the forward pass keeps what the pullback reads."""
    n = x.shape[0]
    h = np.tanh(x @ W1 + b1)
    z = h @ W2 + b2
    zs = z - np.max(z, axis=1, keepdims=True)
    ez = np.exp(zs)
    s = np.sum(ez, axis=1, keepdims=True)
    logp = zs - np.log(s)
    value = -np.mean(np.sum(y * logp, axis=1))

    def pullback(out_bar):
        z_bar = (ez / s * np.sum(y, axis=1, keepdims=True) - y) * (out_bar / n)
        a_bar = (z_bar @ W2.T) * (1.0 - h * h)
        return x.T @ a_bar, np.sum(a_bar, axis=0), h.T @ z_bar, np.sum(z_bar, axis=0)

    return value, pullback


def mlp_loss_args(rng):
    W1 = rng.standard_normal((100, 200)) * 0.1
    b1 = rng.standard_normal(200) * 0.1
    W2 = rng.standard_normal((200, 10)) * 0.1
    b2 = rng.standard_normal(10) * 0.1
    x = rng.standard_normal((64, 100))
    y = np.zeros((64, 10))
    y[np.arange(64), rng.integers(0, 10, 64)] = 1.0
    return (W1, b1, W2, b2, x, y)


# (f) Rosenbrock on 1e6 elements, vectorised with slices.
N_ROS = 10**6


def rosenbrock(x):
    a = x[1:] - x[:-1] * x[:-1]
    b = 1.0 - x[:-1]
    return np.sum(100.0 * a * a + b * b)


def rosenbrock_grad(x):
    xm = x[:-1]
    a = x[1:] - xm * xm
    b = 1.0 - xm
    g = np.zeros_like(x)
    g[:-1] = -400.0 * a * xm - 2.0 * b
    g[1:] += 200.0 * a
    return g


def rosenbrock_vjp(x):
    """The split form by hand: the forward pass keeps a, b and x[:-1] for the pullback."""
    xm = x[:-1]
    a = x[1:] - xm * xm
    b = 1.0 - xm
    value = np.sum(100.0 * a * a + b * b)

    def pullback(out_bar):
        g = np.zeros_like(x)
        g[:-1] = (-400.0 * out_bar) * a * xm - (2.0 * out_bar) * b
        g[1:] += (200.0 * out_bar) * a
        return g

    return value, pullback


def rosenbrock_args(rng):
    return (rng.uniform(-1.5, 1.5, N_ROS),)


# (g) 50-step tanh RNN, 64x64 weights; loss = sum(h_T^2); gradient wrt W.
def rnn_loss(W, h0, x):
    h = h0
    for t in range(50):
        h = np.tanh(W @ h + x[t])
    return np.sum(h * h)


def rnn_loss_grad(W, h0, x):
    h = h0
    hs = [h]
    for t in range(50):
        h = np.tanh(W @ h + x[t])
        hs.append(h)
    h_bar = 2.0 * h
    W_bar = np.zeros_like(W)
    for t in reversed(range(50)):
        h_new = hs[t + 1]
        a_bar = h_bar * (1.0 - h_new * h_new)
        W_bar += np.outer(a_bar, hs[t])
        h_bar = W.T @ a_bar
    return W_bar


def rnn_loss_args(rng):
    W = rng.standard_normal((64, 64)) * (0.9 / 8.0)
    h0 = rng.standard_normal(64) * 0.1
    x = rng.standard_normal((50, 64)) * 0.5
    return (W, h0, x)


# (h) scalar indexing x[i] over a 100-element array, accumulating a scalar.
def index_loop(x):
    s = 0.0
    for i in range(100):
        s = s + math.sin(x[i]) * x[i]
    return s


def index_loop_grad(x):
    x_bar = np.zeros(100)
    s_bar = 1.0
    for i in reversed(range(100)):
        xi = x[i]
        # s_new = s + sin(x_i) * x_i ; s_bar flows through unchanged
        x_bar[i] = s_bar * (math.cos(xi) * xi + math.sin(xi))
    return x_bar


def index_loop_vjp(x):
    """The split form by hand: the value's loop, then the gradient's loop in the pullback
    (which recomputes sin and cos of x[i], as the hand-written gradient does)."""
    s = 0.0
    for i in range(100):
        s = s + math.sin(x[i]) * x[i]

    def pullback(s_bar):
        x_bar = np.zeros(100)
        for i in reversed(range(100)):
            xi = x[i]
            x_bar[i] = s_bar * (math.cos(xi) * xi + math.sin(xi))
        return x_bar

    return s, pullback


def index_loop_args(rng):
    return (rng.uniform(-2.0, 2.0, 100),)


# (i) per-call overhead: f(x) = x * x on a Python float.
def square(x):
    return x * x


def square_grad(x):
    return 2.0 * x


def square_args(rng):
    return (1.7,)


GAIN = 3.0  # a module global, read by `gained_sine` (one guard per call)


def gained_sine(x, k=2.0):
    """Per-call overhead with guards: a global, `math`, and a default argument."""
    return GAIN * math.sin(k * x)


def gained_sine_grad(x, k=2.0):
    return GAIN * k * math.cos(k * x)


def gained_sine_args(rng):
    return (1.7, 2.0)


# ==========================================================================
# registries

JVP_WORKLOADS = [
    Workload("J1", "scalar math, ~34 ops", scalar_fwd, scalar_fwd_jvp, scalar_fwd_args),
    Workload("J2", "numpy elementwise 1e5", vector_fwd, vector_fwd_jvp, vector_fwd_args,
             vectorised=True),
]

GRAD_WORKLOADS = [
    Workload("a", "scalar math, ~29 ops", scalar_rev, scalar_rev_grad, scalar_rev_args,
             wrt=(0, 1, 2)),
    Workload("b", "Euler ODE, 100 steps", ode_euler, ode_euler_grad, ode_euler_args,
             wrt=(0, 1)),
    Workload("c", "Newton while-loop", newton_cbrt, newton_cbrt_grad, newton_cbrt_args,
             wrt=0),
    Workload("d", "logsumexp 1e6", logsumexp, logsumexp_grad, logsumexp_args,
             wrt=0, vectorised=True),
    Workload("e", "MLP 100-200-10, b=64", mlp_loss, mlp_loss_grad, mlp_loss_args,
             wrt=(0, 1, 2, 3), vectorised=True, hand_vjp=mlp_loss_vjp),
    Workload("f", "Rosenbrock 1e6", rosenbrock, rosenbrock_grad, rosenbrock_args,
             wrt=0, vectorised=True, hand_vjp=rosenbrock_vjp),
    Workload("g", "tanh RNN 50x(64x64)", rnn_loss, rnn_loss_grad, rnn_loss_args,
             wrt=0, vectorised=True),
    Workload("h", "x[i] loop, 100", index_loop, index_loop_grad, index_loop_args,
             wrt=0, hand_vjp=index_loop_vjp),
]

OVERHEAD_WORKLOAD = Workload("i", "x * x, per-call overhead", square, square_grad,
                             square_args, wrt=0)
GUARDED_OVERHEAD_WORKLOAD = Workload("i2", "GAIN * math.sin(k * x), per-call overhead",
                                     gained_sine, gained_sine_grad, gained_sine_args, wrt=0)


def as_tuple(g, wrt):
    """Gradient result as a tuple, whatever the `wrt` form."""
    return tuple(g) if isinstance(wrt, tuple) else (g,)
