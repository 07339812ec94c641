"""Idioms of library code that SciPy's functions are written in (issue 33): `list(x.shape)`
edited and turned back into a shape (cumulative_trapezoid), indices made of slices built in
the code; each differentiated in both modes against central finite differences, and the
refusals naming what they refuse."""

import numpy as np
import pytest

import s2sad
from s2sad.errors import UnsupportedSyntaxError
from tests.oracle import assert_close, numerical_jvp, numerical_vjp, random_like, rng_for


def check_both_modes(f, args, wrt=None, rtol=1e-6):
    """jvp and vjp of `f` at `args` against central finite differences."""
    wrt = tuple(range(len(args))) if wrt is None else tuple(wrt)
    rng = rng_for(f.__name__)
    v = [random_like(rng, args[i]) for i in wrt]
    out, out_dot = s2sad.jvp(f, wrt=wrt)(*args, *v)
    assert_close(out, f(*args), rtol=1e-12, what="primal")
    assert_close(out_dot, numerical_jvp(f, args, wrt, v), rtol=rtol, atol=rtol * 1e-2,
                 what="jvp", check_kind=False)
    out, pullback = s2sad.vjp(f, wrt=wrt)(*args)
    u = random_like(rng, out)
    assert_close(tuple(pullback(u)), numerical_vjp(f, args, wrt, u), rtol=rtol,
                 atol=rtol * 1e-2, what="vjp", check_kind=False)


# -- list() and tuple() of a shape -----------------------------------------------------------


def padded_front(y, axis):
    # scipy.integrate.cumulative_trapezoid(..., initial=0): a slab of zeros before the data
    shape = list(y.shape)
    shape[axis] = 1
    return np.concatenate((np.zeros(tuple(shape)), np.cumsum(y * y, axis=axis)), axis=axis)


def pad_last(y): return padded_front(y, -1)
def pad_first(y): return padded_front(y, 0)


def flattened_rows(y):
    shape = list(y.shape)
    shape[0] = -1
    return np.sin(y).reshape(tuple(shape[:1] + [shape[1] * shape[2]]))


def tuple_of_shape(y):
    return np.exp(y) * np.ones(tuple(y.shape))


def shape_of_a_scan(y):
    # the number of axes of np.cumsum's result (a fact of the compile) makes list() static
    c = np.cumsum(np.diff(y, axis=0), axis=1)
    shape = list(c.shape)
    shape[1] = 1
    return c * np.sum(c, axis=1).reshape(tuple(shape))


def slices_made_in_the_code(y, x):
    # scipy's tupleset((slice(None),) * nd, axis, slice(1, None)): an index of slices made
    # in the code, whose result's number of axes is then known
    nd = len(y.shape)
    first = [slice(None)] * nd
    first[-1] = slice(1, None)
    last = [slice(None)] * nd
    last[-1] = slice(None, -1)
    d = np.diff(x)
    res = np.cumsum(d * (y[tuple(first)] + y[tuple(last)]) / 2.0, axis=-1)
    shape = list(res.shape)
    shape[-1] = 1
    return np.concatenate((np.zeros(tuple(shape)), res), axis=-1)


@pytest.mark.parametrize("f, shapes", [
    (pad_last, [(2, 3)]), (pad_first, [(3, 2, 2)]), (flattened_rows, [(2, 3, 2)]),
    (tuple_of_shape, [(3, 2)]), (shape_of_a_scan, [(4, 3)]),
    (slices_made_in_the_code, [(2, 5), (5,)]),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_list_of_a_shape(f, shapes):
    rng = rng_for(f.__name__, "args")
    check_both_modes(f, [rng.standard_normal(s) for s in shapes])


def test_list_of_a_shape_second_order():
    y = rng_for("pad_last", "hvp").standard_normal((2, 3))
    v = rng_for("pad_last", "v").standard_normal((2, 3))

    def total(y): return np.sum(pad_last(y) ** 2)

    # d/dy sum(c^2) with c = [0, cumsum(y^2)]: hvp by finite differences of the gradient
    g = s2sad.grad(total)
    eps = 1e-6
    expected = (g(y + eps * v) - g(y - eps * v)) / (2 * eps)
    assert_close(s2sad.hvp(total)(y, v), expected, rtol=1e-6, atol=1e-8)


def total_padded(y): return np.sum(pad_last(y))


def test_list_of_a_shape_reads_as_the_sizes():
    d = s2sad.grad(total_padded)
    d(np.ones((2, 3)))
    assert "np.zeros((n, 1))" in d.source


def unknown_rank(a, b):
    s = np.linalg.solve(a, b)
    return np.sum(np.zeros(tuple(list(s.shape))) + s)


def test_list_of_a_shape_of_unknown_rank_is_refused():
    with pytest.raises(UnsupportedSyntaxError, match="number of axes is not known"):
        s2sad.grad(unknown_rank)(2.0 * np.eye(2), np.ones(2))
