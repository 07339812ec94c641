"""Linear-time compilation (issue 16): the import lines' names found by a text scan agree
with a parse of the source; the garbage collector paused while compiling is restored.

Timings are measured by bench/bench_scale.py, not asserted here."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import s2sad
from s2sad.codegen.imports import names_read, used_names
from s2sad.errors import S2SADError

CANDIDATES = {"np", "math", "unbroadcast", "power_vjp", "b", "alpha_default"}

SOURCES = [
    "def f(x):\n    return np.sin(x)\n",
    "def f(x):\n    # line 2: y = math.exp(x)\n    return x.np + np_x\n",
    "def f(x):\n    y = g(x, np=1, math = 2)\n    return y == unbroadcast\n",
    "def f(x):\n    s = 'np # math'\n    return s + \"unbroadcast\" + b'x'  # np\n",
    "def f(x):\n    s = 'it''s' + 'a\\'np'\n    return power_vjp(x) if s else math\n",
    "def f(x, *, k=alpha_default):\n    return k\n",
    "def f(x):\n    return [np for _ in x], {math: 1}, x[unbroadcast] != 0\n",
    'def f(x):\n    """np\n    math"""\n    return unbroadcast\n',
]


@pytest.mark.parametrize("source", SOURCES)
def test_names_read_agrees_with_the_parse(source):
    assert names_read(source, CANDIDATES) == used_names(source) & CANDIDATES


def _model(x):
    return np.sum(np.sin(x) * x)


def _identity(x):
    return x


def test_collector_restored_after_compiling():
    x = np.linspace(0.1, 0.5, 5)
    assert gc.isenabled()
    g = s2sad.grad(lambda x: np.sum(np.tanh(x) * x))(x)
    assert np.allclose(g, np.tanh(x) + x * (1 - np.tanh(x) ** 2))  # analytic oracle
    assert gc.isenabled()
    with pytest.raises(S2SADError):
        s2sad.grad(_identity)(x)  # not a scalar output: refused while compiling
    assert gc.isenabled()
    gc.disable()
    try:
        s2sad.grad(_model)(x)
        assert not gc.isenabled()  # a program that paused it keeps it paused
    finally:
        gc.enable()


# -- the mechanics made linear (structural checks: counts and equalities, no clock) ------


def _straight_line(n: int) -> str:
    """bench/bench_scale.py's function of n lines (each a new array from earlier ones)."""
    ops = ["np.sin({a}) * {b}", "np.tanh({a} + {b})", "np.exp(-{a} * {a}) + {b}",
           "{a} * {b} + 0.5 * {a}"]
    lines = ["import numpy as np", "", "", "def model(x, y):", "    v0 = x * y"]
    for i in range(1, n - 1):
        a, b = f"v{i - 1}", f"v{max(i - 3, 0)}" if i % 2 else "x"
        lines.append(f"    v{i} = " + ops[i % len(ops)].format(a=a, b=b))
    lines.append(f"    return np.sum(v{n - 2} * v{n - 2})")
    return "\n".join(lines) + "\n"


def _load(tmp_path, name: str, source: str):
    import importlib.util
    import sys

    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


ARGS = (np.linspace(0.1, 0.4, 4), np.linspace(0.5, 0.2, 4))


def test_the_users_file_is_parsed_once(tmp_path, monkeypatch):
    """One ast.parse of the function's definition (at the top level of its file: the text
    from its first line to the next line at the first column, see
    source._top_level_definition; its imports are parsed on their own) serves the
    definition lookup and the function's syntax tree (its bytecode check compiles the text,
    without a syntax tree); gast never parses the function's text again."""
    import ast

    import gast

    source = _straight_line(40)
    mod = _load(tmp_path, "scale_parsed_once", source)
    parses = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, *a, **k: (parses.append(text),
                                                              real_parse(text, *a, **k))[1])
    monkeypatch.setattr(gast, "parse", lambda *a, **k: pytest.fail("parsed again by gast"))
    g = s2sad.grad(mod.model, wrt=(0, 1))(*ARGS)
    assert [text.lstrip("\n") for text in parses if "def model" in text] == \
        [source[source.index("def model"):]]
    # (the derivative itself: against central differences)
    x, y = ARGS
    h = 1e-6
    fd = [(mod.model(x + h * e, y) - mod.model(x - h * e, y)) / (2 * h) for e in np.eye(4)]
    assert np.allclose(g[0], fd, rtol=1e-5, atol=1e-7)


def test_indexed_interference_equals_the_intersection():
    """Register allocation reads a call's interferences from the live members of its own
    partners' set (Interference.call, indexed); the graph equals the one the plain walk
    (Interference.stmt, live & partners at every statement) records."""
    from s2sad.codegen import registers
    from s2sad.codegen.emit import sink_temporaries
    from s2sad.ir.kinds import kind_of_value
    from s2sad.transform import derivative_ir

    model = _module_model(_straight_line(60))
    ir = derivative_ir(model, "grad", (0, 1), [kind_of_value(a) for a in ARGS], {})
    fn = sink_temporaries(ir)
    pos = registers.Positions(fn)
    inlined = registers.find_inlined(fn, pos)
    names = {v: v.name.rstrip("0123456789_") for v in pos.defpos if hasattr(v, "name")}
    groups: dict = {}
    for v, base in names.items():
        groups.setdefault(base, set()).add(v)
    partners = {v: groups[base] for v, base in names.items()}
    shared = {v for v, g in partners.items() if len(g) > 1}

    def graph(indexed: bool):
        g = registers.Interference(inlined, shared, partners.get, symmetric=False)
        if not indexed:  # every statement through stmt(): live & partners
            g.block = lambda b, live_out: _plain_block(g, b, live_out)
        registers._interference(fn, g)
        return g.adj

    indexed, plain = graph(True), graph(False)
    assert indexed == plain
    assert sum(len(v) for v in plain.values()) > 0  # (temporaries of one name interfere)


def _plain_block(g, b, live_out):
    live = set(live_out)
    for s in reversed(b.stmts):
        live = g.stmt(s, live)
    return live


def _module_model(source: str):
    import tempfile
    from pathlib import Path

    d = Path(tempfile.mkdtemp(prefix="s2sad-scale-"))
    return _load(d, "scale_interference", source).model
