"""The step-by-step derivative (`explain=True`): every intermediate value named, one
primitive per line, each derivative step labelled with the primal step and the rule applied.

Two jobs, around the usual forward or reverse pass: before it, `label_steps` names the
primal's temporaries (`t1`, `t2`, ...: their tangents and cotangents are then `t1_dot`,
`t1_bar`) and gives each primitive call a `StepLoc`, which every statement a rule expands
into inherits; after it, `explain_simplify` removes what is not a chain-rule step (symbolic
zeros, dead code, rule branches on static facts) but folds no two steps into one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from s2sad.errors import Loc
from s2sad.ir import prims
from s2sad.ir.builder import Namer, replace_body
from s2sad.ir.nodes import Block, Call, Const, ForRange, Function, If, Var, While
from s2sad.passes.dead_code import eliminate_dead_code
from s2sad.passes.rewrites import _NOFOLD, ADDS, _simple_value, folded, same_shape
from s2sad.passes.simplify import Simplifier, _size
from s2sad.passes.tapes import prune_tapes

__all__ = ["StepLoc", "explain_simplify", "label_steps"]


@dataclass(frozen=True)
class StepLoc(Loc):
    """The location of one primitive call of the primal: its source line, and the call
    itself (`step`), which the explained code prints above the call's derivative."""

    step: object = field(default=None, compare=False, hash=False)
    index: int = 0


def label_steps(fn: Function) -> Function:
    """Name every temporary of `fn` (`t1`, `t2`, ...) and mark each call with a StepLoc."""
    namer = Namer.for_function(fn)
    mapping: dict = {}
    _collect_temps(fn.body, namer, mapping)
    counter = [0]

    def sub(a):
        return mapping.get(a, a) if isinstance(a, Var) else a

    def blk(b: Block) -> Block:
        return Block(tuple(st(s) for s in b.stmts), tuple(sub(r) for r in b.results))

    def st(s):
        match s:
            case Call():
                args = tuple(sub(a) for a in s.args)
                kw = tuple((n, sub(a)) for n, a in s.kwargs)
                call = Call(sub(s.target), s.fn, args, kw, s.loc)
                loc = s.loc
                if loc is not None and not _structural(s.fn):
                    counter[0] += 1
                    loc = StepLoc(loc.filename, loc.lineno, loc.col_offset, loc.source_line,
                                  call, counter[0])
                return Call(call.target, call.fn, call.args, call.kwargs, loc)
            case If():
                return If(sub(s.cond), blk(s.then), blk(s.orelse), s.outputs, s.loc)
            case ForRange():
                return ForRange(s.index, sub(s.start), sub(s.stop), sub(s.step), s.params,
                                tuple(sub(x) for x in s.inits), blk(s.body), s.outputs,
                                s.loc, s.reverse, sub(s.over) if s.over is not None else None)
            case While():
                return While(s.params, tuple(sub(x) for x in s.inits), blk(s.cond),
                             blk(s.body), s.outputs, s.loc)
        raise TypeError(s)

    out = replace_body(fn, blk(fn.body))
    out.meta["explain"] = True
    return out


def _structural(fn) -> bool:
    """Calls that are bookkeeping rather than a step of the chain rule."""
    return fn in (prims.make_tuple, prims.make_list) or fn in prims.EFFECTFUL


def _collect_temps(b: Block, namer: Namer, mapping: dict) -> None:
    for s in b.stmts:
        if isinstance(s, Call) and s.target.name.startswith("_"):
            mapping[s.target] = namer.fresh(f"t{len(mapping) + 1}")
        for inner in _blocks(s):
            _collect_temps(inner, namer, mapping)


def _blocks(s) -> tuple:
    match s:
        case If():
            return (s.then, s.orelse)
        case ForRange():
            return (s.body,)
        case While():
            return (s.cond, s.body)
    return ()


