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

import importlib

import numpy as np
from numba import types
from numba.extending import overload

from s2sad.codegen.numba_form import RULE_KERNELS
from s2sad.ir import prims
from s2sad.passes import batch
from s2sad_rules import kind_tests, numpy_reductions, numpy_shape


_OVERLOADED: set = set()


def _kernel(helper, **options):
    """`overload(helper)`, noting that `helper` has a Numba implementation."""
    _OVERLOADED.add(helper)
    return overload(helper, **options)


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


@_kernel(prims.cast_like)
def _cast_like(g, x):
    # (the precision of x: an array's dtype, or a NumPy float32's; Python floats are float64)
    if _is_array(x) and isinstance(x.dtype, (types.Float, types.Complex)):
        if _is_array(g) and g.dtype != x.dtype and \
                isinstance(g.dtype, types.Float) == isinstance(x.dtype, types.Float):
            return lambda g, x: g.astype(x.dtype)
        if _is_number(g) and not _is_array(g) and \
                isinstance(g, types.Float) == isinstance(x.dtype, types.Float):
            dt = x.dtype
            return lambda g, x: dt(g)
    return lambda g, x: g


@_kernel(prims.ones_like_output)
def _ones_like_output(x):
    if _is_array(x):
        if isinstance(x.dtype, (types.Float, types.Complex)):
            return lambda x: np.ones(x.shape, x.dtype)
        return lambda x: np.ones(x.shape)
    return lambda x: 1.0


@_kernel(prims.check_scalar_output)
def _check_scalar_output(value):
    if _is_array(value) or isinstance(value, types.Complex):
        def impl(value):
            if np.size(value) != 1 or np.iscomplexobj(value):
                raise ValueError("grad needs a function with one real output: use s2sad.vjp "
                                 "for a vector-Jacobian product, or s2sad.jacrev for the "
                                 "whole Jacobian")
        return impl
    return lambda value: None


@_kernel(prims.add_cotangents)
def _add_cotangents(a, b):
    if isinstance(a, (types.NoneType, types.Omitted)):
        return lambda a, b: b
    if isinstance(b, (types.NoneType, types.Omitted)):
        return lambda a, b: a
    if (_is_array(a) or _is_number(a)) and (_is_array(b) or _is_number(b)):
        return lambda a, b: a + b
    return None


@_kernel(prims.filled_diagonal)
def _filled_diagonal(a, val):
    if not _is_array(a):
        return None

    def impl(a, val):
        out = a.copy()
        np.fill_diagonal(out, val)
        return out
    return impl


@_kernel(kind_tests.is_complex)
def _is_complex(x):
    complex_ = isinstance(getattr(x, "dtype", x), types.Complex)
    return lambda x: complex_


def _axes_of(axis, ndim: int):
    """The axes a literal `axis` (None, an int, a tuple of ints) names, else None."""
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        return list(range(ndim))
    return _literal_axes(axis, ndim)


@_kernel(numpy_reductions.kept_shape, prefer_literal=True)
def _kept_shape(shape, axis):
    if not isinstance(shape, types.BaseTuple):
        return None
    n = len(shape)
    axes = _axes_of(axis, n)
    if axes is None:
        return None
    items = ["1" if i in axes else f"shape[{i}]" for i in range(n)]
    text = f"def kept(shape, axis):\n    return ({', '.join(items)}{',' if n == 1 else ''})\n"
    return _source_function(text, "kept")


@_kernel(numpy_shape.split_points, prefer_literal=True)
def _split_points(arrays, axis):
    if not isinstance(arrays, (types.List, types.BaseTuple)):
        return None
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        size = "a.size"
    elif isinstance(axis, types.IntegerLiteral):
        size = f"a.shape[{axis.literal_value}]"
    else:
        return None
    loop = "for a in arrays" if isinstance(arrays, types.List) else \
        "for a in numba.literal_unroll(arrays)"
    text = ("def points(arrays, axis):\n"
            "    sizes = []\n"
            f"    {loop}:\n"
            f"        sizes.append({size})\n"
            "    return np.cumsum(np.array(sizes))[:-1]\n")
    import numba

    return _source_function(text, "points", numba=numba)


