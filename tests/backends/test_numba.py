"""backend="numba" (issue 19): the same derivative, compiled by Numba.

Oracles: central finite differences (tests/oracle.py) and the NumPy backend's result for
the same call; the two backends agree within floating-point reassociation (rtol 1e-9).
JVP and VJP of the Numba backend agree with each other (the dot-product test). What Numba
cannot compile is refused with an S2SADError naming the user's line, never a Numba
traceback. Compiling with Numba takes about half a second per function: the default suite
runs a representative part of the corpus, the sweep over all of it is marked slow.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import s2sad
from s2sad.errors import BackendError

numba = pytest.importorskip("numba")

try:  # works both with and without tests/__init__.py
    from tests import oracle
    from tests.corpus import programs
except ImportError:  # pragma: no cover
    import oracle
    from corpus import programs

AGREE_RTOL, AGREE_ATOL = 1e-9, 1e-12  # the two backends: reassociation only

# scalar code, branches, for and while loops (taped), an inlined helper in a loop, arrays
# (elementwise, in-place updates, a matrix-vector product)
REPRESENTATIVE = ["poly_scalar", "kwonly_scale", "bool_ops_branch", "for_fibonacci",
                  "while_newton_sqrt", "while_break", "helper_in_loop", "matvec_loss"]


def _agree(actual, expected, what):
    oracle.assert_close(actual, expected, AGREE_RTOL, AGREE_ATOL, what=what)


def _check_vjp(case, rng):
    """The Numba VJP against the NumPy backend's and finite differences; JVP and VJP of
    the Numba backend agree (<u, J v> = <J^T u, v>)."""
    args = case.args(rng)
    out, pullback = s2sad.vjp(case.fn, wrt=case.wrt, backend="numba")(*args, **case.kwargs)
    out_np, pullback_np = s2sad.vjp(case.fn, wrt=case.wrt)(*args, **case.kwargs)
    _agree(out, out_np, f"{case.name}: value")
    u = oracle.random_like(rng, out_np)
    cots = pullback(u)
    _agree(cots, pullback_np(u), f"{case.name}: cotangents against the NumPy backend")
    expected = oracle.numerical_vjp(case.fn, args, case.wrt_idx, u, kwargs=case.kwargs)
    oracle.assert_close(cots, expected, what=f"{case.name}: cotangents against FD")
    v = [oracle.random_like(rng, args[i]) for i in case.wrt_idx]
    jvp = s2sad.jvp(case.fn, wrt=case.wrt, backend="numba")
    out_j, out_dot = jvp(*args, *v, **case.kwargs)
    _agree(out_j, out_np, f"{case.name}: JVP's value")
    _, out_dot_np = s2sad.jvp(case.fn, wrt=case.wrt)(*args, *v, **case.kwargs)
    _agree(out_dot, out_dot_np, f"{case.name}: tangent against the NumPy backend")
    oracle.assert_close(out_dot, oracle.numerical_jvp(case.fn, args, case.wrt_idx, v,
                                                      kwargs=case.kwargs),
                        what=f"{case.name}: tangent against FD")
    assert math.isclose(oracle.vdot(u, out_dot), oracle.vdot(cots, v), rel_tol=1e-9,
                        abs_tol=1e-12), f"{case.name}: <u, J v> != <J^T u, v>"


@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_corpus_programs(name):
    case = programs.BY_NAME[name]
    _check_vjp(case, oracle.rng_for(name, "numba"))


@pytest.mark.slow
@pytest.mark.parametrize("case", programs.CASES, ids=programs.CASE_IDS)
def test_whole_corpus(case):
    """Every corpus program: compiled by Numba and right, or refused with an S2SADError."""
    try:
        _check_vjp(case, oracle.rng_for(case.name, "numba sweep"))
    except s2sad.S2SADError as e:
        assert "Traceback" not in str(e) and "numba/core" not in str(e)


# -- the workloads Numba is for: scalar loops -------------------------------------------


def pendulum(a, b):
    """100 explicit Euler steps of x'' = -a sin(x) - b x' (bench/workloads.py (b))."""
    dt = 0.05
    x = 1.0
    v = 0.0
    for i in range(100):
        acc = -a * math.sin(x) - b * v
        x = x + dt * v
        v = v + dt * acc
    return x * x + v * v


def rosenbrock(x):
    a = x[1:] - x[:-1] * x[:-1]
    b = 1.0 - x[:-1]
    return np.sum(100.0 * a * a + b * b)


def test_scalar_loop_gradient():
    g = s2sad.grad(pendulum, wrt=(0, 1), backend="numba")
    got = g(1.3, 0.2)
    assert all(type(c) is float for c in got)
    oracle.assert_close(got, oracle.numerical_grad(pendulum, (1.3, 0.2), (0, 1)))
    _agree(got, s2sad.grad(pendulum, wrt=(0, 1))(1.3, 0.2), "pendulum gradient")
    value, got2 = s2sad.value_and_grad(pendulum, wrt=(0, 1), backend="numba")(1.3, 0.2)
    _agree(value, pendulum(1.3, 0.2), "value")
    _agree(got2, got, "value_and_grad's gradient")


