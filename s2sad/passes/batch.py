"""Batching (vector mode): derivative values carry a trailing axis of `n` directions.

Applied to a JVP, the tangents hold `n` directions at once, so one call computes J·V for
a whole matrix V (jacfwd); applied to a VJP, the seeds hold `n` cotangents (jacrev).
A batched value of a primal of shape s has shape s + (n,). Keeping the batch axis last
lets NumPy's broadcasting do most of the work: an elementwise operation only needs its
unbatched array operands given a trailing unit axis; reductions keep their (normalised)
axes; operations that mix axes (matmul, dot, transpose, ...) have explicit rules here,
and anything else runs once per direction (`batch_loop`), which is slow but correct.
"""

from __future__ import annotations

import operator

import numpy as np

from s2sad.ir import prims
from s2sad.ir.prims import batch_loop
from s2sad.ir.builder import Emitter, Namer
from s2sad.ir.kinds import KIND_READERS, atom_kind
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
)

ELEMENTWISE = {
    operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.neg,
    operator.pos, abs, np.where,
}
REDUCTIONS = {np.sum, np.mean}


def batch_expand(u, n):
    """An unbatched value as a batched one (the same value in every direction); a tuple or
    list item by item (the tangent of a tuple merged by an `if`), None as it is."""
    if isinstance(u, (tuple, list)):
        return type(u)(batch_expand(v, n) for v in u)
    if u is None:
        return u
    # (np.expand_dims, not np.asarray: a Dask array stays a Dask array)
    return np.broadcast_to(np.expand_dims(u, -1), np.shape(u) + (n,))


def unbatched_operand(u):
    """An unbatched operand of an elementwise operation with batched ones, where its kind
    was not known at compile time: a trailing axis of length 1 for an array (so that it
    broadcasts against the batch axis, not along its own last axis), a number as it is."""
    return np.expand_dims(u, -1) if np.ndim(u) else u


def with_batch_axis(shape, n):
    return tuple(shape) + (n,)


def batch_index(index):
    """The index selecting `index` from a batched array (the batch axis stays last)."""
    if index is Ellipsis:
        return (Ellipsis, slice(None))
    if isinstance(index, tuple) and any(i is Ellipsis for i in index):
        return index + (slice(None),)
    return index


def _is_elementwise(fn) -> bool:
    if fn in ELEMENTWISE:
        return True
    return isinstance(fn, np.ufunc) and fn.signature is None


# what reads only the shape of its one argument (the same for every direction)
SHAPE_READERS = {np.ndim, np.shape, np.size, prims.Attr("ndim"), prims.Attr("shape"),
                 prims.Attr("size")}


def _reads_shape(s: Call, batch) -> bool:
    try:
        reader = s.fn in SHAPE_READERS
    except TypeError:  # an unhashable callable
        return False
    return reader and len(s.args) == 1 and not s.kwargs and batch.is_b(s.args[0])


def _reads_kind(s: Call) -> bool:
    """A kind test (is_complex, ...) left to run time: one answer for every direction, read
    off the batched value itself (run per direction, it gave an array of answers, and the
    `if` of the rule that branched on it failed)."""
    try:
        return s.fn in KIND_READERS and len(s.args) == 1 and not s.kwargs
    except TypeError:  # an unhashable callable
        return False


