"""The NumPy backend's choice of call for contractions, and the shared mechanisms that make
loops of small operations cheap (issue 35, part 4): each derivative is checked against
central finite differences in both modes, and where ranks are known its source is checked
for the cheap call (`@`, `.T`, an outer product), never for a time.

* a contraction's cotangents are `g @ W`, `W.T @ g`, `g @ b.T`, ... where the operands'
  ranks are known while compiling; np.tensordot / np.swapaxes only for stacks;
* a matrix filled entry by entry in a double loop is updated in place, without a copy
  per outer iteration (forward, and its cotangent in the reverse sweep);
* the slot's cotangent of `K[i, j] = v` is a plain read `K_bar[i, j]`, and an index tuple
  is recomputed in the reverse sweep, not taped;
* a NumPy ufunc of a scalar in a loop (np.exp(d)) is taped, not recomputed;
* a value pushed twice on a tape is stored once; the cotangent of np.array([...]) needs no
  cast (no cast_like, and the list is not taped).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp, numerical_vjp


def _check_both_modes(f, args, wrt, seed=0):
    """grad against central differences, and jvp along a random direction."""
    want = numerical_grad(f, args, wrt)
    got = s2sad.grad(f, wrt=wrt)(*args)
    assert_close(got if isinstance(got, tuple) else (got,), want, what=f"{f.__name__} grad")
    rng = np.random.default_rng(seed)
    tangents = [rng.standard_normal(np.shape(args[i])) for i in wrt]
    full = [np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0 for a in args]
    for i, t in zip(wrt, tangents):
        full[i] = t
    jv = s2sad.jvp(f)(*args, *full)
    assert_close(float(jv[1]), numerical_jvp(f, args, wrt, tangents),
                 what=f"{f.__name__} jvp")


# --------------------------------------------------------------------------
# contractions


def matvec(W, x):
    return np.sum(np.tanh(W @ x))


def vecmat(x, W):
    return np.sum(np.tanh(x @ W))


def matmat(A, B):
    return np.sum(np.tanh(A @ B))


def dot_matvec(W, x):
    return np.sum(np.tanh(np.dot(W, x)))


def dot_vecmat(x, W):
    return np.sum(np.tanh(np.dot(x, W)))


def dot_matmat(A, B):
    return np.sum(np.tanh(np.dot(A, B)))


def dot_stack_mat(A, B):  # a stack of matrices times a matrix (np.dot's last axis of A)
    return np.sum(np.tanh(np.dot(A, B)))


def outer_of(a, b):
    return np.sum(np.tanh(np.outer(a, b)))


def stack_matvec(A, x):  # a stack of matrices times a vector: the generic form
    return np.sum(np.tanh(A @ x))


RNG = np.random.default_rng(7)
CASES = [
    (matvec, (RNG.standard_normal((4, 3)) / 2, RNG.standard_normal(3))),
    (vecmat, (RNG.standard_normal(4), RNG.standard_normal((4, 3)) / 2)),
    (matmat, (RNG.standard_normal((4, 3)) / 2, RNG.standard_normal((3, 5)) / 2)),
    (dot_matvec, (RNG.standard_normal((4, 3)) / 2, RNG.standard_normal(3))),
    (dot_vecmat, (RNG.standard_normal(4), RNG.standard_normal((4, 3)) / 2)),
    (dot_matmat, (RNG.standard_normal((4, 3)) / 2, RNG.standard_normal((3, 5)) / 2)),
    (dot_stack_mat, (RNG.standard_normal((2, 4, 3)) / 2, RNG.standard_normal((3, 5)) / 2)),
    (outer_of, (RNG.standard_normal(4), RNG.standard_normal(3))),
    (stack_matvec, (RNG.standard_normal((2, 4, 3)) / 2, RNG.standard_normal(3))),
]


@pytest.mark.parametrize("f,args", CASES, ids=[c[0].__name__ for c in CASES])
def test_contraction_derivatives_match_finite_differences(f, args):
    _check_both_modes(f, args, (0, 1))


# the ranks are known: no tensordot, swapaxes, moveaxis or reshape of a contraction (a
# stack's leading axes summed against a matrix are np.tensordot's, moved nowhere)
KNOWN_RANKS = [c for c in CASES if c[0] not in (stack_matvec, dot_stack_mat)]


@pytest.mark.parametrize("f,args", KNOWN_RANKS, ids=[c[0].__name__ for c in KNOWN_RANKS])
def test_known_ranks_give_the_cheap_call(f, args):
    df = s2sad.grad(f, wrt=(0, 1))
    df(*args)
    src = df.source
    for generic in ("tensordot", "swapaxes", "moveaxis", "np.reshape", "np.ravel"):
        assert generic not in src, (generic, src)


def test_stack_times_matrix_moves_no_axis():
    A, B = CASES[6][1]
    df = s2sad.grad(dot_stack_mat, wrt=(0, 1))
    df(A, B)
    assert "moveaxis" not in df.source and "@ B.T" in df.source, df.source


def test_matvec_gradient_uses_matmul():
    W, x = CASES[0][1]
    df = s2sad.grad(matvec, wrt=(0, 1))
    df(W, x)
    src = df.source
    assert "tensordot" not in src
    # x's cotangent is the row vector times the matrix
    assert re.search(r"\w+ @ W\b", src), src


def test_matmat_gradient_uses_transposes():
    A, B = CASES[2][1]
    df = s2sad.grad(matmat, wrt=(0, 1))
    df(A, B)
    src = df.source
    assert "@ B.T" in src and "A.T @" in src, src


# --------------------------------------------------------------------------
# a matrix filled entry by entry; a scalar ufunc in a loop


def kernel_fill(x, y):
    n = x.shape[0]
    K = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            d = x[i] - x[j]
            K[i, j] = np.exp(-d * d)
    return y @ K @ y


def kernel_fill_seeded(x, K):
    """The double loop writes into a copy of an argument."""
    n = x.shape[0]
    K = K.copy()
    for i in range(n):
        for j in range(i):
            K[i, j] = np.sin(x[i] * x[j])
    return np.sum(K * K)


def kernel_matrix(x):
    """The matrix itself: its pullback's double loop reads and clears the caller's seed,
    which it must do on a copy."""
    n = x.shape[0]
    K = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            K[i, j] = np.cos(x[i] - 2.0 * x[j])
    return K


def outer_read_after_inner(x):
    """The outer loop's array is read again after the inner loop wrote it: the values the
    reverse sweep reads must be those of their own iteration."""
    n = x.shape[0]
    A = np.zeros((n, n))
    s = 0.0
    for i in range(n):
        before = A[i - 1, 0]
        for j in range(n):
            A[i, j] = x[i] * x[j] + before
        s = s + np.sum(A[i] * A[i - 1])
    return s + np.sum(A)


def test_matrix_filled_in_a_double_loop():
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, 4), rng.standard_normal(4)
    _check_both_modes(kernel_fill, (x, y), (0, 1))
    df = s2sad.grad(kernel_fill, wrt=(0, 1))
    df(x, y)
    src = df.source
    assert "np.copy" not in src, src  # in place, with no copy per outer iteration
    assert "take_slot" not in src, src  # K_bar[i, j] read as it is
    # np.exp(d) is taped (one ufunc call per entry), not computed again
    code = "\n".join(ln for ln in src.splitlines() if not ln.strip().startswith("#"))
    assert code.count("np.exp(") == 1, src


def test_double_loop_into_an_argument_and_reads_after_the_inner_loop():
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, 4)
    _check_both_modes(kernel_fill_seeded, (x, rng.standard_normal((4, 4))), (0, 1))
    _check_both_modes(outer_read_after_inner, (x,), (0,))
    # the caller's array is not written
    K = rng.standard_normal((4, 4))
    keep = K.copy()
    s2sad.grad(kernel_fill_seeded, wrt=(0, 1))(x, K)
    np.testing.assert_array_equal(K, keep)
    # nor the caller's seed of a pullback, called twice
    seed = rng.standard_normal((4, 4))
    keep = seed.copy()
    value, pullback = s2sad.vjp(kernel_matrix)(x)
    assert_close(value, kernel_matrix(x))
    want = numerical_vjp(kernel_matrix, (x,), (0,), seed)
    assert_close(pullback(seed), want, what="pullback")
    assert_close(pullback(seed), want, what="pullback, again")
    np.testing.assert_array_equal(seed, keep)


# --------------------------------------------------------------------------
# the tape of a small ODE's RK4 steps


def lv_rhs(y, p):
    return np.array([p[0] * y[0] - p[1] * y[0] * y[1],
                     p[3] * y[0] * y[1] - p[2] * y[1]])


def lv_rk4(p, y0):
    h = 0.05
    y = y0
    for _ in range(5):
        k1 = lv_rhs(y, p)
        k2 = lv_rhs(y + 0.5 * h * k1, p)
        k3 = lv_rhs(y + 0.5 * h * k2, p)
        k4 = lv_rhs(y + h * k3, p)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(y * y)


def test_rk4_tape_stores_each_value_once():
    p, y0 = np.array([1.1, 0.4, 0.4, 0.1]), np.array([2.0, 1.0])
    _check_both_modes(lv_rk4, (p, y0), (0, 1))
    df = s2sad.grad(lv_rk4, wrt=(0, 1))
    df(p, y0)
    src = df.source
    assert "cast_like" not in src, src
    pushes = re.findall(r"tape\.append\(\((.*)\)\)", src)
    assert pushes, src
    for items in pushes:
        names = [n.strip() for n in items.split(",")]
        assert len(names) == len(set(names)), items
