"""A tiny timing harness for the s2sad benchmarks.

Design choices, for a noisy machine with few cores:

* Every figure is the **minimum** over several repeats of the mean time of a
  batch of calls.  The minimum is the least-disturbed run; noise only ever
  adds time.
* Functions that are compared with each other are measured **side by side,
  interleaved, in one process**: each repeat round times every candidate once,
  so slow drifts of the machine (frequency scaling, a neighbour process) hit
  all candidates alike.
* The batch size (`number`) comes from `timeit.Timer.autorange`, scaled to
  `target` seconds per batch, unless it is given.
* The timed statement is `fn(a0, a1, ...)` with the arguments bound as globals
  of the timer, so nothing but the call itself is timed (no lambda, no
  `*args` unpacking).

Nothing here asserts on a time: scripts print figures and ratios.
"""

from __future__ import annotations

import math
import statistics
import time
import timeit

__all__ = [
    "Timing",
    "measure",
    "measure_many",
    "fmt_time",
    "fmt_ratio",
    "table",
    "median",
]

DEFAULT_REPEAT = 5
DEFAULT_TARGET = 0.05  # seconds per timed batch


def _timer(fn, args, kwargs=None):
    names = [f"a{i}" for i in range(len(args))]
    env = {"fn": fn, **dict(zip(names, args))}
    keywords = [f"{k}=k_{k}" for k in kwargs or {}]
    env.update({f"k_{k}": v for k, v in (kwargs or {}).items()})
    stmt = f"fn({', '.join(names + keywords)})"
    return timeit.Timer(stmt, timer=time.perf_counter, globals=env)


def _calibrate(timer, target):
    """Batch size so that one batch takes about `target` seconds."""
    number, elapsed = timer.autorange()  # first number with a batch >= 0.2 s
    per_call = elapsed / number
    return max(1, int(round(target / per_call))) if per_call > 0 else number


class Timing:
    """Result of one measurement: best, median and all per-call times (s)."""

    __slots__ = ("best", "median", "samples", "number")

    def __init__(self, samples, number):
        self.samples = list(samples)
        self.number = number
        self.best = min(self.samples)
        self.median = statistics.median(self.samples)

    def __float__(self):
        return self.best

    def __repr__(self):
        return f"Timing(best={fmt_time(self.best)}, n={self.number}x{len(self.samples)})"


def measure_many(cases, repeat=DEFAULT_REPEAT, number=None, target=DEFAULT_TARGET):
    """Time several `(fn, args)` cases interleaved; return a list of `Timing`.

    `cases` is a sequence of `(fn, args)` pairs (args a tuple), or of `(fn, args,
    kwargs)` triples (the keywords written into the timed call: `fn(a0, k=k_k)`).  Each
    repeat round runs one batch of every case in turn.  The result for each case is
    the minimum over the rounds of the mean per-call time of a batch.
    """
    timers = [_timer(c[0], tuple(c[1]), c[2] if len(c) > 2 else None) for c in cases]
    numbers = [number or _calibrate(t, target) for t in timers]
    samples = [[] for _ in timers]
    for _ in range(repeat):
        for k, (t, n) in enumerate(zip(timers, numbers)):
            samples[k].append(t.timeit(n) / n)
    return [Timing(s, n) for s, n in zip(samples, numbers)]


def measure(fn, *args, repeat=DEFAULT_REPEAT, number=None, target=DEFAULT_TARGET):
    """Best per-call time of `fn(*args)` in seconds (minimum of `repeat` batches)."""
    return measure_many([(fn, args)], repeat=repeat, number=number, target=target)[0].best


# --------------------------------------------------------------------------
# formatting


def fmt_time(seconds):
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "n/a"
    s = float(seconds)
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    if s < 1.0:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def fmt_ratio(num, den, target=None):
    """`num/den` as '1.23x', with a pass/miss mark when a target is given."""
    if num is None or den is None or not den:
        return "n/a"
    r = float(num) / float(den)
    text = f"{r:.2f}x"
    if target is not None:
        text += " ok" if r <= target else " MISS"
    return text


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def table(rows, headers=None, title=None, out=print):
    """Print `rows` (lists of cells) as aligned columns.

    The first column is left-aligned (row labels), the others right-aligned.
    Cells are converted with `str`; floats are left to the caller to format.
    """
    rows = [[str(c) for c in row] for row in rows]
    if headers is not None:
        headers = [str(h) for h in headers]
    all_rows = ([headers] if headers else []) + rows
    if not all_rows:
        return
    ncol = max(len(r) for r in all_rows)
    for r in all_rows:
        r.extend([""] * (ncol - len(r)))
    widths = [max(len(r[i]) for r in all_rows) for i in range(ncol)]

    def line(r):
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        return "  ".join(cells).rstrip()

    if title:
        out(title)
    if headers:
        out(line(headers))
        out("  ".join("-" * w for w in widths))
    for r in rows:
        out(line(r))
