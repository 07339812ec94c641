"""Bound methods (issue #15, item 6): `s2sad.grad(obj.method)` differentiates the method
with the object as a constant; attributes it reads (numbers, arrays, other methods) are
guarded, so changing them recompiles. Checked against central finite differences."""

import numpy as np
import pytest

import s2sad
from s2sad.errors import UnsupportedSyntaxError
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for


class Model:
    def __init__(self, k):
        self.k = k
        self.w = np.array([1.0, 2.0, -0.5])

    def scale(self, v):
        return self.k * v

    def energy(self, x):
        return np.sum(self.scale(x) ** 2 * self.w) + np.sin(x[0])

    def with_default(self, x, c=0.5):
        return np.sum(np.tanh(self.w * x + c))


class Rosenbrock:
    """The shape of SciPy's global-optimisation benchmark functions."""

    def __init__(self, dimensions=3):
        self.N = dimensions

    def fun(self, x):
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _check(method, x):
    assert_close(s2sad.grad(method)(x), numerical_grad(method, (x,), (0,))[0], what="grad")
    v = rng_for("methods", "v").standard_normal(x.shape)
    # a JVP takes every positional argument before the tangents (defaults included)
    defaults = method.__defaults__ or ()
    out, out_dot = s2sad.jvp(method, wrt=0)(x, *defaults, v)
    assert_close(out, method(x), what="primal")
    assert_close(out_dot, numerical_jvp(method, (x,), (0,), (v,)), what="jvp")


@pytest.mark.parametrize("make", [
    lambda: Model(3.0).energy,
    lambda: Model(-1.5).with_default,
    lambda: Rosenbrock(4).fun,
])
def test_bound_methods_against_finite_differences(make):
    method = make()
    x = rng_for("methods").standard_normal(3 if not isinstance(method.__self__, Rosenbrock)
                                          else 4)
    _check(method, x)


def test_attribute_changes_recompile():
    m = Model(3.0)
    g = s2sad.grad(m.energy)
    x = np.array([0.5, -1.0, 0.25])
    assert_close(g(x), numerical_grad(m.energy, (x,), (0,))[0], what="k=3")
    m.k = 5.0  # a number the derivative folded in
    assert_close(g(x), numerical_grad(m.energy, (x,), (0,))[0], what="k=5")
    m.w = np.array([0.5, 0.5, 4.0])  # a new array
    assert_close(g(x), numerical_grad(m.energy, (x,), (0,))[0], what="new w")
    m.w[1] = -3.0  # an entry of the same array: read when the code runs
    assert_close(g(x), numerical_grad(m.energy, (x,), (0,))[0], what="w[1] set")


def test_a_method_rebound_on_the_class_recompiles():
    class Local(Model):
        pass

    m = Local(2.0)
    g = s2sad.grad(m.energy)
    x = np.array([0.5, -1.0, 0.25])
    g(x)
    Local.scale = lambda self, v: self.k * v * v  # noqa: E731
    assert_close(g(x), numerical_grad(m.energy, (x,), (0,))[0], what="rebound scale")


class Unbound:
    a = 2.0

    def fun(self, x):
        return np.sum((x - self.a) ** 2)


def test_an_unbound_method_with_self_as_argument():
    """s2sad.grad(Class.fun, wrt=1)(obj, x): the method bound to obj; d/dx = 2 (x - a)."""
    x = np.array([1.0, 3.0])
    assert_close(s2sad.grad(Unbound.fun, wrt=1)(Unbound(), x), 2 * (x - 2.0), what="unbound")

class Documented:
    def __init__(self, k):
        self.k = k

    def loss(self, x):
        """A docstring whose next line is indented less than the method:
valid Python, which the whole file's syntax tree holds as written."""
        label = """two
lines"""
        return np.sum(np.sin(x) * self.k) + len(label)


def test_method_with_a_less_indented_string_line():
    """The method is read from its module's syntax tree, not parsed again on its own after
    dedenting (which a string line left of the method's indentation defeated: "unexpected
    indent"), and a string spanning lines keeps its value (len(label) is 9)."""
    m = Documented(1.5)
    x = np.array([0.3, -0.2, 0.9])
    _check(m.loss, x)  # (the primal compared too: with len(label) as written)
