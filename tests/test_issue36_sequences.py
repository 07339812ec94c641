"""Issue 36: sequences of arrays. Lists built by comprehensions and given to NumPy functions,
lists of tuples built in a loop and iterated, a list built in a loop inside a Hessian-vector
product, tuples and lists given to NumPy functions that read them as one array. Every
derivative is checked against central differences or an analytic formula."""

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp

# -- a list built by a comprehension, given to a NumPy function (item 13) ----------------
# The list's kind was unknown (a list grown in a loop), so the rules reading it could not
# tell it held complex numbers: |fft(comp)| took the real branch of abs's rule, and the
# gradient was wrong by ~16 at a random point.


def fft_of_comprehension(x):
    comp = [x for i in range(4)]
    return np.sum(np.abs(np.fft.fft(comp)))


def ifft_of_comprehension(x):
    comp = [x * (i + 1.0) for i in range(3)]
    return np.sum(np.abs(np.fft.ifft(comp)))


def rfft_of_comprehension(x):
    comp = [x * (i + 1.0) for i in range(3)]
    return np.sum(np.abs(np.fft.rfft(comp)))


def fft_of_array_of_comprehension(x):
    comp = [x for i in range(4)]
    return np.sum(np.abs(np.fft.fft(np.array(comp))))


def complex_exp_of_comprehension(x):
    comp = [x * (i + 1.0) for i in range(3)]
    return np.sum(np.abs(np.exp(1j * np.asarray(comp))) ** 2 * np.asarray(comp))


def square_of_comprehension(x):
    comp = [x * (i + 1.0) for i in range(3)]
    return np.sum(np.square(comp))


def max_of_comprehension(x):
    comp = [x * (i + 1.0) for i in range(3)]
    return np.max(comp) + np.sum(np.sin(comp))


COMPREHENSIONS = [fft_of_comprehension, ifft_of_comprehension, rfft_of_comprehension,
                  fft_of_array_of_comprehension, complex_exp_of_comprehension,
                  square_of_comprehension, max_of_comprehension]


@pytest.mark.parametrize("f", COMPREHENSIONS, ids=lambda f: f.__name__)
def test_a_comprehension_given_to_numpy_in_both_modes(f):
    rng = np.random.default_rng(13)
    x = rng.standard_normal((3, 4))
    (ref,) = numerical_grad(f, (x,), (0,))
    assert_close(s2sad.grad(f)(x), ref, rtol=1e-6, atol=1e-7)
    v = rng.standard_normal(x.shape)
    _, tangent = s2sad.jvp(f)(x, v)
    assert_close(tangent, numerical_jvp(f, (x,), (0,), (v,)), rtol=1e-6, atol=1e-7)


# -- tuples and lists of arrays given to functions that read them as one array ------------
# (np.square's rule computes 2.0 * x, np.max's reads x's shape: a tuple is neither)


def square_of_tuple(a, b):
    return np.sum(np.square((a, b)))


def max_of_list(a, b):
    return np.max([a, 2.0 * b, a * b])


def norm_of_tuple(a, b):
    return np.linalg.norm((a, b))


@pytest.mark.parametrize("f", [square_of_tuple, max_of_list, norm_of_tuple],
                         ids=lambda f: f.__name__)
def test_a_sequence_of_arrays_read_as_one_array(f):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    ref = numerical_grad(f, (a, b), (0, 1))
    got = s2sad.grad(f, wrt=(0, 1))(a, b)
    for g, r in zip(got, ref):
        assert_close(g, r, rtol=1e-6, atol=1e-7)
    va, vb = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    _, tangent = s2sad.jvp(f)(a, b, va, vb)
    assert_close(tangent, numerical_jvp(f, (a, b), (0, 1), (va, vb)), rtol=1e-6, atol=1e-7)


# -- a list of tuples of slices built in a loop, then iterated (item 8) -------------------
# The list's kind was unknown: its items were indexed as an array's rows, and the tape of
# the loop over it recorded np.shape of each tuple (NumPy: "inhomogeneous shape")


def split_pairs(w):
    pairs = []
    for k in range(2):
        pairs.append((w[:, :2], w[:, 2:3]))
        w = w[:, 3:]
    return pairs


def loss_of_pairs(w):
    out = 1.0
    for a, b in split_pairs(w):
        out = out * np.sum(a) + np.sum(b ** 2)
    return out


def test_a_list_of_tuples_built_in_a_loop_and_iterated():
    rng = np.random.default_rng(8)
    for w in (np.arange(12.0).reshape(2, 6) / 10, rng.standard_normal((2, 6))):
        (ref,) = numerical_grad(loss_of_pairs, (w,), (0,))
        assert_close(s2sad.grad(loss_of_pairs)(w), ref, rtol=1e-6, atol=1e-8)
        v = rng.standard_normal(w.shape)
        _, tangent = s2sad.jvp(loss_of_pairs)(w, v)
        assert_close(tangent, numerical_jvp(loss_of_pairs, (w,), (0,), (v,)), rtol=1e-6,
                     atol=1e-8)


# -- a list built in a loop inside a Hessian-vector product (item 14) ---------------------
# The simplifier replaced an `if`'s output, a zero cotangent in both branches, by the zero
# of one branch, whose shape was read from a variable defined in that branch: the IR used
# it outside (IRVerificationError "_t_10 is used before it is defined")


def norm_plus_max_of_comprehension(c, t):
    comp = [c for i in range(2)]
    return np.linalg.norm(c) + np.max(comp)


def norm_plus_max_of_while_list(c, t):
    comp = []
    i = 0
    while i < 2:
        comp.append(c)
        i += 1
    return np.linalg.norm(c) + np.max(comp)


@pytest.mark.parametrize("f", [norm_plus_max_of_comprehension, norm_plus_max_of_while_list],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hvp_through_a_list_built_in_a_loop(f, dtype):
    rng = np.random.default_rng(2)
    c = rng.standard_normal((2, 2)).astype(dtype)
    v = rng.standard_normal((2, 2)).astype(dtype)
    got = s2sad.hvp(f, wrt=0)(c, 1.3, v)
    # the max is piecewise linear (no curvature away from ties); the Frobenius norm's
    # Hessian is (I - u u^T) / |c| with u = c / |c|
    c64, v64 = c.astype(np.float64), v.astype(np.float64)
    n = np.linalg.norm(c64)
    u = c64 / n
    expected = (v64 - u * np.sum(u * v64)) / n
    assert got.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
