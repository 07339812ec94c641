"""The Numba implementations of the runtime helpers (s2sad/codegen/numba_runtime.py)
against the NumPy helpers of s2sad.ir.prims, which the rest of the suite checks against
finite differences: every broadcasting pattern, index form and dtype a derivative hands
them. Each compiled signature costs Numba a fraction of a second, so the default run
takes one case of each kind and the sweep is marked slow."""

from __future__ import annotations

import numpy as np
import pytest

numba = pytest.importorskip("numba")

try:  # works both with and without tests/__init__.py
    from tests import oracle
except ImportError:  # pragma: no cover
    import oracle

import s2sad  # noqa: E402
from s2sad.codegen import numba_runtime  # noqa: E402,F401 (registers the implementations)
from s2sad.ir import prims  # noqa: E402


@numba.njit
def _unbroadcast(g, x):
    return prims.unbroadcast(g, x)


@numba.njit
def _sum_to_shape(g, shape):
    return prims.sum_to_shape(g, shape)


@numba.njit
def _broadcast_like(t, x):
    return prims.broadcast_like(t, x)


@numba.njit
def _take_slot(g, index):
    return prims.take_slot(g, index)


@numba.njit
def _index_update(acc, index, v):
    return prims.index_update(acc, index, v)


@numba.njit
def _index_add(acc, index, g):
    return prims.index_add(acc, index, g)


@numba.njit
def _zeros_like(x):
    return prims.zeros_like(x)


@numba.njit
def _fresh_copy(x):
    return prims.fresh_copy(x)


def _same(got, want):
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype.kind == np.asarray(want).dtype.kind
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


R = np.random.default_rng(7)


def _a(*shape):
    return R.standard_normal(shape) if shape else float(R.standard_normal())


# (g's shape, x's shape): the cotangent of a broadcast operand of that shape
BROADCASTS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), (1, 4)), ((3, 4), (3, 1)),
              ((3, 4), ()), ((2, 3, 4), (3, 1)), ((2, 3, 4), (1, 1, 4)), ((5,), (1,)),
              ((), ()), ((2, 1, 4), (2, 1, 1))]
DEFAULT = [0, 3, 4, 5]  # the default run's cases of BROADCASTS


def _cases(indices):
    return [pytest.param(*BROADCASTS[i], id=f"{BROADCASTS[i][0]}->{BROADCASTS[i][1]}",
                         marks=() if i in indices else pytest.mark.slow)
            for i in range(len(BROADCASTS))]


@pytest.mark.parametrize("gshape, xshape", _cases(DEFAULT))
def test_unbroadcast_and_sum_to_shape(gshape, xshape):
    g, x = _a(*gshape), _a(*xshape)
    _same(_unbroadcast(g, x), prims.unbroadcast(g, x))
    if gshape:
        _same(_sum_to_shape(g, xshape), prims.sum_to_shape(g, xshape))


@pytest.mark.parametrize("gshape, xshape", _cases([1, 4]))
def test_broadcast_like(gshape, xshape):
    t, x = _a(*xshape), _a(*gshape)  # the tangent of the operand, broadcast to the result
    _same(_broadcast_like(t, x), prims.broadcast_like(t, x))


INDICES = [3, -1, slice(1, 4), (1, 2), (slice(None), 2), np.array([0, 2, 2, 4, 0])]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_take_slot_index_update_index_add(index):
    shape = (5, 3) if isinstance(index, tuple) else (5,)
    g = _a(*shape)
    _same(_take_slot(g, index), prims.take_slot(g, index))
    v = _a(*np.shape(g[index]))
    _same(_index_update(g, index, v), prims.index_update(g, index, v))
    _same(_index_add(g, index, v), prims.index_add(g, index, v))
    _same(_index_add(g, index, 1.5), prims.index_add(g, index, 1.5))


@numba.njit
def _prod_others(a, axis, keepdims, total):
    return prims.prod_others(a, axis, keepdims, total)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("zeros", [(), ((0, 1),), ((0, 1), (2, 1)), ((1, 0), (1, 3))],
                         ids=["none", "one", "two-in-a-column", "two-in-a-row"])
def test_prod_others(axis, zeros):
    # np.prod's cotangent helper, exact where factors are zero (no division in the kernel)
    a = _a(3, 4)
    for z in zeros:
        a[z] = 0.0
    total = np.prod(a, axis=axis)
    _same(_prod_others(a, axis, False, total), prims.prod_others(a, axis, False, total))


@numba.njit
def _index_add_at(acc, index, g):
    return prims.index_add_at(acc, index, g)


