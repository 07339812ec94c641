"""scipy.optimize's conventions (issue #15, item 6): `def fun(x, *args)` with the extra
arguments passed through undifferentiated, and methods `fun(self, x, *args)` of a benchmark
class differentiated bound (`s2sad.grad(obj.fun)`) or unbound (`s2sad.grad(Class.fun,
wrt=1)(obj, x)`), reads of `self.attr` guarded like globals.

Checked against central finite differences, the dot-product test between JVP and VJP, and
the textbook minimum of the Rosenbrock function, (a, a²)."""

import numpy as np
import pytest

import s2sad
from s2sad.errors import WrtError
from tests.oracle import numerical_grad as _numerical_grad
from tests.oracle import rng_for

def numerical_grad(f, args, i):
    return _numerical_grad(f, args, (i,))[0]


def rosen(x, *args):
    a, b = args
    return np.sum(b * (x[1:] - x[:-1] ** 2) ** 2 + (a - x[:-1]) ** 2)


def weighted(x, *args):
    total = 0.0
    for w in args:  # as many as the call passes
        total = total + w * np.sum(np.sin(x) ** 2)
    return total + np.sum(x ** 2) * len(args)


class Ackley:
    """In the style of SciPy's global-optimization benchmarks (benchmarks/go_benchmark)."""

    def __init__(self, dimensions=2):
        self.N = dimensions
        self.a = 20.0

    def fun(self, x, *args):
        u = np.sum(x ** 2)
        v = np.sum(np.cos(2 * np.pi * x))
        return (-self.a * np.exp(-0.2 * np.sqrt(u / self.N)) - np.exp(v / self.N)
                + self.a + np.exp(1.0))


class Slotted:
    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k

    def fun(self, x, *args):
        return self.k * np.sum(x ** 3) + sum(args)


@pytest.mark.parametrize("args", [(1.0, 100.0), (2.0, 5.0)])
def test_grad_passes_the_extra_arguments_through(args):
    x = rng_for("rosen", str(args)).uniform(-1, 1, 4)
    g = s2sad.grad(rosen)(x, *args)
    np.testing.assert_allclose(g, numerical_grad(lambda x: rosen(x, *args), [x], 0),
                               rtol=1e-6, atol=1e-8)
    value, g2 = s2sad.value_and_grad(rosen)(x, *args)
    assert np.isclose(value, rosen(x, *args))
    np.testing.assert_allclose(g2, g)


def test_jvp_and_vjp_agree():
    """<u, J v> = <J^T u, v>; a JVP's tangent comes before the extra arguments."""
    rng = rng_for("dot")
    x, v = rng.uniform(-1, 1, 5), rng.standard_normal(5)
    out, out_dot = s2sad.jvp(rosen)(x, v, 1.5, 10.0)
    value, pullback = s2sad.vjp(rosen)(x, 1.5, 10.0)
    assert np.isclose(out, value)
    (x_bar,) = pullback(1.0) if isinstance(pullback(1.0), tuple) else (pullback(1.0),)
    assert np.isclose(out_dot, x_bar @ v, rtol=1e-10)
    assert np.isclose(out_dot, numerical_grad(lambda x: rosen(x, 1.5, 10.0), [x], 0) @ v,
                      rtol=1e-6)


def test_the_number_of_extra_arguments_is_specialised():
    x = rng_for("count").uniform(-1, 1, 3)
    g = s2sad.grad(weighted)
    for args in [(), (0.5,), (0.5, 2.0, -1.0)]:
        np.testing.assert_allclose(
            g(x, *args), numerical_grad(lambda x: weighted(x, *args), [x], 0),
            rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("a, b, n", [(1.0, 100.0, 4), (-0.5, 20.0, 2)])
def test_minimize_finds_the_textbook_minimum(a, b, n):
    """scipy.optimize.minimize with jac=s2sad.grad(fun) and args=(a, b): the minimum of
    b (y - x²)² + (a - x)² is (a, a²); of the n-dimensional sum with a = 1, all ones."""
    scipy_optimize = pytest.importorskip("scipy.optimize")
    res = scipy_optimize.minimize(rosen, np.zeros(n), args=(a, b), jac=s2sad.grad(rosen),
                                  method="BFGS", options={"gtol": 1e-10})
    expected = [a, a ** 2] if n == 2 else np.ones(n)
    np.testing.assert_allclose(res.x, expected, atol=1e-5)


@pytest.mark.parametrize("n", [2, 5])
def test_bound_and_unbound_methods(n):
    obj = Ackley(n)
    x = rng_for("ackley", str(n)).uniform(-2, 2, n)
    expected = numerical_grad(lambda x: obj.fun(x), [x], 0)
    np.testing.assert_allclose(s2sad.grad(obj.fun)(x), expected, rtol=1e-6, atol=1e-8)
    unbound = s2sad.grad(Ackley.fun, wrt=1)
    np.testing.assert_allclose(unbound(obj, x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(unbound(obj, x, 7.0), expected, rtol=1e-6, atol=1e-8)


def test_unbound_method_sees_each_object_and_its_changes():
    x = rng_for("objects").uniform(-2, 2, 3)
    g = s2sad.grad(Ackley.fun, wrt=1)
    first, second = Ackley(3), Ackley(3)
    second.a = 5.0
    for obj in (first, second, first):
        np.testing.assert_allclose(g(obj, x), numerical_grad(lambda x: obj.fun(x), [x], 0),
                                   rtol=1e-6, atol=1e-8)
    first.a = 2.0  # an attribute changed between two calls: never the stale derivative
    np.testing.assert_allclose(g(first, x), numerical_grad(lambda x: first.fun(x), [x], 0),
                               rtol=1e-6, atol=1e-8)


def test_object_without_weak_references():
    x = rng_for("slots").uniform(-1, 1, 3)
    g = s2sad.grad(Slotted.fun, wrt=1)
    for k in (2.0, 3.0):
        np.testing.assert_allclose(g(Slotted(k), x, 1.0), 3 * k * x ** 2, rtol=1e-12)


def test_differentiating_the_object_is_refused():
    with pytest.raises(WrtError, match="wrt=1"):
        s2sad.grad(Ackley.fun, wrt=0)(Ackley(2), np.ones(2))


def test_header_shows_the_star():
    d = s2sad.grad(rosen)
    d(np.ones(3), 1.0, 100.0)
    assert "of rosen(x, *args)" in d.source
