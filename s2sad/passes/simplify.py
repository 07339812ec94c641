"""The simplifier: symbolic zeros, constant folding, algebraic identities, CSE and DCE.

Runs after a derivative pass, with the kinds of every value, so that it can
prove shapes equal (an `unbroadcast` that sums nothing disappears) and fold
what is known at compile time (`np.ndim(x)`, branches of rules on static
arguments). Iterates to a fixed point.
"""

from __future__ import annotations

import operator

import numpy as np

from s2sad.ir import prims
from s2sad.ir.builder import replace_body
from s2sad.ir.kinds import UNKNOWN, Kind, atom_kind, infer_kinds, kind_of_value
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
    count_uses,
)
from s2sad.passes.dead_code import eliminate_dead_code
from s2sad.passes.inline_rules import is_zero
from s2sad.passes.rewrites import Rewrites, sum_among
from s2sad.passes.tapes import prune_tapes

COMMUTATIVE = {operator.add, operator.mul, np.add, np.multiply}


NO_CSE = {np.zeros, np.empty, np.ones, prims.zeros_like}  # fresh buffers stay distinct

# how common subexpression elimination treats a function, in one lookup: never shared
# (effects, tapes, fresh buffers: False) or commutative (True); any other is absent
_CSE_CLASS = {f: False for f in prims.EFFECTFUL | {prims.new_tape, prims.tape_reader} |
              NO_CSE}
_CSE_CLASS.update({f: True for f in COMMUTATIVE})


def _cse_key(s: Call):
    fn, args = s.fn, s.args
    shared = _CSE_CLASS.get(fn)
    if shared is False:
        return None
    if shared and len(args) == 2 and not s.kwargs:
        # operands sorted by repr, which is stable (a variable's repr is its name)
        x, y = args
        if (y.name if type(y) is Var else repr(y)) < (x.name if type(x) is Var else repr(x)):
            args = (y, x)
    return (fn, args, s.kwargs)


