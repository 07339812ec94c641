"""What lowering knows of values that are NumPy arrays or dtypes, facts of the compile: an
array's dtype letter and number of axes (`if x.ndim == 1:`, `isinstance(x, np.ndarray)`,
`issparse(x)` decided while compiling), and which values are dtypes.

Arguments bring these facts (their kinds); elementwise arithmetic and conversions carry them
on, so a library helper called on `np.log1p(y)` knows as much as one called on `y`.
"""

from __future__ import annotations

import operator

import numpy as np

from s2sad.frontend.values import Static, StaticSeq
from s2sad.ir import prims
from s2sad.ir.nodes import Const, Var

_LETTERS = {"f": "f", "c": "c", "i": "i", "u": "i", "b": "b"}
_STAND_IN = {"f": np.dtype(np.float64), "c": np.dtype(np.complex128),
             "i": np.dtype(np.int64), "b": np.dtype(np.bool_)}
_OPERATOR_UFUNCS = {
    operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
    operator.truediv: np.true_divide, operator.pow: np.power, operator.neg: np.negative,
    operator.pos: np.positive, operator.abs: np.absolute,
}


NUMBER = "number"  # (result_fact: a Python or NumPy number, not an array)
_UNKNOWN = object()  # (an item of an index known only where the code runs)


def array_fact(lw, value):
    """(dtype letter, number of axes) of a value lowering knows to be a NumPy array of that
    many axes (0: a 0-d array argument), else None."""
    if isinstance(value, Var):
        return lw.param_ranks.get(value)
    if isinstance(value, Const) and type(value.value) is np.ndarray and \
            value.value.dtype.kind in _LETTERS:
        return (_LETTERS[value.value.dtype.kind], value.value.ndim)  # (a constant array)
    return None


def dtype_letter(lw, value):
    """The kind letter ("f", "c", "i", "b") of a value known to be a NumPy dtype or scalar
    type (np.float64, float, np.dtype("f8"), x.dtype, np.result_type(...)), "" where only
    the code that runs knows it, None for a value not known to be a dtype."""
    if isinstance(value, Var):
        return lw.dtype_values.get(value)
    if isinstance(value, (Static, Const)):
        obj = value.obj if isinstance(value, Static) else value.value
        if isinstance(obj, np.dtype) or (isinstance(obj, type) and (
                issubclass(obj, np.generic) or obj in (float, int, complex, bool))):
            if isinstance(obj, type) and obj in _ABSTRACT:  # (np.inexact: no one dtype;
                return None                                  # NumPy < 2.3 warns, then refuses)
            try:
                return _LETTERS.get(np.dtype(obj).kind)
            except TypeError:
                return None
    return None


_ABSTRACT = (np.generic, np.number, np.inexact, np.floating, np.complexfloating, np.integer,
             np.signedinteger, np.unsignedinteger, np.flexible, np.character)

_CONVERSIONS = (np.asarray, np.asanyarray, np.array, np.ascontiguousarray,
                np.asfortranarray, np.copy, prims.astype) + \
    ((np.astype,) if hasattr(np, "astype") else ())  # (NumPy 2's np.astype(x, dtype))
_SAME_RANK = (np.transpose, prims.Attr("T"))
_WRITES = (prims.index_update, prims.index_add, prims.filled_diagonal)
_SCANS = (np.cumsum, np.cumprod, np.diff) + tuple(
    getattr(np, n) for n in ("cumulative_sum", "cumulative_prod") if hasattr(np, n))
_REDUCTIONS = (np.sum, np.mean, np.max, np.min, np.prod, np.std, np.var, np.amax, np.amin)
_MATH_FLOATS = frozenset({
    "sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "pow", "sin", "cos", "tan",
    "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
    "erf", "erfc", "gamma", "lgamma", "hypot", "fabs", "copysign", "fmod", "cbrt", "exp2",
    "radians", "degrees"})


