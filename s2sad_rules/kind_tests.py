"""Tests of an argument's kind that rule bodies branch on: is_complex, is_sequence, is_none,
is_safe_exponent.

Each is non-differentiable and has a kind rule, so the compiler knows its answer from the
argument's kind and keeps only the branch that applies. `x is None` and `x is not None`
written as such (in a rule, or in the user's code) are decided the same way.
"""

import operator

import numpy as np

from s2sad.ir.dims import broadcast_shapes
from s2sad.ir.kinds import (
    CONTEXTUAL,
    KIND_READERS,
    KIND_RULES,
    UNKNOWN,
    Kind,
    array_of_rank,
    kind_of_value,
    scalar,
)
from s2sad.ir.prims import item
from s2sad_rules.registry import def_nondiff


@def_nondiff
def is_complex(x):
    """Does `x` hold complex numbers?"""
    return np.iscomplexobj(x)


@def_nondiff
def is_sequence(x):
    """Is `x` a list or tuple (not one array)?"""
    return isinstance(x, (list, tuple))


@def_nondiff
def is_none(x):
    """`x is None` (an array or a number is not None)."""
    return x is None


@def_nondiff
def is_absent(x):
    """`x` is None or NumPy's "no value" default (np._NoValue): an option not given."""
    return x is None or x is np._NoValue


@def_nondiff
def is_safe_exponent(y):
    """Is `y` a number known at compile time with y >= 1 or y == 0 (so that x ** (y - 1) is
    finite for every finite x, and the rule may use the operator the simplifier knows)?"""
    return isinstance(y, (int, float)) and (y >= 1 or y == 0)


class undecided_complex:  # noqa: N801 - a context manager used like a function
    """While active, `is_complex` of a value whose dtype is not known is left to be decided
    later: the generic code of a derivative inlined into a function that is then
    specialised (its arguments may be complex). Elsewhere such a value is taken as real,
    as the generic code printed for a derivative always took it."""

    depth = 0

    def __enter__(self):
        undecided_complex.depth += 1

    def __exit__(self, *exc):
        undecided_complex.depth -= 1


def _is_complex_kind(args, kwargs):
    k = args[0]
    known = (k.tag in ("scalar", "array") and k.dtype in ("b", "i", "f", "c")) or \
        k.tag in ("tuple", "list", "object") or k.known
    if not known and undecided_complex.depth:
        return scalar("b")
    return scalar("b", k.dtype == "c")


def _is_safe_exponent_kind(args, kwargs):
    k = args[0]
    v = k.value if k.known else None
    return scalar("b", type(v) in (int, float) and (v >= 1 or v == 0))


def _is_sequence_kind(args, kwargs):
    tag = args[0].tag
    return scalar("b", tag in ("list", "tuple")) if tag != "unknown" else None


def _is_none_kind(args, kwargs):
    k = args[0]
    if k.known:
        return scalar("b", k.value is None)
    return scalar("b", False) if k.tag in ("scalar", "array") else None


def _is_absent_kind(args, kwargs):
    k = args[0]
    if k.known:
        return scalar("b", k.value is None or k.value is np._NoValue)
    return scalar("b", False) if k.tag in ("scalar", "array", "tuple", "list") else None


def _is_kind(args, kwargs):
    """`x is None` (or `None is x`): decided as is_none where the other side is None."""
    if len(args) == 2:
        a, b = args
        if b.known and b.value is None:
            return _is_none_kind([a], kwargs)
        if a.known and a.value is None:
            return _is_none_kind([b], kwargs)
    return None


def _is_not_kind(args, kwargs):
    r = _is_kind(args, kwargs)
    return scalar("b", not r.value) if r is not None and r.known else None


def _where_kind(args, kwargs):
    """np.where(c) (one argument: np.nonzero's indices, as many as the data has) and
    np.where(c, x, y) where a bool or int number of unknown value (which has no stand-in
    to evaluate on: see kind_values.example) is among the operands: the dtype of x and y,
    the three shapes broadcast (a 0-d array for three numbers, as NumPy returns). Without
    it, the safe division of a norm's derivative, np.where(norm == 0, 1, norm), had no kind,
    and a Hessian through it no shape. Belongs in s2sad/ir/kinds.py, like _modulus_kind."""
    if len(args) == 1 and not kwargs and not args[0].known:
        # (evaluated on a stand-in, the sizes were the stand-in's: len(np.where(x > 0)[0])
        # was folded to the number of entries)
        nd = args[0].ndim
        if nd is None:
            return UNKNOWN
        return Kind("tuple", items=tuple(array_of_rank("i", 1) for _ in range(max(nd, 1))))
    if len(args) != 3 or kwargs or not any(
            k.tag == "scalar" and k.dtype in "bi" and not k.known for k in args):
        return None
    if any(k.tag not in ("scalar", "array") or k.static_shape is None or
           k.dtype not in ("b", "i", "f", "c") for k in args):
        return None
    try:
        shape = broadcast_shapes(*(k.static_shape for k in args))
    except ValueError:
        return None
    order = "bifc"
    return Kind("array", max(args[1].dtype, args[2].dtype, key=order.index), shape)


