"""Checking one corpus case: s2sad's derivative of third-party code against an oracle.

A case's `setup(rng)` gives a `Problem`: the callable as a user hands it to s2sad (the
library's function or bound method itself, a library object, or a one-line lambda calling
it), its arguments, and optionally the library's own derivative (`jac`). The oracle is the
Jacobian of the output with respect to each differentiated argument, of shape
`out.shape + arg.shape`: the library's derivative where it ships one, else central
differences in float64 at the case's random point. Three checks use it:

- `check_reverse`: `s2sad.grad` (scalar output) or `s2sad.vjp` with a random cotangent;
- `check_forward`: `s2sad.jvp` with random tangents;
- `check_agreement`: the dot-product test <u, J v> = <J^T u, v> between jvp and vjp.

`run_check` runs one and says what happened (the report script uses it): "pass",
"refused" (an S2SADError, with the first line of its message and `refusal_category`),
"wrong" (an AssertionError: a derivative that disagrees with the oracle) or "crash"
(any other exception).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import warnings
import zlib
from typing import Any, Callable, NamedTuple

import numpy as np

import s2sad


class Problem(NamedTuple):
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    # the library's own derivative: args -> one Jacobian per differentiated argument
    jac: Callable[..., list[Any]] | None = None


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    library: str
    setup: Callable[[np.random.Generator], Problem]
    wrt: tuple[int, ...] = (0,)
    oracle: str = "central differences"  # or the name of the library's derivative
    forward: bool = True  # False where jvp is not worth its compile time
    rtol: float = 1e-5
    step: float = 1e-6  # relative step of the central differences
    # what is expected to go wrong today, per mode ("rev", "fwd"): a refusal category, or a
    # reason starting "BUG:" for a wrong derivative or an internal crash
    expect: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Prepared:
    problem: Problem
    out: Any
    jac: list[np.ndarray]
    derivatives: dict[str, Any] = dataclasses.field(default_factory=dict)
    # the error a mode raised: the agreement test re-raises it instead of compiling again
    failed: dict[str, BaseException] = dataclasses.field(default_factory=dict)


_PREPARED: dict[str, Prepared] = {}


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def _with(args: tuple[Any, ...], k: int, value: Any) -> tuple[Any, ...]:
    return args[:k] + (value,) + args[k + 1:]


def central_differences(fn: Callable[..., Any], args: tuple[Any, ...], k: int,
                        step: float) -> np.ndarray:
    """The Jacobian of fn's output with respect to args[k], out.shape + arg.shape."""
    x = args[k]
    scalar = not isinstance(x, np.ndarray)
    base = np.array(x, dtype=np.float64)
    out = np.asarray(fn(*args), dtype=np.float64)
    jac = np.zeros(out.shape + base.shape)
    for i in np.ndindex(base.shape):
        h = step * max(1.0, abs(base[i]))
        plus, minus = base.copy(), base.copy()
        plus[i] += h
        minus[i] -= h
        if scalar:
            plus, minus = float(plus), float(minus)
        f_plus = np.asarray(fn(*_with(args, k, plus)), dtype=np.float64)
        f_minus = np.asarray(fn(*_with(args, k, minus)), dtype=np.float64)
        jac[(...,) + i] = (f_plus - f_minus) / (2 * h)
    return jac


def prepare(case: Case) -> Prepared:
    """The case's problem, its value and the oracle's Jacobians (computed once per case)."""
    if case.name not in _PREPARED:
        rng = rng_for(case.name)
        problem = case.setup(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = problem.fn(*problem.args)
            if problem.jac is not None:
                jac = [np.asarray(j, dtype=np.float64) for j in problem.jac(*problem.args)]
            else:
                jac = [central_differences(problem.fn, problem.args, k, case.step)
                       for k in case.wrt]
        _PREPARED[case.name] = Prepared(problem, out, jac)
    return _PREPARED[case.name]


def _wrt_spec(case: Case) -> int | tuple[int, ...]:
    return case.wrt[0] if len(case.wrt) == 1 else case.wrt


def _close(got: Any, expected: np.ndarray, rtol: float, what: str) -> None:
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale, err_msg=what)


def _seeds(p: Prepared, case: Case) -> tuple[np.ndarray | float, list[Any]]:
    """A cotangent of the output's shape and one tangent per differentiated argument."""
    rng = rng_for(case.name + "/seeds")
    out_shape = np.shape(p.out)
    u = rng.standard_normal(out_shape) if out_shape else float(rng.standard_normal())
    tangents = []
    for k in case.wrt:
        x = p.problem.args[k]
        tangents.append(rng.standard_normal(np.shape(x)) if isinstance(x, np.ndarray)
                        else float(rng.standard_normal()))
    return u, tangents


