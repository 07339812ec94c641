"""Hostile input: s2sad on real code nobody wrote for it.

Every top-level function of a set of stdlib and NumPy pure-Python modules is
given to `s2sad.jvp(f)` and `s2sad.vjp(f)` and its generic derivative compiled
(`.source`). Each must either compile or raise an `S2SADError` that carries a
location (lineno not None): never another exception type, never a hang (a
SIGALRM guard of TIMEOUT_S seconds per function and mode).

Counts of compiled / refused-by-kind are printed as a table (run with -s to
see it) and written to SUMMARY_FILE (s2sad-hostile-summary.txt in the temp
directory); RESULTS holds them too.
"""

from __future__ import annotations

import collections
import importlib
import inspect
import os
import signal
import sys
import tempfile
import traceback

import pytest

import s2sad

MODULES = [
    "statistics", "colorsys", "fractions", "textwrap", "random", "heapq", "bisect",
    "string", "calendar", "posixpath", "ntpath", "fnmatch", "shlex", "difflib", "copy",
    "base64", "html", "urllib.parse", "numbers", "decimal", "cmath",
    "numpy.lib._function_base_impl", "numpy.lib._shape_base_impl",
    "numpy.lib._twodim_base_impl", "numpy.lib._polynomial_impl", "numpy.lib._type_check_impl",
    "numpy.lib._nanfunctions_impl", "numpy.lib._arraysetops_impl", "numpy.lib._index_tricks_impl",
    "numpy._core.numeric", "numpy._core.fromnumeric",
]
TIMEOUT_S = 5
MIN_FUNCTIONS = 300

RESULTS: dict = {}


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def collect_functions():
    out = []
    for name in MODULES:
        try:
            mod = importlib.import_module(name)
        except ImportError:  # pragma: no cover - depends on the numpy version
            continue
        for attr, obj in sorted(vars(mod).items()):
            if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                out.append((f"{name}.{attr}", obj))
    return out


