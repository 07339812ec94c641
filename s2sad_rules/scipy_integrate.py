"""Rules for `scipy.integrate.odeint`: `ys = odeint(func, y0, t, args)` differentiated in `y0`,
the output times `t` and the items of `args` (`func(y, t, *args)` is dy/dt; with
`tfirst=True`, `func(t, y, *args)`).

Loaded, like scipy_special, the first time a differentiated function calls scipy.integrate.
`func` is differentiated by s2sad itself: it must be code s2sad can differentiate, defined at
module level or passed in (a function defined inside the differentiated function is refused).
Its derivatives are made at run time by `s2sad.jvp` and `s2sad.vjp`, compiled once per
function and kept, with their guards (a global that `func` reads changing recompiles them).

Forward mode integrates the sensitivity equations alongside y: v' = df/dy v + df/dargs
args_dot from v(t0) = y0_dot - f(y0, t0) t_dot[0], and adds f(y_i, t_i) t_dot[i] at each
output time. Reverse mode is the adjoint method (continuous reverse mode, as autograd's and
JAX's odeint): between consecutive output times, backwards from the stored y(t_i), it
integrates y' = f, a' = -a df/dy and args_bar' = -a df/dargs, adding each output's
cotangent to a at its time; t[i] gets g_i . f(y_i, t_i), and t[0] -(y0_bar - g_0) . f(y0, t0).
Both integrate with odeint at the call's `rtol`, `atol`, `hmax`, `hmin`, `mxstep` and `tcrit`:
the derivatives are those of the exact solution, as accurate as the tolerances make them
(not the derivatives of the solver's own steps). Every floating-point item of `args` gets a
cotangent in the adjoint integration (constant data `func` reads as a global costs nothing).

The rules are first-order only: differentiating them again (`hessian`, `hvp`, a `jvp` of a
`grad`) is refused at compile time. `full_output=1`, complex `y0` and complex `args` are
refused; `Dfun`, `ml` and `mu` serve the primal solve only.
"""

import numpy as np
from scipy.integrate import odeint

from s2sad.errors import MissingRuleError
from s2sad.ir.kinds import KIND_RULES, UNKNOWN, Kind, array, array_of_rank, float_kind, scalar
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


def solver_options(options, repeats, others):
    """odeint's keywords for an augmented system: the call's options, with an `atol` per state
    component repeated `repeats` times, then its least value for `others` more components."""
    opts = {k: v for k, v in options if k != "tfirst"}
    atol = opts.get("atol")
    if atol is not None and np.ndim(atol) > 0:
        atol = np.ravel(atol)
        opts["atol"] = np.concatenate([atol] * repeats + [np.full(others, np.min(atol))])
    return opts


def odeint_tangents(func, y0, t, args, dy0, dt, dargs, options):
    """The tangent of odeint(func, y0, t, args) along (dy0, dt, dargs): the sensitivity
    equations integrated alongside y."""
    tfirst = dict(options).get("tfirst", False)
    args = as_tuple(args)
    y = flat(y0)
    n = y.size
    times = np.asarray(t, dtype=float)
    dargs = as_tuple(dargs) if isinstance(dargs, (tuple, list)) else (0.0,) * len(args)
    moving = tuple(i for i, a in enumerate(args)
                   if is_floating(a) and np.any(flat(dargs[i]) != 0.0))
    moved = tuple(dargs[i] for i in moving)
    v0 = np.zeros(n) + flat(dy0)
    times_dot = np.zeros(times.shape) + np.asarray(dt, dtype=float)

    def f(y_, s):
        return flat(func(*call_order(tfirst, y_, s, args)))

    if times_dot[0] != 0.0:  # starting later: y(t0) moves by -f(y0, t0) dt0
        v0 = v0 - f(y, times[0]) * times_dot[0]
    jvp = derivative_of(func, "jvp", (1 if tfirst else 0,) + tuple(2 + i for i in moving))

    def sensitivity(state, s):
        out, out_dot = jvp(*call_order(tfirst, state[:n], s, args), state[n:], *moved)
        return np.concatenate([flat(out), np.zeros(n) + flat(out_dot)])

    solved = odeint(sensitivity, np.concatenate([y, v0]), times,
                    **solver_options(options, 2, 0))
    ys_dot = solved[:, n:]
    for i in np.flatnonzero(times_dot):  # a later output time: y(t_i) moves by f dt_i
        ys_dot[i] = ys_dot[i] + f(solved[i, :n], times[i]) * times_dot[i]
    return ys_dot


def odeint_cotangents(func, y0, t, args, ys, ys_bar, options):
    """The cotangents of y0, t and args of odeint(func, y0, t, args) = ys for the cotangent
    ys_bar of ys: the adjoint system integrated backwards between the output times."""
    tfirst = dict(options).get("tfirst", False)
    args = as_tuple(args)
    n = np.size(y0)
    times = np.asarray(t, dtype=float)
    ys = np.reshape(ys, (times.size, n))
    g = np.zeros((times.size, n)) + ys_bar
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

    opts = solver_options(options, 1, n + sum(sizes))
    a = np.zeros(n)
    args_bar = np.zeros(sum(sizes))
    times_bar = np.zeros(times.size)
    for i in range(times.size - 1, 0, -1):
        a = a + g[i]
        times_bar[i] = np.dot(g[i], f(ys[i], times[i]))
        if times[i] == times[i - 1]:
            continue
        state = odeint(adjoint, np.concatenate([ys[i], a, args_bar]),
                       np.array([times[i], times[i - 1]]), **opts)[-1]
        a, args_bar = state[n:2 * n], state[2 * n:]
    a = a + g[0]
    times_bar[0] = -np.dot(a - g[0], f(ys[0], times[0]))
    y0_bar = float(a[0]) if np.ndim(y0) == 0 else np.reshape(a, np.shape(y0))
    bars, _ = unflat(args_bar, tuple(args[i] for i in carried))
    args_bars = [0.0] * len(args)
    for i, b in zip(carried, bars):
        args_bars[i] = b
    t_bar = times_bar if np.ndim(t) else float(times_bar[0])
    return y0_bar, t_bar, tuple(args_bars)


# -- the run-time halves are differentiated no further ----------------------------------

def refuse_second_order():
    """The check of the run-time halves of odeint's rules: a call of them is differentiated
    only by a second derivative, which is refused."""
    raise MissingRuleError(
        "the derivative rules of scipy.integrate.odeint are first-order only: a second "
        "derivative (hessian, hvp, a jvp of a grad) of a function calling odeint is not "
        "computed",
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


defcheck(odeint_tangents, odeint_cotangents)(refuse_second_order)
UNLISTED = (odeint_tangents, odeint_cotangents)  # (off docs/rules.md: odeint's own helpers)


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


def _args_bar_kind(args):
    """The cotangent of `args`: an item's kind in floats where it carries one, else 0.0."""
    if args.tag not in ("tuple", "list"):
        return UNKNOWN
    return Kind("tuple", items=tuple(float_kind(i) if _carries(i) else scalar("f")
                                     for i in args.items))


def _cotangents_kind(args, kwargs):
    """odeint_cotangents' (y0_bar, t_bar, args_bar): the kinds of y0, t and args, in floats."""
    if len(args) < 4:
        return UNKNOWN
    return Kind("tuple", items=(float_kind(args[1]), float_kind(args[2]),
                                _args_bar_kind(args[3])))


KIND_RULES[odeint] = _solution_kind
KIND_RULES[odeint_tangents] = _solution_kind
KIND_RULES[odeint_cotangents] = _cotangents_kind
