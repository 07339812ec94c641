"""Library dispatch layers, seen through while lowering.

SciPy's array-API layer (`array_namespace`, `xp_promote`, `_asarray`) picks a namespace and
converts arguments before the arithmetic. On NumPy arrays (the only arrays a derivative is
specialised for, besides the families of `Kind.family`, which keep the layer as written)
it is NumPy itself and `np.asarray`: lowering replaces each call by what it amounts to, so
that `xp.sum(...)` is `np.sum(...)` and the arithmetic behind it is differentiated.
"""

from __future__ import annotations

import operator
import sys

import numpy as np

from s2sad.ir.nodes import Const

# (module, function name) -> handler(lowerer, args, kwargs, node) -> lowered value or None
_HANDLERS: dict = {}


def _handler(module: str, name: str):
    def register(fn):
        _HANDLERS[(module, name)] = fn
        return fn
    return register


def shim_for(fn):
    """The handler that sees through `fn`, or None (looked up by where `fn` is defined, so
    that a SciPy that is not installed costs nothing)."""
    module = getattr(fn, "__module__", None)
    if not module or not module.startswith(("scipy.", "sklearn.")) or module not in sys.modules:
        return None
    try:
        return _HANDLERS.get((module, fn.__name__))
    except (TypeError, AttributeError):
        return None


@_handler("scipy._lib._array_api_override", "array_namespace")  # (SciPy >= 1.17)
@_handler("scipy._lib._array_api", "array_namespace")
def _array_namespace(lw, args, kwargs, node):
    from s2sad.frontend.values import Static
    return Static(np, "np")


def _as_array(lw, value, dtype, node):
    from s2sad.frontend.values import StaticSeq
    if isinstance(value, Const) and value.value is None:
        return value
    kw = [] if dtype is None or (isinstance(dtype, Const) and dtype.value is None) else \
        [("dtype", dtype)]
    if isinstance(value, StaticSeq):
        return lw.call_value(np.asarray, [value], kw, node)
    return lw.call_value(np.asarray, [value], kw, node)


@_handler("scipy._lib._array_api", "_asarray")
def _asarray(lw, args, kwargs, node):
    options = dict(kwargs)
    if len(args) != 1 or set(options) - {"dtype", "xp", "subok", "check_finite", "copy",
                                          "order"}:
        return None
    if isinstance(options.get("check_finite"), Const) and options["check_finite"].value:
        return None  # (it raises on inf or NaN: read it as written)
    return _as_array(lw, args[0], options.get("dtype"), node)


@_handler("scipy._lib._array_api", "xp_promote")
def _xp_promote(lw, args, kwargs, node):
    from s2sad.frontend.values import StaticSeq
    options = dict(kwargs)
    if set(options) - {"broadcast", "force_floating", "xp"}:
        return None
    broadcast = options.get("broadcast", Const(False))
    floating = options.get("force_floating", Const(False))
    if not (isinstance(broadcast, Const) and isinstance(floating, Const)) or broadcast.value:
        return None
    out = []
    for a in args:
        if isinstance(a, Const) and a.value is None:
            out.append(a)
            continue
        v = _as_array(lw, a, None, node)
        if floating.value:  # an integer array becomes float64; a float one keeps its dtype
            v = lw.call_value(operator.mul, [v, Const(1.0)], [], node)
        out.append(v)
    return out[0] if len(out) == 1 else StaticSeq(tuple(out))


def _continuous(name):
    def handler(lw, args, kwargs, node):
        from s2sad.frontend import scipy_models
        from s2sad.frontend.values import Static
        fn = lw.current_shim_callee
        dist = getattr(fn, "__self__", None)
        stats = sys.modules.get("scipy.stats")
        if stats is None or not isinstance(dist, (stats.rv_continuous, stats.rv_discrete)) or \
                name not in scipy_models.MODELS or (
                    isinstance(dist, stats.rv_discrete) and name not in _DISCRETE):
            return None
        return lw.call_value(scipy_models.MODELS[name],
                             [Static(dist, type(dist).__name__)] + list(args), kwargs, node)
    return handler


for _name in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "logpmf", "pmf", "ppf"):
    _HANDLERS[("scipy.stats._distn_infrastructure", _name)] = _continuous(_name)
_DISCRETE = ("logpmf", "pmf", "freeze")  # (rv_discrete's methods with models)


