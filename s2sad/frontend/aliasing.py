"""Augmented assignments that NumPy performs in place, refused where another name sees them.

`a += b` rebinds `a` when `a` holds a number, and updates the array in place when it holds
an array: a name that refers to the same array (`c = a`), to a view of it (`v = a[1:]`),
or to the array `a` looks into, would see the change in Python (for an inlined helper, a
name of the code that called it too). The derivative code gives every version of a value a
variable of its own, so it would not. Lowering records each augmented assignment where
another name read later may see it (with that name); which of them are arrays is only
known from the arguments' kinds, so they are checked here, once the function is
specialised. Code made for arguments of unknown kinds (`Derivative.source` before a call,
an ahead-of-time module built without example arguments) rebinds, as for numbers and as
JAX's immutable arrays do; a call with arrays is specialised, and refused, here.
"""

from __future__ import annotations

import inspect

import numpy as np

from s2sad.errors import NonDifferentiableError, raise_all
from s2sad.ir.kinds import infer_kinds
from s2sad.ir.nodes import Const


def output_argument(fn, args: list, kwargs: list) -> str | None:
    """How a call writes its result into an array it is given (`out=buf`, a ufunc's
    positional output, np.cumsum(x, 0, None, buf)), or None. The derivative code gives each
    value a variable of its own: it would read `buf` as it was before the call."""
    for name, v in kwargs:
        if name == "out" and not (isinstance(v, Const) and v.value is None):
            return "`out=`"
    if len(args) < 2:
        return None
    at = _out_position(fn)
    if at is not None and at < len(args) and \
            not (isinstance(args[at], Const) and args[at].value is None):
        return "an output array passed by position"
    return None


_OUT_POSITION: dict = {}  # callable -> position of its output argument, or None


def _out_position(fn) -> int | None:
    """Where `fn` takes an output array by position: after a ufunc's operands, or its
    parameter named `out` (looked up once per callable)."""
    try:
        return _OUT_POSITION[fn]
    except KeyError:
        pass
    except TypeError:  # (an unhashable callable)
        return None
    at = None
    if isinstance(fn, np.ufunc):
        at = fn.nin
    elif str(getattr(fn, "__module__", None) or "").startswith("numpy"):
        # (NumPy's own functions: a user's primitive may name a parameter `out` freely)
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            params = []
        for i, p in enumerate(params):  # (only a parameter before any *args or keyword-only)
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            if p.name == "out":
                at = i
    _OUT_POSITION[fn] = at
    return at


def refuse_shared_inplace_updates(ir, kinds_in: dict) -> None:
    """Raise for each recorded `a op= b` whose `a` the kinds show to be a NumPy array, and
    another name sees; or whose result NumPy cannot store into `a` (another shape: `a` of
    (3,) += b of (2, 3); a dtype `a` cannot hold: a float into an int array), where Python
    raises and the derivative code, which rebinds, would compute on."""
    updates = ir.meta.get("inplace_updates", ())
    augmented = ir.meta.get("aug_assignments", ())
    written = ir.meta.get("written_arguments", ())
    if not updates and not augmented and not written:
        return
    errors = _shared_arguments(ir, kinds_in, written)
    if not updates and not augmented:
        raise_all(errors)
        return
    kinds = infer_kinds(ir, kinds_in)
    for var, result, loc, name, op in augmented:
        k, r = kinds.get(var), kinds.get(result)
        if k is None or r is None or k.tag != "array" or k.family or r.tag != "array":
            continue
        if k.static_shape is not None and r.static_shape is not None and \
                k.static_shape != r.static_shape:
            errors.append(NonDifferentiableError(
                f"`{name} {op}= ...` would change `{name}`'s shape from {k.static_shape} to "
                f"{r.static_shape}: NumPy updates the array in place, and raises", loc,
                f"write `{name} = {name} {op} ...` (a new array of the broadcast shape)"))
        elif _cannot_hold(k.dtype, r.dtype):
            errors.append(NonDifferentiableError(
                f"`{name} {op}= ...` would store {_DTYPE_WORDS.get(r.dtype, r.dtype)} in "
                f"`{name}`, an array of {_DTYPE_WORDS.get(k.dtype, k.dtype)}: NumPy updates it "
                "in place, and raises", loc,
                f"create `{name}` with the values' dtype, or write `{name} = {name} {op} ...`"))
    for var, loc, name, other, op in updates:
        k = kinds.get(var)
        if k is None or k.tag != "array" or k.family:
            continue  # a number is rebound (and an array of Dask too); see the note above
        errors.append(NonDifferentiableError(
            f"cannot update `{name}` in place: `{other}` refers to the same array (or a view "
            "of it), and would see the update in Python but not in the derivative", loc,
            f"write `{name} = {name} {op} ...` (a new array), or make `{other}` a copy"))
    raise_all(errors)


def _shared_arguments(ir, kinds_in: dict, written) -> list:
    """Errors for the writes into an array argument (`x[i] = v`: on a private copy in the
    derivative) where another argument may be that same array, or hold it (Python's other
    name would see the write; the derivative's does not). Known while compiling only from
    the kinds: another array argument refuses the write."""
    errors, seen = [], set()
    for var, loc, name in written:
        k = kinds_in.get(var)
        if k is None or k.tag != "array" or k.family or var in seen:
            continue
        seen.add(var)
        others = [p.name for p in ir.params if p is not var and
                  _may_hold_array(kinds_in.get(p))]
        if others:
            errors.append(NonDifferentiableError(
                f"cannot write into the argument `{name}` while `{others[0]}`, another "
                "argument, may be the same array: Python's `" + others[0] + "` would see the "
                "write, the derivative's (which writes into a private copy) would not", loc,
                f"write into a copy: `{name} = {name}.copy()` before assigning into it"))
    return errors


def _may_hold_array(k) -> bool:
    """May a value of kind `k` be a NumPy array, or hold one?"""
    if k is None or k.tag == "unknown":
        return True
    if k.tag == "array":
        return True
    if k.tag in ("tuple", "list"):
        return k.items is None or any(_may_hold_array(i) for i in k.items)
    return False


_DTYPE_WORDS = {"b": "bools", "i": "integers", "u": "integers", "f": "floats",
                "c": "complex numbers"}


def _cannot_hold(into: str, values: str) -> bool:
    """Does NumPy refuse to store values of dtype kind `values` into an array of kind `into`
    in place (its 'same_kind' casting: a float into ints, a complex into floats)?"""
    rank = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}  # (signed and unsigned: one kind)
    if into not in rank or values not in rank:
        return False
    return rank[values] > rank[into]
