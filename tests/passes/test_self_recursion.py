"""Issue 35: a function that calls itself gets a derivative that calls itself (a function
of the generated module calling itself by name, not the s2sad API while it runs), where
the recursive call's arguments have the kinds the derivative is compiled for; against
finite differences and analytic formulas, in both modes."""

import numpy as np
import pytest

import s2sad
from s2sad.errors import BackendError
from tests.oracle import numerical_grad, numerical_jvp

RNG = np.random.default_rng(35)


def _minor(a, j):
    return np.concatenate([a[1:, :j], a[1:, j + 1:]], axis=1)


def det_minors(a):
    n = a.shape[0]
    if n == 1:
        return a[0, 0]
    total = 0.0
    sign = 1.0
    for j in range(n):
        total += sign * a[0, j] * det_minors(_minor(a, j))
        sign = -sign
    return total


def power(x, n):  # the int is a value (n - 1 down to 0), not a size
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def poly_tail(c, x):  # Horner's rule by recursion on the coefficients' vector
    if c.shape[0] == 1:
        return c[0]
    return c[0] + x * poly_tail(c[1:], x)


def scaled_sum(x, k):  # a recursion on a vector and an int together
    if k == 0:
        return np.sum(np.sin(x))
    return np.cos(k * 0.1) * scaled_sum(x * 0.9, k - 1) + x[0] ** 2


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_determinant_by_minors_in_both_modes(n):
    a = RNG.standard_normal((n, n))
    # Jacobi's formula d det(a)/da = det(a) inv(a)^T, and finite differences
    expected = np.linalg.det(a) * np.linalg.inv(a).T
    g = s2sad.grad(det_minors)(a)
    np.testing.assert_allclose(g, expected, rtol=1e-9, atol=1e-10)
    (fd,) = numerical_grad(det_minors, (a,), (0,))
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    v = RNG.standard_normal((n, n))
    out, d = s2sad.jvp(det_minors)(a, v)
    assert out == pytest.approx(np.linalg.det(a), rel=1e-9, abs=1e-12)
    assert d == pytest.approx(numerical_jvp(det_minors, (a,), (0,), (v,)), rel=1e-6, abs=1e-8)
    out, pullback = s2sad.vjp(det_minors)(a)
    np.testing.assert_allclose(pullback(2.0)[0], 2.0 * expected, rtol=1e-9, atol=1e-10)


def test_the_derivatives_of_the_determinant_call_themselves():
    a = RNG.standard_normal((4, 4))
    src = s2sad.grad(det_minors).source_for(a)
    assert "s2sad.vjp(" not in src and "def det_minors_vjp(a):" in src
    vjp_body = src[src.index("def det_minors_vjp(a):"):]
    assert "det_minors_vjp(np.concatenate(" in vjp_body  # it calls itself
    jsrc = s2sad.jvp(det_minors).source_for(a, a)
    assert "s2sad.jvp(" not in jsrc
    assert jsrc.count("det_minors_jvp(") == 2  # its def, and its call of itself
    vsrc = s2sad.vjp(det_minors).source_for(a)
    assert "s2sad.vjp(" not in vsrc and vsrc.count("det_minors_vjp(") == 2


def test_recursion_on_an_int_value():
    for n in (0, 1, 2, 5, 9):
        x = 1.3
        assert s2sad.grad(power)(x, n) == pytest.approx(n * x ** (n - 1) if n else 0.0,
                                                         rel=1e-12, abs=1e-15)
        assert s2sad.jvp(power, wrt=0)(x, n, 1.0)[1] == pytest.approx(
            numerical_jvp(power, (x, n), (0,), (1.0,)), rel=1e-6, abs=1e-8)
    src = s2sad.grad(power).source_for(1.3, 4)
    assert "s2sad.vjp(" not in src and "power_vjp(x, n - 1)" in src
    jsrc = s2sad.jvp(power, wrt=0).source_for(1.3, 4, 1.0)
    assert "s2sad.jvp(" not in jsrc and "power_jvp(x, n - 1, " in jsrc


def test_recursion_on_a_shorter_vector():
    for m in (1, 2, 3, 6):
        c, x = RNG.standard_normal(m), 0.7
        got = s2sad.grad(poly_tail, wrt=(0, 1))(c, x)
        fd = numerical_grad(poly_tail, (c, x), (0, 1))
        np.testing.assert_allclose(got[0], fd[0], rtol=1e-6, atol=1e-8)
        assert got[1] == pytest.approx(fd[1], rel=1e-6, abs=1e-8)
        np.testing.assert_allclose(got[0], x ** np.arange(m), rtol=1e-12)  # analytic
        dc = RNG.standard_normal(m)
        _, d = s2sad.jvp(poly_tail)(c, x, dc, 0.5)
        assert d == pytest.approx(numerical_jvp(poly_tail, (c, x), (0, 1), (dc, 0.5)),
                                  rel=1e-6, abs=1e-8)
    assert "poly_tail_vjp(c[1:], x)" in s2sad.grad(poly_tail).source_for(c, x)


def test_recursion_on_an_array_and_an_int():
    x = RNG.standard_normal(4)
    for k in (0, 1, 4):
        g = s2sad.grad(scaled_sum)(x, k)
        (fd,) = numerical_grad(scaled_sum, (x, k), (0,))
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
        v = RNG.standard_normal(4)
        _, d = s2sad.jvp(scaled_sum, wrt=0)(x, k, v)
        assert d == pytest.approx(numerical_jvp(scaled_sum, (x, k), (0,), (v,)),
                                  rel=1e-6, abs=1e-8)
    assert "s2sad.vjp(" not in s2sad.grad(scaled_sum).source_for(x, 3)


