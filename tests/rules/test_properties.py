"""Property-based tests of every rule in the table (Hypothesis; strategies in strategies.py).

Each drawn example is a tiny user function calling one rule, written to a real module (the
compiler reads source). For each example:
- the primal equals NumPy's, and outputs, tangents and cotangents have the primal's shapes
  and dtypes;
- the JVP matches central finite differences (float64) wherever the function is smooth at
  the drawn point (differences that disagree between steps mark a kink or a jump: skipped
  there; the documented values at kinks are checked below and in test_conventions.py);
- the VJP passes the dot-product test <u, J v> = <J^T u, v> against the JVP;
- float32 arguments give float32 outputs, tangents and cotangents (known upcasts xfail);
- second order: JVP and VJP of the generated JVP and of the generated gradient, against
  finite differences of those derivatives.

Profiles (tests/rules/conftest.py): "default" draws a few examples per rule; "deep" many
more (S2SAD_HYPOTHESIS_PROFILE=deep, or the `slow`-marked tests: `pytest -m slow`).
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile

import numpy as np
import pytest
from hypothesis import event, given, note, settings
from hypothesis import strategies as st

import s2sad
from s2sad_rules import TABLE
from tests.rules.conftest import DEEP, deep_settings
from tests.rules.strategies import COVERED_ELSEWHERE, PRELUDE, SPECS, Example, known_bug

# -- the rules --------------------------------------------------------------------------------


def rule_name(key) -> str:
    """`np.linalg.norm`, `operator.add`, `math.sin`, `builtins.abs`, `s2sad.ir.prims.Attr('T')`."""
    mod = getattr(key, "__module__", None) or ""
    if isinstance(key, np.ufunc):  # NumPy before 2.2 gives ufuncs no __module__
        mod = "numpy" if getattr(np, key.__name__, None) is key else "scipy.special"
    name = getattr(key, "__name__", None) or repr(key)
    if mod == "numpy" or mod.startswith("numpy."):
        mod = "np" + mod[len("numpy"):]
    return f"{'operator' if mod == '_operator' else mod}.{name}".lstrip(".")


def builtin_rule_keys() -> list:
    keys = [k for k, r in {**TABLE.vjp_rules, **TABLE.jvp_rules}.items()
            if r.func.__module__.startswith("s2sad_rules")]
    return sorted(keys, key=rule_name)


RULES = [k for k in builtin_rule_keys() if rule_name(k).split(".")[-1] not in COVERED_ELSEWHERE]


def test_every_rule_has_a_strategy():
    """A rule added to the table must get a line in tests/rules/strategies.py SPECS."""
    missing = [rule_name(k) for k in RULES if k not in SPECS]
    assert not missing, f"rules with no Hypothesis strategy in strategies.SPECS: {missing}"
    stale = [rule_name(k) for k in SPECS if k not in set(builtin_rule_keys())]
    assert not stale, f"strategies for callables that have no rule: {stale}"


def test_a_rule_without_a_strategy_fails_the_check(monkeypatch):
    monkeypatch.delitem(SPECS, np.sin)
    with pytest.raises(AssertionError, match=r"np\.sin"):
        test_every_rule_has_a_strategy()


def rule_params():
    return [pytest.param(k, id=rule_name(k)) for k in RULES]


# -- programs: every example is a function in a real module -----------------------------------

PROGRAM_DIR = tempfile.mkdtemp(prefix="s2sad-properties-")
atexit.register(shutil.rmtree, PROGRAM_DIR, True)
_MODULES: dict = {}
_DERIVATIVES: dict = {}


def program(ex: Example, n_out: int | None):
    """The module defining f (the example) and fu(args, u) = sum <f(args), u> (for the VJP
    side of second order; n_out: number of outputs of a tuple result, None for one output)."""
    # not `out`: its cotangent `out_bar` would meet the compiler's name-capture bug recorded
    # in test_property_regressions.py (test_user_variable_named_out_in_a_second_order_vjp)
    outs = [f"o{i}" for i in range(n_out)] if n_out is not None else ["y"]
    params = ", ".join(f"a{i}" for i in range(len(ex.args)))
    us = ", ".join(f"u{i}" for i in range(len(outs)))
    dots = " + ".join(f"np.sum({o} * u{i})" for i, o in enumerate(outs))
    fu = (f"def fu({params}, {us}):\n    {', '.join(outs)}{',' if n_out == 1 else ''} = "
          f"f({params})\n    return {dots}\n")
    source = f"{PRELUDE}\n\n{ex.source}\n\n{fu}"
    module = _MODULES.get(source)
    if module is None:
        name = "s2sad_prop_" + hashlib.sha1(source.encode()).hexdigest()[:16]
        path = os.path.join(PROGRAM_DIR, name + ".py")
        with open(path, "w") as fh:
            fh.write(source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        _MODULES[source] = module
    return module


def derivative(kind, fn, wrt):
    """s2sad.<kind>(fn, wrt), one object per function, so specialisations are reused."""
    key = (kind, fn, wrt)
    d = _DERIVATIVES.get(key)
    if d is None:
        d = _DERIVATIVES[key] = getattr(s2sad, kind)(fn, wrt=wrt)
    return d


# -- trees of values --------------------------------------------------------------------------


def leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in leaves(t)]
    return [tree]


def flat(tree) -> np.ndarray:
    parts = [np.asarray(x, dtype=np.float64).ravel() for x in leaves(tree)]
    return np.concatenate(parts) if parts else np.zeros(0)


def random_like(rng, like):
    if isinstance(like, (tuple, list)):
        return tuple(random_like(rng, x) for x in like)
    if isinstance(like, np.ndarray):
        return rng.uniform(-1, 1, like.shape).astype(like.dtype)
    if isinstance(like, np.generic):  # a NumPy scalar keeps its dtype
        return like.dtype.type(rng.uniform(-1, 1))
    return float(rng.uniform(-1, 1))


def perturb(args, wrt, tangents, h):
    new = list(args)
    for i, t in zip(wrt, tangents):
        a = args[i]
        new[i] = a + h * t if isinstance(a, np.ndarray) else float(a) + h * float(t)
    return new


def assert_same_structure(actual, expected, what, check_dtype=True):
    """Same tuple structure, shapes (and dtypes) as `expected`, leaf by leaf."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), (
            f"{what}: expected {len(expected)} outputs, got {type(actual).__name__} "
            f"{actual!r}")
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert_same_structure(a, e, f"{what}[{k}]", check_dtype)
        return
    assert np.shape(actual) == np.shape(expected), (
        f"{what}: shape {np.shape(actual)} != {np.shape(expected)}")
    if check_dtype and isinstance(expected, (np.ndarray, np.generic)):  # a Python float is
        # weakly typed (NumPy keeps the array's dtype): any float scalar answers it
        assert np.result_type(actual) == np.result_type(expected), (
            f"{what}: dtype {np.result_type(actual)} != {np.result_type(expected)}")


