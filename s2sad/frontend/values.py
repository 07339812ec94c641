"""What lowering works with: compile-time values (static objects, static tuples), the
scope of the function being lowered, the tables of operators and array methods, and the
markers of names that failed or may be undefined.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import gast
import numpy as np

from s2sad.frontend.source import ParsedFunction
from s2sad.ir import prims
from s2sad.ir.nodes import Call, Var


@dataclass(frozen=True)
class Static:
    """A compile-time object (a module, a function, a class, ...)."""

    obj: object
    name: str

    def __hash__(self):  # (an object whose class defines __eq__ but no __hash__: its id)
        try:
            return hash((self.obj, self.name))
        except TypeError:
            return hash((id(self.obj), self.name))


@dataclass(frozen=True)
class StaticSeq:
    """A tuple or list literal whose items are lowered values (kept static)."""

    items: tuple
    is_list: bool = False


@dataclass(frozen=True)
class Record(StaticSeq):
    """A namedtuple argument: a static tuple whose items are also read by field name."""

    cls: type = tuple

    def field(self, name: str):
        fields = self.cls._fields  # type: ignore[attr-defined]
        return self.items[fields.index(name)] if name in fields else None


BINOPS = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod,
    gast.Pow: operator.pow, gast.MatMult: operator.matmul, gast.BitAnd: operator.and_,
    gast.BitOr: operator.or_, gast.BitXor: operator.xor, gast.LShift: operator.lshift,
    gast.RShift: operator.rshift,
}


UNOPS = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_,
         gast.Invert: operator.invert}


CMPOPS = {gast.Lt: operator.lt, gast.LtE: operator.le, gast.Gt: operator.gt,
          gast.GtE: operator.ge, gast.Eq: operator.eq, gast.NotEq: operator.ne,
          gast.Is: operator.is_, gast.IsNot: operator.is_not}


ARRAY_ATTRS = {"T", "shape", "ndim", "size", "real", "imag", "dtype"}


ARRAY_METHODS = {
    "sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
    "std": np.std, "var": np.var, "dot": np.dot, "reshape": np.reshape,
    "transpose": np.transpose, "ravel": np.ravel, "flatten": np.ravel, "copy": np.copy,
    "squeeze": np.squeeze, "clip": np.clip, "cumsum": np.cumsum, "cumprod": np.cumprod,
    "conj": np.conj, "conjugate": np.conj, "trace": np.trace, "diagonal": np.diagonal,
    "argmax": np.argmax, "argmin": np.argmin, "argsort": np.argsort, "round": np.round,
    "any": np.any, "all": np.all, "astype": "astype", "item": "item",
    "swapaxes": np.swapaxes, "repeat": np.repeat, "take": np.take,
}


VARARG_SHAPE_METHODS = {"reshape", "transpose"}


SIMPLE_CONSTANTS = (int, float, complex, bool, str, bytes, type(None), type(Ellipsis))


def is_simple_constant(v) -> bool:
    if isinstance(v, SIMPLE_CONSTANTS):
        return True
    if isinstance(v, tuple):
        return all(is_simple_constant(x) for x in v)
    return False


class Scope:
    """One function being lowered: its parsed source and its variable environment.

    A function defined inside another (a lambda, a nested `def`) has the enclosing scope
    as `parent`: a name it does not assign is read there, at the time of the call, as
    Python's closures read it."""

    def __init__(self, parsed: ParsedFunction, parent: Scope | None = None,
                 local_names=frozenset()):
        self.parsed = parsed
        self.env: dict = {}
        self.fresh: set = set()  # variables holding arrays this function created itself
        self.caller: Scope | None = None  # an inlined function's: the code that called it
        self.parent = parent
        self.local_names = local_names  # names a nested function assigns (its own)
        self.local_node = None  # a nested function's node (else the parsed function's)

    def binding(self, name: str):
        """The value `name` is bound to in this function or an enclosing one, Undefined
        for a local of a nested function not assigned yet, or None (a global)."""
        scope = self
        while scope is not None:
            if name in scope.env:
                return scope.env[name]
            if name in scope.local_names:
                return Undefined(name)
            scope = scope.parent
        return None