def test_second_order_through_a_recursion_is_still_refused_clearly():
    # (as before issue 35: the derivative a recursion calls has no rule of its own)
    with pytest.raises(s2sad.MissingRuleError, match="second derivative through a recursive"):
        s2sad.grad(s2sad.grad(power))(0.8, 5)


def flat_det(v, n):  # its recursive call is on a matrix: another rank than v's
    if n == 1:
        return np.sum(v[0])
    a = v.reshape(n, n)
    return a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0] + flat_det(a[:1, :1] ** 2, 1)


def test_a_recursion_on_another_rank_keeps_the_dispatched_call():
    v = RNG.standard_normal(4)
    g = s2sad.grad(flat_det, wrt=0)(v, 2)
    (fd,) = numerical_grad(flat_det, (v, 2), (0,))
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    # (its derivative is another specialisation: asked of s2sad while the code runs)
    assert "s2sad.vjp(flat_det" in s2sad.grad(flat_det, wrt=0).source_for(v, 2)


def test_numba_compiles_the_self_recursive_jvp():
    pytest.importorskip("numba")
    a, v = RNG.standard_normal((5, 5)), RNG.standard_normal((5, 5))
    jvp = s2sad.jvp(det_minors, backend="numba")
    out, d = jvp(a, v)
    assert out == pytest.approx(np.linalg.det(a), rel=1e-9)
    assert d == pytest.approx(numerical_jvp(det_minors, (a,), (0,), (v,)), rel=1e-6, abs=1e-8)
    assert "@numba.njit" in jvp.source and "def det_minors_jvp(a, a_dot):" in jvp.source
    assert jvp.source.count("det_minors_jvp(") == 2
    _, d = s2sad.jvp(power, wrt=0, backend="numba")(1.3, 6, 1.0)
    assert d == pytest.approx(6 * 1.3 ** 5, rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_numba_compiles_the_self_recursive_gradient(n):
    # a recursive call returning one number: the module's value-and-gradient function,
    # calling itself, the gradient scaled by the call's cotangent (no pullback closure)
    pytest.importorskip("numba")
    a = RNG.standard_normal((n, n))
    expected = np.linalg.det(a) * np.linalg.inv(a).T  # Jacobi's formula
    g = s2sad.grad(det_minors, backend="numba")(a)
    np.testing.assert_allclose(g, expected, rtol=1e-9, atol=1e-10)
    (fd,) = numerical_grad(det_minors, (a,), (0,))
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    value, g = s2sad.value_and_grad(det_minors, backend="numba")(a)
    assert value == pytest.approx(np.linalg.det(a), rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(g, expected, rtol=1e-9, atol=1e-10)
    value, pullback = s2sad.vjp(det_minors, backend="numba")(a)
    np.testing.assert_allclose(pullback(-1.5)[0], -1.5 * expected, rtol=1e-9, atol=1e-10)


def test_the_numba_gradient_calls_itself_readably():
    pytest.importorskip("numba")
    a = RNG.standard_normal((4, 4))
    src = s2sad.grad(det_minors, backend="numba").source_for(a)
    assert "s2sad.vjp(" not in src and "pullback" not in src
    assert src.count("@numba.njit") == 2  # the gradient, the function it calls
    body = src[src.index("def det_minors_value_and_grad(a):"):]
    assert "det_minors_value_and_grad(np.concatenate(" in body  # it calls itself
    assert "(a_bar,)" in body  # its value and gradient
    # the cotangent of the call scales the gradient it returned
    assert "det_minors_value_bar * det_minors_gradient" in src


def test_numba_gradients_of_recursions_on_numbers_and_vectors():
    pytest.importorskip("numba")
    for n in (0, 1, 5):
        g = s2sad.grad(power, backend="numba")(1.3, n)
        assert g == pytest.approx(n * 1.3 ** (n - 1) if n else 0.0, rel=1e-12, abs=1e-15)
    src = s2sad.grad(power, backend="numba").source_for(1.3, 4)
    assert "power_value_and_grad(x, n - 1)" in src
    for m in (1, 2, 5):
        c, x = RNG.standard_normal(m), 0.7
        got = s2sad.grad(poly_tail, wrt=(0, 1), backend="numba")(c, x)
        np.testing.assert_allclose(got[0], x ** np.arange(m), rtol=1e-12)  # analytic
        fd = numerical_grad(poly_tail, (c, x), (0, 1))
        np.testing.assert_allclose(got[0], fd[0], rtol=1e-6, atol=1e-8)
        assert got[1] == pytest.approx(fd[1], rel=1e-6, abs=1e-8)


def smooth(x, k):  # a recursion returning a vector
    if k == 0:
        return x
    return np.sin(smooth(x, k - 1)) * x


def test_numba_refuses_a_self_recursive_vjp_of_a_vector_naming_the_call():
    x, w = RNG.standard_normal(4), RNG.standard_normal(4)
    _, pullback = s2sad.vjp(smooth, wrt=0)(x, 3)  # (NumPy: the closure form)
    (fd,) = numerical_grad(lambda x, k: w @ smooth(x, k), (x, 3), (0,))
    np.testing.assert_allclose(pullback(w)[0], fd, rtol=1e-6, atol=1e-8)
    pytest.importorskip("numba")
    with pytest.raises(BackendError) as info:
        s2sad.vjp(smooth, wrt=0, backend="numba")(x, 3)
    message = str(info.value)
    assert "the call of `smooth`" in message and "recursive" in message
    assert info.value.lineno is not None and "smooth(x, k - 1)" in message
