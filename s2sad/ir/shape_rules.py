"""Shape rules: the result kind (rank, shape, dtype letter) of a primitive worked out from
its operands' kinds alone, never by running it on stand-in data (abstract evaluation, as
JAX's ShapedArray rules do).

`eval_kind` (kinds.py) asks `result_kind` first; a rule answers for the families real
losses use (reductions, contractions, basic indexing, shape operations, constructors,
np.where, np.clip) and says None wherever it is not sure (an option whose value is not
known while compiling, a keyword it does not model, an operand of another library, a call
NumPy would refuse): the stand-in path then decides as before. A wrong answer here is a
silent wrong derivative, so every rule is checked against NumPy's own result kinds on
random shapes (tests/ir/test_shape_rules.py).

A result is NumPy's: a NumPy number (kind "scalar") where NumPy returns one (a full
reduction, `x @ y` of vectors, `x[0]` of a vector), a 0-d array (kind "array" of shape
()) where NumPy returns that (np.where of numbers, np.tensordot over every axis). Dtypes
are dtype letters ('b', 'i', 'f', 'c'), found with NumPy's promotion on stand-in dtypes
(int64, float64, complex128), never on data.
"""

from __future__ import annotations

import operator

import numpy as np

from s2sad.ir.dims import Dim, broadcast_shapes, slice_length
from s2sad.ir.kind_values import _LETTER_DTYPES, Kind, _dtype_letter, array, scalar

SHAPE_RULES: dict = {}
# raise a rule's own errors instead of answering None (the tests set it: an error in a rule
# is a bug to see, where a user's compile falls back to the stand-in path)
STRICT = False


class _Unsure(Exception):
    """The rule cannot tell: the stand-in path decides."""


def result_kind(fn, arg_kinds, kwarg_kinds) -> Kind | None:
    """The result kind of `fn` on operands of these kinds by its shape rule, or None where
    it has none or is not sure."""
    try:
        rule = SHAPE_RULES.get(fn)
    except TypeError:  # (not hashable)
        return None
    if rule is None:
        rule = _late_rule(fn)
        if rule is None:
            return None
    kwargs = dict(kwarg_kinds)
    try:
        out = rule(list(arg_kinds), kwargs)
    except _Unsure:
        return None
    except Exception:
        if STRICT:
            raise
        return None
    if out is not None and out.tag == "scalar" and \
            all(k.known for k in arg_kinds) and all(k.known for k in kwargs.values()):
        return None  # (a number computed from constants: its value is known, see _eval_kind)
    return out


def _late_rule(fn):
    """The rule of a function of a library s2sad does not import itself (scipy.special's
    logsumexp), registered when first seen."""
    if getattr(fn, "__name__", None) == "logsumexp" and \
            (getattr(fn, "__module__", None) or "").startswith("scipy.special"):
        # (of bools: SciPy before 1.16 subtracts them, an error; left to the stand-ins)
        no_bools = {k: v for k, v in _MEAN.items() if k != "b"}
        SHAPE_RULES[fn] = _reduction("logsumexp", ("a", "axis", "b", "keepdims", "return_sign"),
                                     no_bools, free={"b": None, "return_sign": False},
                                     sized=True)
        return SHAPE_RULES[fn]
    return None


def _register(*fns):
    def deco(rule):
        for f in fns:
            SHAPE_RULES[f] = rule
        return rule
    return deco


# -- reading operands and options ----------------------------------------------------------

_MISSING = object()


def _bind(args, kwargs, names, required=1):
    """{parameter name: kind} of a call by NumPy's parameter names; unsure of a keyword the
    function does not take, of a parameter given twice, of too many or too few."""
    if len(args) > len(names) or len(args) < required:
        raise _Unsure
    bound = dict(zip(names, args))
    for n, k in kwargs.items():
        if n not in names or n in bound:
            raise _Unsure
        bound[n] = k
    if any(n not in bound for n in names[:required]):
        raise _Unsure
    return bound


def _value(bound, name, default=None):
    """The value of an option known while compiling (its default where it is not given)."""
    k = bound.get(name, _MISSING)
    if k is _MISSING:
        return default
    return _const(k)


def _const(k: Kind):
    """The value of a kind known while compiling: a constant, or a tuple or list made in
    the function of known items (`[[0, 1], [1, 0]]`)."""
    if k.known:
        return k.value
    if k.tag in ("tuple", "list") and not k.view:
        items = [_const(i) for i in k.items]
        return tuple(items) if k.tag == "tuple" else items
    raise _Unsure


def _absent(bound, name, *allowed):
    """Unsure unless option `name` is not given or is given one of the `allowed` values."""
    if name in bound and (not bound[name].known or not any(
            bound[name].value is a or (type(bound[name].value) is type(a) and
                                       bound[name].value == a) for a in allowed)):
        raise _Unsure


