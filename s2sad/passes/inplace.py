"""In-place accumulation: `acc[i] += g` instead of copying a whole array per contribution.

A scatter-add into an array that only the derivative code holds, and that nothing reads
afterwards, can update it in place. This pass proves both facts on the SSA IR (the array
is fresh: made by np.zeros or an arithmetic operation, or carried by a loop from such;
and the scatter is its only use) and then switches to the in-place primitive.
"""

from __future__ import annotations

import operator

import numpy as np

from s2sad.ir import prims
from s2sad.ir.aliasing import holds_operand
from s2sad.ir.builder import block_vars
from s2sad.ir.kinds import UNKNOWN, atom_kind, infer_kinds
from s2sad.ir.nodes import Block, Call, ForRange, Function, If, Var, While, atoms_of, blocks_of

FRESH_FNS = {
    np.zeros, np.empty, prims.zeros_like, prims.index_add, prims.index_add_inplace,
    prims.index_add_at, prims.index_update, prims.index_update_inplace, np.copy, np.array,
    prims.add_inplace, prims.mul_inplace,
    operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, np.add,
    np.subtract, np.multiply, np.divide, np.negative,
}


def index_is_basic(k) -> bool:
    """Integers, slices, None, Ellipsis and tuples of them: no repeated positions."""
    if k.tag == "scalar":
        return k.dtype in ("i", "b") and k.dtype != "b"
    if k.tag == "object":
        v = k.value if k.known else None
        return isinstance(v, slice) or v is None or v is Ellipsis
    if k.tag == "tuple":
        return all(index_is_basic(i) for i in k.items)
    return False


def copy_before_updating_loops(fn: Function, kinds: dict) -> Function:
    """A loop that scatters into a carried array it did not create (a cotangent seed from
    the caller, say) works on one copy made before the loop, instead of a copy per write.
    A loop nested in one that carries a fresh (or copied) array, and that starts from that
    array's parameter (its only use), needs none: a matrix filled entry by entry in a
    double loop is copied at most once, not once per outer iteration."""
    from s2sad.ir.builder import Namer

    namers: list = []  # (the names taken, found at the first copy: most functions need none)
    copies = []
    uses: dict = {}
    _scan(fn.body, {}, uses, {})

    def updates(p, body: Block) -> bool:
        for st in body.stmts:
            if isinstance(st, Call):
                if st.fn in (prims.index_update, prims.index_add) and st.args[0] == p:
                    return True
            elif isinstance(st, (ForRange, While)):
                if any(init == p and updates(q, st.body)
                       for q, init in zip(st.params, st.inits)):
                    return True
        return False

    def blk(b: Block, owned: frozenset) -> Block:
        """`owned`: the enclosing loops' parameters that start from a fresh or copied
        array (and so are fresh in every iteration)."""
        out = []
        for st in b.stmts:
            if type(st) is Call:  # (most statements: nothing to do)
                out.append(st)
                continue
            if isinstance(st, (ForRange, While)):
                inits = list(st.inits)
                mine = set()
                for i, (p, init) in enumerate(zip(st.params, st.inits)):
                    k = atom_kind(p, kinds)
                    if not (isinstance(init, Var) and k.tag == "array"):
                        continue
                    d = _def_of(fn, init)
                    if isinstance(d, Call) and d.fn in FRESH_FNS or \
                            init in owned and uses.get(init, 0) == 1:
                        mine.add(p)
                    elif updates(p, st.body):
                        if not namers:
                            namers.append(Namer.for_function(fn))
                        copy = namers[0].fresh("_" + init.name.lstrip("_") + "_copy")
                        out.append(Call(copy, np.copy, (init,), (), st.loc))
                        inits[i] = copy
                        copies.append(copy)
                        mine.add(p)
                inner = owned | mine
                body = blk(st.body, inner)
                if isinstance(st, ForRange):
                    st = ForRange(st.index, st.start, st.stop, st.step, st.params, tuple(inits),
                                  body, st.outputs, st.loc, st.reverse)
                else:
                    st = While(st.params, tuple(inits), blk(st.cond, inner), body, st.outputs,
                               st.loc)
            elif isinstance(st, If):
                st = If(st.cond, blk(st.then, owned), blk(st.orelse, owned), st.outputs, st.loc)
            out.append(st)
        return Block(tuple(out), b.results)

    body = blk(fn.body, frozenset())
    if not copies:
        return fn
    return Function(fn.name, fn.params, body, fn.returns_tuple, fn.kwonly,
                    fn.defaults, fn.loc, fn.source_lines, fn.first_line, fn.meta)


def _def_of(fn, v):
    found = []

    def walk(b: Block):
        for st in b.stmts:
            if v in st.defs:
                found.append(st)
            for inner in blocks_of(st):
                walk(inner)

    walk(fn.body)
    return found[0] if found else None


