"""The exception hierarchy: every compile-time problem is an S2SADError.

An error knows where it happened (file, line, column, the source line) and
renders like a compiler diagnostic: location, message, the line with a caret,
and a hint saying what to do instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Loc:
    """A position in user source code (1-based line, 0-based column)."""

    filename: str
    lineno: int
    col_offset: int
    source_line: str = ""
    # for a line of library code inlined into the user's function: the user's call that led
    # there (an error is reported at that call, naming the library line)
    called_from: Loc | None = field(default=None, kw_only=True)

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.col_offset + 1}"

    @property
    def user(self) -> Loc:
        """Where the user wrote it: the call into the library for a library line."""
        return self.called_from.user if self.called_from is not None else self


class S2SADError(Exception):
    """Base class of every error the compiler raises about user input.

    Raised when a derivative is compiled (its first call, or `.source`), never from inside
    generated code. It carries `kind` (what went wrong, in words), `message`, `hint` (what
    to do instead) and the location in the user's source (`loc`, `filename`, `lineno`,
    `col_offset`, `source_line`); `str(error)` renders all of them like a compiler
    diagnostic. `errors` lists every problem found, when there were several.


    Examples:
        >>> import s2sad
        >>> def pair(x):
        ...     return x, 2.0 * x
        >>> try:
        ...     s2sad.grad(pair)(1.0)
        ... except s2sad.S2SADError as e:
        ...     print(e.kind, "/", e.hint)
        not differentiable / use s2sad.vjp, or s2sad.jacrev for the Jacobian
    """

    kind = "error"

    def __init__(self, message: str, loc: Loc | None = None, hint: str | None = None):
        self.message = message
        self.loc = loc
        self.hint = hint
        self.errors: list[S2SADError] = [self]
        super().__init__(message)

    @property
    def filename(self) -> str | None:
        return self.loc.user.filename if self.loc else None

    @property
    def lineno(self) -> int | None:
        return self.loc.user.lineno if self.loc else None

    @property
    def col_offset(self) -> int | None:
        return self.loc.user.col_offset if self.loc else None

    @property
    def source_line(self) -> str | None:
        return self.loc.user.source_line if self.loc else None

    def render_one(self) -> str:
        where = self.loc.user if self.loc else None
        head = f"{where}: " if where else ""
        lines = [f"{head}{self.kind}: {self.message}"]
        if self.loc is not None and where is not self.loc:
            inner = self.loc.source_line.strip()
            lines[0] += f" (in library code at {self.loc}" + (f": `{inner}`)" if inner else ")")
        if where and where.source_line:
            text = where.source_line.rstrip("\n")
            stripped = text.lstrip()
            indent = len(text) - len(stripped)
            lines.append(f"    {stripped}")
            lines.append("    " + " " * max(where.col_offset - indent, 0) + "^")
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
    """A construct the compiler does not accept (a set comprehension, `global`, a `return`
    inside a `try`, ...).

    Raised when the derivative is compiled.

    Examples:
        >>> import s2sad
        >>> def distinct(x):
        ...     return len({x, 2.0 * x}) * x
        >>> s2sad.grad(distinct)(1.0)
        Traceback (most recent call last):
            ...
        s2sad.errors.UnsupportedSyntaxError: ...set literals are not supported...
    """

    kind = "unsupported syntax"


class MissingRuleError(S2SADError):
    """A call of something that has no derivative rule and cannot be inlined.

    Raised when the derivative is compiled.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def phase(x):
        ...     return np.sum(np.unwrap(x))
        >>> s2sad.grad(phase)(np.ones(3))
        Traceback (most recent call last):
            ...
        s2sad.errors.MissingRuleError: ...no derivative rule for `np.unwrap`...
    """

    kind = "missing rule"


class NonDifferentiableError(S2SADError):
    """A differentiable value reaches a place where no derivative exists.

    Raised when the derivative is compiled.

    Examples:
        >>> import s2sad
        >>> def pair(x):
        ...     return x, 2.0 * x
        >>> s2sad.grad(pair)(1.0)
        Traceback (most recent call last):
            ...
        s2sad.errors.NonDifferentiableError: ...grad needs a function with one scalar output...
    """

    kind = "not differentiable"


class WrtError(S2SADError):
    """A bad `wrt` or a bad argument for the requested derivative.

    Raised when the derivative is compiled.

    Examples:
        >>> import s2sad
        >>> def square(x):
        ...     return x * x
        >>> s2sad.grad(square, wrt="y")(1.0)
        Traceback (most recent call last):
            ...
        s2sad.errors.WrtError: ...wrt names 'y', which is not a positional parameter of square...
    """

    kind = "bad wrt"


class UnknownShapeError(S2SADError):
    """Code for arguments of any kind needs a shape that only the arguments tell.

    Raised by `.source` (or `s2sad show` without `--args`) before the first call, where a
    derivative that is zero on one side of a branch has to be materialised without its
    shape. Calling the derivative, or `.source_for(*args)`, compiles code specialised for
    the arguments, where the shape is known.

    Also raised by jacfwd/jacrev (and hessian) when even the arguments do not tell the
    shape of the output (an array built from a list grown in a loop), and where code
    specialised on the arguments needs a zero of a shape known only at run time.
    """

    kind = "shape unknown"


class LazyArrayError(S2SADError):
    """A function given lazy arrays (Dask) reads a value that only exists once the graph
    is computed: a Python `if` or `while` on an array's value, `float(x)`, `x.item()`,
    `np.asarray(x)`, an assignment into an array, or a shape Dask does not know.

    Raised when the derivative specialised for the lazy arrays is compiled (the derivative
    would otherwise compute part of the graph while it runs, or fail inside Dask).

    Examples:
        >>> import s2sad
        >>> issubclass(s2sad.errors.LazyArrayError, s2sad.S2SADError)
        True
    """

    kind = "needs the value of a lazy array"


class ArgumentTypeError(S2SADError, TypeError):
    """An argument of a type the compiled derivative cannot take (a masked array, an
    ndarray subclass, an array of strings or objects).

    Raised when the derivative is called with such an argument.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def square(x):
        ...     return x * x
        >>> s2sad.grad(square)(np.ma.masked_array([1.0, 2.0], mask=[False, True]))
        Traceback (most recent call last):
            ...
        s2sad.errors.ArgumentTypeError: ...`x` is a masked array...
    """

    kind = "unsupported argument"


class AliasedArgumentsError(S2SADError, ValueError):
    """A call passing one array as two arguments (or views of one) to a function that
    updates one of them in place (`x *= c`): Python's other argument sees the update, the
    derivative, which computes on its own copy, would not.

    Raised when the derivative is called so, pointing at the update.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def scale(x, y, c):
        ...     x *= c
        ...     return np.sum(y * y)
        >>> x = np.ones(3)
        >>> s2sad.grad(scale, wrt=2)(x, x, 2.0)
        Traceback (most recent call last):
            ...
        s2sad.errors.AliasedArgumentsError: ...`y` is the same array...
    """

    kind = "aliased arguments"


class RecursionLimitError(S2SADError, RecursionError):
    """A derivative of a recursive function went deeper than Python's recursion limit.

    Raised from the call of the derivative, in place of the bare RecursionError. Each
    level of a recursive function's derivative takes two or three Python frames where the
    function takes one (the derivative object's call, its dispatcher, the generated code),
    so the derivative reaches about a third of the depth the function reaches. It is a
    RecursionError too, for code that catches that.

    Examples:
        >>> import s2sad
        >>> def power(x, n):
        ...     return 1.0 if n == 0 else x * power(x, n - 1)
        >>> s2sad.grad(power)(1.0, 100_000)
        Traceback (most recent call last):
            ...
        s2sad.errors.RecursionLimitError: ...sys.setrecursionlimit...
    """

    kind = "recursion too deep"

    @classmethod
    def of(cls, name: str, error: RecursionError) -> RecursionLimitError:
        """The error for the derivative `name` that `error` stopped (itself, if it is one)."""
        if isinstance(error, cls):
            return error
        import sys

        limit = sys.getrecursionlimit()
        return cls(f"{name} recursed deeper than Python's recursion limit of {limit} frames "
                   f"(each level of recursion of a derivative takes 2 to 3 frames)", None,
                   f"raise the limit with sys.setrecursionlimit (e.g. "
                   f"sys.setrecursionlimit({4 * limit})), or write the recursion as a loop")


class SourceUnavailableError(S2SADError):
    """The source code of a function cannot be retrieved or parsed.

    Raised when the derivative is compiled.

    Examples:
        >>> import s2sad
        >>> scope = {}
        >>> exec("def square(x):\\n    return x * x", scope)
        >>> s2sad.grad(scope["square"])(1.0)
        Traceback (most recent call last):
            ...
        s2sad.errors.SourceUnavailableError: ...cannot read the source of square...
    """

    kind = "source unavailable"


class RuleError(S2SADError):
    """A derivative rule that does not fit the function it is registered for.

    Raised when the rule is registered.

    Examples:
        >>> import s2sad
        >>> def scale(x, k):
        ...     return k * x
        >>> @s2sad.defjvp(scale)
        ... def scale_jvp(y, y_dot):
        ...     return y_dot
        Traceback (most recent call last):
            ...
        s2sad.errors.RuleError: ...scale_jvp takes parameters ['y'] but scale requires ['x', 'k']
    """

    kind = "bad rule"


class NameResolutionError(S2SADError):
    """A name that is neither local, global, a closure cell, nor a builtin.

    Raised when the derivative is compiled.

    Examples:
        >>> import s2sad
        >>> def scaled(x):
        ...     return x * undefined_scale
        >>> s2sad.grad(scaled)(1.0)
        Traceback (most recent call last):
            ...
        s2sad.errors.NameResolutionError: ...name `undefined_scale` is not defined...
    """

    kind = "unknown name"


class BackendError(S2SADError):
    """A derivative that the backend it was asked for (`backend="numba"`) cannot compile:
    a construct of the generated code that Numba does not support, named with the line of
    the user's function it comes from.

    Raised when the derivative is compiled for the backend (its first call with arguments
    of new kinds); `backend="numpy"`, the default, runs the same derivative.
    """

    kind = "not compilable by the backend"


def raise_all(errors: list[S2SADError]) -> None:
    """Raise the first error, carrying every problem found in `errors`."""
    if not errors:
        return
    first = errors[0]
    first.errors = list(errors)
    raise first

