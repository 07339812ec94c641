"""Print the expression nodes the emitter builds, with the fewest parentheses.

The emitter builds a small set of gast expression nodes (names, constants, operators,
calls, attributes, subscripts, tuples, lists, conditional expressions). Printing them
here is an order of magnitude faster than converting to `ast` and running astor, which
matters because code generation prints every statement of every derivative. Anything
outside that set raises `Unsupported`, and the caller falls back to astor.

Parentheses follow Python's precedence table: an operand is parenthesised when it binds
less tightly than its context needs (comparisons never chain implicitly, `**` groups to
the right). tests/codegen/test_unparse.py checks the output against Python's own parser.
"""

from __future__ import annotations

import gast


class Unsupported(Exception):
    """A node this printer does not know; print it with astor instead."""


# binding strength, loosest first
_TUPLE, _IFEXP, _NOT, _CMP = 0, 1, 4, 5
_BINOP = {gast.BitOr: (6, "|"), gast.BitXor: (7, "^"), gast.BitAnd: (8, "&"),
          gast.LShift: (9, "<<"), gast.RShift: (9, ">>"), gast.Add: (10, "+"),
          gast.Sub: (10, "-"), gast.Mult: (11, "*"), gast.Div: (11, "/"),
          gast.FloorDiv: (11, "//"), gast.Mod: (11, "%"), gast.MatMult: (11, "@"),
          gast.Pow: (13, "**")}
_UNARY = {gast.USub: "-", gast.UAdd: "+", gast.Invert: "~"}
_UNARY_PREC, _POW, _ATOM = 12, 13, 16
_CMPOP = {gast.Lt: "<", gast.LtE: "<=", gast.Gt: ">", gast.GtE: ">=", gast.Eq: "==",
          gast.NotEq: "!=", gast.Is: "is", gast.IsNot: "is not", gast.In: "in",
          gast.NotIn: "not in"}


def unparse(node) -> str:
    """Source of an expression node; a top-level tuple keeps its parentheses."""
    return _expr(node)[0]


def _expr(node) -> tuple:
    """(text, precedence) of `node`."""
    t = type(node)
    if t is gast.Name:
        return node.id, _ATOM
    if t is gast.Constant:
        text = "..." if node.value is Ellipsis else repr(node.value)
        if text[0] == "-":  # -0.0, -1: a unary minus in effect
            return text, _UNARY_PREC
        return text, _ATOM  # an int before `.attr` is parenthesised by _primary
    if t is gast.BinOp:
        prec, op = _BINOP.get(type(node.op), (None, None))
        if prec is None:
            raise Unsupported(node)
        if prec == _POW:  # right-associative; also binds tighter than a unary on its left
            left = _wrap(node.left, prec + 1)
            right = _wrap(node.right, prec)
        else:
            left = _wrap(node.left, prec)
            right = _wrap(node.right, prec + 1)
        return f"{left} {op} {right}", prec
    if t is gast.UnaryOp:
        if type(node.op) is gast.Not:
            return f"not {_wrap(node.operand, _NOT)}", _NOT
        op = _UNARY.get(type(node.op))
        if op is None:
            raise Unsupported(node)
        operand, inner = _expr(node.operand)
        if inner < _UNARY_PREC or (inner == _UNARY_PREC and type(node.operand) is gast.UnaryOp) \
                or operand[0] in "+-~":
            operand = f"({operand})"  # `-(-x)` reads better than `--x`
        return f"{op}{operand}", _UNARY_PREC
    if t is gast.Compare:
        parts = [_wrap(node.left, _CMP + 1)]
        for op, right in zip(node.ops, node.comparators):
            text = _CMPOP.get(type(op))
            if text is None:
                raise Unsupported(node)
            parts.append(f"{text} {_wrap(right, _CMP + 1)}")
        return " ".join(parts), _CMP
    if t is gast.Call:
        args = [_item(a) for a in node.args]
        for kw in node.keywords:
            if kw.arg is None:
                raise Unsupported(node)
            args.append(f"{kw.arg}={_item(kw.value)}")
        return f"{_primary(node.func)}({', '.join(args)})", _ATOM
    if t is gast.Attribute:
        return f"{_primary(node.value)}.{node.attr}", _ATOM
    if t is gast.Subscript:
        return f"{_primary(node.value)}[{_index(node.slice)}]", _ATOM
    if t is gast.Tuple:
        elts = [_item(e) for e in node.elts]
        if len(elts) == 1:
            return f"({elts[0]},)", _ATOM
        return f"({', '.join(elts)})", _ATOM
    if t is gast.List:
        return f"[{', '.join(_item(e) for e in node.elts)}]", _ATOM
    if t is gast.IfExp:
        body = _wrap(node.body, _IFEXP + 1)
        test = _wrap(node.test, _IFEXP + 1)
        orelse = _wrap(node.orelse, _IFEXP)
        return f"{body} if {test} else {orelse}", _IFEXP
    raise Unsupported(node)


def _wrap(node, need: int) -> str:
    text, prec = _expr(node)
    return text if prec >= need else f"({text})"


def _item(node) -> str:
    """An element of a call's arguments, a tuple or a list."""
    return _wrap(node, _IFEXP)


def _primary(node) -> str:
    """The object of a call, attribute or subscript."""
    text, prec = _expr(node)
    if prec < _ATOM or (type(node) is gast.Constant and type(node.value) is int):
        return f"({text})"
    return text


def _index(node) -> str:
    """A subscript: slices print as `a:b:c`, tuples without their parentheses."""
    if type(node) is gast.Tuple:
        if not node.elts:
            return "()"
        parts = [_index_part(e) for e in node.elts]
        return parts[0] + "," if len(parts) == 1 else ", ".join(parts)
    return _index_part(node)


def _index_part(node) -> str:
    if type(node) is gast.Slice:
        lo = "" if node.lower is None else _wrap(node.lower, _IFEXP + 1)
        hi = "" if node.upper is None else _wrap(node.upper, _IFEXP + 1)
        if node.step is None:
            return f"{lo}:{hi}"
        return f"{lo}:{hi}:{_wrap(node.step, _IFEXP + 1)}"
    return _item(node)
