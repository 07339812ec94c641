"""Functional scatters: in code specialised for arrays of another library (Dask), a
scatter (`acc` with `g` added at a basic index, `a[i] = v` as a new array, the cotangent
slot of such a write) becomes whole-array operations that library runs: no array written.

The NumPy forms copy into a new NumPy array and write into it (np.array, np.add.at), which
would compute a Dask array; an index that is not basic (an integer or boolean array) is
left for passes/lazy.py to refuse.
"""

from __future__ import annotations

import operator
from dataclasses import replace

from s2sad.ir import prims
from s2sad.ir.kinds import atom_kind, infer_kinds
from s2sad.ir.nodes import Block, Call, ForRange, Function, If, While
from s2sad.passes.inplace import index_is_basic

FUNCTIONAL_FORM = {prims.index_add: prims.index_add_functional,
                   prims.index_update: prims.index_update_functional}


def functional_scatters(fn: Function, param_kinds: dict) -> Function:
    """`fn` with each scatter that touches an array of another library, at a basic index,
    written as whole-array operations."""
    kinds = infer_kinds(fn, param_kinds)
    return replace(fn, body=_block(fn.body, kinds))


def _of_other_library(call: Call, kinds: dict) -> bool:
    operands = [call.args[0]] + list(call.args[2:]) if call.fn is not prims.take_slot \
        else [call.args[0]]
    return any(atom_kind(a, kinds).family for a in operands)


def _block(b: Block, kinds: dict) -> Block:
    out = []
    for s in b.stmts:
        match s:
            case Call(fn=fn, args=args) if fn in (prims.index_add, prims.index_update,
                                                  prims.take_slot):
                if _of_other_library(s, kinds) and index_is_basic(atom_kind(args[1], kinds)):
                    # take_slot: a basic index writes each position once, its slot is g[i]
                    form = FUNCTIONAL_FORM.get(fn, operator.getitem)
                    s = replace(s, fn=form)
            case If():
                s = replace(s, then=_block(s.then, kinds), orelse=_block(s.orelse, kinds))
            case ForRange():
                s = replace(s, body=_block(s.body, kinds))
            case While():
                s = replace(s, cond=_block(s.cond, kinds), body=_block(s.body, kinds))
        out.append(s)
    return replace(b, stmts=tuple(out))
