"""Rewrites of cotangent accumulators in reversed loops.

**Outer products summed over a loop -> one matrix product after the loop.** The cotangent
of `W @ h` with respect to `W` is the outer product of the output's cotangent with `h`. In
a loop (an RNN step, a Kalman filter), the reverse sweep adds one outer product per
iteration:

    for k in reversed(range(N)):
        ...
        W_bar = W_bar + u[:, None] * v          # an (n, m) array made and summed N times

This pass keeps the factors instead, one row per iteration, and multiplies once:

    W_bar_u = np.empty((N, n)); W_bar_v = np.empty((N, m))
    for k in reversed(range(N)):
        ...
        W_bar_u[k] = u; W_bar_v[k] = v
    W_bar = W_bar + W_bar_u.T @ W_bar_v         # sum over k of outer(u_k, v_k)

which moves N (n, m) temporaries into one BLAS call. It applies when the accumulator is
carried by a `for k in range(N)` loop with N a constant or a size (`xs.shape[0]`), is read
only by that sum, and the outer product is large enough for rows to be cheaper
(n * m > 4 (n + m), or sizes that may be).

**A scatter into zeros at the loop index is a plain write.** `x_bar[i] += g` in
`for i in range(a, b)` with `x_bar` starting as zeros writes each entry once, into a zero:
it is `x_bar[i] = g` (one store instead of a read, an add and a store). This applies when
the indices cannot repeat (a start >= 0 and a positive step) and nothing else in the loop
reads or writes the accumulator.
"""

from __future__ import annotations

import operator

import numpy as np

from s2sad.ir import prims
from s2sad.ir.builder import Namer, hint_of, is_const, root_name
from s2sad.ir.dims import Dim, decided
from s2sad.ir.kinds import atom_kind, infer_kinds
from s2sad.ir.nodes import Block, Call, Const, ForRange, Function, If, While, count_uses
from s2sad.passes.dead_code import eliminate_dead_code

ADDS = (operator.add, np.add)
MULS = (operator.mul, np.multiply)
_T = prims.Attr("T")


def rewrite_loop_accumulators(fn: Function, param_kinds: dict) -> Function:
    """The two accumulator rewrites of the module doc, over every `for` loop of `fn`."""
    if not _has_loop(fn.body):
        return fn
    kinds = fn.meta.get("kinds") or infer_kinds(fn, param_kinds)
    namer = Namer.for_function(fn)
    changed = [False]

    def block(b: Block) -> Block:
        out = []
        local: dict = {}  # what this block's statements so far define
        for s in b.stmts:
            if isinstance(s, Call):
                local[s.target] = s
            match s:
                case ForRange():
                    body = block(s.body)
                    s = ForRange(s.index, s.start, s.stop, s.step, s.params, s.inits, body,
                                 s.outputs, s.loc, s.reverse)
                    s = _first_writes(s, local, changed)
                    out.extend(_batch_loop(s, kinds, namer, changed, local))
                    continue
                case If():
                    s = If(s.cond, block(s.then), block(s.orelse), s.outputs, s.loc)
                case While():
                    s = While(s.params, s.inits, block(s.cond), block(s.body), s.outputs,
                              s.loc)
            out.append(s)
        return Block(tuple(out), b.results)

    body = block(fn.body)
    if not changed[0]:
        return fn
    meta = dict(fn.meta)
    meta.pop("kinds", None)
    # the per-iteration products, and an accumulator's zeros, are no longer read
    return eliminate_dead_code(Function(fn.name, fn.params, body, fn.returns_tuple, fn.kwonly,
                                        fn.defaults, fn.loc, fn.source_lines, fn.first_line,
                                        meta))


def _has_loop(b: Block) -> bool:
    for s in b.stmts:
        if isinstance(s, (ForRange, While)):
            return True
        if isinstance(s, If) and (_has_loop(s.then) or _has_loop(s.orelse)):
            return True
    return False


