"""The exception hierarchy: every compile-time problem is an S2SADError.

An error knows where it happened (file, line, column, the source line) and
renders like a compiler diagnostic: location, message, the line with a caret,
and a hint saying what to do instead.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Loc:
    """A position in user source code (1-based line, 0-based column)."""

    filename: str
    lineno: int
    col_offset: int
    source_line: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.col_offset + 1}"


class S2SADError(Exception):
    """Base class of every error the compiler raises about user input."""

    kind = "error"

    def __init__(self, message: str, loc: Loc | None = None, hint: str | None = None):
        self.message = message
        self.loc = loc
        self.hint = hint
        self.errors: list[S2SADError] = [self]
        super().__init__(message)

    @property
    def filename(self) -> str | None:
        return self.loc.filename if self.loc else None

    @property
    def lineno(self) -> int | None:
        return self.loc.lineno if self.loc else None

    @property
    def col_offset(self) -> int | None:
        return self.loc.col_offset if self.loc else None

    @property
    def source_line(self) -> str | None:
        return self.loc.source_line if self.loc else None

    def render_one(self) -> str:
        head = f"{self.loc}: " if self.loc else ""
        lines = [f"{head}{self.kind}: {self.message}"]
        if self.loc and self.loc.source_line:
            text = self.loc.source_line.rstrip("\n")
            stripped = text.lstrip()
            indent = len(text) - len(stripped)
            lines.append(f"    {stripped}")
            lines.append("    " + " " * max(self.loc.col_offset - indent, 0) + "^")
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        if len(self.errors) == 1:
            return self.render_one()
        parts = [f"{len(self.errors)} problems:"]
        parts += [e.render_one() for e in self.errors]
        return "\n\n".join(parts)


class UnsupportedSyntaxError(S2SADError):
    """A construct the compiler does not accept (try, with, lambda, ...)."""

    kind = "unsupported syntax"


class MissingRuleError(S2SADError):
    """A call of something that has no derivative rule and cannot be inlined."""

    kind = "missing rule"


class NonDifferentiableError(S2SADError):
    """A differentiable value reaches a place where no derivative exists."""

    kind = "not differentiable"


class WrtError(S2SADError):
    """A bad `wrt` or a bad argument for the requested derivative."""

    kind = "bad wrt"


class ArgumentTypeError(S2SADError, TypeError):
    """An argument of a type the compiled derivative cannot take (a masked array, an
    ndarray subclass, a complex number)."""

    kind = "unsupported argument"


class SourceUnavailableError(S2SADError):
    """The source code of a function cannot be retrieved or parsed."""

    kind = "source unavailable"


class RuleError(S2SADError):
    """A derivative rule that does not fit the function it is registered for."""

    kind = "bad rule"


class NameResolutionError(S2SADError):
    """A name that is neither local, global, a closure cell, nor a builtin."""

    kind = "unknown name"


def raise_all(errors: list[S2SADError]) -> None:
    """Raise the first error, carrying every problem found in `errors`."""
    if not errors:
        return
    first = errors[0]
    first.errors = list(errors)
    raise first
