"""Second derivatives and JVPs whose shapes the compiler used to lose, against finite
differences (and the analytic zero Hessian of piecewise-linear functions).

Found by probing with habits of other AD libraries' test suites (session 9):

* the Hessian of a function whose gradient does not depend on its argument (a linear map,
  np.sort, np.minimum, |x| * sign(x)): the tangent of the gradient is zero, and the
  Jacobian blocks were read out of an unbatched zero (a ValueError from np.reshape);
* np.einsum with a constant operand: its JVP rule branches on `b is None`, which the
  compiler did not decide from the kinds, and a zero on one side of that branch reached
  code generation (an internal AssertionError), for jvp, and hvp through the gradient;
* Hessians refused ("needs the shape of the output") of a function with `if`/`elif`
  returns (the gradient merges values a branch does not compute), and through np.diff with n > 1 (its VJP
  looped with a cotangent that changed shape), np.linalg.norm (np.where on numbers) and
  np.concatenate / np.vstack (split points computed from the arrays, not their shapes);
* the Hessian of a list comprehension: an operand read from a list's cotangent, of unknown
  kind, was not given the batch axis (a ValueError here; where the sizes agree it would
  broadcast along the wrong axis).
"""

import numpy as np
import pytest

import s2sad
from s2sad.errors import UnknownShapeError
from tests.oracle import assert_close, numerical_jacobian, numerical_jvp, rng_for

W = np.arange(6.0).reshape(2, 3) / 5.0 - 0.4


def linear_reshape(x):
    return np.sum(x.reshape(-1) * np.arange(x.size * 1.0))


def sorted_weights(x):
    return np.sum(np.sort(x, axis=1) * np.arange(x.shape[1] * 1.0))


def abs_sign(x):
    return np.sum(np.abs(x) * np.sign(x) + np.maximum(x, 0.1) + np.fmax(x, -0.2))


def minimum_of_flips(x):
    return np.sum(np.minimum(x, x[::-1]))


PIECEWISE_LINEAR = [linear_reshape, sorted_weights, abs_sign, minimum_of_flips]


def einsum_constant_first(x):
    return np.einsum("ij,ij->", W, x)


def einsum_constant_sin(x):
    return np.sum(np.einsum("ij,ij->i", W, np.sin(x)) ** 2)


def einsum_self(x):
    return np.einsum("ij,ij->", x, np.sin(x))


def diffs(x):
    return np.sum(np.diff(x, axis=0) ** 2 + np.diff(x, n=2, axis=1) ** 2)


def diff_orders(x):
    return np.sum(np.diff(x, 0) ** 2) + np.sum(np.sin(np.diff(x, 3)))


def norms(x):
    return np.linalg.norm(x, axis=1).sum() + np.linalg.norm(x, "fro")


def concatenated(x):
    return np.sum(np.concatenate([x, x ** 2], axis=1) * np.stack([x, x]).sum(axis=0).repeat(2, 1))


def flattened_concatenate(x):
    return np.sum(np.concatenate([x, np.sin(x)], axis=None) ** 3)


def stacked(x):
    return np.sum(np.vstack([x, x ** 2]) ** 2) + np.sum(np.hstack([x, np.cos(x)]) ** 3)


def list_comprehension(x):
    ys = [np.sin(x[i]) * x[i] for i in range(2)]
    return np.sum(ys[0] * ys[1])


def generator_sum(x):
    return sum(np.sum(x[i] ** 2 * x[1 - i]) for i in range(2))


def scalar_where(x):
    s = np.sum(x * x)
    return np.where(s > 1.0, s, 2.0 * s) * np.sum(x)


CURVED = [einsum_constant_sin, einsum_self, diffs, diff_orders, norms, concatenated,
          flattened_concatenate, stacked, scalar_where, list_comprehension, generator_sum]


def einsum_constant_generic(x):  # (its own function: no call compiles it before the test)
    return np.einsum("ij,ij->", W, x)


SHAPES = {"einsum_constant_sin": (2, 3), "einsum_self": (2, 3), "diffs": (2, 3)}


def _point(name, shape=(2, 4)):
    # away from the kinks of the piecewise-linear cases (|x| > 0.25, distinct entries)
    rng = rng_for(name)
    return rng.uniform(0.3, 1.0, shape) * rng.choice([-1.0, 1.0], shape)


