"""Library dispatch layers, seen through while lowering.

SciPy's array-API layer (`array_namespace`, `xp_promote`, `_asarray`) picks a namespace and
converts arguments before the arithmetic. On NumPy arrays (the only arrays a derivative is
specialised for, besides the families of `Kind.family`, which keep the layer as written)
it is NumPy itself and `np.asarray`: lowering replaces each call by what it amounts to, so
that `xp.sum(...)` is `np.sum(...)` and the arithmetic behind it is differentiated.
"""

from __future__ import annotations

import inspect
import operator
import sys

import numpy as np

from s2sad.frontend.array_facts import array_fact, array_precision, dtype_letter, exact_dtype
from s2sad.frontend.values import Static, StaticSeq, is_simple_constant
from s2sad.ir import prims
from s2sad.ir.nodes import Const, Var

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
    return Static(np, "np")


def _as_array(lw, value, dtype, node):
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
    """solve_ivp without events or dense output: an object holding `t` (the times) and `y`,
    the solution there (s2sad_rules.scipy_integrate.solve_ivp_values, a primitive with
    rules; without `t_eval`, the times the solver chose: solve_ivp_run, chosen_times and
    solve_ivp_at). Any other call is read as written (and refused)."""
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
    if not (off("dense_output") and off("events") and off("vectorized")) \
            or any(n not in given for n in names[:3]):
        return None
    from s2sad_rules import scipy_integrate
    options = StaticSeq(tuple(StaticSeq((Const(k), v)) for k, v in kwargs if k not in names))
    method, ode_args = given.get("method", Const("RK45")), given.get("args", Const(None))
    made = ObjectRecord(scipy_integrate.IVPSolution, lw.control_depth)
    if off("t_eval"):
        # the times the solver chooses (how many: known once it has run), taken as chosen
        # by the derivative: scipy_integrate.chosen_times
        run = lw.call_value(scipy_integrate.solve_ivp_run, [
            given["fun"], given["t_span"], given["y0"], method, ode_args, options], [], node,
            hint="solution")
        t = lw.call_value(scipy_integrate.chosen_times, [run, given["t_span"]], [], node,
                          hint="t")
        made.attrs["y"] = lw.call_value(scipy_integrate.solve_ivp_at, [
            run, given["fun"], given["t_span"], given["y0"], t, method, ode_args, options],
            [], node, hint="y")
        made.attrs["t"] = t
        return made
    made.attrs["y"] = lw.call_value(scipy_integrate.solve_ivp_values, [
        given["fun"], given["t_span"], given["y0"], given["t_eval"], method, ode_args,
        options], [], node, hint="y")
    made.attrs["t"] = lw.call_value(np.asarray, [given["t_eval"]], [("dtype", Const(float))],
                                    node, hint="t")
    return made


def parse_args_binding(lw, fn, args, kwargs, node):
    """A distribution's `_parse_args(*shapes, loc=0, scale=1)` (made by exec: no source):
    (shapes, loc, scale), bound while compiling from its signature."""
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


@_handler("scipy._external.array_api_extra._lib._lazy", "lazy_apply")  # (SciPy >= 1.18)
@_handler("scipy._lib.array_api_extra._lib._lazy", "lazy_apply")
def _lazy_apply(lw, args, kwargs, node):
    """lazy_apply(func, *args, shape=None, dtype=None, as_numpy=False, xp=None, **kwargs):
    on NumPy arrays it calls func(*args, **kwargs) at once and returns its result as an
    array (a tuple of arrays where `shape` lists several shapes); Dask's and JAX's deferred
    calls are not read. None (read as written) where the number of results is not known."""
    if not args:
        return None
    options = dict(kwargs)
    shape = options.pop("shape", Const(None))
    for name in ("dtype", "as_numpy", "xp"):
        options.pop(name, None)
    n = _result_count(shape)
    if n is None:
        return None
    operands = [lw.call_value(np.asarray, [a], [], node) if isinstance(a, Var) else a
                for a in args[1:]]
    out = lw.call_lowered(args[0], operands, list(options.items()), node)
    if n == 0:
        return lw.call_value(np.asarray, [out], [], node)
    items = out.items if isinstance(out, StaticSeq) and len(out.items) == n else [
        lw.call_value(operator.getitem, [out, Const(i)], [], node) for i in range(n)]
    return StaticSeq(tuple(lw.call_value(np.asarray, [v], [], node) for v in items))


