"""Rules for numpy.linalg: inv solve det slogdet cholesky eigh eigvalsh svd svdvals qr pinv
norm vector_norm matrix_power.

Matrices may be stacked (leading batch axes). Conventions:
- `cholesky`, `eigh`, `eigvalsh` treat their input as symmetric and return a symmetric
  cotangent; `eigh` needs distinct eigenvalues, `svd` distinct non-zero singular values.
- `svd` is covered for `full_matrices=False` (or square input) and `compute_uv=False`;
  `qr` for mode="reduced" with m >= n; `pinv` for full-rank input.
- `norm` at 0 gives the subgradient 0 (every supported `ord`); ties in `ord=inf` share the
  derivative evenly.
Tuple results (slogdet, eigh, svd, qr) have a tuple tangent and a tuple cotangent; a JVP rule
builds its tuple with `make_tuple` (see docs/writing_rules.md).
"""

import numpy as np

from s2sad.ir.prims import make_tuple, unbroadcast, zeros_like
from s2sad_rules.numpy_reductions import expand_reduced
from s2sad_rules.refusals import supported
from s2sad_rules.registry import defjvp, defvjp


def mT(x):
    """The matrix transpose of a (stack of) matrices."""
    return np.swapaxes(x, -1, -2)


def right_solve(x, r):
    """x @ inv(r), by a solve."""
    return mT(np.linalg.solve(mT(r), mT(x)))


def diag_matrix(d):
    """A (stack of) diagonal matrices from the vectors `d`."""
    return np.expand_dims(d, -2) * np.eye(np.shape(d)[-1])


def inverse_gaps(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    eye = np.eye(np.shape(w)[-1])
    return (1.0 - eye) / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye)


def symmetric_part(x):
    return 0.5 * (x + mT(x))


@defjvp(np.linalg.inv)
def inv_jvp(a, a_dot, ans):
    return -(ans @ a_dot @ ans)


@defvjp(np.linalg.inv)
def inv_vjp(g, ans, a):
    return -(mT(ans) @ g @ mT(ans))


@defjvp(np.linalg.solve)
def solve_jvp(a, b, a_dot, b_dot, ans):
    return np.linalg.solve(a, b_dot - a_dot @ ans)


@defvjp(np.linalg.solve)
def solve_vjp(g, ans, a, b):
    b_bar = np.linalg.solve(mT(a), g)
    if np.ndim(b) == 1:
        return unbroadcast(-np.expand_dims(b_bar, -1) * np.expand_dims(ans, -2), a), b_bar
    return unbroadcast(-(b_bar @ mT(ans)), a), unbroadcast(b_bar, b)


@defjvp(np.linalg.det)
def det_jvp(a, a_dot, ans):
    return ans * np.trace(np.linalg.solve(a, a_dot), axis1=-2, axis2=-1)


@defvjp(np.linalg.det)
def det_vjp(g, ans, a):
    return np.expand_dims(np.expand_dims(g * ans, -1), -1) * mT(np.linalg.inv(a))


@defjvp(np.linalg.slogdet)
def slogdet_jvp(a, a_dot, ans):
    # the sign is piecewise constant: its tangent is 0
    return make_tuple(zeros_like(ans[0]), np.trace(np.linalg.solve(a, a_dot), axis1=-2,
                                                   axis2=-1))


@defvjp(np.linalg.slogdet)
def slogdet_vjp(g, a):
    return np.expand_dims(np.expand_dims(g[1], -1), -1) * mT(np.linalg.inv(a))


def lower_half(x):
    """The lower triangle of x with its diagonal halved (Phi in the Cholesky derivative)."""
    return np.tril(x) * (1.0 - 0.5 * np.eye(np.shape(x)[-1]))


@defjvp(np.linalg.cholesky)
def cholesky_jvp(a, a_dot, ans):
    s = np.linalg.solve(ans, mT(np.linalg.solve(ans, mT(symmetric_part(a_dot)))))
    return ans @ lower_half(s)


@defvjp(np.linalg.cholesky)
def cholesky_vjp(g, ans, a):
    p = lower_half(mT(ans) @ g)
    s = np.linalg.solve(mT(ans), mT(np.linalg.solve(mT(ans), mT(p))))
    return symmetric_part(s)


