"""Register allocation reads the interferences among straight-line variables (defined by a
call of the function's top-level block and read only there) from their stretches, not from
liveness walks (codegen/registers.py: `_straight`, `_overlaps`, `_span`, `_SpanNames`): the
residual temporaries of a long reverse sweep (`t`, `t_1`, ... hundreds live at once) made
the naming graph, and the compile, quadratic. The names are the ones the walks give: the
corpus prints the same source either way, and the graph stays linear in the length of a
function whose temporaries live long."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import s2sad
from s2sad.codegen import registers
from s2sad.ir.kinds import UNKNOWN, kind_of_value
from s2sad.transform import generate, resolve_wrt

try:  # works both with and without tests/__init__.py
    from tests import oracle
    from tests.corpus import programs
except ImportError:  # pragma: no cover
    import oracle
    from corpus import programs


def _sources(case) -> list:
    args = case.args(oracle.rng_for(case.name, "probe"))
    wrt, wrt_tuple = resolve_wrt(case.fn, case.wrt)
    out = []
    for kinds in ([UNKNOWN] * len(args), [kind_of_value(a, keep_value=False) for a in args]):
        for mode in ("jvp", "vjp", "vjp+explain"):
            out.append(generate(case.fn, mode, wrt, wrt_tuple, kinds, {}).source)
    return out


@pytest.mark.parametrize("case", programs.CASES, ids=programs.CASE_IDS)
def test_stretches_name_as_the_walks_do(case, monkeypatch):
    with_stretches = _sources(case)
    monkeypatch.setattr(registers, "_straight", lambda fn, pos: {})  # every variable walked
    assert _sources(case) == with_stretches


def _residual_line(n: int, tmp_path):
    """n lines whose reverse sweep keeps two temporaries of each line (`t`, `t_1`, ...)."""
    lines = ["import numpy as np", "", "", "def model(x, y):", "    v0 = x * y"]
    for i in range(1, n):
        lines.append(f"    v{i} = np.exp(-v{i - 1} * v{i - 1}) * {'x' if i % 2 else 'y'}")
    lines.append(f"    return np.sum(v{n - 1})")
    path = tmp_path / f"residual_{n}.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(f"residual_{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.model


def _graph_size(monkeypatch, tmp_path, n: int) -> tuple:
    sizes = []
    walk, overlaps = registers._interference, registers._overlaps

    def counting(fn, graph):
        graph = walk(fn, graph)
        sizes.append(sum(len(nbrs) for nbrs in graph.adj.values()))
        return graph

    def counting_overlaps(graph, component, straight, inlined):
        before = sum(len(nbrs) for nbrs in graph.adj.values())
        overlaps(graph, component, straight, inlined)
        sizes.append(sum(len(nbrs) for nbrs in graph.adj.values()) - before)

    monkeypatch.setattr(registers, "_interference", counting)
    monkeypatch.setattr(registers, "_overlaps", counting_overlaps)
    model = _residual_line(n, tmp_path)
    x, y = np.linspace(0.1, 0.3, 3), np.linspace(0.4, 0.2, 3)
    d = s2sad.grad(model, wrt=(0, 1))
    gx, gy = d(x, y)
    h = 1e-6  # the oracle: central differences
    for g, i in ((gx, 0), (gy, 1)):
        for k in range(3):
            e = np.zeros(3)
            e[k] = h
            plus = model(*(a + e if j == i else a for j, a in enumerate((x, y))))
            minus = model(*(a - e if j == i else a for j, a in enumerate((x, y))))
            assert np.isclose(g[k], (plus - minus) / (2 * h), rtol=1e-5, atol=1e-8)
    temporaries = d.source.count(" t_")
    return sum(sizes), temporaries


def test_graph_is_linear_with_temporaries_live_at_once(monkeypatch, tmp_path):
    small, _ = _graph_size(monkeypatch, tmp_path, 40)
    large, temporaries = _graph_size(monkeypatch, tmp_path, 160)
    assert temporaries > 100  # (numbered temporaries: many live at once)
    assert large <= 4 * small + 40, (small, large)  # quadratic would be 16 times
