"""The runtime helpers generated code calls, importable from one public module.

Printed derivatives import them from here (`from s2sad.runtime import unbroadcast`), so
their source runs and lints as printed; ahead-of-time modules copy the helpers' source
instead, so that they need only NumPy. Each helper is defined in `s2sad.ir.prims`.
"""

from s2sad.ir.prims import (
    Grown,
    add_cotangents,
    add_inplace,
    as_list,
    batch_jvp,
    batch_loop,
    broadcast_like,
    cast_like,
    check_scalar_output,
    cofactor,
    derivative_dtype,
    filled_diagonal,
    fresh_copy,
    index_add,
    index_add_at,
    index_add_functional,
    index_add_inplace,
    index_update,
    index_update_functional,
    index_update_inplace,
    list_append,
    mul_inplace,
    new_tape,
    ones_like_output,
    prod_others,
    sum_to_shape,
    take_slot,
    tape_next,
    tape_pop,
    tape_push,
    tape_reader,
    unbroadcast,
    zeros_like,
)

__all__ = [
    "Grown", "as_list", "list_append", "add_cotangents", "add_inplace", "batch_jvp",
    "batch_loop", "broadcast_like", "cast_like", "check_scalar_output", "cofactor",
    "derivative_dtype", "filled_diagonal", "fresh_copy", "index_add",
    "index_add_at", "index_add_functional", "index_add_inplace", "index_update",
    "index_update_functional", "index_update_inplace", "mul_inplace",
    "new_tape", "ones_like_output", "prod_others", "sum_to_shape", "take_slot", "tape_next",
    "tape_pop", "tape_push", "tape_reader", "unbroadcast", "zeros_like",
]
