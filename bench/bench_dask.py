"""Dask arrays (issue 19 item 3): gradients of three models over 10^6 rows in chunks.

    python bench/bench_dask.py [--quick] [--rows N] [--chunk N] [--no-cluster]

For least squares, logistic regression and a tanh layer with an L2 penalty: the s2sad
gradient of the function given Dask arrays (computed), the hand-written gradient written
with the same Dask arrays, the NumPy gradients (s2sad's and hand-written) on the same data
in memory, and `value_and_grad` evaluated in one `dask.compute` against value and gradient
computed one after the other. The Dask data are persisted (in memory, in chunks) first, so
the times are of the computation, not of making the data. Run with Dask's threaded
scheduler, then on a dask.distributed LocalCluster of 2 worker processes (1 thread each).
Prints times and ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import check_cell, load_s2sad
from harness import fmt_ratio, fmt_time, measure_many, table


def least_squares(w, X, y):
    r = X @ w - y
    return 0.5 * np.sum(r * r)


def logistic(w, X, y):
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def tanh_layer(W, X, y, lam):
    h = np.tanh(X @ W)
    r = np.sum(h, axis=1) - y
    return np.mean(r ** 2) + lam * np.sum(W * W)


# hand-written gradients: the same code runs on NumPy and on Dask arrays
def least_squares_grad(w, X, y):
    return X.T @ (X @ w - y)


def logistic_grad(w, X, y):
    return X.T @ (1.0 / (1.0 + np.exp(-(X @ w))) - y)


def tanh_layer_grad(W, X, y, lam):
    h = np.tanh(X @ W)
    r = np.sum(h, axis=1) - y
    return X.T @ ((2.0 / y.shape[0]) * r[:, None] * (1.0 - h * h)) + 2.0 * lam * W


WORKLOADS = [("least squares", least_squares, least_squares_grad, 1),
             ("logistic regression", logistic, logistic_grad, 1),
             ("tanh layer + L2", tanh_layer, tanh_layer_grad, 4)]


def computed(fn, compute):
    """fn(*args), its Dask results computed by `compute`."""
    def run(*args):
        return compute(fn(*args))
    return run


def apart(value_fn, grad_fn):
    """The value and the gradient, each computed on its own (two passes over the data)."""
    def both(*args):
        return value_fn(*args), grad_fn(*args)
    return both


def run(label, compute, X, y, Xd, yd, opts, s2sad):
    rows, notes = [], []
    d = X.shape[1]
    for name, f, by_hand, k in WORKLOADS:
        rng = np.random.default_rng(1)
        w = rng.normal(size=d) if k == 1 else rng.normal(size=(d, k))
        extra = (0.1,) if f is tanh_layer else ()
        np_args, dk_args = (w, X, y) + extra, (w, Xd, yd) + extra
        grad, vgrad = s2sad.grad(f), s2sad.value_and_grad(f)
        t0 = time.perf_counter()
        vgrad(*dk_args)  # compiles the Dask specialisation (nothing computed)
        first = time.perf_counter() - t0
        want = by_hand(*np_args)
        (got,) = compute(grad(*dk_args))
        value_fn = computed(f, compute)
        grad_fn = computed(grad, compute)
        separately = apart(value_fn, grad_fn)

        cases = [(by_hand, np_args), (grad, np_args), (computed(by_hand, compute), dk_args),
                 (grad_fn, dk_args), (computed(vgrad, compute), dk_args), (separately, dk_args)]
        times = [t.best for t in measure_many(cases, repeat=opts.repeat, target=opts.target)]
        np_hand, np_s2, dk_hand, dk_s2, vg_one, vg_two = times
        rows.append([name, fmt_time(np_hand), fmt_time(np_s2), fmt_time(dk_hand),
                     fmt_time(dk_s2), fmt_ratio(dk_s2, dk_hand), fmt_time(vg_one),
                     fmt_time(vg_two), fmt_ratio(vg_one, vg_two), check_cell(got, want)])
        notes.append(f"{name}: compiling the Dask specialisation (value_and_grad) "
                     f"{fmt_time(first)}")
    table(rows, ["workload", "NumPy hand", "NumPy s2sad", "Dask hand", "Dask s2sad",
                 "s2sad/hand", "v&g 1 compute", "v, g apart", "1 vs apart", "check"],
          title=f"{label}: {X.shape[0]:,} rows x {X.shape[1]} columns, chunks of "
                f"{Xd.chunks[0][0]:,} rows")
    for n in notes:
        print("  " + n)
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 short repeats")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--cols", type=int, default=16)
    ap.add_argument("--chunk", type=int, default=125_000)
    ap.add_argument("--no-cluster", action="store_true", help="threaded scheduler only")
    opts = ap.parse_args()
    opts.repeat = 3 if opts.quick else 5
    opts.target = 0.01 if opts.quick else 0.05
    s2sad, err = load_s2sad()
    if s2sad is None:
        sys.exit(f"cannot import s2sad: {err}")
    import dask
    import dask.array as da

    rng = np.random.default_rng(0)
    X = rng.normal(size=(opts.rows, opts.cols)) / np.sqrt(opts.cols)
    y = rng.uniform(0.0, 1.0, opts.rows)
    with dask.config.set(scheduler="threads"):
        Xd = da.from_array(X, chunks=(opts.chunk, opts.cols)).persist()
        yd = da.from_array(y, chunks=opts.chunk).persist()
        run("Dask threaded scheduler", dask.compute, X, y, Xd, yd, opts, s2sad)
    if opts.no_cluster:
        return
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        drng = da.random.default_rng(0)  # drawn on the workers, kept there
        Xd = drng.normal(size=(opts.rows, opts.cols), chunks=(opts.chunk, opts.cols))
        Xd, yd = client.persist([Xd / np.sqrt(opts.cols),
                                 drng.uniform(size=opts.rows, chunks=opts.chunk)])
        X, y = dask.compute(Xd, yd)
        run("LocalCluster, 2 worker processes", dask.compute, X, y, Xd, yd, opts, s2sad)


if __name__ == "__main__":
    main()
