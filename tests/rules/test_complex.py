"""Complex numbers in JAX's convention (issue #13, item 3).

The JVP of f at z is the real-linear map dz -> J dz (complex tangents, finite differences
along complex directions, so both the real and the imaginary direction of an input count).
The VJP is its transpose under the bilinear pairing Re(sum(u * v)), not its adjoint: for
dz -> a dz + b conj(dz) the VJP is g -> a g + conj(b g). So the gradient of a real-valued L of
z = x + iy is dL/dx - i dL/dy (grad(|z|**2)(3+4j) == 6-8j), and the cotangent of a real input
is real.

Every oracle here is independent of s2sad: central finite differences, or a formula.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest
from hypothesis import event, note

import s2sad
from tests.oracle import rng_for
from tests.rules.strategies import COMPLEX_PRIMAL_ONLY_REAL, complex_refused, complexify, known_bug
from tests.rules.test_properties import derivative, given_examples, n_outputs, program, rule_params

EPS = 1e-6
R = np.random.default_rng(2026)  # module-level values (M); each test gets its own stream below


@pytest.fixture(autouse=True)
def _own_stream(request):
    """Each test draws from a stream seeded by its own name, so its inputs do not depend on
    which tests ran before it (or in which order). S2SAD_TEST_SALT draws other inputs
    (a way to shake the file: `S2SAD_TEST_SALT=7 pytest tests/rules/test_complex.py`)."""
    global R
    R = rng_for(request.node.name, os.environ.get("S2SAD_TEST_SALT", ""))


# -- oracles (finite differences; never s2sad's own output) -----------------------------------

def crandn(shape=(), real=False):
    """A random value of `shape`: complex unless `real`."""
    x = R.normal(size=shape)
    if not real:
        x = x + 1j * R.normal(size=shape)
    return x[()] if shape == () else x


def like(x):
    """A random direction in x's space: complex for a complex x, real for a real one."""
    return crandn(np.shape(x), real=not np.iscomplexobj(x))


def as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


def fd_jvp(f, args, dirs, eps=EPS):
    """(f(args + eps dirs) - f(args - eps dirs)) / (2 eps), for every output."""
    plus = f(*[a + eps * d for a, d in zip(args, dirs)])
    minus = f(*[a - eps * d for a, d in zip(args, dirs)])
    if isinstance(plus, tuple):
        return tuple((np.asarray(p) - np.asarray(m)) / (2 * eps) for p, m in zip(plus, minus))
    return (np.asarray(plus) - np.asarray(minus)) / (2 * eps)


def fd_grad(L, args, i, eps=EPS):
    """dL/dx - i dL/dy of real-valued L for argument i (z = x + iy), by central differences on
    x and y separately; dL/dx alone for a real argument."""
    a = np.asarray(args[i])
    out = np.zeros(a.shape, dtype=a.dtype if a.dtype.kind == "c" else float)
    for idx in np.ndindex(a.shape):
        for unit in ((1.0, 1j) if a.dtype.kind == "c" else (1.0,)):
            e = np.zeros(a.shape, dtype=a.dtype)
            e[idx] = unit * eps
            p, m = list(args), list(args)
            p[i] = (a + e)[()] if a.shape == () else a + e
            m[i] = (a - e)[()] if a.shape == () else a - e
            d = (float(L(*p)) - float(L(*m))) / (2 * eps)
            out[idx] += d if unit == 1.0 else -1j * d
    return out[()] if a.shape == () else out


def pairing(u, v):
    """Re(sum(u * v)), summed over tuples: the bilinear pairing of JAX's convention."""
    return sum(float(np.real(np.sum(np.asarray(a) * np.asarray(b))))
               for a, b in zip(as_tuple(u), as_tuple(v)))


