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

Default: DEFAULT_BATCHES x BATCH programs (>= MIN_DEFAULT_PROGRAMS checked).
Deep (`-m slow`): ten times as many, from different seeds (>= 20,000 checked).

Nearly all the time goes into compiling derivatives (tens of ms per program
and mode), so batches run in worker processes, one per CPU (at most
S2SAD_FUZZ_JOBS when set; S2SAD_FUZZ_JOBS=1 runs them in the test process).
A test whose batch has not run yet runs it together with the next
CHUNK_PER_JOB x workers selected batches; each test reports its own batch.

Reproduce one batch: `python -m tests.fuzz.test_random_programs SEED`.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
import threading
import time

import pytest

try:
    from tests.fuzz import harness, known_bugs
except ImportError:  # pragma: no cover
    import harness  # type: ignore
    import known_bugs  # type: ignore

BATCH = 50
DEFAULT_BATCHES = 44  # 2,200 programs, >= 2,000 with an admissible evaluation point
DEEP_BATCHES = 10 * DEFAULT_BATCHES
DEEP_SEED0 = 100_000
MIN_CHECKED_FRACTION = 0.7  # of each batch's programs, with an admissible point
MIN_DEFAULT_PROGRAMS = 2_000
MIN_DEEP_PROGRAMS = 20_000

DEFAULT_SEEDS = tuple(range(DEFAULT_BATCHES))
DEEP_SEEDS = tuple(range(DEEP_SEED0, DEEP_SEED0 + DEEP_BATCHES))

_TOTALS = {"programs": 0, "checks": 0, "known": {}, "batches": 0, "seconds": 0.0,
           "default": 0, "deep": 0}
_RESULTS: dict = {}  # seed -> result dict of _check_batch (or {"error": ...})


# --------------------------------------------------------------------------
# one batch (runs in a worker process)
# --------------------------------------------------------------------------

_WORKER_WRITER = None
_BASE_DIR = None  # generated modules of all workers, removed when the test process exits


def _base_dir():
    global _BASE_DIR
    if _BASE_DIR is None:
        import atexit
        import shutil

        _BASE_DIR = tempfile.mkdtemp(prefix="s2sad-fuzz-")
        atexit.register(shutil.rmtree, _BASE_DIR, True)
    return _BASE_DIR


def _writer():
    global _WORKER_WRITER
    if _WORKER_WRITER is None or _WORKER_WRITER[0] != os.getpid():
        d = tempfile.mkdtemp(dir=_base_dir())
        _WORKER_WRITER = (os.getpid(), harness.ModuleWriter(d, tag="rp"))
    return _WORKER_WRITER[1]


