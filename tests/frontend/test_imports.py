"""`import` inside the differentiated function (issue #15: the rest of everyday code): the
names are bound while compiling to what the import gives. Checked against analytic
derivatives."""

import numpy as np
import pytest

import s2sad
from s2sad.errors import NameResolutionError


def plain_import(x):
    import math
    return math.sin(x) * x


def aliased(x):
    import numpy.linalg as la
    return la.norm(x) ** 2


def from_import(x):
    from math import cos as c
    from numpy import tanh
    return c(x) + tanh(x)


def submodule(x):
    import os.path
    return x * len(os.path.sep)


def missing(x):
    import not_a_module_s2sad
    return x


def test_imports_inside_the_function():
    x = 0.7
    assert s2sad.grad(plain_import)(x) == pytest.approx(np.cos(x) * x + np.sin(x))
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(s2sad.grad(aliased)(v), 2 * v)
    assert s2sad.grad(from_import)(x) == pytest.approx(-np.sin(x) + 1 - np.tanh(x) ** 2)
    assert s2sad.grad(submodule)(x) == pytest.approx(1.0)
    _, t = s2sad.jvp(plain_import)(x, 2.0)
    assert t == pytest.approx(2.0 * (np.cos(x) * x + np.sin(x)))


def test_a_failing_import_is_an_error_at_its_line():
    with pytest.raises(NameResolutionError, match="not_a_module_s2sad") as e:
        s2sad.grad(missing)(1.0)
    assert "import not_a_module_s2sad" in str(e.value)