class Simplifier(Rewrites):
    # the rewrites of a call kept as it is are recorded, for the next round to replay
    replay = True

    def __init__(self, fn: Function, param_kinds: dict, table, kinds: dict | None = None,
                 primal: frozenset = frozenset(), replays: dict | None = None):
        self.fn = fn
        # {id(call): (call, what its rewrite read and tested, its CSE key)} for the calls the
        # previous round kept as they are (see `call`, `replayable`); this round's, for the
        # next one
        self.replays = replays
        self.recorded: dict = {}
        # the primal's own statements (a derivative keeps them): rewrites that would change
        # how the user's code reads (its signs, its constant factors) leave them alone
        self.primal = primal
        self.table = table
        # rewrites preserve values, so the kinds of a previous round stay valid
        self.kinds = kinds if kinds is not None else infer_kinds(fn, param_kinds)
        self.param_kinds = param_kinds
        self.cotangent_sums = fn.meta.get("cotangent_sums", frozenset())
        self.changed = False

    def kind(self, a) -> Kind:
        if type(a) is Var:  # (the common case, without a call to atom_kind)
            return self.kinds.get(a, UNKNOWN)
        return atom_kind(a, self.kinds)

    # -- rewriting walk ------------------------------------------------------

    def run(self) -> Function:
        # uses per variable, kept current as variables are replaced (see `alias`); the
        # uses inside statements this round removes still count, which errs on the safe side
        self._counts = {}
        count_uses(self.fn.body, self._counts)
        body = self.block(self.fn.body, _Sub(self._counts), {}, concrete=True)
        return replace_body(self.fn, body)

    def confirm(self) -> bool:
        """Would a round keep every statement of straight-line `fn` as it is? The round
        without building its statements: a call the previous round kept is checked by its
        replay entry (see `call`), any other is rewritten, and no two calls may compute
        the same value (common subexpression elimination would share it). A symbolic zero
        among the results would be made real."""
        counts = self._counts = {}
        count_uses(self.fn.body, counts)
        replays, out, keys = self.replays or {}, _Out(), set()
        defs = out.defs
        for s in self.fn.body.stmts:
            entry = replays.get(id(s))
            if entry is not None and entry[0] is s and self.replayable(entry, out):
                key = entry[4]
            else:
                n_out = len(out)
                res = self.rewrite(s, out)
                if res is not None:
                    if res is not s.target or len(out) != n_out + 1 or out[-1] != s:
                        return False
                    out.pop()  # (the same statement again: kept, as `call` keeps it)
                elif len(out) != n_out:
                    return False  # (a statement left before it: the round would keep it)
                key = self.cse_key(s)
            if key is not None:
                try:
                    if key in keys:
                        return False
                    keys.add(key)
                except TypeError:  # (see `call`)
                    pass
            list.append(out, s)  # (out.append, without the call: s is a Call)
            defs[s.target] = s
        return not any(is_zero(r) for r in self.fn.body.results)

    def block(self, b: Block, sub: dict, cse: dict, concrete: bool = False) -> Block:
        """`concrete`: a symbolic zero among the results (a value that cancelled, see
        rewrite_cancel) is made a real one: a loop carries it, a function returns it."""
        out = _Out()
        cse = dict(cse)
        for s in b.stmts:
            if type(s) is Call:  # (as stmt() does, without its pattern matching)
                self.call(s, sub, cse, out)
            else:
                self.stmt(s, sub, cse, out)
        results = tuple(_sub(r, sub) for r in b.results)
        if concrete:
            return self.concrete_results(Block(tuple(out), results), range(len(results)))
        return Block(tuple(out), results)

    def concrete_inits(self, inits, sub, out) -> tuple:
        """A loop's initial values, a symbolic zero among them made a real one."""
        inits = [_sub(x, sub) for x in inits]
        for k, x in enumerate(inits):
            if is_zero(x):
                inits[k] = self.real_zero(x, x.value.kind, out)
        return tuple(inits)

    def concrete_results(self, b: Block, which, kinds=None) -> Block:
        """`b` with its symbolic zero results at the positions `which` made real zeros
        (`kinds`: the kinds they take, where better known than the zeros' own)."""
        if not any(is_zero(b.results[k]) for k in which):
            return b
        out = _Out()
        out.extend(b.stmts)
        results = list(b.results)
        for n, k in enumerate(which):
            r = results[k]
            if is_zero(r):
                results[k] = self.real_zero(r, kinds[n] if kinds else r.value.kind, out)
        return Block(tuple(out), tuple(results))

    def real_zero(self, z, kind, out):
        """A real zero for the symbolic zero `z` of `kind`, where its type is known."""
        for k in (kind, z.value.kind):
            if k.tag == "scalar" or (k.tag == "array" and k.shape is not None):
                return self.concrete_zero(k, out, None, z.value.like)
        if z.value.like is not None:
            return self.concrete_zero(z.value.kind, out, None, z.value.like)
        return z  # (never reached by the cancellations: their kinds are known)

    def stmt(self, s, sub, cse, out):
        match s:
            case Call():
                self.call(s, sub, cse, out)
            case If(cond=c, then=then, orelse=orelse, outputs=outs):
                c = _sub(c, sub)
                if isinstance(c, Const) and not is_zero(c):
                    try:
                        taken = then if bool(c.value) else orelse
                    except Exception:
                        taken = None
                    if taken is not None:
                        self.changed = True
                        inner = self.block(taken, sub, cse)
                        out.extend(inner.stmts)
                        for o, r in zip(outs, inner.results):
                            sub[o] = r
                        return
                then, orelse = self.block(then, sub, cse), self.block(orelse, sub, cse)
                # an output equal in both branches needs no merge
                keep = []
                for i, (o, a, b2) in enumerate(zip(outs, then.results, orelse.results)):
                    if a == b2:
                        # (symbolic zeros are equal whatever variable gives their shape:
                        # one shaped by a variable of a branch cannot leave it)
                        a = next((x for x in (a, b2) if not _branch_local(x, then, orelse)),
                                 None)
                    if a is not None and a == b2:
                        sub[o] = a
                        self.changed = True
                    else:
                        keep.append(i)
                if len(keep) != len(outs):
                    then = Block(then.stmts, tuple(then.results[i] for i in keep))
                    orelse = Block(orelse.stmts, tuple(orelse.results[i] for i in keep))
                    outs = tuple(outs[i] for i in keep)
                # an output zero in one branch (or two different zeros) is merged as a
                # real zero
                one_sided = [i for i, (a, b2) in enumerate(zip(then.results, orelse.results))
                             if is_zero(a) or is_zero(b2)]
                if one_sided:
                    okinds = [self.kind(outs[i]) for i in one_sided]
                    then = self.concrete_results(then, one_sided, okinds)
                    orelse = self.concrete_results(orelse, one_sided, okinds)
                out.append(If(c, then, orelse, outs, s.loc))
            case ForRange(index=i, start=a, stop=b, step=st, params=ps, inits=inits, body=body,
                          outputs=outs):
                a, b, st = _sub(a, sub), _sub(b, sub), _sub(st, sub)
                inits = self.concrete_inits(inits, sub, out)
                ps, inits, body, outs = self.drop_invariant(ps, inits, body, outs, sub)
                zeros = self.assume_zero(ps, inits, sub)
                body = self.block(body, sub, {}, concrete=True)
                ps, inits, body, outs = self.drop_zeros(zeros, ps, inits, body, outs, sub)
                out.append(ForRange(i, a, b, st, ps, inits, body, outs, s.loc, s.reverse,
                                    _sub(s.over, sub) if s.over is not None else None))
            case While(params=ps, inits=inits, cond=cond, body=body, outputs=outs):
                inits = self.concrete_inits(inits, sub, out)
                ps, inits, body, outs = self.drop_invariant(ps, inits, body, outs, sub)
                zeros = self.assume_zero(ps, inits, sub)
                cond = self.block(cond, sub, {}, concrete=True)
                body = self.block(body, sub, {}, concrete=True)
                ps, inits, body, outs = self.drop_zeros(zeros, ps, inits, body, outs, sub)
                out.append(While(ps, inits, cond, body, outs, s.loc))

    def assume_zero(self, ps, inits, sub) -> list:
        """The positions of the carried values whose initial value is a symbolic zero that
        cannot be made real (its shape is known only at run time: a tangent of a list
        built in a loop): the body is simplified taking them to be zero (see drop_zeros)."""
        zeros = [k for k, x in enumerate(inits) if is_zero(x)]
        for k in zeros:
            sub[ps[k]] = inits[k]
        return zeros

    def drop_zeros(self, zeros, ps, inits, body, outs, sub):
        """The loop without the carried values of `zeros` when the body, given them zero,
        yields them zero again: by induction they are zero at every iteration and after
        the loop. Where one is not, the loop is kept as it is: its zero initial value then
        refuses the code (emit), as it did before this assumption, and no output that
        relied on it is replaced."""
        if not zeros or not all(is_zero(body.results[k]) for k in zeros):
            return ps, inits, body, outs
        for k in zeros:
            sub[outs[k]] = inits[k]
        self.changed = True
        keep = [k for k in range(len(ps)) if k not in zeros]
        pick = lambda xs: tuple(xs[k] for k in keep)  # noqa: E731
        return pick(ps), pick(inits), Block(body.stmts, pick(body.results)), pick(outs)

    def drop_invariant(self, ps, inits, body, outs, sub):
        """A carried value the body passes through unchanged is just its initial value."""
        keep = []
        for k, (p, init, r, o) in enumerate(zip(ps, inits, body.results, outs)):
            r = _sub(r, sub)
            if r == p or (isinstance(r, Const) and isinstance(init, Const) and r == init and
                          not is_zero(r)):
                sub[p] = init
                sub[o] = init
                self.changed = True
            else:
                keep.append(k)
        if len(keep) == len(ps):
            return ps, inits, body, outs
        pick = lambda xs: tuple(xs[k] for k in keep)  # noqa: E731
        return pick(ps), pick(inits), Block(body.stmts, pick(body.results)), pick(outs)

    def call(self, s: Call, sub, cse, out, depth=0):
        if sub:  # (a new statement only where an operand was replaced)
            args, kwargs = s.args, s.kwargs
            for a in args:
                if type(a) is Var and a in sub:
                    args = tuple([_sub(x, sub) for x in args])
                    break
            for _, a in kwargs:
                if type(a) is Var and a in sub:
                    kwargs = tuple([(n, _sub(x, sub)) for n, x in kwargs])
                    break
            if args is not s.args or kwargs is not s.kwargs:
                s = Call(s.target, s.fn, args, kwargs, s.loc)
        n_out = len(out)
        # a call the previous round kept whose rewrite reads the same definitions and use
        # counts now is kept again without running it: the second round, which only
        # confirms the fixed point, costs as much as the first (rewrites read nothing else
        # that a round changes; those that do, or name a statement, are not recorded)
        entry = self.replays.get(id(s)) if self.replays is not None else None
        if entry is not None and (entry[0] is not s or not self.replayable(entry, out)):
            entry = None
        replayed = entry is not None
        if replayed:
            res = None
        else:
            if self.replay:
                self._reads, self._tests, self._sums = [], [], []
            res = self.rewrite(s, out)
            if res is None and self._reads is not None:
                entry = (s, self._reads, self._tests, self._sums)
            self._reads = None
        if res is s.target:  # (a variable is one object per name; a constant is not it)
            # the rewrite emitted a replacement statement defining the same variable
            changed = len(out) != n_out + 1 or out[-1] != s
            self.changed = self.changed or changed
            if changed:
                self.recount(s, out, n_out)
            if changed and depth < 4 and out and isinstance(out[-1], Call) and \
                    out[-1].target == s.target:
                # simplify the replacement now, not in another round over the function
                self.call(out.pop(), sub, cse, out, depth + 1)
                return
            if not changed:
                self.remember(s, cse)
            return
        if res is not None:
            if isinstance(res, Var) and res.name.startswith("_") and \
                    not s.target.name.startswith("_") and out and \
                    isinstance(out[-1], Call) and out[-1].target == res and \
                    res is not s.target:
                # keep the readable name: `x_bar = g * 2 * x`, not `_t = ...; x_bar = _t`
                self.recount(s, out, n_out)
                last = out[-1]
                out[-1] = Call(s.target, last.fn, last.args, last.kwargs, last.loc)
                self.kinds[s.target] = self.kinds.get(res, self.kind(s.target))
                sub[res] = s.target
                for k, v in list(cse.items()):
                    if v == res:
                        cse[k] = s.target
                self.changed = True
                return
            self.recount(s, out, n_out)
            sub[s.target] = res
            self.changed = True
            return
        # (a replayed call's key is the one its entry keeps: the same statement's)
        key = entry[4] if replayed else self.cse_key(s)
        if key is not None:
            n = len(cse)
            try:
                prev = cse.setdefault(key, s.target)  # (one lookup: the key hashes once)
            except TypeError:  # an operand that cannot be hashed: never shared
                prev = None
            if len(cse) == n and prev is not None:  # computed before
                self.recount(s, out, len(out))
                sub[s.target] = prev
                self.changed = True
                return
        if entry is not None:
            self.recorded[id(s)] = entry if replayed else entry + (key,)
        out.append(s)

    def replayable(self, entry: tuple, out) -> bool:
        """Does every definition a rewrite read hold the same statement now, and every use
        count and computed sum it tested give the same answer (see Rewrites.read_times and
        computed_sum)? `entry`: the call, the (variable, definition) pairs, the (variable,
        count, answer) tests, the (variable, keywords, window, answer) tests of sums and
        the call's CSE key."""
        get = out.defs.get
        for v, d in entry[1]:
            if get(v) is not d:
                return False
        counts = self._counts
        for v, n, answer in entry[2]:
            if (counts.get(v, 0) == n) is not answer:
                return False
        for v, kwargs, window, answer in entry[3]:
            if sum_among(out, v, kwargs, window) is not answer:
                return False
        return True

    def recount(self, s: Call, out, start: int):
        """Use counts after `s` gave way to the statements out[start:]."""
        counts = self._counts
        kept = False
        for st in out[start:]:
            if st is s:
                kept = True
            elif type(st) is Call:
                for a in st.args:
                    if type(a) is Var:
                        counts[a] = counts.get(a, 0) + 1
                for _, a in st.kwargs:
                    if type(a) is Var:
                        counts[a] = counts.get(a, 0) + 1
        if not kept:
            for a in s.args:
                if type(a) is Var:
                    counts[a] = counts.get(a, 0) - 1
            for _, a in s.kwargs:
                if type(a) is Var:
                    counts[a] = counts.get(a, 0) - 1

    def remember(self, s: Call, cse):
        """Record a statement kept as it is for common subexpression elimination."""
        key = self.cse_key(s)
        if key is not None:
            try:
                cse.setdefault(key, s.target)
            except TypeError:  # (see `call`)
                pass

    # what identifies a statement's value (a key that may not hash: an unhashable constant
    # operand), or None when it may not be shared
    cse_key = staticmethod(_cse_key)

    # -- local rewrites ----------------------------------------------------