def _check_batch(seed: int) -> dict:
    """Check one batch; plain, picklable data back (failures already classified)."""
    t = time.perf_counter()
    try:
        checked, checks, reports = harness.run_batch(_writer(), seed, BATCH)
    except Exception as exc:  # noqa: BLE001 - a harness crash fails that batch's test
        import traceback

        return {"seed": seed, "error": f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"}
    known, unknown = {}, []
    for rep in reports:
        f = rep["failure"]
        bug = known_bugs.classify(rep["reproducer"], f.mode, f.category, f.message)
        if bug is None:
            unknown.append(harness.format_report(rep))
        else:
            known[bug] = known.get(bug, 0) + 1
    return {"seed": seed, "checked": checked, "checks": checks, "known": known,
            "unknown": unknown, "seconds": time.perf_counter() - t}


def n_jobs() -> int:
    env = os.environ.get("S2SAD_FUZZ_JOBS")
    if env:
        return max(1, int(env))
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    return max(1, n)


CHUNK_PER_JOB = 8  # batches per worker and round: progress shows, workers stay busy


def run_batches(seeds, first) -> None:
    """Make sure _RESULTS holds `first`: run it and the next few selected seeds
    not yet run (a round of CHUNK_PER_JOB per worker), in parallel when possible."""
    if first in _RESULTS:
        return
    _base_dir()  # created (and cleaned up) by this process, not by a worker
    seeds = list(seeds)
    jobs = n_jobs()
    start = seeds.index(first) if first in seeds else 0
    todo = [s for s in seeds[start:] if s not in _RESULTS][:CHUNK_PER_JOB * jobs]
    if first not in todo:
        todo.insert(0, first)
    jobs = min(jobs, len(todo))
    methods = multiprocessing.get_all_start_methods()
    if jobs > 1 and "fork" in methods:
        # forking a process with other threads (a Dask or Numba pool an earlier test
        # started) can deadlock the child: then workers start from a fork server
        method = "fork" if threading.active_count() == 1 or "forkserver" not in methods \
            else "forkserver"
        ctx = multiprocessing.get_context(method)
        with ctx.Pool(jobs) as pool:
            for res in pool.imap_unordered(_check_batch, todo, chunksize=1):
                _RESULTS[res["seed"]] = res
    else:
        for s in todo:
            _RESULTS[s] = _check_batch(s)


def _assert_batch(seed: int, kind: str):
    res = _RESULTS[seed]
    if "error" in res:
        pytest.fail(f"seed {seed}: the harness crashed:\n{res['error']}", pytrace=False)
    _TOTALS["programs"] += res["checked"]
    _TOTALS[kind] += res["checked"]
    _TOTALS["checks"] += res["checks"]
    _TOTALS["batches"] += 1
    _TOTALS["seconds"] += res["seconds"]
    for bug, n in res["known"].items():
        _TOTALS["known"][bug] = _TOTALS["known"].get(bug, 0) + n
    # almost every program must find an admissible evaluation point
    # (points where an intermediate overflows are rejected: a few batches of
    # fast-growing loops lose more)
    assert res["checked"] >= MIN_CHECKED_FRACTION * BATCH, (
        f"seed {seed}: only {res['checked']}/{BATCH} programs checked")
    if res["unknown"]:
        msg = "\n\n".join(res["unknown"])
        pytest.fail(f"{len(res['unknown'])} program(s) of batch seed {seed} fail:\n\n{msg}",
                    pytrace=False)


# --------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------


def _selected_seeds(request, seeds):
    """The seeds of this test function that the session will run (all of them
    unless -k or node ids narrow the selection)."""
    name = request.node.originalname
    chosen = [it.callspec.params["seed"] for it in request.session.items
              if getattr(it, "originalname", None) == name and hasattr(it, "callspec")
              and it.path == request.node.path]
    return chosen or list(seeds)


@pytest.mark.parametrize("seed", DEFAULT_SEEDS)
def test_random_programs(seed, request):
    run_batches(_selected_seeds(request, DEFAULT_SEEDS), seed)
    _assert_batch(seed, "default")


@pytest.mark.slow
@pytest.mark.parametrize("seed", DEEP_SEEDS)
def test_random_programs_deep(seed, request):
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("deep fuzz run: select with -m slow")
    run_batches(_selected_seeds(request, DEEP_SEEDS), seed)
    _assert_batch(seed, "deep")


def _report(capsys, kind, seeds, minimum):
    """Print how many programs and program-mode checks ran; when every batch of
    the set ran, the set must have checked at least `minimum` programs."""
    with capsys.disabled():
        print(f"\n[fuzz] programs checked: {_TOTALS['programs']} (default {_TOTALS['default']}, "
              f"deep {_TOTALS['deep']}), program-mode checks: {_TOTALS['checks']}, "
              f"batches: {_TOTALS['batches']}, batch seconds: {_TOTALS['seconds']:.0f} "
              f"({n_jobs()} jobs), known-bug hits: {_TOTALS['known']}")
    if all(s in _RESULTS for s in seeds):
        # (from the batches' results, not the counts their tests made: a test of a batch
        # may run after this one when the tests are reordered or spread over processes)
        checked = sum(_RESULTS[s].get("checked", 0) for s in seeds)
        assert checked >= minimum, f"only {checked} {kind} programs checked"


def test_zz_report_totals(capsys):
    """Runs last in this file (default set)."""
    _report(capsys, "default", DEFAULT_SEEDS, MIN_DEFAULT_PROGRAMS)


@pytest.mark.slow
def test_zz_report_totals_deep(capsys, request):
    """Runs last in this file (deep set, -m slow)."""
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("deep fuzz run: select with -m slow")
    _report(capsys, "deep", DEEP_SEEDS, MIN_DEEP_PROGRAMS)


def test_generator_is_deterministic():
    from tests.fuzz import generator as gen

    a = gen.render_module(*gen.generate_batch(7, 10))
    b = gen.render_module(*gen.generate_batch(7, 10))
    assert a == b
    assert a != gen.render_module(*gen.generate_batch(8, 10))


def main(argv):  # pragma: no cover - manual reproduction
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
