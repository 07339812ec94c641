"""Rules for `scipy.integrate.odeint` and `solve_ivp`: `ys = odeint(func, y0, t, args)`
differentiated in `y0`, the output times `t` and the items of `args` (`func(y, t, *args)` is
dy/dt; with `tfirst=True`, `func(t, y, *args)`); `solve_ivp(fun, t_span, y0, t_eval=t,
args=args)` with `t_eval` (and no events, no dense output), read as an object holding `t`
and `y`, the solution at `t_eval` (`solve_ivp_values`, the primitive), differentiated in the
initial time `t_span[0]`, `y0`, `t_eval` and the items of `args`.

Loaded, like scipy_special, the first time a differentiated function calls scipy.integrate.
`func` is differentiated by s2sad itself: it must be code s2sad can differentiate, defined at
module level or passed in (a function defined inside the differentiated function is refused:
pass what it reads through `args`). Its derivatives are made at run time by `s2sad.jvp` and
`s2sad.vjp`, compiled once per function and kept, with their guards (a global that `func`
reads changing recompiles them): the generated code needs s2sad where it runs.

Forward mode integrates the sensitivity equations alongside y: v' = df/dy v + df/dargs
args_dot from v(t0) = y0_dot - f(y0, t0) t0_dot, and adds f(y_i, t_i) t_dot[i] at each
output time. Reverse mode is the adjoint method (continuous reverse mode, as autograd's and
JAX's odeint): between consecutive output times, backwards from the stored y(t_i), it
integrates y' = f, a' = -a df/dy and args_bar' = -a df/dargs, adding each output's
cotangent to a at its time; t[i] gets g_i . f(y_i, t_i), and the initial time
-(y0_bar - g_0) . f(y0, t0). Both integrate with the call's own solver: odeint at its
`rtol`, `atol`, `hmax`, `hmin`, `mxstep` and `tcrit`; solve_ivp with its method, `rtol`,
`atol`, `max_step` and `min_step` (a Jacobian given is the original system's: left out).
The derivatives are those of the exact solution, as accurate as the tolerances make them
(not the derivatives of the solver's own steps). Every floating-point item of `args` gets a
cotangent in the adjoint integration (constant data `func` reads as a global costs nothing).

The rules are first-order only: differentiating them again (`hessian`, `hvp`, a `jvp` of a
`grad`) is refused at compile time. `full_output=1`, complex `y0` and complex `args` are
refused; `Dfun`, `ml` and `mu` serve odeint's primal solve only. solve_ivp's result holds
`t` and `y` alone (`success`, `status`, `message` are refused where read); a call with
events or with dense output is read as SciPy's code, and refused.

Without `t_eval`, solve_ivp's output times are the steps its solver chooses, known only once
it has run (`solve_ivp_run`, SciPy's own solve, once). The derivative takes them as chosen,
as JAX's odeint takes its adaptive grid: `y` is differentiated as the solution at those
times (solve_ivp_values' rules with t_eval = them), the first and last of them move with
t_span (they are t_span's), and the times between are not differentiated (the solver's
choice of steps is not). A function of the solution at t_span's end alone has the exact
derivative; one of every output time has the derivative of the same function at times
fixed where the solver put them.
"""

import numpy as np
from scipy.integrate import odeint, solve_ivp

from s2sad.errors import MissingRuleError
from s2sad.ir.kinds import KIND_RULES, UNKNOWN, Kind, array, array_of_rank, scalar
from s2sad_rules.registry import Unknown, def_nondiff, defcheck, defjvp, defvjp, transforms


@defcheck(odeint)
def odeint_check(y0, args=(), full_output=0):
    if isinstance(full_output, Unknown) or full_output:
        return "full_output=1 (differentiate the solution alone)"
    if isinstance(y0, Unknown) and y0.dtype == "c":
        return "a complex y0 (odeint integrates real systems)"
    if isinstance(args, Unknown) and args.dtype == "c":
        return "complex items in args (odeint integrates real systems)"
    return None