class ExplainSimplifier(Simplifier):
    """The simplifier's rewrites that remove what is not a step (zeros, constants, shapes
    that change nothing), without those that merge steps (signs, scales, shared
    subexpressions)."""

    replay = False  # (its rewrites change statements before the call rewritten)

    def rewrite(self, s: Call, out):
        n_out = len(out)
        res = self.rewrite_step(s, out)
        for i in range(n_out, len(out)):  # a replacement stays under its step's comment
            st = out[i]
            if type(st) is Call and st.loc is None and s.loc is not None:
                out[i] = Call(st.target, st.fn, st.args, st.kwargs, s.loc)
        if isinstance(res, Var) and res.name.startswith("_") and \
                not s.target.name.startswith("_"):
            # `t1_dot = _t + 0`: the value keeps its name (t1_dot), not the rule's temporary:
            # the statement defining _t defines t1_dot, and every use of _t reads t1_dot
            d = out.defs.get(res)
            at = next((i for i in range(len(out) - 1, -1, -1) if out[i] is d), None) \
                if d is not None else None
            if at is not None:
                out[at] = Call(s.target, d.fn, d.args, d.kwargs, d.loc)
                for i in range(at + 1, len(out)):
                    st = out[i]
                    if type(st) is Call and (res in st.args or
                                             any(a == res for _, a in st.kwargs)):
                        out[i] = Call(st.target, st.fn,
                                      tuple(s.target if a == res else a for a in st.args),
                                      tuple((n, s.target if a == res else a)
                                            for n, a in st.kwargs), st.loc)
                    elif type(st) is not Call:
                        out[at] = d  # (a branch or loop reads it: keep the temporary)
                        return res
                self._sub_now[res] = s.target
                self.kinds[s.target] = self.kinds.get(res, self.kind(s.target))
                return s.target
        return res

    def call(self, s: Call, sub, cse, out, depth=0):
        self._sub_now = sub
        return super().call(s, sub, cse, out, depth)

    def rewrite_step(self, s: Call, out):
        fn, args = s.fn, s.args
        kt = self.kind(s.target)
        if fn in prims.EFFECTFUL or fn in (prims.new_tape, prims.tape_reader):
            return None
        atoms = list(args) + [a for _, a in s.kwargs]
        consts = any(type(a) is Const for a in atoms)
        if consts:
            from s2sad.passes.inline_rules import is_zero

            zeros = [is_zero(a) for a in args] + [is_zero(a) for _, a in s.kwargs]
            if any(zeros):
                return self.rewrite_zero(s, zeros, kt, out)
            if all(type(a) is Const for a in atoms) and fn is not prims.make_list and \
                    not any(hasattr(a.value, "__array__") and not _simple_value(a.value)
                            for a in args):
                try:
                    val = fn(*(a.value for a in args), **{n: a.value for n, a in s.kwargs})
                except Exception:  # noqa: BLE001 - a call that cannot run now is kept
                    val = _NOFOLD
                if val is not _NOFOLD and _simple_value(val):
                    return Const(folded(val, s, self.primal))
        if kt.known and _simple_value(kt.value) and not self.table.linear.get(fn, False) \
                and self.fn.meta.get("explain_folds", True):
            return Const(kt.value)
        if len(args) == 2 and not s.kwargs and consts:
            r = self.rewrite_identity(fn, args[0], args[1], kt, s.target, out, s.loc)
            if r is not None:
                return r
        if fn in ADDS and len(args) == 2 and not s.kwargs:
            for z, other in ((args[0], args[1]), (args[1], args[0])):
                if isinstance(z, Var) and self.is_zeros(z, out) and \
                        same_shape(self.kind(other), kt):
                    return other
        if fn is prims.zeros_like:
            return self.rewrite_broadcasts(s, kt, out)
        return self.rewrite_shapes(s, kt, out)

    @staticmethod
    def cse_key(s: Call):
        return None


def explain_simplify(fn: Function, param_kinds: dict, table, known_kinds: dict | None = None,
                     max_rounds: int = 8) -> Function:
    """Simplify the step-by-step derivative to a fixed point (see ExplainSimplifier)."""
    from s2sad.ir.kinds import infer_kinds

    kinds = infer_kinds(fn, param_kinds, known_kinds) if known_kinds is not None else None
    primal = frozenset(v for v in known_kinds if isinstance(v, Var)) if known_kinds else \
        frozenset()
    for _ in range(max_rounds):
        simp = ExplainSimplifier(fn, param_kinds, table, kinds, primal)
        new = simp.run()
        dce = eliminate_dead_code(new)
        pruned = prune_tapes(dce)
        kinds = simp.kinds if pruned is dce else None
        if not simp.changed and pruned is dce and _size(dce.body) == _size(new.body):
            return pruned
        fn = pruned
    return fn