def try_compile(f, mode):
    """('compiled', None) | ('refused', kind) | ('bad', message) for one function."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT_S)
    try:
        d = s2sad.jvp(f) if mode == "jvp" else s2sad.vjp(f)
        src = d.source
        assert isinstance(src, str) and src
        return "compiled", None
    except s2sad.S2SADError as exc:
        if exc.lineno is None:
            return "bad", f"{type(exc).__name__} without a location: {exc}"
        return "refused", type(exc).__name__
    except _Timeout:
        return "bad", f"timeout after {TIMEOUT_S}s"
    except Exception as exc:  # noqa: BLE001 - that is the finding
        tb = traceback.format_exc(limit=-2)
        return "bad", f"{type(exc).__name__}: {exc}\n{tb}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


SUMMARY_FILE = os.path.join(tempfile.gettempdir(), "s2sad-hostile-summary.txt")


def _outcome(status, info):
    return status if status != "refused" else f"refused:{info}"


@pytest.fixture(scope="module")
def hostile_results():
    funcs = collect_functions()
    counts = collections.Counter()  # (mode, outcome) -> n
    per_function = collections.Counter()  # outcome of the function -> n
    bad = []
    for qual, f in funcs:
        outcomes = {}
        for mode in ("jvp", "vjp"):
            status, info = try_compile(f, mode)
            outcomes[mode] = _outcome(status, info)
            counts[(mode, outcomes[mode])] += 1
            if status == "bad":
                bad.append((qual, mode, info))
        # a function "compiled" when both modes compiled; otherwise it counts
        # under the first mode's refusal (or under "partly compiled")
        o = set(outcomes.values())
        if o == {"compiled"}:
            per_function["compiled"] += 1
        elif "compiled" in o:
            per_function["compiled in one mode, " + (o - {"compiled"}).pop()] += 1
        else:
            per_function[outcomes["jvp"]] += 1
    RESULTS.update(n_functions=len(funcs), counts=dict(counts), bad=bad,
                   per_function=dict(per_function))
    return RESULTS


def summary_table(r) -> str:
    """The closing-note table: functions and (function, mode) pairs by outcome."""
    outcomes = sorted({k[1] for k in r["counts"]}, key=lambda k: (k != "compiled", k))
    extra = sorted(set(r["per_function"]) - set(outcomes))
    w = max(len(k) for k in ["outcome", *outcomes, *extra])
    lines = [f"s2sad hostile input: {r['n_functions']} functions from {len(MODULES)} modules",
             "", f"{'outcome':{w}s} {'functions':>9s} {'jvp':>5s} {'vjp':>5s}"]
    for k in outcomes:
        lines.append(f"{k:{w}s} {r['per_function'].get(k, 0):9d} "
                     f"{r['counts'].get(('jvp', k), 0):5d} {r['counts'].get(('vjp', k), 0):5d}")
    for k in extra:
        lines.append(f"{k:{w}s} {r['per_function'][k]:9d} {'':5s} {'':5s}")
    total = sum(r["per_function"].values())
    lines.append(f"{'total':{w}s} {total:9d} "
                 f"{sum(n for (m, _), n in r['counts'].items() if m == 'jvp'):5d} "
                 f"{sum(n for (m, _), n in r['counts'].items() if m == 'vjp'):5d}")
    lines.append("")
    lines.append("functions: compiled = compiled in both modes; a refused function counts "
                 "under its jvp refusal")
    return "\n".join(lines) + "\n"


def test_real_module_functions_compile_or_refuse_with_location(hostile_results, capsys):
    r = hostile_results
    table = summary_table(r)
    try:
        with open(SUMMARY_FILE, "w") as fh:
            fh.write(table)
    except OSError:  # pragma: no cover - a read-only temp dir
        pass
    with capsys.disabled():
        print("\n" + "\n".join("[hostile] " + line for line in table.splitlines()))
        print(f"[hostile] (also written to {SUMMARY_FILE})")
    assert r["n_functions"] >= MIN_FUNCTIONS
    known = collections.Counter()
    offenders = []
    for b in r["bad"]:
        bug = next((k for k, pat in KNOWN_OFFENDERS.items() if pat in b[2]), None)
        if bug is None:
            offenders.append(b)
        else:
            known[bug] += 1
    with capsys.disabled():
        print(f"[hostile] known compiler bugs hit: {dict(known)}")
    assert not offenders, "\n\n".join(f"{q} [{m}]: {i}" for q, m, i in offenders[:20])


# open compiler bugs (each has a strict-xfail test in tests/fuzz/test_regressions.py):
# bug id -> a string that identifies its symptom in the failure message.
# None open: source-unavailable-no-location, poisoned-assertion and
# dispatcher-syntax-error are fixed (plain regression tests now), so any such
# symptom fails this test again.
KNOWN_OFFENDERS: dict = {}


# --------------------------------------------------------------------------
# functions whose shape is hostile
# --------------------------------------------------------------------------

import functools  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402

_ns: dict = {}
exec("def made_by_exec(x):\n    return x * 2.0\n", _ns)
made_by_exec = _ns["made_by_exec"]
a_lambda = lambda x: x * 2.0  # noqa: E731


def a_generator(x):
    yield x * 2.0


async def an_async(x):
    return x * 2.0


def star_args(*args):
    return args[0] * 2.0


def star_kwargs(x, **kwargs):
    return x * 2.0


def recursive(x, n):
    if n == 0:
        return x
    return recursive(x * 2.0, n - 1)


def _deco(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)

    return wrapper


@_deco
def decorated(x):
    return x * 2.0


class Holder:
    def method(self, x):
        return x * 2.0


HOSTILE = {
    "builtin": math.sin,
    "numpy ufunc": np.sin,
    "exec": made_by_exec,
    "lambda": a_lambda,
    "generator": a_generator,
    "async": an_async,
    "*args": star_args,
    "**kwargs": star_kwargs,
    "recursive": recursive,
    "functools.wraps": decorated,
    "bound method": Holder().method,
}


@pytest.mark.parametrize(
    "what", sorted(HOSTILE))
@pytest.mark.parametrize("mode", ["jvp", "vjp"])
def test_hostile_shapes_compile_or_refuse_with_location(what, mode):
    f = HOSTILE[what]
    if not hasattr(f, "__code__") and not hasattr(f, "__func__"):
        # builtins and ufuncs with a rule: differentiated through the rule (both are sin)
        x = 0.3
        if mode == "jvp":
            out, out_dot = s2sad.jvp(f)(x, 1.0)
        else:
            out, pullback = s2sad.vjp(f)(x)
            out_dot = pullback(1.0)[0] if isinstance(pullback(1.0), tuple) else pullback(1.0)
        assert out == pytest.approx(math.sin(x))
        assert out_dot == pytest.approx(math.cos(x))
        return
    try:
        d = s2sad.jvp(f) if mode == "jvp" else s2sad.vjp(f)
    except s2sad.S2SADError as exc:  # refused eagerly: fine with a location
        assert exc.lineno is not None, f"{what}: {exc}"
        return
    except TypeError:
        assert not callable(f)
        return
    status, info = try_compile(f, mode)
    assert status != "bad", f"{what} [{mode}]: {info}"


def test_hostile_shapes_run_when_compiled():
    """Those that compile also give the right derivative of x -> 2x."""
    for what in ("functools.wraps", "**kwargs"):
        f = HOSTILE[what]
        try:
            out, dot = s2sad.jvp(f)(1.5, 1.0)
        except s2sad.S2SADError as exc:
            assert exc.lineno is not None
            continue
        assert out == 3.0 and dot == 2.0, what


# --------------------------------------------------------------------------
# NaN and inf at run time
# --------------------------------------------------------------------------


def sin_times_x(x):
    return np.sin(x) * x


def exp_of(x):
    return np.exp(x)


def log_of(x):
    return np.log(x)


def square_sum(x):
    return np.sum(x * x)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("fn", [sin_times_x, exp_of, square_sum])
def test_nan_inf_inputs_propagate_without_exceptions(fn, value):
    """NaN/inf in, NaN/inf out where the mathematics says so; never an exception
    from the generated code."""
    import warnings

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        _, dot = s2sad.jvp(fn)(value, 1.0)
        _, pb = s2sad.vjp(fn)(value)
        (bar,) = pb(1.0)
        arr = np.array([1.0, value])
        _, dot_a = s2sad.jvp(fn)(arr, np.ones(2))
        _, pb_a = s2sad.vjp(fn)(arr)
        (bar_a,) = pb_a(np.ones_like(np.asarray(fn(arr))))
        expected = np.asarray(fn(value))  # just to have numpy's view of the primal
    if fn is exp_of and value == -math.inf:
        assert dot == 0.0 and bar == 0.0  # d/dx e^x = e^x = 0 at -inf
    else:
        assert not np.isfinite(dot) and not np.isfinite(bar), (fn.__name__, value, dot, bar)
    if fn is not square_sum:  # elementwise: the finite entry keeps a finite derivative
        assert np.isfinite(np.asarray(dot_a).ravel()[0])
    assert np.asarray(bar_a).shape == (2,)
    del expected


def test_log_at_zero_and_negative():
    import warnings

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        _, d0 = s2sad.jvp(log_of)(0.0, 1.0)
        _, dneg = s2sad.jvp(log_of)(-1.0, 1.0)
    assert d0 == math.inf
    assert dneg == -1.0  # 1/x; the primal is nan
