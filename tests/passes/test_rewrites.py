"""The simplifier's algebraic rewrites (s2sad/passes/rewrites.py) that remove work a
hand-written derivative does not do: a factor taken out of a sum, and cotangents and
tangents that cancel exactly in real arithmetic (the max-shift of logsumexp and softmax).
Every derivative is checked against central finite differences; the source checks say
that the work is gone."""

import math

import numpy as np

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp, numerical_vjp


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def shifted_by_first(x):
    m = x[0]  # any shift cancels, not only the max
    return m + np.log(np.sum(np.exp(x - m)))


def softmax_cross_entropy(z, y):
    m = np.max(z, axis=1, keepdims=True)
    zs = z - m
    lse = np.log(np.sum(np.exp(zs), axis=1, keepdims=True))
    return -np.mean(np.sum(y * (zs - lse), axis=1))


def centred_squares(x):
    # sum((x - k) v) is left alone where sum(v) is not computed (no cancellation to gain)
    mu = np.mean(x)
    return np.sum((x - mu) * np.sin(x))


def nearest_sum(points, centroids):
    diff = points[:, None, :] - centroids[None, :, :]
    dist = np.sum(diff * diff, axis=2)
    return np.sum(np.min(dist, axis=1))


def rows_loop(w, a, y):
    total = 0.0
    for i in range(a.shape[0]):
        r = np.dot(a[i], w) - y[i]
        total += r * r
    return total


def scaled_sum(x):
    return math.pi * np.sum(3.0 * np.tanh(x))


RNG = np.random.default_rng(11)
X = RNG.standard_normal(7)
X_TIES = np.array([1.5, -0.3, 1.5, 0.2])


def test_logsumexp_gradient_is_softmax_without_the_max_sweep():
    for x in (X, X_TIES):
        g = s2sad.grad(logsumexp)
        assert_close(g(x), numerical_grad(logsumexp, (x,), (0,))[0])
        assert "nonzero" not in g.source and "add.at" not in g.source


def test_logsumexp_jvp_has_no_max_tangent():
    j = s2sad.jvp(logsumexp)
    v = RNG.standard_normal(X.shape)
    out, out_dot = j(X, v)
    assert_close(out, logsumexp(X))
    assert_close(out_dot, numerical_jvp(logsumexp, (X,), (0,), (v,)))
    assert "mask" not in j.source


def test_split_form_pullback_of_logsumexp():
    out, pullback = s2sad.vjp(logsumexp)(X)
    (x_bar,) = pullback(2.5)
    assert_close(x_bar, 2.5 * numerical_grad(logsumexp, (X,), (0,))[0])


def test_any_shift_cancels():
    assert_close(s2sad.grad(shifted_by_first)(X),
                 numerical_grad(shifted_by_first, (X,), (0,))[0])


def test_softmax_cross_entropy_over_an_axis():
    z = RNG.standard_normal((5, 4))
    y = np.eye(4)[RNG.integers(0, 4, 5)]
    g = s2sad.grad(softmax_cross_entropy)
    assert_close(g(z, y), numerical_grad(softmax_cross_entropy, (z, y), (0,))[0])


def test_centred_sum_is_not_rewritten_and_stays_right():
    assert_close(s2sad.grad(centred_squares)(X), numerical_grad(centred_squares, (X,), (0,))[0])
    v = RNG.standard_normal(X.shape)
    _, out_dot = s2sad.jvp(centred_squares)(X, v)
    assert_close(out_dot, numerical_jvp(centred_squares, (X,), (0,), (v,)))


