"""Issue 36: shapes, broadcasts, views and masks (items 7, 12, 15, 18), each checked against
finite differences or the value NumPy computes."""

import numpy as np
import pytest

import s2sad
from tests.oracle import numerical_grad, numerical_jvp

# -- 15: an in-place update never touches an array that a view still reads -----------------
# The reverse sweep of `g = V(x)` makes x's cotangent a view of t's (np.flip(t_bar)); the
# reverse of `o = ... * 0.2`, next, must not scale t_bar in place under it.


def v_flip(x):
    return np.flip(x)


def v_fliplr(x):
    return np.fliplr(x)


def v_flipud(x):
    return np.flipud(x)


def v_rot90(x):
    return np.rot90(x)


def v_T(x):
    return x.T


def v_transpose(x):
    return np.transpose(x)


def v_swapaxes(x):
    return np.swapaxes(x, 0, 1)


def v_moveaxis(x):
    return np.moveaxis(x, 0, -1)


def v_reshape(x):
    return np.reshape(x, (9,))


def v_ravel(x):
    return np.ravel(x)


def v_method_reshape(x):
    return x.reshape(9)


def v_expand_dims(x):
    return np.expand_dims(x, 0)


def v_squeeze(x):
    return np.squeeze(x[None])


def v_broadcast_to(x):
    return np.broadcast_to(x, (3, 3))


def v_diagonal(x):
    return np.diagonal(x)


def v_real(x):
    return np.real(x)


def v_real_attr(x):
    return x.real


def v_reversed_rows(x):
    return x[::-1]


def v_slice(x):
    return x[1:, ::-1]


def v_atleast_2d(x):
    return np.atleast_2d(x)


VIEWS = [v_flip, v_fliplr, v_flipud, v_rot90, v_T, v_transpose, v_swapaxes, v_moveaxis,
         v_reshape, v_ravel, v_method_reshape, v_expand_dims, v_squeeze, v_broadcast_to,
         v_diagonal, v_real, v_real_attr, v_reversed_rows, v_slice, v_atleast_2d]


def view_then_scaled(view):
    def f(x):
        o = view(x * 1.5) * 0.2
        g = view(x)
        return np.sum((g + o) ** 2)

    return f


def flip_repro(x):
    o = x * 0.2
    g = np.flip(x)
    return np.sum((g + o) ** 2)


def test_the_reported_flip():
    x = np.array([0.1, 0.9, 0.3, 0.2])
    np.testing.assert_allclose(s2sad.grad(flip_repro)(x), [0.368, 2.112, 1.344, 0.496])


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.__name__[2:])
def test_a_view_of_a_cotangent_is_not_scaled_in_place(view):
    f = view_then_scaled(view)
    x = np.random.default_rng(15).uniform(-1.0, 1.0, (3, 3))
    if view is v_broadcast_to:
        x = x[:1]
    expected = numerical_grad(f, (x,), (0,))[0]
    np.testing.assert_allclose(s2sad.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    u = np.ones_like(x)
    out, tangent = s2sad.jvp(f)(x, u)
    np.testing.assert_allclose(tangent, np.sum(expected * u), rtol=1e-6)


@pytest.mark.parametrize("view", [v_flip, v_T, v_reversed_rows, v_ravel, v_diagonal],
                         ids=lambda v: v.__name__[2:])
def test_a_derivative_never_hands_back_a_view_of_the_callers_array(view):
    """The tangent of np.flip(x) is np.flip(x_dot): a copy is returned, not a view of the
    caller's tangent (nor of the caller's cotangent seed in a pullback)."""
    x = np.arange(9.0).reshape(3, 3)
    t = np.ones((3, 3))
    out, tangent = s2sad.jvp(view)(x, t)
    assert not np.shares_memory(tangent, t)
    tangent *= 2.0
    np.testing.assert_array_equal(t, np.ones((3, 3)))
    out, pullback = s2sad.vjp(view)(x)
    seed = np.ones(np.shape(out))
    (g,) = pullback(seed)
    assert not np.shares_memory(g, seed)
