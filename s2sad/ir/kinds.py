"""Kinds: what the compiler knows about a value (Python scalar, array of a shape, tuple...).

Generated code is specialised on the kinds of the arguments; `infer_kinds`
propagates them through a function by abstract evaluation, so that passes
know when shapes match (no unbroadcast needed) and when a value is a scalar.
"""

from __future__ import annotations

import math
import functools
import operator
import warnings

import numpy as np

from s2sad.ir import prims, shape_rules
from s2sad.ir.dims import (
    Dim,
    broadcast_shapes,
    escapes_given,
    escapes_taken,
    has_dims,
    mark,
    replay,
    since,
    symbolic_shape,
)
from s2sad.ir.kind_values import (  # noqa: F401  (re-exported: the kinds API)
    _UNSET,
    BOOL,
    ELEMENTWISE_BINARY,
    FLOAT,
    INT,
    OBJECT,
    PENDING,
    UNKNOWN,
    Kind,
    _dtype_letter,
    _elementwise_result,
    _hashable,
    _NoExample,
    array,
    array_family,
    array_of_rank,
    can_stand_in,
    canonical,
    example,
    float_kind,
    join,
    kind_of_value,
    of_family,
    scalar,
    structure_view,
)
from s2sad.ir.nodes import Block, Call, ForRange, Function, If, Var, While


# modules of functions without rules whose result's type follows from their operands' kinds
# and that cannot act on state: their results' kinds are found by running them on examples
# (a Fourier transform of constants is complex; taken for unknown, complex arithmetic on it
# would lose imaginary parts of cotangents)
PURE_MODULES = ("math", "cmath", "scipy.special", "numpy.fft")
PURE_PACKAGES = ("scipy.fft.",)


def _opaque_call(fn) -> bool:
    if isinstance(fn, prims.Opaque):  # run at compile time only if it cannot act on state
        if isinstance(fn.func, prims.WrittenCopy):
            return False  # (it writes into a copy of its argument)
        module = getattr(fn.func, "__module__", None) or ""
        return not (isinstance(fn.func, np.ufunc) or module in PURE_MODULES or
                    module.startswith(PURE_PACKAGES))
    if isinstance(fn, (prims.RecursiveCall, prims.SelfCall)) or fn is prims.apply_pullback:
        return True
    return prims.is_derivative(fn)


def _is_elementwise_ufunc(fn) -> bool:
    """A plain ufunc (np.sin, np.add) with one result: not a generalised one like np.matmul,
    nor one returning a tuple (np.divmod, np.modf, np.frexp), whose kind was taken for one
    array (the cotangent of the pair became one zero array, filled item by item)."""
    return isinstance(fn, np.ufunc) and fn.signature is None and fn.nout == 1


# NumPy's functions making the index arrays of a matrix's parts (np.triu_indices(n, 1),
# np.diag_indices_from(K)): called as they are (no rule: their results carry no derivative),
# pure, and their results' kinds known from the operands' (a tuple of int vectors), so that
# what they index keeps its number of axes (`K[np.diag_indices_from(K)] += alpha`)
INDEX_MAKERS = {np.triu_indices: 2, np.tril_indices: 2, np.diag_indices: None,
                np.diag_indices_from: None, np.triu_indices_from: 2,
                np.tril_indices_from: 2}


def _index_maker_kind(fn, arg_kinds, kwarg_kinds) -> Kind | None:
    """The kind of `fn(...)` of INDEX_MAKERS: its value's kind where every operand is known
    and no size symbol (its result's lengths are then those of every call), else a tuple of
    int vectors of unknown length (np.diag_indices_from(a) of `a` of known shape: of length
    a.shape[0], one per axis of `a`)."""
    kinds = list(arg_kinds) + [k for _, k in kwarg_kinds]
    if all(k.known and not has_dims(k.value) for k in kinds):
        try:
            return kind_of_value(fn(*[k.value for k in arg_kinds],
                                    **{n: k.value for n, k in kwarg_kinds}), keep_value=False)
        except Exception:  # noqa: BLE001 - it raises where the code runs
            return None
    count = INDEX_MAKERS[fn]
    options = dict(kwarg_kinds)
    if fn is np.diag_indices:
        ndim = arg_kinds[1] if len(arg_kinds) > 1 else options.get("ndim")
        count = 2 if ndim is None else ndim.value if ndim.known and type(ndim.value) is int \
            else None
        vector = array("i", (arg_kinds[0].value,)) if arg_kinds and arg_kinds[0].known and \
            type(arg_kinds[0].value) is int else array_of_rank("i", 1)
    elif fn is np.diag_indices_from:
        a = arg_kinds[0] if arg_kinds else None
        count = a.ndim if a is not None and a.tag == "array" else None
        shape = a.static_shape if a is not None else None
        vector = array("i", shape[:1]) if shape else array_of_rank("i", 1)
    else:
        vector = array_of_rank("i", 1)
    if count is None or count < 1:
        return None
    return Kind("tuple", items=(vector,) * count)


DATA_DEPENDENT = {np.nonzero, np.flatnonzero, np.argwhere, np.unique, np.extract,
                  np.compress}


def _unsized(k: Kind) -> Kind:
    """The kind with every array size forgotten (ranks kept)."""
    if k.tag == "array":
        return array_of_rank(k.dtype, k.ndim) if k.ndim else k
    if k.tag in ("tuple", "list"):
        return Kind(k.tag, items=tuple(_unsized(i) for i in k.items))
    return k


