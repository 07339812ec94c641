"""The forward (JVP) pass: IR -> IR computing primal values and their tangents.

Each active primal statement is followed by its tangent code, inlined from the
rule table. Inactive values get no tangent at all; a zero tangent is symbolic
(a ZeroValue constant) until the simplifier folds it away or it must be
materialised at a merge point.
"""

from __future__ import annotations

import inspect
import operator

import numpy as np

from s2sad.errors import MissingRuleError, S2SADError
from s2sad.ir import prims
from s2sad.ir.builder import Emitter, Namer, hint_of
from s2sad.ir.kinds import atom_kind
from s2sad.ir.nodes import Block, Call, Const, ForRange, Function, If, Var, While
from s2sad.passes.activity import TAPE_OPS, active_vars
from s2sad.passes.inline_rules import (
    bind_call,
    callee_name,
    check_differentiable,
    inline,
    is_zero,
    zero,
)


def materialize(em: Emitter, atom, kind, like, hint: str):
    """Turn a symbolic zero into a real value of `kind` (other atoms pass through)."""
    if not is_zero(atom):
        return atom
    complex_ = kind.dtype == "c"
    if kind.tag in ("tuple", "list"):
        items = []
        for i, k in enumerate(kind.items):
            if not k.is_float:
                items.append(Const(None))
                continue
            # an item whose kind does not give its shape is shaped like the item itself
            item = em.call(operator.getitem, (like, Const(i)), hint="_item") \
                if like is not None and not _sized(k) else None
            items.append(materialize(em, zero(k), k, item, hint))
        fn = prims.make_tuple if kind.tag == "tuple" else prims.make_list
        return em.call(fn, items, hint=hint)
    if kind.tag == "scalar":
        return Const(0j if complex_ else 0.0)
    if kind.tag == "array" and kind.shape is not None:
        args = (Const(kind.shape),)
        kw = (("dtype", Const(complex)),) if complex_ else ()
        return em.call(np.zeros, args, kw, hint=hint)
    return em.call(prims.zeros_like, (like,), hint=hint)


def _sized(kind) -> bool:
    """Can a zero of this kind be made without a value to take the shape of?"""
    if kind.tag in ("tuple", "list"):
        return kind.items is not None and all(_sized(k) for k in kind.items if k.is_float)
    return kind.tag == "scalar" or (kind.tag == "array" and kind.shape is not None)


def missing_rule(fn, mode: str, loc) -> MissingRuleError:
    """The error for a call of `fn` without a `mode` ("JVP" or "VJP") rule. A derivative a
    recursive call made (rec_vjp, its pullback, rec_jvp) has none: a second derivative
    through a recursion is refused as such, not with advice to register a rule."""
    name = callee_name(fn)
    if prims.is_derivative(fn) or fn is prims.apply_pullback or fn is prims.batch_jvp or \
            isinstance(fn, prims.SelfCall):
        return MissingRuleError(
            f"a second derivative through a recursive call is not supported (no {mode} rule "
            f"for `{name}`, the derivative the recursion calls)", loc,
            "differentiate the recursive function once (jvp, vjp, grad, jacfwd or jacrev), "
            "or write the recursion as a loop for higher derivatives")
    if mode == "JVP":
        return MissingRuleError(
            f"no JVP rule for `{name}`", loc,
            f"register one with @s2sad.defjvp({name}), or mark the function linear with "
            "s2sad.def_linear")
    return MissingRuleError(f"no VJP rule for `{name}`", loc,
                            f"register one with @s2sad.defvjp({name})")


def check_options(table, s: Call, bindings: dict, kind_of):
    """Refuse at compile time a call whose options its rules do not handle (`defcheck`)."""
    check = table.checks.get(s.fn) if _hashable(s.fn) else None
    if check is None:
        return
    from s2sad_rules.registry import Unknown

    values = {}
    params = inspect.signature(check).parameters
    takes_all = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for name in (bindings if takes_all else params):
        if name not in bindings:
            continue
        atom = bindings[name]
        k = kind_of(atom)
        if isinstance(atom, Const):
            values[name] = atom.value
        elif k.known:
            values[name] = k.value
        elif k.tag == "list" and k.items is not None and all(i.known for i in k.items):
            # a list of constants written at the call (np.fft.fft2(x, s=[4, 4])): its items
            # are known while compiling, though a list (mutable) is never a known value
            values[name] = [i.value for i in k.items]
        else:  # (a list of complex numbers is complex: math.fsum([z]) is refused)
            values[name] = Unknown(k.ndim, k.dtype or _items_dtype(k), k.static_shape)
    try:
        reason = check(**values)
    except S2SADError as e:  # a check refusing in its own words (it knows no location)
        if e.loc is None:
            e.loc = s.loc
        raise
    if reason:
        raise MissingRuleError(
            f"the rules for `{callee_name(s.fn)}` do not support {reason}", s.loc,
            "rewrite the call without that option, or register your own rule with "
            f"@s2sad.defjvp({callee_name(s.fn)}) and @s2sad.defvjp({callee_name(s.fn)})")


