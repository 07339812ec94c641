"""Activity analysis: which variables depend differentiably on the differentiated inputs.

A value is active when it is computed by a differentiable primitive from an
active value and can carry a derivative (a float or complex kind). Only active
values get tangents or cotangents: everything else costs nothing.
"""

from __future__ import annotations

from s2sad.errors import NonDifferentiableError
from s2sad.ir import prims
from s2sad.ir.kinds import atom_kind
from s2sad.ir.nodes import Block, Call, ForRange, Function, If, Var, While

TAPE_OPS = {prims.tape_push, prims.tape_reader, prims.tape_next, prims.tape_pop}


def _draw_refusal(fn, loc) -> NonDifferentiableError:
    """A draw whose parameters (loc, scale, bounds) depend on a differentiated value: its
    derivative would be that of one reparameterisation among several, so none is taken
    (it was zero, silently); as for a np.random.Generator's methods."""
    return NonDifferentiableError(
        f"`np.random.{fn.__name__}` draws with parameters that depend on a differentiated "
        "value", loc, "draw from the standard distribution and scale the draw yourself, "
        "e.g. `loc + scale * np.random.standard_normal(size)` or "
        "`low + (high - low) * np.random.random(size)`")


def active_vars(fn: Function, wrt_params, kinds: dict, table) -> set:
    """The variables that depend differentiably on `wrt_params` (forward activity). A call
    that cannot be differentiated (a function the compiler could not read, a random draw
    with differentiated parameters) is refused only where its result is also *useful*: read,
    through differentiable arguments, by what the function returns (the dtype an opaque
    helper computes from a differentiated array carries nothing to the output)."""
    active = set(wrt_params)
    refusals: list = []
    _block(fn.body, active, kinds, table, refusals)
    if refusals:
        useful = useful_vars(fn.body, table)
        for s, error in refusals:
            if s.target in useful:
                raise error
    return active


def useful_vars(body: Block, table) -> set:
    """The variables whose value reaches the returned values through arguments that carry a
    derivative (a rule's differentiable parameters; every argument of a call without a
    rule): backward activity."""
    useful = {r for r in body.results if isinstance(r, Var)}
    while True:
        before = len(useful)
        _useful_block(body, useful, table)
        if len(useful) == before:
            return useful


def _useful_block(block: Block, useful: set, table):
    for s in reversed(block.stmts):
        if type(s) is Call:
            if s.target in useful or s.fn in TAPE_OPS:  # (a tape: what is pushed on it)
                useful.update(a for a in _differentiable_args(s, table) if isinstance(a, Var))
            continue
        match s:
            case If(then=then, orelse=orelse, outputs=outs):
                for o, a, b in zip(outs, then.results, orelse.results):
                    if o in useful:
                        useful.update(v for v in (a, b) if isinstance(v, Var))
                _useful_block(then, useful, table)
                _useful_block(orelse, useful, table)
            case ForRange(params=ps, inits=inits, body=body, outputs=outs) | \
                    While(params=ps, inits=inits, body=body, outputs=outs):
                for o, p, r, i in zip(outs, ps, body.results, inits):
                    if o in useful or p in useful:
                        useful.update(v for v in (p, r, i) if isinstance(v, Var))
                _useful_block(body, useful, table)
                if isinstance(s, While):
                    _useful_block(s.cond, useful, table)


def _differentiable_args(s: Call, table) -> list:
    """The atoms of a call that a derivative flows through: those bound to its rule's
    differentiable parameters, or all of them."""
    atoms = list(s.args) + [a for _, a in s.kwargs]
    try:
        rule = table.vjp_rules.get(s.fn) or table.jvp_rules.get(s.fn)
    except TypeError:
        return atoms
    if rule is None:
        return atoms
    try:
        bound = rule.signature.bind(*s.args, **dict(s.kwargs))
    except TypeError:
        return atoms
    return [a for name, a in bound.arguments.items() if name in rule.diff_params]


def _is_active(a, active) -> bool:
    return isinstance(a, Var) and a in active


def _can_carry(v, kinds) -> bool:
    return atom_kind(v, kinds).is_float


def _block(block: Block, active: set, kinds, table, refusals: list):
    for s in block.stmts:
        if type(s) is Call and s.fn not in TAPE_OPS:
            # (the common statement, without pattern matching: a call is active only where
            # an operand is, and nothing else is asked of one that reads no active value)
            for a in s.args:
                if type(a) is Var and a in active:
                    break
            else:
                for _, a in s.kwargs:
                    if type(a) is Var and a in active:
                        break
                else:
                    continue
            fn = s.fn
            if isinstance(fn, prims.Opaque):
                if fn.writes:  # (a write into what a derivative flows through)
                    raise fn.refusal(s.loc)
                if not fn.effect_only:  # (run for its effect on the primal values)
                    refusals.append((s, fn.refusal(s.loc)))  # what cannot be read
                continue
            if fn in prims.RANDOM_DRAWS:
                refusals.append((s, _draw_refusal(fn, s.loc)))
                continue
            if not table.is_nondiff(fn) and fn not in prims.EFFECTFUL and \
                    _can_carry(s.target, kinds):
                active.add(s.target)
            continue
        match s:
            case Call(target=t, fn=fn, args=args) if fn in TAPE_OPS:
                # a tape carries derivatives when an active value is pushed onto it
                if fn is prims.tape_push:
                    if _is_active(args[1], active):
                        active.add(args[0])
                elif _is_active(args[0], active):
                    active.add(t)
            case If(then=then, orelse=orelse, outputs=outs):
                _block(then, active, kinds, table, refusals)
                _block(orelse, active, kinds, table, refusals)
                for o, a, b in zip(outs, then.results, orelse.results):
                    if (_is_active(a, active) or _is_active(b, active)) and _can_carry(o, kinds):
                        active.add(o)
            case ForRange(params=ps, inits=inits, body=body, outputs=outs):
                _loop(ps, inits, [body], body, outs, active, kinds, table, refusals)
            case While(params=ps, inits=inits, cond=cond, body=body, outputs=outs):
                _loop(ps, inits, [cond, body], body, outs, active, kinds, table, refusals)


def _loop(params, inits, blocks, body, outs, active, kinds, table, refusals):
    for p, i in zip(params, inits):
        if _is_active(i, active) and _can_carry(p, kinds):
            active.add(p)
    while True:
        before = len(active)
        for b in blocks:
            _block(b, active, kinds, table, refusals)
        for p, r in zip(params, body.results):
            if _is_active(r, active) and _can_carry(p, kinds):
                active.add(p)
        if len(active) == before:
            break
    for o, p in zip(outs, params):
        if p in active:
            active.add(o)
