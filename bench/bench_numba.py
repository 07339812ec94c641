"""backend="numba" (issue 19): the same derivatives, compiled by Numba.

For every gradient workload of workloads.py (and the JVP workloads), side by side:
the s2sad derivative run by the interpreter (the default backend), the hand-written NumPy
derivative, the s2sad derivative with backend="numba", a hand-written Numba derivative
where one is short to write, and jax.jit's gradient when JAX is installed. `compile` is
the first call of the Numba-backend derivative: s2sad's code generation plus Numba's
compilation, from a cold cache (a fresh S2SAD_CACHE_DIR, so Numba's cache is empty too).
Targets (issue 19): scalar and loop workloads at least 20x faster than the interpreted
derivative. `÷ njit primal` (issue 35): the Numba-backend derivative's time over that of
`numba.njit` of the primal itself, on the same arguments (the primal's, for a JVP): at
most 3x on scalar and loop workloads, the per-call cost of s2sad's dispatch included
(the median over rounds of the ratio of two batches run back to back).

The `sizes` section (issue 34): one derivative called at sizes 10, 11, 100, 1000, 5000
compiles once (one specialisation for every size, Numba's machine code included); the
first call of each new size is timed, the target being the second size's under 20% of
the first's.

    python bench/bench_numba.py [--quick] [--only b,f,g,sizes]
"""

from __future__ import annotations

import math
import os
import statistics
import tempfile

