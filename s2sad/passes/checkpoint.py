"""Checkpointed reversal of loops, for the reverse pass (`s2sad.grad(f, checkpoints=K)`).

A loop's ordinary reverse (passes/reverse_control.py) tapes each iteration's residuals:
memory grows with the trip count. Under `checkpoints=K` a loop at the top of the function
(not inside another loop: an inner loop is reversed with a tape bounded by one step of the
outer one) is reversed by recomputation instead, with at most K snapshots of its carried
state (the binomial schedule of s2sad/ir/revolve.py):

- the forward sweep is the primal loop with a `snapshot(...)` call at the top of each
  iteration, which keeps the state where the schedule places a snapshot. A `while` loop
  counts its trips (the schedule needs the number of steps): its snapshots are placed in
  the reverse sweep, from the first state, at the cost of one more primal run;
- the reverse sweep is a reversed loop over the steps; for step i it restores the nearest
  snapshot at or before i (`restore(...)`), runs the primal body up to step i (taking the
  snapshots the schedule places on the way), then runs step i with its residuals (the
  forward sweep of the body, as the ordinary reverse would have taped it) and that step's
  reverse. The step's residuals never leave the iteration: no tape.

The operations are those of the taped reverse, so the gradient is the same to the bit.
"""

from __future__ import annotations

import operator

from s2sad.ir import prims, revolve
from s2sad.ir.builder import Emitter, hint_of, substitute_block
from s2sad.ir.nodes import Block, Call, Const, ForRange, While, blocks_of, free_vars

# what may run again in a recomputation: everything but statements acting on state
_ONCE = prims.EFFECTFUL - {prims.check_assertion} | {prims.new_tape, prims.tape_reader}


def _recomputable(b: Block) -> bool:
    for st in b.stmts:
        if isinstance(st, Call):
            if st.fn in _ONCE or isinstance(st.fn, prims.Opaque):
                return False
        elif not all(_recomputable(inner) for inner in blocks_of(st)):
            return False
    return True


