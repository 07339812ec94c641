"""How much real third-party code s2sad differentiates as written: the corpus report.

Runs every case of tests/realcode/cases.py (library functions, methods and objects as their
users call them, see docs/realcode.md) in each mode -- reverse (grad or vjp), forward (jvp)
and the jvp/vjp agreement -- and prints, per library and overall, how many cases pass, are
refused (by category), give a wrong derivative, or crash. A case passes when every mode it
has passes; it counts under the first mode that does not.

    python bench/realcode_report.py              # the tables
    python bench/realcode_report.py --cases      # plus one line per case that fails
    python bench/realcode_report.py --write-expected  # tests/realcode/expected.py
    python bench/realcode_report.py --library lmfit
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.realcode.cases import CASES  # noqa: E402
from tests.realcode.harness import checks, refusal_category, run_check  # noqa: E402

def category(outcome) -> str:
    return refusal_category(outcome.error)


# The known bugs (exceptions that are not S2SADErrors, wrong derivatives), named by their
# root cause; docs/realcode.md gives a minimal reproducer of each.
BUGS = [
    (r"unhashable type",
     "BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as "
     "the function or merged after a branch, raises TypeError: unhashable type"),
    (r"missing a required argument: '\w+_dot' \(it takes \([^)]*out",
     "BUG: crash: jvp of a ufunc without a rule takes its `out` for a parameter and raises "
     "TypeError instead of the missing-rule refusal"),
    (r"too many positional arguments",
     "BUG: crash: a primitive with rules whose signature is (x, *args, **kwds) "
     "(scipy.stats.norm.cdf) called with loc, scale by position raises TypeError"),
    (r"boolean array indexing assignment",
     "BUG: crash: the jvp of a masked write v[mask] = c * sign(z)[mask] writes a zero "
     "tangent of the unmasked shape (np.zeros((n,)))"),
]


def bug_reason(outcome) -> str:
    for pattern, reason in BUGS:
        if re.search(pattern, outcome.detail):
            return reason
    return f"BUG: {outcome.status}: {outcome.detail[:70]}"


def run(cases):
    results = []
    for case in cases:
        t0 = time.perf_counter()
        outcomes = {name: run_check(case, check) for name, check in checks(case).items()}
        results.append((case, outcomes, time.perf_counter() - t0))
    return results


def verdict(outcomes):
    """The case's status and the outcome that decides it."""
    for status in ("crash", "wrong", "refused"):
        for mode, o in outcomes.items():
            if o.status == status:
                return status, mode, o
    return "pass", None, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", action="store_true", help="list every failing case")
    parser.add_argument("--write-expected", action="store_true",
                        help="rewrite tests/realcode/expected.py from this run")
    parser.add_argument("--library", help="only this library's cases")
    options = parser.parse_args()
    cases = [c for c in CASES if options.library in (None, c.library)]
    t0 = time.perf_counter()
    results = run(cases)
    elapsed = time.perf_counter() - t0

    by_lib: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    by_cat: dict[str, list] = collections.defaultdict(list)
    for case, outcomes, _ in results:
        status, mode, o = verdict(outcomes)
        by_lib[case.library][status] += 1
        by_lib["all"][status] += 1
        if status == "refused":
            by_cat[category(o)].append((case, mode, o))

    print(f"{len(cases)} cases in {elapsed:.1f} s\n")
    print(f"| {'library':<14} | cases | passed | refused | wrong | crash | passing |")
    print("|" + "-" * 16 + "|-------|--------|---------|-------|-------|---------|")
    for lib in [k for k in by_lib if k != "all"] + ["all"]:
        c = by_lib[lib]
        n = sum(c.values())
        print(f"| {lib:<14} | {n:>5} | {c['pass']:>6} | {c['refused']:>7} | {c['wrong']:>5} "
              f"| {c['crash']:>5} | {100 * c['pass'] / n:>6.0f}% |")
    print("\nRefusals by category (most common first; a case counts once, under its first "
          "refused mode):\n")
    libraries = [k for k in by_lib if k != "all"]
    print("| category | cases | " + " | ".join(libraries) + " | examples |")
    print("|---|---|" + "---|" * len(libraries) + "---|")
    for cat, items in sorted(by_cat.items(), key=lambda kv: -len(kv[1])):
        examples = ", ".join(c.name for c, _, _ in items[:3])
        per_lib = [sum(c.library == lib for c, _, _ in items) for lib in libraries]
        print(f"| {cat} | {len(items)} | " + " | ".join(str(n) for n in per_lib)
              + f" | {examples} |")
    bad = [(c, o) for c, o, _ in results if verdict(o)[0] in ("wrong", "crash")]
    if bad:
        print("\nWrong derivatives and crashes:\n")
        for case, outcomes in bad:
            status, mode, o = verdict(outcomes)
            print(f"- {case.name} [{mode}] {status}: {o.detail[:300]}")
    if options.cases:
        print("\nEvery failing case:\n")
        for case, outcomes, dt in results:
            status, mode, o = verdict(outcomes)
            if status != "pass":
                print(f"- {case.name} [{mode}, {dt:.2f} s] {status} "
                      f"({category(o) if status == 'refused' else ''}): {o.detail[:400]}")
    slow = sorted(results, key=lambda t: -t[2])[:5]
    print("\nSlowest cases: " + ", ".join(f"{c.name} {dt:.2f} s" for c, _, dt in slow))
    if options.write_expected:
        if options.library:
            sys.exit("--write-expected needs every case (no --library)")
        write_expected(results)


EXPECTED_HEADER = '''"""What goes wrong today with each corpus case, per mode: "rev" (grad or vjp), "fwd" (jvp).

Written by `python bench/realcode_report.py --write-expected`. A refusal category marks the
case xfail(strict=True, raises=S2SADError); a reason starting "BUG:" (a wrong derivative,
or an exception that is not an S2SADError) marks it xfail(strict=True). When the compiler
learns a case its test XPASSes, which fails the suite: delete the entry (or regenerate).
"""

EXPECT: dict[str, dict[str, str]] = {
'''


def write_expected(results) -> None:
    lines = [EXPECTED_HEADER]
    for case, outcomes, _ in results:
        marks = {}
        for mode in ("rev", "fwd"):
            o = outcomes.get(mode)
            if o is None or o.status == "pass":
                continue
            marks[mode] = category(o) if o.status == "refused" else bug_reason(o)
        if marks:
            lines.append(f"    {case.name!r}: {{\n")
            for mode, reason in marks.items():
                lines.append(f"        {mode!r}: {reason!r},\n")
            lines.append("    },\n")
    lines.append("}\n")
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "tests", "realcode", "expected.py")
    with open(path, "w") as f:
        f.write("".join(lines))
    print(f"\nwrote {path}")

if __name__ == "__main__":
    main()
