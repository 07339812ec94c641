"""An `if` whose test is known while compiling lowers only the branch that runs: the other
may use what this NumPy or this program does not have. The flags are read like any global:
changing one compiles again (guards)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import s2sad

DEBUG = False
MODE = "fast"
LIMIT = None


class Config:
    order = 3


def flag(x):
    if DEBUG:
        print(undefined_name)  # noqa: F821  (never lowered while DEBUG is False)
    return x * x


def compared(x):
    if MODE == "fast" and Config.order >= 3:
        return x ** 3
    return np.not_in_numpy(x)


def version_check(x):
    if sys.version_info >= (3, 8):
        return np.sin(x)
    return np.sine(x)


def none_check(x):
    if LIMIT is not None:
        return np.minimum(x, LIMIT) * np.missing_function(x)
    return np.exp(x)


@pytest.mark.parametrize("f, want", [
    (flag, 2 * 0.7), (compared, 3 * 0.7 ** 2), (version_check, np.cos(0.7)),
    (none_check, np.exp(0.7)),
])
def test_only_the_branch_that_runs_is_lowered(f, want):
    assert np.isclose(s2sad.grad(f)(0.7), want)


def test_changing_a_flag_compiles_again(monkeypatch):
    d = s2sad.grad(flag)
    assert d(0.7) == pytest.approx(1.4)
    monkeypatch.setattr(sys.modules[__name__], "DEBUG", True)
    with pytest.raises(s2sad.NameResolutionError, match="undefined_name"):
        d(0.7)
