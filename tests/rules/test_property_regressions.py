"""Regressions for the bugs the property tests (test_properties.py) found, each against an
independent oracle: a textbook value, an indicator function, or finite differences."""

import math
import warnings

import numpy as np
import pytest

import s2sad
from s2sad_rules.numpy_construction import reshape_items
from tests.oracle import assert_close, numerical_jvp, numerical_vjp

# -- np.clip with a bound given as None (the rule compared `a >= None`: TypeError) ------------


def clip_below(x): return np.clip(x, None, 0.5)
def clip_above(x): return np.clip(x, -0.5, None)
def clip_array_bound(x, lo): return np.clip(x, lo, None)


@pytest.mark.parametrize("f,lo,hi", [(clip_below, -np.inf, 0.5), (clip_above, -0.5, np.inf)])
def test_clip_with_a_missing_bound_passes_tangents_inside_it(f, lo, hi):
    x = np.array([-0.9, -0.2, 0.3, 0.8])
    inside = ((x >= lo) & (x <= hi)).astype(float)  # the textbook derivative
    v = np.array([1.0, 2.0, 3.0, 4.0])
    assert np.array_equal(s2sad.jvp(f)(x, v)[1], inside * v)
    assert np.array_equal(s2sad.vjp(f)(x)[1](v)[0], inside * v)


def test_clip_with_an_array_bound_and_none():
    x, lo = np.array([[-0.9, 0.3], [0.1, -0.2]]), np.array([-0.5, 0.0])
    out, pullback = s2sad.vjp(clip_array_bound, wrt=(0,))(x, lo)
    assert np.array_equal(out, np.clip(x, lo, None))
    assert np.array_equal(pullback(np.ones((2, 2)))[0], (x >= lo).astype(float))


# -- np.triu / np.tril of a 1-D input (NumPy broadcasts it to a square matrix) ----------------


def triu_vector(x): return np.triu(x, 1)
def tril_vector(x): return np.tril(x)


@pytest.mark.parametrize("f", [triu_vector, tril_vector])
def test_triangle_of_a_vector_sums_its_cotangent_back(f):
    x = np.array([0.3, -1.2, 0.7])
    u = np.arange(9.0).reshape(3, 3) - 4.0
    cot = s2sad.vjp(f)(x)[1](u)[0]
    assert cot.shape == (3,)
    assert_close(cot, numerical_vjp(f, [x], (0,), u)[0], what="vjp")


# -- np.sinc: its slope is differentiable at 0 (second order was 0 there) ----------------------


def sinc(x): return np.sinc(x)


@pytest.mark.parametrize("x", [0.0, 1e-5, -4e-4, 0.3])
def test_sinc_second_derivative(x):
    # d2/dx2 sin(pi x)/(pi x), from its series at 0 and its closed form elsewhere
    if abs(x) < 1e-3:
        expected = -math.pi ** 2 / 3 + math.pi ** 4 * x * x / 10
    else:
        px = math.pi * x
        expected = ((2 - px * px) * math.sin(px) - 2 * px * math.cos(px)) / (math.pi * x ** 3)
    second = s2sad.jvp(s2sad.grad(sinc))(np.float64(x), np.float64(1.0))[1]
    assert second == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert s2sad.grad(sinc)(np.float64(x)) == pytest.approx(
        -math.pi ** 2 * x / 3 if x == 0.0 else numerical_jvp(sinc, [x], (0,), [1.0]),
        rel=1e-6, abs=1e-9)


# -- np.linalg.qr: a mode other than "reduced" is refused, never mishandled --------------------


def qr_r(a): return np.linalg.qr(a, mode="r")


def qr_complete(a):
    q, r = np.linalg.qr(a, mode="complete")
    return q, r


def qr_reduced(a):
    q, r = np.linalg.qr(a, mode="reduced")
    return q, r