@_kernel(batch.batch_index)
def _batch_index(index):
    if isinstance(index, types.EllipsisType):
        return lambda index: (index, slice(None))
    if isinstance(index, types.BaseTuple) and any(isinstance(i, types.EllipsisType)
                                                  for i in index):
        return lambda index: index + (slice(None),)
    return lambda index: index


# every helper numba_form lets through has its implementation above
assert all(getattr(importlib.import_module(module), name) in _OVERLOADED
           for module, names in RULE_KERNELS.items() for name in names)


# -- contractions of any rank, and arrays of arrays ---------------------------------------
# Numba's `@` and np.dot take 1-D and 2-D operands only, and it has no np.tensordot; the
# Numba form calls these instead (numba_form._Calls). Each implementation is source
# written for the ranks and literal axes of the call it compiles, with every 2-D product
# left to `@` (BLAS) on contiguous operands.

def matmul(a, b):
    """`a @ b` of operands of any ranks (stacks of matrices broadcast), in the Numba form."""
    return np.matmul(a, b)


def tensordot(a, b, axes_a, axes_b=None):
    """`np.tensordot(a, b, axes_a)` (an int), or with `(axes_a, axes_b)` (tuples of ints),
    in the Numba form."""
    return np.tensordot(a, b, axes_a if axes_b is None else (axes_a, axes_b))


def nested_array(items, dtype=None):
    """`np.array(items)` of nested tuples whose leaves are numbers or arrays of one shape,
    in the Numba form (Numba's np.array takes numbers only)."""
    return np.array(items, dtype=dtype)


# -- tapes made for a loop's trips (numba_form._Rewriter.preallocate) ----------------------
# A number pushed once per trip goes into an array of its dtype, a tuple of numbers into a
# tuple of such arrays, one per item; anything else into a list of `n` slots.

def new_tape(item, n):
    """A tape of `n` slots for items like `item`, written by tape_put, read by tape_get."""
    return [item] * n


def tape_put(tape, k, item):
    """Store `item` in slot `k` of `tape` (new_tape's)."""
    tape[k] = item


def tape_get(tape, k):
    """The item in slot `k` of `tape` (new_tape's)."""
    return tape[k]


def _tape_items(item) -> list | None:
    """The NumPy dtypes of a tape of `item`'s Numba type, one per array: [dtype] for a
    number, one for each item of a tuple of numbers; None for anything else (a list)."""
    from numba.np.numpy_support import as_dtype

    items = list(item) if isinstance(item, types.BaseTuple) else [item]
    items = [types.unliteral(t) for t in items]
    if not items or not all(_is_number(t) for t in items):
        return None
    return [as_dtype(t) for t in items]


@overload(new_tape)
def _new_tape(item, n):
    dtypes = _tape_items(item)
    if dtypes is None:
        return lambda item, n: [item] * n
    scope = {f"dt{j}": dt for j, dt in enumerate(dtypes)}
    if not isinstance(item, types.BaseTuple):
        return _source_function("def make(item, n):\n    return np.empty(n, dt0)\n",
                                "make", **scope)
    columns = "".join(f"np.empty(n, dt{j}), " for j in range(len(dtypes)))
    return _source_function(f"def make(item, n):\n    return ({columns})\n", "make",
                            **scope)


@overload(tape_put, inline="always")
def _tape_put(tape, k, item):
    if isinstance(tape, types.BaseTuple):  # (one array per item of the tuple)
        text = "def put(tape, k, item):\n" + "".join(
            f"    tape[{j}][k] = item[{j}]\n" for j in range(len(tape)))
        return _source_function(text, "put")

    def put(tape, k, item):
        tape[k] = item
    return put


