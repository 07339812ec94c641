"""Issue 36, the API and dispatcher items (4, 6, 10, 11, 17): what a derivative refuses,
derivatives of derivatives with defaults, how a JVP binds its flat form, and the shape of
a Jacobian that is zero. Expected values are analytic or central differences."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad

# -- item 6: a derivative of a derivative, called again, with defaults ---------------------


def cubes(p, scale=1.0):
    return np.sum(p ** 3) / scale


def cubes_kwonly(p, *, scale=1.0):
    return np.sum(p ** 3) / scale


def cube(x, scale=1.0):
    return x ** 3 / scale


def _second(make, kind):
    """The transformation of a transformation, and how its result is read as a Hessian."""
    if kind == "vjp":
        def hessian(*args, **kw):
            _, pullback = make(*args, **kw)
            return np.diag(pullback(np.ones(2))[0])
        return hessian
    return make


SECOND_ORDER = {
    "hessian": lambda f: s2sad.hessian(f),
    "jacfwd(grad)": lambda f: s2sad.jacfwd(s2sad.grad(f)),
    "jacrev(grad)": lambda f: s2sad.jacrev(s2sad.grad(f)),
    "vjp(grad)": lambda f: s2sad.vjp(s2sad.grad(f)),
}


@pytest.mark.parametrize("f", [cubes, cubes_kwonly], ids=["default", "kwonly"])
@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_order_with_defaults_is_called_again(f, name):
    """The dispatcher installed by the second call read `func.__defaults__` of the inner
    derivative (AttributeError); the defaults are the innermost function's."""
    d = _second(SECOND_ORDER[name](f), name.split("(")[0])
    p = np.array([0.5, -1.5])
    for _ in range(3):  # the first call, the one installing the dispatcher, its fast path
        assert_close(d(p), np.diag(6.0 * p))
        assert_close(d(p, scale=2.0), np.diag(3.0 * p))


@pytest.mark.parametrize("name", ["grad(grad)", "jacfwd(grad)"])
def test_second_order_follows_changed_defaults(name):
    def f(x, scale=1.0):
        return x ** 3 / scale

    d = s2sad.grad(s2sad.grad(f)) if name == "grad(grad)" else s2sad.jacfwd(s2sad.grad(f))
    for _ in range(3):
        assert_close(float(d(0.5)), 3.0)
    f.__defaults__ = (3.0,)
    for _ in range(3):  # (the inner derivative's signature is read again)
        assert_close(float(d(0.5)), 1.0)
