"""One compilation for every size (issue 34): a derivative called at sizes 10, 11, 100,
1000 and 5000 (same rank and dtype) compiles once.

    python bench/bench_sizes.py [--repeat N]

For each function (Rosenbrock, least squares, log-sum-exp, a two-layer MLP loss, a loop
over entries), a fresh `s2sad.grad` is called at each size in turn, with sizes as symbols
(the default) and with sizes as numbers (`S2SAD_EVERY_SIZE=0`, what s2sad did before):
the number of compiles (with symbols: the first two sizes', the second checking that the
first's code serves every size), the time of the first call at each size (compile and run), and the warm per-call time at n = 10 of both forms against the hand-written
gradient (the dispatcher of a specialisation for every size tests ranks and the pattern
of sizes, not shapes). The disk cache is off. Asserts nothing: timings are not tests.
"""

from __future__ import annotations

import os
import sys
import time

os.environ["S2SAD_CACHE"] = "0"

import common  # noqa: E402
import numpy as np  # noqa: E402
from harness import fmt_time, measure_many, table  # noqa: E402

SIZES = (10, 11, 100, 1000, 5000)


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosen_hand(x):
    t = x[1:] - x[:-1] ** 2
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * t - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * t
    return g


def least_squares(x, A, b):
    r = A @ x - b
    return 0.5 * (r @ r)


def least_squares_hand(x, A, b):
    return (A @ x - b) @ A


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def logsumexp_hand(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def mlp(W1, x, W2):
    h = np.tanh(W1 @ x)
    return np.sum((W2 @ h) ** 2)


def mlp_hand(W1, x, W2):
    h = np.tanh(W1 @ x)
    o = W2 @ h
    h_bar = (2.0 * o) @ W2
    return np.outer(h_bar * (1.0 - h * h), x)


def loop_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i]
    return s


def loop_sum_hand(x):
    return np.cos(x) * x + np.sin(x)


def make(key, n, rng):
    if key == "rosen":
        return (rng.uniform(-1, 1, n),)
    if key == "least squares":
        m = max(2, n // 2)
        return rng.normal(size=n), rng.normal(size=(m, n)), rng.normal(size=m)
    if key == "logsumexp":
        return (rng.normal(size=n),)
    if key == "mlp":
        return rng.normal(size=(8, n)) / np.sqrt(n), rng.normal(size=n), rng.normal(size=(3, 8))
    return (rng.normal(size=min(n, 1000)),)


PROBLEMS = [("rosen", rosen, rosen_hand), ("least squares", least_squares, least_squares_hand),
            ("logsumexp", logsumexp, logsumexp_hand), ("mlp", mlp, mlp_hand),
            ("loop over entries", loop_sum, loop_sum_hand)]


COMPILES = [0]


def counting(generate):
    def counted(*args, **kwargs):
        COMPILES[0] += 1
        return generate(*args, **kwargs)
    return counted


def run_sizes(s2sad, f, key, every):
    s2sad.derivative.EVERY_SIZE[0] = every
    g = s2sad.grad(f)
    rng = np.random.default_rng(0)
    firsts = []
    COMPILES[0] = 0
    for n in SIZES:
        args = make(key, n, rng)
        t0 = time.perf_counter()
        g(*args)
        firsts.append(time.perf_counter() - t0)
    return g, firsts, COMPILES[0]


def main():
    opts = common.parse_args(__doc__.splitlines()[0])
    s2sad, err = common.load_s2sad()
    if s2sad is None:
        sys.exit(f"cannot import s2sad: {err}")
    import s2sad.store.compiled
    import s2sad.transform

    s2sad.transform.generate = counting(s2sad.transform.generate)  # (compiles counted)
    s2sad.store.compiled.generate = s2sad.transform.generate
    # imports, the rule table, codegen: not in the figures
    s2sad.grad(lambda x: np.sum(np.sin(x[1:]) * x[:-1]))(np.ones(7))
    rows = []
    for key, f, hand in PROBLEMS:
        # (numbers first: a first compile with symbols is kept under its sizes' key too)
        g_num, t_num, c_num = run_sizes(s2sad, f, key, False)
        g_sym, t_sym, c_sym = run_sizes(s2sad, f, key, True)
        s2sad.derivative.EVERY_SIZE[0] = True
        args = make(key, 10, np.random.default_rng(1))
        for g in (g_sym, g_num):
            g(*args)
            g(*args)  # (the dispatcher's fast path is installed on a second call)
        want = hand(*args)
        for got in (g_sym(*args), g_num(*args)):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        best = [m.best for m in measure_many([(hand, args), (g_sym, args), (g_num, args)],
                                             repeat=opts.repeat, target=opts.target)]
        rows.append([key, f"{c_sym} / {c_num}",
                     " ".join(f"{t * 1e3:.0f}" for t in t_sym),
                     " ".join(f"{t * 1e3:.0f}" for t in t_num),
                     fmt_time(best[0]), f"{best[1] / best[0]:.2f}", f"{best[2] / best[0]:.2f}"])
    print(f"sizes {', '.join(map(str, SIZES))} in turn, a fresh grad each; first calls in ms "
          "(compile + run); per call at n = 10, min of timed batches")
    print()
    table(rows, ["function", "compiles (symbols / numbers)", "1st calls, symbols",
                 "1st calls, numbers", "hand @ n=10", "symbols/hand", "numbers/hand"])


if __name__ == "__main__":
    main()