def test_factor_constant_along_the_summed_axis_leaves_the_sum():
    points = RNG.standard_normal((9, 2))
    centroids = points[:3] + 0.05
    v = RNG.standard_normal(centroids.shape)
    hv = s2sad.hvp(nearest_sum, wrt=1)(points, centroids, v)

    def grad_c(c):
        return numerical_grad(nearest_sum, (points, c), (1,))[0]

    want = numerical_jvp(grad_c, (centroids,), (0,), (v,), eps=1e-4)
    assert_close(hv, want, rtol=1e-5, atol=1e-6)
    g = s2sad.grad(nearest_sum, wrt=1)
    assert_close(g(points, centroids), numerical_grad(nearest_sum, (points, centroids), (1,))[0])


def test_dot_of_two_vectors_in_a_loop():
    w, a, y = RNG.standard_normal(3), RNG.standard_normal((4, 3)), RNG.standard_normal(4)
    g = s2sad.grad(rows_loop)
    assert_close(g(w, a, y), numerical_grad(rows_loop, (w, a, y), (0,))[0])
    assert "tensordot" not in g.source


def test_constant_factors_leave_the_sum():
    g = s2sad.grad(scaled_sum)
    assert_close(g(X), numerical_grad(scaled_sum, (X,), (0,))[0])


# -- scalar factors gathered (rewrite_scalar_factors, rewrite_like_terms) -------------------

def rosenbrock(x):
    a = x[1:] - x[:-1] * x[:-1]
    b = 1.0 - x[:-1]
    return np.sum(100.0 * a * a + b * b)


def scaled_square_vector(x):
    return 3.0 * x * x  # a vector output: the seed is an array, not a scalar factor


def test_split_form_seed_joins_the_constants():
    x = RNG.uniform(-1.0, 1.0, 9)
    f_vjp = s2sad.vjp(rosenbrock)
    out, pullback = f_vjp(x)
    assert_close(out, rosenbrock(x))
    want = numerical_grad(rosenbrock, (x,), (0,))[0]
    for seed in (2.5, np.float64(-0.5), np.array(1.5), 3):
        (x_bar,) = pullback(seed)
        assert_close(x_bar, float(seed) * want)
    src = f_vjp.source
    # the seed times the rule's constants is one scalar, then one pass over the array:
    # 100 a a sends (100 out_bar) a to a twice, gathered into (200 out_bar) a
    assert "200.0 * out_bar * a" in src
    assert "-2.0 * out_bar * b" in src
    # x_bar[:-1] = g; x_bar[:-1] += h is one write of g + h
    assert src.count("x_bar[:-1]") == 1


def repeated_rows(x, idx):
    y = x[idx]  # repeated positions: a scatter-add, never a write
    return np.sum(y * y) + np.sum(np.sin(x[1:]))


def test_writes_and_adds_at_repeated_positions_stay_adds():
    x = RNG.standard_normal(5)
    idx = np.array([0, 0, 2, 4])
    _, pullback = s2sad.vjp(repeated_rows, wrt=0)(x, idx)
    (x_bar,) = pullback(0.75)
    assert_close(x_bar, 0.75 * numerical_grad(repeated_rows, (x, idx), (0,))[0])


def test_split_form_in_float32_keeps_its_precision():
    x = RNG.uniform(-1.0, 1.0, 9).astype(np.float32)
    _, pullback = s2sad.vjp(rosenbrock)(x)
    (x_bar,) = pullback(np.float32(2.0))
    assert x_bar.dtype == np.float32
    want = 2.0 * numerical_grad(rosenbrock, (x.astype(np.float64),), (0,))[0]
    assert_close(x_bar.astype(np.float64), want, rtol=1e-4, atol=1e-4)


def test_an_array_seed_is_not_a_scalar_factor():
    x = RNG.standard_normal(5)
    _, pullback = s2sad.vjp(scaled_square_vector)(x)
    seed = RNG.standard_normal(5)
    (x_bar,) = pullback(seed)
    assert_close(x_bar, numerical_vjp(scaled_square_vector, (x,), (0,), seed)[0])


