"""Calling a derivative behaves like calling the function (issue #12, findings 3-8):
arguments, keys, aliasing, threads, types. Expected values are analytic or central
differences."""

from __future__ import annotations

import collections
import math
import sys
import threading

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for, vdot


def with_default(x, k=2.0):
    return k * x * x


def with_kwonly(x, y, *, k=3.0, axis=None):
    return np.sum(k * np.sin(x) * y, axis=axis)


def mean_sin(x):
    return np.mean(np.sin(x))


def dot(x, y):
    return np.sum(x * y)


def identity(x):
    return x


def add(x, y):
    return x + y


W = np.array([1.0, -2.0, 3.0])


def weighted(x):
    return np.sum(W * x)


# -- calling conventions --------------------------------------------------------------


def test_defaults_and_keywords():
    g = s2sad.grad(with_default)
    assert g(3.0) == pytest.approx(12.0)
    assert g(x=3.0) == pytest.approx(12.0)
    assert g(3.0, k=5.0) == pytest.approx(30.0)
    assert g(3.0, 5.0) == pytest.approx(30.0)
    assert g(3.0) == pytest.approx(12.0)  # through the fast path after a first call
    vg = s2sad.value_and_grad(with_default)
    assert vg(3.0) == pytest.approx((18.0, 12.0))
    out, dot_ = s2sad.jvp(with_default, wrt=0)(3.0, 2.0, 1.0)  # a JVP takes every argument
    assert (out, dot_) == pytest.approx((18.0, 12.0))


def test_keyword_only_parameters_pass_through():
    x, y = np.array([0.1, 0.5]), np.array([2.0, -1.0])
    g = s2sad.grad(with_kwonly, wrt=(0, 1))
    for kw in ({}, {"k": -1.5}, {"k": 0.5, "axis": None}):
        k = kw.get("k", 3.0)
        gx, gy = g(x, y, **kw)
        assert_close(gx, k * np.cos(x) * y)
        assert_close(gy, k * np.sin(x))


@pytest.mark.parametrize("first_call", [False, True])
def test_wrong_calls_name_the_function(first_call):
    g = s2sad.grad(with_default)
    if first_call:
        g(1.0)
    with pytest.raises(TypeError) as info:
        g()
    text = str(info.value)
    assert "with_default_grad" in text and "'x'" in text
    assert "dispatch" not in text and "a0" not in text
    with pytest.raises(TypeError, match="with_default_grad"):
        g(1.0, 2.0, 3.0)
    with pytest.raises(TypeError, match="with_default_grad"):
        g(1.0, z=2.0)


def test_numpy_and_math_callables_through_their_rules():
    assert s2sad.grad(np.sin)(0.3) == pytest.approx(math.cos(0.3))
    assert s2sad.grad(math.exp)(0.3) == pytest.approx(math.exp(0.3))
    x = np.array([0.2, 0.4])
    assert_close(s2sad.grad(np.sum)(x), np.ones(2))
    out, out_dot = s2sad.jvp(np.multiply)(2.0, 3.0, 1.0, 0.0)
    assert (out, out_dot) == pytest.approx((6.0, 3.0))
    assert_close(s2sad.jacfwd(np.tanh)(x), np.diag(1 - np.tanh(x) ** 2))


