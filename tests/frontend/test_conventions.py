"""Calling conventions and objects real libraries use (issue 33): `f(*t)`, `f(**d)`, a
function's `*args` forwarded, a helper's `**kwargs`, functools.partial made inside, map /
filter / sorted / reduce, generator helpers, helpers returning dicts, callable objects
passed directly, and objects made inside the function (records of their attributes, their
methods inlined). Every derivative against central differences, in both modes and at
second order."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import s2sad
from tests.oracle import numerical_grad, rng_for

RS = np.random.RandomState(0)


def noise_times(m):
    return np.sum(np.sin(m) * RS.randn(*m.shape))  # *args in a call: an inactive value


def quadratic(x, a, b):
    return np.sum(a * x ** 2 + b * np.sin(x))


def forwards(x, *args):  # SciPy's fun(x, *args)
    return quadratic(x, *args)


def zipped(x):
    a, b = zip(*[(x[0], x[1]), (x[2], x[0])])
    return sum(a) * sum(b) + np.sum(x ** 3)


def power_sum(x, **kw):
    return np.sum(x ** kw.get("p", 2)) * kw.get("scale", 1.0)


def keywords(x):
    options = {"p": 3, "scale": 0.5}
    return power_sum(x, **options) + power_sum(x, p=4)


def partial_inside(x):
    return functools.partial(quadratic, a=2.0, b=1.5)(x)


def mapped(x):
    odd = list(filter(lambda v: v % 2 == 1, [0, 1, 2]))
    parts = map(lambda t, k: np.sin(t) * k, [x[0], x[1], x[2]], [1.0, 2.0, 3.0])
    return sum(parts) + functools.reduce(lambda u, v: u * v, [x[0], x[1], x[2]]) + \
        sum(x[i] ** 2 for i in odd)


def doubled(x):
    for i in range(3):
        yield x[i] * 2.0 + x[(i + 1) % 3] ** 2


def generator_helper(x):
    return sum(doubled(x)) + sum(v ** 2 for v in doubled(x))


def as_dict(x):
    return {"a": x[0] ** 2, "b": np.sin(x[1]), "c": x}


def dict_helper(x):
    d = as_dict(x)
    return d["a"] * d["b"] + np.sum(d["c"] ** 2)


def sorted_dict(d):
    return sum(d[k] ** 2 * i for i, k in enumerate(sorted(d)))


class Link:
    def __call__(self, p):
        return np.log(p / (1 - p))


class Kernel:
    def __init__(self, ls):
        self.ls = ls

    def __call__(self, X):
        d = X[:, None] - X[None, :]
        return np.exp(-0.5 * d ** 2 / self.ls ** 2)

    def with_ls(self, ls):
        return Kernel(ls)


K0 = Kernel(1.0)
XS = np.array([0.1, 0.5, 0.9, 1.4])


def kernel_sum(log_ls):
    return np.sum(K0.with_ls(np.exp(log_ls))(XS))


class Layer:
    def __init__(self, W, scale=1.0):
        self.W = W
        self.scale = scale

    @property
    def weights(self):
        return self.W * self.scale

    def forward(self, x):
        return np.tanh(self.weights @ x)


class Scaled(Layer):
    def __init__(self, W):
        super().__init__(W, scale=0.5)

    def forward(self, x):
        return super().forward(x) * 2.0


def layers(W, x):
    for layer in [Layer(W), Scaled(W)]:
        x = layer.forward(x)
    return np.sum(x ** 2)


class Accumulator:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def add(self, v):
        self.total = self.total + v
        self.count += 1


def accumulates(x):
    acc = Accumulator()
    acc.add(np.sum(x ** 2))
    acc.add(np.sum(np.sin(x)))
    return acc.total / acc.count


X3 = np.array([0.3, 0.6, 0.9])

CASES = [
    ("star_call", noise_times, (X3,)),
    ("forwarded_args", forwards, (X3, 2.0, 1.5)),
    ("zip_star", zipped, (X3,)),
    ("kwargs", keywords, (X3,)),
    ("partial", partial_inside, (X3,)),
    ("map_filter_reduce", mapped, (X3,)),
    ("generator", generator_helper, (X3,)),
    ("dict_helper", dict_helper, (X3,)),
    ("object_inside", kernel_sum, (0.2,)),
    ("layers", layers, (np.eye(3) * 0.7 + 0.1, X3)),
    ("records", accumulates, (X3,)),
]


@pytest.mark.parametrize("name, f, args", CASES, ids=[c[0] for c in CASES])
def test_against_finite_differences(name, f, args):
    state = RS.get_state()
    expected = numerical_grad(_fixed_noise(f, state), args, (0,))[0]
    RS.set_state(state)
    np.testing.assert_allclose(s2sad.grad(f)(*args), expected, rtol=1e-6, atol=1e-8)
    RS.set_state(state)
    if f is forwards:  # (a JVP's flat form cannot tell *args from tangents: the reverse mode)
        assert s2sad.check_grads(f, args, wrt=0, order=2, modes=("rev",))
        return
    assert s2sad.check_grads(_fixed_noise(f, state), args, wrt=0, order=2)


def _fixed_noise(f, state):
    """f with the global RandomState reset before each call (the same draws each time)."""
    if f is not noise_times:
        return f

    def g(m):
        RS.set_state(state)
        return noise_times(m)
    return g


def test_sorted_over_a_dict_argument():
    d = {"b": 1.5, "a": 2.0, "c": -0.5}
    g = s2sad.grad(sorted_dict)(d)
    assert list(g) == ["b", "a", "c"]
    # sorted keys a, b, c get weights 0, 1, 2: d/dk = 2 k_value * weight
    assert g == pytest.approx({"a": 0.0, "b": 2 * 1.5, "c": 2 * 2 * -0.5})


def test_a_callable_object_passed_directly():
    p = np.array([0.3, 0.6])
    out, pullback = s2sad.vjp(Link())(p)
    np.testing.assert_allclose(out, np.log(p / (1 - p)))
    np.testing.assert_allclose(pullback(np.ones(2))[0], 1 / (p * (1 - p)))
    assert s2sad.check_grads(Link(), (p,), order=2)


def test_the_object_is_guarded_like_a_global():
    class Affine:
        def __init__(self, a):
            self.a = a

        def __call__(self, x):
            return self.a * x ** 2
    f = Affine(2.0)
    g = s2sad.grad(f)
    assert g(3.0) == pytest.approx(12.0)
    f.a = 5.0
    assert g(3.0) == pytest.approx(30.0)


def returns_an_object(x):
    return Kernel(x)


def writes_in_a_branch(x):
    k = Kernel(1.0)
    if np.sum(x) > 0:
        k.ls = 2.0
    return np.sum(k(x))


def test_what_stays_refused_says_so():
    with pytest.raises(s2sad.UnsupportedSyntaxError, match="Kernel` object"):
        s2sad.grad(lambda x: np.sum(returns_an_object(x)))(X3)
    with pytest.raises(s2sad.UnsupportedSyntaxError, match="branch or loop"):
        s2sad.grad(writes_in_a_branch)(X3)


def test_scipy_array_api_dispatch_is_seen_through():
    """scipy.optimize.rosen goes through SciPy's array_namespace / xp_promote and
    `xp.sum(..., dtype=x.dtype)`: checked against SciPy's own hand-written derivatives."""
    optimize = pytest.importorskip("scipy.optimize")
    x = rng_for("rosen").uniform(-1.0, 1.5, 5)
    np.testing.assert_allclose(s2sad.grad(optimize.rosen)(x), optimize.rosen_der(x),
                               rtol=1e-12)
    np.testing.assert_allclose(s2sad.hessian(optimize.rosen)(x), optimize.rosen_hess(x),
                               rtol=1e-12, atol=1e-12)
    v = rng_for("rosen", "v").standard_normal(5)
    _, out_dot = s2sad.jvp(optimize.rosen)(x, v)
    assert out_dot == pytest.approx(optimize.rosen_der(x) @ v, rel=1e-12)