@def_nondiff
def odeint_options(rtol, atol, tcrit, hmax, hmin, mxstep, tfirst):
    """The options of the call that the derivative's own integrations use, as (name, value)
    pairs: those given other than odeint's defaults."""
    given = []
    for name, value, default in (("rtol", rtol, None), ("atol", atol, None),
                                 ("tcrit", tcrit, None), ("hmax", hmax, 0.0),
                                 ("hmin", hmin, 0.0), ("mxstep", mxstep, 0),
                                 ("tfirst", tfirst, False)):
        if value is None or (np.ndim(value) == 0 and default is not None and
                             value == default):
            continue
        given.append((name, value))
    return tuple(given)


@defjvp(odeint)
def odeint_jvp(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
               rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0,
               mxstep=0, mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False,
               y0_dot=0.0, t_dot=0.0, args_dot=0.0):
    return odeint_tangents(func, y0, t, args, y0_dot, t_dot, args_dot,
                           odeint_options(rtol, atol, tcrit, hmax, hmin, mxstep, tfirst))


@defvjp(odeint, wrt=("y0", "t", "args"))
def odeint_vjp(g, ans, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None,
               mu=None, rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0,
               mxstep=0, mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False):
    bars = odeint_cotangents(func, y0, t, args, ans, g,
                             odeint_options(rtol, atol, tcrit, hmax, hmin, mxstep, tfirst))
    return bars[0], bars[1], bars[2]


# -- the run-time halves: integrations calling s2sad's derivatives of `func` ---------------

_DERIVATIVES: dict = {}  # (func, mode, wrt) -> the s2sad derivative, made on first use


def derivative_of(func, mode, wrt):
    """s2sad.jvp or s2sad.vjp of `func` with respect to the positions `wrt`, made once and
    kept (a derivative serves its compiled code while its guards hold)."""
    key = (func, mode, wrt)
    try:
        made = _DERIVATIVES.get(key)
    except TypeError:  # (an unhashable callable object: made for this call alone)
        return getattr(transforms, mode)(func, wrt=wrt)
    if made is None:
        if len(_DERIVATIVES) >= 256:  # (functools.partial objects made per call)
            _DERIVATIVES.pop(next(iter(_DERIVATIVES)))
        made = _DERIVATIVES[key] = getattr(transforms, mode)(func, wrt=wrt)
    return made


def is_floating(value):
    """Does `value` (an item of odeint's args) carry a derivative: a real float number or
    array, or a tuple or list of them?"""
    if isinstance(value, (tuple, list)):
        return len(value) > 0 and all(is_floating(v) for v in value)
    return np.asarray(value).dtype.kind == "f"


def as_tuple(args):
    return args if isinstance(args, tuple) else (args,)


def flat(value):
    """A float vector of the numbers in `value` (an array, a number, a tuple of them)."""
    if isinstance(value, (tuple, list)):
        return np.concatenate([flat(v) for v in value]) if value else np.zeros(0)
    return np.ravel(np.asarray(value, dtype=float))


def unflat(vector, like):
    """`vector` (from `flat`) in the structure and shapes of `like`; the rest of it."""
    if isinstance(like, (tuple, list)):
        items = []
        for v in like:
            item, vector = unflat(vector, v)
            items.append(item)
        return type(like)(items), vector
    size = np.size(like)
    part = vector[:size]
    item = float(part[0]) if np.ndim(like) == 0 else np.reshape(part, np.shape(like))
    return item, vector[size:]


def call_order(tfirst, y, s, args):
    """The arguments of `func`: (y, t, *args), or (t, y, *args) with tfirst."""
    return (s, y) + tuple(args) if tfirst else (y, s) + tuple(args)


def seed_like(out, vector):
    """A cotangent of `out` (what `func` returned: an array, a number, a list or tuple of
    numbers) holding the numbers of `vector`."""
    if isinstance(out, (tuple, list)):
        return type(out)(float(v) for v in vector)
    return np.reshape(vector, np.shape(out))


def tiled_atol(opts, repeats, others):
    """`opts` for an augmented system: an `atol` per state component repeated `repeats`
    times, then its least value for `others` more components."""
    atol = opts.get("atol")
    if atol is not None and np.ndim(atol) > 0:
        atol = np.ravel(atol)
        opts = dict(opts, atol=np.concatenate([atol] * repeats + [np.full(others,
                                                                          np.min(atol))]))
    return opts


def at_distinct_times(solve, rhs, z0, times):
    """solve(rhs, z0, times), each time solved for once where it repeats."""
    keep = np.concatenate([[True], times[1:] != times[:-1]])
    if keep.all():
        return solve(rhs, z0, times)
    distinct = times[keep]
    rows = solve(rhs, z0, distinct) if distinct.size > 1 else z0[None, :]
    return rows[np.cumsum(keep) - 1]


