"""Dask arrays as arguments: the derivative specialised for them is functional and lazy.

Oracles: hand-written NumPy gradients of each model (written out below from the formulas,
not from s2sad), central finite differences (tests/oracle.py), and, over the whole
correctness corpus, s2sad's NumPy specialisation (the backend agreement the issue asks
for: the NumPy one is itself checked against finite differences in tests/corpus).

The default suite runs Dask's threaded and synchronous schedulers on small arrays (a few
seconds); `-m slow` also runs 10^6 rows on a dask.distributed LocalCluster of two worker
processes.
"""

from __future__ import annotations

import ast
import threading
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import s2sad
from s2sad.errors import LazyArrayError
from tests import oracle
from tests.backends.models import (  # the three models and their gradients by hand
    least_squares,
    least_squares_grad,
    logistic,
    logistic_grad,
    tanh_layer,
    tanh_layer_grad,
)
from tests.corpus import programs


MODELS = [(least_squares, least_squares_grad, 1), (logistic, logistic_grad, 1),
          (tanh_layer, tanh_layer_grad, 3)]
IDS = [m[0].__name__ for m in MODELS]


def _data(n, d, chunk, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = rng.uniform(0.0, 1.0, n)
    return X, y, da.from_array(X, chunks=(chunk, d)), da.from_array(y, chunks=chunk)


def _weights(k, d, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=d) if k == 1 else rng.normal(size=(d, k))


def _extra(f):
    return (0.1,) if f is tanh_layer else ()


def _in_place_forms(source: str) -> list:
    """The in-place writes and `out=` arguments in generated source."""
    found = []
    for node in ast.walk(ast.parse(source)):
        augmented = isinstance(node, ast.AugAssign)
        into_item = isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Subscript) for t in node.targets)
        out_call = isinstance(node, ast.Call) and (
            any(k.arg == "out" for k in node.keywords) or
            ast.unparse(node.func).endswith(".at"))
        if augmented or into_item or out_call:
            found.append(ast.unparse(node))
    return found


@pytest.fixture(scope="module")
def threads():
    with dask.config.set(scheduler="threads"):
        yield


@pytest.mark.parametrize("f, by_hand, k", MODELS, ids=IDS)
def test_gradient_on_dask_equals_numpy_gradient_and_finite_differences(threads, f, by_hand, k):
    n, d = 4_000, 6
    X, y, Xd, yd = _data(n, d, 1_000)
    w = _weights(k, d)
    g = s2sad.grad(f)(w, Xd, yd, *_extra(f))
    assert isinstance(g, da.Array)  # lazy: nothing computed yet
    got = g.compute()
    assert isinstance(got, np.ndarray) and got.shape == w.shape
    np.testing.assert_allclose(got, by_hand(w, X, y, *_extra(f)), rtol=1e-10, atol=1e-12)
    (fd,) = oracle.numerical_grad(f, (w, X, y) + _extra(f), (0,))
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("f, by_hand, k", MODELS, ids=IDS)
def test_dask_specialisation_is_functional(f, by_hand, k):
    _, _, Xd, yd = _data(100, 4, 25)
    w = _weights(k, 4)
    source = s2sad.grad(f).source_for(w, Xd, yd, *_extra(f))
    assert "dask float array (100, 4)" in source
    assert "functional" in source
    assert _in_place_forms(source) == [], source
    vg = s2sad.value_and_grad(f).source_for(w, Xd, yd, *_extra(f))
    assert _in_place_forms(vg) == [], vg


def test_tanh_layer_numpy_specialisation_still_updates_in_place():
    """The check above can fail: the NumPy specialisation of the same function accumulates
    W's cotangent in place (the Dask one must not)."""
    X, y, _, _ = _data(100, 4, 25)
    source = s2sad.grad(tanh_layer).source_for(_weights(3, 4), X, y, 0.1)
    assert _in_place_forms(source) != []