def assert_close(actual, expected, rtol, atol, what):
    a, e = flat(actual), flat(expected)
    assert a.shape == e.shape, f"{what}: {a.size} values, expected {e.size}"
    bad = ~(np.abs(a - e) <= atol + rtol * np.abs(e)) & ~(np.isnan(a) & np.isnan(e))
    assert not np.any(bad), (
        f"{what}: not close (rtol={rtol}, atol={atol})\nactual=  {a}\nexpected={e}")


# -- the oracle: finite differences, with a kink detector --------------------------------------

H = 1e-6


def finite_difference(f, args, wrt, tangents):
    """(central difference, smooth): smooth is False where the one-sided differences disagree
    (a kink, a jump or a region too curved for differences of step H)."""
    with np.errstate(all="ignore"):
        f0 = flat(f(*args))
        try:
            fp, fm, fp2, fm2 = (flat(f(*perturb(args, wrt, tangents, h)))
                                for h in (H, -H, 2 * H, -2 * H))
        except ValueError:  # a shape that depends on the values changed (x[x > 0] with an
            return None, False  # entry at 0, then multiplied by an array of the old shape)
    if not f0.shape == fp.shape == fm.shape == fp2.shape == fm2.shape:
        return None, False  # the output's shape jumps (x[x > 0] with an entry at 0)
    fwd, bwd = (fp - f0) / H, (f0 - fm) / H
    central, wide = (fp - fm) / (2 * H), (fp2 - fm2) / (4 * H)
    scale = 1.0 + np.abs(central) + 1e-9 * np.abs(f0) / H
    # a kink shows as one-sided differences that disagree, a jump as central differences
    # that scale with 1/h
    smooth = bool(np.all(np.isfinite(central)) and np.all(np.abs(fwd - bwd) <= 1e-4 * scale)
                  and np.all(np.abs(central - wide) <= 1e-4 * scale))
    return central, smooth


def check_jvp_against_fd(fn, args, wrt, tangents, out_dot, rtol, what):
    central, smooth = finite_difference(fn, args, wrt, tangents)
    if not smooth:
        event(f"{what}: not smooth at the drawn point, finite differences skipped")
        return
    scale = np.max(np.abs(flat(fn(*args))), initial=0.0)
    assert_close(out_dot, central, rtol, 1e-7 + 1e-9 * scale, what)


