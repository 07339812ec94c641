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

from s2sad.errors import NonDifferentiableError, raise_all
from s2sad.ir.kinds import infer_kinds


def refuse_shared_inplace_updates(ir, kinds_in: dict) -> None:
    """Raise for each recorded `a op= b` whose `a` the kinds show to be a NumPy array."""
    updates = ir.meta.get("inplace_updates")
    if not updates:
        return
    kinds = infer_kinds(ir, kinds_in)
    errors = []
    for var, loc, name, other, op in updates:
        k = kinds.get(var)
        if k is None or k.tag != "array" or k.family:
            continue  # a number is rebound (and an array of Dask too); see the note above
        errors.append(NonDifferentiableError(
            f"cannot update `{name}` in place: `{other}` refers to the same array (or a view "
            "of it), and would see the update in Python but not in the derivative", loc,
            f"write `{name} = {name} {op} ...` (a new array), or make `{other}` a copy"))
    raise_all(errors)
