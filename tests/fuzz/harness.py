"""Check generated programs with s2sad against finite differences, and shrink failures.

A program (a `generator.Function`) is written, with its probe twin and the
helpers it calls, to a real .py file in a temporary directory on sys.path and
imported under a unique module name (s2sad reads function source through
inspect, so exec'd strings would not do).

Per program and mode:
- jvp:  `s2sad.jvp(f)(*args, *v)` -> (out, out_dot); out == f(*args), out_dot
        == central differences along v (tests/oracle.py);
- vjp:  `s2sad.vjp(f)(*args)` -> (out, pullback); pullback(u) has the kinds of
        the arguments, equals J^T u from the finite-difference Jacobian, and
        passes the dot-product test <u, J v> == <J^T u, v> against the JVP;
- grad: (scalar outputs) `s2sad.grad(f, wrt=all)` equals the FD gradient.

Evaluation points: entries uniform in [-1.2, 1.2], resampled until every
branch condition evaluated by the probe twin is at least MARGIN from its
threshold, all outputs are finite and moderate, and the branch trace is the
same at x +- h v for the finite-difference steps h used.

A derivative is reported wrong only if it disagrees with *both* the central
difference at h = 1e-6 and a fourth-order five-point stencil at h = 1e-3
(so finite-difference noise alone never fails a program).
"""

from __future__ import annotations

import importlib
import itertools
import os
import sys
import traceback
import warnings
from dataclasses import dataclass

import numpy as np

import s2sad

try:
    from tests import oracle
    from tests.fuzz import generator as gen
except ImportError:  # pragma: no cover
    import oracle  # type: ignore
    import generator as gen  # type: ignore

MARGIN = 2e-3
MAX_ABS = 1e3
PRIMAL_RTOL, PRIMAL_ATOL = 1e-9, 1e-11
FD_RTOL, FD_ATOL = 2e-5, 2e-6
DOT_RTOL = 1e-8
# Below DOT_ATOL, <u, J v> and <J^T u, v> may differ by rounding alone: reverse
# mode sums cotangent contributions in another order, and a tiny term next to
# two cancelling O(1) terms (x*M - x*M - arctan(x*M) at x ~ 1e12) vanishes.
DOT_ATOL = 1e-9
MODES = ("jvp", "vjp", "grad")

_COUNTER = itertools.count()


# --------------------------------------------------------------------------
# modules on disk
# --------------------------------------------------------------------------


class ModuleWriter:
    """Writes generated modules into `directory` and imports them."""

    def __init__(self, directory: str, tag: str = "m"):
        self.directory = str(directory)
        self.tag = tag
        if self.directory not in sys.path:
            sys.path.insert(0, self.directory)

    def load(self, source: str, stem: str):
        name = f"s2sad_fuzz_{self.tag}_{stem}_{os.getpid()}_{next(_COUNTER)}"
        path = os.path.join(self.directory, name + ".py")
        with open(path, "w") as fh:
            fh.write(source)
        importlib.invalidate_caches()
        mod = importlib.import_module(name)
        return mod


# --------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------


def draw_arg(rng: np.random.Generator, ty: str):
    shape = gen.SHAPES[ty]
    if not shape:
        return float(rng.uniform(-1.2, 1.2))
    return rng.uniform(-1.2, 1.2, size=shape).astype(np.float64)


def _finite_moderate(tree) -> bool:
    try:
        flat = oracle.flatten(tree)
    except Exception:
        return False
    return bool(np.all(np.isfinite(flat)) and np.all(np.abs(flat) < MAX_ABS))


def _perturbed(args, v, h):
    return [a + h * t for a, t in zip(args, v)]


# An evaluation point where an intermediate value overflows (exp of a large
# argument, say) is not admissible, even when the output stays finite (arctan
# of inf): AD then multiplies inf by 0 and gives NaN, as every AD system does.
_ARITH_ERRORS = (FloatingPointError, OverflowError, ZeroDivisionError)