def test_source_is_what_numba_compiles():
    g = s2sad.grad(pendulum, wrt=(0, 1), backend="numba")
    g(1.3, 0.2)
    source = g.source
    assert "@numba.njit" in source and "import numba" in source
    assert "reversed(" not in source  # a tape read by index
    assert "# reverse of line" in source  # the comments pointing back stay
    assert source != s2sad.grad(pendulum, wrt=(0, 1)).source_for(1.3, 0.2)  # keyed apart
    # the compiled function is Numba's dispatcher, behind the refusal check
    assert isinstance(g.compiled_function.__wrapped__, numba.core.dispatcher.Dispatcher)


GAIN = 3.0


def gained(x, y):
    return GAIN * math.sin(x * y) + x * x / y


def test_repeated_scalar_calls_enter_the_machine_code_and_keep_every_guard():
    """After the second call of one argument kind the dispatcher calls the machine code's
    own entry (numba_compile.direct_entry): what it returns for floats is the overload's
    entry point, which agrees with Numba's dispatcher. Every guard keeps its meaning: a
    changed global is read, a NumPy scalar, an int or a bool argument, the wrong number
    of arguments are served as before, and an error raised by the compiled code comes back."""
    global GAIN
    from s2sad.codegen.numba_compile import direct_entry

    g = s2sad.grad(gained, wrt=(0, 1), backend="numba")
    rng = oracle.rng_for("gained", "numba direct entry")
    points = [(float(a), float(b)) for a, b in rng.uniform(0.5, 2.0, (4, 2))]
    for p in points:  # (the first two install the fast path; the others take it)
        oracle.assert_close(g(*p), oracle.numerical_grad(gained, p, (0, 1)))
    dispatcher = g.compiled_function.__wrapped__
    entry = direct_entry(dispatcher, [(float, None, None)] * 2)
    assert entry is not None and entry is not dispatcher
    assert entry(*points[0]) == dispatcher(*points[0])
    assert direct_entry(dispatcher, [(complex, None, None)] * 2) is None  # (not compiled)
    assert direct_entry(dispatcher, [(np.ndarray, (3,), np.dtype(float))] * 2) is None
    try:
        GAIN = -1.5  # a guard: recompiled for the new value
        for p in points[:3]:
            oracle.assert_close(g(*p), oracle.numerical_grad(gained, p, (0, 1)))
    finally:
        GAIN = 3.0
    oracle.assert_close(g(*points[0]), oracle.numerical_grad(gained, points[0], (0, 1)))
    p = (np.float64(0.7), np.float64(1.3))  # (another kind: a specialisation of its own)
    for _ in range(2):
        oracle.assert_close(g(*p), oracle.numerical_grad(gained, (0.7, 1.3), (0, 1)))
    with pytest.raises(s2sad.S2SADError, match="it is an int"):
        g(2, 1.5)  # (refused, as before the fast path)
    g0 = s2sad.grad(gained, wrt=0, backend="numba")
    for p in [(0.7, 1.3), (0.7, 1.3), (0.7, 2), (0.7, 2), (0.9, True), (0.9, True)]:
        want = oracle.numerical_grad(gained, tuple(float(v) for v in p), (0,))[0]
        oracle.assert_close(g0(*p), want)
    with pytest.raises(TypeError):
        g(1.0)
    with pytest.raises(ZeroDivisionError):  # raised by the machine code, as Numba does
        g(1.0, 0.0)
    oracle.assert_close(g(*points[1]), oracle.numerical_grad(gained, points[1], (0, 1)))


def test_repeated_calls_with_an_int_enter_the_machine_code():
    """An int argument (a loop's trips) is entered with the machine code too, where it fits
    an int64 (the fast path tests that it does; another goes to Numba's dispatcher, which
    refuses it as before)."""
    from s2sad.codegen.numba_compile import direct_entry

    g = s2sad.grad(euler_steps, wrt=(0, 1), backend="numba")
    rng = oracle.rng_for("euler steps", "numba direct entry")
    for n in [5, 5, 7, 3, 12, 7, 0, 1, -3, 5]:
        a, b = (float(v) for v in rng.uniform(0.2, 1.5, 2))
        oracle.assert_close(g(a, b, n), oracle.numerical_grad(euler_steps, (a, b, n),
                                                              (0, 1)))
    dispatcher = g.compiled_function.__wrapped__
    entry = direct_entry(dispatcher, [(float, None, None)] * 2 + [(int, None, None)])
    assert entry is not None and entry is not dispatcher
    with pytest.raises((OverflowError, s2sad.S2SADError)):  # (Numba's int64 at most)
        g(0.5, 0.5, 2 ** 63)


