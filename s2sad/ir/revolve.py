"""Binomial checkpointing (Griewank's revolve) for the reverse sweep of a loop.

`s2sad.grad(f, checkpoints=K)` reverses a loop without a tape of all its iterations: the
forward sweep keeps at most K snapshots of the loop's carried state, and the reverse sweep,
for each step from the last to the first, restores the nearest snapshot before it, runs
the loop body forward (primal only) up to that step, then runs that one step with its
residuals and its reverse. The generated code reads:

    _ckpt = checkpoints(32, 0, n, 1, x)        # at most 32 snapshots of the state (x,)
    for i_1 in range(0, n):
        snapshot(_ckpt, i_1, x_1)              # kept if the schedule places one here
        ...                                    # the primal body
    for i in reversed(range(0, n)):
        _s = restore(_ckpt, i)                 # (step j <= i of a snapshot, its state)
        for k in range(_s[0], i, 1):           # recompute from step j up to step i
            snapshot(_ckpt, k, x_3)
            ...
        ...                                    # step i with its residuals, then its reverse

Where the snapshots go is the recursive binomial schedule: reversing steps [a, b) with the
state at a held and c free slots, advance to a split point m, store the state there, reverse
[m, b) with c - 1 slots, free m, reverse [a, m) with c slots. The split is chosen so that no
step is recomputed more than r times, where r is the least repetition number with
C(c + r, c) >= b - a (Griewank and Walther, Algorithm 799). The snapshots held at any time
are a stack of increasing steps; for a target step i the state of the recursion is exactly
"drop the snapshots after i, restart from the top one": `restore` does that, and plans the
split points of the advance from there (`snapshot` stores the state at a planned one).

This module is the run-time helper the generated code calls; it needs only the standard
library. `Checkpoints.max_live` records the most snapshots held at once (never above K);
setting `record` to a list makes every schedule append itself to it (for tests).
"""

from __future__ import annotations

from math import comb

record: list | None = None  # set to a list to collect every schedule made (tests, benchmarks)


def repetitions(steps: int, slots: int) -> int:
    """The least r with C(slots + r, slots) >= steps: how often the binomial schedule
    recomputes a step at most, to reverse `steps` steps with `slots` free snapshots."""
    r = 0
    while comb(slots + r, slots) < steps:
        r += 1
    return r


def split(steps: int, slots: int) -> int:
    """Where (1 <= m < steps) to store the next snapshot when reversing `steps` steps from
    a held state with `slots` free snapshots: the left part [0, m) fits C(slots + r - 1,
    slots) steps and the right part C(slots + r - 1, slots - 1), so neither part repeats a
    step more than the whole's repetition number r."""
    r = repetitions(steps, slots)
    right = comb(slots - 1 + r, slots - 1)  # what slots - 1 snapshots reverse with r repeats
    return max(1, min(steps - 1, steps - right))


class Checkpoints:
    """The snapshots of one loop's carried state and the schedule placing them."""

    __slots__ = ("limit", "start", "step", "stack", "planned", "max_live", "stores",
                 "__weakref__")

    def __init__(self, limit: int, start, stop, step, state: tuple):
        if limit < 1:
            raise ValueError(f"checkpoints={limit}: at least one snapshot is needed")
        self.limit = limit
        self.start, self.step = start, step
        self.stack: list = [(0, state)]  # (position of the step, state before it)
        self.max_live = 1
        self.stores = 1
        self.planned: set = set()
        if stop is not None:  # a for loop: the forward sweep places the first snapshots
            n = len(range(start, stop, step))
            if n > 1:
                self.plan(0, n)
        if record is not None:
            record.append(self)

    def position(self, i) -> int:
        return (i - self.start) // self.step

    def plan(self, a: int, b: int):
        """The split points of the advance from the snapshot at `a` towards step b - 1."""
        free = self.limit - len(self.stack)
        planned = set()
        while b - a > 1 and free > 0:
            a += split(b - a, free)
            planned.add(a)
            free -= 1
        self.planned = planned

    def store(self, t: int, state: tuple):
        self.stack.append((t, state))
        self.planned.discard(t)
        self.stores += 1
        if len(self.stack) > self.max_live:
            self.max_live = len(self.stack)

    def restore(self, i) -> tuple:
        """For step `i` of the reverse sweep: (the step of the nearest snapshot at or
        before it, the state there), having planned the snapshots of the advance."""
        t = self.position(i)
        stack = self.stack
        while stack[-1][0] > t:
            stack.pop()
        j, state = stack[-1]
        self.plan(j, t + 1)
        return (self.start + j * self.step,) + state


def checkpoints(limit, start, stop, step, *state):
    """A schedule for a loop `range(start, stop, step)` (stop None: a while loop, whose
    trips are counted) keeping at most `limit` snapshots; the first is `state`."""
    return Checkpoints(limit, start, stop, step, state)


def snapshot(ck, i, *state):
    """Keep the state before step `i` if the schedule places a snapshot there."""
    if ck.planned:
        t = (i - ck.start) // ck.step
        if t in ck.planned:
            ck.store(t, state)


def restore(ck, i):
    """(step j, *state): the nearest snapshot at or before step `i` (see Checkpoints)."""
    return ck.restore(i)