def odeint_solver(options):
    """The integrator of the augmented systems of an odeint call: make(repeats, others) ->
    solve(rhs, z0, times), the states at `times` as rows (rhs(z, t), as odeint calls it)."""
    opts = {k: v for k, v in options if k != "tfirst"}

    def make(repeats, others):
        kept = tiled_atol(opts, repeats, others)
        return lambda rhs, z0, times: odeint(rhs, z0, times, **kept)
    return make


def sensitivities(func, tfirst, y0, times, args, dy0, dtimes, dargs, solver):
    """The tangent of y at each of `times` (rows) of the solution of y' = func from y0 at
    times[0], along (dy0, dtimes, dargs): the sensitivity equations integrated alongside y."""
    y = flat(y0)
    n = y.size
    dargs = as_tuple(dargs) if isinstance(dargs, (tuple, list)) else (0.0,) * len(args)
    moving = tuple(i for i, a in enumerate(args)
                   if is_floating(a) and np.any(flat(dargs[i]) != 0.0))
    moved = tuple(dargs[i] for i in moving)
    v0 = np.zeros(n) + flat(dy0)
    dtimes = np.zeros(times.shape) + dtimes

    def f(y_, s):
        return flat(func(*call_order(tfirst, y_, s, args)))

    if dtimes[0] != 0.0:  # starting later: y(t0) moves by -f(y0, t0) dt0
        v0 = v0 - f(y, times[0]) * dtimes[0]
    jvp = derivative_of(func, "jvp", (1 if tfirst else 0,) + tuple(2 + i for i in moving))

    def sensitivity(state, s):
        out, out_dot = jvp(*call_order(tfirst, state[:n], s, args), state[n:], *moved)
        return np.concatenate([flat(out), np.zeros(n) + flat(out_dot)])

    solved = at_distinct_times(solver(2, 0), sensitivity, np.concatenate([y, v0]), times)
    ys_dot = solved[:, n:]
    for i in np.flatnonzero(dtimes):  # a later output time: y(t_i) moves by f dt_i
        ys_dot[i] = ys_dot[i] + f(solved[i, :n], times[i]) * dtimes[i]
    return ys_dot


def adjoints(func, tfirst, times, ys, g, args, solver):
    """The cotangents (y0's as a vector, the times', one per item of args) of the solution
    ys (rows) of y' = func at `times`, for its cotangent g (rows): the adjoint system
    integrated backwards from each ys[i] to the time before."""
    n = ys.shape[1]
    carried = tuple(i for i, a in enumerate(args) if is_floating(a))
    vjp = derivative_of(func, "vjp", (1 if tfirst else 0,) + tuple(2 + i for i in carried))
    sizes = [flat(args[i]).size for i in carried]

    def f(y_, s):
        return flat(func(*call_order(tfirst, y_, s, args)))

    def adjoint(state, s):
        y_, a = state[:n], state[n:2 * n]
        out, pullback = vjp(*call_order(tfirst, y_, s, args))
        bars = pullback(seed_like(out, -a))
        return np.concatenate([flat(out), np.zeros(n) + flat(bars[0])] +
                              [np.zeros(k) + flat(b) for k, b in zip(sizes, bars[1:])])

    solve = solver(1, n + sum(sizes))
    a = np.zeros(n)
    args_bar = np.zeros(sum(sizes))
    times_bar = np.zeros(times.size)
    for i in range(times.size - 1, 0, -1):
        a = a + g[i]
        times_bar[i] = np.dot(g[i], f(ys[i], times[i]))
        if times[i] == times[i - 1]:
            continue
        state = solve(adjoint, np.concatenate([ys[i], a, args_bar]),
                      np.array([times[i], times[i - 1]]))[-1]
        a, args_bar = state[n:2 * n], state[2 * n:]
    a = a + g[0]
    times_bar[0] = -np.dot(a - g[0], f(ys[0], times[0]))
    bars, _ = unflat(args_bar, tuple(args[i] for i in carried))
    args_bars = [0.0] * len(args)
    for i, b in zip(carried, bars):
        args_bars[i] = b
    return a, times_bar, tuple(args_bars)