def test_repeated_jvp_calls_enter_the_machine_code():
    """A JVP's fast path enters the machine code where the tangents are of their primals'
    types too; tangents of other kinds are served as before (an array for a float: the
    error saying so)."""
    jvp = s2sad.jvp(gained, backend="numba")
    rng = oracle.rng_for("gained", "numba direct entry jvp")
    for a, b, u, v in rng.uniform(0.5, 2.0, (4, 4)):
        p, t = (float(a), float(b)), [float(u), float(v)]
        out, out_dot = jvp(*p, *t)
        _agree(out, gained(*p), "value")
        oracle.assert_close(out_dot, oracle.numerical_jvp(gained, p, (0, 1), t))
    p = (0.8, 1.3)
    for t in [(1, 0), (np.float64(0.5), -0.25), (True, 0.5), (0.5, -0.25)]:
        _, out_dot = jvp(*p, *t)
        oracle.assert_close(out_dot, oracle.numerical_jvp(gained, p, (0, 1),
                                                          [float(v) for v in t]))
    with pytest.raises(ValueError, match="shape"):
        jvp(*p, np.ones(2), 0.5)
    jvp1 = s2sad.jvp(gained, wrt=1, backend="numba")  # (one tangent)
    for _ in range(3):
        _, out_dot = jvp1(*p, 0.5)
        oracle.assert_close(out_dot, oracle.numerical_jvp(gained, p, (1,), [0.5]))


# -- tapes made for a loop's trips (numba_form._Rewriter.preallocate) --------------------


def euler_steps(a, b, n):
    x = 1.0
    v = 0.0
    for i in range(n):
        acc = -a * math.sin(x) - b * v
        x = x + 0.05 * v
        v = v + 0.05 * acc
    return x * x + v * v


def int_and_float_taped(x, k):
    s = 0.5
    j = 1
    for i in range(2, k):
        s = math.sin(x * j) * s + x
        j = j * 3 % 7 + i
    return s


def one_value_taped(a, n):
    x = 0.3
    for i in range(n):
        x = math.sin(x) * a
    return x


def matrices_taped(W, x, n):
    h = x
    for i in range(n):
        h = np.tanh(W @ h)
    return np.sum(h * h)


def taped_in_inner_loop(a, n):
    s = 1.0
    for i in range(n):
        for j in range(3):
            s = math.sin(s * a) + s * 0.5
    return s


@pytest.mark.parametrize("n", [0, 1, 2, 37])
def test_tape_made_for_the_loops_trips(n):
    """A tape pushed once per trip of a `for ... in range(...)` loop is made at the first
    push for the loop's trips (arrays written and read by index; a tuple of them for a
    tuple of numbers, ints kept as ints): the gradient is right at every trip count, none
    included, and after a loop starting elsewhere than 0."""
    rng = oracle.rng_for("tapes for trips", str(n))
    g = s2sad.grad(euler_steps, wrt=(0, 1), backend="numba")
    for a, b in rng.uniform(0.2, 1.5, (2, 2)):
        p = (float(a), float(b), n)
        oracle.assert_close(g(*p), oracle.numerical_grad(euler_steps, p, (0, 1)))
    assert "new_tape((v, x), tape_count)" in g.source and ".append(" not in g.source
    for f in (int_and_float_taped, one_value_taped):
        g = s2sad.grad(f, wrt=0, backend="numba")
        p = (float(rng.uniform(0.5, 1.2)), n + 2 if f is int_and_float_taped else n)
        oracle.assert_close(g(*p), oracle.numerical_grad(f, p, (0,))[0])
        _agree(g(*p), s2sad.grad(f, wrt=0)(*p), f.__name__)
        assert "new_tape(" in g.source


def test_tape_of_arrays_and_in_an_inner_loop():
    """Arrays pushed once per trip go into a list of the loop's trips' slots; a tape pushed
    in an inner loop (trips times the outer loop's) stays a list that grows."""
    rng = oracle.rng_for("tapes for trips", "arrays")
    W, x = rng.normal(size=(4, 4)) * 0.5, rng.normal(size=4)
    g = s2sad.grad(matrices_taped, wrt=(0, 1), backend="numba")
    for n in (3, 3, 0, 1):
        want = oracle.numerical_grad(matrices_taped, (W, x, n), (0, 1))
        oracle.assert_close(g(W, x, n), want)
        assert "new_tape(" in g.source
    g = s2sad.grad(taped_in_inner_loop, wrt=0, backend="numba")
    for n in (0, 3):
        oracle.assert_close(g(0.9, n), oracle.numerical_grad(taped_in_inner_loop, (0.9, n),
                                                             (0,))[0])
    assert "new_tape(" not in g.source and "tape.append(" in g.source


def test_elementwise_array_gradient():
    x = oracle.rng_for("rosenbrock", "numba").uniform(-1.5, 1.5, 50)
    got = s2sad.grad(rosenbrock, backend="numba")(x)
    _agree(got, s2sad.grad(rosenbrock)(x), "Rosenbrock gradient")
    oracle.assert_close(got, oracle.numerical_grad(rosenbrock, (x,), (0,))[0])


def energy(x):
    return np.sum(np.sin(x) * x * x)


def residuals(x):
    return np.sin(x) * x[0]