_MEMO: dict = {}  # (fn, arg kinds, kwarg kinds) -> result kind
_MEMO_GUARDS: dict = {}  # the same keys -> the size guards its result was found under
# primitives whose kind rule reads more than the kinds where an operand's type is not
# decided (see _decided): is_complex of a value of unknown dtype. Memoised only where every
# operand's type is decided (the rule then reads the kinds alone)
CONTEXTUAL: set = set()
# primitives whose answer reads only the type and dtype of their one argument (is_complex,
# is_sequence, is_none): the same for a batched value (vector mode) as for each of its
# directions, so the batching pass calls them once on the batched value
KIND_READERS: set = set()


def _decided(arg_kinds, kwarg_kinds) -> bool:
    """Is the type of each value of these kinds settled: a scalar or array of a known
    dtype, a tuple, a list, an object, or a value known while compiling?"""
    for k in [*arg_kinds, *[k for _, k in kwarg_kinds]]:
        if not ((k.tag in ("scalar", "array") and k.dtype in ("b", "i", "f", "c")) or
                k.tag in ("tuple", "list", "object") or k.value is not _UNSET):
            return False
    return True


def reads_context(fn, arg_kinds: list, kwarg_kinds: list) -> bool:
    """Does the kind of `fn` on values of these kinds read more than the kinds (see
    CONTEXTUAL)? Where it does not, the kinds decide it: it is the same each time."""
    try:
        return fn in CONTEXTUAL and not _decided(arg_kinds, kwarg_kinds)
    except TypeError:  # (not hashable: not a primitive CONTEXTUAL holds)
        return False


# how many recursive functions' result kinds are being found (transform.recursive_result_
# kind): while one is, an operation on a PENDING kind gives PENDING
PENDING_DEPTH = [0]


def eval_kind(fn, arg_kinds: list, kwarg_kinds: list, table=None) -> Kind:
    """The result kind of calling primitive `fn` on values of the given kinds."""
    try:
        key = (fn, tuple(arg_kinds), tuple(kwarg_kinds)) if fn not in CONTEXTUAL or \
            _decided(arg_kinds, kwarg_kinds) else None
        hit = _MEMO.get(key) if key is not None else None
    except TypeError:  # an unhashable operand or known value: evaluate every time
        key = hit = None
    if hit is not None:
        if _MEMO_GUARDS:
            replay(_MEMO_GUARDS.get(key))
        # (never an opaque call's, which is not memoised: tested below)
        return hit if key in _BY_RULE else _named(hit)
    at = mark()
    if PENDING_DEPTH[0] and (PENDING in arg_kinds or any(k == PENDING for _, k in kwarg_kinds)):
        return PENDING  # (what is computed from a recursive call's result not known yet)
    if isinstance(fn, prims.RecursiveCall) and prims.RecursiveCall.result_kind is not None:
        return prims.RecursiveCall.result_kind(fn, arg_kinds, kwarg_kinds)
    if isinstance(fn, prims.Opaque) and _hashable(fn.func) and fn.func in INDEX_MAKERS:
        result = _index_maker_kind(fn.func, arg_kinds, kwarg_kinds)
        return _named(result) if result is not None else UNKNOWN
    if _opaque_call(fn):
        return UNKNOWN  # recursion and derivative calls: never run at compile time
    _RULED[0] = False
    if fn in DATA_DEPENDENT:
        # sizes depend on the data: evaluate on examples for the structure only
        result = _unsized(_eval_kind(fn, arg_kinds, kwarg_kinds))
    else:
        result = _eval_kind(fn, arg_kinds, kwarg_kinds)
    ruled, _RULED[0] = _RULED[0], False
    family = _family(arg_kinds) or (_family(k for _, k in kwarg_kinds) if kwarg_kinds else "")
    if family and not (_hashable(fn) and fn in SHAPE_READERS):
        result = _of_family(result, family)
    if key is not None:
        if len(_MEMO) > 20000:
            forget_memos()
        _MEMO[key] = result = canonical(result)
        guards = since(at)
        if guards:
            _MEMO_GUARDS[key] = guards
        if ruled:
            _BY_RULE.add(key)
    return result if ruled else _named(result)


def forget_memos() -> None:
    """Empty the memo of result kinds (bounded: it empties itself at 20,000 entries)."""
    _MEMO.clear()
    _MEMO_GUARDS.clear()
    _BY_RULE.clear()


# kinds a shape rule or the broadcast of the operands' kinds gave: their numbers are sizes
# of their own (the 3 of x[:, 3:6]), never a stand-in's that only equal a symbol's value
_RULED = [False]
_BY_RULE: set = set()


def _named(k: Kind) -> Kind:
    """`k` with each size that is the value of a size symbol of the compile under way given
    that symbol (dims.symbolic_shape): kept apart from the memo, whose kinds are the same in
    every compile."""
    if k.tag == "array" and k.shape:
        shape = symbolic_shape(k.shape)
        if shape is not k.shape:
            return Kind("array", k.dtype, shape, family=k.family)
    return k


def _family(kinds) -> str:
    """The array library of the first non-NumPy array among `kinds` (in tuples too)."""
    for k in kinds:
        if k.family:
            return k.family
        if k.tag in ("tuple", "list"):
            inner = _family(k.items)
            if inner:
                return inner
    return ""


def _of_family(k: Kind, family: str) -> Kind:
    if k.tag in ("tuple", "list"):
        return Kind(k.tag, items=tuple(_of_family(i, family) for i in k.items), value=k.value)
    return of_family(k, family)


