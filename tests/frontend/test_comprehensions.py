"""List comprehensions, generator expressions and dict comprehensions (issue #15: "real
Python, not a subset"): lowered as the loop they stand for, unrolled over tuples, lists and
dicts, a growing list over `range`. Checked against central finite differences in reverse
mode and with the dot-product test between the JVP and the gradient."""

import numpy as np
import pytest

import s2sad
from s2sad.errors import UnsupportedSyntaxError
from tests.oracle import numerical_grad, rng_for


def gen_over_tuple(ws, x):
    return sum(np.sum(w * np.sin(x)) ** 2 for w in ws)


def list_over_range(x):
    ys = [np.sin(x[i]) * x[i] for i in range(3)]
    return np.sum(np.stack(ys) ** 2)


def dict_comprehension(d, x):
    scaled = {k: v * 2.0 for k, v in d.items()}
    return np.sum(scaled["a"] * x) ** 2 + scaled["b"] * np.sum(x)


def filtered(x, n):
    return sum([x[i] ** 3 for i in range(n) if i % 2 == 0])


def nested_generators(x):
    return np.array([x[i] * np.cos(x[j]) for i in range(2) for j in range(3)]).sum()


def over_zip(ws, bs, x):
    return sum(np.tanh(w * x + b).sum() for w, b in zip(ws, bs))


def scoped(x):
    i = 2.0
    total = sum(x[i] for i in range(2))
    return total * i * x[2]  # `i` is still 2.0: the comprehension's `i` is its own


def inside_loop(x):
    acc = 0.0
    for k in range(3):
        acc = acc + sum(x[j] * x[k] for j in range(3))
    return acc


def over_rows(a):
    return sum(np.sum(np.sin(row) ** 2) for row in a)


def _cases(rng):
    x = rng.uniform(0.2, 1.5, 3)
    return [
        (gen_over_tuple, (tuple(rng.standard_normal(3) for _ in range(2)), x), (0, 1)),
        (list_over_range, (x,), (0,)),
        (dict_comprehension, ({"a": rng.standard_normal(3), "b": 0.7}, x), (1,)),
        (filtered, (x, 3), (0,)),
        (nested_generators, (x,), (0,)),
        (over_zip, ((x, 2 * x), (0.1, -0.3), x), (2,)),
        (scoped, (x,), (0,)),
        (inside_loop, (x,), (0,)),
        (over_rows, (rng.standard_normal((4, 3)),), (0,)),
    ]


NAMES = [c[0].__name__ for c in _cases(rng_for("names"))]


def _case(name):
    return next(c for c in _cases(rng_for(name, "comp")) if c[0].__name__ == name)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_against_finite_differences(name):
    f, args, wrt = _case(name)
    i = wrt[-1]
    g = s2sad.grad(f, wrt=i)(*args)
    np.testing.assert_allclose(g, numerical_grad(f, args, (i,))[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", NAMES)
def test_jvp_agrees_with_the_gradient(name):
    f, args, wrt = _case(name)
    i = wrt[-1]
    v = rng_for(name, "v").standard_normal(np.shape(args[i]))
    out, out_dot = s2sad.jvp(f, wrt=i)(*args, v)
    assert np.isclose(out, f(*args))
    assert np.isclose(out_dot, np.sum(s2sad.grad(f, wrt=i)(*args) * v), rtol=1e-10)


def test_set_comprehension_is_refused_at_its_line():
    def f(x):
        return len({v for v in (1, 2)}) * x

    with pytest.raises(UnsupportedSyntaxError, match="set comprehensions") as e:
        s2sad.grad(f)(1.0)
    assert "{v for v in (1, 2)}" in str(e.value)