def _result_count(shape):
    """0 for lazy_apply's one result (`shape` None or one shape), the number of results
    where it lists shapes, None where that is not known while compiling."""
    if isinstance(shape, Const):
        value = shape.value
        if value is None or (isinstance(value, tuple) and
                             all(v is None or type(v) is int for v in value)):
            return 0
        if isinstance(value, (tuple, list)) and all(isinstance(v, tuple) for v in value):
            return len(value)
        return None
    if isinstance(shape, StaticSeq):
        if all(isinstance(v, Var) or isinstance(v, Const) and (
                v.value is None or type(v.value) is int) for v in shape.items):
            return 0  # (sizes, some computed: one shape)
        if all(isinstance(v, StaticSeq) or isinstance(v, Const) and
               isinstance(v.value, tuple) for v in shape.items):
            return len(shape.items)
    return None


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
        return StaticSeq((Static(np, "np"),) + tuple(Const(v) for v in extra))
    return handler


# scikit-learn's array-API layer: NumPy, not array-API compliant, no device
_HANDLERS[("sklearn.utils._array_api", "get_namespace")] = _numpy_namespace(False)
_HANDLERS[("sklearn.utils._array_api", "get_namespace_and_device")] = _numpy_namespace(False,
                                                                                        None)


@_handler("sklearn.utils._array_api", "move_to")
def _move_to(lw, args, kwargs, node):
    """move_to(*arrays, xp, device) to NumPy on the CPU: the arrays themselves."""
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
        if isinstance(metric, Static) and isinstance(metric.obj, str):
            # (an option string the differentiated function was given: a fact)
            metric = Const(metric.obj)
            options["metric"] = metric
            args = [metric if i == (2 if name == "cdist" else 1) else a
                    for i, a in enumerate(args)]
        if name != "squareform" and metric is not None and not (
                isinstance(metric, Const) and metric.value in (
                    "sqeuclidean", "euclidean", "cityblock", "chebyshev", "minkowski")):
            return None  # (another metric: SciPy's code, as written)
        if set(options) - {"metric", "p", "force", "checks"}:
            return None
        if "metric" in dict(kwargs):
            kwargs = [(k, options["metric"] if k == "metric" else v) for k, v in kwargs]
        out = lw.call_value(getattr(scipy_models, name), args, kwargs, node)
        if isinstance(out, Var):  # (what the model checks: a condensed vector, a matrix)
            fact = array_fact(lw, args[0]) if name == "squareform" else None
            if name != "squareform":
                lw.param_ranks[out] = ("f", 2 if name == "cdist" else 1)
            elif fact is not None and fact[1] in (1, 2):
                lw.param_ranks[out] = (fact[0], 3 - fact[1])
        return out
    return handler


for _name in ("cdist", "pdist", "squareform"):
    _HANDLERS[("scipy.spatial.distance", _name)] = _distance(_name)


# ---------------------------------------------------------------------------------------
# scikit-learn's validation of NumPy arrays
# ---------------------------------------------------------------------------------------

@_handler("sklearn.utils._array_api", "_find_matching_floating_dtype")
def _find_matching_floating_dtype(lw, args, kwargs, node):
    """_find_matching_floating_dtype(*arrays, xp) of NumPy arrays: NumPy's promotion of the
    floating arrays' dtypes (float32 or float64: computed where the code runs, as kinds do
    not tell them apart), float64 where none is floating. Which arrays are floating is known
    from their kinds; a value of unknown kind leaves the function as written."""
    floating = []
    for a in args:
        if isinstance(a, Const) and not hasattr(a.value, "dtype"):
            continue  # (None, a Python number: no dtype)
        fact = array_fact(lw, a)
        if fact is None:
            return None
        if fact[0] == "f":
            floating.append(a)
    if not floating:
        return Const(np.dtype(np.float64), "np.float64")
    out = lw.call_value(np.result_type, floating, [], node, hint="float_dtype")
    lw.dtype_values[out] = "f"
    return out