def test_like_terms_of_a_scalar_times_an_array():
    def f(x, s):
        u = np.sin(x)
        return np.sum(s * u * u + 2.0 * (s * u))

    x = RNG.standard_normal(6)
    for wrt in (0, 1):
        g = s2sad.grad(f, wrt=wrt)
        assert_close(g(x, 0.7), numerical_grad(f, (x, 0.7), (wrt,))[0])
    _, pullback = s2sad.vjp(f)(x, 0.7)
    x_bar, s_bar = pullback(1.5)
    want = numerical_grad(f, (x, 0.7), (0, 1))
    assert_close(x_bar, 1.5 * want[0])
    assert_close(s_bar, 1.5 * want[1])


def test_split_form_of_softmax_over_an_axis_has_no_max_sweep():
    # the max-shift's cotangent lse_bar - lse_bar is an array: a zero in real arithmetic,
    # so the ties' mask and count go; the seed broadcast over rows stays a scalar factor
    z = RNG.standard_normal((5, 4))
    y = np.eye(4)[RNG.integers(0, 4, 5)]
    f_vjp = s2sad.vjp(softmax_cross_entropy, wrt=0)
    out, pullback = f_vjp(z, y)
    assert_close(out, softmax_cross_entropy(z, y))
    (z_bar,) = pullback(-1.5)
    assert_close(z_bar, -1.5 * numerical_grad(softmax_cross_entropy, (z, y), (0,))[0])
    assert "mask" not in f_vjp.source and "broadcast_to" not in f_vjp.source


def test_max_shift_inside_a_loop_stays_right():
    def f(z, n):
        total = 0.0
        for _ in range(n):
            m = np.max(z, axis=1, keepdims=True)
            total += np.sum(np.log(np.sum(np.exp(z - m), axis=1)))
            z = 0.5 * z
        return total

    z = RNG.standard_normal((3, 4))
    _, pullback = s2sad.vjp(f, wrt=0)(z, 3)
    (z_bar,) = pullback(0.5)
    assert_close(z_bar, 0.5 * numerical_grad(f, (z, 3), (0,))[0])


def row_weighted_squares(x, w):
    # each row's sum of squares weighted: x * x sends (w_i) x twice, 2 (w_i) x in all
    return np.sum(np.sum(x * x, axis=1) * w)


def test_a_constant_scales_the_smaller_factor():
    x, w = RNG.standard_normal((6, 5)), RNG.standard_normal(6)
    for wrt in (0, 1):
        g = s2sad.grad(row_weighted_squares, wrt=wrt)
        assert_close(g(x, w), numerical_grad(row_weighted_squares, (x, w), (wrt,))[0])
    _, pullback = s2sad.vjp(row_weighted_squares)(x, w)
    x_bar, w_bar = pullback(0.3)
    want = numerical_grad(row_weighted_squares, (x, w), (0, 1))
    assert_close(x_bar, 0.3 * want[0])
    assert_close(w_bar, 0.3 * want[1])
    src = s2sad.grad(row_weighted_squares).source
    assert "2.0 * g * x" in src  # (2 g) x: the 2 scales the column g, not the product


def mixture_with_a_loop(alphas, x):
    # a log-sum-exp over mixture weights beside a loop (GMM's shape): the max shift's
    # cotangent cancels to zero even though the function is not straight-line
    total = 0.0
    for j in range(alphas.shape[0]):
        total += alphas[j] * np.sum(x * x)
    amax = np.max(alphas)
    return total - x.shape[0] * (amax + np.log(np.sum(np.exp(alphas - amax))))


def test_a_cancelled_max_shift_beside_a_loop_computes_no_ties():
    for alphas in (RNG.standard_normal(4), np.array([0.7, -0.2, 0.7, 0.1])):
        x = RNG.standard_normal(3)
        g = s2sad.grad(mixture_with_a_loop, wrt=(0, 1))
        assert_close(g(alphas, x), numerical_grad(mixture_with_a_loop, (alphas, x), (0, 1)))
        assert "nonzero" not in g.source and "add.at" not in g.source
