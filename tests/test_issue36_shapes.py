"""Issue 36: shapes, broadcasts, views and masks (items 7, 12, 15, 18), each checked against
finite differences or the value NumPy computes."""

import operator

import numpy as np
import pytest

import s2sad
from tests.oracle import numerical_grad, numerical_jacobian, numerical_jvp

# -- 15: an in-place update never touches an array that a view still reads -----------------
# The reverse sweep of `g = V(x)` makes x's cotangent a view of t's (np.flip(t_bar)); the
# reverse of `o = ... * 0.2`, next, must not scale t_bar in place under it.


def v_flip(x):
    return np.flip(x)


def v_fliplr(x):
    return np.fliplr(x)


def v_flipud(x):
    return np.flipud(x)


def v_rot90(x):
    return np.rot90(x)


def v_T(x):
    return x.T


def v_transpose(x):
    return np.transpose(x)


def v_swapaxes(x):
    return np.swapaxes(x, 0, 1)


def v_moveaxis(x):
    return np.moveaxis(x, 0, -1)


def v_reshape(x):
    return np.reshape(x, (9,))


def v_ravel(x):
    return np.ravel(x)


def v_method_reshape(x):
    return x.reshape(9)


def v_expand_dims(x):
    return np.expand_dims(x, 0)


def v_squeeze(x):
    return np.squeeze(x[None])


def v_broadcast_to(x):
    return np.broadcast_to(x, (3, 3))


def v_diagonal(x):
    return np.diagonal(x)


def v_real(x):
    return np.real(x)


def v_real_attr(x):
    return x.real


def v_reversed_rows(x):
    return x[::-1]


def v_slice(x):
    return x[1:, ::-1]


def v_atleast_2d(x):
    return np.atleast_2d(x)


VIEWS = [v_flip, v_fliplr, v_flipud, v_rot90, v_T, v_transpose, v_swapaxes, v_moveaxis,
         v_reshape, v_ravel, v_method_reshape, v_expand_dims, v_squeeze, v_broadcast_to,
         v_diagonal, v_real, v_real_attr, v_reversed_rows, v_slice, v_atleast_2d]


def view_then_scaled(view):
    def f(x):
        o = view(x * 1.5) * 0.2
        g = view(x)
        return np.sum((g + o) ** 2)

    return f


def flip_repro(x):
    o = x * 0.2
    g = np.flip(x)
    return np.sum((g + o) ** 2)