def _hessian_fd(f, x):
    """The Jacobian of the gradient by central differences of central differences."""
    grad_fd = lambda y: numerical_jacobian(f, (y,), (0,), eps=1e-5)[0].reshape(y.shape)
    return numerical_jacobian(grad_fd, (x,), (0,), eps=1e-4)[0].reshape(x.shape + x.shape)


@pytest.mark.parametrize("f", PIECEWISE_LINEAR, ids=lambda f: f.__name__)
def test_hessian_of_a_piecewise_linear_function_is_zero(f):
    x = _point(f.__name__)
    for second in (s2sad.hessian(f), s2sad.jacfwd(s2sad.grad(f)), s2sad.jacrev(s2sad.grad(f))):
        h = second(x)
        assert isinstance(h, np.ndarray) and h.shape == x.shape + x.shape
        assert not np.any(h)  # the analytic Hessian away from the kinks
    np.testing.assert_allclose(_hessian_fd(f, x), 0.0, atol=1e-6)
    v = rng_for(f.__name__ + "v").standard_normal(x.shape)
    hv = s2sad.hvp(f)(x, v)
    assert hv.shape == x.shape and not np.any(hv)


@pytest.mark.parametrize("f", CURVED, ids=lambda f: f.__name__)
def test_hessian_against_finite_differences(f):
    x = _point(f.__name__, SHAPES.get(f.__name__, (2, 4)))
    want = _hessian_fd(f, x)
    assert_close(s2sad.hessian(f)(x), want, rtol=1e-5, atol=1e-6)
    v = rng_for(f.__name__ + "v").standard_normal(x.shape)
    assert_close(s2sad.hvp(f)(x, v), np.tensordot(want, v, axes=2), rtol=1e-5, atol=1e-6)
    if f not in REVERSE_OVER_REVERSE_OF_A_LIST:
        assert_close(s2sad.jacrev(s2sad.grad(f))(x), want, rtol=1e-5, atol=1e-6)


REVERSE_OVER_REVERSE_OF_A_LIST = [list_comprehension]


@pytest.mark.xfail(strict=True, raises=ValueError, reason=(
    "known bug: reverse over reverse of a list grown in a loop takes the cotangent of the "
    "list as it was before its first item (empty) as zeros of shape (0,), not (0, 4)"))
@pytest.mark.parametrize("f", REVERSE_OVER_REVERSE_OF_A_LIST, ids=lambda f: f.__name__)
def test_reverse_over_reverse_of_a_grown_list(f):
    x = _point(f.__name__)
    assert_close(s2sad.jacrev(s2sad.grad(f))(x), _hessian_fd(f, x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", [einsum_constant_first, einsum_constant_sin, einsum_self,
                               diff_orders, flattened_concatenate],
                         ids=lambda f: f.__name__)
def test_jvp_and_vjp_agree_with_finite_differences(f):
    x = _point(f.__name__, (2, 3) if f.__name__.startswith("einsum") else (2, 5))
    v = rng_for(f.__name__ + "t").standard_normal(x.shape)
    value, tangent = s2sad.jvp(f)(x, v)
    assert_close(value, f(x), rtol=1e-12)
    assert_close(tangent, numerical_jvp(f, (x,), (0,), (v,)), rtol=1e-6, atol=1e-8)
    g = s2sad.grad(f)(x)
    assert abs(float(np.sum(g * v)) - float(tangent)) <= 1e-10 * max(1.0, np.sum(np.abs(g * v)))


def test_generic_source_of_an_undecided_zero_is_refused_clearly():
    """Before the first call, code for arguments of any kind cannot tell the shape of the
    zero tangent of `einsum(W)` on the branch `b is None` of its rule: a clear error that
    names the function and says to give arguments, not an internal AssertionError. The
    gradient's generic code needs no such zero and is shown."""
    with pytest.raises(UnknownShapeError) as info:
        s2sad.jvp(einsum_constant_generic).source  # noqa: B018
    e = info.value
    assert isinstance(e, s2sad.S2SADError)
    assert e.lineno == einsum_constant_generic.__code__.co_firstlineno
    assert "source_for" in e.hint and "einsum_constant_generic" in e.source_line
    assert "def einsum_constant_generic_grad(x):" in s2sad.grad(einsum_constant_generic).source
    x = _point("generic", (2, 3))
    assert "is None" not in s2sad.jvp(einsum_constant_generic).source_for(x, x)