def sum_in_float64(x):
    return np.sum(x ** 2, dtype=np.float64) + np.mean(x, dtype=x.dtype)


def test_a_reduction_with_dtype_is_a_cast():
    x = np.array([0.5, 1.5, -2.0], dtype=np.float32)
    g = s2sad.grad(sum_in_float64)(x)
    assert g.dtype == np.float32  # a cotangent has its primal's dtype
    np.testing.assert_allclose(g, 2 * x + 1 / 3, rtol=1e-6)
    xd = x.astype(np.float64)
    np.testing.assert_allclose(s2sad.grad(sum_in_float64)(xd),
                               numerical_grad(sum_in_float64, (xd,), (0,))[0], rtol=1e-6)


STATS_CASES = [("norm", ()), ("gamma", (2.5,)), ("beta", (2.0, 3.0)), ("lognorm", (0.6,)),
               ("laplace", ()), ("cauchy", ()), ("invgamma", (3.0,)), ("gumbel_r", ())]


@pytest.mark.parametrize("name, shapes", STATS_CASES, ids=[c[0] for c in STATS_CASES])
def test_scipy_stats_distributions_as_written(name, shapes):
    """scipy.stats' rv_continuous(*args, **kwds) machinery: logpdf and cdf in loc and scale,
    logpdf in the shape parameters, against central differences."""
    stats = pytest.importorskip("scipy.stats")
    dist = getattr(stats, name)
    y = dist.ppf(np.array([0.2, 0.45, 0.7]), *shapes) * 1.05 + 0.02

    def in_loc_scale(params):
        loc, scale = params[0], np.exp(params[1])
        return np.sum(dist.logpdf(y, *shapes, loc=loc, scale=scale)) + \
            np.sum(dist.cdf(y, *shapes, loc=loc, scale=scale))

    def in_shapes(params):
        if len(shapes) == 0:  # (decided while compiling: `shapes` is a closure tuple)
            rest = ()
        elif len(shapes) == 1:
            rest = (params[0],)
        else:
            rest = (params[0], params[1])
        return np.sum(dist.logpdf(y, *rest, loc=0.01, scale=1.2))

    p = np.array([0.01, 0.05])
    np.testing.assert_allclose(s2sad.grad(in_loc_scale)(p),
                               numerical_grad(in_loc_scale, (p,), (0,))[0], rtol=1e-5, atol=1e-7)
    if shapes:
        q = np.array(shapes, dtype=float)
        np.testing.assert_allclose(s2sad.grad(in_shapes)(q),
                                   numerical_grad(in_shapes, (q,), (0,))[0], rtol=1e-5,
                                   atol=1e-7)


