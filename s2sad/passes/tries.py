"""Which path of a library function with a `try` is taken, once activity is known.

A library function the user's code calls, with a `try` in it, is lowered twice
(CallLowering.inline_call): inlined with its `try` body differentiated, and called as it is
(its `try` runs as written, handlers and all). `prims.derivative_reaches(*inputs)` chooses:
where a derivative reaches the inputs the inlined path is kept (the call as it is would be
refused); else the call as it is, which takes a handler where the library's code does
(NumPy's issubclass_ catches the TypeError of a dtype that is no class).
"""

from __future__ import annotations

import dataclasses

from s2sad.ir import prims
from s2sad.ir.builder import replace_atoms, replace_body
from s2sad.ir.nodes import Block, Call, Const, ForRange, Function, If, Var, While, blocks_of
from s2sad.passes import activity


def _markers(block: Block, out: list):
    for s in block.stmts:
        if type(s) is Call and s.fn is prims.derivative_reaches:
            out.append(s)
        for inner in blocks_of(s):
            _markers(inner, out)


def choose_try_paths(fn: Function, kinds: dict, wrt, table) -> Function:
    """`fn` with each `derivative_reaches` decided by activity from the parameters `wrt`
    (the same `fn` where there is none); its `If` is then taken by
    passes/decided.take_decided_branches."""
    markers: list = []
    _markers(fn.body, markers)
    if not markers:
        return fn
    active = set(fn.params[i] for i in wrt)
    activity._block(fn.body, active, kinds, table, [])  # (refusals: of the path not kept)
    mapping = {s.target: Const(any(isinstance(a, Var) and a in active for a in s.args))
               for s in markers}
    dropped = {s.target for s in markers}

    def block(b: Block) -> Block:
        out = []
        for s in b.stmts:
            if type(s) is Call and s.target in dropped:
                continue
            if isinstance(s, If):
                s = If(s.cond, block(s.then), block(s.orelse), s.outputs, s.loc)
            elif isinstance(s, ForRange):
                s = dataclasses.replace(s, body=block(s.body))
            elif isinstance(s, While):
                s = dataclasses.replace(s, cond=block(s.cond), body=block(s.body))
            out.append(s)
        return Block(tuple(out), b.results)

    return replace_body(fn, replace_atoms(block(fn.body), mapping))
