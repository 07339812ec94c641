"""Lambdas, nested `def`s, closures and derivatives taken inside a differentiated function
(issue #15, items 4 and 5): both modes against central finite differences, nested
derivatives against analytic second derivatives, and the refusals that remain."""

import numpy as np
import pytest

import s2sad
from s2sad.errors import S2SADError, SourceUnavailableError, UnsupportedSyntaxError
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for

# -- functions under test (module level, so their source can be read) -------------------

square_sin = lambda x: np.sin(x) * x  # noqa: E731 - a lambda is what is under test

two_on_a_line = (lambda x: x * 3.0), (lambda x: x ** 3)


def scaled(a):
    return lambda x: a * x * x


def nested_def(x):
    def h(y):
        z = y * y
        return z * x
    return h(x) + h(2.0)


def lambda_with_defaults(x):
    h = lambda y, k=2.0, *, p=1.0: k * y * x + p * y  # noqa: E731
    return h(x) + h(1.0, k=3.0) + h(x, p=np.cos(x))


def apply_twice(fn, v):
    return fn(fn(v))


def passed_to_helper(x):
    return apply_twice(lambda y: np.sin(y) * x, x)


def late_binding(x):
    a = x
    g = lambda: a * a  # noqa: E731
    a = 2.0 * x
    return g()  # reads a as it is at the call, as Python does: 4 x^2


def in_loop(x):
    s = 0.0
    sq = lambda v: v * v  # noqa: E731
    for i in range(3):
        s = s + sq(x + i)
    return s


def defined_in_loop(x):
    s = 0.0
    for i in range(3):
        g = lambda v: v * i  # noqa: E731
        s = s + g(x) * x
    return s


def factory_inside(x):
    m = scaled(x)
    return m(x)  # x^3


def closure_over_array(x, w):
    def layer(v):
        return np.tanh(w @ v)
    return np.sum(layer(layer(x)))


CASES = [
    (square_sin, (0.7,)),
    (two_on_a_line[0], (0.4,)),
    (two_on_a_line[1], (0.4,)),
    (scaled(5.0), (1.3,)),
    (nested_def, (0.9,)),
    (lambda_with_defaults, (0.6,)),
    (passed_to_helper, (0.5,)),
    (late_binding, (1.5,)),
    (in_loop, (1.1,)),
    (defined_in_loop, (0.8,)),
    (factory_inside, (1.2,)),
    (closure_over_array, (np.array([0.3, -0.2, 0.5]), np.eye(3) * 0.5 + 0.1)),
]


def _case_id(case):
    fn, _ = case
    return getattr(fn, "__name__", "f") + "_" + str(fn.__code__.co_firstlineno)


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_grad_against_finite_differences(case):
    fn, args = case
    expected = numerical_grad(fn, args, (0,))[0]
    assert_close(s2sad.grad(fn)(*args), expected, what="grad")


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_jvp_against_finite_differences(case):
    fn, args = case
    rng = rng_for(_case_id(case))
    v = rng.standard_normal(np.shape(args[0])) if np.ndim(args[0]) else 0.7
    out, out_dot = s2sad.jvp(fn, wrt=0)(*args, v)
    assert_close(out, fn(*args), what="primal")
    assert_close(out_dot, numerical_jvp(fn, args, (0,), (v,)), what="jvp")


def test_top_level_lambda_names_the_generated_function():
    src = s2sad.grad(square_sin).source
    assert "def square_sin_grad(x):" in src
    assert "line 14: square_sin = lambda x: np.sin(x) * x" in src
    inline = s2sad.grad(lambda x: x ** 2)
    assert inline(3.0) == pytest.approx(6.0)
    assert f"def lambda_{inline.func.__code__.co_firstlineno}_grad(x):" in inline.source


def test_a_lambda_typed_interactively_is_refused_clearly():
    ns: dict = {}
    exec("f = lambda x: x * x", ns)  # no file holds its source
    with pytest.raises(SourceUnavailableError, match="lambda"):
        s2sad.grad(ns["f"])(1.0)


# -- derivatives taken inside a differentiated function ---------------------------------

def potential(x):
    return x ** 4


def force_times_x(x):
    return s2sad.grad(potential)(x) * x  # 4 x^4


def lagrangian(x, y):
    return x * y ** 2 + x ** 2


def grad_of(f, wrt):
    return s2sad.grad(f, wrt=wrt)


def saddle(x):
    y = 1.0
    for _ in range(2):
        y = y - 0.1 * s2sad.grad(lagrangian, wrt=1)(x, y)
    return lagrangian(x, y) + grad_of(lagrangian, 0)(x, y)


def descend_while(x):
    i = 0
    while x > 0.1 and i < 5:
        x = x - 0.1 * s2sad.grad(potential)(x)
        i = i + 1
    return x


G = s2sad.grad


def through_alias_and_decorator_form(x, y):
    return G(lagrangian)(x, y) + s2sad.grad(wrt=1)(lagrangian)(x, y)


def particles(q):
    """Symplectic Euler with the force as the gradient of the potential energy."""
    p = np.zeros_like(q)
    for _ in range(4):
        p = p - 0.05 * s2sad.grad(pair_energy)(q)
        q = q + 0.05 * p
    return np.sum(q * q)


def pair_energy(q):
    d = q[1:] - q[:-1]
    return np.sum(d ** 2 + 0.1 * d ** 4)


def test_grad_inside_is_analytic():
    # d/dx 4 x^4 = 16 x^3; d2/dx2 = 48 x^2
    assert s2sad.grad(force_times_x)(2.0) == pytest.approx(128.0)
    assert s2sad.hessian(force_times_x)(2.0) == pytest.approx(192.0)
    assert s2sad.jvp(force_times_x)(2.0, 1.0)[1] == pytest.approx(128.0)


NESTED = [
    (saddle, (0.7,)),
    (descend_while, (0.9,)),
    (through_alias_and_decorator_form, (0.5, 2.0)),
    (particles, (np.array([0.1, 0.5, -0.3, 0.8]),)),
]


@pytest.mark.parametrize("case", NESTED, ids=[c[0].__name__ for c in NESTED])
def test_nested_derivatives_against_finite_differences(case):
    fn, args = case
    expected = numerical_grad(fn, args, (0,))[0]
    assert_close(s2sad.grad(fn)(*args), expected, what="grad")
    v = np.ones_like(args[0]) * 0.3 if np.ndim(args[0]) else 0.3
    assert_close(s2sad.jvp(fn, wrt=0)(*args, v)[1], numerical_jvp(fn, args, (0,), (v,)),
                 what="jvp")


# -- what stays refused, with a clear error at the user's line --------------------------

def returns_a_lambda(x):
    return lambda y: y * x


def recursive_nested(x):
    def r(n):
        return r(n - 1)
    return r(x)


def decorated_nested(x):
    @staticmethod
    def h(y):
        return y
    return h(x)


def transform_of_local(x):
    return s2sad.grad(lambda y: y * x)(x)


@pytest.mark.parametrize("fn, message", [
    (returns_a_lambda, "used as a value"),
    (recursive_nested, "calls itself"),
    (decorated_nested, "decorated nested function"),
    (transform_of_local, "function defined inside the differentiated function"),
])
def test_refusals(fn, message):
    with pytest.raises(UnsupportedSyntaxError, match=message) as info:
        s2sad.grad(fn)(1.0)
    err = info.value
    assert isinstance(err, S2SADError)
    assert err.loc is not None and err.loc.filename == __file__