def result_fact(lw, fn, args, kwargs):
    """The fact of the result of a call of arrays with facts: a conversion (np.asarray(x,
    dtype=d), x.astype(d)), a reshape to a tuple of constants, a transpose, or an
    elementwise function (a ufunc, an arithmetic operator) of arrays and Python numbers (an
    array of the broadcast rank, in the dtype NumPy's promotion gives). None where an
    operand is unknown, or the result is 0-d (a NumPy scalar, not an array)."""
    try:
        shaped = fn in _CONVERSIONS or fn in _SAME_RANK or fn is np.reshape
    except TypeError:
        return None
    if shaped:
        return _shaped_fact(lw, fn, args, kwargs) or _number_conversion(lw, fn, args, kwargs)
    if any(fn is r for r in _REDUCTIONS):
        return _reduced_fact(lw, fn, args, kwargs)
    if any(fn is r for r in _SCANS):
        return _scan_fact(lw, fn, args, kwargs)
    if fn is operator.getitem:
        return _indexed_fact(lw, args)
    if fn is np.einsum:
        return _einsum_fact(lw, args, kwargs)
    if any(fn is p for p in (operator.matmul, np.matmul, np.dot)):
        return _product_fact(lw, fn, args, kwargs)
    if any(fn is w for w in _WRITES) and args:
        return array_fact(lw, args[0])  # (a write into a copy: its shape and dtype)
    if getattr(fn, "__module__", None) == "math" and getattr(fn, "__name__", "") in _MATH_FLOATS:
        return NUMBER  # (a Python float)
    ufunc = _OPERATOR_UFUNCS.get(fn) if not isinstance(fn, np.ufunc) else fn
    if ufunc is None or ufunc.nout != 1 or kwargs:
        return None
    dtypes, rank = [], 0
    for a in args:
        fact = array_fact(lw, a)
        if fact is not None and fact[0] in _STAND_IN:
            dtypes.append(_STAND_IN[fact[0]])
            rank = max(rank, fact[1])
        elif isinstance(a, Const) and type(a.value) in (int, float, complex):
            dtypes.append(type(a.value))  # (weak: the array's dtype wins)
        elif isinstance(a, Var) and a in lw.numbers:
            dtypes.append(float)  # (a float; an array's float dtype wins, as NumPy's does)
        else:
            return None
    if rank == 0 or len(dtypes) != ufunc.nin:
        return None
    try:
        out = ufunc.resolve_dtypes(tuple(dtypes) + (None,))[-1]
    except (TypeError, ValueError, AttributeError):
        return None
    letter = _LETTERS.get(out.kind)
    return None if letter is None else (letter, rank)


def known_real(lw, value) -> bool:
    """Is `value` known to hold real numbers (an array of a real dtype with a fact, a real
    Python constant, a number computed from those)? np.iscomplex of it is all False."""
    if isinstance(value, Const):
        return type(value.value) in (int, float, bool)
    if not isinstance(value, Var):
        return False
    fact = array_fact(lw, value)
    return (fact is not None and fact[0] in "fib") or value in lw.real_numbers


def is_real_number(lw, fn, args, kwargs) -> bool:
    """Is the result of this call a real number (0-d) lowering knows of: an entry of a real
    array with a fact (`params[-1]`), an elementwise function of real numbers and arrays
    whose NumPy result dtype is real (np.exp(params[-1]))?"""
    if fn is operator.getitem and len(args) == 2 and isinstance(args[1], Const):
        fact = array_fact(lw, args[0])
        index = args[1].value if isinstance(args[1].value, tuple) else (args[1].value,)
        return fact is not None and fact[0] in "fib" and len(index) == fact[1] and \
            all(type(i) is int for i in index)
    try:
        ufunc = _OPERATOR_UFUNCS.get(fn) if not isinstance(fn, np.ufunc) else fn
    except TypeError:
        return False
    if ufunc is None or ufunc.nout != 1 or kwargs or len(args) != ufunc.nin or \
            not all(known_real(lw, a) for a in args):
        return False
    try:
        out = ufunc.resolve_dtypes(tuple(np.dtype(np.float64) for _ in args) + (None,))[-1]
    except (TypeError, ValueError, AttributeError):
        return False
    return out.kind == "f"


