"""Tape pruning: a tape entry the reverse sweep never reads is not stored, a value pushed
twice is stored once, and a tape nobody reads is not made."""

from __future__ import annotations

import operator

from s2sad.ir import prims
from s2sad.ir.builder import replace_body
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


def _walk_calls(b: Block, out: list):
    for s in b.stmts:
        if isinstance(s, Call):
            out.append(s)
        for inner in blocks_of(s):
            _walk_calls(inner, out)


def _all_uses(b: Block, uses: dict):
    for s in b.stmts:
        for a in atoms_of(s):
            if isinstance(a, Var):
                uses.setdefault(a, []).append(s)
        for inner in blocks_of(s):
            _all_uses(inner, uses)
    for r in b.results:
        if isinstance(r, Var):
            uses.setdefault(r, []).append(None)


def prune_tapes(fn: Function) -> Function:
    """Drop tape entries that the reverse sweep never reads or that repeat another entry
    (and tapes nobody reads)."""
    calls: list = []
    _walk_calls(fn.body, calls)
    if not any(c.fn is prims.tape_push for c in calls):
        return fn
    uses: dict = {}
    _all_uses(fn.body, uses)
    by_target = {c.target: c for c in calls}
    readers = {c.target: c.args[0] for c in calls if c.fn is prims.tape_reader}
    nexts: dict = {}
    for c in calls:
        if c.fn is prims.tape_next:
            nexts.setdefault(readers.get(c.args[0]), []).append(c)
        elif c.fn is prims.tape_pop:
            nexts.setdefault(c.args[0], []).append(c)
    drop: set = set()  # ids of statements to delete
    replace: dict = {}  # id(stmt) -> new stmt
    for c in calls:
        if c.fn is not prims.tape_push:
            continue
        tape, item = c.args
        pops = nexts.get(tape, [])
        used_idx: set = set()
        whole = False
        for p in pops:
            for u in uses.get(p.target, []):
                if isinstance(u, Call) and u.fn is operator.getitem and u.args[0] == p.target \
                        and isinstance(u.args[1], Const) and isinstance(u.args[1].value, int):
                    used_idx.add(u.args[1].value)
                else:
                    whole = True
        if not whole and not used_idx:
            drop.add(id(c))
            for p in pops:
                drop.add(id(p))
            continue
        maker = by_target.get(item) if isinstance(item, Var) else None
        if whole or maker is None or maker.fn is not prims.make_tuple:
            continue
        # constants need no tape: their reads become the constant
        consts = {k for k in used_idx if isinstance(maker.args[k], Const)}
        for p in pops:
            for u in uses.get(p.target, []):
                k = u.args[1].value
                if k in consts:
                    replace[id(u)] = Call(u.target, prims.identity, (maker.args[k],), (), u.loc)
        used_idx -= consts
        if not used_idx:
            drop.add(id(c))
            for p in pops:
                drop.add(id(p))
            continue
        # a value pushed twice (two reads that the simplifier found equal) is stored once
        first: dict = {}
        rep = {k: first.setdefault(maker.args[k], k) for k in sorted(used_idx)}
        keep = sorted(set(rep.values()))
        if len(keep) == len(maker.args):
            continue
        remap = {old: keep.index(r) for old, r in rep.items()}
        pending_consts = consts
        if len(keep) == 1:
            replace[id(c)] = Call(c.target, c.fn, (tape, maker.args[keep[0]]), (), c.loc)
        else:
            new_item = Call(maker.target, prims.make_tuple, tuple(maker.args[k] for k in keep),
                            (), maker.loc)
            replace[id(maker)] = new_item
        for p in pops:
            for u in uses.get(p.target, []):
                k = u.args[1].value
                if k in pending_consts:
                    continue
                if len(keep) == 1:
                    # the entry itself is the value: getitem(entry, k) becomes a copy of it
                    replace[id(u)] = Call(u.target, prims.identity, (p.target,), (), u.loc)
                else:
                    replace[id(u)] = Call(u.target, operator.getitem, (p.target, Const(remap[k])),
                                          (), u.loc)
    if not drop and not replace:
        return fn
    return replace_body(fn, _rewrite_block(fn.body, drop, replace))


def _rewrite_block(b: Block, drop: set, replace: dict) -> Block:
    out = []
    for s in b.stmts:
        if id(s) in drop:
            continue
        s = replace.get(id(s), s)
        match s:
            case If():
                s = If(s.cond, _rewrite_block(s.then, drop, replace),
                       _rewrite_block(s.orelse, drop, replace), s.outputs, s.loc)
            case ForRange():
                s = ForRange(s.index, s.start, s.stop, s.step, s.params, s.inits,
                             _rewrite_block(s.body, drop, replace), s.outputs, s.loc, s.reverse,
                             s.over)
            case While():
                s = While(s.params, s.inits, _rewrite_block(s.cond, drop, replace),
                          _rewrite_block(s.body, drop, replace), s.outputs, s.loc)
        out.append(s)
    return Block(tuple(out), b.results)
