"""Tuples and lists as differentiated arguments (issue #15, item 1): the tangent and the
cotangent have the argument's structure; checked against central finite differences and
the dot-product test, at first and second order."""

import collections

import numpy as np
import pytest

import s2sad
from s2sad.errors import NonDifferentiableError, WrtError
from tests.oracle import assert_close, rng_for


def affine(p, x):
    a, b = p
    return np.sum(a * x + b ** 2)


def nested(p):
    (a, b), c = p
    return a * b * np.sin(c)


def from_list(ps):
    return ps[0] * ps[1] + ps[2] ** 3


def mixed_int(p, n):
    w, i = p
    return w[i] * 2.0 + n * np.sum(w ** 2)


def returns_tuple(p):
    a, b = p
    return (a * b, np.exp(a) + b)


def inner_grad(q):
    return s2sad.grad(nested)(q)[1]  # d nested / dc = a b cos(c)


def sliced_list(ps):
    return np.sum(np.array(ps[1:]) * 2.0) + ps[0] * ps[-1] + sum(
        a * b for a, b in zip(ps, ps[1:]))


def sliced_tuple(t):
    a, b = t[:2]
    return a * b + t[2:][0] * t[::-1][1] + t[::2][1] ** 2 + np.sum(t[-2:][1] * t[0])


def sliced_mixed(t):
    arr, n, c = t[::2][0], t[1], t[1:][1]
    return np.sum(arr ** 2) * c + n * c


def _perturb(tree, direction, h):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_perturb(t, d, h) for t, d in zip(tree, direction))
    if isinstance(tree, (int, np.integer)) and not isinstance(tree, bool):
        return tree
    return tree + h * direction


def _direction(tree, rng):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_direction(t, rng) for t in tree)
    if isinstance(tree, (int, np.integer)):
        return 0.0
    if isinstance(tree, np.ndarray):
        return rng.standard_normal(tree.shape)
    return float(rng.standard_normal())


