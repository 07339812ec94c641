"""The GradBench-style problems of bench/gradbench_workloads.py under backend="numba", at
small sizes: each derivative against the hand-written one, which tests/test_gradbench.py
checks against central finite differences (and, for the k-means Newton direction, the
Hessian by finite differences of the gradient). The recursive determinant compiles to a
gradient that calls itself (tests/passes/test_self_recursion.py). Numba compiles a GMM or
the hand-tracking Jacobian in tens of seconds: those are marked slow."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close

numba = pytest.importorskip("numba")

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import gradbench_workloads as G  # noqa: E402

# (the GMMs, hand tracking and bundle adjustment take Numba 10 s to a minute or more each to
# compile; k-means and its Newton direction about 7 s, the recursive determinant 5 s)
SLOW = {"gmm", "gmm-stacked", "ht", "ba", "kmeans", "det-minors"}
PROBLEMS = [pytest.param(p, id=p.key, marks=pytest.mark.slow if p.key in SLOW else ())
            for p in G.PROBLEMS if not p.newton]


def _tuple(v):
    return v if isinstance(v, tuple) else (v,)


@pytest.mark.parametrize("problem", PROBLEMS)
def test_derivative_is_the_hand_written_one(problem):
    args = problem.make_args(np.random.default_rng(5), small=True)
    got = G.derivative(s2sad, problem, backend="numba")(*args)
    assert_close(_tuple(got), _tuple(problem.hand(*args)), rtol=1e-9, atol=1e-11,
                 what=f"{problem.key} numba")


@pytest.mark.slow
def test_newton_direction_from_the_hvp():
    points, centroids = G.kmeans_args(np.random.default_rng(6), small=True)
    ones = np.ones_like(centroids)
    g = s2sad.grad(G.kmeans_cost, wrt=1, backend="numba")(points, centroids)
    hv = s2sad.hvp(G.kmeans_cost, wrt=1, backend="numba")(points, centroids, ones)
    want = G.kmeans_newton(points, centroids)
    assert_close(g / hv, want, rtol=1e-9, what="grad / hvp")
    g, hv = s2sad.grad_and_hvp(G.kmeans_cost, wrt=1, backend="numba")(points, centroids, ones)
    assert_close(g / hv, want, rtol=1e-9, what="grad_and_hvp")


def test_rank_decides_the_rules_branches():
    """llsq's `t[:, None] ** p @ x` has a shape the int n sets: its rank is known, so the
    matmul rule's branch on np.ndim is taken while compiling (Numba has no np.ndim)."""
    problem = next(p for p in G.PROBLEMS if p.key == "llsq")
    d = G.derivative(s2sad, problem)
    d(*problem.make_args(np.random.default_rng(8), small=True))
    assert "np.ndim" not in d.source