def _operand(k: Kind):
    """(shape, dtype letter, is an array) of a NumPy array or number; unsure of anything
    else (a tuple, an array of another library, a shape known only at run time)."""
    if k.family or k.dtype not in ("b", "i", "f", "c"):
        raise _Unsure
    if k.tag == "array" and k.shape is not None and all(type(n) is int or type(n) is Dim
                                                        for n in k.shape):
        return k.shape, k.dtype, True
    if k.tag == "scalar":
        return (), k.dtype, False
    raise _Unsure


def _array(k: Kind):
    """(shape, dtype letter) of an array (a NumPy number: unsure)."""
    shape, dt, is_array = _operand(k)
    if not is_array:
        raise _Unsure
    return shape, dt


def _int(v) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise _Unsure
    return v if type(v) is Dim else int(v)  # (a symbolic size stays one)


def _ints(k: Kind, allow_int=True) -> tuple:
    """The ints of a sequence (a tuple or list whose items are known), or of one int."""
    if k.known and not isinstance(k.value, (tuple, list)):
        if not allow_int:
            raise _Unsure
        return (_int(k.value),)
    if k.known:
        return tuple(_int(v) for v in k.value)
    if k.tag in ("tuple", "list") and all(i.known for i in k.items):
        return tuple(_int(i.value) for i in k.items)
    raise _Unsure


def _shape_value(v) -> tuple:
    """A shape argument's value (an int or a sequence of ints, each >= 0)."""
    dims = (_int(v),) if not isinstance(v, (tuple, list)) else tuple(_int(d) for d in v)
    if any(d < 0 for d in dims):
        raise _Unsure
    return dims


def _shape_arg(k: Kind) -> tuple:
    if k.known:
        return _shape_value(k.value)
    return _shape_value(_ints(k))


def _axis(a, ndim: int) -> int:
    a = _int(a)
    if not -ndim <= a < ndim:
        raise _Unsure  # (NumPy's AxisError where the code runs)
    return a % ndim


def _axes(axis, ndim: int, allow_tuple=True) -> tuple:
    """The axes an `axis` option names, each in range(ndim), none twice."""
    if isinstance(axis, tuple):
        if not allow_tuple:
            raise _Unsure
        out = tuple(_axis(a, ndim) for a in axis)
    else:
        out = (_axis(axis, ndim),)
    if len(set(out)) != len(out):
        raise _Unsure
    return out


def _dtype_value(v) -> str:
    """The dtype letter of a dtype= value (float, np.float32, "f8")."""
    try:
        dt = np.dtype(v)
    except Exception:
        raise _Unsure from None
    if dt.kind not in "biufc":
        raise _Unsure
    return _dtype_letter(dt)


_WEAK = {"b": bool, "i": int, "f": float, "c": complex}


def _promote(*parts, weak=()) -> str:
    """The dtype letter NumPy's promotion gives operands of these letters; `weak`: whether
    each is a Python number among arrays (NEP 50: it takes the arrays' precision)."""
    dts = [(_WEAK[dt] if w else _LETTER_DTYPES[dt]) for dt, w in
           zip(parts, weak or (False,) * len(parts))]
    try:
        out = np.result_type(*dts)
    except Exception:
        raise _Unsure from None
    return _dtype_letter(out)


def _result(dt: str, shape: tuple, number: bool) -> Kind:
    """NumPy's result: a NumPy number where `number` and the shape is (), else an array."""
    if number and shape == ():
        return scalar(dt)
    return array(dt, shape)


def _broadcast(*shapes) -> tuple:
    try:
        return broadcast_shapes(*shapes)
    except ValueError:
        raise _Unsure from None


# -- reductions ---------------------------------------------------------------------------

_SUM = {"b": "i", "i": "i", "f": "f", "c": "c"}
_MEAN = {"b": "f", "i": "f", "f": "f", "c": "c"}
_SAME = {"b": "b", "i": "i", "f": "f", "c": "c"}
_SPREAD = {"b": "f", "i": "f", "f": "f", "c": "f"}
_BOOL = dict.fromkeys("bifc", "b")
_INDEX = dict.fromkeys("bifc", "i")