@defjvp(np.linalg.eigh)
def eigh_jvp(a, UPLO="L", a_dot=0.0, ans=0.0):
    w = ans[0]
    v = ans[1]
    rotated = mT(v) @ symmetric_part(a_dot) @ v
    w_dot = np.diagonal(rotated, 0, -2, -1)
    return make_tuple(w_dot, v @ (inverse_gaps(w) * rotated))


@defvjp(np.linalg.eigh)
def eigh_vjp(g, ans, a, UPLO="L"):
    w = ans[0]
    v = ans[1]
    inner = diag_matrix(g[0]) + inverse_gaps(w) * (mT(v) @ g[1])
    return symmetric_part(v @ inner @ mT(v))


@defjvp(np.linalg.eigvalsh)
def eigvalsh_jvp(a, UPLO="L", a_dot=0.0):
    v = np.linalg.eigh(a)[1]
    return np.diagonal(mT(v) @ symmetric_part(a_dot) @ v, 0, -2, -1)


@defvjp(np.linalg.eigvalsh)
def eigvalsh_vjp(g, a, UPLO="L"):
    v = np.linalg.eigh(a)[1]
    return symmetric_part(v @ diag_matrix(g) @ mT(v))


@defjvp(np.linalg.svd)
def svd_jvp(a, full_matrices=True, compute_uv=True, hermitian=False, a_dot=0.0, ans=0.0):
    if not compute_uv:
        usv = np.linalg.svd(a, full_matrices=False)
        return np.diagonal(mT(usv[0]) @ a_dot @ mT(usv[2]), 0, -2, -1)
    u = ans[0]
    s = ans[1]
    v = mT(ans[2])
    dp = mT(u) @ a_dot @ v
    f = inverse_gaps(s * s)
    s_row = np.expand_dims(s, -2)
    s_col = np.expand_dims(s, -1)
    du = u @ (f * (dp * s_row + s_col * mT(dp))) + (a_dot @ v - u @ (mT(u) @ a_dot @ v)) / s_row
    dv = v @ (f * (s_col * dp + mT(dp) * s_row)) + (
        mT(a_dot) @ u - v @ (mT(v) @ mT(a_dot) @ u)) / s_row
    return make_tuple(du, np.diagonal(dp, 0, -2, -1), mT(dv))


@defvjp(np.linalg.svd)
def svd_vjp(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    if not compute_uv:
        usv = np.linalg.svd(a, full_matrices=False)
        return usv[0] @ diag_matrix(g) @ usv[2]
    u = ans[0]
    s = ans[1]
    vh = ans[2]
    v = mT(vh)
    u_bar = g[0]
    v_bar = mT(g[2])
    f = inverse_gaps(s * s)
    s_row = np.expand_dims(s, -2)
    s_col = np.expand_dims(s, -1)
    core = (f * (mT(u) @ u_bar - mT(u_bar) @ u)) * s_row + diag_matrix(g[1]) + s_col * (
        f * (mT(v) @ v_bar - mT(v_bar) @ v))
    left = (u_bar - u @ (mT(u) @ u_bar)) / s_row
    right = mT(v_bar - v @ (mT(v) @ v_bar)) / s_col
    return u @ core @ vh + left @ vh + u @ right


@defjvp(np.linalg.svdvals)
def svdvals_jvp(x, x_dot):
    usv = np.linalg.svd(x, full_matrices=False)
    return np.diagonal(mT(usv[0]) @ x_dot @ mT(usv[2]), 0, -2, -1)


@defvjp(np.linalg.svdvals)
def svdvals_vjp(g, x):
    usv = np.linalg.svd(x, full_matrices=False)
    return usv[0] @ diag_matrix(g) @ usv[2]


@defjvp(np.linalg.qr)
def qr_jvp(a, mode="reduced", a_dot=0.0, ans=0.0):
    q = ans[0] + supported(mode == "reduced", "np.linalg.qr", "mode", mode)
    r = ans[1]
    x = right_solve(a_dot, r)
    c = mT(q) @ x
    low = np.tril(c, -1)
    r_dot = (c - low + mT(low)) @ r
    return make_tuple(x - q @ right_solve(r_dot, r), r_dot)


@defvjp(np.linalg.qr)
def qr_vjp(g, ans, a, mode="reduced"):
    q = ans[0] + supported(mode == "reduced", "np.linalg.qr", "mode", mode)
    r = ans[1]
    b = g[1] @ mT(r) - mT(q) @ g[0]
    n = np.triu(b) + np.tril(mT(b), -1)
    return mT(np.linalg.solve(r, mT(g[0] + q @ n)))


def identity_like(x):
    """The identity matrix matching the last axis of x."""
    return np.eye(np.shape(x)[-1])


@defjvp(np.linalg.pinv)
def pinv_jvp(a, rcond=None, hermitian=False, a_dot=0.0, ans=0.0):
    p = ans
    return (-(p @ a_dot @ p) + p @ mT(p) @ mT(a_dot) @ (identity_like(a @ p) - a @ p)
            + (identity_like(p @ a) - p @ a) @ mT(a_dot) @ mT(p) @ p)


@defvjp(np.linalg.pinv)
def pinv_vjp(g, ans, a, rcond=None, hermitian=False):
    p = ans
    return (-(mT(p) @ g @ mT(p)) + (identity_like(a @ p) - a @ p) @ mT(g) @ p @ mT(p)
            + mT(p) @ p @ mT(g) @ (identity_like(p @ a) - p @ a))


def safe_divisor(x):
    """x with its zeros replaced by 1: divides a numerator that is itself 0 there."""
    return np.where(x == 0.0, 1.0, x)


@defjvp(np.linalg.norm)
def norm_jvp(x, ord=None, axis=None, keepdims=False, x_dot=0.0, ans=0.0):
    if ord == "nuc" or (ord == 2 and axis is None and np.ndim(x) == 2):
        usv = np.linalg.svd(x, full_matrices=False)
        return np.sum(norm_direction(usv, ord) * x_dot)
    return np.sum(norm_slope(x, ord, axis, keepdims, ans) * x_dot, axis=axis,
                  keepdims=keepdims)


@defvjp(np.linalg.norm)
def norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):
    if ord == "nuc" or (ord == 2 and axis is None and np.ndim(x) == 2):
        return g * norm_direction(np.linalg.svd(x, full_matrices=False), ord)
    return expand_reduced(g, x, axis, keepdims) * norm_slope(x, ord, axis, keepdims, ans)


