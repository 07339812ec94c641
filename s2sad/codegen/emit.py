"""Emission: IR -> readable Python source.

Expressions are built as gast nodes and printed with astor; statements are
laid out here, with comments pointing back to the original source lines.
SSA names are coalesced back into the user's names where that is safe
(`x = f(x)` in a loop body rather than `x_1 = f(x); x = x_1`), and compiler
temporaries used once are folded back into the expression that reads them.
"""

from __future__ import annotations

import math
import operator

import astor
import gast
import numpy as np

from s2sad.codegen.names import Namespace
from s2sad.codegen.unparse import Unsupported, unparse
from s2sad.ir import prims
from s2sad.ir.builder import root_name, strip_suffix
from s2sad.ir.nodes import (
    Block,
    Call,
    Const,
    ForRange,
    Function,
    If,
    Var,
    While,
    atoms_of,
    blocks_of,
)

BINOP_AST = {
    operator.add: gast.Add, operator.sub: gast.Sub, operator.mul: gast.Mult,
    operator.truediv: gast.Div, operator.floordiv: gast.FloorDiv, operator.mod: gast.Mod,
    operator.pow: gast.Pow, operator.matmul: gast.MatMult, operator.and_: gast.BitAnd,
    operator.or_: gast.BitOr, operator.xor: gast.BitXor, operator.lshift: gast.LShift,
    operator.rshift: gast.RShift,
}
CMP_AST = {operator.lt: gast.Lt, operator.le: gast.LtE, operator.gt: gast.Gt,
           operator.ge: gast.GtE, operator.eq: gast.Eq, operator.ne: gast.NotEq,
           operator.is_: gast.Is, operator.is_not: gast.IsNot}
UNARY_AST = {operator.neg: gast.USub, operator.pos: gast.UAdd, operator.not_: gast.Not,
             operator.invert: gast.Invert}
NO_INLINE = {prims.new_tape, prims.tape_pop, prims.tape_push, prims.sweep_boundary,
             prims.tape_reader, prims.tape_next, prims.index_add_inplace, prims.index_add_at,
             prims.index_update_inplace, prims.add_inplace, prims.mul_inplace}
SCATTERS = (prims.index_add_inplace, prims.index_add_at, prims.index_update_inplace,
            prims.add_inplace, prims.mul_inplace)


def sink_temporaries(fn: Function) -> Function:
    """Move each single-use temporary down to just before the statement that reads it.

    Pure statements can move freely in SSA form; this puts a tangent next to its use so
    that it can be folded into the expression (`z_dot = x_dot * np.cos(x) * y + ...`).
    """
    from s2sad.ir.nodes import count_uses, free_vars

    counts = count_uses(fn.body)

    def blk(b: Block) -> Block:
        stmts = [_rebuild(s, blk) for s in b.stmts]
        i = len(stmts) - 1
        while i >= 0:
            s = stmts[i]
            if isinstance(s, Call) and s.target.name.startswith("_") and \
                    s.fn not in NO_INLINE and counts.get(s.target) == 1:
                j = next((k for k in range(i + 1, len(stmts))
                          if s.target in atoms_of(stmts[k]) or
                          s.target in _free_in(stmts[k], free_vars)), None)
                if j is not None and j > i + 1 and s.target in atoms_of(stmts[j]) and \
                        not any(isinstance(x, Call) and x.fn in NO_INLINE
                                for x in stmts[i + 1:j]):
                    stmts.insert(j - 1, stmts.pop(i))
            i -= 1
        return Block(tuple(stmts), b.results)

    body = blk(fn.body)
    return Function(fn.name, fn.params, body, fn.returns_tuple, fn.kwonly, fn.defaults, fn.loc,
                    fn.source_lines, fn.first_line, fn.meta)


def _free_in(s, free_vars) -> set:
    out = set()
    for inner in blocks_of(s):
        out |= free_vars(inner)
    return out


def _rebuild(s, blk):
    match s:
        case If():
            return If(s.cond, blk(s.then), blk(s.orelse), s.outputs, s.loc)
        case ForRange():
            return ForRange(s.index, s.start, s.stop, s.step, s.params, s.inits, blk(s.body),
                            s.outputs, s.loc, s.reverse, s.over)
        case While():
            return While(s.params, s.inits, blk(s.cond), blk(s.body), s.outputs, s.loc)
    return s


SUMS = {operator.add, operator.sub}


def _partial_sum(s: Call, stmts, idx) -> bool:
    """`x_bar = x_bar + a` followed by `x_bar = x_bar + b`: print one sum, not two."""
    if s.fn not in SUMS or idx + 1 >= len(stmts):
        return False
    nxt = stmts[idx + 1]
    return (isinstance(nxt, Call) and nxt.fn in SUMS and nxt.args and nxt.args[0] == s.target
            and strip_suffix(nxt.target.name) == strip_suffix(s.target.name))


