"""Compile-time errors: every unsupported construct is an S2SADError subclass
that points at the offending node (absolute file line, 0-based column),
shows the source line with a caret, and collects every problem found.

The bad functions live in this file; expected positions are computed from
`inspect.getsourcelines` plus an offset, and the column from a marker string
on that line, so the tests do not break when lines move.
"""

# the bad_* functions below are deliberately odd code
# ruff: noqa: F841, B035
from __future__ import annotations

import inspect
import os
import re
from dataclasses import dataclass

import numpy as np
import pytest

import s2sad

# ==========================================================================
# the bad functions
# ==========================================================================


def bad_try(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return y


def bad_yield(x):
    yield x * 2.0


G = 1.0


def bad_global(x):
    global G
    G = x
    return x * 2.0


def _make_bad_nonlocal():
    z = 1.0

    def bad_nonlocal(x):
        nonlocal z
        z = x
        return x * 2.0

    return bad_nonlocal


bad_nonlocal = _make_bad_nonlocal()


def bad_lambda(x):
    g = lambda t: t * 2.0  # a function value cannot be returned
    return g


def bad_dictcomp(x):
    d = {0: t for t in x}
    return x * 2.0


def bad_setcomp(x):
    s = {t * 2.0 for t in x}
    return x * 2.0


def bad_nested_def(x):
    @staticmethod
    def inner(t):  # a decorated nested function is refused (the decorator is not read)
        return t * 2.0

    return inner(x)


def bad_nested_class(x):
    class Inner:
        pass

    return x * 2.0


def bad_del(x):
    y = x * 2.0
    del y[0]  # (an array's entry: np.delete; `del name` unbinds a local)
    return y


async def bad_async(x):
    return x * 2.0


def bad_double_star(x, **options):
    return x * 2.0


def _double(t):
    return 2.0 * t


# an object whose __call__ is a library's (an object with a `__call__` of its own is inlined:
# tests/frontend/test_callable_objects.py)
SCALER = np.vectorize(_double)


def bad_call_instance(x):
    y = SCALER(x)
    return y


def bad_call_fft(x):
    return np.fft.hfft(x)  # np.fft.fft has rules (issue #13); hfft has none


def bad_unknown_name(x):
    return x * undefined_name_xyz  # noqa: F821


def bad_two_problems(x):
    g = {t * 2.0 for t in (1.0, 2.0)}
    class Inner:  # noqa: E306
        pass
    return x * 3.0


# ==========================================================================
# expectations
# ==========================================================================


@dataclass(frozen=True)
class Bad:
    fn: object
    exc: type
    offset: int  # lines after the `def` line
    marker: str  # the offending node starts where this text starts on that line

    @property
    def name(self):
        return self.fn.__name__

    def where(self):
        lines, first = inspect.getsourcelines(self.fn)
        line = lines[self.offset]
        assert self.marker in line, f"test data: {self.marker!r} not on {line!r}"
        return first + self.offset, line.index(self.marker), line


U = s2sad.UnsupportedSyntaxError
M = s2sad.MissingRuleError

BAD = [
    # a `try` runs as written (issue 32); one that computes a differentiated value is refused
    Bad(bad_try, s2sad.NonDifferentiableError, 1, "try"),
    Bad(bad_yield, U, 1, "yield"),
    Bad(bad_global, U, 1, "global"),
    Bad(bad_nonlocal, U, 1, "nonlocal"),
    Bad(bad_lambda, U, 1, "lambda"),
    Bad(bad_dictcomp, U, 1, "{"),
    Bad(bad_setcomp, U, 1, "{"),
    Bad(bad_nested_def, U, 1, "staticmethod"),
    Bad(bad_nested_class, U, 1, "class"),
    Bad(bad_del, U, 2, "y[0]"),
    Bad(bad_async, U, 0, "async"),
    Bad(bad_double_star, U, 0, "options"),
    Bad(bad_call_instance, M, 1, "SCALER("),
    Bad(bad_call_fft, M, 1, "np.fft.hfft"),
    Bad(bad_unknown_name, s2sad.NameResolutionError, 1, "undefined_name_xyz"),
]
BAD_IDS = [b.name for b in BAD]

MODES = ["jvp", "vjp"]


def compile_now(fn, mode):
    """Build the derivative and force compilation (compilation is lazy)."""
    transform = {"jvp": s2sad.jvp, "vjp": s2sad.vjp}[mode]
    return transform(fn, wrt=0).source


def _caret_column(text: str, source_line: str) -> int:
    """In a rendered error, the column (relative to the start of the shown
    source text) that the caret on the following line points at."""
    shown = source_line.strip()
    lines = text.splitlines()
    for k, line in enumerate(lines[:-1]):
        if shown in line and "^" in lines[k + 1]:
            return lines[k + 1].index("^") - line.index(shown)
    raise AssertionError(f"no source line {shown!r} followed by a caret in:\n{text}")


def check_error(err, lineno, col, line):
    assert err.lineno == lineno, f"lineno {err.lineno} != {lineno}\n{err}"
    assert err.col_offset == col, f"col_offset {err.col_offset} != {col}\n{err}"
    assert err.filename is not None and os.path.samefile(err.filename, __file__), err.filename
    assert line.strip() in (err.source_line or ""), f"source_line {err.source_line!r}"
    text = str(err)
    assert line.strip() in text, text
    assert "^" in text, text
    indent = len(line) - len(line.lstrip())
    assert _caret_column(text, line) == col - indent, f"caret misplaced:\n{text}"
    assert err.hint, f"no hint saying what to do instead:\n{text}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bad", BAD, ids=BAD_IDS)