@_handler("scipy._lib._array_api", "xp_result_type")
def _xp_result_type(lw, args, kwargs, node):
    """xp_result_type(*arrays, force_floating=True, xp=np) of NumPy float arrays: NumPy's
    promotion of their dtypes (float32 or float64: computed where the code runs, as kinds
    do not tell them apart). Its `try` (a fallback for PyTorch's promotion) is not taken for
    NumPy's dtypes; arrays of another dtype leave the function as written."""
    options = dict(kwargs)
    floating = options.get("force_floating", Const(False))
    if set(options) - {"force_floating", "xp"} or not isinstance(floating, Const) or \
            not floating.value or not isinstance(options.get("xp"), Static) or \
            options["xp"].obj is not np:
        return None
    arrays = []
    for a in args:
        if isinstance(a, Const) and a.value is None:
            continue
        fact = array_fact(lw, a)
        if fact is None or fact[0] != "f":
            return None
        arrays.append(a)
    out = lw.call_value(np.result_type, arrays + [Const(1.0)], [], node, hint="result_dtype")
    lw.dtype_values[out] = "f"
    return out


def _bound(fn, args, kwargs):
    """The arguments of a call of the library function `fn` by parameter name (defaults
    left out), or None where the call does not fit its signature."""
    try:
        return dict(inspect.signature(fn).bind(*args, **dict(kwargs)).arguments)
    except (TypeError, ValueError):
        return None


def _converted(lw, array, dtype, copy, node):
    """np.asarray(array, dtype=dtype) (np.array, a copy, where `copy`), known to be a NumPy
    array of the same rank."""
    letter, rank = array_fact(lw, array)
    own = array_precision(lw, array)
    if isinstance(dtype, StaticSeq) and own is not None and \
            all(exact_dtype(lw, d) is not None for d in dtype.items):
        # (the array's exact dtype known: its own where it is listed, else the first)
        dtype = next((d for d in dtype.items if exact_dtype(lw, d) == own), dtype.items[0])
    if isinstance(dtype, StaticSeq):
        if all(dtype_letter(lw, d) != letter for d in dtype.items):
            dtype = dtype.items[0]  # (an int array and float dtypes: the first)
        else:  # (the array's own dtype if it is listed: known where the code runs)
            from s2sad.frontend import sklearn_validation
            out = lw.call_value(sklearn_validation.as_one_of, [array, dtype], [], node)
            if copy:
                out = lw.call_value(np.array, [out], [], node)
            return out
    kw = []
    if dtype is not None:
        kw = [("dtype", dtype)]
        letter = dtype_letter(lw, dtype)
    out = lw.call_value(np.array if copy else np.asarray, [array], kw, node)
    if letter and isinstance(out, Var):
        lw.param_ranks[out] = (letter, rank)
    return out


def _is_numeric(dtype) -> bool:
    return isinstance(dtype, Const) and isinstance(dtype.value, str) and \
        dtype.value == "numeric"


def _dtype_option(lw, dtype):
    """What check_array's `dtype=` asks of a numeric NumPy array: (True, dtype) to convert
    to, (True, None) to keep its dtype ("numeric", None), (True, StaticSeq) for one of a
    list of dtypes, (False, None) for anything else."""
    if isinstance(dtype, Const) and dtype.value is None or _is_numeric(dtype):
        return True, None
    if dtype_letter(lw, dtype) is not None:
        return True, dtype
    if isinstance(dtype, Const) and type(dtype.value) in (tuple, list) and dtype.value:
        dtype = StaticSeq(tuple(lw.global_value(v, "dtype") for v in dtype.value))
    if isinstance(dtype, StaticSeq) and dtype.items and \
            all(dtype_letter(lw, d) for d in dtype.items):
        return True, dtype
    return False, None


