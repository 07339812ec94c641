"""Rule inlining: bind a primitive call's operands to a rule's parameters and splice its body.

A rule is lowered to IR once (it is written in the restricted language) and
copied into the derivative function with fresh names at every use.
"""

from __future__ import annotations

import inspect

import numpy as np

from s2sad.ir.dims import context_named, mark, note_named, replay, since
from s2sad.errors import MissingRuleError, NonDifferentiableError
from s2sad.ir import prims
from s2sad.ir.builder import Emitter, strip_suffix, substitute_block
from s2sad.ir.kinds import UNKNOWN, Kind, atom_kind, eval_kind, reads_context
from s2sad.ir.nodes import Call, Const, If, Var


def rule_ir(rule, table):
    if rule._ir is None:
        from s2sad.frontend.lower import lower

        rule._ir = lower(rule.func, table)
    return rule._ir


callee_name = prims.callee_name


def _positional(rule):
    """(names, defaults as Consts) when every primal parameter can be passed by position,
    for binding without inspect; else None. Cached on the rule."""
    spec = rule.__dict__.get("_positional", False)
    if spec is False:
        params = list(rule.signature.parameters.values())
        spec = None
        if all(p.kind == p.POSITIONAL_OR_KEYWORD for p in params):
            spec = (tuple(p.name for p in params),
                    tuple(None if p.default is inspect.Parameter.empty else Const(p.default)
                          for p in params))
        rule.__dict__["_positional"] = spec
    return spec


def bind_call(rule, stmt: Call) -> dict:
    """Map the rule's primal parameter names to the call's operand atoms (defaults as Consts)."""
    spec = _positional(rule)
    if spec is not None and not stmt.kwargs and len(stmt.args) <= len(spec[0]):
        names, defaults = spec
        out = dict(zip(names, stmt.args))
        for name, default in zip(names[len(stmt.args):], defaults[len(stmt.args):]):
            if default is None:
                break  # a required argument is missing: let inspect say so below
            out[name] = default
        else:
            return out
    sig: inspect.Signature = rule.signature
    try:
        bound = sig.bind(*stmt.args, **dict(stmt.kwargs))
    except TypeError as e:
        raise MissingRuleError(
            f"the {rule.mode.upper()} rule for `{callee_name(stmt.fn)}` does not accept this "
            f"call: {e}", stmt.loc,
            "pass only the arguments the rule supports, or register a rule with a fuller "
            "signature") from None
    out = {}
    for name, p in sig.parameters.items():
        if name in bound.arguments:
            out[name] = bound.arguments[name]
        elif p.default is not inspect.Parameter.empty:
            out[name] = Const(p.default)
        else:
            raise MissingRuleError(f"missing argument {name} for `{callee_name(stmt.fn)}`",
                                   stmt.loc)
    return out


def check_differentiable(rule, bindings: dict, active, stmt: Call):
    """Every active operand must bind to a parameter the rule differentiates."""
    for name, atom in bindings.items():
        if isinstance(atom, Var) and active(atom) and name not in rule.diff_params:
            # (a rule may say why: s2sad_rules.registry.refuse_arguments)
            why, hint = getattr(rule.func, "refused_arguments", {}).get(name, (None, None))
            raise NonDifferentiableError(
                f"`{callee_name(stmt.fn)}` is not differentiable with respect to its argument "
                f"`{name}`, which depends on a differentiated input"
                + (f": {why}" if why else ""), stmt.loc,
                hint or "compute that argument from values you do not differentiate, or "
                "register a rule that covers it")


