"""Register allocation for generated code: which SSA variables share one Python name.

SSA names are coalesced back into the user's names where their live ranges allow it
(`x = f(x)` in a loop body rather than `x_1 = f(x); x = x_1`), by an interference graph;
temporaries used once are marked to be folded into the expression that reads them.
"""

from __future__ import annotations

import heapq
import itertools
import operator
from collections.abc import Set as AbstractSet

from s2sad.codegen.sinking import is_partial_sum
from s2sad.codegen.syntax import BINOP_AST, CMP_AST, NO_INLINE, SCATTERS, UNARY_AST
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


def find_inlined(fn: Function, pos: Positions) -> set:
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
        index_at = None
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
            if not t.name.startswith("_") and not is_partial_sum(s, b.stmts, idx):
                continue
            (upos, ublk), = pos.uses[t]
            if ublk != id(b):
                continue
            if index_at is None:  # statement index by position (see Positions)
                index_at = {pos.stmt_pos[id(x)][0]: j for j, x in enumerate(b.stmts)}
            use_idx = index_at.get(upos)  # (the statement reading t, or None: the results)
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
        uses, blk = self.uses, id(b)
        for s in b.stmts:
            if type(s) is Call:  # (the common case, inline: every statement of a function)
                self.n = start = self.n + 1
                for a in s.args:
                    if type(a) is Var:
                        uses.setdefault(a, []).append((start, blk))
                for _, a in s.kwargs:
                    if type(a) is Var:
                        uses.setdefault(a, []).append((start, blk))
                self.n += 1
                t = s.target
                self.defining[t] = s
                if s.fn is prims.sweep_boundary:
                    self.boundary = start
                self.defpos[t] = start
                self.defblock[t] = blk
                self.stmt_pos[id(s)] = (start, self.n)
                continue
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
        self.by_var: dict = {}  # variable -> its printed name, once printed (a shortcut)

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
        printed = self.by_var.get(v)
        if printed is not None:
            return printed
        root = self.find(v)
        if self.printed is not None and root in self.printed:
            return self.printed[root]
        return root.name