class _Sub(dict):
    """Substitutions made this round; a replaced variable's uses become its replacement's."""

    __slots__ = ("counts",)

    def __init__(self, counts: dict):
        super().__init__()
        self.counts = counts

    def __setitem__(self, old, new):
        dict.__setitem__(self, old, new)
        if isinstance(new, Var):
            self.counts[new] = self.counts.get(new, 0) + self.counts.get(old, 0)


class _Out(list):
    """The statements of a block being built, indexed by the variable each defines."""

    __slots__ = ("defs",)

    def __init__(self):
        super().__init__()
        self.defs: dict = {}

    def append(self, s):
        list.append(self, s)
        if type(s) is Call:
            self.defs[s.target] = s

    def extend(self, stmts):
        for s in stmts:
            self.append(s)

    def pop(self, i=-1):
        s = list.pop(self, i)
        if type(s) is Call and self.defs.get(s.target) is s:
            del self.defs[s.target]
        return s

    def __setitem__(self, i, s):
        old = self[i]
        if type(old) is Call and self.defs.get(old.target) is old:
            del self.defs[old.target]
        list.__setitem__(self, i, s)
        if type(s) is Call:
            self.defs[s.target] = s








def _sub(a, sub):
    while isinstance(a, Var) and a in sub:
        a = sub[a]
    return a


