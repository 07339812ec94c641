"""Static integer data (issue #15, item 3): tuples of ints made by range(), sliced and
concatenated, passed as recursion arguments, and folded into index expressions; checked
against the textbook derivative of the determinant (Jacobi's formula) and finite
differences."""

import numpy as np
import pytest

import s2sad
from s2sad.errors import UnsupportedSyntaxError
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for


def det(a, rows, cols):
    """Laplace expansion along the first of `rows`."""
    if len(rows) == 1:
        return a[rows[0], cols[0]]
    total = 0.0
    for j in range(len(cols)):
        sign = 1.0 if j % 2 == 0 else -1.0
        total = total + sign * a[rows[0], cols[j]] * det(a, rows[1:], cols[:j] + cols[j + 1:])
    return total


def det_from_shape(a):
    n = a.shape[0]
    return det(a, tuple(range(n)), tuple(range(n)))


def det_from_constants(a):
    return det(a, tuple(range(4)), list(range(4)))


def det_from_literal(a):
    return det(a, (0, 1, 2, 3), (0, 1, 2, 3))


@pytest.mark.parametrize("fn", [det_from_shape, det_from_constants, det_from_literal])
def test_determinant_by_minors_follows_jacobi(fn):
    a = rng_for(fn.__name__).standard_normal((4, 4))
    v = rng_for(fn.__name__, "v").standard_normal((4, 4))
    d = np.linalg.det(a)
    assert_close(s2sad.grad(fn)(a), d * np.linalg.inv(a).T, what="grad")
    out, out_dot = s2sad.jvp(fn)(a, v)
    assert_close(float(out), d, what="primal")
    assert_close(float(out_dot), d * np.trace(np.linalg.inv(a) @ v), what="jvp")


def computed_bounds(a, i):
    # slices whose bounds are computed, folded into the index (a NameError once)
    return a[i + 1, 0] * np.sum(a[1:i + 2]) + np.sum(a[i:, 1:i + 1] ** 2)


def test_computed_slice_bounds_in_an_index():
    a = rng_for("bounds").standard_normal((5, 3))
    expected = numerical_grad(computed_bounds, (a, 1), (0,))[0]
    assert_close(s2sad.grad(computed_bounds)(a, 1), expected, what="grad")
    v = rng_for("bounds", "v").standard_normal((5, 3))
    assert_close(s2sad.jvp(computed_bounds, wrt=0)(a, 1, v)[1],
                 numerical_jvp(computed_bounds, (a, 1), (0,), (v,)), what="jvp")


def from_array(x):
    return tuple(x)


def test_tuple_of_a_run_time_array_is_refused():
    with pytest.raises(UnsupportedSyntaxError, match=r"tuple\(\) of a value computed"):
        s2sad.grad(from_array)(np.ones(3))