@_handler("sklearn.utils.validation", "check_array")
def _check_array(lw, args, kwargs, node):
    """check_array(array, ...) of a NumPy array: the array in the dtype asked for, a copy
    where copy=True. Its checks (finite values, dimensions, number of samples) run as
    written on the primal values, for the errors they raise; reading the function itself
    would take lowering through pandas and narwhals type tests on every call."""
    fn = lw.current_shim_callee
    bound = _bound(fn, args, kwargs)
    if bound is None or array_fact(lw, bound.get("array")) is None:
        return None
    known, dtype = _dtype_option(lw, bound.get("dtype", Const("numeric")))
    copy = bound.get("copy", Const(False))
    if not known or not (isinstance(copy, Const) and type(copy.value) is bool):
        return None
    _check_as_written(lw, fn, args, kwargs, node)
    return _converted(lw, bound["array"], dtype, copy.value, node)


def _check_as_written(lw, fn, args, kwargs, node):
    """A call of the library's check `fn`, run for the errors it raises; its result
    carries no derivative."""
    a = [lw.materialize(v) for v in args]
    k = [(n, lw.materialize(v)) for n, v in kwargs]
    opaque = prims.Opaque(fn, [], effect_only=True)
    opaque.spelling = fn.__name__
    return lw.emit(opaque, a, k, hint="_checked", node=node)


@_handler("sklearn.utils._array_api", "_asarray_with_order")
def _asarray_with_order(lw, args, kwargs, node):
    """_asarray_with_order(array, dtype, order, copy, xp) of a NumPy array: np.asarray (np.array
    where copy=True); the memory order is not a value."""
    bound = _bound(lw.current_shim_callee, args, kwargs)
    if bound is None or array_fact(lw, bound.get("array")) is None or \
            set(bound) - {"array", "dtype", "order", "copy", "xp", "device"}:
        return None
    known, dtype = _dtype_option(lw, bound.get("dtype", Const(None)))
    copy = bound.get("copy", Const(None))
    if not known or _is_numeric(bound.get("dtype")):
        return None  # ("numeric" is check_array's word, not NumPy's)
    if not (isinstance(copy, Const) and copy.value in (None, True, False)):
        return None
    return _converted(lw, bound["array"], dtype, copy.value is True, node)


def _check_only(lw, args, kwargs, node):
    """A check that returns None and raises on bad input (check_consistent_length(y, p)):
    run as written on the primal values."""
    def plain(v):
        if isinstance(v, StaticSeq):
            return all(plain(i) for i in v.items)
        return isinstance(v, (Var, Const, Static))
    if not all(plain(v) for v in list(args) + [v for _, v in kwargs]):
        return None
    _check_as_written(lw, lw.current_shim_callee, args, kwargs, node)
    return Const(None)


for _name in ("check_consistent_length", "_assert_all_finite", "check_non_negative"):
    _HANDLERS[("sklearn.utils.validation", _name)] = _check_only


def _of_namespace(lw, args, kwargs, node):
    """A function of the array namespace alone (supported_float_dtypes(np)): evaluated while
    compiling, as the namespace is NumPy."""
    values = list(args) + [v for _, v in kwargs]
    if not all(isinstance(v, Static) or isinstance(v, Const) and is_simple_constant(v.value)
               for v in values):
        return None
    unwrap = (lambda v: v.obj if isinstance(v, Static) else v.value)
    try:
        out = lw.current_shim_callee(*[unwrap(v) for v in args],
                                     **{k: unwrap(v) for k, v in kwargs})
    except Exception:  # noqa: BLE001 - read as written, where it raises
        return None
    if isinstance(out, tuple):
        return StaticSeq(tuple(lw.global_value(v, "dtype") for v in out))
    return lw.global_value(out, lw.current_shim_callee.__name__)


for _name in ("supported_float_dtypes", "_max_precision_float_dtype", "_is_numpy_namespace"):
    _HANDLERS[("sklearn.utils._array_api", _name)] = _of_namespace