def test_second_order_and_jacobians():
    x = oracle.rng_for("energy", "numba").uniform(-1.5, 1.5, 5)
    H = s2sad.hessian(energy, backend="numba")(x)
    _agree(H, s2sad.hessian(energy)(x), "Hessian")
    H_fd = oracle.numerical_jacobian(s2sad.grad(energy), (x,), (0,))[0]
    oracle.assert_close(H, H_fd, rtol=1e-5, atol=1e-6)
    v = np.linspace(-1.0, 1.0, 5)
    hv = s2sad.hvp(energy, backend="numba")(x, v)
    _agree(hv, s2sad.hvp(energy)(x, v), "hvp")
    oracle.assert_close(hv, H_fd @ v, rtol=1e-5, atol=1e-6)
    J = s2sad.jacfwd(residuals, backend="numba")(x)
    oracle.assert_close(J, oracle.numerical_jacobian(residuals, (x,), (0,))[0])
    _agree(s2sad.jacrev(residuals, backend="numba")(x), J, "jacrev against jacfwd")


# -- fused elementwise loops (codegen/numba_fusion.py) --------------------------------


def two_lengths(x, y):
    return np.sum(np.sin(x) * x) + np.sum(np.cos(y) * y * y)


def shifted(x):
    a = x[1:] - x[:-1]
    b = a * a
    return np.sum(b * x[1:]) + np.sum(np.exp(b))


def shifted_array(x):
    a = x[1:] - x[:-1]
    return np.sin(a) * a + x[1:]


def chain(x, y):
    a = np.sin(x) * y
    b = np.exp(-x * x) + a
    c = np.tanh(b) * y + np.log(1.0 + y * y)
    return np.sum(c * c) + np.sum(a)


def plane(X):
    return np.sum(np.tanh(X) * X)


def test_fused_loops_agree_with_numpy_and_fd():
    """Elementwise statements fused into one loop: the Rosenbrock-like offsets (x[1:],
    x[:-1]; a gradient written at two offsets, so two passes), two lengths, a JVP whose
    sums are accumulated in the loop."""
    rng = oracle.rng_for("fusion", "numba")
    x = rng.uniform(-1.5, 1.5, 9)
    g = s2sad.grad(shifted, backend="numba")
    got = g(x)
    # (x_bar[i + 1] set, x_bar[i] added to, then x_bar[1:] added to: a second pass)
    assert "for i in range(n - 1):" in g.source and "x_bar[1:] += a_bar" in g.source
    _agree(got, s2sad.grad(shifted)(x), "shifted: against the NumPy backend")
    oracle.assert_close(got, oracle.numerical_grad(shifted, (x,), (0,))[0])
    y = rng.uniform(-1.5, 1.5, 4)
    got = s2sad.grad(two_lengths, wrt=(0, 1), backend="numba")(x, y)
    _agree(got, s2sad.grad(two_lengths, wrt=(0, 1))(x, y), "two lengths")
    oracle.assert_close(got, oracle.numerical_grad(two_lengths, (x, y), (0, 1)))
    y = rng.uniform(-1.5, 1.5, 9)
    v = (rng.uniform(-1.0, 1.0, 9), rng.uniform(-1.0, 1.0, 9))
    j = s2sad.jvp(chain, backend="numba")
    out, out_dot = j(x, y, *v)
    assert "_sum += " in j.source  # (the sums, accumulated in the loop)
    _agree((out, out_dot), s2sad.jvp(chain)(x, y, *v), "chain's JVP")
    oracle.assert_close(out_dot, oracle.numerical_jvp(chain, (x, y), (0, 1), v))
    # float32 in, float32 out, as from the NumPy backend (the kinds say only "float")
    x32 = x.astype(np.float32)
    value, pullback = s2sad.vjp(shifted_array, backend="numba")(x32)
    want, pullback_np = s2sad.vjp(shifted_array)(x32)
    assert value.dtype == want.dtype == np.float32
    u = np.ones(8, np.float32)
    assert pullback(u)[0].dtype == np.float32
    np.testing.assert_allclose(value, want, rtol=1e-5)
    np.testing.assert_allclose(pullback(u)[0], pullback_np(u)[0], rtol=1e-5, atol=1e-6)


def rosenbrock_grad(x):  # (by hand, for the HVP's finite differences)
    a = x[1:] - x[:-1] * x[:-1]
    g = np.zeros_like(x)
    g[:-1] = -400.0 * a * x[:-1] - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * a
    return g


def carried(x):
    y = np.sin(x) * x
    y[1:] += y[:-1] * x[1:]  # (read at offset 0, written at offset 1)
    return np.sum(y * y)


def smoothed(x):
    y = x * x
    y[:-1] = y[1:] * x[:-1] + y[:-1]  # (read at offsets 1 and 0, written at 0)
    return np.sum(np.cos(y))