def coalesce(fn: Function, pos: Positions, inlined: set, reserved: set) -> Names:
    """Give copies' sources and destinations one name wherever their lifetimes allow.

    Then print each class of variables with its user's name (`x`, `x_bar`) where no
    other class with that name is live at the same time, else with a numbered variant.

    Two liveness walks, each recording only the interferences its step reads (a reverse
    sweep keeps hundreds of values live at once: every interference of them is quadratic
    in the function's length): the first among variables that a chain of copies connects,
    for coalescing; the second among variables printed with the same base name, for
    naming. Variables of the top-level block that are read only there live in one
    stretch of it (`_straight`): their interferences with each other are the overlaps of
    their stretches, read from those, not followed by the walks. Where a chain of copies,
    or a base name, holds only such variables, the walk does not follow it at all; the
    residual temporaries of a long reverse sweep (`t_1` ... `t_k`, hundreds live at
    once) get their names by a linear scan (`_SpanNames`), with no edges among them.
    """
    straight = _straight(fn, pos)
    pairs, copying, updates, branches, renames = _copies(fn)
    graph = Interference()  # (no copies: nothing to coalesce, no walk)
    if pairs:
        walked: dict = {}  # variable -> its component, for those the walk follows
        plain: dict = {}  # the components of straight variables only: edges from stretches
        for component in _copy_components(pairs, copying).values():
            if id(component) in plain or component is walked.get(next(iter(component))):
                continue  # (seen)
            if all(m in straight for m in component):
                plain[id(component)] = component
            else:
                walked.update(dict.fromkeys(component, component))
        if walked:
            graph = _interference(fn, Interference(inlined, walked, walked.get))
        for component in plain.values():
            _overlaps(graph, component, straight, inlined)
    names = Names()
    members: dict = {}
    boundary = getattr(pos, "boundary", None) if fn.meta.get("split") else None

    seeds = set(fn.meta.get("seed_params", ()))  # the pullback's parameters

    def in_forward_sweep(v) -> bool:
        return pos.defpos.get(v, -1) < boundary and v not in seeds

    for a, b in pairs:
        if boundary is not None and in_forward_sweep(a) != in_forward_sweep(b):
            continue  # one name for both would make the pullback assign a forward value
        if (a, b) in updates and (_renames(a, b) or (a, b) in branches and
                                  _derivative_of_other(a, b)):
            continue  # `err *= 0.5` would leave `err` holding err_bar: it is printed
            # `err_bar = err` then `err_bar *= 0.5` (the buffer is still reused)
        if (a, b) in renames:
            continue
        ra, rb = names.find(a), names.find(b)
        if ra == rb:
            continue
        ca = members.get(ra) or {ra}
        cb = members.get(rb) or {rb}
        small, large = (ca, cb) if len(ca) <= len(cb) else (cb, ca)
        adj = graph.adj  # (symmetric: the smaller class's edges are enough to read)
        if any(not large.isdisjoint(adj[x]) for x in small if x in adj):
            continue
        keep, other = (ra, rb) if _prefer(ra, rb, fn) else (rb, ra)
        names.union(keep, other)
        large |= small  # (in place: a long chain of updates grows one set)
        members[keep] = large
        if other is not keep:
            members.pop(other, None)
    classes, root_of = _classes(fn, pos, names, inlined)
    group_of: dict = {}  # variable -> the variables printed with its base name (any number)
    groups: dict = {}
    params = set(fn.params)
    bases = {r: _class_base(r, ms, params, pos) for r, ms in classes.items()}
    for r, ms in classes.items():
        group = groups.setdefault(root_name(bases[r]), set())
        group |= ms
        group.add(r)
        for m in ms:
            group_of[m] = group
        group_of[r] = group
    for v, r in root_of.items():  # an inlined member of a class interferes with it still
        if v not in group_of and r in group_of:
            group_of[v] = group_of[r]
            group_of[r].add(v)
    folded = {root_of[v] for v in inlined if v in root_of}  # (a folded member: no span)
    spans: dict = {}  # root -> its span (see _span)
    followed: dict = {}  # variable -> its group, for those the walk follows
    for group in groups.values():
        if len(group) < 2:
            continue  # a variable alone in its group conflicts with no one
        roots = {root_of.get(m, m) for m in group}
        found = {r: span for r in roots if r not in folded
                 for span in (_span(classes[r], straight, id(group)),) if span is not None}
        spans.update(found)
        if len(found) < len(roots):  # (a group of spans only: no walk, no edges)
            followed.update(dict.fromkeys(group, group))
    graph = Interference()  # (nothing followed: no interference read from a walk)
    if followed:
        implicit = {m for r in spans for m in classes[r] if m in followed}
        graph = _interference(fn, Interference(inlined, followed, followed.get,
                                               symmetric=False, implicit=implicit))
    _assign_names(fn, pos, graph, names, classes, root_of, reserved, bases, spans)
    return names


def _straight(fn: Function, pos: Positions) -> dict:
    """variable -> (definition, last use) of the variables that a call of the top-level
    block defines and that only that block reads: each lives in one stretch of it, and two
    of them interfere exactly when one is defined inside the other's stretch (strictly:
    a value last read by the statement that defines another does not hold up its name)."""
    top = id(fn.body)
    defblock, defpos, uses = pos.defblock, pos.defpos, pos.uses
    out: dict = {}
    for v in pos.defining:
        if defblock.get(v) != top:
            continue
        d = last = defpos[v]
        for p, b in uses.get(v, ()):
            if b != top:
                break
            if p > last:
                last = p
        else:
            out[v] = (d, last)
    return out


