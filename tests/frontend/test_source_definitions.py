"""A definition at a module's top level is parsed on its own (frontend/source.py,
_top_level_definition): the tree, lines and positions are those of the whole module's
syntax tree; text the scan cannot read alone (decorators over several lines, a string
at the first column, an import inside a string) is read from the whole module; a
definition edited after import is still refused. Derivatives against analytic values."""

from __future__ import annotations

import ast
import linecache
import math
import textwrap

import gast
import pytest

import s2sad
from s2sad.errors import SourceUnavailableError
from s2sad.frontend import source
from s2sad.frontend.to_gast import to_gast
from tests.oracle import assert_close

SOURCE = '''
"""A module.
import this is not an import: it is the module's docstring
"""
from __future__ import annotations

import math
from math import (
    exp,
    sin,
)

import numpy as np

K = 2.0


def functools_free_decorator(*args):
    return lambda f: f


def plain(x):
    return np.sin(x) * x  # a comment


@staticmethod
def decorated(x):
    return math.exp(x) * x


@functools_free_decorator(
    1,
)
def spread(x):
    return exp(x) * K


def first_column_string(x):
    y = x * x
    note = """
not indented
"""
    return sin(y)


# a comment at the first column between definitions
async def never_differentiated(x):
    return x


def last(x):
    return np.cos(x) + 0.0

'''


@pytest.fixture
def module(make_module, tmp_path):
    name = f"source_defs_{abs(hash(str(tmp_path)))}"
    yield make_module(name, SOURCE), tmp_path / f"{name}.py"
    linecache.checkcache(str(tmp_path / f"{name}.py"))


def _whole_module(fn):
    """(lines, first line, gast tree) of `fn` as the whole module's syntax tree gives them."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename)
    node = source._definitions(ast.parse("".join(lines)))[(code.co_name, code.co_firstlineno)]
    start = source._start_line(node)
    return lines[start - 1:node.end_lineno], start, to_gast(node)


@pytest.mark.parametrize("name", ["plain", "decorated", "spread", "first_column_string",
                                  "last"])
def test_a_definition_parsed_alone_is_the_module_trees(module, name):
    mod, _ = module
    fn = getattr(mod, name)
    fn = getattr(fn, "__func__", fn)
    parsed = source.parse_function(fn)
    lines, first, node = _whole_module(fn)
    assert parsed.first_line == first
    assert parsed.lines == [ln.rstrip("\n") for ln in lines]
    assert gast.dump(parsed.node, include_attributes=True) == \
        gast.dump(node, include_attributes=True)


def test_which_definitions_are_read_alone(module):
    mod, _ = module
    lines = linecache.getlines(mod.plain.__code__.co_filename)
    alone = {name: source._top_level_definition(mod.__file__, lines,
                                                getattr(getattr(mod, name), "__func__",
                                                        getattr(mod, name)).__code__)
             for name in ("plain", "decorated", "spread", "first_column_string", "last")}
    assert alone["plain"] is not None and alone["last"] is not None
    assert alone["decorated"] is not None and alone["spread"] is not None
    assert alone["first_column_string"] is None  # (its string ends the scan early)
    imports = source._IMPORTS[mod.__file__][1]
    assert [ast.unparse(st) for st in imports] == [
        "from __future__ import annotations", "import math",
        "from math import exp, sin", "import numpy as np"]


def test_derivatives_of_definitions_read_alone(module):
    mod, _ = module
    x = 0.3
    assert_close(s2sad.grad(mod.plain)(x), math.cos(x) * x + math.sin(x))
    assert_close(s2sad.grad(mod.spread)(x), math.exp(x) * 2.0)
    assert_close(s2sad.grad(mod.first_column_string)(x), math.cos(x * x) * 2 * x)
    assert_close(s2sad.grad(mod.last)(x), -math.sin(x))


def test_a_definition_edited_after_import_is_refused(module):
    mod, path = module
    path.write_text(textwrap.dedent(SOURCE).replace("np.sin(x) * x", "np.sin(x) * x * x"))
    linecache.checkcache(str(path))
    with pytest.raises(SourceUnavailableError, match="no longer matches"):
        s2sad.grad(mod.plain)(0.4)
    x = 0.4  # the file's other definitions are still the code that runs
    assert_close(s2sad.grad(mod.last)(x), -math.sin(x))