def _batch_loop(loop: ForRange, kinds: dict, namer: Namer, changed: list, local: dict) -> list:
    """The loop, and what follows it, with its outer-product sums batched (or as it was)."""
    if not (is_const(loop.start, 0) and is_const(loop.step, 1) and isinstance(loop.stop, Const)
            and _count(loop.stop.value) and decided(lambda: loop.stop.value >= 1)):
        return [loop]  # (N a number or a size symbol: xs.shape[0] steps)
    n_iter = loop.stop.value
    uses: dict = {}
    count_uses(loop.body, uses)
    defs = {s.target: s for s in loop.body.stmts if isinstance(s, Call)}
    params, inits, results, outputs = (list(loop.params), list(loop.inits),
                                       list(loop.body.results), list(loop.outputs))
    stmts = list(loop.body.stmts)
    before, after = [], []
    for k in reversed(range(len(params))):
        found = _outer_sum(params[k], results[k], defs, uses, kinds)
        if found is None:
            continue
        add_stmt, u, v = found
        n, m = atom_kind(u, kinds).shape[0], atom_kind(v, kinds).shape[0]
        loc = add_stmt.loc
        made = []
        rows = []
        acc = root_name(hint_of(outputs[k]))
        for side, factor, size in (("u", u, n), ("v", v, m)):
            hint = f"{acc}_{side}"  # W_bar = W_bar_u.T @ W_bar_v
            init = namer.fresh(hint)
            before.append(Call(init, np.empty, (Const((n_iter, size)),), (), loop.loc))
            param, res, out = namer.fresh(hint), namer.fresh(hint), namer.fresh(hint)
            made.append(Call(res, prims.index_update, (param, loop.index, factor), (), loc))
            rows.append((param, init, res, out))
        at = next(i for i, s in enumerate(stmts) if s is add_stmt)
        stmts[at:at + 1] = made  # the product itself, now unread, goes with dead code
        acc_init, acc_out = inits[k], outputs[k]
        del params[k], inits[k], results[k], outputs[k]
        for param, init, res, out in rows:
            params.append(param)
            inits.append(init)
            results.append(res)
            outputs.append(out)
        (u_out, v_out) = (rows[0][3], rows[1][3])
        u_t = namer.fresh("_t")
        after.append(Call(u_t, _T, (u_out,), (), loc))
        zeros = local.get(acc_init)
        if zeros is not None and zeros.fn in (np.zeros, prims.zeros_like):
            after.append(Call(acc_out, operator.matmul, (u_t, v_out), (), loc))
        else:
            total = namer.fresh("_t")
            after.append(Call(total, operator.matmul, (u_t, v_out), (), loc))
            after.append(Call(acc_out, operator.add, (acc_init, total), (), loc))
    if not after:
        return [loop]
    changed[0] = True
    new = ForRange(loop.index, loop.start, loop.stop, loop.step, tuple(params), tuple(inits),
                   Block(tuple(stmts), tuple(results)), tuple(outputs), loop.loc, loop.reverse)
    return before + [new] + after


def _first_writes(loop: ForRange, local: dict, changed: list) -> ForRange:
    """The loop with `acc[i] += g` made `acc[i] = g` where acc[i] is still zero (see top)."""
    if not (isinstance(loop.start, Const) and type(loop.start.value) is int and
            loop.start.value >= 0 and isinstance(loop.step, Const) and
            type(loop.step.value) is int and loop.step.value > 0):
        return loop
    uses: dict = {}
    count_uses(loop.body, uses)
    defs = {s.target: s for s in loop.body.stmts if isinstance(s, Call)}
    replace = {}
    for param, init, result in zip(loop.params, loop.inits, loop.body.results):
        d = defs.get(result)
        z = local.get(init)
        if d is not None and d.fn is prims.index_add and d.args[0] == param and \
                d.args[1] == loop.index and not d.kwargs and uses.get(param, 0) == 1 and \
                uses.get(result, 0) == 1 and z is not None and z.fn is np.zeros:
            replace[id(d)] = Call(d.target, prims.index_update, d.args, (), d.loc)
    if not replace:
        return loop
    changed[0] = True
    body = Block(tuple(replace.get(id(s), s) for s in loop.body.stmts), loop.body.results)
    return ForRange(loop.index, loop.start, loop.stop, loop.step, loop.params, loop.inits,
                    body, loop.outputs, loop.loc, loop.reverse)