def find_inlined(fn: Function, pos: "Positions") -> set:
    """Compiler temporaries to fold into the one expression that reads them.

    A temporary qualifies when it is used once, in the same block, and every statement
    between its definition and its use is itself folded: no assignment happens in between,
    so every name the expression reads still holds the same value where it is printed.
    """
    out: set = set()

    def walk(b: Block):
        for s in b.stmts:
            for inner in blocks_of(s):
                walk(inner)
        n = len(b.stmts)
        for idx in range(n - 1, -1, -1):
            s = b.stmts[idx]
            if not isinstance(s, Call):
                continue
            t = s.target
            if pos.count(t) != 1:
                continue
            if s.fn in NO_INLINE and not (
                    s.fn is prims.tape_reader and idx + 1 < n and
                    isinstance(b.stmts[idx + 1], ForRange) and b.stmts[idx + 1].over == t):
                continue  # (a reader the next loop iterates reads as `for x in reversed(t)`)
            if not t.name.startswith("_") and not _partial_sum(s, b.stmts, idx):
                continue
            (_, ublk), = pos.uses[t]
            if ublk != id(b):
                continue
            use_idx = next((j for j in range(idx + 1, n) if t in atoms_of(b.stmts[j])), None)
            if use_idx is None:
                if t not in b.results:
                    continue
                use_idx = n
            user = b.stmts[use_idx] if use_idx < n else None
            if isinstance(user, Call) and user.fn in SCATTERS and user.args[0] == t:
                continue  # the accumulator of `acc[i] += g` needs a name
            between = b.stmts[idx + 1:use_idx]
            if all(isinstance(x, Call) and x.target in out for x in between):
                out.add(t)

    walk(fn.body)
    return out


# -- analysis: uses, positions ------------------------------------------------


class Positions:
    """Pre-order positions of statements, and where each variable is used and defined."""

    def __init__(self, fn: Function):
        self.n = 0
        self.uses: dict = {}  # var -> list of (position, block id)
        self.defpos: dict = {}
        self.defblock: dict = {}
        self.stmt_pos: dict = {}  # id(stmt) -> (start, end)
        self.defining: dict = {}  # var -> the Call defining it
        self.block_of_use: dict = {}
        for p in fn.params:
            self.defpos[p] = -1
        self.block(fn.body)

    def tick(self) -> int:
        self.n += 1
        return self.n

    def use(self, a, pos, blk):
        if isinstance(a, Var):
            self.uses.setdefault(a, []).append((pos, id(blk)))

    def define(self, v, pos, blk):
        self.defpos[v] = pos
        self.defblock[v] = id(blk)

    def block(self, b: Block):
        for s in b.stmts:
            start = self.tick()
            for a in atoms_of(s):
                self.use(a, start, b)
            match s:
                case ForRange(index=i, params=ps):
                    self.define(i, start, s.body)
                    if s.over is not None:  # named like what it takes from the tape
                        self.defining[i] = Call(i, prims.tape_next, (s.over,))
                    for p in ps:
                        self.define(p, start, s.body)
                case While(params=ps):
                    for p in ps:
                        self.define(p, start, s.body)
            for inner in blocks_of(s):
                self.block(inner)
            end = self.tick()
            if isinstance(s, Call):
                self.defining[s.target] = s
                if s.fn is prims.sweep_boundary:
                    self.boundary = start
            for d in s.defs:
                self.define(d, start if isinstance(s, Call) else end, b)
            self.stmt_pos[id(s)] = (start, end)
        pos = self.tick()
        for r in b.results:
            self.use(r, pos, b)
        self.stmt_pos[id(b)] = (None, pos)

    def count(self, v) -> int:
        return len(self.uses.get(v, ()))

    def last_use(self, v) -> int:
        u = self.uses.get(v)
        return max(p for p, _ in u) if u else -1