def _once(mode: str, case: Case, products: Callable[[Case, Prepared], Any]) -> Any:
    """Run a mode's products, remembering an error so that it is raised again, not redone."""
    p = prepare(case)
    if mode in p.failed:
        raise p.failed[mode]
    try:
        return products(case, p)
    except Exception as e:
        p.failed[mode] = e
        raise


def _reverse_products(case: Case) -> tuple[Prepared, Any, list[Any]]:
    return _once("rev", case, _reverse)


def _forward_product(case: Case) -> tuple[Prepared, Any, list[Any]]:
    return _once("fwd", case, _forward)


def _reverse(case: Case, p: Prepared) -> tuple[Prepared, Any, list[Any]]:
    u, _ = _seeds(p, case)
    if "rev" not in p.derivatives:
        scalar = np.ndim(p.out) == 0
        p.derivatives["rev"] = (scalar, (s2sad.grad if scalar else s2sad.vjp)(
            p.problem.fn, wrt=_wrt_spec(case)))
    scalar, derivative = p.derivatives["rev"]
    if scalar:
        g = derivative(*p.problem.args)
        cts = list(g) if len(case.wrt) > 1 else [g]
        cts = [u * np.asarray(c) for c in cts]
    else:
        out, pullback = derivative(*p.problem.args)
        _close(out, np.asarray(p.out), 1e-12, f"{case.name}: vjp's primal output")
        cts = list(pullback(u))
    assert len(cts) == len(case.wrt), f"{case.name}: {len(cts)} cotangents"
    return p, u, cts


def check_reverse(case: Case) -> None:
    p, u, cts = _reverse_products(case)
    n = np.ndim(p.out)
    for k, ct, jac in zip(case.wrt, cts, p.jac):
        expected = np.tensordot(u, jac, axes=n)
        _close(ct, expected, case.rtol, f"{case.name}: reverse mode, argument {k} "
               f"against {case.oracle}")


def _forward(case: Case, p: Prepared) -> tuple[Prepared, Any, list[Any]]:
    _, tangents = _seeds(p, case)
    if "fwd" not in p.derivatives:
        p.derivatives["fwd"] = s2sad.jvp(p.problem.fn, wrt=_wrt_spec(case))
    args = _all_positional(p.problem)
    n = _named_positional(p.problem)
    if n is not None and not _tangents_last(p.problem, case, n):
        # f(x, *args) differentiated in its own parameters: the tangents come before the
        # extra arguments
        call = args[:n] + tangents + args[n:]
    else:
        call = args + tangents
    out, out_dot = p.derivatives["fwd"](*call)
    _close(out, np.asarray(p.out), 1e-12, f"{case.name}: jvp's primal output")
    return p, out_dot, tangents


def _tangents_last(problem: Problem, case: Case, n: int) -> bool:
    """Do a JVP's tangents follow every argument of f(x, *args)? They do where wrt names an
    item of *args (a derivative of as many parameters as the call gives), and for a
    primitive whose rules name what *args holds (scipy.stats' norm.cdf: loc, scale are
    options given by position, the tangents after them)."""
    from s2sad_rules import TABLE

    if any(k >= n for k in case.wrt):
        return True
    try:
        return bool(TABLE.is_primitive(problem.fn))
    except TypeError:
        return False