def test_a_callables_derivative_takes_its_options():
    """`grad(np.linalg.norm)(x, ord=1)`: the options a NumPy callable takes (by keyword or
    by position, after what it requires) reach its rule, known while compiling, and are
    not differentiated; a builtin whose signature Python cannot tell (math.hypot) takes its
    arguments. Each raised a bare TypeError ("norm_grad() got an unexpected keyword
    argument 'ord'", "no signature found for builtin")."""
    x, v = np.array([0.3, -0.5, 0.9]), np.array([1.0, 2.0, -1.0])
    for ord_ in (1, 3, np.inf):
        def norm(a, ord_=ord_):
            return np.linalg.norm(a, ord=ord_)
        (want,) = numerical_grad(norm, (x,), (0,))
        assert_close(s2sad.grad(np.linalg.norm)(x, ord=ord_), want, rtol=1e-6)
        assert_close(s2sad.grad(np.linalg.norm)(x, ord_), want, rtol=1e-6)  # by position
        _, t = s2sad.jvp(np.linalg.norm)(x, v, ord=ord_)
        assert t == pytest.approx(float(np.dot(want, v)), rel=1e-6)
        _, pullback = s2sad.vjp(np.linalg.norm)(x, ord=ord_)
        assert_close(pullback(2.0)[0], 2.0 * want, rtol=1e-6)

    def grad3(a):  # the analytic gradient of the 3-norm: sign(a) a^2 / |a|_3^2
        return np.sign(a) * a * a / np.linalg.norm(a, 3) ** 2

    want = numerical_jvp(grad3, (x,), (0,), (v,))
    assert_close(s2sad.hvp(np.linalg.norm)(x, v, ord=3), want, rtol=1e-6)
    assert_close(s2sad.hessian(np.linalg.norm)(x, ord=3) @ v, want, rtol=1e-6)
    assert_close(s2sad.grad(np.var)(x, ddof=1), 2.0 * (x - x.mean()) / 2.0)
    assert_close(s2sad.vjp(np.mean)(np.ones((2, 3)), axis=0)[1](np.arange(3.0))[0],
                 np.tile(np.arange(3.0) / 2.0, (2, 1)))
    inside = np.abs(x) < 0.4
    assert_close(s2sad.jvp(np.clip)(x, -0.4, 0.4, v)[1], np.where(inside, v, 0.0))
    assert s2sad.grad(math.hypot)(1.0, 2.0, 2.0) == pytest.approx(1.0 / 3.0)
    assert s2sad.jvp(math.hypot)(3.0, 4.0, 1.0, 0.0) == pytest.approx((5.0, 0.6))
    assert s2sad.grad(math.hypot, wrt=(0, 1))(3.0, 4.0) == pytest.approx((0.6, 0.8))
    d = s2sad.grad(np.linalg.norm)
    for _ in range(3):  # (from the second call on, the dispatcher serves it)
        assert_close(d(x), x / np.linalg.norm(x))
    assert_close(d(x, ord=1), np.sign(x))
    assert_close(d(x, 1), np.sign(x))
    with pytest.raises(TypeError, match="unexpected keyword argument 'order'"):
        d(x, order=1)
    with pytest.raises(TypeError, match="multiple values for argument 'ord'"):
        s2sad.grad(np.linalg.norm)(x, 1, ord=1)


