"""Register allocation (codegen/registers.py): the interference graph stays linear in the
length of a function whose values have names of their own.

A reverse sweep keeps every forward value live at once; recording each interference of
each of them (what the allocator once did for variables taking part in copies) made the
graph, and the compile time, quadratic. Only the interferences each step reads are
recorded now: within a chain of copies (coalescing), within a base name (naming).
"""

from __future__ import annotations

import importlib.util

import numpy as np

import s2sad
from s2sad.codegen import registers


def _straight_line(n: int, tmp_path):
    lines = ["import numpy as np", "", "", "def model(x, y):", "    v0 = x * y"]
    for i in range(1, n):
        lines.append(f"    v{i} = np.tanh(v{i - 1}) * {'x' if i % 2 else 'y'}")
    lines.append(f"    return np.sum(v{n - 1})")
    path = tmp_path / f"straight_{n}.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(f"straight_{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.model


def _graph_sizes(monkeypatch, tmp_path, n: int) -> int:
    sizes = []
    walk = registers._interference

    def counting(fn, graph):
        graph = walk(fn, graph)
        sizes.append(sum(len(nbrs) for nbrs in graph.adj.values()))
        return graph

    monkeypatch.setattr(registers, "_interference", counting)
    model = _straight_line(n, tmp_path)
    x, y = np.linspace(0.1, 0.3, 3), np.linspace(0.4, 0.2, 3)
    gx, gy = s2sad.grad(model, wrt=(0, 1))(x, y)
    v, dx, dy = x * y, y, x  # the oracle: forward mode by hand
    for i in range(1, n):
        t, k = np.tanh(v), (x if i % 2 else y)
        dt = 1 - t * t
        dx, dy = dt * dx * k + (t if i % 2 else 0), dt * dy * k + (0 if i % 2 else t)
        v = t * k
    assert np.allclose(gx, dx) and np.allclose(gy, dy)
    return sum(sizes)


def test_interference_graph_is_linear_in_named_values(monkeypatch, tmp_path):
    small = _graph_sizes(monkeypatch, tmp_path, 40)
    large = _graph_sizes(monkeypatch, tmp_path, 160)
    assert large <= 4 * small + 40, (small, large)  # quadratic would be 16 times
