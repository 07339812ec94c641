"""scipy.integrate.odeint and solve_ivp (with t_eval) as primitives: the adjoint method in
reverse mode, the sensitivity equations in forward mode, each calling s2sad's own derivatives
of the user's function.

Checked against analytic solutions (a linear system, y(t) = expm(A t) y0, differentiated in A
through the Frechet derivative of expm; logistic growth in r, K, y0, the output times and the
initial time) and against central finite differences of the solvers themselves
(Lotka-Volterra, `tfirst`, decreasing times, solve_ivp's methods), in both modes, with the
dot product of the two; jacfwd and jacrev; a global that the function reads changing; the
refusals (a second derivative: the rules are first-order only; full_output=1; a function
defined inside; solve_ivp with dense output; its `success`). solve_ivp without t_eval: at
its final time against central differences; on the times its solver chose, against the
same function with t_eval = those times (the derivative's convention).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import s2sad
from tests.oracle import (
    assert_close,
    assert_dot_close,
    flatten,
    numerical_jacobian,
    numerical_jvp,
    numerical_vjp,
    rng_for,
    vdot,
)

integrate = pytest.importorskip("scipy.integrate")
linalg = pytest.importorskip("scipy.linalg")
odeint = integrate.odeint
solve_ivp = integrate.solve_ivp

EPS = 1e-5  # finite differences of an ODE solve at rtol = atol = 1e-10


def check_modes(f, args, wrt, rtol=1e-5, expected_grad=None, salt=""):
    """vjp and jvp of `f` at `args` against central finite differences of `f` with odeint's
    tolerances tightened (`tol=1e-12`: at 1e-10, LSODA's choice of steps changes with a step
    of 1e-5 in the arguments, and a difference quotient then jumps by 1e-5 relative), or
    against `expected_grad` (analytic); and against each other (the dot-product test)."""
    rng = rng_for(f.__name__, salt)

    def reference(*a):
        return f(*a, tol=1e-12)

    out, pullback = s2sad.vjp(f, wrt=wrt)(*args)
    u = rng.standard_normal(np.shape(out)) if np.ndim(out) else 1.0
    jtu = tuple(pullback(u))
    expected = numerical_vjp(reference, args, wrt, u, eps=EPS) if expected_grad is None else \
        tuple(np.multiply(u, e) for e in expected_grad)
    assert_close(jtu, expected, rtol=rtol, atol=rtol * 1e-2, what="vjp", check_kind=False)
    for c, i in zip(jtu, wrt):
        assert np.shape(c) == np.shape(args[i]), "a cotangent has its argument's shape"
    v = [rng.standard_normal(np.shape(args[i])) if np.ndim(args[i]) else float(rng.normal())
         for i in wrt]
    _, jv = s2sad.jvp(f, wrt=wrt)(*args, *v)
    assert_close(jv, numerical_jvp(reference, args, wrt, v, eps=EPS) if expected_grad is None else
                 sum(vdot(e, d) for e, d in zip(expected_grad, v)),
                 rtol=rtol, atol=rtol * 1e-2, what="jvp", check_kind=False)
    scale = float(np.sum(np.abs(flatten(u) * flatten(jv))))
    assert_dot_close(vdot(u, jv), vdot(jtu, tuple(v)), scale, rtol=1e-7)


# -- a linear system: y(t) = expm(A t) y0 ---------------------------------------------------

A0 = np.array([[-0.5, 1.0, 0.2], [-1.0, -0.3, 0.0], [0.1, 0.4, -0.8]])
Y0 = np.array([1.0, -0.5, 2.0])
T_LINEAR = np.linspace(0.0, 2.0, 6)
DATA_LINEAR = rng_for("linear data").standard_normal((6, 3))


def linear(y, t, a):
    return a @ y


def linear_loss(y0, a):
    ys = odeint(linear, y0, T_LINEAR, args=(a,), rtol=1e-10, atol=1e-10)
    return np.sum((ys - DATA_LINEAR) ** 2)


def linear_loss_grad(y0, a):
    """Analytic: r_i = 2 (y(t_i) - data_i); d/dy0 = sum_i expm(A t_i)^T r_i, d/dA_jk =
    sum_i r_i . L(A t_i, E_jk t_i) y0 (L: the Frechet derivative of expm)."""
    g_y0, g_a = np.zeros(3), np.zeros((3, 3))
    for t, d in zip(T_LINEAR, DATA_LINEAR):
        e = linalg.expm(a * t)
        r = 2.0 * (e @ y0 - d)
        g_y0 += e.T @ r
        for j in range(3):
            for k in range(3):
                unit = np.zeros((3, 3))
                unit[j, k] = t
                g_a[j, k] += r @ linalg.expm_frechet(a * t, unit, compute_expm=False) @ y0
    return g_y0, g_a


def test_linear_system_against_the_matrix_exponential():
    expected = linear_loss_grad(Y0, A0)
    got = s2sad.grad(linear_loss, wrt=(0, 1))(Y0, A0)
    assert_close(got, expected, rtol=1e-6, atol=1e-8, what="grad")
    check_modes(linear_loss, [Y0, A0], (0, 1), rtol=1e-6, expected_grad=expected)


def test_linear_trajectory_jacobians():
    def trajectory(y0, a):
        return odeint(linear, y0, T_LINEAR, args=(a,), rtol=1e-10, atol=1e-10)

    exact = np.stack([linalg.expm(A0 * t) for t in T_LINEAR])  # d y(t_i) / d y0
    for jac in (s2sad.jacfwd, s2sad.jacrev):
        got = jac(trajectory, wrt=0)(Y0, A0)
        assert got.shape == (6, 3, 3)
        assert_close(got, exact, rtol=1e-7, atol=1e-9, what=jac.__name__)
        j_a = jac(trajectory, wrt=1)(Y0, A0)
        assert_close(j_a.reshape(18, 9),
                     numerical_jacobian(trajectory, [Y0, A0], (1,), eps=EPS)[0],
                     rtol=1e-5, atol=1e-7, what=jac.__name__ + " in A")


# -- logistic growth: y(t) = K y0 e^(r s) / (K + y0 (e^(r s) - 1)), s = t - t0 -------------

T_LOGISTIC = np.linspace(0.3, 4.0, 7)
DATA_LOGISTIC = np.linspace(0.2, 1.6, 7)[:, None]


def logistic(y, t, r, k):
    return r * y * (1.0 - y / k)


def logistic_loss(y0, r, k, t):
    ys = odeint(logistic, y0, t, args=(r, k), rtol=1e-10, atol=1e-10)
    return np.sum((ys - DATA_LOGISTIC) ** 2)


def logistic_loss_grad(y0, r, k, t):
    """Analytic, with E = e^(r s), D = K + y0 (E - 1): dy/dy0 = K^2 E / D^2, dy/dr =
    K y0 s E (K - y0) / D^2, dy/dK = y0^2 E (E - 1) / D^2; dy_i/dt_i = f(y_i) = -dy_i/dt_0
    (an autonomous system: y_i depends on t_i - t_0)."""
    s = t - t[0]
    e = np.exp(r * s)
    d = k + y0 * (e - 1.0)
    y = k * y0 * e / d
    res = 2.0 * (y - DATA_LOGISTIC[:, 0])
    slope = r * y * (1.0 - y / k)
    g_t = res * slope
    g_t[0] = -np.sum(g_t[1:])
    return (float(np.sum(res * k * k * e / d ** 2)),
            float(np.sum(res * k * y0 * s * e * (k - y0) / d ** 2)),
            float(np.sum(res * y0 * y0 * e * (e - 1.0) / d ** 2)), g_t)


def test_logistic_growth_against_its_solution():
    args = [0.1, 1.3, 1.5, T_LOGISTIC.copy()]
    expected = logistic_loss_grad(*args)
    got = s2sad.grad(logistic_loss, wrt=(0, 1, 2, 3))(*args)
    assert isinstance(got[0], float) and isinstance(got[1], float)
    assert_close(got, expected, rtol=1e-6, atol=1e-8, what="grad")
    check_modes(logistic_loss, args, (0, 1, 2, 3), rtol=1e-6, expected_grad=expected)


# -- Lotka-Volterra, against finite differences of odeint -----------------------------------

T_LV = np.linspace(0.0, 5.0, 9)
DATA_LV = 1.0 + 0.5 * np.sin(np.outer(T_LV, [1.0, 1.3]))
THETA = np.array([1.1, 0.4, 0.9, 0.35])


def lotka_volterra(z, t, theta):
    prey, predators = z[0], z[1]
    a, b, c, d = theta[0], theta[1], theta[2], theta[3]
    return [a * prey - b * prey * predators, -c * predators + d * prey * predators]


def lotka_volterra_array(z, t, theta, scale):
    growth = np.array([theta[0], -theta[2]]) + np.array([-theta[1], theta[3]]) * z[::-1]
    return scale * growth * z


def lv_loss(z0, theta, tol=1e-10):
    ys = odeint(lotka_volterra, z0, T_LV, args=(theta,), rtol=tol, atol=tol)
    return np.sum((ys - DATA_LV) ** 2)


def lv_loss_times(z0, theta, t, tol=1e-10):
    ys = odeint(lotka_volterra_array, z0, t, args=(theta, 1.0), rtol=tol, atol=tol)
    return np.sum((ys - DATA_LV) ** 2)


def lv_trajectory(z0, theta, tol=1e-10):
    return odeint(lotka_volterra_array, z0, T_LV, args=(theta, 0.8), rtol=tol, atol=tol)


def test_lotka_volterra_against_finite_differences():
    check_modes(lv_loss, [np.array([1.0, 0.8]), THETA.copy()], (0, 1))
    check_modes(lv_loss_times, [np.array([1.0, 0.8]), THETA.copy(), T_LV.copy()], (0, 1, 2))
    check_modes(lv_trajectory, [np.array([1.0, 0.8]), THETA.copy()], (0, 1))


def forced(t, y, w):
    return -w[0] * y + np.sin(w[1] * t) * y[::-1]


def forced_tfirst(y0, w, tol=1e-10):
    return odeint(forced, y0, T_LV, args=(w,), tfirst=True, rtol=tol, atol=tol)


def forced_backwards(y0, w, tol=1e-10):  # integrated towards earlier times
    return odeint(forced, y0, T_LV[::-1], args=(w,), tfirst=True, rtol=tol, atol=tol)


@pytest.mark.parametrize("f", [forced_tfirst, forced_backwards], ids=lambda f: f.__name__)
def test_time_dependent_systems(f):
    check_modes(f, [np.array([0.7, -0.4]), np.array([0.3, 1.7])], (0, 1))


# -- what the derivative code reads ----------------------------------------------------------

RATE = 0.5


def decay(y, t, k):
    return -k * y - RATE * y ** 2


def decay_loss(y0, k, tol=1e-10):
    return np.sum(odeint(decay, y0, T_LV, args=(k,), rtol=tol, atol=tol))


def test_a_global_the_function_reads_is_followed():
    global RATE
    args = [np.array([1.0, 2.0]), 0.3]
    g = s2sad.grad(decay_loss, wrt=(0, 1))
    try:
        for rate in (0.5, 0.9):
            RATE = rate
            expected = numerical_vjp(lambda y0, k: decay_loss(y0, k, 1e-12), args, (0, 1),
                                     1.0, eps=EPS)
            assert_close(g(*args), expected,
                         rtol=1e-5, atol=1e-7, what=f"grad at RATE={rate}")
    finally:
        RATE = 0.5


def passed_in(y0, k, fn, tol=1e-10):
    return np.sum(odeint(fn, y0, T_LV, args=(k,), rtol=tol, atol=tol))


def test_the_function_passed_as_an_argument():
    args = [np.array([1.0, 2.0]), 0.3, decay]
    got = s2sad.grad(passed_in, wrt=(0, 1))(*args)
    expected = numerical_vjp(lambda y0, k, fn: passed_in(y0, k, fn, 1e-12), args, (0, 1), 1.0,
                             eps=EPS)
    assert_close(got, expected, rtol=1e-5, atol=1e-7, what="grad")


def test_generated_source_calls_the_integrations():
    args = (np.array([1.0, 0.8]), THETA)
    grad_source = s2sad.grad(lv_loss, wrt=(0, 1)).source_for(*args)
    assert "odeint_cotangents(lotka_volterra, z0, T_LV" in grad_source
    assert "odeint_options(tol, tol, None" in grad_source  # (the tolerances an argument)
    logistic_source = s2sad.grad(logistic_loss, wrt=(0, 1)).source_for(0.1, 1.3, 1.5, T_LOGISTIC)
    assert "(('rtol', 1e-10), ('atol', 1e-10)))" in logistic_source  # (made while compiling)
    jvp_source = s2sad.jvp(lv_loss, wrt=(0, 1)).source_for(*args, *args)
    assert "odeint_tangents(lotka_volterra, z0, T_LV" in jvp_source


# -- solve_ivp with t_eval -------------------------------------------------------------------

def logistic_first(t, y, r, k):
    return r * y * (1.0 - y / k)


def logistic_ivp(t0, y0, r, k, t_eval):
    sol = solve_ivp(logistic_first, (t0, 4.5), y0, t_eval=t_eval, args=(r, k), rtol=1e-10,
                    atol=1e-10)
    return np.sum((sol.y.T - DATA_LOGISTIC) ** 2)


def logistic_ivp_grad(t0, y0, r, k, t_eval):
    """Analytic (see logistic_loss_grad), with the initial time t0 apart from the output
    times: dy_i/dt_i = f(y_i) for every i, dy_i/dt0 = -f(y_i)."""
    s = t_eval - t0
    e = np.exp(r * s)
    d = k + y0[0] * (e - 1.0)
    y = k * y0[0] * e / d
    res = 2.0 * (y - DATA_LOGISTIC[:, 0])
    g_t = res * r * y * (1.0 - y / k)
    return (-float(np.sum(g_t)), np.array([np.sum(res * k * k * e / d ** 2)]),
            float(np.sum(res * k * y0[0] * s * e * (k - y0[0]) / d ** 2)),
            float(np.sum(res * y0[0] ** 2 * e * (e - 1.0) / d ** 2)), g_t)


def test_solve_ivp_logistic_against_its_solution():
    args = [0.1, np.array([0.1]), 1.3, 1.5, T_LOGISTIC.copy()]
    expected = logistic_ivp_grad(*args)
    got = s2sad.grad(logistic_ivp, wrt=(0, 1, 2, 3, 4))(*args)
    assert_close(got, expected, rtol=1e-6, atol=1e-8, what="grad")
    check_modes(logistic_ivp, args, (0, 1, 2, 3, 4), rtol=1e-6, expected_grad=expected)


def lotka_volterra_first(t, z, theta):
    return lotka_volterra(z, t, theta)


def lv_ivp(t0, z0, theta, t_eval, method="RK45", tol=1e-10):
    sol = solve_ivp(lotka_volterra_first, (t0, 5.5), z0, method=method, t_eval=t_eval,
                    args=(theta,), rtol=tol, atol=tol)
    return np.sum((sol.y - DATA_LV.T) ** 2) + np.sum(np.sin(sol.t))


@pytest.mark.parametrize("method", ["RK45", "DOP853", "LSODA", "Radau"])
def test_solve_ivp_lotka_volterra_against_finite_differences(method):
    def with_method(t0, z0, theta, t_eval, tol=1e-10):
        return lv_ivp(t0, z0, theta, t_eval, method, tol)
    with_method.__name__ = f"lv_ivp_{method}"
    check_modes(with_method, [-0.2, np.array([1.0, 0.8]), THETA.copy(), T_LV.copy()],
                (0, 1, 2, 3))


def test_solve_ivp_source():
    args = (-0.2, np.array([1.0, 0.8]), THETA, T_LV)
    source = s2sad.grad(lv_ivp, wrt=(1, 2)).source_for(*args)
    # (the user's line as a comment, the solution a primitive, the options as they are given)
    line = inspect.getsourcelines(lv_ivp)[1] + 1
    assert f"# line {line}: sol = solve_ivp(lotka_volterra_first, (t0, 5.5), z0" in source
    assert "y = solve_ivp_values(lotka_volterra_first, t, z0, t_eval, 'RK45'" in source
    assert "bars = ivp_cotangents(lotka_volterra_first, t, z0, t_eval, 'RK45'" in source
    jvp_source = s2sad.jvp(lv_ivp, wrt=(0, 3)).source_for(*args, 1.0, T_LV)
    assert "y_dot = ivp_tangents(lotka_volterra_first, t, z0, t_eval, 'RK45'" in jvp_source


# -- solve_ivp without t_eval: the times its solver chose, taken as chosen ------------------

def ivp_final_state(t0, t1, z0, theta, tol=1e-10):
    """A function of the solution at the last time alone (t_span's end) and of that time:
    smooth in every argument, whatever times the solver chooses."""
    sol = solve_ivp(lotka_volterra_first, (t0, t1), z0, args=(theta,), rtol=tol, atol=tol)
    return np.sum((sol.y[:, -1] - 1.0) ** 2) + 0.3 * sol.t[-1] * sol.y[0, -1]


def test_solve_ivp_without_t_eval_at_its_final_time():
    check_modes(ivp_final_state, [-0.2, 2.5, np.array([1.0, 0.8]), THETA.copy()],
                (0, 1, 2, 3))


def ivp_on_its_grid(t0, t1, z0, theta):
    sol = solve_ivp(lotka_volterra_first, (t0, t1), z0, args=(theta,), rtol=1e-8, atol=1e-8)
    return np.sum(sol.y ** 2 * np.cos(sol.t))


def test_solve_ivp_without_t_eval_takes_the_chosen_times():
    """A function of every output time: the derivative of the same function with t_eval =
    the times the solver chose, its first and last t_span's (they move with it), those
    between fixed (central differences of that function, which is smooth)."""
    args = [-0.2, 2.5, np.array([1.0, 0.8]), THETA.copy()]
    grid = solve_ivp(lotka_volterra_first, tuple(args[:2]), args[2], args=(args[3],),
                     rtol=1e-8, atol=1e-8).t
    assert grid.size > 5

    def on_fixed_grid(t0, t1, z0, theta, tol=1e-12):
        times = np.concatenate([[t0], grid[1:-1], [t1]])
        sol = solve_ivp(lotka_volterra_first, (t0, t1), z0, t_eval=times, args=(theta,),
                        rtol=tol, atol=tol)
        return np.sum(sol.y ** 2 * np.cos(times))

    out, pullback = s2sad.vjp(ivp_on_its_grid, wrt=(0, 1, 2, 3))(*args)
    assert out == ivp_on_its_grid(*args)  # (the value: SciPy's own solve, once)
    expected = numerical_vjp(on_fixed_grid, args, (0, 1, 2, 3), 1.0, eps=EPS)
    assert_close(tuple(pullback(1.0)), expected, rtol=1e-5, atol=1e-7, check_kind=False)
    v = [0.3, -0.5, np.array([0.2, 1.0]), np.array([1.0, -0.4, 0.3, 0.7])]
    _, jv = s2sad.jvp(ivp_on_its_grid, wrt=(0, 1, 2, 3))(*args, *v)
    assert_close(jv, numerical_jvp(on_fixed_grid, args, (0, 1, 2, 3), v, eps=EPS),
                 rtol=1e-5, atol=1e-7, check_kind=False)


def test_solve_ivp_without_t_eval_second_derivatives_are_refused():
    with pytest.raises(s2sad.S2SADError, match="first-order only"):
        s2sad.hessian(ivp_final_state, wrt=3)(-0.2, 2.5, np.array([1.0, 0.8]), THETA)


def ivp_dense(y0):
    sol = solve_ivp(lotka_volterra_first, (0.0, 1.0), y0, t_eval=T_LV[:3], args=(THETA,),
                    dense_output=True)
    return np.sum(sol.y)


def ivp_success(y0):
    sol = solve_ivp(lotka_volterra_first, (0.0, 1.0), y0, t_eval=T_LV[:3], args=(THETA,))
    return np.sum(sol.y) * sol.success


@pytest.mark.parametrize("f, error, words", [
    (ivp_dense, s2sad.MissingRuleError, "solve_ivp"),
    (ivp_success, s2sad.NameResolutionError, "no attribute `success`"),
], ids=["dense_output", "success"])
def test_solve_ivp_refusals(f, error, words):
    with pytest.raises(error, match=words) as err:
        s2sad.grad(f)(np.array([1.0, 0.8]))
    assert err.value.filename == __file__


def test_solve_ivp_second_derivatives_are_refused():
    with pytest.raises(s2sad.S2SADError, match="first-order only") as err:
        s2sad.hessian(lv_ivp, wrt=2)(-0.2, np.array([1.0, 0.8]), THETA, T_LV)
    assert err.value.filename == __file__


# -- refusals ----------------------------------------------------------------------------------

def directional(z0, theta):
    return s2sad.jvp(lv_loss, wrt=1)(z0, theta, np.ones(4))[1]


@pytest.mark.parametrize("second", [
    lambda: s2sad.hessian(lv_loss, wrt=1)(np.array([1.0, 0.8]), THETA),
    lambda: s2sad.hvp(lv_loss, wrt=1)(np.array([1.0, 0.8]), THETA, np.ones(4)),
    lambda: s2sad.jvp(s2sad.grad(lv_loss, wrt=1), wrt=0)(np.array([1.0, 0.8]), THETA,
                                                        np.ones(2)),
    lambda: s2sad.grad(directional, wrt=1)(np.array([1.0, 0.8]), THETA),
], ids=["hessian", "hvp", "jvp_of_grad", "grad_of_jvp"])
def test_second_derivatives_are_refused(second):
    with pytest.raises(s2sad.S2SADError, match="first-order only") as err:
        second()
    assert err.value.filename == __file__ and "hint:" in str(err.value)


def full_output(y0, k):
    ys, info = odeint(decay, y0, T_LV, args=(k,), full_output=1)
    return np.sum(ys)


def defined_inside(y0, k):
    def rhs(y, t):
        return -k * y
    return np.sum(odeint(rhs, y0, T_LV))


def complex_start(y0, k):
    return np.sum(np.abs(odeint(decay, y0 * (1.0 + 1j), T_LV, args=(k,))))


@pytest.mark.parametrize("f, error, words", [
    (full_output, s2sad.MissingRuleError, "full_output=1"),
    (defined_inside, s2sad.UnsupportedSyntaxError, "defined inside"),
    (complex_start, s2sad.MissingRuleError, "complex"),
], ids=["full_output", "defined_inside", "complex"])
def test_refusals(f, error, words):
    with pytest.raises(error, match=words) as err:
        s2sad.grad(f, wrt=(0, 1))(np.array([1.0, 2.0]), 0.3)
    assert err.value.filename == __file__