def test_pullback_checks_its_seed():
    _, pullback = s2sad.vjp(np.tanh)(np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        pullback(np.ones(4))
    with pytest.raises(ValueError, match="real"):
        pullback(np.ones(3) * 1j)
    _, pullback = s2sad.vjp(add)(1.0, 2.0)
    with pytest.raises(ValueError, match=r"shape \(\)"):
        pullback(np.ones(2))
    assert pullback(1.0) == (1.0, 1.0)


def two_as_a_list(x):
    return [x * 2.0, x ** 2]


def test_pullback_of_a_list_takes_a_list_of_cotangents():
    # (a list of cotangents was refused: "needs a tuple of 2 cotangents")
    out, pullback = s2sad.vjp(two_as_a_list)(3.0)
    assert list(out) == [6.0, 9.0]
    assert pullback([1.0, 0.5]) == pytest.approx((2.0 + 0.5 * 6.0,))
    assert pullback((1.0, 0.5)) == pytest.approx((5.0,))
    with pytest.raises(ValueError, match="tuple of 2 cotangents"):
        pullback([1.0])


Pair = collections.namedtuple("Pair", "u v")


def pair_and_list(x):
    return (Pair(x * x, np.sin(x)), [x * 3.0, x])


def test_pullback_takes_cotangents_shaped_like_the_output():
    """A namedtuple's cotangents may be given as that namedtuple, at any depth (it was
    refused: "needs a tuple of 2 cotangents, got Pair"); shapes are still checked."""
    x = np.array([0.5, -0.2])
    _, pullback = s2sad.vjp(pair_and_list)(x)
    seed = (Pair(np.ones(2), 2.0 * np.ones(2)), [np.ones(2), np.zeros(2)])
    (got,) = pullback(seed)
    assert_close(got, 2.0 * x + 2.0 * np.cos(x) + 3.0)  # analytic: d/dx of <seed, f(x)>
    with pytest.raises(ValueError, match=r"out_bar\[0\]\[0\] of the output's shape"):
        pullback((Pair(np.ones(3), np.ones(2)), [np.ones(2), np.zeros(2)]))


# -- dispatch keys --------------------------------------------------------------------


def test_list_length_is_part_of_the_key():
    g = s2sad.grad(mean_sin)
    three, six = [0.1, 0.2, 0.3], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    assert_close(np.asarray(g(three)), np.cos(three) / 3)
    assert_close(np.asarray(g(six)), np.cos(six) / 6)
    assert_close(np.asarray(g(three)), np.cos(three) / 3)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.parametrize("make", [
    lambda a: np.ma.masked_array(a, mask=[0, 1, 0]),
    lambda a: np.asmatrix(a),
    lambda a: a.view(type("MyArray", (np.ndarray,), {})),
])
def test_ndarray_subclasses_refused(make):
    a = make(np.array([0.1, 0.2, 0.3]))
    with pytest.raises(s2sad.S2SADError) as info:
        s2sad.grad(mean_sin)(a)
    assert "np.asarray" in str(info.value) or "filled" in str(info.value)
    assert info.value.lineno is not None


@pytest.mark.parametrize("z", [1 + 2j, np.complex128(1 + 2j), np.array([1 + 2j])])
def test_complex_inputs_accepted_complex_grad_output_refused(z):
    # |z| moves by Re(conj(z) dz) / |z| (tests/rules/test_complex.py covers complex numbers)
    out, t = s2sad.jvp(np.abs)(z, np.full(np.shape(z), 1j)[()])
    np.testing.assert_allclose(out, np.abs(z))
    np.testing.assert_allclose(t, np.real(np.conj(z) * 1j) / np.abs(z))
    with pytest.raises(s2sad.S2SADError, match="complex") as err:  # grad needs a real output
        s2sad.grad(mean_sin)(z)
    assert "np.real" in str(err.value) and "vjp" in str(err.value)


# -- aliasing ------------------------------------------------------------------------


def test_gradient_is_not_an_argument():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    g = s2sad.grad(dot, wrt=1)(x, y)
    assert g is not x and not np.shares_memory(g, x)
    g *= 0.1  # an optimiser's update
    assert_close(x, np.array([1.0, 2.0]))
    g = s2sad.grad(weighted)(np.array([1.0, 2.0, 3.0]))
    assert not np.shares_memory(g, W)
    g[:] = 0.0
    assert_close(W, np.array([1.0, -2.0, 3.0]))


def test_cotangents_are_distinct_and_not_the_seed():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    _, pullback = s2sad.vjp(add)(x, y)
    seed = np.array([1.0, 1.0])
    gx, gy = pullback(seed)
    assert gx is not gy and gx is not seed and gy is not seed
    gx += 1.0
    assert_close(seed, np.ones(2))
    assert_close(pullback(seed)[1], np.ones(2))  # called again: not disturbed


def test_pullback_result_is_not_kept_by_the_closure():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    _, pullback = s2sad.vjp(dot)(x, y)
    gx, gy = pullback(1.0)
    gx *= 100.0
    gy *= 100.0
    assert_close(pullback(1.0), (y, x))


def test_tangent_is_not_the_input_tangent():
    v = np.array([1.0, 2.0])
    _, t = s2sad.jvp(identity)(np.zeros(2), v)
    assert t is not v
    t *= 3.0
    assert_close(v, np.array([1.0, 2.0]))


# -- threads --------------------------------------------------------------------------


def fresh_function(x, y):
    return np.sum(np.tanh(x) * y)


def test_first_calls_from_many_threads():
    kinds = [np.ones(n) * 0.3 for n in (1, 2, 3, 4, 5, 6)] + [0.3, np.float64(0.3)]
    d = s2sad.grad(fresh_function)
    vg = s2sad.value_and_grad(fresh_function)
    errors, results = [], {}
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)

    def work(k):
        try:
            x = kinds[k % len(kinds)]
            results[k] = (x, d(x, 2.0), vg(x, 2.0)[1])
        except Exception as e:  # noqa: BLE001 - recorded for the assertion
            errors.append(repr(e))

    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors
    for x, g, g2 in results.values():
        expected = 2.0 * (1 - np.tanh(x) ** 2)
        assert_close(np.asarray(g), np.asarray(expected), check_kind=False)
        assert_close(np.asarray(g2), np.asarray(expected), check_kind=False)