class Names:
    """Union-find over variables: the Python name each SSA variable is printed with."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, v):
        parent = self.parent
        root = v
        while root in parent:
            root = parent[root]
        while v in parent and parent[v] != root:  # path compression
            parent[v], v = root, parent[v]
        return root

    def union(self, keep, other):
        a, b = self.find(keep), self.find(other)
        if a != b:
            self.parent[b] = a

    printed: dict = None

    def name(self, v: Var) -> str:
        root = self.find(v)
        if self.printed is not None and root in self.printed:
            return self.printed[root]
        return root.name


def coalesce(fn: Function, pos: Positions, inlined: set, reserved: set) -> Names:
    """Give copies' sources and destinations one name wherever their lifetimes allow.

    Then print each class of variables with its user's name (`x`, `x_bar`) where no
    other class with that name is live at the same time, else with a numbered variant.
    """
    graph = Interference(_special(fn, pos), pos, inlined)
    live = graph.block(fn.body, set(a for a in fn.body.results if isinstance(a, Var)))
    for p in fn.params:
        graph.edges(p, live | set(fn.params))
    for v, _ in fn.kwonly:
        graph.edges(v, live | set(fn.params))
    names = Names()
    members: dict = {}
    for a, b in graph.copies:
        ra, rb = names.find(a), names.find(b)
        if ra == rb:
            continue
        ca = members.get(ra, {ra})
        cb = members.get(rb, {rb})
        if any(graph.adj.get(x, _EMPTY) & cb for x in ca):
            continue
        keep, other = (ra, rb) if _prefer(ra, rb, fn) else (rb, ra)
        names.union(keep, other)
        members[keep] = ca | cb
        members.pop(other, None)
    _assign_names(fn, pos, graph, names, inlined, reserved)
    return names


def _assign_names(fn, pos, graph, names: Names, inlined: set, reserved: set):
    classes: dict = {}
    root_of: dict = {}
    for v in graph.nodes | set(fn.params) | set(pos.defpos):
        root_of[v] = r = names.find(v)
        if isinstance(v, Var) and v not in inlined:
            classes.setdefault(r, set()).add(v)
    adj: dict = {}
    merged = {v for v, r in root_of.items() if r is not v}
    for root, members in classes.items():
        if len(members) == 1 and root in members and \
                merged.isdisjoint(graph.adj.get(root, _EMPTY)):
            nbrs = set(graph.adj.get(root, _EMPTY))  # neighbours that are their own class
        else:
            nbrs = set()
            for m in members:
                for w in graph.adj.get(m, ()):
                    nbrs.add(root_of[w] if w in root_of else names.find(w))
        nbrs.discard(root)
        adj[root] = nbrs
    boundary = getattr(pos, "boundary", None) if fn.meta.get("split") else None
    if boundary is not None:
        # names assigned inside the pullback closure must not shadow the forward sweep's
        fwd = {r for r, ms in classes.items() if min(pos.defpos.get(m, -1) for m in ms) < boundary}
        rev = set(classes) - fwd
        for r in rev:
            adj[r] |= fwd
        for f in fwd:
            adj[f] |= rev
    order = sorted(classes, key=lambda r: (r not in fn.params,
                                           min(pos.defpos.get(m, -1) for m in classes[r]),
                                           r.name))
    printed: dict = {}
    for r in order:
        base = _base_name(r, classes[r], pos)
        if r in fn.params or any(m in fn.params for m in classes[r]):
            base = next(m for m in [r] + sorted(classes[r], key=lambda m: m.name)
                        if m in fn.params or m is r).name
        blocked = {printed[w] for w in adj[r] & printed.keys()}  # names of live neighbours
        n = 0
        cand = base
        while cand in reserved or cand in blocked:
            n += 1
            cand = f"{base}_{n}"
        printed[r] = cand
    names.printed = printed


def _base_name(root, members, pos) -> str:
    """The user's name for a class: the hint of its first named member, or a made-up one."""
    named = sorted((m for m in members if not m.name.startswith("_")),
                   key=lambda m: pos.defpos.get(m, -1))
    if named:
        return strip_suffix(named[0].name)
    defn = pos.defining.get(root) or next((pos.defining.get(m) for m in members
                                           if pos.defining.get(m) is not None), None)
    return _temp_name(defn)


def _temp_name(defn) -> str:
    if defn is None:
        return "t"
    fn = defn.fn
    if fn in (prims.tape_pop, prims.tape_next):
        return "saved"
    if fn is prims.tape_reader:
        return f"{defn.args[0].name}_reader" if isinstance(defn.args[0], Var) else "reader"
    if fn is operator.getitem and isinstance(defn.args[0], Var) and \
            isinstance(defn.args[1], Const) and type(defn.args[1].value) is int and \
            0 <= defn.args[1].value < 100 and not defn.args[0].name.startswith("_"):
        # x[0] -> x0, x_dot[1] -> x1_dot
        base, k = strip_suffix(defn.args[0].name), defn.args[1].value
        for suffix in ("_dot", "_bar"):
            if base.endswith(suffix):
                return f"{base[:-len(suffix)]}{k}{suffix}"
        return f"{base}{k}"
    label = getattr(fn, "__name__", None)
    if isinstance(fn, prims.Attr):
        label = fn.name
    if fn in BINOP_AST or fn in CMP_AST or fn in UNARY_AST or fn is operator.getitem or \
            label is None or not label.isidentifier():
        return "t"
    arg = defn.args[0] if defn.args else None
    if isinstance(arg, Var) and not arg.name.startswith("_") and len(defn.args) == 1:
        return f"{label.lower()}_{strip_suffix(arg.name)}"
    return "t"


def _prefer(a: Var, b: Var, fn: Function) -> bool:
    """Which name a merged class keeps: a parameter's, else the shorter user name."""
    if a in fn.params:
        return True
    if b in fn.params:
        return False
    ka = (a.name.startswith("_"), len(a.name), a.name)
    kb = (b.name.startswith("_"), len(b.name), b.name)
    return ka <= kb


_EMPTY: frozenset = frozenset()


def _copy_candidates(fn: Function) -> set:
    """Variables that take part in copies (loop and branch inputs and outputs)."""
    out: set = set()

    def walk(b: Block):
        for st in b.stmts:
            match st:
                case If(then=then, orelse=orelse, outputs=outs):
                    out.update(outs)
                    out.update(r for r in then.results + orelse.results if isinstance(r, Var))
                case ForRange(params=ps, inits=inits, body=body, outputs=outs) | \
                        While(params=ps, inits=inits, body=body, outputs=outs):
                    out.update(ps)
                    out.update(outs)
                    out.update(a for a in inits + body.results if isinstance(a, Var))
            for inner in blocks_of(st):
                walk(inner)

    walk(fn.body)
    return out


