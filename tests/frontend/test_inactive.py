"""Code that carries no derivative runs as written (issue 32): counters on `self`, logs,
plots, warnings, `with`, `try`, `raise`, writes into arrays the function created; and facts
known while compiling (flags, option strings, None, hasattr, x.ndim) decide branches, the
other branch never lowered. Every derivative is checked against central differences (first
and second order), the side effects are counted, and a changed fact compiles again."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2sad
from tests.oracle import numerical_grad, rng_for

# ---------------------------------------------------------------- the functions


class Counted:  # SciPy's benchmark functions start with this line
    def __init__(self):
        self.nfev = 0

    def fun(self, x):
        self.nfev += 1
        return np.sum(x ** 2 * np.sin(x))


LOG: list = []


def logs_to_an_outer_list(x):
    LOG.append(float(x[0]))
    return np.sum(np.exp(x) * x)


PLOTTED: list = []


def plot(ax, y):
    PLOTTED.append((ax, y.copy()))


def plots_when_asked(x, ax=None):
    y = x * 2.0
    if ax:
        plot(ax, y)
    return np.sum(np.cos(y) * y)


def plots_always(x):
    plot(None, x * 2.0)  # a call of user code, its result unused, an active argument
    return np.sum(x ** 3)


def under_errstate(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
    return np.sum(y * x)


def warns(x):
    if np.any(x < 0):
        warnings.warn("negative")
    return np.sum(x ** 2 * x)


def returns_a_gradient_on_request(x, grad=False):
    v = np.sum(np.sin(x) ** 2)
    if grad:
        return v, 2 * np.sin(x) * np.cos(x)
    return v


class Model:
    def loglike(self, p):
        off = self.offset if hasattr(self, "offset") else 0.0
        return np.sum((p + off) ** 3)


def option(x, which="a"):
    if which == "a":
        return np.sum(x ** 3)
    elif which == "b":
        return np.sum(np.sin(x))
    else:
        raise ValueError(which)


def by_rank(x):
    if x.ndim == 1:
        y = x * 2
    return np.sum(y ** 3)


def fills(x):
    buf = np.empty(3)
    buf.fill(1.5)
    return np.sum(x * buf * x)


def fills_the_diagonal(x):
    m = np.zeros((3, 3))
    np.fill_diagonal(m, 2.0)
    return np.sum((m @ x) ** 2)


def layers(params, x):
    for W in params:
        outputs = np.tanh(x @ W)
        x = outputs
    return np.sum(outputs)


def machine_epsilon(x):
    return np.sum(np.log(x + np.finfo(float).eps))


def made_dtype(x):
    # a dtype made while compiling and passed on (as scipy.special.lambertw does): the
    # generated code spelled it `np.dtype` (the class), which NumPy refuses as a dtype=
    k = np.asarray(2, dtype=np.dtype("long"))
    return np.sum(x ** k) * np.asarray(1.5, dtype=np.dtype(">f8"))


def tries(x):
    try:
        k = int("3")
    except ValueError:
        k = 1
    return np.sum(x ** k)


def nested_scope(x):
    out = [x]

    def g(h):
        out = np.tanh(h)  # not the enclosing list
        return out - np.sum(out)

    out.append(g(x))
    return np.sum(out[1] ** 2)


def checks_and_raises(x):
    if np.any(x > 100.0):
        raise ValueError(f"too large: {x}")
    y = x * 1.5
    for i in range(2):
        if y[i] > 50.0:
            raise RuntimeError("diverged")
        y = y * np.cos(y)
    return np.sum(y)


POSITIVE = np.array([0.5, 1.3, 2.1])

# (function, arguments, expected number of effects per derivative call or None)
CASES = [
    ("counted", lambda: Counted().fun, (POSITIVE,)),
    ("outer_list", lambda: logs_to_an_outer_list, (POSITIVE,)),
    ("plot_flag", lambda: plots_when_asked, (POSITIVE, "axes")),
    ("plot_none", lambda: plots_when_asked, (POSITIVE, None)),
    ("plot_call", lambda: plots_always, (POSITIVE,)),
    ("errstate", lambda: under_errstate, (POSITIVE,)),
    ("warns", lambda: warns, (POSITIVE,)),
    ("flag_false", lambda: returns_a_gradient_on_request, (POSITIVE, False)),
    ("hasattr", lambda: Model().loglike, (POSITIVE,)),
    ("option_a", lambda: option, (POSITIVE, "a")),
    ("option_b", lambda: option, (POSITIVE, "b")),
    ("ndim", lambda: by_rank, (POSITIVE,)),
    ("fill", lambda: fills, (POSITIVE,)),
    ("fill_diagonal", lambda: fills_the_diagonal, (POSITIVE,)),
    ("finfo", lambda: machine_epsilon, (POSITIVE,)),
    ("dtype", lambda: made_dtype, (POSITIVE,)),
    ("try", lambda: tries, (POSITIVE,)),
    ("nested_scope", lambda: nested_scope, (POSITIVE,)),
    ("raises_not", lambda: checks_and_raises, (POSITIVE,)),
]


@pytest.mark.parametrize("name, make, args", CASES, ids=[c[0] for c in CASES])
def test_gradient_against_finite_differences(name, make, args):
    f = make()
    x = args[0] * rng_for(name).uniform(0.8, 1.2, args[0].shape)
    full = (x,) + args[1:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected = numerical_grad(f, full, (0,))[0]
        np.testing.assert_allclose(s2sad.grad(f)(*full), expected, rtol=1e-6, atol=1e-8)
        out, pullback = s2sad.vjp(f, wrt=0)(*full)
        assert out == pytest.approx(f(*full))
        np.testing.assert_allclose(pullback(1.0)[0], expected, rtol=1e-6, atol=1e-8)
        v = rng_for(name, "v").standard_normal(x.shape)
        _, out_dot = s2sad.jvp(f, wrt=0)(*full, v)
        assert out_dot == pytest.approx(float(expected @ v), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("name, make, args",
                         [c for c in CASES if c[0] in ("counted", "plot_flag", "errstate",
                                                       "option_b", "try", "fill_diagonal",
                                                       "raises_not", "nested_scope")],
                         ids=lambda c: c if isinstance(c, str) else "")
def test_second_order(name, make, args):
    f = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert s2sad.check_grads(f, args, order=2, wrt=0)
        h = s2sad.hessian(f)(*args)
        g = s2sad.grad(f)
        expected = np.stack([
            (g(*((args[0] + 1e-5 * e,) + args[1:])) - g(*((args[0] - 1e-5 * e,) + args[1:])))
            / 2e-5 for e in np.eye(args[0].size)])
        np.testing.assert_allclose(h, expected, rtol=1e-5, atol=1e-6)


def test_a_list_of_arrays_argument_read_by_a_loop():
    rng = rng_for("layers")
    params = [rng.standard_normal((3, 3)) * 0.5 for _ in range(2)]
    x = rng.standard_normal(3)
    got = s2sad.grad(layers, wrt=1)(params, x)
    np.testing.assert_allclose(got, numerical_grad(layers, (params, x), (1,))[0], rtol=1e-6,
                               atol=1e-8)


def test_side_effects_happen_once_per_derivative_call():
    c = Counted()
    x = POSITIVE
    s2sad.grad(c.fun)(x)
    s2sad.grad(c.fun)(x)
    assert c.nfev == 2
    _, pullback = s2sad.vjp(c.fun)(x)
    assert c.nfev == 3
    pullback(1.0)
    pullback(2.0)
    assert c.nfev == 3  # a pullback never runs them again
    s2sad.jvp(c.fun)(x, np.ones(3))
    s2sad.value_and_grad(c.fun)(x)
    assert c.nfev == 5
    del LOG[:]
    s2sad.grad(logs_to_an_outer_list)(x)
    assert LOG == [x[0]] and isinstance(LOG[0], float)
    del PLOTTED[:]
    s2sad.grad(plots_when_asked)(x, "axes")
    s2sad.grad(plots_when_asked)(x, None)
    assert len(PLOTTED) == 1 and PLOTTED[0][0] == "axes"
    np.testing.assert_allclose(PLOTTED[0][1], 2 * x)  # the primal value it was given
    with pytest.warns(UserWarning, match="negative"):
        s2sad.grad(warns)(-x)


def test_the_generated_source_shows_the_statements():
    src = s2sad.grad(Counted().fun).source_for(POSITIVE)
    assert "self.nfev = " in src and "# line" in src
    src = s2sad.grad(fills_the_diagonal).source_for(POSITIVE)
    assert "np.fill_diagonal(m" in src
    src = s2sad.grad(under_errstate).source_for(POSITIVE)
    assert "__enter__()" in src and "__exit__(None, None, None)" in src
    src = s2sad.grad(checks_and_raises).source_for(POSITIVE)
    assert _raises(src) == 2
    src = s2sad.grad(option).source_for(POSITIVE, "b")
    assert "np.cos" in src and "ValueError" not in src  # only the branch that runs
    explained = s2sad.grad(checks_and_raises, explain=True).source_for(POSITIVE)
    assert _raises(explained) == 2


def _raises(source: str) -> int:
    return sum(line.strip().startswith("raise ") for line in source.splitlines())


def test_a_changed_fact_compiles_the_other_branch():
    x = POSITIVE
    g = s2sad.grad(option)
    np.testing.assert_allclose(g(x, "a"), 3 * x ** 2)
    np.testing.assert_allclose(g(x, "b"), np.cos(x))
    np.testing.assert_allclose(g(x), 3 * x ** 2)
    with pytest.raises(ValueError, match="c"):
        g(x, "c")  # raised as the function raises it
    m = Model()
    g = s2sad.grad(m.loglike)
    np.testing.assert_allclose(g(x), 3 * x ** 2)
    m.offset = 1.0
    np.testing.assert_allclose(g(x), 3 * (x + 1.0) ** 2)
    del m.offset
    np.testing.assert_allclose(g(x), 3 * x ** 2)
    r = s2sad.grad(returns_a_gradient_on_request)
    np.testing.assert_allclose(r(x, False), np.sin(2 * x))
    with pytest.raises(s2sad.S2SADError, match="scalar"):
        r(x, True)  # returns a tuple: no gradient
    np.testing.assert_allclose(r(x, grad=False), np.sin(2 * x))


def test_a_raise_on_a_path_that_runs_raises():
    with pytest.raises(ValueError, match="too large"):
        s2sad.grad(checks_and_raises)(POSITIVE * 1000)
    with pytest.raises(RuntimeError, match="diverged"):
        s2sad.grad(checks_and_raises)(np.array([40.0, 1.0, 1.0]))


class Cache:
    def stores_and_reads_back(self, x):
        self.cache = x * 2.0
        return np.sum(self.cache ** 2)

    def stores_for_later(self, x):
        self.last = x * 2.0
        return np.sum(x ** 2)


def copies_into(x):
    z = np.zeros(3)
    np.copyto(z, x)
    return np.sum(z)


def writes_into_its_argument(a):
    a[0] = 0.0
    return a


def calls_a_writer(x):
    y = x * 1.0
    writes_into_its_argument(y)
    return np.sum(y ** 2)


def test_what_a_derivative_would_need_is_refused():
    with pytest.raises(s2sad.NonDifferentiableError, match="read back") as info:
        s2sad.grad(Cache().stores_and_reads_back)(POSITIVE)
    assert info.value.lineno is not None
    c = Cache()
    np.testing.assert_allclose(s2sad.grad(c.stores_for_later)(POSITIVE), 2 * POSITIVE)
    np.testing.assert_allclose(c.last, 2 * POSITIVE)  # stored as written: the primal value
    with pytest.raises(s2sad.NonDifferentiableError, match="in place"):
        s2sad.grad(copies_into)(POSITIVE)
    # a helper's write into the array it is given is the caller's new version of it
    np.testing.assert_allclose(s2sad.grad(calls_a_writer)(POSITIVE),
                               numerical_grad(calls_a_writer, (POSITIVE,), (0,))[0],
                               rtol=1e-6)
    assert s2sad.grad(calls_a_writer)(POSITIVE)[0] == 0.0


# a function whose source cannot be read (as a Cython method's), that fills its `out`
_NAMESPACE: dict = {}
exec("def fill_doubled(v, loss_out):\n    loss_out[...] = 2.0 * v\n", _NAMESPACE)
fill_doubled = _NAMESPACE["fill_doubled"]


def fills_a_buffer(x):
    buf = np.empty_like(x)
    fill_doubled(x, loss_out=buf)  # (scikit-learn's losses: self.closs.loss(..., loss_out=buf))
    return np.sum(buf * x)


def fills_a_buffer_with_constants(x):
    buf = np.empty(3)
    fill_doubled(np.arange(3.0), loss_out=buf)
    return np.sum(buf * x)


def test_a_call_that_may_fill_a_buffer_is_never_silently_zero():
    """A call made for its effect and given an array the function allocated may write into
    it: where a derivative reaches it, it is refused (it ran as written and the gradient
    through the buffer was silently zero)."""
    with pytest.raises(s2sad.NonDifferentiableError, match="allocated"):
        s2sad.grad(fills_a_buffer)(POSITIVE)
    with pytest.raises(s2sad.NonDifferentiableError, match="allocated"):
        s2sad.jvp(fills_a_buffer)(POSITIVE, np.ones(3))
    # where no derivative reaches it, it runs as written and fills the buffer
    np.testing.assert_allclose(s2sad.grad(fills_a_buffer_with_constants)(POSITIVE),
                               2.0 * np.arange(3.0))


def reads_a_dtype_from_an_opaque_helper(x):
    dtype = _opaque("floating_dtype")(x)  # an unreadable call, given a differentiated x
    return np.sum(np.asarray(x, dtype=dtype) ** 2)


def uses_an_opaque_result(x):
    return np.sum(_opaque("scaled")(x) ** 2)


def _opaque(name):
    return OPAQUE[name]


OPAQUE: dict = {}


def test_an_unreadable_call_is_refused_only_where_its_result_carries_a_derivative():
    """Activity is forward and backward (Tapenade's varied and useful): a call the compiler
    cannot read may receive a differentiated value where what it returns reaches the output
    through no derivative (a dtype, a shape, a flag); where it does, it is refused."""
    namespace: dict = {"np": np}
    exec("def floating_dtype(a):\n    return np.result_type(a, 1.0)\n"
         "def scaled(a):\n    return a * 2.0\n", namespace)
    OPAQUE.update(floating_dtype=namespace["floating_dtype"], scaled=namespace["scaled"])
    np.testing.assert_allclose(s2sad.grad(reads_a_dtype_from_an_opaque_helper)(POSITIVE),
                               2 * POSITIVE)
    _, out_dot = s2sad.jvp(reads_a_dtype_from_an_opaque_helper)(POSITIVE, np.ones(3))
    assert out_dot == pytest.approx(2 * np.sum(POSITIVE))
    with pytest.raises(s2sad.S2SADError, match="source"):
        s2sad.grad(uses_an_opaque_result)(POSITIVE)


def by_kind(x, kind):
    if kind == "a":
        y = x * 2.0
    elif kind == "b":
        y = np.sin(x) * 3.0
    elif kind == "c":
        y = x * 4.0
    return np.sum(y ** 2)


def test_a_test_computed_while_lowering_decides_the_branch():
    """`kind == "b"` of a helper's constant argument is computed while lowering: only the
    branch that runs is lowered (the chain has no `else`; an `if` on the constant merged
    `y` as undefined, and scikit-learn's mixture log-density returned None)."""
    x = POSITIVE
    np.testing.assert_allclose(s2sad.grad(lambda v: by_kind(v, "b"))(x),
                               numerical_grad(lambda v: by_kind(v, "b"), (x,), (0,))[0],
                               rtol=1e-6, atol=1e-8)
    out, _ = s2sad.vjp(lambda v: by_kind(v, "c") * np.ones(2))(x)
    np.testing.assert_allclose(out, by_kind(x, "c") * np.ones(2))


def test_a_dtype_made_while_compiling_is_written_as_one():
    g = s2sad.grad(made_dtype)
    g(POSITIVE)
    assert f"np.dtype({np.dtype('long').name!r})" in g.source and "np.dtype('>f8')" in g.source


class Settings:
    scale = 2.0


SETTINGS = Settings()
POWER = 2


def scaled_by_getattr(x):
    return getattr(SETTINGS, "scale") * np.sum(x ** 2)


class Shifted:
    def loglike(self, p):
        if hasattr(self, "shift"):  # (no `self.shift` read anywhere: the test alone)
            return np.sum((p + 1.0) ** 2)
        return np.sum(p ** 2)


def power_in_a_try(x):
    try:
        k = POWER + 1
    except TypeError:
        k = 1
    return np.sum(x ** k)


def test_what_lowering_read_is_read_again_when_it_changes():
    """Facts a branch or a constant came from are guarded, or read where the code runs:
    getattr of a data attribute, hasattr with no attribute read beside it, and a global a
    `try` reads (each gave the old derivative after the change)."""
    global POWER
    x = POSITIVE
    g = s2sad.grad(scaled_by_getattr)
    np.testing.assert_allclose(g(x), 4.0 * x)
    SETTINGS.scale = 5.0
    try:
        np.testing.assert_allclose(g(x), 10.0 * x)
    finally:
        SETTINGS.scale = 2.0
    m = Shifted()
    g = s2sad.grad(m.loglike)
    np.testing.assert_allclose(g(x), 2.0 * x)
    m.shift = True
    np.testing.assert_allclose(g(x), 2.0 * (x + 1.0))
    g = s2sad.grad(power_in_a_try)
    np.testing.assert_allclose(g(x), 3.0 * x ** 2)
    POWER = 3
    try:
        np.testing.assert_allclose(g(x), 4.0 * x ** 3)
    finally:
        POWER = 2


def errstate_around_nothing_needed(x):
    with np.errstate(divide="ignore"):
        unused = np.log(x)  # noqa: F841 (not needed by the output)
    return np.sum(x ** 2)


def test_an_errstate_around_statements_not_needed_is_dropped_with_them():
    src = s2sad.grad(errstate_around_nothing_needed).source_for(POSITIVE)
    assert "np.errstate" not in src and "__enter__" not in src, src
    np.testing.assert_allclose(s2sad.grad(errstate_around_nothing_needed)(POSITIVE),
                               2 * POSITIVE)
