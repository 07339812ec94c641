"""A derivative as Jupyter shows it: the function and its generated derivative side by
side, each source line of the function beside the code generated for it.

HTML is highlighted with Pygments when it is installed (`pip install s2sad[show]`), else
plain `<pre>`; Markdown is two fenced Python blocks.
"""

from __future__ import annotations

import html
import re

__all__ = ["highlight_html", "markdown", "side_by_side_html"]

_LINE = re.compile(r"^\s*# (?:reverse of )?line (\d+):")


def highlight_html(code: str, pygments: bool = True) -> str:
    """`code` as inline-styled HTML (Pygments), or escaped text without Pygments."""
    if pygments:
        try:
            from pygments import highlight
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import PythonLexer
        except ImportError:
            pass
        else:
            out = highlight(code, PythonLexer(), HtmlFormatter(nowrap=True, noclasses=True))
            return out.rstrip("\n")
    return html.escape(code)


def _rows(source_lines: tuple, first_line: int, derivative: str) -> list:
    """(primal text, derivative text) pairs: each `# line N:` / `# reverse of line N:`
    comment of the derivative starts a row with line N of the function beside it."""
    rows: list = [["", []]]
    for text in derivative.rstrip("\n").split("\n"):
        m = _LINE.match(text)
        if m:
            k = int(m.group(1)) - first_line
            primal = source_lines[k] if 0 <= k < len(source_lines) else ""
            rows.append([f"{m.group(1)}: {primal}", []])
        rows[-1][1].append(text)
    return [(p, "\n".join(d)) for p, d in rows if p or d]


def side_by_side_html(source_lines: tuple, first_line: int, derivative: str, title: str,
                      pygments: bool = True) -> str:
    """An HTML table: the function's lines on the left, the derivative's code generated
    for each on the right."""
    cell = ('<td style="vertical-align:top;text-align:left;padding:0 1em">'
            '<pre style="margin:0">{}</pre></td>')
    rows = "".join(
        f"<tr>{cell.format(highlight_html(p, pygments) if p else '')}"
        f"{cell.format(highlight_html(d, pygments))}</tr>"
        for p, d in _rows(source_lines, first_line, derivative))
    head = ('<tr><th style="text-align:left">function (line: source)</th>'
            '<th style="text-align:left">derivative</th></tr>')
    return (f'<div class="s2sad-derivative"><p>{html.escape(title)}</p>'
            f'<table>{head}{rows}</table></div>')


def markdown(source_lines: tuple, derivative: str, title: str) -> str:
    """The function and its derivative as two fenced Python blocks."""
    primal = "\n".join(source_lines)
    title = title.strip("<>")  # (not read as an HTML tag)
    return (f"**{title}**\n\n```python\n{primal}\n```\n\n```python\n"
            f"{derivative.rstrip()}\n```\n")