def _overlaps(graph: Interference, component: set, straight: dict, inlined: set):
    """Record the interferences (both ways) among `component`, variables of `straight`,
    as the liveness walk would: each (not folded) variable with those whose stretches it
    is defined in. A sweep in the order of definition, with the stretches still open in a
    heap by their ends."""
    adj = graph.adj
    open_: list = []  # (last use, definition, variable)
    live: set = set()
    for v in sorted(component, key=straight.__getitem__):
        d, last = straight[v]
        while open_ and open_[0][0] <= d:
            live.discard(heapq.heappop(open_)[2])
        if live and v not in inlined:
            adj.setdefault(v, set()).update(live)
            for w in live:
                adj.setdefault(w, set()).add(v)
        heapq.heappush(open_, (last, d, v))
        live.add(v)


def _span(ms: set, straight: dict, group: int):
    """(first definition, last use, group) of a class whose members all live in
    `straight` stretches that follow each other with no gap (each member defined before
    the ones defined before it are all dead), else None. Two such classes interfere
    exactly when their spans overlap, which the naming reads from the spans, with no edge
    between them."""
    if len(ms) == 1:  # (most classes)
        span = straight.get(next(iter(ms)))
        return None if span is None else (span[0], span[1], group)
    if not all(m in straight for m in ms):
        return None
    first = last = None
    for d, end in sorted(straight[m] for m in ms):
        if last is not None and d > last:
            return None  # a gap: a class defined in it, and dead before, overlaps none
        first = d if first is None else first
        last = end if last is None else max(last, end)
    return first, last, group


def _copy_components(pairs: list, copying: set) -> dict:
    """variable -> the variables it may come to share a name with: those a chain of copies
    (`pairs`) connects it to (coalescing merges classes along copies only)."""
    links = Names()
    for a, b in pairs:
        links.union(a, b)
    components: dict = {}
    for v in copying:
        components.setdefault(links.find(v), set()).add(v)
    return {v: components[links.find(v)] for v in copying}


def _copies(fn: Function) -> tuple:
    """(pairs, participants, updates, branches) in one walk over the statements: the (dest, source)
    pairs worth coalescing, in the order coalescing tries them (a backward walk: each
    block's statements last to first, a region's inner blocks before its own copies, a
    loop's body before its condition); the variables that take part in copies: loop and
    branch inputs and outputs, and the result and accumulator of an in-place update
    (`x_bar += g`); the (result, accumulator) pairs of those updates, where the pairs of a
    branch's output and what a branch yields count as updates too; and those branch pairs."""
    pairs: list = []
    participants: set = set()
    updates: set = set()
    branches: set = set()
    renames: set = set()

    def walk(b: Block):
        for st in reversed(b.stmts):
            if isinstance(st, Call):
                if st.fn in SCATTERS and isinstance(st.args[0], Var):
                    pair = (st.target, st.args[0])
                    pairs.append(pair)
                    updates.add(pair)
                    participants.update(pair)
                continue
            match st:
                case If(then=then, orelse=orelse, outputs=outs):
                    walk(then)
                    walk(orelse)
                    for o, a, b2 in zip(outs, then.results, orelse.results):
                        pairs.extend((o, x) for x in (a, b2) if isinstance(x, Var))
                        # a branch that yields another variable of the user's makes no
                        # update of it: `y = x if c else 1.0` must not print as `x = ...`,
                        # nor a cotangent chosen by a branch `t_bar = t if c else 0.0`
                        # reuse the name of the primal temporary it takes
                        updates.update((o, x) for x in (a, b2) if isinstance(x, Var))
                        branches.update((o, x) for x in (a, b2) if isinstance(x, Var))
                    participants.update(outs)
                    participants.update(r for r in then.results + orelse.results
                                        if isinstance(r, Var))
                case ForRange(params=ps, inits=inits, body=body, outputs=outs) | \
                        While(params=ps, inits=inits, body=body, outputs=outs):
                    walk(body)
                    if isinstance(st, While):
                        walk(st.cond)
                    pairs.extend((o, p) for o, p in zip(outs, ps) if isinstance(p, Var))
                    pairs.extend((p, a) for p, a in zip(ps, inits) if isinstance(a, Var))
                    # a loop that starts from another variable of the user's (`acc = x`
                    # then `acc = acc * 2.0` in the loop) keeps the user's name for the
                    # loop's: the copy is printed, not `x = x * 2.0`
                    renames.update((p, a) for p, a in zip(ps, inits)
                                   if isinstance(a, Var) and _user_names_differ(p, a))
                    pairs.extend((p, r) for p, r in zip(ps, body.results)
                                 if isinstance(r, Var))
                    participants.update(ps)
                    participants.update(outs)
                    participants.update(a for a in inits + body.results if isinstance(a, Var))

    walk(fn.body)
    return pairs, participants, updates, branches, renames