@overload(tape_get, inline="always")
def _tape_get(tape, k):
    if isinstance(tape, types.BaseTuple):
        items = "".join(f"tape[{j}][k], " for j in range(len(tape)))
        return _source_function(f"def get(tape, k):\n    return ({items})\n", "get")
    return lambda tape, k: tape[k]


def _source_function(text: str, name: str, **scope):
    """The function `name` defined by `text`, with `np` and `scope` as its globals."""
    glb = {"np": np, **scope}
    exec(compile(text, f"<s2sad numba kernel {name}>", "exec"), glb)
    return glb[name]


def _float_dtype(*ts):
    """The NumPy dtype a product of arrays of element types `ts` has (None: not a float
    or complex one, which Numba's BLAS products do not take)."""
    from numba.np.numpy_support import as_dtype

    dt = np.result_type(*[as_dtype(t) for t in ts])
    return dt if dt.kind in "fc" else None


def _cast(name: str, t, dt) -> str:
    """The expression for array `name` (of Numba type `t`) as a contiguous array of `dt`."""
    from numba.np.numpy_support import as_dtype

    if as_dtype(t.dtype) != dt:
        return f"{name}.astype(np.{dt.name})"
    return name if t.layout in ("C", "F") else f"np.ascontiguousarray({name})"


@overload(matmul)
def _matmul(a, b):
    if not (_is_array(a) and _is_array(b)) or a.ndim == 0 or b.ndim == 0:
        return None
    dt = _float_dtype(a.dtype, b.dtype)
    if dt is None:
        return None
    na, nb = a.ndim, b.ndim
    if na <= 2 and nb <= 2:
        text = f"def product(a, b):\n    return {_cast('a', a, dt)} @ {_cast('b', b, dt)}\n"
        return _source_function(text, "product")
    ka, kb = max(na - 2, 0), max(nb - 2, 0)
    k = max(ka, kb)
    lines = ["def product(a, b):"]
    if as_dtype_differs(a, dt):
        lines.append(f"    a = a.astype(np.{dt.name})")
    if as_dtype_differs(b, dt):
        lines.append(f"    b = b.astype(np.{dt.name})")
    dims = []
    for i in range(k):
        of = [f"a.shape[{i - (k - ka)}]"] if i >= k - ka else []
        of += [f"b.shape[{i - (k - kb)}]"] if i >= k - kb else []
        dims.append(of[0] if len(of) == 1 else f"max({of[0]}, {of[1]})")
    core = ([f"a.shape[{na - 2}]"] if na >= 2 else []) + ([f"b.shape[{nb - 1}]"] if nb >= 2
                                                          else [])
    lines.append(f"    out = np.empty(({', '.join(dims + core)},), np.{dt.name})")
    indent = "    "
    for i in range(k):
        lines.append(f"{indent}for i{i} in range({dims[i]}):")
        indent += "    "
    ia = [f"i{i + k - ka} % a.shape[{i}]" for i in range(ka)]
    ib = [f"i{i + k - kb} % b.shape[{i}]" for i in range(kb)]
    sa = f"a[{', '.join(ia)}]" if ia else "a"
    sb = f"b[{', '.join(ib)}]" if ib else "b"
    lines.append(f"{indent}out[{', '.join(f'i{i}' for i in range(k))}] = "
                 f"np.ascontiguousarray({sa}) @ np.ascontiguousarray({sb})")
    lines.append("    return out")
    return _source_function("\n".join(lines) + "\n", "product")


def as_dtype_differs(t, dt) -> bool:
    from numba.np.numpy_support import as_dtype

    return as_dtype(t.dtype) != dt


def _literal_axes(t, ndim: int):
    """The axes (non-negative ints) a literal int or tuple of literal ints names, else
    None."""
    if isinstance(t, types.IntegerLiteral):
        values = [t.literal_value]
    elif isinstance(t, types.BaseTuple) and all(isinstance(i, types.IntegerLiteral)
                                                for i in t):
        values = [i.literal_value for i in t]
    else:
        return None
    if not all(-ndim <= v < ndim for v in values):
        return None
    return [v % ndim for v in values]


