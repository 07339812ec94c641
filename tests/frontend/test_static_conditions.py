"""An `if` whose test is known while compiling lowers only the branch that runs: the other
may use what this NumPy or this program does not have. The flags are read like any global:
changing one compiles again (guards)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import s2sad

DEBUG = False
MODE = "fast"
LIMIT = None


class Config:
    order = 3


def flag(x):
    if DEBUG:
        print(undefined_name)  # noqa: F821  (never lowered while DEBUG is False)
    return x * x


def compared(x):
    if MODE == "fast" and Config.order >= 3:
        return x ** 3
    return np.not_in_numpy(x)


def version_check(x):
    if sys.version_info >= (3, 8):
        return np.sin(x)
    return np.sine(x)


def none_check(x):
    if LIMIT is not None:
        return np.minimum(x, LIMIT) * np.missing_function(x)
    return np.exp(x)


@pytest.mark.parametrize("f, want", [
    (flag, 2 * 0.7), (compared, 3 * 0.7 ** 2), (version_check, np.cos(0.7)),
    (none_check, np.exp(0.7)),
])
def test_only_the_branch_that_runs_is_lowered(f, want):
    assert np.isclose(s2sad.grad(f)(0.7), want)


def test_changing_a_flag_compiles_again(monkeypatch):
    d = s2sad.grad(flag)
    assert d(0.7) == pytest.approx(1.4)
    monkeypatch.setattr(sys.modules[__name__], "DEBUG", True)
    with pytest.raises(s2sad.NameResolutionError, match="undefined_name"):
        d(0.7)


# -- type tests decided while compiling ------------------------------------------------


def _halves(x):
    if np.sum(x) > 0.0:
        return [x, 2.0 * x]
    return [x, 3.0 * x]


def list_from_a_branching_helper(x):
    out = _halves(x)
    if isinstance(out, list):
        return np.sum(out[0] * out[1])
    return np.sum(out[0])


def tuple_literal_tested(x):
    out = (x, 2.0 * x)
    if isinstance(out, list):
        return out.pop() * 3.0  # (a list method: never lowered, as out is a tuple)
    return np.sum(out[0] * out[1])


def array_or_number(x):
    if isinstance(x, (list, tuple)):
        return x[0] * x[1]
    if isinstance(x, np.ndarray):
        return np.sum(np.cos(x) * x)
    return x ** 3


def float_tested(x):
    if isinstance(x, float):
        return x ** 3
    return np.sum(np.sin(x) * x)


def test_a_list_returned_on_both_paths_of_a_helper_stays_a_list():
    # it became a tuple: isinstance(out, list) was False and the other branch ran, a
    # silently wrong value and gradient (6.06 expected here, -0.2 computed)
    from tests.oracle import assert_close, numerical_grad

    for x in (np.array([0.3, -1.2, 0.7]), np.array([0.3, 1.2, 0.7])):
        value, g = s2sad.value_and_grad(list_from_a_branching_helper)(x)
        assert value == pytest.approx(list_from_a_branching_helper(x), rel=1e-12)
        assert_close(g, numerical_grad(list_from_a_branching_helper, (x,), (0,))[0],
                     rtol=1e-6)


def test_a_type_test_of_a_local_tuple_lowers_only_the_branch_that_runs():
    # `out.pop()` (a list method, refused on a differentiated value) is in the branch an
    # isinstance test of the tuple `out` rules out: it was lowered, and refused
    from tests.oracle import assert_close, numerical_grad

    x = np.array([0.3, -1.2, 0.7])
    assert_close(s2sad.grad(tuple_literal_tested)(x),
                 numerical_grad(tuple_literal_tested, (x,), (0,))[0], rtol=1e-6)


@pytest.mark.parametrize("f, arg", [(array_or_number, np.array([0.3, -1.2, 0.7])),
                                    (array_or_number, 0.4), (array_or_number, (0.5, 2.0)),
                                    (float_tested, np.array([0.3, -1.2, 0.7]))],
                         ids=["array", "number", "tuple", "float_of_array"])
def test_a_type_test_the_kind_decides_keeps_only_its_branch(f, arg):
    # the kind of an argument tells a tuple from a list, and an array from a number: the
    # test is decided while compiling and only the branch taken is in the code (both were,
    # with the test made at run time). A float argument is not decided (np.float32)
    from tests.oracle import assert_close, numerical_jvp

    args = (arg,)
    direction = (tuple(np.ones(2)) if isinstance(arg, tuple) else
                 np.ones_like(arg) if isinstance(arg, np.ndarray) else 1.0,)
    value, tangent = s2sad.jvp(f)(*args, *direction)
    assert value == pytest.approx(f(arg), rel=1e-12)
    if isinstance(arg, tuple):  # (the oracle moves arrays and numbers: the pair as one)
        expected = numerical_jvp(lambda v: f(tuple(v)), (np.array(arg),), (0,), (np.ones(2),))
    else:
        expected = numerical_jvp(f, args, (0,), direction)
    assert_close(tangent, expected, rtol=1e-6)
    assert "isinstance" not in s2sad.jvp(f).source_for(*args, *direction)
    assert "isinstance" not in s2sad.grad(f).source_for(*args)


def test_a_type_test_a_kind_cannot_decide_is_made_at_run_time():
    # a float kind may be a float or an np.float32 (not a float): the test stays, and the
    # branch that runs is the one Python picks
    assert "isinstance" in s2sad.grad(float_tested).source_for(0.4)
    assert s2sad.grad(float_tested)(0.4) == pytest.approx(3 * 0.4 ** 2, rel=1e-12)
    x32 = np.float32(0.4)
    assert float(s2sad.grad(float_tested)(x32)) == pytest.approx(
        float(np.sin(x32) + x32 * np.cos(x32)), rel=1e-5)


def slices_by_rank(y):
    """SciPy's idiom (integrate.trapezoid): index tuples built from the rank."""
    y = np.asarray(y)  # (the same rank: still a fact)
    nd = y.ndim
    first, rest = [slice(None)] * nd, [slice(None)] * nd
    first[-1] = slice(1, None)
    rest[-1] = slice(None, -1)
    if y.ndim == 1:
        return np.sum((y[tuple(first)] - y[tuple(rest)]) ** 2)
    return np.sum(np.sin(y[tuple(first)]) * y[tuple(rest)])


