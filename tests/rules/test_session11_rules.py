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
