"""The reverse (VJP) pass: IR -> IR with a forward sweep and a reverse sweep.

The forward sweep is the primal code, plus what the reverse sweep reads and
cannot see: values from inside branches leave the `If` as extra outputs, and
values from loop iterations go onto a tape (a Python list) that the reversed
loop pops. The reverse sweep visits statements backwards, inlining each
primitive's VJP rule and accumulating cotangents (`x_bar`). Only active values
get cotangents; a value never reached has a symbolic zero cotangent.
"""

from __future__ import annotations

import operator

import numpy as np

from s2sad.ir.dims import broadcast_shapes
from s2sad.errors import MissingRuleError, NonDifferentiableError
from s2sad.ir import prims
from s2sad.ir.builder import Emitter, Namer, hint_of
from s2sad.ir.kinds import atom_kind, float_kind
from s2sad.ir.nodes import (
    Block,
    Call,
    Const,
    ForRange,
    Function,
    If,
    Var,
    While,
    blocks_of,
)
from s2sad.passes.activity import active_vars
from s2sad.passes.checkpoint import CheckpointedLoops
from s2sad.passes.forward import check_options, materialize, missing_rule
from s2sad.passes.inline_rules import bind_call, callee_name, check_differentiable, inline, zero
from s2sad.passes.reverse_control import ControlFlowReversal


def _elementwise(fn) -> bool:
    """A primitive whose VJP maps each entry's cotangent to the same entry of its operands."""
    return isinstance(fn, np.ufunc) or fn in _ELEMENTWISE_OPS


_ELEMENTWISE_OPS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
                    operator.neg, operator.pos, abs}


def _fits(cond_shape, shape) -> bool:
    """Does a condition of `cond_shape` select entries of an array of `shape`?"""
    if cond_shape is None:
        return False
    try:
        return broadcast_shapes(tuple(cond_shape), tuple(shape)) == tuple(shape)
    except ValueError:
        return False


