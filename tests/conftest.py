"""Suite-wide setup: the s2sad disk cache lives in a temporary directory, never the user's."""

import os
import shutil
import tempfile

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