def _user_names_differ(a: Var, b: Var) -> bool:
    """Are `a` and `b` both the user's variables, of two different names?"""
    if a.name.startswith("_") or b.name.startswith("_"):
        return False
    return root_name(strip_suffix(a.name)) != root_name(strip_suffix(b.name))


def _interference(fn: Function, graph: Interference) -> Interference:
    live = graph.block(fn.body, graph.tracked(fn.body.results))
    for p in fn.params:
        graph.edges(p, live | set(fn.params))
    for v, _ in fn.kwonly:
        graph.edges(v, live | set(fn.params))
    return graph


def _classes(fn, pos, names: Names, inlined: set) -> tuple:
    """{root: its printed members} and {variable: its root} after coalescing."""
    classes: dict = {}
    root_of: dict = {}
    used = (v for v, _ in fn.kwonly)
    for v in set(pos.defpos) | set(fn.params) | set(pos.uses) | set(used):
        root_of[v] = r = names.find(v)
        if isinstance(v, Var) and v not in inlined:
            classes.setdefault(r, set()).add(v)
    return classes, root_of


def _class_base(r, members, params: set, pos) -> str:
    """The base name a class prints with (a number may be appended)."""
    if params and (r in params or not params.isdisjoint(members)):
        return next(m for m in [r] + sorted(members, key=lambda m: m.name)
                    if m in params or m is r).name
    return _base_name(r, members, pos)


def _assign_names(fn, pos, graph, names: Names, classes: dict, root_of: dict,
                  reserved: set, bases: dict, spans: dict):
    """Print each class with its base name, numbered where a class it interferes with and
    that was printed before it holds that name already.

    The classes of `spans` (root -> (first definition, last use, group), see `_span`)
    interfere with each other where their stretches overlap: their names come from a
    linear scan (`_SpanNames`) that gives the same smallest free number.

    `graph.adj` holds each interference once, from the variable at whose definition the
    other is live: when a class is printed, the names its own edges reach are read in
    bulk (set operations), and its name is handed to the not yet printed variables those
    edges reach (few: a variable live at a definition is mostly defined before it), so the
    work is linear in the graph, with no per-edge step in Python for the edges that point
    back in program order.
    """
    adj = graph.adj
    for v in set(adj).union(*adj.values()) - root_of.keys():  # (every variable of the
        root_of[v] = names.find(v)  # graph has a class root)
    everyone: dict = {}  # root -> every variable of its class (folded ones too)
    for v, r in root_of.items():
        everyone.setdefault(r, []).append(v)
    name_of: dict = {}  # variable -> the name printed for its class (once printed)
    named: set = set()  # its keys (a set: set operations with it stay in C)
    handed: dict = {}  # variable -> names of printed classes that interfere with it

    boundary = getattr(pos, "boundary", None) if fn.meta.get("split") else None
    fwd: set = set()
    if boundary is not None:
        # names assigned inside the pullback closure must not shadow the forward sweep's:
        # each class of one sweep is blocked by every name printed for the other's
        seeds = set(fn.meta.get("seed_params", ()))  # the pullback's own parameters
        fwd = {r for r, ms in classes.items()
               if min(pos.defpos.get(m, -1) for m in ms) < boundary and not (ms & seeds)}
    sweep_names: tuple = (set(), set())  # names printed in the (pullback, forward sweep)
    defpos = pos.defpos

    def first_definition(r) -> int:
        ms = classes[r]
        if len(ms) == 1:  # (most classes)
            return defpos.get(next(iter(ms)), -1)
        return min(defpos.get(m, -1) for m in ms)

    params = set(fn.params)
    order = sorted(classes, key=lambda r: (r not in params, first_definition(r), r.name))
    printed: dict = {}
    explain = bool(fn.meta.get("explain"))
    spellings: dict = {}  # base -> [base, base_1, base_2, ...] (as far as spelled yet)
    spanned = _SpanNames(spellings)
    for r in order:
        base, ms = bases[r], classes[r]
        nbrs: AbstractSet = _EMPTY  # (no graph: the classes of spans only, see coalesce)
        blocked: AbstractSet = _EMPTY
        if adj:
            edges = [adj[m] for m in ms if m in adj]
            if edges:
                nbrs = edges[0] if len(edges) == 1 else set().union(*edges)
                reached = nbrs & named  # the printed ones: their names block
                if reached:
                    blocked = set(map(name_of.__getitem__, reached))
        if handed:
            for m in ms:
                if m in handed:
                    blocked = blocked | handed.pop(m)
        if explain and not base.endswith(("_bar", "_dot")):
            blocked = blocked | set(printed.values())  # step by step: one value, one name
        other_sweep = sweep_names[r not in fwd] if boundary is not None else _EMPTY
        span = spans.get(r)
        if span is not None:
            cand = spanned.name(span, base, blocked, reserved, other_sweep)
        elif base in blocked or base in reserved or base in other_sweep:
            cand = _first_free(spellings.setdefault(base, [base]), reserved, blocked,
                               other_sweep)
        else:
            cand = base  # (the first spelling, free: most classes)
        printed[r] = cand
        members = everyone.get(r, ())
        for v in members:
            name_of[v] = cand
        if adj:
            named.update(members)
        for w in nbrs - named if nbrs else ():  # printed later: blocked by this
            handed.setdefault(w, set()).add(cand)
        if boundary is not None:
            sweep_names[r in fwd].add(cand)
    names.printed = printed
    names.by_var = name_of


