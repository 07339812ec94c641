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


# -- item 17: a Jacobian with respect to an argument the output ignores --------------------


def _fd_jacobian(f, args, i, eps=1e-6):
    """Central differences: d f(args) / d args[i], of shape out.shape + arg.shape."""
    x = np.asarray(args[i], dtype=np.float64)
    out_shape = np.shape(f(*args))
    jac = np.zeros(out_shape + x.shape)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        plus = list(args)
        minus = list(args)
        plus[i], minus[i] = x + e, x - e
        if not x.shape:
            plus[i], minus[i] = float(plus[i]), float(minus[i])
        jac[(Ellipsis,) + k] = (np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * eps)
    return jac


IGNORING = {
    "array_out": lambda a, b: np.sin(b),
    "matrix_out": lambda a, b: np.outer(np.ones(2), np.sin(b)),
    "scalar_out": lambda a, b: np.sum(np.sin(b)),
    "constant_out": lambda a, b: np.ones(3),
}


@pytest.mark.parametrize("mode", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("wrt", [0, 1, (0, 1), (1, 0)], ids=str)
@pytest.mark.parametrize("name", list(IGNORING))
def test_jacobian_of_an_ignored_argument_has_the_output_shape_first(name, wrt, mode):
    """jacrev wrote the zero block of an argument the output ignores as arg.shape +
    out.shape ((2, 3, 4) for out (4,), arg (2, 3)); it is out.shape + arg.shape."""
    f = IGNORING[name]
    rng = np.random.default_rng(36)
    args = (rng.standard_normal((2, 3)), rng.standard_normal(4))
    jac = getattr(s2sad, mode)(f, wrt=wrt)(*args)
    blocks = jac if isinstance(wrt, tuple) else (jac,)
    for i, block in zip(wrt if isinstance(wrt, tuple) else (wrt,), blocks):
        expected = _fd_jacobian(f, args, i)
        assert np.shape(block) == expected.shape
        assert_close(np.asarray(block), expected)


@pytest.mark.parametrize("mode", ["jacrev", "jacfwd"])
def test_jacobian_of_an_ignored_scalar_argument(mode):
    f = lambda s, b: (np.cos(b), s * 2.0)  # noqa: E731
    args = (0.7, np.array([0.1, 0.2, 0.3]))
    (j_cos, j_s) = getattr(s2sad, mode)(f, wrt=0)(*args)
    assert_close(np.asarray(j_cos), np.zeros(3))
    assert_close(float(j_s), 2.0)
    (j_cos, j_s) = getattr(s2sad, mode)(f, wrt=1)(*args)
    assert_close(j_cos, np.diag(-np.sin(args[1])))
    assert_close(j_s, np.zeros(3))


@pytest.mark.parametrize("wrt", [(0, 1), (1, 0)], ids=str)
def test_hessian_blocks_of_separate_arguments(wrt):
    """d/da d/db of a sum of separate terms: zero blocks of shape a.shape + b.shape."""
    def f(a, b):
        return np.sum(a ** 3) + np.sum(np.sin(b))

    a, b = np.array([[0.5, -0.5, 1.0], [2.0, 1.5, -1.0]]), np.array([0.1, 0.2, 0.3, 0.4])
    h = s2sad.hessian(f, wrt=wrt)(a, b)
    args = (a, b)
    diag = {0: np.diag(6.0 * a.ravel()).reshape(a.shape + a.shape),
            1: np.diag(-np.sin(b))}
    for r, i in enumerate(wrt):
        for c, j in enumerate(wrt):
            expected = diag[i] if i == j else np.zeros(args[i].shape + args[j].shape)
            assert_close(h[r][c], expected)


# -- item 4: an output without derivative (a bool, an int) is refused ----------------------


def is_close(x):
    return np.allclose(x, x * 3.0 / 3.0)


def above(x):
    return x > 1.5


def how_many(x):
    return len(x)


def where_largest(x):
    return np.argmax(x)


def count_above(x):
    return np.sum(x > 1.0)


def truncated(x):
    return (x * 2.0).astype(int)


def chosen(x):
    return np.where(x > 1.5, 1, 0)


def counts(x):
    return np.argmax(x), len(x)


NO_DERIVATIVE = {
    is_close: "a bool (the result of np.allclose)",
    above: "a bool array of shape (3,)",
    how_many: "an int",
    where_largest: "an int (the result of np.argmax)",
    count_above: "an int (the result of np.sum)",
    truncated: "an int array of shape (3,)",
    chosen: "an int array of shape (3,)",
    counts: "a tuple of bools and ints only",
}

ALL_MODES = {
    "grad": lambda f, x: s2sad.grad(f)(x),
    "value_and_grad": lambda f, x: s2sad.value_and_grad(f)(x),
    "vjp": lambda f, x: s2sad.vjp(f)(x),
    "jvp": lambda f, x: s2sad.jvp(f)(x, np.ones_like(x)),
    "jacrev": lambda f, x: s2sad.jacrev(f)(x),
    "jacfwd": lambda f, x: s2sad.jacfwd(f)(x),
    "hessian": lambda f, x: s2sad.hessian(f)(x),
    "hvp": lambda f, x: s2sad.hvp(f)(x, np.ones_like(x)),
}


@pytest.mark.parametrize("mode", list(ALL_MODES))
@pytest.mark.parametrize("f", list(NO_DERIVATIVE), ids=lambda f: f.__name__)
def test_an_output_without_derivative_is_refused(f, mode):
    """grad(lambda x: np.allclose(x, ...)) returned zeros: a bool or int output carries no
    derivative, and is refused (as JAX refuses grad of an int output)."""
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(s2sad.NonDifferentiableError) as e:
        ALL_MODES[mode](f, x)
    inner = "grad" if mode in ("hessian", "hvp") else mode
    assert f"{inner} needs a float output, but {f.__name__} returns " \
        f"{NO_DERIVATIVE[f]}" in str(e.value)
    assert e.value.loc is not None and e.value.loc.lineno > 0


def rounded(x):
    return np.sum(np.round(x))


def fraction_above(x):
    return np.mean(x > 1.0)


def constant(x):
    return 3.0


@pytest.mark.parametrize("f", [rounded, fraction_above, constant], ids=lambda f: f.__name__)
def test_a_float_output_keeps_its_zero_derivative(f):
    x = np.array([0.3, 1.2, 2.6])
    assert_close(s2sad.grad(f)(x), numerical_grad(f, (x,), (0,))[0])
    _, pullback = s2sad.vjp(f)(x)
    assert_close(pullback(1.0)[0], np.zeros(3))
    assert_close(float(s2sad.jvp(f)(x, np.ones(3))[1]), 0.0)
    assert_close(s2sad.jacrev(f)(x), np.zeros(3))
    assert_close(s2sad.jacfwd(f)(x), np.zeros(3))


def loss_and_count(x):
    return np.sum(x ** 2), np.sum(x > 1.0)


def test_an_int_item_beside_a_float_one_is_kept():
    x = np.array([0.3, 1.2, 2.6])
    (loss, n), pullback = s2sad.vjp(loss_and_count)(x)
    assert n == 2
    assert_close(pullback((1.0, None))[0], 2.0 * x)
    (_, _), (loss_dot, n_dot) = s2sad.jvp(loss_and_count)(x, np.ones(3))
    assert_close(float(loss_dot), float(np.sum(2.0 * x)))
    assert float(n_dot) == 0.0


# -- item 10: the flat form of a JVP with defaulted parameters, and JAX's form --------------


def spaced(x, y, num=50):
    return x * y * num


def spaced_float(x, y, num=50.0):
    return np.sin(x) * y * num


def test_jvp_tangents_follow_the_arguments_given():
    """jvp(f)(x, y, x_dot, y_dot) of f(x, y, num=50) took x_dot as num; the tangents follow
    the arguments given, and num left out is its default, not differentiated."""
    d = s2sad.jvp(spaced)
    for _ in range(3):  # the slow path, the router's installation, the router
        out, out_dot = d(2.0, 3.0, 1.0, 0.5)
        assert out == pytest.approx(300.0)
        assert out_dot == pytest.approx(3.0 * 50 * 1.0 + 2.0 * 50 * 0.5)
    out, out_dot = d(primals=(2.0, 3.0), tangents=(1.0, 0.5))  # JAX's form
    assert (out, out_dot) == pytest.approx((300.0, 200.0))
    out, out_dot = d(2.0, 3.0, x_dot=1.0, y_dot=0.5)
    assert (out, out_dot) == pytest.approx((300.0, 200.0))
    out, out_dot = d(2.0, 3.0, 1.0, 0.5, num=4)  # a default given by keyword: an option
    assert (out, out_dot) == pytest.approx((24.0, 16.0))


def test_jvp_of_a_defaulted_argument_given_by_position():
    x, y, num = 0.4, 3.0, 2.5
    d = s2sad.jvp(spaced_float)
    for _ in range(3):
        out, out_dot = d(x, y, num, 1.0, 0.5, 2.0)
        expected = np.cos(x) * y * num + np.sin(x) * 0.5 * num + np.sin(x) * y * 2.0
        assert out_dot == pytest.approx(expected)
        out, out_dot = d(primals=(x, y, num), tangents=(1.0, 0.5, 2.0))
        assert out_dot == pytest.approx(expected)
        out, out_dot = d(x, y, 1.0, 0.5)
        assert out_dot == pytest.approx(np.cos(x) * y * 50.0 + np.sin(x) * 0.5 * 50.0)
    with pytest.raises(s2sad.WrtError, match="`num`: it is an int"):
        s2sad.jvp(spaced)(2.0, 3.0, 50, 1.0, 0.5, 0.0)  # given: differentiated, an int


@pytest.mark.parametrize("wrt", [0, "num", (0, 2)], ids=str)
def test_jvp_with_wrt_and_defaults(wrt):
    """With wrt, one tangent per wrt argument comes after the arguments given."""
    x, y = 0.4, 3.0
    grads = {0: np.cos(x) * y * 50.0, 2: np.sin(x) * y}
    indices = wrt if isinstance(wrt, tuple) else (0,) if wrt == 0 else (2,)
    tangents = [0.5 + i for i in range(len(indices))]
    expected = sum(grads[i] * t for i, t in zip(indices, tangents))
    d = s2sad.jvp(spaced_float, wrt=wrt)
    for _ in range(3):
        assert d(x, y, *tangents)[1] == pytest.approx(expected)
        assert d(x, y, 50.0, *tangents)[1] == pytest.approx(expected)
        assert d(primals=(x, y), tangents=tuple(tangents))[1] == pytest.approx(expected)


def test_jvp_calls_that_fit_no_split_are_explained():
    d = s2sad.jvp(spaced_float)
    with pytest.raises(TypeError, match="5 positional arguments fit none of: 2 arguments "
                                        "then 2 tangents; 3 arguments then 3 tangents"):
        d(0.4, 3.0, 2.0, 1.0, 0.5)
    with pytest.raises(TypeError, match=r"2 tangents for 3 differentiated arguments"):
        d(primals=(0.4, 3.0, 2.0), tangents=(1.0, 0.5))
    with pytest.raises(TypeError, match="primals= takes a tuple"):
        d(primals=0.4, tangents=(1.0,))


@pytest.mark.parametrize("mode", ["vjp", "grad", "value_and_grad", "jacfwd", "jacrev"])
def test_reverse_and_jacobians_differentiate_the_arguments_given(mode):
    """wrt=None: the required positional arguments and the defaulted ones given by
    position (vjp(f)(x, y) of f(x, y, num=50) refused num, an int it was not given)."""
    def run(*args, **kw):
        r = getattr(s2sad, mode)(spaced_float, wrt=None)(*args, **kw)
        if mode == "vjp":
            return r[1](1.0)
        return r[1] if mode == "value_and_grad" else r

    x, y = 0.4, 3.0
    for _ in range(3):
        assert_close(tuple(map(float, run(x, y))),
                     numerical_grad(spaced_float, (x, y), (0, 1)))
        assert_close(tuple(map(float, run(x, y, 2.0))),
                     numerical_grad(spaced_float, (x, y, 2.0), (0, 1, 2)))
        assert_close(tuple(map(float, run(x, y, num=2.0))),  # by keyword: an option
                     numerical_grad(spaced_float, (x, y), (0, 1), kwargs={"num": 2.0}))
    assert len(run(2.0, 3.0)) == 2
    d = getattr(s2sad, mode)(spaced, wrt=None)  # num, an int, is not differentiated
    assert len(d(2.0, 3.0)[1](1.0) if mode == "vjp" else d(2.0, 3.0)) == 2


def test_jvp_and_vjp_agree_with_defaults():
    x, y = np.array([0.3, -0.7]), np.array([1.5, 0.2])
    u, v = np.array([0.5, 1.0]), np.array([-1.0, 2.0])
    _, out_dot = s2sad.jvp(spaced_float)(x, y, u, v)
    _, pullback = s2sad.vjp(spaced_float)(x, y)
    w = np.array([0.25, -1.5])
    gx, gy = pullback(w)
    assert float(np.sum(w * out_dot)) == pytest.approx(float(np.sum(gx * u) + np.sum(gy * v)))


def test_routed_calls_follow_changed_defaults():
    def f(x, y, num=50.0):
        return x * y * num

    d, g = s2sad.jvp(f), s2sad.grad(f, wrt=None)
    for _ in range(3):
        assert d(2.0, 3.0, 1.0, 0.0)[1] == pytest.approx(150.0)
        assert g(2.0, 3.0) == pytest.approx((150.0, 100.0))
    f.__defaults__ = (2.0,)
    for _ in range(3):
        assert d(2.0, 3.0, 1.0, 0.0)[1] == pytest.approx(6.0)
        assert g(2.0, 3.0) == pytest.approx((6.0, 4.0))
    calls = d._slow_calls
    d(2.0, 3.0, 1.0, 0.0)
    assert d._slow_calls == calls  # (the router fills in the new default)


HVP_LIKE = {
    "hvp": lambda f: s2sad.hvp(f),
    "jvp(grad)": lambda f: (lambda *a, **k: s2sad.jvp(s2sad.grad(f), wrt=0)(*a, **k)[1]),
    "grad_and_hvp": lambda f: (lambda *a, **k: s2sad.grad_and_hvp(f)(*a, **k)[1]),
}


@pytest.mark.parametrize("f", [cubes, cubes_kwonly], ids=["default", "kwonly"])
@pytest.mark.parametrize("name", list(HVP_LIKE))
def test_hvp_with_defaults(f, name):
    """hvp(f)(x, v) of f(p, scale=1.0) gave v to scale."""
    d = HVP_LIKE[name](f)
    p, v = np.array([0.5, -1.5]), np.array([1.0, 2.0])
    for _ in range(3):
        assert_close(d(p, v), 6.0 * p * v)
        assert_close(d(p, v, scale=2.0), 3.0 * p * v)
        if f is cubes:
            assert_close(d(p, 2.0, v), 3.0 * p * v)


# -- item 11: every calling convention on the dispatcher's fast path -----------------------


def scipy_objective(x, *args):
    """SciPy's convention: the extra arguments of the objective by *args."""
    a, b = args if args else (1.0, 100.0)
    return np.sum((a - x[:-1]) ** 2 + b * (x[1:] - x[:-1] ** 2) ** 2)


def test_star_args_calls_take_the_fast_path_and_stay_right():
    """A function taking *args had no dispatcher (every call bound and keyed its
    arguments: 66 us against 8 us); each specialisation now has its fast path, and calls
    of other extra arguments still get their own."""
    g = s2sad.grad(scipy_objective)
    x = np.array([0.5, -0.3, 1.2])
    calls = [(), (1.0, 100.0), (2.0, 10.0), (np.float64(2.0), 10.0), (2.0, np.array(10.0))]
    for _ in range(3):
        for extra in calls:
            expected = numerical_grad(scipy_objective, (x,) + extra, (0,))[0]
            assert_close(g(x, *extra), expected)
    slow = g._slow_calls
    for _ in range(5):
        g(x, 2.0, 10.0)
    assert g._slow_calls == slow  # (served by the dispatcher)


def test_star_args_jvp_and_vjp_take_the_fast_path():
    x, v = np.array([0.5, -0.3, 1.2]), np.array([1.0, -2.0, 0.5])
    j, r = s2sad.jvp(scipy_objective), s2sad.vjp(scipy_objective)
    for _ in range(3):
        for extra in [(2.0, 10.0), (1.0, 100.0)]:
            g = numerical_grad(scipy_objective, (x,) + extra, (0,))[0]
            out, out_dot = j(x, v, *extra)
            assert out == pytest.approx(scipy_objective(x, *extra))
            assert out_dot == pytest.approx(float(np.dot(g, v)), rel=1e-6)
            out, pullback = r(x, *extra)
            assert_close(pullback(1.0)[0], g)
    slow = (j._slow_calls, r._slow_calls)
    j(x, v, 2.0, 10.0)
    r(x, 2.0, 10.0)
    assert (j._slow_calls, r._slow_calls) == slow


def total_of(values, scale=1.0, *, power=2.0):
    return scale * sum(np.sum(v ** power) for v in values)  # (a number: grad's output)


def test_list_arguments_are_tested_item_by_item():
    """A list argument's fast path tests its length and each item's kind."""
    g = s2sad.grad(total_of)
    for _ in range(3):
        assert_close(g([0.5, 2.0]), [1.0, 4.0])
        assert_close(g([0.5, 2.0, 3.0]), [1.0, 4.0, 6.0])
        assert_close(g([np.array([1.0, 2.0]), 3.0], 2.0, power=3.0),
                     [np.array([6.0, 24.0]), 54.0])
        assert_close(g([np.array([1.0, 2.0, 3.0]), 3.0]), [np.array([2.0, 4.0, 6.0]), 6.0])
    slow = g._slow_calls
    g([0.5, 2.0])
    g([0.5, 2.0, 3.0])
    assert g._slow_calls == slow


def defaulted_sine(x, scale=1.0, *, k=2.0):
    return k * scale * np.sin(x)


def test_routed_jvp_with_keywords_takes_the_fast_path(monkeypatch):
    """jvp(f)(x, x_dot, scale=2.0): a defaulted argument by keyword is an option (not
    differentiated), served by the router without binding the call."""
    from s2sad.derivative import Derivative

    bound = []
    binder = Derivative._routed_bind
    monkeypatch.setattr(Derivative, "_routed_bind",
                        lambda self, *a, **k: bound.append(1) or binder(self, *a, **k))
    d = s2sad.jvp(defaulted_sine)
    x, v = 0.3, 1.0
    for _ in range(3):
        for kw in ({}, {"scale": 2.0}, {"k": 0.5}, {"scale": 2.0, "k": 0.5}):
            scale, k = kw.get("scale", 1.0), kw.get("k", 2.0)
            out, out_dot = d(x, v, **kw)
            assert (out, out_dot) == pytest.approx((k * scale * np.sin(x),
                                                    k * scale * np.cos(x) * v))
        out, out_dot = d(x, 2.0, v, 0.5)  # scale by position: differentiated
        assert out_dot == pytest.approx(2.0 * 2.0 * np.cos(x) * v + 2.0 * np.sin(x) * 0.5)
    slow = len(bound)
    d(x, v, scale=2.0)
    d(x, v, k=3.0)
    d(x, v)
    d(x, 2.0, v, 0.5)
    assert len(bound) == slow
    with pytest.raises(TypeError, match="fit none of"):  # a tangent twice: refused
        d(x, v, x_dot=1.0)


def test_a_routed_derivative_shows_the_source_it_ran():
    d = s2sad.jvp(spaced_float)
    d(0.4, 3.0, 1.0, 0.5)
    assert "def spaced_float_jvp(x, y, num, x_dot, y_dot):" in d.source
    assert d.compiled_function(0.4, 3.0, 50.0, 1.0, 0.5)[1] == pytest.approx(
        d(0.4, 3.0, 1.0, 0.5)[1])
    assert d.source_for(0.4, 3.0, 2.0, 1.0, 0.5, 0.0).count("_dot") > \
        d.source_for(0.4, 3.0, 1.0, 0.5).count("_dot")


# -- a derivative of a function with defaults, called inside a differentiated function ----


def cubed_sum(x, scale=1.0):
    return scale * np.sum(x ** 3)


def sum_of_gradient(x):
    return np.sum(s2sad.grad(cubed_sum)(x))


def sum_of_scaled_gradient(x):
    return np.sum(s2sad.grad(cubed_sum)(x, 2.0))


def directional(x):
    _, slope = s2sad.jvp(cubed_sum)(x, x)  # scale left out: the tangent follows x
    return slope


@pytest.mark.parametrize("f", [sum_of_gradient, sum_of_scaled_gradient, directional],
                         ids=lambda f: f.__name__)
def test_a_derivative_called_inside_takes_its_defaults(f):
    """Inlined, a derivative's call filled no default (`g_grad` takes 2 arguments, got 1)
    and bound a JVP's tangents after every parameter; it binds as a call outside does."""
    x = np.array([0.5, -1.0, 1.5])
    assert_close(s2sad.grad(f)(x), numerical_grad(f, (x,), (0,))[0])
    _, out_dot = s2sad.jvp(f)(x, np.ones(3))
    assert float(out_dot) == pytest.approx(float(np.sum(numerical_grad(f, (x,), (0,))[0])),
                                           rel=1e-6)


def test_a_transformation_of_a_routed_derivative_follows_its_arguments():
    """jacfwd(grad(g, wrt=None))(x) of g(x, scale=1.0) differentiated scale too (two
    blocks) while grad(g, wrt=None)(x) does not: the outer derivative follows the inner's
    arguments given."""
    x = np.array([1.0, 2.0])
    for _ in range(3):
        (h,) = s2sad.jacfwd(s2sad.grad(cubed_sum, wrt=None))(x)
        assert_close(h, np.diag(6.0 * x))
        (h_xx, h_xs), (h_sx, h_ss) = s2sad.jacrev(s2sad.grad(cubed_sum, wrt=None),
                                                  wrt=None)(x, 2.0)
        assert_close(h_xx, np.diag(12.0 * x))
        assert_close(h_xs, 3.0 * x ** 2)
        assert_close(h_sx, 3.0 * x ** 2)
        assert_close(float(h_ss), 0.0)
        (g,), (g_dot,) = s2sad.jvp(s2sad.grad(cubed_sum, wrt=None))(x, x)
        assert_close(g, 3.0 * x ** 2)
        assert_close(g_dot, 6.0 * x * x)
        _, pullback = s2sad.vjp(s2sad.grad(cubed_sum, wrt=None))(x)
        assert_close(pullback((x,))[0], 6.0 * x * x)
