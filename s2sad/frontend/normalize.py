"""Control-flow normalisation on the gast AST, before lowering.

Early `return`, `continue` and `break` inside `if` are made structured by
moving the statements that follow into the branches that fall through, so
that every exit ends its block.
"""

from __future__ import annotations

import gast

EXITS = (gast.Return, gast.Continue, gast.Break)


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
    return list(seen)
