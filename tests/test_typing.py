"""The public API is typed (issue 21): mypy passes on it with the checks of --strict (the
configuration in pyproject.toml), on user code that uses every form of it
(tests/typecheck/user_code.py, which also runs), and reports every call that does not fit
(tests/typecheck/wrong_calls.py: an error on each line marked `# E:`, on no other)."""

import re
import runpy
import sys
from pathlib import Path

import pytest

from tests.rule_table import restored_rule_table

ROOT = Path(__file__).resolve().parent.parent
USER_CODE = ROOT / "tests" / "typecheck" / "user_code.py"
WRONG_CALLS = ROOT / "tests" / "typecheck" / "wrong_calls.py"


@pytest.fixture(scope="module")
def mypy(tmp_path_factory):
    api = pytest.importorskip("mypy.api")
    cache = tmp_path_factory.mktemp("mypy_cache")

    def run(*args):
        stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                          "--cache-dir", str(cache), *args])
        return stdout + stderr, status

    return run


def test_public_api_passes_mypy_strict(mypy, monkeypatch):
    monkeypatch.chdir(ROOT)  # the files the configuration names
    out, status = mypy()
    assert status == 0, out
    assert "Success" in out


def test_user_code_type_checks(mypy, monkeypatch):
    # assert_type is in typing from Python 3.11: the user file is checked as 3.11 code
    monkeypatch.chdir(ROOT)
    out, status = mypy("--strict", "--python-version", "3.11", str(USER_CODE))
    assert status == 0, out


def test_calls_that_do_not_fit_are_reported(mypy, monkeypatch):
    monkeypatch.chdir(ROOT)
    out, status = mypy("--strict", "--python-version", "3.11", str(WRONG_CALLS))
    assert status == 1, out
    reported = {int(n) for n in re.findall(r"wrong_calls\.py:(\d+): error:", out)}
    lines = WRONG_CALLS.read_text().splitlines()
    marked = {i for i, line in enumerate(lines, 1) if "  # E: " in line}
    assert len(marked) >= 20
    assert reported == marked, (f"not reported: {sorted(marked - reported)}; reported but not "
                                f"marked: {sorted(reported - marked)}\n{out}")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="typing.assert_type is new in 3.11")
def test_user_code_runs():
    with restored_rule_table():  # it registers rules for its own functions
        runpy.run_path(str(USER_CODE), run_name="user_code")


def test_every_package_of_the_public_api_ships_py_typed():
    # without the marker, a type checker reads an installed package as untyped: a decorator
    # from s2sad_rules.registry made the user's rule untyped (found outside the checkout)
    import s2sad

    packages = {getattr(s2sad, name).__module__.split(".")[0] for name in s2sad.__all__}
    assert packages == {"s2sad", "s2sad_rules"}
    pyproject = (ROOT / "pyproject.toml").read_text()
    for package in packages:
        assert (ROOT / package / "py.typed").is_file(), package
        assert re.search(rf'^{package} = \["py.typed"\]$', pyproject, flags=re.M), package


def test_annotations_evaluate_at_run_time():
    # (`from __future__ import annotations` keeps them strings: every name they use must
    # exist at run time for typing.get_type_hints, as documentation and runtime checkers use)
    import inspect
    import typing

    import s2sad

    for name in s2sad.__all__:
        obj = getattr(s2sad, name)
        members = [obj] if not isinstance(obj, type) else [
            m for m in vars(obj).values() if inspect.isfunction(m)] + [
            p.fget for p in vars(obj).values() if isinstance(p, property)]
        for member in members:
            typing.get_type_hints(member)
    assert typing.get_type_hints(s2sad.vjp)["return"] is not None