def test_an_array_written_at_two_offsets_in_one_loop():
    """Rosenbrock's gradient: x_bar[i] set and x_bar[i + 1] added to in one loop that
    counts down (element e set at step e, added to at step e - 1, as the whole-array
    statements do: set, then added to), no temporary array. And in-place updates of
    shifted slices, whose derivatives read and write one array at two offsets. Each
    against the NumPy backend and finite differences, gradient, JVP and HVP."""
    rng = oracle.rng_for("fusion offsets", "numba")
    for n in (2, 3, 9):
        x = rng.uniform(-1.5, 1.5, n)
        g = s2sad.grad(rosenbrock, backend="numba")
        got = g(x)
        source = g.source_for(x)
        assert "for i in range(n - 2, -1, -1):" in source, source
        assert "x_bar[i] = t1_i" in source and "x_bar[i + 1] += a_bar_i" in source
        assert "np.empty" not in source and "x_bar[1:]" not in source, source
        _agree(got, s2sad.grad(rosenbrock)(x), "rosenbrock: against the NumPy backend")
        oracle.assert_close(got, oracle.numerical_grad(rosenbrock, (x,), (0,))[0])
        v = rng.uniform(-1.0, 1.0, n)
        _, out_dot = s2sad.jvp(rosenbrock, backend="numba")(x, v)
        oracle.assert_close(out_dot, oracle.numerical_jvp(rosenbrock, (x,), (0,), (v,)))
        hv = s2sad.hvp(rosenbrock, backend="numba")(x, v)
        eps = 1e-6
        want = (rosenbrock_grad(x + eps * v) - rosenbrock_grad(x - eps * v)) / (2 * eps)
        oracle.assert_close(hv, want, rtol=1e-6, atol=1e-6)
    for fn in (carried, smoothed, shifted):
        _check_vjp(programs.Case(fn, lambda r: (r.uniform(-1.0, 1.0, 7),)),
                   oracle.rng_for(fn.__name__, "numba fusion"))


FUSED_PROGRAMS = {  # (written as a derivative's statements are: views, updates, aliases)
    "offsets": """
def f(x, y):
    t = x[:-1]
    a = x[1:] - t * t
    g = np.zeros((7,))
    g[:-1] = a * y[:-1]
    g[1:] += a
    return g
""",
    "read_ahead": """
def f(x, y):
    g = x * y
    g[:-1] = g[1:] * x[:-1]
    g[:-1] += y[1:]
    return g
""",
    "carry": """
def f(x, y):
    g = np.exp(x)
    g[1:] += g[:-1]
    g[1:] *= y[1:]
    return g
""",
    "chain": """
def f(x, y):
    a = x * 2.0
    b = a
    b *= y
    c = b
    c += 1.0
    if c[0] > 0.0:
        c = c * 2.0
    return c
""",
    "updates": """
def f(x, y):
    t = x[1:]
    t_dot = y[1:]
    a = t - x[:-1]
    t1 = a * t
    t_dot = a * t_dot
    t_dot += t1
    t3 = np.sum(t1)
    e = np.exp(a)
    return t3 + np.sum(e), np.sum(t_dot)
""",
}


@pytest.mark.parametrize("name", sorted(FUSED_PROGRAMS))
def test_fused_statements_compute_what_numpy_does(name):
    """Statements fused into one loop (offsets, a loop counting down, names of one array,
    sums), compiled by Numba, against the same statements run by NumPy."""
    from s2sad.codegen.numba_form import numba_source
    from s2sad.ir.kind_values import Kind

    text = "import numpy as np\n" + FUSED_PROGRAMS[name]
    source = numba_source(text, "f", cache=False, kinds=[Kind("array", "f", (7,))] * 2)
    assert "fused" in source, source
    plain, jitted = {}, {}
    exec(text, plain)
    exec(source, jitted)
    rng = oracle.rng_for(name, "fused statements")
    for _ in range(3):
        x, y = rng.uniform(-1.5, 1.5, 7), rng.uniform(-1.5, 1.5, 7)
        oracle.assert_close(jitted["f"](x.copy(), y.copy()), plain["f"](x.copy(), y.copy()),
                            rtol=1e-13, atol=1e-13, what=name)


@pytest.mark.parametrize("name", ["power_ops", "resolve_alias", "scalar_times_array"])
def test_fusion_keeps_what_each_statement_reads(name):
    """Programs whose statements fusion must not join: a sum of a whole array inside an
    elementwise statement (`np.sin(x) + np.sum(e)`), a statement reading the array it
    replaces (`t1 = t1 - t`), a float that becomes an array (`s += a`)."""
    _check_vjp(programs.BY_NAME[name], oracle.rng_for(name, "numba fusion"))


