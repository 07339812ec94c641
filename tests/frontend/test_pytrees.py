"""Dicts and namedtuples as arguments (issue #15, item 1: JAX's pytrees): the function reads
them by key or field; a gradient or cotangent has the argument's structure (a dict with the
same keys, the same namedtuple class), and a JVP takes tangents of that structure.

Checked against central finite differences on the flattened leaves, the dot-product test
between the JVP and the VJP, and an analytic second derivative."""

import collections

import numpy as np
import pytest

import s2sad
from tests.oracle import rng_for

Affine = collections.namedtuple("Affine", "w b")
Layer = collections.namedtuple("Layer", ["weight", "bias"])


def dict_affine(p, x):
    return np.sum(np.tanh(p["w"] * x + p["b"]) ** 2)


def record_affine(p, x):
    return np.sum(np.tanh(p.w * x + p.b) ** 2)


def record_unpacked(p, x):
    w, b = p
    return np.sum(np.sin(w * x) * b) + p[1] ** 2


def mlp(params, x):
    """A list of layers, each a dict: the way networks' weights are written."""
    h = x
    for layer in params:
        h = np.tanh(layer["w"] @ h + layer["b"])
    return np.sum(h ** 2)


def items_loop(d, x):
    total = 0.0
    for name, value in d.items():
        total = total + np.sum(value * x) ** 2
    for name in d:
        total = total + np.sum(d[name]) * len(d)
    return total + np.sum(sum(d.values()))


def _scale(p):
    return p["scale"] * p["inner"].weight


def helper_reads(p, x):
    """A helper reading the dict and the namedtuple inside it."""
    return np.sum(_scale(p) * x + p["inner"].bias) ** 2


def int_keys(d, x):
    return d[0] * x + d[1] ** 2


# -- trees: leaves in order, rebuilt ------------------------------------------------------

def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in _leaves(v)]
    if isinstance(tree, (tuple, list)):
        return [leaf for v in tree for leaf in _leaves(v)]
    return [tree]


def _vector(tree):
    return np.concatenate([np.ravel(np.asarray(leaf, dtype=float)) for leaf in _leaves(tree)])


def _from_vector(vec, like):
    pos = [0]

    def build(t):
        if isinstance(t, dict):
            return {k: build(v) for k, v in t.items()}
        if isinstance(t, tuple) and hasattr(t, "_fields"):
            return type(t)(*[build(v) for v in t])
        if isinstance(t, (tuple, list)):
            return type(t)(build(v) for v in t)
        n = np.size(t)
        chunk = vec[pos[0]:pos[0] + n]
        pos[0] += n
        return chunk.reshape(np.shape(t)) if isinstance(t, np.ndarray) else float(chunk[0])
    return build(like)


def _fd_grad(f, args, i, h=1e-6):
    base = _vector(args[i])
    out = np.zeros_like(base)
    for k in range(base.size):
        e = np.zeros_like(base)
        e[k] = h
        plus, minus = list(args), list(args)
        plus[i] = _from_vector(base + e, args[i])
        minus[i] = _from_vector(base - e, args[i])
        out[k] = (f(*plus) - f(*minus)) / (2 * h)
    return out


def _same_structure(a, like):
    if isinstance(like, dict):
        assert type(a) is dict and list(a) == list(like), (a, like)
        for k in like:
            _same_structure(a[k], like[k])
    elif isinstance(like, (tuple, list)):
        assert type(a) is type(like) or (type(like) is list and type(a) is tuple), (a, like)
        assert len(a) == len(like)
        for x, y in zip(a, like):
            _same_structure(x, y)
    else:
        assert np.shape(a) == np.shape(like), (a, like)


def _cases(rng):
    x3 = rng.standard_normal(3)
    return [
        (dict_affine, ({"w": rng.standard_normal(3), "b": 0.3}, x3)),
        (record_affine, (Affine(rng.standard_normal(3), -0.2), x3)),
        (record_unpacked, (Affine(rng.standard_normal(3), 0.7), x3)),
        (mlp, ([{"w": rng.standard_normal((4, 3)), "b": rng.standard_normal(4)},
                {"w": rng.standard_normal((2, 4)), "b": rng.standard_normal(2)}], x3)),
        (items_loop, ({"a": rng.standard_normal(3), "b": rng.standard_normal(3)}, x3)),
        (helper_reads, ({"scale": 1.5, "inner": Layer(rng.standard_normal(3), 0.1)}, x3)),
        (int_keys, ({0: 1.3, 1: -0.4}, 0.8)),
    ]


CASES = [c[0].__name__ for c in _cases(rng_for("names"))]


def _case(name):
    rng = rng_for(name, "pytrees")
    return next(c for c in _cases(rng) if c[0].__name__ == name)


