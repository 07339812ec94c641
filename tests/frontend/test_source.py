"""A function's source is the text its running code was compiled from (frontend/source.py):
checked on the definition alone where that gives the same code, against the whole file
where the code depends on more of the file (a closure). Expected values are analytic."""

from __future__ import annotations

import linecache
import math
import textwrap

import pytest

import s2sad
from s2sad.errors import SourceUnavailableError
from tests.oracle import assert_close

SOURCE = """
import math

import numpy as np


def f(x):
    return np.sin(x) * x


def g(x):
    return math.exp(x) * x


def outer(k):
    def inner(x):
        return np.sin(k * x)
    return inner
"""


@pytest.fixture
def module(make_module, tmp_path):
    name = f"source_check_{abs(hash(str(tmp_path)))}"
    path = tmp_path / f"{name}.py"
    yield make_module(name, SOURCE), path
    linecache.checkcache(str(path))


def test_functions_and_closures_read_from_their_file(module):
    mod, _ = module
    x = 0.4
    assert_close(s2sad.grad(mod.f)(x), math.cos(x) * x + math.sin(x))
    assert_close(s2sad.grad(mod.g)(x), math.exp(x) * (1 + x))
    k = 1.5
    assert_close(s2sad.grad(mod.outer(k))(x), k * math.cos(k * x))


def test_a_definition_edited_after_import_is_refused(module):
    mod, path = module
    path.write_text(textwrap.dedent(SOURCE).replace("np.sin(x) * x", "np.cos(x) * x"))
    linecache.checkcache(str(path))
    with pytest.raises(SourceUnavailableError, match="no longer matches"):
        s2sad.grad(mod.f)(0.4)
    x = 0.4  # the file's other definitions are still the code that runs
    assert_close(s2sad.grad(mod.g)(x), math.exp(x) * (1 + x))


def test_a_pseudo_file_holding_other_text_is_no_source(monkeypatch):
    # Python 3.13 keeps the text of `python -c` under `<string>` (pytest-xdist's workers
    # start so): a function exec'd from another string has no source there
    other = "import sys;exec(eval(sys.stdin.readline()))\n"
    monkeypatch.setitem(linecache.cache, "<string>", (len(other), None, [other], "<string>"))
    scope = {}
    exec("def square(x):\n    return x * x", scope)
    for fn in (scope["square"], eval("lambda x: x * x")):
        with pytest.raises(SourceUnavailableError, match="cannot read the source of") as e:
            s2sad.grad(fn)(1.0)
        assert "other code than the code that runs" in str(e.value)
        assert "define the function in a .py file" in str(e.value)
