"""Which IR calls print as Python syntax: operators, and statements never folded away.

Shared by the register allocator (what may be folded into an expression) and the emitter.
"""

from __future__ import annotations

from s2sad.frontend.values import BINOPS, CMPOPS, UNOPS
from s2sad.ir import prims

# Python's operators as calls (lowering's tables), turned around for printing
BINOP_AST = {fn: node for node, fn in BINOPS.items()}
CMP_AST = {fn: node for node, fn in CMPOPS.items()}
UNARY_AST = {fn: node for node, fn in UNOPS.items()}
NO_INLINE = {prims.revolve.checkpoints, prims.revolve.snapshot, prims.revolve.restore,
             prims.new_tape, prims.tape_pop, prims.tape_push, prims.sweep_boundary,
             prims.tape_reader, prims.tape_next, prims.index_add_inplace, prims.index_add_at,
             prims.index_update_inplace, prims.add_inplace, prims.mul_inplace,
             prims.print_values, prims.check_assertion,
             prims.check_scalar_output, prims.filled_diagonal} | prims.RANDOM_DRAWS
SCATTERS = (prims.index_add_inplace, prims.index_add_at, prims.index_update_inplace,
            prims.add_inplace, prims.mul_inplace)