def odeint_tangents(func, y0, t, args, dy0, dt, dargs, options):
    """The tangent of odeint(func, y0, t, args) along (dy0, dt, dargs)."""
    times = np.asarray(t, dtype=float)
    return sensitivities(func, dict(options).get("tfirst", False), y0, times, as_tuple(args),
                         dy0, np.asarray(dt, dtype=float), dargs, odeint_solver(options))


def odeint_cotangents(func, y0, t, args, ys, ys_bar, options):
    """The cotangents of y0, t and args of odeint(func, y0, t, args) = ys for the cotangent
    ys_bar of ys."""
    times = np.asarray(t, dtype=float)
    n = np.size(y0)
    a, times_bar, args_bars = adjoints(
        func, dict(options).get("tfirst", False), times, np.reshape(ys, (times.size, n)),
        np.zeros((times.size, n)) + ys_bar, as_tuple(args), odeint_solver(options))
    y0_bar = float(a[0]) if np.ndim(y0) == 0 else np.reshape(a, np.shape(y0))
    return y0_bar, times_bar if np.ndim(t) else float(times_bar[0]), args_bars


# -- solve_ivp with t_eval: its solution there, a primitive ---------------------------------

class IVPSolution:
    """What a call of solve_ivp with `t_eval` (and no events, no dense output) gives the
    differentiated code (s2sad/frontend/library_shims.py): the solution `y` (a row per
    component) at the times `t`. Its other attributes (`success`, `status`, `message`,
    `nfev`, ...) are not read there."""


def solve_ivp_values(fun, t_span, y0, t_eval, method, args, options):
    """solve_ivp(fun, t_span, y0, method=method, t_eval=t_eval, args=args, **options).y."""
    return solve_ivp(fun, t_span, y0, method=method, t_eval=t_eval, args=args,
                     **dict(options)).y


@defcheck(solve_ivp_values)
def solve_ivp_check(y0, args):
    if isinstance(y0, Unknown) and y0.dtype == "c":
        return "a complex y0 (its rules integrate real systems)"
    if isinstance(args, Unknown) and args.dtype == "c":
        return "complex items in args (its rules integrate real systems)"
    return None


@defjvp(solve_ivp_values)
def solve_ivp_values_jvp(fun, t_span, y0, t_eval, method, args, options, t_span_dot=0.0,
                         y0_dot=0.0, t_eval_dot=0.0, args_dot=0.0):
    return ivp_tangents(fun, t_span, y0, t_eval, method, args, options, t_span_dot, y0_dot,
                        t_eval_dot, args_dot)


@defvjp(solve_ivp_values, wrt=("t_span", "y0", "t_eval", "args"))
def solve_ivp_values_vjp(g, ans, fun, t_span, y0, t_eval, method, args, options):
    bars = ivp_cotangents(fun, t_span, y0, t_eval, method, args, options, ans, g)
    return bars[0], bars[1], bars[2], bars[3]


# -- solve_ivp without t_eval: the solution at the times its solver chose ------------------
# The number of those times is known only once the solver has run. The derivative takes them
# as they were chosen (as JAX's odeint takes its adaptive grid): the times between the ends
# are not differentiated; the first and the last are t_span's (they move with it), and `y`
# is the solution at those times (solve_ivp_values' rules with t_eval = the times).


@def_nondiff
def solve_ivp_run(fun, t_span, y0, method, args, options):
    """solve_ivp(fun, t_span, y0, method=method, args=args, **options): SciPy's result, its
    times `t` chosen by the solver, its solution `y` there."""
    return solve_ivp(fun, t_span, y0, method=method, args=args, **dict(options))


def chosen_times(run, t_span):
    """The times the solver chose (`run.t`), with its first and last those of `t_span` (the
    same numbers: SciPy starts at t_span[0] and ends its last step on t_span[1]), so that they
    move with t_span in the derivative; the times between are the solver's choice."""
    return np.asarray(run.t, dtype=float)


@defjvp(chosen_times)
def chosen_times_jvp(run, t_span, t_span_dot=0.0, ans=0.0):
    return ends_tangent(ans, t_span_dot)


@defvjp(chosen_times, wrt=("t_span",))
def chosen_times_vjp(g, ans, run, t_span):
    span_bar = ends_cotangent(g, t_span)
    return span_bar