def check_dot_product(u, jv, jtu, v, what, rtol=1e-9):
    """<u, J v> = <J^T u, v>, relative to the size of the terms summed."""
    lhs, rhs = float(np.dot(flat(u), flat(jv))), float(np.dot(flat(jtu), flat(v)))
    scale = float(np.sum(np.abs(flat(u) * flat(jv))) + np.sum(np.abs(flat(jtu) * flat(v))))
    assert np.isfinite(lhs) and np.isfinite(rhs), f"{what}: non-finite ({lhs}, {rhs})"
    assert abs(lhs - rhs) <= 1e-12 + rtol * scale, (
        f"{what}: <u, Jv> = {lhs!r} but <J^T u, v> = {rhs!r}")


# -- first order --------------------------------------------------------------------------


def n_outputs(out):
    return len(out) if isinstance(out, (tuple, list)) else None


def first_order(rule, ex: Example, seed: int):
    skip = known_bug(rule, ex)
    if skip:
        event("known bug, skipped")
        return
    note(ex.source)
    rng = np.random.default_rng(seed)
    with np.errstate(all="ignore"):
        expected = program(ex, None).f(*ex.args)
    f = program(ex, n_outputs(expected)).f
    wrt = ex.wrt
    if ex.refused:  # an option the rule does not support: refused, never mishandled
        for kind in ("jvp", "vjp"):
            with pytest.raises(s2sad.MissingRuleError, match=ex.refused):
                d = getattr(s2sad, kind)(f, wrt=wrt)
                tangents = [ex.args[i] for i in wrt]
                _ = d(*ex.args, *tangents) if kind == "jvp" else d(*ex.args)[1](expected)
        return
    v = [random_like(rng, ex.args[i]) for i in wrt]
    out, out_dot = derivative("jvp", f, wrt)(*ex.args, *v)
    assert_same_structure(out, expected, "jvp: primal")
    assert_close(out, expected, 1e-10, 1e-12, "jvp: primal")
    assert_same_structure(out_dot, expected, "jvp: tangent")
    check_jvp_against_fd(f, ex.args, wrt, v, out_dot, ex.rtol, "jvp")

    if ex.vjp_refused:  # the JVP covers it, the VJP refuses it (and must not mishandle it)
        with pytest.raises(NotImplementedError, match=ex.vjp_refused):
            derivative("vjp", f, wrt)(*ex.args)[1](out)
        return
    out2, pullback = derivative("vjp", f, wrt)(*ex.args)
    assert_same_structure(out2, expected, "vjp: primal")
    assert_close(out2, expected, 1e-10, 1e-12, "vjp: primal")
    u = random_like(rng, expected)
    cot = pullback(u)
    assert isinstance(cot, tuple) and len(cot) == len(wrt), f"vjp: cotangents {cot!r}"
    assert_same_structure(cot, tuple(ex.args[i] for i in wrt), "vjp: cotangent")
    check_dot_product(u, out_dot, cot, v, "jvp/vjp dot product")


def given_examples(rule, profile_settings=None):
    """@given over the rule's strategy and a seed for the random directions."""
    strategy = SPECS[rule]

    def decorate(test):
        wrapped = given(ex=strategy, seed=st.integers(0, 2**32 - 1))(test)
        return profile_settings(wrapped) if profile_settings else wrapped

    return decorate


def require_slow(request):
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("deep property run: select with -m slow")


@pytest.mark.parametrize("rule", rule_params())
def test_rule_first_order(rule):
    given_examples(rule)(lambda ex, seed: first_order(rule, ex, seed))()


@pytest.mark.slow
@pytest.mark.parametrize("rule", rule_params())
def test_rule_first_order_deep(rule, request):
    require_slow(request)
    given_examples(rule, deep_settings)(lambda ex, seed: first_order(rule, ex, seed))()


# -- second order ------------------------------------------------------------------------------

SECOND_KINDS = {
    "jvp_of_jvp": [],
    "vjp_of_jvp": [],
    "jvp_of_vjp": [],
    "vjp_of_vjp": [],
}