def _run_probe(mod, probe, args):
    mod._TRACE.clear()
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = probe(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    return out, list(mod._TRACE)


FD_STEPS = (1e-6, 1e-3, 2e-3)


def sample_point(mod, fn: gen.Function, rng, tries: int = 25):
    """(args, v, u) away from branch thresholds, or None."""
    probe = getattr(mod, fn.name + "__probe")
    for _ in range(tries):
        args = [draw_arg(rng, t) for _, t in fn.params]
        try:
            out, trace = _run_probe(mod, probe, args)
        except _ARITH_ERRORS:
            continue  # an intermediate overflows here: try another point
        except Exception:
            return None
        if not _finite_moderate(out):
            continue
        if trace and min(abs(float(d)) for d in trace) < MARGIN:
            continue
        v = [oracle.random_like(rng, a) for a in args]
        signs = [d > 0 for d in trace]
        stable = True
        for h in FD_STEPS:
            for s in (h, -h, 2 * h, -2 * h):
                try:
                    o2, t2 = _run_probe(mod, probe, _perturbed(args, v, s))
                except Exception:
                    stable = False
                    break
                if [d > 0 for d in t2] != signs or not _finite_moderate(o2):
                    stable = False
                    break
            if not stable:
                break
        if not stable:
            continue
        u = oracle.random_like(rng, out)
        return args, v, u
    return None


# --------------------------------------------------------------------------
# finite differences (two independent stencils)
# --------------------------------------------------------------------------


def _call(f, args):
    with np.errstate(all="ignore"):
        return f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])


def fd_jvp_5pt(f, args, v, h=1e-3):
    """(-f(x+2hv) + 8 f(x+hv) - 8 f(x-hv) + f(x-2hv)) / 12h, through trees."""
    vals = [oracle.flatten(_call(f, _perturbed(args, v, s * h))) for s in (2, 1, -1, -2)]
    return (-vals[0] + 8 * vals[1] - 8 * vals[2] + vals[3]) / (12 * h)


def fd_jvp_central(f, args, v, h=1e-6):
    return (oracle.flatten(_call(f, _perturbed(args, v, h)))
            - oracle.flatten(_call(f, _perturbed(args, v, -h)))) / (2 * h)


def _basis_dirs(args):
    for i, a in enumerate(args):
        n = int(np.size(a))
        for k in range(n):
            v = [np.zeros_like(b) if isinstance(b, np.ndarray) else 0.0 for b in args]
            if isinstance(a, np.ndarray):
                e = np.zeros(a.shape)
                e.ravel()[k] = 1.0
                v[i] = e
            else:
                v[i] = 1.0
            yield i, k, v


def fd_vjp(f, args, u, stencil):
    """J^T u, one entry per argument, from a finite-difference Jacobian."""
    uf = oracle.flatten(u)
    out = [np.zeros(np.shape(a)) for a in args]
    for i, k, v in _basis_dirs(args):
        col = stencil(f, args, v)
        out[i].ravel()[k] = float(uf @ col)
    return out


def _close(actual, expected, scale) -> bool:
    a = oracle.flatten(actual)
    e = np.asarray(expected, dtype=np.float64).ravel()
    if a.shape != e.shape or not np.all(np.isfinite(a)):
        return False
    return bool(np.all(np.abs(a - e) <= FD_ATOL * scale + FD_RTOL * np.abs(e)))


def _fd_agree(a, b, scale) -> bool:
    """The two stencils agree with each other (else the point is too badly
    conditioned for finite differences to referee, and nothing is reported)."""
    a, b = np.asarray(a).ravel(), np.asarray(b).ravel()
    return bool(np.all(np.abs(a - b) <= 1e-3 * (scale + np.abs(b))))


# --------------------------------------------------------------------------
# the check
# --------------------------------------------------------------------------


@dataclass
class Failure:
    mode: str
    category: str  # "exception:<Type>", "wrong-derivative", "wrong-primal", "kind", "dot-test"
    message: str

    @property
    def signature(self):
        return (self.mode, self.category)


def _kind_problem(actual, like, what):
    try:
        oracle.assert_like(actual, like, what)
    except AssertionError as exc:
        return str(exc)
    return None