def test_fusion_only_where_lengths_are_proved_equal():
    """No loop joins arrays of two lengths, an array written at two offsets, or a value
    known only after the loop (read as an array the loop computes); a 2-D array's run is a
    nest of two loops (codegen/numba_nest.py), checked against FD."""
    x, y = np.ones(5), np.ones(6)
    source = s2sad.grad(two_lengths, wrt=(0, 1), backend="numba").source_for(x, y)
    loops = [ln.strip() for ln in source.splitlines() if ln.strip().startswith("for ")]
    assert loops and set(loops) <= {"for i in range(x.shape[0]):",
                                    "for i in range(y.shape[0]):"}, source
    assert not ("x[i]" in source and "y[i]" in source), source  # (x in no loop over y)
    X = oracle.rng_for("plane", "numba").standard_normal((3, 4))
    g = s2sad.grad(plane, backend="numba")
    source = g.source_for(X)
    assert "for i in range(X.shape[0]):" in source and \
        "for j in range(X.shape[1]):" in source, source
    _agree(g(X), s2sad.grad(plane)(X), "plane")
    oracle.assert_close(g(X), oracle.numerical_grad(plane, (X,), (0,))[0])
    source = s2sad.grad(lambda x: np.sum(x * x), backend="numba").source_for(np.ones(5))
    assert "for i in" not in source  # (one statement: nothing to fuse)


def test_fused_division_by_zero_is_numpys():
    """A fused loop divides as NumPy does (inf, nan), not as Python (ZeroDivisionError)."""
    x, y = np.array([1.0, 2.0, 0.0]), np.array([0.0, 1.0, 0.0])
    f = lambda x, y: np.sum(x / y + x * y)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = s2sad.grad(f, wrt=(0, 1))(x, y)
        got = s2sad.grad(f, wrt=(0, 1), backend="numba")(x, y)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


# -- refusals -------------------------------------------------------------------------


def row_max(X):
    m = np.max(X, axis=1, keepdims=True)
    return np.sum(np.exp(X - m)) + np.sum(np.min(X, axis=0) * np.max(X, axis=-1)[0])


def test_reductions_along_an_axis():
    """np.max / np.min along an axis of a 2-D array, with keepdims (Numba's take no axis):
    the maxima of its rows or columns."""
    X = oracle.rng_for("row_max", "numba").standard_normal((3, 4))
    g = s2sad.grad(row_max, backend="numba")
    got = g(X)
    # (the rows' maxima, in a nest over the matrix: codegen/numba_nest.py)
    assert "for i in range(n):" in g.source and "m_acc = -np.inf" in g.source, g.source
    _agree(got, s2sad.grad(row_max)(X), "row_max against the NumPy backend")
    oracle.assert_close(got, oracle.numerical_grad(row_max, (X,), (0,))[0])


def deep_max(X):
    # (alone: a run of broadcast statements around it would be a loop nest, numba_nest.py)
    m = np.max(X, axis=2)
    return m[0, 1] * m[1, 0]


def deep_max_run(X):
    m = np.max(X, axis=2, keepdims=True)
    return np.sum(np.exp(X - m))


def test_refusal_names_the_users_line():
    X = oracle.rng_for("deep_max", "numba").standard_normal((3, 4, 2))
    with pytest.raises(BackendError) as info:
        s2sad.grad(deep_max, backend="numba")(X)
    e = info.value
    assert isinstance(e, s2sad.S2SADError)
    assert e.filename == __file__ and e.source_line.strip().startswith("m = np.max(")
    text = str(e)
    assert "Numba cannot compile" in text and "np.max" in text
    assert "Traceback" not in text and "\x1b[" not in text  # Numba's own report stays out
    assert e.__cause__ is None and e.__suppress_context__
    # the NumPy backend differentiates it
    oracle.assert_close(s2sad.grad(deep_max)(X),
                        oracle.numerical_grad(deep_max, (X,), (0,))[0])
    # in a run of broadcast statements: a loop nest, which Numba compiles
    g = s2sad.grad(deep_max_run, backend="numba")
    _agree(g(X), s2sad.grad(deep_max_run)(X), "deep_max_run against NumPy's")
    oracle.assert_close(g(X), oracle.numerical_grad(deep_max_run, (X,), (0,))[0])
    assert "for p in range(" in g.source


def test_unknown_backend():
    with pytest.raises(ValueError, match="backend"):
        s2sad.grad(pendulum, backend="jax")  # type: ignore[arg-type]


# -- the how-to page -------------------------------------------------------------------


def test_backends_page_listing_runs(tmp_path, monkeypatch):
    """docs/howto/backends.md's example, written to a file and imported as a reader's
    module would be (its listings are fenced `py`: they need Numba)."""
    import importlib.util
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "howto" / "backends.md"
    listings = re.findall(r"^```py\n(.*?)^```$", page.read_text(), flags=re.DOTALL | re.MULTILINE)
    assert listings
    module = tmp_path / "page_backends.py"
    module.write_text("\n\n".join(listings))
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = importlib.util.spec_from_file_location(module.stem, module)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    oracle.assert_close((loaded.a_bar, loaded.b_bar),
                        oracle.numerical_grad(loaded.pendulum, (1.3, 0.2), (0, 1)))


# -- ahead of time: backend = "numba" in [tool.s2sad] ------------------------------------

BUILT = '''
import math


def pendulum(a, b):
    x = 1.0
    v = 0.0
    for i in range(30):
        acc = -a * math.sin(x) - b * v
        x = x + 0.05 * v
        v = v + 0.05 * acc
    return x * x + v * v
'''