def inline(rule, table, em: Emitter, bindings: dict, result_hints, loc=None, kind_of=None,
           g_kind=None, needed: tuple | None = None, last_loc: list | None = None):
    """Splice the rule's body into `em`; returns the tuple of atoms the rule returns.

    `result_hints` names the results (one hint, or one per result). With `kind_of` (the
    kinds of the bound atoms) and `g_kind` (the cotangent's), an `unbroadcast` whose
    operand already has the target's shape is left out (the simplifier would remove it).
    `needed`: which results the caller reads (one bool each), for a straight-line body to
    be copied without the calls the simplifier would remove, after copying, naming and
    rewriting each (see _pruned): those that compute none of the results (the conditions
    its operands' kinds decided, `is_complex(x)`), and those that compute only results not
    needed from the body's own values (a VJP's contribution to a constant operand); a
    result not needed is returned as None. Without `needed`, every call is copied (in a
    reversed branch or loop body, what its reverse reads decides what the forward sweep
    keeps for it). `last_loc`: a list that gets the location of the copy's last call,
    copied or left out (where a sum of the contributions is commented), when the body is
    straight-line and has one.
    """
    fn = rule_ir(rule, table)
    mapping = {}
    for p in fn.params:
        mapping[p] = bindings[p.name]
    for p, default in fn.kwonly:  # a keyword-only parameter of the rule: bound by name
        if p.name in bindings:
            mapping[p] = bindings[p.name]
        elif default is not inspect.Parameter.empty:
            mapping[p] = Const(default)
        else:
            raise MissingRuleError(f"the {rule.mode.upper()} rule needs the keyword argument "
                                   f"`{p.name}`", loc)
    facts = _rule_facts(rule, fn)
    base_hints = facts.hints
    prune = None
    if needed is not None:  # (with the parameters bound to constants: see _pruned)
        prune = (needed, tuple([type(bindings[p.name]) is Const for p in fn.params]))
    if kind_of is not None and facts.by_kinds:
        plan = _specialised_plan(facts, fn, bindings, kind_of, g_kind, prune)
    else:
        plan = facts.plan_for(prune)
    hints = {}
    results = [plan.resolve(r) for r in fn.body.results]
    if isinstance(result_hints, str):
        result_hints = [result_hints] * len(results)
    for r, h in zip(results, result_hints):
        if isinstance(r, Var) and r not in mapping and r not in hints:
            hints[r] = h
    if plan.straight:  # straight-line: copy it directly
        fresh, out = em.namer.fresh, em.stmts
        if last_loc is not None and plan.last is not None:
            last_loc.append(loc if loc is not None else plan.last.loc)
        for st, g in reversed(plan.skipped):
            if st.target in hints and type(g) is Var and g not in mapping and g not in hints:
                hints[g] = hints[st.target]  # the operand takes the result's name
        for st, args, kw, skipped in plan.steps:
            if skipped:  # (args: the operand the unbroadcast is left out for)
                g = args[0]
                mapping[st.target] = mapping.get(g, g) if type(g) is Var else g
                continue
            args = tuple([mapping.get(a, a) if type(a) is Var else a for a in args])
            if kw:
                kw = tuple([(n, mapping.get(a, a) if type(a) is Var else a) for n, a in kw])
            t = st.target
            if t in hints:
                hint = hints[t]
            else:
                hint = base_hints.get(t)
                if hint is None:
                    hint = strip_suffix(t.name)
            nv = mapping[t] = fresh(hint)
            out.append(Call(nv, st.fn, args, kw, loc if loc is not None else st.loc))
        out_results = tuple(mapping.get(r, r) if type(r) is Var else r for r in results)
        if needed is not None:
            out_results = tuple(r if n else None for r, n in zip(out_results, needed))
        return _named_steps(out_results, result_hints, bindings, em, loc)
    hints = {r: h for r, h in zip(fn.body.results, result_hints)
             if isinstance(r, Var) and r not in mapping}
    block = substitute_block(fn.body, mapping, em.namer, hints, loc=loc)
    em.stmts.extend(block.stmts)
    return _named_steps(block.results, result_hints, bindings, em, loc)


