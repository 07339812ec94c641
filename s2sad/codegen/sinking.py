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
        i = len(stmts) - 1
        while i >= 0:
            s = stmts[i]
            if isinstance(s, Call) and s.target.name.startswith("_") and \
                    s.fn not in NO_INLINE and counts.get(s.target) == 1:
                j = next((k for k in range(i + 1, len(stmts))
                          if s.target in atoms_of(stmts[k]) or (
                              type(stmts[k]) is not Call  # (a call holds no block)
                              and s.target in _free_in(stmts[k], free_vars))), None)
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


def is_partial_sum(s: Call, stmts, idx) -> bool:
    """`x_bar = x_bar + a` followed by `x_bar = x_bar + b`: print one sum, not two."""
    if s.fn not in SUMS or idx + 1 >= len(stmts):
        return False
    nxt = stmts[idx + 1]
    return (isinstance(nxt, Call) and nxt.fn in SUMS and nxt.args and nxt.args[0] == s.target
            and strip_suffix(nxt.target.name) == strip_suffix(s.target.name))