def second_order(rule, ex: Example, seed: int, kind: str):
    """`kind` = <outer>_of_<inner>: the inner derivative is s2sad.jvp(f) (its arguments: the
    primal's and one tangent per wrt) or the reverse-mode gradient of <f(args), u> (arguments:
    the primal's and u); the outer transform differentiates it with respect to every float
    argument, checked against finite differences of the inner derivative."""
    if known_bug(rule, ex, order=2, kind=kind) or ex.refused or ex.vjp_refused:
        event("known bug or refused option, skipped")
        return
    note(ex.source)
    rng = np.random.default_rng(seed)
    with np.errstate(all="ignore"):
        expected = program(ex, None).f(*ex.args)
    module = program(ex, n_outputs(expected))
    n, wrt = len(ex.args), ex.wrt
    outer_kind, inner_kind = kind.split("_of_")
    if inner_kind == "jvp":
        if n_outputs(expected) is not None:
            # refused with a clear error: "cannot differentiate jvp of f: its result is a
            # nested tuple" (the compiler's documented limit); the gradient side covers these
            event("tuple result: the JVP's result is a nested tuple, skipped")
            return
        inner = derivative("jvp", module.f, wrt)
        extra = [random_like(rng, ex.args[i]) for i in wrt]
    else:
        inner = derivative("grad", module.fu, wrt)
        outs = expected if n_outputs(expected) is not None else (expected,)
        extra = [random_like(rng, o) for o in outs]
    args = list(ex.args) + extra
    wrt2 = tuple(wrt) + tuple(range(n, len(args)))
    t = [random_like(rng, args[i]) for i in wrt2]
    central, smooth = finite_difference(inner, args, wrt2, t)
    if outer_kind == "jvp":
        out, out_dot = derivative("jvp", inner, wrt2)(*args, *t)
        assert_same_structure(out_dot, out, f"{kind}: tangent", check_dtype=False)
        if smooth:
            scale = np.max(np.abs(flat(out)), initial=0.0)
            assert_close(out_dot, central, 1e-4, 1e-6 + 1e-8 * scale, kind)
        return
    out, pullback = derivative("vjp", inner, wrt2)(*args)
    w = random_like(rng, out)
    cot = pullback(w)
    assert_same_structure(cot, tuple(args[i] for i in wrt2), f"{kind}: cotangent",
                          check_dtype=False)
    if smooth:
        lhs, rhs = float(np.dot(flat(w), central)), float(np.dot(flat(cot), flat(t)))
        scale = float(np.sum(np.abs(flat(w) * central)) + np.sum(np.abs(flat(cot) * flat(t))))
        assert abs(lhs - rhs) <= 1e-6 + 1e-4 * scale, f"{kind}: <w, J t> = {lhs} (finite " \
            f"differences) but <J^T w, t> = {rhs}"


def second_params():
    out = []
    for k in RULES:
        for kind, marks in SECOND_KINDS.items():
            out.append(pytest.param(k, kind, id=f"{rule_name(k)}-{kind}", marks=marks))
    return out


SECOND_ORDER_SETTINGS = settings(max_examples=15 if DEEP else 1)  # 4 kinds per rule


@pytest.mark.parametrize("rule,kind", second_params())
def test_rule_second_order(rule, kind):
    given_examples(rule, SECOND_ORDER_SETTINGS)(
        lambda ex, seed: second_order(rule, ex, seed, kind))()


@pytest.mark.slow
@pytest.mark.parametrize("rule,kind", second_params())
def test_rule_second_order_deep(rule, kind, request):
    require_slow(request)
    deep = settings(deep_settings, max_examples=15)
    given_examples(rule, deep)(lambda ex, seed: second_order(rule, ex, seed, kind))()


# -- documented values at kinks (s2sad_rules docstrings, docs/rules.md) ------------------------

KINK_ABS = ["np.abs({0})", "np.fabs({0})", "abs({0})"]
KINK_TIES = ["np.maximum({0}, {1})", "np.minimum({0}, {1})", "np.fmax({0}, {1})",
             "np.fmin({0}, {1})"]


@pytest.mark.parametrize("call", KINK_ABS)
@given(shape=st.sampled_from([(), (3,), (2, 2)]), seed=st.integers(0, 2**32 - 1))
def test_abs_family_has_derivative_zero_at_zero(call, shape, seed):
    rng = np.random.default_rng(seed)
    x = np.zeros(shape)
    ex = Example(call.format("a0"), (x,), (0,))
    f = program(ex, None).f
    v = rng.uniform(-1, 1, shape)
    assert np.array_equal(derivative("jvp", f, (0,))(x, v)[1], np.zeros(shape))
    assert np.array_equal(derivative("vjp", f, (0,))(x)[1](v)[0], np.zeros(shape))


