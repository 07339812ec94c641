"""Numba implementations of the runtime helpers that generated derivatives call
(`unbroadcast`, `sum_to_shape`, `take_slot`, ...), registered with `numba.extending.overload`
on the helpers themselves: the Numba form keeps `from s2sad.runtime import unbroadcast`
as printed, and Numba compiles the call with the implementation below for the argument
types it sees (an array's rank and dtype are part of its type, so each rank gets its own
machine code).

Each implementation computes what the NumPy helper in `s2sad.ir.prims` computes, for the
arguments Numba can type; tests/backends/test_numba.py checks them against those helpers.
Importing this module needs Numba; `numba_compile` imports it before compiling.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from s2sad.codegen.numba_form import KERNELS
from s2sad.ir import prims


_OVERLOADED: set = set()


def _kernel(helper):
    """`overload(helper)`, noting that `helper` has a Numba implementation."""
    _OVERLOADED.add(helper)
    return overload(helper)


def _is_array(t) -> bool:
    return isinstance(t, types.Array)


def _is_number(t) -> bool:
    return isinstance(t, (types.Number, types.Boolean))


@_kernel(prims.fresh_copy)
def _fresh_copy(x):
    if _is_array(x):
        return lambda x: x.copy()
    return lambda x: x


def _value_copy(t):
    """A copy of an array, a number as it is (the result of `g[index]`)."""


@overload(_value_copy)
def _value_copy_impl(t):
    if _is_array(t):
        return lambda t: t.copy()
    return lambda t: t


@_kernel(prims.take_slot)
def _take_slot(g, index):
    if not _is_array(g):
        return lambda g, index: g
    if _is_array(index) and isinstance(index.dtype, types.Integer) and index.ndim == 1:
        def with_repeats(g, index):
            # NumPy keeps the last write at a repeated position: only it has a cotangent
            out = g[index].copy()
            n = g.shape[0]
            seen = np.zeros(n, np.bool_)
            for j in range(len(index) - 1, -1, -1):
                p = index[j] % n
                if seen[p]:
                    out[j] = 0.0
                else:
                    seen[p] = True
            return out
        return with_repeats
    return lambda g, index: _value_copy(g[index])


def _others_of(f):
    """For each entry of the contiguous 1-D array `f`, the product of the others."""


@overload(_others_of)
def _others_of_impl(f):
    def impl(f):
        # products of the entries before each, then of those after it: no division, so
        # exact where an entry is zero
        n = f.size
        out = np.empty(n, f.dtype)
        acc = 1.0
        for i in range(n):
            out[i] = acc
            acc *= f[i]
        acc = 1.0
        for i in range(n - 1, -1, -1):
            out[i] *= acc
            acc *= f[i]
        return out
    return impl


@_kernel(prims.prod_others)
def _prod_others(a, axis=None, keepdims=False, total=None):
    """Of a whole array (axis None) or along an axis of a matrix, as np.prod's VJP does."""
    if not _is_array(a):
        return None
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        def whole(a, axis=None, keepdims=False, total=None):
            return _others_of(np.ascontiguousarray(a).ravel()).reshape(a.shape)
        return whole
    if a.ndim == 2 and isinstance(axis, types.Integer):
        def along(a, axis=None, keepdims=False, total=None):
            rows = a if axis % 2 == 1 else a.T  # each row a product
            out = np.empty(rows.shape, a.dtype)
            for r in range(rows.shape[0]):
                out[r] = _others_of(np.ascontiguousarray(rows[r]))
            return out if axis % 2 == 1 else np.ascontiguousarray(out.T)
        return along
    return None


@_kernel(prims.index_update)
def _index_update(acc, index, v):
    if not _is_array(acc):
        return None

    def impl(acc, index, v):
        out = acc.copy()
        out[index] = v
        return out
    return impl


@_kernel(prims.index_add)
def _index_add(acc, index, g):
    if not _is_array(acc):
        return None
    if not isinstance(acc.dtype, (types.Float, types.Complex)):
        return lambda acc, index, g: prims.index_add(acc.astype(np.float64), index, g)
    if _is_array(index) or (isinstance(index, types.BaseTuple) and
                            any(_is_array(i) for i in index)):
        # index arrays: repeated positions accumulate, as np.add.at (index_add_at refuses
        # the forms it has no loop for; `out[index] += g` would add once per position)
        return lambda acc, index, g: prims.index_add_at(acc.copy(), index, g)

    def impl(acc, index, g):
        out = acc.copy()
        out[index] += g
        return out
    return impl