def _reduced(shape, axes, keepdims) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _reduction(name, names, dtypes, free=None, tuple_axis=True, nonempty=False,
               any_value=(), sized=False):
    """A reduction over `axis` (None: every axis; an int; a tuple of ints) with `keepdims`.
    `free`: options that may be given only with these values (their defaults); `any_value`:
    options whose value does not change the result's kind (ddof); `nonempty`: NumPy
    refuses to reduce an empty axis (max, argmax); `sized`: unsure of an empty array
    (scipy's logsumexp fails on some)."""
    free = dict(free or {})
    known_opts = {"a", "axis", "keepdims", *free, *any_value}

    def rule(args, kwargs):
        b = _bind(args, kwargs, names)
        if any(n not in known_opts for n in b):
            raise _Unsure  # (out=, dtype=, where=, initial=: not modelled)
        for n, default in free.items():
            _absent(b, n, default)
        for n in any_value:
            if n in b and b[n].tag not in ("scalar", "object"):
                raise _Unsure
        shape, dt, is_array = _operand(b["a"])
        dt_out = dtypes.get(dt)
        if dt_out is None:
            raise _Unsure
        axis = _value(b, "axis", None)
        keepdims = _value(b, "keepdims", False)
        if not isinstance(keepdims, (bool, np.bool_)):
            raise _Unsure
        if axis is None:
            axes = tuple(range(len(shape)))
        else:
            if isinstance(axis, tuple) and not axis:
                raise _Unsure  # (axis=(): no reduction; rare, left to the stand-ins)
            axes = _axes(axis, len(shape), tuple_axis)
        if nonempty and any(shape[i] == 0 for i in axes) or sized and 0 in shape:
            raise _Unsure
        if keepdims and not shape:
            raise _Unsure
        out = _reduced(shape, axes, keepdims)
        return _result(dt_out, out, not keepdims)
    rule.__name__ = f"{name}_shape"
    return rule


_SUM_NAMES = ("a", "axis", "dtype", "out", "keepdims", "initial", "where")
_MEAN_NAMES = ("a", "axis", "dtype", "out", "keepdims", "where")
_MAX_NAMES = ("a", "axis", "out", "keepdims", "initial", "where")
_SPREAD_NAMES = ("a", "axis", "dtype", "out", "ddof", "keepdims", "where", "mean",
                 "correction")
_MEDIAN_NAMES = ("a", "axis", "out", "overwrite_input", "keepdims")
_ANY_NAMES = ("a", "axis", "out", "keepdims", "where")
_ARG_NAMES = ("a", "axis", "out", "keepdims")

_NONE = {"dtype": None, "out": None}
for _f in (np.sum, np.prod, np.nansum, np.nanprod):
    SHAPE_RULES[_f] = _reduction(_f.__name__, _SUM_NAMES, _SUM, _NONE)
for _f in (np.mean, np.nanmean):
    SHAPE_RULES[_f] = _reduction(_f.__name__, _MEAN_NAMES, _MEAN, _NONE)
for _f in (np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin):
    SHAPE_RULES[_f] = _reduction(_f.__name__, _MAX_NAMES, _SAME, {"out": None}, nonempty=True)
SHAPE_RULES[np.ptp] = _reduction("ptp", ("a", "axis", "out", "keepdims"),
                                 {"i": "i", "f": "f", "c": "c"}, {"out": None}, nonempty=True)
for _f in (np.std, np.var, np.nanstd, np.nanvar):
    SHAPE_RULES[_f] = _reduction(_f.__name__, _SPREAD_NAMES, _SPREAD, _NONE,
                                 any_value=("ddof", "correction"))
for _f in (np.median, np.nanmedian):
    SHAPE_RULES[_f] = _reduction(_f.__name__, _MEDIAN_NAMES, _MEAN,
                                 {"out": None}, any_value=("overwrite_input",), sized=True)
for _f in (np.any, np.all):
    SHAPE_RULES[_f] = _reduction(_f.__name__, _ANY_NAMES, _BOOL, {"out": None})
for _f in (np.argmax, np.argmin, np.nanargmax, np.nanargmin):
    SHAPE_RULES[_f] = _reduction(_f.__name__, _ARG_NAMES, _INDEX, {"out": None},
                                 tuple_axis=False, nonempty=True)
SHAPE_RULES[np.count_nonzero] = _reduction("count_nonzero", ("a", "axis", "keepdims"), _INDEX)


# -- contractions -------------------------------------------------------------------------

def _matmul_dtype(da, db) -> str:
    try:
        out = np.matmul.resolve_dtypes((_LETTER_DTYPES[da], _LETTER_DTYPES[db], None))[-1]
    except Exception:
        raise _Unsure from None
    return _dtype_letter(out)


@_register(operator.matmul, np.matmul)
def _matmul_shape(args, kwargs):
    if kwargs or len(args) != 2:
        raise _Unsure
    (sa, da), (sb, db) = _array(args[0]), _array(args[1])
    if not sa or not sb:
        raise _Unsure  # (NumPy refuses a 0-d operand)
    dt = _matmul_dtype(da, db)
    if len(sa) == 1 and len(sb) == 1:
        if sa != sb:
            raise _Unsure
        return scalar(dt)
    if len(sb) == 1:
        if sa[-1] != sb[0]:
            raise _Unsure
        return array(dt, sa[:-1])
    if len(sa) == 1:
        if sa[0] != sb[-2]:
            raise _Unsure
        return array(dt, sb[:-2] + sb[-1:])
    if sa[-1] != sb[-2]:
        raise _Unsure
    return array(dt, _broadcast(sa[:-2], sb[:-2]) + (sa[-2], sb[-1]))