def _multivariate_normal(name):
    """multivariate_normal.logpdf/pdf(x, mean, cov): s2sad's model (a solve and a log
    determinant) for a covariance given as an array; SciPy's code as written otherwise (a
    `Covariance` object)."""
    def handler(lw, args, kwargs, node):
        from s2sad.frontend import scipy_models
        from s2sad.frontend.values import Static
        fn = lw.current_shim_callee
        gen = getattr(sys.modules.get("scipy.stats._multivariate"),
                      "multivariate_normal_gen", None)
        if gen is None or not isinstance(getattr(fn, "__self__", None), gen):
            return None
        names = ("x", "mean", "cov", "allow_singular")
        given = dict(zip(names, args))
        given.update(kwargs)
        if len(args) > len(names) or set(given) - set(names) or any(
                isinstance(v, Static) for v in given.values()):
            return None
        model = scipy_models.mvn_logpdf if name == "logpdf" else scipy_models.mvn_pdf
        return lw.call_value(model, args, kwargs, node)
    return handler


for _name in ("logpdf", "pdf"):
    _HANDLERS[("scipy.stats._multivariate", _name)] = _multivariate_normal(_name)
# `dist(*shapes, loc=, scale=)` and `dist.freeze(...)`: a frozen distribution, read as an
# object holding the distribution and its arguments (scipy_models.Frozen)
_HANDLERS[("scipy.stats._distn_infrastructure", "__call__")] = _continuous("freeze")
_HANDLERS[("scipy.stats._distn_infrastructure", "freeze")] = _continuous("freeze")


@_handler("scipy.integrate._ivp.ivp", "solve_ivp")
def _solve_ivp(lw, args, kwargs, node):
    """solve_ivp with `t_eval`, without events or dense output: an object holding `t` (the
    times) and `y`, the solution there (s2sad_rules.scipy_integrate.solve_ivp_values, a
    primitive with rules). Any other call is read as written (and refused)."""
    from s2sad.frontend.values import ObjectRecord, StaticSeq
    names = ("fun", "t_span", "y0", "method", "t_eval", "dense_output", "events",
             "vectorized", "args")
    given = dict(zip(names, args))
    if len(args) > len(names) or any(k in given for k, _ in kwargs):
        return None
    given.update(kwargs)

    def off(name):  # (absent, None, False or 0)
        v = given.get(name)
        return v is None or (isinstance(v, Const) and (v.value is None or (
            isinstance(v.value, (bool, int)) and not v.value)))
    if off("t_eval") or not (off("dense_output") and off("events") and off("vectorized")) \
            or any(n not in given for n in names[:3]):
        return None
    from s2sad_rules import scipy_integrate
    options = StaticSeq(tuple(StaticSeq((Const(k), v)) for k, v in kwargs if k not in names))
    y = lw.call_value(scipy_integrate.solve_ivp_values, [
        given["fun"], given["t_span"], given["y0"], given["t_eval"],
        given.get("method", Const("RK45")), given.get("args", Const(None)), options], [], node,
        hint="y")
    made = ObjectRecord(scipy_integrate.IVPSolution, lw.control_depth)
    made.attrs["y"] = y
    made.attrs["t"] = lw.call_value(np.asarray, [given["t_eval"]], [("dtype", Const(float))],
                                    node, hint="t")
    return made


def parse_args_binding(lw, fn, args, kwargs, node):
    """A distribution's `_parse_args(*shapes, loc=0, scale=1)` (made by exec: no source):
    (shapes, loc, scale), bound while compiling from its signature."""
    import inspect

    from s2sad.frontend.values import StaticSeq
    try:
        bound = inspect.signature(fn).bind(*args, **dict(kwargs))
    except TypeError:
        return None
    bound.apply_defaults()
    named = {n: v if not isinstance(v, (int, float)) or isinstance(v, bool) else Const(v)
             for n, v in bound.arguments.items()}
    if "loc" not in named:
        return None
    loc = named.pop("loc")
    scale = named.pop("scale", Const(1))  # (a discrete distribution has no scale)
    return StaticSeq((StaticSeq(tuple(named.values())), loc, scale))


@_handler("scipy._lib._util", "_lazywhere")  # (SciPy < 1.16)
def _lazywhere(lw, args, kwargs, node):
    """_lazywhere(cond, arrays, f, fillvalue=None, f2=None): apply_where's older form."""
    options = dict(zip(("cond", "arrays", "f", "fillvalue", "f2"), args))
    options.update(kwargs)
    if set(options) - {"cond", "arrays", "f", "fillvalue", "f2"} or \
            not {"cond", "arrays", "f"} <= set(options):
        return None
    f2 = options.get("f2")
    if f2 is not None and not (isinstance(f2, Const) and f2.value is None):
        return _apply_where(lw, [options["cond"], options["arrays"], options["f"], f2], [],
                            node)
    fill = options.get("fillvalue", Const(None))
    if isinstance(fill, Const) and fill.value is None:
        return None  # (an output of f's values alone, left empty elsewhere: read as written)
    return _apply_where(lw, [options["cond"], options["arrays"], options["f"]],
                        [("fill_value", fill)], node)


