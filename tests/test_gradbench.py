"""The GradBench-style problems of bench/gradbench_workloads.py (and those of
bench/numpy_backend_workloads.py) at small sizes: the
hand-written gradient and s2sad's both match central finite differences, and the k-means
Newton direction from grad / hvp and from jvp(grad) matches the hand-written one."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jacobian

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import gradbench_workloads  # noqa: E402
import numpy_backend_workloads  # noqa: E402

# GradBench's problems, and the NumPy backend's loops of small operations (the RNN, the
# matrix filled element by element, RK4 of Lotka-Volterra; GradBench's ODE is in both)
GRADIENTS = [p for p in gradbench_workloads.PROBLEMS if not p.newton] + [
    p for p in numpy_backend_workloads.PROBLEMS if p.key != "ode"]


def _tuple(v):
    return v if isinstance(v, tuple) else (v,)


@pytest.mark.parametrize("problem", GRADIENTS, ids=[p.key for p in GRADIENTS])
def test_gradients_match_finite_differences(problem):
    args = problem.make_args(np.random.default_rng(3), small=True)
    wrt = _tuple(problem.wrt)
    if problem.jacobian:
        want = numerical_jacobian(problem.primal, args, wrt)
    else:
        want = numerical_grad(problem.primal, args, wrt)
    assert_close(_tuple(problem.hand(*args)), want, what=f"{problem.key} hand-written")
    got = gradbench_workloads.derivative(s2sad, problem)(*args)
    assert_close(_tuple(got), want, what=f"{problem.key} s2sad")


def test_kmeans_newton_direction():
    points, centroids = gradbench_workloads.kmeans_args(np.random.default_rng(4), small=True)
    cost = gradbench_workloads.kmeans_cost
    # the Hessian is diagonal: its diagonal from finite differences of the gradient
    grad_fd = numerical_grad(cost, (points, centroids), (1,))[0]
    hess_diag = np.zeros_like(centroids)
    eps = 1e-4
    for idx in np.ndindex(centroids.shape):
        step = np.zeros_like(centroids)
        step[idx] = eps
        up = numerical_grad(cost, (points, centroids + step), (1,))[0]
        down = numerical_grad(cost, (points, centroids - step), (1,))[0]
        hess_diag[idx] = (up[idx] - down[idx]) / (2 * eps)
    want = grad_fd / hess_diag
    assert_close(gradbench_workloads.kmeans_newton(points, centroids), want, rtol=1e-5,
                 what="hand-written direction")
    ones = np.ones_like(centroids)
    hv = s2sad.hvp(cost, wrt=1)(points, centroids, ones)
    assert_close(s2sad.grad(cost, wrt=1)(points, centroids) / hv, want, rtol=1e-5,
                 what="grad / hvp")
    g, g_dot = s2sad.jvp(s2sad.grad(cost, wrt=1), wrt=1)(points, centroids, ones)
    assert_close(g / g_dot, want, rtol=1e-5, what="jvp(grad)")
    g, hv = s2sad.grad_and_hvp(cost, wrt=1)(points, centroids, ones)
    assert_close(g / hv, want, rtol=1e-5, what="grad_and_hvp")