def _eval_kind(fn, arg_kinds: list, kwarg_kinds: list) -> Kind:
    if any(n == "dtype" and k.tag == "object" and k.value is _UNSET and not k.dtype
           for n, k in kwarg_kinds):
        # dtype=d of a value whose letter is not known: the operand's kind, as without it
        # (a dtype known where the code runs has its letter in its kind: kind_of_value)
        kwarg_kinds = [(n, k) for n, k in kwarg_kinds if n != "dtype"]
    # a shape rule first: the kind from the operands' kinds alone, with no stand-in (whose
    # size, and the compile's cost, would grow with the data's; none is made above a
    # million entries)
    r = shape_rules.result_kind(fn, arg_kinds, kwarg_kinds)
    if r is not None:
        _RULED[0] = True
        return r
    spec = KIND_RULES.get(fn) if _hashable(fn) else None
    if spec is not None:
        r = spec(arg_kinds, dict(kwarg_kinds))
        if r is not None:
            return r
    if fn in ELEMENTWISE_BINARY or (_is_elementwise_ufunc(fn) and not kwarg_kinds):
        r = _elementwise_result(fn, arg_kinds)
        # (with a constant operand too where an array is one: `2.0 * x` is an array, its
        # kind NumPy's promotion of the kinds; where every operand is known, the value is)
        if r is not None and (not any(k.known for k in arg_kinds) or
                              any(k.tag == "array" for k in arg_kinds)):
            _RULED[0] = True
            return r
    if not all(can_stand_in(k) for k in arg_kinds) or \
            not all(can_stand_in(k) for _, k in kwarg_kinds):
        # (before making any: a stand-in for the array of `x * y` where y has none)
        return _fallback(fn, arg_kinds, kwarg_kinds)
    try:
        args = [example(k) for k in arg_kinds]
        kwargs = {n: example(k) for n, k in kwarg_kinds}
    except _NoExample:
        return _fallback(fn, arg_kinds, kwarg_kinds)
    escaped_before = escapes_taken()
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = fn(*args, **kwargs)
    except Exception:
        escapes_given(True)  # (whatever it read: not known)
        return _fallback(fn, arg_kinds, kwarg_kinds)
    keep = all(k.known for k in arg_kinds) and all(k.known for _, k in kwarg_kinds)
    if keep and not _size_valued(result) and (
            any(has_dims(k.value) for k in arg_kinds) or
            any(has_dims(k.value) for _, k in kwarg_kinds)):
        keep = False  # (a float made from a size, n * 0.5: its value is one size's)
    # a number made from a size counts as one that left its symbol only where it is kept
    escapes_given(escaped_before or (escapes_taken() and (keep or not np.isscalar(result))))
    out = kind_of_value(result, keep_value=keep)
    if out.tag == "object" and not keep:
        out = Kind("object", dtype=out.dtype)  # (a dtype's letter: kind_of_value)
    if out.tag in ("array", "tuple", "list") and any(_unknown_float(k) for k in arg_kinds) or \
            any(_unknown_float(k) for _, k in kwarg_kinds):
        # a shape computed from a float whose value is not known (np.arange(x)) must not
        # come from the stand-in: evaluate with another stand-in and keep only what agrees
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                again = fn(*[example(k, other=True) for k in arg_kinds],
                           **{n: example(k, other=True) for n, k in kwarg_kinds})
            second = kind_of_value(again, keep_value=False)
        except Exception:
            second = UNKNOWN
        if _unsized(second) == _unsized(out) and second != out:
            return _unsized(out)
        if second.static_shape != out.static_shape and _unsized(second) != _unsized(out):
            return UNKNOWN
    return out


def _size_valued(v) -> bool:
    """Is `v` an int, a symbolic size, or a tuple of them (what keeps a size's symbol)?"""
    if type(v) is tuple:
        return all(_size_valued(x) for x in v)
    return type(v) is int or type(v) is Dim or type(v) is bool


def _unknown_float(k: Kind) -> bool:
    """A float, or an int array, whose value is unknown while compiling (a shape computed
    from it must not come from a stand-in)."""
    if k.tag == "scalar":
        return k.dtype == "f" and not k.known
    if k.tag == "array":
        return k.dtype == "i" and not k.known
    if k.tag in ("tuple", "list"):
        return any(_unknown_float(i) for i in k.items)
    return False


def _fallback(fn, arg_kinds, kwarg_kinds=()) -> Kind:
    r = _elementwise_result(fn, arg_kinds) if (
        fn in ELEMENTWISE_BINARY or _is_elementwise_ufunc(fn)) else None
    if r is not None:
        return r
    joined = _concatenated(fn, arg_kinds, kwarg_kinds)
    if joined is not None:
        return joined
    if any(k.tag == "array" for k in arg_kinds):
        # the dtype from stand-ins of some size where a size is unknown (a Fourier transform
        # of a real array of unknown length is complex: taken for real, its derivative lost
        # a conjugate); where none can be made, the operands' dtype
        dt = _dtype_on_sized_stand_ins(fn, arg_kinds, kwarg_kinds)
        if dt is None:
            dts = {k.dtype for k in arg_kinds}
            dt = "c" if "c" in dts else "f" if "f" in dts else ""
        if dt and _inner_product(fn, arg_kinds, kwarg_kinds):
            return scalar(dt)  # (np.dot(a, b) of two vectors of a length the data decide)
        rank = _product_rank(fn, arg_kinds, kwarg_kinds)
        if dt and rank is not None:
            return array_of_rank(dt, rank)  # (a rule's branch on its rank is decided)
        return array(dt, None) if dt else UNKNOWN
    return UNKNOWN


_INNER_PRODUCTS = (np.dot, np.inner, np.vdot, np.matmul, operator.matmul)


def _inner_product(fn, arg_kinds, kwarg_kinds) -> bool:
    """Is the call a product of two vectors (a number whatever their common length)?"""
    return any(fn is p for p in _INNER_PRODUCTS) and not kwarg_kinds and \
        len(arg_kinds) == 2 and all(k.tag == "array" and k.ndim == 1 for k in arg_kinds)