def _named_steps(results, hints, bindings: dict, em: Emitter, loc) -> tuple:
    """The step-by-step derivative (explain=True: its statements carry the primal step in
    `loc.step`) names a derivative a rule passes through unchanged: `pred_bar = err_bar`."""
    if getattr(loc, "step", None) is None:
        return tuple(results)
    inputs = {a for a in bindings.values() if type(a) is Var}
    if isinstance(hints, str):
        hints = [hints] * len(results)
    out = []
    for r, h in zip(results, hints):
        if type(r) is Var and r in inputs:
            named = em.namer.fresh(h.lstrip("_"))
            em.stmts.append(Call(named, prims.identity, (r,), (), loc))
            r = named
        elif type(r) is Var and r.name.startswith("_") and not h.startswith("_"):
            # a term that turned out zero left a temporary of the rule as the result: it
            # takes the result's name (t1_dot)
            at = _last_definition(em.stmts, r)
            if at is not None:
                d = em.stmts[at]
                named = em.namer.fresh(h)
                em.stmts[at] = Call(named, d.fn, d.args, d.kwargs, d.loc)
                r = named
        out.append(r)
    return tuple(out)


class _Plan:
    """How a rule's body is copied for operands of given kinds: the statements (the
    branches the kinds decide taken), the branch outputs standing for the values they
    pass on (`alias`), and, for a straight-line body, `steps`: each call with its operands
    resolved through `alias`, and whether it is an `unbroadcast` left out (its operand
    already has the target's shape); `skipped`: those calls and their operands. With
    `prune` (the results needed, and which of the rule's `params` are bound to constants),
    the steps are only those _pruned keeps."""

    def __init__(self, stmts, alias: dict, straight: bool, skip: frozenset = frozenset(),
                 results: tuple = (), prune: tuple | None = None, params: tuple = ()):
        self.alias = alias
        self.straight = straight
        self.stmts = stmts
        self.steps: list = []
        self.skipped: list = []
        self.contextual: tuple = ()  # see _specialised_plan
        self.last = None
        if not straight:
            return
        steps = []
        for st in stmts:
            args = tuple([self.resolve(a) for a in st.args])
            kw = tuple([(n, self.resolve(a)) for n, a in st.kwargs]) if st.kwargs else ()
            steps.append((st, args, kw, id(st) in skip))
        # the last call copied were none pruned (see inline's `last_loc`)
        self.last = next((st for st, _, _, skipped in reversed(steps) if not skipped), None)
        if prune is None:
            self.steps = steps
        else:
            needed, consts = prune
            results = [self.resolve(r) for r in results]
            own = {st.target for st in stmts} | {p for p, c in zip(params, consts) if c}
            self.steps = _pruned(steps, results, needed, own)
        # (a pruned one's too: its operand takes the name of the result it stands for)
        self.skipped = [(st, args[0]) for st, args, _, skipped in steps if skipped]

    def resolve(self, a):
        alias = self.alias
        while type(a) is Var and a in alias:
            a = alias[a]
        return a


class _Facts:
    """What inlining reads of a rule's body (`fn`, its IR), found once per rule: its calls
    by target (in branches too), whether it is straight-line, the hint each call's target
    gives the variable it is copied to, the plan that copies it when the operands' kinds
    are not known, and the plans specialised on the kinds of the operands seen so far."""

    def __init__(self, fn):
        self.fn = fn
        self.defs: dict = {}
        _calls_by_target(fn.body, self.defs)
        self.straight = all(type(st) is Call for st in fn.body.stmts)
        self.hints = {t: strip_suffix(t.name) for t in self.defs}
        self.plan = _Plan(fn.body.stmts, {}, self.straight)
        self.pruned: dict = {}  # what inline prunes -> the plan without kinds, pruned
        self.plans: dict = {}  # (what inline prunes, the parameters' kinds) -> _Plan
        # whether the operands' kinds change the plan: a branch to decide, or an
        # unbroadcast that may be left out (without them, `plan` serves every call)
        self.by_kinds = not self.straight or any(
            st.fn is prims.unbroadcast and len(st.args) == 2 for st in fn.body.stmts)

    def plan_for(self, prune: tuple | None) -> _Plan:
        """The plan without the operands' kinds, pruned as `prune` says (see inline)."""
        if prune is None:
            return self.plan
        plan = self.pruned.get(prune)
        if plan is None:
            fn = self.fn
            plan = self.pruned[prune] = _Plan(fn.body.stmts, {}, self.straight, frozenset(),
                                              fn.body.results, prune, fn.params)
        return plan


