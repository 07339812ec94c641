"""np.random draws inside a differentiated function (issue #15, item 8): each draw runs
once per call, in the order written, and the primal and its derivative see the same draw
(a constant of that call). Checked against the derivative written out with the same
seeded draws."""

import numpy as np
import pytest

import s2sad


def noisy_sum(x):
    a = np.random.randn(3)
    b = np.random.randn(3)
    noise = np.random.normal(0.0, 0.1, size=3)  # drawn though its value is not needed
    return np.sum(x * a + x * x * b + noise)


def draws_in_a_loop(x):
    s = 0.0
    for _ in range(3):
        e = np.random.randn()
        s = s + np.sin(x * e) * e
    return s


def seeds_itself(x):
    np.random.seed(1)
    return x * np.random.rand() + np.random.uniform(-1.0, 1.0) * x ** 2


def test_every_mode_sees_the_draws_the_primal_sees():
    x = np.array([1.0, 2.0, 3.0])
    rs = np.random.RandomState(5)
    a, b = rs.randn(3), rs.randn(3)
    expected = a + 2 * x * b
    np.random.seed(5)
    assert np.allclose(s2sad.grad(noisy_sum)(x), expected)
    np.random.seed(5)
    value = noisy_sum(x)
    np.random.seed(5)
    out, out_dot = s2sad.jvp(noisy_sum)(x, np.ones(3))
    assert out == pytest.approx(value) and out_dot == pytest.approx(np.sum(expected))
    # the stream moved on by the same draws as the function's own call
    np.random.seed(5)
    s2sad.grad(noisy_sum)(x)
    after = np.random.rand()
    np.random.seed(5)
    noisy_sum(x)
    assert np.random.rand() == after


def test_a_loop_of_draws_is_taped_not_drawn_again():
    rs = np.random.RandomState(3)
    es = [rs.randn() for _ in range(3)]
    x = 0.5
    np.random.seed(3)
    assert s2sad.grad(draws_in_a_loop)(x) == pytest.approx(
        sum(np.cos(x * e) * e * e for e in es))
    np.random.seed(3)
    _, pullback = s2sad.vjp(draws_in_a_loop)(x)
    assert pullback(1.0) == pullback(1.0)  # the pullback reads the tape, never draws
    np.random.seed(3)
    assert s2sad.hessian(draws_in_a_loop)(x) == pytest.approx(
        sum(-np.sin(x * e) * e ** 3 for e in es))


def test_seeding_inside_the_function():
    rs = np.random.RandomState(1)
    r, u = rs.rand(), rs.uniform(-1.0, 1.0)
    assert s2sad.grad(seeds_itself)(2.0) == pytest.approx(r + 2 * u * 2.0)


def generator_api(x):
    rng = np.random.default_rng(0)
    return x * rng.normal() + np.sum(rng.uniform(size=2)) * x ** 2


def generator_argument(x, rng):
    return np.sum(x * rng.normal(size=x.shape))


def test_the_generator_api_draws_once_per_call():
    """np.random.default_rng and its methods are called as they are, in order: the
    derivative sees the draws the function sees (d/dx = n + 2 x (u0 + u1))."""
    rng = np.random.default_rng(0)
    n, u = rng.normal(), rng.uniform(size=2)
    for x in (1.0, -0.5):
        assert s2sad.grad(generator_api)(x) == pytest.approx(n + 2 * x * u.sum())
        out, out_dot = s2sad.jvp(generator_api)(x, 1.0)
        assert out == pytest.approx(generator_api(x))
        assert out_dot == pytest.approx(n + 2 * x * u.sum())


def test_a_generator_passed_in():
    x = np.array([1.0, 2.0, 3.0])
    expected = np.random.default_rng(7).normal(size=3)
    g = s2sad.grad(generator_argument)(x, np.random.default_rng(7))
    np.testing.assert_allclose(g, expected)
    src = s2sad.grad(generator_argument)
    src(x, np.random.default_rng(7))
    assert "rng.normal(size=" in src.source


def test_a_derivative_reaching_a_generator_method_is_refused():
    def bad(x, rng):
        return np.sum(rng.normal(loc=x))

    with pytest.raises(s2sad.S2SADError, match="not supported on a differentiated value"):
        s2sad.grad(bad, wrt=0)(np.ones(2), np.random.default_rng(0))



def normal_around(x):
    np.random.seed(0)
    return np.sum(np.random.normal(x, 1.0, 3))


def uniform_up_to(x):
    np.random.seed(0)
    return np.sum(np.random.uniform(0.0, x, 3))


@pytest.mark.parametrize("f", [normal_around, uniform_up_to], ids=lambda f: f.__name__)
def test_a_draw_whose_parameters_are_differentiated_is_refused(f):
    """np.random.normal(x, ...) and np.random.uniform(0, x, ...) took the draw as a constant:
    a derivative of 0, silently (finite differences of the seeded draw give 1 and u). As for
    a Generator's methods, refused, saying how to write the draw instead."""
    for mode in ("grad", "jvp"):
        d = getattr(s2sad, mode)(f)
        with pytest.raises(s2sad.NonDifferentiableError, match="draws with parameters") as e:
            d(np.ones(3)) if mode == "grad" else d(np.ones(3), np.ones(3))
        assert "standard_normal" in e.value.hint and e.value.lineno is not None
