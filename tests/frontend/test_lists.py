"""Lists grown in loops (issue #15, item 2): `ys = []; for ...: ys.append(y)`, then
`np.stack(ys)`, `sum(ys)`, `ys[-1]`, iteration, or returning the list; both modes against
central finite differences, and the dot-product test for a returned list."""

import numpy as np
import pytest

import s2sad
from s2sad.errors import UnsupportedSyntaxError
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for


def euler_states(x0, n):
    xs = [x0]
    x = x0
    for _ in range(n):
        x = x + 0.1 * np.sin(x)
        xs.append(x)
    return np.sum(np.stack(xs) ** 2) + xs[-1][0]


def reads_the_last(x):
    xs = [x]
    for _ in range(3):
        xs.append(xs[-1] * x)  # x, x^2, x^3, x^4
    return sum(xs)


def grows_in_a_while(x):
    ys = []
    k = 0
    while k < 4:
        if k % 2 == 0:
            ys.append(np.exp(x * k))
        else:
            ys.append(x * k)
        k += 1
    total = 0.0
    for y in ys:
        total = total + y * y
    return total


def straight_line(x):
    ys = []
    ys.append(x)
    ys.append(np.sin(x))
    return ys[0] * ys[1]


def returns_the_list(x):
    ys = []
    for i in range(4):
        ys.append(x * (i + 1.0) + x ** 2)
    return ys


CASES = [
    (euler_states, (np.array([0.3, -0.5]), 5)),
    (reads_the_last, (1.5,)),
    (grows_in_a_while, (0.4,)),
    (straight_line, (0.7,)),
]


@pytest.mark.parametrize("f, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_grad_and_jvp_against_finite_differences(f, args):
    assert_close(s2sad.grad(f)(*args), numerical_grad(f, args, (0,))[0], what="grad")
    v = rng_for(f.__name__).standard_normal(np.shape(args[0])) if np.ndim(args[0]) else 0.6
    out, out_dot = s2sad.jvp(f, wrt=0)(*args, v)
    assert_close(out, f(*args), what="primal")
    assert_close(out_dot, numerical_jvp(f, args, (0,), (v,)), what="jvp")


def test_analytic_powers():
    # d/dx (x + x^2 + x^3 + x^4) = 1 + 2x + 3x^2 + 4x^3
    x = 1.5
    assert s2sad.grad(reads_the_last)(x) == pytest.approx(1 + 2 * x + 3 * x ** 2 + 4 * x ** 3)


def test_a_returned_list_is_a_list_and_its_vjp_passes_the_dot_product_test():
    x = 0.8
    out, pullback = s2sad.vjp(returns_the_list)(x)
    assert type(out) is list and out == pytest.approx(returns_the_list(x))
    u = [0.5, -1.0, 2.0, 0.25]
    (x_bar,) = pullback(u)
    _, out_dot = s2sad.jvp(returns_the_list)(x, 1.0)
    assert float(np.dot(u, out_dot)) == pytest.approx(float(x_bar))
    # J = [i + 1 + 2x]
    assert float(x_bar) == pytest.approx(sum(ui * (i + 1 + 2 * x) for i, ui in enumerate(u)))


def a_second_name(x):
    ys = []
    zs = ys
    for _ in range(2):
        ys.append(x)
    return len(zs) * x


def appends_to_an_argument(x, ys):
    ys.append(x)
    return x


def test_aliases_and_arguments_are_refused():
    with pytest.raises(UnsupportedSyntaxError, match="appended to and also used here"):
        s2sad.grad(a_second_name)(1.0)
    with pytest.raises(UnsupportedSyntaxError, match="did not create"):
        s2sad.grad(appends_to_an_argument)(1.0, [1.0])


def test_an_ahead_of_time_module_carries_the_grown_list():
    # the module copies the runtime helpers it needs, the list class included
    from s2sad.store.aot import DerivativeSpec, write_module

    args = (np.array([0.3, -0.5]), 5)
    spec = DerivativeSpec("tests.frontend.test_lists:euler_states", euler_states, "grad", 0,
                          args, name="euler_grad")
    text = write_module([spec])
    scope: dict = {}
    exec(compile(text, "module", "exec"), scope)
    assert "class Grown" in text
    assert "import s2sad" not in text and "from s2sad" not in text  # NumPy alone
    assert_close(scope["euler_grad"](*args), numerical_grad(euler_states, args, (0,))[0])
