"""Real third-party code as its users call it (issues 32, 33): tests/realcode/cases.py.

Each case is checked in reverse mode (grad or vjp) and forward mode (jvp) against its oracle
(the library's own derivative, or central differences in float64), and jvp against vjp
(the dot-product test). What s2sad refuses today is xfail(strict=True, raises=S2SADError)
with the refusal's category; a wrong derivative or an internal crash is xfail(strict=True)
with a reason starting "BUG:" (tests/realcode/expected.py). A case the compiler learns
XPASSes: remove its entry there. `python bench/realcode_report.py` prints the numbers.
"""

from __future__ import annotations

import pytest

import s2sad

# the libraries of the corpus: the `realcode` extra (part of `test`)
for _library in ("scipy", "sklearn", "statsmodels", "lmfit"):
    pytest.importorskip(_library)

from tests.realcode.cases import CASES  # noqa: E402
from tests.realcode.harness import (  # noqa: E402
    Case, check_agreement, check_forward, check_reverse)


# cases whose refusal depends on the library's release: what the marks record (the newest
# releases on the development machine) may pass on another, so their marks are not strict
VERSION_DEPENDENT = {
    # SciPy 1.18's simpson no longer divides with out=np.zeros_like(den), where=den != 0
    "scipy:integrate.simpson",
}


def _mark(reason: str | None, name: str = ""):
    if reason is None:
        return ()
    strict = name not in VERSION_DEPENDENT
    if reason.startswith("BUG:"):
        return (pytest.mark.xfail(strict=strict, reason=reason),)
    return (pytest.mark.xfail(strict=strict, raises=s2sad.S2SADError, reason=reason),)


def _params(mode: str) -> list:
    out = []
    for case in CASES:
        if mode == "agree":
            if not case.forward:
                continue
            # the agreement test needs both modes: it fails where either does (a bug first)
            reasons = list(case.expect.values())
            bugs = [r for r in reasons if r.startswith("BUG:")]
            reason = (bugs or reasons or [None])[0]
        elif mode == "fwd" and not case.forward:
            continue
        else:
            reason = case.expect.get(mode)
        out.append(pytest.param(case, id=case.name, marks=_mark(reason, case.name)))
    return out


def _run(check, case: Case, expected: bool) -> None:
    try:
        check(case)
    except Exception as e:
        if not expected:
            raise
        # an expected failure: re-raised from here, so that pytest does not format the
        # compiler's deep traceback for every xfail (that took most of the run's time);
        # bench/realcode_report.py --cases shows what happened
        e.__cause__ = None
        e.__suppress_context__ = True
        raise e.with_traceback(None) from None


@pytest.mark.parametrize("case", _params("rev"))
def test_reverse(case: Case) -> None:
    _run(check_reverse, case, "rev" in case.expect)


@pytest.mark.parametrize("case", _params("fwd"))
def test_forward(case: Case) -> None:
    _run(check_forward, case, "fwd" in case.expect)


@pytest.mark.parametrize("case", _params("agree"))
def test_jvp_vjp_agree(case: Case) -> None:
    _run(check_agreement, case, bool(case.expect))


def test_corpus_size() -> None:
    """Issue 33: at least 100 functions from at least 4 libraries."""
    assert len(CASES) >= 100
    assert len({c.library for c in CASES}) >= 4