@dataclass(frozen=True)
class StaticDict:
    """A dict written in the function with constant keys: its values are lowered values,
    looked up while compiling (`d["w"]`), like a tuple's items."""

    keys: tuple  # constants, in insertion order
    values: tuple  # lowered values

    def get(self, key):
        for k, v in zip(self.keys, self.values):
            if type(k) is type(key) and k == key:
                return v
        raise KeyError(key)

    def without(self, key) -> StaticDict:
        keep = [i for i, k in enumerate(self.keys) if not (type(k) is type(key) and k == key)]
        return StaticDict(tuple(self.keys[i] for i in keep), tuple(self.values[i] for i in keep))

    def with_item(self, key, value) -> StaticDict:
        for i, k in enumerate(self.keys):
            if type(k) is type(key) and k == key:
                return StaticDict(self.keys, self.values[:i] + (value,) + self.values[i + 1:])
        return StaticDict(self.keys + (key,), self.values + (value,))


@dataclass(frozen=True)
class Zipped:
    """`zip(a, b, ...)` or `enumerate(a)` of values known only at run time: the iterable of
    a `for` loop, which walks the sequences by index."""

    seqs: tuple  # lowered sequences
    counted: bool  # enumerate: the index comes first
    grouped: bool = False  # enumerate(zip(...)): the items after the index as one tuple


@dataclass(frozen=True, eq=False)
class LocalFunction:
    """A lambda or `def` inside the function being lowered. It is a compile-time value:
    calls of it are inlined, reading the enclosing function's names at the call."""

    node: object  # gast.Lambda or gast.FunctionDef
    scope: Scope  # where it was defined
    defaults: tuple  # lowered default values, evaluated at the definition as in Python
    kw_defaults: tuple  # one per keyword-only parameter: a lowered value or None
    name: str


class ObjectRecord:
    """An object of a class written in Python, created inside the differentiated code: a
    record of its attributes (lowered values), as a dict written in the function is.
    `__init__` and its methods are inlined with the record as `self`; an attribute holding
    a differentiated value carries its derivative. `depth`: how deep in branches and loop
    bodies it was made (an attribute is written only at that depth: a write in one branch
    of an `if` would be seen by the other)."""

    def __init__(self, cls, depth: int):
        self.cls = cls
        self.attrs: dict = {}
        self.depth = depth

    def __repr__(self) -> str:
        return f"<{self.cls.__name__} record>"


@dataclass(frozen=True, eq=False)
class SuperRecord:
    """`super()` in a method inlined on a record: attributes looked up after `owner` in the
    class's method resolution order."""

    record: ObjectRecord
    owner: type


@dataclass(frozen=True, eq=False)
class Partial:
    """functools.partial(f, *args, **kwargs) made in the function: a compile-time value
    whose calls are calls of `f` with the stored arguments first (a keyword given at the
    call wins)."""

    func: object  # a lowered callee: Static, LocalFunction or Partial
    args: tuple
    kwargs: tuple  # (name, lowered value)


def writes_into(stmts, p) -> bool:
    """Does a statement (at any depth) write into the array `p` (a[i] = v, np.add.at)?"""
    from s2sad.ir.nodes import blocks_of

    for st in stmts:
        if isinstance(st, Call) and st.fn in (prims.index_update, prims.index_add) and \
                st.args and st.args[0] == p:
            return True
        for inner in blocks_of(st):
            if writes_into(inner.stmts, p):
                return True
    return False


def holds(value, var, view_base) -> bool:
    """Does the lowered value refer to `var` (itself, a view of it, or inside a tuple)?"""
    if isinstance(value, Var):
        return value == var or view_base.get(value) == var
    if isinstance(value, StaticSeq):
        return any(holds(v, var, view_base) for v in value.items)
    if isinstance(value, StaticDict):
        return any(holds(v, var, view_base) for v in value.values)
    return False


def contains_item(value, item) -> bool:
    """Does a tuple, list or dict written in the function hold `item` (the same object)?"""
    if isinstance(value, StaticSeq):
        return any(v is item or contains_item(v, item) for v in value.items)
    if isinstance(value, StaticDict):
        return any(v is item or contains_item(v, item) for v in value.values)
    return False


def loads(node, name) -> bool:
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load):
            return True
    return False


def is_add_at(obj) -> bool:
    try:
        return obj == np.add.at
    except Exception:
        return False


class Abort(Exception):
    """Abandon the current statement after an error was recorded."""


@dataclass(frozen=True)
class Undefined:
    name: str
    deleted: bool = False  # (unbound by `del name`)


@dataclass(frozen=True)
class Poisoned:
    """A name whose assignment failed with a reported error."""

    name: str
