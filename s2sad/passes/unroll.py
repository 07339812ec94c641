"""Unrolling a loop over a tuple or list: `for q in params:` where `params` is a tuple
argument (or a list the function was given). Lowering makes it a loop over an index, not
knowing the length; once the function is specialised the length is known, and each
iteration reads its own item: the loop is copied once per item with the index a constant,
so that every `params[i]` is a constant index the passes follow item by item (a tuple's
cotangent is the tuple of its items' cotangents).
"""

from __future__ import annotations

import operator

from s2sad.ir.builder import Namer, replace_atoms, replace_body, substitute_block
from s2sad.ir.nodes import Block, Call, Const, ForRange, Function, If, Var, While

MAX_ITEMS = 64  # a longer tuple is left as a loop (and refused where it is differentiated)


def unroll_tuple_loops(fn: Function, kinds: dict) -> Function:
    """`fn` with each loop that indexes a tuple or list by its loop index unrolled (when its
    trip count is known); `kinds`: the kinds of `fn`'s values."""
    if not _any_loop(fn.body):
        return fn
    namer = Namer.for_function(fn)
    body = _block(fn.body, kinds, namer)
    return fn if body is fn.body else replace_body(fn, body)


def _any_loop(b: Block) -> bool:
    return any(isinstance(s, ForRange) for s in b.stmts)


def _block(b: Block, kinds: dict, namer: Namer) -> Block:
    out, mapping, changed = [], {}, False
    for s in b.stmts:
        if mapping:
            s = replace_atoms(Block((s,), ()), mapping).stmts[0]
        trips = _trips(s, kinds) if isinstance(s, ForRange) else None
        if trips is None:
            out.append(s)
            continue
        current = list(s.inits)
        for k in trips:
            copy = substitute_block(s.body, {s.index: Const(k), **dict(zip(s.params, current))},
                                    namer)
            out.extend(copy.stmts)
            current = list(copy.results)
        mapping.update(zip(s.outputs, current))
        changed = True
    if not changed:
        return b
    results = tuple(mapping.get(r, r) if isinstance(r, Var) else r for r in b.results)
    return Block(tuple(out), results)


def _trips(s: ForRange, kinds: dict):
    """The index values of a loop worth unrolling: its bounds are known and its body
    indexes a tuple or list by the index; else None."""
    bounds = []
    for a in (s.start, s.stop, s.step):
        if isinstance(a, Const):
            bounds.append(a.value)
            continue
        k = kinds.get(a)
        if k is None or not k.known or type(k.value) is not int:
            return None
        bounds.append(k.value)
    if not all(type(v) is int for v in bounds) or bounds[2] == 0:
        return None
    trips = range(*bounds)
    if len(trips) > MAX_ITEMS or not _indexes_a_sequence(s.body, s.index, kinds):
        return None
    return trips


def _indexes_a_sequence(b: Block, index: Var, kinds: dict) -> bool:
    for s in b.stmts:
        if isinstance(s, Call) and s.fn is operator.getitem and len(s.args) == 2 and \
                s.args[1] == index:
            k = kinds.get(s.args[0])
            if k is not None and k.tag in ("tuple", "list"):
                return True
        if isinstance(s, If) and (_indexes_a_sequence(s.then, index, kinds) or
                                  _indexes_a_sequence(s.orelse, index, kinds)):
            return True
        if isinstance(s, (ForRange, While)) and _indexes_a_sequence(s.body, index, kinds):
            return True
    return False
