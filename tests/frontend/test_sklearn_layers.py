"""Seeing through a library's validation and array-API layers: what lowering knows of an
array argument (a NumPy array of known rank and dtype letter) decides `isinstance`,
`issparse`, `x.ndim` and `len(x.shape)` while compiling, and carries on through
conversions, reshapes and elementwise arithmetic; a dtype known only where the code runs
(`x.dtype`, np.result_type) keeps its letter in its kind. On top of these, scikit-learn's
check_array, _find_matching_floating_dtype and friends are seen through for NumPy arrays
(s2sad/frontend/library_shims.py), their checks run as written.

Every derivative is checked against central finite differences, in both modes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for


class Sparse:
    """Stands for a sparse matrix class: a branch for it uses what arrays do not have."""


NAMES = {"numpy", "array_api_compat.numpy"}


def check_both_modes(f, args, wrt=0, rtol=1e-6):
    expected = numerical_grad(f, args, (wrt,))[0]
    assert_close(s2sad.grad(f, wrt=wrt)(*args), expected, rtol=rtol, what="grad")
    v = rng_for(f.__name__, "tangent").standard_normal(np.shape(args[wrt]))
    tangents = [np.zeros_like(a) for a in args]
    tangents[wrt] = v
    _, out_dot = s2sad.jvp(f, wrt=wrt)(*args, v)
    # (the tangent of float(...) is a 0-d array: the JVP of float() passes it through)
    assert_close(out_dot, numerical_jvp(f, args, (wrt,), [v]), rtol=rtol, what="jvp",
                 check_kind=False)


# --------------------------------------------------------------------------------------
# facts of array arguments
# --------------------------------------------------------------------------------------


def sparse_branch(x, y):
    if isinstance(x, Sparse) or any([isinstance(x, Sparse), isinstance(y, Sparse)]):
        return x.tocsr().sum()  # (never lowered: x is an array)
    if not isinstance(x, np.ndarray) and not isinstance(x, Sparse):
        x = np.asarray(x)
    return np.sum(x * y)


def sparse_branch_of_results(x):
    z = np.log1p(np.reshape(x, (-1, 1)).T) * 2.0
    dense = z.ndim == 2 and not isinstance(z, Sparse)
    if not dense or z.ndim > 2:
        return z.data.sum()  # (never lowered)
    if len(z.shape) == 1:
        return z.tocsr()  # (never lowered)
    return np.sum(z ** 2)


def test_isinstance_of_an_array_is_decided_while_compiling():
    r = rng_for("sparse_branch")
    x, y = r.uniform(0.5, 1.5, (3, 2)), r.uniform(-1, 1, (3, 2))
    check_both_modes(sparse_branch, (x, y))
    source = s2sad.grad(sparse_branch).source_for(x, y)
    assert "tocsr" not in source and "isinstance" not in source


def test_facts_carry_through_conversions_reshapes_and_arithmetic():
    x = rng_for("sparse_branch_of_results").uniform(0.5, 1.5, 4)
    check_both_modes(sparse_branch_of_results, (x,))


def namespace_test(x):
    if x.__class__.__module__.split(".")[0] in NAMES and "numpy" in NAMES:
        return np.sum(np.sin(x))
    return np.not_a_function(x)  # (never lowered)


def test_membership_in_a_global_set_of_constants_is_folded():
    x = rng_for("namespace_test").standard_normal(3)
    assert "numpy" in NAMES
    with pytest.raises(s2sad.S2SADError):  # (the first test is not a constant)
        s2sad.grad(namespace_test)(x)

    def folded(x):
        if "numpy" in NAMES:
            return np.sum(np.sin(x))
        return np.not_a_function(x)
    check_both_modes(folded, (x,))


# --------------------------------------------------------------------------------------
# dtypes known where the code runs
# --------------------------------------------------------------------------------------


def pinball(y_pred, y_true):
    """mean_pinball_loss's arithmetic: a mask cast to the dtype of the difference."""
    diff = y_true - y_pred
    sign = np.astype(diff >= 0, diff.dtype)
    loss = 0.3 * sign * diff - 0.7 * (1 - sign) * diff
    return float(np.asarray(np.average(loss)))


