"""NumPy's index makers (np.triu_indices, np.diag_indices_from, ...) are called as they are
(their results carry no derivative), and their results' kinds are known: a tuple of int
vectors, so that what they index keeps its number of axes (scikit-learn's GP likelihood:
pdist's `X[rows] - X[cols]`, `K[np.diag_indices_from(K)] += alpha`, `.sum(axis=-1)` of the
result a number). Every derivative against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for


def check_both_modes(f, args, rtol=1e-6):
    assert_close(s2sad.grad(f)(*args), numerical_grad(f, args, (0,))[0], rtol=rtol,
                 what="grad")
    r = rng_for(f.__name__, "tangent")
    t = r.standard_normal(np.shape(args[0]))
    _, out_dot = s2sad.jvp(f, wrt=0)(*args, t)
    assert_close(out_dot, numerical_jvp(f, args, (0,), [t]), rtol=rtol, what="jvp",
                 check_kind=False)


def pair_distances(x):
    """A condensed distance vector's sum along its last axis: a number only where the rank
    of x[rows] - x[cols] is known."""
    rows, cols = np.triu_indices(x.shape[0], 1)
    d = x[rows] - x[cols]
    return np.sum(d * d, axis=-1).sum(axis=-1)


def jittered_cholesky(x):
    k = x @ x.T
    k[np.diag_indices_from(k)] += 0.5
    low = np.linalg.cholesky(k)  # (a rule for a 2-D argument only)
    return np.log(np.diag(low)).sum(axis=-1)


def lower_part(x):
    rows, cols = np.tril_indices(3, -1)  # (of constants: the vectors' lengths known)
    return np.sum(np.sin(x[rows, cols]), axis=-1)


def diagonal_of(x):
    i = np.diag_indices(x.shape[0])
    return np.sum(np.exp(x[i]), axis=-1)


@pytest.mark.parametrize("f, shape", [(pair_distances, (5, 2)), (jittered_cholesky, (4, 3)),
                                      (lower_part, (3, 3)), (diagonal_of, (4, 4))])
def test_what_an_index_maker_indexes_keeps_its_number_of_axes(f, shape):
    r = rng_for(f.__name__)
    x = r.uniform(-1, 1, shape)
    check_both_modes(f, (x,))
    if f is not lower_part:  # (another size: vectors of other lengths)
        square = shape[0] == shape[1]
        check_both_modes(f, (r.uniform(-1, 1, (shape[0] + 2, shape[1] + 2 * square)),))


def test_second_order_through_an_index_maker():
    r = rng_for("index-makers-hessian")
    x = r.uniform(-1, 1, (4, 2))
    h = s2sad.hessian(pair_distances)(x)
    g = s2sad.grad(pair_distances)
    fd = np.stack([(g(x + e) - g(x - e)) / 2e-6 for e in np.eye(8).reshape(8, 4, 2) * 1e-6])
    assert_close(h.reshape(8, 8), fd.reshape(8, 8), rtol=1e-5, what="hessian")

