"""Forward mode: s2sad.jvp against a hand-written JVP.

    python bench/bench_forward.py [--quick]

For each JVP workload (J1 scalar `math` code, J2 vectorised NumPy) it times,
interleaved in one process, the primal, the hand-written JVP and the
s2sad-generated JVP, and prints

* gen/hand    generated JVP time / hand-written JVP time   (target <= 1.1)
* hand/primal hand-written JVP time / primal time          (for reference)
* gen/primal  generated JVP time / primal time             (target <= 2.5)

Times are the minimum over repeats of the mean of a batch of calls.  The
first call of the generated JVP (which compiles it) is reported separately
and not included in the timings.  Cells the compiler cannot produce yet
read `n/a (ErrorType: message)`.
"""

from __future__ import annotations

import numpy as np

import common
import harness
import workloads

TARGET_GEN_HAND = 1.1
TARGET_JVP_PRIMAL = 2.5


def main():
    opts = common.parse_args(__doc__.splitlines()[0])
    s2sad, import_error = common.load_s2sad()
    rng = np.random.default_rng(0)
    rows, notes = [], []
    for w in workloads.JVP_WORKLOADS:
        if opts.only and w.key not in opts.only:
            continue
        primals, tangents = w.make_args(rng)
        args = tuple(primals) + tuple(tangents)
        want = w.hand(*args)
        cases = [(w.primal, primals), (w.hand, args)]

        gen_error = import_error
        first = check = "n/a"
        if s2sad is not None:
            try:
                f_jvp = s2sad.jvp(w.primal)
                got, first_s = common.timed_first_call(f_jvp, args)
                first = harness.fmt_time(first_s)
                check = common.check_cell(got, want)
                cases.append((f_jvp, args))
            except Exception as exc:
                gen_error = exc
        if gen_error is not None:
            notes.append((w.key, common.error_text(gen_error)))

        t = harness.measure_many(cases, repeat=opts.repeat, target=opts.target)
        primal, hand = t[0].best, t[1].best
        gen = t[2].best if len(t) > 2 else None
        rows.append([
            f"({w.key}) {w.name}",
            harness.fmt_time(primal),
            harness.fmt_time(hand),
            harness.fmt_time(gen) if gen is not None else common.na(gen_error),
            harness.fmt_ratio(gen, hand, TARGET_GEN_HAND),
            harness.fmt_ratio(hand, primal),
            harness.fmt_ratio(gen, primal, TARGET_JVP_PRIMAL),
            first,
            check,
        ])

    headers = ["workload", "primal", "hand JVP", "s2sad JVP",
               f"gen/hand (<={TARGET_GEN_HAND})", "hand/primal",
               f"gen/primal (<={TARGET_JVP_PRIMAL})", "1st call", "check"]
    print(f"s2sad forward mode (JVP); min of {opts.repeat} timed batches, interleaved")
    print(f"targets: generated <= {TARGET_GEN_HAND}x hand-written; "
          f"JVP <= {TARGET_JVP_PRIMAL}x primal")
    print()
    harness.table(rows, headers)
    common.print_notes(notes)


if __name__ == "__main__":
    main()
