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
