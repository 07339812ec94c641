"""Symbolic dimensions: an array size known while compiling only as a symbol (`n`, the
length of argument `x`), so that one specialisation serves every size (issue 34).

A `Dim` is an int (its value is a *representative* size, which stand-ins and NumPy's own
shape arithmetic see) that also carries an expression in the symbols of the arguments'
dimensions: `n`, `n - 1`, `n * m`. Arithmetic between Dims and ints keeps the expression;
equality is decided on the expressions, as the specialisation's key states them (two
symbols are different sizes, none is 0 or 1: those are keyed as numbers). A comparison
the key does not decide (`n == 3`, `n - 1 < m`) is *observed*: the compile that made it
is not one that serves every size, and the dispatcher falls back to a specialisation on
the sizes themselves (`Observer`).

Where a representative value escapes without its expression (a size computed by a NumPy
stand-in, `int(n)`), the generated code would hold a number that is right for one size
only: the compile is run twice on two sets of representatives and kept only where both
print the same source (derivative.py, `_symbolic_compile`).
"""

from __future__ import annotations

import os
import sys
import threading

_DEBUG = bool(os.environ.get("S2SAD_DEBUG_SIZES"))


class Observed(Exception):
    """A compile read a size in a way no specialisation for every size can serve."""


_STATE = threading.local()


class Observer:
    """While active, the comparisons of sizes that the key does not decide are recorded as
    guards: (left expression, operator name, right expression or int, the answer given).
    A specialisation made under them serves the sizes for which each answer is the same
    (the dispatcher tests them: `guards_hold`)."""

    def __init__(self, sizes=()):
        self.reps = {int(d): d for d in sizes}

    def __enter__(self):
        self.outer = (getattr(_STATE, "log", None), getattr(_STATE, "reps", None),
                      getattr(_STATE, "escaped", False))
        self.log: list = []
        _STATE.log, _STATE.reps, _STATE.escaped = self.log, self.reps, False
        return self

    def __exit__(self, *exc):
        self.escaped = _STATE.escaped
        _STATE.log, _STATE.reps, _STATE.escaped = self.outer

    def guards(self) -> tuple:
        return tuple(dict.fromkeys(self.log))


def _observe(left, op: str, right, answer: bool) -> bool:
    log = getattr(_STATE, "log", None)
    if log is not None:
        rhs = right.expr if isinstance(right, Dim) else int(right)
        log.append((left.expr, op, rhs, bool(answer)))
        if _DEBUG:
            import traceback

            deep = type(right) is int and right not in (0, 1)
            frames = traceback.extract_stack(limit=16 if deep else 7)[:-3]
            print(f"[s2sad] size read: {left!r} {op} {right!r} -> {answer} at " +
                  " < ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}"
                             for f in reversed(frames)), file=sys.stderr)
    return answer


def mark():
    """Where the guards recorded so far end (None where no compile for every size is under
    way): a memo of something computed from kinds keeps the guards recorded since, and
    `replay`s them when it serves the result again (a derivative compiled in another mode
    from the same kinds asks the memo, not the sizes)."""
    log = getattr(_STATE, "log", None)
    return None if log is None else len(log)


def since(at) -> tuple:
    return () if at is None else tuple(_STATE.log[at:])


def replay(guards) -> None:
    log = getattr(_STATE, "log", None)
    if log is not None and guards:
        log.extend(guards)


def _escaped() -> None:
    """A size left its symbol for a number (n // 2, n * 0.5, float(n)): whatever the
    compile decides from it holds for this size only, and a second size may decide the
    same by chance (m // 2 + 1 == m at m = 2 twice). Such a compile serves its own sizes
    only (Observer.escaped)."""
    if getattr(_STATE, "log", None) is not None:
        _STATE.escaped = True


def escapes_taken() -> bool:
    """Whether a size left its symbol since the compile began (and forget it): for a value
    computed from sizes that the compiler then drops (a float it keeps no value of), give
    it back with escapes_given(before) so that only numbers the code keeps count."""
    escaped = getattr(_STATE, "escaped", False)
    _STATE.escaped = False
    return escaped


def escapes_given(before: bool) -> None:
    if before:
        _STATE.escaped = True


def evaluate(expr: tuple, values: dict) -> int:
    """The value of an expression for these symbols' values."""
    total = 0
    for m, c in expr:
        term = c
        for sym in m:
            term *= values[sym]
        total += term
    return total