@_handler("sklearn.metrics._classification", "_validate_binary_probabilistic_prediction")
def _validate_binary_prediction(lw, args, kwargs, node):
    """_validate_binary_probabilistic_prediction(y_true, y_prob, sample_weight, pos_label) of
    a NumPy y_prob: its checks and its one-hot labels (of y_true alone: no derivative) as
    written, where the code runs; the probabilities of the two classes are
    np.stack((1 - p, p), axis=1) of p = column_or_1d(y_prob), as it computes them."""
    fn = lw.current_shim_callee
    bound = _bound(fn, args, kwargs)
    if bound is None or array_fact(lw, bound.get("y_prob")) is None:
        return None
    validation = sys.modules.get("sklearn.utils.validation")
    checked = _check_as_written(lw, fn, args, kwargs, node)
    labels = lw.emit(operator.getitem, [checked, Const(0)], hint="transformed_labels",
                     node=node)
    p = lw.call_value(validation.column_or_1d, [bound["y_prob"]], [], node)
    q = lw.call_value(operator.sub, [Const(1), p], [], node)
    pair = lw.call_value(np.stack, [StaticSeq((q, p))], [("axis", Const(1))], node)
    return StaticSeq((labels, pair))


@_handler("sklearn.utils._array_api", "device")
def _device(lw, args, kwargs, node):
    """device(*arrays) of NumPy arrays (and None): None, as scikit-learn gives NumPy's."""
    if set(dict(kwargs)) - {"remove_none", "remove_types"} or \
            dict(kwargs).get("remove_none", Const(True)) != Const(True):
        return None
    if not all(array_fact(lw, a) is not None or isinstance(a, Const) and a.value is None
               for a in args):
        return None
    return Const(None)  # (scikit-learn gives NumPy arrays no device)


@_handler("sklearn.utils.validation", "_num_samples")
def _num_samples(lw, args, kwargs, node):
    """_num_samples(x) of a NumPy array of one axis or more: x.shape[0]."""
    fact = array_fact(lw, args[0]) if len(args) == 1 and not kwargs else None
    if fact is None or fact[1] == 0:
        return None
    shape = lw.call_value(prims.Attr("shape"), [args[0]], [], node, hint="_shape")
    return lw.call_value(operator.getitem, [shape, Const(0)], [], node, hint="n_samples")


# -- scipy.linalg's Cholesky factorisation and its solve --------------------------------------

def _bool_option(options, name, default):
    v = options.get(name, Const(default))
    return v.value if isinstance(v, Const) and type(v.value) is bool else None


@_handler("scipy.linalg._decomp_cholesky", "cholesky")
def _scipy_cholesky(lw, args, kwargs, node):
    """scipy.linalg.cholesky(a, lower=False, check_finite=False) of one matrix: NumPy's
    factorisation, which reads the same triangle (np.linalg.cholesky(a, upper=not lower),
    LAPACK's potrf too), and has rules. With check_finite=True (SciPy's default, which
    raises for inf and NaN) it is read as written."""
    options = dict(zip(("a", "lower", "overwrite_a", "check_finite"), args))
    if len(args) > 4 or set(options) & {k for k, _ in kwargs}:
        return None
    options.update(kwargs)
    lower = _bool_option(options, "lower", False)
    if set(options) - {"a", "lower", "overwrite_a", "check_finite"} or lower is None or \
            _bool_option(options, "check_finite", True) is not False or \
            _bool_option(options, "overwrite_a", False) is None:
        return None
    fact = array_fact(lw, options["a"])
    if fact is not None and (fact[1] != 2 or fact[0] == "c"):
        return None
    return lw.call_value(np.linalg.cholesky, [options["a"]], [] if lower else
                         [("upper", Const(True))], node, hint="L" if lower else "U")


