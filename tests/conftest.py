"""Suite-wide setup: the s2sad disk cache lives in a temporary directory, never the user's."""

import importlib.util
import os
import shutil
import sys
import tempfile
import textwrap

import pytest

_CACHE_DIR = tempfile.mkdtemp(prefix="s2sad-test-cache-")
os.environ["S2SAD_CACHE_DIR"] = _CACHE_DIR  # inherited by subprocesses the tests start
os.environ["S2SAD_VERIFY"] = "1"  # verify the IR between passes too (s2sad.transform)


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """Tests marked slow (deep fuzz, deep property profiles, long races) run only when
    selected with `-m slow`; CI runs them after the default suite."""
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def make_module(tmp_path, monkeypatch):
    """`make(name, source)`: write `source` to a fresh module file under tmp_path and import
    it (the file stays editable: tmp_path / f"{name}.py")."""
    monkeypatch.syspath_prepend(str(tmp_path))
    made = []

    def make(name, source):
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        made.append(name)
        return mod

    yield make
    for name in made:
        sys.modules.pop(name, None)
