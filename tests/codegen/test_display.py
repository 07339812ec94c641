"""Derivative._repr_html_ / _repr_markdown_ (codegen/display.py) and `s2sad show --color`."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import s2sad
from s2sad.cli import main
from s2sad.codegen.display import side_by_side_html


def step(x, y):
    h = np.tanh(x * y)
    return np.sum(h * h)


def _derivative():
    d = s2sad.grad(step)
    d(np.ones(3), 2.0)
    return d


def test_html_puts_each_line_beside_its_code():
    pytest.importorskip("pygments")
    html = _derivative()._repr_html_()
    assert "<table>" in html and "<span style" in html  # highlighted
    rows = html.split("<tr>")
    # the row of line 2 of step (h = np.tanh(x * y)) holds its forward and reverse code
    beside = [r for r in rows if "tanh" in r.split("</td>")[0] and "reverse of line" in r]
    assert beside, html


def test_html_without_pygments_is_plain_pre(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygments", None)  # import fails: not installed
    html = _derivative()._repr_html_()
    assert "<pre" in html and "<span" not in html
    assert "h = np.tanh(x * y)" in html and "def step_grad(x, y):" in html


def test_side_by_side_escapes_and_aligns():
    derivative = "def f_grad(x):\n    # line 2: return x < 1\n    return 0.0\n"
    html = side_by_side_html(("def f(x):", "    return x < 1"), 1, derivative, "t",
                             pygments=False)
    assert "2:     return x &lt; 1" in html and "# line 2: return x &lt; 1" in html
    assert html.count("<tr>") == 3  # header, the def line, line 2


def test_markdown_shows_function_and_derivative():
    md = _derivative()._repr_markdown_()
    assert md.count("```python") == 2
    assert "def step(x, y):" in md and "def step_grad(x, y):" in md
    assert "<s2sad" not in md


def test_repr_html_reports_an_error_instead_of_raising():
    def pair(x):
        return x, x

    html = s2sad.grad(pair)._repr_html_()
    assert html.startswith("<pre>") and "scalar output" in html


@pytest.mark.parametrize("color, escapes", [("always", True), ("never", False),
                                            ("auto", False)])  # captured: not a terminal
def test_show_color(capsys, color, escapes):
    if escapes:
        pytest.importorskip("pygments")
    assert main(["show", "s2sad.examples.seeds:g", "--mode", "jvp", "--color", color]) == 0
    out = capsys.readouterr().out
    assert ("\x1b[" in out) is escapes
    assert "g_jvp" in out