# -- types ----------------------------------------------------------------------------


def layer(W, x):
    return np.sum(np.maximum(W @ x, 0.0) ** 2) + np.mean(np.broadcast_to(x, (2, 3)))


def test_float32_in_float32_out():
    rng = np.random.default_rng(0)
    W = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    x = rng.uniform(-1, 1, 3).astype(np.float32)
    gW, gx = s2sad.grad(layer, wrt=(0, 1))(W, x)
    assert gW.dtype == np.float32 and gx.dtype == np.float32
    eW, ex = numerical_grad(layer, (W.astype(float), x.astype(float)), (0, 1))
    assert_close(gW, eW.astype(np.float32), rtol=1e-4, atol=1e-5)
    assert_close(gx, ex.astype(np.float32), rtol=1e-4, atol=1e-5)
    out, t = s2sad.jvp(layer, wrt=1)(W, x, x)
    assert np.asarray(t).dtype == np.float32
    _, pullback = s2sad.vjp(np.tanh)(x)
    assert pullback(np.ones(3, np.float32))[0].dtype == np.float32
    assert s2sad.hessian(mean_sin)(x).dtype == np.float32
    assert s2sad.grad(math.sin)(np.float32(0.5)).dtype == np.float32


def weighted_by_float32(x, w):
    return np.sum(np.sin(x) * w) + np.sum(x * w)


def test_a_float64_argument_beside_a_float32_one_gets_a_float64_derivative():
    """Each derivative in its argument's precision (JAX's convention). The float64 one was
    computed, and returned, in float32: NumPy keeps float32 where a float32 value meets the
    seed 1.0, and sums in it."""
    rng = rng_for("mixed precision")
    x = rng.uniform(-1, 1, 1000)
    w = rng.uniform(-1, 1, 1000).astype(np.float32)
    gx, gw = s2sad.grad(weighted_by_float32, wrt=(0, 1))(x, w)
    assert gx.dtype == np.float64 and gw.dtype == np.float32
    assert_close(gx, np.cos(x) * w + w, rtol=1e-6)  # (w's float32 values, exactly)
    _, pullback = s2sad.vjp(weighted_by_float32, wrt=(0, 1))(x, w)
    assert [g.dtype for g in pullback(1.0)] == [np.float64, np.float32]
    assert s2sad.grad(weighted_by_float32, wrt=0)(0.5, w).dtype == np.float64


# -- values the code is specialised on ------------------------------------------------


def arange_of_floats(x):
    i = np.arange(1.0, 6)[:, None]
    return np.sum(np.sum(i * x, axis=1) ** 2)


def arange_scaled(x):
    return np.sum(np.exp(x * (np.arange(1.0, 3.0) / 3.0)))


A_LIST = [3.0, 5.0]


def list_constant(x):
    return np.sum(x[0] - [3.0, 5.0])


def list_global(x):
    return np.sum(np.exp(x[0] - A_LIST))


def arange_of_argument(x, n):
    return np.sum(np.arange(n) * x)


