"""The per-call cost of a derivative by the calling convention of its function (issue 36, item 11).

    python bench/bench_conventions.py [--quick] [--repeat N]

One body, `0.5 * x * x` on a Python float, behind each signature a user writes: plain
`f(x)`, a defaulted parameter `f(x, scale=1.0)` (left out, given by position, by keyword),
a keyword-only one `f(x, *, scale=1.0)`, SciPy's `fun(x, *args)` (no extra argument, one),
and a JVP or vjp of a defaulted function (whose differentiated arguments follow the
arguments given: a routed call). Each row is timed interleaved with the plain signature's
derivative of the same mode; the columns are the time, its difference to the plain one
(the goal: within 0.3 µs) and the ratio. (`**kwargs` parameters are not supported by the
compiler, so they have no row.) Nothing here asserts on a time.
"""

from __future__ import annotations

import common
import harness

GOAL_US = 0.3


def plain(x):
    return 0.5 * x * x


def defaulted(x, scale=1.0):
    return 0.5 * x * x


def keyword_only(x, *, scale=1.0):
    return 0.5 * x * x


def scipy_style(x, *args):
    return 0.5 * x * x


X = 1.5
# (label, function, the call's extra positional arguments, its keywords)
CONVENTIONS = [
    ("f(x, scale=1.0): left out", defaulted, (), {}),
    ("f(x, scale=1.0): by position", defaulted, (2.0,), {}),
    ("f(x, scale=1.0): by keyword", defaulted, (), {"scale": 2.0}),
    ("f(x, *, scale=1.0): left out", keyword_only, (), {}),
    ("f(x, *, scale=1.0): given", keyword_only, (), {"scale": 2.0}),
    ("fun(x, *args): no args", scipy_style, (), {}),
    ("fun(x, *args): one arg", scipy_style, (2.0,), {}),
]


def calls(s2sad, mode):
    """(label, derivative, positional arguments, keywords) of each row of `mode`."""
    make = getattr(s2sad, mode)
    tangent = (1.0,) if mode == "jvp" else ()
    rows = [("f(x)", make(plain), (X,) + tangent, {})]
    for label, f, extra, kw in CONVENTIONS:
        if mode == "jvp" and f is defaulted and extra:
            # given by position, a defaulted argument is differentiated: it takes a tangent
            rows.append((label, make(f), (X,) + extra + tangent + (0.0,), kw))
        elif mode == "jvp" and f is scipy_style:
            rows.append((label, make(f), (X,) + tangent + extra, kw))
        else:
            rows.append((label, make(f), (X,) + extra + tangent, kw))
    return rows


def bench_mode(s2sad, mode, opts):
    rows = calls(s2sad, mode)
    cases, labels, notes = [], [], []
    for label, d, args, kw in rows:
        try:
            for _ in range(3):  # compile, install the dispatcher, use it
                d(*args, **kw)
        except Exception as exc:
            notes.append((f"{mode} {label}", common.error_text(exc)))
            continue
        cases.append((d, args, kw))
        labels.append(label)
    t = harness.measure_many(cases, repeat=max(opts.repeat, 9), target=opts.target)
    base = t[0].best if labels and labels[0] == "f(x)" else None
    table = []
    for label, x in zip(labels, t):
        over = f"{(x.best - base) * 1e6:+.3f} µs" if base is not None else "n/a"
        mark = "" if base is None or (x.best - base) * 1e6 <= GOAL_US else "  MISS"
        table.append([label, harness.fmt_time(x.best), over + mark,
                      harness.fmt_ratio(x.best, base) if base else "n/a"])
    print()
    print(f"s2sad.{mode}: per call, by the function's signature (a Python float; min of "
          f"{max(opts.repeat, 9)} interleaved batches); goal: within {GOAL_US} µs of f(x)")
    harness.table(table, ["convention", "time", "vs f(x)", "ratio"])
    return notes


def main():
    opts = common.parse_args(__doc__.splitlines()[0])
    s2sad, import_error = common.load_s2sad()
    if s2sad is None:
        print(f"s2sad cannot be imported: {common.na(import_error)}")
        return
    notes = []
    for mode in ("grad", "jvp", "vjp"):
        notes += bench_mode(s2sad, mode, opts)
    common.print_notes(notes)


if __name__ == "__main__":
    main()