@_register(np.dot)
def _dot_shape(args, kwargs):
    if kwargs or len(args) != 2:
        raise _Unsure
    (sa, da), (sb, db) = _array(args[0]), _array(args[1])
    if not sa or not sb:
        raise _Unsure
    dt = _promote(da, db)
    if len(sb) == 1:
        if sa[-1] != sb[0]:
            raise _Unsure
        return _result(dt, sa[:-1], True)
    if sa[-1] != sb[-2]:
        raise _Unsure
    return array(dt, sa[:-1] + sb[:-2] + sb[-1:])


@_register(np.inner)
def _inner_shape(args, kwargs):
    if kwargs or len(args) != 2:
        raise _Unsure
    (sa, da), (sb, db) = _array(args[0]), _array(args[1])
    if not sa or not sb or sa[-1] != sb[-1]:
        raise _Unsure
    return _result(_promote(da, db), sa[:-1] + sb[:-1], True)


@_register(np.outer)
def _outer_shape(args, kwargs):
    if kwargs or len(args) != 2:
        raise _Unsure
    (sa, da), (sb, db) = _array(args[0]), _array(args[1])
    return array(_promote(da, db), (_size(sa), _size(sb)))


@_register(np.vdot)
def _vdot_shape(args, kwargs):
    if kwargs or len(args) != 2:
        raise _Unsure
    (sa, da), (sb, db) = _array(args[0]), _array(args[1])
    if _size(sa) != _size(sb):
        raise _Unsure
    return scalar(_promote(da, db))


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


@_register(np.tensordot)
def _tensordot_shape(args, kwargs):
    b = _bind(args, kwargs, ("a", "b", "axes"), required=2)
    (sa, da), (sb, db) = _array(b["a"]), _array(b["b"])
    axes = _value(b, "axes", 2)
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        n = int(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise _Unsure
        ax_a = tuple(range(len(sa) - n, len(sa)))
        ax_b = tuple(range(n))
    elif isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax_a, ax_b = ([_int(x)] if not isinstance(x, (tuple, list)) else
                      [_int(i) for i in x] for x in axes)
        if len(ax_a) != len(ax_b):
            raise _Unsure
        ax_a = [_axis(i, len(sa)) for i in ax_a]
        ax_b = [_axis(i, len(sb)) for i in ax_b]
        if len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b):
            raise _Unsure
    else:
        raise _Unsure
    if any(sa[i] != sb[j] for i, j in zip(ax_a, ax_b)):
        raise _Unsure
    shape = tuple(n for i, n in enumerate(sa) if i not in ax_a) + \
        tuple(n for i, n in enumerate(sb) if i not in ax_b)
    return array(_promote(da, db), shape)


@_register(np.einsum)
def _einsum_shape(args, kwargs):
    if any(n != "optimize" for n in kwargs) or not args:
        raise _Unsure
    if "optimize" in kwargs and not (kwargs["optimize"].known and
                                     kwargs["optimize"].value in (False, True, "greedy",
                                                                  "optimal")):
        raise _Unsure
    spec = args[0].value if args[0].known else None
    if not isinstance(spec, str) or "." in spec:
        raise _Unsure  # (the interleaved form, or an ellipsis)
    operands = [_array(k) for k in args[1:]]
    spec = spec.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands) or not all(t.isalpha() or not t for t in terms):
        raise _Unsure
    sizes: dict = {}
    for t, (shape, _) in zip(terms, operands):
        if len(t) != len(shape):
            raise _Unsure
        for label, n in zip(t, shape):
            if sizes.setdefault(label, n) != n:
                raise _Unsure  # (a size-1 axis against another: not modelled)
    if arrow:
        if not (output.isalpha() or not output) or len(set(output)) != len(output) or \
                any(c not in sizes for c in output):
            raise _Unsure
    else:
        counts: dict = {}
        for c in inputs.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        output = "".join(sorted(c for c, m in counts.items() if m == 1))
    dt = _promote(*(dt for _, dt in operands))
    shape = tuple(sizes[c] for c in output)
    if shape == () and kwargs.get("optimize") is not None and kwargs["optimize"].value:
        raise _Unsure  # (a 0-d array or a number, as the path chosen goes)
    return _result(dt, shape, True)


_MATRIX_ORDS = (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)


@_register(np.linalg.norm)
def _norm_shape(args, kwargs):
    b = _bind(args, kwargs, ("x", "ord", "axis", "keepdims"))
    shape, dt, is_array = _operand(b["x"])
    if not is_array:
        raise _Unsure
    ord_kind = b.get("ord")
    if ord_kind is None or ord_kind.known:
        ord_value, ord_known = (ord_kind.value if ord_kind is not None else None), True
    elif ord_kind.tag == "scalar" and ord_kind.dtype in ("i", "f"):
        ord_value, ord_known = None, False  # (np.inf: a number, not known while compiling)
    else:
        raise _Unsure
    axis = _value(b, "axis", None)
    keepdims = _value(b, "keepdims", False)
    if not isinstance(keepdims, (bool, np.bool_)):
        raise _Unsure
    if axis is None:
        if ord_known and ord_value is None:
            axes = tuple(range(len(shape)))
        elif len(shape) in (1, 2):
            axes = tuple(range(len(shape)))
            _check_ord(ord_value, ord_known, len(axes), shape, axes)
        else:
            raise _Unsure
    else:
        axes = _axes(axis, len(shape))
        if len(axes) > 2:
            raise _Unsure
        _check_ord(ord_value, ord_known, len(axes), shape, axes)
    if keepdims and not shape:
        raise _Unsure
    return _result("f", _reduced(shape, axes, keepdims), not keepdims)