def _product_rank(fn, arg_kinds, kwarg_kinds) -> int | None:
    """The rank of `a @ b` (np.matmul) of operands of known ranks, sizes unknown."""
    if not (fn is np.matmul or fn is operator.matmul) or kwarg_kinds or len(arg_kinds) != 2:
        return None
    a, b = (k.ndim if k.tag == "array" else None for k in arg_kinds)
    if a is None or b is None or a == 0 or b == 0:
        return None
    return b - 1 if a == 1 else a - 1 if b == 1 else max(a, b)


def _concatenated(fn, arg_kinds, kwarg_kinds) -> Kind | None:
    """The kind of np.concatenate of a list or tuple of arrays of one known rank and
    dtype, sizes unknown (a recursion's minor of a matrix: issue 35); None otherwise."""
    if fn is not np.concatenate or len(arg_kinds) != 1 or \
            any(n != "axis" or not k.known or k.value is None for n, k in kwarg_kinds):
        return None
    seq = arg_kinds[0]
    if seq.tag not in ("tuple", "list") or not seq.items or \
            any(k.tag != "array" or k.family for k in seq.items):
        return None
    ranks = {k.ndim for k in seq.items}
    dtypes = {k.dtype for k in seq.items}
    if len(ranks) != 1 or len(dtypes) != 1:
        return None
    rank, dtype = ranks.pop(), dtypes.pop()
    return array_of_rank(dtype, rank) if rank and dtype in "fc" else None


def _sized(k: Kind) -> Kind:
    """`k` with a size given to an array whose shape is unknown (2 along each axis)."""
    if k.tag == "array" and k.shape is None and not k.known:
        return Kind("array", k.dtype, (2,) * (k.rank if k.rank is not None else 1))
    if k.tag in ("tuple", "list") and not k.known:
        return Kind(k.tag, items=tuple(_sized(i) for i in k.items))
    return k


def _dtype_on_sized_stand_ins(fn, arg_kinds, kwarg_kinds) -> str | None:
    """The dtype letter of an array `fn` returns for stand-ins of the operands' kinds with
    sizes made up; None where it cannot tell (no stand-in, an error, not an array)."""
    if _opaque_call(fn) or fn in DATA_DEPENDENT:
        return None
    sized = [_sized(k) for k in arg_kinds] + [_sized(k) for _, k in kwarg_kinds]
    if not all(can_stand_in(k) for k in sized):
        return None
    try:
        args = [example(_sized(k)) for k in arg_kinds]
        kwargs = {n: example(_sized(k)) for n, k in kwarg_kinds}
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = fn(*args, **kwargs)
    except Exception:
        return None
    if not isinstance(result, (np.ndarray, np.generic)) or result.dtype.kind not in "biufc":
        return None
    return _dtype_letter(result.dtype)


def _getitem_kind(args, kwargs):
    base, index = args
    if base.tag in ("tuple", "list") and index.known and isinstance(index.value, int):
        try:
            return base.items[index.value]
        except IndexError:
            return UNKNOWN
    if base.tag in ("tuple", "list") and base.items and index.tag == "scalar" and \
            index.dtype == "i" and len({_forget_value(k) for k in base.items}) == 1:
        # an index known at run time picks an item of the one kind they all have
        return _forget_value(base.items[0])
    masks = [k for k in ((index,) if index.tag != "tuple" else index.items)
             if k.tag == "array" and k.dtype == "b"]
    if masks and base.tag == "array":
        # a boolean mask selects a number of entries only known at run time
        m = masks[0].ndim
        if len(masks) == 1 and index.tag != "tuple" and base.ndim is not None and m is not None:
            return array_of_rank(base.dtype, base.ndim - m + 1)
        return array(base.dtype, None)
    if base.tag == "array" and base.shape is None and base.rank is not None:
        n_int, ok = _count_int_indices(index)
        if ok:
            return array_of_rank(base.dtype, base.rank - n_int)
    if base.tag == "array" and base.shape is not None:
        # by the shape rule of indexing, whose sizes keep their symbols (x[1:]: n - 1)
        ruled = shape_rules.result_kind(operator.getitem, [base, index], [])
        if ruled is not None:
            return ruled
        # integer scalars index the same way whatever their value: evaluate with 0
        try:
            idx = _index_example(index)
        except _NoExample:
            return array(base.dtype, None)
        try:
            probe = np.zeros(base.shape, dtype=bool)
            result = probe[idx]
        except Exception:
            return array(base.dtype, None)
        shape = np.shape(result)
        return scalar(base.dtype) if shape == () else array(base.dtype, shape)
    return None


def _count_int_indices(k: Kind):
    """(number of integer entries less the `None`s, whether the index is only ints, slices,
    `None`s and `...`)."""
    if k.tag == "scalar" and k.dtype == "i":
        return 1, True
    if k.tag == "object" and k.known and isinstance(k.value, slice) or \
            k.known and k.value is Ellipsis or k == _A_SLICE:
        return 0, True
    if k.known and k.value is None:
        return -1, True  # (np.newaxis: an axis more)
    if k.tag == "object" and not k.known:
        return 0, False
    if k.tag == "tuple":
        total = 0
        for i in k.items:
            n, ok = _count_int_indices(i)
            if not ok:
                return 0, False
            total += n
        return total, True
    if k.known and isinstance(k.value, int) and not isinstance(k.value, bool):
        return 1, True
    return 0, False


def _index_example(k: Kind):
    if k.known:
        return k.value
    if k.tag == "scalar" and k.dtype == "i":
        return 0
    if k.tag == "tuple":
        return tuple(_index_example(i) for i in k.items)
    if k.tag == "list":  # x[[0, 0, 1]]: the entries taken have the list's shape
        return [_index_example(i) for i in k.items]
    if k.tag == "array" and k.shape is not None and k.dtype in ("i", "b"):
        return np.zeros(k.shape, dtype=np.int64 if k.dtype == "i" else bool)
    raise _NoExample