@_kernel(prims.index_add_at)
def _index_add_at(acc, index, g):
    """`np.add.at(acc, index, g)` in place, for an index of integer arrays (one per
    leading axis of acc, a tuple of them as np.nonzero makes) or an integer."""
    if not _is_array(acc):
        return None
    if _is_array(index) and isinstance(index.dtype, types.Integer) and index.ndim == 1:
        def one(acc, index, g):
            gb = np.broadcast_to(g, acc[index].shape)
            for j in range(len(index)):
                acc[index[j]] += gb[j]
            return acc
        return one
    if isinstance(index, types.BaseTuple) and len(index) == 2 and acc.ndim == 2 and \
            all(_is_array(a) and isinstance(a.dtype, types.Integer) for a in index):
        def two(acc, index, g):
            # (row and column index arrays broadcast together, as NumPy's indexing does)
            rows, cols = index
            r = (rows + 0 * cols).ravel()
            c = (cols + 0 * rows).ravel()
            gs = (np.zeros((rows + 0 * cols).shape, acc.dtype) + g).ravel()
            for j in range(r.size):
                acc[r[j], c[j]] += gs[j]
            return acc
        return two
    if isinstance(index, types.Integer):
        def scalar(acc, index, g):
            acc[index] += g
            return acc
        return scalar
    return None


@_kernel(prims.zeros_like)
def _zeros_like(x):
    if _is_array(x):
        if isinstance(x.dtype, (types.Float, types.Complex)):
            return lambda x: np.zeros(x.shape, x.dtype)
        return lambda x: np.zeros(x.shape)
    if _is_number(x):
        return lambda x: 0.0
    return None


@_kernel(prims.broadcast_like)
def _broadcast_like(t, x):
    if _is_number(x):
        return lambda t, x: t
    if _is_array(x):
        if _is_number(t):
            return lambda t, x: np.full(x.shape, t)
        if t.ndim != x.ndim:
            return lambda t, x: np.zeros(x.shape, t.dtype) + t
        return lambda t, x: t if t.shape == x.shape else np.zeros(x.shape, t.dtype) + t
    return None


def _summed(g, shape):
    """`g` summed over its broadcast axes down to `shape` (a tuple, possibly empty)."""


@overload(_summed)
def _summed_impl(g, shape):
    if not _is_array(g):
        return None
    k = len(shape)
    n = g.ndim
    if k == 0:
        return lambda g, shape: np.sum(g)
    if k > n:
        return None

    def impl(g, shape):
        out = np.zeros(shape, g.dtype)
        flat_out = out.reshape(out.size)
        gc = np.ascontiguousarray(g)
        flat_g = gc.reshape(gc.size)
        gshape = np.empty(n, np.int64)
        stride = np.zeros(n, np.int64)  # each axis of g's step in `out` (0: summed over)
        step = 1
        for i in range(n - 1, -1, -1):
            gshape[i] = gc.shape[i]
            j = i - (n - k)
            if j >= 0 and shape[j] != 1:
                stride[i] = step
            if j >= 0:
                step *= shape[j]
        for p in range(flat_g.size):
            r = p
            off = 0
            for i in range(n - 1, -1, -1):
                off += (r % gshape[i]) * stride[i]
                r //= gshape[i]
            flat_out[off] += flat_g[p]
        return out
    return impl


@_kernel(prims.sum_to_shape)
def _sum_to_shape(g, shape):
    if _is_number(g):
        if len(shape) == 0:
            return lambda g, shape: g
        return lambda g, shape: np.full(shape, g)
    return lambda g, shape: _summed(g, shape)


@_kernel(prims.unbroadcast)
def _unbroadcast(g, x):
    if _is_number(x):
        if _is_number(g):
            return lambda g, x: g
        if _is_array(g):
            return lambda g, x: np.sum(g)
        return None
    if not _is_array(x):
        return None
    if _is_number(g):
        return lambda g, x: np.full(x.shape, g)
    if _is_array(g) and g.ndim == x.ndim:
        return lambda g, x: g if g.shape == x.shape else _summed(g, x.shape)
    return lambda g, x: _summed(g, x.shape)


# every helper numba_form lets through has its implementation above
assert all(getattr(prims, name) in _OVERLOADED for name in KERNELS)
