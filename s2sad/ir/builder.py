"""Building IR: fresh names, statement emission, and renaming/substitution of blocks.

Passes create new statements through an `Emitter` so that every new variable
gets a unique, readable name derived from a hint (`x_dot`, `x_bar_1`).
"""

from __future__ import annotations

import functools

from s2sad.ir.nodes import Block, Call, Const, ForRange, Function, If, Var, While, blocks_of


class Namer:
    """Hands out names not yet used in a function: `hint`, `hint_1`, `hint_2`, ..."""

    def __init__(self, taken=()):
        self.taken: set = set(taken)
        self.counts: dict = {}

    def fresh(self, hint: str) -> Var:
        hint = hint or "t"
        if hint not in self.taken:
            self.taken.add(hint)
            return Var(hint)
        n = self.counts.get(hint, 1)
        while f"{hint}_{n}" in self.taken:
            n += 1
        self.counts[hint] = n + 1
        name = f"{hint}_{n}"
        self.taken.add(name)
        return Var(name)

    @classmethod
    def for_function(cls, fn: Function) -> "Namer":
        return cls(v.name for v in all_vars(fn))


def replace_body(fn: Function, body: Block) -> Function:
    """`fn` with another body (parameters, location and meta kept)."""
    return Function(fn.name, fn.params, body, fn.returns_tuple, fn.kwonly, fn.defaults, fn.loc,
                    fn.source_lines, fn.first_line, fn.meta)


def all_vars(fn: Function) -> set:
    out = set(fn.params) | {v for v, _ in fn.kwonly}
    _collect(fn.body, out)
    return out


def block_vars(block: Block) -> set:
    """Every variable a block defines, at any depth (loop indices and parameters too)."""
    out: set = set()
    _collect(block, out)
    return out


def _collect(block: Block, out: set):
    for s in block.stmts:
        if type(s) is Call:
            out.add(s.target)
            continue
        out.update(s.defs)
        match s:
            case ForRange(index=i, params=ps):
                out.add(i)
                out.update(ps)
            case While(params=ps):
                out.update(ps)
        for b in blocks_of(s):
            _collect(b, out)


class Emitter:
    """Collects statements into the block under construction."""

    def __init__(self, namer: Namer):
        self.namer = namer
        self.stmts: list = []

    def call(self, fn, args, kwargs=(), hint="t", loc=None) -> Var:
        target = self.namer.fresh(hint)
        self.stmts.append(Call(target, fn, tuple(args), tuple(kwargs), loc))
        return target

    def add(self, stmt):
        self.stmts.append(stmt)

    def nested(self) -> "Emitter":
        return Emitter(self.namer)


def substitute_block(block: Block, mapping: dict, namer: Namer, hints: dict | None = None,
                     loc=None) -> Block:
    """Copy `block`, replacing atoms by `mapping` and renaming every definition freshly.

    `hints` optionally maps old variable names to the hint for their new names.
    `loc`, when given, replaces the source location of every copied statement.
    """
    mapping = dict(mapping)
    hints = hints or {}

    def new(v: Var) -> Var:
        nv = namer.fresh(hints.get(v, strip_suffix(v.name)))
        mapping[v] = nv
        return nv

    def sub(a):
        if isinstance(a, Var):
            return mapping.get(a, a)
        return a

    def block_copy(b: Block) -> Block:
        stmts = [stmt_copy(s) for s in b.stmts]
        return Block(tuple(stmts), tuple(sub(r) for r in b.results))

    def stmt_copy(s):
        where = loc if loc is not None else s.loc
        match s:
            case Call(target=t, fn=fn, args=args, kwargs=kw):
                args = tuple(sub(a) for a in args)
                kw = tuple((n, sub(a)) for n, a in kw)
                return Call(new(t), fn, args, kw, where)
            case If(cond=c, then=then, orelse=orelse, outputs=outs):
                c = sub(c)
                then, orelse = block_copy(then), block_copy(orelse)
                return If(c, then, orelse, tuple(new(o) for o in outs), where)
            case ForRange(index=i, start=a, stop=b, step=st, params=ps, inits=inits, body=body,
                          outputs=outs):
                a, b, st = sub(a), sub(b), sub(st)
                inits = tuple(sub(x) for x in inits)
                i2 = new(i)
                ps2 = tuple(new(p) for p in ps)
                body = block_copy(body)
                return ForRange(i2, a, b, st, ps2, inits, body, tuple(new(o) for o in outs),
                                where, s.reverse, sub(s.over) if s.over is not None else None)
            case While(params=ps, inits=inits, cond=cond, body=body, outputs=outs):
                inits = tuple(sub(x) for x in inits)
                ps2 = tuple(new(p) for p in ps)
                cond, body = block_copy(cond), block_copy(body)
                return While(ps2, inits, cond, body, tuple(new(o) for o in outs), where)
        raise TypeError(s)

    return block_copy(block)


@functools.lru_cache(maxsize=1 << 16)
def strip_suffix(name: str) -> str:
    """`x_3` -> `x`: a hint from an SSA name (one numeric suffix removed). Cached: the
    passes and the register allocator ask it again and again for the same names."""
    base, _, tail = name.rpartition("_")
    if base and tail.isdigit():
        return base
    return name


@functools.lru_cache(maxsize=1 << 16)
def root_name(name: str) -> str:
    """`x_1_2` -> `x`: every numeric suffix removed."""
    while True:
        stripped = strip_suffix(name)
        if stripped == name:
            return name
        name = stripped


def hint_of(v) -> str:
    return strip_suffix(v.name) if isinstance(v, Var) else "t"


def is_const(a, value=None) -> bool:
    return isinstance(a, Const) and (value is None or (type(a.value) in (int, float) and
                                                       a.value == value))


def replace_atoms(block: Block, mapping: dict) -> Block:
    """Copy `block` with operand atoms replaced by `mapping` (definitions keep their names)."""
    if not mapping:
        return block

    def sub(a):
        return mapping.get(a, a) if isinstance(a, Var) else a

    def blk(b: Block) -> Block:
        return Block(tuple([st(s) for s in b.stmts]), tuple([sub(r) for r in b.results]))

    def st(s):
        if type(s) is Call:
            for a in s.args:
                if type(a) is Var and a in mapping:
                    break
            else:
                for _, a in s.kwargs:
                    if type(a) is Var and a in mapping:
                        break
                else:
                    return s  # (most statements: found without comparing constants)
            args = tuple([sub(a) for a in s.args])
            kw = tuple([(n, sub(a)) for n, a in s.kwargs]) if s.kwargs else ()
            if args == s.args and kw == s.kwargs:
                return s  # statements are immutable: an unchanged one is shared
            return Call(s.target, s.fn, args, kw, s.loc)
        match s:
            case If(cond=c, then=then, orelse=orelse, outputs=outs):
                return If(sub(c), blk(then), blk(orelse), outs, s.loc)
            case ForRange():
                return ForRange(s.index, sub(s.start), sub(s.stop), sub(s.step), s.params,
                                tuple(sub(x) for x in s.inits), blk(s.body), s.outputs, s.loc,
                                s.reverse, sub(s.over) if s.over is not None else None)
            case While():
                return While(s.params, tuple(sub(x) for x in s.inits), blk(s.cond), blk(s.body),
                             s.outputs, s.loc)
        raise TypeError(s)

    return blk(block)
