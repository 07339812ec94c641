"""Printed derivatives import their helpers from `s2sad.runtime`, the public module, never
from where they are defined (`s2sad.ir.prims`): the printed source is what users copy and
ahead-of-time modules are built from."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from s2sad import runtime


def cast_down(x):
    return np.sum(x.astype(np.float32) ** 2)  # (its cotangent cast back: cast_like)


def determinant(a):
    return np.linalg.det(a)  # (its derivative at a singular matrix: cofactor)


def zero_diagonal(x):
    m = x[:, None] * x[None, :]
    np.fill_diagonal(m, 0.0)  # (on an array the function made: filled_diagonal)
    return np.sum(m ** 2)


@pytest.mark.parametrize("f, arg", [
    (cast_down, np.array([0.5, -1.0, 2.0])),
    (determinant, np.array([[2.0, 1.0], [0.5, 3.0]])),
    (zero_diagonal, np.array([0.5, -1.0, 2.0])),
], ids=["cast_like", "cofactor", "filled_diagonal"])
def test_helpers_are_imported_from_the_runtime(f, arg):
    for d in (s2sad.grad(f), s2sad.jvp(f)):
        source = d.source_for(arg) if d.mode == "grad" else d.source_for(arg, np.ones_like(arg))
        assert "s2sad.ir" not in source, source
        for line in source.splitlines():
            if line.startswith("from s2sad.runtime import "):
                for name in line.split(" import ")[1].split(", "):
                    assert name in runtime.__all__, name
