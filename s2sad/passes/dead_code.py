"""Dead-code elimination: pure statements, branch outputs and loop-carried values that
nothing reads are removed (statements with effects stay)."""

from __future__ import annotations

import dataclasses

import numpy as np

from s2sad.ir import prims
from s2sad.ir.builder import replace_body
from s2sad.ir.nodes import Block, Call, ForRange, Function, If, Var, While, atoms_of, blocks_of


def eliminate_dead_code(fn: Function) -> Function:
    """Remove pure statements, branch outputs and loop-carried values nobody reads."""
    live = set(a for a in fn.body.results if isinstance(a, Var))
    body = _dce_block(fn.body, live)
    pure = _pure_contexts(body)
    if pure:
        emptied = _drop_empty_contexts(body, pure)
        if emptied is not body:  # the managers nothing enters any more
            body = _drop_makers(emptied, pure - _read(emptied, set()))
    return replace_body(fn, body)


# context managers whose entering and leaving with nothing between does nothing
_PURE_CONTEXTS = (np.errstate,)


def _pure_contexts(b: Block, found: set | None = None) -> set:
    """The values made by np.errstate(...) in `b` (and its inner blocks)."""
    found = set() if found is None else found
    for s in b.stmts:
        fn = getattr(s, "fn", None)
        fn = fn.func if isinstance(fn, prims.Opaque) else fn
        if type(s) is Call and any(fn is c for c in _PURE_CONTEXTS):
            found.add(s.target)
        for inner in blocks_of(s):
            _pure_contexts(inner, found)
    return found


def _context_call(s, exit: bool, cm=None):
    """Is `s` the `cm.__enter__()` (or `__exit__`) of a `with` the function wrote?"""
    fn = getattr(s, "fn", None)
    return type(s) is Call and isinstance(fn, prims.Opaque) and \
        isinstance(fn.func, prims.ContextCall) and fn.func.exit == exit and \
        len(s.args) == 1 and (cm is None or s.args[0] == cm)


def _read(b: Block, out: set) -> set:
    """Every variable a statement of `b` (or of its inner blocks) reads."""
    for s in b.stmts:
        out.update(a for a in atoms_of(s) if isinstance(a, Var))
        for inner in blocks_of(s):
            _read(inner, out)
    out.update(a for a in b.results if isinstance(a, Var))
    return out


def _drop_makers(b: Block, unused: set) -> Block:
    """`b` without the statements making the values `unused`."""
    out = []
    for s in b.stmts:
        if type(s) is Call and s.target in unused:
            continue
        inner = blocks_of(s)
        if inner:
            s = _with_blocks(s, [_drop_makers(x, unused) for x in inner])
        out.append(s)
    return Block(tuple(out), b.results)


def _with_blocks(s, new: list):
    if isinstance(s, If):
        return dataclasses.replace(s, then=new[0], orelse=new[1])
    if isinstance(s, ForRange):
        return dataclasses.replace(s, body=new[0])
    return dataclasses.replace(s, cond=new[0], body=new[1])


def _drop_empty_contexts(b: Block, pure: set) -> Block:
    """`with np.errstate(...):` whose body left nothing in this code (its statements were
    not needed): the entering and leaving are dropped, then the unused manager."""
    if not pure:
        return b
    stmts, out, changed = list(b.stmts), [], False
    i = 0
    while i < len(stmts):
        s = stmts[i]
        if _context_call(s, False) and s.args[0] in pure and i + 1 < len(stmts) and \
                _context_call(stmts[i + 1], True, s.args[0]):
            i += 2
            changed = True
            continue
        inner = blocks_of(s)
        if inner:
            new = [_drop_empty_contexts(x, pure) for x in inner]
            if any(x is not y for x, y in zip(new, inner)):
                s = _with_blocks(s, new)
                changed = True
        out.append(s)
        i += 1
    return Block(tuple(out), b.results) if changed else b


def _uses(block: Block) -> set:
    from s2sad.ir.nodes import free_vars

    return free_vars(block)


def _dce_block(b: Block, live: set) -> Block:
    live.update(a for a in b.results if isinstance(a, Var))
    kept = []
    effectful = prims.EFFECTFUL
    for s in reversed(b.stmts):
        if type(s) is Call:  # (the common statement, without pattern matching)
            if s.target in live or s.fn in effectful:
                kept.append(s)
                for a in s.args:
                    if type(a) is Var:
                        live.add(a)
                for _, a in s.kwargs:
                    if type(a) is Var:
                        live.add(a)
            continue
        match s:
            case Call(target=t, fn=fn):
                effect = fn in prims.EFFECTFUL
                if t in live or effect:
                    kept.append(s)
                    live.update(a for a in atoms_of(s) if isinstance(a, Var))
            case If(cond=c, then=then, orelse=orelse, outputs=outs):
                idx = [i for i, o in enumerate(outs) if o in live]
                then = Block(then.stmts, tuple(then.results[i] for i in idx))
                orelse = Block(orelse.stmts, tuple(orelse.results[i] for i in idx))
                lt, le = set(live), set(live)
                then, orelse = _dce_block(then, lt), _dce_block(orelse, le)
                if not idx and not then.stmts and not orelse.stmts:
                    continue
                kept.append(If(c, then, orelse, tuple(outs[i] for i in idx), s.loc))
                live.update(lt)
                live.update(le)
                if isinstance(c, Var):
                    live.add(c)
            case ForRange() | While():
                s2 = _dce_loop(s, live)
                if s2 is not None:
                    kept.append(s2)
    kept.reverse()
    return Block(tuple(kept), b.results)


def _dce_loop(s, live: set):
    params, body = s.params, s.body
    # a carried value is needed if its output is live or the body needs it for a needed value
    needed = {i for i, o in enumerate(s.outputs) if o in live}
    while True:
        inner_live = {body.results[i] for i in needed if isinstance(body.results[i], Var)}
        trial = Block(body.stmts, tuple(body.results[i] for i in sorted(needed)))
        probe_live = set(inner_live)
        pruned = _dce_block(trial, probe_live)
        extra_blocks = [s.cond] if isinstance(s, While) else []
        for blk in extra_blocks:
            _dce_block(blk, probe_live)
        grown = {i for i, p in enumerate(params) if p in probe_live} | needed
        if grown == needed:
            break
        needed = grown
    idx = sorted(needed)
    has_effect = _has_effect(pruned)
    if not idx and not has_effect:
        return None
    pruned = Block(pruned.stmts, tuple(body.results[i] for i in idx))
    params2 = tuple(params[i] for i in idx)
    inits = tuple(s.inits[i] for i in idx)
    outs = tuple(s.outputs[i] for i in idx)
    live.update(a for a in inits if isinstance(a, Var))
    live.update(v for v in probe_live if isinstance(v, Var))
    if isinstance(s, ForRange):
        for a in (s.start, s.stop, s.step, s.over):
            if isinstance(a, Var):
                live.add(a)
        return ForRange(s.index, s.start, s.stop, s.step, params2, inits, pruned, outs, s.loc,
                        s.reverse, s.over)
    cond = _dce_block(s.cond, live)
    return While(params2, inits, cond, pruned, outs, s.loc)


def _has_effect(b: Block) -> bool:
    for s in b.stmts:
        if isinstance(s, Call) and s.fn in prims.EFFECTFUL:
            return True
        for inner in blocks_of(s):
            if _has_effect(inner):
                return True
    return False