def test_the_reported_flip():
    x = np.array([0.1, 0.9, 0.3, 0.2])
    np.testing.assert_allclose(s2sad.grad(flip_repro)(x), [0.368, 2.112, 1.344, 0.496])


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.__name__[2:])
def test_a_view_of_a_cotangent_is_not_scaled_in_place(view):
    f = view_then_scaled(view)
    x = np.random.default_rng(15).uniform(-1.0, 1.0, (3, 3))
    if view is v_broadcast_to:
        x = x[:1]
    expected = numerical_grad(f, (x,), (0,))[0]
    np.testing.assert_allclose(s2sad.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    u = np.ones_like(x)
    out, tangent = s2sad.jvp(f)(x, u)
    np.testing.assert_allclose(tangent, np.sum(expected * u), rtol=1e-6)


@pytest.mark.parametrize("view", [v_flip, v_T, v_reversed_rows, v_ravel, v_diagonal],
                         ids=lambda v: v.__name__[2:])
def test_a_derivative_never_hands_back_a_view_of_the_callers_array(view):
    """The tangent of np.flip(x) is np.flip(x_dot): a copy is returned, not a view of the
    caller's tangent (nor of the caller's cotangent seed in a pullback)."""
    x = np.arange(9.0).reshape(3, 3)
    t = np.ones((3, 3))
    out, tangent = s2sad.jvp(view)(x, t)
    assert not np.shares_memory(tangent, t)
    tangent *= 2.0
    np.testing.assert_array_equal(t, np.ones((3, 3)))
    out, pullback = s2sad.vjp(view)(x)
    seed = np.ones(np.shape(out))
    (g,) = pullback(seed)
    assert not np.shares_memory(g, seed)


# -- 12, 18e: a sum keeps its broadcast shape where a operand's shape is not known -----------
# `zeros + v -> v` holds only where v has the sum's shape; equal kinds of unknown shape (a
# mask's selection) are no proof of it. x[[0, 0, 1]] has a known shape now too.


def norm_of_picked(v):
    s = v + np.linalg.norm(v[[0, 0, 0, 1]])
    return np.zeros((2,)) + s[:1]


def std_of_picked(x):
    return np.std(x[[0, 1]]) + np.zeros(3)


def masked_into_zeros(v):
    s = v[v > 0.0]
    return np.zeros((2,)) + s[:1]


def masked_scaled_into_zeros(v):
    s = v[v > 0.0]
    return np.zeros((2,)) + s[:1] * 3.0


def masked_minus_zeros(v):
    s = v[v > 0.0]
    return s[:1] * 2.0 - np.zeros((3,))


def masked_plus_constant(v, y):
    return v[v > 0.0][:1] * 2.0 + y


def picked_plus_matrix(x, y):
    return x[[0, 1]] * 2.0 + y


SHAPED = [
    (norm_of_picked, (np.array([0.805524, 1.113989]),)),
    (std_of_picked, (np.array([0.3, 1.2, -0.4]),)),
    (masked_into_zeros, (np.array([0.805524, 1.113989]),)),
    (masked_scaled_into_zeros, (np.array([0.8, 1.1]),)),
    (masked_minus_zeros, (np.array([0.8, -1.1, 0.4]),)),
    (masked_plus_constant, (np.array([0.8, 1.1]), np.array([0.5, -0.25]))),
    (picked_plus_matrix, (np.array([0.8, 1.1, -0.3]), np.ones((2, 2)))),
]


@pytest.mark.parametrize("f, args", SHAPED, ids=lambda a: getattr(a, "__name__", ""))
def test_primal_and_derivatives_keep_the_broadcast_shape(f, args):
    expected = f(*args)
    wrt = tuple(range(len(args)))
    out, pullback = s2sad.vjp(f)(*args)
    np.testing.assert_allclose(out, expected, rtol=1e-13)
    assert np.shape(out) == np.shape(expected)
    rng = np.random.default_rng(12)
    seed = rng.standard_normal(np.shape(expected))[()]
    bars = pullback(seed)
    g = lambda *a: np.sum(f(*a) * seed)  # noqa: E731
    for b, e in zip(bars, numerical_grad(g, args, wrt)):
        np.testing.assert_allclose(b, e, rtol=1e-6, atol=1e-8)
    tangents = tuple(rng.standard_normal(np.shape(a)) for a in args)
    out, tangent = s2sad.jvp(f)(*args, *tangents)
    np.testing.assert_allclose(out, expected, rtol=1e-13)
    assert np.shape(tangent) == np.shape(expected)
    np.testing.assert_allclose(tangent, numerical_jvp(f, args, wrt, tangents),
                               rtol=1e-6, atol=1e-8)
    # the step-by-step form simplifies with its own rules
    out, pullback = s2sad.vjp(f, explain=True)(*args)
    np.testing.assert_allclose(out, expected, rtol=1e-13)
    assert np.shape(out) == np.shape(expected)
    # with respect to the first argument alone: the others' tangents are symbolic zeros
    out, tangent = s2sad.jvp(f, wrt=0)(*args, tangents[0])
    assert np.shape(tangent) == np.shape(expected)
    np.testing.assert_allclose(tangent, numerical_jvp(f, args, (0,), tangents[:1]),
                               rtol=1e-6, atol=1e-8)


# -- 7: a mask is boolean whatever operator built it ---------------------------------------
# (z > 1) * (z < 4) is a boolean array in NumPy; its kind said int, so np.sign(z)[m] was
# taken for a gather of shape (3,) and its zero tangent written into the mask's entries.


def mask_mul(z):
    return (z > 1.0) * (z < 4.0)


def mask_add(z):
    return (z > 4.0) + (z < 1.0)


def mask_and(z):
    return (z > 1.0) & (z < 4.0)


def mask_xor(z):
    return (z > 1.0) ^ (z > 4.0)


def mask_invert(z):
    return ~(z > 1.0)


def mask_logical_and(z):
    return np.logical_and(z > 1.0, z < 4.0)


def mask_logical_not(z):
    return np.logical_not(z > 1.0)


def mask_np_multiply(z):
    return np.multiply(z > 1.0, z < 4.0)


def mask_np_add(z):
    return np.add(z > 4.0, z < 1.0)


def mask_times_true(z):
    return (z > 1.0) * True


MASKS = [mask_mul, mask_add, mask_and, mask_xor, mask_invert, mask_logical_and,
         mask_logical_not, mask_np_multiply, mask_np_add, mask_times_true]


def masked_sign_write(mask):
    def f(z):
        m = mask(z)
        v = z * 1.0
        v[m] = np.sign(z)[m]  # (a zero tangent written where the mask holds)
        return v

    return f


def masked_square_write(mask):
    def f(z):
        m = mask(z)
        v = z * 2.0
        v[m] = z[m] ** 2
        return np.sum(v * v)

    return f


@pytest.mark.parametrize("mask", MASKS, ids=lambda m: m.__name__[5:])
def test_masked_write_with_a_mask_made_by_any_operator(mask):
    z = np.array([0.5, 2.0, 5.0])
    u = np.array([1.0, -0.5, 2.0])
    for f in (masked_sign_write(mask), masked_square_write(mask)):
        out, tangent = s2sad.jvp(f)(z, u)
        np.testing.assert_allclose(out, f(z), rtol=1e-14)
        np.testing.assert_allclose(tangent, numerical_jvp(f, (z,), (0,), (u,)),
                                   rtol=1e-6, atol=1e-8)
        out, pullback = s2sad.vjp(f)(z)
        seed = np.ones(np.shape(out))[()]
        (bar,) = pullback(seed)
        np.testing.assert_allclose(np.sum(bar * u), np.sum(tangent * seed), rtol=1e-12)


def bool_difference(z):
    m = (z > 1.0) - (z < 4.0)
    return z[m]


def test_a_boolean_difference_fails_as_numpy_fails():
    with pytest.raises(TypeError, match="boolean subtract"):
        bool_difference(np.ones(3))
    with pytest.raises(TypeError, match="boolean subtract"):
        s2sad.jvp(bool_difference)(np.ones(3), np.ones(3))


_OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
        operator.mod, operator.pow, operator.and_, operator.or_, operator.xor, np.add,
        np.multiply, np.logical_and, np.maximum, np.arctan2, np.hypot]