@pytest.mark.parametrize("shape, index, gshape", [
    ((5,), np.array([0, 2, 2, 4, 0]), (5,)), ((5,), np.array([1, 1]), ()),
    ((5, 3), np.array([4, 0, 4]), (3, 3)), ((4, 3), (np.array([0, 3, 0]), np.array([1, 2, 1])),
                                             (3,)), ((5,), 2, ()),
    # (the determinant's a[rows, perms]: index arrays that broadcast together)
    ((3, 3), (np.arange(3)[None, :], np.array([[0, 1, 2], [2, 1, 0]])), (2, 3))], ids=repr)
def test_index_add_at_accumulates_repeats(shape, index, gshape):
    acc, g = _a(*shape), _a(*gshape)
    want = acc.copy()
    np.add.at(want, index, g)
    got = _index_add_at(acc.copy(), index, g)
    _same(got, want)


def test_index_add_with_index_arrays_accumulates_or_is_refused():
    acc = _a(4, 3)
    rows, cols = (np.array([0, 3, 0]), np.array([1, 2, 1])), np.array([0, 2, 0])
    _same(_index_add(acc, rows, 1.5), prims.index_add(acc, rows, 1.5))
    # an index array beside a slice has no loop here: refused, never added once per position
    with pytest.raises(numba.core.errors.TypingError):
        _index_add(acc, (slice(None), cols), 1.5)


def test_index_add_to_an_integer_array_is_float():
    acc = np.arange(5)
    _same(_index_add(acc, 2, 0.5), prims.index_add(acc, 2, 0.5))


@pytest.mark.parametrize("x", [np.ones((2, 3)), np.arange(4), np.ones(3, np.float32), 2.5, 3,
                               1 + 2j], ids=repr)
def test_zeros_like_and_fresh_copy(x):
    _same(_zeros_like(x), prims.zeros_like(x))
    copy = _fresh_copy(x)
    _same(copy, x)
    if isinstance(x, np.ndarray):
        assert copy is not x and not np.shares_memory(copy, x)


def broadcast_and_update(w, b, x):
    """A derivative calling unbroadcast (the bias), index_update and take_slot (the
    writes into h)."""
    h = np.zeros((3, 4))
    for i in range(3):
        h[i] = np.tanh(x[i] * w + b)
    return np.sum(h * h)


def test_generated_derivative_calls_the_helpers():
    w, b, x = _a(4), _a(4), _a(3)
    source = s2sad.grad(broadcast_and_update, wrt=(0, 1)).source
    assert "from s2sad.runtime import" in source
    df = s2sad.grad(broadcast_and_update, wrt=(0, 1), backend="numba")
    got = df(w, b, x)
    oracle.assert_close(got, oracle.numerical_grad(broadcast_and_update, (w, b, x), (0, 1)))


def means_products_gathers(X, idx):
    """np.mean and np.prod along an axis (rewritten for Numba) and a gather with repeated
    indices (its cotangent is np.add.at, the index_add_at helper under Numba)."""
    centred = X - np.mean(X, axis=1, keepdims=True)
    rows = np.prod(X, axis=1) + np.mean(X, axis=0)[:3]
    picked = X[idx]
    return np.sum(centred * centred) + np.sum(np.sin(rows)) + np.sum(picked * picked)


def test_axis_means_products_and_repeated_gathers_compile():
    X, idx = _a(3, 4), np.array([0, 2, 0, 0])
    plain = s2sad.grad(means_products_gathers)
    want = plain(X, idx)
    assert "np.add.at" in plain.source and "np.mean" in plain.source
    df = s2sad.grad(means_products_gathers, backend="numba")
    got = df(X, idx)
    assert "np.add.at" not in df.source and "index_add_at(" in df.source
    oracle.assert_close(got, oracle.numerical_grad(means_products_gathers, (X, idx), (0,))[0])
    oracle.assert_close(got, want, 1e-9, 1e-12)


def cross_rows(u, v):
    """np.stack of a list (bundle adjustment's cross product): a tuple under Numba."""
    cross = np.stack([u[:, 1] * v[:, 2] - u[:, 2] * v[:, 1],
                      u[:, 2] * v[:, 0] - u[:, 0] * v[:, 2],
                      u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]], axis=1)
    return np.sum(np.tanh(cross))


def test_stacked_list_compiles():
    u, v = _a(4, 3), _a(4, 3)
    df = s2sad.grad(cross_rows, wrt=(0, 1), backend="numba")
    got = df(u, v)
    assert "np.stack((" in df.source
    oracle.assert_close(got, oracle.numerical_grad(cross_rows, (u, v), (0, 1)))


