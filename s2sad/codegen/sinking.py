"""Sinking: compiler temporaries move next to the statement that reads them, so that
the emitter can fold a temporary used once into the expression that reads it.
"""

from __future__ import annotations

import operator

from s2sad.codegen.syntax import NO_INLINE
from s2sad.ir.builder import strip_suffix
from s2sad.ir.nodes import Block, Call, ForRange, Function, If, While, atoms_of, blocks_of


def sink_temporaries(fn: Function) -> Function:
    """Move each single-use temporary down to just before the statement that reads it.

    Pure statements can move freely in SSA form; this puts a tangent next to its use so
    that it can be folded into the expression (`z_dot = x_dot * np.cos(x) * y + ...`).
    """
    from s2sad.ir.nodes import count_uses, free_vars

    counts = count_uses(fn.body)

    def blk(b: Block) -> Block:
        stmts = [_rebuild(s, blk) for s in b.stmts]
        # each single-use temporary (bottom up) moves to just before the statement that
        # reads it, when that reads it directly and no statement that must stay in place
        # (NO_INLINE) lies between them: found once for the block, not by a scan per
        # temporary (a reverse sweep reads hundreds of them thousands of lines below)
        temps = {s.target: i for i, s in enumerate(stmts)
                 if type(s) is Call and s.target.name.startswith("_")
                 and s.fn not in NO_INLINE and counts.get(s.target) == 1}
        if not temps:
            return Block(tuple(stmts), b.results)
        reader: dict = {}  # temporary -> the statement reading it, if it reads it directly
        pinned = [0]  # pinned[k]: how many NO_INLINE calls are among the first k statements
        for k, st in enumerate(stmts):
            for a in atoms_of(st):
                if a in temps and a not in reader:
                    reader[a] = k
            if type(st) is not Call:
                for a in _free_in(st, free_vars):
                    if a in temps and a not in reader:
                        reader[a] = None  # (read inside a block: stays)
            pinned.append(pinned[-1] + (isinstance(st, Call) and st.fn in NO_INLINE))
        # the order as a linked list (a move is O(1)); a moved temporary crosses no pinned
        # statement, so the pinned ones between two statements are those between their
        # places in the original order
        nxt = list(range(1, len(stmts) + 1))
        prv = list(range(-1, len(stmts) - 1))
        head = [0]

        def unlink(i):
            if prv[i] >= 0:
                nxt[prv[i]] = nxt[i]
            else:
                head[0] = nxt[i]
            if nxt[i] < len(stmts):
                prv[nxt[i]] = prv[i]

        for t, i in reversed(temps.items()):
            k = reader.get(t)
            if k is None or k <= i or pinned[k] != pinned[i + 1] or nxt[i] == k:
                continue
            unlink(i)
            before = prv[k]
            prv[i], nxt[i] = before, k
            prv[k] = i
            if before >= 0:
                nxt[before] = i
            else:
                head[0] = i
        order = []
        i = head[0]
        while i < len(stmts):
            order.append(stmts[i])
            i = nxt[i]
        return Block(tuple(order), b.results)

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


def is_partial_sum(s: Call, stmts, idx) -> bool:
    """`x_bar = x_bar + a` followed by `x_bar = x_bar + b`: print one sum, not two."""
    if s.fn not in SUMS or idx + 1 >= len(stmts):
        return False
    nxt = stmts[idx + 1]
    return (isinstance(nxt, Call) and nxt.fn in SUMS and nxt.args and nxt.args[0] == s.target
            and strip_suffix(nxt.target.name) == strip_suffix(s.target.name))