def _make_tuple_kind(args, kwargs):
    value = tuple(a.value for a in args) if all(a.known for a in args) else _UNSET
    return Kind("tuple", items=tuple(args), value=value if _hashable(value) else _UNSET)


def _make_list_kind(args, kwargs):
    return Kind("list", items=tuple(args))


def _slice_kind(args, kwargs):
    if all(a.known for a in args):
        return Kind("object", value=slice(*(a.value for a in args)))
    return _A_SLICE  # (bounds known at run time: still a slice, which keeps an axis)


_A_SLICE = Kind("object", view=("slice",))


def _attr_kind(attr):
    def rule(args, kwargs):
        (x,) = args
        if attr == "shape":
            if x.static_shape is not None:
                return kind_of_value(tuple(x.static_shape))
            if x.tag == "array" and x.rank is not None:  # (sizes unknown, their number not)
                return Kind("tuple", items=(INT,) * x.rank)
            return Kind("tuple", items=(), value=_UNSET) if x.tag != "unknown" else UNKNOWN
        if attr == "ndim":
            s = x.static_shape
            return scalar("i", len(s)) if s is not None else \
                scalar("i", x.rank) if x.tag == "array" and x.rank is not None else INT
        if attr == "size":
            s = x.static_shape
            return scalar("i", math.prod(s)) if s is not None else INT
        if attr == "T":
            if x.tag == "array" and x.shape is not None:
                return array(x.dtype, x.shape[::-1])
            return x
        if attr in ("real", "imag"):
            if x.tag in ("scalar", "array"):
                return Kind(x.tag, "f" if x.dtype == "c" else x.dtype, x.shape)
        return None
    return rule


def _len_kind(args, kwargs):
    (x,) = args
    s = x.static_shape
    if x.tag in ("tuple", "list") and x.items is not None:
        return scalar("i", len(x.items))
    if s:
        return scalar("i", s[0])
    return INT


def _unbroadcast_kind(args, kwargs):
    g, x = args
    if x.tag in ("scalar", "array"):
        return Kind(x.tag, g.dtype or x.dtype, x.shape, rank=x.rank)
    return x


def _broadcast_to_kind(args, kwargs):
    shape = args[1] if len(args) > 1 else kwargs.get("shape")
    if shape is None or shape.known or args[0].tag not in ("scalar", "array"):
        return None
    if shape.tag == "tuple":
        return array_of_rank(args[0].dtype or "f", len(shape.items))
    return None


def _like_kind(args, kwargs):
    return args[1] if args[1].tag != "unknown" else args[0]


def _zeros_like_kind(args, kwargs):
    x = args[0]
    if x.tag == "scalar":
        return FLOAT
    if x.tag == "array":
        return array("c" if x.dtype == "c" else "f", x.shape)
    return UNKNOWN


KIND_RULES = {
    operator.getitem: _getitem_kind,
    prims.take_slot: _getitem_kind,
    prims.make_tuple: _make_tuple_kind,
    prims.make_list: _make_list_kind,
    slice: _slice_kind,
    len: _len_kind,
    prims.unbroadcast: _unbroadcast_kind,
    prims.broadcast_like: _like_kind,
    prims.zeros_like: _zeros_like_kind,
    prims.new_tape: lambda a, k: OBJECT,
    prims.tape_push: lambda a, k: OBJECT,
    prims.tape_pop: lambda a, k: UNKNOWN,
    prims.tape_reader: lambda a, k: OBJECT,
    prims.tape_next: lambda a, k: UNKNOWN,
    prims.revolve.checkpoints: lambda a, k: OBJECT,
    prims.revolve.snapshot: lambda a, k: OBJECT,
    prims.revolve.restore: lambda a, k: OBJECT,
}

def _np_shape_kind(args, kwargs):
    s = args[0].static_shape if args else None
    if s is not None:
        return kind_of_value(tuple(s))
    nd = args[0].ndim if args else None
    return Kind("tuple", items=(INT,) * nd) if nd is not None else OBJECT


def _sum_to_shape_kind(args, kwargs):
    g, shape = args
    if shape.known:
        return array(g.dtype or "f", tuple(shape.value)) if shape.value else scalar(g.dtype or "f")
    return array(g.dtype or "f", None) if g.tag == "array" else UNKNOWN


KIND_RULES[prims.sum_to_shape] = _sum_to_shape_kind
KIND_RULES[np.broadcast_to] = _broadcast_to_kind


def _python_number_kind(letter):
    """float(x), int(x), complex(x): a Python number whatever `x` is (an array's one
    item); its value where `x`'s is known (evaluated)."""
    def rule(args, kwargs):
        if all(k.known for k in args) and all(k.known for k in kwargs.values()):
            return None
        return scalar(letter)
    return rule


for _f, _letter in ((float, "f"), (int, "i"), (complex, "c")):
    KIND_RULES[_f] = _python_number_kind(_letter)


def _constructor_kind(args, kwargs):
    """np.zeros(n) and friends when n is not known at compile time: the rank is."""
    if not args or args[0].known:
        return None
    shape = args[0]
    if kwargs.get("dtype") is not None or len(args) > 2:
        return None
    if shape.tag == "scalar" and shape.dtype == "i":
        return array_of_rank("f", 1)
    if shape.tag == "tuple":
        return array_of_rank("f", len(shape.items))
    return None


for _f in (np.zeros, np.ones, np.empty):
    KIND_RULES[_f] = _constructor_kind