def _branch_local(x, then: Block, orelse: Block) -> bool:
    """Is `x` a variable defined in one of the branches, or a symbolic zero shaped like
    one (see prims.ZeroValue.like)? It cannot stand for the If's output outside it."""
    if is_zero(x):
        x = x.value.like
    return isinstance(x, Var) and _defined_within(x, (then, orelse))


def _defined_within(v, blocks) -> bool:
    """Is `v` defined by a statement of `blocks`, at any depth?"""
    for b in blocks:
        for s in b.stmts:
            if v in s.defs or (type(s) is not Call and _defined_within(v, blocks_of(s))):
                return True
    return False


def _defined_in(v, *blocks) -> bool:
    for b in blocks:
        for s in b.stmts:
            if v in s.defs:
                return True
    return False


def _size(b: Block) -> int:
    """Statements and yielded values, recursively: what dead code elimination can remove."""
    n = len(b.results)
    for s in b.stmts:
        if type(s) is Call:
            n += 2  # (itself and its target)
            continue
        n += 1 + len(s.defs)
        for inner in blocks_of(s):
            n += _size(inner)
    return n


def _same_block(a: Block, b: Block) -> bool:
    """Are the two blocks the same statements (a round keeps a statement's object)?"""
    if len(a.stmts) != len(b.stmts) or a.results != b.results:
        return False
    for x, y in zip(a.stmts, b.stmts):
        if x is not y and x != y:
            return False
    return True