_UNARY = [operator.neg, operator.invert, np.sin, np.sqrt, np.exp, np.logical_not,
          np.absolute, np.negative, np.square, np.floor]
_VALUES = {"b": np.array([True, False]), "i": np.array([2, 3]),
           "f": np.array([0.5, 1.5]), "c": np.array([1 + 1j, 2.0])}
_SCALARS = {"b": True, "i": 2, "f": 0.5, "c": 1j}


def _numpy_letter(fn, *operands):
    with np.errstate(all="ignore"):
        try:
            return np.asarray(fn(*operands)).dtype.kind
        except TypeError:
            return None


@pytest.mark.parametrize("fn", _OPS + _UNARY, ids=lambda f: getattr(f, "__name__", str(f)))
def test_elementwise_result_dtype_is_numpys(fn):
    """The dtype letter of an elementwise result's kind is the one NumPy gives (arrays of
    any dtype, Python numbers among them)."""
    from s2sad.ir.kinds import eval_kind, kind_of_value

    unary = fn in _UNARY
    cases = [(a,) for a in _VALUES.values()] if unary else \
        [(a, b) for a in _VALUES.values() for b in list(_VALUES.values()) +
         list(_SCALARS.values())]
    for operands in cases:
        kinds = [kind_of_value(x, keep_value=False) for x in operands]
        got = eval_kind(fn, kinds, [])
        letter = _numpy_letter(fn, *operands)
        if letter is not None:  # (where NumPy refuses, so does the generated code)
            assert got.dtype == letter, (fn, operands, got, letter)


