"""Reversing control flow, for the reverse pass: an `If` and the loops (`ForRange`, `While`).

A branch's reverse is an `If` on the same condition, its residuals leaving the forward `If`
as extra outputs; a loop's reverse is a reversed loop that pops its residuals off a tape.
"""

from __future__ import annotations

import operator

import numpy as np

from s2sad.ir import prims
from s2sad.ir.builder import Emitter, hint_of, replace_atoms
from s2sad.ir.nodes import (
    Block,
    Call,
    Const,
    ForRange,
    If,
    Var,
    While,
    atoms_of,
    blocks_of,
    free_vars,
)
from s2sad.passes.forward import materialize
from s2sad.passes.inline_rules import zero


def _defined(block: Block) -> set:
    out = set()
    for s in block.stmts:
        out.update(s.defs)
    return out


class ControlFlowReversal:
    """The `If`, `ForRange` and `While` steps of `passes.reverse.ReversePass` (a mixin: it
    uses the pass's namer, kinds, activity, tapes and its statement-level sweeps)."""

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
                    else_res.append(Const(prims.NOT_COMPUTED))
                else:
                    then_res.append(Const(prims.NOT_COMPUTED))
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
        and it is cheap: indexing, an attribute, a tuple, or a scalar. Returns the copied statements
        (targets renamed into `index_map`), in forward order.
        """
        defs = {st.target: st for st in body_stmts if isinstance(st, Call)}
        stored_params = {v for v in needed if v in params}
        ok: dict = {}

        def cheap(st) -> bool:
            if st.fn in prims.EFFECTFUL or st.fn in (prims.new_tape, prims.tape_reader):
                return False
            if st.fn is operator.getitem or isinstance(st.fn, prims.Attr) or \
                    st.fn is prims.make_tuple:  # (an index (i, j): a tuple of references)
                return True
            # a scalar, but not a NumPy ufunc of one (np.exp(d): its dispatch alone costs
            # more than keeping the value on the tape; math.exp(d) does not)
            return self.kind(st.target).tag == "scalar" and not isinstance(st.fn, np.ufunc)

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
        """A reversed loop carrying the cotangents of the loop's active values and of the
        active outer values it reads; the forward loop pushes what the reversed one reads."""
        fwd: Emitter = plan["fwd"]
        inner_fwd: Emitter = plan["inner"]
        is_for = isinstance(s, ForRange)
        # carried cotangents: one per active loop parameter, one per active outer variable used
        act_params, skip_reverse = self.loop_cotangent_params(s, bars)
        body_free = free_vars(s.body) | free_vars(s.cond if not is_for else Block(()))
        loop_defs = set(s.params) | ({s.index} if is_for else set())
        outer = sorted((v for v in body_free if v in self.active and v not in loop_defs),
                       key=lambda v: v.name)
        pb = [self.namer.fresh(hint_of(s.params[i]) + "_bar") for i in act_params]
        wb = [self.namer.fresh(hint_of(v) + "_bar") for v in outer]
        inits = self.loop_cotangent_inits(s, act_params, outer, rev, bars)
        cot_tapes = dict(self.cot_tapes)
        rev_body = self.reversed_loop_body(s, plan["plans"], act_params, outer, pb, wb, rev)
        # residuals from the forward body, via a tape
        rev_body, fwd_body_stmts, rev_index = self.loop_residuals(s, inner_fwd, rev_body)
        new_fwd, (rev_index, start, stop, step) = self.forward_loop_pushing(s, fwd_body_stmts,
                                                                            rev_index)
        fwd.stmts[plan["index"]] = new_fwd
        if skip_reverse or (not act_params and not outer):
            self.forget_cotangent_tapes(cot_tapes)
            return
        louts = [self.namer.fresh(x.name) for x in pb + wb]
        rev.add(ForRange(rev_index, start, stop, step, tuple(pb + wb), tuple(inits), rev_body,
                         tuple(louts), s.loc, reverse=not getattr(s, "reverse", False)))
        for v, o in zip(outer, louts[len(act_params):]):
            bars[v] = o
        for i, o in zip(act_params, louts[:len(act_params)]):
            self.add_bar(bars, s.inits[i], o, rev)

    def forget_cotangent_tapes(self, kept: dict):
        """A reversed body is left out: the cotangent tapes that its reads of tapes pushed
        onto (reverse over reverse) were never pushed onto, so the reverse of the pushes
        must not pop them; forget those made since `kept`."""
        made = {t for tape, t in self.cot_tapes.items() if tape not in kept}
        if made:
            self.cot_tapes = dict(kept)
            self.readers[:] = [c for c in self.readers if c.target not in made]

    def loop_cotangent_params(self, s, bars: dict) -> tuple:
        """(indices of the carried values the reversed loop carries a cotangent for, whether
        the reverse of the loop is skipped because no cotangent reaches it)."""
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
        return act_params, skip_reverse

    def loop_cotangent_inits(self, s, act_params, outer, rev: Emitter, bars: dict) -> list:
        """The reversed loop's initial carries: the cotangents of the loop's results and of
        the outer values, as accumulated after the loop."""
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
        return inits

    def reversed_loop_body(self, s, plans, act_params, outer, pb, wb, rev: Emitter) -> Block:
        """The body of the reversed loop: the body's statements reversed, from the carried
        cotangents `pb` (of the parameters) and `wb` (of the outer values) to the next ones."""
        body_rev = rev.nested()
        local = {}
        for v, w in zip(outer, wb):
            local[v] = w
        for i, p in zip(act_params, pb):
            r = s.body.results[i]
            if self.is_active(r):
                self.add_bar(local, r, p, body_rev)
        self.loop_depth += 1
        for x, p in reversed(list(zip(s.body.stmts, plans))):
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
        return Block(tuple(body_rev.stmts), tuple(results))

    def loop_residuals(self, s, inner_fwd: Emitter, rev_body: Block) -> tuple:
        """What the reversed body reads of the forward body: recomputed where cheap, else
        pushed onto a tape. (reversed body reading them, forward body statements pushing
        them, index of the reversed for loop or None)."""
        is_for = isinstance(s, ForRange)
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
            pops = self.tape_residuals(needed, fwd_body_stmts, index_map)
        rev_body = replace_atoms(Block(tuple(pops) + tuple(remat) + rev_body.stmts,
                                       rev_body.results), index_map)
        return rev_body, fwd_body_stmts, rev_index

    def tape_residuals(self, needed, fwd_body_stmts: list, index_map: dict) -> list:
        """Push `needed` onto a new tape in `fwd_body_stmts` (in place); the statements
        popping them in the reversed body, which map to them in `index_map`."""
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
        pops = [Call(popped, prims.tape_next, (reader,))]
        if len(needed) == 1:
            index_map[needed[0]] = popped
        else:
            for k, v in enumerate(needed):
                nv = self.namer.fresh(v.name)
                pops.append(Call(nv, operator.getitem, (popped, Const(k))))
                index_map[v] = nv
        return pops

    def forward_loop_pushing(self, s, fwd_body_stmts: list, rev_index) -> tuple:
        """The forward loop with the body `fwd_body_stmts` (which pushes the residuals), and
        (index, start, stop, step) of the reversed loop: a while loop counts its trips."""
        body_results = s.body.results
        params, f_inits, outs = s.params, s.inits, s.outputs
        if isinstance(s, ForRange):
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
        return new_fwd, (rev_index, start, stop, step)
