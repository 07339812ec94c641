"""Checkpointing (issue 16 item 3): a 20,000-step loop over arrays of 1,000, its gradient
with the full tape against `checkpoints=32` (binomial schedule): peak memory (tracemalloc,
in a run of its own) and time (best of `--repeat` runs, without tracemalloc).
Run `python bench/bench_checkpoint.py` (`--steps`, `--size`, `--k`, `--repeat`).
"""

import argparse
import gc
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import s2sad  # noqa: E402
from s2sad.ir import revolve  # noqa: E402


def simulate(x, w, steps):
    """Explicit time stepping of a nonlinear ODE (one array of state)."""
    s = x
    for i in range(steps):
        s = s + 0.01 * np.sin(s * w) - 0.001 * s
    return np.sum(s * s)


def peak(fn, *args):
    """(result, peak bytes allocated above the start) of one call."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    out = fn(*args)
    top = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, top - base


def best(fn, args, repeat):
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--size", type=int, default=1_000)
    ap.add_argument("--k", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    x, w = rng.uniform(-1, 1, a.size), rng.uniform(0.5, 1.5, a.size)
    args = (x, w, a.steps)
    full = s2sad.grad(simulate, wrt=(0, 1))
    ckpt = s2sad.grad(simulate, wrt=(0, 1), checkpoints=a.k)
    g_full, g_ckpt = full(*args), ckpt(*args)  # (compiles both)
    assert all(np.array_equal(p, q) for p, q in zip(g_full, g_ckpt)), "gradients differ"
    revolve.record = []
    _, m_ckpt = peak(ckpt, *args)
    (schedule,) = revolve.record
    revolve.record = None
    _, m_full = peak(full, *args)
    _, m_primal = peak(simulate, *args)
    t_primal = best(simulate, args, a.repeat)
    t_full = best(full, args, a.repeat)
    t_ckpt = best(ckpt, args, a.repeat)
    state = x.nbytes
    mb = 1 / 2 ** 20
    print(f"{a.steps} steps over arrays of {a.size} (state {state * mb:.3f} MB), "
          f"K = {a.k}; gradients bit-identical: yes")
    print(f"snapshots held at most: {schedule.max_live} (K = {a.k}); snapshots stored in "
          f"all: {schedule.stores}; repetition number r = "
          f"{revolve.repetitions(a.steps, a.k - 1)}")
    print(f"{'':22} {'time':>9} {'x primal':>9} {'peak memory':>12}")
    for name, t, m in (("primal", t_primal, m_primal), ("grad, full tape", t_full, m_full),
                       (f"grad, checkpoints={a.k}", t_ckpt, m_ckpt)):
        print(f"{name:22} {t:8.3f}s {t / t_primal:8.2f}x {m * mb:10.1f} MB")
    print(f"checkpointed / full tape: time {t_ckpt / t_full:.2f}x, "
          f"peak memory {m_ckpt / m_full:.3f}x")


if __name__ == "__main__":
    main()
