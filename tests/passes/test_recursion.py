"""Recursive user functions in forward and reverse mode, against analytic values and
finite differences; the derivative recurses the way the function does."""

import math

import numpy as np
import pytest

import s2sad
from tests.passes import recursion_programs as P

RNG = np.random.default_rng(11)


def test_determinant_by_minors_matches_jacobis_formula():
    M = RNG.standard_normal((4, 4))
    assert P.det(M) == pytest.approx(np.linalg.det(M), rel=1e-12)
    # d det(M) / dM = det(M) inv(M)^T (Jacobi's formula): an analytic oracle
    expected = np.linalg.det(M) * np.linalg.inv(M).T
    np.testing.assert_allclose(s2sad.grad(P.det)(M), expected, rtol=1e-10, atol=1e-12)
    V = RNG.standard_normal((4, 4))
    _, d = s2sad.jvp(P.det)(M, V)
    assert d == pytest.approx(np.sum(expected * V), rel=1e-10)


def test_recursion_on_an_integer():
    x, n = 1.3, 7
    assert s2sad.grad(P.power)(x, n) == pytest.approx(n * x ** (n - 1), rel=1e-12)
    assert s2sad.jvp(P.power, wrt=0)(x, n, 1.0)[1] == pytest.approx(n * x ** (n - 1), rel=1e-12)
    src = s2sad.grad(P.power).source_for(x, n)
    assert "power_vjp(" in src  # the gradient calls the VJP of the function itself


def test_mutual_recursion_against_finite_differences():
    x, n, eps = 0.7, 6, 1e-6
    fd = (P.even(x + eps, n) - P.even(x - eps, n)) / (2 * eps)
    assert s2sad.grad(P.even)(x, n) == pytest.approx(fd, rel=1e-7)
    assert s2sad.jvp(P.even, wrt=0)(x, n, 1.0)[1] == pytest.approx(fd, rel=1e-7)


def test_divide_and_conquer_recursion_over_index_ranges():
    x = RNG.uniform(-1, 1, 7)
    g = s2sad.grad(P.tree_sum)(x, 0, 7)
    np.testing.assert_allclose(g, 2 * np.sin(x) * np.cos(x), rtol=1e-12)


def test_pullbacks_of_recursive_calls_are_reusable():
    _, pb = s2sad.vjp(P.power, wrt=0)(1.3, 5)
    assert pb(1.0)[0] == pytest.approx(5 * 1.3 ** 4, rel=1e-12)
    assert pb(2.0)[0] == pytest.approx(10 * 1.3 ** 4, rel=1e-12)
