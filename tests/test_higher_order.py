"""jacfwd, jacrev, hessian, hvp and nested transformations against finite differences."""

import numpy as np
import pytest

import s2sad
from tests import higher_order_programs as P

RNG = np.random.default_rng(7)


def num_jacobian(f, args, i, eps=1e-6):
    """Central-difference Jacobian of f (a tuple output gives a tuple) wrt args[i]."""
    x = np.asarray(args[i], dtype=float)
    out0 = f(*args)
    outs = out0 if isinstance(out0, tuple) else (out0,)
    cols = [np.zeros(np.shape(o) + x.shape) for o in outs]
    for idx in np.ndindex(x.shape if x.shape else ()):
        e = np.zeros(x.shape)
        e[idx] = eps
        a_p, a_m = list(args), list(args)
        a_p[i] = x + e if x.shape else float(x) + eps
        a_m[i] = x - e if x.shape else float(x) - eps
        fp, fm = f(*a_p), f(*a_m)
        fp = fp if isinstance(fp, tuple) else (fp,)
        fm = fm if isinstance(fm, tuple) else (fm,)
        for c, p, m in zip(cols, fp, fm):
            d = (np.asarray(p) - np.asarray(m)) / (2 * eps)
            c[(...,) + tuple(idx)] = d
    cols = [c if c.shape else float(c) for c in cols]
    return tuple(cols) if isinstance(out0, tuple) else cols[0]


def num_grad(f, args, i, eps=1e-6):
    return num_jacobian(f, args, i, eps)


def num_hessian(f, args, i, eps=1e-4):
    """Central differences of central differences (second order)."""
    return num_jacobian(lambda *a: num_grad(f, a, i, 1e-5), args, i, eps)


def close(a, b, rtol=1e-5, atol=1e-7):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y, rtol, atol)
        return
    assert np.shape(a) == np.shape(b), (np.shape(a), np.shape(b))
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


VEC = [
    (P.elementwise_matmul, lambda: (RNG.standard_normal(3), RNG.standard_normal((3, 3))), 0),
    (P.elementwise_matmul, lambda: (RNG.standard_normal(3), RNG.standard_normal((3, 3))), 1),
    (P.seed_vector, lambda: (RNG.standard_normal(2),), 0),
    (P.two_outputs, lambda: (RNG.standard_normal(3), 0.7), 0),
    (P.two_outputs, lambda: (RNG.standard_normal(3), 0.7), 1),
    (P.loop_map, lambda: (RNG.standard_normal(4),), 0),
    (P.branch_map, lambda: (RNG.uniform(0.1, 1.0, 3),), 0),
    (P.branch_map, lambda: (-RNG.uniform(0.1, 1.0, 3),), 0),
    (P.reduction_axis, lambda: (RNG.standard_normal((2, 3)),), 0),
    (P.scalar_loop, lambda: (0.6,), 0),
    (P.scalar_poly, lambda: (0.9,), 0),
]
VEC_IDS = [f"{f.__name__}-wrt{w}" for f, _, w in VEC]


@pytest.mark.parametrize("f,make,wrt", VEC, ids=VEC_IDS)
def test_jacfwd_matches_finite_differences(f, make, wrt):
    args = make()
    close(s2sad.jacfwd(f, wrt=wrt)(*args), num_jacobian(f, args, wrt))


@pytest.mark.parametrize("f,make,wrt", VEC, ids=VEC_IDS)
def test_jacrev_matches_finite_differences(f, make, wrt):
    args = make()
    close(s2sad.jacrev(f, wrt=wrt)(*args), num_jacobian(f, args, wrt))


def test_jacobian_blocks_for_tuple_wrt():
    x, W = RNG.standard_normal(3), RNG.standard_normal((3, 3))
    Jx, JW = s2sad.jacfwd(P.elementwise_matmul, wrt=(0, 1))(x, W)
    close(Jx, num_jacobian(P.elementwise_matmul, (x, W), 0))
    close(JW, num_jacobian(P.elementwise_matmul, (x, W), 1))
    Rx, RW = s2sad.jacrev(P.elementwise_matmul, wrt=(0, 1))(x, W)
    close(Rx, Jx, 1e-12, 1e-12)
    close(RW, JW, 1e-12, 1e-12)


def test_seed_jacobian_is_the_textbook_value():
    J = s2sad.jacfwd(P.seed_vector)(np.array([2.0, 3.0]))
    expected = np.array([[1.0, 1.0], [3.0, 2.0], [np.cos(2.0), 0.0]])
    np.testing.assert_allclose(J, expected, rtol=0, atol=1e-15)