def _items_dtype(k):
    """"c" for a list or tuple holding a complex value, else the kind's own dtype."""
    if k.tag in ("list", "tuple") and any(
            i.dtype == "c" or _items_dtype(i) == "c" for i in k.items):
        return "c"
    return k.dtype


def tangent_suffix(param_names) -> str:
    """`_dot`; or, when a parameter already ends in `_dot` (a user's `q_dot`, the JVP of a
    JVP), `_tangent` (`q_tangent`, `q_dot_tangent`, not `q_dot2`, which reads as a second
    tangent of q), then `_tangent2`...: tangent parameters never clash with the primal's."""
    names = set(param_names)
    suffix, n = "_dot", 1
    while any(p + suffix in names or p.endswith(suffix) for p in names):
        n += 1
        suffix = "_tangent" if n == 2 else f"_tangent{n - 1}"
    return suffix


def _hashable(fn) -> bool:
    try:
        hash(fn)
        return True
    except TypeError:
        return False


class ForwardPass:
    def __init__(self, fn: Function, kinds: dict, wrt: tuple, table):
        self.fn = fn
        self.kinds = kinds
        self.table = table
        self.wrt_params = [fn.params[i] for i in wrt]
        self.active = active_vars(fn, self.wrt_params, kinds, table)
        self.namer = Namer.for_function(fn)
        self.tan: dict = {}
        # a recursive call's (value, tangent) pair -> its number of primal arguments (a
        # vectorised Jacobian computes the value once: passes/batch.py)
        self.jvp_pairs: dict = {}

    def kind(self, a):
        return atom_kind(a, self.kinds)

    def tangent(self, a):
        if isinstance(a, Var) and a in self.active:
            return self.tan.get(a, zero(self.kind(a), a))
        return zero(self.kind(a), a)

    def run(self) -> Function:
        suffix = tangent_suffix([p.name for p in self.fn.params])
        tparams = [self.namer.fresh(p.name + suffix) for p in self.wrt_params]
        self.tan.update(zip(self.wrt_params, tparams))
        em = Emitter(self.namer)
        self.stmts(self.fn.body.stmts, em)
        results = list(self.fn.body.results)
        tans = [materialize(em, self.tangent(r), self.kind(r), r, hint_of(r) + "_dot")
                for r in results]
        meta = {"mode": "jvp", "n_primal": len(results), "tangent_params": tparams,
                "jvp_pairs": self.jvp_pairs}
        fn = self.fn
        out = Function(fn.name, fn.params + tuple(tparams),
                       Block(tuple(em.stmts), tuple(results + tans)), fn.returns_tuple,
                       fn.kwonly, (), fn.loc, fn.source_lines, fn.first_line, meta)
        return out

    # -- statements ---------------------------------------------------------

    def stmts(self, stmts, em: Emitter):
        for s in stmts:
            match s:
                case Call(fn=fn) if fn in TAPE_OPS or fn is prims.new_tape:
                    em.add(s)
                    self.tape_op(s, em)
                case Call(fn=fn) if isinstance(fn, prims.RecursiveCall) and \
                        s.target in self.active:
                    self.recursive_call(s, em)
                case Call():
                    em.add(s)
                    if s.target in self.active:
                        self.call(s, em)
                case If():
                    self.if_(s, em)
                case ForRange() | While():
                    self.loop(s, em)

    def recursive_call(self, s: Call, em: Emitter):
        """A recursive call: call the JVP of the function itself (it returns both)."""
        act = tuple(i for i, a in enumerate(s.args) if isinstance(a, Var) and a in self.active)
        d = s.fn.self_call(s.fn, "jvp", act, [self.kind(a) for a in s.args], s.kwargs) \
            or s.fn.derivative("jvp", act)
        tans = [materialize(em, self.tangent(s.args[i]), self.kind(s.args[i]), s.args[i],
                            hint_of(s.args[i]) + "_dot") for i in act]
        pair = em.call(d, tuple(s.args) + tuple(tans), s.kwargs, hint="_pair", loc=s.loc)
        self.jvp_pairs[pair] = len(s.args)
        em.add(Call(s.target, operator.getitem, (pair, Const(0)), (), s.loc))
        self.tan[s.target] = em.call(operator.getitem, (pair, Const(1)),
                                     hint=hint_of(s.target) + "_dot", loc=s.loc)

    def tape_op(self, s: Call, em: Emitter):
        """Tapes of the code being differentiated get parallel tapes of tangents."""
        fn, t = s.fn, s.target
        if fn is prims.new_tape:
            if t in self.active:
                self.tan[t] = em.call(prims.new_tape, (), hint=hint_of(t) + "_dot")
        elif fn is prims.tape_push:
            tape, item = s.args
            if tape in self.active:
                k = self.kind(item)
                item_dot = materialize(em, self.tangent(item), k, item, hint_of(item) + "_dot")
                em.call(prims.tape_push, (self.tan[tape], item_dot), hint="_push")
        elif t in self.active:  # tape_reader / tape_next / tape_pop
            self.tan[t] = em.call(fn, (self.tan[s.args[0]],), hint=hint_of(t) + "_dot")

    def call(self, s: Call, em: Emitter):
        fn = s.fn
        hint = hint_of(s.target) + "_dot"
        if fn in (prims.make_tuple, prims.make_list):
            items = [materialize(em, self.tangent(a), self.kind(a), a, hint_of(a) + "_dot")
                     for a in s.args]
            self.tan[s.target] = em.call(fn, items, hint=hint, loc=s.loc)
            return
        rule = self.table.jvp_rules.get(fn)
        if rule is None:
            raise missing_rule(fn, "JVP", s.loc)
        bindings = bind_call(rule, s)
        check_differentiable(rule, bindings, lambda a: a in self.active, s)
        check_options(self.table, s, bindings, self.kind)
        for p in rule.diff_params:
            bindings[p + "_dot"] = self.tangent(bindings[p])
        if rule.uses_ans:
            bindings["ans"] = s.target
        (t,) = inline(rule, self.table, em, bindings, hint, loc=s.loc)
        self.tan[s.target] = t

    def if_(self, s: If, em: Emitter):
        outs = [o for o in s.outputs if o in self.active]
        blocks = []
        for blk in (s.then, s.orelse):
            inner = em.nested()
            self.stmts(blk.stmts, inner)
            tans = []
            for o, r in zip(s.outputs, blk.results):
                if o in self.active:
                    tans.append(materialize(inner, self.tangent(r), self.kind(o), r,
                                            hint_of(o) + "_dot"))
            blocks.append(Block(tuple(inner.stmts), blk.results + tuple(tans)))
        touts = [self.namer.fresh(hint_of(o) + "_dot") for o in outs]
        em.add(If(s.cond, blocks[0], blocks[1], s.outputs + tuple(touts), s.loc))
        self.tan.update(zip(outs, touts))

    def loop(self, s, em: Emitter):
        carried = [i for i, p in enumerate(s.params) if p in self.active]
        tparams = [self.namer.fresh(hint_of(s.params[i]) + "_dot") for i in carried]
        tinits = [materialize(em, self.tangent(s.inits[i]), self.kind(s.params[i]), s.inits[i],
                              hint_of(s.params[i]) + "_dot") for i in carried]
        for i, tp in zip(carried, tparams):
            self.tan[s.params[i]] = tp
        inner = em.nested()
        self.stmts(s.body.stmts, inner)
        tres = [materialize(inner, self.tangent(s.body.results[i]), self.kind(s.params[i]),
                            s.body.results[i], hint_of(s.params[i]) + "_dot") for i in carried]
        body = Block(tuple(inner.stmts), s.body.results + tuple(tres))
        touts = [self.namer.fresh(hint_of(s.outputs[i]) + "_dot") for i in carried]
        params, inits, outs = (s.params + tuple(tparams), s.inits + tuple(tinits),
                               s.outputs + tuple(touts))
        if isinstance(s, ForRange):
            em.add(ForRange(s.index, s.start, s.stop, s.step, params, inits, body, outs, s.loc,
                            s.reverse))
        else:
            em.add(While(params, inits, s.cond, body, outs, s.loc))
        for i, to in zip(carried, touts):
            self.tan[s.outputs[i]] = to


def forward_pass(fn: Function, kinds: dict, wrt: tuple, table) -> Function:
    """The JVP of `fn` with respect to the positional parameters at indices `wrt`.

    The result takes the primal parameters then one tangent per `wrt` parameter and
    returns the primal results followed by their tangents.
    """
    return ForwardPass(fn, kinds, wrt, table).run()