@_handler("scipy._external.array_api_extra._lib._funcs", "apply_where")  # (SciPy >= 1.18)
@_handler("scipy._lib.array_api_extra._lib._funcs", "apply_where")
def _apply_where(lw, args, kwargs, node):
    """apply_where(cond, args, f1, f2=None, fill_value=...): f1 where `cond`, else f2 or
    the fill value, both computed on every entry and chosen by np.where (the entries a
    branch does not choose get no derivative from it)."""
    from s2sad.frontend.values import StaticSeq
    options = dict(kwargs)
    if not 3 <= len(args) <= 4 or set(options) - {"fill_value", "xp"}:
        return None
    cond, operands, f1 = args[:3]
    f2 = args[3] if len(args) == 4 else None
    if isinstance(f2, Const) and f2.value is None:
        f2 = None
    items = list(operands.items) if isinstance(operands, StaticSeq) else [operands]
    items = [lw.call_value(np.asarray, [v], [], node) for v in items]
    first = lw.call_lowered(f1, items, [], node)
    if f2 is not None:
        other = lw.call_lowered(f2, items, [], node)
    elif "fill_value" in options:
        other = options["fill_value"]
    else:
        return None
    return lw.call_value(np.where, [cond, first, other], [], node)


def unwrapped(fn):
    """The function a library's argument-validating decorator wraps, where the wrapper only
    checks arguments (scikit-learn's @validate_params): the checks carry no derivative, and
    the wrapper's `try`/`with` machinery need not be read. Else `fn` itself."""
    code = getattr(fn, "__code__", None)
    inner = getattr(fn, "__wrapped__", None)
    if code is None or inner is None or code.co_name != "wrapper":
        return fn
    path = code.co_filename.replace("\\", "/")
    if path.endswith("sklearn/utils/_param_validation.py"):
        return inner
    return fn


def _numpy_namespace(*extra):
    def handler(lw, args, kwargs, node):
        from s2sad.frontend.values import Static, StaticSeq
        return StaticSeq((Static(np, "np"),) + tuple(Const(v) for v in extra))
    return handler


# scikit-learn's array-API layer: NumPy, not array-API compliant, no device
_HANDLERS[("sklearn.utils._array_api", "get_namespace")] = _numpy_namespace(False)
_HANDLERS[("sklearn.utils._array_api", "get_namespace_and_device")] = _numpy_namespace(False,
                                                                                        None)


@_handler("sklearn.utils._array_api", "move_to")
def _move_to(lw, args, kwargs, node):
    """move_to(*arrays, xp, device) to NumPy on the CPU: the arrays themselves."""
    from s2sad.frontend.values import StaticSeq
    return args[0] if len(args) == 1 else StaticSeq(tuple(args))


@_handler("scipy.linalg._misc", "norm")
def _scipy_norm(lw, args, kwargs, node):
    """scipy.linalg.norm: NumPy's norm computed through BLAS where it can ("differs from
    numpy only in non-finite handling and the use of blas", its docstring says)."""
    options = dict(kwargs)
    names = ("a", "ord", "axis", "keepdims", "check_finite")
    if len(args) > len(names) or set(options) - set(names):
        return None
    options.update(zip(names, args))
    a = lw.call_value(np.asarray, [options.pop("a")], [], node)
    options.pop("check_finite", None)
    return lw.call_value(np.linalg.norm, [a], list(options.items()), node)


def _distance(name):
    def handler(lw, args, kwargs, node):
        from s2sad.frontend import scipy_models
        options = dict(kwargs)
        metric = options.get("metric", args[2 if name == "cdist" else 1]
                             if len(args) > (2 if name == "cdist" else 1) else None)
        if name != "squareform" and metric is not None and not (
                isinstance(metric, Const) and metric.value in (
                    "sqeuclidean", "euclidean", "cityblock", "chebyshev", "minkowski")):
            return None  # (another metric: SciPy's code, as written)
        if set(options) - {"metric", "p", "force", "checks"}:
            return None
        return lw.call_value(getattr(scipy_models, name), args, kwargs, node)
    return handler


for _name in ("cdist", "pdist", "squareform"):
    _HANDLERS[("scipy.spatial.distance", _name)] = _distance(_name)


from s2sad.frontend.sklearn_models import HANDLERS as _SKLEARN_HANDLERS  # noqa: E402
_HANDLERS.update(_SKLEARN_HANDLERS)