def _check_ord(ord_value, ord_known, n_axes, shape, axes):
    """Unsure of an order NumPy refuses for a vector (a string) or matrix norm (one not
    in its list), and of an order other than the default over an empty axis (a maximum,
    a minimum or singular values of nothing)."""
    if (not ord_known or ord_value is not None) and any(shape[i] == 0 for i in axes):
        raise _Unsure
    if not ord_known:
        return
    if isinstance(ord_value, str):
        if n_axes != 2 or ord_value not in ("fro", "nuc"):
            raise _Unsure
    elif ord_value is not None and not isinstance(ord_value, (int, float, np.number)) or \
            isinstance(ord_value, bool):
        raise _Unsure
    if n_axes == 2:
        if ord_value not in _MATRIX_ORDS:
            raise _Unsure


# -- basic indexing -----------------------------------------------------------------------

def _index_parts(k: Kind) -> tuple:
    """The parts of a basic index: ints (or "int" for an int known at run time only),
    slices, None and Ellipsis; unsure of anything else (arrays, masks, lists)."""
    items = k.items if k.tag == "tuple" and not k.view else (k,)
    parts = []
    for i in items:
        if i.known:
            v = i.value
            if v is None or v is Ellipsis or isinstance(v, slice):
                parts.append(v)
            elif isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                parts.append(int(v))
            else:
                raise _Unsure
        elif i.tag == "scalar" and i.dtype == "i" and not i.family:
            parts.append("int")
        else:
            raise _Unsure
    if k.tag == "tuple" and k.view:
        raise _Unsure
    return tuple(parts), k.tag == "tuple"


def _slice_length(s: slice, n: int) -> int:
    for v in (s.start, s.stop, s.step):
        if v is not None and (isinstance(v, (bool, np.bool_)) or
                              not isinstance(v, (int, np.integer))):
            raise _Unsure
    if s.step == 0:
        raise _Unsure
    try:
        return slice_length(s, n)
    except ValueError:
        raise _Unsure from None


@_register(operator.getitem)
def _getitem_shape(args, kwargs):
    if kwargs or len(args) != 2:
        raise _Unsure
    shape, dt = _array(args[0])
    parts, _ = _index_parts(args[1])
    if parts.count(Ellipsis) > 1:
        raise _Unsure
    consumed = sum(1 for p in parts if p is not None and p is not Ellipsis)
    if consumed > len(shape):
        raise _Unsure
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        parts = parts[:at] + (slice(None),) * (len(shape) - consumed) + parts[at + 1:]
        ellipsis = True
    else:
        parts = parts + (slice(None),) * (len(shape) - consumed)
        ellipsis = False
    out = []
    axis = 0
    for p in parts:
        if p is None:
            out.append(1)
            continue
        n = shape[axis]
        axis += 1
        if isinstance(p, slice):
            out.append(_slice_length(p, n))
        elif p == "int":
            if n == 0:
                raise _Unsure
        elif not -n <= p < n:
            raise _Unsure  # (NumPy's IndexError where the code runs)
    # an index of ints alone on every axis is a NumPy number; with `...` a 0-d array
    number = not ellipsis and None not in parts and not out and \
        all(not isinstance(p, slice) for p in parts)
    return _result(dt, tuple(out), number)


# -- shape operations ---------------------------------------------------------------------

