"""Workloads for bench_higher.py: a Jacobian of an R^100 -> R^100 map, an HVP of Rosenbrock."""

import numpy as np

N_JAC = 100
N_HVP = 10**5


def layer(x, W):
    """Elementwise operations and a matmul: R^100 -> R^100."""
    h = np.tanh(W @ x) + 0.1 * x * x
    return np.sin(h) * x


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] * x[:-1]) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_hvp_hand(x, v):
    """Hand-written Hessian-vector product of rosenbrock (tridiagonal Hessian)."""
    xm, xp = x[:-1], x[1:]
    vm, vp = v[:-1], v[1:]
    out = np.zeros_like(x)
    # d2/dxm2 = 1200 xm^2 - 400 xp + 2, d2/dxm dxp = -400 xm, d2/dxp2 = 200
    out[:-1] += (1200.0 * xm * xm - 400.0 * xp + 2.0) * vm - 400.0 * xm * vp
    out[1:] += -400.0 * xm * vm + 200.0 * vp
    return out
