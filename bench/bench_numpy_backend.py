"""The NumPy backend against hand-written NumPy on loops of small array operations.

    python bench/bench_numpy_backend.py [--quick] [--only rnn,fill,rk4,ode] [--repeat N]

For every problem of `numpy_backend_workloads.py` (a tanh RNN, a matrix filled element by
element in a double loop, RK4 time stepping of Lotka-Volterra, and GradBench's RK4 ODE)
times, interleaved in one process, the primal, the hand-written gradient and
`s2sad.grad(f, wrt=...)`, and prints gen/hand against issue 35's targets (RNN <= 1.2,
the others <= 1.3).  These problems are dominated by the per-call cost of NumPy on small
arrays: the choice of call for a contraction (`a @ b` against `np.tensordot`), in-place
index updates and the layout of the tape are what the ratio measures.
"""

from __future__ import annotations

import numpy as np

import common
import harness
import numpy_backend_workloads

TARGETS = {"rnn": 1.2}
TARGET_DEFAULT = 1.3


def main():
    opts = common.parse_args(__doc__.splitlines()[0])
    s2sad, import_error = common.load_s2sad()
    rng = np.random.default_rng(0)
    rows, notes = [], []
    for p in numpy_backend_workloads.PROBLEMS:
        if opts.only and p.key not in opts.only:
            continue
        target = TARGETS.get(p.key, TARGET_DEFAULT)
        args = p.make_args(rng)
        want = p.hand(*args)
        cases = [(p.primal, args), (p.hand, args)]
        error, first, check = import_error, "n/a", "n/a"
        if s2sad is not None:
            try:
                df = s2sad.grad(p.primal, wrt=p.wrt)
                got, first_s = common.timed_first_call(df, args)
                first = harness.fmt_time(first_s)
                check = common.check_cell(got, want)
                cases.append((df, args))
            except Exception as exc:
                error = exc
        if len(cases) < 3:
            notes.append((p.key, "s2sad: " + common.error_text(error)))
        t = harness.measure_many(cases, repeat=opts.repeat, target=opts.target)
        primal, hand = t[0].best, t[1].best
        gen = t[2].best if len(t) > 2 else None
        rows.append([
            f"{p.key}: {p.name}",
            harness.fmt_time(primal),
            harness.fmt_time(hand),
            harness.fmt_time(gen) if gen is not None else common.na(error),
            harness.fmt_ratio(gen, hand, target) + f" (<={target})",
            harness.fmt_ratio(hand, primal),
            first,
            check,
        ])
    print(f"NumPy backend against hand-written NumPy, reverse mode; min of {opts.repeat} "
          f"timed batches, interleaved")
    print()
    harness.table(rows, ["problem", "primal", "hand grad", "s2sad grad", "gen/hand",
                         "hand/primal", "1st call", "check"])
    common.print_notes(notes)


if __name__ == "__main__":
    main()