def row_reductions(x):
    return np.sum(np.prod(x, axis=1) ** 2) + np.sum(np.max(x, axis=0)) + \
        np.sum(np.min(x, axis=1, keepdims=True) * x)


def test_reductions_along_an_axis_of_a_matrix_and_refused_for_more_axes():
    x = np.random.default_rng(3).uniform(0.5, 1.5, (3, 4))
    df = s2sad.grad(row_reductions, backend="numba")
    got = df(x)
    oracle.assert_close(got, oracle.numerical_grad(row_reductions, (x,), (0,))[0])
    value = s2sad.value_and_grad(row_reductions, backend="numba")(np.array([[np.inf, 1.0]]))[0]
    assert value == row_reductions(np.array([[np.inf, 1.0]]))  # (the factor 1 is inf ** 0)
    # three axes: np.max(x[r, :]) would reduce two of them; refused, never silently wrong
    with pytest.raises(s2sad.S2SADError):
        df(x.reshape(3, 2, 2))


# -- contractions of any rank, arrays of arrays, the rule helpers -------------------------

@numba.njit
def _matmul(a, b):
    return numba_runtime.matmul(a, b)


@pytest.mark.parametrize("ashape, bshape", [
    ((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((4,), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 4), (4,)), ((3, 4), (7, 4, 2))])
def test_matmul_of_stacks_is_numpys(ashape, bshape):
    a, b = _a(*ashape), _a(*bshape)
    _same(_matmul(a, b), a @ b)
    # (strided views, copied for BLAS)
    if b.ndim >= 2:
        _same(_matmul(a[..., ::-1], b[..., ::-1, :]), a[..., ::-1] @ b[..., ::-1, :])


@numba.njit
def _contractions(a, b):
    return (numba_runtime.tensordot(a, b, (1, 0), (0, 1)),
            numba_runtime.tensordot(a[:, :, 0], b[:, 0], 1),
            numba_runtime.tensordot(a, a, 3),
            numba_runtime.tensordot(a[0, 0], b[0, 0], 0),
            numba_runtime.tensordot(a[:, :, 0], b[:, :, 0].T, 2))


def test_tensordot_with_literal_axes_is_numpys():
    a, b = _a(3, 4, 2), _a(4, 3, 5)
    got = _contractions(a, b)
    want = (np.tensordot(a, b, ((1, 0), (0, 1))), np.tensordot(a[:, :, 0], b[:, 0], 1),
            np.tensordot(a, a, 3), np.tensordot(a[0, 0], b[0, 0], 0),
            np.tensordot(a[:, :, 0], b[:, :, 0].T, 2))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13)


@numba.njit
def _nested(x, y):
    return (numba_runtime.nested_array(((x, 0.0), (y, x)), np.float64),
            numba_runtime.nested_array(((1.0, 2.0), (3.0, 4.0))),
            numba_runtime.nested_array((1, 2)))


def test_nested_array_is_numpys():
    x, y = _a(3), _a(3)
    got = _nested(x, y)
    _same(got[0], np.array([[x, np.zeros(3)], [y, x]], dtype=float))
    _same(got[1], np.array([[1.0, 2.0], [3.0, 4.0]]))
    _same(got[2], np.array([1, 2]))


def test_rule_helpers_are_the_python_ones():
    from s2sad.passes.batch import batch_index
    from s2sad_rules.kind_tests import is_complex
    from s2sad_rules.numpy_reductions import kept_shape
    from s2sad_rules.numpy_shape import split_points

    @numba.njit
    def helpers(a):
        return (kept_shape(a.shape, 1), kept_shape(a.shape, None), kept_shape(a.shape, (0, -1)),
                split_points([a[:, :1], a[:, 1:]], 1), split_points((a[:1], a[1:]), 0),
                split_points([a, a], None), is_complex(a), is_complex(a + 0j),
                a[batch_index(...)], prims.cast_like(a, a.astype(np.float32)),
                prims.add_cotangents(None, a), prims.filled_diagonal(a, 0.0),
                prims.ones_like_output(a))

    a = _a(3, 4)
    got = helpers(a)
    want = (kept_shape(a.shape, 1), kept_shape(a.shape, None), kept_shape(a.shape, (0, -1)),
            split_points([a[:, :1], a[:, 1:]], 1), split_points((a[:1], a[1:]), 0),
            split_points([a, a], None), is_complex(a), is_complex(a + 0j),
            a[batch_index(...)], prims.cast_like(a, a.astype(np.float32)),
            prims.add_cotangents(None, a), prims.filled_diagonal(a, 0.0),
            prims.ones_like_output(a))
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)
