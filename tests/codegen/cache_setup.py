"""What the disk-cache tests share: a private cache directory and importable modules."""

import importlib
import textwrap
import uuid

import pytest

from s2sad import derivative
from s2sad.store import cache

MODULE = """
import numpy as np

def helper(x):
    return np.sin(x) * 3.0

def f(x, y):
    return np.sum(helper(x) * y)
"""


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh cache directory, no in-memory hits, every warning shown again."""
    d = tmp_path / "cache"
    monkeypatch.setenv("S2SAD_CACHE_DIR", str(d))
    monkeypatch.delenv("S2SAD_CACHE", raising=False)
    monkeypatch.setattr(derivative, "_GLOBAL_CACHE", {})
    cache._WARNED.clear()
    return d


def write_module(tmp_path, monkeypatch, text=MODULE, prefix="cached"):
    """Write `text` as a new module under tmp_path and import it."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(name)