@pytest.mark.parametrize("f, x", [
    (arange_of_floats, np.array([0.1, 0.2, 0.3, 0.4, 0.5])),
    (arange_scaled, np.array([0.3, -0.2])),
    (list_constant, np.array([0.3, -0.2])),
    (list_global, np.array([0.3, -0.2])),
])
def test_compile_time_values_both_modes(f, x):
    rng = np.random.default_rng(1)
    v = rng.uniform(-1, 1, x.shape)
    u = 1.0
    _, jv = s2sad.jvp(f)(x, v)
    assert_close(jv, numerical_jvp(f, (x,), (0,), (v,)))
    g = s2sad.grad(f)(x)
    assert_close(g, numerical_grad(f, (x,), (0,))[0])
    assert vdot(u, jv) == pytest.approx(vdot(g, v))  # <u, J v> = <J^T u, v>


def test_shape_from_a_float_argument():
    g = s2sad.grad(arange_of_argument)
    assert g(0.5, 3.0) == pytest.approx(3.0)  # 0 + 1 + 2
    assert g(0.5, 4.0) == pytest.approx(6.0)  # 0 + 1 + 2 + 3


def _power(x, n):
    return 1.0 if n == 0 else x * _power(x, n - 1)


def test_a_recursion_too_deep_for_python_is_a_clear_error():
    g = s2sad.grad(_power)
    limit = sys.getrecursionlimit()
    for call in range(3):  # the first call (slow path), then through the dispatcher
        with pytest.raises(s2sad.RecursionLimitError) as info:
            g(1.0, 10 * limit)
        assert isinstance(info.value, RecursionError)  # what code catching it expects
        assert f"recursion limit of {limit}" in str(info.value)
        assert "sys.setrecursionlimit" in str(info.value)
        assert info.value.__suppress_context__  # not a chain of a thousand tracebacks
        assert g(1.5, 3) == pytest.approx(3 * 1.5 ** 2)  # d/dx x^3, after the error
    out, pullback = s2sad.vjp(_power, wrt=0)(1.0, limit // 4)
    assert out == 1.0 and pullback(1.0) == (pytest.approx(limit // 4),)


def test_the_derivative_of_a_recursion_reaches_a_third_of_its_depth():
    # each level of the derivative takes 3 Python frames where the function takes 1 (the
    # derivative object's call, its dispatcher, the generated code); this pins the count,
    # a fourth frame per level would fail it
    g = s2sad.grad(_power)
    g(1.0, 2), g(1.0, 3)  # the dispatcher installed
    depth = sys.getrecursionlimit() // 3 - 20
    assert g(1.0001, depth) == pytest.approx(depth * 1.0001 ** (depth - 1))


# -- check_grads with defaults ------------------------------------------------------------


def scaled_sine(x, y=2.0, *, scale=1.5):
    return scale * np.sum(np.sin(x) * y)


def misdifferentiated(x):
    return np.sum(np.sin(x))


def test_check_grads_of_a_function_with_default_arguments():
    """check_grads(f, (x,)) of f(x, y=2.0) raised IndexError (wrt covered y, not given) and
    then TypeError (the JVP's tangent landed on y)."""
    from s2sad.check import check_grads

    x = np.array([0.3, -0.4, 0.8])
    assert check_grads(scaled_sine, (x,))
    assert check_grads(scaled_sine, (x, 0.7), kwargs={"scale": -1.0})
    assert check_grads(scaled_sine, (x,), wrt=0)
    with pytest.raises(TypeError, match="only 1 argument"):
        check_grads(scaled_sine, (x,), wrt=(0, 1))


def test_check_grads_finds_a_wrong_rule():
    from s2sad.check import check_grads
    from tests.rule_table import restored_rule_table

    with restored_rule_table():  # np.sin's rules, off by a factor of 2
        s2sad.defjvp(np.sin)(lambda x, x_dot: 2.0 * np.cos(x) * x_dot)
        s2sad.defvjp(np.sin)(lambda g, x: 2.0 * g * np.cos(x))
        with pytest.raises(AssertionError, match="finite differences"):
            check_grads(misdifferentiated, (np.array([0.3, 0.5]),))
    assert check_grads(misdifferentiated, (np.array([0.3, 0.5]),))


def sine_sum(x):
    return np.sum(np.sin(x))


def two_outputs(x, y, *, scale=1.0):
    return np.sin(x) * y * scale, x * x * y, len(x)


def test_check_grads_to_higher_order():
    """check_grads(order=2) checks the derivatives of the derivatives against finite
    differences (forward: of the JVP's tangent in the arguments and tangents; reverse: of
    the VJP J^T u in the arguments and u), as JAX's check_grads does; it raised
    NotImplementedError. A rule right at first order whose own derivative is wrong (np.cos's,
    which np.sin's rule calls, with the sign flipped) passes order 1 and fails order 2."""
    from s2sad.check import check_grads
    from tests.rule_table import restored_rule_table

    x, y = np.array([0.3, -0.4, 0.8]), np.array([1.2, 0.5, -0.7])
    assert check_grads(two_outputs, (x, y), order=2, kwargs={"scale": 2.0})
    assert check_grads(sine_sum, (x,), order=3)
    assert check_grads(two_as_a_list, (0.7,), order=2)  # a list of outputs
    assert check_grads(sine_sum, (x,), order=2, modes=("rev",))
    with restored_rule_table():
        s2sad.defjvp(np.cos)(lambda x, x_dot: np.sin(x) * x_dot)
        s2sad.defvjp(np.cos)(lambda g, x: g * np.sin(x))
        assert check_grads(sine_sum, (x,), order=1)
        for modes in (("fwd",), ("rev",)):
            with pytest.raises(AssertionError, match="checked to order 2"):
                check_grads(sine_sum, (x,), order=2, modes=modes)
    with pytest.raises(ValueError, match="positive int"):
        check_grads(sine_sum, (x,), order=0)


def test_a_tangent_given_where_a_default_parameter_sits_is_explained():
    """jvp(f)(x, v) of f(x, y=2.0): the tangents follow the arguments given (issue 36 item
    10; it gave v to y before), and a count that fits no split is explained."""
    x, v = np.array([0.3, -0.4, 0.8]), np.ones(3)
    _, tangent = s2sad.jvp(scaled_sine)(x, v)  # y left out: its default, not differentiated
    assert tangent == pytest.approx(float(numerical_jvp(scaled_sine, (x,), (0,), (v,))))
    with pytest.raises(TypeError, match=r"takes the arguments of \(x, y=2.0, \*, "
                                        r"scale=1.5\), then one tangent per differentiated "
                                        "argument") as e:
        s2sad.jvp(scaled_sine)(x, 2.0, v)
    assert "1 argument then 1 tangent; 2 arguments then 2 tangents" in str(e.value)
    _, tangent = s2sad.jvp(scaled_sine)(x, 2.0, v, 0.0)
    assert tangent == pytest.approx(float(numerical_jvp(scaled_sine, (x,), (0,), (v,))))


def with_int_and_bool_outputs(x):
    return np.sum(x ** 2), len(x), x > 0


def test_pullback_takes_none_for_int_and_bool_outputs():
    """An int or bool output carries no derivative: its cotangent may be None (or bools, as
    np.zeros_like(out) gives); a bool seed was refused as 'not numeric'."""
    x = np.array([0.3, -0.5, 0.8])
    _, pullback = s2sad.vjp(with_int_and_bool_outputs)(x)
    for seed in ((1.5, None, None), (1.5, 0, np.zeros(3, bool))):
        np.testing.assert_allclose(pullback(seed)[0], 3.0 * x)
    with pytest.raises(ValueError, match=r"numeric out_bar\[0\]"):
        pullback((None, None, None))  # (the float output needs its cotangent)


def masked_entries(x):
    return x[x > 0] * 2.0


def test_grad_of_an_output_of_data_dependent_size_is_refused():
    """Its kind is an array of unknown size: taking it for one entry (as generic code may,
    for `.source`) gave the gradient of its sum, silently."""
    with pytest.raises(s2sad.NonDifferentiableError, match="needs a scalar output"):
        s2sad.grad(masked_entries)(np.array([0.3, -0.5, 0.8]))
