"""Control-flow normalisation on the gast AST, before lowering.

Early `return`, `continue` and `break` inside `if` are made structured by
moving the statements that follow into the branches that fall through, so
that every exit ends its block.

A `return` inside a loop (an early exit: `if converged: return x`) becomes a flag, the
value and a `break` out of each enclosing loop, with the `return` after the outermost one
(lift_loop_returns); the value starts as prims.NOT_COMPUTED (None in the generated code),
which takes the kind of the returned value, since it is read only once set.
"""

from __future__ import annotations

import gast

from s2sad.ir import prims

RETURNED, RETURN_VALUE = "__returned__", "__return_value__"

EXITS = (gast.Return, gast.Continue, gast.Break, gast.Raise)


def always_exits(stmts: list) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, EXITS):
        return True
    if isinstance(last, gast.If):
        return always_exits(last.body) and always_exits(last.orelse)
    return False


def may_exit(stmts: list) -> bool:
    for s in stmts:
        if isinstance(s, EXITS):
            return True
        if isinstance(s, gast.If) and (may_exit(s.body) or may_exit(s.orelse)):
            return True
    return False


def normalize_exits(stmts: list) -> list:
    """Return `stmts` with every exit at the end of its block (see module doc)."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, EXITS):
            out.append(s)
            return out
        if isinstance(s, gast.If) and (may_exit(s.body) or may_exit(s.orelse)):
            rest = stmts[i + 1:]
            body = s.body if always_exits(s.body) else list(s.body) + list(rest)
            orelse = s.orelse if always_exits(s.orelse) else list(s.orelse) + list(rest)
            new = gast.If(test=s.test, body=normalize_exits(body) or [gast.Pass()],
                          orelse=normalize_exits(orelse))
            gast.copy_location(new, s)
            out.append(new)
            return out
        out.append(s)
    return out


def contains(stmts: list, types: tuple, into_loops: bool = True) -> gast.AST | None:
    """The first statement of one of `types` (statement types: Return, Break, ...) in
    `stmts`, looking into compound statements (optionally not into nested loops)."""
    for s in stmts:
        if isinstance(s, types):
            return s
        if not into_loops and isinstance(s, (gast.For, gast.While)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(s, field, None)
            if isinstance(inner, list):
                found = contains(inner, types, into_loops)
                if found is not None:
                    return found
    return None


def _walk(node, into_loops: bool):
    yield node
    for name, value in gast.iter_fields(node):
        if not into_loops and isinstance(node, (gast.For, gast.While)) and name in ("body",
                                                                                  "orelse"):
            continue
        if isinstance(value, list):
            for item in value:
                if isinstance(item, gast.AST):
                    yield from _walk(item, into_loops)
        elif isinstance(value, gast.AST):
            yield from _walk(value, into_loops)


def assigned_names(stmts: list) -> list:
    """Names stored anywhere in `stmts` (in order of first appearance)."""
    seen: dict = {}
    for s in stmts:
        for node in _walk(s, True):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                seen.setdefault(node.id, None)
            elif isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store):
                base = node.value  # a[i] = v makes a new version of a
                if isinstance(base, gast.Name):
                    seen.setdefault(base.id, None)
            elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                    node.func.attr == "at" and node.args and isinstance(node.args[0], gast.Name):
                seen.setdefault(node.args[0].id, None)  # np.add.at(a, ...)
            elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                    node.func.attr == "append" and isinstance(node.func.value, gast.Name):
                seen.setdefault(node.func.value.id, None)  # ys.append(y): a new version
            if isinstance(node, gast.Call):
                written = _written_by(node)
                if written is not None:
                    seen.setdefault(written, None)
    return list(seen)


# NumPy's functions that write into their first argument, and the array methods that write
# into their array (by name: lowering tells them apart by what they are)
_WRITER_NAMES = frozenset({"fill_diagonal", "copyto", "put", "place", "putmask",
                           "put_along_axis"})
_WRITING_METHOD_NAMES = frozenset({"fill", "sort", "put", "itemset", "partition", "resize",
                                   "setfield", "setflags"})


def _written_by(call):
    """The name a call may write into as far as its syntax tells (`out=m`,
    np.fill_diagonal(m, v), m.fill(v)): a new version of `m`, as `m[i] = v` makes one."""
    for k in call.keywords:
        out = k.value
        if k.arg == "out" and isinstance(out, gast.Call) and len(out.args) == 1:
            out = out.args[0]  # (out=np.asarray(m))
        if k.arg == "out" and isinstance(out, gast.Name):
            return out.id
    func = call.func
    name = func.attr if isinstance(func, gast.Attribute) else \
        func.id if isinstance(func, gast.Name) else None
    if name in _WRITER_NAMES and call.args and isinstance(call.args[0], gast.Name):
        return call.args[0].id
    if isinstance(func, gast.Attribute) and func.attr in _WRITING_METHOD_NAMES and \
            isinstance(func.value, gast.Name):
        return func.value.id
    names = [a.id for a in call.args if isinstance(a, gast.Name)]
    if len(call.args) > 1 and isinstance(call.args[-1], gast.Name) and \
            call.args[-1].id in names[:-1]:
        return call.args[-1].id  # (np.exp(m, m): a ufunc's output by position)
    return None


def lift_loop_returns(stmts: list) -> list:
    """`stmts` (a function body) with each loop that contains a `return` rewritten as the
    module doc says. Nested functions and lambdas are left to their own lowering."""
    out = []
    for s in stmts:
        if isinstance(s, (gast.For, gast.While)) and _returns_in(s.body):
            out.append(_located(_assign(RETURNED, gast.Constant(value=False, kind=None)), s))
            out.append(_located(_assign(RETURN_VALUE, gast.Constant(value=prims.NOT_COMPUTED,
                                                                    kind=None)), s))
            out.append(_loop_with_breaks(s))
            exit_ = gast.If(test=_name(RETURNED),
                            body=[_located(gast.Return(value=_name(RETURN_VALUE)), s)],
                            orelse=[])
            out.append(_located(exit_, s))
        elif isinstance(s, gast.If):
            new = gast.If(test=s.test, body=lift_loop_returns(s.body),
                          orelse=lift_loop_returns(s.orelse))
            out.append(_located(new, s))
        else:
            out.append(s)
    return out


def _loop_with_breaks(loop):
    """The loop with each `return v` in it made `value = v; returned = True; break`, and
    each inner loop holding one followed by `if returned: break`."""
    new = gast.For(target=loop.target, iter=loop.iter, body=_breaking(loop.body),
                   orelse=loop.orelse, type_comment=None) if isinstance(loop, gast.For) else \
        gast.While(test=loop.test, body=_breaking(loop.body), orelse=loop.orelse)
    return _located(new, loop)


def _breaking(stmts: list) -> list:
    out = []
    for s in stmts:
        if isinstance(s, gast.Return) and s.value is not None:
            out += [_located(_assign(RETURN_VALUE, s.value), s),
                    _located(_assign(RETURNED, gast.Constant(value=True, kind=None)), s),
                    _located(gast.Break(), s)]
            return out  # (what follows in the block is never reached)
        if isinstance(s, gast.If):
            out.append(_located(gast.If(test=s.test, body=_breaking(s.body),
                                        orelse=_breaking(s.orelse)), s))
        elif isinstance(s, (gast.For, gast.While)) and _returns_in(s.body):
            out.append(_loop_with_breaks(s))
            out.append(_located(gast.If(test=_name(RETURNED),
                                        body=[_located(gast.Break(), s)], orelse=[]), s))
        else:
            out.append(s)
    return out


def _returns_in(stmts: list) -> bool:
    """Is there a `return` in `stmts`, in nested `if`s and loops (not nested functions)?"""
    for s in stmts:
        if isinstance(s, gast.Return):
            return True
        if isinstance(s, gast.If) and (_returns_in(s.body) or _returns_in(s.orelse)):
            return True
        if isinstance(s, (gast.For, gast.While)) and _returns_in(s.body):
            return True
    return False


def _name(name: str, store: bool = False):
    return gast.Name(id=name, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _assign(name: str, value):
    return gast.Assign(targets=[_name(name, store=True)], value=value, type_comment=None)


def _located(node, like):
    """`node` at the place of `like` (its line is what errors and comments name)."""
    gast.copy_location(node, like)
    for child in gast.walk(node):
        if not hasattr(child, "lineno") or getattr(child, "lineno", None) is None:
            gast.copy_location(child, like)
    return node