def _reduction_kind(args, kwargs, fn=None):
    """A full reduction (no axis, no keepdims) of an array whose shape is known at run time
    only is a number: of the array's dtype for a max or min, an int for a sum of ints or
    bools, a float (or complex) for a mean, a float for a spread."""
    if not args or args[0].tag != "array" or args[0].shape is not None:
        return None
    axis = kwargs.get("axis", args[1] if len(args) > 1 else None)
    if axis is None or (axis.known and axis.value is None):
        if not (kwargs.get("keepdims") and kwargs["keepdims"].known and kwargs["keepdims"].value):
            dtype = args[0].dtype
            if fn in _KEEP_DTYPE and dtype in "bifcu":
                return scalar(dtype)
            if fn in _COUNTS and dtype in "biu":
                return scalar("i")
            if fn in _SPREADS:
                return FLOAT
            return scalar(dtype if dtype in "fc" else "f")
    return None


_KEEP_DTYPE = {np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin, np.ptp}
_COUNTS = {np.sum, np.prod, np.nansum, np.nanprod}
_SPREADS = {np.std, np.var, np.nanstd, np.nanvar}
for _f in (np.sum, np.mean, np.prod, np.median, np.nansum, np.nanmean, np.nanprod,
           np.nanmedian) + tuple(_KEEP_DTYPE) + tuple(_SPREADS):
    KIND_RULES[_f] = functools.partial(_reduction_kind, fn=_f)


def _np_ndim_kind(args, kwargs):
    # (known from the rank where the shape is not: a rule's branch on np.ndim is decided
    # while compiling, never left to the code run by backend="numba")
    n = args[0].ndim if args else None
    return scalar("i", n) if n is not None else INT


def _np_size_kind(args, kwargs):
    s = args[0].static_shape if args else None
    return scalar("i", math.prod(s)) if s is not None and len(args) == 1 else INT


def _index_add_kind(args, kwargs):
    acc, g = args[0], args[2]
    if acc.tag == "array":
        return Kind("array", "c" if "c" in (acc.dtype, g.dtype) else "f", acc.shape,
                    rank=acc.rank)
    return None


for _f in (prims.index_add, prims.index_add_inplace, prims.index_add_at,
           prims.index_add_functional):
    KIND_RULES[_f] = _index_add_kind


def _index_update_kind(args, kwargs):
    return args[0] if args[0].tag == "array" else None


for _f in (prims.index_update, prims.index_update_inplace, prims.add_inplace,
           prims.mul_inplace, prims.index_update_functional):
    KIND_RULES[_f] = _index_update_kind
def _norm_kind(args, kwargs):
    """np.linalg.norm's result has one shape for every valid `ord`. A float `ord` (np.inf)
    keeps no value in its kind, and an example float is no valid matrix order: the kind is
    that of ord=None."""
    x = args[0] if args else UNKNOWN
    if x.tag == "array" and x.shape is None:
        # of an array of a shape known at run time only (an item of a list a loop rebuilt):
        # a number where no axis is given, whatever the order
        axis = args[2] if len(args) > 2 else kwargs.get("axis")
        keepdims = args[3] if len(args) > 3 else kwargs.get("keepdims")
        if (axis is None or axis.known and axis.value is None) and \
                (keepdims is None or keepdims.known and not keepdims.value):
            return FLOAT
        return None
    ord_kind = args[1] if len(args) > 1 else kwargs.get("ord")
    if ord_kind is None or ord_kind.known or ord_kind.tag != "scalar":
        return None
    none = kind_of_value(None, keep_value=True)
    rest = [(n, k) for n, k in kwargs.items() if n != "ord"]
    return eval_kind(np.linalg.norm, [args[0], none] + list(args[2:]), rest)


KIND_RULES[np.linalg.norm] = _norm_kind
KIND_RULES[np.shape] = _np_shape_kind
KIND_RULES[np.ndim] = _np_ndim_kind
# the user's print, assert and f-strings (never evaluated on example values: no output)
KIND_RULES[prims.print_values] = lambda a, k: Kind("object", value=None)
KIND_RULES[prims.check_assertion] = lambda a, k: Kind("object", value=None)
KIND_RULES[prims.format_text] = lambda a, k: OBJECT
def _list_append_kind(args, kwargs):
    """`xs.append(v)` of a list whose items are known: one item more. Where the list's
    length is known only at run time (appended to in a loop whose trip count is not), its
    kind is unknown (see _infer_loop for a loop of a constant trip count)."""
    xs, v = args
    if xs.tag == "list":
        return Kind("list", items=xs.items + (v,))
    return UNKNOWN


KIND_RULES[prims.list_append] = _list_append_kind
# What a kind says of `isinstance(x, cls)` for the classes a kind can tell apart: True,
# False, or None (not decided: tested when the code runs). A kind does not tell float from
# np.float32 numbers, nor int from np.int64 or bool, nor a 0-d array from a NumPy number
# (the join of a number and an array is a 0-d array kind).
_NOT_A_CONTAINER = (float, int, complex, bool, str, dict)
_ISINSTANCE_BY_TAG = {
    "tuple": {tuple: True, list: False, np.ndarray: False, **dict.fromkeys(
        _NOT_A_CONTAINER, False)},
    "list": {list: True, tuple: False, np.ndarray: False, **dict.fromkeys(
        _NOT_A_CONTAINER, False)},
    # an array of one axis or more: a NumPy array (of no other library: see _isinstance_kind)
    "array": {np.ndarray: True, tuple: False, list: False, **dict.fromkeys(
        _NOT_A_CONTAINER, False)},
    # a 0-d array or a NumPy number
    "array0": {tuple: False, list: False, str: False, dict: False},
    # a Python or NumPy number: never an array (an array's kind is an array's)
    "scalar": {np.ndarray: False, tuple: False, list: False, str: False, dict: False},
}