SCALAR = [
    (P.scalar_poly, lambda: (0.9,), 0),
    (P.scalar_loop, lambda: (0.6,), 0),
    (P.scalar_while, lambda: (2.3,), 0),
    (P.rosenbrock, lambda: (RNG.uniform(-1, 1, 5),), 0),
    (P.softmax_xent, lambda: (RNG.standard_normal(4), np.eye(4)[1]), 0),
    (P.quad_form, lambda: (RNG.standard_normal(3), RNG.standard_normal((3, 3))), 0),
    (P.loop_energy, lambda: (np.array([0.1, 0.5, 0.3, 0.9, 0.2]),), 0),
    (P.two_args_scalar, lambda: (RNG.standard_normal(3), 0.8), 0),
    (P.two_args_scalar, lambda: (RNG.standard_normal(3), 0.8), 1),
    (P.mlp_scalar, lambda: (RNG.standard_normal((3, 2)), RNG.standard_normal((4, 3))), 0),
]
SCALAR_IDS = [f"{f.__name__}-wrt{w}" for f, _, w in SCALAR]


@pytest.mark.parametrize("f,make,wrt", SCALAR, ids=SCALAR_IDS)
def test_hessian_matches_second_differences(f, make, wrt):
    args = make()
    H = s2sad.hessian(f, wrt=wrt)(*args)
    expected = num_hessian(f, args, wrt)
    # second differences carry roundoff of about 1e-8 of the largest entry
    close(H, expected, rtol=1e-4, atol=1e-5 + 1e-7 * np.max(np.abs(expected)))


@pytest.mark.parametrize("f,make,wrt", SCALAR, ids=SCALAR_IDS)
def test_hvp_matches_hessian_times_vector(f, make, wrt):
    args = make()
    v = RNG.standard_normal(np.shape(args[wrt])) if np.shape(args[wrt]) else 0.37
    hv = s2sad.hvp(f, wrt=wrt)(*args, v)
    H = num_hessian(f, args, wrt)
    n = np.size(args[wrt])
    expected = np.reshape(np.reshape(H, (n, n)) @ np.ravel(v), np.shape(args[wrt]))
    close(hv, expected if np.shape(expected) else float(expected), rtol=1e-4,
          atol=1e-5 + 1e-7 * np.max(np.abs(H)) * n)


@pytest.mark.parametrize("f,make,wrt", SCALAR, ids=SCALAR_IDS)
def test_grad_and_hvp_match_differences(f, make, wrt):
    args = make()
    v = RNG.standard_normal(np.shape(args[wrt])) if np.shape(args[wrt]) else 0.37
    g, hv = s2sad.grad_and_hvp(f, wrt=wrt)(*args, v)
    close(g, num_grad(f, args, wrt), rtol=1e-5, atol=1e-6)
    H = num_hessian(f, args, wrt)
    n = np.size(args[wrt])
    expected = np.reshape(np.reshape(H, (n, n)) @ np.ravel(v), np.shape(args[wrt]))
    close(hv, expected if np.shape(expected) else float(expected), rtol=1e-4,
          atol=1e-5 + 1e-7 * np.max(np.abs(H)) * n)


def test_grad_and_hvp_as_a_decorator_and_of_two_arguments():
    def f(x, s):
        return s * np.sum(np.sin(x) * x) + s * s

    both = s2sad.grad_and_hvp(wrt=(0, 1))(f)

    x, s, v, w = RNG.standard_normal(3), 0.6, RNG.standard_normal(3), 0.4
    (gx, gs), (hx, hs) = both(x, s, v, w)
    close(gx, num_grad(f, (x, s), 0), rtol=1e-5, atol=1e-7)
    close(gs, num_grad(f, (x, s), 1), rtol=1e-5, atol=1e-7)
    # the Hessian-vector product, analytically: d2f/dx2 = s (2 cos x - x sin x) (diagonal),
    # d2f/dx ds = x cos x + sin x, d2f/ds2 = 2
    mixed = x * np.cos(x) + np.sin(x)
    close(hx, s * (2 * np.cos(x) - x * np.sin(x)) * v + mixed * w, rtol=1e-12, atol=1e-12)
    close(hs, float(np.sum(mixed * v) + 2 * w), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", [P.scalar_poly, P.scalar_loop, P.scalar_while],
                         ids=lambda f: f.__name__)
def test_grad_of_grad_and_jvp_of_grad(f):
    x = 0.83
    d2 = num_hessian(f, (x,), 0)
    assert s2sad.grad(s2sad.grad(f))(x) == pytest.approx(d2, rel=1e-5)
    g, d2_fwd = s2sad.jvp(s2sad.grad(f))(x, 1.0)
    assert d2_fwd == pytest.approx(d2, rel=1e-5)
    assert g == pytest.approx(num_grad(f, (x,), 0), rel=1e-6)


def test_hessian_of_the_seed_example_vector_function_components():
    # f(x) = x0 * x1 (the second component of the seed example): H = [[0, 1], [1, 0]]
    H = s2sad.hessian(lambda_free_product)(np.array([2.0, 3.0]))
    np.testing.assert_allclose(H, [[0.0, 1.0], [1.0, 0.0]], atol=1e-15)


def lambda_free_product(x):
    return x[0] * x[1]


def test_hessian_source_is_readable_python():
    src = s2sad.hessian(P.rosenbrock).source_for(np.ones(4))
    compile(src, "<hessian>", "exec")
    assert "def rosenbrock_grad_jacfwd(x):" in src