def test_build_entry_with_the_numba_backend(tmp_path, monkeypatch):
    import sys
    import textwrap
    import uuid

    from s2sad.cli import main

    pkg = f"nbbuild_{uuid.uuid4().hex[:8]}"
    (tmp_path / pkg).mkdir()
    (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / pkg / "model.py").write_text(BUILT)
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(f"""
        [[tool.s2sad.derivatives]]
        target = "{pkg}.model:pendulum"
        mode = "grad"
        wrt = ["a", "b"]
        args = "1.3, 0.2"
        backend = "numba"
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["build"]) == 0
    text = (tmp_path / pkg / "model_s2sad.py").read_text()
    assert "import numba" in text and "@numba.njit(cache=True)" in text
    assert "'mode': 'grad+backend=numba'" in text
    model = __import__(f"{pkg}.model", fromlist=["pendulum"])
    built = __import__(f"{pkg}.model_s2sad", fromlist=["pendulum_grad"])
    g = s2sad.grad(model.pendulum, wrt=(0, 1), backend="numba")
    got = g(1.3, 0.2)
    oracle.assert_close(got, oracle.numerical_grad(model.pendulum, (1.3, 0.2), (0, 1)))
    assert g.compiled_function.__wrapped__ is built.pendulum_grad  # served from the module
    # the NumPy backend does not take the Numba module's function
    plain = s2sad.grad(model.pendulum, wrt=(0, 1))
    _agree(plain(1.3, 0.2), got, "NumPy backend")
    assert "numba" not in plain.source
    for name in (f"{pkg}.model_s2sad", f"{pkg}.model", pkg):
        sys.modules.pop(name, None)


BUILT_ARRAYS = '''
import numpy as np


def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2) + 0.5 * np.sum(w * w)
'''


def test_numba_module_built_at_one_size_serves_every_size(tmp_path, monkeypatch):
    """An ahead-of-time Numba module built from one example (w 3 x 2, x 4 x 3) holds the
    code for every size of that pattern (issue 34): the dispatcher takes it for others."""
    import sys
    import textwrap
    import uuid

    from s2sad.cli import main

    pkg = f"nbsizes_{uuid.uuid4().hex[:8]}"
    (tmp_path / pkg).mkdir()
    (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / pkg / "model.py").write_text(BUILT_ARRAYS)
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(f"""
        [[tool.s2sad.derivatives]]
        target = "{pkg}.model:loss"
        mode = "grad"
        args = "np.ones((3, 2)), np.ones((4, 3))"
        backend = "numba"
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["build"]) == 0
    text = (tmp_path / pkg / "model_s2sad.py").read_text()
    assert "@numba.njit(cache=True)" in text and "(n, m)" in text
    model = __import__(f"{pkg}.model", fromlist=["loss"])
    built = __import__(f"{pkg}.model_s2sad", fromlist=["loss_grad"])
    g = s2sad.grad(model.loss, backend="numba")
    for n, m, k in ((3, 2, 4), (5, 7, 9), (8, 3, 20)):
        rng = oracle.rng_for("built", f"{n} {m} {k}")
        w, x = rng.normal(size=(n, m)), rng.normal(size=(k, n))
        oracle.assert_close(g(w, x), oracle.numerical_grad(model.loss, (w, x), (0,))[0])
        assert g.compiled_function.__wrapped__ is built.loss_grad  # served from the module
    for name in (f"{pkg}.model_s2sad", f"{pkg}.model", pkg):
        sys.modules.pop(name, None)