@pytest.mark.parametrize("call", KINK_TIES)
@given(shape=st.sampled_from([(), (3,), (2, 2)]), seed=st.integers(0, 2**32 - 1))
def test_ties_split_the_derivative_evenly(call, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, shape)
    ex = Example(call.format("a0", "a1"), (x, x.copy()), (0, 1))
    f = program(ex, None).f
    v, w = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)
    np.testing.assert_allclose(derivative("jvp", f, (0, 1))(x, x, v, w)[1], 0.5 * (v + w),
                               rtol=1e-15, atol=0)
    xb, yb = derivative("vjp", f, (0, 1))(x, x)[1](v)
    np.testing.assert_allclose(xb, 0.5 * v, rtol=1e-15, atol=0)
    np.testing.assert_allclose(yb, 0.5 * v, rtol=1e-15, atol=0)


KINK_REDUCTIONS = ["np.max({0})", "np.amax({0})", "np.min({0})", "np.amin({0})"]


@pytest.mark.parametrize("call", KINK_REDUCTIONS)
@given(n=st.integers(2, 5), ties=st.integers(2, 5), seed=st.integers(0, 2**32 - 1))
def test_tied_extremes_share_the_derivative_evenly(call, n, ties, seed):
    rng = np.random.default_rng(seed)
    ties = min(ties, n)
    extreme = 2.0 if "max" in call else -2.0
    x = rng.uniform(-1, 1, n)
    tied = rng.permutation(n)[:ties]
    x[tied] = extreme
    f = program(Example(call.format("a0"), (x,), (0,)), None).f
    v = rng.uniform(-1, 1, n)
    share = np.zeros(n)
    share[tied] = 1.0 / ties
    assert derivative("jvp", f, (0,))(x, v)[1] == pytest.approx(float(share @ v), rel=1e-12)
    np.testing.assert_allclose(derivative("vjp", f, (0,))(x)[1](1.5)[0], 1.5 * share,
                               rtol=1e-12)


@given(shape=st.sampled_from([(3,), (2, 3)]), ord_=st.sampled_from([1, 2, 3, np.inf]),
       seed=st.integers(0, 2**32 - 1))
def test_vector_norm_at_zero_is_the_zero_subgradient(shape, ord_, seed):
    x = np.zeros(shape)
    f = program(Example(f"np.linalg.vector_norm(a0, ord={ord_!r})".replace("inf", "np.inf"),
                        (x,), (0,)), None).f
    v = np.random.default_rng(seed).uniform(-1, 1, shape)
    assert derivative("jvp", f, (0,))(x, v)[1] == 0.0
    assert np.array_equal(derivative("vjp", f, (0,))(x)[1](1.0)[0], np.zeros(shape))


# -- float32 in, float32 out ------------------------------------------------------------------

# Rules whose derivatives are not returned in float32 for float32 arguments (none today:
# a derivative is returned in its argument's precision, see docs/guards.md). A rule listed
# here xfails on a dtype mismatch only (shapes are always checked strictly).
KNOWN_UPCAST: set = set()
UPCAST_REASON = "issue #13: float32 in gives float64 derivatives (dtype fix in progress)"


def float32_example(ex: Example) -> Example:
    def cast(a):
        return a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float64 \
            else a
    return dataclasses.replace(ex, args=tuple(cast(a) for a in ex.args))


def float32_check(rule, ex: Example, seed: int):
    if known_bug(rule, ex) or ex.refused or ex.vjp_refused or not any(
            isinstance(ex.args[i], np.ndarray) for i in ex.wrt):
        return
    ex = float32_example(ex)
    note(ex.source)
    rng = np.random.default_rng(seed)
    with np.errstate(all="ignore"):
        expected = program(ex, None).f(*ex.args)
    f = program(ex, n_outputs(expected)).f
    v = [random_like(rng, ex.args[i]) for i in ex.wrt]
    with np.errstate(all="ignore"):
        out, out_dot = derivative("jvp", f, ex.wrt)(*ex.args, *v)
        out2, pullback = derivative("vjp", f, ex.wrt)(*ex.args)
        cot = pullback(random_like(rng, expected))
    cot_like = tuple(ex.args[i] for i in ex.wrt)
    for actual, like, what in ((out, expected, "primal"), (out_dot, expected, "tangent"),
                               (out2, expected, "vjp primal"), (cot, cot_like, "cotangent")):
        assert_same_structure(actual, like, what, check_dtype=False)
    try:
        for actual, like, what in ((out, expected, "primal"), (out_dot, expected, "tangent"),
                                   (cot, cot_like, "cotangent")):
            assert_same_structure(actual, like, f"float32 {what}")
    except AssertionError:
        if rule_name(rule) in KNOWN_UPCAST:
            pytest.xfail(UPCAST_REASON)
        raise


@pytest.mark.parametrize("rule", rule_params())
def test_rule_float32(rule):
    given_examples(rule)(lambda ex, seed: float32_check(rule, ex, seed))()
