"""Fresh results: a derivative never hands back an array the caller can reach otherwise.

A tangent or cotangent that is an argument (`grad` of `x * y` is `y`), a captured constant
array, a value the pullback closure keeps for its next call, or the same array as another
result, is copied before it is returned; every other result is already a new array and
costs nothing more.
"""

from __future__ import annotations

import numpy as np

from s2sad.ir import prims
from s2sad.ir.aliasing import holds_operand
from s2sad.ir.builder import Namer
from s2sad.ir.kinds import UNKNOWN, infer_kinds
from s2sad.ir.nodes import Block, Call, Const, Function, Var


def fresh_results(fn: Function, param_kinds: dict, closure_sweep: bool) -> Function:
    """Copy the derivative results of `fn` that alias something the caller can reach.

    `closure_sweep`: the statements after the sweep boundary run in a pullback closure that
    may be called again, so values of the forward sweep that it returns are copied too.
    """
    n = fn.meta.get("n_primal", 0)
    results = list(fn.body.results)
    params = set(fn.params)
    forward = set()
    if closure_sweep:
        for st in fn.body.stmts:
            if isinstance(st, Call) and st.fn is prims.sweep_boundary:
                break
            forward.update(st.defs)
    made = {st.target: st for st in fn.body.stmts
            if type(st) is Call and (st.fn is prims.make_tuple or st.fn is prims.make_list)}
    seen: set = set()
    stmts = list(fn.body.stmts)
    # the kinds and the names taken, found when a first copy needs them (most results
    # are fresh already: no walk over the function then)
    state: dict = {"kinds": None, "namer": None}

    defs = {st.target: st for st in fn.body.stmts if type(st) is Call}

    def held(r, out: set) -> set:
        """`r` and the arrays it may be or view (np.flip(x_dot) is x_dot's memory)."""
        if r in out:
            return out
        out.add(r)
        d = defs.get(r)
        if d is not None:
            for i, a in enumerate(d.args):
                if isinstance(a, Var) and holds_operand(d.fn, i):
                    held(a, out)
        return out

    def aliases(r) -> bool:
        if isinstance(r, Var):
            bases = held(r, set())
            alias = any(b in params or b in forward for b in bases) or not seen.isdisjoint(bases)
            seen.update(bases)
            return alias
        return isinstance(r, Const) and isinstance(r.value, np.ndarray)

    def fresh(r, into):
        """`r`, or a copy of it made by statements added to `into` (a tuple or list
        result: its items are copied just before it is built)."""
        if isinstance(r, Var) and r in made and r not in params:
            d = made[r]
            before: list = []
            items = [fresh(a, before) for a in d.args]
            if before:
                k = next(j for j, st in enumerate(stmts) if st is d)
                stmts[k:k + 1] = before + [Call(d.target, d.fn, tuple(items), (), d.loc)]
            return r
        if not aliases(r):
            return r
        return copy_of(r, into)

    def copy_of(r, into):
        k = param_kinds.get(r) if isinstance(r, Var) else None
        if k is None and isinstance(r, Var):
            if state["kinds"] is None:
                state["kinds"] = infer_kinds(fn, param_kinds)
            k = state["kinds"].get(r, UNKNOWN)
        if isinstance(r, Const):
            copier = np.copy
        elif k is not None and (k.tag == "scalar" or k.lazy):
            return r  # a Python or NumPy scalar is immutable, and so is a Dask array
        elif k is not None and k.tag == "array" and k.shape is not None:
            copier = np.copy
        else:
            copier = prims.fresh_copy
        if state["namer"] is None:
            state["namer"] = Namer.for_function(fn)
        target = state["namer"].fresh(r.name if isinstance(r, Var) else "_copy")
        into.append(Call(target, copier, (r,), (), None))
        return target

    for i in range(n, len(results)):
        results[i] = fresh(results[i], stmts)
    if len(stmts) == len(fn.body.stmts):
        return fn
    return Function(fn.name, fn.params, Block(tuple(stmts), tuple(results)), fn.returns_tuple,
                    fn.kwonly, fn.defaults, fn.loc, fn.source_lines, fn.first_line,
                    dict(fn.meta))