@pytest.mark.parametrize("f,mode", [(qr_r, "'r'"), (qr_complete, "'complete'")])
@pytest.mark.parametrize("transform", ["jvp", "vjp"])
def test_qr_refuses_the_modes_its_rules_do_not_cover(f, mode, transform):
    a = np.array([[2.0, 0.1], [-0.2, 2.0], [0.5, 0.0]])
    # raised at the first call, before any number is returned (the reverse rule at the
    # pullback's first call): a rule body cannot raise at compile time yet, see the report
    with pytest.raises(s2sad.MissingRuleError, match=f"mode={mode}"):
        d = getattr(s2sad, transform)(f)
        if transform == "jvp":
            d(a, a)
        else:
            out, pullback = d(a)
            pullback(out)


def test_qr_with_mode_reduced_spelled_out_still_differentiates():
    a = np.array([[2.0, 0.1], [-0.2, 2.0], [0.5, 0.0]])
    v = np.array([[0.3, -0.1], [0.2, 0.5], [-0.4, 0.1]])
    _, tangent = s2sad.jvp(qr_reduced)(a, v)
    assert_close(tangent, numerical_jvp(qr_reduced, [a], (0,), [v]), rtol=1e-6, atol=1e-8,
                 what="qr jvp")


# -- np.asarray / np.array with dtype (their own JVPs emit dtype=, so second order failed) -----


def astype_twice(x): return np.astype(x, np.float64) * x
def array_with_dtype(x, y): return np.array([x, y * x], dtype=float)
def asarray_with_dtype(x): return np.asarray(x, dtype=np.float64) * x


@pytest.mark.parametrize("f,args", [
    (astype_twice, [np.array([0.3, -0.7])]),
    (array_with_dtype, [np.array([0.3, -0.7]), np.array([1.1, 0.4])]),
    (asarray_with_dtype, [np.array([0.3, -0.7])]),
])
def test_second_order_through_a_dtype_keyword(f, args):
    """The VJP of the generated JVP, against finite differences of that JVP."""
    wrt = tuple(range(len(args)))
    tangents = [np.array([1.0, 0.5])] * len(args)
    f_jvp = s2sad.jvp(f)
    _, pullback = s2sad.vjp(f_jvp)(*args, *tangents)
    u = (np.array([0.2, -0.3]), np.array([0.7, 0.1]))
    if f is array_with_dtype:
        u = (np.ones((2, 2)) * 0.5, np.eye(2))
    expected = numerical_vjp(f_jvp, args + tangents, tuple(range(2 * len(wrt))), u)
    assert_close(tuple(pullback(u)), expected, rtol=1e-6, atol=1e-8, what="vjp of jvp")


# -- reshape_items: its VJP no longer reshapes by the differentiated inputs themselves --------


def split_and_join(x, y):
    parts = reshape_items([x * y, y], [np.zeros((2, 2)), np.zeros(4)])
    return np.sum(parts[0] * parts[0]) + np.sum(np.sin(parts[1]))


def test_reshape_items_gradient_differentiates_again():
    x, y = np.array([0.3, -0.5, 0.9, 0.2]), np.array([1.1, 0.4, -0.6, 0.8])
    df = s2sad.grad(split_and_join, wrt=(0, 1))
    v = [np.array([0.1, 0.2, -0.3, 0.4]), np.array([0.5, -0.1, 0.2, 0.3])]
    _, second = s2sad.jvp(df)(x, y, *v)
    assert_close(tuple(second), numerical_jvp(df, [x, y], (0, 1), v), rtol=1e-6, atol=1e-8,
                 what="second order")


# -- compiler bugs found, left for the owners of s2sad/passes and s2sad/codegen ---------------


def acosh_helper(a0):
    return math.acosh(a0)


def weighted(a0, u0):
    out = acosh_helper(a0)
    return np.sum(out * u0)


weighted_grad = s2sad.grad(weighted, wrt=(0,))


def test_user_variable_named_out_in_a_second_order_vjp():
    _, pullback = s2sad.vjp(weighted_grad, wrt=(0, 1))(1.2, 0.5)
    cot = pullback((0.3,))
    expected = numerical_vjp(weighted_grad, [1.2, 0.5], (0, 1), (0.3,))
    assert_close(tuple(cot), expected, rtol=1e-6, atol=1e-8, what="vjp of grad")