@_register(np.reshape)
def _reshape_shape(args, kwargs):
    b = _bind(args, kwargs, ("a", "shape", "order", "copy"), required=2)
    _absent(b, "order", "C", "F", "A")
    _absent(b, "copy", None, True, False)
    shape, dt = _array(b["a"])
    k = b["shape"]
    new = _ints(k) if not k.known else ((_int(k.value),) if not isinstance(
        k.value, (tuple, list)) else tuple(_int(v) for v in k.value))
    size = _size(shape)
    if any(d < -1 for d in new) or new.count(-1) > 1:
        raise _Unsure
    if -1 in new:
        rest = _size(d for d in new if d != -1)
        if rest == 0 or size % rest:
            raise _Unsure
        new = tuple(size // rest if d == -1 else d for d in new)
    if _size(new) != size:
        raise _Unsure
    return array(dt, new)


@_register(np.transpose)
def _transpose_shape(args, kwargs):
    b = _bind(args, kwargs, ("a", "axes"))
    shape, dt = _array(b["a"])
    if "axes" not in b or b["axes"].known and b["axes"].value is None:
        return array(dt, shape[::-1])
    perm = _ints(b["axes"], allow_int=len(shape) == 1)
    if len(perm) != len(shape):
        raise _Unsure
    perm = _axes(tuple(perm), len(shape))
    return array(dt, tuple(shape[i] for i in perm))


@_register(np.swapaxes)
def _swapaxes_shape(args, kwargs):
    b = _bind(args, kwargs, ("a", "axis1", "axis2"), required=3)
    shape, dt = _array(b["a"])
    i, j = _axis(_value(b, "axis1"), len(shape)), _axis(_value(b, "axis2"), len(shape))
    out = list(shape)
    out[i], out[j] = out[j], out[i]
    return array(dt, tuple(out))


@_register(np.moveaxis)
def _moveaxis_shape(args, kwargs):
    b = _bind(args, kwargs, ("a", "source", "destination"), required=3)
    shape, dt = _array(b["a"])
    n = len(shape)
    src = _axes(tuple(_ints(b["source"])), n)
    dst = _axes(tuple(_ints(b["destination"])), n)
    if len(src) != len(dst):
        raise _Unsure
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return array(dt, tuple(shape[i] for i in order))


@_register(np.expand_dims)
def _expand_dims_shape(args, kwargs):
    b = _bind(args, kwargs, ("a", "axis"), required=2)
    shape, dt = _array(b["a"])
    axis = _ints(b["axis"])
    n = len(shape) + len(axis)
    axes = _axes(tuple(axis), n)
    rest = iter(shape)
    return array(dt, tuple(1 if i in axes else next(rest) for i in range(n)))


@_register(np.squeeze)
def _squeeze_shape(args, kwargs):
    b = _bind(args, kwargs, ("a", "axis"))
    shape, dt = _array(b["a"])
    axis = _value(b, "axis", None)
    if axis is None:
        return array(dt, tuple(d for d in shape if d != 1))
    axes = _axes(axis, len(shape))
    if any(shape[i] != 1 for i in axes):
        raise _Unsure
    return array(dt, tuple(d for i, d in enumerate(shape) if i not in axes))


@_register(np.ravel)
def _ravel_shape(args, kwargs):
    b = _bind(args, kwargs, ("a", "order"))
    _absent(b, "order", "C", "F", "A", "K")
    shape, dt = _array(b["a"])
    return array(dt, (_size(shape),))


@_register(np.broadcast_to)
def _broadcast_to_shape(args, kwargs):
    b = _bind(args, kwargs, ("array", "shape", "subok"), required=2)
    _absent(b, "subok", False)
    shape, dt, _ = _operand(b["array"])
    target = _shape_arg(b["shape"])
    if len(target) < len(shape) or _broadcast(shape, target) != target:
        raise _Unsure
    return array(dt, target)


def _sequence(k: Kind):
    """The kinds of the arrays a tuple or list holds (known items)."""
    if k.tag not in ("tuple", "list") or k.view or not k.items:
        raise _Unsure
    return [_operand(i) for i in k.items]


def _joined(parts, axis):
    """The shape of np.concatenate of arrays of these shapes along `axis`."""
    first = parts[0]
    if not first:
        raise _Unsure
    axis = _axis(axis, len(first))
    total = 0
    for s in parts:
        if len(s) != len(first) or any(a != b for i, (a, b) in enumerate(zip(s, first))
                                       if i != axis):
            raise _Unsure
        total += s[axis]
    return first[:axis] + (total,) + first[axis + 1:]


def _sequence_dtype(items) -> str:
    return _promote(*(dt for _, dt, _ in items))


def _joining(args, kwargs):
    """(the bound arguments, the arrays' (shape, dtype, is_array)) of concatenate or stack,
    where `out`, `dtype` and `casting` are left at their defaults."""
    b = _bind(args, kwargs, ("arrays", "axis", "out", "dtype", "casting"))
    _absent(b, "out", None)
    _absent(b, "dtype", None)
    _absent(b, "casting", "same_kind")
    return b, _sequence(b["arrays"])


@_register(np.concatenate)
def _concatenate_shape(args, kwargs):
    b, items = _joining(args, kwargs)
    if not all(is_array for _, _, is_array in items):
        raise _Unsure
    axis = _value(b, "axis", 0)
    if axis is None:
        shape = (sum(_size(s) for s, _, _ in items),)
    else:
        shape = _joined([s for s, _, _ in items], axis)
    return array(_sequence_dtype(items), shape)


@_register(np.stack)
def _stack_shape(args, kwargs):
    b, items = _joining(args, kwargs)
    shapes = {s for s, _, _ in items}
    if len(shapes) != 1:
        raise _Unsure
    (shape,) = shapes
    axis = _axis(_value(b, "axis", 0), len(shape) + 1)
    return array(_sequence_dtype(items), shape[:axis] + (len(items),) + shape[axis:])


def _at_least(shape, n):
    """The shape np.atleast_1d (n=1) or np.atleast_2d (n=2) gives."""
    if len(shape) >= n:
        return shape
    if n == 1 or not shape:
        return (1,) * n
    return (1,) + shape


@_register(np.hstack)
def _hstack_shape(args, kwargs):
    b = _bind(args, kwargs, ("tup", "dtype", "casting"))
    _absent(b, "dtype", None)
    _absent(b, "casting", "same_kind")
    items = _sequence(b["tup"])
    shapes = [_at_least(s, 1) for s, _, _ in items]
    axis = 0 if all(len(s) == 1 for s in shapes) else 1
    return array(_sequence_dtype(items), _joined(shapes, axis))


@_register(np.vstack)
def _vstack_shape(args, kwargs):
    b = _bind(args, kwargs, ("tup", "dtype", "casting"))
    _absent(b, "dtype", None)
    _absent(b, "casting", "same_kind")
    items = _sequence(b["tup"])
    shapes = [_at_least(s, 2) for s, _, _ in items]
    return array(_sequence_dtype(items), _joined(shapes, 0))


@_register(np.diff)
def _diff_shape(args, kwargs):
    b = _bind(args, kwargs, ("a", "n", "axis", "prepend", "append"))
    if "prepend" in b or "append" in b:
        raise _Unsure
    shape, dt = _array(b["a"])
    n = _int(_value(b, "n", 1))
    if n < 0 or not shape:
        raise _Unsure
    if n == 0:
        return array(dt, shape)
    axis = _axis(_value(b, "axis", -1), len(shape))
    out = list(shape)
    out[axis] = max(shape[axis] - n, 0)
    return array(dt, tuple(out))


def _scan(dtypes):
    def rule(args, kwargs):
        b = _bind(args, kwargs, ("a", "axis", "dtype", "out"))
        _absent(b, "dtype", None)
        _absent(b, "out", None)
        shape, dt = _array(b["a"])
        axis = _value(b, "axis", None)
        if axis is None:
            return array(dtypes[dt], (_size(shape),))
        _axis(axis, len(shape))
        return array(dtypes[dt], shape)
    return rule


for _f in (np.cumsum, np.cumprod, np.nancumsum, np.nancumprod):
    SHAPE_RULES[_f] = _scan(_SUM)


@_register(np.where)
def _where_shape(args, kwargs):
    if kwargs or len(args) != 3:
        raise _Unsure  # (np.where(cond) alone: the positions, their number data-dependent)
    shapes, dts, weak = [], [], []
    for i, k in enumerate(args):
        if not i and k.known and (k.value is None or type(k.value) is bool):
            shapes.append(())  # (np.where(None, ...) of a branch not taken)
            continue
        shape, dt, is_array = _operand(k)
        shapes.append(shape)
        if i:
            dts.append(dt)
            weak.append(not is_array)
    any_array = any(_operand(k)[2] for k in args[1:]) or args[0].tag == "array"
    dt = _promote(*dts, weak=tuple(w and any_array for w in weak))
    return array(dt, _broadcast(*shapes))


@_register(np.clip)
def _clip_shape(args, kwargs):
    b = _bind(args, kwargs, ("a", "a_min", "a_max", "out", "min", "max"))
    _absent(b, "out", None)
    shape, dt, is_array = _operand(b["a"])
    if not is_array:
        raise _Unsure
    bounds = [b[n] for n in ("a_min", "a_max", "min", "max") if n in b]
    if len(bounds) != 2 or ("a_min" in b and "min" in b) or ("a_max" in b and "max" in b):
        raise _Unsure
    shapes, dts, weak = [shape], [dt], [False]
    for k in bounds:
        if k.known and k.value is None:
            continue
        s, d, arr = _operand(k)
        shapes.append(s)
        dts.append(d)
        weak.append(not arr)
    if len(shapes) == 1:
        raise _Unsure  # (no bound: NumPy refuses, or returns the array)
    return _result(_promote(*dts, weak=tuple(weak)), _broadcast(*shapes), True)


# -- copies and constructors --------------------------------------------------------------

@_register(np.copy)
def _copy_shape(args, kwargs):
    b = _bind(args, kwargs, ("a", "order", "subok"))
    _absent(b, "order", "K", "C")
    _absent(b, "subok", False)
    shape, dt = _array(b["a"])
    return array(dt, shape)


@_register(np.asarray, np.ascontiguousarray)
def _asarray_shape(args, kwargs):
    if len(args) != 1 or kwargs:
        raise _Unsure
    shape, dt = _array(args[0])
    return array(dt, shape)


def _filled(dtype_default):
    def rule(args, kwargs):
        b = _bind(args, kwargs, ("shape", "dtype", "order", "device", "like"))
        for n in ("order", "device", "like"):
            _absent(b, n, "C", None)
        dtype = _value(b, "dtype", None)
        return array(_dtype_value(dtype) if dtype is not None else dtype_default,
                     _shape_arg(b["shape"]))
    return rule


for _f in (np.zeros, np.ones, np.empty):
    SHAPE_RULES[_f] = _filled("f")


@_register(np.eye)
def _eye_shape(args, kwargs):
    b = _bind(args, kwargs, ("N", "M", "k", "dtype", "order", "like", "device"))
    for n in ("order", "device", "like"):
        _absent(b, n, "C", None)
    rows = _int(_const(b["N"])) if "N" in b else None
    cols = _value(b, "M", None)
    _int(_value(b, "k", 0))  # (any diagonal: the shape is N x M)
    if rows is None or rows < 0:
        raise _Unsure
    cols = rows if cols is None else _int(cols)
    if cols < 0:
        raise _Unsure
    dtype = _value(b, "dtype", None)
    return array(_dtype_value(dtype) if dtype is not None else "f", (rows, cols))


@_register(np.identity)
def _identity_shape(args, kwargs):
    b = _bind(args, kwargs, ("n", "dtype", "like"))
    _absent(b, "like", None)
    n = _int(_const(b["n"])) if "n" in b else None
    if n is None or n < 0:
        raise _Unsure
    dtype = _value(b, "dtype", None)
    return array(_dtype_value(dtype) if dtype is not None else "f", (n, n))


@_register(np.full)
def _full_shape(args, kwargs):
    b = _bind(args, kwargs, ("shape", "fill_value", "dtype", "order", "device", "like"),
              required=2)
    for n in ("order", "device", "like"):
        _absent(b, n, "C", None)
    shape = _shape_arg(b["shape"])
    fill_shape, fill_dt, _ = _operand(b["fill_value"])
    if fill_shape != ():
        raise _Unsure
    dtype = _value(b, "dtype", None)
    return array(_dtype_value(dtype) if dtype is not None else fill_dt, shape)


def _filled_like(fill):
    names = ("a", "fill_value", "dtype", "order", "subok", "shape", "device") if fill else \
        ("a", "dtype", "order", "subok", "shape", "device")

    def rule(args, kwargs):
        b = _bind(args, kwargs, names, required=2 if fill else 1)
        _absent(b, "order", "K", "C")
        _absent(b, "subok", True, False)
        _absent(b, "device", None)
        shape, dt = _array(b["a"])
        if fill:
            fill_shape, _, _ = _operand(b["fill_value"])
            if fill_shape != ():
                raise _Unsure
        dtype = _value(b, "dtype", None)
        new = _value(b, "shape", None)
        return array(_dtype_value(dtype) if dtype is not None else dt,
                     _shape_value(new) if new is not None else shape)
    return rule


for _f in (np.zeros_like, np.ones_like, np.empty_like):
    SHAPE_RULES[_f] = _filled_like(False)
SHAPE_RULES[np.full_like] = _filled_like(True)


@_register(np.arange)
def _arange_shape(args, kwargs):
    if kwargs or not 1 <= len(args) <= 3 or not all(k.known for k in args):
        raise _Unsure
    bounds = [_int(k.value) for k in args]
    if len(bounds) == 3 and bounds[2] == 0:
        raise _Unsure
    if any(type(b) is Dim for b in bounds):  # (np.arange(n) of a size: n entries)
        if len(bounds) == 3 and bounds[2] != 1:
            raise _Unsure
        start, stop = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
        count = stop - start
        return array("i", (count if count > 0 else 0,))
    return array("i", (len(range(*bounds)),))


@_register(np.linspace)
def _linspace_shape(args, kwargs):
    b = _bind(args, kwargs, ("start", "stop", "num", "endpoint", "retstep", "dtype", "axis"),
              required=2)
    _absent(b, "retstep", False)
    _absent(b, "dtype", None)
    _absent(b, "axis", 0)
    if "endpoint" in b and b["endpoint"].tag not in ("scalar",):
        raise _Unsure
    s1, d1, _ = _operand(b["start"])
    s2, d2, _ = _operand(b["stop"])
    if s1 != () or s2 != ():
        raise _Unsure
    num = _int(_value(b, "num", 50))
    if num < 0:
        raise _Unsure
    return array("c" if "c" in (d1, d2) else "f", (num,))


# -- elementwise operators of one operand ------------------------------------------------

_UNARY = {operator.neg: np.negative, operator.pos: np.positive, operator.abs: np.absolute,
          operator.invert: np.invert}


def _unary(ufunc):
    def rule(args, kwargs):
        if kwargs or len(args) != 1:
            raise _Unsure
        shape, dt = _array(args[0])
        try:
            out = ufunc.resolve_dtypes((_LETTER_DTYPES[dt], None))[-1]
        except Exception:
            raise _Unsure from None
        return _result(_dtype_letter(out), shape, True)
    return rule


for _op, _uf in _UNARY.items():
    SHAPE_RULES[_op] = _unary(_uf)