def accumulate_in_place(fn: Function, param_kinds: dict, split: bool = False) -> Function:
    """`split`: the statements after the sweep boundary become a pullback closure, which
    may be called many times: it must not update the forward sweep's arrays in place."""
    kinds = fn.meta.pop("kinds", None) or infer_kinds(fn, param_kinds)
    copied = copy_before_updating_loops(fn, kinds)
    if copied is not fn:
        kinds = infer_kinds(copied, param_kinds)
    fn = copied
    return Function(fn.name, fn.params, _InPlace(fn, kinds, split).rewrite(fn.body),
                    fn.returns_tuple, fn.kwonly, fn.defaults, fn.loc, fn.source_lines,
                    fn.first_line, fn.meta)


class _InPlace:
    """The facts about one function that decide whether a statement may update an array in
    place (definitions, use counts, what a loop carries), and the rewrite they allow."""

    def __init__(self, fn: Function, kinds: dict, split: bool):
        self.kinds = kinds
        self.split = split
        self.defs: dict = {}
        self.uses: dict = {}
        self.loop_of: dict = {}
        _scan(fn.body, self.defs, self.uses, self.loop_of)
        for r in fn.body.results:
            if isinstance(r, Var):
                self.uses[r] = self.uses.get(r, 0) + 1
        self.readers_of: dict = {}  # id(block) -> {var: indices of the statements that read it}
        self.converted: set = set()  # targets of the in-place statements made so far
        self.after_boundary = False
        # what the forward sweep defines (split: read-only after the boundary)
        self.forward: set = set(fn.params)
        if split:
            for st in fn.body.stmts:
                if isinstance(st, Call) and st.fn is prims.sweep_boundary:
                    break
                self.forward.update(st.defs)
                for inner in blocks_of(st):
                    self.forward |= block_vars(inner)

    def fresh(self, v, depth=0, seen=frozenset()) -> bool:
        """Is `v` an array only the derivative code holds (made by an operation, or carried
        by a loop from such)? `seen`: the loop values this question went through; one met
        again (a nested loop's parameter starting from the enclosing loop's, whose next
        value is the nested loop's result) adds no holder."""
        if type(v) is not Var or depth > 8:
            return False
        k = self.kinds.get(v, UNKNOWN)
        if k.tag != "array":
            return False
        d = self.defs.get(v)
        if isinstance(d, Call):
            return d.fn in FRESH_FNS
        if v in self.loop_of:
            if v in seen:
                return True
            seen = seen | {v}
            loop, i = self.loop_of[v]
            init, res = loop.inits[i], loop.body.results[i]
            return (isinstance(init, Var) and self.uses.get(init, 0) == 1
                    and self.fresh(init, depth + 1, seen)
                    and isinstance(res, Var) and self.uses.get(res, 0) == 1
                    and self.fresh(res, depth + 1, seen))
        return False

    def readers(self, b: Block) -> dict:
        table = self.readers_of.get(id(b))
        if table is None:
            table = {}
            for j, st in enumerate(b.stmts):
                read = {a for a in atoms_of(st) if type(a) is Var}
                if type(st) is not Call:
                    for inner in blocks_of(st):
                        read |= _free(inner)
                for a in read:
                    table.setdefault(a, []).append(j)
            self.readers_of[id(b)] = table
        return table

    def last_use_here(self, acc, b: Block, k: int) -> bool:
        """Is statement k of b the last reader of `acc`, with no view of it made earlier?"""
        uses, kinds = self.uses, self.kinds
        if uses.get(acc, 0) == 1:
            return True
        seen = 1
        for j in self.readers(b).get(acc, ()):
            if j == k:
                continue
            st = b.stmts[j]
            if isinstance(st, Call) and acc in st.args:
                # (a result that holds acc, as a view of it, sees the update)
                if j > k or st.fn in prims.EFFECTFUL or \
                        atom_kind(st.target, kinds).tag != "scalar" and \
                        any(a == acc and holds_operand(st.fn, i) for i, a in enumerate(st.args)):
                    return False
                seen += atoms_of(st).count(acc)
            else:
                return False
        return seen == uses.get(acc, 0) and acc not in b.results

    def named(self, v) -> bool:
        """Will the generated code hold `v` in a variable (not fold it into an expression)?"""
        return self.uses.get(v, 0) > 1 or v in self.converted or not v.name.startswith("_")

    def mine(self, acc, scope) -> bool:
        """May the code in `scope` update `acc` (see `rewrite`)?"""
        if self.split and self.after_boundary and acc in self.forward:
            return False
        return scope is None or acc in scope

    def carried(self, loop, scope) -> set:
        """A loop's parameters that each iteration may update: those starting from an
        array of this scope (not one an enclosing loop's iterations share)."""
        return {p for p, init in zip(loop.params, loop.inits)
                if not isinstance(init, Var) or self.mine(init, scope)}

    def updatable(self, acc, b: Block, k: int, scope) -> bool:
        """May statement k of b update `acc` in place?"""
        return self.mine(acc, scope) and self.fresh(acc) and self.last_use_here(acc, b, k)

    def rewrite(self, b: Block, scope=None) -> Block:
        """`scope`: inside a loop body, the variables each iteration makes afresh (its
        parameters and what the body defines); an array from outside the loop is shared
        by all iterations and must not be updated in place."""
        out = []
        effectful = prims.EFFECTFUL
        for k, s in enumerate(b.stmts):
            if type(s) is Call:  # (the common statement, without pattern matching)
                if s.fn is prims.sweep_boundary:
                    self.after_boundary = True
                s = self.in_place_call(s, b, k, scope)
                if s.fn in effectful:
                    self.converted.add(s.target)
                out.append(s)
                continue
            if isinstance(s, Call) and s.fn is prims.sweep_boundary:
                self.after_boundary = True
            match s:
                case Call():
                    s = self.in_place_call(s, b, k, scope)
                case If():
                    s = If(s.cond, self.rewrite(s.then, scope), self.rewrite(s.orelse, scope),
                           s.outputs, s.loc)
                case ForRange():
                    inner = _owned(s.body) | self.carried(s, scope)
                    s = ForRange(s.index, s.start, s.stop, s.step, s.params, s.inits,
                                 self.rewrite(s.body, inner), s.outputs, s.loc, s.reverse,
                                 s.over)
                case While():
                    inner = _owned(s.body) | self.carried(s, scope)
                    s = While(s.params, s.inits, self.rewrite(s.cond, inner),
                              self.rewrite(s.body, inner), s.outputs, s.loc)
            if isinstance(s, Call) and s.fn in prims.EFFECTFUL:
                self.converted.add(s.target)
            out.append(s)
        return Block(tuple(out), b.results)

    def in_place_call(self, s: Call, b: Block, k: int, scope) -> Call:
        """Statement k of b, made an in-place update where that is safe."""
        kinds = self.kinds
        f, args = s.fn, s.args
        # (tests of the function, not pattern matching: most statements are none of these)
        if len(args) == 3 and (f is prims.index_add or f is prims.index_update):
            acc, index = args[0], args[1]
            if self.updatable(acc, b, k, scope):
                if f is prims.index_update:
                    return Call(s.target, prims.index_update_inplace, args, (), s.loc)
                basic = index_is_basic(atom_kind(index, kinds))
                prim = prims.index_add_inplace if basic else prims.index_add_at
                return Call(s.target, prim, args, (), s.loc)
            return s
        if len(args) != 2 or s.kwargs:
            return s
        # (an array updated in place is a variable: a constant one is never ours)
        if f is operator.add or f is np.add:
            # acc + g -> acc += g: no new array when acc is ours and has the sum's shape
            acc, g = args
            if type(acc) is not Var:
                return s
            ka, kt = kinds.get(acc, UNKNOWN), kinds.get(s.target, UNKNOWN)
            # (not for a complex kind: such a value may be real when the code runs, as
            # np.linalg.eig's results for a real matrix on NumPy < 2.5, and += of a complex
            # value into it raises)
            if ka.tag == "array" and ka.shape is not None and ka == kt and ka.dtype != "c" \
                    and acc != g and self.updatable(acc, b, k, scope):
                return Call(s.target, prims.add_inplace, args, (), s.loc)
        elif f is operator.mul or f is np.multiply:
            # c * acc -> acc *= c: no new array when acc is ours and dies here
            x, y = args
            kt = kinds.get(s.target, UNKNOWN)
            for acc, g in ((y, x), (x, y)):
                if type(acc) is not Var:
                    continue
                ka = kinds.get(acc, UNKNOWN)
                if ka.tag == "array" and ka.shape is not None and ka == kt and \
                        acc != g and ka.dtype == "f" and \
                        atom_kind(g, kinds).dtype in ("f", "i", "b") and \
                        self.updatable(acc, b, k, scope):
                    if self.named(acc):  # a temporary inside an expression is
                        # already reused by NumPy: keep the expression whole
                        return Call(s.target, prims.mul_inplace, (acc, g), (), s.loc)
                    break
        return s


