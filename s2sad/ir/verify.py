"""The IR verifier: single assignment, defined before use, consistent block arities.

Tests run it after every pass; a failure is a compiler bug, never a user error.
"""

from __future__ import annotations

from s2sad.ir.nodes import Block, Call, ForRange, Function, If, Var, While, atoms_of


class IRVerificationError(AssertionError):
    """The IR breaks an invariant (an internal compiler error)."""


def verify(fn: Function) -> Function:
    defined: set = set()
    scope: set = set()
    for p in fn.params:
        _define(p, defined)
        scope.add(p)
    for v, _ in fn.kwonly:
        _define(v, defined)
        scope.add(v)
    _block(fn.body, defined, scope)
    return fn


def _define(v, defined: set):
    if not isinstance(v, Var):
        raise IRVerificationError(f"definition of a non-variable {v!r}")
    if v in defined:
        raise IRVerificationError(f"variable {v.name} is assigned twice")
    defined.add(v)


def _use(a, scope: set, where):
    if isinstance(a, Var) and a not in scope:
        raise IRVerificationError(f"variable {a.name} is used before it is defined ({where})")


def _block(b: Block, defined: set, scope: set):
    scope = set(scope)
    for s in b.stmts:
        if type(s) is Call:  # (the common statement, without pattern matching)
            for a in s.args:
                if type(a) is Var and a not in scope:
                    _use(a, scope, "Call")
            for _, a in s.kwargs:
                if type(a) is Var and a not in scope:
                    _use(a, scope, "Call")
            t = s.target
            if type(t) is not Var or t in defined:
                _define(t, defined)  # (raises)
            defined.add(t)
            scope.add(t)
            continue
        for a in atoms_of(s):
            _use(a, scope, s.__class__.__name__)
        match s:
            case Call(target=t):
                _define(t, defined)
            case If(then=then, orelse=orelse, outputs=outs):
                if not (len(then.results) == len(orelse.results) == len(outs)):
                    raise IRVerificationError("If branches yield a different number of values "
                                              "than the If has outputs")
                _block(then, defined, scope)
                _block(orelse, defined, scope)
                for o in outs:
                    _define(o, defined)
            case ForRange(index=i, params=ps, inits=inits, body=body, outputs=outs):
                _loop_arity(ps, inits, body, outs)
                _define(i, defined)
                inner = scope | {i} | set(ps)
                for p in ps:
                    _define(p, defined)
                _block(body, defined, inner)
                for o in outs:
                    _define(o, defined)
            case While(params=ps, inits=inits, cond=cond, body=body, outputs=outs):
                _loop_arity(ps, inits, body, outs)
                if len(cond.results) != 1:
                    raise IRVerificationError("a While condition must yield one value")
                for p in ps:
                    _define(p, defined)
                inner = scope | set(ps)
                _block(cond, defined, inner)
                _block(body, defined, inner)
                for o in outs:
                    _define(o, defined)
        scope.update(s.defs)
    for r in b.results:
        _use(r, scope, "block result")


def _loop_arity(ps, inits, body, outs):
    if not (len(ps) == len(inits) == len(body.results) == len(outs)):
        raise IRVerificationError("loop parameters, initial values, body results and outputs "
                                  "differ in number")