def _special(fn: Function, pos) -> set:
    """The variables whose every interference is recorded (see Interference).

    Those of loop and branch copies, and the parameters. The result and the accumulator
    of an in-place update (`x_bar += g`) are coalesced too, but a chain of such updates
    whose members all print with one base name, and that meets no other copy, only needs
    the interferences within that name's group: it stays out of the special set, which
    keeps the graph small when a function accumulates many cotangents in place.
    """
    special = _copy_candidates(fn) | set(fn.params) | {v for v, _ in fn.kwonly}
    pairs = []

    def walk(b: Block):
        for st in b.stmts:
            if isinstance(st, Call) and st.fn in SCATTERS and isinstance(st.args[0], Var):
                pairs.append((st.target, st.args[0]))
            for inner in blocks_of(st):
                walk(inner)

    walk(fn.body)
    if not pairs:
        return special
    chains = Names()  # union-find over the pairs: one class per chain of updates
    for t, a in pairs:
        chains.union(a, t)
    groups: dict = {}  # chain -> its members
    for t, a in pairs:
        groups.setdefault(chains.find(a), set()).update((t, a))
    for members in groups.values():
        bases = {root_name(_base_name(v, {v}, pos)) for v in members}
        if len(bases) > 1 or not special.isdisjoint(members):
            special |= members
    return special


class Interference:
    """Backward liveness over the structured IR, recording which variables interfere.

    Only interferences that can matter are recorded: any involving a variable that takes
    part in a copy (`special`), and those between variables of the same base name (which
    may be printed with the same name). That keeps the graph small for long functions.
    """

    def __init__(self, special: set, pos, inlined=frozenset()):
        self.adj: dict = {}
        self.copies: list = []  # (dest, source) pairs worth coalescing, in program order
        self.nodes: set = set()
        self.special = special
        self.pos = pos
        self.by_base: dict = {}  # the name a variable would be printed with -> variables
        self.base_of: dict = {}
        self.inlined = inlined  # folded into expressions: never printed, never named
        for v in list(pos.defpos):
            if isinstance(v, Var) and v not in inlined:
                self._base(v)

    def _base(self, v) -> set:
        b = self.base_of.get(v)
        if b is None:
            # numbered variants (x_1, x_1_1) can be printed for any x: one group for all
            b = self.base_of[v] = root_name(_base_name(v, {v}, self.pos))
        group = self.by_base.get(b)
        if group is None:
            group = self.by_base[b] = set()
        group.add(v)
        return group

    def edges(self, v, live):
        if v in self.inlined:
            return
        self.nodes.add(v)
        group = self._base(v)
        if v in self.special:
            others = set(live)
        else:
            others = (live & group) | (live & self.special)
        others.discard(v)
        if not others:
            return
        self.adj.setdefault(v, set()).update(others)
        for w in others:
            if isinstance(w, Var):
                self.adj.setdefault(w, set()).add(v)
        self.nodes.update(others)

    def copy(self, dest, src):
        if isinstance(src, Var):
            self.copies.append((dest, src))
            self.nodes.update((dest, src))

    def block(self, b: Block, live_out: set) -> set:
        live = set(live_out)
        for s in reversed(b.stmts):
            live = self.stmt(s, live)
        return live

    def stmt(self, s, live: set) -> set:
        """The variables live before `s`, given those live after it (updated in place)."""
        match s:
            case Call(target=t):
                live.discard(t)
                self.edges(t, live)
                live.update(a for a in atoms_of(s) if isinstance(a, Var))
                if s.fn in SCATTERS:
                    self.copy(t, s.args[0])
                return live
            case If(cond=c, then=then, orelse=orelse, outputs=outs):
                after = live - set(outs)
                ins = set()
                for blk in (then, orelse):
                    end = after | {r for r in blk.results if isinstance(r, Var)}
                    for i, o in enumerate(outs):
                        others = {r for j, r in enumerate(blk.results) if j != i}
                        self.edges(o, (after | others | set(outs)) - {o})
                    ins |= self.block(blk, end)
                for o, a, b2 in zip(outs, then.results, orelse.results):
                    self.copy(o, a)
                    self.copy(o, b2)
                if isinstance(c, Var):
                    ins.add(c)
                return ins
            case ForRange(index=i, start=a, stop=st, step=sp, params=ps, inits=inits, body=body,
                          outputs=outs):
                bounds = [a, st, sp] if s.over is None else [s.over]
                return self.loop(s, live, ps, inits, body, outs, [], i, bounds)
            case While(params=ps, inits=inits, cond=cond, body=body, outputs=outs):
                return self.loop(s, live, ps, inits, body, outs, [cond], None, [])
        raise TypeError(s)

    def loop(self, s, live, ps, inits, body, outs, cond_blocks, index, bounds):
        pset = set(ps)
        for o, p in zip(outs, ps):
            self.edges(o, (live - {o}) | set(outs) - {o})
        exit_live = (live - set(outs)) | pset
        header = set(exit_live)
        for _ in range(10):
            end = (header - pset) | {r for r in body.results if isinstance(r, Var)}
            for p, r in zip(ps, body.results):
                self.edges(p, ((header - {p}) | {x for x in body.results if x is not r}) - {p})
            top = self.block(body, end)
            if index is not None:
                self.edges(index, top - {index})
                top = top - {index}
            new_header = exit_live | top
            for cb in cond_blocks:
                new_header = self.block(cb, new_header | {
                    r for r in cb.results if isinstance(r, Var)})
            new_header |= {b for b in bounds if isinstance(b, Var)}
            if new_header <= header:
                break
            header |= new_header
        for p in ps:
            self.edges(p, header - {p})
        for o, p in zip(outs, ps):
            self.copy(o, p)
        for p, init in zip(ps, inits):
            self.copy(p, init)
        for p, r in zip(ps, body.results):
            self.copy(p, r)
        live_in = (header - pset) | {x for x in inits if isinstance(x, Var)}
        live_in |= {b for b in bounds if isinstance(b, Var)}
        return live_in