def _straight_line(fn: Function) -> bool:
    for st in fn.body.stmts:  # (a loop, not all() over a generator: asked every round)
        if type(st) is not Call:
            return False
    return True


def simplify(fn: Function, param_kinds: dict, table, max_rounds: int = 8,
             known_kinds: dict | None = None) -> Function:
    """Simplify `fn` to a fixed point (see module doc). `known_kinds`: see infer_kinds."""
    kinds = infer_kinds(fn, param_kinds, known_kinds) if known_kinds is not None else None
    primal = frozenset(v for v in known_kinds if isinstance(v, Var)) if known_kinds else \
        frozenset()
    replays = None
    # is `fn` a round's output that dead code elimination and tape pruning leave as it is?
    settled = False
    for _ in range(max_rounds):
        if settled and replays is not None and _straight_line(fn) and \
                Simplifier(fn, param_kinds, table, kinds, primal, replays).confirm():
            # the round would keep every statement as it is: `fn` is the fixed point
            fn.meta["kinds"] = kinds
            return fn
        simp = Simplifier(fn, param_kinds, table, kinds, primal, replays)
        new = simp.run()
        if settled and not simp.changed and _same_block(new.body, fn.body):
            # a confirming round that kept every statement: its walks for dead code and
            # unread tapes would find none, as the previous round's did
            new.meta["kinds"] = simp.kinds
            return new
        dce = eliminate_dead_code(new)
        pruned = prune_tapes(dce)
        # a pruned tape changes what its reads hold: infer the kinds afresh then
        kinds = simp.kinds if pruned is dce else None
        if not simp.changed and pruned is dce and _size(dce.body) == _size(new.body):
            if kinds is not None:
                pruned.meta["kinds"] = kinds
            return pruned
        # the next round replays this one's rewrites where their kinds, and whether the
        # function is straight-line, are the same
        replays = simp.recorded if kinds is not None and \
            _straight_line(pruned) == _straight_line(fn) else None
        settled = pruned is dce
        fn = pruned
    return fn


__all__ = ["simplify", "kind_of_value"]
