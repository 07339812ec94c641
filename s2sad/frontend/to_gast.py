"""Python's syntax tree as gast's, converted by gast's own rules with a faster dispatch.

gast's converter (`gast.ast_to_gast`) is an `ast.NodeTransformer`: for every node it
spells the visitor's method name, looks it up, and builds the new node from a dictionary of
its fields, checking each with `hasattr`. On the function of a compile that is about half
the time of parsing and lowering it. `to_gast` subclasses that converter, so every node
gast treats specially (names, arguments, function definitions, by Python version) goes
through gast's own method, except names (the node most often converted, whose method
`visit_Name` here builds as gast's does); only the dispatch and the generic copy of the
other nodes are done here, the copy written out once per class (`_copier`). tests/frontend/test_to_gast.py checks
that the trees are the same as gast's (fields and positions) on the package's own source.
"""

from __future__ import annotations

import ast

import gast
from gast.ast3 import Ast3ToGAst

_MISSING = object()
# the deprecated hooks NodeVisitor.visit_Constant forwards to (gast defines none of them on
# Python 3.8+, where its visit_Constant is the generic copy)
_CONSTANT_HOOKS = ("visit_Num", "visit_Str", "visit_Bytes", "visit_NameConstant",
                   "visit_Ellipsis")


class _Converter(Ast3ToGAst):
    """gast's converter with a per-class dispatch table (`_methods`, `_generic`)."""

    def __init__(self):
        super().__init__()
        self._methods: dict = {}  # ast class -> the bound method converting its nodes
        self._generic: dict = {}  # ast class -> (gast class, fields, attributes) or None

    def visit(self, node):
        method = self._methods.get(type(node))
        if method is None:
            method = self._methods[type(node)] = self._method_for(type(node))
        return method(node)

    def _method_for(self, cls):
        method = getattr(type(self), "visit_" + cls.__name__, None)
        constant = getattr(ast.NodeVisitor, "visit_Constant", None)
        if method is None or (method is constant and not any(
                hasattr(type(self), hook) for hook in _CONSTANT_HOOKS)):
            return self._copier(cls)
        return method.__get__(self)

    def _copier(self, cls):
        """generic_visit for the nodes of `cls`, written out for its fields: a function
        made once per class (as dataclasses writes `__init__`), that reads each field and
        converts a node directly, without generic_visit's loops and a call of `_visit` for
        every field of every node."""
        target = getattr(gast, cls.__name__, None)
        if target is None:
            return self.generic_visit  # (a node that is not part of gast's tree)
        lines = ["def copy(node):", "    new = target.__new__(target)",
                 "    values = new.__dict__"]
        for field in cls._fields:
            lines += [f"    value = getattr(node, {field!r}, MISSING)",
                      "    if value is not MISSING:",
                      (f"        values[{field!r}] = visit(value) if isinstance(value, AST) "
                       "else _visit(value) if type(value) is list else value")]
        for attr in cls._attributes:
            lines += [f"    value = getattr(node, {attr!r}, MISSING)",
                      "    if value is not MISSING:",
                      f"        values[{attr!r}] = value"]
        lines.append("    return new")
        scope = {"target": target, "MISSING": _MISSING, "AST": ast.AST, "visit": self.visit,
                 "_visit": self._visit}
        exec("\n".join(lines), scope)  # noqa: S102 - source made here from field names
        return scope["copy"]

    def visit_Name(self, node):
        """gast's `visit_Name` (the node most often converted), without its constructor's
        loop over the fields and `ast.copy_location`'s tests of both classes' attributes."""
        new = _NAME.__new__(_NAME)
        values = new.__dict__
        values["id"] = node.id
        values["ctx"] = self.visit(node.ctx)
        values["annotation"] = None
        values["type_comment"] = None
        _copy_location(values, node)
        return new

    def _visit(self, node):
        if type(node) is list:
            return [self._visit(n) for n in node]
        if isinstance(node, ast.AST):
            return self.visit(node)
        return node

    def generic_visit(self, node):
        """gast's generic copy (`gast.astn`): the gast class of the same name, built from
        the converted fields the node has, with the positions it has."""
        cls = type(node)
        facts = self._generic.get(cls, _MISSING)
        if facts is _MISSING:
            target = getattr(gast, cls.__name__, None)
            facts = self._generic[cls] = None if target is None else \
                (target, tuple(node._fields), tuple(node._attributes))
        if facts is None:
            return None  # (a node that is not part of gast's tree, as gast does)
        target, fields, attributes = facts
        new_node = target.__new__(target)  # (gast's __init__ would only set the fields)
        values = new_node.__dict__
        for field in fields:
            value = getattr(node, field, _MISSING)
            if value is not _MISSING:
                values[field] = self._visit(value)
        for attr in attributes:
            value = getattr(node, attr, _MISSING)
            if value is not _MISSING:
                values[attr] = value
        return new_node


_NAME = gast.Name
_POSITIONS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def _copy_location(values: dict, node) -> None:
    """`ast.copy_location` into the fields `values` of a new node whose class has the
    positions of `node`'s (an end position is copied even when None)."""
    for attr in _POSITIONS:
        value = getattr(node, attr, None)
        if value is not None or (attr[0] == "e" and hasattr(node, attr)):
            values[attr] = value


_CONVERTER = _Converter()


def to_gast(node):
    """The gast tree of the `ast` tree `node` (as `gast.ast_to_gast(node)`)."""
    return _CONVERTER.visit(node)