def _isinstance_one(k: Kind, cls):
    if k.known and k.value is not _UNSET:
        return isinstance(k.value, cls)
    if k.family and k.tag in ("scalar", "array"):
        return None  # (an array of another library)
    tag = k.tag
    if tag == "array" and not (k.ndim or 0) >= 1:
        tag = "array0"
    # (a number's dtype letter does not tell its type either: where branches merge, a bool
    # and a float make a float kind)
    return _ISINSTANCE_BY_TAG.get(tag, {}).get(cls)


def _isinstance_kind(args, kwargs):
    """`isinstance(x, cls)` decided where x's kind settles it (a tuple is a tuple, not an
    array; an array of one axis or more is an np.ndarray), so that only the branch taken
    is differentiated; else a bool known when the code runs."""
    if len(args) != 2 or kwargs or not args[1].known:
        return scalar("b")
    classes = args[1].value if isinstance(args[1].value, tuple) else (args[1].value,)
    try:
        answers = [_isinstance_one(args[0], c) for c in classes]
    except TypeError:  # (a class that cannot be hashed or tested)
        return scalar("b")
    if any(a is True for a in answers):
        return scalar("b", True)
    if answers and all(a is False for a in answers):
        return scalar("b", False)
    return scalar("b")


KIND_RULES[isinstance] = _isinstance_kind
KIND_RULES[callable] = lambda a, k: scalar("b")
KIND_RULES[type] = lambda a, k: OBJECT
KIND_RULES[prims.as_list] = lambda a, k: UNKNOWN
KIND_RULES[np.size] = _np_size_kind


# -- np.random: draws made when the code runs (never on example values while compiling,
# which would move the user's random stream); the shape comes from the size argument
def _size_shape(size: Kind):
    if size.known and size.value is None:
        return ()
    if size.known and isinstance(size.value, int):
        return (size.value,)
    if size.known and isinstance(size.value, tuple) and \
            all(isinstance(d, int) for d in size.value):
        return tuple(size.value)
    return None


def _random_kind(dtype: str, size_at: int, params: int):
    def kind(args, kwargs):
        size = kwargs.get("size", args[size_at] if len(args) > size_at else None)
        if size is None:  # no size: the parameters' broadcast shape
            shapes = [a.static_shape for a in args[:params]] + [
                v.static_shape for k, v in kwargs.items() if k != "dtype"]
            if any(sh is None for sh in shapes):
                return UNKNOWN
            shape = broadcast_shapes(*shapes) if shapes else ()
        else:
            shape = _size_shape(size)
            if shape is None:
                return UNKNOWN
        return scalar(dtype) if shape == () else array(dtype, shape)
    return kind


def _dims_kind(args, kwargs):  # rand(d0, d1, ...), randn(...)
    if not all(a.known and isinstance(a.value, int) for a in args):
        return UNKNOWN
    shape = tuple(a.value for a in args)
    return scalar("f") if shape == () else array("f", shape)


for _f in (np.random.rand, np.random.randn):
    KIND_RULES[_f] = _dims_kind
for _f in (np.random.random, np.random.random_sample, np.random.standard_normal):
    KIND_RULES[_f] = _random_kind("f", 0, 0)
for _f in (np.random.uniform, np.random.normal):
    KIND_RULES[_f] = _random_kind("f", 2, 2)
KIND_RULES[np.random.randint] = _random_kind("i", 2, 0)
KIND_RULES[np.random.seed] = lambda a, k: Kind("object", value=None)

for _a in ("T", "shape", "ndim", "size", "real", "imag", "dtype"):
    KIND_RULES[prims.Attr(_a)] = _attr_kind(_a)


# what reads only an array's shape or type: a Python value even for a Dask array
SHAPE_READERS = {len, np.shape, np.ndim, np.size, isinstance, type, callable,
                 prims.Attr("shape"), prims.Attr("ndim"), prims.Attr("size"), prims.Attr("dtype")}


def infer_kinds(fn: Function, arg_kinds: dict, known: dict | None = None) -> dict:
    """Map every variable of `fn` to its Kind, given the kinds of the parameters.

    `known`: kinds already inferred for some of the variables, by the same statements (a
    derivative's IR keeps its primal's statements, variables included); those are reused.
    """
    kinds: dict = dict(arg_kinds)
    infer_block(fn.body, kinds, known)
    return kinds


def atom_kind(a, kinds: dict) -> Kind:
    if type(a) is Var:
        return kinds.get(a, UNKNOWN)
    v = a.value
    if isinstance(v, prims.ZeroValue):
        return v.kind
    return kind_of_value(v)


def infer_block(block: Block, kinds: dict, known: dict | None = None):
    get = kinds.get
    for s in block.stmts:
        if type(s) is Call:
            fn = s.fn
            if fn is not prims.tape_push and fn is not prims.tape_pop and \
                    fn is not prims.tape_reader and fn is not prims.tape_next:
                # (infer_stmt's common case, without the call: one per statement)
                t = s.target
                if known is not None and t in known:
                    kinds[t] = known[t]
                    continue
                kinds[t] = eval_kind(
                    fn, [get(a, UNKNOWN) if type(a) is Var else atom_kind(a, kinds)
                         for a in s.args],
                    [(n, atom_kind(a, kinds)) for n, a in s.kwargs] if s.kwargs else [])
                continue
        infer_stmt(s, kinds, known)