def test_wrt_names_an_argument_of_star_args():
    """wrt= an index past a function's own parameters names one of its *args (JAX's
    argnums): scipy.stats' `logpdf(x, *args, **kwds)` differentiated in its shape; and a
    primitive taking (x, *args) is called with them by position (norm.cdf's loc, scale)."""
    stats = pytest.importorskip("scipy.stats")
    special = pytest.importorskip("scipy.special")
    g = s2sad.grad(stats.gamma.logpdf, wrt=(0, 1))(1.5, 2.0)
    assert g[0] == pytest.approx(1.0 / 1.5 - 1.0, rel=1e-12)  # (a - 1) / x - 1
    assert g[1] == pytest.approx(np.log(1.5) - special.digamma(2.0), rel=1e-12)
    _, out_dot = s2sad.jvp(stats.gamma.logpdf, wrt=1)(1.5, 2.0, 1.0)
    assert out_dot == pytest.approx(g[1], rel=1e-12)
    x = np.array([0.2, 0.5])
    out, pullback = s2sad.vjp(stats.norm.cdf, wrt=0)(x, 0.3, 1.7)
    np.testing.assert_allclose(out, stats.norm.cdf(x, 0.3, 1.7))
    np.testing.assert_allclose(pullback(np.ones(2))[0], stats.norm.pdf(x, 0.3, 1.7))
