"""The fast converter (s2sad/frontend/to_gast.py) builds the tree gast's own converter
builds: the same nodes, fields and source positions."""

import ast
import sys
import textwrap
from pathlib import Path

import gast
import pytest

from s2sad.frontend.to_gast import to_gast

SAMPLE = textwrap.dedent('''
    import numpy as np
    from os import path as p

    @decorator(1)
    def f(a, b=2.0, /, c=None, *args, d, e=-1, **kw) -> float:
        """doc"""
        x: float = a ** 2 if b else -a
        y = [i * j for i in range(3) for j in (1, 2) if i != j]
        z = {k: v for k, v in kw.items()}, {1, 2}, (lambda q, *r: q + 1)(2)
        s = f"{a!r:>10} and {b}" + b"bytes".decode() + ...
        x += np.sum(a[1:2, ::3, None, ...]) @ b
        global g
        try:
            with open(p) as fh, open(p):
                pass
        except (ValueError, TypeError) as err:
            raise RuntimeError("no") from err
        except Exception:
            del y
        finally:
            assert a is not b, "msg"
        while not (a < b <= c):
            break
        else:
            pass
        for i, (j, k) in enumerate(zip(args, args)):
            continue
        match a:
            case [1, *rest] if rest:
                pass
            case {"k": v, **others}:
                pass
            case Point(x=0) | None:
                pass
        async def inner():
            async for i in g():
                await i
            async with h() as w:
                yield w
        def gen():
            yield from range(3)
            nonlocal_value = (yield)
        class C(Base, metaclass=M):
            attr: int
        return x if (n := len(args)) else ~n
''')


def _same(source: str):
    mine = to_gast(ast.parse(source))
    theirs = gast.ast_to_gast(ast.parse(source))
    assert gast.dump(mine, include_attributes=True) == \
        gast.dump(theirs, include_attributes=True)
    assert [(type(n), sorted(vars(n))) for n in gast.walk(mine)] == \
        [(type(n), sorted(vars(n))) for n in gast.walk(theirs)]


def test_the_sample_converts_as_gast_converts_it():
    _same(SAMPLE)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="type parameters: Python 3.12+")
def test_type_parameters_convert_as_gast_converts_them():
    _same("def f[T: int, *Ts, **P](x: T) -> T:\n    return x\ntype A[T] = list[T]\n")


def test_the_compilers_own_sources_convert_as_gast_converts_them():
    root = Path(__file__).resolve().parents[2] / "s2sad" / "frontend"
    for path in sorted(root.glob("*.py")):
        _same(path.read_text())
