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

from s2sad.errors import MissingRuleError, NonDifferentiableError
from s2sad.ir import prims
from s2sad.ir.builder import Emitter, Namer, hint_of, replace_atoms
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
    atoms_of,
    blocks_of,
    free_vars,
)
from s2sad.passes.activity import active_vars
from s2sad.passes.forward import check_options, materialize
from s2sad.passes.inline_rules import bind_call, callee_name, check_differentiable, inline, zero


def _defined(block: Block) -> set:
    out = set()
    for s in block.stmts:
        out.update(s.defs)
    return out


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
        return tuple(np.broadcast_shapes(tuple(cond_shape), tuple(shape))) == tuple(shape)
    except ValueError:
        return False


class ReversePass:
    def __init__(self, fn: Function, kinds: dict, wrt: tuple, table):
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
        # cotangent atom -> the np.where selections it flows from: [(condition, branch)]
        self.masks: dict = {}
        self.exact_readers: set = set()
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
        rev = Emitter(self.namer)
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
            outs.append(self.match_scalar(b, p, rev))
        stmts = list(self.tapes) + list(body_stmts)
        boundary = Call(self.namer.fresh("_sweep"), prims.sweep_boundary, ())
        stmts += [boundary] + self.readers + rev.stmts
        meta = {"mode": "vjp", "n_primal": len(results), "seed_params": tuple(seeds),
                "exact_readers": frozenset(self.exact_readers)}
        return Function(fn.name, fn.params + tuple(seeds), Block(tuple(stmts),
                                                                 tuple(results + outs)),
                        fn.returns_tuple, fn.kwonly, (), fn.loc, fn.source_lines,
                        fn.first_line, meta)

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
        match s:
            case Call(fn=fn) if isinstance(fn, prims.RecursiveCall) and s.target in self.active:
                # a recursive call: the VJP of the function itself, keeping its pullback
                act = tuple(i for i, a in enumerate(s.args) if self.is_active(a))
                d = fn.derivative("vjp", act)
                name = fn.__name__
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
        match s:
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
                    self.add_bar(bars, a, part, rev)
            case Call():
                self.reverse_call(s, rev, bars)
            case If():
                self.reverse_if(s, plan, rev, bars)
            case ForRange() | While():
                self.reverse_loop(s, plan, rev, bars)

    # -- accumulation ---------------------------------------------------

    def add_bar(self, bars: dict, v, contrib, em: Emitter):
        if not self.is_active(v):
            return
        if self.has_complex and self.kind(v).tag in ("scalar", "array") and \
                self.kind(v).dtype in ("f", "i", "b"):
            # (the simplifier removes it where the contribution is known to be real)
            contrib = em.call(np.real, (contrib,), hint=hint_of(v) + "_bar")
        prev = bars.get(v)
        if prev is None:
            bars[v] = contrib
        else:
            bars[v] = em.call(operator.add, (prev, contrib), hint=hint_of(v) + "_bar")

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
            if tape not in self.active:
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
            raise MissingRuleError(
                f"no VJP rule for `{callee_name(fn)}`", s.loc,
                f"register one with @s2sad.defvjp({callee_name(fn)})")
        bindings = bind_call(rule, s)
        check_differentiable(rule, bindings, self.is_active, s)
        check_options(self.table, s, bindings, self.kind)
        bindings["g"] = g
        if rule.uses_ans:
            bindings["ans"] = t
        # a contribution added to an existing cotangent is a temporary, folded into the sum
        hints = [("_" if bars.get(bindings[p]) is not None else "") + hint_of(bindings[p]) +
                 "_bar" for p in rule.diff_params]
        contribs = inline(rule, self.table, rev, bindings, hints, loc=s.loc,
                          kind_of=self.kind, g_kind=float_kind(self.kind(t)))
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
                self.add_bar(bars, a, c, rev)
                if m and fresh:
                    self.masks[bars[a]] = m

    def mask_branch(self, s: Call, bindings: dict, p: str, c, masks, rev: Emitter):
        """NaN-safe np.where: a cotangent computed from a branch np.where did not select is
        exactly 0 there, even where the branch's own derivative is inf or NaN (sqrt(x) at
        x <= 0, log(x) at 0). Elementwise VJPs downstream of a where repeat its selection on
        what they pass back; returns the contribution and the selections it carries."""
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
    def zero_item(base, i: int, k, rev: Emitter):
        """A zero cotangent for item `i` of the tuple `base`; where its kind does not give
        the shape (a generic compile), the zero is shaped like the item itself."""
        known = k.tag in ("scalar", "tuple", "list") or (k.tag == "array" and k.shape is not None)
        like = None if known else rev.call(operator.getitem, (base, Const(i)), hint="_item")
        return materialize(rev, zero(k), k, like, "zero")

    def reverse_tuple_getitem(self, s: Call, g, rev: Emitter, bars: dict):
        base, idx = s.args
        if not self.is_active(base):
            return
        items = self.kind(base).items
        if not isinstance(idx, Const) or not isinstance(idx.value, int):
            raise NonDifferentiableError("indexing a tuple by a computed index", s.loc,
                                         "index tuples with constant integers")
        parts = []
        for i, k in enumerate(items):
            if i == idx.value % len(items):
                parts.append(g)
            else:
                parts.append(self.zero_item(base, i, k, rev) if k.is_float else Const(None))
        whole = rev.call(prims.make_tuple, parts, hint=hint_of(base) + "_bar", loc=s.loc)
        prev = bars.get(base)
        if prev is None:
            bars[base] = whole
        else:
            summed = []
            for i in range(len(items)):
                a = rev.call(operator.getitem, (prev, Const(i)), hint="_p")
                b = rev.call(operator.getitem, (whole, Const(i)), hint="_q")
                summed.append(rev.call(operator.add, (a, b), hint="_s") if items[i].is_float
                              else Const(None))
            bars[base] = rev.call(prims.make_tuple, summed, hint=hint_of(base) + "_bar")

    # -- branches ---------------------------------------------------------

    def forward_if(self, s: If, fwd: Emitter):
        """Forward sweep of an If: the branches' own forward sweeps (residuals added later)."""
        branches = []
        for blk in (s.then, s.orelse):
            inner = fwd.nested()
            plans = [self.forward_stmt(x, inner) for x in blk.stmts]
            branches.append((blk, inner, plans))
        plan = {"branches": branches, "index": len(fwd.stmts)}
        fwd.add(None)  # placeholder, replaced once the residuals are known
        plan["fwd"] = fwd
        return plan

    def reverse_if(self, s: If, plan, rev: Emitter, bars: dict):
        fwd = plan["fwd"]
        rev_blocks, touched = [], set()
        results_bars = []
        for (blk, inner_fwd, plans), res in zip(plan["branches"], (s.then.results,
                                                                 s.orelse.results)):
            inner_rev = rev.nested()
            local = dict(bars)
            for o, r in zip(s.outputs, res):
                if o in bars and self.is_active(r):
                    self.add_bar(local, r, bars[o], inner_rev)
            for x, p in reversed(list(zip(blk.stmts, plans))):
                self.reverse_stmt(x, p, inner_rev, local)
            rev_blocks.append((inner_rev, local))
            results_bars.append(local)
            for v, b in local.items():
                if bars.get(v) is not b:
                    touched.add(v)
        # only cotangents of variables defined outside the If leave it
        defined_inside = _defined(s.then) | _defined(s.orelse) | set(s.outputs)
        outer = sorted((v for v in touched if v not in defined_inside), key=lambda v: v.name)
        new_outs = [self.namer.fresh(hint_of(v) + "_bar") for v in outer]
        blocks = []
        for (inner_rev, local), (blk, inner_fwd, _) in zip(rev_blocks,
                                                           plan["branches"]):
            yields = []
            for v in outer:
                b = local.get(v)
                b = zero(self.kind(v)) if b is None else b
                yields.append(materialize(inner_rev, b, self.kind(v), v, hint_of(v) + "_bar"))
            block = Block(tuple(inner_rev.stmts), tuple(yields))
            blocks.append(block)
        # residuals: forward values of each branch that its reverse block reads
        res_outs = []
        then_res, else_res = list(s.then.results), list(s.orelse.results)
        mappings = [{}, {}]
        for bi, (block, (blk, inner_fwd, _)) in enumerate(zip(blocks, plan["branches"])):
            local_defs = _defined(Block(tuple(inner_fwd.stmts)))
            needed = sorted((v for v in free_vars(block) if v in local_defs),
                            key=lambda v: v.name)
            for v in needed:
                out = self.namer.fresh(v.name)
                res_outs.append(out)
                mappings[bi][v] = out
                if bi == 0:
                    then_res.append(v)
                    else_res.append(Const(None))
                else:
                    then_res.append(Const(None))
                    else_res.append(v)
        fwd_then = Block(tuple(plan["branches"][0][1].stmts), tuple(then_res))
        fwd_else = Block(tuple(plan["branches"][1][1].stmts), tuple(else_res))
        fwd.stmts[plan["index"]] = If(s.cond, fwd_then, fwd_else, s.outputs + tuple(res_outs),
                                      s.loc)
        b0 = replace_atoms(blocks[0], mappings[0])
        b1 = replace_atoms(blocks[1], mappings[1])
        if outer:
            rev.add(If(s.cond, b0, b1, tuple(new_outs), s.loc))
            for v, o in zip(outer, new_outs):
                bars[v] = o

    # -- loops ----------------------------------------------------------------

    def forward_loop(self, s, fwd: Emitter):
        inner = fwd.nested()
        plans = [self.forward_stmt(x, inner) for x in s.body.stmts]
        plan = {"inner": inner, "plans": plans, "index": len(fwd.stmts), "fwd": fwd}
        fwd.add(None)
        return plan

    def store_shapes_only(self, rev_body: Block, fwd_defs: set, inner_fwd: Emitter) -> Block:
        """Where the reverse loop needs an array only for its shape (a zero cotangent, an
        unbroadcast), tape the shape instead of the array: O(1) per iteration, not O(size).
        """
        shapes: dict = {}

        def unknown(v) -> bool:
            return v in fwd_defs

        def shape_of(v):
            known = self.kind(v).static_shape
            if known is not None:
                return Const(tuple(known))  # nothing to store at all
            if v not in shapes:
                shapes[v] = inner_fwd.call(np.shape, (v,), hint=hint_of(v) + "_shape")
            return shapes[v]

        def blk(b: Block) -> Block:
            out = []
            for st in b.stmts:
                if isinstance(st, Call):
                    a = st.args
                    if st.fn is prims.zeros_like and a and unknown(a[0]) and \
                            self.kind(a[0]).dtype != "c":
                        st = Call(st.target, np.zeros, (shape_of(a[0]),), (), st.loc)
                    elif st.fn is prims.unbroadcast and unknown(a[1]):
                        st = Call(st.target, prims.sum_to_shape, (a[0], shape_of(a[1])), (),
                                  st.loc)
                    elif st.fn is prims.broadcast_like and unknown(a[1]):
                        st = Call(st.target, np.broadcast_to, (a[0], shape_of(a[1])), (),
                                  st.loc)
                elif isinstance(st, If):
                    st = If(st.cond, blk(st.then), blk(st.orelse), st.outputs, st.loc)
                elif isinstance(st, ForRange):
                    st = ForRange(st.index, st.start, st.stop, st.step, st.params, st.inits,
                                  blk(st.body), st.outputs, st.loc, st.reverse)
                elif isinstance(st, While):
                    st = While(st.params, st.inits, blk(st.cond), blk(st.body), st.outputs,
                               st.loc)
                out.append(st)
            return Block(tuple(out), b.results)

        return blk(rev_body)

    def reached_params(self, s, act_params, bars) -> set:
        """Indices of the loop's carried values whose cotangent can be nonzero: those whose
        result has one, and, to a fixed point, those read by a value that can."""
        reached = {i for i in act_params if bars.get(s.outputs[i]) is not None}
        pindex = {p: i for i, p in enumerate(s.params)}
        while True:
            hot = {s.body.results[i] for i in reached if isinstance(s.body.results[i], Var)}
            changed = True
            while changed:
                changed = False
                for st in reversed(s.body.stmts):
                    if not any(d in hot for d in st.defs):
                        continue
                    inner = set()
                    for b in blocks_of(st):
                        inner |= free_vars(b)
                    for a in list(atoms_of(st)) + list(inner):
                        if isinstance(a, Var) and self.is_active(a) and a not in hot:
                            hot.add(a)
                            changed = True
            more = {pindex[v] for v in hot if v in pindex and pindex[v] in act_params}
            if more <= reached:
                return reached
            reached |= more

    def pushes_active(self, block: Block) -> bool:
        """Does the block push onto an active tape (cotangents then arrive through it)?"""
        for st in block.stmts:
            if isinstance(st, Call) and st.fn is prims.tape_push and st.args[0] in self.active:
                return True
            if any(self.pushes_active(b) for b in blocks_of(st)):
                return True
        return False

    def rematerialize(self, needed, body_stmts, params, index, index_map) -> list:
        """Recompute cheap residuals in the reverse loop instead of taping them.

        A value qualifies when a pure primitive computes it from values the reverse loop
        has anyway (outer variables, the loop index, constants, other recomputed values)
        and it is cheap: indexing, an attribute, or a scalar. Returns the copied statements
        (targets renamed into `index_map`), in forward order.
        """
        defs = {st.target: st for st in body_stmts if isinstance(st, Call)}
        stored_params = {v for v in needed if v in params}
        ok: dict = {}

        def cheap(st) -> bool:
            if st.fn in prims.EFFECTFUL or st.fn in (prims.new_tape, prims.tape_reader):
                return False
            if st.fn is operator.getitem or isinstance(st.fn, prims.Attr):
                return True
            return self.kind(st.target).tag == "scalar"

        def can(v) -> bool:
            if v in ok:
                return ok[v]
            ok[v] = False
            st = defs.get(v)
            if st is None or not cheap(st):
                return False
            for a in list(st.args) + [a for _, a in st.kwargs]:
                if not isinstance(a, Var) or a == index:
                    continue
                if a in params:
                    if a not in stored_params:
                        return False
                elif a in defs:
                    if not can(a):
                        return False
                elif a in _defined(Block(tuple(body_stmts))):
                    return False  # defined by a nested statement of the body
            ok[v] = True
            return True

        chosen = {v for v in needed if v not in params and can(v)}
        # the values the chosen ones are computed from, recursively
        todo = list(chosen)
        while todo:
            v = todo.pop()
            for a in defs[v].args + tuple(a for _, a in defs[v].kwargs):
                if isinstance(a, Var) and a in defs and a not in chosen:
                    chosen.add(a)
                    todo.append(a)
        copies = []
        for st in body_stmts:
            if isinstance(st, Call) and st.target in chosen:
                new = self.namer.fresh(st.target.name)
                index_map[st.target] = new
                copies.append(st)
        out = []
        for st in copies:
            sub = lambda a: index_map.get(a, a) if isinstance(a, Var) else a  # noqa: E731
            out.append(Call(index_map[st.target], st.fn, tuple(sub(a) for a in st.args),
                            tuple((n, sub(a)) for n, a in st.kwargs), st.loc))
        return out

    def reverse_loop(self, s, plan, rev: Emitter, bars: dict):
        fwd: Emitter = plan["fwd"]
        inner_fwd: Emitter = plan["inner"]
        is_for = isinstance(s, ForRange)
        # carried cotangents: one per active loop parameter, one per active outer variable used
        act_params = [i for i, p in enumerate(s.params) if p in self.active]
        if all(bars.get(s.outputs[i]) is None for i in act_params) and \
                not self.pushes_active(s.body):
            # no cotangent reaches the loop's results: its reverse contributes exactly zero
            # (and is not run, so 0 * inf in unused intermediates cannot make NaNs)
            act_params = []
            skip_reverse = True
        else:
            skip_reverse = False
            if not self.pushes_active(s.body):
                # carried values that no cotangent can reach keep a zero cotangent: leave
                # them out of the reversed loop (no work, and no 0 * inf from dead values)
                reached = self.reached_params(s, act_params, bars)
                act_params = [i for i in act_params if i in reached]
        body_free = free_vars(s.body) | free_vars(s.cond if not is_for else Block(()))
        loop_defs = set(s.params) | ({s.index} if is_for else set())
        outer = sorted((v for v in body_free if v in self.active and v not in loop_defs),
                       key=lambda v: v.name)
        pb = [self.namer.fresh(hint_of(s.params[i]) + "_bar") for i in act_params]
        wb = [self.namer.fresh(hint_of(v) + "_bar") for v in outer]
        inits = []
        for i in act_params:
            o = s.outputs[i]
            b = bars.get(o)
            k = self.kind(s.params[i])
            inits.append(materialize(rev, zero(k) if b is None else b, k, o,
                                     hint_of(s.params[i]) + "_bar"))
        for v in outer:
            b = bars.get(v)
            k = self.kind(v)
            inits.append(materialize(rev, zero(k) if b is None else b, k, v, hint_of(v) + "_bar"))
        # the reverse body
        body_rev = rev.nested()
        local = {}
        for v, w in zip(outer, wb):
            local[v] = w
        for i, p in zip(act_params, pb):
            r = s.body.results[i]
            if self.is_active(r):
                self.add_bar(local, r, p, body_rev)
        self.loop_depth += 1
        for x, p in reversed(list(zip(s.body.stmts, plan["plans"]))):
            self.reverse_stmt(x, p, body_rev, local)
        self.loop_depth -= 1
        results = []
        for i in act_params:
            p = s.params[i]
            b = local.get(p)
            k = self.kind(p)
            results.append(materialize(body_rev, zero(k) if b is None else b, k, p,
                                       hint_of(p) + "_bar"))
        for v in outer:
            results.append(local[v])
        rev_body = Block(tuple(body_rev.stmts), tuple(results))
        # residuals from the forward body, via a tape
        fwd_defs = _defined(Block(tuple(inner_fwd.stmts))) | set(s.params)
        rev_body = self.store_shapes_only(rev_body, fwd_defs, inner_fwd)
        fwd_defs = _defined(Block(tuple(inner_fwd.stmts))) | set(s.params)
        needed = sorted((v for v in free_vars(rev_body) if v in fwd_defs), key=lambda v: v.name)
        index_map = {}
        rev_index = None
        if is_for:
            rev_index = self.namer.fresh(s.index.name)
            index_map[s.index] = rev_index
        fwd_body_stmts = list(inner_fwd.stmts)
        remat = self.rematerialize(needed, fwd_body_stmts, set(s.params), s.index if is_for
                                   else None, index_map)
        needed = [v for v in needed if v not in index_map]
        pops = []
        if needed:
            tape = self.namer.fresh("tape")
            self.tapes.append(Call(tape, prims.new_tape, ()))
            reader = self.namer.fresh("_" + tape.name)
            self.readers.append(Call(reader, prims.tape_reader, (tape,)))
            if self.loop_depth == 0:
                # one push per iteration of a loop that runs once: the reversed loop takes
                # every item, one per iteration (see passes.loops.iterate_tapes)
                self.exact_readers.add(reader)
            # push as soon as the last residual is defined (parameters: at the top)
            where = 0
            for k, st in enumerate(fwd_body_stmts):
                if any(d in needed for d in st.defs):
                    where = k + 1
            push = []
            if len(needed) == 1:
                item = needed[0]
            else:
                item = self.namer.fresh("_saved")
                push.append(Call(item, prims.make_tuple, tuple(needed)))
            push.append(Call(self.namer.fresh("_push"), prims.tape_push, (tape, item)))
            fwd_body_stmts[where:where] = push
            popped = self.namer.fresh("_popped")
            pops.append(Call(popped, prims.tape_next, (reader,)))
            if len(needed) == 1:
                index_map[needed[0]] = popped
            else:
                for k, v in enumerate(needed):
                    nv = self.namer.fresh(v.name)
                    pops.append(Call(nv, operator.getitem, (popped, Const(k))))
                    index_map[v] = nv
        rev_body = replace_atoms(Block(tuple(pops) + tuple(remat) + rev_body.stmts,
                                       rev_body.results), index_map)
        # forward loop, now pushing the residuals (and counting trips for a while loop)
        body_results = s.body.results
        params, f_inits, outs = s.params, s.inits, s.outputs
        if is_for:
            start, stop, step = s.start, s.stop, s.step
            new_fwd = ForRange(s.index, start, stop, step, params, f_inits,
                               Block(tuple(fwd_body_stmts), body_results), outs, s.loc,
                               s.reverse)
        else:
            count = self.namer.fresh("trips")
            count_next = self.namer.fresh("trips")
            count_out = self.namer.fresh("trips")
            fwd_body_stmts.append(Call(count_next, operator.add, (count, Const(1))))
            new_fwd = While(params + (count,), f_inits + (Const(0),), s.cond,
                            Block(tuple(fwd_body_stmts), body_results + (count_next,)),
                            outs + (count_out,), s.loc)
            start, stop, step = Const(0), count_out, Const(1)
            rev_index = self.namer.fresh("_")
        fwd.stmts[plan["index"]] = new_fwd
        if skip_reverse or (not act_params and not outer):
            return
        louts = [self.namer.fresh(x.name) for x in pb + wb]
        rev.add(ForRange(rev_index, start, stop, step, tuple(pb + wb), tuple(inits), rev_body,
                         tuple(louts), s.loc, reverse=not getattr(s, "reverse", False)))
        for v, o in zip(outer, louts[len(act_params):]):
            bars[v] = o
        for i, o in zip(act_params, louts[:len(act_params)]):
            self.add_bar(bars, s.inits[i], o, rev)


_TRANSPOSING: set = set()  # primitives whose JVP rule is being transposed


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


def reverse_pass(fn: Function, kinds: dict, wrt: tuple, table) -> Function:
    """The joint VJP function of `fn` with respect to the parameters at `wrt`.

    Parameters: the primal ones, then one cotangent seed per result (`meta["seed_params"]`).
    Results: the primal results, then one cotangent per `wrt` parameter. A `sweep_boundary`
    call separates the forward sweep from the reverse sweep.
    """
    return ReversePass(fn, kinds, wrt, table).run()