@_handler("scipy.linalg._decomp_cholesky", "cho_solve")
def _scipy_cho_solve(lw, args, kwargs, node):
    """scipy.linalg.cho_solve((c, lower), b, check_finite=False): the two triangular solves
    it stands for (LAPACK's potrs), by scipy.linalg.solve_triangular, which has rules."""
    options = dict(zip(("c_and_lower", "b", "overwrite_b", "check_finite"), args))
    if len(args) > 4 or set(options) & {k for k, _ in kwargs}:
        return None
    options.update(kwargs)
    pair = options.get("c_and_lower")
    if set(options) - {"c_and_lower", "b", "overwrite_b", "check_finite"} or \
            "b" not in options or not isinstance(pair, StaticSeq) or len(pair.items) != 2 or \
            _bool_option(options, "check_finite", True) is not False:
        return None
    c, lower = pair.items
    if not (isinstance(lower, Const) and isinstance(lower.value, (bool, int, np.bool_))):
        return None
    import scipy.linalg as la
    lower = Const(bool(lower.value))
    first, second = (Const(0), Const(1)) if lower.value else (Const(1), Const(0))
    y = lw.call_value(la.solve_triangular, [c, options["b"]], [
        ("trans", first), ("lower", lower), ("check_finite", Const(False))], node)
    return lw.call_value(la.solve_triangular, [c, y], [
        ("trans", second), ("lower", lower), ("check_finite", Const(False))], node)


# -- scikit-learn's kernels: a clone with new hyperparameters, as a record ------------------

def theta_item(theta, i):
    """The hyperparameter a kernel's `theta` setter reads from `theta[i]`."""
    return np.exp(theta[i])


def theta_items(theta, i, n):
    """The vector-valued hyperparameter the setter reads from `theta[i:i + n]`."""
    return np.exp(theta[i:i + n])


def theta_length(theta, n):
    """The setter's check that `theta` holds the kernel's `n` free hyperparameters."""
    if len(theta) != n:
        raise ValueError("theta has not the correct number of entries. Should be %d; given "
                         "are %d" % (n, len(theta)))


def cloned_record(lw, obj, node):
    """sklearn.base.clone(obj) of an object known while compiling (a fitted kernel): a record
    of the class made with the object's parameters (`get_params(deep=False)`), each one that
    has parameters itself cloned into a record too (a product's `k1` and `k2`), the others
    constants as the object holds them; None where a parameter is no such value."""
    from s2sad.frontend.values import ObjectRecord
    try:
        params = obj.get_params(deep=False)
    except Exception:  # noqa: BLE001 - cloned as written instead
        return None
    given = []
    for name, value in params.items():
        if hasattr(value, "get_params") and not isinstance(value, type):
            value = cloned_record(lw, value, node)
            if value is None:
                return None
        else:
            value = lw.global_value(value, f"{type(obj).__name__}.{name}")
        given.append((name, value))
    record = lw.new_object(type(obj), [], given, node)
    return record if isinstance(record, ObjectRecord) else None


@_handler("sklearn.gaussian_process.kernels", "clone_with_theta")
def _clone_with_theta(lw, args, kwargs, node):
    """kernel.clone_with_theta(theta) of a kernel known while compiling: its clone, a record
    (cloned_record), whose free hyperparameters take exp(theta[i]) in the kernel's order, as
    the `theta` setter gives them through `set_params` (`k1__constant_value` the attribute of
    the record `k1`). Which are free, and how many numbers each takes, are facts of the
    kernel (guarded as its attributes are)."""
    from s2sad.frontend.values import ObjectRecord
    kernel = getattr(lw.current_shim_callee, "__self__", None)
    theta = args[0] if len(args) == 1 and not kwargs else dict(kwargs).get("theta")
    if kernel is None or theta is None or len(args) + len(kwargs) != 1:
        return None
    try:
        hyperparameters = [h for h in kernel.hyperparameters if not h.fixed]
    except Exception:  # noqa: BLE001 - read as written instead
        return None
    record = cloned_record(lw, kernel, node)
    if record is None:
        return None
    i = 0
    for h in hyperparameters:
        if h.n_elements > 1:
            value = lw.call_value(theta_items, [theta, Const(i), Const(h.n_elements)], [],
                                  node)
        else:
            value = lw.call_value(theta_item, [theta, Const(i)], [], node)
        i += h.n_elements
        *path, attr = h.name.split("__")
        owner = record
        for part in path:
            owner = owner.attrs.get(part)
            if not isinstance(owner, ObjectRecord):
                return None
        owner.attrs[attr] = value
    lw.call_value(theta_length, [theta, Const(i)], [], node)
    return record


from s2sad.frontend.sklearn_models import HANDLERS as _SKLEARN_HANDLERS  # noqa: E402
_HANDLERS.update(_SKLEARN_HANDLERS)
