"""Reverse mode: s2sad.grad against a hand-written gradient, and per-call overhead.

    python bench/bench_reverse.py [--quick] [--only a,d,e] [--no-peers]

Part 1, workloads (a)-(h): times, interleaved in one process, the primal, the
hand-written gradient and `s2sad.grad(f, wrt=...)`, and prints

* gen/hand    generated / hand-written gradient time  (target <= 1.3 each,
              and the median over the workloads <= 1.1)
* hand/primal hand-written gradient / primal time     (for reference)
* gen/primal  generated gradient / primal time         (target <= 3 on the
              vectorised workloads d, e, f, g)

If `autograd` or `jax` is importable, their gradients are timed too (the same
primal source with `np` and `math` rebound to their NumPy), shown as time and
ratio to the hand-written gradient.  Neither is required.

Part 2, workload (i) `f(x) = x * x`: the cost of calling the object that
`s2sad.grad(f)` returns against calling the raw generated function it wraps
(`g.compiled_function`, `g._fn`, or else `g.source` compiled here with
`exec`); the difference is the per-call dispatch overhead (target <= 0.3 us).

Times are the minimum over repeats of the mean of a batch of calls; the first
call (which compiles) is reported separately.  Cells the compiler cannot
produce yet read `n/a (ErrorType: message)`.
"""

from __future__ import annotations

import math
import types

import numpy as np

import common
import harness
import workloads

TARGET_EACH = 1.3
TARGET_MEDIAN = 1.1
TARGET_VEC_GRAD_PRIMAL = 3.0
TARGET_OVERHEAD_US = 0.3


def bench_workloads(s2sad, import_error, opts, rng):
    peers = common.available_peers(opts)
    rows, notes, gen_hand = [], [], []
    for w in workloads.GRAD_WORKLOADS:
        if opts.only and w.key not in opts.only:
            continue
        args = w.make_args(rng)
        want = w.hand(*args)
        cases = [(w.primal, args), (w.hand, args)]

        gen_error = import_error
        first = check = "n/a"
        gen_index = None
        if s2sad is not None:
            try:
                df = s2sad.grad(w.primal, wrt=w.wrt)
                got, first_s = common.timed_first_call(df, args)
                first = harness.fmt_time(first_s)
                check = common.check_cell(got, want)
                gen_index = len(cases)
                cases.append((df, args))
            except Exception as exc:
                gen_error = exc
        if gen_error is not None:
            notes.append((w.key, "s2sad: " + common.error_text(gen_error)))

        peer_index, peer_error = {}, {}
        for name, make in peers.items():
            try:
                dp = make(w.primal, w.wrt)
                got = dp(*args)
                if common.max_rel_err(got, want) > 1e-6:
                    raise ValueError("gradient differs from the hand-written one")
                peer_index[name] = len(cases)
                cases.append((dp, args))
            except Exception as exc:
                peer_error[name] = exc
                notes.append((w.key, f"{name}: " + common.error_text(exc)))

        t = harness.measure_many(cases, repeat=opts.repeat, target=opts.target)
        primal, hand = t[0].best, t[1].best
        gen = t[gen_index].best if gen_index is not None else None
        if gen is not None and check == "ok":  # a wrong gradient does not count
            gen_hand.append(gen / hand)
        elif gen is not None:
            notes.append((w.key, f"s2sad: {check}; left out of the median"))
        target_gp = TARGET_VEC_GRAD_PRIMAL if w.vectorised else None
        row = [
            f"({w.key}) {w.name}",
            harness.fmt_time(primal),
            harness.fmt_time(hand),
            harness.fmt_time(gen) if gen is not None else common.na(gen_error),
            harness.fmt_ratio(gen, hand, TARGET_EACH),
            harness.fmt_ratio(hand, primal),
            harness.fmt_ratio(gen, primal, target_gp),
            first,
            check,
        ]
        for name in peers:
            if name in peer_index:
                tp = t[peer_index[name]].best
                row.append(f"{harness.fmt_time(tp)} ({harness.fmt_ratio(tp, hand)})")
            else:
                row.append(common.na(peer_error[name]))
        rows.append(row)

    headers = ["workload", "primal", "hand grad", "s2sad grad",
               f"gen/hand (<={TARGET_EACH})", "hand/primal",
               f"gen/primal (<={TARGET_VEC_GRAD_PRIMAL:g} d-g)", "1st call", "check"]
    headers += [f"{name} (/hand)" for name in peers]
    print(f"s2sad reverse mode (grad); min of {opts.repeat} timed batches, interleaved")
    print(f"targets: generated <= {TARGET_EACH}x hand-written on each workload, "
          f"median <= {TARGET_MEDIAN}x; grad <= {TARGET_VEC_GRAD_PRIMAL:g}x primal "
          f"on the vectorised workloads (d, e, f, g)")
    print()
    harness.table(rows, headers)
    med = harness.median(gen_hand)
    print()
    if med is None:
        print(f"median gen/hand: n/a (no generated gradient ran)   target <= {TARGET_MEDIAN}")
    else:
        mark = "ok" if med <= TARGET_MEDIAN else "MISS"
        print(f"median gen/hand over {len(gen_hand)} workload(s): {med:.2f}x   "
              f"target <= {TARGET_MEDIAN}  {mark}")
    return notes


