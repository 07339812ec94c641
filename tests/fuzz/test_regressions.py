"""Regression tests for compiler bugs the fuzzer found (shrunk reproducers).

One test per entry of known_bugs.KNOWN_BUGS, marked xfail(strict=True) while
the bug is open: when a fix lands the test XPASSes, which fails the run, so
the entry (and its classifier in the random-program test) gets removed and
the test becomes an ordinary regression test.
"""

from __future__ import annotations

import numpy as np
import pytest

try:
    from tests.fuzz import generator as gen
    from tests.fuzz import harness, known_bugs
except ImportError:  # pragma: no cover
    import generator as gen  # type: ignore
    import harness  # type: ignore
    import known_bugs  # type: ignore


@pytest.fixture(scope="module")
def writer(tmp_path_factory):
    return harness.ModuleWriter(tmp_path_factory.mktemp("regressions"), tag="reg")


def _params(fn):
    import inspect

    return list(inspect.signature(fn).parameters)


def _check(writer, bug):
    probe = gen.PROBE_PRELUDE + "\n\ndef " + bug.fname + "__probe(*a):\n    return " + bug.fname + "(*a)\n"
    mod = writer.load(bug.source + probe, bug.id.replace("-", "_"))
    f = getattr(mod, bug.fname)
    rng = np.random.default_rng(12345)
    # draw arguments by parameter-name suffix, as the generator names them
    types = {"f": "F", "v": "V", "w": "W", "m": "M"}
    args = [harness.draw_arg(rng, types[p[-1]]) for p in _params(f)]
    v = [harness.oracle.random_like(rng, a) for a in args]
    out = f(*args)
    u = harness.oracle.random_like(rng, out)
    scalar = not isinstance(out, (tuple, np.ndarray))
    failures = []
    for mode in ("jvp", "vjp", "grad"):
        if mode == "grad" and not scalar:
            continue
        fail = harness.check_mode(f, mode, args, v, u, scalar)
        if fail is not None:
            failures.append(fail)
    fail = harness.check_dot_test(f, args, v, u)
    if fail is not None:
        failures.append(fail)
    assert not failures, f"{bug.id}: {bug.summary}\n{bug.source}\n" + "\n".join(
        f"{x.mode} {x.category}: {x.message}" for x in failures)


@pytest.mark.parametrize(
    "bug",
    [pytest.param(b, id=b.id, marks=() if b.fixed else
                  pytest.mark.xfail(strict=True, reason=b.summary))
     for b in known_bugs.KNOWN_BUGS],
)
def test_known_bug(writer, bug):
    _check(writer, bug)


# --------------------------------------------------------------------------
# bugs found by tests/hostile (real modules): compiler crashes instead of S2SADError
# --------------------------------------------------------------------------


def _compile_or_located_refusal(f):
    import s2sad

    for make in (s2sad.jvp, s2sad.vjp):
        try:
            make(f).source
        except s2sad.S2SADError as exc:
            assert exc.lineno is not None, f"{type(exc).__name__} without a location: {exc}"


def _heapq_siftdown():
    import heapq

    return heapq._siftdown


def _any_dispatcher():
    from numpy._core import fromnumeric

    return fromnumeric._any_dispatcher


def _posixpath_abspath():
    import posixpath

    return posixpath.abspath


def _x(get, reason):
    return pytest.param(get, marks=pytest.mark.xfail(strict=True, reason=reason))


@pytest.mark.parametrize("get", [
    # fixed: heapq._siftdown raised an internal AssertionError (_Poisoned) from materialize
    _heapq_siftdown,
    # fixed: a keyword default without a literal form (np._NoValue) made invalid source
    _any_dispatcher,
    # fixed: SourceUnavailableError for a frozen stdlib function had no location
    _posixpath_abspath,
], ids=["poisoned-assertion", "dispatcher-syntax-error", "source-unavailable-no-location"])
def test_real_function_compiles_or_refuses_with_location(get):
    _compile_or_located_refusal(get())
