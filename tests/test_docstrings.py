"""Every public name's docstring says what it returns (a function, a method) or when it is
raised (an error), with a short example; the examples run here as doctests, and their
expected values are worked out by hand in the docstrings (`# 2 x`), not copied from s2sad."""

import doctest
import inspect

import pytest

import s2sad
from tests.rule_table import restored_rule_table

FLAGS = doctest.ELLIPSIS  # an error's message is matched by its telling part: `...not defined...`
DERIVATIVE_MEMBERS = ["source", "source_for", "compiled_function"]


def _public():
    names = list(s2sad.__all__) + [f"Derivative.{m}" for m in DERIVATIVE_MEMBERS]
    return names


def _object(name):
    obj = s2sad
    for part in name.split("."):
        obj = inspect.getattr_static(obj, part) if isinstance(obj, type) else getattr(obj, part)
    return obj.fget if isinstance(obj, property) else obj


@pytest.mark.parametrize("name", _public())
def test_docstring_says_what_it_returns_with_an_example(name):
    obj = _object(name)
    doc = inspect.getdoc(obj) or ""
    assert "\n    >>> " in doc, f"s2sad.{name}: no example in the docstring"
    if isinstance(obj, type) and issubclass(obj, BaseException):
        assert "Raised" in doc, f"s2sad.{name}: the docstring does not say when it is raised"
    elif not isinstance(obj, type):
        assert "Returns:" in doc, f"s2sad.{name}: the docstring does not say what it returns"


@pytest.mark.parametrize("name", _public())
def test_docstring_examples_run(name):
    obj = _object(name)
    finder = doctest.DocTestFinder(recurse=False)
    tests = [t for t in finder.find(obj, f"s2sad.{name}", globs={}) if t.examples]
    assert tests, f"s2sad.{name}: no doctest found"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = []
    with restored_rule_table():  # the examples register rules for their own functions
        for test in tests:
            runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