def _pruned(steps: list, results: list, needed: tuple, own: set) -> list:
    """The `steps` (call, operands, keywords, skipped) of a straight-line rule body that
    are copied when only the `results` `needed` are read: a call is left out when it
    computes none of the results, or only results not needed from `own` values (the
    body's, and its parameters bound to constants). A call that reads a variable of the
    caller's is kept while it computes some result, needed or not: the simplifier's first
    round counts every read of a variable (a rewrite may ask whether it is read once) and
    matches equal expressions (CSE), so that its result stays the same. Calls with an
    effect are kept."""
    live_any = {r for r in results if type(r) is Var}  # (a result, needed or not)
    live = {r for r, n in zip(results, needed) if n and type(r) is Var}
    out = []
    for step in reversed(steps):
        st, args, kw, _ = step
        reads = [a for a in args if type(a) is Var]
        if kw:
            reads += [a for _, a in kw if type(a) is Var]
        if st.target not in live and not _effectful(st.fn):
            if st.target not in live_any:
                continue  # computes no result
            if all(a in own for a in reads):
                live_any.update(reads)
                continue  # computes only results not needed, from the body's values
        out.append(step)
        live.update(reads)
        live_any.update(reads)
    out.reverse()
    return out


def _effectful(fn) -> bool:
    try:
        return fn in prims.EFFECTFUL
    except TypeError:  # (not hashable: not a primitive EFFECTFUL holds)
        return False


def _rule_facts(rule, fn) -> _Facts:
    cached = rule.__dict__.get("_facts")
    if cached is None or cached.fn is not fn:
        cached = rule.__dict__["_facts"] = _Facts(fn)
    return cached


def _specialised_plan(facts: _Facts, fn, bindings: dict, kind_of, g_kind,
                      prune: tuple | None = None) -> _Plan:
    """The plan for the kinds of the bound operands, pruned as `prune` says (see inline):
    computed once per rule, kinds and `prune` (inlining is then a renaming copy). Known
    values of equal but differently typed forms (1, 1.0, True), which could decide a
    branch differently, are told apart; kinds that hold tuples are not keys (their plan
    is computed each time; see _plan_key)."""
    kinds = tuple(g_kind if p.name == "g" and g_kind is not None else kind_of(bindings[p.name])
                  for p in fn.params)
    key = _plan_key(kinds, prune)
    try:
        plan = facts.plans.get(key) if key is not None else None
    except TypeError:  # (a kind that cannot be hashed: not a key)
        plan = key = None
    if plan is not None and plan.contextual and not all(
            eval_kind(fn_, args, kw) == k for fn_, args, kw, k in plan.contextual):
        plan = None  # a kind that reads more than the kinds answered otherwise this time
    if plan is not None:
        replay(plan.size_guards)  # (the sizes it was planned under: ir/dims.py)
    if plan is None:
        at = mark()
        outer_named = context_named()  # (see kinds.eval_kind: a plan of this compile's)
        alias: dict = {}
        contextual: list = []
        rule_kind = _rule_kinds(fn, kinds, alias, facts.defs, contextual)
        stmts, straight = fn.body.stmts, facts.straight
        if not straight:
            # branches on the operands' kinds (is_complex(y)): keep the one that applies
            decided = _decide_branches(fn.body, rule_kind, alias)
            if decided is not None:
                stmts, straight = decided, True  # (the calls of the branches taken)
        skip: set = set()
        if straight:
            for st in stmts:
                if st.fn is prims.unbroadcast and len(st.args) == 2:
                    kg, kx = rule_kind(st.args[0]), rule_kind(st.args[1])
                    if kx.static_shape is not None and kg.static_shape == kx.static_shape:
                        skip.add(id(st))
        plan = _Plan(stmts, alias, straight, frozenset(skip), fn.body.results, prune,
                     fn.params)
        # the kinds of primitives whose kind read more than the kinds this time (is_complex
        # of a value of unknown dtype, under undecided_complex: kinds.reads_context), asked
        # again before the plan is reused; those the kinds decided are the same each time
        plan.contextual = _questions(contextual)
        plan.size_guards = since(at)
        named = context_named()
        note_named(outer_named or named)
        if key is not None and not named:
            if len(facts.plans) > 512:  # (bounded: constants' values key plans too)
                facts.plans.clear()
            facts.plans[key] = plan
    return plan