def ends_tangent(times, direction):
    """The tangent of chosen_times along the tangent `direction` of t_span: its first item
    at the first time, its last at the last, 0 between."""
    dot = np.zeros(np.shape(times))
    if dot.size:
        ends = flat(direction)[[0, -1]] if np.size(direction) else np.zeros(2)
        dot[0] = ends[0]
        dot[-1] = dot[-1] + ends[-1]
    return dot


def ends_cotangent(bar, t_span):
    """The cotangent of t_span from the cotangent `bar` of chosen_times (a tuple t_span gets
    a tuple)."""
    g = np.ravel(bar)
    first, last = (float(g[0]), float(g[-1]) if g.size > 1 else 0.0) if g.size else (0.0, 0.0)
    if isinstance(t_span, (tuple, list)):
        return type(t_span)([first] + [0.0] * (len(t_span) - 2) + [last])
    bar = np.zeros(np.shape(t_span))
    bar.flat[0] = first
    bar.flat[-1] = bar.flat[-1] + last
    return bar


def solve_ivp_at(run, fun, t_span, y0, times, method, args, options):
    """`run.y`: the solution at `times` (run.t, see chosen_times), as solve_ivp_values
    computes it with t_eval=times; its rules are solve_ivp_values'."""
    return run.y


@defcheck(solve_ivp_at)
def solve_ivp_at_check(y0, args):
    return solve_ivp_check(y0, args)


@defjvp(solve_ivp_at)
def solve_ivp_at_jvp(run, fun, t_span, y0, times, method, args, options, t_span_dot=0.0,
                     y0_dot=0.0, times_dot=0.0, args_dot=0.0):
    return ivp_tangents(fun, t_span, y0, times, method, args, options, t_span_dot, y0_dot,
                        times_dot, args_dot)


@defvjp(solve_ivp_at, wrt=("t_span", "y0", "times", "args"))
def solve_ivp_at_vjp(g, ans, run, fun, t_span, y0, times, method, args, options):
    bars = ivp_cotangents(fun, t_span, y0, times, method, args, options, ans, g)
    return bars[0], bars[1], bars[2], bars[3]


def ivp_solver(method, options):
    """The integrator of the augmented systems of a solve_ivp call (see odeint_solver): its
    method, and of its options the tolerances and step bounds (a Jacobian or its sparsity
    is the original system's)."""
    opts = {k: v for k, v in options if k in ("rtol", "atol", "max_step", "min_step")}

    def make(repeats, others):
        kept = tiled_atol(opts, repeats, others)

        def solve(rhs, z0, times):
            return solve_ivp(lambda s, z: rhs(z, s), (times[0], times[-1]), z0, method=method,
                             t_eval=times, **kept).y.T
        return solve
    return make


def ivp_times(t_span, t_eval):
    """The initial time, then the output times."""
    return np.concatenate([flat(t_span)[:1], np.ravel(np.asarray(t_eval, dtype=float))])


def ivp_tangents(fun, t_span, y0, t_eval, method, args, options, dt_span, dy0, dt_eval,
                 dargs):
    """The tangent of solve_ivp_values along (dt_span, dy0, dt_eval, dargs)."""
    times = ivp_times(t_span, t_eval)
    dtimes = np.concatenate([(np.zeros(2) + flat(dt_span))[:1],
                             np.zeros(times.size - 1) + np.ravel(dt_eval)])
    rows = sensitivities(fun, True, y0, times, () if args is None else as_tuple(args), dy0,
                         dtimes, dargs, ivp_solver(method, options))
    return rows[1:].T


def ivp_cotangents(fun, t_span, y0, t_eval, method, args, options, ys, ys_bar):
    """The cotangents of t_span, y0, t_eval and args of solve_ivp_values = ys for the
    cotangent ys_bar of ys (t_span's end is only a bound: its cotangent is 0)."""
    times = ivp_times(t_span, t_eval)
    n, m = np.size(y0), times.size - 1
    rows = np.concatenate([flat(y0)[None, :], np.reshape(ys, (n, m)).T])
    g = np.concatenate([np.zeros((1, n)), (np.zeros((n, m)) + ys_bar).T])
    a, times_bar, args_bars = adjoints(fun, True, times, rows, g,
                                       () if args is None else as_tuple(args),
                                       ivp_solver(method, options))
    if isinstance(t_span, (tuple, list)):
        t_span_bar = type(t_span)([times_bar[0]] + [0.0] * (len(t_span) - 1))
    else:
        t_span_bar = np.zeros(np.shape(t_span))
        t_span_bar[0] = times_bar[0]
    t_eval_bar = times_bar[1:] if np.ndim(t_eval) else float(times_bar[1])
    return (t_span_bar, np.reshape(a, np.shape(y0)), t_eval_bar,
            0.0 if args is None else args_bars)