def test_without_numba_the_backend_is_refused(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` raises ImportError

    def cube(x):
        return x * x * x

    with pytest.raises(BackendError, match="needs Numba") as info:
        s2sad.grad(cube, backend="numba")(2.0)
    assert "s2sad[numba]" in info.value.hint
    assert s2sad.grad(cube)(2.0) == 12.0


def test_machine_code_is_kept_beside_the_disk_cache():
    """The Numba form is written to numba/ in the s2sad cache directory (private, like the
    cache) and compiled with cache=True, so that Numba keeps its machine code there."""
    import os
    from pathlib import Path

    def quartic(x):
        return x * x * x * x

    g = s2sad.grad(quartic, backend="numba")
    assert g(2.0) == 32.0
    root = Path(os.environ["S2SAD_CACHE_DIR"]) / "numba"
    assert "@numba.njit(cache=True)" in g.source
    files = list(root.glob("quartic_grad_*.py"))
    assert len(files) == 1 and files[0].read_text() == g.source
    assert (root.stat().st_mode & 0o077) == 0
    assert any(root.glob("__pycache__/quartic_grad_*.nbi"))  # Numba's index of the code


def test_cache_clear_removes_the_machine_code(tmp_path, monkeypatch):
    from s2sad.store import cache

    monkeypatch.setenv("S2SAD_CACHE_DIR", str(tmp_path / "cache"))

    def quintic(x):
        return x * x * x * x * x

    assert s2sad.grad(quintic, backend="numba")(1.0) == 5.0
    root = tmp_path / "cache" / "numba"
    assert any(root.glob("quintic_grad_*.py"))
    cache.clear()
    assert not root.exists()


# -- one specialisation for every size (issue 34) ----------------------------------------


def rosenbrock_any_length(x):  # (rosenbrock's lines: compiled by this test alone)
    a = x[1:] - x[:-1] * x[:-1]
    b = 1.0 - x[:-1]
    return np.sum(100.0 * a * a + b * b)


def second_difference(x):
    d = x[2:] - 2.0 * x[1:-1] + x[:-2]
    return np.sum(d * d) + np.mean(np.sin(x))


def least_squares(A, b, x):
    r = A @ x - b
    return 0.5 * np.sum(r * r) + np.sum(np.tanh(x)) / len(b)


def test_every_size_is_one_numba_compile(monkeypatch):
    """A gradient called at several lengths: one specialisation (sizes read from the
    arguments, `n = x.shape[0]`), compiled by Numba once; the second code compiled for
    other representative sizes (to check that no size escaped its symbol) is never called,
    so Numba never compiles it."""
    from s2sad import transform

    made = []
    real = transform.generate

    def spy(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(transform, "generate", spy)
    g = s2sad.grad(rosenbrock_any_length, backend="numba")
    served = set()
    for n in (5, 9, 40, 137):
        x = oracle.rng_for("every size", str(n)).uniform(-1.0, 1.0, n)
        oracle.assert_close(g(x), oracle.numerical_grad(rosenbrock_any_length, (x,), (0,))[0])
        served.add(id(g._last))
    assert len(served) == 1 and len(made) == 2, "one specialisation, compiled for A and B"
    kept, checked = made
    assert g._last.function is kept.function
    assert kept.source == checked.source
    assert "n = x.shape[0]" in kept.source and "for i in range(n - 2, -1, -1):" in kept.source
    assert "(n,)" in kept.source.splitlines()[2] and "137" not in kept.source
    # (one machine code for every length; the other never called, so never compiled)
    assert len(kept.function.__wrapped__.overloads) == 1
    assert not checked.function.__wrapped__.overloads


def test_every_size_vjp_jvp_and_two_symbols():
    """The split VJP (forward and sweep functions, each binding the sizes it reads), the
    JVP, and a least-squares gradient in two sizes (n rows, m columns), each against
    finite differences at several sizes and served by one specialisation."""
    vjp = s2sad.vjp(second_difference, backend="numba")
    jvp = s2sad.jvp(second_difference, backend="numba")
    seen_vjp, seen_jvp = set(), set()
    for n in (6, 11, 30):
        rng = oracle.rng_for("second difference", str(n))
        x, v = rng.uniform(-1.0, 1.0, n), rng.uniform(-1.0, 1.0, n)
        value, pullback = vjp(x)
        oracle.assert_close(value, second_difference(x))
        (x_bar,) = pullback(1.5)
        oracle.assert_close(x_bar, 1.5 * oracle.numerical_grad(second_difference, (x,),
                                                               (0,))[0])
        out, out_dot = jvp(x, v)
        oracle.assert_close(out_dot, oracle.numerical_jvp(second_difference, (x,), (0,),
                                                          (v,)))
        seen_vjp.add(id(vjp._last))
        seen_jvp.add(id(jvp._last))
    assert len(seen_vjp) == len(seen_jvp) == 1
    assert "def second_difference_vjp_sweep(" in vjp.source
    assert vjp.source.count(" = x.shape[0]") == 2  # (forward and sweep both read n)
    g = s2sad.grad(least_squares, wrt=(0, 2), backend="numba")
    seen = set()
    for n, m in ((5, 3), (9, 4), (40, 12)):
        rng = oracle.rng_for("least squares", f"{n} {m}")
        A, b, x = rng.normal(size=(n, m)), rng.normal(size=n), rng.normal(size=m)
        A_bar, x_bar = g(A, b, x)
        for got, i in ((A_bar, 0), (x_bar, 2)):
            oracle.assert_close(got, oracle.numerical_grad(least_squares, (A, b, x), (i,))[0],
                                rtol=1e-5, atol=1e-6)
        seen.add(id(g._last))
    assert len(seen) == 1
    assert "(n, m)" in g.source.splitlines()[2]


def _minor_sum(a):  # a concatenation of a list of slices, taped in a loop
    total = 0.0
    for j in range(a.shape[0]):
        part = np.concatenate([a[1:, :j], a[1:, j + 1:]], axis=1)
        total += a[0, j] * np.sum(np.sin(part))
    return total


def test_a_concatenated_list_compiles_as_a_tuple():
    # Numba's np.concatenate takes a tuple of arrays, not a list: a list display never
    # changed after is made a tuple in the Numba form
    a = np.random.default_rng(3).standard_normal((4, 4))
    g = s2sad.grad(_minor_sum, backend="numba")
    (fd,) = oracle.numerical_grad(_minor_sum, (a,), (0,))
    oracle.assert_close(g(a), fd, 1e-6, 1e-8, what="grad")
    assert "np.concatenate(" in g.source and " = (a[" in g.source