def check_mode(f, mode: str, args, v, u, scalar_output: bool):
    """None if f's derivative in `mode` is right at (args, v, u), else a Failure."""
    n = len(args)
    expected_out = _call(f, args)
    scale = 1.0 + float(np.max(np.abs(oracle.flatten(expected_out)), initial=0.0))
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if mode == "jvp":
                res = s2sad.jvp(f)(*[_copy(a) for a in args], *[_copy(t) for t in v])
                out, out_dot = res
                got = out_dot
            elif mode == "vjp":
                out, pullback = s2sad.vjp(f)(*[_copy(a) for a in args])
                got = pullback(_copy(u))
            else:
                out = expected_out
                got = s2sad.grad(f, wrt=tuple(range(n)))(*[_copy(a) for a in args])
    except Exception as exc:  # noqa: BLE001 - any exception is a finding
        tb = traceback.format_exc(limit=-3)
        return Failure(mode, f"exception:{type(exc).__name__}", f"{type(exc).__name__}: {exc}\n{tb}")

    try:
        primal_ok = np.allclose(oracle.flatten(out), oracle.flatten(expected_out),
                                PRIMAL_RTOL, PRIMAL_ATOL)
    except Exception:  # noqa: BLE001 - a structure mismatch
        primal_ok = False
    if not primal_ok:
        return Failure(mode, "wrong-primal", f"out={out!r}\nexpected={expected_out!r}")

    if mode == "jvp":
        problem = _kind_problem(got, expected_out, "out_dot")
        if problem:
            return Failure(mode, "kind", problem)
        exp1 = fd_jvp_central(f, args, v)
        if not _close(got, exp1, scale):
            exp2 = fd_jvp_5pt(f, args, v)
            if not _close(got, exp2, scale) and _fd_agree(exp1, exp2, scale):
                return Failure(mode, "wrong-derivative",
                               f"out_dot={oracle.flatten(got)}\nFD(central)={exp1}\nFD(5pt)={exp2}")
        return None

    if mode != "vjp" and not scalar_output:
        return None
    what, each = ("pullback", "cotangent") if mode == "vjp" else ("grad", "gradient")
    if not isinstance(got, tuple) or len(got) != n:
        return Failure(mode, "kind", f"{what} returned {type(got).__name__} {got!r}")
    for i, (c, a) in enumerate(zip(got, args)):
        problem = _kind_problem(c, a, f"{each} {i}")
        if problem:
            return Failure(mode, "kind", problem)
    cots = got
    if mode != "vjp":
        u = 1.0

    exp1 = fd_vjp(f, args, u, fd_jvp_central)
    uscale = scale * (1.0 + float(np.sum(np.abs(oracle.flatten(u)))))
    if not _close(cots, oracle.flatten(exp1), uscale):
        exp2 = fd_vjp(f, args, u, fd_jvp_5pt)
        if not _close(cots, oracle.flatten(exp2), uscale) and _fd_agree(
                oracle.flatten(exp1), oracle.flatten(exp2), uscale):
            return Failure(mode, "wrong-derivative",
                           f"cotangents={oracle.flatten(cots)}\nFD(central)={oracle.flatten(exp1)}"
                           f"\nFD(5pt)={oracle.flatten(exp2)}")
    return None