def norm_direction(usv, ord):
    """Gradient of the nuclear norm (U V^T) or the spectral norm (u1 v1^T)."""
    if ord == "nuc":
        return usv[0] @ usv[2]
    return np.outer(usv[0][:, 0], usv[2][0])


def norm_slope(x, ord, axis, keepdims, ans):
    """d norm / d x for the vector norms and the Frobenius norm (0 where the norm is 0)."""
    norm = expand_reduced(ans, x, axis, keepdims)
    if ord is None or ord == 2 or ord == "fro":
        return x / safe_divisor(norm)
    if ord == 1:
        return np.sign(x)
    if ord == np.inf:
        top = np.abs(x) == norm
        return np.sign(x) * top / np.sum(top, axis=axis, keepdims=True)
    p_1 = ord - 1.0
    return np.sign(x) * (np.abs(x) / safe_divisor(norm)) ** p_1


@defjvp(np.linalg.vector_norm)
def vector_norm_jvp(x, axis=None, keepdims=False, ord=2, x_dot=0.0, ans=0.0):
    return np.sum(norm_slope(x, ord, axis, keepdims, ans) * x_dot, axis=axis,
                  keepdims=keepdims)


@defvjp(np.linalg.vector_norm)
def vector_norm_vjp(g, ans, x, axis=None, keepdims=False, ord=2):
    return expand_reduced(g, x, axis, keepdims) * norm_slope(x, ord, axis, keepdims, ans)


def power_tangent(base, base_dot, n):
    """d(B^n)[dB]: the upper-right block of [[B, dB], [0, B]]^n (no loop needed)."""
    m = np.shape(base)[-1]
    top = np.concatenate([base, base_dot], -1)
    bottom = np.concatenate([zeros_like(base), base], -1)
    return np.linalg.matrix_power(np.concatenate([top, bottom], -2), n)[..., :m, m:]


@defjvp(np.linalg.matrix_power)
def matrix_power_jvp(a, n, a_dot):
    if n < 0:
        b = np.linalg.inv(a)
        return power_tangent(b, -(b @ a_dot @ b), -n)
    return power_tangent(a, a_dot, n)


@defvjp(np.linalg.matrix_power, wrt=("a",))
def matrix_power_vjp(g, a, n):
    if n < 0:
        b = np.linalg.inv(a)
        return -(mT(b) @ power_tangent(mT(b), g, -n) @ mT(b))
    return power_tangent(mT(a), g, n)
