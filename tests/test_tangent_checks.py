"""A JVP's tangents must have the shape (and structure) of their primal arguments: a tangent
of another shape is refused with the parameter's name, on the first call and on every call
after the dispatcher is installed — never broadcast into a result of the wrong shape."""

import collections

import numpy as np
import pytest

import s2sad

Pair = collections.namedtuple("Pair", "a b")


def f(x, y):
    return x * np.sin(y)


def g(p, x):
    return np.sum(p["w"] * x) + p["b"]


def h(p, x):
    return np.sum(p.a * x) * p.b


BAD = [
    ((np.ones(3), 2.0, 1.0, 1.0), "x_dot of its argument's shape \\(3,\\), got shape \\(\\)"),
    ((np.ones(3), 2.0, np.ones(2), 1.0), "x_dot .* got shape \\(2,\\)"),
    ((np.ones(3), 2.0, np.ones(3), np.ones(3)), "y_dot of its argument's shape \\(\\)"),
]


@pytest.mark.parametrize("args, message", BAD)
def test_a_tangent_of_another_shape_is_refused(args, message):
    d = s2sad.jvp(f)
    good = (np.ones(3), 2.0, np.ones(3), 1.0)
    with pytest.raises(ValueError, match=message):
        d(*args)
    for _ in range(3):  # the dispatcher is installed after the second call
        out, out_dot = d(*good)
        np.testing.assert_allclose(out_dot, np.sin(2.0) + np.cos(2.0))
        with pytest.raises(ValueError, match=message):
            d(*args)


def test_structured_tangents_are_checked():
    p, x = {"w": np.ones(2), "b": 1.0}, np.ones(2)
    d = s2sad.jvp(g, wrt=0)
    out, out_dot = d(p, x, {"w": np.array([1.0, 2.0]), "b": 3.0})
    assert out_dot == pytest.approx(6.0)
    with pytest.raises(ValueError, match="keys"):
        d(p, x, {"w": np.ones(2)})
    with pytest.raises(ValueError, match="p_dot\\['w'\\]"):
        d(p, x, {"w": np.ones(3), "b": 0.0})
    dh = s2sad.jvp(h, wrt=0)
    q = Pair(np.ones(2), 2.0)
    assert dh(q, x, Pair(np.ones(2), 0.0))[1] == pytest.approx(4.0)
    with pytest.raises(ValueError, match="structure"):
        dh(q, x, 1.0)