def branches(x, y):
    if x > y:
        return x * y
    elif x > 0.5 * y:
        return x + y ** 2
    return np.exp(x - y) * x


def array_branches(x):
    s = np.sum(x)
    if s > 0.0:
        return np.sum(np.sin(x) * s)
    elif s > -1.0:
        return np.sum(x ** 3)
    return np.sum(np.exp(x))


@pytest.mark.parametrize("x, y", [(1.5, 0.4), (0.8, 1.2), (0.2, 1.0)])
def test_hessian_of_a_function_with_branches(x, y):
    """Each point takes another branch (finite differences stay inside it)."""
    h = s2sad.hessian(branches, wrt=(0, 1))(x, y)
    g = s2sad.grad(branches, wrt=(0, 1))
    for i in range(2):
        col = numerical_jacobian(lambda a, b: np.array(g(a, b)), (x, y), (i,), eps=1e-5)[0]
        for j in range(2):
            assert_close(float(h[j][i]), float(col[j, 0]), rtol=1e-5, atol=1e-6)
    for shift in (0.6, -0.1, -1.5):
        z = _point(f"branches{shift}", (3,)) * 0.3 + shift
        assert_close(s2sad.hessian(array_branches)(z), _hessian_fd(array_branches, z),
                     rtol=1e-5, atol=1e-6)


def nested_break(x):
    s = 0.0
    for i in range(2):
        for j in range(4):
            if x[i, j] < -0.5:
                break
            s = s + x[i, j] ** 2 * (i + 1) * x[1 - i, j]
    return s


def skip_negative(x):
    s = 0.0
    for j in range(4):
        if x[0, j] < 0:
            continue
        s = s + np.exp(x[0, j]) * x[1, j] ** 2
    return s


@pytest.mark.parametrize("f", [nested_break, skip_negative], ids=lambda f: f.__name__)
def test_hessian_of_loops_with_break_and_continue(f):
    """The reverse sweep's residuals of a branch are None on the other branch; merged, their
    kind was unknown, so an index read back from the tape counted as differentiable and the
    Hessian was refused ("index_add is not differentiable with respect to its argument
    `index`"). A value only one branch computes now takes that branch's kind."""
    for shift in (0.0, -0.6):
        x = _point(f.__name__ + str(shift), (2, 4)) * 0.8 + shift
        want = _hessian_fd(f, x)
        assert_close(s2sad.hessian(f)(x), want, rtol=1e-5, atol=1e-6)
        v = rng_for(f.__name__ + "v").standard_normal(x.shape)
        assert_close(s2sad.hvp(f)(x, v), np.tensordot(want, v, axes=2), rtol=1e-5, atol=1e-6)


def concatenated_parts(x):
    return np.concatenate([x[:1] * 0.5 + 1.0, x[1:] ** 2, np.sin(x[::2])])


def split_parts(x):
    a, b = np.split(x, [2])
    return np.concatenate([a * b[0], b ** 3])


@pytest.mark.parametrize("f", [concatenated_parts, split_parts], ids=lambda f: f.__name__)
def test_jacobians_of_parts_of_other_sizes(f):
    """jacrev of np.concatenate: its VJP splits the cotangent into parts of other sizes, one
    direction at a time, and stacking the lists of parts failed (ValueError)."""
    x = _point(f.__name__, (5,))
    want = numerical_jacobian(f, (x,), (0,))[0].reshape(f(x).shape + x.shape)
    assert_close(s2sad.jacrev(f)(x), want, rtol=1e-6, atol=1e-8)
    assert_close(s2sad.jacfwd(f)(x), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_diff_of_every_order_against_finite_differences(n, axis):
    x = _point(f"diff{n}{axis}", (5, 6))

    def f(y):
        return np.sum(np.cos(np.diff(y, n, axis)))

    g = s2sad.grad(f)(x)
    assert_close(g, numerical_jacobian(f, (x,), (0,))[0].reshape(x.shape), rtol=1e-6,
                 atol=1e-8)