def known_isinstance(lw, value, classes):
    """isinstance(value, classes) of a value known to be a NumPy array of at least one axis
    (a 0-d one may be a NumPy scalar), of type np.ndarray itself (a derivative refuses
    arguments of its subclasses, and NumPy's functions of an ndarray return one): whether
    ndarray is one of `classes` or derives from one. None for anything else."""
    fact = array_fact(lw, value)
    if fact is None or fact[1] == 0:
        return None
    classes = classes if isinstance(classes, tuple) else (classes,)
    if not all(isinstance(c, type) for c in classes):
        return None
    return any(issubclass(np.ndarray, c) for c in classes)


def known_hasattr(lw, value, name):
    """hasattr(value, name) of such an array: whether np.ndarray has the attribute (an
    array has no attributes of its own), else None."""
    fact = array_fact(lw, value)
    if fact is None or fact[1] == 0 or not isinstance(name, str):
        return None
    return hasattr(np.ndarray, name)


def _shaped_fact(lw, fn, args, kwargs):
    fact = array_fact(lw, args[0]) if args else None
    if fact is None:
        return None
    letter, rank = fact
    options = dict(kwargs)
    if fn is np.reshape:
        shape = args[1] if len(args) > 1 else options.get("shape", options.get("newshape"))
        if not (isinstance(shape, Const) and isinstance(shape.value, (int, tuple))):
            return None
        rank = len(shape.value) if isinstance(shape.value, tuple) else 1
    elif fn is np.transpose and (len(args) > 1 or kwargs):
        return None  # (axes given: the same rank, but keep to the plain transpose)
    elif fn in _CONVERSIONS:
        dtype = args[1] if len(args) > 1 and fn is not np.copy else options.get("dtype")
        if dtype is not None and not (isinstance(dtype, Const) and dtype.value is None):
            letter = dtype_letter(lw, dtype)
        if set(options) - {"dtype", "order", "copy", "subok", "device"} or len(args) > 2 or \
                not _on_the_cpu(options.get("device")):
            return None
    return (letter, rank) if letter and rank > 0 else None


def _on_the_cpu(device) -> bool:
    """device= of np.asarray (NumPy 2): None or "cpu", NumPy's one device."""
    return device is None or isinstance(device, Const) and device.value in (None, "cpu")


def _number_conversion(lw, fn, args, kwargs):
    """np.asarray(0, dtype=d) (scikit-learn's `xp.asarray(0, device=..., dtype=x.dtype)`)
    of a Python number and a dtype of known letter: a 0-d array of that dtype."""
    options = dict(kwargs)
    if fn not in (np.asarray, np.array) or len(args) != 1 or \
            not isinstance(args[0], Const) or type(args[0].value) not in (bool, int, float) or \
            set(options) - {"dtype", "device"} or not _on_the_cpu(options.get("device")):
        return None
    letter = dtype_letter(lw, options["dtype"]) if "dtype" in options else None
    return (letter, 0) if letter else None


def _reduced_fact(lw, fn, args, kwargs):
    """A reduction along constant axes of an array with a fact: one axis fewer per axis
    (as many with keepdims=True); a NumPy number over every axis."""
    fact = array_fact(lw, args[0]) if args else None
    options = dict(kwargs)
    if fact is None or len(args) > 2 or set(options) - {"axis", "keepdims"}:
        return None
    axis = args[1] if len(args) > 1 else options.get("axis", Const(None))
    keepdims = options.get("keepdims", Const(False))
    if not (isinstance(axis, Const) and isinstance(keepdims, Const)) or \
            type(keepdims.value) is not bool:
        return None
    letter, rank = fact
    if fn in (np.mean, np.std, np.var) and letter in ("i", "b"):
        letter = "f"
    elif fn in (np.sum, np.prod) and letter == "b":
        letter = "i"
    if keepdims.value:
        return (letter, rank)
    axes = axis.value
    n = rank if axes is None else len(axes) if isinstance(axes, tuple) else 1
    return (letter, rank - n) if rank - n > 0 else NUMBER


