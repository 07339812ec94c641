"""The simplifier's rewrites of one call: identities and zeros, broadcasts made implicit,
shapes and scatters that change nothing, constant factors and signs moved outwards. Each
returns an atom equal to the call's value, or None to keep the call (see simplify.py, the
driver that applies them to a fixed point).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from s2sad.ir.dims import (
    Dim,
    broadcast_shapes,
    decided,
    escapes_given,
    escapes_taken,
    has_dims,
)
from s2sad.errors import S2SADError
from s2sad.ir import prims
from s2sad.ir.kinds import _UNSET, UNKNOWN, Kind, eval_kind
from s2sad.ir.nodes import Call, Const, Var, count_uses
from s2sad.passes.inline_rules import is_zero, zero
from s2sad.passes.inplace import index_is_basic

ADDS = {operator.add, np.add}

SUBS = {operator.sub, np.subtract}

MULS = {operator.mul, np.multiply}

DIVS = {operator.truediv, np.divide, np.true_divide}

NEGS = {operator.neg, np.negative}

IDENTITY_UNARY = {operator.pos, np.positive}

ELEMENTWISE2 = ADDS | SUBS | MULS | DIVS | {operator.pow}

def _is_plain_ufunc(fn) -> bool:
    return isinstance(fn, np.ufunc) and fn.signature is None and fn.nin == 2

SIMPLE = (int, float, complex, bool, str, type(None), type(Ellipsis), slice)

def _simple_value(v) -> bool:
    if isinstance(v, bool) or type(v) in (int, float, complex, str, type(None),
                                          type(Ellipsis), Dim):  # (a size: `n`)
        return True
    if isinstance(v, slice):
        return all(_simple_value(x) for x in (v.start, v.stop, v.step))
    if isinstance(v, tuple):
        return all(_simple_value(x) for x in v) and len(v) <= 32
    if isinstance(v, np.generic) and v.dtype.kind in "biuf":
        return True
    return False

_NOFOLD = object()

# calls never rewritten: effects, and the tapes a loop's reversal reads
_NEVER = prims.EFFECTFUL | {prims.new_tape, prims.tape_reader}

def _fresh_name(simp, hint):
    simp._reads = None  # (a rewrite that named a statement, even one it took back)
    taken = getattr(simp, "_taken", None)
    if taken is None:
        from s2sad.ir.builder import all_vars

        taken = simp._taken = {v.name for v in all_vars(simp.fn)}
    base = hint.rstrip("0123456789_") or "t"
    # the next number to try for each base: a scan from 1 per name was quadratic
    nexts = simp.__dict__.setdefault("_next_suffix", {})
    n = nexts.get(base, 1)
    while f"{base}_{n}" in taken:
        n += 1
    nexts[base] = n + 1
    name = f"{base}_{n}"
    taken.add(name)
    return name

def _is_num(a, value) -> bool:
    return isinstance(a, Const) and type(a.value) in (int, float) and a.value == value


class Rewrites:
    """Rewrites of one call, mixed into the Simplifier (which holds kinds and use counts)."""

    # what the rewrite of the current call read (see Simplifier.call), or None: the
    # definitions (variable, statement) and the use counts tested (variable, count, answer)
    _reads: list | None = None
    _tests: list | None = None
    _sums: list | None = None  # the computed sums tested (see computed_sum)
    # sums of two cotangents of one value (reverse.py): of one shape, even where unknown
    cotangent_sums: frozenset = frozenset()

    def rewrite(self, s: Call, out):
        """An atom equal to the call's value, or None to keep the call."""
        fn, args, t = s.fn, s.args, s.target
        if fn in _NEVER:
            return None
        kt = self.kinds.get(t, UNKNOWN)  # (self.kind(t), without the call: t is a variable)
        consts = False
        for a in args:
            if type(a) is Const:
                consts = True
                break
        else:
            for _, a in s.kwargs:
                if type(a) is Const:
                    consts = True
                    break
        if consts:
            zeros = [is_zero(a) for a in args] + [is_zero(a) for _, a in s.kwargs]
            if any(zeros):
                return self.rewrite_zero(s, zeros, kt, out)
            if fn in SUBS and len(args) == 2 and isinstance(args[0], Const) and \
                    args[0] == args[1] and not s.kwargs and type(args[0].value) is float and \
                    kt.tag == "scalar" and t not in self.primal and self.straight_line():
                # c - c where c is what a cancellation left (see rewrite_cancel): a zero
                # derivative, not a number. Only without branches and loops: a zero reaching
                # their merges with no known shape could not be made concrete there
                return zero(kt)
            # constant folding
            if all(type(a) is Const for a in args) and \
                    all(type(a) is Const for _, a in s.kwargs) and \
                    not any(isinstance(a.value, np.ndarray) for a in args) and \
                    not (kt.tag == "array" and kt.ndim):
                # (a global array's values are read when the code runs, never folded in;
                # nor is an array made of constants, np.zeros((n,)), which would be made
                # here, of the data's size, to be thrown away: no array is a constant)
                if fn not in (prims.make_list,):
                    escaped_before = escapes_taken()
                    try:
                        val = fn(*(a.value for a in args), **{n: a.value for n, a in s.kwargs})
                    except S2SADError as e:
                        # a rule's refusal of an option is reported while compiling, at
                        # the user's call
                        if e.loc is None:
                            e.loc = s.loc
                        raise
                    except Exception:
                        val = _NOFOLD
                    folds = val is not _NOFOLD and _simple_value(val) and (
                        type(val) in (int, bool, Dim, tuple) or
                        not any(has_dims(a.value) for a in args))
                    # (not a float made from a size, n * 0.5: that size's number; a size
                    # that left its symbol counts where the number is kept: dims.py)
                    escapes_given(escaped_before or (escapes_taken() and folds))
                    if folds:
                        return Const(folded(val, s, self.primal))
        elif fn in SUBS and len(args) == 2 and type(args[0]) is Var and args[0] is args[1] and \
                not s.kwargs and kt.tag == "scalar" and kt.dtype == "f" and \
                t not in self.primal and self.sized(args[0], out):
            # c - c as above, where c is a size's multiple (n * -1.0); a number's zero has
            # its shape, (), wherever it reaches
            return zero(kt)
        if kt.value is not _UNSET and _simple_value(kt.value) and (
                fn is prims.make_tuple or not self.table.linear.get(fn, False)):
            return Const(kt.value)
        parts = (_PRIMAL_PARTS if t in self.primal else _PARTS).get(fn)
        if parts is None:  # (a call no rewrite names: a binary ufunc's broadcasts only)
            parts = _UFUNC_PARTS if _is_plain_ufunc(fn) else ()
        else:
            triggers = _TRIGGERS.get(fn)
            if triggers is not None:
                parts = self.triggered(s, parts, triggers, out)
        for part in parts:
            r = part(self, s, kt, out)
            if r is not None:
                return r
        return None

    def triggered(self, s: Call, parts: tuple, triggers: dict, out) -> tuple:
        """The rewrites of `parts` that may apply to the product or sum `s`: those whose
        triggers (see _TRIGGERS) include a constant operand or a function defining an
        operand; all of them for a call with keywords or other than two operands, or
        whose two operands are one variable."""
        args = s.args
        if len(args) != 2 or s.kwargs or args[0] is args[1]:
            return parts
        found = [parts]
        for a in args:
            if type(a) is Var:
                d = self.defining(a, out)
                found.append(d.fn if d is not None else None)
            else:
                found.append(_CONST)
        key = tuple(found)
        try:
            selected = _SELECTED.get(key)
            if selected is None:
                if len(_SELECTED) > 4096:  # (functions of other programs kept no longer)
                    _SELECTED.clear()
                selected = _SELECTED[key] = tuple(
                    [p for p in parts if not triggers[p].isdisjoint(key[1:])])
        except TypeError:  # (a function that cannot be hashed: tried by every rewrite)
            return parts
        return selected

    def rewrite_operands(self, s: Call, kt, out):
        """Identities (x * 1), real parts of real values, zeros that a cancellation left,
        negations and negative factors taken into a sum or difference, items of tuples
        built here."""
        fn, args, t = s.fn, s.args, s.target
        if fn is np.real and len(args) == 1 and not s.kwargs and type(args[0]) is Var and \
                t not in self.primal and self.surely_real(args[0], out):
            return args[0]  # the real part of a real cotangent (reverse.py's add_bar)
        if fn in DIVS and len(args) == 2 and not s.kwargs and _is_num(args[0], 0) and \
                type(args[0].value) is float and kt.tag == "scalar" and kt.dtype == "f" and \
                t not in self.primal:
            # a derivative that a cancellation left at 0.0, over a count or a scale (a max's
            # ties): zero, as a symbolic zero over anything is (rewrite_zero). Symbolic
            # only in straight-line code, as for c - c: a zero reaching a branch's or
            # loop's merge is not made concrete there
            return zero(kt) if self.straight_line() else Const(0.0)
        if fn is prims.index_add and len(args) == 3 and not s.kwargs and \
                _is_num(args[2], 0) and type(args[2].value) is float and t not in self.primal:
            return args[0]  # 0.0 added at some positions of a derivative (as for a zero)
        if len(args) == 2 and not s.kwargs:
            x, y = args
            if type(x) is Const or type(y) is Const:
                r = self.rewrite_identity(fn, x, y, kt, t, out, s.loc)
                if r is not None:
                    return r
            if fn in ADDS:
                # a + (-b) -> a - b
                for first, second in ((x, y), (y, x)):
                    d = self.defining(second, out) if isinstance(second, Var) else None
                    if d is not None and d.fn in NEGS and self.uses_once(second):
                        out.append(Call(t, operator.sub, (first, d.args[0]), (), s.loc))
                        return t
                    sc = self.scaled(second, out, 1) if isinstance(second, Var) else None
                    if sc is not None and sc[0] < 0:  # a + (-4.0 * b) -> a - 4.0 * b
                        product = self.scale(-sc[0], sc[1], 0, out, s.loc)
                        out.append(Call(t, operator.sub, (first, product), (), s.loc))
                        return t
            if fn in SUBS and isinstance(y, Var):
                d = self.defining(y, out)
                if d is not None and d.fn in NEGS and self.uses_once(y):
                    # a - (-b) -> a + b
                    out.append(Call(t, operator.add, (x, d.args[0]), (), s.loc))
                    return t
                sc = self.scaled(y, out, 1)
                if sc is not None and sc[0] < 0:  # a - (-4.0 * b) -> a + 4.0 * b
                    product = self.scale(-sc[0], sc[1], 0, out, s.loc)
                    out.append(Call(t, operator.add, (x, product), (), s.loc))
                    return t
        if fn is operator.getitem and len(args) == 2 and isinstance(args[0], Var) and \
                isinstance(args[1], Const) and type(args[1].value) is int:
            # an item of a tuple built here: the item itself
            d = self.defining(args[0], out)
            if d is not None and (d.fn is prims.make_tuple or (
                    d.fn is prims.make_list and t not in self.primal)) and not d.kwargs and \
                    -len(d.args) <= args[1].value < len(d.args):
                item = d.args[args[1].value]
                if t not in self.primal and isinstance(item, Var) and \
                        self.is_zeros(item, out) and self.kind(item).static_shape is not None:
                    # the zero cotangent of an item nothing read (the reverse pass makes the
                    # tuple's zeros real): symbolic again, so that a rule's terms in it
                    # vanish (svd's through u when only s is used), not computed with zeros
                    return zero(self.kind(item))
                return item
        if (fn is prims.make_tuple or fn is prims.make_list) and args and not s.kwargs and \
                t not in self.primal:
            # (x[0], x[1], ..., x[n - 1]) of a tuple x of n items: x itself (a cotangent
            # given its argument's structure, see reverse.py's `structured`, that has it)
            src = self.rebuilt_from(args, out)
            if src is not None:
                ks = self.kind(src)
                if ks.tag == ("tuple" if fn is prims.make_tuple else "list") and \
                        len(ks.items) == len(args):
                    return src
            # [a[0] + b[0], ..., a[n-1] + b[n-1]] of two arrays a and b of one shape (n, ...)
            # (a list's cotangent summed item by item, where both parts are arrays): a + b
            pair = self.summed_items(args, out)
            if pair is not None:
                ka, kb = self.kind(pair[0]), self.kind(pair[1])
                if ka.tag == kb.tag == "array" and ka.shape is not None and \
                        ka.shape == kb.shape and ka.shape[:1] == (len(args),):
                    self.kinds[t] = ka.__class__("array", "c" if "c" in (
                        ka.dtype, kb.dtype) else "f", ka.shape)
                    out.append(Call(t, operator.add, pair, (), s.loc))
                    return t
        if fn in ADDS and len(args) == 2 and not s.kwargs:
            # zeros + v -> v (a tuple's cotangent starts as zeros for the items not read)
            for z, other in ((args[0], args[1]), (args[1], args[0])):
                if isinstance(z, Var) and self.is_zeros(z, out) and \
                        same_shape(self.kind(other), kt):
                    return other
        return None

    def rewrite_broadcasts(self, s: Call, kt, out):
        """Broadcasts made implicit, sums of negations, zeros of known shape, and a sum
        into a fresh scatter made one scatter."""
        fn, args, t = s.fn, s.args, s.target
        if (fn in ELEMENTWISE2 or _is_plain_ufunc(fn)) and len(args) == 2 and not s.kwargs \
                and kt.tag == "array" and kt.shape is not None:
            for a in args:
                d = self.defining(a, out) if type(a) is Var else None
                if d is not None and d.fn is np.broadcast_to:
                    defs = [self.defining(a, out) if type(a) is Var else None for a in args]
                    r = self.rewrite_broadcast_operand(s, kt, out, defs)
                    if r is not None:
                        return r
                    break
        if fn in (np.sum, np.mean) and args and isinstance(args[0], Var):
            d = self.defining(args[0], out)
            if d is not None and d.fn in NEGS and self.uses_once(args[0]):
                inner = self.new_call_kw(fn, (d.args[0],) + args[1:], s.kwargs, t.name, out)
                return self.new_call(operator.neg, (inner,), t.name, out, s.loc)
        if fn in (np.sum, np.mean) and args and isinstance(args[0], Var) and \
                all(k in ("axis", "keepdims") for k, _ in s.kwargs) and len(args) == 1:
            # the sum of a broadcast constant: the constant times the entries summed
            d = self.defining(args[0], out)
            if d is not None and d.fn is np.broadcast_to and not d.kwargs and \
                    isinstance(d.args[0], Const) and type(d.args[0].value) is float and \
                    isinstance(d.args[1], Const) and kt.static_shape is not None:
                c, n_in = d.args[0].value, math.prod(d.args[1].value)
                n_out = math.prod(kt.static_shape)
                value = Const(c if fn is np.mean else c * (n_in // max(n_out, 1)))
                if kt.static_shape == ():
                    return value
                return self.new_call(np.broadcast_to, (value, Const(kt.static_shape)),
                                     t.name, out, s.loc)
        if fn is prims.zeros_like and kt.tag == "array" and kt.shape is not None:
            kw = (("dtype", Const(complex)),) if kt.dtype == "c" else ()
            return self.new_call_kw(np.zeros, (Const(kt.shape),), kw, t.name, out)
        if fn is prims.zeros_like and kt.tag == "scalar":
            return Const(0j if kt.dtype == "c" else 0.0)
        if fn in ADDS and len(args) == 2 and self.kind(args[0]) == kt == self.kind(args[1]) \
                and (same_shape(kt, kt) or t in self.cotangent_sums):
            # A + scatter(zeros, i, v) -> scatter(A, i, v): one array, no extra copy
            for acc, other in ((args[0], args[1]), (args[1], args[0])):
                d = self.defining(other, out) if isinstance(other, Var) else None
                if d is not None and (d.fn is prims.index_add or (
                        d.fn is prims.index_update and index_is_basic(self.kind(d.args[1])))) \
                        and self.uses_once(other) and self.is_zeros(d.args[0], out):
                    out.append(Call(t, prims.index_add, (acc,) + d.args[1:], (), s.loc))
                    return t
        return None

    def rewrite_broadcast_operand(self, s: Call, kt, out, defs):
        """An operand broadcast explicitly (`defs`: its defining statements) is broadcast
        implicitly by the elementwise operation itself."""
        fn, args, t = s.fn, s.args, s.target
        new_args = list(args)
        for k, a in enumerate(args):
            d = defs[k]
            if d is not None and d.fn is np.broadcast_to and not d.kwargs:
                other = self.kind(new_args[1 - k]).static_shape
                inner = self.kind(d.args[0]).static_shape
                if other is not None and inner is not None:
                    try:
                        same = broadcast_shapes(inner, other) == kt.shape
                    except ValueError:
                        same = False
                    if same:
                        new_args[k] = d.args[0]
        if new_args != list(args):
            out.append(Call(t, fn, tuple(new_args), (), s.loc))
            return t
        # broadcast_to(v, S) op scalar -> broadcast_to(v op scalar, S): scalar work
        for k, a in enumerate(args):
            d = defs[k]
            other = args[1 - k]
            if d is not None and d.fn is np.broadcast_to and not d.kwargs and \
                    self.kind(other).tag == "scalar" and self.kind(d.args[0]).is_scalar:
                pair = (d.args[0], other) if k == 0 else (other, d.args[0])
                inner = self.new_call(fn, pair, t.name, out, s.loc)
                out.append(Call(t, np.broadcast_to, (inner, d.args[1]), (), s.loc))
                return t
        return None

    def rewrite_shapes(self, s: Call, kt, out):
        """Reshapes, slices and sums to a shape that change nothing; scatters into fresh
        zeros made writes, repeated scatters merged."""
        fn, args, t = s.fn, s.args, s.target
        if fn in (np.reshape, np.expand_dims) and len(args) == 2 and not s.kwargs and \
                isinstance(args[0], Var) and kt.static_shape is not None:
            d = self.defining(args[0], out)
            if d is not None and d.fn is np.broadcast_to and not d.kwargs and \
                    self.kind(d.args[0]).tag == "scalar":
                # a scalar broadcast, reshaped: the scalar broadcast to the new shape (a
                # pullback's seed, then broadcast implicitly by the product that reads it)
                return self.new_call(np.broadcast_to, (d.args[0], Const(tuple(kt.static_shape))),
                                     t.name, out, s.loc)
        if fn is np.reshape and len(args) == 2 and not s.kwargs and \
                self.kind(args[0]).static_shape is not None and \
                self.kind(args[0]).static_shape == kt.static_shape:
            return args[0]
        if fn is operator.getitem and isinstance(args[1], Const) and \
                isinstance(args[1].value, slice) and self.kind(args[0]) == kt and \
                kt.tag == "array" and kt.shape:
            sl = args[1].value
            if sl.start in (None, 0) and sl.step in (None, 1) and \
                    (sl.stop is None or (type(sl.stop) in (int, Dim) and
                                         sl.stop >= kt.shape[0])):
                return args[0]  # a slice that selects everything, in order
        if fn is prims.sum_to_shape and isinstance(args[1], Const):
            kg = self.kind(args[0])
            if kg.static_shape is not None and tuple(kg.static_shape) == tuple(args[1].value):
                return args[0]
            if kg.static_shape is not None:
                r = self.emit_sum_to(args[0], kg.static_shape, tuple(args[1].value), t, out)
                if r is not None:
                    return r
        if fn is prims.index_add and len(args) == 3 and isinstance(args[0], Var):
            d = self.defining(args[0], out)
            if d is not None and d.fn is np.zeros and self.uses_once(args[0]) and \
                    index_is_basic(self.kind(args[1])) and t not in self.primal:
                # the first scatter into fresh zeros, at positions that cannot repeat, is a
                # write: x_bar[:-1] = g, not x_bar[:-1] += g
                out.append(Call(t, prims.index_update, args, (), s.loc))
                return t
            # acc[i] += a; acc[i] += b  ->  acc[i] += a + b (one scatter)
            if d is not None and d.fn is prims.index_add and d.args[1] == args[1] and \
                    self.uses_once(args[0]) and self.kind(d.args[2]) == self.kind(args[2]):
                g = args[2]
                if d.args[2] == g and isinstance(g, Var) and self.kind(g).is_float:
                    # acc[i] += g twice (the two factors of g * g): acc[i] += 2 g
                    total = self.scale(2.0, g, 2, out, s.loc)
                elif self.kind(g).tag == "scalar":  # arrays: a sum is a pass too
                    total = self.new_call(operator.add, (d.args[2], g), "_v", out, s.loc)
                else:
                    total = None
                if total is not None:
                    out.append(Call(t, prims.index_add, (d.args[0], args[1], total), (), s.loc))
                    return t
        if fn is prims.take_slot and kt.tag == "scalar" and index_is_basic(self.kind(args[1])):
            # one entry (g[i], g[i, j]): a plain read is already a copy (no view to protect),
            # and a basic index repeats no position
            return self.new_call(operator.getitem, args, t.name, out, s.loc)
        if fn is prims.cast_like and len(args) == 2 and not s.kwargs and \
                self.kind(args[1]).tag in ("tuple", "list"):
            # the precision of a list or tuple (np.array([a, b])'s argument): it has none,
            # the cotangent stays as it is (and the list need not be kept for the reverse)
            return args[0]
        if fn is prims.unbroadcast:
            g, x = args
            kg, kx = self.kind(g), self.kind(x)
            if kx.static_shape is not None and kg.static_shape == kx.static_shape:
                return g
            if kx.static_shape is not None and kg.static_shape is not None:
                return self.emit_sum_to(g, kg.static_shape, kx.static_shape, t, out)
        if fn is prims.broadcast_like or fn is np.broadcast_to:
            a, other = args[0], args[1]
            ka = self.kind(a)
            shape = (self.kind(other).static_shape if fn is prims.broadcast_like else
                     (other.value if isinstance(other, Const) else None))
            if isinstance(shape, int):
                shape = (shape,)
            if ka.static_shape is not None and shape is not None and \
                    tuple(ka.static_shape) == tuple(shape) and ka.tag == "array":
                return a
            if ka.tag == "scalar" and shape == () and fn is prims.broadcast_like:
                return a
        return None

    def rewrite_signs(self, s: Call, kt, out):
        """Identities, double negations, and constant factors and signs moved outwards
        (v + v -> 2.0 v, k (c w) -> (k c) w, (-a) b -> -(a b))."""
        fn, args, t = s.fn, s.args, s.target
        if fn in IDENTITY_UNARY and self.kind(args[0]) == kt:
            return args[0]
        if fn is prims.identity:
            return args[0]
        if fn is float and self.kind(args[0]) == kt and kt.tag == "scalar":
            return args[0]
        if fn in NEGS and isinstance(args[0], Var):
            d = self.defining(args[0], out)
            if d is not None and d.fn in NEGS:
                return d.args[0]
            scaled = self.scaled(args[0], out, 1)
            if scaled is not None:  # -(c * v) -> (-c) * v
                c, v = scaled
                out.append(Call(t, operator.mul, (Const(-c), v), (), s.loc))
                return t
        if fn in ADDS and len(args) == 2 and args[0] == args[1] and isinstance(args[0], Var):
            scaled = self.scaled(args[0], out, 2)
            if scaled is not None:  # c * v + c * v -> (2c) * v
                c, v = scaled
                out.append(Call(t, operator.mul, (Const(2 * c), v), (), s.loc))
                return t
            if kt.dtype in ("f", "c") and self.kind(args[0]) == kt and t not in self.primal:
                # v + v -> 2.0 * v: a constant factor that later products can absorb
                r = self.scale(2.0, args[0], 2, out, s.loc)
                if isinstance(r, Var) and out and getattr(out[-1], "target", None) == r:
                    last = out.pop()
                    out.append(Call(t, last.fn, last.args, last.kwargs, last.loc))
                    return t
                return r
        if fn in MULS and len(args) == 2 and not s.kwargs and t not in self.primal:
            x, y = args
            for k, v in ((x, y), (y, x)):
                if isinstance(k, Const) and type(k.value) in (int, float) and \
                        not isinstance(k.value, bool) and isinstance(v, Var) and \
                        self.kind(v) == kt:
                    # k * (c * w) -> (k c) * w; k * (-u) -> (-k) * u
                    folded = self.fold_scale(float(k.value), v, 1, out)
                    if folded is not None:
                        c, w = folded
                        if c == 1.0:
                            return w
                        out.append(Call(t, operator.mul, (Const(c), w), (), s.loc))
                        return t
        if (fn in MULS or fn in DIVS) and len(args) == 2 and not s.kwargs and \
                t not in self.primal:
            x, y = args
            for n, u in ((x, y), (y, x)) if fn in MULS else ((x, y),):
                d = self.defining(n, out) if isinstance(n, Var) else None
                if d is not None and d.fn in NEGS and self.uses_once(n) and \
                        self.kind(d.args[0]) == self.kind(n):
                    # (-a) * b -> -(a * b), (-a) / b -> -(a / b): the sign moves out,
                    # where a sum, a constant factor or another sign can take it
                    pair = (d.args[0], u) if n is x else (u, d.args[0])
                    inner = self.new_call(fn, pair, "_t", out, s.loc)
                    out.append(Call(t, operator.neg, (inner,), (), s.loc))
                    return t
        return None

    def rewrite_reductions(self, s: Call, kt, out):
        """A factor constant along a sum's axes taken out of the sum, which then reduces the
        other factor alone: sum(c * x) -> c * sum(x); sum(a * b, axis) -> sum(a, axis) * b
        where b has length 1 on every summed axis (a broadcast is not materialised)."""
        fn, args, t = s.fn, s.args, s.target
        if t in self.primal:
            return None
        if len(args) == 2 and not s.kwargs and kt.tag in ("scalar", "array"):
            r = self.rewrite_cancel(fn, args, kt, out)
            if r is not None:
                return r
        if fn is not np.sum or len(args) != 1 or not isinstance(args[0], Var) or \
                not all(k in ("axis", "keepdims") for k, _ in s.kwargs):
            return None
        kp = self.kind(args[0])
        kw = dict(s.kwargs)
        if kt.tag == "scalar" and kp.tag == "array" and kp.dtype in ("f", "c"):
            # a sum over every axis, spelled one way (np.sum(v)) so that equal sums are shared
            if s.kwargs:
                out.append(Call(t, np.sum, args, (), s.loc))
                return t
            d = self.defining(args[0], out)
            if d is not None and d.fn in MULS and not d.kwargs and len(d.args) == 2:
                for a, v in ((d.args[0], d.args[1]), (d.args[1], d.args[0])):
                    e = self.defining(a, out) if isinstance(a, Var) else None
                    if e is not None and e.fn in SUBS and not e.kwargs and \
                            self.uses_once(args[0]) and self.uses_once(a) and \
                            self.kind(e.args[1]).tag == "scalar" and \
                            self.kind(e.args[0]) == self.kind(a) == kp and \
                            self.computed_sum(v, out):
                        # sum((a - k) v) -> sum(a v) - k sum(v) where sum(v) is computed
                        # already (a normalisation: k's part then cancels, see rewrite_cancel)
                        av = self.new_call(operator.mul, (e.args[0], v), "_p", out, s.loc)
                        left = self.new_call(np.sum, (av,), t.name, out, s.loc)
                        right = self.new_call(np.sum, (v,), t.name, out, s.loc)
                        kr = self.new_call(operator.mul, (e.args[1], right), "_k", out, s.loc)
                        out.append(Call(t, operator.sub, (left, kr), (), s.loc))
                        return t
            if d is not None and d.fn in MULS and not d.kwargs and len(d.args) == 2:
                for k, v in ((d.args[0], d.args[1]), (d.args[1], d.args[0])):
                    if self.kind(k).tag == "scalar" and self.kind(v) == kp:
                        # sum(k v) -> k sum(v): sum(v) is often computed already (a
                        # normalisation: the sum of softmax's cotangent cancels)
                        inner = self.new_call(np.sum, (v,), t.name, out, s.loc)
                        out.append(Call(t, operator.mul, (k, inner), (), s.loc))
                        return t
        d = self.defining(args[0], out)
        if d is not None and d.fn in SUBS and not d.kwargs and len(d.args) == 2 and \
                kt.tag == "array" and all(self.kind(x) == kp for x in d.args) and \
                any(self.computed_sum(x, out, s.kwargs) for x in d.args):
            # sum(a - b) -> sum(a) - sum(b) where one of them is computed already (the sum
            # of a cotangent that a normalisation cancels, see rewrite_cancel)
            left = self.new_call_kw(np.sum, (d.args[0],), s.kwargs, t.name, out)
            right = self.new_call_kw(np.sum, (d.args[1],), s.kwargs, t.name, out)
            out.append(Call(t, operator.sub, (left, right), (), s.loc))
            return t
        if d is None or d.fn not in MULS or d.kwargs or len(d.args) != 2:
            return None
        once = self.uses_once(args[0])
        for a, b in ((d.args[0], d.args[1]), (d.args[1], d.args[0])):
            if isinstance(b, Const) and type(b.value) in (int, float) and once and \
                    not isinstance(b.value, bool) and self.kind(a) == kp:
                inner = self.new_call_kw(np.sum, (a,), s.kwargs, t.name, out)
                out.append(Call(t, operator.mul, (b, inner), (), s.loc))
                return t
        shape, keep = kp.static_shape, kw.get("keepdims", Const(False))
        axis = kw.get("axis")
        if shape is None or not isinstance(keep, Const) or keep.value is not True or \
                not isinstance(axis, Const) or kt.static_shape is None:
            return None
        axes = axis.value if isinstance(axis.value, tuple) else (axis.value,)
        if not all(type(i) is int and -len(shape) <= i < len(shape) for i in axes):
            return None
        axes = tuple(i % len(shape) for i in axes)
        for a, b in ((d.args[0], d.args[1]), (d.args[1], d.args[0])):
            ka, kb = self.kind(a), self.kind(b)
            if not isinstance(b, Var) or ka.static_shape is None or kb.static_shape is None or \
                    len(ka.static_shape) != len(shape) or len(kb.static_shape) != len(shape) or \
                    any(kb.static_shape[i] != 1 for i in axes) or \
                    all(ka.static_shape[i] == 1 for i in axes) or \
                    not (once or self.computed_sum(a, out, s.kwargs)):
                continue
            inner = self.new_call_kw(np.sum, (a,), s.kwargs, t.name, out)
            if self.kind(inner).static_shape is None or broadcast_shapes(
                    self.kind(inner).static_shape, kb.static_shape) != tuple(kt.static_shape):
                out.pop()
                continue
            pair = (inner, b) if a is d.args[0] else (b, inner)
            out.append(Call(t, operator.mul, pair, (), s.loc))
            return t
        return None

    def rewrite_self_difference(self, s: Call, kt, out):
        """v - v -> 0 for a float cotangent v, in the derivative of straight-line code only:
        what a max-shift's cotangent cancels to (logsumexp, softmax over an axis: the
        sum of softmax's cotangent), a zero in real arithmetic, so that the mask and
        count of the max's ties are never computed. (As for c - c in `rewrite`: a zero
        reaching a branch's or loop's merge with no known shape could not be made real.)"""
        fn, args, t = s.fn, s.args, s.target
        if fn not in SUBS or len(args) != 2 or s.kwargs or args[0] != args[1] or \
                not isinstance(args[0], Var) or t in self.primal or \
                kt.tag not in ("scalar", "array") or kt.dtype not in ("f", "c") or \
                self.kind(args[0]) != kt or not self.straight_line():
            return None
        if kt.tag == "array" and kt.static_shape is None:
            return None
        return zero(kt)

    def rewrite_write_then_add(self, s: Call, kt, out):
        """acc[i] = a; acc[i] += b -> acc[i] = a + b at positions that cannot repeat, in the
        derivative only (the same sum, one pass fewer: x_bar[:-1] = g; x_bar[:-1] += h)."""
        fn, args, t = s.fn, s.args, s.target
        if fn is not prims.index_add or len(args) != 3 or s.kwargs or t in self.primal or \
                not isinstance(args[0], Var):
            return None
        d = self.defining(args[0], out)
        if d is None or d.fn is not prims.index_update or d.kwargs or d.args[1] != args[1] or \
                not index_is_basic(self.kind(args[1])) or not self.uses_once(args[0]):
            return None
        a, b = d.args[2], args[2]
        ka, kb = self.kind(a), self.kind(b)
        if ka.tag != "array" or ka != kb or ka.static_shape is None or \
                (isinstance(b, Var) and not self.uses_once(b)):
            # (b added twice, as x * x sends it: the two scatters are merged into one of
            # 2 b first, see rewrite_shapes)
            return None
        total = self.new_call(operator.add, (a, b), "_v", out, s.loc)
        out.append(Call(t, prims.index_update, (d.args[0], args[1], total), (), s.loc))
        return t

    def scalar_factor(self, a) -> bool:
        """Is `a` a number or a float scalar variable (a factor whose product is cheap)?"""
        if isinstance(a, Const):
            return type(a.value) in (int, float) and not isinstance(a.value, bool)
        k = self.kind(a)
        return k.tag == "scalar" and k.dtype in ("f", "c")

    def rewrite_scalar_factors(self, s: Call, kt, out):
        """k (s w) -> (k s) w and -(s w) -> (-s) w for scalars k, s and an array w, in the
        derivative only: one pass over the array instead of two (a pullback's seed times a
        rule's constant)."""
        fn, args, t = s.fn, s.args, s.target
        if fn in NEGS and len(args) == 1 and not s.kwargs and kt.tag == "array" and \
                t not in self.primal and isinstance(args[0], Var) and \
                self.kind(args[0]) == kt:
            # -(s w) -> (-s) w: the sign joins the scalar
            d = self.defining(args[0], out)
            if d is not None and d.fn in MULS and not d.kwargs and len(d.args) == 2:
                for c, w in ((d.args[0], d.args[1]), (d.args[1], d.args[0])):
                    if isinstance(c, Var) and self.scalar_factor(c) and self.kind(w) == kt \
                            and self.uses_once(args[0]):
                        ks = self.new_call(operator.neg, (c,), "_s", out, s.loc)
                        out.append(Call(t, operator.mul, (ks, w), (), s.loc))
                        return t
        if fn not in MULS or len(args) != 2 or s.kwargs or kt.tag != "array" or \
                t in self.primal:
            return None
        for k, v in ((args[0], args[1]), (args[1], args[0])):
            if not self.scalar_factor(k) or not isinstance(v, Var) or self.kind(v) != kt:
                continue
            d = self.defining(v, out)
            if d is None or d.fn not in MULS or d.kwargs or len(d.args) != 2:
                continue
            for c, w in ((d.args[0], d.args[1]), (d.args[1], d.args[0])):
                if self.scalar_factor(c) and self.kind(w) == kt and \
                        not (isinstance(k, Const) and isinstance(c, Const)) and \
                        self.uses_once(v):
                    # (two numbers: fold_scale's)
                    ks = self.new_call(operator.mul, (k, c), "_s", out, s.loc)
                    out.append(Call(t, operator.mul, (ks, w), (), s.loc))
                    return t
            r = self.scale_smaller_factor(k, v, d, kt, t, out, s.loc)
            if r is not None:
                return r
        return None

    def scale_smaller_factor(self, k, v, d: Call, kt, t, out, loc):
        """k (u w) -> (k u) w where u is broadcast against w (fewer entries) and v = u w
        is read once: the constant scales the small factor, not the product (a row's
        cotangent times 2 in x * x). `d`: the statement defining v."""
        if not isinstance(k, Const):
            return None
        n_out = kt.static_shape
        for u, w in ((d.args[0], d.args[1]), (d.args[1], d.args[0])):
            ku = self.kind(u)
            if ku.tag != "array" or ku.dtype not in ("f", "c") or ku.static_shape is None or \
                    n_out is None or self.kind(w) != kt or decided(
                        lambda: 2 * math.prod(ku.static_shape) <= math.prod(n_out)) is not True \
                    or not self.uses_once(v):
                continue
            scaled = self.new_call(operator.mul, (k, u), "_g", out, loc)
            pair = (scaled, w) if u is d.args[0] else (w, scaled)
            out.append(Call(t, operator.mul, pair, (), loc))
            return t
        return None

    def scaled_terms(self, v, out) -> list:
        """The ways to write `v` (read once) as `alpha * w`, with alpha a list of scalar
        factors and w an array of v's kind: `s * w` itself, and, where w is `c * u` for a
        number c (a primal's value, read elsewhere too), `(c s) * u`."""
        d = self.defining(v, out) if isinstance(v, Var) else None
        if d is None or d.fn not in MULS or d.kwargs or len(d.args) != 2:
            return []
        kv = self.kind(v)
        terms = []
        for c, w in ((d.args[0], d.args[1]), (d.args[1], d.args[0])):
            if not self.scalar_factor(c) or self.kind(w) != kv:
                continue
            terms.append(([c], w))
            e = self.defining(w, out) if isinstance(w, Var) else None
            if e is not None and e.fn in MULS and not e.kwargs and len(e.args) == 2:
                for n, u in ((e.args[0], e.args[1]), (e.args[1], e.args[0])):
                    if isinstance(n, Const) and self.scalar_factor(n) and self.kind(u) == kv:
                        terms.append(([n, c], u))
        # (the use count last: a rewrite that reads it replays only while it holds)
        return terms if terms and self.uses_once(v) else []

    def rewrite_like_terms(self, s: Call, kt, out):
        """alpha w + beta w -> (alpha + beta) w (and -) for scalars alpha, beta, in the
        derivative only: one pass over w where there were three. Each term may see through
        a constant factor of its array (s (c u) + beta u -> (c s + beta) u): the two
        cotangents that a product `c * u * u` sends to u."""
        fn, args, t = s.fn, s.args, s.target
        if (fn not in ADDS and fn not in SUBS) or len(args) != 2 or s.kwargs or \
                kt.tag != "array" or t in self.primal or args[0] == args[1]:
            return None
        left, right = self.scaled_terms(args[0], out), self.scaled_terms(args[1], out)
        for alpha, w in left:
            for beta, u in right:
                if w != u:
                    continue
                a = self.scalar_product(alpha, out, s.loc)
                b = self.scalar_product(beta, out, s.loc)
                op = operator.add if fn in ADDS else operator.sub
                coef = self.new_call(op, (a, b), "_s", out, s.loc)
                out.append(Call(t, operator.mul, (coef, w), (), s.loc))
                return t
        return None

    def scalar_product(self, factors, out, loc):
        """An atom equal to the product of `factors` (numbers first, as k (s w) makes it)."""
        acc = factors[0]
        for f in factors[1:]:
            acc = self.new_call(operator.mul, (acc, f), "_s", out, loc)
        return acc

    def straight_line(self) -> bool:
        """Is the function free of branches and loops?"""
        flag = getattr(self, "_straight", None)
        if flag is None:
            flag = self._straight = all(type(st) is Call for st in self.fn.body.stmts)
        return flag

    def computed_sum(self, v, out, kwargs=(), window: int = 64) -> bool:
        """Is np.sum(v, **kwargs) among the last `window` statements of the block built?
        (The answer is recorded for replaying, as a use count's is: the window moves when
        dead statements go.)"""
        answer = sum_among(out, v, kwargs, window)
        if self._reads is not None and self._sums is not None:
            self._sums.append((v, kwargs, window, answer))
        return answer

    def sized(self, v, out, depth: int = 0) -> bool:
        """Is `v` a number computed from constants and sizes alone (m * -1.0, (m,)[0])?"""
        if type(v) is Const:
            return has_dims(v.value)
        d = self.defining(v, out) if depth < 4 else None
        if d is None or d.kwargs or d.fn not in MULS | SUBS | ADDS | NEGS | {operator.getitem}:
            return False
        if not all(type(a) is Var or type(a.value) in (int, float, Dim, tuple) for a in d.args):
            return False
        return any(self.sized(a, out, depth + 1) for a in d.args) and all(
            type(a) is Const or self.sized(a, out, depth + 1) for a in d.args)

    def rewrite_cancel(self, fn, args, kt, out):
        """Scalars that cancel (in the derivative only): (a / b) * b -> a, (a - k b) / b ->
        a / b - k, a + (b - a) -> b; c - c -> 0 is in `rewrite`, before constant folding."""
        if fn in MULS:
            for q, b in ((args[0], args[1]), (args[1], args[0])):
                d = self.defining(q, out) if isinstance(q, Var) else None
                if d is not None and d.fn in DIVS and not d.kwargs and len(d.args) == 2 and \
                        d.args[1] == b and (same_shape(self.kind(d.args[0]), kt) or (
                            kt.tag == "scalar" and self.kind(d.args[0]).tag == "scalar" and
                            self.kind(d.args[0]).dtype == kt.dtype)):
                    return d.args[0]
        if kt.tag != "scalar":
            return None
        if fn in DIVS and isinstance(args[0], Var):
            # (a - k * b) / b -> a / b - k
            d = self.defining(args[0], out)
            if d is not None and d.fn in SUBS and not d.kwargs and isinstance(d.args[1], Var):
                p = self.defining(d.args[1], out)
                if p is not None and p.fn in MULS and not p.kwargs and args[1] in p.args and \
                        self.uses_once(args[0]) and self.uses_once(d.args[1]):
                    k = p.args[0] if p.args[1] == args[1] else p.args[1]
                    if self.kind(k).tag == "scalar" and self.kind(d.args[0]).tag == "scalar":
                        q = self.new_call(fn, (d.args[0], args[1]), "_q", out, None)
                        return self.new_call(operator.sub, (q, k), "_d", out, None)
        if fn in ADDS:
            # a + (b - a) -> b
            for a, v in ((args[0], args[1]), (args[1], args[0])):
                d = self.defining(v, out) if isinstance(v, Var) else None
                if d is not None and d.fn in SUBS and not d.kwargs and d.args[1] == a and \
                        self.kind(d.args[0]) == kt:
                    return d.args[0]
        return None

    def fold_scale(self, k: float, v, uses: int, out):
        """(k', w) with k * v == k' * w, when `v` is `c * w` or `-w` and read `uses` times
        in all (so the product replaces every read of v); else None."""
        sc = self.scaled(v, out, uses)
        if sc is not None:
            return k * sc[0], sc[1]
        d = self.defining(v, out)
        if d is not None and d.fn in NEGS and self.read_times(v, uses) and \
                self.kind(d.args[0]) == self.kind(v):
            return -k, d.args[0]
        return None

    def scale(self, k: float, v, uses: int, out, loc):
        """An atom equal to k * v (see fold_scale)."""
        folded = self.fold_scale(k, v, uses, out)
        c, w = folded if folded is not None else (k, v)
        if c == 1.0:
            return w
        if c == -1.0:
            return self.new_call(operator.neg, (w,), "_t", out, loc)
        return self.new_call(operator.mul, (Const(c), w), "_t", out, loc)

    def rewrite_identity(self, fn, x, y, kt, t, out, loc):
        """x * 1, x / 1, x + 0, x - 0, x ** 1 -> x; x * -1 -> -x."""
        if fn in MULS:
            if _is_num(y, 1) and self.kind(x) == kt:
                return x
            if _is_num(x, 1) and self.kind(y) == kt:
                return y
            if _is_num(y, -1) and self.kind(x) == kt:
                return self.new_call(operator.neg, (x,), t.name, out, loc)
            if _is_num(x, -1) and self.kind(y) == kt:
                return self.new_call(operator.neg, (y,), t.name, out, loc)
        if fn in DIVS and _is_num(y, 1) and self.kind(x) == kt:
            return x
        if fn in ADDS:
            if _is_num(y, 0) and self.kind(x) == kt:
                return x
            if _is_num(x, 0) and self.kind(y) == kt:
                return y
        if fn in SUBS and _is_num(y, 0) and self.kind(x) == kt:
            return x
        if fn is operator.pow and _is_num(y, 1) and self.kind(x) == kt:
            return x
        return None

    def rewrite_zero(self, s: Call, zeros, kt, out):
        fn, args = s.fn, s.args
        if fn in ADDS and len(args) == 2:
            x, y = args
            if zeros[0] and zeros[1]:
                return zero(kt)
            keep = y if zeros[0] else x
            return self.broadcast_to_kind(keep, kt, s, out)
        if fn in SUBS and len(args) == 2:
            x, y = args
            if zeros[0] and zeros[1]:
                return zero(kt)
            if zeros[1]:
                return self.broadcast_to_kind(x, kt, s, out)
            neg = self.new_call(operator.neg, (y,), s.target.name, out, s.loc)
            return self.broadcast_to_kind(neg, kt, s, out)
        if fn is prims.index_update and len(args) == 3:
            acc, index, g = args
            if zeros[0] and zeros[2]:
                return zero(kt, acc.value.like)  # (the result has acc's shape)
            ka = acc.value.kind if zeros[0] else None
            if ka is not None and ka.tag == "array" and self.kind(g).dtype == "c":
                ka = Kind(ka.tag, "c", ka.shape, rank=ka.rank)  # complex values written in
            a2 = self.concrete_zero(ka, out, s.loc, acc.value.like) if zeros[0] else acc
            g2 = self.concrete_zero(g.value.kind, out, s.loc, g.value.like) if zeros[2] else g
            out.append(Call(s.target, fn, (a2, index, g2), (), s.loc))
            return s.target
        if fn is prims.index_add and len(args) == 3:
            acc, index, g = args
            if zeros[0] and zeros[2]:
                # the result has acc's shape: keep what makes it concrete, or a later
                # index_add into this zero starts from 0.0 where its shape is not known
                return zero(kt, acc.value.like)
            if zeros[2]:
                return acc
            zacc = self.concrete_zero(acc.value.kind, out, s.loc, acc.value.like)
            out.append(Call(s.target, fn, (zacc, index, g), (), s.loc))
            return s.target
        lin = self.linear_positions(fn, len(args))
        if lin is not None and any(zeros[i] for i in lin if i < len(args)):
            return zero(kt)
        if fn in DIVS and len(args) == 2 and zeros[0] and not zeros[1] and not s.kwargs:
            return zero(kt)  # a zero derivative over anything (linear in the numerator)
        # a zero reaching a non-linear operation is made concrete
        new_args = list(args)
        for i, a in enumerate(args):
            if is_zero(a):
                new_args[i] = self.concrete_zero(a.value.kind, out, s.loc, a.value.like)
        kwargs = tuple((n, self.concrete_zero(a.value.kind, out, s.loc, a.value.like)
                        if is_zero(a) else a) for n, a in s.kwargs)
        out.append(Call(s.target, fn, tuple(new_args), kwargs, s.loc))
        return s.target

    def linear_positions(self, fn, nargs):
        try:
            spec = self.table.linear.get(fn, False)
        except TypeError:
            return None
        if spec is False:
            return None
        if spec is None:
            return [0] if nargs else []
        return [i for i in spec if isinstance(i, int)]

    def concrete_zero(self, kind: Kind, out, loc, like=None):
        if kind.tag == "array" and kind.shape is not None:
            if kind.dtype == "c":  # a complex zero (a real one would drop imaginary parts)
                return self.new_call_kw(np.zeros, (Const(kind.shape),),
                                        (("dtype", Const(complex)),), "_zeros", out)
            return self.new_call(np.zeros, (Const(kind.shape),), "_zeros", out, loc)
        if like is not None and kind.tag != "scalar":
            return self.new_call(prims.zeros_like, (like,), "_zeros", out, loc)
        if kind.tag == "scalar" or (kind.tag == "unknown"):
            return Const(0j if kind.dtype == "c" else 0.0)
        return Const(0.0)

    def broadcast_to_kind(self, a, kt: Kind, s: Call, out):
        ka = self.kind(a)
        if kt.dtype == "c" and ka.dtype in ("f", "i", "b"):
            # a real operand plus a complex zero is complex (the tangent of a + 0j): the
            # value keeps its dtype, or what is written into it loses its imaginary part
            a = self.new_call(operator.add, (a, Const(0j)), s.target.name, out, s.loc)
            ka = self.kind(a)
        if same_shape(ka, kt) or (ka.static_shape is not None and
                                  ka.static_shape == kt.static_shape):
            return a
        if all(_a_number_zero(x.value) for x in s.args if is_zero(x)):
            return a  # a number's zero broadcasts nothing (the tangent of 1.0 in 1.0 / x)
        if kt.tag == "array" and kt.shape is not None:
            return self.new_call(np.broadcast_to, (a, Const(kt.shape)), s.target.name, out, s.loc)
        # unknown shapes: keep the operation with a concrete zero operand, made like the
        # zero's primal, so that the sum still broadcasts to the result's shape
        args = tuple(self.concrete_zero(x.value.kind, out, s.loc, x.value.like)
                     if is_zero(x) else x for x in s.args)
        out.append(Call(s.target, s.fn, args, s.kwargs, s.loc))
        return s.target

    def new_call(self, fn, args, hint, out, loc):
        target = Var(_fresh_name(self, hint))
        call = Call(target, fn, tuple(args), (), loc)
        self.kinds[target] = eval_kind(fn, [self.kind(a) for a in args], [])
        out.append(call)
        return target

    def emit_sum_to(self, g, gshape, xshape, t, out):
        gshape, xshape = tuple(gshape), tuple(xshape)
        extra = len(gshape) - len(xshape)
        if extra < 0:
            return None
        lead = tuple(range(extra))
        ones = tuple(i for i, n in enumerate(xshape) if n == 1 and gshape[extra + i] != 1)
        cur = g
        if lead and not xshape and self.spells_full_sums(g):
            # a sum over every axis, spelled np.sum(g) as rewrite_reductions would spell
            # it in the next round (which then finds nothing to do)
            cur = self.new_call_kw(np.sum, (cur,), (), t.name, out)
        elif lead:
            axis = lead[0] if len(lead) == 1 else lead
            cur = self.new_call_kw(np.sum, (cur,), (("axis", Const(axis)),), t.name, out)
        if ones:
            axis = ones[0] if len(ones) == 1 else ones
            cur = self.new_call_kw(np.sum, (cur,), (("axis", Const(axis)),
                                                    ("keepdims", Const(True))), t.name, out)
        if cur is g:
            return None
        return cur

    def spells_full_sums(self, g) -> bool:
        """Does rewrite_reductions spell a sum of `g` over every axis np.sum(g)? (For a
        float array, where the full set of rewrites runs: not for the explaining
        simplifier, whose `rewrite` keeps each step as it was written.)"""
        kg = self.kind(g)
        return kg.tag == "array" and kg.dtype in ("f", "c") and \
            type(self).rewrite is Rewrites.rewrite

    def new_call_kw(self, fn, args, kwargs, hint, out):
        target = Var(_fresh_name(self, hint))
        out.append(Call(target, fn, tuple(args), tuple(kwargs), None))
        self.kinds[target] = eval_kind(fn, [self.kind(a) for a in args],
                                       [(n, self.kind(a)) for n, a in kwargs])
        return target

    def scaled(self, v, out, uses: int):
        """(c, w) when `v` is `c * w` for a number c, read `uses` times in all; else None."""
        d = self.defining(v, out)
        if d is None or d.fn not in MULS or d.kwargs:
            return None
        x, y = d.args
        kt = self.kind(v)
        for c, w in ((x, y), (y, x)):
            if isinstance(c, Const) and type(c.value) in (int, float) and \
                    not isinstance(c.value, bool) and self.kind(w) == kt:
                # (the use count last: a rewrite that reads it replays only while it holds)
                if not self.read_times(v, uses):
                    return None
                # an integer stays one (n + (-2) * m -> n - 2 * m, an index: not 2.0)
                return (c.value if kt.dtype in ("i", "u", "b") else float(c.value)), w
        return None

    def uses_once(self, v) -> bool:
        return self.read_times(v, 1)

    def read_times(self, v, n: int) -> bool:
        """Is `v` read exactly `n` times? The rewrites ask only this of a use count, so the
        answer is what is recorded for replaying (see simplify.py): a count that changed
        between rounds (2 reads to 3) replays a rewrite that did not depend on it."""
        counts = getattr(self, "_counts", None)
        if counts is None:
            counts = self._counts = {}
            count_uses(self.fn.body, counts)
        answer = counts.get(v, 0) == n
        if self._reads is not None and self._tests is not None:
            self._tests.append((v, n, answer))
        return answer

    def is_zeros(self, a, out) -> bool:
        if isinstance(a, Const) and type(a.value) in (int, float) and a.value == 0:
            return True
        d = self.defining(a, out) if isinstance(a, Var) else None
        return d is not None and (d.fn is prims.zeros_like or d.fn is np.zeros)

    def surely_real(self, v, out, depth=0) -> bool:
        """Is `v` known to be real? (An unbroadcast takes its dtype from its cotangent.)"""
        k = self.kind(v)
        if k.tag not in ("scalar", "array") or k.dtype not in ("f", "i", "b"):
            return False
        d = self.defining(v, out) if type(v) is Var else None
        if d is not None and d.fn in (prims.unbroadcast, prims.sum_to_shape,
                                      prims.broadcast_like) and depth < 8:
            return self.surely_real(d.args[0], out, depth + 1)
        return True

    def summed_items(self, items, out):
        """(a, b) where `items` are a[0] + b[0], a[1] + b[1], ... in order, else None."""
        pair = None
        for i, x in enumerate(items):
            d = self.defining(x, out) if type(x) is Var else None
            if d is None or d.fn not in ADDS or len(d.args) != 2 or d.kwargs:
                return None
            srcs = self.rebuilt_from_at(d.args, i, out)
            if srcs is None or (pair is not None and srcs != pair):
                return None
            pair = srcs
        return pair

    def rebuilt_from_at(self, operands, i: int, out):
        """(a, b) where `operands` are a[i] and b[i], else None."""
        found = []
        for a in operands:
            d = self.defining(a, out) if type(a) is Var else None
            if d is None or d.fn is not operator.getitem or len(d.args) != 2 or d.kwargs or \
                    type(d.args[1]) is not Const or type(d.args[1].value) is not int or \
                    d.args[1].value != i or type(d.args[0]) is not Var:
                return None
            found.append(d.args[0])
        return tuple(found)

    def rebuilt_from(self, items, out):
        """The variable x where `items` are x[0], x[1], ..., x[n - 1] in order, else None."""
        src = None
        for i, a in enumerate(items):
            d = self.defining(a, out) if type(a) is Var else None
            if d is None or d.fn is not operator.getitem or len(d.args) != 2 or d.kwargs or \
                    type(d.args[1]) is not Const or type(d.args[1].value) is not int or \
                    d.args[1].value != i or type(d.args[0]) is not Var or \
                    (src is not None and d.args[0] is not src):
                return None
            src = d.args[0]
        return src

    def defining(self, v, out):
        """The statement of the block being built (`out`) that defines `v`, if any."""
        d = out.defs.get(v)
        if self._reads is not None:
            self._reads.append((v, d))
        return d


def _a_number_zero(z) -> bool:
    """Is the symbolic zero `z` made concrete as a number (see concrete_zero), which
    broadcasts nothing: no array of a known shape, no value whose shape it takes?"""
    k = z.kind
    if k.tag == "array" and k.shape is not None:
        return k.shape == ()
    return z.like is None or k.tag == "scalar"


def folded(val, s: Call, primal) -> object:
    """The value of the call `s` of constants, as the code keeps it. A NumPy number made of
    Python numbers in the derivative's own statements (np.log(2.0) in the derivative of
    2.0 ** x, a rule's constant) is a Python number, weak in NumPy's promotion: the
    derivative keeps its operands' precision. The user's NumPy numbers (np.float64(2.0), a
    global one) keep their type, which NumPy promotes as such (NEP 50)."""
    if isinstance(val, np.generic) and val.dtype.kind in "fc" and s.target not in primal \
            and not any(isinstance(a.value, np.generic) for a in s.args) and \
            not any(isinstance(a.value, np.generic) for _, a in s.kwargs):
        return val.item()
    return val


def same_shape(ka: Kind, kb: Kind) -> bool:
    """Do values of these kinds surely have one shape (and kind)? Equal kinds are not proof
    where a shape is unknown: two arrays of unknown shape (a mask's selection, a value of
    unknown kind) may differ, and `zeros + v -> v` would lose the broadcast."""
    if ka != kb:
        return False
    if ka.static_shape is not None:
        return True
    if ka.tag in ("tuple", "list"):
        return all(same_shape(i, i) for i in ka.items)
    return False


def sum_among(stmts, v, kwargs, window: int) -> bool:
    """Is np.sum(v, **kwargs) among the last `window` of `stmts`?"""
    for st in reversed(stmts[-window:]):
        if type(st) is Call and st.fn is np.sum and st.args == (v,) and st.kwargs == kwargs:
            return True
    return False


def _dispatch_table() -> dict:
    """The rewrites that can apply to a call of each function, in the order they are tried
    (each rewrite tests its function first: only these can fire). A call of any other
    function is tried by `rewrite_broadcasts` alone when it is a binary ufunc, and by none
    of them otherwise; constants, zeros and known values are `rewrite`'s, for every call."""
    r = Rewrites
    applies = [
        (r.rewrite_operands, {np.real, prims.index_add, operator.getitem, operator.pow,
                              prims.make_tuple, prims.make_list} | ADDS | SUBS | MULS | DIVS),
        (r.rewrite_broadcasts, ELEMENTWISE2 | ADDS | {np.sum, np.mean, prims.zeros_like} |
         {f for f in vars(np).values() if _is_plain_ufunc(f)}),
        (r.rewrite_shapes, {np.reshape, np.expand_dims, operator.getitem, prims.sum_to_shape,
                            prims.index_add, prims.take_slot, prims.cast_like,
                            prims.unbroadcast,
                            prims.broadcast_like, np.broadcast_to}),
        (r.rewrite_signs, IDENTITY_UNARY | {prims.identity, float} | NEGS | ADDS | MULS | DIVS),
        (r.rewrite_reductions, MULS | DIVS | ADDS | {np.sum}),
        (r.rewrite_scalar_factors, NEGS | MULS),
        (r.rewrite_like_terms, ADDS | SUBS),
        (r.rewrite_self_difference, SUBS),
        (r.rewrite_write_then_add, {prims.index_add}),
    ]
    table: dict = {}
    for part, fns in applies:
        for f in fns:
            table.setdefault(f, []).append(part)
    return {f: tuple(parts) for f, parts in table.items()}


_PARTS = _dispatch_table()

# what each rewrite of a product or sum of two variables reads first: a constant operand
# (_CONST), or the function defining an operand; a rewrite applies only where one of its
# triggers is found (see Rewrites.triggered). A product: an identity, or a constant
# factor moved out (a constant); a broadcast made implicit; a sign moved out; a quotient
# cancelled; scalar factors joined (a product). A sum: an identity, a negation or
# constant factor taken in, zeros; a scatter into zeros, or a broadcast made implicit;
# a difference cancelled; like terms (products). An operand read twice: every rewrite
_CONST = object()
_PRODUCT_TRIGGERS = {
    Rewrites.rewrite_operands: frozenset({_CONST}),
    Rewrites.rewrite_broadcasts: frozenset({np.broadcast_to}),
    Rewrites.rewrite_signs: frozenset({_CONST} | NEGS),
    Rewrites.rewrite_reductions: frozenset(DIVS),
    Rewrites.rewrite_scalar_factors: frozenset(MULS),
}
_SUM_TRIGGERS = {
    Rewrites.rewrite_operands: frozenset({_CONST, np.zeros, prims.zeros_like} | NEGS | MULS),
    Rewrites.rewrite_broadcasts: frozenset({np.broadcast_to, prims.index_add,
                                            prims.index_update}),
    Rewrites.rewrite_signs: frozenset(),
    Rewrites.rewrite_reductions: frozenset(SUBS),
    Rewrites.rewrite_like_terms: frozenset(MULS),
}
_TRIGGERS = {**{f: _PRODUCT_TRIGGERS for f in MULS}, **{f: _SUM_TRIGGERS for f in ADDS}}
_SELECTED: dict = {}  # (rewrites, what defines each operand) -> those triggered

_UFUNC_PARTS = (Rewrites.rewrite_broadcasts,)

# the rewrites that leave the primal's own statements alone (each returns None for them
# before reading anything), and the table without them, for those statements
_DERIVATIVE_ONLY = {Rewrites.rewrite_reductions, Rewrites.rewrite_scalar_factors,
                    Rewrites.rewrite_like_terms, Rewrites.rewrite_self_difference,
                    Rewrites.rewrite_write_then_add}

_PRIMAL_PARTS = {f: tuple(p for p in parts if p not in _DERIVATIVE_ONLY)
                 for f, parts in _PARTS.items()}