def test_unsupported_construct(bad, mode):
    lineno, col, line = bad.where()
    with pytest.raises(s2sad.S2SADError) as info:
        compile_now(bad.fn, mode)
    err = info.value
    assert isinstance(err, bad.exc), f"expected {bad.exc.__name__}, got {type(err).__name__}: {err}"
    check_error(err, lineno, col, line)
    assert err in err.errors, "the raised error must be one of err.errors"


def test_error_raised_on_first_call_too():
    """Compilation is lazy: calling the derivative compiles it and raises."""
    lineno, col, line = Bad(bad_lambda, U, 1, "lambda").where()
    with pytest.raises(s2sad.UnsupportedSyntaxError) as info:
        s2sad.grad(bad_lambda)(1.5)
    check_error(info.value, lineno, col, line)


@pytest.mark.parametrize("mode", MODES)
def test_two_problems_reported(mode):
    with pytest.raises(s2sad.S2SADError) as info:
        compile_now(bad_two_problems, mode)
    err = info.value
    assert len(err.errors) == 2, f"expected both problems, got {len(err.errors)}:\n{err}"
    expected = [
        Bad(bad_two_problems, U, 1, "{").where(),
        Bad(bad_two_problems, U, 2, "class").where(),
    ]
    got = sorted((e.lineno, e.col_offset) for e in err.errors)
    assert got == [(ln, c) for ln, c, _ in expected], got
    for e, (ln, c, line) in zip(sorted(err.errors, key=lambda e: e.lineno), expected):
        assert isinstance(e, s2sad.UnsupportedSyntaxError)
        check_error(e, ln, c, line)
    text = str(err)
    for _, _, line in expected:
        assert line.strip() in text, text


# ==========================================================================
# API misuse: grad of a non-scalar, bad wrt
# ==========================================================================


def vector_output(x):
    return np.sin(x) * 2.0


def scale_by(x, n):
    return x * n


def two_args(x, y):
    return x * y


def test_grad_of_non_scalar_output():
    with pytest.raises(s2sad.S2SADError) as info:
        s2sad.grad(vector_output)(np.array([0.1, 0.2, 0.3]))
    assert re.search(r"vjp|jacrev", str(info.value)), str(info.value)


def test_value_and_grad_of_non_scalar_output():
    with pytest.raises(s2sad.S2SADError) as info:
        s2sad.value_and_grad(vector_output)(np.array([0.1, 0.2, 0.3]))
    assert re.search(r"vjp|jacrev", str(info.value)), str(info.value)


@pytest.mark.parametrize("transform", ["jvp", "vjp", "grad", "value_and_grad"])
@pytest.mark.parametrize(
    "wrt",
    ["nope", ("x", "nope"), 2, -3],
    ids=["name", "tuple-with-bad-name", "index", "negative-index"],
)
def test_wrt_unknown_parameter(transform, wrt):
    with pytest.raises(s2sad.WrtError):
        g = getattr(s2sad, transform)(two_args, wrt=wrt)
        if transform == "jvp":
            g(1.0, 2.0, 1.0)
        else:
            g(1.0, 2.0)


@pytest.mark.parametrize("wrt", [1, "n"], ids=["index", "name"])
def test_wrt_int_argument_grad(wrt):
    with pytest.raises(s2sad.WrtError):
        s2sad.grad(scale_by, wrt=wrt)(2.0, 3)


def test_wrt_int_argument_jvp():
    with pytest.raises(s2sad.WrtError):
        s2sad.jvp(scale_by, wrt=1)(2.0, 3, 1.0)


def test_wrt_int_argument_vjp():
    with pytest.raises(s2sad.WrtError):
        s2sad.vjp(scale_by, wrt=(0, 1))(2.0, 3)


def test_wrt_none_includes_int_argument():
    # wrt=None means every positional parameter, and n is an int
    with pytest.raises(s2sad.WrtError):
        s2sad.vjp(scale_by)(2.0, 3)


def test_int_argument_not_in_wrt_is_fine():
    # the contrast case: an int that is not differentiated passes through
    out, out_dot = s2sad.jvp(scale_by, wrt=0)(2.0, 3, 1.0)
    assert out == 6.0
    assert out_dot == 3.0 and not isinstance(out_dot, np.ndarray)


def loop_over_a_number(a):
    total = 0.0
    for item in a:
        total = total + item
    return total


def length_of_a_number(a, n):
    return a * len(n)


@pytest.mark.parametrize("mode", ["grad", "jvp", "vjp"])
def test_iterating_over_a_number_is_refused_at_its_line(mode):
    # was a TypeError from the generated code's own `len(a)` (Tangent's listcomp(a))
    _, first = inspect.getsourcelines(loop_over_a_number)
    with pytest.raises(s2sad.errors.ArgumentTypeError) as info:
        if mode == "grad":
            s2sad.grad(loop_over_a_number)(1.5)
        elif mode == "jvp":
            s2sad.jvp(loop_over_a_number)(1.5, 1.0)
        else:
            s2sad.vjp(loop_over_a_number)(1.5)
    line = "    for item in a:"
    check_error(info.value, first + 2, line.index("a:"), line)
    assert isinstance(info.value, TypeError)  # as the primal's own error is
    # the same function over an array is fine
    np.testing.assert_allclose(s2sad.grad(loop_over_a_number)(np.ones(3)), np.ones(3))


def test_the_length_of_a_number_is_refused():
    _, first = inspect.getsourcelines(length_of_a_number)
    with pytest.raises(s2sad.errors.ArgumentTypeError, match="length of an int") as info:
        s2sad.grad(length_of_a_number)(1.5, 3)
    line = "    return a * len(n)"
    check_error(info.value, first + 1, line.index("len"), line)
    assert s2sad.grad(length_of_a_number)(1.5, (1, 2)) == 2.0