# -- the run-time halves are differentiated no further ----------------------------------

def refuse_second_order():
    """The check of the run-time halves of the rules: a call of them is differentiated only
    by a second derivative, which is refused."""
    raise MissingRuleError(
        "the derivative rules of scipy.integrate's odeint and solve_ivp are first-order "
        "only: a second derivative (hessian, hvp, a jvp of a grad) of a function solving an "
        "ODE with them is not computed",
        hint="take first derivatives only (grad, jvp, vjp, jacfwd, jacrev), or finite "
        "differences of the gradient")


# (rules in name only, so that a derivative flows through the halves' arguments and reaches
# the check, which refuses it: never inlined)
@defjvp(odeint_tangents)
def odeint_tangents_jvp(func, y0, t, args, dy0, dt, dargs, options, y0_dot=0.0, t_dot=0.0,
                        args_dot=0.0, dy0_dot=0.0, dt_dot=0.0, dargs_dot=0.0):
    return 0.0


@defvjp(odeint_tangents, wrt=("y0", "t", "args", "dy0", "dt", "dargs"))
def odeint_tangents_vjp(g, func, y0, t, args, dy0, dt, dargs, options):
    return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0


@defjvp(odeint_cotangents)
def odeint_cotangents_jvp(func, y0, t, args, ys, ys_bar, options, y0_dot=0.0, t_dot=0.0,
                          args_dot=0.0, ys_dot=0.0, ys_bar_dot=0.0):
    return 0.0


@defvjp(odeint_cotangents, wrt=("y0", "t", "args", "ys", "ys_bar"))
def odeint_cotangents_vjp(g, func, y0, t, args, ys, ys_bar, options):
    return 0.0, 0.0, 0.0, 0.0, 0.0


@defjvp(ivp_tangents)
def ivp_tangents_jvp(fun, t_span, y0, t_eval, method, args, options, dt_span, dy0, dt_eval,
                     dargs, t_span_dot=0.0, y0_dot=0.0, t_eval_dot=0.0, args_dot=0.0,
                     dt_span_dot=0.0, dy0_dot=0.0, dt_eval_dot=0.0, dargs_dot=0.0):
    return 0.0


@defvjp(ivp_tangents, wrt=("t_span", "y0", "t_eval", "args", "dt_span", "dy0", "dt_eval",
                           "dargs"))
def ivp_tangents_vjp(g, fun, t_span, y0, t_eval, method, args, options, dt_span, dy0,
                     dt_eval, dargs):
    return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0


@defjvp(ivp_cotangents)
def ivp_cotangents_jvp(fun, t_span, y0, t_eval, method, args, options, ys, ys_bar,
                       t_span_dot=0.0, y0_dot=0.0, t_eval_dot=0.0, args_dot=0.0, ys_dot=0.0,
                       ys_bar_dot=0.0):
    return 0.0


@defvjp(ivp_cotangents, wrt=("t_span", "y0", "t_eval", "args", "ys", "ys_bar"))
def ivp_cotangents_vjp(g, fun, t_span, y0, t_eval, method, args, options, ys, ys_bar):
    return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0


@defjvp(ends_tangent)
def ends_tangent_jvp(times, direction, times_dot=0.0, direction_dot=0.0):
    return 0.0


@defvjp(ends_tangent, wrt=("times", "direction"))
def ends_tangent_vjp(g, times, direction):
    return 0.0, 0.0


@defjvp(ends_cotangent)
def ends_cotangent_jvp(bar, t_span, bar_dot=0.0, t_span_dot=0.0):
    return 0.0


@defvjp(ends_cotangent, wrt=("bar", "t_span"))
def ends_cotangent_vjp(g, bar, t_span):
    return 0.0, 0.0


HALVES = (odeint_tangents, odeint_cotangents, ivp_tangents, ivp_cotangents, ends_tangent,
          ends_cotangent)