_OPS = {"eq": lambda a, b: a == b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
        "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def guards_hold(guards: tuple, values: dict) -> bool:
    """Does every guard give its answer for these symbols' values?"""
    for left, op, right, answer in guards:
        rhs = right if type(right) is int else evaluate(right, values)
        if _OPS[op](evaluate(left, values), rhs) != answer:
            return False
    return True


def guard_text(guard, names=None) -> str:
    left, op, right, answer = guard
    sign = {"eq": ("==", "!="), "lt": ("<", ">="), "le": ("<=", ">"), "gt": (">", "<="),
            "ge": (">=", "<")}[op][0 if answer else 1]
    rhs = str(right) if type(right) is int else spell(right, names)
    return f"{spell(left, names)} {sign} {rhs}"


# an expression: a sorted tuple of (monomial, coefficient), a monomial a sorted tuple of
# symbol names (() for the constant term)
def _divided(expr: tuple, by: tuple) -> tuple | None:
    """`expr` divided by the single term `by` where every term divides exactly (n * m + 2 m
    by m: n + 2), else None."""
    if len(by) != 1 or not by[0][1]:
        return None
    (mono, coef), = by
    out = {}
    for m, c in expr:
        rest = list(m)
        for s in mono:
            if s not in rest:
                return None
            rest.remove(s)
        if c % coef:
            return None
        out[tuple(rest)] = c // coef
    return _norm(out)


def _norm(terms: dict) -> tuple:
    return tuple(sorted((m, c) for m, c in terms.items() if c))


def _terms(v) -> dict:
    if isinstance(v, Dim):
        return dict(v.expr)
    return {(): int(v)} if int(v) else {}


def _add(a: dict, b: dict, sign: int = 1) -> tuple:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, 0) + sign * c
    return _norm(out)


def _mul(a: dict, b: dict) -> tuple:
    out: dict = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(sorted(ma + mb))
            out[m] = out.get(m, 0) + ca * cb
    return _norm(out)


