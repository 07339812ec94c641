"""An argument's exact dtype (float32 or float64, not only "a float") is a fact of the compile
(the dispatcher keys on it): `X.dtype == np.float32`, `X.dtype in (np.float32, np.float64)`
and a chained `X.dtype == Y.dtype == np.float32` of it, or of what conversions, indexing and
arithmetic make of it, are decided while compiling, so the branch for the other dtype is not
lowered (scikit-learn's euclidean_distances upcasts float32 chunks in a loop over slices
from a generator, and its sparse branch calls `.tocsr()`). Every derivative against central
differences; the float32 compile against differences in float64 of the same code."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for


def check_both_modes(f, args, rtol=1e-6):
    expected = numerical_grad(f, args, (0,))[0]
    assert_close(s2sad.grad(f)(*args), expected, rtol=rtol, what="grad")
    t = rng_for(f.__name__, "tangent").standard_normal(np.shape(args[0]))
    _, out_dot = s2sad.jvp(f, wrt=0)(*args, t)
    assert_close(out_dot, numerical_jvp(f, args, (0,), [t]), rtol=rtol, what="jvp",
                 check_kind=False)


class Sparse:
    pass


def by_precision(x, y):
    """The float32 branch would not compile: a method no array has."""
    z = np.asarray(x * 2.0 + y)
    if z.dtype == np.float32 or x.dtype != y.dtype:
        return np.sum(z.tocsr())
    if x.dtype in (np.float16, np.float32):
        return Sparse()
    if x.dtype == y.dtype == np.float64:
        return np.sum(np.sin(z) * y[0])
    return 0.0


def dtype_of_merged(x, flag):
    d = x.T.dtype if flag else x[0].dtype
    w = np.asarray(3.0, dtype=d)  # (a 0-d array of that dtype: what is broadcast keeps it)
    y = np.maximum(x, w)
    if y.dtype == np.float32:
        return y.tocsr()
    return np.sum(y ** 2)


@pytest.mark.parametrize("f, args", [
    (by_precision, lambda r: (r.uniform(-1, 1, (3, 2)), r.uniform(-1, 1, 2))),
    (dtype_of_merged, lambda r: (r.uniform(2, 4, (3, 2)), True)),
    (dtype_of_merged, lambda r: (r.uniform(2, 4, (3, 2)), False)),
])
def test_the_branch_of_another_dtype_is_not_lowered(f, args):
    args = args(rng_for(f.__name__))
    check_both_modes(f, args)
    assert "tocsr" not in s2sad.grad(f).source_for(*args)


def low_precision(x):
    if x.dtype == np.float32:
        return np.sum(x.astype(np.float64) ** 3)
    return np.sum(x.tocsr())  # (not lowered for a float32 argument)


def test_a_float32_argument_has_its_own_compile():
    x = rng_for("float32").uniform(-1, 1, 4)
    got = s2sad.grad(low_precision)(x.astype(np.float32))
    assert got.dtype == np.float32  # (in its argument's precision)
    assert_close(got.astype(np.float64), 3 * x.astype(np.float32).astype(np.float64) ** 2,
                 rtol=1e-6, what="grad")
    with pytest.raises(s2sad.S2SADError):  # (the float64 compile lowers the other branch)
        s2sad.grad(low_precision)(x)
