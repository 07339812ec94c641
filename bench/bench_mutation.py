"""A loop that fills an array (issue 8): explicit time stepping that writes its state
history, gradient by s2sad against a hand-written one. Target: <= 1.3x hand-written.
Run `python bench/bench_mutation.py`.
"""

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import fmt_ratio, fmt_time, measure_many, table  # noqa: E402

import s2sad  # noqa: E402

N = 200


def history(y0, k):
    ys = np.zeros(N + 1)
    ys[0] = y0
    for t in range(N):
        ys[t + 1] = ys[t] - 0.01 * k * math.sin(ys[t])
    return np.sum(ys * ys)


def history_grad_hand(y0, k):
    ys = np.zeros(N + 1)
    ys[0] = y0
    for t in range(N):
        ys[t + 1] = ys[t] - 0.01 * k * math.sin(ys[t])
    ys_bar = 2.0 * ys
    k_bar = 0.0
    for t in reversed(range(N)):
        g = ys_bar[t + 1]
        y = ys[t]
        ys_bar[t] += g * (1.0 - 0.01 * k * math.cos(y))
        k_bar -= g * 0.01 * math.sin(y)
    return ys_bar[0], k_bar


def main():
    args = (0.9, 1.7)
    g = s2sad.grad(history, wrt=(0, 1))
    got, want = g(*args), history_grad_hand(*args)
    assert np.allclose(got, want, rtol=1e-12), (got, want)
    t_gen, t_hand, t_primal = measure_many([(g, args), (history_grad_hand, args),
                                            (history, args)])
    table([["s2sad.grad", fmt_time(t_gen.best),
            fmt_ratio(t_gen.best, t_hand.best) + " of hand (target <= 1.3x)"],
           ["hand-written gradient", fmt_time(t_hand.best), ""],
           ["primal", fmt_time(t_primal.best), ""]],
          headers=[f"state history, {N} steps", "time", "ratio"])


if __name__ == "__main__":
    main()
