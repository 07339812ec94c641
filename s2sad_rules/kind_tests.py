"""Tests of an argument's kind that rule bodies branch on: is_complex, is_sequence, is_none.

Each is non-differentiable and has a kind rule, so the compiler knows its answer from the
argument's kind and keeps only the branch that applies.
"""

import numpy as np

from s2sad.ir.kinds import KIND_RULES, scalar
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


def _is_complex_kind(args, kwargs):
    k = args[0]
    return scalar("b", k.dtype == "c") if k.tag in ("scalar", "array") and k.dtype else None


def _is_sequence_kind(args, kwargs):
    tag = args[0].tag
    return scalar("b", tag in ("list", "tuple")) if tag != "unknown" else None


def _is_none_kind(args, kwargs):
    k = args[0]
    if k.known:
        return scalar("b", k.value is None)
    return scalar("b", False) if k.tag in ("scalar", "array") else None


KIND_RULES[is_complex] = _is_complex_kind
KIND_RULES[is_sequence] = _is_sequence_kind
KIND_RULES[is_none] = _is_none_kind