def shape_only(fn):
    """Register the kind rule of helper `fn`, which reads only its arrays' shapes (where to
    split a cotangent): its answer is known at compile time where the shapes are, so that
    what is computed from it keeps known shapes (a Hessian through np.concatenate)."""
    def rule(args, kwargs):
        def stand_in(k):
            if k.known:
                return k.value
            if k.tag in ("scalar", "array") and k.static_shape is not None:
                return np.broadcast_to(0.0, k.static_shape)
            if k.tag in ("tuple", "list"):
                items = [stand_in(i) for i in k.items]
                return tuple(items) if k.tag == "tuple" else items
            raise LookupError
        try:
            value = fn(*[stand_in(k) for k in args],
                       **{n: stand_in(k) for n, k in kwargs.items()})
        except Exception:  # noqa: BLE001 - a shape not known, or a call NumPy refuses
            return None
        return kind_of_value(value, keep_value=True)

    KIND_RULES[fn] = rule
    return fn


def _arange_kind(args, kwargs):
    """np.arange of a number whose value is not known at compile time: a 1-d array of
    unknown length (evaluated on stand-ins, whose start and stop were equal, every such
    arange was empty: len(np.arange(x, x + 3.0)) was folded to 0)."""
    if all(k.known for k in args) and all(k.known for k in kwargs.values()):
        return None
    if any(k.tag != "scalar" for k in args):
        return None
    dtype = kwargs.get("dtype")
    if dtype is not None and dtype.known:
        try:
            return array_of_rank(np.dtype(dtype.value).kind, 1)
        except TypeError:
            return None
    return array_of_rank("f" if any(k.dtype in ("f", "c") for k in args) else "i", 1)


def _sized_by_values(positions, axis_at=None):
    """The kind rule of a function whose result's size depends on the values of the
    arguments at `positions` (np.delete's and np.insert's indices, the arrays of a set
    operation, np.trim_zeros's): where one of them is not known at compile time, its rank
    only (stand-ins would give the stand-ins' sizes). `axis_at`: the position of an `axis`
    argument (None: the result is flat)."""
    def rule(args, kwargs):
        if all(args[i].known for i in positions if i < len(args)):
            return None
        first = args[0] if args else None
        if first is None or first.tag not in ("array", "scalar"):
            return UNKNOWN
        axis = kwargs.get("axis")
        if axis_at is not None and len(args) > axis_at:
            axis = args[axis_at]
        nd = first.ndim if first.tag == "array" else 0
        kept = axis_at is not None and axis is not None and axis.known and \
            axis.value is not None
        return array_of_rank(first.dtype, nd if kept and nd else 1)
    return rule


def _modulus_kind(args, kwargs):
    """|z| of a complex z is real (the elementwise kind rule keeps the operand's dtype).
    Belongs in s2sad/ir/kinds.py; registered here until it moves there."""
    k = args[0] if args else None
    if k is not None and k.tag in ("scalar", "array") and k.dtype == "c":
        return Kind(k.tag, "f", k.shape, rank=k.rank)
    return None


def _item_kind(args, kwargs):
    """`x.item()`: a number of x's dtype (a stand-in Python number has no `.item()`, and a
    complex scalar's item was taken for a real one: its cotangent lost its imaginary part)."""
    k = args[0] if args else None
    if k is None or kwargs or len(args) != 1 or k.tag not in ("scalar", "array") or \
            k.dtype not in ("b", "i", "f", "c"):
        return None
    return scalar(k.dtype)


KIND_RULES[np.absolute] = _modulus_kind
KIND_RULES[item] = _item_kind
KIND_RULES[is_complex] = _is_complex_kind
KIND_RULES[is_sequence] = _is_sequence_kind
KIND_RULES[is_none] = _is_none_kind
KIND_RULES[is_absent] = _is_absent_kind
KIND_RULES[np.where] = _where_kind
KIND_RULES[np.arange] = _arange_kind
KIND_RULES[np.delete] = _sized_by_values((1,), axis_at=2)
KIND_RULES[np.insert] = _sized_by_values((1,), axis_at=3)
for _fn in (np.trim_zeros, np.intersect1d, np.union1d, np.setdiff1d, np.setxor1d):
    KIND_RULES[_fn] = _sized_by_values((0, 1))
KIND_RULES[operator.is_] = _is_kind
KIND_RULES[operator.is_not] = _is_not_kind
KIND_RULES[is_safe_exponent] = _is_safe_exponent_kind
KIND_READERS.update((is_complex, is_sequence, is_none, is_absent))
CONTEXTUAL.add(is_complex)  # its answer for an unknown dtype depends on undecided_complex
