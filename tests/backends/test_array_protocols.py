"""Arrays of another library that follows NumPy's protocols (issue 19 item 4), without a
GPU: a stand-in library defined here whose arrays are immutable (every write, `out=` and
`ufunc.at` raises) and refuse implicit conversion to NumPy, as CuPy's do. Derivatives given
them get the functional specialisation; the oracles are hand-written NumPy gradients and
finite differences. (CuPy itself is not tested: see docs/howto/scaling_out.md.)
"""

from __future__ import annotations

import ast

import numpy as np
import pytest

import s2sad
from tests import oracle


class Frozen(np.lib.mixins.NDArrayOperatorsMixin):
    """An immutable array: a read-only NumPy array behind NumPy's dispatch protocols."""

    def __init__(self, a):
        a = np.array(a)
        a.setflags(write=False)
        self._a = a

    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    T = property(lambda self: Frozen(self._a.T))

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if out is not None or method == "at":
            raise TypeError(f"Frozen arrays are immutable: {ufunc.__name__}.{method} with out")
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        if kwargs.get("out") is not None:
            raise TypeError(f"Frozen arrays are immutable: {func.__name__}(out=...)")
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Frozen: no implicit conversion to a NumPy array")

    def __getitem__(self, index):
        return _wrap(self._a[_unwrap(index)])

    def __setitem__(self, index, value):
        raise TypeError("Frozen arrays are immutable")

    def __len__(self):
        return len(self._a)

    def sum(self, *args, **kwargs):
        return np.sum(self, *args, **kwargs)

    def numpy(self):
        return self._a


def _unwrap(x):
    if isinstance(x, Frozen):
        return x._a
    if isinstance(x, (tuple, list)):
        return type(x)(_unwrap(i) for i in x)
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _wrap(x):
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "biufc":
        return Frozen(x)  # a reduction gives a 0-d array, as CuPy's do
    if isinstance(x, (tuple, list)):
        return type(x)(_wrap(i) for i in x)
    return x


from tests.backends.models import least_squares, logistic, tanh_layer  # noqa: E402


def first_columns(w, X):
    z = X[:, :2] @ w[:2] + X[:, 3] * w[3]
    z[0] = 0.0
    return np.sum(z * z)


CASES = [(least_squares, 1), (logistic, 1), (tanh_layer, 3)]


@pytest.mark.parametrize("f, k", CASES, ids=[c[0].__name__ for c in CASES])
def test_other_protocol_arrays_get_the_functional_code(f, k):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    y = rng.uniform(size=50)
    w = rng.normal(size=4) if k == 1 else rng.normal(size=(4, k))
    extra = (0.1,) if f is tanh_layer else ()
    d = s2sad.value_and_grad(f)
    value, g = d(w, Frozen(X), Frozen(y), *extra)
    assert "tests float array (50, 4)" in d.source and "functional" in d.source
    tree = ast.parse(d.source)
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.AugAssign)]
    np.testing.assert_allclose(_unwrap(value), f(w, X, y, *extra), rtol=1e-12)
    (fd,) = oracle.numerical_grad(f, (w, X, y) + extra, (0,))
    np.testing.assert_allclose(_unwrap(g), fd, rtol=1e-6, atol=1e-7)


def test_scatters_on_other_protocol_arrays_are_functional():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4))
    w = rng.normal(size=4)
    g = s2sad.grad(first_columns, wrt=(0, 1))(w, Frozen(X))
    (fd_w, fd_X) = oracle.numerical_grad(first_columns, (w, X), (0, 1))
    np.testing.assert_allclose(_unwrap(g[0]), fd_w, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(_unwrap(g[1]), fd_X, rtol=1e-6, atol=1e-7)
