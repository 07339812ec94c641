"""The GradBench / ADBench problems, written independently from their public
definitions: each objective in plain NumPy, the way a numerical programmer
writes it, with a hand-written gradient in the same style next to it.

* `kmeans_cost`      k-means objective; its gradient and its Newton direction
                     (gradient / Hessian diagonal, the Hessian by an HVP)
* `gmm_objective`    Gaussian mixture log-likelihood with a Wishart prior,
                     the per-component terms written into `main` in place
* `ode_solve`        RK4 integration of y' = f(x, y) (a chain), `y[-1]`
* `lstm_objective`   2-layer LSTM predicting the next character of a sequence
* `det_permutations` determinant as the signed sum over all permutations
* `lsq_rows`         least squares with a Python loop over the rows
* `ba_objective`     bundle adjustment: reprojection error of points seen by
                     cameras (Rodrigues rotation, radial distortion)
* `lse`, `llsq`      log-sum-exp; a polynomial least-squares fit whose int `n` sets shapes
* `det_minors`       determinant by recursive expansion in minors
* `gmm_stacked`      the GMM with its components as stacks (batched `@`)
* `ht_residuals`     hand tracking: residuals of a skinned bone chain, Jacobian by jacfwd

`Problem.make_args(rng, small)` gives the benchmark sizes, or small ones for
the finite-difference test (`tests/test_gradbench.py`).  The hand-written
gradients return one array per `wrt` argument (a tuple when there are several).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Problem:
    key: str
    name: str
    primal: object
    hand: object        # hand-written gradient (or Newton direction)
    make_args: object   # make_args(rng, small=False) -> tuple of primal args
    wrt: object = 0
    newton: object = False  # hand returns grad / diag(H): True: grad / hvp(.., ones) (two
                            # calls, each running the primal),
                            # "jvp": g / hv with (g, hv) = grad_and_hvp(f)(..., ones),
                            # i.e. jvp(grad(f)): one sweep
    jacobian: bool = False  # the primal returns a vector: hand (and s2sad.jacfwd) give its
                            # Jacobian in `wrt` (one argument)


def derivative(s2sad, p, **options):
    """s2sad's derivative of problem `p` (not a Newton direction): its gradient, or its
    Jacobian by forward mode; `options` such as backend="numba"."""
    if p.jacobian:
        return s2sad.jacfwd(p.primal, wrt=p.wrt, **options)
    return s2sad.grad(p.primal, wrt=p.wrt, **options)


# ==========================================================================
# k-means: sum over points of the squared distance to the nearest centroid


def kmeans_cost(points, centroids):
    diff = points[:, None, :] - centroids[None, :, :]
    dist = np.sum(diff * diff, axis=2)
    return np.sum(np.min(dist, axis=1))


def _kmeans_assign(points, centroids):
    diff = points[:, None, :] - centroids[None, :, :]
    dist = np.sum(diff * diff, axis=2)
    nearest = np.argmin(dist, axis=1)
    onehot = (nearest[:, None] == np.arange(centroids.shape[0])[None, :]) * 1.0
    return onehot


def kmeans_grad(points, centroids):
    onehot = _kmeans_assign(points, centroids)
    counts = np.sum(onehot, axis=0)
    return 2.0 * (counts[:, None] * centroids - onehot.T @ points)


def kmeans_newton(points, centroids):
    """Newton direction: gradient / Hessian diagonal (the Hessian is diagonal)."""
    onehot = _kmeans_assign(points, centroids)
    counts = np.sum(onehot, axis=0)
    grad = 2.0 * (counts[:, None] * centroids - onehot.T @ points)
    hess = 2.0 * counts[:, None] * np.ones_like(centroids)
    return grad / hess


def kmeans_args(rng, small=False):
    n, k, d = (30, 4, 3) if small else (1000, 100, 8)
    points = rng.standard_normal((n, d))
    centroids = points[rng.choice(n, k, replace=False)] + 0.01 * rng.standard_normal((k, d))
    return points, centroids


# ==========================================================================
# GMM (ADBench): alphas (k,), means (k, d), icf (k, d + d(d-1)/2) holds the
# log of Q's diagonal then its strict lower triangle, row by row.


def gmm_objective(alphas, means, icf, x, gamma, m):
    n, d = x.shape
    k = alphas.shape[0]
    main = np.zeros((n, k))
    prior = 0.0
    for j in range(k):
        q_diag = np.exp(icf[j, :d])
        sum_qs = np.sum(icf[j, :d])
        lower = np.zeros((d, d))
        pos = d
        for r in range(1, d):
            lower[r, :r] = icf[j, pos:pos + r]
            pos += r
        xc = x - means[j]
        qx = xc * q_diag + xc @ lower.T
        main[:, j] = alphas[j] + sum_qs - 0.5 * np.sum(qx * qx, axis=1)
        prior += 0.5 * gamma * gamma * (np.sum(q_diag * q_diag) + np.sum(lower * lower))
        prior -= m * sum_qs
    mx = np.max(main, axis=1)
    slse = np.sum(mx + np.log(np.sum(np.exp(main - mx[:, None]), axis=1)))
    amax = np.max(alphas)
    lse_alphas = amax + np.log(np.sum(np.exp(alphas - amax)))
    return -0.5 * n * d * math.log(2.0 * math.pi) + slse - n * lse_alphas + prior


def gmm_grad(alphas, means, icf, x, gamma, m):
    n, d = x.shape
    k = alphas.shape[0]
    main = np.zeros((n, k))
    q_diags, lowers, xcs, qxs = [], [], [], []
    for j in range(k):
        q_diag = np.exp(icf[j, :d])
        lower = np.zeros((d, d))
        pos = d
        for r in range(1, d):
            lower[r, :r] = icf[j, pos:pos + r]
            pos += r
        xc = x - means[j]
        qx = xc * q_diag + xc @ lower.T
        main[:, j] = alphas[j] + np.sum(icf[j, :d]) - 0.5 * np.sum(qx * qx, axis=1)
        q_diags.append(q_diag)
        lowers.append(lower)
        xcs.append(xc)
        qxs.append(qx)
    mx = np.max(main, axis=1)
    e = np.exp(main - mx[:, None])
    resp = e / np.sum(e, axis=1)[:, None]          # d slse / d main
    ea = np.exp(alphas - np.max(alphas))
    alphas_bar = np.sum(resp, axis=0) - n * ea / np.sum(ea)
    means_bar = np.zeros_like(means)
    icf_bar = np.zeros_like(icf)
    g2 = gamma * gamma
    for j in range(k):
        q_diag, lower, xc, qx = q_diags[j], lowers[j], xcs[j], qxs[j]
        r_j = resp[:, j]
        qx_bar = -r_j[:, None] * qx
        xc_bar = qx_bar * q_diag + qx_bar @ lower
        means_bar[j] = -np.sum(xc_bar, axis=0)
        q_diag_bar = np.sum(qx_bar * xc, axis=0) + g2 * q_diag
        icf_bar[j, :d] = q_diag_bar * q_diag + np.sum(r_j) - m
        lower_bar = qx_bar.T @ xc + g2 * lower
        pos = d
        for r in range(1, d):
            icf_bar[j, pos:pos + r] = lower_bar[r, :r]
            pos += r
    return alphas_bar, means_bar, icf_bar


def gmm_args(rng, small=False):
    d, k, n = (3, 2, 5) if small else (10, 25, 1000)
    alphas = rng.standard_normal(k)
    means = rng.standard_normal((k, d))
    icf = 0.3 * rng.standard_normal((k, d + d * (d - 1) // 2))
    x = rng.standard_normal((n, d))
    return alphas, means, icf, x, 1.0, 0.0 + d + 1


# ==========================================================================
# ODE: RK4 with `steps` steps of y' = f(x, y), f_0 = x_0, f_i = x_i y_{i-1}


def ode_rhs(x, y):
    z = np.empty_like(y)
    z[0] = x[0]
    z[1:] = x[1:] * y[:-1]
    return z


def ode_solve(x, steps):
    h = 2.0 / steps
    y = np.zeros_like(x)
    for _ in range(steps):
        k1 = ode_rhs(x, y)
        k2 = ode_rhs(x, y + 0.5 * h * k1)
        k3 = ode_rhs(x, y + 0.5 * h * k2)
        k4 = ode_rhs(x, y + h * k3)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y[-1]


def _ode_rhs_vjp(x, y, z_bar):
    """(x_bar, y_bar) of ode_rhs: the rhs is linear in y."""
    x_bar = np.empty_like(x)
    x_bar[0] = z_bar[0]
    x_bar[1:] = z_bar[1:] * y[:-1]
    y_bar = np.zeros_like(y)
    y_bar[:-1] = z_bar[1:] * x[1:]
    return x_bar, y_bar


def ode_grad(x, steps):
    h = 2.0 / steps
    y = np.zeros_like(x)
    ys = []
    for _ in range(steps):
        ys.append(y)
        k1 = ode_rhs(x, y)
        k2 = ode_rhs(x, y + 0.5 * h * k1)
        k3 = ode_rhs(x, y + 0.5 * h * k2)
        k4 = ode_rhs(x, y + h * k3)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    x_bar = np.zeros_like(x)
    y_bar = np.zeros_like(x)
    y_bar[-1] = 1.0
    for t in range(steps - 1, -1, -1):
        y = ys[t]
        k1 = ode_rhs(x, y)
        y2 = y + 0.5 * h * k1
        k2 = ode_rhs(x, y2)
        y3 = y + 0.5 * h * k2
        k3 = ode_rhs(x, y3)
        y4 = y + h * k3
        k_bar = h / 6.0 * y_bar
        xb, y4_bar = _ode_rhs_vjp(x, y4, k_bar)
        x_bar += xb
        xb, y3_bar = _ode_rhs_vjp(x, y3, 2.0 * k_bar + h * y4_bar)
        x_bar += xb
        xb, y2_bar = _ode_rhs_vjp(x, y2, 2.0 * k_bar + 0.5 * h * y3_bar)
        x_bar += xb
        xb, y1_bar = _ode_rhs_vjp(x, y, k_bar + 0.5 * h * y2_bar)
        x_bar += xb
        y_bar = y_bar + y4_bar + y3_bar + y2_bar + y1_bar
    return x_bar


def ode_args(rng, small=False):
    n, steps = (6, 3) if small else (1000, 20)
    return rng.uniform(0.5, 1.5, n), steps


# ==========================================================================
# LSTM (ADBench): main_params (2 layers, 2 blocks [weights, biases], 4 gates, b),
# extra_params (3, b): input scale, output scale, output bias; state (layers, 2, b)
# holds (h, c) per layer; sequence (c, b) one-hot characters.


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm_objective(main_params, extra_params, state, sequence):
    layers = main_params.shape[0]
    h = state[:, 0].copy()
    c = state[:, 1].copy()
    total = 0.0
    count = 0
    for t in range(sequence.shape[0] - 1):
        inp = sequence[t] * extra_params[0]
        for i in range(layers):
            w = main_params[i, 0]
            b = main_params[i, 1]
            forget = _sigmoid(inp * w[0] + b[0])
            ingate = _sigmoid(h[i] * w[1] + b[1])
            outgate = _sigmoid(inp * w[2] + b[2])
            change = np.tanh(h[i] * w[3] + b[3])
            c[i] = c[i] * forget + ingate * change
            h[i] = outgate * np.tanh(c[i])
            inp = h[i]
        ypred = inp * extra_params[1] + extra_params[2]
        lse = np.log(np.sum(np.exp(ypred)))
        total += np.sum((ypred - lse) * sequence[t + 1])
        count += sequence.shape[1]
    return -total / count


def lstm_grad(main_params, extra_params, state, sequence):
    layers = main_params.shape[0]
    steps = sequence.shape[0] - 1
    h = state[:, 0].copy()
    c = state[:, 1].copy()
    tape = []
    for t in range(steps):
        inp = sequence[t] * extra_params[0]
        rec = []
        for i in range(layers):
            w = main_params[i, 0]
            b = main_params[i, 1]
            forget = _sigmoid(inp * w[0] + b[0])
            ingate = _sigmoid(h[i] * w[1] + b[1])
            outgate = _sigmoid(inp * w[2] + b[2])
            change = np.tanh(h[i] * w[3] + b[3])
            c_new = c[i] * forget + ingate * change
            tc = np.tanh(c_new)
            rec.append((inp, h[i].copy(), c[i].copy(), forget, ingate, outgate, change, tc))
            c[i] = c_new
            inp = outgate * tc
            h[i] = inp
        ypred = inp * extra_params[1] + extra_params[2]
        e = np.exp(ypred)
        tape.append((rec, inp, e / np.sum(e)))
    count = steps * sequence.shape[1]
    main_bar = np.zeros_like(main_params)
    extra_bar = np.zeros_like(extra_params)
    h_bar = np.zeros_like(state[:, 0])
    c_bar = np.zeros_like(state[:, 1])
    for t in range(steps - 1, -1, -1):
        rec, top, soft = tape[t]
        target = sequence[t + 1]
        ypred_bar = -(target - soft * np.sum(target)) / count
        extra_bar[1] += ypred_bar * top
        extra_bar[2] += ypred_bar
        inp_bar = ypred_bar * extra_params[1]
        for i in range(layers - 1, -1, -1):
            inp, h_prev, c_prev, forget, ingate, outgate, change, tc = rec[i]
            w = main_params[i, 0]
            hb = h_bar[i] + inp_bar
            outgate_bar = hb * tc
            cb = c_bar[i] + hb * outgate * (1.0 - tc * tc)
            forget_bar = cb * c_prev
            ingate_bar = cb * change
            change_bar = cb * ingate
            c_bar[i] = cb * forget
            zf = forget_bar * forget * (1.0 - forget)
            zi = ingate_bar * ingate * (1.0 - ingate)
            zo = outgate_bar * outgate * (1.0 - outgate)
            zc = change_bar * (1.0 - change * change)
            main_bar[i, 0, 0] += zf * inp
            main_bar[i, 0, 1] += zi * h_prev
            main_bar[i, 0, 2] += zo * inp
            main_bar[i, 0, 3] += zc * h_prev
            main_bar[i, 1, 0] += zf
            main_bar[i, 1, 1] += zi
            main_bar[i, 1, 2] += zo
            main_bar[i, 1, 3] += zc
            h_bar[i] = zi * w[1] + zc * w[3]
            inp_bar = zf * w[0] + zo * w[2]
        extra_bar[0] += inp_bar * sequence[t]
    return main_bar, extra_bar


def lstm_args(rng, small=False):
    layers, chars, b = (2, 4, 3) if small else (2, 16, 14)
    main_params = rng.standard_normal((layers, 2, 4, b))
    extra_params = rng.standard_normal((3, b))
    state = rng.standard_normal((layers, 2, b))
    sequence = np.zeros((chars, b))
    sequence[np.arange(chars), rng.integers(0, b, chars)] = 1.0
    return main_params, extra_params, state, sequence


# ==========================================================================
# determinant as the signed sum over permutations (all l! products at once)


def det_permutations(a, perms, signs):
    rows = np.arange(a.shape[0])
    terms = a[rows, perms]                 # (l!, l): a[i, p(i)]
    return np.sum(signs * np.prod(terms, axis=1))


def det_permutations_grad(a, perms, signs):
    l = a.shape[0]
    rows = np.arange(l)
    terms = a[rows, perms]
    # product of every entry but one: prefix and suffix products
    before = np.ones_like(terms)
    after = np.ones_like(terms)
    for i in range(1, l):
        before[:, i] = before[:, i - 1] * terms[:, i - 1]
        after[:, l - 1 - i] = after[:, l - i] * terms[:, l - i]
    terms_bar = signs[:, None] * before * after
    flat = (rows * l)[None, :] + perms
    return np.bincount(flat.ravel(), weights=terms_bar.ravel(), minlength=l * l).reshape(l, l)


def permutations_and_signs(l):
    perms = np.array(list(itertools.permutations(range(l))))
    # sign = (-1) ** inversions
    inv = np.zeros(len(perms), dtype=np.int64)
    for i in range(l):
        for j in range(i + 1, l):
            inv += perms[:, i] > perms[:, j]
    return perms, 1.0 - 2.0 * (inv % 2)


def det_args(rng, small=False):
    l = 4 if small else 9
    perms, signs = permutations_and_signs(l)
    return rng.standard_normal((l, l)), perms, signs


# ==========================================================================
# least squares with a Python loop over the rows


def lsq_rows(w, a, y):
    total = 0.0
    for i in range(a.shape[0]):
        r = np.dot(a[i], w) - y[i]
        total += r * r
    return total


def lsq_rows_grad(w, a, y):
    g = np.zeros_like(w)
    for i in range(a.shape[0]):
        r = np.dot(a[i], w) - y[i]
        g += 2.0 * r * a[i]
    return g


def lsq_args(rng, small=False):
    n, d = (6, 3) if small else (1000, 10)
    return rng.standard_normal(d), rng.standard_normal((n, d)), rng.standard_normal(n)


# ==========================================================================
# bundle adjustment (ADBench): cams (n_cams, 11) = rotation (Rodrigues, 3),
# centre (3), focal (1), principal point (2), radial distortion (2);
# points (n_pts, 3); one weight per observation.


def ba_objective(cams, points, weights, cam_idx, pt_idx, feats):
    cam = cams[cam_idx]
    x = points[pt_idx] - cam[:, 3:6]
    rot = cam[:, 0:3]
    theta = np.sqrt(np.sum(rot * rot, axis=1))
    axis = rot / theta[:, None]
    cos_t = np.cos(theta)[:, None]
    sin_t = np.sin(theta)[:, None]
    cross = np.stack([axis[:, 1] * x[:, 2] - axis[:, 2] * x[:, 1],
                      axis[:, 2] * x[:, 0] - axis[:, 0] * x[:, 2],
                      axis[:, 0] * x[:, 1] - axis[:, 1] * x[:, 0]], axis=1)
    dot = np.sum(axis * x, axis=1)[:, None]
    xr = x * cos_t + cross * sin_t + axis * (dot * (1.0 - cos_t))
    p = xr[:, 0:2] / xr[:, 2:3]
    rsq = np.sum(p * p, axis=1)[:, None]
    distortion = 1.0 + cam[:, 9:10] * rsq + cam[:, 10:11] * rsq * rsq
    proj = p * distortion * cam[:, 6:7] + cam[:, 7:9]
    err = weights[:, None] * (proj - feats)
    w_err = 1.0 - weights * weights
    return np.sum(err * err) + np.sum(w_err * w_err)


def ba_grad(cams, points, weights, cam_idx, pt_idx, feats):
    cam = cams[cam_idx]
    x = points[pt_idx] - cam[:, 3:6]
    rot = cam[:, 0:3]
    theta = np.sqrt(np.sum(rot * rot, axis=1))
    axis = rot / theta[:, None]
    cos_t = np.cos(theta)[:, None]
    sin_t = np.sin(theta)[:, None]
    cross = np.stack([axis[:, 1] * x[:, 2] - axis[:, 2] * x[:, 1],
                      axis[:, 2] * x[:, 0] - axis[:, 0] * x[:, 2],
                      axis[:, 0] * x[:, 1] - axis[:, 1] * x[:, 0]], axis=1)
    dot = np.sum(axis * x, axis=1)[:, None]
    xr = x * cos_t + cross * sin_t + axis * (dot * (1.0 - cos_t))
    p = xr[:, 0:2] / xr[:, 2:3]
    rsq = np.sum(p * p, axis=1)[:, None]
    k1, k2, f = cam[:, 9:10], cam[:, 10:11], cam[:, 6:7]
    distortion = 1.0 + k1 * rsq + k2 * rsq * rsq
    proj = p * distortion * f + cam[:, 7:9]
    w = weights[:, None]
    diff = proj - feats
    # reverse sweep
    err_bar = 2.0 * w * w * diff                      # d/d proj
    weights_bar = np.sum(2.0 * w * diff * diff, axis=1) - 4.0 * weights * (1.0 - weights * weights)
    cam_bar = np.zeros_like(cam)
    cam_bar[:, 7:9] = err_bar
    pd_bar = err_bar * f
    cam_bar[:, 6:7] = np.sum(err_bar * p * distortion, axis=1)[:, None]
    dist_bar = np.sum(pd_bar * p, axis=1)[:, None]
    cam_bar[:, 9:10] = dist_bar * rsq
    cam_bar[:, 10:11] = dist_bar * rsq * rsq
    rsq_bar = dist_bar * (k1 + 2.0 * k2 * rsq)
    p_bar = pd_bar * distortion + 2.0 * rsq_bar * p
    xr_bar = np.zeros_like(xr)
    xr_bar[:, 0:2] = p_bar / xr[:, 2:3]
    xr_bar[:, 2] = -np.sum(p_bar * p, axis=1) / xr[:, 2]
    # xr = x cos + (axis x x) sin + axis (axis . x)(1 - cos)
    x_bar = xr_bar * cos_t
    cos_bar = np.sum(xr_bar * x, axis=1) - np.sum(xr_bar * axis, axis=1) * dot[:, 0]
    sin_bar = np.sum(xr_bar * cross, axis=1)
    # cross(axis, x) reversed: axis_bar += x x c_bar, x_bar += c_bar x axis
    c_bar = xr_bar * sin_t
    axis_bar = np.stack([x[:, 1] * c_bar[:, 2] - x[:, 2] * c_bar[:, 1],
                         x[:, 2] * c_bar[:, 0] - x[:, 0] * c_bar[:, 2],
                         x[:, 0] * c_bar[:, 1] - x[:, 1] * c_bar[:, 0]], axis=1)
    x_bar += np.stack([c_bar[:, 1] * axis[:, 2] - c_bar[:, 2] * axis[:, 1],
                       c_bar[:, 2] * axis[:, 0] - c_bar[:, 0] * axis[:, 2],
                       c_bar[:, 0] * axis[:, 1] - c_bar[:, 1] * axis[:, 0]], axis=1)
    s = np.sum(xr_bar * axis, axis=1)[:, None] * (1.0 - cos_t)   # d/d dot
    axis_bar += xr_bar * (dot * (1.0 - cos_t)) + s * x
    x_bar += s * axis
    theta_bar = -sin_t[:, 0] * cos_bar + cos_t[:, 0] * sin_bar
    theta_bar -= np.sum(axis_bar * rot, axis=1) / (theta * theta)
    cam_bar[:, 0:3] = axis_bar / theta[:, None] + (theta_bar / theta)[:, None] * rot
    cam_bar[:, 3:6] = -x_bar
    cams_bar = np.zeros_like(cams)
    np.add.at(cams_bar, cam_idx, cam_bar)
    points_bar = np.zeros_like(points)
    np.add.at(points_bar, pt_idx, x_bar)
    return cams_bar, points_bar, weights_bar


def ba_args(rng, small=False):
    n_cams, n_pts, n_obs = (3, 5, 8) if small else (20, 500, 3000)
    cams = np.empty((n_cams, 11))
    cams[:, 0:3] = 0.3 * rng.standard_normal((n_cams, 3))
    cams[:, 3:6] = 0.3 * rng.standard_normal((n_cams, 3))
    cams[:, 6] = 1.0 + 0.1 * rng.standard_normal(n_cams)
    cams[:, 7:9] = 0.1 * rng.standard_normal((n_cams, 2))
    cams[:, 9:11] = 0.01 * rng.standard_normal((n_cams, 2))
    points = rng.standard_normal((n_pts, 3))
    points[:, 2] += 8.0               # in front of the cameras
    weights = rng.uniform(0.5, 1.5, n_obs)
    cam_idx = rng.integers(0, n_cams, n_obs)
    pt_idx = rng.integers(0, n_pts, n_obs)
    feats = rng.standard_normal((n_obs, 2))
    return cams, points, weights, cam_idx, pt_idx, feats


# ==========================================================================
# log-sum-exp of a vector


def lse(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def lse_grad(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def lse_args(rng, small=False):
    return (rng.standard_normal(8 if small else 100_000),)


# ==========================================================================
# linear least squares (GradBench's llsq): fit a polynomial of degree len(x) - 1 to the
# sign function at n points of [-1, 1]; `n`, an int, sets the shapes


def llsq(x, n):
    t = -1.0 + 2.0 * np.arange(n) / (n - 1)
    powers = t[:, None] ** np.arange(x.shape[0])[None, :]
    r = np.sign(t) - powers @ x
    return 0.5 * np.sum(r * r)


def llsq_grad(x, n):
    t = -1.0 + 2.0 * np.arange(n) / (n - 1)
    powers = t[:, None] ** np.arange(x.shape[0])[None, :]
    return -(powers.T @ (np.sign(t) - powers @ x))


def llsq_args(rng, small=False):
    return rng.standard_normal(4 if small else 32), 10 if small else 4096


# ==========================================================================
# determinant by expansion in minors along the first row (recursive)


def _minor(a, j):
    return np.concatenate([a[1:, :j], a[1:, j + 1:]], axis=1)


def det_minors(a):
    n = a.shape[0]
    if n == 1:
        return a[0, 0]
    total = 0.0
    sign = 1.0
    for j in range(n):
        total += sign * a[0, j] * det_minors(_minor(a, j))
        sign = -sign
    return total


def det_minors_grad(a):
    """The cofactor matrix det(a) inv(a)^T."""
    return np.linalg.det(a) * np.linalg.inv(a).T


def det_minors_args(rng, small=False):
    return (rng.standard_normal((3, 3) if small else (7, 7)),)


# ==========================================================================
# GMM with the k components as stacks: (k, n, d) arrays and a batched `@`


def gmm_stacked(alphas, means, icf, x, gamma, m):
    n, d = x.shape
    q_diag = np.exp(icf[:, :d])
    sum_qs = np.sum(icf[:, :d], axis=1)
    rows, cols = np.tril_indices(d, -1)
    lower = np.zeros((alphas.shape[0], d, d))
    lower[:, rows, cols] = icf[:, d:]
    xc = x[None, :, :] - means[:, None, :]                      # (k, n, d)
    qx = xc * q_diag[:, None, :] + xc @ np.swapaxes(lower, 1, 2)
    main = alphas[:, None] + sum_qs[:, None] - 0.5 * np.sum(qx * qx, axis=2)   # (k, n)
    mx = np.max(main, axis=0)
    slse = np.sum(mx + np.log(np.sum(np.exp(main - mx[None, :]), axis=0)))
    amax = np.max(alphas)
    lse_alphas = amax + np.log(np.sum(np.exp(alphas - amax)))
    prior = 0.5 * gamma * gamma * (np.sum(q_diag * q_diag) + np.sum(lower * lower)) - \
        m * np.sum(sum_qs)
    return -0.5 * n * d * math.log(2.0 * math.pi) + slse - n * lse_alphas + prior


def gmm_stacked_args(rng, small=False):
    # (icf's strict lower triangle row by row, as np.tril_indices lists it)
    return gmm_args(rng, small)


# ==========================================================================
# hand tracking (a reduced ADBench HT): a global rotation and a chain of three bones, each
# a Rodrigues rotation of its angle-axis parameters; every vertex skinned to the bones by
# its weights; the residuals to the observed points. Its Jacobian in the parameters
# (12) by forward mode.


def _rodrigues(r):
    theta = np.sqrt(np.sum(r * r))
    k = r / theta
    cross = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(theta) * cross + (1.0 - np.cos(theta)) * (cross @ cross)


def ht_residuals(theta, base, weights, points):
    f1 = _rodrigues(theta[3:6])
    f2 = f1 @ _rodrigues(theta[6:9])
    f3 = f2 @ _rodrigues(theta[9:12])
    frames = np.stack([f1, f2, f3])
    posed = base[None, :, :] @ np.swapaxes(frames, 1, 2)        # (bones, n, 3)
    verts = np.sum(weights.T[:, :, None] * posed, axis=0)
    verts = verts @ _rodrigues(theta[0:3]).T
    return (points - verts).ravel()


def ht_jacobian(theta, base, weights, points):
    """By complex steps, one per parameter, all at once (the residuals are analytic in
    theta): exact to rounding, as a hand-written Jacobian is."""
    h = 1e-30
    steps = theta[None, :] + 1j * h * np.eye(theta.shape[0])
    return np.stack([ht_residuals(s, base, weights, points).imag / h for s in steps], axis=1)


def ht_args(rng, small=False):
    n = 10 if small else 2000
    weights = rng.uniform(size=(n, 3))
    return (0.4 * rng.standard_normal(12), rng.standard_normal((n, 3)),
            weights / np.sum(weights, axis=1, keepdims=True), rng.standard_normal((n, 3)))


PROBLEMS = [
    Problem("kmeans", "k-means objective (k=100, n=1000, d=8)", kmeans_cost, kmeans_grad,
            kmeans_args, wrt=1),
    Problem("kmeans-newton", "k-means Newton direction, grad then hvp", kmeans_cost,
            kmeans_newton, kmeans_args, wrt=1, newton=True),
    Problem("kmeans-newton-jvp", "k-means Newton direction, grad_and_hvp", kmeans_cost,
            kmeans_newton, kmeans_args, wrt=1, newton="jvp"),
    Problem("gmm", "GMM, in-place updates (d=10, k=25, n=1000)", gmm_objective, gmm_grad,
            gmm_args, wrt=(0, 1, 2)),
    Problem("ode", "ODE, RK4 (n=1000, 20 steps)", ode_solve, ode_grad, ode_args, wrt=0),
    Problem("lstm", "2-layer LSTM over 16 characters", lstm_objective, lstm_grad,
            lstm_args, wrt=(0, 1)),
    Problem("det", "determinant by permutations (l=9)", det_permutations,
            det_permutations_grad, det_args, wrt=0),
    Problem("lsq", "least squares, loop over rows (n=1000, d=10)", lsq_rows, lsq_rows_grad,
            lsq_args, wrt=0),
    Problem("ba", "bundle adjustment (20 cams, 500 pts, 3000 obs)", ba_objective, ba_grad,
            ba_args, wrt=(0, 1, 2)),
    Problem("lse", "log-sum-exp (n=100000)", lse, lse_grad, lse_args),
    Problem("llsq", "least squares, polynomial fit (n=4096 points, 32 terms)", llsq,
            llsq_grad, llsq_args),
    Problem("det-minors", "determinant by minors, recursive (l=7)", det_minors,
            det_minors_grad, det_minors_args),
    Problem("gmm-stacked", "GMM, components as stacks, batched @ (d=10, k=25, n=1000)",
            gmm_stacked, gmm_grad, gmm_stacked_args, wrt=(0, 1, 2)),
    Problem("ht", "hand tracking Jacobian, jacfwd (3 bones, 2000 vertices)", ht_residuals,
            ht_jacobian, ht_args, jacobian=True),
]
