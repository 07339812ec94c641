"""Tests of an argument's kind that rule bodies branch on: is_complex, is_sequence, is_none,
is_safe_exponent.

Each is non-differentiable and has a kind rule, so the compiler knows its answer from the
argument's kind and keeps only the branch that applies.
"""

import numpy as np

from s2sad.ir.kinds import CONTEXTUAL, KIND_RULES, Kind, scalar
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


def _modulus_kind(args, kwargs):
    """|z| of a complex z is real (the elementwise kind rule keeps the operand's dtype).
    Belongs in s2sad/ir/kinds.py; registered here until it moves there."""
    k = args[0] if args else None
    if k is not None and k.tag in ("scalar", "array") and k.dtype == "c":
        return Kind(k.tag, "f", k.shape, rank=k.rank)
    return None


KIND_RULES[np.absolute] = _modulus_kind
KIND_RULES[is_complex] = _is_complex_kind
KIND_RULES[is_sequence] = _is_sequence_kind
KIND_RULES[is_none] = _is_none_kind
KIND_RULES[is_safe_exponent] = _is_safe_exponent_kind
CONTEXTUAL.add(is_complex)  # its answer for an unknown dtype depends on undecided_complex