class CheckpointedLoops:
    """The checkpointed `reverse_loop` of `passes.reverse.ReversePass` (a mixin, like
    ControlFlowReversal, whose helpers it uses)."""

    checkpoints: int | None = None

    def checkpointed(self, s) -> bool:
        """Is the loop `s` reversed by checkpointing? Under `checkpoints=K`, a loop not
        inside another loop whose body can run again: nothing in it acts on state (a tape,
        an in-place update, a print), which a recomputation would do twice. (Those loops,
        e.g. the loops of a derivative being differentiated again, keep their tapes.)"""
        return self.checkpoints is not None and self.loop_depth == 0 and \
            not getattr(s, "reverse", False) and \
            all(_recomputable(b) for b in blocks_of(s))

    def reverse_loop_checkpointed(self, s, plan, rev: Emitter, bars: dict):
        fwd: Emitter = plan["fwd"]
        inner_fwd: Emitter = plan["inner"]
        is_for = isinstance(s, ForRange)
        act_params, skip_reverse = self.loop_cotangent_params(s, bars)
        body_free = free_vars(s.body) | (free_vars(s.cond) if not is_for else set())
        loop_defs = set(s.params) | ({s.index} if is_for else set())
        outer = sorted((v for v in body_free if v in self.active and v not in loop_defs),
                       key=lambda v: v.name)
        if skip_reverse or (not act_params and not outer):
            fwd.stmts[plan["index"]] = s  # no cotangent reaches it: the primal loop alone
            return
        namer = self.namer
        pb = [namer.fresh(hint_of(s.params[i]) + "_bar") for i in act_params]
        wb = [namer.fresh(hint_of(v) + "_bar") for v in outer]
        inits = self.loop_cotangent_inits(s, act_params, outer, rev, bars)
        # the reverse of one step; the tapes of loops inside it live for one step
        n_tapes, n_readers = len(self.tapes), len(self.readers)
        rev_body = self.reversed_loop_body(s, plan["plans"], act_params, outer, pb, wb, rev)
        step_tapes, step_readers = self.tapes[n_tapes:], self.readers[n_readers:]
        del self.tapes[n_tapes:], self.readers[n_readers:]

        # forward sweep: the primal loop, snapshots where the schedule says
        ck = namer.fresh("ckpt")
        limit = Const(self.checkpoints)
        if is_for:
            fwd_loop = self._primal_loop(s, ck, s.start, s.stop, s.step, s.inits, s.outputs)
            make = Call(ck, revolve.checkpoints, (limit, s.start, s.stop, s.step) + s.inits,
                        (), s.loc)
            rev_index, start, stop, step = s.index, s.start, s.stop, s.step
        else:
            make = Call(ck, revolve.checkpoints, (limit, Const(0), Const(None), Const(1)) +
                        s.inits, (), s.loc)
            fwd_loop, trips = self._counted_while(s)
            rev_index, start, stop, step = namer.fresh("step"), Const(0), trips, Const(1)
        fwd.stmts[plan["index"]:plan["index"] + 1] = [make, fwd_loop]

        # reverse sweep, for each step from the last: restore, advance, the step, its reverse
        em = rev.nested()
        snap = em.call(revolve.restore, (ck, rev_index), hint="restored", loc=s.loc)
        first = em.call(operator.getitem, (snap, Const(0)), hint="from_step", loc=s.loc)
        state = []
        for m, p in enumerate(s.params):
            v = em.call(operator.getitem, (snap, Const(m + 1)), hint=hint_of(p), loc=s.loc)
            if p in self.kinds:
                self.kinds[v] = self.kinds[p]
            state.append(v)
        outs = tuple(namer.fresh(hint_of(p)) for p in s.params)
        em.add(self._primal_loop(s, ck, first, rev_index, step, tuple(state), outs))
        for p, o in zip(s.params, outs):  # the state before step i, under the loop's names
            em.add(Call(p, prims.identity, (o,), (), s.loc))
        stmts = em.stmts + step_tapes + list(inner_fwd.stmts) + step_readers + \
            list(rev_body.stmts)
        body = Block(tuple(stmts), rev_body.results)
        louts = [namer.fresh(x.name) for x in pb + wb]
        rev.add(ForRange(rev_index, start, stop, step, tuple(pb + wb), tuple(inits), body,
                         tuple(louts), s.loc, reverse=True))
        for v, o in zip(outer, louts[len(act_params):]):
            bars[v] = o
        for i, o in zip(act_params, louts[:len(act_params)]):
            self.add_bar(bars, s.inits[i], o, rev)

    def _primal_loop(self, s, ck, start, stop, step, inits, outputs) -> ForRange:
        """`for k in range(start, stop, step)`: the loop's primal body (a fresh copy, for
        its state from `inits`), a snapshot at the top of each iteration."""
        namer = self.namer
        index = namer.fresh(hint_of(s.index) if isinstance(s, ForRange) else "k")
        params = tuple(namer.fresh(hint_of(p)) for p in s.params)
        mapping = dict(zip(s.params, params))
        if isinstance(s, ForRange):
            mapping[s.index] = index
        body = substitute_block(s.body, mapping, namer)
        take = Call(namer.fresh("_"), revolve.snapshot, (ck, index) + params, (), s.loc)
        return ForRange(index, start, stop, step, params, inits,
                        Block((take,) + body.stmts, body.results), outputs, s.loc)

    def _counted_while(self, s: While) -> tuple:
        """The primal while loop (a fresh copy) counting its trips: (loop, trip count)."""
        namer = self.namer
        params = tuple(namer.fresh(hint_of(p)) for p in s.params)
        mapping = dict(zip(s.params, params))
        cond = substitute_block(s.cond, mapping, namer)
        body = substitute_block(s.body, mapping, namer)
        count, count_next, trips = (namer.fresh("trips") for _ in range(3))
        bump = Call(count_next, operator.add, (count, Const(1)), (), s.loc)
        loop = While(params + (count,), s.inits + (Const(0),), cond,
                     Block(body.stmts + (bump,), body.results + (count_next,)),
                     s.outputs + (trips,), s.loc)
        return loop, trips