def _inner(a, b):
    if isinstance(a, (tuple, list)):
        return sum(_inner(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return 0.0
    return float(np.sum(np.asarray(a) * np.asarray(b)))


def _fd(f, args, i, v, h=1e-6):
    plus = list(args)
    minus = list(args)
    plus[i] = _perturb(args[i], v, h)
    minus[i] = _perturb(args[i], v, -h)
    fp, fm = f(*plus), f(*minus)
    if isinstance(fp, tuple):
        return tuple((np.asarray(a) - np.asarray(b)) / (2 * h) for a, b in zip(fp, fm))
    return (np.asarray(fp) - np.asarray(fm)) / (2 * h)


def _same_structure(a, like):
    if isinstance(like, (tuple, list)):
        assert type(a) is type(like) and len(a) == len(like), (a, like)
        for x, y in zip(a, like):
            _same_structure(x, y)
    elif isinstance(like, np.ndarray):
        assert isinstance(a, np.ndarray) and a.shape == like.shape, (a, like)


CASES = [
    (affine, ((np.array([1.0, 2.0]), 3.0), np.array([0.5, -1.0]))),
    (nested, (((1.0, 2.0), 0.3),)),
    (from_list, ([1.0, 2.0, 3.0],)),
    (mixed_int, ((np.array([1.0, -2.0, 0.5]), 1), 0.7)),
    (inner_grad, (((1.2, -0.4), 0.3),)),
    # a slice of a tuple or list argument (reverse mode refused it: "indexing a tuple by a
    # computed index")
    (sliced_list, ([0.3, -0.5, 0.9, 1.2],)),
    (sliced_tuple, ((0.3, -0.5, 0.9, np.array([1.2, -0.1])),)),
    (sliced_mixed, ((np.array([0.4, -0.3]), 2, 0.7),)),
]


@pytest.mark.parametrize("f, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_grad_has_the_argument_structure(f, args):
    rng = rng_for(f.__name__)
    g = s2sad.grad(f)(*args)
    float_like = _direction(args[0], rng)
    _same_structure(g, float_like)
    for _ in range(3):  # directional derivatives along random directions
        v = _direction(args[0], rng)
        assert_close(_inner(g, v), float(_fd(f, args, 0, v)), what="<grad, v>")


@pytest.mark.parametrize("f, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_jvp_and_vjp_agree_with_finite_differences(f, args):
    rng = rng_for(f.__name__, "jv")
    v = _direction(args[0], rng)
    out, out_dot = s2sad.jvp(f, wrt=0)(*args, v)
    assert_close(out_dot, _fd(f, args, 0, v), what="jvp")
    out2, pullback = s2sad.vjp(f, wrt=0)(*args)
    u = _direction(out2, rng)
    (p_bar,) = pullback(u)
    # the dot-product test: <u, J v> = <J^T u, v>
    assert_close(_inner(u, out_dot), _inner(p_bar, v), what="<u, Jv> vs <J^T u, v>")


def test_returned_tuple_of_a_tuple_argument():
    args = ((0.4, -1.1),)
    rng = rng_for("returns_tuple")
    v = _direction(args[0], rng)
    _, out_dot = s2sad.jvp(returns_tuple)(*args, v)
    assert_close(out_dot, _fd(returns_tuple, args, 0, v), what="jvp")
    _, pullback = s2sad.vjp(returns_tuple)(*args)
    u = (0.3, -0.8)
    (p_bar,) = pullback(u)
    assert_close(_inner(u, out_dot), _inner(p_bar, v), what="dot")


def test_second_order_through_a_tuple_cotangent():
    # d/dq of a b cos(c) at ((a, b), c)
    (a, b), c = (1.2, -0.4), 0.3
    g = s2sad.grad(inner_grad)(((a, b), c))
    assert_close(g, ((b * np.cos(c), a * np.cos(c)), -a * b * np.sin(c)), what="grad")


def test_cotangent_never_aliases_an_argument():
    x = np.array([0.5, -1.0])
    g = s2sad.grad(affine)((np.array([1.0, 2.0]), 3.0), x)
    assert not np.shares_memory(g[0], x)


def test_check_grads_takes_tuples():
    assert s2sad.check_grads(affine, ((np.array([1.0, 2.0]), 3.0), np.array([0.5, -1.0])))
    assert s2sad.check_grads(mixed_int, ((np.array([1.0, -2.0, 0.5]), 1), 0.7))


def weighted_from_dict(p, x):
    return np.sum(p["w"] * np.sin(x)) * p["scale"]["s"]


def test_check_grads_takes_dicts_and_namedtuples():
    # a dict argument made check_grads itself fail: `dict + float` in its finite differences
    p = {"w": np.array([0.5, -1.0]), "scale": {"s": 1.5}}
    x = np.array([0.3, 0.9])
    assert s2sad.check_grads(weighted_from_dict, (p, x))
    Params = collections.namedtuple("Params", "a b")
    assert s2sad.check_grads(affine, (Params(np.array([1.0, 2.0]), 3.0), x))
    from tests.rule_table import restored_rule_table

    with restored_rule_table():  # and it still finds a wrong derivative through a dict
        s2sad.defjvp(np.sin)(lambda x, x_dot: 2.0 * np.cos(x) * x_dot)
        s2sad.defvjp(np.sin)(lambda g, x: 2.0 * g * np.cos(x))
        with pytest.raises(AssertionError, match="finite differences"):
            s2sad.check_grads(weighted_from_dict, (p, x))


def jac_of_tuple(p):
    return p[0] * p[1]


def iterate(ps):
    s = 0.0
    for q in ps:
        s = s + q
    return s


def test_refusals_are_clear():
    # (a tuple of floats and float arrays has a tuple of Jacobian blocks: issue 36)
    with pytest.raises(WrtError, match="jacfwd with respect to the tuple argument"):
        s2sad.jacfwd(jac_of_tuple)((1.0, 2))


def computed_index(ps, i):
    return ps[i] * 2.0


def pick_from_built(a, b, c, i):
    packed = a * b, np.sin(b), c  # (Tangent's passthru_pack, with items computed)
    return packed[i] * packed[i - 1]


def pick_row(x, y, i):
    rows = [x * 2.0, np.sin(y)]
    return np.sum(rows[i] * x)


def pick_of_mixed_kinds(x, a, i):
    items = (x, a)
    return np.sum(items[i])


@pytest.mark.parametrize("i", [0, 1, 2, -1, -2])
def test_a_computed_index_into_a_tuple_is_differentiated(i):
    # reverse mode used to refuse `packed[i]` with an int i that forward mode took:
    # the picked item's cotangent is chosen at run time now
    rng = rng_for("pick_from_built", str(i))
    args = tuple(float(v) for v in rng.uniform(-2.0, 2.0, 3)) + (i,)
    g = s2sad.grad(pick_from_built, wrt=(0, 1, 2))(*args)
    _, pullback = s2sad.vjp(pick_from_built, wrt=(0, 1, 2))(*args)
    assert pullback(1.0) == g
    for k in range(3):
        fd = _fd(lambda *abc: pick_from_built(*abc, i), args[:3], k, 1.0)
        assert_close(g[k], float(fd), what=f"d/d{'abc'[k]}")
    # second order: d2/da2 of a*b * sin(b) etc. against second differences
    h = s2sad.hessian(pick_from_built, wrt=1)(*args)
    num = (pick_from_built(args[0], args[1] + 1e-4, *args[2:])
           - 2 * pick_from_built(*args) + pick_from_built(args[0], args[1] - 1e-4, *args[2:]))
    assert_close(float(h), num / 1e-8, rtol=1e-4, atol=1e-5, what="hessian")


@pytest.mark.parametrize("i", [0, 1])
def test_a_computed_index_into_a_list_of_arrays(i):
    rng = rng_for("pick_row", str(i))
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    gx, gy = s2sad.grad(pick_row, wrt=(0, 1))(x, y, i)
    for _ in range(2):
        v, w = rng.standard_normal(3), rng.standard_normal(3)
        fd = _fd(lambda x, y: pick_row(x, y, i), (x, y), 0, v)
        fd_y = _fd(lambda x, y: pick_row(x, y, i), (x, y), 1, w)
        assert_close(_inner(gx, v), float(fd), what="<x_bar, v>")
        assert_close(_inner(gy, w), float(fd_y), what="<y_bar, w>")
    src = s2sad.grad(pick_row, wrt=(0, 1)).source_for(x, y, i)
    assert "unbroadcast" not in src  # the item's kind is known: rows' items share it


def test_a_computed_index_into_items_of_different_kinds_is_refused():
    with pytest.raises(NonDifferentiableError, match="tuple by a computed index") as info:
        s2sad.grad(pick_of_mixed_kinds, wrt=(0, 1))(np.ones(2), 1.0, 0)
    err = info.value
    assert err.lineno == pick_of_mixed_kinds.__code__.co_firstlineno + 2
    assert "items[i]" in err.source_line and "constant integers" in err.hint


def mlp(params, x):
    h = x
    for w, b in params:
        h = np.tanh(w @ h + b)
    return np.sum(h)


def test_a_loop_over_a_tuple_or_list_argument_is_unrolled():
    # the loop is copied once per item (its length is known once specialised)
    assert s2sad.grad(iterate)((1.0, 2.0)) == (1.0, 1.0)
    assert s2sad.grad(iterate)([1.0, 2.0, 3.0]) == [1.0, 1.0, 1.0]
    rng = rng_for("mlp")
    params = [(rng.standard_normal((3, 2)), rng.standard_normal(3)),
              (rng.standard_normal((1, 3)), rng.standard_normal(1))]
    x = rng.standard_normal(2)
    g = s2sad.grad(mlp)(params, x)
    _same_structure(g, params)
    for _ in range(3):
        v = _direction(params, rng)
        assert_close(_inner(g, v), float(_fd(mlp, (params, x), 0, v)), what="<grad, v>")
    code = [ln for ln in s2sad.grad(mlp).source_for(params, x).splitlines()
            if not ln.strip().startswith("#")]
    assert not any(ln.strip().startswith("for ") for ln in code)


@pytest.mark.parametrize("f, args", [c for c in CASES if c[0].__name__.startswith("sliced")],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_slices_of_sequences_to_second_order(f, args):
    assert s2sad.check_grads(f, args, order=2)
