"""GradBench / ADBench problems on the other engines: s2sad's gradient with
`backend="numba"` against the interpreted one, the hand-written NumPy gradient and,
when JAX is installed, `jax.jit(jax.grad(f))` of the same source.

    python bench/gradbench_backends.py [--quick] [--only kmeans,gmm,...] [--repeat N]

The problems are `gradbench_workloads.py`'s (plain NumPy, in-place updates where a
numerical programmer writes them). A problem Numba cannot compile is listed with the
construct it refuses; JAX traces only code without in-place writes or integer reads of
traced values, so some problems have no JAX column. The Newton-direction rows are left
out (two derivatives each; `bench/gradbench.py` times them).
"""

from __future__ import annotations

import numpy as np

import common
import gradbench_workloads
import harness


def main():
    opts = common.parse_args(__doc__.splitlines()[0])
    s2sad, err = common.load_s2sad()
    if s2sad is None:
        raise SystemExit(f"cannot import s2sad: {err}")
    rng = np.random.default_rng(0)
    rows, notes = [], []
    for p in gradbench_workloads.PROBLEMS:
        if p.newton or (opts.only and p.key not in opts.only):
            continue
        args = p.make_args(rng)
        want = p.hand(*args)
        interp = gradbench_workloads.derivative(s2sad, p)
        cases = [(p.hand, args), (interp, args)]
        nb_cell, first, check = "refused", "-", "-"
        try:
            nb = gradbench_workloads.derivative(s2sad, p, backend="numba")
            got, first_s = common.timed_first_call(nb, args)
            first, check = f"{first_s:.1f} s", common.check_cell(got, want)
            cases.append((nb, args))
        except s2sad.S2SADError as e:
            notes.append((p.key, "numba: " + e.message.splitlines()[0]))
        jx = None
        if not opts.no_peers and not p.jacobian:
            try:
                jx = common.jax_jit_grad(p.primal, p.wrt)
                if jx is not None:
                    jx(*args)
                    cases.append((jx, args))
            except Exception as e:  # JAX cannot trace this source
                notes.append((p.key, f"jax.jit: {type(e).__name__}"))
                jx = None
        t = [c.best for c in harness.measure_many(cases, repeat=opts.repeat,
                                                  target=opts.target)]
        hand, gen = t[0], t[1]
        nb_t = t[2] if len(cases) > 2 and cases[2][0] is not jx else None
        jx_t = t[-1] if jx is not None else None
        if nb_t is not None:
            nb_cell = harness.fmt_time(nb_t)
        rows.append([f"{p.key}: {p.name}", harness.fmt_time(hand), harness.fmt_time(gen),
                     nb_cell, harness.fmt_time(jx_t) if jx_t else "-",
                     harness.fmt_ratio(nb_t, hand) if nb_t else "-",
                     harness.fmt_ratio(jx_t, hand) if jx_t else "-", first, check])
    print(f"GradBench-style problems on other engines; min of {opts.repeat} timed batches, "
          "interleaved")
    compiled = sum(1 for r in rows if r[3] != "refused")
    print(f"backend=\"numba\" compiles {compiled} of {len(rows)} formulations")
    print()
    harness.table(rows, ["problem", "hand NumPy", "s2sad", "s2sad numba", "jax.jit",
                         "numba/hand", "jax/hand", "numba 1st call", "check"])
    common.print_notes(notes)


if __name__ == "__main__":
    main()
