"""Which IR calls print as Python syntax: operators, and statements never folded away.

Shared by the register allocator (what may be folded into an expression) and the emitter.
"""

from __future__ import annotations

import operator

import gast

from s2sad.ir import prims

BINOP_AST = {
    operator.add: gast.Add, operator.sub: gast.Sub, operator.mul: gast.Mult,
    operator.truediv: gast.Div, operator.floordiv: gast.FloorDiv, operator.mod: gast.Mod,
    operator.pow: gast.Pow, operator.matmul: gast.MatMult, operator.and_: gast.BitAnd,
    operator.or_: gast.BitOr, operator.xor: gast.BitXor, operator.lshift: gast.LShift,
    operator.rshift: gast.RShift,
}
CMP_AST = {operator.lt: gast.Lt, operator.le: gast.LtE, operator.gt: gast.Gt,
           operator.ge: gast.GtE, operator.eq: gast.Eq, operator.ne: gast.NotEq,
           operator.is_: gast.Is, operator.is_not: gast.IsNot}
UNARY_AST = {operator.neg: gast.USub, operator.pos: gast.UAdd, operator.not_: gast.Not,
             operator.invert: gast.Invert}
NO_INLINE = {prims.new_tape, prims.tape_pop, prims.tape_push, prims.sweep_boundary,
             prims.tape_reader, prims.tape_next, prims.index_add_inplace, prims.index_add_at,
             prims.index_update_inplace, prims.add_inplace, prims.mul_inplace}
SCATTERS = (prims.index_add_inplace, prims.index_add_at, prims.index_update_inplace,
            prims.add_inplace, prims.mul_inplace)