def check_dot_test(f, args, v, u):
    """<u, jvp(v)> == <vjp(u), v> to DOT_RTOL (both from s2sad); None or a Failure."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, jv = s2sad.jvp(f)(*[_copy(a) for a in args], *[_copy(t) for t in v])
            _, pb = s2sad.vjp(f)(*[_copy(a) for a in args])
            cots = pb(_copy(u))
    except Exception:
        return None  # reported by the per-mode checks
    try:
        terms = oracle.flatten(u) * oracle.flatten(jv)
        lhs = float(np.sum(terms))
        rhs = float(sum(oracle.vdot(c, t) for c, t in zip(cots, v)))
    except Exception:  # noqa: BLE001 - wrong structures: reported by the per-mode checks
        return None
    scale = max(float(np.sum(np.abs(terms))), abs(lhs), abs(rhs), 1e-300)
    if not (np.isfinite(lhs) and np.isfinite(rhs)) or abs(lhs - rhs) > DOT_RTOL * scale + DOT_ATOL:
        return Failure("dot", "dot-test", f"<u, J v>={lhs!r} vs <J^T u, v>={rhs!r}")
    return None


def _copy(a):
    if isinstance(a, np.ndarray):
        return a.copy()
    if isinstance(a, tuple):
        return tuple(_copy(x) for x in a)
    return a


def check_function(mod, fn: gen.Function, rng, modes=MODES):
    """(checked: bool, failures: list[Failure]) for one function of a loaded module."""
    point = sample_point(mod, fn, rng)
    if point is None:
        return False, []
    args, v, u = point
    f = getattr(mod, fn.name)
    failures = []
    for mode in modes:
        if mode == "grad" and not fn.scalar_output:
            continue
        fail = check_mode(f, mode, args, v, u, fn.scalar_output)
        if fail is not None:
            failures.append(fail)
    if "jvp" in modes and "vjp" in modes:
        fail = check_dot_test(f, args, v, u)
        if fail is not None:
            failures.append(fail)
    return True, failures


# --------------------------------------------------------------------------
# shrinking
# --------------------------------------------------------------------------


def shrink_failure(writer: ModuleWriter, fn: gen.Function, failure: Failure, seed: int,
                   max_steps: int = 300):
    """A minimal variant of fn that still fails with the same signature, as
    (Function, reproducer source, Failure)."""
    last = {"failure": failure}

    def still_fails(cand: gen.Function) -> bool:
        try:
            mod = writer.load(gen.render_module([cand], cand.helpers_used(), probe=True), "shrink")
        except Exception:
            return False
        for k in range(3):
            rng = np.random.default_rng([seed, k])
            point = sample_point(mod, cand, rng)
            if point is None:
                continue
            args, v, u = point
            f = getattr(mod, cand.name)
            if failure.mode == "dot":
                got = check_dot_test(f, args, v, u)
            else:
                got = check_mode(f, failure.mode, args, v, u, cand.scalar_output)
            if got is not None and got.signature == failure.signature:
                last["failure"] = got
                return True
        return False

    small = gen.shrink(fn, still_fails, max_steps=max_steps)
    still_fails(small)  # refresh the message for the final program
    return small, gen.reproducer_source(small), last["failure"]


def run_batch(writer: ModuleWriter, seed: int, n: int, options=None, modes=MODES,
              shrink: bool = True):
    """Generate and check `n` functions from `seed`.

    Returns (n_checked, n_mode_checks, reports), a report being a dict with the
    seed, function name, failure and shrunk reproducer."""
    fns, helpers = gen.generate_batch(seed, n, options)
    mod = writer.load(gen.render_module(fns, helpers, probe=True), f"s{seed}")
    rng = np.random.default_rng(seed)
    checked = 0
    mode_checks = 0
    reports = []
    for fn in fns:
        ok, failures = check_function(mod, fn, rng, modes)
        if not ok:
            continue
        checked += 1
        mode_checks += sum(1 for m in modes if m != "grad" or fn.scalar_output)
        if failures:
            first = failures[0]
            rep = {"seed": seed, "name": fn.name, "failure": first,
                   "all": [f.signature for f in failures]}
            if shrink:
                small, src, fail2 = shrink_failure(writer, fn, first, seed)
                rep["reproducer"] = src
                rep["failure"] = fail2
                rep["function"] = small
            else:
                rep["reproducer"] = gen.reproducer_source(fn)
                rep["function"] = fn
            reports.append(rep)
    return checked, mode_checks, reports


def format_report(rep) -> str:
    f = rep["failure"]
    return (f"seed {rep['seed']} {rep['name']}: {f.mode} {f.category} (all: {rep['all']})\n"
            f"--- minimal reproducer ---\n{rep['reproducer']}--- symptom ---\n{f.message}\n")
