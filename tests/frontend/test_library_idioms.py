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


# -- a ufunc that writes into an array it is given: out=, where= ----------------------------


def ratio_where(a, b, mask):
    # scipy.integrate.simpson: np.true_divide(h0, h1, out=np.zeros_like(h0), where=h1 != 0)
    return np.true_divide(a, b, out=np.zeros_like(a), where=mask) + np.exp(b)


def ratio_where_nonzero(a, b):
    return np.sum(np.true_divide(a * a, b, out=np.zeros_like(a), where=b != 0))


def sum_into_fresh(a, b):
    return np.add(np.sin(a), b, out=np.zeros((2, 3)))  # (a of (3,) broadcast into the out)


def into_a_tuple(a, b):
    return np.multiply(a, b, out=(np.ones_like(a),), where=a > 0.0) * b


def statement_with_where(a, b, mask):
    m = 2.0 * a
    np.multiply(a, b, out=m, where=mask)
    return m * b


MASK = np.array([True, False, True, True, False])


@pytest.mark.parametrize("f, args, wrt", [
    (ratio_where, lambda r: [r.standard_normal(5), r.uniform(0.5, 2, 5), MASK], (0, 1)),
    (sum_into_fresh, lambda r: [r.standard_normal(3), r.standard_normal((2, 3))], (0, 1)),
    (into_a_tuple, lambda r: [r.standard_normal(6), r.standard_normal(6)], (0, 1)),
    (statement_with_where,
     lambda r: [r.standard_normal(5), r.standard_normal(5), MASK], (0, 1)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_out_and_where(f, args, wrt):
    args = args(rng_for(f.__name__, "args"))
    check_both_modes(f, args, wrt=wrt)


def test_out_and_where_where_the_ufunc_would_divide_by_zero():
    # d/da sum(a^2 / b) = 2a / b where b != 0, and nothing elsewhere (no NaN from 0 / 0)
    a, b = np.array([1.0, -2.0, 0.5, 3.0]), np.array([2.0, 0.0, -0.5, 0.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        ga, gb = s2sad.grad(ratio_where_nonzero, wrt=(0, 1))(a, b)
        _, da = s2sad.jvp(ratio_where_nonzero, wrt=0)(a, b, np.ones(4))
    keep = b != 0
    assert_close(ga, np.where(keep, 2.0 * a / np.where(keep, b, 1.0), 0.0), rtol=1e-14)
    assert_close(gb, np.where(keep, -(a / np.where(keep, b, 1.0)) ** 2, 0.0), rtol=1e-14)
    assert_close(da, np.sum(ga), rtol=1e-14)


def float32_out(a, b):
    return np.true_divide(a, b, out=np.zeros(a.shape, dtype=np.float32), where=b > 0.0)


def test_out_keeps_its_dtype():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, -1.0, 4.0])
    out, out_dot = s2sad.jvp(float32_out, wrt=0)(a, b, np.ones(3))
    assert out.dtype == np.float32 and out_dot.dtype == np.float32
    assert_close(out, float32_out(a, b), rtol=0.0, atol=0.0)
    assert_close(out_dot, np.array([0.5, 0.0, 0.25], np.float32), rtol=0.0, atol=0.0)


def where_without_out(a, b): return np.sum(np.true_divide(a, b, where=b != 0))


def out_a_name_in_an_expression(a):
    buf = np.zeros_like(a)
    y = np.exp(a, out=buf)
    return np.sum(y * buf)


@pytest.mark.parametrize("f, message", [
    (where_without_out, "`where=` without `out=`"),
    (out_a_name_in_an_expression, "writes its result into an array it is given"),
])
def test_out_and_where_refusals(f, message):
    with pytest.raises(s2sad.S2SADError, match=message):
        s2sad.grad(f)(np.array([1.0, 2.0]), *([np.array([1.0, 0.0])] if f is
                                               where_without_out else []))


def total_ratio_where(a, b): return np.sum(ratio_where(a, b, MASK) ** 2)


def test_out_and_where_second_order():
    r = rng_for("total_ratio_where")
    a, b, v = r.standard_normal(5), r.uniform(0.5, 2, 5), r.standard_normal(5)
    g = s2sad.grad(total_ratio_where, wrt=1)
    eps = 1e-6
    expected = (g(a, b + eps * v) - g(a, b - eps * v)) / (2 * eps)
    assert_close(s2sad.hvp(total_ratio_where, wrt=1)(a, b, v), expected, rtol=1e-6, atol=1e-8)


# -- x.astype(float, copy=False) (simpson's h[sl0].astype(float, copy=False)) ---------------


def cast_without_copy(x): return np.sum(np.sin(x.astype(float, copy=False)) * x, axis=-1)


def test_astype_without_copy_keeps_its_shape():
    # its kind was unknown (astype took no `copy`): grad refused the scalar output
    check_both_modes(cast_without_copy, [rng_for("cast_without_copy").standard_normal(4)])


def write_into_a_cast(x):
    y = 2.0 * x
    h = y.astype(float, copy=False)  # y itself: a write into h changes y
    h[0] = 0.0
    return np.sum(y * y)


def test_a_write_into_a_cast_without_copy_is_refused():
    with pytest.raises(s2sad.NonDifferentiableError, match="view of another array"):
        s2sad.grad(write_into_a_cast)(np.array([1.0, 2.0]))


# -- del ------------------------------------------------------------------------------------


def deletes_a_local(x):
    t = np.sin(x)
    y = t * x
    del t  # (array_api_extra's lazy_apply: `del shape`)
    t = np.exp(y)  # bound again
    return t * y


def deletes_items(x):
    d = {"a": x, "b": 2.0 * x}
    del d["a"]
    xs = [x, np.cos(x), x * x]
    del xs[0]
    return d["b"] * xs[0] + xs[-1] + len(d) + len(xs)


def deletes_in_a_branch(x, flag):
    t = x * x
    if flag:
        u = np.tanh(t)
        del t
    else:
        u = t
    return u * x


def deletes_several(x):
    a, b = np.sin(x), np.cos(x)
    c = a * b
    del a, b
    return c


@pytest.mark.parametrize("f, args, wrt", [
    (deletes_a_local, lambda r: [r.standard_normal(3)], (0,)),
    (deletes_items, lambda r: [r.standard_normal(3)], (0,)),
    (deletes_in_a_branch, lambda r: [r.standard_normal(3), True], (0,)),
    (deletes_in_a_branch, lambda r: [r.standard_normal(3), False], (0,)),
    (deletes_several, lambda r: [r.standard_normal(3)], (0,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_del(f, args, wrt):
    check_both_modes(f, args(rng_for(f.__name__, "args")), wrt=wrt)


def test_del_second_order():
    x = rng_for("deletes_a_local", "hvp").standard_normal(3)
    v = rng_for("deletes_a_local", "v").standard_normal(3)

    def total(x): return np.sum(deletes_a_local(x))

    g = s2sad.grad(total)
    eps = 1e-6
    assert_close(s2sad.hvp(total)(x, v), (g(x + eps * v) - g(x - eps * v)) / (2 * eps),
                 rtol=1e-6, atol=1e-8)


def reads_after_del(x):
    t = np.sin(x)
    del t
    return t


def deletes_an_array_item(x):
    y = 2.0 * x
    del y[0]
    return y


def deletes_a_missing_key(x):
    d = {"a": x}
    del d["b"]
    return d["a"]


@pytest.mark.parametrize("f, message", [
    (reads_after_del, "read after `del t`"),
    (deletes_an_array_item, "`del` of an item"),
    (deletes_a_missing_key, "no such key"),
])
def test_del_refusals(f, message):
    with pytest.raises(s2sad.S2SADError, match=message):
        s2sad.grad(lambda x: np.sum(f(x)))(np.array([1.0, 2.0]))


# -- lazy_apply (SciPy's array-API layer): on NumPy arrays, the function called at once ------


xpx = pytest.importorskip("scipy._lib.array_api_extra")


def scaled_sine(a, b, c=1.0): return c * a * np.sin(b)


def lazily_applied(x, y):
    return xpx.lazy_apply(scaled_sine, x, y, c=2.0, as_numpy=True)


def lazily_applied_pair(x, y):
    u, v = xpx.lazy_apply(lambda a, b: (a * b, a + np.exp(b)), x, y,
                          shape=((3,), (3,)), dtype=(x.dtype, x.dtype))
    return u * v


@pytest.mark.parametrize("f", [lazily_applied, lazily_applied_pair])
def test_lazy_apply(f):
    r = rng_for(f.__name__, "args")
    check_both_modes(f, [r.standard_normal(3), r.standard_normal(3)])


def pdist_given_its_metric(X): return sd.pdist(X, "euclidean")


sd = pytest.importorskip("scipy.spatial.distance")


def test_pdist_with_its_metric_given():
    # the metric given by position is an option string (a fact): SciPy's pdist as modelled
    X = rng_for("pdist_given_its_metric").standard_normal((4, 2))
    check_both_modes(pdist_given_its_metric, [X])