class _SpanNames:
    """Names for the classes that interfere by the overlap of their stretches (`_span`),
    given in the order of their first definitions: a linear scan. The stretches of a name's
    group that may still be live are kept in a heap by their ends, and the numbers of each
    base name that no live stretch holds in a heap of free numbers, so each class takes
    the smallest number free of the live stretches' names (and of `taken`) without
    looking at every live stretch: the same name that the first free spelling gives."""

    def __init__(self, spellings: dict):
        self.spellings = spellings  # base -> [base, base_1, ...] (shared with _first_free)
        self.live: dict = {}  # group -> heap of (last use, first definition, name, base, k)
        self.held: dict = {}  # group -> the names its live stretches hold
        self.free: dict = {}  # base -> heap of the numbers below top[base] no one holds
        self.top: dict = {}  # base -> the first number no stretch has held yet

    def name(self, span: tuple, base: str, *taken) -> str:
        first, last, group = span
        live = self.live.setdefault(group, [])
        held = self.held.setdefault(group, set())
        while live and live[0][0] <= first:  # ended (last read) at or before this one's start
            _, _, old, old_base, k = heapq.heappop(live)
            held.discard(old)
            heapq.heappush(self.free[old_base], k)
        free = self.free.setdefault(base, [])
        spelled = self.spellings.setdefault(base, [base])
        skipped = []  # free numbers whose names `taken` holds (few)
        while True:
            if free:
                k = heapq.heappop(free)
            else:
                k = self.top.get(base, 0)
                self.top[base] = k + 1
            while k >= len(spelled):
                spelled.extend(f"{base}_{n}" for n in range(len(spelled), 2 * len(spelled) + 1))
            cand = spelled[k]
            if cand not in held and not any(cand in names for names in taken):
                break
            skipped.append(k)
        for k2 in skipped:
            heapq.heappush(free, k2)
        heapq.heappush(live, (last, first, cand, base, k))
        held.add(cand)
        return cand