def infer_stmt(s, kinds: dict, known: dict | None = None):
    if type(s) is Call:
        fn = s.fn
        if fn is not prims.tape_push and fn is not prims.tape_pop and \
                fn is not prims.tape_reader and fn is not prims.tape_next:
            # (the common statement first, without pattern matching: the last case below;
            # a variable's kind read directly, as atom_kind does)
            kinds[s.target] = eval_kind(
                fn, [kinds.get(a, UNKNOWN) if type(a) is Var else atom_kind(a, kinds)
                     for a in s.args],
                [(n, atom_kind(a, kinds)) for n, a in s.kwargs] if s.kwargs else [])
            return
    match s:
        case Call(target=t, fn=fn, args=args) if fn is prims.tape_push:
            # a tape yields what was pushed onto it (pushes precede pops in program order)
            key = ("tape", args[0])
            k = _forget_value(atom_kind(args[1], kinds))
            kinds[key] = join(kinds[key], k) if key in kinds else k
            kinds[t] = OBJECT
        case Call(target=t, fn=fn, args=args) if fn is prims.tape_pop:
            kinds[t] = kinds.get(("tape", args[0]), UNKNOWN)
        case Call(target=t, fn=fn, args=args) if fn is prims.tape_reader:
            kinds[t] = OBJECT
            kinds[("reader", t)] = args[0]
        case Call(target=t, fn=fn, args=args) if fn is prims.tape_next:
            kinds[t] = kinds.get(("tape", kinds.get(("reader", args[0]))), UNKNOWN)
        case Call(target=t, fn=fn, args=args, kwargs=kw):
            kinds[t] = eval_kind(fn, [atom_kind(a, kinds) for a in args],
                                 [(n, atom_kind(a, kinds)) for n, a in kw])
        case If(cond=c, then=then, orelse=orelse, outputs=outs):
            infer_block(then, kinds, known)
            infer_block(orelse, kinds, known)
            ck = atom_kind(c, kinds)
            taken = None
            if ck.known:
                try:
                    taken = then if bool(ck.value) else orelse
                except Exception:
                    taken = None
            for i, o in enumerate(outs):
                if taken is not None:
                    kinds[o] = atom_kind(taken.results[i], kinds)
                else:
                    kinds[o] = join(atom_kind(then.results[i], kinds),
                                    atom_kind(orelse.results[i], kinds))
        case ForRange(index=i, params=ps, inits=inits, body=body, outputs=outs):
            kinds[i] = INT
            _infer_loop(ps, inits, [body], body, outs, kinds, known)
            _exact_loop_outputs(s, kinds, known)
        case While(params=ps, inits=inits, cond=cond, body=body, outputs=outs):
            _infer_loop(ps, inits, [cond, body], body, outs, kinds, known)


def _infer_loop(params, inits, blocks, body, outs, kinds, known=None):
    current = [_forget_value(atom_kind(a, kinds)) for a in inits]
    for _ in range(4):
        for p, k in zip(params, current):
            kinds[p] = k
        for b in blocks:
            infer_block(b, kinds, known)
        nxt = [join(c, _forget_value(atom_kind(r, kinds))) for c, r in zip(current, body.results)]
        if nxt == current:
            break
        current = nxt
    else:
        current = [_widen(k) for k in current]
        for p, k in zip(params, current):
            kinds[p] = k
        for b in blocks:
            infer_block(b, kinds, known)
    for o, k in zip(outs, current):
        kinds[o] = k


# a loop of at most this many iterations, known while compiling, is followed iteration by
# iteration for the kinds of what it builds (see _exact_loop_outputs)
EXACT_TRIPS = 64


def _trip_count(s: ForRange) -> int | None:
    bounds = []
    for a in (s.start, s.stop, s.step):
        k = atom_kind(a, {}) if type(a) is not Var else UNKNOWN
        if not (k.known and type(k.value) is int):
            return None
        bounds.append(k.value)
    if bounds[2] == 0:
        return None
    return len(range(*bounds))


def _exact_loop_outputs(s: ForRange, kinds: dict, known=None):
    """The outputs of a loop of a constant trip count whose kinds the fixed point lost (a
    list grown by `append` in a comprehension, `[x for i in range(4)]`: a list of 4 items of
    x's kind), followed iteration by iteration. Their kinds inside the loop stay the joined
    ones (the body is one code for every iteration)."""
    if s.over is not None or not any(kinds.get(o, UNKNOWN).tag == "unknown"
                                     for o in s.outputs):
        return
    if known is not None and all(o in known for o in s.outputs):
        # (the primal's loop, in a derivative's IR: its body's kinds are the joined ones)
        for o in s.outputs:
            if kinds.get(o, UNKNOWN).tag == "unknown":
                kinds[o] = known[o]
        return
    n = _trip_count(s)
    if n is None or n > EXACT_TRIPS:
        return
    joined = [kinds[p] for p in s.params]
    current = [_forget_value(atom_kind(a, kinds)) for a in s.inits]
    for _ in range(n):
        for p, k in zip(s.params, current):
            kinds[p] = k
        infer_block(s.body, kinds, known)
        current = [_forget_value(atom_kind(r, kinds)) for r in s.body.results]
    for p, k in zip(s.params, joined):  # the body's kinds: those of every iteration
        kinds[p] = k
    infer_block(s.body, kinds, known)
    for o, k in zip(s.outputs, current):
        if kinds.get(o, UNKNOWN).tag == "unknown" and k.tag == "list":
            kinds[o] = k


def _forget_value(k: Kind) -> Kind:
    """Loop-carried values change between iterations: keep the kind, drop the value."""
    if k.known and k.tag == "scalar":
        return scalar(k.dtype)
    if k.known and k.tag == "tuple":
        return Kind("tuple", items=tuple(_forget_value(i) for i in k.items))
    return k


def _widen(k: Kind) -> Kind:
    if k.tag == "array":
        return of_family(array_of_rank(k.dtype, k.ndim) if k.ndim else array(k.dtype, None),
                         k.family)
    if k.tag == "scalar":
        return k
    return UNKNOWN
