"""The structured SSA IR: a handful of frozen dataclasses.

Operands are variables or constants (A-normal form); every statement defines
fresh variables; `If`, `ForRange` and `While` are region ops with explicit
inputs (loop-carried block parameters) and outputs, in the style of MLIR's scf.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from s2sad.errors import Loc


class Var:
    """An SSA variable; `name` is unique in its function and keeps the user's name as a hint.

    Variables are interned: `Var("x") is Var("x")`, so equality and hashing are by identity,
    done in C. Every pass keys dicts and sets by variables, and this is their hot path.
    """

    __slots__ = ("name",)
    __match_args__ = ("name",)
    name: str

    def __new__(cls, name: str):
        v = _INTERNED.get(name)
        if v is None:
            v = object.__new__(cls)
            object.__setattr__(v, "name", name)
            v = _INTERNED.setdefault(name, v)  # atomic: one object per name, even racing
        return v

    def __setattr__(self, attr, value):
        raise AttributeError("Var is immutable")

    def __reduce__(self):
        return (Var, (self.name,))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self) -> str:
        return self.name


_INTERNED: dict = {}


@dataclass(frozen=True)
class Const:
    """A constant operand (a number, None, a string, a tuple of constants, any object)."""

    value: object
    name: str | None = field(default=None, compare=False)  # the global name it came from

    def __repr__(self) -> str:
        return self.name or repr(self.value)

    def __eq__(self, other):
        return isinstance(other, Const) and type(self.value) is type(other.value) and (
            self.value is other.value or _safe_eq(self.value, other.value))

    def __hash__(self):
        v = self.value
        if isinstance(v, slice):
            v = ("slice", v.start, v.stop, v.step)
        try:
            return hash((type(self.value), v))
        except TypeError:
            return id(self.value)


def _safe_eq(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return False


Atom = Union[Var, Const]


@dataclass(frozen=True)
class Call:
    """`target = fn(*args, **kwargs)` where `fn` is a primitive (a rule-table key)."""

    target: Var
    fn: object
    args: tuple
    kwargs: tuple = ()  # tuple of (name, Atom)
    loc: Loc | None = None

    @property
    def defs(self) -> tuple:
        return (self.target,)


@dataclass(frozen=True)
class Block:
    """A list of statements and the values the block yields to its parent op."""

    stmts: tuple
    results: tuple = ()


@dataclass(frozen=True)
class If:
    """`outputs = then.results if cond else orelse.results`."""

    cond: Atom
    then: Block
    orelse: Block
    outputs: tuple
    loc: Loc | None = None

    @property
    def defs(self) -> tuple:
        return self.outputs


@dataclass(frozen=True)
class ForRange:
    """`for index in range(start, stop, step)` carrying `params` (initialised from `inits`).

    The body yields the next values of `params`; `outputs` receive their final values.
    """

    index: Var
    start: Atom
    stop: Atom
    step: Atom
    params: tuple
    inits: tuple
    body: Block
    outputs: tuple
    loc: Loc | None = None
    reverse: bool = False  # iterate the range backwards (reverse sweeps of loops)
    # set by the last pass before code generation (passes.loops.iterate_tapes): the loop
    # runs once per item left in this tape reader, binding `index` to the item; start,
    # stop and step are then unused
    over: Var | None = None

    @property
    def defs(self) -> tuple:
        return self.outputs


@dataclass(frozen=True)
class While:
    """`while cond.results[0]: params = body.results`, carrying `params` from `inits`.

    `cond` is evaluated on the current `params`; `outputs` receive their final values.
    """

    params: tuple
    inits: tuple
    cond: Block
    body: Block
    outputs: tuple
    loc: Loc | None = None

    @property
    def defs(self) -> tuple:
        return self.outputs


Stmt = Union[Call, If, ForRange, While]


@dataclass(frozen=True)
class Function:
    """A function: positional `params`, keyword-only `kwonly` (name, default), a body.

    `body.results` are the returned values; `returns_tuple` says whether the
    function returns them as a tuple or returns the single `results[0]`.
    """

    name: str
    params: tuple
    body: Block
    returns_tuple: bool = False
    kwonly: tuple = ()
    defaults: tuple = ()  # defaults of the last positional params (values)
    loc: Loc | None = None
    source_lines: tuple = field(default=(), compare=False)
    first_line: int = field(default=1, compare=False)
    meta: dict = field(default_factory=dict, compare=False)  # mode, result layout, ...


def atoms_of(stmt) -> tuple | list:
    """The operand atoms a statement reads directly (not those inside its blocks)."""
    if type(stmt) is Call:
        kwargs = stmt.kwargs
        return stmt.args + tuple(a for _, a in kwargs) if kwargs else stmt.args
    match stmt:
        case Call(args=args, kwargs=kwargs):
            return list(args) + [a for _, a in kwargs]
        case If(cond=cond):
            return [cond]
        case ForRange(start=s, stop=e, step=st, inits=inits, over=over):
            return [s, e, st, *inits] if over is None else [over, *inits]
        case While(inits=inits):
            return list(inits)
    raise TypeError(stmt)


def blocks_of(stmt) -> list | tuple:
    if type(stmt) is Call:  # (the common case first: no pattern matching)
        return ()
    match stmt:
        case If(then=t, orelse=e):
            return [t, e]
        case ForRange(body=b):
            return [b]
        case While(cond=c, body=b):
            return [c, b]
    raise TypeError(stmt)


def free_vars(block: Block, bound: frozenset = frozenset()) -> set:
    """Variables read in `block` (recursively) that are not defined inside it."""
    defined: set = set(bound)
    free: set = set()

    def use(a):
        if isinstance(a, Var) and a not in defined:
            free.add(a)

    def walk(b: Block):
        for s in b.stmts:
            for a in atoms_of(s):
                use(a)
            match s:
                case ForRange(index=i, params=ps):
                    defined.add(i)
                    defined.update(ps)
                case While(params=ps):
                    defined.update(ps)
            for inner in blocks_of(s):
                walk(inner)
            defined.update(s.defs)
        for r in b.results:
            use(r)

    walk(block)
    return free


def count_uses(block: Block, counts: dict | None = None) -> dict:
    """How many times each variable is read in `block` (recursively, results included)."""
    counts = {} if counts is None else counts
    get = counts.get
    for s in block.stmts:
        if type(s) is Call:
            for a in s.args:
                if type(a) is Var:
                    counts[a] = get(a, 0) + 1
            for _, a in s.kwargs:
                if type(a) is Var:
                    counts[a] = get(a, 0) + 1
            continue
        for a in atoms_of(s):
            if isinstance(a, Var):
                counts[a] = get(a, 0) + 1
        for inner in blocks_of(s):
            count_uses(inner, counts)
    for r in block.results:
        if isinstance(r, Var):
            counts[r] = counts.get(r, 0) + 1
    return counts