# -- np.average(returned=True): the rules ignored `returned` (silently wrong tangents) ----------


def average_returned(a, w):
    m, s = np.average(a, axis=0, weights=w, returned=True)
    return m, s


@pytest.mark.parametrize("transform", ["jvp", "vjp"])
def test_average_returned_is_refused(transform):
    a, w = np.array([[1.0, 2.0], [3.0, 5.0]]), np.array([1.0, 2.0])
    with pytest.raises(s2sad.MissingRuleError, match="returned=True"):
        d = getattr(s2sad, transform)(average_returned)
        if transform == "jvp":
            d(a, w, a, w)
        else:
            out, pullback = d(a, w)
            pullback(out)


# -- np.average with weights given as a list: a TypeError in the generated gradient (1-D) and
# an internal "symbolic zero reached code generation" in the JVP (2-D, axis=1) ------------------


def average_list_weights_1d(a):
    return np.average(a, weights=[1.0, 2.0, 3.0, 4.0])


def average_list_weights_2d(a):
    return np.sum(np.average(a, axis=1, weights=[1.0, 2.0, 3.0, 4.0]) ** 2)


@pytest.mark.parametrize("f", [average_list_weights_1d, average_list_weights_2d],
                         ids=lambda f: f.__name__)
def test_average_with_a_list_of_weights(f):
    a = np.arange(12.0).reshape(3, 4)[0] if f is average_list_weights_1d else \
        np.arange(12.0).reshape(3, 4) / 7.0
    v = np.cos(np.arange(a.size)).reshape(a.shape)
    _, tangent = s2sad.jvp(f)(a, v)
    assert tangent == pytest.approx(float(numerical_jvp(f, [a], (0,), [v])), rel=1e-6)
    assert_close(tuple(s2sad.vjp(f)(a)[1](1.0)), numerical_vjp(f, [a], (0,), 1.0), what="vjp")


# -- np.prod and math.prod where a factor is zero: the rules divided the product by each factor
# (0 / 0: NaN) instead of multiplying the others ------------------------------------------------


def prod_all(a): return np.prod(a)
def prod_rows(a): return np.sum(np.prod(a, axis=1) * np.array([1.0, -2.0, 0.5]))
def prod_columns_kept(a): return np.sum(np.prod(a, axis=0, keepdims=True) ** 2)
def prod_two_axes(a): return np.sum(np.prod(a.reshape(3, 2, 2), axis=(0, 2)))
def prod_of_a_list(a): return math.prod([a[0, 0], a[0, 1], a[1, 1]])


@pytest.mark.parametrize("f", [prod_all, prod_rows, prod_columns_kept, prod_two_axes,
                               prod_of_a_list], ids=lambda f: f.__name__)
@pytest.mark.parametrize("zeros", [(), ((0, 0),), ((0, 0), (1, 1)), ((0, 1), (2, 3))],
                         ids=["none", "one", "two", "two-apart"])