def _named_positional(problem: Problem) -> int | None:
    """How many named positional parameters f(x, ..., *args) has; None without *args."""
    try:
        params = list(inspect.signature(problem.fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if not any(q.kind is q.VAR_POSITIONAL for q in params):
        return None
    return sum(q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD) for q in params)


def _all_positional(problem: Problem) -> list[Any]:
    """The arguments of jvp(f)(*args, *tangents): the tangents come after every positional
    parameter, the defaulted ones included (filled in with their defaults, as the API asks;
    a ufunc's `out` excepted), but before the extra arguments of f(x, *args)."""
    args = list(problem.args)
    if isinstance(problem.fn, np.ufunc):
        return args
    try:
        params = list(inspect.signature(problem.fn).parameters.values())
    except (TypeError, ValueError):
        return args
    if any(q.kind is q.VAR_POSITIONAL for q in params):
        return args
    positional = [q for q in params if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
    for q in positional[len(args):]:
        if q.default is q.empty:
            break
        args.append(q.default)
    return args


def check_forward(case: Case) -> None:
    p, out_dot, tangents = _forward_product(case)
    expected = sum(np.tensordot(jac, v, axes=np.ndim(v)) for jac, v in zip(p.jac, tangents))
    _close(out_dot, expected, case.rtol, f"{case.name}: forward mode against {case.oracle}")


def check_agreement(case: Case) -> None:
    """The dot-product test: <u, jvp(v)> = sum_k <vjp(u)_k, v_k>."""
    _, u, cts = _reverse_products(case)
    _, out_dot, tangents = _forward_product(case)
    left = float(np.sum(np.asarray(u) * np.asarray(out_dot)))
    right = float(sum(np.sum(np.asarray(c) * np.asarray(v)) for c, v in zip(cts, tangents)))
    np.testing.assert_allclose(left, right, rtol=1e-9, atol=1e-9 * max(1.0, abs(left)),
                               err_msg=f"{case.name}: jvp and vjp disagree")


def checks(case: Case) -> dict[str, Callable[[Case], None]]:
    """The checks that apply to a case, by name."""
    out = {"rev": check_reverse}
    if case.forward:
        out["fwd"] = check_forward
        out["agree"] = check_agreement
    return out


class Outcome(NamedTuple):
    status: str  # pass, refused, wrong, crash
    detail: str  # the first line of the error, or ""
    error: BaseException | None


def run_check(case: Case, check: Callable[[Case], None]) -> Outcome:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(case)
    except s2sad.S2SADError as e:
        return Outcome("refused", _first_line(e), e)
    except AssertionError as e:
        return Outcome("wrong", _first_line(e, skip_blank=True), e)
    except Exception as e:  # noqa: BLE001 -- an internal crash is what we report
        return Outcome("crash", f"{type(e).__name__}: {_first_line(e)}", e)
    return Outcome("pass", "", None)


def _first_line(e: BaseException, skip_blank: bool = False) -> str:
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return lines[0] if lines else type(e).__name__


# What a refusal is about, from its first problem's innermost reason (a library function that
# cannot be inlined says why in parentheses): first match wins.
CATEGORIES = [
    (r"\*\*kwargs parameters", "calling convention: **kwargs parameter"),
    (r"`\*args` in a call|`\*\*kwargs` in a call", "calling convention: f(*args) in a call"),
    (r"wrt=\d+ is out of range", "calling convention: wrt names an argument in *args"),
    (r"_array_api|is_numpy|array_namespace|xp_promote|get_namespace|`\.asarray\(\)`|"
     r"`\.tocsr\(\)`|not an array this function created", "array-API / sparse dispatch"),
    (r"`raise`", "unsupported syntax: raise"),
    (r"`with`", "unsupported syntax: with"),
    (r"`try`", "unsupported syntax: try"),
    (r"assignment to an attribute", "inactive statement: attribute write"),
    (r"a call whose result is not used", "inactive statement: in-place call (result unused)"),
    (r"cannot call a value computed inside|is not supported on a differentiated value|"
     r"no derivative rule for `st\.norm`", "object built inside"),
    (r"`self` has no attribute", "hasattr(self, name) branch not pruned: self.name read"),
    (r"attribute `\.\w+` is not supported on a value",
     "attribute of a library object (np.finfo(...).eps, xp.linalg)"),
    (r"not a Python function \(a (ufunc|builtin)", "missing rule: compiled function"),
    (r"not a Python function", "callable object passed as the function"),
    (r"max\(\) of one iterable|tuple\(\) of a value computed",
     "builtin over a run-time sequence (max, tuple)"),
    (r"needs a scalar output", "kind inference: a scalar result seen as an array"),
    (r"cannot write into `\w+`: it is an argument", "write into an argument"),
    (r"may be undefined here", "branch on a shape equality not decided while compiling"),
    (r"no derivative rule for", "missing rule: compiled function"),
]

_LIBRARY_PREFIX = re.compile(r"^cannot differentiate through the library function `[^`]*`"
                             r"(, called by `[^`]*`)?: its source cannot be inlined \(")


def innermost_reason(message: str) -> str:
    while True:
        m = _LIBRARY_PREFIX.match(message)
        if m is None:
            return message
        message = message[m.end():]


def refusal_category(error: BaseException) -> str:
    """The category of an S2SADError: what the compiler would have to learn."""
    errors = getattr(error, "errors", [error])
    reason = innermost_reason(getattr(errors[0], "message", str(errors[0])))
    for pattern, name in CATEGORIES:
        if re.search(pattern, reason):
            return name
    return f"{getattr(errors[0], 'kind', 'error')}: {reason[:60]}"