class BatchPass:
    def __init__(self, fn: Function, batched: set, n: int, kinds: dict):
        self.fn = fn
        self.n = n
        self.kinds = kinds
        self.batched = set(batched)
        self.namer = Namer.for_function(fn)
        self.defs: dict = {}
        # a recursive call's (value, tangent) pair (passes/forward.py) -> its number of
        # primal arguments; those whose value depends on no direction (no primal argument
        # batched): the value is computed once, not once per direction
        self.pairs: dict = fn.meta.get("jvp_pairs", {})
        self.one_value: set = set()
        # sums of two cotangents of one value (passes/reverse.py): of a value of unknown
        # kind, they add item by item at run time (a tuple's would concatenate)
        self.cotangent_sums = fn.meta.get("cotangent_sums", frozenset())
        self._analyse(fn.body)

    def kind(self, a):
        return atom_kind(a, self.kinds)

    def rank(self, a):
        s = self.kind(a).static_shape
        return len(s) if s is not None else None

    def is_b(self, a) -> bool:
        return isinstance(a, Var) and a in self.batched

    # -- which values are batched (a fixpoint, like activity analysis) ------------

    def _analyse(self, b: Block):
        while True:
            before = len(self.batched)
            self._scan(b)
            if len(self.batched) == before:
                return

    def _scan(self, b: Block):
        for s in b.stmts:
            match s:
                case Call(target=t, fn=fn, args=args):
                    self.defs[t] = s
                    if t in self.pairs:
                        if any(self.is_b(a) for a in args[:self.pairs[t]]):
                            self.one_value.discard(t)
                        else:
                            self.one_value.add(t)
                    if fn is operator.getitem and args[0] in self.one_value and \
                            args[1] == Const(0):
                        continue  # the pair's value: the same in every direction
                    if fn is prims.tape_push:
                        if self.is_b(args[1]):
                            self.batched.add(args[0])
                    elif any(self.is_b(a) for a in atoms_of(s)) and \
                            fn is not prims.sweep_boundary and not _reads_shape(s, self) \
                            and not _reads_kind(s):
                        self.batched.add(t)
                case If(then=then, orelse=orelse, outputs=outs):
                    self._scan(then)
                    self._scan(orelse)
                    for o, x, y in zip(outs, then.results, orelse.results):
                        if self.is_b(x) or self.is_b(y):
                            self.batched.add(o)
                case ForRange(params=ps, inits=inits, body=body, outputs=outs) | \
                        While(params=ps, inits=inits, body=body, outputs=outs):
                    for p, i, r in zip(ps, inits, body.results):
                        if self.is_b(i) or self.is_b(r):
                            self.batched.add(p)
                    for inner in blocks_of(s):
                        self._scan(inner)
                    for p, r, o in zip(ps, body.results, outs):
                        if self.is_b(r) or p in self.batched:
                            self.batched.add(p)
                            self.batched.add(o)

    # -- rewriting --------------------------------------------------------------

    def run(self) -> Function:
        em = Emitter(self.namer)
        body = self.block(self.fn.body, em)
        return Function(self.fn.name, self.fn.params, body, self.fn.returns_tuple,
                        self.fn.kwonly, self.fn.defaults, self.fn.loc, self.fn.source_lines,
                        self.fn.first_line, self.fn.meta)

    def block(self, b: Block, em: Emitter, want=None) -> Block:
        inner = em.nested()
        for s in b.stmts:
            self.stmt(s, inner)
        results = list(b.results)
        if want is not None:
            results = [self.expand(inner, r) if w and not self.is_b(r) else r
                       for r, w in zip(results, want)]
        return Block(tuple(inner.stmts), tuple(results))

    def expand(self, em: Emitter, a):
        """An unbatched float value made batched (zeros stay cheap)."""
        k = self.kind(a)
        if not k.is_float:
            return a
        if isinstance(a, Const) and isinstance(a.value, (int, float)) and a.value == 0:
            return em.call(np.zeros, (Const((self.n,)),), hint="_zeros")
        d = self.defs.get(a) if isinstance(a, Var) else None
        if d is not None and (d.fn is np.zeros or d.fn is prims.zeros_like) and \
                k.static_shape is not None and k.dtype == "f":
            return em.call(np.zeros, (Const(tuple(k.static_shape) + (self.n,)),), hint="_zeros")
        return em.call(batch_expand, (a, Const(self.n)), hint="_e")

    def stmt(self, s, em: Emitter):
        match s:
            case Call():
                if any(self.is_b(a) for a in atoms_of(s)) and s.fn is not prims.sweep_boundary \
                        and not _reads_kind(s):
                    self.call(s, em)
                else:
                    em.add(s)
            case If(cond=c, then=then, orelse=orelse, outputs=outs):
                want = [o in self.batched for o in outs]
                em.add(If(c, self.block(then, em, want), self.block(orelse, em, want), outs,
                          s.loc))
            case ForRange() | While():
                want = [p in self.batched for p in s.params]
                inits = tuple(self.expand(em, i) if w and not self.is_b(i) else i
                              for i, w in zip(s.inits, want))
                body = self.block(s.body, em, want)
                if isinstance(s, ForRange):
                    em.add(ForRange(s.index, s.start, s.stop, s.step, s.params, inits, body,
                                    s.outputs, s.loc, s.reverse))
                else:
                    em.add(While(s.params, inits, self.block(s.cond, em), body, s.outputs,
                                 s.loc))

    def emit(self, em, s: Call, fn, args, kwargs=()):
        em.add(Call(s.target, fn, tuple(args), tuple(kwargs), s.loc))

    def call(self, s: Call, em: Emitter):
        fn, args, kw = s.fn, list(s.args), list(s.kwargs)
        flags = [self.is_b(a) for a in args]
        if _reads_shape(s, self):  # the same in every direction: read off the first one
            first = em.call(operator.getitem, (args[0], Const((Ellipsis, 0))), hint="_d")
            self.emit(em, s, fn, [first])
            return
        if fn in (prims.tape_push, prims.tape_reader, prims.tape_next, prims.tape_pop):
            em.add(s)
            return
        if fn in (prims.make_tuple, prims.make_list):
            self.emit(em, s, fn, [a if self.is_b(a) else self.expand(em, a) for a in args])
            return
        if s.target in self.one_value:  # a recursive call's JVP: its value once
            self.emit(em, s, prims.batch_jvp, [Const(fn), Const(tuple(flags))] + args, kw)
            return
        if fn is operator.add and s.target in self.cotangent_sums and \
                self.kind(s.target).tag == "unknown":
            self.emit(em, s, prims.add_cotangents, [a if self.is_b(a) else self.expand(em, a)
                                                    for a in args])
            return
        if _is_elementwise(fn) and not kw:
            new = []
            for a, f in zip(args, flags):
                zero = a.value if isinstance(a, Const) and \
                    isinstance(a.value, prims.ZeroValue) else None
                if zero is not None and zero.like is not None and \
                        zero.kind.static_shape is None:
                    # a symbolic zero made concrete later from its unbatched `like` (a
                    # shape not known while compiling) would lack the batch axis: made
                    # here, with it (`w_dot_i - w_dot_j + eye_dot` in eig's rules)
                    like = em.call(prims.zeros_like, (zero.like,), hint="_zeros")
                    new.append(em.call(unbatched_operand, (like,), hint="_u"))
                    continue
                tag = self.kind(a).tag if not f else ""
                if tag == "array":
                    a = em.call(operator.getitem, (a, Const((Ellipsis, None))), hint="_u")
                elif not f and tag != "scalar" and (not isinstance(a, Const) or (
                        isinstance(a.value, (list, tuple, np.ndarray)) and
                        np.ndim(a.value) > 0)):
                    # an array or a number: which one, only the value tells (a value
                    # taken from a list's cotangent); guessing a number would broadcast an
                    # array along its own last axis, silently where the sizes agree (a
                    # constant list or array too: the `where=` mask of np.sum's rules)
                    a = em.call(unbatched_operand, (a,), hint="_u")
                new.append(a)
            self.emit(em, s, fn, new)
            return
        if fn is operator.getitem and flags[0] and not flags[1]:
            self.emit(em, s, fn, [args[0], self.index(em, args[1])])
            return
        if isinstance(fn, prims.Attr) and fn.name in ("real", "imag"):
            em.add(s)
            return
        r = self.rank(args[0]) if args else None
        handler = getattr(self, "_" + _rule_name(fn), None)
        if handler is not None and handler(em, s, args, kw, flags, r if r is not None else -1):
            return
        # anything else: once per direction
        kwargs = tuple(kw)
        self.emit(em, s, batch_loop, [Const(fn), Const(tuple(flags))] + args, kwargs)

    def index(self, em, idx):
        k = self.kind(idx)
        if k.known:
            return Const(batch_index(k.value))
        if k.tag == "tuple" and all(i.known or i.tag == "scalar" for i in k.items):
            if not any(i.known and i.value is Ellipsis for i in k.items):
                return idx
        return em.call(batch_index, (idx,), hint="_i")

    def axes(self, axis, r):
        """Normalised (non-negative) axes of an unbatched array of rank r."""
        if axis is None:
            return tuple(range(r))
        if isinstance(axis, int):
            return axis % r if r else axis
        return tuple(a % r for a in axis)

    # -- rules for operations that mix axes ------------------------------------------

    def _reduction(self, em, s, args, kw, flags, r):
        if r < 0:
            return False
        if not flags[0] or any(self.is_b(a) for _, a in kw) or len(args) > 2:
            return False
        kwd = dict(kw)
        axis = args[1] if len(args) > 1 else kwd.pop("axis", Const(None))
        if not isinstance(axis, Const):
            return False
        kwd["axis"] = Const(self.axes(axis.value, r))
        self.emit(em, s, s.fn, [args[0]], tuple(kwd.items()))
        return True

    def _reshape(self, em, s, args, kw, flags, r):
        kwd = dict(kw)
        shape = args[1] if len(args) > 1 else kwd.get("shape")
        k = self.kind(shape) if shape is not None else None
        if not flags[0] or k is None or not k.known:
            return False
        v = k.value
        v = (v,) if isinstance(v, int) else tuple(v)
        self.emit(em, s, np.reshape, [args[0], Const(v + (self.n,))])
        return True

    def _ravel(self, em, s, args, kw, flags, r):
        self.emit(em, s, np.reshape, [args[0], Const((-1, self.n))])
        return True

    def _transpose(self, em, s, args, kw, flags, r):
        if r < 0:
            return False
        axes = args[1] if len(args) > 1 else dict(kw).get("axes", Const(None))
        if not isinstance(axes, Const):
            return False
        perm = tuple(reversed(range(r))) if axes.value is None else self.axes(axes.value, r)
        self.emit(em, s, np.transpose, [args[0], Const(tuple(perm) + (r,))])
        return True

    def _attr_T(self, em, s, args, kw, flags, r):
        if r < 0:
            return False
        self.emit(em, s, np.transpose, [args[0], Const(tuple(reversed(range(r))) + (r,))])
        return True

    def _swapaxes(self, em, s, args, kw, flags, r):
        if r < 0:
            return False
        if len(args) != 3 or not all(isinstance(a, Const) for a in args[1:]):
            return False
        self.emit(em, s, np.swapaxes, [args[0], Const(args[1].value % r),
                                       Const(args[2].value % r)])
        return True

    def _moveaxis(self, em, s, args, kw, flags, r):
        if r < 0:
            return False
        if len(args) != 3 or not all(isinstance(a, Const) for a in args[1:]):
            return False
        self.emit(em, s, np.moveaxis, [args[0], Const(self.axes(args[1].value, r)),
                                       Const(self.axes(args[2].value, r))])
        return True

    def _expand_dims(self, em, s, args, kw, flags, r):
        if r < 0:
            return False
        axis = args[1] if len(args) > 1 else dict(kw).get("axis")
        if not isinstance(axis, Const):
            return False
        # the result has one axis more per axis inserted (a tuple inserts several): its
        # rank, not r + 1, normalises them
        added = len(axis.value) if isinstance(axis.value, (tuple, list)) else 1
        self.emit(em, s, np.expand_dims, [args[0], Const(self.axes(axis.value, r + added))])
        return True

    def _squeeze(self, em, s, args, kw, flags, r):
        if r < 0:
            return False
        axis = args[1] if len(args) > 1 else dict(kw).get("axis", Const(None))
        shape = self.kind(args[0]).static_shape
        if not isinstance(axis, Const) or shape is None:
            return False
        ax = tuple(i for i, d in enumerate(shape) if d == 1) if axis.value is None else \
            self.axes(axis.value, r)
        self.emit(em, s, np.squeeze, [args[0], Const(ax)])
        return True

    def _broadcast_to(self, em, s, args, kw, flags, r):
        k = self.kind(args[1])
        if not flags[0] or not k.known:
            return False
        v = (k.value,) if isinstance(k.value, int) else tuple(k.value)
        self.emit(em, s, np.broadcast_to, [args[0], Const(v + (self.n,))])
        return True

    def _broadcast_like(self, em, s, args, kw, flags, r):
        shape = self.kind(args[1]).static_shape
        if not flags[0] or flags[1] or shape is None:
            return False
        self.emit(em, s, np.broadcast_to, [args[0], Const(tuple(shape) + (self.n,))])
        return True

    def _unbroadcast(self, em, s, args, kw, flags, r):
        shape = self.kind(args[1]).static_shape
        if not flags[0] or flags[1] or shape is None:
            return False
        self.emit(em, s, prims.sum_to_shape, [args[0], Const(tuple(shape) + (self.n,))])
        return True

    def _sum_to_shape(self, em, s, args, kw, flags, r):
        if not flags[0] or flags[1]:
            return False
        k = self.kind(args[1])
        shape = Const(tuple(k.value) + (self.n,)) if k.known else \
            em.call(with_batch_axis, (args[1], Const(self.n)), hint="_shape")
        self.emit(em, s, prims.sum_to_shape, [args[0], shape])
        return True

    def _concatenate(self, em, s, args, kw, flags, r):
        return self._stacking(em, s, args, kw, 0)

    def _stack(self, em, s, args, kw, flags, r):
        return self._stacking(em, s, args, kw, 1)

    def _stacking(self, em, s, args, kw, extra):
        kd = dict(kw)
        axis = args[1] if len(args) > 1 else kd.pop("axis", Const(0))
        items = self.kind(args[0]).items
        if not isinstance(axis, Const) or axis.value is None or not items or \
                items[0].static_shape is None:
            return False  # (axis=None flattens the batch axis too: one direction at a time)
        r = len(items[0].static_shape) + extra
        kd["axis"] = Const(axis.value % r)
        self.emit(em, s, s.fn, [args[0]], tuple(kd.items()))
        return True

    def _array(self, em, s, args, kw, flags, r):
        em.add(s)  # np.array of a list of batched items stacks them along axis 0
        return True

    def _index_add(self, em, s, args, kw, flags, r):
        acc, idx, g = args
        if self.is_b(idx):
            return False
        acc = acc if flags[0] else self.expand(em, acc)
        self.emit(em, s, prims.index_add, [acc, self.index(em, idx), g])
        return True

    def _matmul(self, em, s, args, kw, flags, r):
        x, y = args
        rx, ry = self.rank(x), self.rank(y)
        if rx is None or ry is None or kw or (flags[0] and flags[1]):
            return False
        mm = np.matmul
        if rx == 0 or ry == 0:
            self.emit(em, s, operator.mul, [x, y])
            return True
        if flags[0]:
            if rx == 1 and ry == 1:
                self.emit(em, s, mm, [y, x])
            elif rx == 1:
                yt = em.call(np.swapaxes, (y, Const(-1), Const(-2)), hint="_t")
                self.emit(em, s, mm, [yt, x])
            else:
                front = self.batch_in_front(em, x, rx, ry)
                prod = em.call(mm, (front, y), hint="_t")
                self.emit(em, s, np.moveaxis, [prod, Const(0), Const(-1)])
            return True
        if ry == 1:
            self.emit(em, s, mm, [x, y])
        else:
            front = self.batch_in_front(em, y, ry, rx)
            prod = em.call(mm, (x, front), hint="_t")
            self.emit(em, s, np.moveaxis, [prod, Const(0), Const(-1)])
        return True

    def batch_in_front(self, em, a, ra, r_other):
        """The batched matrix operand `a` (rank `ra` unbatched) of a matmul with an operand
        of rank `r_other`, its batch axis first and in front of every stacking axis of the
        product: (n, 1, .., 1, *a's shape), so that it broadcasts against the other
        operand's stacking axes (a (5, 2) matrix times a (2, 3, 5) stack), not with them."""
        front = em.call(np.moveaxis, (a, Const(-1), Const(0)), hint="_t")
        pad = r_other - ra
        if pad > 0:
            front = em.call(np.expand_dims, (front, Const(tuple(range(1, pad + 1)))),
                            hint="_t")
        return front

    def _dot(self, em, s, args, kw, flags, r):
        if max(self.rank(args[0]) or 3, self.rank(args[1]) or 3) > 2:
            return False
        return self._matmul(em, s, args, kw, flags, r)


def _rule_name(fn) -> str:
    if isinstance(fn, prims.Attr):
        return "attr_" + fn.name
    if fn in REDUCTIONS:
        return "reduction"
    if fn in (operator.matmul, np.matmul):
        return "matmul"
    if fn is prims.broadcast_like:
        return "broadcast_like"
    if fn is prims.unbroadcast:
        return "unbroadcast"
    if fn is prims.index_add:
        return "index_add"
    if fn is prims.sum_to_shape:
        return "sum_to_shape"
    name = getattr(fn, "__name__", "")
    if getattr(np, name, None) is fn:
        return name
    return "-"


def batch_pass(fn: Function, batched_vars, n: int, kinds: dict) -> Function:
    """Batch `fn`: the variables in `batched_vars` (and all computed from them) gain a
    trailing axis of `n` directions. `kinds` are the kinds of the unbatched function."""
    return BatchPass(fn, set(batched_vars), n, kinds).run()