class ReversePass(CheckpointedLoops, ControlFlowReversal):
    def __init__(self, fn: Function, kinds: dict, wrt: tuple, table,
                 checkpoints: int | None = None):
        self.checkpoints = checkpoints  # at most this many snapshots per loop (revolve)
        self.fn = fn
        self.kinds = kinds
        self.table = table
        self.wrt_params = [fn.params[i] for i in wrt]
        self.active = active_vars(fn, self.wrt_params, kinds, table)
        self.namer = Namer.for_function(fn)
        self.tapes: list = []  # top-level statements creating tapes
        self.readers: list = []  # statements opening each tape for the reverse sweep
        self.cot_tapes: dict = {}  # tape of the differentiated code -> its cotangent tape
        self.reader_tape = _reader_tapes(fn.body)
        self.loop_depth = 0  # loops being reversed around the current statement
        self.top: Emitter | None = None  # the emitter of the reverse sweep's top level
        # cotangent atom -> the np.where selections it flows from: [(condition, branch)]
        self.masks: dict = {}
        self.exact_readers: set = set()
        # the sums of two cotangents of one value: both have its shape, known or not (the
        # simplifier may make such a sum one scatter, see rewrites.same_shape)
        self.cotangent_sums: set = set()
        # JAX's convention: the cotangent of a real value is real (the real part of what
        # complex arithmetic sends it); only a function with complex values needs the check
        self.has_complex = any(_complex(k) for k in kinds.values())

    def kind(self, a):
        return atom_kind(a, self.kinds)

    def is_active(self, a) -> bool:
        return isinstance(a, Var) and a in self.active

    # -- driver ---------------------------------------------------------

    def run(self) -> Function:
        fn = self.fn
        results = list(fn.body.results)
        seeds = [self.namer.fresh(_bar_name(r, i, len(results), fn.returns_tuple))
                 for i, r in enumerate(results)]
        fwd = Emitter(self.namer)
        rev = self.top = Emitter(self.namer)  # the reverse sweep's top level
        bars: dict = {}
        for r, s in zip(results, seeds):
            if self.is_active(r):
                self.add_bar(bars, r, s, rev)
        body_stmts = self.sweep(fn.body.stmts, fwd, rev, bars)
        outs = []
        for p in self.wrt_params:
            b = bars.get(p)
            b = materialize(rev, zero(self.kind(p)) if b is None else b, self.kind(p), p,
                            hint_of(p) + "_bar")
            b = self.structured(b, self.kind(p), rev, hint_of(p) + "_bar")
            outs.append(self.match_scalar(b, p, rev))
        stmts = list(self.tapes) + list(body_stmts)
        boundary = Call(self.namer.fresh("_sweep"), prims.sweep_boundary, ())
        stmts += [boundary] + self.readers + rev.stmts
        meta = {"mode": "vjp", "n_primal": len(results), "seed_params": tuple(seeds),
                "exact_readers": frozenset(self.exact_readers),
                "cotangent_sums": frozenset(self.cotangent_sums)}
        return Function(fn.name, fn.params + tuple(seeds), Block(tuple(stmts),
                                                                 tuple(results + outs)),
                        fn.returns_tuple, fn.kwonly, (), fn.loc, fn.source_lines,
                        fn.first_line, meta)

    def structured(self, b, k, em, hint: str):
        """The cotangent `b` of a tuple or list argument of kind `k` with the argument's
        structure: a tuple stays a tuple, a list a list, each item's cotangent of the item's
        shape (a Python-number item's a number). Inside, a sequence's cotangent is anything
        whose items are the items' cotangents (np.stack's VJP gives one stacked array, that
        of np.concatenate a list for a tuple); the caller gets the structure, as in JAX."""
        if k.tag not in ("tuple", "list"):
            return b
        kb = self.kind(b)
        if kb.tag == k.tag and len(kb.items) == len(k.items) and all(
                ib.tag == ik.tag and (ik.tag not in ("tuple", "list") or ib == ik)
                for ib, ik in zip(kb.items, k.items)):
            return b  # (already an item-by-item cotangent of the argument's structure)
        parts = []
        for i, ki in enumerate(k.items):
            if not ki.is_float:
                parts.append(Const(None))
                continue
            item = em.call(operator.getitem, (b, Const(i)), hint="_" + hint)
            ik = self.kind(item)
            if ki.tag == "scalar" and ik.tag == "array" and ik.shape == ():
                item = em.call(operator.getitem, (item, Const(())), hint="_" + hint)
            parts.append(self.structured(item, ki, em, "_" + hint))
        make = prims.make_tuple if k.tag == "tuple" else prims.make_list
        return em.call(make, parts, hint=hint)

    def match_scalar(self, b, p, em):
        """A Python-scalar parameter gets a scalar cotangent, not a 0-d array."""
        kp, kb = self.kind(p), self.kind(b)
        if kp.tag == "scalar" and kb.tag == "array" and kb.shape == ():
            return em.call(operator.getitem, (b, Const(())), hint=hint_of(p) + "_bar")
        return b

    # -- the two sweeps over one block ------------------------------------

    def sweep(self, stmts, fwd: Emitter, rev: Emitter, bars: dict) -> list:
        """Emit the forward sweep of `stmts` into `fwd` (returned) and their reverse into `rev`.

        The reverse statements are emitted in reverse order; `bars` maps each active variable
        to its accumulated cotangent and is updated in place.
        """
        plans = []
        for s in stmts:
            plans.append(self.forward_stmt(s, fwd))
        for s, plan in reversed(list(zip(stmts, plans))):
            self.reverse_stmt(s, plan, rev, bars)
        return fwd.stmts

    def forward_stmt(self, s, fwd: Emitter):
        """Emit the forward version of `s`; returns a plan the reverse step needs."""
        if type(s) is Call and not isinstance(s.fn, _SPECIAL_CALLS):
            fwd.stmts.append(s)  # (the common statement, without pattern matching)
            return None
        match s:
            case Call(fn=fn) if isinstance(fn, prims.CheckpointedCall) and \
                    s.target in self.active:
                # @s2sad.checkpoint: the helper itself now, its VJP in the reverse sweep
                fwd.add(s)
                return {"checkpoint": tuple(i for i, a in enumerate(s.args)
                                            if self.is_active(a))}
            case Call(fn=fn) if isinstance(fn, prims.RecursiveCall) and s.target in self.active:
                # a recursive call: the VJP of the function itself, keeping its pullback
                act = tuple(i for i, a in enumerate(s.args) if self.is_active(a))
                name = fn.__name__
                kinds = [self.kind(a) for a in s.args]
                out = self.kind(s.target)
                if out.tag == "scalar" and out.dtype == "f" and all(
                        kinds[i].tag in ("scalar", "array") and kinds[i].dtype == "f"
                        for i in act):  # (a gradient a number scales: of real arrays)
                    # a call of the module's own function returning one real number, for
                    # Numba (which compiles no pullback closure; transform._self_call says
                    # where): its value and gradient, the gradient kept on the tape and
                    # scaled by the call's cotangent in the reverse sweep
                    d = fn.self_call(fn, "value_and_grad", act, kinds, s.kwargs)
                    if d is not None:
                        pair = fwd.call(d, s.args, s.kwargs, hint="_" + name, loc=s.loc)
                        fwd.add(Call(s.target, operator.getitem, (pair, Const(0)), (), s.loc))
                        grads = fwd.call(operator.getitem, (pair, Const(1)),
                                         hint=name + "_grads", loc=s.loc)
                        # (each gradient kept apart: Numba types no optional tuple, what
                        # a tuple kept from one branch of an `if` would be)
                        return {"grads": [
                            fwd.call(operator.getitem, (grads, Const(k)),
                                     hint=f"{name}_gradient" if len(act) == 1 else
                                     f"{name}_gradient_{hint_of(s.args[i])}", loc=s.loc)
                            for k, i in enumerate(act)], "act": act}
                # (a function of the module being generated where the arguments' kinds are
                # those it is compiled for, else the derivative object, dispatching)
                d = fn.self_call(fn, "vjp", act, kinds, s.kwargs) or fn.derivative("vjp", act)
                pair = fwd.call(d, s.args, s.kwargs, hint="_" + name + "_vjp", loc=s.loc)
                fwd.add(Call(s.target, operator.getitem, (pair, Const(0)), (), s.loc))
                pb = fwd.call(operator.getitem, (pair, Const(1)),
                              hint=name + "_pullback", loc=s.loc)
                return {"pullback": pb, "act": act}
            case Call():
                fwd.add(s)
                return None
            case If():
                return self.forward_if(s, fwd)
            case ForRange() | While():
                return self.forward_loop(s, fwd)
        raise TypeError(s)

    def reverse_stmt(self, s, plan, rev: Emitter, bars: dict):
        if type(s) is Call and plan is None:
            self.reverse_call(s, rev, bars)  # (the common statement, as the last case below)
            return
        match s:
            case Call() if isinstance(plan, dict) and "checkpoint" in plan:
                g = bars.get(s.target)
                if g is None:
                    return
                act = plan["checkpoint"]
                d = s.fn.derivative("vjp", act)
                name = s.fn.__name__ if s.fn.__name__.isidentifier() else "helper"
                pair = rev.call(d, s.args, s.kwargs, hint="_" + name + "_vjp", loc=s.loc)
                pb = rev.call(operator.getitem, (pair, Const(1)), hint=name + "_pullback",
                              loc=s.loc)
                got = rev.call(prims.apply_pullback, (pb, g), hint="_bars", loc=s.loc)
                for k, i in enumerate(act):
                    a = s.args[i]
                    part = rev.call(operator.getitem, (got, Const(k)),
                                    hint=hint_of(a) + "_bar", loc=s.loc)
                    self.add_bar(bars, a, part, rev, real=True)
            case Call() if isinstance(plan, dict) and "grads" in plan:
                g = bars.get(s.target)
                if g is None:
                    return
                for grad, i in zip(plan["grads"], plan["act"]):
                    a = s.args[i]
                    part = rev.call(operator.mul, (g, grad), hint=hint_of(a) + "_bar",
                                    loc=s.loc)
                    self.add_bar(bars, a, part, rev, real=True)
            case Call() if isinstance(plan, dict) and "pullback" in plan:
                g = bars.get(s.target)
                if g is None:
                    return
                got = rev.call(prims.apply_pullback, (plan["pullback"], g),
                               hint="_bars", loc=s.loc)
                for k, i in enumerate(plan["act"]):
                    a = s.args[i]
                    part = rev.call(operator.getitem, (got, Const(k)),
                                    hint=hint_of(a) + "_bar", loc=s.loc)
                    self.add_bar(bars, a, part, rev, real=True)
            case Call():
                self.reverse_call(s, rev, bars)
            case If():
                self.reverse_if(s, plan, rev, bars)
            case ForRange() | While() if self.checkpointed(s):
                self.reverse_loop_checkpointed(s, plan, rev, bars)
            case ForRange() | While():
                self.reverse_loop(s, plan, rev, bars)

    # -- accumulation ---------------------------------------------------

    def add_bar(self, bars: dict, v, contrib, em: Emitter, loc=None, real=False):
        """Add `contrib` to the cotangent of `v`; a sum is commented at `loc` (by default
        at the line of the last statement made, see sum_cotangents). `real`: `contrib` is
        real where `v` is (a derivative's cotangent of an argument)."""
        if not self.is_active(v):
            return
        if not real and self.has_complex and self.kind(v).tag in ("scalar", "array") and \
                self.kind(v).dtype in ("f", "i", "b"):
            # (the simplifier removes it where the contribution is known to be real)
            contrib = em.call(np.real, (contrib,), hint=hint_of(v) + "_bar")
        prev = bars.get(v)
        if prev is None:
            bars[v] = contrib
        else:
            bars[v] = self.sum_cotangents(prev, contrib, self.kind(v), em, hint_of(v) + "_bar",
                                          loc)

    def sum_cotangents(self, a, b, k, em: Emitter, hint: str, loc=None):
        """a + b, item by item for a tuple or list (where + would concatenate)."""
        if k.tag not in ("tuple", "list") or k.items is None:
            # at the line of the contribution just made: its comment stays over the sum
            if loc is None:
                loc = next((s.loc for s in reversed(em.stmts) if getattr(s, "loc", None)),
                           None)
            total = em.call(operator.add, (a, b), hint=hint, loc=loc)
            self.cotangent_sums.add(total)
            return total
        parts = []
        for i, ki in enumerate(k.items):
            if not ki.is_float:
                parts.append(Const(None))
                continue
            x = em.call(operator.getitem, (a, Const(i)), hint="_p")
            y = em.call(operator.getitem, (b, Const(i)), hint="_q")
            parts.append(self.sum_cotangents(x, y, ki, em, "_s"))
        return em.call(prims.make_tuple if k.tag == "tuple" else prims.make_list, parts, hint=hint)

    # -- calls ----------------------------------------------------------

    def reverse_tape_op(self, s: Call, rev: Emitter, bars: dict):
        """Reverse of a tape in the code being differentiated (reverse over reverse mode).

        The reverse sweep meets the tape's reads first, in the order the values were pushed,
        and pushes their cotangents onto a cotangent tape; it then meets the pushes last one
        first, and pops each pushed value's cotangent.
        """
        fn = s.fn
        if fn is prims.tape_next:
            tape = self.reader_tape.get(s.args[0])
            if tape is None or tape not in self.active:
                return
            k = self.kind(s.target)
            b = bars.get(s.target)
            b = materialize(rev, zero(k) if b is None else b, k, s.target,
                            hint_of(s.target) + "_bar")
            rev.call(prims.tape_push, (self.cot_tape(tape), b), hint="_push")
        elif fn is prims.tape_push:
            tape, item = s.args
            if tape not in self.active or tape not in self.cot_tapes:
                # no reversed read of the tape pushed a cotangent (the loop reading it got
                # none and was left out): the pushed value's cotangent through it is zero
                return
            popped = rev.call(prims.tape_pop, (self.cot_tape(tape),), hint=hint_of(item) + "_bar")
            if self.is_active(item):
                self.add_bar(bars, item, popped, rev)

    def cot_tape(self, tape):
        if tape not in self.cot_tapes:
            self.cot_tapes[tape] = self.namer.fresh(hint_of(tape) + "_bar")
            self.readers.append(Call(self.cot_tapes[tape], prims.new_tape, ()))
        return self.cot_tapes[tape]

    def reverse_call(self, s: Call, rev: Emitter, bars: dict):
        if s.fn in (prims.tape_push, prims.tape_next):
            self.reverse_tape_op(s, rev, bars)
            return
        if s.fn in (prims.tape_reader, prims.new_tape, prims.tape_pop):
            return
        t = s.target
        g = bars.get(t)
        if g is None or t not in self.active:
            return
        fn = s.fn
        if fn in (prims.make_tuple, prims.make_list):
            for i, a in enumerate(s.args):
                if self.is_active(a):
                    item = rev.call(operator.getitem, (g, Const(i)), hint=hint_of(a) + "_bar",
                                    loc=s.loc)
                    self.add_bar(bars, a, item, rev)
            return
        if fn is operator.getitem and self.kind(s.args[0]).tag in ("tuple", "list"):
            self.reverse_tuple_getitem(s, g, rev, bars)
            return
        rule = self.table.vjp_rules.get(fn)
        if rule is None and fn in self.table.jvp_rules:
            self.transposed_vjp(s, self.table.jvp_rules[fn], g, rev, bars)
            return
        if rule is None:
            raise missing_rule(fn, "VJP", s.loc)
        bindings = bind_call(rule, s)
        check_differentiable(rule, bindings, self.is_active, s)
        check_options(self.table, s, bindings, self.kind)
        bindings["g"] = g
        if rule.uses_ans:
            bindings["ans"] = t
        # a contribution added to an existing cotangent is a temporary, folded into the sum
        hints = [("_" if bars.get(bindings[p]) is not None else "") + hint_of(bindings[p]) +
                 "_bar" for p in rule.diff_params]
        # at the top level, the contributions to inactive operands are not needed (see
        # inline: what the simplifier would remove is left out of the copy)
        needed = tuple([self.is_active(bindings[p]) for p in rule.diff_params]) \
            if rev is self.top else None
        last_loc: list = []
        contribs = inline(rule, self.table, rev, bindings, hints, loc=s.loc,
                          kind_of=self.kind, g_kind=float_kind(self.kind(t)), needed=needed,
                          last_loc=last_loc)
        if len(contribs) != len(rule.diff_params):
            raise NonDifferentiableError(
                f"the VJP rule for `{callee_name(fn)}` returns {len(contribs)} values for "
                f"{len(rule.diff_params)} differentiable parameters", s.loc)
        masks = self.masks.get(g) if fn is np.where or _elementwise(fn) else None
        for p, c in zip(rule.diff_params, contribs):
            a = bindings[p]
            if self.is_active(a):
                c, m = self.mask_branch(s, bindings, p, c, masks, rev)
                fresh = bars.get(a) is None
                self.add_bar(bars, a, c, rev, last_loc[0] if last_loc else None)
                if m and fresh:
                    self.masks[bars[a]] = m

    def mask_branch(self, s: Call, bindings: dict, p: str, c, masks, rev: Emitter):
        """NaN-safe np.where: a cotangent computed from a branch np.where did not select is
        exactly 0 there, even where the branch's own derivative is inf or NaN (sqrt(x) at
        x <= 0, log(x) at 0). Elementwise VJPs downstream of a where repeat its selection on
        what they pass back; returns the contribution and the selections it carries."""
        if not masks and s.fn is not np.where:
            return c, None  # (the common case: no selection to repeat, none made here)
        k = self.kind(bindings[p])
        shape = k.static_shape
        if k.tag != "array" or shape is None or shape != self.kind(s.target).static_shape:
            return c, None  # a number, or broadcast or unknown shape: no mask follows it
        fits = [(cond, then) for cond, then in masks or ()
                if _fits(self.kind(cond).static_shape, shape)]
        if not isinstance(c, Const):  # a constant (a symbolic zero) needs no mask
            for cond, then in fits:
                keep = (c, Const(0.0)) if then else (Const(0.0), c)
                c = rev.call(np.where, (cond,) + keep, hint=hint_of(bindings[p]) + "_bar")
        if s.fn is np.where and p in ("x", "y"):
            cond = bindings["condition"]
            if _fits(self.kind(cond).static_shape, shape):
                fits.append((cond, p == "x"))
        return c, tuple(fits) or None

    def transposed_vjp(self, s: Call, jrule, g, rev: Emitter, bars: dict):
        """A primitive with only a JVP rule: its VJP is the transpose of that rule, which is
        linear in the tangents, and the compiler gets it by running this reverse pass over
        the rule's own IR with respect to the tangents (at zero tangents, as it is linear).
        """
        if s.fn in _TRANSPOSING:
            raise MissingRuleError(
                f"no VJP rule for `{callee_name(s.fn)}`, and its JVP rule calls "
                f"`{callee_name(s.fn)}` itself, so it cannot be transposed", s.loc,
                f"register a VJP rule with @s2sad.defvjp({callee_name(s.fn)}), or write the "
                "JVP rule with other primitives")
        _TRANSPOSING.add(s.fn)
        try:
            self._transposed_vjp(s, jrule, g, rev, bars)
        finally:
            _TRANSPOSING.discard(s.fn)

    def _transposed_vjp(self, s: Call, jrule, g, rev: Emitter, bars: dict):
        from s2sad.ir.builder import substitute_block
        from s2sad.ir.kinds import infer_kinds
        from s2sad.passes.inline_rules import rule_ir

        ir = rule_ir(jrule, self.table)
        bindings = bind_call(jrule, s)
        check_differentiable(jrule, bindings, self.is_active, s)
        check_options(self.table, s, bindings, self.kind)
        kinds_in, mapping = {}, {}
        wrt = []
        for i, p in enumerate(ir.params):
            if p.name.endswith("_dot"):
                primal = bindings[p.name[:-4]]
                kinds_in[p] = self.kind(primal)
                mapping[p] = zero(self.kind(primal), primal)
                if self.is_active(primal):
                    wrt.append(i)
            elif p.name == "ans":
                kinds_in[p] = self.kind(s.target)
                mapping[p] = s.target
            else:
                kinds_in[p] = self.kind(bindings[p.name])
                mapping[p] = bindings[p.name]
        if not wrt:
            return
        joint = reverse_pass(ir, infer_kinds(ir, kinds_in), tuple(wrt), self.table)
        (seed,) = joint.meta["seed_params"]
        mapping[seed] = g
        body = Block(tuple(st for st in joint.body.stmts
                           if not (isinstance(st, Call) and st.fn is prims.sweep_boundary)),
                     joint.body.results)
        block = substitute_block(body, mapping, rev.namer, loc=s.loc)
        rev.stmts.extend(block.stmts)
        for i, b in zip(wrt, block.results[1:]):
            self.add_bar(bars, bindings[ir.params[i].name[:-4]], b, rev)

    @staticmethod
    def zero_item(base, i: int, k, rev: Emitter, hint: str = "zero"):
        """A zero cotangent for item `i` of the tuple `base`; where its kind does not give
        the shape (a generic compile), the zero is shaped like the item itself."""
        known = k.tag in ("scalar", "tuple", "list") or (k.tag == "array" and k.shape is not None)
        like = None if known else rev.call(operator.getitem, (base, Const(i)), hint="_item")
        return materialize(rev, zero(k), k, like, hint)

    def computed_item_bars(self, s: Call, base, idx, items, g, rev: Emitter) -> list:
        """The items' cotangents for `base[idx]` with an index known only at run time: the
        item the index picks gets `g`, the others zero, chosen by one `if` per float item
        (`idx % n == j`, as the index was valid in the forward sweep). The float items must
        share one kind, so that `g` fits whichever the index picks."""
        floats = {k for k in items if k.is_float}
        idx_kind = self.kind(idx)
        if len(floats) != 1 or not (idx_kind.tag == "scalar" and idx_kind.dtype == "i"):
            kind = "list" if self.kind(base).tag == "list" else "tuple"
            raise NonDifferentiableError(
                f"indexing a {kind} by a computed index, where its items differ in kind",
                s.loc, f"index the {kind} with constant integers, or keep its differentiable "
                "items of one shape")
        pos = rev.call(operator.mod, (idx, Const(len(items))), hint=hint_of(idx), loc=s.loc)
        parts = []
        for j, k in enumerate(items):
            if not k.is_float:
                parts.append(Const(None))
                continue
            picked = rev.call(operator.eq, (pos, Const(j)), hint="_c", loc=s.loc)
            other = rev.nested()
            z = self.zero_item(base, j, k, other, hint_of(base) + "_bar")
            part = self.namer.fresh(hint_of(base) + "_bar")
            rev.add(If(picked, Block((), (g,)), Block(tuple(other.stmts), (z,)), (part,),
                       s.loc))
            parts.append(part)
        return parts

    def reverse_tuple_getitem(self, s: Call, g, rev: Emitter, bars: dict):
        base, idx = s.args
        if not self.is_active(base):
            return
        items = self.kind(base).items
        if isinstance(idx, Const) and isinstance(idx.value, int):
            parts = []
            for i, k in enumerate(items):
                if i == idx.value % len(items):
                    parts.append(g)
                else:
                    parts.append(self.zero_item(base, i, k, rev) if k.is_float
                                 else Const(None))
        elif isinstance(idx, Const) and isinstance(idx.value, slice):
            # x[1:] of a tuple or list: each item it took gets its item of `g`
            taken = range(len(items))[idx.value]
            parts = []
            for i, k in enumerate(items):
                if not k.is_float:
                    parts.append(Const(None))
                elif i in taken:
                    parts.append(rev.call(operator.getitem, (g, Const(taken.index(i))),
                                          hint=hint_of(base) + "_bar", loc=s.loc))
                else:
                    parts.append(self.zero_item(base, i, k, rev))
        else:
            parts = self.computed_item_bars(s, base, idx, items, g, rev)
        whole = rev.call(prims.make_tuple, parts, hint=hint_of(base) + "_bar", loc=s.loc)
        prev = bars.get(base)
        if prev is None:
            bars[base] = whole
        else:
            bars[base] = self.sum_cotangents(prev, whole, self.kind(base), rev,
                                             hint_of(base) + "_bar")