def _scan_fact(lw, fn, args, kwargs):
    """np.cumsum, np.cumprod (np.cumulative_sum, np.cumulative_prod) and np.diff of a float
    array with a fact along a constant axis: as many axes (cumsum along axis=None: one, the
    flattened array)."""
    fact = array_fact(lw, args[0]) if args else None
    options = dict(kwargs)
    differences = fn is np.diff
    allowed = {"n", "axis"} if differences else {"axis", "dtype", "include_initial"}
    if fact is None or fact[0] != "f" or len(args) > 1 or set(options) - allowed:
        return None
    axis = options.get("axis", Const(-1 if differences else None))
    dtype = options.get("dtype", Const(None))
    if not (isinstance(axis, Const) and isinstance(dtype, Const) and dtype.value is None):
        return None
    return ("f", 1 if axis.value is None else fact[1])


def _indexed_fact(lw, args):
    """x[i] of an array with a fact by a constant basic index (integers, slices, None,
    Ellipsis): an axis fewer per integer, one more per None; by a slice made in the code
    (x[:n]): as many axes."""
    fact = array_fact(lw, args[0])
    if fact is None or len(args) != 2:
        return None
    if isinstance(args[1], Var) and args[1] in lw.slices:
        return fact  # (w[:n]: a slice of the first axis)
    if isinstance(args[1], Var) and args[1] in lw.index_tuples:
        # a tuple of slices made in the code (y[slice1], slice1 = (slice(None), slice(1, None)))
        index = tuple(slice(None) if isinstance(i, Var) and i in lw.slices else
                      i.value if isinstance(i, Const) else _UNKNOWN
                      for i in lw.index_tuples[args[1]])
    elif isinstance(args[1], Const):
        index = args[1].value if isinstance(args[1].value, tuple) else (args[1].value,)
    else:
        return None
    if not all(i is None or i is Ellipsis or type(i) in (int, slice) for i in index) or \
            sum(i is Ellipsis for i in index) > 1:
        return None
    used = sum(type(i) in (int, slice) for i in index)
    if used > fact[1]:
        return None  # (too many indices: NumPy raises)
    rank = fact[1] - sum(type(i) is int for i in index) + sum(i is None for i in index)
    return (fact[0], rank) if rank > 0 else None


def _einsum_fact(lw, args, kwargs):
    """np.einsum("ij,ij->i", x, y) of float arrays with facts: as many axes as the output's
    subscripts, a number for none."""
    if kwargs or not args or not isinstance(args[0], Const) or \
            not isinstance(args[0].value, str):
        return None
    spec = args[0].value.replace(" ", "")
    if "->" not in spec or "." in spec:
        return None
    facts = [array_fact(lw, a) for a in args[1:]]
    if not facts or any(f is None or f[0] != "f" for f in facts) or \
            len(spec.split("->")[0].split(",")) != len(facts):
        return None
    rank = len(spec.split("->")[1])
    return ("f", rank) if rank else NUMBER


def _product_fact(lw, fn, args, kwargs):
    """a @ b and np.dot(a, b) of float arrays with facts: matmul's batched rank, dot's
    contraction of a's last axis with b's second-to-last; a number for two vectors."""
    facts = [array_fact(lw, a) for a in args]
    if kwargs or len(facts) != 2 or any(f is None or f[0] != "f" or f[1] == 0 for f in facts):
        return None
    n, m = facts[0][1], facts[1][1]
    if fn is np.dot:
        rank = n - 1 if m == 1 else n + m - 2
    else:
        rank = max(n, m) if min(n, m) >= 2 else n + m - 2
    return ("f", rank) if rank > 0 else NUMBER


# ---------------------------------------------------------------------------------------
# exact dtypes (float32 or float64, not only "f"): an argument's is a fact of the compile
# (the dispatcher keys on it: Kind.precision); conversions, indexing and arithmetic carry it
# ---------------------------------------------------------------------------------------

def letter_of(dtype) -> str | None:
    """The kind letter of a NumPy dtype ("f" for float32 and float64)."""
    return _LETTERS.get(dtype.kind)


