"""backend="numba": runs of broadcast statements over arrays of several axes as loop nests
(codegen/numba_nest.py). Each derivative is compiled by Numba, compared with the NumPy
backend's (reassociated sums only: 1e-12 relative) and with finite differences, in both
modes; its source shows the nest (loop-text asserts) and no broadcast temporary."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad

pytest.importorskip("numba")

try:  # works both with and without tests/__init__.py
    from tests import oracle
except ImportError:  # pragma: no cover
    import oracle

RTOL, ATOL = 1e-12, 1e-13


def kmeans_cost(points, centroids):
    diff = points[:, None, :] - centroids[None, :, :]
    dist = np.sum(diff * diff, axis=2)
    return np.sum(np.min(dist, axis=1))


def logsumexp_rows(X, w):
    Y = X * w[None, :]
    mx = np.max(Y, axis=1, keepdims=True)
    e = np.exp(Y - mx)
    s = np.sum(e, axis=1, keepdims=True)
    return np.sum(np.log(s) + mx)


def projected(X, A):
    Y = np.sum(X[:, None, :] * A[None, :, :], axis=2)
    return np.sum(np.tanh(Y) * Y)


def _loops(source: str) -> list[str]:
    return [ln.strip() for ln in source.splitlines() if ln.strip().startswith("for ")]


def _code(source: str) -> str:
    """The source's statements, without its comments (which quote the user's lines)."""
    return "\n".join(ln for ln in source.splitlines() if not ln.strip().startswith("#"))


def _check(fn, args, wrt, rng, name):
    """Gradient (reverse) and JVP (forward) of the Numba form against the NumPy backend's
    and finite differences; returns the two derivatives (for their sources)."""
    g = s2sad.grad(fn, wrt=wrt, backend="numba")
    got = g(*args)
    want = s2sad.grad(fn, wrt=wrt)(*args)
    oracle.assert_close(got, want, RTOL, ATOL, what=f"{name}: grad against NumPy's")
    oracle.assert_close(got, oracle.numerical_grad(fn, args, wrt),
                        what=f"{name}: grad against FD")
    v = [rng.standard_normal(np.shape(args[i])) for i in wrt]
    j = s2sad.jvp(fn, wrt=wrt, backend="numba")
    out, out_dot = j(*args, *v)
    out_np, out_dot_np = s2sad.jvp(fn, wrt=wrt)(*args, *v)
    oracle.assert_close((out, out_dot), (out_np, out_dot_np), RTOL, ATOL,
                        what=f"{name}: JVP against NumPy's")
    oracle.assert_close(out_dot, oracle.numerical_jvp(fn, args, wrt, v),
                        what=f"{name}: JVP against FD")
    return g, j


def test_kmeans_gradient_is_one_nest_with_no_broadcast_temporary():
    rng = oracle.rng_for("nest kmeans", "numba")
    points, centroids = rng.standard_normal((40, 3)), rng.standard_normal((6, 3))
    g, j = _check(kmeans_cost, (points, centroids), (1,), rng, "kmeans")
    src = _code(g.source)
    assert "points[:, None, :]" not in src and "np.sum(diff" not in src, src
    # the points outside, the centroids, then the coordinates; the distances a row of k
    assert _loops(src)[:3] == ["for i in range(n):", "for j in range(k):",
                               "for p in range(m):"], src
    assert "diff[j, p] = points[i, p] - centroids[j, p]" in src
    assert "dist_acc += diff[j, p] * diff[j, p]" in src
    assert "dist = np.empty((k,)" in src  # (a row, not (n, k))
    assert "diff_bar_sum[j, p] += " in src  # (the sum over the points, in the nest)
    # both arguments
    _check(kmeans_cost, (points, centroids), (0, 1), rng, "kmeans, both")


def test_kmeans_float32_keeps_its_dtype():
    rng = oracle.rng_for("nest kmeans 32", "numba")
    points = rng.standard_normal((20, 3)).astype(np.float32)
    centroids = rng.standard_normal((4, 3)).astype(np.float32)
    got = s2sad.grad(kmeans_cost, wrt=1, backend="numba")(points, centroids)
    want = s2sad.grad(kmeans_cost, wrt=1)(points, centroids)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_reductions_with_keepdims_and_a_broadcast_row():
    rng = oracle.rng_for("nest lse", "numba")
    X, w = rng.standard_normal((7, 5)), rng.standard_normal(5)
    g, j = _check(logsumexp_rows, (X, w), (0, 1), rng, "logsumexp")
    src = _code(g.source)
    # (the rows' maxima and sums: scalars; a row of Y kept for the next loops over it)
    assert _loops(src)[0] == "for i in range(X.shape[0]):", src
    assert "np.max(" not in src and "np.exp(Y[j] - mx_s)" in src, src
    assert "s_s += e[j]" in src and "t_sum[j] += " in src


def test_a_contraction_written_as_a_broadcast_product():
    rng = oracle.rng_for("nest proj", "numba")
    X, A = rng.standard_normal((6, 4)), rng.standard_normal((3, 4))
    g, j = _check(projected, (X, A), (0, 1), rng, "projected")
    src = _code(g.source)
    assert "X[:, None, :]" not in src and _loops(src)[0] == "for i in range(n):", src
