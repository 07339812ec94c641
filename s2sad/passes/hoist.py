"""Loop-invariant code motion for views: `np.swapaxes(W, -1, -2)` of a matrix the loop
does not change is made once, before the loop, not once per iteration.

Only operations that cannot fail and cost little (views and cheap reshapes) are moved,
so a loop that runs zero times raises nothing new.
"""

from __future__ import annotations

import operator

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


def matrix_transposes(fn: Function, kinds: dict, operators: bool = False) -> Function:
    """`np.swapaxes(a, -1, -2)` of a matrix (an array of two axes, by `kinds`) as `a.T`:
    what the Numba form needs to multiply it without a copy (Numba types np.swapaxes's
    result as of any layout). A stack of matrices, or an array of unknown rank, keeps
    np.swapaxes: its `.T` would reverse all of its axes. With `operators` (the NumPy
    backend's Jacobians, whose batched rules call np.matmul), `np.matmul(a, b)` of two
    arrays is printed as `a @ b`, which is the same call."""
    from s2sad.ir.kinds import atom_kind
    from s2sad.ir.nodes import Const

    def swaps_last_two(s) -> bool:
        return len(s.args) == 3 and not s.kwargs and \
            all(isinstance(a, Const) and type(a.value) is int for a in s.args[1:]) and \
            {s.args[1].value, s.args[2].value} == {-1, -2}

    def blk(b: Block) -> Block:
        out = []
        for st in b.stmts:
            if isinstance(st, Call):
                if st.fn is np.swapaxes and swaps_last_two(st) and \
                        atom_kind(st.args[0], kinds).ndim == 2:
                    st = Call(st.target, prims.Attr("T"), st.args[:1], (), st.loc)
                elif operators and st.fn is np.matmul and len(st.args) == 2 and \
                        not st.kwargs and all(atom_kind(a, kinds).tag == "array" and
                                              not atom_kind(a, kinds).family
                                              for a in st.args):
                    st = Call(st.target, operator.matmul, st.args, (), st.loc)
            elif isinstance(st, ForRange):
                st = ForRange(st.index, st.start, st.stop, st.step, st.params, st.inits,
                              blk(st.body), st.outputs, st.loc, st.reverse, st.over)
            elif isinstance(st, While):
                st = While(st.params, st.inits, blk(st.cond), blk(st.body), st.outputs, st.loc)
            elif isinstance(st, If):
                st = If(st.cond, blk(st.then), blk(st.orelse), st.outputs, st.loc)
            out.append(st)
        return Block(tuple(out), b.results)

    return Function(fn.name, fn.params, blk(fn.body), fn.returns_tuple, fn.kwonly,
                    fn.defaults, fn.loc, fn.source_lines, fn.first_line, fn.meta)