def test_value_and_grad_share_one_pass_over_the_data():
    """dask.compute(value, gradient) loads each chunk once: value and gradient are one
    graph (counted with a chunk loader that records its calls)."""
    n, d, chunk = 2_000, 5, 500
    X, y, _, _ = _data(n, d, chunk)
    loads = []
    lock = threading.Lock()

    def load(block, block_info=None):
        start = block_info[None]["array-location"][0][0]
        with lock:
            loads.append(start)
        return X[start:start + block.shape[0]]

    Xd = da.map_blocks(load, da.zeros((n, d), chunks=(chunk, d)), dtype=float)
    yd = da.from_array(y, chunks=chunk)
    w = _weights(1, d)
    value, grad = s2sad.value_and_grad(logistic)(w, Xd, yd)
    assert isinstance(value, da.Array) and isinstance(grad, da.Array)
    assert loads == []  # nothing computed by the derivative itself
    v, g = dask.compute(value, grad, scheduler="sync")
    assert sorted(loads) == list(range(0, n, chunk))  # each chunk once, for both results
    np.testing.assert_allclose(v, logistic(w, X, y), rtol=1e-12)
    np.testing.assert_allclose(g, logistic_grad(w, X, y), rtol=1e-10)


def test_dask_and_numpy_specialisations_are_kept_apart(threads):
    """One derivative called with NumPy arrays, Dask arrays of two shapes, and again
    (the dispatcher's fast paths test the type, shape and dtype of a Dask array too)."""
    dg = s2sad.grad(least_squares)
    cases = []
    for n, chunk in ((300, 100), (500, 250)):
        X, y, Xd, yd = _data(n, 3, chunk, seed=n)
        cases.append((X, y, Xd, yd))
    w = _weights(1, 3)
    for _ in range(3):
        for X, y, Xd, yd in cases:
            want = least_squares_grad(w, X, y)
            np.testing.assert_allclose(dg(w, X, y), want, rtol=1e-10)
            got = dg(w, Xd, yd)
            assert isinstance(got, da.Array)
            np.testing.assert_allclose(got.compute(), want, rtol=1e-10)


def test_jvp_and_vjp_on_dask_agree_with_finite_differences(threads):
    X, _, Xd, _ = _data(400, 3, 100)
    W = _weights(2, 3)
    V = _weights(2, 3, seed=7)

    def hidden(W, X):
        return np.tanh(X @ W)

    out, out_dot = s2sad.jvp(hidden, wrt=0)(W, Xd, V)
    assert isinstance(out_dot, da.Array)
    np.testing.assert_allclose(out_dot.compute(), oracle.numerical_jvp(hidden, (W, X), (0,), (V,)),
                               rtol=1e-6, atol=1e-8)
    out, pullback = s2sad.vjp(hidden, wrt=0)(W, Xd)
    u = np.random.default_rng(3).normal(size=out.shape)
    (W_bar,) = pullback(u)
    # the dot-product test: <u, J v> == <J^T u, v>
    assert np.isclose(float(np.sum(u * out_dot.compute())), float(np.sum(W_bar.compute() * V)),
                      rtol=1e-10)


def first_outputs(w, X):
    return np.tanh(X @ w)[:4]


def test_jacobians_and_hessians_of_dask_data(threads):
    X, _, Xd, _ = _data(200, 3, 50)
    w = _weights(1, 3)
    (jac,) = oracle.numerical_jacobian(first_outputs, (w, X), (0,))
    for transform in (s2sad.jacfwd, s2sad.jacrev):
        got = transform(first_outputs)(w, Xd)
        assert isinstance(got, da.Array)
        np.testing.assert_allclose(got.compute(), jac, rtol=1e-6, atol=1e-8)
    H = s2sad.hessian(least_squares)(w, Xd, da.from_array(np.ones(200), chunks=50))
    np.testing.assert_allclose(dask.compute(H)[0], X.T @ X, rtol=1e-10)