# -- printing ------------------------------------------------------------------


class Emitter:
    def __init__(self, fn: Function, ns: Namespace, names: Names, pos: Positions):
        self.fn = fn
        self.ns = ns
        self.names = names
        self.pos = pos
        self.lines: list = []
        self.pending: dict = {}
        self.last_line = None
        self.user_file = fn.loc.filename if fn.loc else None

    # expressions -------------------------------------------------------

    def atom(self, a):
        if isinstance(a, Var):
            if a in self.pending:
                return self.pending.pop(a)
            return gast.Name(id=self.names.name(a), ctx=gast.Load(), annotation=None,
                             type_comment=None)
        return self.const(a)

    def const(self, c: Const):
        v = c.value
        if isinstance(v, prims.ZeroValue):
            raise AssertionError("symbolic zero reached code generation")
        if isinstance(v, bool) or v is None or v is Ellipsis or isinstance(v, str):
            return gast.Constant(value=v, kind=None)
        if isinstance(v, np.generic) and v.dtype.kind in "biuf":
            v = v.item()
        if isinstance(v, (int, float)):
            if isinstance(v, float) and not math.isfinite(v):
                return self.attr_path("math.inf" if v > 0 else "-math.inf") if v == v and \
                    abs(v) == math.inf else self.attr_path("math.nan")
            if v < 0:
                return gast.UnaryOp(op=gast.USub(), operand=gast.Constant(value=-v, kind=None))
            return gast.Constant(value=v, kind=None)
        if isinstance(v, complex):
            return gast.Constant(value=v, kind=None)
        if isinstance(v, tuple):
            return gast.Tuple(elts=[self.const(Const(x)) for x in v], ctx=gast.Load())
        if isinstance(v, slice):
            return self.call_expr(slice, [Const(v.start), Const(v.stop), Const(v.step)], [])
        if isinstance(v, type) and v in (float, int, complex, bool):
            return self.attr_path(v.__name__)
        if callable(v) and not isinstance(v, np.ndarray):
            return self.attr_path(self.ns.spell_callable(v))
        name = c.name if c.name and c.name.replace(".", "_").isidentifier() else None
        if name and "." in name:
            root = name.split(".")[0]
            if root in ("np", "math"):
                return self.attr_path(name)
            name = name.replace(".", "_")
        return self.attr_path(self.ns.add_object(v, name or "_const"))

    def attr_path(self, dotted: str):
        if dotted.startswith("-"):
            return gast.UnaryOp(op=gast.USub(), operand=self.attr_path(dotted[1:]))
        parts = dotted.split(".")
        node = gast.Name(id=parts[0], ctx=gast.Load(), annotation=None, type_comment=None)
        for p in parts[1:]:
            node = gast.Attribute(value=node, attr=p, ctx=gast.Load())
        return node

    def index_expr(self, a):
        """An index operand: slices print as `a:b`, tuples as `i, j`."""
        if isinstance(a, Const):
            v = a.value
            if isinstance(v, slice):
                return self.slice_node(*(Const(x) for x in (v.start, v.stop, v.step)))
            if isinstance(v, tuple):
                return gast.Tuple(elts=[self.index_expr(Const(x)) for x in v], ctx=gast.Load())
            return self.const(a)
        if a in self.pending_calls:
            call = self.pending_calls.pop(a)
            self.pending.pop(a, None)
            if call.fn is slice:
                return self.slice_node(*call.args)
            if call.fn is prims.make_tuple:
                return gast.Tuple(elts=[self.index_expr(x) for x in call.args], ctx=gast.Load())
        return self.atom(a)

    def slice_node(self, lo, hi, st):
        def part(x):
            if isinstance(x, Const) and x.value is None:
                return None
            return self.atom(x)

        return gast.Slice(lower=part(lo), upper=part(hi), step=part(st))

    def call_expr(self, fn, args, kwargs):
        if fn in BINOP_AST and len(args) == 2 and not kwargs:
            return gast.BinOp(left=self.atom(args[0]), op=BINOP_AST[fn](),
                              right=self.atom(args[1]))
        if fn in CMP_AST and len(args) == 2:
            return gast.Compare(left=self.atom(args[0]), ops=[CMP_AST[fn]()],
                                comparators=[self.atom(args[1])])
        if fn in UNARY_AST and len(args) == 1:
            return gast.UnaryOp(op=UNARY_AST[fn](), operand=self.atom(args[0]))
        if fn is operator.contains:
            return gast.Compare(left=self.atom(args[1]), ops=[gast.In()],
                                comparators=[self.atom(args[0])])
        if fn is operator.getitem:
            base = self.atom(args[0])
            return gast.Subscript(value=base, slice=self.index_expr(args[1]), ctx=gast.Load())
        if fn is prims.make_tuple:
            return gast.Tuple(elts=[self.atom(a) for a in args], ctx=gast.Load())
        if fn is prims.make_list:
            return gast.List(elts=[self.atom(a) for a in args], ctx=gast.Load())
        if isinstance(fn, prims.Attr):
            return gast.Attribute(value=self.atom(args[0]), attr=fn.name, ctx=gast.Load())
        if fn is prims.new_tape:
            return gast.List(elts=[], ctx=gast.Load())
        if fn is prims.tape_pop:
            return gast.Call(func=gast.Attribute(value=self.atom(args[0]), attr="pop",
                                                 ctx=gast.Load()), args=[], keywords=[])
        if fn is prims.apply_pullback:
            return gast.Call(func=self.atom(args[0]), args=[self.atom(args[1])], keywords=[])
        if fn is prims.tape_reader:
            return gast.Call(func=self.attr_path("reversed"), args=[self.atom(args[0])],
                             keywords=[])
        if fn is prims.tape_next:
            return gast.Call(func=self.attr_path("next"), args=[self.atom(args[0])],
                             keywords=[])
        if fn is prims.tape_push:
            return gast.Call(func=gast.Attribute(value=self.atom(args[0]), attr="append",
                                                 ctx=gast.Load()), args=[self.atom(args[1])],
                             keywords=[])
        func = self.attr_path(self.ns.spell_callable(fn))
        return gast.Call(func=func, args=[self.atom(a) for a in args],
                         keywords=[gast.keyword(arg=n, value=self.atom(a)) for n, a in kwargs])

    # statements --------------------------------------------------------

    def out(self, indent: int, text: str):
        self.lines.append("    " * indent + text)

    def src(self, node) -> str:
        try:
            return unparse(node)
        except Unsupported:
            return astor.to_source(gast.gast_to_ast(node), pretty_source=_one_line).strip()

    def src_item(self, node) -> str:
        """Source of `node` as one item of a tuple (a tuple keeps its parentheses)."""
        text = self.src(node)
        return text if isinstance(node, gast.Tuple) else _bare(text)

    def comment_for(self, s, indent):
        loc = s.loc
        if loc is None or not loc.source_line or _is_compiler_file(loc.filename):
            return
        key = (loc.filename, loc.lineno)
        if key == self.last_line:
            return
        self.last_line = key
        where = f"line {loc.lineno}" if loc.filename == self.user_file else \
            f"{_short(loc.filename)}:{loc.lineno}"
        if self.reverse_part:
            where = "reverse of " + where
        self.out(indent, f"# {where}: {loc.source_line.strip()}")

    def assign(self, indent, targets, value_node):
        if len(targets) == 1:
            lhs = targets[0]
        else:
            lhs = ", ".join(targets)
        self.out(indent, f"{lhs} = {_bare(self.src(value_node))}")

    reverse_part = False

    def seed_signature(self, seeds) -> str:
        if self.fn.returns_tuple:
            return "out_bar"
        return self.names.name(seeds[0])

    def unpack_seeds(self, indent, seeds):
        if self.fn.returns_tuple:
            targets = [self.names.name(s) for s in seeds]
            self.out(indent, f"{', '.join(targets)}{',' if len(targets) == 1 else ''} = out_bar")

    def inlinable(self, s: Call, block: Block, idx: int) -> bool:
        return s.target in self.inlined

    def block(self, b: Block, indent: int, result_targets=None):
        for i, s in enumerate(b.stmts):
            if isinstance(s, Call) and s.fn is prims.sweep_boundary:
                self.reverse_part = True
                self.last_line = None
                if self.layout == "vjp":
                    seeds = self.seeds
                    self.out(indent, f"def pullback({self.seed_signature(seeds)}):")
                    indent += 1
                    self.unpack_seeds(indent, seeds)
                continue
            self.stmt(s, b, i, indent)
        if result_targets is not None:
            self.copies(indent, result_targets, b.results)

    def copies(self, indent, targets, results):
        pairs = [(t, r) for t, r in zip(targets, results)
                 if not (isinstance(r, Var) and r not in self.pending
                         and self.names.name(r) == t)]
        if not pairs:
            return
        if len(pairs) == 1:
            t, r = pairs[0]
            self.assign(indent, [t], self.atom(r))
            return
        lhs = [t for t, _ in pairs]
        rhs = gast.Tuple(elts=[self.atom(r) for _, r in pairs], ctx=gast.Load())
        self.out(indent, f"{', '.join(lhs)} = {self.src(rhs)[1:-1] if self.src(rhs).startswith('(') else self.src(rhs)}")

    def scatter(self, indent, t, args):
        """`acc[i] += g` (or np.add.at for indices that may repeat), then the result's name."""
        if self.scatter_kind in (prims.add_inplace, prims.mul_inplace):
            acc, g = args
            op = "+=" if self.scatter_kind is prims.add_inplace else "*="
            self.out(indent, f"{self.names.name(acc)} {op} {_bare(self.src(self.atom(g)))}")
            if self.names.name(t) != self.names.name(acc):
                self.out(indent, f"{self.names.name(t)} = {self.names.name(acc)}")
            return
        acc, index, g = args
        name = self.names.name(acc)
        index_node = self.index_expr(index)  # once: it may consume a folded temporary
        value = self.atom(g)
        if self.scatter_kind is prims.index_add_at:
            node = gast.Call(func=self.attr_path("np.add.at"),
                             args=[self.atom(acc), index_node, value], keywords=[])
            self.out(indent, self.src(node))
        else:
            target = gast.Subscript(value=self.atom(acc), slice=index_node, ctx=gast.Load())
            op = "=" if self.scatter_kind is prims.index_update_inplace else "+="
            self.out(indent, f"{self.src(target)} {op} {_bare(self.src(value))}")
        if self.names.name(t) != name:
            self.out(indent, f"{self.names.name(t)} = {name}")

    def stmt(self, s, block, idx, indent):
        match s:
            case Call(target=t, fn=fn, args=args, kwargs=kw):
                if self.inlinable(s, block, idx):
                    if fn in (slice, prims.make_tuple):
                        self.pending_calls[t] = s
                    self.pending[t] = self.call_expr(fn, args, kw)
                    return
                self.comment_for(s, indent)
                if fn in SCATTERS:
                    self.scatter_kind = fn
                    self.scatter(indent, t, args)
                    return
                node = self.call_expr(fn, args, kw)
                if fn is prims.tape_push:
                    self.out(indent, self.src(node))
                else:
                    self.assign(indent, [self.names.name(t)], node)
            case If(cond=c, then=then, orelse=orelse, outputs=outs):
                self.comment_for(s, indent)
                targets = [self.names.name(o) for o in outs]
                if not then.stmts and not orelse.stmts and len(outs) == 1:
                    node = gast.IfExp(test=self.atom(c), body=self.atom(then.results[0]),
                                      orelse=self.atom(orelse.results[0]))
                    self.assign(indent, targets, node)
                    return
                self.out(indent, f"if {_bare(self.src(self.atom(c)))}:")
                n0 = len(self.lines)
                self.block(then, indent + 1, targets)
                if len(self.lines) == n0:
                    self.out(indent + 1, "pass")
                n1 = len(self.lines)
                self.lines.append(None)  # placeholder for `else:`
                self.block(orelse, indent + 1, targets)
                if len(self.lines) == n1 + 1:
                    self.lines.pop()
                else:
                    self.lines[n1] = "    " * indent + "else:"
                self.last_line = None
            case ForRange(index=i, start=a, stop=b, step=st, params=ps, inits=inits, body=body,
                          outputs=outs):
                self.comment_for(s, indent)
                self.copies(indent, [self.names.name(p) for p in ps], inits)
                if s.over is not None:  # the items of a tape reader (passes.loops)
                    rng_node = self.atom(s.over)
                else:
                    rng = [a, b, st]
                    if isinstance(st, Const) and st.value == 1:
                        rng = [a, b] if not (isinstance(a, Const) and a.value == 0) else [b]
                    rng_node = gast.Call(func=self.attr_path("range"),
                                         args=[self.atom(x) for x in rng], keywords=[])
                    if getattr(s, "reverse", False):
                        rng_node = gast.Call(func=self.attr_path("reversed"), args=[rng_node],
                                             keywords=[])
                used = self.pos.count(i) > 0
                iname = self.names.name(i) if used else "_"
                self.out(indent, f"for {iname} in {self.src(rng_node)}:")
                n0 = len(self.lines)
                self.block(body, indent + 1, [self.names.name(p) for p in ps])
                if len(self.lines) == n0:
                    self.out(indent + 1, "pass")
                self.copies(indent, [self.names.name(o) for o in outs], ps)
                self.last_line = None
            case While(params=ps, inits=inits, cond=cond, body=body, outputs=outs):
                self.comment_for(s, indent)
                self.copies(indent, [self.names.name(p) for p in ps], inits)
                simple = all(isinstance(x, Call) and x.target.name.startswith("_")
                             and self.pos.count(x.target) == 1 and x.fn not in NO_INLINE
                             for x in cond.stmts)
                if simple:
                    for j, x in enumerate(cond.stmts):
                        self.pending[x.target] = self.call_expr(x.fn, x.args, x.kwargs)
                    self.out(indent, f"while {_bare(self.src(self.atom(cond.results[0])))}:")
                else:
                    self.out(indent, "while True:")
                    self.block(cond, indent + 1)
                    test = gast.UnaryOp(op=gast.Not(), operand=self.atom(cond.results[0]))
                    self.out(indent + 1, f"if {self.src(test)}:")
                    self.out(indent + 2, "break")
                n0 = len(self.lines)
                self.block(body, indent + 1, [self.names.name(p) for p in ps])
                if len(self.lines) == n0:
                    self.out(indent + 1, "pass")
                self.copies(indent, [self.names.name(o) for o in outs], ps)
                self.last_line = None

    pending_calls: dict