def test_grad_of_a_function_calling_a_transformed_helper():
    P.grad_of_poly = s2sad.grad(P.poly)
    x = 0.7
    # uses_grad_helper(x) = (3x^2 + 2)^2 + x, derivative 2 (3x^2 + 2) 6x + 1
    expected = 2 * (3 * x * x + 2) * 6 * x + 1
    assert s2sad.grad(P.uses_grad_helper)(x) == pytest.approx(expected, rel=1e-12)
    _, d = s2sad.jvp(P.uses_grad_helper)(x, 1.0)
    assert d == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("f", [P.linear_comprehension, P.comprehension_plus_cubes,
                               P.cubes_by_comprehension, P.rows_of_products],
                         ids=lambda f: f.__name__)
def test_reverse_over_reverse_of_a_list_grown_in_a_loop(f):
    # the gradient's reverse loop reads a tape of the growing list; where that loop gets no
    # cotangent (a constant gradient) its reverse was left out, but the reverse of the
    # tape's pushes still popped a cotangent tape nothing had pushed onto: IndexError.
    # rows_of_products: the zero cotangent of a taped (list, shape) pair whose list has a
    # length known only at run time was made as zeros_like(None): an internal AttributeError
    x, v = RNG.standard_normal(4), RNG.standard_normal(4)
    H = num_hessian(f, (x,), 0)
    _, pullback = s2sad.vjp(s2sad.grad(f))(x)
    close(pullback(v)[0], H @ v, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", [P.linear_comprehension, P.comprehension_plus_cubes,
                               P.cubes_by_comprehension, P.rows_of_products],
                         ids=lambda f: f.__name__)
def test_forward_over_reverse_of_a_list_grown_in_a_loop(f):
    # the tangent of the gradient's reverse loop carries the tangent of the list's
    # cotangent, zero from the start (the seed's tangent) and of a length known only at run
    # time: the simplifier could not build it and refused hvp/hessian with
    # UnknownShapeError. It stays zero through the loop, so the loop no longer carries it.
    x, v = RNG.standard_normal(4), RNG.standard_normal(4)
    H = num_hessian(f, (x,), 0)
    # (second differences of a linear function's gradient are noise of about 1e-6)
    close(s2sad.hvp(f)(x, v), H @ v, rtol=1e-5, atol=1e-5)
    close(s2sad.hessian(f)(x), H, rtol=1e-5, atol=1e-5)
    _, hv = s2sad.jvp(s2sad.grad(f))(x, v)
    close(hv, H @ v, rtol=1e-5, atol=1e-5)


def test_a_zero_of_unknown_shape_in_specialised_code_is_refused_honestly(monkeypatch):
    # where the simplifier cannot drop such a zero (here: told not to try), the refusal of
    # code specialised on the arguments no longer says to "call the derivative" (it was
    # called): it says that this is a limitation, and what to do instead
    from s2sad.errors import UnknownShapeError
    from s2sad.passes.simplify import Simplifier

    monkeypatch.setattr(Simplifier, "assume_zero", lambda self, ps, inits, sub: [])
    with pytest.raises(UnknownShapeError) as info:
        s2sad.hvp(P.comprehension_plus_cubes)(RNG.standard_normal(3), np.ones(3))
    e = info.value
    assert "call the derivative" not in e.hint and "s2sad.vjp(s2sad.grad(f))" in e.hint
    assert "comprehension_plus_cubes" in e.source_line


def sum_of_squares_by_comprehension(x):
    return np.sum([item * item for item in x])


def mean_by_comprehension(x):
    return np.mean([item * np.sin(item) for item in x])


def squares_by_comprehension(x):
    return np.array([item * item for item in x])


@pytest.mark.parametrize("f", [sum_of_squares_by_comprehension, mean_by_comprehension],
                         ids=lambda f: f.__name__)
def test_jacobians_of_a_reduced_comprehension(f):
    # the list's kind (a length known at run time) gave no shape for np.sum of it: jacfwd,
    # jacrev and hessian were refused with WrtError, "needs the shape of the output". A
    # reduction of every entry is a number whatever its operand
    x = RNG.standard_normal(4)
    J, H = num_jacobian(f, (x,), 0), num_hessian(f, (x,), 0)
    close(s2sad.jacfwd(f)(x), J, rtol=1e-6, atol=1e-8)
    close(s2sad.jacrev(f)(x), J, rtol=1e-6, atol=1e-8)
    close(s2sad.hessian(f)(x), H, rtol=1e-5, atol=1e-5)


def test_jacobian_of_an_output_of_unknown_shape_is_refused_as_such():
    # an array built from a list grown in a loop has a shape known only at run time: the
    # refusal is about that shape (UnknownShapeError), not about `wrt` (it was WrtError)
    from s2sad.errors import UnknownShapeError, WrtError

    for transform in (s2sad.jacfwd, s2sad.jacrev):
        with pytest.raises(UnknownShapeError) as info:
            transform(squares_by_comprehension)(RNG.standard_normal(3))
        assert not isinstance(info.value, WrtError)
        assert "output of squares_by_comprehension" in info.value.message
        assert "squares_by_comprehension" in info.value.source_line
