"""Lazy arrays: what a derivative specialised for Dask arrays refuses.

A Dask array is a graph, computed later; the derivative runs once, building more graph.
Code that needs a value while it runs (a Python `if` on an array, `float(x)`, `x.item()`,
`np.asarray(x)`, an assignment into an array) would compute part of the graph there, or
fail inside Dask: it is refused here, with the line that does it.
"""

from __future__ import annotations

import operator

import numpy as np

from s2sad.errors import LazyArrayError
from s2sad.ir import prims
from s2sad.ir.kinds import atom_kind, infer_kinds
from s2sad.ir.nodes import Block, Call, ForRange, Function, If, While

# the calls that read a value (or copy it into a NumPy array) when the code runs
VALUE_READERS = {
    float: "float(...)", int: "int(...)", bool: "bool(...)", complex: "complex(...)",
    prims.item: ".item()", prims.Attr("tolist"): ".tolist()", np.asarray: "np.asarray(...)",
    np.array: "np.array(...)", np.ascontiguousarray: "np.ascontiguousarray(...)",
    operator.index: "an index made from an array", operator.truth: "a truth value",
    operator.not_: "`not` on an array", prims.check_assertion: "assert",
}
# statements that write into an array (Dask arrays are immutable graphs): those left by
# passes/functional.py, at an index that is not basic (an integer or a boolean array)
WRITERS = {prims.index_add: "the reverse of indexing with an array of indices or a mask",
           prims.index_update: "an assignment into an array at an array of indices or a mask",
           prims.take_slot: "the reverse of an assignment at an array of indices or a mask"}


def refuse_value_reads(fn: Function, param_kinds: dict) -> None:
    """Raise LazyArrayError where `fn`, run on the lazy arrays of `param_kinds`, would need
    one of their values (or a value computed from them)."""
    for p, k in param_kinds.items():
        if k.lazy and k.tag == "array" and k.shape is None:
            raise LazyArrayError(
                f"the Dask array `{p.name}` has chunks of unknown size (its shape is "
                f"{'(' + ', '.join(['nan'] * (k.rank or 0)) + ')'}...)", fn.loc,
                f"call {p.name}.compute_chunk_sizes() (or give the sizes with "
                f"da.from_delayed(..., shape=...)) before differentiating")
    _block(fn.body, infer_kinds(fn, param_kinds))


def _lazy(a, kinds) -> bool:
    return atom_kind(a, kinds).lazy


def _block(block: Block, kinds: dict) -> None:
    for s in block.stmts:
        match s:
            case Call(fn=fn, args=args, kwargs=kw, loc=loc):
                lazy_operand = any(_lazy(a, kinds) for a in args) or \
                    any(_lazy(a, kinds) for _, a in kw)
                if not lazy_operand:
                    continue
                # (a reader called through its derivative: `.item()` is differentiated so)
                inner = fn.__s2sad_function__ if prims.is_derivative(fn) else fn
                what = _lookup(VALUE_READERS, inner)
                if what is not None:
                    raise LazyArrayError(
                        f"{what} needs the value of a Dask array while the code runs", loc,
                        "keep the computation in array operations (np.where(c, a, b) for a "
                        "choice, np.clip, ...), or compute the value first and pass it as a "
                        "NumPy array or a float")
                what = _lookup(WRITERS, fn)
                if what is not None:
                    raise LazyArrayError(
                        f"{what} would write into a Dask array (Dask arrays are immutable "
                        "and the derivative of a function given them is functional)", loc,
                        "index NumPy arrays inside the function and pass whole Dask arrays "
                        "(split a Dask array into columns before the call), or compute it "
                        "first")
            case If(cond=c, then=then, orelse=orelse, loc=loc):
                if _lazy(c, kinds):
                    raise _branch_error("an `if` (or a conditional expression)", loc)
                _block(then, kinds)
                _block(orelse, kinds)
            case While(cond=cond, body=body, loc=loc):
                _block(cond, kinds)
                if cond.results and _lazy(cond.results[0], kinds):
                    raise _branch_error("a `while` loop's condition", loc)
                _block(body, kinds)
            case ForRange(start=start, stop=stop, step=step, body=body, loc=loc):
                if any(_lazy(b, kinds) for b in (start, stop, step)):
                    raise _branch_error("a `for` loop's range", loc)
                _block(body, kinds)


def _lookup(table: dict, fn) -> str | None:
    try:
        return table.get(fn)
    except TypeError:  # an unhashable callable
        return None


def _branch_error(what: str, loc) -> LazyArrayError:
    return LazyArrayError(
        f"{what} depends on the value of a Dask array, which is only known once the graph "
        "is computed", loc,
        "choose between values with np.where(cond, a, b) (both are computed, the derivative "
        "flows through the chosen one), or compute the condition first and pass it as an "
        "argument")