def _questions(contextual: list) -> tuple:
    """The contextual kinds a plan read (primitive, argument kinds, keyword kinds, kind),
    each question once (a rule often asks it in both of its branches); all of them when
    one cannot be hashed (a known value that is not hashable)."""
    asked: dict = {}
    try:
        for fn_, args, kw, k in contextual:
            asked.setdefault((fn_, tuple(args), tuple(kw)), (fn_, args, kw, k))
    except TypeError:
        return tuple(contextual)
    return tuple(asked.values())


def _plan_key(kinds: tuple, prune: tuple | None):
    """`kinds` with the type and spelling of each known value (equal values of another
    type or sign, 1 and 1.0 or 0.0 and -0.0, are other keys), and `prune`, as a
    dictionary key; None when a kind is a tuple or list. (A key may still not hash.)"""
    parts: list = [prune]
    for k in kinds:
        if k.items or k.tag in ("tuple", "list"):
            return None
        parts.append((k, type(k.value), repr(k.value)) if k.known else k)
    return tuple(parts)


def _rule_kinds(fn, kinds: tuple, alias: dict, defs: dict, contextual: list):
    """The kind of an atom of a rule's body, evaluated on demand from the kinds of its
    parameters (`alias`: the outputs of branches already decided, and the values they
    stand for). Each evaluation of a primitive whose kind read more than the kinds
    (kinds.reads_context) is recorded in `contextual` as (primitive, argument kinds,
    keyword kinds, kind)."""
    known: dict = dict(zip(fn.params, kinds))

    def kind(a):
        while type(a) is Var and a in alias:
            a = alias[a]
        if type(a) is not Var:
            return atom_kind(a, known)
        k = known.get(a)
        if k is None:
            st = defs.get(a)
            if st is None:
                return UNKNOWN
            args, kw = [kind(x) for x in st.args], [(n, kind(x)) for n, x in st.kwargs]
            k = known[a] = eval_kind(st.fn, args, kw)
            if reads_context(st.fn, args, kw):
                contextual.append((st.fn, args, kw, k))
        return k

    return kind


def _calls_by_target(block, defs: dict):
    for st in block.stmts:
        if type(st) is Call:
            defs[st.target] = st
        elif type(st) is If:
            _calls_by_target(st.then, defs)
            _calls_by_target(st.orelse, defs)


def _decide_branches(block, kind, alias: dict):
    """The block's statements with each `if` whose condition the kinds decide replaced by
    the branch taken (its outputs recorded in `alias`); None when one cannot be decided."""
    out = []
    for st in block.stmts:
        if type(st) is Call:
            out.append(st)
            continue
        if type(st) is not If:
            return None
        k = kind(st.cond)
        if not (k.known and type(k.value) in (bool, np.bool_)):
            return None
        branch = st.then if k.value else st.orelse
        inner = _decide_branches(branch, kind, alias)
        if inner is None:
            return None
        out.extend(inner)
        for o, r in zip(st.outputs, branch.results):
            alias[o] = r
    return out


def zero(kind: Kind, like=None) -> Const:
    """A symbolic zero of `kind`; `like` (a variable of that shape) helps materialise it."""
    return Const(prims.ZeroValue(kind, like if isinstance(like, Var) else None))


def is_zero(a) -> bool:
    return isinstance(a, Const) and isinstance(a.value, prims.ZeroValue)


def _last_definition(stmts: list, v: Var):
    """The index of the call defining `v` when nothing after it reads `v`, else None."""
    for i in range(len(stmts) - 1, -1, -1):
        st = stmts[i]
        if type(st) is not Call:
            return None
        if st.target == v:
            return i
        if v in st.args or any(a == v for _, a in st.kwargs):
            return None
    return None
