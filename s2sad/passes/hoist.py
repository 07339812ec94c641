"""Loop-invariant code motion for views: `np.swapaxes(W, -1, -2)` of a matrix the loop
does not change is made once, before the loop, not once per iteration.

Only operations that cannot fail and cost little (views and cheap reshapes) are moved,
so a loop that runs zero times raises nothing new.
"""

from __future__ import annotations

import numpy as np

from s2sad.ir import prims
from s2sad.ir.builder import block_vars
from s2sad.ir.nodes import Block, Call, ForRange, Function, If, Var, While

HOISTABLE = {np.swapaxes, np.transpose, np.moveaxis, np.expand_dims, prims.Attr("T")}


def hoist_views(fn: Function) -> Function:
    def blk(b: Block) -> Block:
        out = []
        for st in b.stmts:
            match st:
                case ForRange() | While():
                    body = blk(st.body)
                    inner_defs = block_vars(body) | set(st.params)
                    if isinstance(st, ForRange):
                        inner_defs.add(st.index)
                    keep, moved = [], []
                    for s in body.stmts:
                        if isinstance(s, Call) and s.fn in HOISTABLE and not s.kwargs and \
                                not any(isinstance(a, Var) and a in inner_defs
                                        for a in s.args):
                            moved.append(s)
                            inner_defs.discard(s.target)
                        else:
                            keep.append(s)
                    out.extend(moved)
                    body = Block(tuple(keep), body.results)
                    if isinstance(st, ForRange):
                        st = ForRange(st.index, st.start, st.stop, st.step, st.params,
                                      st.inits, body, st.outputs, st.loc, st.reverse)
                    else:
                        st = While(st.params, st.inits, blk(st.cond), body, st.outputs, st.loc)
                case If():
                    st = If(st.cond, blk(st.then), blk(st.orelse), st.outputs, st.loc)
            out.append(st)
        return Block(tuple(out), b.results)

    return Function(fn.name, fn.params, blk(fn.body), fn.returns_tuple, fn.kwonly,
                    fn.defaults, fn.loc, fn.source_lines, fn.first_line, fn.meta)