os.environ["S2SAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="s2sad-bench-numba-")

import common
import numpy as np
import workloads as W
from harness import fmt_time, measure_many, table

TARGET = 20.0  # scalar and loop workloads: interpreted / numba at least this
PRIMAL_TARGET = 3.0  # scalar and loop workloads: numba derivative / njit primal at most this


def hand_written_numba(numba):
    """Hand-written Numba gradients, where they are short: {workload key: function}."""
    njit = numba.njit(cache=False)

    @njit
    def ode_euler_grad(a, b):
        dt = 0.05
        x, v = 1.0, 0.0
        xs, vs = np.empty(100), np.empty(100)
        for i in range(100):
            xs[i], vs[i] = x, v
            acc = -a * math.sin(x) - b * v
            x, v = x + dt * v, v + dt * acc
        x_bar, v_bar, a_bar, b_bar = 2.0 * x, 2.0 * v, 0.0, 0.0
        for i in range(99, -1, -1):
            x, v = xs[i], vs[i]
            acc_bar = dt * v_bar
            v_bar = v_bar + dt * x_bar
            a_bar -= acc_bar * math.sin(x)
            b_bar -= acc_bar * v
            x_bar = x_bar - acc_bar * a * math.cos(x)
            v_bar = v_bar - acc_bar * b
        return a_bar, b_bar

    @njit
    def rosenbrock_grad(x):  # one fused pass over memory
        g = np.zeros(x.shape[0])
        for i in range(x.shape[0] - 1):
            a = x[i + 1] - x[i] * x[i]
            g[i] += -400.0 * a * x[i] - 2.0 * (1.0 - x[i])
            g[i + 1] += 200.0 * a
        return g

    @njit
    def rnn_loss_grad(W, h0, x):
        hs = np.empty((51, h0.shape[0]))
        hs[0] = h0
        for t in range(50):
            hs[t + 1] = np.tanh(W @ hs[t] + x[t])
        h_bar = 2.0 * hs[50]
        W_bar = np.zeros_like(W)
        for t in range(49, -1, -1):
            a_bar = h_bar * (1.0 - hs[t + 1] * hs[t + 1])
            W_bar += np.outer(a_bar, hs[t])
            h_bar = W.T @ a_bar
        return W_bar

    @njit
    def index_loop_grad(x):
        x_bar = np.zeros(100)
        for i in range(100):
            x_bar[i] = math.cos(x[i]) * x[i] + math.sin(x[i])
        return x_bar

    return {"a": njit(W.scalar_rev_grad), "b": ode_euler_grad, "f": rosenbrock_grad,
            "g": rnn_loss_grad, "h": index_loop_grad, "J1": njit(W.scalar_fwd_jvp)}


def main():
    opts = common.parse_args(__doc__.splitlines()[0])
    s2sad, err = common.load_s2sad()
    if s2sad is None:
        raise SystemExit(f"cannot import s2sad: {err}")
    try:
        import numba
    except ImportError:
        raise SystemExit("bench_numba needs Numba: pip install 's2sad[numba]'") from None
    hand_nb = hand_written_numba(numba)
    rng = np.random.default_rng(0)
    rows, notes, speedups = [], [], []
    cases = [(w, "grad") for w in W.GRAD_WORKLOADS] + [(w, "jvp") for w in W.JVP_WORKLOADS]
    for w, mode in cases:
        if opts.only and w.key not in opts.only:
            continue
        if mode == "grad":
            args = primal_args = w.make_args(rng)
            interp = s2sad.grad(w.primal, wrt=w.wrt)
            jitted = s2sad.grad(w.primal, wrt=w.wrt, backend="numba")
        else:
            primals, tangents = w.make_args(rng)
            args = tuple(primals) + tuple(tangents)
            primal_args = tuple(primals)
            interp = s2sad.jvp(w.primal)
            jitted = s2sad.jvp(w.primal, backend="numba")
        want = w.hand(*args)
        interp(*args)
        try:
            got, compile_s = common.timed_first_call(jitted, args)
        except s2sad.S2SADError as e:
            rows.append([f"({w.key}) {w.name}", "", "", "refused (notes)", "", "", "", "",
                         "", "", "", ""])
            notes.append((w.key, f"{type(e).__name__}: {e.message}"))
            continue
        check = common.check_cell(got, want)
        candidates = [(interp, args), (w.hand, args), (jitted, args)]
        if w.key in hand_nb:
            hand_nb[w.key](*args)  # (compiled before timing)
            candidates.append((hand_nb[w.key], args))
        primal_nb = None
        if not w.vectorised:  # the primal itself, compiled by Numba
            primal_nb = numba.njit(cache=False)(w.primal)
            primal_nb(*primal_args)
            candidates.append((primal_nb, primal_args))
        jax_fn = common.jax_jit_grad(w.primal, w.wrt) if mode == "grad" and not opts.no_peers \
            else None
        if jax_fn is not None:
            try:
                jax_fn(*args)
            except Exception as e:  # (a while loop on a traced value: jax.jit refuses)
                notes.append((w.key, f"jax.jit: {type(e).__name__}"))
                jax_fn = None
            else:
                candidates.append((jax_fn, args))
        times = [t.best for t in measure_many(candidates, repeat=opts.repeat,
                                              target=opts.target)]
        t_interp, t_hand, t_nb = times[:3]
        t_hand_nb = times[3] if w.key in hand_nb else None
        t_primal = times[3 + (w.key in hand_nb)] if primal_nb is not None else None
        over_primal = None
        if primal_nb is not None:
            over_primal = paired_ratio(jitted, args, primal_nb, primal_args, opts)
        t_jax = times[-1] if jax_fn is not None else None
        speedup = t_interp / t_nb
        if not w.vectorised:
            speedups.append(speedup)
        rows.append([f"({w.key}) {w.name}", fmt_time(t_interp), fmt_time(t_hand),
                     fmt_time(t_nb), fmt_time(t_hand_nb) if t_hand_nb else "-",
                     fmt_time(t_jax) if t_jax else "-",
                     f"{speedup:.1f}x" + ("" if w.vectorised else
                                          (" ok" if speedup >= TARGET else " MISS")),
                     f"{t_hand / t_nb:.2f}x", fmt_time(t_primal) if t_primal else "-",
                     f"{over_primal:.2f}x" + (" ok" if over_primal <= PRIMAL_TARGET
                                              else " MISS") if over_primal else "-",
                     f"{compile_s:.2f} s", check])
    if rows:
        table(rows, headers=["workload", "s2sad interp", "hand NumPy", "s2sad numba",
                             "hand Numba", "jax.jit", "interp/numba", "hand/numba",
                             "njit primal", "÷ njit primal", "compile", "check"],
              title="backend=\"numba\": per-call times (min of repeats); interp/numba is the "
                    f"speed-up (target >= {TARGET:.0f}x on scalar and loop workloads); "
                    "÷ njit primal the derivative's time over numba.njit(primal)'s "
                    f"(target <= {PRIMAL_TARGET:.0f}x)")
        if speedups:
            print(f"\nscalar and loop workloads: speed-up over the interpreted derivative "
                  f"{min(speedups):.1f}x to {max(speedups):.1f}x")
    common.print_notes(notes)
    if not opts.only or "sizes" in opts.only:
        every_size(s2sad)


def paired_ratio(fn, args, base, base_args, opts):
    """`fn`'s time over `base`'s: the median, over rounds, of the ratio of two batches run
    one after the other (each round's pair sees the same load of the machine, where the
    minimum of each, taken in different rounds, need not)."""
    a, b = measure_many([(fn, args), (base, base_args)], repeat=max(opts.repeat, 15),
                        target=opts.target)
    return statistics.median(x / y for x, y in zip(a.samples, b.samples))


SIZES = (10, 11, 100, 1000, 5000)
SIZE_TARGET = 0.20  # the second size's first call under this share of the first size's


def rosenbrock(x):  # (workloads.py's, a function of its own: compiled afresh here)
    a = x[1:] - x[:-1] * x[:-1]
    b = 1.0 - x[:-1]
    return np.sum(100.0 * a * a + b * b)


def least_squares(A, b, x):
    r = A @ x - b
    return 0.5 * np.sum(r * r) + 1e-3 * np.sum(x * x)


def least_squares_grad(A, b, x):
    return A.T @ (A @ x - b) + 2e-3 * x


def every_size(s2sad):
    """Issue 34 with backend="numba": the first call at each size of a fresh derivative
    (from a cold cache: code generation, both compiles for every size, Numba's compile),
    and how many specialisations served the five sizes."""
    rng = np.random.default_rng(1)
    cases = [
        ("Rosenbrock grad", s2sad.grad(rosenbrock, backend="numba"), W.rosenbrock_grad,
         lambda n: (rng.uniform(-1.5, 1.5, n),)),
        ("least squares grad (n x 8)", s2sad.grad(least_squares, wrt=2, backend="numba"),
         least_squares_grad,
         lambda n: (rng.normal(size=(n, 8)), rng.normal(size=n), rng.normal(size=8))),
    ]
    rows = []
    for name, g, hand, make in cases:
        firsts, served, ok = [], set(), True
        for n in SIZES:
            args = make(n)
            got, seconds = common.timed_first_call(g, args)
            firsts.append(seconds)
            served.add(id(g._last))
            ok = ok and np.allclose(got, hand(*args), rtol=1e-9, atol=1e-9)
        share = firsts[1] / firsts[0]
        rows.append([name] + [fmt_time(t) for t in firsts] +
                    [f"{share:.1%}" + (" ok" if share < SIZE_TARGET else " MISS"),
                     str(len(served)), "ok" if ok else "WRONG"])
    table(rows, headers=["derivative"] + [f"n={n}" for n in SIZES] +
          ["2nd/1st", "compiles", "check"],
          title="backend=\"numba\", one specialisation for every size (issue 34): first call "
                f"at each size (target: 2nd/1st < {SIZE_TARGET:.0%}, one compile)")


if __name__ == "__main__":
    main()
