"""Imports run one way: the layers contract in pyproject.toml holds (import-linter)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_layers_contract_is_kept():
    pytest.importorskip("importlinter")
    run = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command;"
                          " lint_imports_command()"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "1 kept, 0 broken" in run.stdout


def test_import_graph_is_acyclic():
    """No cycle among the modules, counting imports inside functions too."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("s2sad", "s2sad_rules")
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    cycles: list = []

    def visit(module, counter=[0]):  # Tarjan's strongly connected components
        index[module] = low[module] = counter[0]
        counter[0] += 1
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                m = stack.pop()
                on_stack.discard(m)
                component.append(m)
                if m == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles: {cycles}"