def _first_free(spelled: list, *taken) -> str:
    """The first of `base`, `base_1`, `base_2`, ... (`spelled`, extended as needed) in
    none of the `taken` sets: the list is filtered in C, the variants spelled once each
    (hundreds of temporaries of one name live at once try as many variants each)."""
    start = 0
    while True:
        free = iter(spelled[start:] if start else spelled)
        for names in taken:
            free = itertools.filterfalse(names.__contains__, free)
        cand = next(free, None)
        if cand is not None:
            return cand
        start = len(spelled)
        base = spelled[0]
        spelled.extend(f"{base}_{n}" for n in range(start, 2 * start + 1))


def _base_name(root, members, pos) -> str:
    """The user's name for a class: the hint of its first named member, or a made-up one."""
    if len(members) == 1:  # (most classes: one variable)
        first = next(iter(members))
        first = None if first.name.startswith("_") else first
    else:
        first = min((m for m in members if not m.name.startswith("_")),
                    key=lambda m: pos.defpos.get(m, -1), default=None)
    if first is not None:
        return strip_suffix(first.name)
    if getattr(pos, "explain", False):  # step by step: a contribution to x_bar is x_bar_1
        parts = sorted((m for m in members
                        if root_name(m.name.lstrip("_")).endswith(("_bar", "_dot"))
                        and not m.name.lstrip("_").startswith("t_")),
                       key=lambda m: pos.defpos.get(m, -1))
        if parts:
            return root_name(parts[0].name.lstrip("_"))
    defn = pos.defining.get(root) or next((pos.defining.get(m) for m in members
                                           if pos.defining.get(m) is not None), None)
    name = _temp_name(defn)
    for suffix in ("_bar", "_dot"):  # the cotangent of a temporary is `t_bar`, not `t`...
        if name == "t" and any(root_name(m.name).endswith(suffix) for m in members) and \
                not _user_has_t(pos):
            return name + suffix  # ... unless `t_bar` would read as a user's t's
    return name


def _user_has_t(pos) -> bool:
    """Whether a variable of the user's has the base name `t` (t, t_1): found once per
    function, among the names that start with a t."""
    has = getattr(pos, "user_has_t", None)
    if has is None:
        has = pos.user_has_t = any(root_name(v.name) == "t" for v in pos.defpos
                                   if isinstance(v, Var) and v.name.startswith("t"))
    return has


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


def _renames(result: Var, acc: Var) -> bool:
    """Whether an in-place update makes a value of another name out of a user's variable
    (`err_bar` from `err`): then the two must keep their own names."""
    if acc.name.startswith("_"):
        return False
    return root_name(strip_suffix(result.name)) != root_name(strip_suffix(acc.name))


def _derivative_of_other(result: Var, source: Var) -> bool:
    """Whether one of the two is a tangent or cotangent and the other is not (a primal
    value, named or temporary): one name for both would tell a lie about one of them."""
    def derivative(v: Var) -> bool:
        return root_name(strip_suffix(v.name.lstrip("_"))).endswith(("_bar", "_dot"))
    return derivative(result) != derivative(source)


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