# -- 18a: a masked selection's tangent keeps the output's shape ----------------------------


def plus_masked_rows(p, q):
    return p + p[p[:, 0] > 0] * q


@pytest.mark.parametrize("first", [1.5, -1.5])
def test_tangent_of_a_masked_selection_has_the_outputs_shape(first):
    p = np.array([[first, 0.3, -0.2, 0.7], [0.4, -1.1, 0.5, 0.9]])
    expected = plus_masked_rows(p, 0.5)
    for wrt, tangents in ((1, (1.0,)), (0, (np.ones((2, 4)),)),
                          ((0, 1), (np.ones((2, 4)), 1.0))):
        out, tangent = s2sad.jvp(plus_masked_rows, wrt=wrt)(p, 0.5, *tangents)
        np.testing.assert_allclose(out, expected, rtol=1e-14)
        assert np.shape(tangent) == expected.shape
        idx = (wrt,) if isinstance(wrt, int) else wrt
        np.testing.assert_allclose(
            tangent, numerical_jvp(plus_masked_rows, (p, 0.5), idx, tangents), rtol=1e-6,
            atol=1e-8)
    jac = s2sad.jacfwd(plus_masked_rows, wrt=1)(p, 0.5)
    np.testing.assert_allclose(jac, numerical_jvp(plus_masked_rows, (p, 0.5), (1,), (1.0,)),
                               rtol=1e-6, atol=1e-8)


# -- 18b: a recursive helper's value decides an `if` in a vectorised Jacobian ---------------


def rec(x, k):
    return x if k == 0 else rec(x, k - 1)


def branch_on_recursion(x):
    if rec(np.sum(x), 2) < 0.04:
        return np.sum(x ** 2)
    return np.sum(x)


def rec_pair(x, k):
    return (x, 2.0 * x) if k == 0 else rec_pair(x, k - 1)


def branch_on_recursive_pair(x):
    a, b = rec_pair(x * 1.5, 1)
    if np.max(a) > 1.0:
        return np.sum(np.sin(a) * b)
    return np.sum(a * b)