def test_differentiating_with_respect_to_a_dask_array(threads):
    X, y, Xd, yd = _data(200, 3, 50)
    w = _weights(1, 3)
    gX = s2sad.grad(least_squares, wrt=1)(w, Xd, yd)
    assert isinstance(gX, da.Array) and gX.shape == X.shape
    np.testing.assert_allclose(gX.compute(), np.outer(X @ w - y, w), rtol=1e-10)


# -- refusals: what needs a value while the derivative runs -----------------------------


def branch_on_data(w, X):
    s = np.sum(X @ w)
    if s > 0.0:
        return s
    return -s


def reads_item(w, X):
    return (X @ w).sum().item() * w[0]


def writes_into(w, X):
    z = X @ w
    z[0] = 0.0
    z[-2:] = 0.5 * z[:2]
    return np.sum(z * z)


ROWS = np.array([0, 2])


def writes_at_rows(w, X):
    z = X @ w
    z[ROWS] = 0.0
    return np.sum(z * z)


def test_assignment_at_a_basic_index_is_functional(threads):
    X, _, Xd, _ = _data(100, 3, 30)
    w = _weights(1, 3)
    d = s2sad.grad(writes_into)
    got = d(w, Xd)
    assert isinstance(got, da.Array) and _in_place_forms(d.source) == []
    (fd,) = oracle.numerical_grad(writes_into, (w, X), (0,))
    np.testing.assert_allclose(got.compute(), fd, rtol=1e-6, atol=1e-8)


def keeps_positive_rows(w, X):
    return np.sum(X[X[:, 0] > 0.0] @ w)


@pytest.mark.parametrize("f, words", [
    (branch_on_data, "an `if`"),
    (reads_item, ".item()"),
    (writes_at_rows, "assignment into an array at an array of indices"),
])
def test_what_needs_a_value_is_refused(f, words):
    _, _, Xd, _ = _data(100, 3, 50)
    with pytest.raises(LazyArrayError) as info:
        s2sad.grad(f)(_weights(1, 3), Xd)
    err = info.value
    assert isinstance(err, s2sad.S2SADError)
    assert words in str(err)
    assert err.loc is not None and err.loc.lineno > 0 and err.hint


def test_unknown_chunk_sizes_are_refused():
    _, _, Xd, _ = _data(100, 3, 50)
    rows = Xd[Xd[:, 0] > 0.0]  # a Dask array whose chunk sizes are not known

    def total(w, X):
        return np.sum(X @ w)

    with pytest.raises(LazyArrayError, match="compute_chunk_sizes"):
        s2sad.grad(total)(_weights(1, 3), rows)


# -- the correctness corpus with Dask arrays, against the NumPy specialisation -----------