_TRANSPOSING: set = set()  # primitives whose JVP rule is being transposed

# the callees whose forward sweep is more than the call itself (see forward_stmt)
_SPECIAL_CALLS = (prims.CheckpointedCall, prims.RecursiveCall)


def _complex(k) -> bool:
    if not hasattr(k, "tag"):  # (the kinds also map a tape's readers to the tape)
        return False
    if k.tag in ("tuple", "list"):
        return any(_complex(i) for i in k.items)
    return k.dtype == "c"


def _reader_tapes(block: Block) -> dict:
    out = {}
    for st in block.stmts:
        if isinstance(st, Call) and st.fn is prims.tape_reader:
            out[st.target] = st.args[0]
        for inner in blocks_of(st):
            out.update(_reader_tapes(inner))
    return out


def _bar_name(r, i, n, as_tuple) -> str:
    if isinstance(r, Var) and not r.name.startswith("_"):
        return hint_of(r) + "_bar"
    return "out_bar" if n == 1 else f"out{i}_bar"


def reverse_pass(fn: Function, kinds: dict, wrt: tuple, table,
                 checkpoints: int | None = None) -> Function:
    """The joint VJP function of `fn` with respect to the parameters at `wrt`.

    Parameters: the primal ones, then one cotangent seed per result (`meta["seed_params"]`).
    Results: the primal results, then one cotangent per `wrt` parameter. A `sweep_boundary`
    call separates the forward sweep from the reverse sweep. `checkpoints`: reverse each
    top-level loop by recomputation from at most that many snapshots (passes/checkpoint.py).
    """
    return ReversePass(fn, kinds, wrt, table, checkpoints).run()