@pytest.mark.parametrize("x", [np.array([0.1, 0.2]), np.array([0.01, 0.02])])
def test_jacfwd_with_a_recursive_value_in_a_condition(x):
    expected = numerical_grad(branch_on_recursion, (x,), (0,))[0]
    np.testing.assert_allclose(s2sad.jacfwd(branch_on_recursion)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(s2sad.jacrev(branch_on_recursion)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(s2sad.grad(branch_on_recursion)(x), expected, rtol=1e-6)


@pytest.mark.parametrize("x", [np.array([0.1, 0.2]), np.array([0.5, 0.9])])
def test_jacfwd_with_a_recursive_pair_in_a_condition(x):
    expected = np.stack([numerical_jvp(branch_on_recursive_pair, (x,), (0,), (e,))
                         for e in np.eye(2)], axis=-1)
    np.testing.assert_allclose(s2sad.jacfwd(branch_on_recursive_pair)(x), expected,
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(s2sad.jacrev(branch_on_recursive_pair)(x), expected,
                               rtol=1e-6, atol=1e-9)


# -- 18c: a batched matrix product broadcasts its batch axis past every stacking axis --------


def at(x, y):
    return x @ y


def np_matmul(x, y):
    return np.matmul(x, y)


def np_dot(x, y):
    return np.dot(x, y)


def times_own_sum(y):
    return y @ np.sum(y, axis=1).T


SHAPE_PAIRS = [((3,), (3, 2)), ((2, 3), (3,)), ((2, 2, 3), (3, 2)), ((3, 2), (2, 2, 3)),
               ((3,), (2, 3, 2)), ((2, 1, 2, 3), (2, 3, 2))]


def _jacobian(f, args, wrt):
    out = f(*args)
    return numerical_jacobian(f, args, (wrt,))[0].reshape(np.shape(out) + np.shape(args[wrt]))


PRODUCTS = [(at, shapes) for shapes in SHAPE_PAIRS] + [
    (np_matmul, ((3, 2), (2, 2, 3))), (np_dot, ((3,), (3, 2))), (np_dot, ((2, 3), (3, 2)))]


@pytest.mark.parametrize("f, shapes", PRODUCTS, ids=lambda a: getattr(a, "__name__", str(a)))
def test_jacobians_of_a_matrix_product_of_any_ranks(f, shapes):
    rng = np.random.default_rng(18)
    args = tuple(rng.standard_normal(s) for s in shapes)
    for wrt in (0, 1):
        expected = _jacobian(f, args, wrt)
        np.testing.assert_allclose(s2sad.jacfwd(f, wrt=wrt)(*args), expected, rtol=1e-6,
                                   atol=1e-8)
        np.testing.assert_allclose(s2sad.jacrev(f, wrt=wrt)(*args), expected, rtol=1e-6,
                                   atol=1e-8)


def test_jacfwd_of_a_stack_times_its_own_sum():
    y = np.random.default_rng(4).standard_normal((2, 3, 5))
    expected = _jacobian(times_own_sum, (y,), 0)
    np.testing.assert_allclose(s2sad.jacfwd(times_own_sum)(y), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2sad.jacrev(times_own_sum)(y), expected, rtol=1e-6, atol=1e-8)


# -- 18d: a list of arrays given to a NumPy reduction is the array NumPy makes of it ---------


def max_of_list(x):
    return np.max([x, 2.0 * x])


def min_of_list(x):
    return np.min([x, 2.0 * x])


def amax_of_list(x):
    return np.amax((x, 2.0 * x, x - 1.0))


def max_of_list_along(x):
    return np.sum(np.max([x, 2.0 * x], axis=0))


def product_of_list(x):
    return np.prod([x, 3.0 * x])


def sin_of_list(x):
    return np.sum(np.sin([x, 3.0 * x]))


LIST_REDUCTIONS = [max_of_list, min_of_list, amax_of_list, max_of_list_along, product_of_list,
                   sin_of_list]


@pytest.mark.parametrize("x", [1.5, -1.5, np.array([1.5, -0.5]),
                               np.array([[1.5, -0.5], [0.25, -2.0]])], ids=np.shape)
@pytest.mark.parametrize("f", LIST_REDUCTIONS, ids=lambda f: f.__name__)
def test_a_reduction_of_a_list_of_arrays(f, x):
    expected = numerical_grad(f, (x,), (0,))[0]
    np.testing.assert_allclose(s2sad.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    u = np.ones_like(x) * 0.5 if np.ndim(x) else 0.5
    out, tangent = s2sad.jvp(f)(x, u)
    np.testing.assert_allclose(out, f(x), rtol=1e-14)
    np.testing.assert_allclose(tangent, np.sum(expected * u), rtol=1e-6, atol=1e-8)


# -- 18g: a full reduction of a list item of a shape known at run time only is a number ------


def shrinking_level(reduce):
    def f(x):
        level = [x]
        for i in range(2):
            level = [level[0][:-1] * 2.0]
        return reduce(level[0])

    return f


def pairwise_levels(x):
    level = [x, 2.0 * x, x * x]
    for i in range(2):
        level = [a + b for a, b in zip(level[:-1], level[1:])]
    return np.linalg.norm(level[0])


@pytest.mark.parametrize("reduce", [np.linalg.norm, np.std, np.var, np.median, np.ptp,
                                    np.nansum, np.max, np.mean],
                         ids=lambda r: r.__name__)
def test_grad_of_a_reduction_of_an_item_whose_shape_a_loop_changes(reduce):
    f = shrinking_level(reduce)
    x = np.array([0.3, -0.7, 1.1, 0.4])
    np.testing.assert_allclose(s2sad.grad(f)(x), numerical_grad(f, (x,), (0,))[0], rtol=1e-6,
                               atol=1e-8)


def test_grad_of_the_norm_of_a_level_rebuilt_pairwise():
    x = np.array([0.3, -0.7, 1.1, 0.4])
    np.testing.assert_allclose(s2sad.grad(pairwise_levels)(x),
                               numerical_grad(pairwise_levels, (x,), (0,))[0], rtol=1e-6)


# -- 18f: a NumPy number is not weak in NumPy's promotion (NEP 50) --------------------------

SCALE = np.float64(2.0)


def times_np_float64(w):
    return w * np.float64(2.0)


def np_float64_times(w):
    return np.float64(2.0) * w


def plus_np_float64(w):
    return w + np.float64(0.5)


def over_np_float64(w):
    return np.sin(w) / np.float64(4.0)


def times_global_np_float64(w):
    return w * SCALE


def times_np_sqrt(w):
    return w * np.sqrt(2.0)


def times_np_float32(w):
    return w * np.float32(2.0)


def times_python_float(w):
    return w * 2.0


def times_np_int64(w):
    return w * np.int64(3)


PROMOTIONS = [times_np_float64, np_float64_times, plus_np_float64, over_np_float64,
              times_global_np_float64, times_np_sqrt, times_np_float32, times_python_float,
              times_np_int64]


@pytest.mark.parametrize("f", PROMOTIONS, ids=lambda f: f.__name__)
def test_dtypes_of_primal_and_derivatives_are_numpys(f):
    w = np.array([0.5, -1.25], dtype=np.float32)
    expected = f(w)
    out, tangent = s2sad.jvp(f)(w, np.ones(2, np.float32))
    assert out.dtype == expected.dtype and tangent.dtype == expected.dtype
    np.testing.assert_allclose(out, expected, rtol=1e-7)
    w64 = w.astype(np.float64)
    np.testing.assert_allclose(tangent, numerical_jvp(f, (w64,), (0,), (np.ones(2),)),
                               rtol=1e-5)
    out, pullback = s2sad.vjp(f)(w)
    assert out.dtype == expected.dtype
    (bar,) = pullback(np.ones_like(expected))
    assert bar.dtype == np.float32  # a cotangent has its argument's precision


def cubed_through_recursion(x):
    return np.sum(rec(x, 1) ** 3)


def test_a_second_derivative_through_a_recursion_is_refused_as_such():
    """A second derivative needs a derivative of the derivative the recursive call makes,
    which has no rule: refused with what to do, not with advice to register a rule."""
    x = np.array([0.3, 0.5])
    attempts = [lambda: s2sad.hessian(cubed_through_recursion)(x),
                lambda: s2sad.hvp(cubed_through_recursion)(x, np.ones(2)),
                lambda: s2sad.jacfwd(s2sad.grad(cubed_through_recursion))(x),
                lambda: s2sad.jacrev(s2sad.grad(cubed_through_recursion))(x)]
    for attempt in attempts:
        with pytest.raises(s2sad.S2SADError, match="second derivative through a recursive") \
                as info:
            attempt()
        assert "defjvp" not in str(info.value) and "defvjp" not in str(info.value)
        assert info.value.lineno is not None