def exact_dtype(lw, value):
    """The np.dtype a value lowering knows to be a dtype stands for exactly: np.float32,
    float, np.dtype("f4"), "float32", x.dtype of an array of known precision; else None."""
    if isinstance(value, Var):
        return lw.precisions.get(value) if value in lw.dtype_values else None
    if isinstance(value, (Static, Const)):
        obj = value.obj if isinstance(value, Static) else value.value
        if isinstance(obj, np.dtype):
            return obj
        if isinstance(obj, type) and (issubclass(obj, np.generic) or
                                      obj in (float, int, complex, bool)) and \
                obj not in _ABSTRACT:
            try:
                return np.dtype(obj)
            except TypeError:
                return None
    return None


def array_precision(lw, value):
    """The exact dtype of a value known to be a NumPy array of known precision, else None."""
    if isinstance(value, Var):
        return lw.precisions.get(value) if value in lw.param_ranks else None
    if isinstance(value, Const) and type(value.value) is np.ndarray:
        return value.value.dtype
    return None


_SAME_DTYPE = _SAME_RANK + _WRITES + (np.reshape, operator.getitem, np.max, np.min,
                                      np.amax, np.amin)


def result_precision(lw, fn, args, kwargs):
    """The exact dtype of an array result_fact knows of, where its operands' are known: a
    conversion's (to a dtype known exactly, or its operand's), its operand's for indexing,
    reshaping, writing, a maximum; NumPy's promotion for a ufunc or an arithmetic operator
    (of arrays of known precision and Python numbers, which do not widen it) and for
    products; a float sum's or mean's own. None where only the code that runs knows it."""
    try:
        conversion, same = fn in _CONVERSIONS, fn in _SAME_DTYPE  # (Attr("T") by equality)
    except TypeError:
        return None
    options = dict(kwargs)
    if conversion:
        dtype = args[1] if len(args) > 1 and fn is not np.copy else options.get("dtype")
        if dtype is not None and not (isinstance(dtype, Const) and dtype.value is None):
            return exact_dtype(lw, dtype)
        return array_precision(lw, args[0]) if args else None
    if same and args:
        return array_precision(lw, args[0])
    if any(fn is f for f in (np.sum, np.mean, np.prod)) and args and "dtype" not in options:
        p = array_precision(lw, args[0])
        return p if p is not None and p.kind in "fc" else None
    if fn is np.einsum or any(fn is f for f in (operator.matmul, np.matmul, np.dot)):
        operands = args[1:] if fn is np.einsum else args
        ps = [array_precision(lw, a) for a in operands]
        return np.result_type(*ps) if ps and None not in ps and not kwargs else None
    ufunc = _OPERATOR_UFUNCS.get(fn) if not isinstance(fn, np.ufunc) else fn
    if ufunc is None or ufunc.nout != 1 or kwargs or len(args) != ufunc.nin:
        return None
    dtypes = []
    for a in args:
        p = array_precision(lw, a)
        if p is not None:
            dtypes.append(p)
        elif isinstance(a, Const) and type(a.value) in (int, float, complex):
            dtypes.append(type(a.value))  # (a Python number: weak, the array's wins)
        else:
            return None
    try:
        return ufunc.resolve_dtypes(tuple(dtypes) + (None,))[-1]
    except (TypeError, ValueError, AttributeError):
        return None


def known_dtype_test(lw, fn, args):
    """`X.dtype == np.float32`, `X.dtype != xp.float32`, `dtype in (np.float64, np.float32)`
    of dtypes known exactly: the answer, a fact of the compile; else None."""
    if len(args) != 2:
        return None
    if fn is operator.eq or fn is operator.ne:
        a, b = (exact_dtype(lw, v) for v in args)
        if a is None or b is None or not any(isinstance(v, Var) for v in args):
            return None
        return (a == b) == (fn is operator.eq)
    if fn is operator.contains:
        item = exact_dtype(lw, args[1]) if isinstance(args[1], Var) else None
        container = args[0]
        if item is None:
            return None
        if isinstance(container, Const) and type(container.value) in (tuple, list):
            items = [Const(v) for v in container.value]
        elif isinstance(container, Static) and type(container.obj) in (tuple, list):
            items = [Const(v) for v in container.obj]
        elif isinstance(container, StaticSeq):
            items = list(container.items)
        else:
            return None
        dtypes = [exact_dtype(lw, v) for v in items]
        if None in dtypes:
            return None
        return any(item == d for d in dtypes)
    return None
