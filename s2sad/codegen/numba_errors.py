"""Numba's refusals, told as S2SADErrors: the generated line Numba could not compile, the
line of the user's function it comes from (the comment above it), and Numba's reason in
one line, never Numba's traceback."""

from __future__ import annotations

import linecache
import os
import re

from s2sad.errors import BackendError, Loc

_COMMENT = re.compile(r"^\s*# (?:reverse of )?(?:line (\d+)|(\S+):(\d+)): (.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_HINT = ('use backend="numpy" (the default) for this function, or write the line with '
         "operations Numba supports (https://numba.readthedocs.io: Supported NumPy features)")


def user_loc(source: str, lineno: int, user_file: str | None) -> Loc | None:
    """The user's line that generated line `lineno` of `source` comes from: the nearest
    `# line K: text` comment above it."""
    lines = source.split("\n")
    for i in range(min(lineno, len(lines)) - 1, -1, -1):
        m = _COMMENT.match(lines[i])
        if m is None:
            continue
        if m.group(1) is not None and user_file is not None:
            filename, line = user_file, int(m.group(1))
        elif m.group(2) is not None:
            filename, line = m.group(2), int(m.group(3))
        else:
            return None
        text = linecache.getline(filename, line).rstrip("\n") or m.group(4)
        return Loc(filename, line, len(text) - len(text.lstrip()), text)
    return None


def refusal(source: str, lineno: int, what: str, user_file: str | None = None) -> BackendError:
    """A BackendError for generated line `lineno` of `source`."""
    lines = source.split("\n")
    generated = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
    message = f"Numba cannot compile {what}"
    if generated and generated not in what:
        message += f" (generated line {lineno}: `{generated}`)"
    return BackendError(message, user_loc(source, lineno, user_file), _HINT)


def numba_errors() -> type:
    from numba.core.errors import NumbaError

    return NumbaError


def from_numba(error: Exception, source: str, filename: str,
               user_file: str | None) -> BackendError:
    """The BackendError for a Numba compile error raised by code compiled from `source`
    under `filename`."""
    text = _ANSI.sub("", str(error))
    # (Numba prints the file relative to the working directory: matched by its name)
    base = re.escape(os.path.basename(filename))
    m = re.search(rf'File "(?:[^"]*[/\\])?{base}", line (\d+)', text)
    lineno = int(m.group(1)) if m else 0
    reasons = [ln.strip() for ln in text.split("\n") if ln.strip() and not ln.startswith(
        ("Failed in ", "During: ", "File ", "<source", "\t", " ")) and "pipeline" not in ln]
    reason = reasons[0] if reasons else type(error).__name__
    if not isinstance(error, numba_errors()):
        reason = f"Numba failed inside its compiler ({type(error).__name__}: {reason})"
    reason = reason.rstrip(":")
    lines = source.split("\n")
    generated = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
    what = f"`{generated}`" if generated else "this derivative"
    return refusal(source, lineno, f"{what}: {reason}", user_file)
