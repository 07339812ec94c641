"""Which primitives return a new array and which may return a view of an argument.

Lowering reads these to tell when a write into an array is seen through another name
(`frontend`), and the in-place pass to tell when `acc *= c` would change an array that
something else still refers to (`passes/inplace.py`). Where a function is in neither
table, it may hold its argument: a pass that needs an unshared array assumes it does.
"""

from __future__ import annotations

import operator

import numpy as np

from s2sad.ir import prims

FRESH_FNS = {
    np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
    np.full_like, np.array, np.copy, np.arange, np.linspace, np.eye, np.identity,
    np.concatenate, np.stack, np.vstack, np.hstack, np.outer, np.diag, prims.index_update,
    prims.index_add, operator.add, operator.sub, operator.mul, operator.truediv,
    operator.pow, operator.neg, operator.matmul, np.dot, np.matmul, np.cumsum, np.cumprod,
    # each returns a new array (not np.diff: n=0 returns its argument; not np.einsum: a
    # diagonal is a view)
    np.where, np.clip, np.sort, np.tile, np.repeat, np.pad, np.roll, np.append, np.insert,
    np.delete, np.take, np.round, np.around, np.triu, np.tril, np.kron, np.cross,
    np.tensordot, np.linalg.inv, np.linalg.solve, np.linalg.pinv, np.sum, np.mean, np.prod,
    np.max, np.min,
}

# operators on arrays that always make a new one (`a < b`, `a // b`, `~m`)
FRESH_OPERATORS = {
    operator.floordiv, operator.mod, operator.abs, operator.invert, operator.and_,
    operator.or_, operator.xor, operator.lt, operator.le, operator.gt, operator.ge,
    operator.eq, operator.ne,
}

VIEW_FNS = {  # what may return a view of its first argument (or a sequence of views)
    operator.getitem, np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis,
    np.rollaxis, np.expand_dims, np.squeeze, np.broadcast_to, np.broadcast_arrays,
    np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.require,
    np.atleast_1d, np.atleast_2d, np.atleast_3d, np.flip, np.fliplr, np.flipud, np.rot90,
    np.diagonal, np.real, np.imag, np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit,
    np.lib.stride_tricks.sliding_window_view, np.lib.stride_tricks.as_strided,
    prims.Attr("T"), prims.Attr("mT"), prims.Attr("real"), prims.Attr("imag"),
} | {getattr(np, name) for name in ("unstack", "matrix_transpose", "permute_dims")
     if hasattr(np, name)}


def creates_array(fn) -> bool:
    """Does `fn` return a new array (never a view of an argument)?"""
    try:
        if fn in FRESH_FNS:
            return True
    except TypeError:
        return False
    return isinstance(fn, np.ufunc) and fn.signature is None


# runtime helpers and in-place updates whose result is their first operand or a view of it
# (the other operands give a shape, a dtype, an index or a value that is copied in)
_FIRST_OPERAND = {
    prims.unbroadcast, prims.broadcast_like, prims.cast_like, prims.sum_to_shape,
    prims.identity, prims.once_differentiable, prims.index_add_inplace, prims.index_add_at,
    prims.index_update_inplace, prims.add_inplace, prims.mul_inplace,
}
# what makes a new array of its operands' values (a derivative's zeros, a copy)
_FRESH_PRIMS = {prims.zeros_like, prims.fresh_copy, prims.index_add, prims.index_update}


def holds_operand(fn, i: int) -> bool:
    """May the result of `fn` refer to the memory of its operand `i`: be it, a view of it
    (np.flip, a transpose, a slice, unbroadcast of a cotangent that needs no sum), or a
    tuple, list or tape that keeps it? Only what is known not to is not: an in-place
    update of the operand afterwards would change what the result reads."""
    try:
        if fn in _FRESH_PRIMS or fn in FRESH_OPERATORS or creates_array(fn):
            return False
        if fn in _FIRST_OPERAND or fn in VIEW_FNS and fn is not np.broadcast_arrays:
            return i == 0
    except TypeError:  # (an unhashable callable: an opaque object)
        return True
    return True