@pytest.mark.parametrize("name", CASES)
def test_grad_has_the_arguments_structure(name):
    f, args = _case(name)
    g = s2sad.grad(f, wrt=(0, 1))(*args)
    for i in (0, 1):
        _same_structure(g[i], args[i])
        np.testing.assert_allclose(_vector(g[i]), _fd_grad(f, args, i), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", CASES)
def test_value_and_grad_and_vjp(name):
    f, args = _case(name)
    value, g = s2sad.value_and_grad(f)(*args)
    assert np.isclose(value, f(*args))
    _same_structure(g, args[0])
    np.testing.assert_allclose(_vector(g), _fd_grad(f, args, 0), rtol=1e-6, atol=1e-8)
    out, pullback = s2sad.vjp(f, wrt=0)(*args)
    assert np.isclose(out, f(*args))
    (bar,) = pullback(2.0)
    _same_structure(bar, args[0])
    np.testing.assert_allclose(_vector(bar), 2.0 * _fd_grad(f, args, 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", CASES)
def test_jvp_takes_tangents_of_the_same_structure(name):
    """The dot-product test: the JVP along a structured tangent v equals <grad, v>."""
    f, args = _case(name)
    rng = rng_for(name, "tangent")
    v = _from_vector(rng.standard_normal(_vector(args[0]).size), args[0])
    out, out_dot = s2sad.jvp(f, wrt=0)(*args, v)
    assert np.isclose(out, f(*args))
    assert np.isclose(out_dot, _vector(v) @ _fd_grad(f, args, 0), rtol=1e-6, atol=1e-8)


def test_second_order_through_a_dict():
    """The Hessian-vector product along a dict direction, against the analytic Hessian of
    sum(tanh(w x + b)²) in b: with t = tanh(u), d²(t²)/du² = 2(1 - t²)(1 - 3t²)."""
    rng = rng_for("second")
    p, x = {"w": rng.standard_normal(3), "b": 0.2}, rng.standard_normal(3)
    t = np.tanh(p["w"] * x + p["b"])
    curvature = 2 * (1 - t ** 2) * (1 - 3 * t ** 2)
    v = {"w": np.zeros(3), "b": 1.0}
    out = s2sad.hvp(dict_affine, wrt=0)(p, x, v)
    _same_structure(out, p)
    np.testing.assert_allclose(out["w"], curvature * x, rtol=1e-10)
    assert np.isclose(out["b"], np.sum(curvature), rtol=1e-10)


def test_specialised_on_the_items_shapes():
    """A namedtuple of other shapes (or a dict of other keys) is another specialisation,
    never the code compiled for the first."""
    g = s2sad.grad(record_affine)
    for n in (3, 5):
        rng = rng_for("shapes", str(n))
        args = (Affine(rng.standard_normal(n), 0.1), rng.standard_normal(n))
        np.testing.assert_allclose(_vector(g(*args)), _fd_grad(record_affine, args, 0),
                                   rtol=1e-6, atol=1e-8)
    gd = s2sad.grad(items_loop)
    for keys in ("ab", "abc"):
        rng = rng_for("keys", keys)
        args = ({k: rng.standard_normal(3) for k in keys}, rng.standard_normal(3))
        out = gd(*args)
        assert list(out) == list(keys)
        np.testing.assert_allclose(_vector(out), _fd_grad(items_loop, args, 0), rtol=1e-6,
                                   atol=1e-8)


def test_header_names_the_structure():
    args = ({"w": np.ones(3), "b": 0.3}, np.ones(3))
    g = s2sad.grad(dict_affine)
    g(*args)
    assert "p: dict of keys 'w', 'b'" in g.source


def test_unknown_field_is_refused_at_its_line():
    def bad(p):
        return p.c * 2.0

    with pytest.raises(s2sad.S2SADError, match="no field `c`") as e:
        s2sad.grad(bad)(Affine(1.0, 2.0))
    assert "return p.c" in str(e.value)


def inner_db(p, x):
    """A gradient taken inside the function, read by key."""
    return s2sad.grad(dict_affine)(p, x)["b"]


def descent_step(p, x):
    g = s2sad.grad(dict_affine)(p, x)
    return dict_affine({"w": p["w"] - 0.1 * g["w"], "b": p["b"] - 0.1 * g["b"]}, x)


def record_step(p, x):
    value, g = s2sad.value_and_grad(record_affine)(p, x)
    return value + record_affine(Affine(p.w - 0.1 * g.w, b=p.b - 0.1 * g.b), x)


def test_derivative_inside_with_a_dict_argument():
    """The inner gradient's dict is read by key; d/db of it against the analytic second
    derivative, and the outer gradient of a descent step against finite differences."""
    rng = rng_for("inner dict")
    p, x = {"w": rng.standard_normal(3), "b": 0.2}, rng.standard_normal(3)
    t = np.tanh(p["w"] * x + p["b"])
    assert np.isclose(s2sad.grad(inner_db)(p, x)["b"],
                      np.sum(2 * (1 - t ** 2) * (1 - 3 * t ** 2)), rtol=1e-10)
    for f in (descent_step, inner_db):
        g = s2sad.grad(f)(p, (x))
        _same_structure(g, p)
        np.testing.assert_allclose(_vector(g), _fd_grad(f, (p, x), 0), rtol=1e-6, atol=1e-8)


def test_namedtuples_built_and_differentiated_inside():
    rng = rng_for("inner record")
    p, x = Affine(rng.standard_normal(3), -0.3), rng.standard_normal(3)
    g = s2sad.grad(record_step)(p, x)
    _same_structure(g, p)
    np.testing.assert_allclose(_vector(g), _fd_grad(record_step, (p, x), 0), rtol=1e-6,
                               atol=1e-8)


def test_a_dict_with_other_keys_is_refused_with_the_accepted_forms():
    def tuple_keys(d, x):
        return np.sum(d[(0, 1)] * x)

    with pytest.raises(s2sad.WrtError, match="dict \\(with str or int keys\\)"):
        s2sad.grad(tuple_keys)({(0, 1): np.ones(2)}, np.ones(2))