def close(a, b, rtol=1e-5, atol=1e-6):
    for x, y in zip(as_tuple(a), as_tuple(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def check_jvp(f, args):
    """JVP against finite differences along a random complex direction (so real and imaginary
    parts of every input move), and along the purely imaginary one."""
    for dirs in ([like(a) for a in args],
                 [1j * np.ones_like(a) if np.iscomplexobj(a) else np.zeros_like(a)
                  for a in args]):
        out, t = s2sad.jvp(f)(*args, *dirs)
        close(t, fd_jvp(f, args, dirs))
        for o, ti in zip(as_tuple(out), as_tuple(t)):  # a real output has a real tangent
            if not np.iscomplexobj(o):
                assert not np.iscomplexobj(ti), (o, ti)


def check_vjp(f, args):
    """The dot-product test Re sum(u (J v)) == Re sum((J^T u) v), with J v by finite
    differences, and each cotangent in its argument's space (real for a real argument)."""
    dirs = [like(a) for a in args]
    jv = fd_jvp(f, args, dirs)
    out, pullback = s2sad.vjp(f)(*args)
    u = tuple(like(o) for o in as_tuple(out))
    cot = pullback(u if isinstance(out, tuple) else u[0])
    assert pairing(u, jv) == pytest.approx(pairing(cot, tuple(dirs)), rel=1e-5, abs=1e-6)
    for a, c in zip(args, cot):
        assert np.shape(c) == np.shape(a)
        if not np.iscomplexobj(a):
            assert not np.iscomplexobj(c), (a, c)


def check_grad(L, args):
    """grad of real-valued L against dL/dx - i dL/dy for every argument."""
    wrt = tuple(range(len(args)))
    g = s2sad.grad(L, wrt=wrt)(*args)
    for i in wrt:
        close(g[i], fd_grad(L, args, i))
        assert np.iscomplexobj(g[i]) == np.iscomplexobj(args[i])


def check_all(f, args):
    check_jvp(f, args)
    check_vjp(f, args)


# -- the convention, on the textbook examples --------------------------------------------------

def abs_squared(z): return np.abs(z) ** 2
def modulus(z): return np.abs(z)


def test_gradient_of_a_real_function_is_d_dx_minus_i_d_dy():
    assert s2sad.grad(abs_squared)(3 + 4j) == pytest.approx(6 - 8j)
    assert s2sad.grad(modulus)(3 + 4j) == pytest.approx((3 - 4j) / 5)
    z = np.array([3 + 4j, -1 + 2j])
    np.testing.assert_allclose(s2sad.grad(sum_abs_squared)(z), 2 * np.conj(z))
    np.testing.assert_allclose(s2sad.grad(sum_abs_squared)(z), fd_grad(sum_abs_squared, [z], 0))


def sum_abs_squared(z): return np.sum(np.abs(z) ** 2)
def cube(z): return z ** 3


def test_holomorphic_vjp_is_the_plain_derivative_times_g():
    # no conjugate: the VJP of a holomorphic f is f'(z) g
    z, g = 0.3 - 0.7j, 0.2 + 1.1j
    _, pullback = s2sad.vjp(cube)(z)
    assert pullback(g)[0] == pytest.approx(3 * z ** 2 * g)
    _, t = s2sad.jvp(cube)(z, g)
    assert t == pytest.approx(3 * z ** 2 * g)


def test_conj_vjp_conjugates_and_real_imag_follow_jax():
    z, g = 0.3 - 0.7j, 0.2 + 1.1j
    assert s2sad.vjp(np.conj)(z)[1](g)[0] == pytest.approx(np.conj(g))
    assert s2sad.vjp(np.real)(z)[1](2.0)[0] == pytest.approx(2.0)
    assert s2sad.vjp(np.imag)(z)[1](2.0)[0] == pytest.approx(-2.0j)


# -- holomorphic and non-holomorphic functions, against finite differences ---------------------

M = crandn((3, 3))


def h_cube(z): return z ** 3
def h_exp(z): return np.exp(z)
def h_sin(z): return np.sin(z)
def h_log(z): return np.log(z)
def h_matmul(z): return z @ M
def h_inv(z): return np.linalg.inv(z + 3.0 * np.eye(3))
def h_det(z): return np.linalg.det(z + 3.0 * np.eye(3))
def h_solve(z): return np.linalg.solve(z + 3.0 * np.eye(3), M)
def h_matrix_power(z): return np.linalg.matrix_power(z, 3)
def n_slogdet(z): return np.linalg.slogdet(z + 3.0 * np.eye(3))
def n_slogdet_sign(z): return np.linalg.slogdet(z + 3.0 * np.eye(3))[0]
def h_poly(z): return 1.0 + 2.0 * z - z * z / (z + 4.0)
def h_sqrt(z): return np.sqrt(z)
def h_tanh(z): return np.tanh(z)
def h_prod(z): return np.prod(z, axis=0)
def h_cumprod(z): return np.cumprod(z)
def h_einsum(z): return np.einsum("ij,jk->ik", z, M)
def h_fft(z): return np.fft.fft2(z)
def n_abs(z): return np.abs(z)
def n_abs2(z): return np.abs(z) ** 2
def n_real(z): return np.real(z)
def n_imag(z): return np.imag(z)
def n_conj(z): return np.conj(z)
def n_angle(z): return np.angle(z)
def n_angle_deg(z): return np.angle(z, deg=True)
def n_vdot(z): return np.vdot(z, M)
def n_vdot2(z): return np.vdot(M, z)
def n_vecdot(z): return np.vecdot(z, M)
def n_var(z): return np.var(z, axis=0)
def n_std(z): return np.std(z)
def n_attrs(z): return z.real * z.imag + z.T.conj()
def n_norm(z): return np.linalg.norm(z)
def n_norm_axis(z): return np.linalg.norm(z, axis=0)
def n_norm_1(z): return np.linalg.norm(z, 1, axis=1)
def n_norm_inf(z): return np.linalg.norm(z[0], np.inf)
def n_norm_3(z): return np.linalg.vector_norm(z, ord=3, axis=-1)
def n_norm_fro(z): return np.linalg.norm(z, "fro")
def n_norm_nuc(z): return np.linalg.norm(z, "nuc")
def n_norm_spectral(z): return np.linalg.norm(z, 2)
def n_norm_matrix_1(z): return np.linalg.norm(z, 1)
def n_mixed(z): return z * np.conj(z) + np.abs(z) * z


HOLOMORPHIC = [h_cube, h_exp, h_sin, h_log, h_matmul, h_inv, h_det, h_solve, h_matrix_power,
               h_poly, h_sqrt, h_tanh, h_prod, h_cumprod, h_einsum, h_fft]
NON_HOLOMORPHIC = [n_abs, n_abs2, n_real, n_imag, n_conj, n_angle, n_angle_deg, n_vdot,
                   n_vdot2, n_vecdot, n_var, n_std, n_attrs, n_mixed, n_norm, n_norm_axis,
                   n_norm_1, n_norm_inf, n_norm_3, n_norm_fro, n_norm_nuc, n_norm_spectral,
                   n_norm_matrix_1, n_slogdet, n_slogdet_sign]


@pytest.mark.parametrize("f", HOLOMORPHIC + NON_HOLOMORPHIC, ids=lambda f: f.__name__)
def test_jvp_and_vjp_against_finite_differences(f):
    check_all(f, [crandn((3, 3))])


# -- gradients of real-valued functions of complex arguments -----------------------------------

def L_abs_sum(z): return np.sum(np.abs(z))
def L_norm2(z): return np.real(np.vdot(z, z))
def L_var(z): return np.var(z)
def L_std(z): return np.std(z)
def L_angle(z): return np.sum(np.angle(z) ** 2)
def L_real_exp(z): return np.sum(np.real(np.exp(z)))
def L_imag_log(z): return np.sum(np.imag(np.log(z)) * np.arange(3.0))
def L_quadratic(z): return np.real(np.conj(z) @ M @ z)
def L_inv(z): return np.abs(np.sum(np.linalg.inv(np.diag(z) + M)))
def L_fft(z): return np.sum(np.abs(np.fft.fft(z)) ** 2)
def L_norm(z): return np.linalg.norm(z) + np.linalg.norm(z, 1)
def L_mixed(x, z): return np.sum(np.abs(x * z + np.exp(1j * x)) ** 2)
def L_mixed_products(x, z): return np.abs(np.dot(x, z) + np.inner(z, x) + np.vdot(x, z))
def L_real_solve(x, z): return np.sum(np.abs(np.linalg.solve(np.diag(x) + 3.0 * np.eye(3), z)))
def L_real_power(x, z): return np.sum(np.abs(np.abs(x) ** z + z ** x))


def L_loop(z):
    s = 0.0 * z
    for i in range(3):
        s = s * z + np.conj(z) / (i + 1.0)
    return np.sum(np.abs(s) ** 2)


def L_while(z):
    w = z
    k = 0
    while k < 3:
        w = np.sin(w) + 0.5 * np.conj(w)
        k += 1
    return np.sum(np.real(w) * np.imag(w))


def L_if(z):
    if np.sum(np.real(z)) > 0.0:
        r = np.sum(np.abs(z) ** 3)
    else:
        r = np.sum(np.angle(z))
    return r


def L_real_loop(x, z):
    s = x  # real on entry, complex after the first iteration
    for _ in range(3):
        s = s * z + np.sin(s)
    return np.sum(np.abs(s))


ONE_ARG = [L_abs_sum, L_norm2, L_var, L_std, L_angle, L_real_exp, L_imag_log, L_quadratic,
           L_inv, L_fft, L_norm, L_loop, L_while, L_if]
TWO_ARGS = [L_mixed, L_mixed_products, L_real_solve, L_real_power, L_real_loop]
# A loop compounds growth (complex sin grows like e^|Im z| at every iteration): inputs of
# modulus about 0.5 keep three iterations finite, where differences can resolve them.
SCALE = {L_loop: 0.5, L_while: 0.5, L_real_loop: 0.5}


@pytest.mark.parametrize("L", ONE_ARG, ids=lambda f: f.__name__)
def test_grad_of_real_valued_functions(L):
    scale = SCALE.get(L, 1.0)
    for z in (scale * crandn(3), -scale * crandn(3)):  # (L_if takes both branches)
        check_grad(L, [z])
        check_vjp(L, [z])
        check_jvp(L, [z])


@pytest.mark.parametrize("L", TWO_ARGS, ids=lambda f: f.__name__)
def test_grad_with_real_and_complex_arguments(L):
    x, z = np.abs(crandn(3, real=True)) + 0.5, SCALE.get(L, 1.0) * crandn(3)
    check_grad(L, [x, z])  # the real argument's gradient is real
    check_all(L, [x, z])


def mix(x, z): return x * z + np.exp(1j * x) + np.sin(x) * np.conj(z)


def test_cotangent_of_a_real_argument_is_real():
    x, z = crandn(3, real=True), crandn(3)
    _, pullback = s2sad.vjp(mix)(x, z)
    g = crandn(3)
    x_bar, z_bar = pullback(g)
    assert x_bar.dtype == np.float64 and z_bar.dtype == np.complex128
    check_all(mix, [x, z])
    check_all(mix, [0.7, 0.2 - 0.4j])  # Python scalars
    x_bar, z_bar = s2sad.vjp(mix)(0.7, 0.2 - 0.4j)[1](1.0 + 2.0j)
    assert isinstance(x_bar, float) and isinstance(z_bar, complex)


# -- elementwise, products, reductions, linalg on complex (and mixed) arguments ---------------

def u_sin(z): return np.sin(z)
def u_cos(z): return np.cos(z)
def u_tan(z): return np.tan(z)
def u_arcsin(z): return np.arcsin(z)
def u_arccos(z): return np.arccos(z)
def u_arctan(z): return np.arctan(z)
def u_sinh(z): return np.sinh(z)
def u_cosh(z): return np.cosh(z)
def u_arcsinh(z): return np.arcsinh(z)
def u_arccosh(z): return np.arccosh(z)
def u_arctanh(z): return np.arctanh(z)
def u_exp2(z): return np.exp2(z)
def u_expm1(z): return np.expm1(z)
def u_log2(z): return np.log2(z)
def u_log10(z): return np.log10(z)
def u_log1p(z): return np.log1p(z)
def u_square(z): return np.square(z)
def u_reciprocal(z): return np.reciprocal(z)
def u_sinc(z): return np.sinc(z)
def u_neg(z): return -z
def u_sum(z): return np.sum(z, axis=1)
def u_mean(z): return np.mean(z)
def u_cumsum(z): return np.cumsum(z, axis=0)
def u_trace(z): return np.trace(z)
def u_diff(z): return np.diff(z)
def u_nansum(z): return np.nansum(z)
def u_average(z): return np.average(z, axis=0, weights=np.arange(1.0, 4.0))
def u_shape(z): return np.flip(np.transpose(z), 0)[1:, ::2].ravel()
def u_pad(z): return np.pad(z, 1)
def u_where(z): return np.where(np.real(z) > 0, z, 2.0 * z)


UNARY = [u_sin, u_cos, u_tan, u_arcsin, u_arccos, u_arctan, u_sinh, u_cosh, u_arcsinh,
         u_arccosh, u_arctanh, u_exp2, u_expm1, u_log2, u_log10, u_log1p, u_square,
         u_reciprocal, u_sinc, u_neg, u_sum, u_mean, u_cumsum, u_trace, u_diff, u_nansum,
         u_average, u_shape, u_pad, u_where]


@pytest.mark.parametrize("f", UNARY, ids=lambda f: f.__name__)
def test_unary_on_complex(f):
    check_all(f, [crandn((3, 3))])


def b_add(a, b): return a + b
def b_sub(a, b): return a - b
def b_mul(a, b): return a * b
def b_div(a, b): return a / b
def b_pow(a, b): return a ** b
def b_power(a, b): return np.power(a, b)
def b_float_power(a, b): return np.float_power(a, b)
def b_matmul(a, b): return a @ b
def b_dot(a, b): return np.dot(a, b)
def b_inner(a, b): return np.inner(a, b)
def b_outer(a, b): return np.outer(a, b)
def b_kron(a, b): return np.kron(a, b)
def b_tensordot(a, b): return np.tensordot(a, b, 1)
def b_einsum(a, b): return np.einsum("ij,kj->ik", a, b)
def b_vdot(a, b): return np.vdot(a, b)
def b_vecdot(a, b): return np.vecdot(a, b)
def b_cross(a, b): return np.cross(a, b)
def b_where(a, b): return np.where(np.real(a) > 0, a, b)
def b_concatenate(a, b): return np.concatenate([a, b])
def b_stack(a, b): return np.stack([a, b], axis=1)
def b_array(a, b): return np.array([a[0, 0], b[1, 1]])
def b_solve(a, b): return np.linalg.solve(a + 3.0 * np.eye(3), b)
def b_det(a, b): return np.linalg.det(a + 3.0 * np.eye(3)) * b


def b_setitem(a, b):
    c = b.copy()
    c[0] = a[1]
    return c


BINARY = [b_add, b_sub, b_mul, b_div, b_pow, b_power, b_float_power, b_matmul, b_dot, b_inner,
          b_outer, b_kron, b_tensordot, b_einsum, b_vdot, b_vecdot, b_cross, b_where,
          b_concatenate, b_stack, b_array, b_solve, b_det, b_setitem]


@pytest.mark.parametrize("which", ["complex, complex", "real, complex", "complex, real"])
@pytest.mark.parametrize("f", BINARY, ids=lambda f: f.__name__)
def test_binary_on_complex_and_mixed(f, which):
    a, b = crandn((3, 3)), crandn((3, 3))
    if which.startswith("real"):
        a = np.abs(a.real) + 0.5  # (a positive real base: x ** z is smooth there)
    if which.endswith("real"):
        if f is b_setitem:
            pytest.skip("a complex value assigned into a real array is truncated by NumPy")
        b = b.real.copy()
    check_all(f, [a, b])


# -- modes, precision, seeds, higher order ------------------------------------------------------

def sin_abs(z): return np.sum(np.sin(z) * np.conj(z)).real


def test_complex64_in_complex64_out():
    z = crandn(3).astype(np.complex64)
    g = s2sad.grad(sin_abs)(z)
    assert g.dtype == np.complex64
    np.testing.assert_allclose(g, fd_grad(sin_abs, [z.astype(complex)], 0), rtol=1e-4)
    _, t = s2sad.jvp(h_exp)(z, z)
    assert t.dtype == np.complex64
    assert s2sad.grad(abs_squared)(np.complex64(3 + 4j)) == pytest.approx(6 - 8j)
    assert s2sad.grad(abs_squared)(np.complex64(3 + 4j)).dtype == np.complex64


def test_pullback_seeds():
    z = crandn(2)
    _, pullback = s2sad.vjp(h_exp)(z)
    # a real seed is a complex one with no imaginary part: the cotangent is still complex
    (z_bar,) = pullback(np.array([1.0, 2.0]))
    assert z_bar.dtype == np.complex128
    np.testing.assert_allclose(z_bar, np.exp(z) * [1.0, 2.0])
    np.testing.assert_allclose(pullback(np.array([1.0 + 1j, 2.0]))[0],
                               np.exp(z) * [1.0 + 1j, 2.0])
    (z_bar,) = s2sad.vjp(sum_of_concatenation)(z)[1](1.0)
    assert z_bar.dtype == np.complex128
    _, pullback = s2sad.vjp(modulus)(crandn(2))
    with pytest.raises(ValueError, match="real"):
        pullback(np.array([1.0 + 1j, 2.0]))


def sum_of_concatenation(z): return np.sum(np.concatenate([z, z]))
def nonholomorphic_pair(z, x): return np.sin(z) * np.conj(z) + x * z, np.abs(z) * x


def test_check_grads_takes_complex_arguments():
    # complex directions, and the pairing Re(sum(u * v)) in the dot-product test
    assert s2sad.check_grads(nonholomorphic_pair, (crandn(3), crandn(3, real=True)))
    assert s2sad.check_grads(abs_squared, (1.0 + 2.0j,))


def conjugate_twice(z):
    return wrong_conj(z) * 2.0


def wrong_conj(z):
    return np.conj(z)


@s2sad.defjvp(wrong_conj)
def _wrong_conj_jvp(z, z_dot):
    return np.conj(z_dot)


@s2sad.defvjp(wrong_conj)
def _wrong_conj_vjp(g, z):
    return g  # wrong: the transpose of dz -> conj(dz) is g -> conj(g)


def test_check_grads_catches_a_missing_conjugate():
    with pytest.raises(AssertionError, match="dot-product"):
        s2sad.check_grads(conjugate_twice, (crandn(3),))


def m_prod(z): return math.prod([z, 2.0])
def m_fsum(z): return math.fsum([z, 2.0])


@pytest.mark.parametrize("f", [m_prod, m_fsum], ids=lambda f: f.__name__)
def test_math_on_a_list_of_complex_numbers_is_refused(f):
    with pytest.raises(s2sad.MissingRuleError, match="complex"):
        s2sad.vjp(f)(1.0 + 1j)


def test_grad_refuses_a_complex_output():
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.grad(cube)(1.0 + 1j)
    assert "complex" in str(err.value) and "np.real" in str(err.value)
    assert "vjp" in str(err.value)
    with pytest.raises(s2sad.S2SADError, match="complex"):
        s2sad.grad(phase)(0.5)  # a real argument, a complex output: also refused


def phase(x): return np.exp(1j * x)


def test_jacobians_need_real_inputs_or_outputs_as_in_jax():
    z = crandn(2)
    with pytest.raises(s2sad.S2SADError, match="jacfwd needs real inputs") as err:
        s2sad.jacfwd(h_exp)(z)
    assert "s2sad.jvp" in str(err.value)
    with pytest.raises(s2sad.S2SADError, match="jacrev needs real outputs") as err:
        s2sad.jacrev(h_exp)(z)
    assert "s2sad.vjp" in str(err.value)
    with pytest.raises(s2sad.S2SADError, match="real inputs"):
        s2sad.hessian(L_abs_sum)(z)
    # jacrev of a real function of z: the rows are dL_i/dx - i dL_i/dy
    np.testing.assert_allclose(s2sad.jacrev(n_abs)(z), np.diag(np.conj(z) / np.abs(z)))
    # jacfwd of a complex function of a real x: the columns are df/dx_k
    x = crandn(2, real=True)
    np.testing.assert_allclose(s2sad.jacfwd(phase)(x), np.diag(1j * np.exp(1j * x)))
    # hvp: the JVP of the gradient, a real-linear map of the complex direction v
    v = crandn(2)
    np.testing.assert_allclose(s2sad.hvp(sum_abs_squared)(z, v), 2 * np.conj(v))


def test_second_order():
    # the JVP of the gradient of a real function of z, against finite differences of grad
    z, v = crandn(3), crandn(3)
    dL = s2sad.grad(L_abs_sum)
    _, t = s2sad.jvp(dL)(z, v)
    close(t, fd_jvp(dL, [z], [v]), rtol=1e-4, atol=1e-5)
    # reverse over reverse: the pullback of the gradient, by the dot-product test
    check_vjp(s2sad.grad(L_angle), [z])


# -- refusals: at compile time, naming the rule and complex -------------------------------------

def r_maximum(z): return np.maximum(z, 0.0)
def r_sort(z): return np.sort(z)
def r_max(z): return np.max(z)
def r_clip(z): return np.clip(z, 0.0, 1.0)
def r_cbrt(z): return np.cbrt(z)
def r_fabs(z): return np.fabs(z)
def r_deg2rad(z): return np.deg2rad(z)
def r_mod(z): return z % 2.0
def r_float(z): return float(z[0, 0])
def r_math(z): return math.sin(z[0, 0])
def r_real_if_close(z): return np.real_if_close(z)


REFUSED = {r_maximum: "np.maximum", r_sort: "np.sort", r_max: "np.max", r_clip: "np.clip",
           r_cbrt: "np.cbrt", r_fabs: "np.fabs", r_deg2rad: "deg2rad", r_mod: "mod", r_float: "float", r_math: "math.sin",
           r_real_if_close: "real_if_close"}


@pytest.mark.parametrize("mode", ["jvp", "vjp"])
@pytest.mark.parametrize("f", list(REFUSED), ids=lambda f: f.__name__)
def test_rules_for_real_numbers_refuse_complex_at_compile_time(f, mode):
    z = crandn((3, 3))
    with pytest.raises(s2sad.S2SADError) as err:
        if mode == "jvp":
            s2sad.jvp(f)(z, z)
        else:
            s2sad.vjp(f)(z)
    # refused while compiling (by the rule's check), not when the derivative runs
    assert any(entry.path.name == "transform.py" for entry in err.traceback)
    assert type(err.value).__name__ == "MissingRuleError"
    assert REFUSED[f] in str(err.value) and "complex" in str(err.value)
    assert err.value.lineno is not None


# -- the property suite on complex examples (one per rule: tests/rules/strategies.py) ----------

def _complex_first_order(rule, ex, seed):
    """A drawn example with complex arguments: a rule that takes them passes the JVP against
    finite differences along complex directions and the bilinear dot-product test; one that
    refuses them raises MissingRuleError naming complex, while compiling."""
    if ex.refused or ex.vjp_refused or known_bug(rule, ex):
        return
    rng = np.random.default_rng(seed)
    cex = complexify(ex, rng)
    if not any(np.iscomplexobj(a) for a in cex.args):
        event("no float argument to make complex")
        return
    note(cex.source)
    wrt = cex.wrt
    if complex_refused(rule):  # refused while compiling (NumPy may not even evaluate it)
        f = program(cex, None).f
        for kind in ("jvp", "vjp"):
            with pytest.raises(s2sad.MissingRuleError, match="complex"):
                d = s2sad.jvp(f, wrt=wrt) if kind == "jvp" else s2sad.vjp(f, wrt=wrt)
                _ = d(*cex.args, *[cex.args[i] for i in wrt]) if kind == "jvp" else \
                    d(*cex.args)
        return
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            expected = program(cex, None).f(*cex.args)
    except (TypeError, ValueError, np.exceptions.ComplexWarning, np.linalg.LinAlgError):
        event("NumPy does not evaluate this example on complex values")
        return
    f = program(cex, n_outputs(expected)).f
    if rule in COMPLEX_PRIMAL_ONLY_REAL:
        return
    v = [like(cex.args[i]) for i in wrt]

    def at(h):
        args = list(cex.args)
        for i, t in zip(wrt, v):
            args[i] = args[i] + h * t
        with np.errstate(all="ignore"):
            return [np.asarray(o) for o in as_tuple(f(*args))]

    central = [(p - m) / (2 * EPS) for p, m in zip(at(EPS), at(-EPS))]
    wide = [(p - m) / (4 * EPS) for p, m in zip(at(2 * EPS), at(-2 * EPS))]
    out, out_dot = derivative("jvp", f, wrt)(*cex.args, *v)
    if not all(np.all(np.isfinite(c)) and np.allclose(c, w, rtol=1e-4, atol=1e-6)
               for c, w in zip(central, wide)):
        event("not smooth at the drawn point: finite differences skipped")
    else:
        for t, c in zip(as_tuple(out_dot), central):
            np.testing.assert_allclose(np.asarray(t), c, rtol=1e-4,
                                       atol=1e-6 * (1 + np.max(np.abs(c), initial=0.0)))
    for o, t in zip(as_tuple(out), as_tuple(out_dot)):  # a real output has a real tangent
        assert np.iscomplexobj(t) <= np.iscomplexobj(o), (o, t)
    _, pullback = derivative("vjp", f, wrt)(*cex.args)
    u = tuple(like(np.asarray(o)) for o in as_tuple(out))
    cot = pullback(u if isinstance(out, tuple) else (u[0] if np.ndim(out) else
                                                      np.asarray(u[0])[()]))
    for i, c in zip(wrt, cot):
        assert np.shape(c) == np.shape(cex.args[i])
        assert np.iscomplexobj(c) <= np.iscomplexobj(cex.args[i])
    lhs, rhs = pairing(u, out_dot), pairing(cot, tuple(v))
    scale = 1e-9 + sum(float(np.sum(np.abs(np.asarray(a) * np.asarray(b))))
                       for a, b in zip(u, as_tuple(out_dot)))
    assert abs(lhs - rhs) <= 1e-8 * scale + 1e-12, (lhs, rhs)


@pytest.mark.parametrize("rule", rule_params())
def test_rule_on_complex_examples(rule):
    given_examples(rule)(lambda ex, seed: _complex_first_order(rule, ex, seed))()


# -- second order through complex values (found while adding the complex factorisations) --

def _cube_of_first_column(z):
    return np.sum(np.abs(z[:, 0]) ** 3)


def _logabsdet(z):
    return np.linalg.slogdet(z)[1]


def _jvp_inside(z, t):
    return s2sad.jvp(_logabsdet)(z, t)[1]


def test_jvp_of_a_gradient_keeps_imaginary_parts_written_into_an_array():
    # the tangent of the cotangent was written into real zeros (a ComplexWarning)
    rng = np.random.default_rng(7)
    z = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    v = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    g = s2sad.grad(_cube_of_first_column)
    h = 1e-6
    fd = (g(z + h * v) - g(z - h * v)) / (2 * h)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = s2sad.jvp(g)(z, v)[1]
    assert np.allclose(out, fd, rtol=1e-5, atol=1e-6)


def test_a_derivative_inlined_into_another_sees_its_complex_arguments():
    # a JVP's generic code, inlined where the kinds are not known yet, decided `is_complex`
    # as False: the VJP of a function calling s2sad.jvp returned a wrong primal value
    rng = np.random.default_rng(8)
    z = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    t = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    out, _ = s2sad.vjp(_jvp_inside)(z, t)
    assert np.isclose(out, _jvp_inside(z, t))
