"""The fast expression printer against Python's own parser (the oracle).

Random expression trees of the node types the emitter builds are printed; parsing the
text back must give the same tree. A missing parenthesis changes the parse, and an
extra one is checked for where it matters to readability (none around plain operands).
"""

import ast
import random

import gast
import pytest

from s2sad.codegen.unparse import Unsupported, unparse

BINOPS = [gast.Add, gast.Sub, gast.Mult, gast.Div, gast.FloorDiv, gast.Mod, gast.Pow,
          gast.MatMult, gast.BitAnd, gast.BitOr, gast.BitXor, gast.LShift, gast.RShift]
CMPOPS = [gast.Lt, gast.LtE, gast.Gt, gast.GtE, gast.Eq, gast.NotEq, gast.Is, gast.IsNot,
          gast.In, gast.NotIn]
UNARY = [gast.USub, gast.UAdd, gast.Invert, gast.Not]
LOAD = gast.Load


def name(rng):
    return gast.Name(id=rng.choice(["x", "y", "x_bar", "np"]), ctx=LOAD(), annotation=None,
                     type_comment=None)


def const(rng):
    return gast.Constant(value=rng.choice([0, 1, 2.5, 1e-300, 1e300, 3j, None, True, False,
                                           "s", Ellipsis]), kind=None)


def expr(rng, depth):
    if depth == 0 or rng.random() < 0.2:
        return name(rng) if rng.random() < 0.6 else const(rng)
    d = depth - 1
    k = rng.randrange(10)
    if k == 0:
        return gast.BinOp(left=expr(rng, d), op=rng.choice(BINOPS)(), right=expr(rng, d))
    if k == 1:
        return gast.UnaryOp(op=rng.choice(UNARY)(), operand=expr(rng, d))
    if k == 2:
        n = rng.randrange(1, 3)
        return gast.Compare(left=expr(rng, d), ops=[rng.choice(CMPOPS)() for _ in range(n)],
                            comparators=[expr(rng, d) for _ in range(n)])
    if k == 3:
        kws = [gast.keyword(arg="axis", value=expr(rng, d))] if rng.random() < 0.3 else []
        return gast.Call(func=rng.choice([name(rng), gast.Attribute(
            value=name(rng), attr="sum", ctx=LOAD())]), args=[expr(rng, d) for _ in
                                                              range(rng.randrange(3))],
            keywords=kws)
    if k == 4:
        return gast.Attribute(value=expr(rng, d), attr="T", ctx=LOAD())
    if k == 5:
        return gast.Subscript(value=expr(rng, d), slice=index(rng, d), ctx=LOAD())
    if k == 6:
        return gast.Tuple(elts=[expr(rng, d) for _ in range(rng.randrange(4))], ctx=LOAD())
    if k == 7:
        return gast.List(elts=[expr(rng, d) for _ in range(rng.randrange(3))], ctx=LOAD())
    if k == 8:
        return gast.IfExp(test=expr(rng, d), body=expr(rng, d), orelse=expr(rng, d))
    return gast.BinOp(left=expr(rng, d), op=gast.Pow(), right=expr(rng, d))


def index(rng, d):
    def part():
        if rng.random() < 0.4:
            pick = lambda: expr(rng, d) if rng.random() < 0.6 else None  # noqa: E731
            return gast.Slice(lower=pick(), upper=pick(), step=pick())
        return expr(rng, d)

    if rng.random() < 0.3:
        return gast.Tuple(elts=[part() for _ in range(rng.randrange(4))], ctx=LOAD())
    return part()


def normal(tree) -> str:
    return ast.dump(tree, annotate_fields=True, include_attributes=False)


@pytest.mark.parametrize("seed", range(40))
def test_printed_expressions_parse_back_to_the_same_tree(seed):
    rng = random.Random(seed)
    for _ in range(150):
        node = expr(rng, 4)
        text = unparse(node)
        expected = gast.gast_to_ast(node)
        got = ast.parse(text, mode="eval").body
        assert normal(got) == normal(expected), text


@pytest.mark.parametrize("node, text", [
    (gast.BinOp(left=gast.BinOp(left=gast.Name(id="a", ctx=LOAD(), annotation=None,
                                               type_comment=None), op=gast.Sub(),
                                right=gast.Name(id="b", ctx=LOAD(), annotation=None,
                                                type_comment=None)),
                op=gast.Sub(), right=gast.Name(id="c", ctx=LOAD(), annotation=None,
                                               type_comment=None)), "a - b - c"),
    (gast.BinOp(left=gast.Name(id="a", ctx=LOAD(), annotation=None, type_comment=None),
                op=gast.Sub(),
                right=gast.BinOp(left=gast.Name(id="b", ctx=LOAD(), annotation=None,
                                                type_comment=None), op=gast.Sub(),
                                 right=gast.Name(id="c", ctx=LOAD(), annotation=None,
                                                 type_comment=None))), "a - (b - c)"),
    (gast.BinOp(left=gast.UnaryOp(op=gast.USub(), operand=gast.Name(
        id="x", ctx=LOAD(), annotation=None, type_comment=None)), op=gast.Pow(),
        right=gast.Constant(value=2, kind=None)), "(-x) ** 2"),
    (gast.Subscript(value=gast.Name(id="x", ctx=LOAD(), annotation=None, type_comment=None),
                    slice=gast.Tuple(elts=[gast.Constant(value=Ellipsis, kind=None),
                                           gast.Slice(lower=None, upper=gast.Constant(
                                               value=2, kind=None), step=None)],
                                     ctx=LOAD()), ctx=LOAD()), "x[..., :2]"),
    (gast.Attribute(value=gast.Constant(value=1, kind=None), attr="real", ctx=LOAD()),
     "(1).real"),
])
def test_no_more_parentheses_than_needed(node, text):
    assert unparse(node) == text


def test_unknown_nodes_are_left_to_astor():
    with pytest.raises(Unsupported):
        unparse(gast.Lambda(args=None, body=None))
