"""Derivatives give back the structure of the function's output: a list (at the top level
or inside), a namedtuple or a dict written in the function, at any depth, for jvp (out and
out_dot), vjp (out, and a pullback taking a seed of that structure or of tuples), jacfwd
and jacrev (a structure of Jacobians). The generated code returns tuples; the structure is
kept with the compiled derivative, the disk cache entry and the ahead-of-time module.
Every derivative is checked against central finite differences (tests/oracle.py)."""

import collections

import numpy as np
import pytest

import s2sad
from s2sad import derivative, transform
from s2sad.errors import UnsupportedSyntaxError
from tests.codegen.cache_setup import cache_dir  # noqa: F401 - a fixture, found by name
from tests.codegen.cache_setup import write_module
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

Pair = collections.namedtuple("Pair", "u v")
Stats = collections.namedtuple("Stats", "total parts")


def pair_of(x):
    return Pair(x * x, np.sin(x))


def list_of(x):
    return [x, x * x]


def dict_of(x):
    return {"square": x * x, "trig": [np.sin(x), np.cos(x)]}


def nested(x, y):
    s = np.sum(x * y)
    return Stats(s, [x * s, {"a": np.exp(x), "b": (y, x * y)}])


def tuple_holding(x):
    return x * 2.0, Pair(x, x * x)


def pair_in_pair_out(p):
    return Pair(p.u * p.v, p.u)


def passed_through(p):
    return p


def plain_tuple(x):
    return x * x, np.sin(x)


CASES = [  # (function, a template of its arguments (float or array shape))
    (pair_of, (3,)),
    (pair_of, ()),
    (list_of, (2,)),
    (dict_of, (4,)),
    (nested, (3, 3)),
    (tuple_holding, (2,)),
]


def as_tuples(value):
    """A structured value as plain tuples (what the oracle's tree helpers read)."""
    if type(value) is dict:
        return tuple(as_tuples(v) for v in value.values())
    if isinstance(value, (tuple, list)):
        return tuple(as_tuples(v) for v in value)
    return value


def same_structure(actual, expected, where="out"):
    assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"
    if type(expected) is dict:
        assert list(actual) == list(expected), where
        for k in expected:
            same_structure(actual[k], expected[k], f"{where}[{k!r}]")
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected)):
            same_structure(a, e, f"{where}[{i}]")


def leaves_like(value, structure_of):
    """`value`'s containers replaced by those of `structure_of` (float leaves kept)."""
    if type(structure_of) is dict:
        return {k: leaves_like(v, s) for (k, s), v in zip(structure_of.items(), value)}
    if type(structure_of) is list:
        return [leaves_like(v, s) for v, s in zip(value, structure_of)]
    if isinstance(structure_of, tuple):
        items = [leaves_like(v, s) for v, s in zip(value, structure_of)]
        return type(structure_of)(*items) if type(structure_of) is not tuple else tuple(items)
    return value


def args_for(f, shapes, salt=""):
    rng = rng_for(f.__name__, salt + str(shapes))
    n = f.__code__.co_argcount
    dims = shapes if n > 1 else (shapes,)
    return [rng.uniform(-1.0, 1.0, (d,)) if isinstance(d, int) else
            (rng.uniform(-1.0, 1.0, d) if d else float(rng.uniform(-1.0, 1.0)))
            for d in dims]


def flat_f(f):
    return lambda *a: as_tuples(f(*a))