class Interference:
    """Backward liveness over the structured IR, recording which variables interfere.

    Only interferences that the caller reads are recorded: those of `v` with the variables
    `partners(v)` (None: none), and only the variables in `track` (None: all) are followed,
    which keeps the live sets and the graph small for long functions. Interferences between
    two variables of `implicit` are left out too: the caller reads them from the variables'
    spans (straight-line stretches of the top-level block, see `_span`).
    """

    def __init__(self, inlined=frozenset(), track=None, partners=None, symmetric=True,
                 implicit=frozenset()):
        self.adj: dict = {}
        self.implicit = implicit
        self.symmetric = symmetric  # False: each edge recorded from the defined variable
        self.track = track
        self.partners = partners
        self.inlined = inlined  # folded into expressions: never printed, never named

    def tracked(self, atoms) -> set:
        """The variables among `atoms` that the liveness follows."""
        track = self.track
        if track is None:
            return {a for a in atoms if isinstance(a, Var)}
        return {a for a in atoms if isinstance(a, Var) and a in track}

    def edges(self, v, live):
        if v in self.inlined:
            return
        partners = self.partners(v)
        if partners is None:
            return
        others = live & partners
        others.discard(v)
        if v in self.implicit:
            others -= self.implicit
        if others:
            self.record(v, others)

    def record(self, v, others: set):
        """The edges of `v` with `others` (a new set, not empty, without v)."""
        adj = self.adj
        if v in adj:
            adj[v] |= others
        else:
            adj[v] = others  # (a new set: `live & partners`)
        if self.symmetric:
            for w in others:
                if isinstance(w, Var):
                    adj.setdefault(w, set()).add(v)

    def block(self, b: Block, live_out: set) -> set:
        live = set(live_out)
        index = None  # the live variables by their partners' set (see `index`)
        partners, track, inlined, implicit = self.partners, self.track, self.inlined, \
            self.implicit
        for s in reversed(b.stmts):
            if type(s) is not Call:
                index = None  # (rebuilt at the next call: the region op made a new set)
                live = self.stmt(s, live)
                continue
            # a call, with `index` kept current along with `live` (inline: every statement
            # of the function comes here, once per walk)
            if index is None:
                index = self.index(live)
            t = s.target
            live.discard(t)
            p = partners(t)
            if p is not None:
                key = id(p)  # (the live implicit ones are under ~key)
                own = index.get(~key if t in implicit else key)
                if own:
                    own.discard(t)
                if t not in inlined:
                    others = set(index.get(key, _EMPTY))
                    spans = None if t in implicit else index.get(~key)
                    if spans:  # (edges among implicit ones: left out)
                        others |= spans
                    if others:
                        self.record(t, others)
            for a in s.args + tuple([a for _, a in s.kwargs]) if s.kwargs else s.args:
                if type(a) is Var and a not in live and (track is None or a in track):
                    live.add(a)
                    p = partners(a)
                    if p is not None:
                        index.setdefault(~id(p) if a in implicit else id(p), set()).add(a)
        return live

    def index(self, live: set) -> dict:
        """The variables of `live` by the id of their partners' set (the implicit ones by its
        complement, ~id): a call's interferences are then read from its own partners' live
        members (a copy of the few it has), not from an intersection with every live
        variable (hundreds in a reverse sweep, at every statement of it). Each variable is
        in the partners' set it is mapped to (a union-find component, a name's group), so
        the two give the same edges."""
        partners, implicit = self.partners, self.implicit
        index: dict = {}
        for v in live:
            p = partners(v)
            if p is not None:
                index.setdefault(~id(p) if v in implicit else id(p), set()).add(v)
        return index

    def stmt(self, s, live: set) -> set:
        """The variables live before `s`, given those live after it (updated in place)."""
        match s:
            case Call(target=t):
                live.discard(t)
                self.edges(t, live)
                live |= self.tracked(atoms_of(s))
                return live
            case If(cond=c, then=then, orelse=orelse, outputs=outs):
                after = live - set(outs)
                ins = set()
                for blk in (then, orelse):
                    end = after | self.tracked(blk.results)
                    for i, o in enumerate(outs):
                        others = {r for j, r in enumerate(blk.results) if j != i}
                        self.edges(o, (after | others | set(outs)) - {o})
                    ins |= self.block(blk, end)
                return ins | self.tracked((c,))
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
        exit_live = (live - set(outs)) | self.tracked(ps)
        header = set(exit_live)
        for _ in range(10):
            end = (header - pset) | self.tracked(body.results)
            for p, r in zip(ps, body.results):
                self.edges(p, ((header - {p}) | {x for x in body.results if x is not r}) - {p})
            top = self.block(body, end)
            if index is not None:
                self.edges(index, top - {index})
                top = top - {index}
            new_header = exit_live | top
            for cb in cond_blocks:
                new_header = self.block(cb, new_header | self.tracked(cb.results))
            new_header |= self.tracked(bounds)
            if new_header <= header:
                break
            header |= new_header
        for p in ps:
            self.edges(p, header - {p})
        live_in = (header - pset) | self.tracked(inits)
        live_in |= self.tracked(bounds)
        return live_in


# -- printing ------------------------------------------------------------------