@overload(tensordot, prefer_literal=True)
def _tensordot(a, b, axes_a, axes_b=None):
    if not (_is_array(a) and _is_array(b)):
        return None
    dt = _float_dtype(a.dtype, b.dtype)
    if dt is None:
        return None
    na, nb = a.ndim, b.ndim
    if axes_b is None or isinstance(axes_b, (types.NoneType, types.Omitted)):
        if not isinstance(axes_a, types.IntegerLiteral) or \
                not 0 <= axes_a.literal_value <= min(na, nb):
            return None
        n = axes_a.literal_value
        ca, cb = list(range(na - n, na)), list(range(n))
    else:
        ca, cb = _literal_axes(axes_a, na), _literal_axes(axes_b, nb)
        if ca is None or cb is None or len(ca) != len(cb):
            return None
    fa = [i for i in range(na) if i not in ca]
    fb = [i for i in range(nb) if i not in cb]

    def arranged(name, t, perm):
        text = _cast(name, t, dt)
        if perm != list(range(len(perm))):
            text = f"np.ascontiguousarray(np.transpose({text}, ({', '.join(map(str, perm))},)))"
        elif t.layout != "C":
            text = f"np.ascontiguousarray({text})"
        return text

    def size(name, axes):
        return " * ".join(f"{name}.shape[{i}]" for i in axes) or "1"

    out_shape = [f"a.shape[{i}]" for i in fa] + [f"b.shape[{i}]" for i in fb]
    body = [f"    at = {arranged('a', a, fa + ca)}",
            f"    bt = {arranged('b', b, cb + fb)}",
            f"    r = at.reshape(({size('a', fa)}, {size('a', ca)})) @ "
            f"bt.reshape(({size('b', cb)}, {size('b', fb)}))"]
    if out_shape:
        body.append(f"    return r.reshape(({', '.join(out_shape)},))")
    else:
        body.append("    return r[0, 0]")
    text = "def contraction(a, b, axes_a, axes_b=None):\n" + "\n".join(body) + "\n"
    return _source_function(text, "contraction")


def _leaves(t, path=()):
    """[(index path, type)] of the leaves of nested tuple type `t`, and its nested
    lengths, or None where the nesting is not rectangular."""
    if not isinstance(t, types.BaseTuple):
        return [(path, t)], ()
    parts = [_leaves(item, path + (i,)) for i, item in enumerate(t)]
    if any(p is None for p in parts) or len({p[1] for p in parts}) > 1:
        return None
    return [leaf for p in parts for leaf in p[0]], (len(t),) + (parts[0][1] if parts else ())


@overload(nested_array)
def _nested_array(items, dtype=None):
    found = _leaves(items)
    if found is None or not isinstance(items, types.BaseTuple):
        return None
    leaves, lengths = found
    arrays = [(p, t) for p, t in leaves if _is_array(t)]
    if not all(_is_array(t) or _is_number(t) for _, t in leaves) or \
            len({t.ndim for _, t in arrays}) > 1:
        return None
    from numba.np.numpy_support import as_dtype

    kinds = [t.dtype if _is_array(t) else t for _, t in leaves]
    if isinstance(dtype, types.NumberClass):
        dt = as_dtype(dtype.dtype)
    elif dtype is None or isinstance(dtype, (types.NoneType, types.Omitted)):
        dt = np.result_type(*[as_dtype(k) for k in kinds])
    else:
        return None
    shape = ", ".join(map(str, lengths))
    lines = ["def made(items, dtype=None):"]
    if arrays:
        first = "".join(f"[{i}]" for i in arrays[0][0])
        lines.append(f"    out = np.empty(({shape},) + items{first}.shape, np.{dt.name})")
    else:
        lines.append(f"    out = np.empty(({shape},), np.{dt.name})")
    for path, _ in leaves:
        lines.append(f"    out[{', '.join(map(str, path))}] = "
                     f"items{''.join(f'[{i}]' for i in path)}")
    lines.append("    return out")
    return _source_function("\n".join(lines) + "\n", "made")