def _to_dask(a):
    if isinstance(a, np.ndarray) and a.ndim >= 1 and a.dtype.kind in "fc":
        return da.from_array(a, chunks=tuple(max(1, (n + 1) // 2) for n in a.shape))
    if isinstance(a, (tuple, list)):
        return type(a)(_to_dask(x) for x in a)
    return a


def _has_array(args) -> bool:
    return any(isinstance(a, np.ndarray) and a.ndim >= 1 or
               isinstance(a, (tuple, list)) and _has_array(a) for a in args)


# the corpus programs that need a value while they run: a Python `if` on an array's value,
# or the reverse of indexing with an array of indices (np.max's rule picks with argmax)
REFUSED = {"if_elif_else_data", "if_without_else", "branch_in_loop", "for_continue",
           "max_axis", "index_int_array"}
ARRAY_CASES = [c for c in programs.CASES
               if _has_array(c.args(oracle.rng_for(c.name, "dask")))]


@pytest.mark.parametrize("case", ARRAY_CASES, ids=[c.name for c in ARRAY_CASES])
def test_corpus_on_dask_equals_numpy(case):
    """Every corpus program taking arrays, with its arrays as Dask arrays in 2 chunks per
    axis: the VJP (value and pullback of a random cotangent) equals the NumPy
    specialisation's, or is refused with a LazyArrayError naming the line."""
    args = case.args(oracle.rng_for(case.name, "dask"))
    out, pullback = s2sad.vjp(case.fn, wrt=case.wrt)(*args, **case.kwargs)
    u = oracle.random_like(np.random.default_rng(1), out)
    want = (out, pullback(u))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # Dask's warnings too (a NumPy call it lacks)
            lazy_out, lazy_pullback = s2sad.vjp(case.fn, wrt=case.wrt)(
                *_to_dask(args), **case.kwargs)
            got = dask.compute((lazy_out, lazy_pullback(u)), scheduler="sync")[0]
    except LazyArrayError as e:
        assert e.loc is not None and e.hint
        assert case.name in REFUSED, f"{case.name} refused on Dask: {e}"
        pytest.skip(f"refused: {str(e).splitlines()[0]}")
    np.testing.assert_allclose(oracle.flatten(got), oracle.flatten(want), rtol=1e-9,
                               atol=1e-12)


# -- 10^6 rows on a LocalCluster of two worker processes ----------------------------------


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def test_gradients_on_a_two_process_cluster(cluster_client):
    """The default suite's check on worker processes: a few chunks, all three models."""
    X, y, Xd, yd = _data(20_000, 4, 5_000)
    for f, by_hand, k in MODELS:
        w = _weights(k, 4)
        value, grad = s2sad.value_and_grad(f)(w, Xd, yd, *_extra(f))
        v, g = cluster_client.compute([value, grad], sync=True)
        np.testing.assert_allclose(v, f(w, X, y, *_extra(f)), rtol=1e-10)
        np.testing.assert_allclose(g, by_hand(w, X, y, *_extra(f)), rtol=1e-10, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("f, by_hand, k", MODELS, ids=IDS)
def test_million_rows_on_a_two_process_cluster(cluster_client, f, by_hand, k):
    n, d = 1_000_000, 8
    rng = da.random.default_rng(0)  # the chunks are drawn on the workers and stay there
    Xd, yd = cluster_client.persist([rng.normal(size=(n, d), chunks=(125_000, d)),
                                     rng.uniform(size=n, chunks=125_000)])
    X, y = dask.compute(Xd, yd)  # (copies for the oracle)
    w = _weights(k, d)
    value, grad = s2sad.value_and_grad(f)(w, Xd, yd, *_extra(f))
    v, g = dask.compute(value, grad)  # one pass over the chunks, on the workers
    np.testing.assert_allclose(v, f(w, X, y, *_extra(f)), rtol=1e-9)
    np.testing.assert_allclose(g, by_hand(w, X, y, *_extra(f)), rtol=1e-9, atol=1e-9)
    # finite differences on a slice of the rows (the whole is too large for them)
    m = 2_000
    (fd,) = oracle.numerical_grad(f, (w, X[:m], y[:m]) + _extra(f), (0,))
    small = s2sad.grad(f)(w, da.from_array(X[:m], chunks=(500, d)),
                          da.from_array(y[:m], chunks=500), *_extra(f))
    np.testing.assert_allclose(cluster_client.compute(small).result(), fd, rtol=1e-6,
                               atol=1e-6)


def test_a_dask_array_as_the_first_argument_is_data():
    """Not taken for the object of an unbound method (whose first argument is an object)."""
    def data_first(X, w):
        return np.sum(np.tanh(X @ w) ** 2)

    X = da.from_array(np.linspace(-1.0, 1.0, 40).reshape(10, 4), chunks=(5, 4))
    w = np.array([0.5, -0.25, 0.1, 0.3])
    g = s2sad.grad(data_first, wrt=1)(X, w)
    Xn = np.asarray(X)
    t = np.tanh(Xn @ w)
    np.testing.assert_allclose(np.asarray(g), Xn.T @ (2 * t * (1 - t * t)), rtol=1e-12)