def test_prod_where_factors_are_zero(f, zeros):
    a = np.array([[1.5, -0.5, 2.0, 0.8], [1.2, 0.9, -1.1, 2.5], [0.7, 1.3, 0.6, -0.9]])
    for z in zeros:
        a[z] = 0.0
    v = np.cos(np.arange(12.0)).reshape(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0 / 0 on the way
        _, tangent = s2sad.jvp(f)(a, v)
        (a_bar,) = s2sad.vjp(f)(a)[1](1.0)
    assert tangent == pytest.approx(float(numerical_jvp(f, [a], (0,), [v])), rel=1e-6,
                                    abs=1e-9)
    assert_close((a_bar,), numerical_vjp(f, [a], (0,), 1.0), what="vjp")


def test_second_derivative_of_prod_away_from_zeros():
    x = np.array([1.5, 2.0, 3.0])
    expected = np.array([[0.0, 3.0, 2.0], [3.0, 0.0, 1.5], [2.0, 1.5, 0.0]])  # d2 (xyz)
    np.testing.assert_allclose(s2sad.hessian(prod_all)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(s2sad.jacrev(s2sad.grad(prod_all))(x), expected, rtol=1e-12)


# -- np.cumprod where a factor is zero: the rules divided by each factor (NaN, inf) --------------


def cumprod_flat(a): return np.sum(np.cumprod(a) * np.arange(1.0, 13.0))
def cumprod_rows(a): return np.sum(np.cumprod(a, axis=1) ** 2 * np.array([1.0, -2.0, 0.5, 3.0]))
def cumprod_columns(a): return np.sum(np.sin(np.cumprod(a, axis=0)))
def cumprod_last_axis(a): return np.sum(np.cumprod(a.reshape(3, 2, 2), axis=-1) * a.reshape(3, 2, 2))


CUMPROD = [cumprod_flat, cumprod_rows, cumprod_columns, cumprod_last_axis]
ZERO_PATTERNS = {"none": (), "one": ((0, 1),), "two-in-a-row": ((0, 1), (0, 3)),
                 "two-in-a-column": ((0, 1), (2, 1)), "first": ((1, 0),),
                 "three": ((0, 0), (1, 2), (2, 3))}


def _with_zeros(pattern):
    a = np.array([[1.5, -0.5, 2.0, 0.8], [1.2, 0.9, -1.1, 2.5], [0.7, 1.3, 0.6, -0.9]])
    for z in pattern:
        a[z] = 0.0
    return a


@pytest.mark.parametrize("f", CUMPROD, ids=lambda f: f.__name__)
@pytest.mark.parametrize("pattern", list(ZERO_PATTERNS), ids=str)
def test_cumprod_where_factors_are_zero(f, pattern):
    """Exact first derivatives (a product is a polynomial: finite differences are the
    oracle at the zeros too), with no division by a zero on the way."""
    a = _with_zeros(ZERO_PATTERNS[pattern])
    v = np.cos(np.arange(12.0)).reshape(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, tangent = s2sad.jvp(f)(a, v)
        (a_bar,) = s2sad.vjp(f)(a)[1](1.0)
    assert tangent == pytest.approx(float(numerical_jvp(f, [a], (0,), [v])), rel=1e-6,
                                    abs=1e-9)
    assert_close((a_bar,), numerical_vjp(f, [a], (0,), 1.0), what="vjp")
    assert float(np.sum(a_bar * v)) == pytest.approx(float(tangent), rel=1e-12, abs=1e-12)


def test_second_derivative_of_cumprod_is_nan_at_a_zero_and_exact_elsewhere():
    """At a zero factor the exact first derivative reads the zero pattern as constant masks;
    differentiating it again would give finite wrong numbers, so it gives NaN (as np.prod's
    second derivative at zeros)."""
    a = _with_zeros(ZERO_PATTERNS["one"])
    v = np.cos(np.arange(12.0)).reshape(3, 4)
    with np.errstate(all="ignore"):
        assert np.all(np.isnan(s2sad.hvp(cumprod_rows)(a, v)))
    b = _with_zeros(())
    grad = s2sad.grad(cumprod_rows)
    expected = (grad(b + 1e-5 * v) - grad(b - 1e-5 * v)) / 2e-5
    assert_close(s2sad.hvp(cumprod_rows)(b, v), expected, rtol=1e-6, atol=1e-8)


# -- np.linalg.norm with a float `ord` (np.inf): a float keeps no value in its kind, and the
# example float was no valid matrix order, so the result's kind was an array of unknown shape
# and grad refused a scalar output ------------------------------------------------------------


def norm_inf(a): return np.linalg.norm(a, ord=np.inf)
def norm_minus_inf_rows(a): return np.sum(np.linalg.norm(a, ord=-np.inf, axis=1))
def norm_inf_positional(a): return np.linalg.norm(a, -np.inf) + np.linalg.norm(a[0], np.inf)
def norm_float_order(a): return np.sum(np.linalg.norm(a, 3.0, axis=0))


@pytest.mark.parametrize("f", [norm_inf, norm_minus_inf_rows, norm_inf_positional,
                               norm_float_order], ids=lambda f: f.__name__)
def test_norm_with_a_float_order(f):
    a = np.array([[1.5, -0.5, 2.0, 0.8], [1.2, 0.9, -1.1, 2.5], [0.7, 1.3, 0.6, -0.9]])
    assert_close(tuple(s2sad.vjp(f)(a)[1](1.0)), numerical_vjp(f, [a], (0,), 1.0), what="vjp")
    assert_close(s2sad.grad(f)(a), numerical_vjp(f, [a], (0,), 1.0)[0], what="grad")


# -- np.concatenate(axis=None) flattens its inputs (the VJP indexed a shape by None) ----------


def concatenate_flat(x, y): return np.concatenate([x, y], axis=None)


def test_concatenate_axis_none():
    x, y = np.array([[0.3, -1.2], [0.7, 0.1]]), np.array([2.0, -0.5, 0.25])
    u = np.arange(7.0) - 3.0
    out, pullback = s2sad.vjp(concatenate_flat)(x, y)
    assert np.array_equal(out, np.concatenate([x.ravel(), y]))
    assert_close(tuple(pullback(u)), numerical_vjp(concatenate_flat, [x, y], (0, 1), u),
                 what="vjp")


# -- np.take with a negative axis or mode="wrap"/"clip"; take_along_axis with broadcast indices


def take_negative_axis(a): return np.take(a, np.array([[0, 0, 0], [0, 0, 1]]), axis=-2)
def take_wrap(a): return np.take(a, np.array([-1, 4, 1]), axis=1, mode="wrap")
def take_clip(a): return np.take(a, np.array([-2, 5, 0]), mode="clip")
def take_along_broadcast(a): return np.take_along_axis(a, np.array([[2], [0], [0]]), axis=-2)


@pytest.mark.parametrize("f,shape", [(take_negative_axis, (2, 3)),
                                     (take_negative_axis, (2, 2, 3)), (take_wrap, (2, 3)),
                                     (take_clip, (2, 3)), (take_along_broadcast, (3, 2))])
def test_take_scatters_back_to_the_entries_it_read(f, shape):
    a = np.arange(np.prod(shape), dtype=float).reshape(shape) * 0.1 - 0.2
    out, pullback = s2sad.vjp(f)(a)
    u = np.linspace(-1.0, 1.0, out.size).reshape(out.shape)
    assert_close(tuple(pullback(u)), numerical_vjp(f, [a], (0,), u), what="vjp")


def concatenate_pair(a0, a1):
    return np.concatenate([a0, a1], axis=0)


def weighted_concatenation(a0, a1, u0):
    return np.sum(concatenate_pair(a0, a1) * u0)


concatenation_grad = s2sad.grad(weighted_concatenation, wrt=(0, 1))


def test_list_cotangent_of_a_split_in_second_order():
    a0, a1, u0 = np.array([0.3, 0.1]), np.array([0.5, 0.2, 0.4]), np.linspace(-1, 1, 5)
    _, pullback = s2sad.vjp(concatenation_grad)(a0, a1, u0)
    w = (np.array([0.2, -0.1]), np.array([0.3, 0.5, -0.7]))
    expected = numerical_vjp(concatenation_grad, [a0, a1, u0], (0, 1, 2), w)
    assert_close(tuple(pullback(w)), expected, rtol=1e-6, atol=1e-8, what="vjp of grad")


def repeat_counts(a0):
    return np.repeat(a0, np.array([0, 3, 2, 0, 0, 1]))


def weighted_repeat(a0, u0):
    return np.sum(repeat_counts(a0) * u0)


repeat_grad = s2sad.grad(weighted_repeat, wrt=(0,))


def test_repeat_with_repeat_counts_in_second_order():
    a0, u0 = np.arange(6.0).reshape(2, 3) * 0.1, np.linspace(-1, 1, 6)
    _, pullback = s2sad.vjp(repeat_grad)(a0, u0)
    w = (np.ones((2, 3)),)
    expected = numerical_vjp(repeat_grad, [a0, u0], (0, 1), w)
    assert_close(tuple(pullback(w)), expected, rtol=1e-6, atol=1e-8, what="vjp of grad")


# -- np.nan_to_num(copy=False) overwrote the input its rules read: refused --------------------


def nan_to_num_in_place(x, holes):
    return np.nan_to_num(x + holes, posinf=9.0, copy=False)


@pytest.mark.parametrize("transform", ["jvp", "vjp"])
def test_nan_to_num_copy_false_is_refused(transform):
    x, holes = np.array([0.5, -1.0]), np.array([np.inf, 0.0])
    with pytest.raises(s2sad.MissingRuleError, match="copy=False"):
        d = getattr(s2sad, transform)(nan_to_num_in_place, wrt=(0,))
        if transform == "jvp":
            d(x, holes, np.ones(2))
        else:
            out, pullback = d(x, holes)
            pullback(out)


def nan_to_num_replacing(x, holes):
    return np.nan_to_num(x + holes, posinf=9.0, neginf=-9.0)


def test_nan_to_num_passes_tangents_of_finite_entries_only():
    x, holes = np.array([0.5, -1.0, 2.0]), np.array([np.inf, 0.0, np.nan])
    f = s2sad.jvp(nan_to_num_replacing, wrt=(0,))
    assert np.array_equal(f(x, holes, np.array([1.0, 2.0, 3.0]))[1], [0.0, 2.0, 0.0])


# -- np.take with mode="clip": the JVP dropped the mode (IndexError) ----------------------------


def take_clip_scalar(a): return np.take(a, 2, axis=1, mode="clip")


def test_take_jvp_keeps_the_mode():
    a = np.array([[0.3, -0.2], [0.5, 0.9]])
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    out, tangent = s2sad.jvp(take_clip_scalar)(a, v)
    assert np.array_equal(out, a[:, 1]) and np.array_equal(tangent, v[:, 1])


# -- index_add with a broadcast value (np.max's VJP scatters a scalar share to tied entries) ---


def max_of_ties(a): return np.max(a)


def weighted_max(a, u):
    return np.sum(max_of_ties(a) * u)


max_grad = s2sad.grad(weighted_max, wrt=(0,))


def test_second_order_through_a_scatter_of_a_scalar():
    a, u = np.array([[0.5, -0.2], [0.5, 0.1]]), 0.7  # a tie: the scalar share goes to two
    _, pullback = s2sad.vjp(max_grad)(a, u)
    w = (np.array([[1.0, 2.0], [3.0, 4.0]]),)
    a_bar, u_bar = pullback(w)
    # the gradient is u/2 at each tied entry: d/du <w, grad> = (w[0,0] + w[1,0]) / 2
    assert np.shape(u_bar) == () and u_bar == pytest.approx(2.0, rel=1e-12)
    assert np.array_equal(a_bar, np.zeros((2, 2)))


# -- np.full / np.linspace were constants: their rules, with a list fill value or list
# endpoints, and a complex fill value ------------------------------------------------------


def full_of_a_list(x): return np.sum(np.full((2, 2), [x[0], x[1] * 2.0]) ** 2)
def full_of_a_complex(x): return np.sum(np.abs(np.full(3, x[0] + 1j * x[1])) ** 2)
def linspace_of_lists(x): return np.sum(np.linspace([x[0], 0.0], [1.0, x[1]], 4) ** 2)


@pytest.mark.parametrize("f", [full_of_a_list, full_of_a_complex, linspace_of_lists],
                         ids=lambda f: f.__name__)
def test_constructors_of_lists_and_complex_values(f):
    x = np.array([0.3, -0.5, 0.8])
    value, g = s2sad.value_and_grad(f)(x)
    assert value == pytest.approx(f(x), rel=1e-14)
    assert_close((g,), numerical_vjp(f, [x], (0,), 1.0), what="grad")