def clipped_log(p):
    """log_loss's arithmetic: clipped at the machine epsilon of the array's dtype."""
    eps = np.finfo(p.dtype).eps
    q = np.clip(p, eps, 1 - eps)
    d = np.result_type(p, q)
    return float(np.asarray(np.sum(np.log(np.asarray(q, dtype=d)))))


def test_a_cast_to_a_dtype_of_run_time_keeps_its_letter():
    r = rng_for("pinball")
    y_pred, y_true = r.uniform(-1, 1, 5), r.uniform(-1, 1, 5)
    check_both_modes(pinball, (y_pred, y_true))
    check_both_modes(clipped_log, (r.uniform(0.2, 0.8, 4),))


def test_a_dtype_of_run_time_follows_the_argument_in_float32():
    p = rng_for("clipped_log").uniform(0.2, 0.8, 4).astype(np.float32)
    g = s2sad.grad(clipped_log)(p)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 1 / p.astype(np.float64), rtol=1e-6)


def checked(x, n):
    if x.shape[0] != n:
        raise ValueError("expected {0} rows, got {1}".format(n, x.shape[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.sum(x ** 3)


def test_format_in_a_message_and_a_context_manager_made_in_with():
    x = rng_for("checked").standard_normal(3)
    check_both_modes(lambda x: checked(x, 3), (x,))
    with pytest.raises(ValueError, match="expected 4 rows, got 3"):
        s2sad.grad(checked)(x, 4)


# --------------------------------------------------------------------------------------
# scikit-learn's validation, seen through for NumPy arrays
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def skm():
    return pytest.importorskip("sklearn.metrics")


def _regression_metric(name):
    def metric(y_pred, y_true):
        import sklearn.metrics
        return getattr(sklearn.metrics, name)(y_true, y_pred)
    metric.__name__ = name
    return metric


@pytest.mark.parametrize("name", ["mean_squared_error", "r2_score", "mean_pinball_loss",
                                  "mean_squared_log_error"])
def test_regression_metrics(skm, name):
    r = rng_for(name)
    check_both_modes(_regression_metric(name), (r.uniform(0.5, 2, 5), r.uniform(0.5, 2, 5)))


def test_checks_run_as_written_and_the_source_reads_as_numpy(skm):
    f = _regression_metric("mean_squared_error")
    r = rng_for("checks")
    y_pred, y_true = r.uniform(0.5, 2, 5), r.uniform(0.5, 2, 5)
    d = s2sad.grad(f)
    source = d.source_for(y_pred, y_true)
    assert "narwhals" not in source and "check_array(y_pred" in source
    assert "np.result_type(y_true, y_pred)" in source
    bad = y_pred.copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match="NaN"):  # (check_array's own error)
        d(bad, y_true)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        d(y_pred[:4], y_true)


def test_float32_is_computed_in_float32_as_scikit_learn_does(skm):
    f = _regression_metric("mean_squared_error")
    r = rng_for("float32")
    y_pred, y_true = r.uniform(0.5, 2, 5).astype(np.float32), r.uniform(0.5, 2, 5)
    value, g = s2sad.value_and_grad(f)(y_pred, y_true)
    assert value == f(y_pred, y_true)  # (the same float32 arithmetic)
    assert g.dtype == np.float32
    y32 = y_true.astype(np.float32)
    value, g = s2sad.value_and_grad(f)(y_pred, y32)
    assert value == f(y_pred, y32)
    np.testing.assert_allclose(g, 2 * (y_pred - y32) / 5, rtol=1e-5)


def test_a_list_of_dtypes_keeps_a_listed_one_and_converts_another(skm):
    from sklearn.utils.validation import check_array

    def as_listed(x):
        y = check_array(x, ensure_2d=False, dtype=[np.float32, np.float64])
        return float(np.sum(y ** 2)) + float(np.sum(check_array(x, copy=True)))

    x = rng_for("listed").uniform(-1, 1, (3, 2))
    check_both_modes(as_listed, (x,))
    source = s2sad.grad(as_listed).source_for(x)
    assert "in (np.float32, np.float64)" in source or "np.float32, np.float64" in source


def test_classification_losses(skm):
    r = rng_for("classification")
    p, y = r.uniform(0.2, 0.8, 5), np.array([0.0, 1.0, 1.0, 0.0, 1.0])

    def log_loss(p, y):
        import sklearn.metrics
        return sklearn.metrics.log_loss(y, p, labels=[0, 1])

    def brier(p, y):
        import sklearn.metrics
        return sklearn.metrics.brier_score_loss(y, p)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        check_both_modes(log_loss, (p, y))
    check_both_modes(brier, (p, y))
    np.testing.assert_allclose(s2sad.grad(brier)(p, y), 2 * (p - y) / 5, rtol=1e-12)


# --------------------------------------------------------------------------------------
# writes into arrays the function (or a helper it calls) created
# --------------------------------------------------------------------------------------


def squared_distances(X):
    """A fresh array a helper returns is the caller's own to write into."""
    d = X[:, None, :] - X[None, :, :]
    return np.sum(d * d, axis=-1)


def kernel_with_unit_diagonal(theta, X):
    K = np.exp(-squared_distances(X) / np.exp(theta))
    np.fill_diagonal(K, 1)
    return np.sum(K ** 2) + np.sum(K[0])


def kernel_with_diagonal_value(s, X):
    K = np.exp(-squared_distances(X))
    np.fill_diagonal(K, s ** 2)  # (the diagonal takes s's derivative)
    return np.sum(K ** 3)


def test_fill_diagonal_of_a_fresh_array_is_differentiated():
    r = rng_for("fill_diagonal")
    X = r.uniform(-1, 1, (4, 2))
    check_both_modes(kernel_with_unit_diagonal, (0.3, X))
    check_both_modes(kernel_with_unit_diagonal, (0.3, X), wrt=1)
    check_both_modes(kernel_with_diagonal_value, (0.7, X))
    h = s2sad.hessian(kernel_with_diagonal_value)(0.7, X)
    g = lambda s: float(s2sad.grad(kernel_with_diagonal_value)(s, X))  # noqa: E731
    np.testing.assert_allclose(h, (g(0.7 + 1e-5) - g(0.7 - 1e-5)) / 2e-5, rtol=1e-5)
    source = s2sad.grad(kernel_with_unit_diagonal).source_for(0.3, X)
    assert "np.fill_diagonal(K" in source and "np.fill_diagonal(K_bar" in source


def kept_in_a_list(X):
    out = squared_distances(X)
    return out, [out]


def writes_a_kept_array(X):
    K, kept = kept_in_a_list(X)
    np.fill_diagonal(K, 1.0)
    return np.sum(K * kept[0])


def test_a_helper_array_that_is_kept_elsewhere_is_not_written():
    X = rng_for("kept").uniform(-1, 1, (3, 2))
    with pytest.raises(s2sad.S2SADError, match="refers to the same array|cannot write"):
        s2sad.grad(writes_a_kept_array)(X)


def flagged_sparse_branch(x, dense=True):
    if dense and isinstance(x, Sparse):
        return x.toarray().sum()  # (never lowered: false whatever `dense` is)
    if hasattr(x, "fit") or not hasattr(x, "shape"):
        return x.fit(x)  # (never lowered)
    return np.sum(np.cos(x))


def test_a_test_false_whatever_a_flag_is():
    x = rng_for("flagged").standard_normal(3)
    d = s2sad.grad(lambda x: flagged_sparse_branch(x, dense=bool(x.size)))
    np.testing.assert_allclose(d(x), -np.sin(x), rtol=1e-12)


def test_scipy_pdist_is_computed_in_double_precision():
    distance = pytest.importorskip("scipy.spatial.distance")

    def condensed(X):
        return distance.squareform(distance.pdist(X, "sqeuclidean"))

    X = rng_for("pdist").uniform(-1, 1, (4, 2))
    value, _ = s2sad.vjp(condensed)(X.astype(np.float32))
    assert value.dtype == condensed(X.astype(np.float32)).dtype == np.float64
    check_both_modes(lambda X: np.sum(condensed(X) ** 2), (X,))


# --------------------------------------------------------------------------------------
# in-place idioms: out=, a ufunc's output by position, helpers that write into their array
# --------------------------------------------------------------------------------------


def exp_into_itself(x):
    y = x * 2.0
    np.exp(y, out=y)
    z = y - np.max(y)
    np.exp(z, z)  # (the output by position)
    np.tanh(z, out=np.asarray(z))  # (np.asarray of an array: the array itself)
    return np.sum(z * x)


def test_out_into_an_array_the_function_made_is_its_new_value():
    x = rng_for("exp_into_itself").uniform(-1, 1, 4)
    check_both_modes(exp_into_itself, (x,))
    code = [line for line in s2sad.grad(exp_into_itself).source_for(x).splitlines()
            if not line.lstrip().startswith("#")]
    assert any("np.exp(y)" in line for line in code) and not any("out=" in line
                                                                 for line in code)


def exp_into_the_argument(x):
    np.exp(x, out=x)
    return np.sum(x)


def exp_into_the_argument_and_another(x, y):
    np.exp(x, out=x)
    return np.sum(x * y)


def test_out_into_an_argument_writes_a_private_copy():
    # (as any write into an argument: tests/frontend/test_argument_writes.py; the caller's
    # array is left as it was)
    x = rng_for("exp_into_the_argument").uniform(-1, 1, 4)
    kept = x.copy()
    check_both_modes(lambda x: exp_into_the_argument(x.copy()), (x,))
    assert_close(s2sad.grad(exp_into_the_argument)(x), np.exp(kept))
    np.testing.assert_array_equal(x, kept)
    with pytest.raises(s2sad.NonDifferentiableError, match="may be the same array"):
        s2sad.grad(exp_into_the_argument_and_another)(np.ones(3), np.ones(3))


def inplace_softmax(X):
    """scikit-learn's MLP activation: writes into the array it is given."""
    tmp = X - X.max(axis=1)[:, np.newaxis]
    np.exp(tmp, out=X)
    X /= X.sum(axis=1)[:, np.newaxis]


def layer(z):
    a = z.copy()
    b = a  # (the same array: it sees the writes too)
    inplace_softmax(a)
    return np.sum(a * b * z)


def layer_in_a_loop(z):
    a = z.copy()
    for _ in range(2):
        inplace_softmax(a)  # (the loop does not carry `a`: the write would be lost)
    return np.sum(a)


def test_a_helper_writing_into_its_array_rebinds_the_callers_names():
    z = rng_for("layer").uniform(-1, 1, (3, 2))
    check_both_modes(layer, (z,))
    with pytest.raises(s2sad.NonDifferentiableError, match="loop or a branch"):
        s2sad.grad(layer_in_a_loop)(z)
    z32 = z.astype(np.float32)  # (np.exp(tmp, out=X) casts to X's dtype)
    assert s2sad.vjp(lambda z: layer(z) * 1.0)(z32)[0] == pytest.approx(layer(z32), rel=1e-6)


def writes_in_a_loop(x):
    m = np.zeros((3, 3))
    v = x * 1.0
    for i in range(3):
        np.fill_diagonal(m, x[i])
        np.exp(v, out=v)
    return np.sum(m * x[:, None]) + np.sum(v)


def test_a_write_in_a_loop_carries_the_array():
    x = rng_for("writes_in_a_loop").uniform(-1, 0, 3)
    value, _ = s2sad.value_and_grad(writes_in_a_loop)(x)
    assert value == pytest.approx(writes_in_a_loop(x), rel=1e-12)
    check_both_modes(writes_in_a_loop, (x,))


# --------------------------------------------------------------------------------------
# a value bound under a test of the shapes, read only under the same test
# --------------------------------------------------------------------------------------


def huber_like(w, X):
    """scikit-learn's _huber_loss_and_gradient: an intercept where w has room for one."""
    _, n_features = X.shape
    fit_intercept = n_features + 2 == w.shape[0]
    if fit_intercept:
        intercept = w[-2]
    sigma = w[-1]
    linear = X @ w[:n_features]
    if fit_intercept:
        linear -= intercept
    outliers = np.abs(linear) > 0.5
    inside = linear[~outliers]
    return np.dot(inside, inside) / sigma + np.sum(np.abs(linear[outliers])) * sigma


def read_where_not_bound(x):
    if x[0] > 0:
        v = x * 2.0
    return np.sum(v * x)


def test_a_value_read_under_the_test_that_bound_it():
    r = rng_for("huber_like")
    X = r.uniform(-1, 1, (6, 2))
    for w in (np.array([0.3, -0.2, 0.1, 1.2]), np.array([0.3, -0.2, 1.2])):
        check_both_modes(huber_like, (w, X))
    code = [line for line in s2sad.grad(huber_like).source_for(np.ones(3), X).splitlines()
            if not line.lstrip().startswith("#")]
    assert not any("intercept" in line for line in code)  # (w has no room for one)
    with pytest.raises(s2sad.S2SADError, match="may be undefined"):
        s2sad.grad(read_where_not_bound)(np.array([-1.0, 2.0]))


# --------------------------------------------------------------------------------------
# dicts merged in a literal
# --------------------------------------------------------------------------------------

DEFAULTS = {"scale": 2.0, "power": 3}


def merged_options(x, scale):
    given = {"scale": scale}
    options = {**DEFAULTS, **given, "shift": x[0]}
    return np.sum((options["scale"] * x) ** options["power"]) + options["shift"]


def test_a_dict_literal_merges_dicts_known_while_compiling():
    x = rng_for("merged_options").uniform(0.5, 1.5, 3)
    check_both_modes(merged_options, (x, 0.7))
    check_both_modes(merged_options, (x, 0.7), wrt=1)


def options_checked(x, y="no_validation", kernel=None):
    no_y = y is None or (isinstance(y, str) and y == "no_validation")
    if kernel is None and no_y:
        return np.sum(x ** 2)
    return y.validate(x)  # (never lowered: y is a constant string)


def test_identity_and_type_tests_of_constants_are_folded():
    x = rng_for("options_checked").standard_normal(3)
    check_both_modes(options_checked, (x,))
    code = s2sad.grad(options_checked).source_for(x)
    assert "validate" not in code and "is None" not in code


def normalized_rows(X, Y):
    """scikit-learn's cosine_similarity: rows scaled to unit norm (zero norms left alone),
    then a product that is known to be an array (never sparse)."""
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    if np.isscalar(norms):
        return norms.tocsr()  # (never lowered: an array of norms)
    norms[norms < 1e-12] = 1.0  # (a write into the array einsum made)
    Xn = X / norms[:, None]
    K = Xn @ Y.T
    if isinstance(K, Sparse) or np.dot(Xn, Y[0]).ndim != 1:
        return K.toarray()  # (never lowered: a dense matrix, a vector)
    return np.sum(K ** 2)


def test_facts_through_einsum_products_and_writes():
    r = rng_for("normalized_rows")
    X, Y = r.uniform(0.5, 1.5, (3, 2)), r.uniform(-1, 1, (2, 2))
    check_both_modes(normalized_rows, (X, Y))
    check_both_modes(normalized_rows, (X, Y), wrt=1)