def lower_bound(expr: tuple) -> int | None:
    """See Dim.lower_bound."""
    shifted: dict = {}
    for m, c in expr:
        terms = {(): c}  # (the monomial m with each symbol s written as 2 + (s - 2))
        for sym in m:
            nxt: dict = {}
            for mono, coeff in terms.items():
                nxt[mono] = nxt.get(mono, 0) + 2 * coeff
                grown = tuple(sorted(mono + (sym,)))
                nxt[grown] = nxt.get(grown, 0) + coeff
            terms = nxt
        for mono, coeff in terms.items():
            shifted[mono] = shifted.get(mono, 0) + coeff
    if any(c < 0 for mono, c in shifted.items() if mono):
        return None
    return shifted.get((), 0)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class Dim(int):
    """A size: a representative int value and an expression in size symbols."""

    def __new__(cls, value: int, expr: tuple):
        self = super().__new__(cls, value)
        self.expr = expr
        return self

    @classmethod
    def symbol(cls, name: str, value: int) -> Dim:
        return cls(value, (((name,), 1),))

    @staticmethod
    def make(value: int, expr: tuple):
        """A Dim, or the plain int where the expression is a constant."""
        if not expr:
            return 0
        if len(expr) == 1 and expr[0][0] == ():
            return expr[0][1]
        return Dim(value, expr)

    @property
    def is_symbol(self) -> bool:
        return len(self.expr) == 1 and self.expr[0][1] == 1 and len(self.expr[0][0]) == 1

    # -- what the key decides --------------------------------------------------------------
    def lower_bound(self) -> int | None:
        """A bound every size of this specialisation satisfies (each symbol is at least 2),
        or None where none is found: the expression's value at 2 for every symbol where,
        written in s - 2 for each symbol s, its other coefficients are none negative
        (n * m - 2 * n = 2 (m - 2) + (n - 2)(m - 2) is at least 0)."""
        return lower_bound(self.expr)

    def __eq__(self, other):
        if isinstance(other, Dim):
            if self.expr == other.expr:
                return int(self) == int(other)  # (one symbol, other representatives: apart)
            if self.is_symbol and other.is_symbol:
                return False  # (two classes of the key: two sizes)
            diff = _add(dict(self.expr), dict(other.expr), -1)
            if len(diff) == 1 and diff[0][0] == ():
                return False  # (n and n - 1: never equal)
            return _observe(self, "eq", other, int(self) == int(other))
        if _is_int(other):
            low = self.lower_bound()
            if low is not None and other < low:
                return False
            return _observe(self, "eq", other, int(self) == other)
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(("dim", self.expr, int(self)))

    def _compare(self, other, op):
        if isinstance(other, Dim) and self.expr == other.expr:
            return _OPS[op](0, 0)
        if isinstance(other, Dim):  # (decided where self - other keeps one sign)
            diff = _add(dict(self.expr), dict(other.expr), -1)
            low, high = lower_bound(diff), lower_bound(tuple((m, -c) for m, c in diff))
            if low is not None and low >= 0 and (low > 0 or op in ("ge", "lt")):  # (>=)
                return op in ("gt", "ge")
            if high is not None and high >= 0 and (high > 0 or op in ("le", "gt")):  # (<=)
                return op in ("lt", "le")
        if _is_int(other):
            low = self.lower_bound()
            if low is not None:  # (answered alike for every size from `low` up?)
                if op in ("gt", "lt") and low > other or op in ("ge", "lt") and low >= other:
                    return op == "gt" or op == "ge"
                if op == "le" and low > other:
                    return False
        elif not isinstance(other, Dim):
            return NotImplemented
        return _observe(self, op, other, _OPS[op](int(self), int(other)))

    def __lt__(self, other):
        return self._compare(other, "lt")

    def __le__(self, other):
        return self._compare(other, "le")

    def __gt__(self, other):
        return self._compare(other, "gt")

    def __ge__(self, other):
        return self._compare(other, "ge")

    def __bool__(self):
        low = self.lower_bound()
        if low is not None and low > 0:
            return True  # (a symbol is at least 2)
        return not _observe(self, "eq", 0, int(self) == 0)

    # -- arithmetic keeps the expression -----------------------------------------------------
    def _arith(self, other, fn, terms):
        if isinstance(other, Dim) or _is_int(other):
            return Dim.make(fn(int(self), int(other)), terms(other))
        if isinstance(other, (float, complex)):
            _escaped()  # (n * 0.5: a number that is one size's)
            return fn(int(self), other)
        return NotImplemented

    def __add__(self, other):
        return self._arith(other, int.__add__, lambda o: _add(dict(self.expr), _terms(o)))

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, int.__sub__, lambda o: _add(dict(self.expr), _terms(o), -1))

    def __rsub__(self, other):
        return self._arith(other, lambda a, b: b - a,
                           lambda o: _add(_terms(o), dict(self.expr), -1))

    def __mul__(self, other):
        return self._arith(other, int.__mul__, lambda o: _mul(dict(self.expr), _terms(o)))

    __rmul__ = __mul__

    def __neg__(self):
        return Dim.make(-int(self), tuple((m, -c) for m, c in self.expr))

    def __pos__(self):
        return self

    def __floordiv__(self, other):
        if isinstance(other, Dim) and other.expr == self.expr:
            return 1
        if isinstance(other, Dim):
            exact = _divided(self.expr, other.expr)
            if exact is not None:  # (n * m // m: the size of what a reduction left out)
                return Dim.make(int(self) // int(other), exact)
        elif _is_int(other) and other > 0 and all(c % other == 0 for _, c in self.expr):
            return Dim.make(int(self) // other, tuple((m, c // other) for m, c in self.expr))
        _escaped()
        return int(self) // int(other)  # (a number that is one size's)

    def __rfloordiv__(self, other):
        _escaped()
        return int(other) // int(self)

    def __mod__(self, other):
        _escaped()
        return int(self) % int(other)

    def __rmod__(self, other):
        _escaped()
        return int(other) % int(self)

    def __truediv__(self, other):
        _escaped()
        return int(self) / other

    def __rtruediv__(self, other):
        _escaped()
        return other / int(self)

    def __pow__(self, other, mod=None):
        _escaped()
        return pow(int(self), other, mod)

    def __rpow__(self, other):
        _escaped()
        return other ** int(self)

    def __float__(self):
        _escaped()
        return float(int(self))

    def __index__(self):
        return int.__int__(self)

    def __repr__(self):
        return spell(self.expr)

    __str__ = __repr__

    def __reduce__(self):
        return (Dim, (int(self), self.expr))


def spell(expr: tuple, names=None) -> str:
    """Python source of an expression (`n - 1`, `2 * n * m`); `names` maps symbols to the
    names they have in generated code."""
    parts = []
    for m, c in sorted(expr, key=lambda t: (t[0] == (), t[0])):
        factors = [names.get(s, s) if names else s for s in m]
        if not factors:
            text = str(abs(c))
        else:
            text = " * ".join(([str(abs(c))] if abs(c) != 1 else []) + factors)
        if not parts:
            parts.append(text if c > 0 else "-" + text)
        else:
            parts.append(("+ " if c > 0 else "- ") + text)
    return " ".join(parts) or "0"


def symbols(v) -> set:
    """The symbols a value (a Dim, a tuple of them...) is written in."""
    if isinstance(v, Dim):
        return {s for m, _ in v.expr for s in m}
    if isinstance(v, (tuple, list)):
        out: set = set()
        for x in v:
            out |= symbols(x)
        return out
    return set()


def has_dims(v) -> bool:
    if isinstance(v, Dim):
        return True
    if isinstance(v, (tuple, list)):
        return any(has_dims(x) for x in v)
    return False


def broadcast_shapes(*shapes) -> tuple:
    """np.broadcast_shapes keeping symbolic sizes (ValueError where NumPy's would raise, or
    where the sizes' relation is not known)."""
    if not any(has_dims(s) for s in shapes):
        import numpy as np

        return tuple(np.broadcast_shapes(*shapes))
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(-ndim, 0):
        sizes = [s[axis] for s in shapes if len(s) >= -axis]
        first = sizes[0]
        if all(d is first or (type(d) is Dim and type(first) is Dim and d.expr == first.expr)
               for d in sizes):
            out.append(first)  # (one size: no question of ones)
            continue
        size: object = 1
        for d in sizes:
            if d == 1 and not isinstance(d, Dim):
                continue
            if size == 1 and not isinstance(size, Dim):
                size = d
            elif not (d == size):
                raise ValueError("shapes do not broadcast")
        out.append(size)
    return tuple(out)


def slice_length(s: slice, n):
    """len(range(n)[s]) where `n` may be a symbolic size (start, stop and step ints or
    None); a comparison the key does not decide is a guard (Observer)."""
    if not isinstance(n, Dim):
        return len(range(*s.indices(n)))
    step = 1 if s.step is None else s.step
    if step == -1 and s.start is None and s.stop is None:
        return n  # (x[::-1])
    if step != 1:
        if step > 1 and s.start in (None, 0) and s.stop is None:
            # ceil(n / step): a symbol only where step divides it (else a guard-less number)
            return -((-n) // step)
        raise ValueError("a slice with a step of a symbolic size")

    def bound(v, default):
        if v is None:
            return default
        if v < 0:
            v = n + v
            return v if v >= 0 else 0
        return v if v <= n else n

    start, stop = bound(s.start, 0), bound(s.stop, n)
    return stop - start if stop >= start else 0


def symbolic_shape(shape: tuple) -> tuple:
    """A shape a NumPy stand-in gave (ints), each size that is a symbol's representative
    in the compile under way given back its symbol (a size that only equals one by chance
    gives another source, or other guards, for the other representatives: see Observer)."""
    reps = getattr(_STATE, "reps", None)
    if not reps:
        return shape
    if not any(type(d) is int and d in reps for d in shape):
        return shape
    _STATE.named = True  # (a result of this compile's sizes: see context_named)
    return tuple(reps.get(d, d) if type(d) is int else d for d in shape)


def context_named() -> bool:
    """Did a stand-in's size get a symbol of the compile under way since last asked? Such a
    result depends on the compile, not only on the kinds it was computed from: a memo of
    kinds must not keep it (another compile's `n` may be 3 too)."""
    named = getattr(_STATE, "named", False)
    _STATE.named = False
    return named


def note_named(named: bool) -> None:
    """Give back what context_named took (a result computed from one that is named too)."""
    if named:
        _STATE.named = True


def decided(question):
    """The answer of `question()` (a comparison of sizes) where the key decides it, else
    None; nothing is recorded as a guard. For a choice of code that is not a matter of
    right and wrong (which factor a constant scales): where the sizes do not tell, the
    compiler takes the choice that holds for every size instead of guarding one."""
    outer = getattr(_STATE, "reps", None)
    with Observer(outer.values() if outer else ()) as seen:
        answer = question()
    return None if seen.log else answer
