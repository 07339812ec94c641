"""Rules added in session 11 for what JAX's and autograd's users call and s2sad refused:
NaN-aware products, spreads and scans (np.nanprod, np.nanvar, np.nanstd, np.nancumsum,
np.nancumprod). JVP and VJP against finite differences and each other (check_both_modes),
vector mode (jacfwd, jacrev) against the same, and second order with s2sad.check_grads for a
representative case of each rule; the rule table's cases and property specs cover each
rule's argument space as well."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_jvp
from tests.rules.test_issue13_regressions import check_both_modes

R = np.random.default_rng(1111)
X = R.uniform(0.5, 1.5, (3, 4))
X3 = R.uniform(0.5, 1.5, (2, 3, 4))
HOLES = np.where(np.arange(12).reshape(3, 4) % 5 == 1, np.nan, 0.0)
HOLES3 = np.where(np.arange(24).reshape(2, 3, 4) % 7 == 2, np.nan, 0.0)


# -- NaN-aware reductions and scans: NaN entries get no derivative --------------------------

def nanprod_columns(x): return np.nanprod(x + HOLES, axis=0)
def nanprod_all(x): return np.nanprod(x + HOLES)
def nanprod_tuple_kept(x): return np.nanprod(x + HOLES3, axis=(0, -1), keepdims=True)
def nanvar_rows_ddof(x): return np.nanvar(x + HOLES, axis=1, ddof=1)
def nanvar_all(x): return np.nanvar(x + HOLES)
def nanvar_tuple_kept(x): return np.nanvar(x + HOLES3, axis=(-1, 1), keepdims=True)
def nanstd_all(x): return np.nanstd(x + HOLES)
def nanstd_columns_ddof_kept(x): return np.nanstd(x + HOLES, axis=-2, ddof=1, keepdims=True)
def nanstd_tuple(x): return np.nanstd(x + HOLES3, axis=(0, 2))
def nancumsum_columns(x): return np.nancumsum(x + HOLES, axis=0)
def nancumsum_flat(x): return np.nancumsum(x + HOLES)
def nancumsum_last(x): return np.nancumsum(x + HOLES3, axis=-1)
def nancumprod_rows(x): return np.nancumprod(x + HOLES, axis=1)
def nancumprod_flat(x): return np.nancumprod(x + HOLES)
def nancumprod_middle(x): return np.nancumprod(x + HOLES3, axis=-2)
def nan_free_matches_plain(x): return np.nanvar(x, axis=0) + np.nanprod(x, axis=1)[0]

NAN_CASES = [nanprod_columns, nanprod_all, nanprod_tuple_kept, nanvar_rows_ddof, nanvar_all,
             nanvar_tuple_kept, nanstd_all, nanstd_columns_ddof_kept, nanstd_tuple,
             nancumsum_columns, nancumsum_flat, nancumsum_last, nancumprod_rows,
             nancumprod_flat, nancumprod_middle, nan_free_matches_plain]


def arg_for(f):
    return X3 if f in (nanprod_tuple_kept, nanvar_tuple_kept, nanstd_tuple, nancumsum_last,
                       nancumprod_middle) else X


@pytest.mark.parametrize("f", NAN_CASES, ids=[f.__name__ for f in NAN_CASES])
def test_nan_aware_reductions_and_scans(f):
    x = arg_for(f)
    jtu = check_both_modes(f, (x,))
    holes = np.isnan(HOLES3 if x is X3 else HOLES)
    if f is not nan_free_matches_plain:
        assert np.all(jtu[0][holes] == 0.0), "a NaN entry gets no derivative"
    for jac in (s2sad.jacfwd, s2sad.jacrev):  # vector mode
        J = np.reshape(jac(f)(x), (np.size(f(x)), np.size(x)))
        for k, v in enumerate(np.eye(np.size(x))[:3]):
            v = v.reshape(x.shape)
            assert_close(J @ v.ravel(), np.ravel(numerical_jvp(f, (x,), (0,), (v,))),
                         rtol=1e-5, atol=1e-7, check_kind=False)


@pytest.mark.parametrize("f", [nanprod_columns, nanvar_rows_ddof, nanstd_all,
                               nancumsum_columns, nancumprod_rows, nanvar_tuple_kept])
def test_nan_aware_second_order(f):
    assert s2sad.check_grads(f, (arg_for(f),), order=2)


def nancumprod_with_zero(x): return np.nancumprod(x * np.array([1.0, 0.0, 1.0, 1.0]) + HOLES[0])


def test_nancumprod_at_a_zero_factor_is_exact():
    check_both_modes(nancumprod_with_zero, (X[0],))


def nanvar_complex(z): return np.nanvar(z * 1j, axis=0)
def nanstd_complex(z): return np.nanstd(z * 1j)


@pytest.mark.parametrize("f", [nanvar_complex, nanstd_complex])
def test_nan_spreads_refuse_a_complex_argument_where_written(f):
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.vjp(f)(X)
    assert "complex" in str(err.value)
    assert err.value.filename == __file__ and err.value.lineno is not None


# -- where= (and initial=) of np.prod, np.max/np.min, np.var, np.std --------------------------

KEEP = np.array([[True, False, True, True], [False, True, True, False], [True, True, False, True]])
KEEP_ROW = [True, False, True, True]  # a list, broadcast along the last axis

def prod_where_rows(x): return np.prod(x, axis=-1, where=KEEP)
def prod_where_list_initial(x): return np.prod(x, where=KEEP_ROW, initial=2.0)
def prod_initial_kept(x): return np.prod(x, axis=0, keepdims=True, initial=0.5)
def prod_where_tuple(x): return np.prod(x, axis=(0, 2), where=KEEP_ROW, initial=-1.5)
def max_where_rows(x): return np.max(x, axis=1, where=KEEP, initial=0.0)
def max_initial_wins_somewhere(x): return np.max(x, axis=0, initial=1.2)
def amin_where_kept(x): return np.amin(x, axis=(0,), keepdims=True, where=KEEP_ROW, initial=5.0)
def min_where_all(x): return np.min(x, where=KEEP, initial=0.7)
def method_max_where(x): return x.max(axis=-1, where=KEEP_ROW, initial=-1.0)
def nanmax_initial(x): return np.nanmax(x + HOLES, axis=-1, initial=1.0)
def var_where_rows(x): return np.var(x, axis=1, where=KEEP)
def var_where_list_ddof(x): return np.var(x, where=KEEP_ROW, ddof=1)
def var_where_tuple_kept(x): return np.var(x, axis=(0, -1), keepdims=True, where=KEEP_ROW)
def std_where_all(x): return np.std(x, where=KEEP)
def std_where_columns_ddof(x): return np.std(x, axis=-2, ddof=1, keepdims=True, where=KEEP)
def method_std_where(x): return x.std(axis=0, where=KEEP)

WHERE_CASES = [prod_where_rows, prod_where_list_initial, prod_initial_kept, prod_where_tuple,
               max_where_rows, max_initial_wins_somewhere, amin_where_kept, min_where_all,
               method_max_where, nanmax_initial, var_where_rows, var_where_list_ddof,
               var_where_tuple_kept, std_where_all, std_where_columns_ddof, method_std_where]
X_DISTINCT = (np.linspace(0.1, 1.9, 12) + R.uniform(0, 0.01, 12))[R.permutation(12)].reshape(3, 4)


@pytest.mark.parametrize("f", WHERE_CASES, ids=[f.__name__ for f in WHERE_CASES])
def test_where_and_initial_of_reductions(f):
    x = X3 if f is prod_where_tuple else X_DISTINCT
    check_both_modes(f, (x,))
    for jac in (s2sad.jacfwd, s2sad.jacrev):  # vector mode: the mask lines up with the batch
        J = np.reshape(jac(f)(x), (np.size(f(x)), np.size(x)))
        for v in np.eye(np.size(x)):
            v = v.reshape(x.shape)
            assert_close(J @ v.ravel(), np.ravel(numerical_jvp(f, (x,), (0,), (v,))),
                         rtol=1e-5, atol=1e-7, check_kind=False)


def test_where_left_out_entries_and_a_winning_initial_get_no_derivative():
    assert np.all(s2sad.grad(prod_where_list_initial)(X)[:, 1] == 0.0)
    # initial 1.2 is above every entry of some columns: those get nothing
    x = np.array([[0.1, 1.5, 0.3, 1.8], [0.4, 0.2, 1.7, 0.5], [0.6, 0.9, 0.7, 1.1]])
    g = s2sad.vjp(max_initial_wins_somewhere)(x)[1](np.ones(4))[0]
    wins = np.max(x, axis=0) < 1.2
    assert np.any(wins) and np.all(g[:, wins] == 0.0)
    assert_close(np.sum(g, axis=0), (~wins).astype(float))


@pytest.mark.parametrize("f", [prod_where_rows, max_where_rows, var_where_list_ddof,
                               std_where_all, prod_initial_kept])
def test_where_second_order(f):
    assert s2sad.check_grads(f, (X_DISTINCT,), order=2)


def var_where_complex(z): return np.var(z, axis=1, where=KEEP)
def std_where_complex(z): return np.std(z, where=KEEP_ROW)


@pytest.mark.parametrize("f", [var_where_complex, std_where_complex])
def test_var_and_std_where_of_a_complex_argument(f):
    z = X + 1j * X[::-1]
    assert s2sad.check_grads(f, (z,))


def sum_where_list(x): return np.sum(x, axis=0, where=KEEP_ROW)


def test_jacrev_of_a_sum_with_a_where_list():
    # regression: vector mode left a constant list operand of np.where (the rule's selection
    # of the kept entries) unexpanded, so it broadcast along the batch axis: jacrev of
    # np.sum(x, where=[...]) was all ones (batch.py now gives it the trailing unit axis)
    J = s2sad.jacrev(sum_where_list)(X)
    assert_close(J, s2sad.jacfwd(sum_where_list)(X))
    assert np.all(J[:, :, 1] == 0.0) and np.sum(J) == 3 * 3


# -- np.median, np.quantile, np.percentile (method "linear"; q not differentiated) -----------

def median_rows(x): return np.median(x, axis=1)
def median_all(x): return np.median(x)
def median_tuple(x): return np.median(x, axis=(-1, 0))
def quantile_columns(x): return np.quantile(x, 0.3, axis=0)
def quantile_tuple_kept(x): return np.quantile(x, 0.7, axis=(0, 2), keepdims=True)
def quantile_ends(x): return np.quantile(x, 0.0, axis=1) + np.quantile(x, 1.0, axis=-1)
def percentile_rows_kept(x): return np.percentile(x, 40.0, axis=-1, keepdims=True)
def percentile_all(x): return np.percentile(x, 100.0 / 3.0)

QUANTILE_CASES = [median_rows, median_all, median_tuple, quantile_columns, quantile_tuple_kept,
                  quantile_ends, percentile_rows_kept, percentile_all]


@pytest.mark.parametrize("f", QUANTILE_CASES, ids=[f.__name__ for f in QUANTILE_CASES])
def test_median_and_quantiles(f):
    x = X3 if f in (median_tuple, quantile_tuple_kept) else X
    check_both_modes(f, (x,))
    for jac in (s2sad.jacfwd, s2sad.jacrev):
        J = np.reshape(jac(f)(x), (np.size(f(x)), np.size(x)))
        for v in np.eye(np.size(x))[:5]:
            v = v.reshape(x.shape)
            assert_close(J @ v.ravel(), np.ravel(numerical_jvp(f, (x,), (0,), (v,))),
                         rtol=1e-5, atol=1e-7, check_kind=False)


@pytest.mark.parametrize("f", [median_rows, quantile_columns, percentile_all])
def test_quantiles_second_order(f):
    assert s2sad.check_grads(f, (X,), order=2)


def test_median_of_an_even_count_is_the_mean_of_the_middle_two():
    # textbook: the median of 4 numbers averages the 2nd and 3rd smallest
    x = np.array([0.9, -0.4, 0.3, 1.7])
    assert_close(s2sad.grad(median_of)(x), np.array([0.5, 0.0, 0.5, 0.0]))


def median_of(x): return np.median(x)


def test_quantile_ties_follow_the_sort_rule():
    # np.sort's rule ranks tied entries in order (a stable sort): the median of
    # [1, 1, 1] is the entry ranked second, the second one
    x = np.array([1.0, 1.0, 1.0])
    assert_close(s2sad.grad(median_of)(x), np.array([0.0, 1.0, 0.0]))
    assert_close(s2sad.grad(median_of)(x), s2sad.grad(sorted_middle)(x))


def sorted_middle(x): return np.sort(x)[1]


def quantile_several(x): return np.quantile(x, [0.2, 0.5])
def quantile_nearest(x): return np.quantile(x, 0.2, method="nearest")
def quantile_differentiated_q(x, q): return np.quantile(x, q)
def median_complex(z): return np.median(z * 1j)


@pytest.mark.parametrize("f, args, word", [
    (quantile_several, (X,), "several quantiles"),
    (quantile_nearest, (X,), "method='nearest'"),
    (quantile_differentiated_q, (X, 0.3), "`q`"),
    (median_complex, (X,), "complex"),
])
def test_quantile_options_without_a_rule_are_refused_where_written(f, args, word):
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.vjp(f)(*args)
    assert word in str(err.value)
    assert err.value.filename == __file__ and err.value.lineno is not None


# -- np.logaddexp / np.logaddexp2 at infinite arguments (JAX gives finite derivatives) ------

def logaddexp_of(x, y): return np.logaddexp(x, y)
def logaddexp2_of(x, y): return np.logaddexp2(x, y)


@pytest.mark.parametrize("f", [logaddexp_of, logaddexp2_of])
@pytest.mark.parametrize("x, y, expected", [
    (np.inf, 0.0, (1.0, 0.0)), (0.0, np.inf, (0.0, 1.0)), (-np.inf, 0.3, (0.0, 1.0)),
    (-np.inf, -np.inf, (0.5, 0.5)), (np.inf, np.inf, (0.5, 0.5)), (0.3, 0.3, (0.5, 0.5)),
])
def test_logaddexp_at_infinite_arguments(f, x, y, expected):
    # analytic: the shares are the softmax weights of (x, y) (base 2 for logaddexp2), their
    # limits at infinities; NaN before (exp(inf - inf))
    with np.errstate(all="raise"):
        _, pullback = s2sad.vjp(f)(x, y)
        assert_close(pullback(1.0), expected, rtol=1e-12, atol=0.0)
        for i in (0, 1):
            t = (1.0, 0.0) if i == 0 else (0.0, 1.0)
            assert_close(s2sad.jvp(f)(x, y, *t)[1], expected[i], rtol=1e-12, atol=0.0)


@pytest.mark.parametrize("f", [logaddexp_of, logaddexp2_of])
def test_logaddexp_finite_arguments_still_second_order(f):
    x, y = np.array([0.3, -1.2, 2.0]), np.array([0.3, 0.5, -0.7])
    assert s2sad.check_grads(f, (x, y), order=2)
    check_both_modes(f, (x, y))


# -- np.cumulative_sum (NumPy >= 2.1) ---------------------------------------------------------

def cumulative_sum_initial(x): return np.cumulative_sum(x, axis=1, include_initial=True)
def cumulative_sum_rows(x): return np.cumulative_sum(x, axis=-2)
def cumulative_sum_vector(x): return np.cumulative_sum(x[0], include_initial=True)


@pytest.mark.skipif(not hasattr(np, "cumulative_sum"), reason="NumPy < 2.1")
@pytest.mark.parametrize("f", [cumulative_sum_initial, cumulative_sum_rows,
                               cumulative_sum_vector])
def test_cumulative_sum(f):
    check_both_modes(f, (X,))
    assert s2sad.check_grads(f, (X,), order=2)
    assert_close(s2sad.jacrev(f)(X), s2sad.jacfwd(f)(X))


# -- np.ediff1d ---------------------------------------------------------------------------------

def ediff1d_matrix(x): return np.ediff1d(x)
def ediff1d_constant_parts(x): return np.ediff1d(x, to_begin=[1.0], to_end=2.0)
def ediff1d_differentiated_parts(x, b): return np.ediff1d(x[0], b * 2.0, b[::-1])


@pytest.mark.parametrize("f, args", [
    (ediff1d_matrix, (X,)), (ediff1d_constant_parts, (X[1],)),
    (ediff1d_differentiated_parts, (X, np.array([0.3, -0.4]))),
])
def test_ediff1d(f, args):
    check_both_modes(f, args)
    assert s2sad.check_grads(f, args, order=2)
    J = s2sad.jacrev(f, wrt=0)(*args)
    assert_close(np.reshape(J, (-1, np.size(args[0]))) @ np.ravel(args[0]),
                 np.ravel(numerical_jvp(f, args, (0,), (args[0],))), rtol=1e-5, atol=1e-7,
                 check_kind=False)
