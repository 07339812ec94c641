"""GradBench / ADBench problems: s2sad's gradient against a hand-written one.

    python bench/gradbench.py [--quick] [--only kmeans,gmm,...] [--repeat N]

For every problem of `gradbench_workloads.py` (k-means and its Newton
direction, GMM, ODE, LSTM, determinant, least squares, bundle adjustment),
times, interleaved in one process, the primal, the hand-written gradient and
`s2sad.grad(f, wrt=...)`, and prints gen/hand (target <= 1.3 on each).  The
k-means Newton direction is `grad(f) / hvp(f)(..., ones)` (the Hessian is
diagonal, so the HVP with a vector of ones is its diagonal): two calls, each of
which runs the primal's distance computation, which the hand-written direction
runs once; and, in a second row, both from one sweep as the hand-writer does:
`g, hv = grad_and_hvp(f)(..., ones)` (that is, `jvp(grad(f))`).
"""

from __future__ import annotations

import numpy as np

import common
import gradbench_workloads
import harness

TARGET_EACH = 1.3


def generated(s2sad, p):
    """The s2sad derivative of problem `p` (gradient, or Newton direction)."""
    if not p.newton:
        return gradbench_workloads.derivative(s2sad, p)
    if p.newton == "jvp":  # the gradient and the HVP from one sweep: the JVP of the gradient
        both = s2sad.grad_and_hvp(p.primal, wrt=p.wrt)

        def newton_jvp(*args):
            g, hv = both(*args, np.ones_like(args[p.wrt]))
            return g / hv

        return newton_jvp
    df = s2sad.grad(p.primal, wrt=p.wrt)
    hv = s2sad.hvp(p.primal, wrt=p.wrt)

    def newton(*args):
        return df(*args) / hv(*args, np.ones_like(args[p.wrt]))

    return newton


def main():
    opts = common.parse_args(__doc__.splitlines()[0])
    s2sad, import_error = common.load_s2sad()
    rng = np.random.default_rng(0)
    rows, notes, ratios = [], [], []
    for p in gradbench_workloads.PROBLEMS:
        if opts.only and p.key not in opts.only:
            continue
        args = p.make_args(rng)
        want = p.hand(*args)
        cases = [(p.primal, args), (p.hand, args)]
        error, first, check = import_error, "n/a", "n/a"
        if s2sad is not None:
            try:
                df = generated(s2sad, p)
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
        if gen is not None and check == "ok":
            ratios.append(gen / hand)
        rows.append([
            f"{p.key}: {p.name}",
            harness.fmt_time(primal),
            harness.fmt_time(hand),
            harness.fmt_time(gen) if gen is not None else common.na(error),
            harness.fmt_ratio(gen, hand, TARGET_EACH),
            harness.fmt_ratio(hand, primal),
            first,
            check,
        ])
    print(f"GradBench-style problems, reverse mode; min of {opts.repeat} timed batches, "
          f"interleaved")
    print()
    harness.table(rows, ["problem", "primal", "hand grad", "s2sad grad",
                         f"gen/hand (<={TARGET_EACH})", "hand/primal", "1st call", "check"])
    med = harness.median(ratios)
    if med is not None:
        print()
        print(f"median gen/hand over {len(ratios)} problem(s): {med:.2f}x")
    common.print_notes(notes)


if __name__ == "__main__":
    main()
