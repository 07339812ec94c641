"""Randomized programs: JVP, VJP and grad against finite differences and each other.

Programs come from `tests/fuzz/generator.py` (seeded, deterministic); each
batch of BATCH programs is written as one module (with probe twins that keep
evaluation points away from branch thresholds) and imported. Every program is
checked in jvp and vjp, and in grad when its output is a scalar, at one point
(see harness.py for the oracle), plus the dot-product test
<u, jvp(v)> == <vjp(u), v>.

A failing program is shrunk to a minimal reproducer, printed as source in the
assertion message. Failures whose shrunk reproducer is an instance of a bug
listed in known_bugs.py (each with a strict-xfail regression test in
test_regressions.py) are reported but do not fail the run; anything else does.

Default: DEFAULT_BATCHES x BATCH programs (>= 2,000 program-mode checks).
Deep (`-m slow`): ten times as many, from different seeds.
Reproduce one batch: `python -m tests.fuzz.test_random_programs SEED`.
"""

from __future__ import annotations

import sys
import time

import pytest

try:
    from tests.fuzz import harness, known_bugs
except ImportError:  # pragma: no cover
    import harness  # type: ignore
    import known_bugs  # type: ignore

BATCH = 50
DEFAULT_BATCHES = 17  # 850 programs, ~2,000 program-mode checks
DEEP_BATCHES = 10 * DEFAULT_BATCHES
DEEP_SEED0 = 100_000

_TOTALS = {"programs": 0, "checks": 0, "known": {}}


@pytest.fixture(scope="module")
def writer(tmp_path_factory):
    return harness.ModuleWriter(tmp_path_factory.mktemp("fuzz_modules"), tag="rp")


def _run(writer, seed):
    checked, checks, reports = harness.run_batch(writer, seed, BATCH)
    _TOTALS["programs"] += checked
    _TOTALS["checks"] += checks
    unknown = []
    for rep in reports:
        f = rep["failure"]
        bug = known_bugs.classify(rep["reproducer"], f.mode, f.category, f.message)
        if bug is None:
            unknown.append(rep)
        else:
            _TOTALS["known"][bug] = _TOTALS["known"].get(bug, 0) + 1
    # almost every program must find an admissible evaluation point
    assert checked >= 0.8 * BATCH, f"seed {seed}: only {checked}/{BATCH} programs checked"
    if unknown:
        msg = "\n\n".join(harness.format_report(r) for r in unknown)
        pytest.fail(f"{len(unknown)} program(s) of batch seed {seed} fail:\n\n{msg}", pytrace=False)
    return checked, checks


@pytest.mark.parametrize("seed", range(DEFAULT_BATCHES))
def test_random_programs(writer, seed):
    _run(writer, seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(DEEP_SEED0, DEEP_SEED0 + DEEP_BATCHES))
def test_random_programs_deep(writer, seed, request):
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("deep fuzz run: select with -m slow")
    _run(writer, seed)


def test_zz_report_totals(capsys):
    """Prints how many programs and program-mode checks ran (runs last in this file)."""
    with capsys.disabled():
        print(f"\n[fuzz] programs checked: {_TOTALS['programs']}, program-mode checks: "
              f"{_TOTALS['checks']}, known-bug hits: {_TOTALS['known']}")


def test_generator_is_deterministic():
    from tests.fuzz import generator as gen

    a = gen.render_module(*gen.generate_batch(7, 10))
    b = gen.render_module(*gen.generate_batch(7, 10))
    assert a == b
    assert a != gen.render_module(*gen.generate_batch(8, 10))


def main(argv):  # pragma: no cover - manual reproduction
    import tempfile

    w = harness.ModuleWriter(tempfile.mkdtemp(), tag="cli")
    for s in argv or ["0"]:
        t = time.time()
        checked, checks, reports = harness.run_batch(w, int(s), BATCH)
        print(f"seed {s}: {checked} programs, {checks} checks, {len(reports)} failures, "
              f"{time.time() - t:.1f}s")
        for r in reports:
            f = r["failure"]
            print("known bug:", known_bugs.classify(r["reproducer"], f.mode, f.category, f.message))
            print(harness.format_report(r))


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
