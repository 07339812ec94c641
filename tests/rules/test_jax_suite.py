"""What JAX's own tests check of NumPy derivatives and of its differentiation API
(tests/lax_numpy_test.py, lax_numpy_operators_test.py, lax_numpy_reducers_test.py, api_test.py),
where autograd's and Tangent's suites (test_autograd_suite.py, test_session10_rules.py,
tests/corpus) did not go: reducers over negative axes, tuples of axes and with keepdims; shape
operations with their keyword combinations; dtype promotion (float32 in, float32 derivative
out; a float64 argument's cotangent stays float64 through a cast to float32); integer and bool
arguments beside float ones; JAX's conventions at ties and kinks; and API semantics (wrt as
indices, negative indices, names and tuples, containers of arguments, closures, nested
derivatives, keyword-only and default arguments).

Each function at seeded random float64 points away from kinks: the JVP and the VJP against
central finite differences and against each other (check_both_modes), second order
(s2sad.check_grads with order=2) for a representative subset, and a MissingRuleError at the
user's line for what s2sad does not differentiate (`dtype=` of the reducers; order="F";
np.cov, ...). Also the regression tests of what this suite
found: np.sum's where=/initial= and np.mean's where=
(refused before), jacrev over a tuple of axes, the derivative of det at a singular matrix, the
cotangent's dtype through a cast to float32, and wrt=().
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jacobian, uniform_away
from tests.rules.test_issue13_regressions import check_both_modes

R = np.random.default_rng(2026)
A = R.uniform(0.5, 1.5, (3, 4))
B = R.uniform(0.5, 1.5, (2, 3, 4))
V = R.uniform(0.5, 1.5, (4,))
MASK = np.array([[True, False, True, True], [False, True, True, False], [True, True, False, True]])


# -- reducers: negative axes, tuples of axes, keepdims -------------------------------------------

def prod_two_axes(x): return np.prod(x, axis=(0, 2))
def prod_negative_axis_kept(x): return np.prod(x, axis=-2, keepdims=True)
def min_tuple_negative_kept(x): return np.min(x, axis=(0, -1), keepdims=True)
def amax_reversed_tuple(x): return np.amax(x, axis=(-1, 0))
def max_of_two_axes(x): return np.max(x, axis=(0, 1))
def max_last_kept(x): return np.max(x, axis=-1, keepdims=True)
def mean_two_axes_kept(x): return np.mean(x, axis=(0, 2), keepdims=True)
def var_ddof_last(x): return np.var(x, axis=-1, ddof=1)
def std_two_axes_ddof(x): return np.std(x, axis=(1, 2), ddof=1, keepdims=True)
def nansum_last_kept(x): return np.nansum(x, axis=-1, keepdims=True)
def nanmean_rows(x): return np.nanmean(x, axis=1)
def cumsum_negative_axis(x): return np.cumsum(x, axis=-2)
def cumprod_rows(x): return np.cumprod(x, axis=1)
def cumsum_flattened(x): return np.cumsum(x)
def cumprod_flattened(x): return np.cumprod(x)
def cumsum_float64_dtype(x): return np.cumsum(x, axis=0, dtype=np.float64)
def ptp_rows(x): return np.ptp(x, axis=1)
def average_weighted_rows(x, w): return np.average(x, axis=1, weights=w)
def average_all(x): return np.average(x)
def logsumexp_rows(x):
    import scipy.special
    return scipy.special.logsumexp(x, axis=1)
def trapezoid_last(x): return np.trapezoid(x, axis=-1)
def trapezoid_dx_first(x): return np.trapezoid(x, dx=0.5, axis=0)
def norm_last_kept(x): return np.linalg.norm(x, axis=-1, keepdims=True)
def vector_norm_last(x): return np.linalg.vector_norm(x, axis=-1)
def take_at_argmax(x): return x[np.arange(3), np.argmax(x, axis=1)]

REDUCERS = [
    (prod_two_axes, (B,)), (prod_negative_axis_kept, (B,)), (min_tuple_negative_kept, (B,)),
    (amax_reversed_tuple, (B,)), (max_of_two_axes, (B,)), (max_last_kept, (A,)),
    (mean_two_axes_kept, (B,)), (var_ddof_last, (A,)), (std_two_axes_ddof, (B,)),
    (nansum_last_kept, (A,)), (nanmean_rows, (A,)), (cumsum_negative_axis, (B,)),
    (cumprod_rows, (A,)), (cumsum_flattened, (A,)), (cumprod_flattened, (A,)),
    (cumsum_float64_dtype, (A,)), (ptp_rows, (A,)), (average_weighted_rows, (A, V)),
    (average_all, (A,)), (logsumexp_rows, (A,)), (trapezoid_last, (A,)),
    (trapezoid_dx_first, (A,)), (norm_last_kept, (B,)), (vector_norm_last, (A,)),
    (take_at_argmax, (A,)),
]


@pytest.mark.parametrize("f, args", REDUCERS, ids=[f.__name__ for f, _ in REDUCERS])
def test_reducers_over_axes(f, args):
    check_both_modes(f, args)


# -- products, contractions and shape operations with their keywords --------------------------

def cross_rows(a, b): return np.cross(a, b)
def tensordot_lists(a, b): return np.tensordot(a, b, axes=([1], [0]))
def tensordot_count(a, b): return np.tensordot(a, b, 1)
def einsum_matmul(a, b): return np.einsum("ij,jk->ik", a, b)
def einsum_trace(a): return np.einsum("ii", a)
def einsum_batched(a, b): return np.einsum("bij,bjk->bik", a, b)
def inner_rows(a, b): return np.inner(a, b)
def vdot_flat(a, b): return np.vdot(a, b)
def vecdot_rows(a, b): return np.vecdot(a, b)
def matmul_broadcast(a, b): return np.matmul(a, b)
def dot_stack(a, b): return np.dot(a, b)
def outer_flat(a, b): return np.outer(a, b)
def kron_blocks(a, b): return np.kron(a, b)
def trace_offset(a): return np.trace(a, offset=1)
def trace_last_axes(a): return np.trace(a, axis1=1, axis2=2)
def diagonal_below(a): return np.diagonal(a, offset=-1)
def diag_above(v): return np.diag(v, k=1)
def triu_above(a): return np.triu(a, k=1)
def tril_below(a): return np.tril(a, k=-1)
def roll_last(a): return np.roll(a, 2, axis=-1)
def roll_flattened(a): return np.roll(a, -3)
def roll_two_axes(a): return np.roll(a, (1, 2), axis=(0, 1))
def flip_two_axes(a): return np.flip(a, axis=(0, 2))
def rot90_three_times(a): return np.rot90(a, k=3)
def rot90_last_axes(a): return np.rot90(a, 1, axes=(1, 2))
def repeat_rows(a): return np.repeat(a, 2, axis=0)
def repeat_counts(a): return np.repeat(a, [1, 2, 0], axis=0)
def tile_3d(a): return np.tile(a, (2, 1, 3))
def pad_constant_value(a): return np.pad(a, ((1, 2), (0, 1)), constant_values=0.5)
def pad_edge(a): return np.pad(a, 2, mode="edge")
def pad_reflect(a): return np.pad(a, 1, mode="reflect")
def pad_wrap(a): return np.pad(a, ((1, 1), (2, 0)), mode="wrap")
def sort_columns(a): return np.sort(a, axis=0)
def sort_flattened(a): return np.sort(a, axis=None)
def clip_upper_only(a): return np.clip(a, None, 1.0)
def take_along_sorted(a): return np.take_along_axis(a, np.argsort(a, axis=1), axis=1)
def take_last_axis(a): return np.take(a, [2, 0, 2], axis=-1)
def take_flattened(a): return np.take(a, [5, 1])
def moveaxis_first_last(a): return np.moveaxis(a, 0, -1)
def swapaxes_outer(a): return np.swapaxes(a, 0, 2)
def expand_two_axes(a): return np.expand_dims(a, (0, 2))
def squeeze_first(a): return np.squeeze(a[None], axis=0)
def stack_last(a, b): return np.stack([a, b], axis=-1)
def concatenate_flattened(a, b): return np.concatenate([a, b], axis=None)
def split_halves(a):
    p, q = np.split(a, 2, axis=1)
    return p * q
def array_split_uneven(a):
    p, q = np.array_split(a, 2, axis=0)
    return np.sum(p) * np.sum(q)
def transpose_permuted(a): return np.transpose(a, (2, 0, 1))
def transpose_negative(a): return np.transpose(a, (-1, 0, 1))
def matrix_transpose_stack(a): return np.matrix_transpose(a)
def atleast_3d_vector(a): return np.atleast_3d(a)
def interp_points(x): return np.interp(x, np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 2.0]))
def interp_values(fp): return np.interp(np.array([0.3, 1.7]), np.array([0.0, 1.0, 2.0]), fp)
def polyval_matrix(p, x): return np.polyval(p, x)

SHAPES = [
    (cross_rows, (A[:, :3], A[:, 1:])), (tensordot_lists, (A, A.T)), (tensordot_count, (A, A.T)),
    (einsum_matmul, (A, A.T)), (einsum_trace, (A[:, :3],)),
    (einsum_batched, (B, np.swapaxes(B, 1, 2))), (inner_rows, (A, A)), (vdot_flat, (A, A)),
    (vecdot_rows, (A, A)), (matmul_broadcast, (B, A.T)), (dot_stack, (B, A.T)),
    (outer_flat, (A, V)), (kron_blocks, (A, A[:2, :2])), (trace_offset, (A,)),
    (trace_last_axes, (B,)), (diagonal_below, (A,)), (diag_above, (V,)), (triu_above, (A,)),
    (tril_below, (A,)), (roll_last, (A,)), (roll_flattened, (A,)), (roll_two_axes, (A,)),
    (flip_two_axes, (B,)), (rot90_three_times, (A,)), (rot90_last_axes, (B,)),
    (repeat_rows, (A,)), (repeat_counts, (A,)), (tile_3d, (A,)), (pad_constant_value, (A,)),
    (pad_edge, (A,)), (pad_reflect, (A,)), (pad_wrap, (A,)), (sort_columns, (A,)),
    (sort_flattened, (A,)), (clip_upper_only, (A,)), (take_along_sorted, (A,)),
    (take_last_axis, (A,)), (take_flattened, (A,)), (moveaxis_first_last, (B,)),
    (swapaxes_outer, (B,)), (expand_two_axes, (A,)), (squeeze_first, (A,)),
    (stack_last, (A, A)), (concatenate_flattened, (A, B)), (split_halves, (A,)),
    (array_split_uneven, (A,)), (transpose_permuted, (B,)), (transpose_negative, (B,)),
    (matrix_transpose_stack, (B,)), (atleast_3d_vector, (V,)), (interp_points, (A,)),
    (interp_values, (V[:3],)), (polyval_matrix, (V, A)),
]


@pytest.mark.parametrize("f, args", SHAPES, ids=[f.__name__ for f, _ in SHAPES])
def test_products_and_shape_operations(f, args):
    check_both_modes(f, args)


# -- elementwise operations of JAX's operator records not covered before ----------------------

def sinc_of(x): return np.sinc(x)
def heaviside_times(x): return np.heaviside(x - 1.0, 0.5) * x
def fmax_of(x, y): return np.fmax(x, y)
def logaddexp_broadcast(x, y): return np.logaddexp(x, y)
def positive_of(x): return np.positive(x)
def conjugate_times(x): return np.conjugate(x) * x
def real_plus_imag(x): return np.real(x) + np.imag(x)
def float_power_of(x, y): return np.float_power(x, y)
def round_plus(x): return np.round(x, 2) + x
def rint_times(x): return np.rint(x) * x
def where_scaled(x): return np.where(x > 1.0, x, 2.0 * x)

ELEMENTWISE = [
    (sinc_of, (A,)), (heaviside_times, (A + 0.05,)), (fmax_of, (A, A.T[:3, :1] * 1.01)),
    (logaddexp_broadcast, (A, V)), (positive_of, (A,)), (conjugate_times, (A,)),
    (real_plus_imag, (A,)), (float_power_of, (A, A)), (round_plus, (A,)),
    (rint_times, (A + 0.05,)), (where_scaled, (uniform_away(R, 0.5, 1.5, (3, 4), (1.0,)),)),
]


@pytest.mark.parametrize("f, args", ELEMENTWISE, ids=[f.__name__ for f, _ in ELEMENTWISE])
def test_elementwise_operations(f, args):
    check_both_modes(f, args)


# -- second order for a representative subset -------------------------------------------------

def scalar_of(f):
    def total(*args):
        return np.sum(f(*args) ** 2)
    total.__name__ = f"sum_squares_{f.__name__}"
    return total


def prod_square_sum(x): return np.sum(np.prod(x, axis=(0, 2)) ** 2)
def std_cube(x): return np.sum(np.std(x, axis=(1, 2), ddof=1) ** 3)
def cumprod_square(x): return np.sum(np.cumprod(x, axis=1) ** 2)
def logsumexp_square(x):
    import scipy.special
    return np.sum(scipy.special.logsumexp(x, axis=1) ** 2)
def einsum_square(a, b): return np.sum(np.einsum("bij,bjk->bik", a, b) ** 2)
def roll_pad_square(a):
    return np.sum(np.pad(np.roll(a, (1, 2), axis=(0, 1)), 1, mode="reflect") ** 3)
def average_square(x, w): return np.sum(np.average(x, axis=1, weights=w) ** 2)
def interp_square(fp):
    return np.sum(np.interp(np.array([0.3, 1.7]), np.array([0.0, 1.0, 2.0]), fp) ** 2)
def float_power_sum(x, y): return np.sum(np.float_power(x, y))

SECOND_ORDER = [
    (prod_square_sum, (B,)), (std_cube, (B,)), (cumprod_square, (A,)), (logsumexp_square, (A,)),
    (einsum_square, (B, np.swapaxes(B, 1, 2))), (roll_pad_square, (A,)),
    (average_square, (A, V)), (interp_square, (V[:3],)), (float_power_sum, (A, A)),
]


@pytest.mark.parametrize("f, args", SECOND_ORDER, ids=[f.__name__ for f, _ in SECOND_ORDER])
def test_second_order(f, args):
    assert s2sad.check_grads(f, args, order=2, rtol=1e-4, atol=1e-6)


# -- np.sum's where= and initial=, np.mean's where= (JAX's reducer tests) -----------------------

ROW = np.array([True, False, True, True])


def sum_where(x): return np.sum(x, axis=1, where=MASK)
def sum_initial(x): return np.sum(x, initial=2.0)
def sum_where_initial_kept(x): return np.sum(x, axis=0, where=MASK, initial=1.0, keepdims=True)
def sum_where_row(x): return np.sum(x, where=ROW)
def sum_where_two_axes(x): return np.sum(x, axis=(0, 2), where=ROW, keepdims=True)
def method_sum_where(x): return x.sum(axis=-1, where=MASK)
def mean_where(x): return np.mean(x, axis=0, where=MASK)
def mean_where_all(x): return np.mean(x, where=MASK)
def mean_where_last_kept(x): return np.mean(x, axis=-1, where=ROW, keepdims=True)
def mean_where_two_axes(x): return np.mean(x, axis=(0, 2), where=ROW)
def sum_initial_differentiated(x): return np.sum(x, initial=x[0, 0])

WHERE = [
    (sum_where, A), (sum_initial, A), (sum_where_initial_kept, A), (sum_where_row, A),
    (sum_where_two_axes, B), (method_sum_where, A), (mean_where, A), (mean_where_all, A),
    (mean_where_last_kept, B), (mean_where_two_axes, B),
]


@pytest.mark.parametrize("f, x", WHERE, ids=[f.__name__ for f, _ in WHERE])
def test_sum_and_mean_with_where_and_initial(f, x):
    # refused before with "the JVP rule for `np.sum` does not accept this call"
    check_both_modes(f, (x,))
    rows = numerical_jacobian(f, (x,), (0,))[0]
    for jac in (s2sad.jacfwd, s2sad.jacrev):
        assert_close(np.reshape(jac(f)(x), rows.shape), rows, rtol=1e-6, atol=1e-8)
    assert s2sad.check_grads(f, (x,), order=2)


def test_masked_entries_get_no_derivative():
    assert np.array_equal(s2sad.grad(sum_where_row)(A), np.broadcast_to(ROW, A.shape) * 1.0)
    g = s2sad.grad(mean_where_all)(A)
    assert_close(g, MASK / np.sum(MASK), rtol=1e-15, atol=0.0)


def test_a_differentiated_initial_is_refused_where_written():
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.grad(sum_initial_differentiated)(A)
    assert type(err.value).__name__ == "NonDifferentiableError"
    assert "initial" in str(err.value) and err.value.filename == __file__


def sum_two_axes(x): return np.sum(x, axis=(0, 2))
def mean_two_axes_weighted(x): return np.mean(x, axis=(0, 2)) * np.array([1.0, 2.0, 3.0])
def expand_two_axes_times(x): return np.expand_dims(np.sum(x, axis=(0, 2)), (0, 2)) * x


@pytest.mark.parametrize("f", [sum_two_axes, mean_two_axes_weighted, expand_two_axes_times],
                         ids=lambda f: f.__name__)
def test_jacrev_of_a_reduction_over_a_tuple_of_axes(f):
    # vector mode normalised np.expand_dims's axes (0, 2) modulo rank + 1, not rank + 2:
    # (0, 0), and NumPy raised "repeated axis" inside the generated code
    rows = numerical_jacobian(f, (B,), (0,))[0]
    for jac in (s2sad.jacrev, s2sad.jacfwd):
        assert_close(np.reshape(jac(f)(B), rows.shape), rows, rtol=1e-6, atol=1e-8)


# -- det at singular matrices (JAX's linalg_test: the gradient of det at a singular matrix) ------

def determinant(a): return np.linalg.det(a)
def determinants_weighted(a): return np.sum(np.linalg.det(a) * np.array([1.0, -2.0]))


def cofactors(a):
    """The textbook cofactor matrix: signed minors."""
    n = a.shape[0]
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1))
                      for j in range(n)] for i in range(n)])


RANK_TWO = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])


def test_det_derivative_at_a_singular_matrix_is_its_cofactor_matrix():
    # NumPy raised LinAlgError("Singular matrix") inside the generated code (the rules
    # multiplied det by inv(a)); the derivative of det is the cofactor matrix, defined there
    assert np.linalg.det(RANK_TWO) == 0.0
    expected = cofactors(RANK_TWO)
    assert_close(s2sad.grad(determinant)(RANK_TWO), expected, rtol=1e-12, atol=1e-12)
    direction = np.arange(9.0).reshape(3, 3) / 9.0
    _, t = s2sad.jvp(determinant)(RANK_TWO, direction)
    assert_close(t, np.sum(expected * direction), rtol=1e-12, atol=1e-12)
    # rank 1 (n - 2): every minor vanishes
    rank_one = np.outer([1.0, 2.0, 0.5], [0.3, -1.0, 2.0])
    assert_close(s2sad.grad(determinant)(rank_one), np.zeros((3, 3)), rtol=0.0, atol=1e-12)
    # a stack with one singular matrix
    well = R.standard_normal((3, 3)) + 3.0 * np.eye(3)
    g = s2sad.grad(determinants_weighted)(np.stack([well, RANK_TWO]))
    assert_close(g[0], cofactors(well), rtol=1e-10, atol=1e-12)
    assert_close(g[1], -2.0 * expected, rtol=1e-12, atol=1e-12)


def test_det_derivatives_at_invertible_matrices_to_second_order():
    well = R.standard_normal((3, 3)) + 3.0 * np.eye(3)
    check_both_modes(determinant, (well,))
    stack = np.stack([well, well.T + np.eye(3)])
    check_both_modes(determinants_weighted, (stack,))
    assert s2sad.check_grads(determinant, (well,), order=2)
    assert s2sad.check_grads(determinants_weighted, (stack,), order=2)
    # d^2 det / da_ij da_kl at the identity: 1 for (i, j, k, l) = (i, i, k, k), i != k, -1 for
    # (i, k, k, i), i != k
    h = s2sad.hessian(determinant)(np.eye(3))
    expected = np.zeros((3, 3, 3, 3))
    for i in range(3):
        for k in range(3):
            if i != k:
                expected[i, i, k, k] = 1.0
                expected[i, k, k, i] = -1.0
    assert_close(h, expected, rtol=1e-12, atol=1e-12)


# -- what s2sad refuses, where the user wrote it ----------------------------------------------

def sum_float32_dtype(x): return np.sum(x, dtype=np.float32)
def mean_float64_dtype(x): return np.mean(x, axis=0, dtype=np.float64)
def ravel_by_layout(x): return np.ravel(x, order="A")  # (order="F" is covered)
def reshape_by_layout(x): return np.reshape(x, (4, 3), order="A")
def covariance(x): return np.cov(x)
def correlation(x): return np.corrcoef(x)
def unwrap_phase(x): return np.unwrap(x * 4.0)
def ldexp_by_three(x): return np.ldexp(x, 3)
def modf_parts(x):
    frac, whole = np.modf(x)
    return frac * whole
def nextafter_up(x): return np.nextafter(x, 2.0)
def matrix_norm_of(x): return np.linalg.matrix_norm(x)
def clip_differentiated_bound(a, lo): return np.clip(a, lo, 1.2)

def test_a_reduction_with_dtype_differentiates_as_a_cast():
    """np.sum(x, dtype=...) was refused; it is the reduction of x cast to dtype (issue 33).
    (Linear: central differences with a wide step, as float32 sums round.)"""
    x = A.astype(np.float64)
    for f in (sum_float32_dtype, mean_float64_dtype):
        g = s2sad.grad(lambda v: np.sum(f(v)))(x)  # noqa: B023
        assert g.dtype == np.float64  # a cotangent has its primal's dtype
        assert_close(g, numerical_grad(lambda v: np.sum(f(v)), (x,), (0,), eps=0.5)[0],  # noqa: B023, E501
                     rtol=1e-4, atol=1e-6)


REFUSED = [
    (ravel_by_layout, "order"),
    (reshape_by_layout, "order"),
    (covariance, "np.cov"), (correlation, "np.corrcoef"),
    (unwrap_phase, "np.unwrap"), (ldexp_by_three, "np.ldexp"), (modf_parts, "np.modf"),
    (nextafter_up, "np.nextafter"),
    (matrix_norm_of, "matrix_norm"),
]


@pytest.mark.parametrize("f, word", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_refused_with_the_users_line(f, word):
    x = B if f is matrix_norm_of else A
    for transform in (s2sad.vjp, s2sad.jvp):
        with pytest.raises(s2sad.S2SADError) as err:
            if transform is s2sad.jvp:
                transform(f)(x, np.ones_like(x))
            else:
                transform(f)(x)
        assert type(err.value).__name__ == "MissingRuleError"
        assert word in str(err.value)
        assert err.value.filename == __file__ and err.value.lineno is not None
        assert "^" in str(err.value)


def test_a_differentiated_clip_bound_is_refused():
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.vjp(clip_differentiated_bound)(A, A * 0.9)
    assert type(err.value).__name__ == "NonDifferentiableError"
    assert err.value.filename == __file__


# -- precision: float32 in, float32 out; a float64 argument keeps float64 ----------------------

X32 = np.array([0.5, 1.0, 1.5], dtype=np.float32)


def sin_times(x): return np.sum(np.sin(x) * x)
def sin_elementwise(x): return np.sin(x) * 2.0
def weighted(x, w): return np.sum(x * w)


def test_float32_arguments_get_float32_derivatives():
    x = X32.astype(np.float64)
    g = s2sad.grad(sin_times)(X32)
    assert g.dtype == np.float32
    assert_close(g.astype(np.float64), np.cos(x) * x + np.sin(x), rtol=1e-6, atol=1e-6)
    out, t = s2sad.jvp(sin_elementwise)(X32, np.ones(3, np.float32))
    assert out.dtype == np.float32 and t.dtype == np.float32
    assert_close(t.astype(np.float64), 2.0 * np.cos(x), rtol=1e-6, atol=1e-6)
    _, pullback = s2sad.vjp(sin_elementwise)(X32)
    (g,) = pullback(np.ones(3, np.float32))
    assert g.dtype == np.float32
    assert s2sad.hessian(sin_times)(X32).dtype == np.float32
    gx, gw = s2sad.grad(weighted, wrt=(0, 1))(X32, np.ones(3))
    assert gx.dtype == np.float32 and gw.dtype == np.float64


def through_astype(x): return np.sum(x.astype(np.float32) ** 2)
def through_astype_name(x): return np.sum(x.astype("float32") * 3.0)
def through_np_float32(x): return np.sum(np.float32(x) ** 2)
def through_asarray(x): return np.sum(np.asarray(x, dtype=np.float32) ** 2)
def through_array(x): return np.sum(np.array(x, dtype=np.float32) ** 2)
def through_np_astype(x): return np.sum(np.astype(x, np.float32) ** 2)
def sin_through_astype(x): return np.sin(x.astype(np.float32))
def scalar_through_astype(x): return x.astype(np.float32) * 2.0
def complex_through_astype(x): return np.abs(np.sum(x.astype(np.complex128) * (1 + 2j)))


@pytest.mark.parametrize("f", [through_astype, through_np_float32, through_asarray,
                               through_array, through_np_astype],
                         ids=lambda f: f.__name__)
def test_a_float64_argument_cast_to_float32_keeps_a_float64_cotangent(f):
    # JAX: a cotangent has its primal's dtype. These came back float32 (the cast's cotangent
    # passed through as it came); the value is 2 * float32(x), the analytic derivative
    a = np.array([[0.3, 1.2], [1.5, 0.7]])
    g = s2sad.grad(f)(a)
    assert g.dtype == np.float64
    assert_close(g, 2.0 * a.astype(np.float32).astype(np.float64), rtol=1e-12, atol=0.0)
    _, pullback = s2sad.vjp(f)(a)
    assert pullback(np.float32(1.0))[0].dtype == np.float64


def test_cast_cotangents_keep_shape_kind_and_value():
    a = np.array([[0.3, 1.2], [1.5, 0.7]])
    assert s2sad.grad(through_astype_name)(a).dtype == np.float64
    _, pullback = s2sad.vjp(sin_through_astype)(a)
    (g,) = pullback(np.ones((2, 2), np.float32))
    assert g.dtype == np.float64
    assert_close(g, np.cos(a.astype(np.float32)).astype(np.float64), rtol=1e-12, atol=0.0)
    assert s2sad.jacrev(sin_through_astype)(a).dtype == np.float64
    for x in (np.float64(1.5), np.array(1.5)):
        g = s2sad.grad(scalar_through_astype)(x)
        assert g == 2.0 and np.ndim(g) == 0
    # a real argument cast to complex: a real cotangent (the real part), as before
    g = s2sad.grad(complex_through_astype)(a)
    assert g.dtype == np.float64
    assert_close(g, np.full((2, 2), np.sqrt(5.0)), rtol=1e-12, atol=1e-15)
    # a float32 argument keeps float32
    assert s2sad.grad(through_astype)(a.astype(np.float32)).dtype == np.float32


# -- integer and bool arguments beside float ones ---------------------------------------------

def power_int(x, n): return x ** n
def masked_sum(x, m): return np.sum(x * m)
def branch_on_flag(x, flag): return x * 2.0 if flag else x * 3.0
def integer_part_times(x): return np.sum(x.astype(int) * x)
def gather_by_int(x, i): return np.sum(x[i] ** 2)


def test_integer_and_bool_arguments_pass_through():
    assert s2sad.grad(power_int)(2.0, 3) == 12.0
    assert np.array_equal(s2sad.grad(masked_sum)(np.ones(3), np.array([True, False, True])),
                          [1.0, 0.0, 1.0])
    assert s2sad.grad(branch_on_flag)(2.0, True) == 2.0
    assert s2sad.grad(branch_on_flag)(2.0, False) == 3.0
    a = np.array([[0.3, 1.2], [1.5, 0.7]])
    # d/dx sum(int(x) * x) = int(x) away from the integers
    assert np.array_equal(s2sad.grad(integer_part_times)(a), [[0.0, 1.0], [1.0, 0.0]])
    g = s2sad.grad(gather_by_int)(np.array([0.5, 1.0, 2.0]), np.array([2, 0, 2]))
    assert np.array_equal(g, [1.0, 0.0, 8.0])
    check_both_modes(power_int, (1.3, 3), wrt=(0,))


@pytest.mark.parametrize("f, args, wrt", [
    (power_int, (2.0, 3), 1), (branch_on_flag, (2.0, True), 1),
    (masked_sum, (np.ones(3), np.array([True, False, True])), 1),
    (masked_sum, (np.ones(3), np.array([1, 2, 3])), 1),
    (power_int, (2, 3), 0),
])
def test_differentiating_with_respect_to_an_integer_or_bool_is_refused(f, args, wrt):
    # JAX raises a TypeError for integer and bool inputs to grad; s2sad a WrtError
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.grad(f, wrt=wrt)(*args)
    assert type(err.value).__name__ == "WrtError"
    assert "int" in str(err.value) or "bool" in str(err.value)


# -- conventions at ties and kinks (JAX's) ----------------------------------------------------

def relu(x): return np.maximum(x, 0.0)
def negative_part(x): return np.minimum(x, 0.0)
def largest(x): return np.max(x)
def smallest_sorted(x): return np.sort(x)[0]
def magnitude(x): return np.abs(x)
def square_by_power(x): return x ** 2.0


def test_ties_and_kinks_follow_jax():
    # a tie of maximum/minimum splits the derivative evenly; max over ties averages
    assert s2sad.grad(relu)(0.0) == 0.5 and s2sad.jvp(relu)(0.0, 1.0)[1] == 0.5
    assert s2sad.grad(negative_part)(0.0) == 0.5
    assert np.array_equal(s2sad.grad(largest)(np.array([1.0, 3.0, 3.0])), [0.0, 0.5, 0.5])
    # abs at 0 and x ** 2.0 at 0: 0, not nan
    assert s2sad.grad(magnitude)(0.0) == 0.0
    assert s2sad.grad(square_by_power)(0.0) == 0.0
    # sort of ties: each output position takes one input's derivative
    g = s2sad.grad(smallest_sorted)(np.array([1.0, 1.0, 2.0]))
    assert np.sum(g) == 1.0 and np.all(g >= 0.0)


# -- API semantics (JAX's api_test: argnums, containers, closures, nesting) --------------------

def product(x, y): return x * y
def product_of_items(t): return t[0] * t[1]
def product_of_entries(d): return d["a"] * d["b"]
def scaled(x, *, scale=2.0): return x * scale
def with_default(x, y=2.0): return x * y


def make_closure(c):
    def times_c(x):
        return np.sin(x) * c
    return times_c


def square(x): return x * x
def uses_a_gradient(x): return s2sad.grad(square)(x) * x


def test_wrt_indices_names_and_tuples():
    assert s2sad.grad(product)(2.0, 3.0) == 3.0
    assert s2sad.grad(product, wrt=1)(2.0, 3.0) == 2.0
    assert s2sad.grad(product, wrt=-1)(2.0, 3.0) == 2.0
    assert s2sad.grad(product, wrt="y")(2.0, 3.0) == 2.0
    assert s2sad.grad(product, wrt=(1, 0))(2.0, 3.0) == (2.0, 3.0)
    assert s2sad.grad(product, wrt=(0,))(2.0, 3.0) == (3.0,)
    value, g = s2sad.value_and_grad(product, wrt=(0, 1))(2.0, 3.0)
    assert value == 6.0 and g == (3.0, 2.0)


def test_an_empty_wrt_gives_an_empty_tuple():
    # grad, jacfwd and jacrev returned None: the generated `return ()` lost its parentheses
    # and read `return` (value_and_grad and the pullback gave () already)
    assert s2sad.grad(product, wrt=())(2.0, 3.0) == ()
    assert s2sad.jacfwd(product, wrt=())(2.0, 3.0) == ()
    assert s2sad.jacrev(product, wrt=())(2.0, 3.0) == ()
    assert s2sad.value_and_grad(product, wrt=())(2.0, 3.0) == (6.0, ())
    assert s2sad.vjp(product, wrt=())(2.0, 3.0)[1](1.0) == ()
    source = s2sad.grad(product, wrt=()).source
    assert "return ()" in source and "with respect to no argument (wrt=())" in source


@pytest.mark.parametrize("wrt, word", [(5, "out of range"), ((0, 0), "twice"), ("z", "z")])
def test_a_bad_wrt_is_refused(wrt, word):
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.grad(product, wrt=wrt)(2.0, 3.0)
    assert type(err.value).__name__ == "WrtError" and word in str(err.value)


def test_containers_keywords_defaults_and_closures():
    assert s2sad.grad(product_of_items)((2.0, 3.0)) == (3.0, 2.0)
    assert s2sad.grad(product_of_items)([2.0, 3.0]) == [3.0, 2.0]
    assert s2sad.grad(product_of_entries)({"a": 2.0, "b": 3.0}) == {"a": 3.0, "b": 2.0}
    assert s2sad.grad(scaled)(3.0, scale=5.0) == 5.0  # keyword-only: passed through
    assert s2sad.grad(with_default)(3.0) == 2.0
    assert s2sad.grad(with_default, wrt=1)(3.0) == 3.0
    assert s2sad.grad(with_default, wrt=(0, 1))(3.0, y=4.0) == (4.0, 3.0)
    f = make_closure(1.7)
    assert_close(s2sad.grad(f)(0.4), 1.7 * np.cos(0.4), rtol=1e-14, atol=0.0)


def test_nested_derivatives():
    assert s2sad.grad(uses_a_gradient)(2.0) == 8.0  # d/dx (2x * x)
    x = 0.7
    assert_close(s2sad.grad(s2sad.grad(np.sin))(x), -np.sin(x), rtol=1e-14, atol=0.0)
    assert_close(s2sad.grad(s2sad.grad(s2sad.grad(np.sin)))(x), -np.cos(x), rtol=1e-14, atol=0.0)
    assert_close(s2sad.jvp(np.sin)(x, 2.0), (np.sin(x), 2.0 * np.cos(x)), rtol=1e-14, atol=0.0)


def not_scalar(x): return np.sin(x)
def pair_out(x): return x, x


def test_grad_needs_one_real_scalar_output():
    for f in (not_scalar, pair_out):
        with pytest.raises(s2sad.S2SADError) as err:
            s2sad.grad(f)(np.ones(3))
        assert type(err.value).__name__ == "NonDifferentiableError"


def test_tangents_and_cotangents_of_the_wrong_shape_are_refused():
    with pytest.raises(ValueError, match="shape"):
        s2sad.jvp(sin_elementwise)(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="shape"):
        s2sad.vjp(sin_elementwise)(np.ones(3))[1](np.ones(2))