@pytest.mark.parametrize("f, shapes", CASES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_jvp_returns_the_output_structure(f, shapes):
    args = args_for(f, shapes)
    rng = rng_for(f.__name__, "tangent")
    tangents = [rng.uniform(-1.0, 1.0, np.shape(a)) if np.ndim(a) else
                float(rng.uniform(-1.0, 1.0)) for a in args]
    d = s2sad.jvp(f)
    for _ in range(3):  # the first calls, then the dispatcher's fast path
        out, out_dot = d(*args, *tangents)
        same_structure(out, f(*args))
        same_structure(out_dot, f(*args), "out_dot")
        assert_close(as_tuples(out), as_tuples(f(*args)), check_kind=False)
        fd = numerical_jvp(flat_f(f), args, range(len(args)), tangents)
        assert_close(as_tuples(out_dot), fd, check_kind=False, what="out_dot")
    slow = d._slow_calls
    out, out_dot = d(*args, *tangents)
    assert d._slow_calls == slow  # served by the dispatcher's fast path
    same_structure(out_dot, f(*args), "out_dot")


@pytest.mark.parametrize("f, shapes", CASES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_vjp_returns_the_output_structure_and_takes_its_seed(f, shapes):
    args = args_for(f, shapes)
    wrt = tuple(range(len(args)))
    expected = f(*args)
    rng = rng_for(f.__name__, "seed")
    seed_flat = as_tuples(expected)
    seed_flat = tuple(rng.uniform(-1.0, 1.0, np.shape(flatten(seed_flat))))
    seed_tuples = _unflatten(seed_flat, as_tuples(expected))
    seed = leaves_like(seed_tuples, expected)
    fd = numerical_vjp(flat_f(f), args, wrt, seed_tuples)
    d = s2sad.vjp(f)
    for _ in range(3):  # the first calls, then the dispatcher's fast path
        out, pullback = d(*args)
        same_structure(out, expected)
        assert_close(as_tuples(out), as_tuples(expected), check_kind=False)
        for given in (seed, seed_tuples):  # the output's structure, or tuples
            cotangents = pullback(given)
            assert_close(tuple(np.asarray(c, float) for c in cotangents),
                         tuple(np.asarray(c, float) for c in fd), check_kind=False)
    slow = d._slow_calls
    out, pullback = d(*args)
    assert d._slow_calls == slow  # served by the dispatcher's fast path
    same_structure(out, expected)
    # the dot-product test: <seed, J v> == <J^T seed, v>
    tangents = [rng.uniform(-1.0, 1.0, np.shape(a)) if np.ndim(a) else 0.7 for a in args]
    _, out_dot = s2sad.jvp(f)(*args, *tangents)
    lhs = vdot(seed_tuples, as_tuples(out_dot))
    rhs = sum(vdot(c, t) for c, t in zip(pullback(seed), tangents))
    assert_dot_close(lhs, rhs, np.sum(np.abs(flatten(seed_tuples) *
                                             flatten(as_tuples(out_dot)))), 1e-10)


def _unflatten(flat, like):
    pos = 0

    def build(t):
        nonlocal pos
        if isinstance(t, tuple):
            return tuple(build(v) for v in t)
        n = int(np.size(t))
        part = np.array(flat[pos:pos + n]).reshape(np.shape(t))
        pos += n
        return part if np.ndim(t) else float(part)

    return build(like)


# (a nested output, tuple_holding's, is refused by jacfwd and jacrev: UnknownShapeError)
JAC_CASES = [(pair_of, (3,)), (list_of, (2,))]


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("f, shapes", JAC_CASES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_jacobians_have_the_output_structure(mode, f, shapes):
    (x,) = args_for(f, shapes)
    expected = f(x)
    d = getattr(s2sad, mode)(f)
    for _ in range(3):
        jac = d(x)
        same_structure(jac, expected, mode)
        # each leaf's Jacobian, rows in the order of the flattened output
        rows = np.concatenate([np.reshape(j, (-1, x.size)) for j in
                               _leaves(as_tuples(jac))])
        assert_close(rows, numerical_jacobian(flat_f(f), [x], (0,))[0], check_kind=False)


def _leaves(tree):
    if isinstance(tree, tuple):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [tree]


def test_a_dict_output_of_jacfwd_and_jacrev():
    x = args_for(dict_of, (3,))[0]
    for mode in ("jacfwd", "jacrev"):
        jac = getattr(s2sad, mode)(flat_dict)(x)
        assert list(jac) == ["a", "b"]
        assert_close(jac["a"], np.diag(2.0 * x), check_kind=False)
        assert_close(jac["b"], np.diag(np.cos(x)), check_kind=False)


def flat_dict(x):
    return {"a": x * x, "b": np.sin(x)}


def test_a_namedtuple_argument_comes_back_as_its_class():
    p = Pair(0.3, -1.2)
    out, out_dot = s2sad.jvp(pair_in_pair_out)(p, Pair(1.0, 0.5))
    assert type(out) is Pair and type(out_dot) is Pair
    assert_close(tuple(out_dot), (1.0 * -1.2 + 0.3 * 0.5, 1.0), check_kind=False)
    out, pullback = s2sad.vjp(pair_in_pair_out)(p)
    assert out == pair_in_pair_out(p)
    (p_bar,) = pullback(Pair(1.0, 2.0))
    assert type(p_bar) is Pair
    assert_close(tuple(p_bar), (-1.2 + 2.0, 0.3), check_kind=False)
    out, pullback = s2sad.vjp(passed_through)(p)
    assert type(out) is Pair
    assert tuple(pullback(Pair(1.5, 2.5))[0]) == (1.5, 2.5)


def test_a_plain_tuple_output_stays_a_tuple():
    d = s2sad.jvp(plain_tuple)
    out, out_dot = d(0.4, 1.0)
    assert type(out) is tuple and type(out_dot) is tuple
    assert d._last.out_structure is None
    out, pullback = s2sad.vjp(plain_tuple)(0.4)
    assert type(out) is tuple


def test_low_precision_tangents_keep_the_structure():
    x = np.linspace(0.1, 0.9, 3).astype(np.float32)
    d = s2sad.jvp(dict_of)
    for _ in range(3):
        out, out_dot = d(x, np.ones(3, np.float32))
        assert list(out_dot) == ["square", "trig"] and type(out_dot["trig"]) is list
        assert out_dot["square"].dtype == np.float32


def test_a_seed_with_other_keys_is_refused():
    out, pullback = s2sad.vjp(dict_of)(np.ones(2))
    with pytest.raises(ValueError, match="keys"):
        pullback({"square": np.ones(2), "other": [np.ones(2), np.ones(2)]})


def dict_in_a_branch(x):
    if x > 0:
        return {"a": x}
    return {"a": -x}


def helper_returning_a_dict(x):
    return {"a": x * x}


def calls_a_helper_returning_a_dict(x):
    return helper_returning_a_dict(x)["a"]


def test_a_dict_returned_by_a_branch_is_still_refused():
    with pytest.raises(UnsupportedSyntaxError, match="not returned"):
        s2sad.jvp(dict_in_a_branch)(1.0, 1.0)


def test_a_dict_returned_by_a_helper_is_read_by_key():
    """A helper returning a dict was refused; the dict is kept while compiling (issue 33)."""
    assert s2sad.grad(calls_a_helper_returning_a_dict)(1.5) == pytest.approx(3.0)  # 2 x


RECORD_MODULE = """
import collections
import numpy as np

Pair = collections.namedtuple("Pair", "u v")


Hidden = collections.namedtuple("Local", "u v")  # (not importable as records.Local)


def f(x):
    return Pair(x * x, [np.sin(x), {"k": x}])


def g(x):
    return Hidden(x * x, x)
"""


def _entries(d):
    from s2sad.store import cache_entries

    return sorted((d / f"v{cache_entries.ENTRY_FORMAT}").glob("*.entry"))


def test_the_disk_cache_keeps_the_structure(tmp_path, monkeypatch, cache_dir):  # noqa: F811
    mod = write_module(tmp_path, monkeypatch, RECORD_MODULE, prefix="records")
    x = np.linspace(0.1, 0.5, 3)
    first = s2sad.vjp(mod.f)(x)[0]
    assert len(_entries(cache_dir)) == 1
    monkeypatch.setattr(derivative, "_GLOBAL_CACHE", {})
    monkeypatch.setattr(transform, "derivative_ir", _no_compiler)
    out, pullback = s2sad.vjp(mod.f)(x)  # served from the disk cache
    same_structure(out, first)
    assert type(out) is mod.Pair and type(out.v[1]) is dict
    (x_bar,) = pullback(mod.Pair(np.ones(3), [np.zeros(3), {"k": np.ones(3)}]))
    assert_close(x_bar, 2.0 * x + 1.0)


def test_a_namedtuple_class_that_cannot_be_imported_is_not_cached(
        tmp_path, monkeypatch, cache_dir):  # noqa: F811
    mod = write_module(tmp_path, monkeypatch, RECORD_MODULE, prefix="records")
    out, out_dot = s2sad.jvp(mod.g)(2.0, 1.0)
    assert type(out) is mod.Hidden and type(out_dot) is mod.Hidden
    assert tuple(out_dot) == (4.0, 1.0)
    assert _entries(cache_dir) == []  # compiled afresh in each process


def _no_compiler(*a, **k):
    raise AssertionError("the compiler ran")


def test_an_ahead_of_time_module_keeps_the_structure(
        tmp_path, monkeypatch, cache_dir):  # noqa: F811
    from s2sad.store.aot import AheadOfTimeError, DerivativeSpec, write_module as aot_module

    mod = write_module(tmp_path, monkeypatch, RECORD_MODULE, prefix="records")
    x = np.linspace(0.1, 0.5, 3)
    spec = DerivativeSpec(f"{mod.__name__}:f", mod.f, "jvp", None, (x,))
    (tmp_path / f"{mod.__name__}_s2sad.py").write_text(aot_module([spec]))
    hidden = DerivativeSpec(f"{mod.__name__}:g", mod.g, "jvp", None, (1.0,))
    with pytest.raises(AheadOfTimeError, match="cannot be imported"):
        aot_module([hidden])
    monkeypatch.setattr(transform, "derivative_ir", _no_compiler)
    out, out_dot = s2sad.jvp(mod.f)(x, np.ones(3))  # served by the module
    assert type(out_dot) is mod.Pair and type(out_dot.v) is list
    assert_close(out_dot.u, 2.0 * x)
    assert_close(out_dot.v[1]["k"], np.ones(3))


def one_pair(x):
    return Pair(np.sum(x), np.sum(x * x))


def test_a_gradient_names_the_structure_it_refuses():
    for f, what in ((one_pair, r"a Pair \(a namedtuple\)"), (list_of, "a list"),
                    (flat_dict, "a dict"), (plain_tuple, "a tuple")):
        with pytest.raises(s2sad.S2SADError, match=f"returns {what}"):
            s2sad.grad(f)(np.ones(2))


def pair_by_branch(x):
    if x > 0.0:
        return Pair(x * x, np.sin(x))
    return Pair(-x, np.cos(x))


def reads_a_helpers_pair(x):
    return pair_by_branch(x).v * x


def test_a_namedtuple_returned_by_both_branches_keeps_its_class():
    for x in (0.7, -0.4):
        out, out_dot = s2sad.jvp(pair_by_branch)(x, 1.0)
        assert type(out) is Pair and type(out_dot) is Pair
        assert_close(tuple(out_dot), numerical_jvp(flat_f(pair_by_branch), [x], (0,), [1.0]),
                     check_kind=False)
        # ... and a helper's caller reads its fields
        assert_close(s2sad.grad(reads_a_helpers_pair)(x),
                     numerical_jvp(reads_a_helpers_pair, [x], (0,), [1.0]))