def _is_compiler_file(filename: str) -> bool:
    """Rule bodies are inlined with their own locations; comments point at user code only."""
    import os

    parts = os.path.normpath(filename).split(os.sep)
    return "s2sad_rules" in parts or "s2sad" in parts[-3:-1]


def _one_line(parts) -> str:
    return "".join(parts)


def _short(filename: str) -> str:
    import os

    return os.path.basename(filename)


RESERVED = {"np", "math", "range", "reversed", "next", "abs", "min", "max", "float", "int", "len",
            "pullback", "slice", "pow", "sum", "tuple", "list", "bool", "complex", "print"}


def emit_function(fn: Function, ns: Namespace, name: str, header: list, layout: str) -> str:
    """Print `fn` as a Python function called `name`.

    layout: "jvp" -> return (out, out_dot); "grad" -> return the cotangents;
    "value_and_grad" -> return (out, cotangents); "vjp" -> return (out, pullback), the
    statements after the sweep boundary forming the body of `pullback`.
    """
    meta = fn.meta
    meta["split"] = layout == "vjp"
    fn = sink_temporaries(fn)
    pos = Positions(fn)
    inlined = find_inlined(fn, pos)
    from s2sad.codegen.names import RUNTIME_NAMES

    reserved = RESERVED | set(ns.values) | {name} | set(RUNTIME_NAMES.values())
    names = coalesce(fn, pos, inlined, reserved)
    ns.avoid = set(names.printed.values()) | {name}
    em = Emitter(fn, ns, names, pos)
    em.inlined = inlined
    em.pending_calls = {}
    em.layout = layout
    em.seeds = meta.get("seed_params", ())
    lines = [f"# {h}" if h else "#" for h in header]
    params = [names.name(p) for p in fn.params if p not in em.seeds]
    kw = [f"{names.name(v)}={_default_src(d, ns, names.name(v))}" for v, d in fn.kwonly]
    sig = ", ".join(params + (["*"] + kw if kw else []))
    lines.append(f"def {name}({sig}):")
    results = fn.body.results
    n = meta.get("n_primal", 0)
    em.block(fn.body, 1)
    primal = _pack(em, results[:n], fn.returns_tuple) if n else None
    if layout == "vjp":
        bars = results[n:]
        packed = gast.Tuple(elts=[em.atom(b) for b in bars], ctx=gast.Load())
        text = em.src(packed)
        em.out(2, f"return {text}")
        em.out(1, f"return {em.src_item(primal)}, pullback")
    elif layout == "jvp":
        tangent = _pack(em, results[n:], fn.returns_tuple)
        em.out(1, f"return {em.src_item(primal)}, {em.src_item(tangent)}")
    elif layout == "grad":
        packed = _pack(em, results[n:], meta.get("wrt_tuple", False))
        em.out(1, f"return {_bare(em.src(packed))}")
    elif layout == "value_and_grad":
        bars = _pack(em, results[n:], meta.get("wrt_tuple", False))
        em.out(1, f"return {em.src_item(primal)}, {em.src_item(bars)}")
    elif layout == "tangent":
        tangent = _pack(em, results[n:], fn.returns_tuple)
        em.out(1, f"return {_bare(em.src(tangent))}")
    elif layout == "tree":
        em.out(1, f"return {_bare(em.src(_tree(em, results, meta['result_tree'])))}")
    else:
        em.out(1, f"return {_bare(em.src(primal))}")
    return "\n".join(lines + [ln for ln in em.lines if ln is not None]) + "\n"


def _bare(text: str) -> str:
    """Drop the parentheses astor puts around a whole expression."""
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(text) - 1:
                return text
        return text[1:-1]
    return text


def _tree(em, atoms, tree):
    """Nested tuples of results: `tree` holds indices into `atoms`."""
    if isinstance(tree, tuple):
        return gast.Tuple(elts=[_tree(em, atoms, t) for t in tree], ctx=gast.Load())
    return em.atom(atoms[tree])


def _pack(em, atoms, as_tuple):
    if as_tuple:
        return gast.Tuple(elts=[em.atom(a) for a in atoms], ctx=gast.Load())
    return em.atom(atoms[0])


def _default_src(d, ns, name) -> str:
    """A keyword default as source: a literal, or a name bound in the namespace."""
    import ast as _ast

    text = repr(d)
    try:
        if _ast.literal_eval(text) == d:
            return text
    except Exception:
        pass
    return ns.add_object(d, f"{name}_default")