# --------------------------------------------------------------------------
# per-call overhead


def raw_generated(g, args, want):
    """The plain generated function behind `g`, and how it was found."""
    for attr in ("compiled_function", "_fn"):
        fn = getattr(g, attr, None)
        if callable(fn):
            return fn, f"g.{attr}"
    src = g.source
    filename = "<s2sad generated source, compiled by bench_reverse>"
    ns = {"np": np, "numpy": np, "math": math, "__name__": "s2sad_bench_generated"}
    exec(compile(src, filename, "exec"), ns)
    defined = [v for v in ns.values()
               if isinstance(v, types.FunctionType) and v.__code__.co_filename == filename]
    for fn in reversed(defined):  # the entry point is usually defined last
        try:
            if common.max_rel_err(fn(*args), want) <= 1e-12:
                return fn, f"exec(g.source) -> {fn.__name__}"
        except Exception:
            continue
    raise LookupError(f"no function in g.source returns the gradient "
                      f"(defined: {[f.__name__ for f in defined]})")


def bench_overhead(s2sad, import_error, opts, rng, w=workloads.OVERHEAD_WORKLOAD):
    args = w.make_args(rng)
    want = w.hand(*args)
    cases = [(w.primal, args), (w.hand, args)]
    labels = ["primal", "hand-written gradient"]
    route, error = None, import_error
    if s2sad is not None:
        try:
            g = s2sad.grad(w.primal)
            got = g(*args)
            if common.max_rel_err(got, want) > 1e-12:
                raise ValueError(f"s2sad.grad(square)({args[0]}) = {got!r}, expected {want!r}")
            cases.append((g, args))
            labels.append("s2sad.grad(f) object")
            raw, route = raw_generated(g, args, want)
            cases.append((raw, args))
            labels.append("raw generated function")
        except Exception as exc:
            error = exc

    t = harness.measure_many(cases, repeat=max(opts.repeat, 15), target=opts.target)
    rows = [[label, harness.fmt_time(x.best), f"{x.best * 1e9:8.1f} ns"]
            for label, x in zip(labels, t)]
    if len(t) < 3:
        rows.append(["s2sad.grad(f) object", common.na(error), ""])
    elif len(t) < 4:
        rows.append(["raw generated function", common.na(error), ""])
    print()
    print(f"({w.key}) per-call overhead, {w.name} on a Python float; "
          f"min of {max(opts.repeat, 15)} timed batches, interleaved")
    harness.table(rows, ["callable", "time", "ns"])
    if len(t) == 4:
        over_us = (t[2].best - t[3].best) * 1e6
        mark = "ok" if over_us <= TARGET_OVERHEAD_US else "MISS"
        print(f"dispatch overhead (object - raw): {over_us:+.3f} µs   "
              f"target <= {TARGET_OVERHEAD_US} µs  {mark}   [raw via {route}]")
    else:
        print(f"dispatch overhead (object - raw): {common.na(error)}   "
              f"target <= {TARGET_OVERHEAD_US} µs")
    return [(w.key, common.error_text(error))] if error is not None else []


def main():
    opts = common.parse_args(__doc__.splitlines()[0])
    s2sad, import_error = common.load_s2sad()
    rng = np.random.default_rng(0)
    notes = bench_workloads(s2sad, import_error, opts, rng)
    if not opts.only or "i" in opts.only:
        notes += bench_overhead(s2sad, import_error, opts, rng)
        notes += bench_overhead(s2sad, import_error, opts, rng,
                                workloads.GUARDED_OVERHEAD_WORKLOAD)
    common.print_notes(notes)


if __name__ == "__main__":
    main()