def _outer_sum(param, result, defs: dict, uses: dict, kinds: dict):
    """(add, u, v) when `result` is `param + u[:, None] * v` and nothing else reads
    `param` or the sum in the loop body; else None."""
    add = defs.get(result)
    if add is None or add.fn not in ADDS or add.kwargs or uses.get(param, 0) != 1 or \
            uses.get(result, 0) != 1 or param not in add.args:
        return None
    other = add.args[1] if add.args[0] == param else add.args[0]
    mul = defs.get(other)
    if mul is None or mul.fn not in MULS or mul.kwargs:
        return None
    kp = atom_kind(param, kinds)
    if kp.tag != "array" or kp.shape is None or len(kp.shape) != 2 or kp.dtype != "f" or \
            atom_kind(other, kinds) != atom_kind(result, kinds) or \
            atom_kind(result, kinds).shape != kp.shape:
        return None
    for col, row in (mul.args, mul.args[::-1]):
        d = defs.get(col)
        if d is None or d.fn is not np.expand_dims or d.kwargs or \
                d.args[1] != Const(-1):
            continue
        u = d.args[0]
        ku, kv = atom_kind(u, kinds), atom_kind(row, kinds)
        if ku.tag == kv.tag == "array" and ku.dtype == kv.dtype == "f" and \
                ku.shape is not None and kv.shape is not None and len(ku.shape) == 1 and \
                len(kv.shape) == 1 and (ku.shape[0], kv.shape[0]) == kp.shape:
            n, m = kp.shape
            # (rows pay where the sizes say so, or may: a choice of speed, never a guard)
            if decided(lambda: n * m > 4 * (n + m)) is not False:
                return add, u, row
    return None


def _count(v) -> bool:
    """Is `v` an iteration count known while compiling (an int, or a size's symbol)?"""
    return type(v) is int or type(v) is Dim


def iterate_tapes(fn: Function) -> Function:
    """`for _ in reversed(range(n)): x = next(reader)` -> `for x in reversed(tape):`.

    For the readers the reverse pass marked exact (the tape of a loop that runs once, one
    push per iteration: the reversed loop takes every item). A `while` loop's trip counter
    then has no reader left and goes. The last pass before code generation: the loop form
    it makes is one only the code generator knows.
    """
    exact = fn.meta.get("exact_readers")
    if not exact:
        return fn
    uses: dict = {}
    count_uses(fn.body, uses)
    readers = {s.target: s for s in fn.body.stmts
               if isinstance(s, Call) and s.fn is prims.tape_reader and s.target in exact and
               uses.get(s.target, 0) == 1}
    taken = {}  # reader -> the loop that iterates it
    for s in fn.body.stmts:
        if isinstance(s, ForRange) and s.over is None and s.reverse and \
                is_const(s.start, 0) and is_const(s.step, 1) and s.body.stmts and \
                uses.get(s.index, 0) == 0:
            first = s.body.stmts[0]
            if isinstance(first, Call) and first.fn is prims.tape_next and \
                    first.args[0] in readers:
                taken[first.args[0]] = s
    if not taken:
        return fn
    stmts = []
    for s in fn.body.stmts:
        if isinstance(s, Call) and s.target in taken:
            continue  # the reader moves down to its loop
        if isinstance(s, ForRange) and s.body.stmts and \
                getattr(s.body.stmts[0], "fn", None) is prims.tape_next and \
                taken.get(s.body.stmts[0].args[0]) is s:
            first = s.body.stmts[0]
            stmts.append(readers[first.args[0]])
            s = ForRange(first.target, Const(0), Const(0), Const(1), s.params, s.inits,
                         Block(s.body.stmts[1:], s.body.results), s.outputs, s.loc, s.reverse,
                         over=first.args[0])
        stmts.append(s)
    # a while loop's trip count, now unread, is dropped with its counter
    return eliminate_dead_code(Function(fn.name, fn.params, Block(tuple(stmts),
                                                                  fn.body.results),
                                        fn.returns_tuple, fn.kwonly, fn.defaults, fn.loc,
                                        fn.source_lines, fn.first_line, fn.meta))


__all__ = ["iterate_tapes", "rewrite_loop_accumulators"]