def _owned(b: Block) -> set:
    """Variables a block defines (through branches; a nested loop's own are its business)."""
    out = set()
    for st in b.stmts:
        out.update(st.defs)
        if isinstance(st, If):
            out |= _owned(st.then) | _owned(st.orelse)
    return out


def _free(b: Block) -> set:
    from s2sad.ir.nodes import free_vars

    return free_vars(b)


def _scan(b: Block, defs: dict, uses: dict, loop_of: dict):
    for s in b.stmts:
        if type(s) is Call:  # (the common statement, without pattern matching)
            for a in s.args:
                if type(a) is Var:
                    uses[a] = uses.get(a, 0) + 1
            for _, a in s.kwargs:
                if type(a) is Var:
                    uses[a] = uses.get(a, 0) + 1
            defs[s.target] = s
            continue
        for a in atoms_of(s):
            if isinstance(a, Var):
                uses[a] = uses.get(a, 0) + 1
        match s:
            case Call(target=t):
                defs[t] = s
            case ForRange(params=ps) | While(params=ps):
                for i, (p, o) in enumerate(zip(ps, s.outputs)):
                    loop_of[p] = (s, i)
                    loop_of[o] = (s, i)
            case If(outputs=outs):
                for o in outs:
                    defs[o] = s
        for inner in blocks_of(s):
            _scan(inner, defs, uses, loop_of)
            for r in inner.results:
                if isinstance(r, Var):
                    uses[r] = uses.get(r, 0) + 1