@pytest.mark.parametrize("shape", [(5,), (3, 4)])
def test_the_rank_of_an_array_argument_is_a_constant(shape):
    from tests.oracle import numerical_grad, numerical_jvp
    rng = np.random.default_rng(7)
    y, v = rng.normal(size=shape), rng.normal(size=shape)
    g = s2sad.grad(slices_by_rank)(y)
    np.testing.assert_allclose(g, numerical_grad(slices_by_rank, (y,), (0,))[0], rtol=1e-6,
                               atol=1e-9)
    _, out_dot = s2sad.jvp(slices_by_rank)(y, v)
    np.testing.assert_allclose(out_dot, np.sum(g * v), rtol=1e-10)
    assert "ndim" not in s2sad.grad(slices_by_rank).source_for(y)  # (decided, not tested)


def differences(y, axis=-1):
    """An int option (SciPy's axis=-1): its value decides an index while compiling."""
    first, rest = [slice(None)] * y.ndim, [slice(None)] * y.ndim
    first[axis] = slice(1, None)
    rest[axis] = slice(None, -1)
    return np.sum((y[tuple(first)] - y[tuple(rest)]) ** 2)


def keyword_options(p, *, axis=0, squared=False):
    s = np.sum(p ** 2, axis=axis)
    if squared:
        return np.sum(s)
    return np.sum(np.sqrt(s))


def test_an_int_option_is_a_fact():
    from tests.oracle import numerical_grad
    y = np.random.default_rng(3).normal(size=(3, 4))
    g = s2sad.grad(differences)
    for call in [(y,), (y,), (y, -1), (y, 0), (y, 1), (y,)]:
        want = numerical_grad(differences, call, (0,))[0]
        np.testing.assert_allclose(g(*call), want, rtol=1e-6, atol=1e-9)
    src = g.source_for(y)
    assert "axis: -1" in src and "y[:, 1:] - y[:, :-1]" in src  # (decided while compiling)


def test_keyword_only_options_and_flags_are_facts():
    from tests.oracle import numerical_grad
    p = np.random.default_rng(4).uniform(0.5, 1.5, (3, 2))
    g = s2sad.grad(keyword_options)
    for kw in [{}, {"squared": True}, {"axis": 1}, {"axis": 0}, {}, {"axis": 1,
                                                                     "squared": True}]:
        want = numerical_grad(keyword_options, (p,), (0,), kwargs=kw)[0]
        np.testing.assert_allclose(g(p, **kw), want, rtol=1e-6, atol=1e-9)
    assert "if " not in g.source_for(p, squared=True)  # (only the branch that runs)


# -- a branch the arguments' kinds decide, on a value computed in the function -----------


def norm_of_the_weights(coef):
    # (scikit-learn's LinearModelLoss.l2_penalty: `weights.ndim` of a computed array is
    # known only from the kinds; np.ravel(..., order="A") has no rule: it follows the
    # array's memory layout, which its derivative need not share)
    weights = coef[:-1]
    return weights @ weights if weights.ndim == 1 else np.sum(np.ravel(weights, order="A") ** 2)


def test_a_branch_the_kinds_decide_is_the_only_one_differentiated():
    from tests.oracle import assert_close, numerical_grad, numerical_jvp

    coef = np.array([0.3, -1.2, 0.7])
    expected = numerical_grad(norm_of_the_weights, (coef,), (0,))[0]
    assert_close(s2sad.grad(norm_of_the_weights)(coef), expected)
    v = np.array([1.0, 0.5, -2.0])
    _, tangent = s2sad.jvp(norm_of_the_weights)(coef, v)
    assert_close(tangent, numerical_jvp(norm_of_the_weights, (coef,), (0,), (v,)))
    assert_close(s2sad.hessian(norm_of_the_weights)(coef), np.diag([2.0, 2.0, 0.0]))


def test_the_branch_the_kinds_take_is_refused_where_it_has_no_rule():
    with pytest.raises(s2sad.MissingRuleError, match="order") as err:
        s2sad.grad(norm_of_the_weights)(np.ones((3, 2)))  # (2-d: np.ravel(order="A"))
    assert err.value.filename == __file__
