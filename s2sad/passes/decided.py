"""Branches that the arguments' kinds decide, taken before differentiating.

Lowering decides `if x.ndim == 1:` of an argument while compiling; of a value computed in
the function (`weights = coef[:-1]`, then scikit-learn's `weights @ weights if weights.ndim
== 1 else squared_norm(weights)`) it lowers both branches, and only the kinds inferred for
the specialised code know which one runs. The simplifier drops the other after the
derivative pass, but that pass would differentiate it first, and a call there that no rule
accepts (`np.ravel(x, order="K")`) refused a function that never makes it. Here an `If`
whose condition's kind holds its value is replaced by the branch it takes.
"""

from __future__ import annotations

import dataclasses

from s2sad.ir.builder import replace_atoms, replace_body
from s2sad.ir.kinds import UNKNOWN
from s2sad.ir.nodes import Block, Const, ForRange, Function, If, Var, While

_UNDECIDED = object()


def take_decided_branches(fn: Function, kinds: dict) -> Function:
    """`fn` with each `If` whose condition `kinds` know replaced by the branch taken (the
    same `fn` where there is none)."""
    mapping: dict = {}

    def decided(cond):
        if isinstance(cond, Const):
            value = cond.value
        else:
            k = kinds.get(cond, UNKNOWN) if isinstance(cond, Var) else UNKNOWN
            if not k.known or not isinstance(k.value, (bool, int)):
                return _UNDECIDED
            value = k.value
        try:
            return bool(value)
        except Exception:  # noqa: BLE001 - (not a truth value known here)
            return _UNDECIDED

    def block(b: Block) -> Block:
        out, changed = [], False
        for s in b.stmts:
            if isinstance(s, If):
                taken = decided(s.cond)
                if taken is not _UNDECIDED:
                    inner = block(s.then if taken else s.orelse)
                    out.extend(inner.stmts)
                    mapping.update(zip(s.outputs, inner.results))
                    changed = True
                    continue
                then, orelse = block(s.then), block(s.orelse)
                if then is not s.then or orelse is not s.orelse:
                    s, changed = If(s.cond, then, orelse, s.outputs, s.loc), True
            elif isinstance(s, ForRange):
                body = block(s.body)
                if body is not s.body:
                    s, changed = dataclasses.replace(s, body=body), True
            elif isinstance(s, While):
                cond, body = block(s.cond), block(s.body)
                if cond is not s.cond or body is not s.body:
                    s, changed = dataclasses.replace(s, cond=cond, body=body), True
            out.append(s)
        return Block(tuple(out), b.results) if changed else b

    body = block(fn.body)
    if body is fn.body:
        return fn

    def resolved(a):
        while isinstance(a, Var) and a in mapping:
            a = mapping[a]
        return a

    return replace_body(fn, replace_atoms(body, {o: resolved(o) for o in mapping}))