defcheck(*HALVES)(refuse_second_order)
UNLISTED = HALVES  # (off docs/rules.md: the rules' own helpers)


# -- result kinds, from the arguments' (never by integrating stand-ins while compiling) ----

def _times_count(t):
    """The number of output times, where the kind of `t` gives it (a symbol or an int)."""
    if t.tag == "array" and t.shape is not None and len(t.shape) == 1:
        return t.shape[0]
    if t.tag in ("tuple", "list"):
        return len(t.items)
    return None


def _solution_kind(args, kwargs):
    """odeint's result, and its tangent: one row of len(y0) numbers per output time."""
    if len(args) < 3 or kwargs.get("full_output", scalar("i", 0)).value not in (0, False):
        return UNKNOWN
    y0, t = args[1], args[2]
    m = _times_count(t)
    n = 1 if y0.tag == "scalar" else y0.shape[0] if (
        y0.tag == "array" and y0.shape is not None and len(y0.shape) == 1) else None
    if m is None or n is None:
        return array_of_rank("f", 2)
    return array("f", (m, n))


def _carries(k):
    """Does an item of `args` of kind `k` get a cotangent (see is_floating)?"""
    if k.tag in ("tuple", "list"):
        return len(k.items) > 0 and all(_carries(i) for i in k.items)
    return k.tag in ("scalar", "array") and k.dtype == "f"


def _in_floats(k):
    """The kind of a derivative of a value of kind `k`: floats of its shape, no value."""
    if k.tag in ("tuple", "list"):
        return Kind(k.tag, items=tuple(_in_floats(i) for i in k.items))
    if k.tag == "array":
        return Kind("array", "f", k.shape, rank=k.rank) if k.shape is None else \
            array("f", k.shape)
    return scalar("f") if k.tag == "scalar" else UNKNOWN


def _args_bar_kind(args):
    """The cotangent of `args`: an item's kind in floats where it carries one, else 0.0."""
    if args.known and args.value is None:  # (solve_ivp's args=None)
        return scalar("f")
    if args.tag not in ("tuple", "list"):
        return UNKNOWN
    return Kind("tuple", items=tuple(_in_floats(i) if _carries(i) else scalar("f")
                                     for i in args.items))


def _cotangents_kind(args, kwargs):
    """odeint_cotangents' (y0_bar, t_bar, args_bar): the kinds of y0, t and args, in floats."""
    if len(args) < 4:
        return UNKNOWN
    return Kind("tuple", items=(_in_floats(args[1]), _in_floats(args[2]),
                                _args_bar_kind(args[3])))


def _ivp_solution_kind(args, kwargs):
    """solve_ivp's `y`, and its tangent: a row of len(t_eval) numbers per component."""
    if len(args) < 4:
        return UNKNOWN
    y0, m = args[2], _times_count(args[3])
    n = y0.shape[0] if y0.tag == "array" and y0.shape is not None and len(y0.shape) == 1 \
        else None
    return array_of_rank("f", 2) if m is None or n is None else array("f", (n, m))


def _ivp_cotangents_kind(args, kwargs):
    """ivp_cotangents' (t_span_bar, y0_bar, t_eval_bar, args_bar)."""
    if len(args) < 6:
        return UNKNOWN
    return Kind("tuple", items=(_in_floats(args[1]), _in_floats(args[2]), _in_floats(args[3]),
                                _args_bar_kind(args[5])))


KIND_RULES[odeint] = _solution_kind
KIND_RULES[odeint_tangents] = _solution_kind
KIND_RULES[odeint_cotangents] = _cotangents_kind
KIND_RULES[solve_ivp_values] = _ivp_solution_kind
KIND_RULES[solve_ivp_run] = lambda args, kwargs: Kind("object")
KIND_RULES[chosen_times] = lambda args, kwargs: array_of_rank("f", 1)
KIND_RULES[ends_tangent] = lambda args, kwargs: array_of_rank("f", 1)
KIND_RULES[ends_cotangent] = lambda args, kwargs: _in_floats(args[1]) if len(args) > 1 \
    else UNKNOWN
KIND_RULES[solve_ivp_at] = lambda args, kwargs: _ivp_solution_kind(args[1:], kwargs)
KIND_RULES[ivp_tangents] = _ivp_solution_kind
KIND_RULES[ivp_cotangents] = _ivp_cotangents_kind
