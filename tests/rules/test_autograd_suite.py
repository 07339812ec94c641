"""What autograd's per-area test files differentiate (test_linalg, test_binary_ops,
test_scalar_ops, test_fft, test_scipy), re-expressed for s2sad: each function at seeded random
float64 points away from kinks (well-conditioned or symmetric positive definite matrices where
autograd builds them), the JVP and the VJP against central finite differences and against each
other (dot-product test, check_both_modes), second order (hvp and hessian against
Richardson-extrapolated finite differences of a numerical gradient) for a representative
subset, Jacobians (jacfwd, jacrev) where vector mode had bugs, autograd's complex variants in
JAX's convention, and a MissingRuleError at the user's line for what s2sad does not
differentiate (scipy.stats distributions other than norm, scipy.signal, most of scipy.linalg,
scipy.integrate).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jacobian, rng_for
from tests.rules.test_issue13_regressions import check_both_modes

R = np.random.default_rng(2011)


def spd(n, rng=R):
    """A symmetric positive definite n x n matrix, as autograd's rand_psd plus a shift."""
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


def symmetrize(a):
    """The symmetric matrix whose lower triangle is a's (autograd's symmetrize): functions of a
    symmetric matrix are differentiated along symmetric perturbations."""
    low = np.tril(a)
    return (low + np.swapaxes(low, -1, -2)) / 2.0


def richardson_grad(f, args, wrt, eps=1e-4):
    """The central-difference gradient with Richardson extrapolation (error O(eps^4))."""
    fine = numerical_grad(f, args, (wrt,), eps=eps)[0]
    coarse = numerical_grad(f, args, (wrt,), eps=2.0 * eps)[0]
    return (4.0 * np.asarray(fine) - np.asarray(coarse)) / 3.0


def numerical_hvp(f, args, wrt, v, eps=1e-3):
    """H v as the Richardson-extrapolated central difference, along v, of a numerical
    gradient: independent of s2sad, accurate to about 1e-8 relative for these functions."""
    def g(h):
        moved = list(args)
        moved[wrt] = args[wrt] + h * v
        return richardson_grad(f, moved, wrt)

    fine = (g(eps) - g(-eps)) / (2.0 * eps)
    coarse = (g(2.0 * eps) - g(-2.0 * eps)) / (4.0 * eps)
    return (4.0 * fine - coarse) / 3.0


def check_second_order(f, args, wrt=0, rtol=1e-5, atol=1e-6):
    """s2sad.hvp along a random direction against finite differences of a numerical gradient,
    and s2sad.hessian applied to the same direction."""
    rng = rng_for(f.__name__, "hvp")
    x = args[wrt]
    v = rng.standard_normal(np.shape(x)) if isinstance(x, np.ndarray) else float(rng.normal())
    expected = numerical_hvp(f, args, wrt, v)
    got = s2sad.hvp(f, wrt=wrt)(*args, v)
    assert_close(got, expected, rtol=rtol, atol=atol, what="hvp", check_kind=False)
    h = np.asarray(s2sad.hessian(f, wrt=wrt)(*args))
    n = int(np.size(x))
    applied = h.reshape(n, n) @ np.ravel(v)
    assert_close(applied, np.ravel(expected), rtol=rtol, atol=atol, what="hessian @ v")


# -- numpy.linalg (autograd's test_linalg.py) --------------------------------------------------

def inv(a): return np.linalg.inv(a)
def pinv(a): return np.linalg.pinv(a)
def pinv_low_rank(x): return np.linalg.pinv(np.swapaxes(x, -1, -2) @ x)
def solve(a, b): return np.linalg.solve(a, b)
def solve_stacked_vector(a, b): return np.linalg.solve(a, b[..., None])[..., 0]
def det(a): return np.linalg.det(a)
def logdet(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return logabsdet
def slogdet_sum(a): return np.sum(np.linalg.slogdet(a)[1])
def signed_det(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return sign * np.exp(logabsdet)
def norm(x): return np.linalg.norm(x)
def norm_axes01(x): return np.linalg.norm(x, axis=(0, 1))
def nuclear_norm(x): return np.linalg.norm(x, ord="nuc")
def nuclear_norm_axes01(x): return np.linalg.norm(x, ord="nuc", axis=(0, 1))
def norm_of_list(x): return np.linalg.norm([x, x + 2.0])
def norm_of_tuple(x): return np.linalg.norm((x, x + 2.0))
def eigh_lower(a):
    w, v = np.linalg.eigh(symmetrize(a))
    return w, v
def eigh_upper(a):
    w, v = np.linalg.eigh(symmetrize(a), "U")
    return w, v
def eigh_upper_keyword(a):
    w, v = np.linalg.eigh(symmetrize(a), UPLO="U")
    return w, v
def eigvalsh_upper(a): return np.linalg.eigvalsh(symmetrize(a), UPLO="U")
def cholesky(a): return np.linalg.cholesky(symmetrize(a))
def cholesky_reparameterised(a, z): return np.linalg.norm(np.dot(np.linalg.cholesky(symmetrize(a)), z))
def svd_thin(x):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    return u, s, vh
def svd_square_full(x):
    u, s, vh = np.linalg.svd(x)
    return u, s, vh
def svd_values(x): return np.linalg.svd(x, full_matrices=False, compute_uv=False)
def svd_values_only(x): return np.linalg.svd(x, compute_uv=False)
def eig_real_spectrum(a):
    w, v = np.linalg.eig(a)
    return np.abs(w), np.abs(v)
def eig_complex_spectrum(a):
    w, v = np.linalg.eig(a + 0j)
    return np.real(w) + 2.0 * np.imag(w), np.abs(v)


def well_conditioned(shape, shift):
    return R.standard_normal(shape) + shift * np.eye(shape[-1])


LINALG = [
    ("inv", inv, lambda: [R.standard_normal((8, 8)) @ R.standard_normal((8, 8)) * 0.1
                          + np.eye(8) * 3.0], None),
    ("inv_3d", inv, lambda: [well_conditioned((4, 4, 4), 5.0)], None),
    ("inv_4d", inv, lambda: [well_conditioned((3, 2, 4, 4), 5.0)], None),
    ("solve_matrix_rhs", solve, lambda: [well_conditioned((8, 8), 10.0),
                                         R.standard_normal((8, 7))], None),
    ("solve_vector_rhs", solve, lambda: [well_conditioned((8, 8), 10.0),
                                         R.standard_normal(8)], None),
    ("solve_rhs_only", solve, lambda: [well_conditioned((6, 6), 4.0),
                                       R.standard_normal((6, 5))], (1,)),
    ("solve_stacked_vector", solve_stacked_vector,
     lambda: [well_conditioned((5, 4, 4), 5.0), R.standard_normal((5, 4))], None),
    ("solve_stacked_matrix", solve, lambda: [well_conditioned((5, 4, 4), 5.0),
                                             R.standard_normal((5, 4, 6))], None),
    ("solve_broadcast_rhs", solve, lambda: [well_conditioned((3, 4, 4), 5.0),
                                            R.standard_normal((4, 2))], None),
    ("det", det, lambda: [R.standard_normal((6, 6))], None),
    ("det_3d", det, lambda: [R.standard_normal((3, 3, 3))], None),
    ("slogdet", logdet, lambda: [R.standard_normal((6, 6))], None),
    ("slogdet_negated", logdet, lambda: [-R.standard_normal((6, 6))], None),
    ("slogdet_3d", slogdet_sum, lambda: [np.stack([spd(5) for _ in range(3)])], None),
    ("slogdet_sign_times_det", signed_det, lambda: [R.standard_normal((4, 4))], None),
    ("vector_2norm", norm, lambda: [R.standard_normal(6)], None),
    ("frobenius", norm, lambda: [R.standard_normal((6, 5))], None),
    ("frobenius_axes01", norm_axes01, lambda: [R.standard_normal((6, 5, 4))], None),
    ("nuclear", nuclear_norm, lambda: [R.standard_normal((6, 5))], None),
    ("nuclear_axes01", nuclear_norm_axes01, lambda: [R.standard_normal((6, 5, 4))], None),
    ("norm_of_list", norm_of_list, lambda: [0.3], None),
    ("norm_of_tuple", norm_of_tuple, lambda: [-0.7], None),
    ("eigh_lower", eigh_lower, lambda: [spd(6)], None),
    ("eigh_upper", eigh_upper, lambda: [spd(6)], None),
    ("eigh_upper_keyword", eigh_upper_keyword, lambda: [spd(5)], None),
    ("eigh_batched", eigh_lower,
     lambda: [np.einsum("...ij,...kj->...ik", *[well_conditioned((2, 3, 6, 6), 10.0)] * 2)],
     None),
    ("eigh_batched_upper", eigh_upper,
     lambda: [np.einsum("...ij,...kj->...ik", *[well_conditioned((2, 3, 6, 6), 10.0)] * 2)],
     None),
    ("eigvalsh_upper", eigvalsh_upper, lambda: [spd(5)], None),
    ("cholesky", cholesky, lambda: [spd(6)], None),
    ("cholesky_batched", cholesky, lambda: [np.stack([spd(6) for _ in range(3)])], None),
    ("cholesky_reparameterised", cholesky_reparameterised,
     lambda: [spd(6), R.standard_normal(6)], (0,)),
    ("svd_wide", svd_thin, lambda: [R.standard_normal((3, 5))], None),
    ("svd_wide_3d", svd_thin, lambda: [R.standard_normal((4, 3, 5))], None),
    ("svd_square", svd_thin, lambda: [R.standard_normal((4, 4))], None),
    ("svd_square_3d", svd_thin, lambda: [R.standard_normal((3, 4, 4))], None),
    ("svd_square_full_matrices", svd_square_full, lambda: [R.standard_normal((4, 4))], None),
    ("svd_tall", svd_thin, lambda: [R.standard_normal((5, 3))], None),
    ("svd_tall_3d", svd_thin, lambda: [R.standard_normal((4, 5, 3))], None),
    ("svd_values", svd_values, lambda: [R.standard_normal((5, 3))], None),
    ("svd_values_3d", svd_values, lambda: [R.standard_normal((4, 5, 3))], None),
    ("svd_values_full_matrices", svd_values_only, lambda: [R.standard_normal((3, 5))], None),
    ("eig_real_spectrum", eig_real_spectrum,
     lambda: [np.triu(R.standard_normal((5, 5)), 1) + np.diag(3.0 * np.arange(5.0))
              + 0.05 * R.standard_normal((5, 5))], None),
    ("eig_complex_spectrum", eig_complex_spectrum, lambda: [R.standard_normal((5, 5))], None),
]
for _n, _m in itertools.product((5,), range(2, 8)):
    LINALG.append((f"pinv_{_n}x{_m}", pinv, lambda n=_n, m=_m: [R.standard_normal((n, m))],
                   None))
    LINALG.append((f"pinv_stacked_{_n}x{_m}", pinv,
                   lambda n=_n, m=_m: [R.standard_normal((2, n, m))], None))
    LINALG.append((f"pinv_low_rank_{_n}x{_m}", pinv_low_rank,
                   lambda n=_n, m=_m: [R.standard_normal((n, m))], None))


@pytest.mark.parametrize("f, make_args, wrt", [c[1:] for c in LINALG],
                         ids=[c[0] for c in LINALG])
def test_linalg_matches_finite_differences(f, make_args, wrt):
    check_both_modes(f, make_args(), wrt=wrt, rtol=1e-4)


def vector_norm_ord(x, ord): return np.linalg.norm(x, ord=ord)
def norm_axis_keepdims(x, axis, keepdims): return np.linalg.norm(x, axis=axis, keepdims=keepdims)
def matrix_norm_ord(x, ord): return np.linalg.norm(x, ord=ord)
def matrix_norm_ord_axes(x, ord): return np.linalg.norm(x, ord, (2, 0), True)


@pytest.mark.parametrize("ord", [1, 2, 3, 4, -1, -2, 0.5, 2.5, np.inf, -np.inf, 0, None])
def test_vector_norm_orders(ord):
    x = R.standard_normal(6)
    x = x + 0.2 * np.sign(x)

    def f(x): return vector_norm_ord(x, ord)
    check_both_modes(f, [x], rtol=1e-4, salt=str(ord))


def test_a_function_whose_name_is_no_python_name():
    # a __name__ set by hand (or by a decorator) to a string that is not an identifier was
    # used as the name of the generated function: a SyntaxError inside the compiler
    def scaled(x): return 3.0 * np.sin(x)
    scaled.__name__ = "vector_norm_-1 (ord=0.5)"
    check_both_modes(scaled, [R.standard_normal(3)])
    assert "def scaled_vjp(" in s2sad.vjp(scaled).source_for(np.ones(3))



@pytest.mark.parametrize("axis", [0, 1, 2, -1, (0, 2), (1, 2), (2, 0)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_over_axes(axis, keepdims):
    def f(x): return norm_axis_keepdims(x, axis, keepdims)
    check_both_modes(f, [R.standard_normal((6, 5, 4))], rtol=1e-4, salt=f"{axis}{keepdims}")


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm_orders(ord):
    # distinct column / row sums and singular values: away from the kinks of these norms
    x = R.standard_normal((5, 4)) + 0.3 * np.outer(np.arange(1.0, 6.0), np.arange(1.0, 5.0))

    def f(x): return matrix_norm_ord(x, ord)
    check_both_modes(f, [x], rtol=1e-4, salt=str(ord))

    def g(x): return matrix_norm_ord_axes(x, ord)
    check_both_modes(g, [np.stack([x, x[::-1] * 0.7], axis=1)], rtol=1e-4, salt=str(ord))


def matrix_power(a, n): return np.linalg.matrix_power(a, n)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
def test_matrix_power(n):
    def f(a): return matrix_power(a, n)
    a = well_conditioned((2, 4, 4), 3.0) * 0.5
    check_both_modes(f, [a], rtol=1e-4, salt=str(n))


def test_eigh_differentiates_the_triangle_it_reads():
    # NumPy's eigh reads the lower triangle (issue 36, item 3): the derivative is autograd's,
    # in the triangle read, each off-diagonal entry counted once (it stands for two entries
    # of the symmetric matrix factored), 0 in the other triangle. Along symmetric
    # perturbations it agrees with the symmetric convention s2sad used before.
    a = spd(5)

    def eigenvalue_sum(a): return np.sum(np.linalg.eigh(a)[0] * np.arange(1.0, 6.0))
    g = s2sad.grad(eigenvalue_sum)(a)
    w, v = np.linalg.eigh(a)
    m = (v * np.arange(1.0, 6.0)) @ v.T  # sum_k c_k v_k v_k^T, d(sum c_k w_k)/dH
    assert np.allclose(g, 2.0 * np.tril(m, -1) + np.diag(np.diag(m)))


def cholesky_reparameterised_seeded(a):
    # autograd's version: the noise drawn inside, from a fixed seed (not differentiated)
    rng = np.random.RandomState(0)
    z = np.dot(np.linalg.cholesky(symmetrize(a)), rng.randn(a.shape[0]))
    return np.linalg.norm(z)


# autograd's complex variants: s2sad takes real arguments, so the complex matrix is built
# inside (Hermitian where eigh needs it) and gauge-dependent outputs are read through |.|
def eigh_complex(x, y):
    w, v = np.linalg.eigh(symmetrize(x) + 1j * (y - y.T))
    return w, np.abs(v)
def eigh_complex_upper(x, y):
    w, v = np.linalg.eigh(symmetrize(x) + 1j * (y - y.T), "U")
    return w, np.abs(v)
def svd_complex(x, y):
    u, s, vh = np.linalg.svd(x + 1j * y, full_matrices=False)
    return np.abs(u), s, np.abs(vh)
def svd_values_complex(x, y): return np.linalg.svd(x + 1j * y, compute_uv=False)
def norm_complex(x, y): return np.linalg.norm(x + 1j * y)
def norm_complex_axis(x, y): return np.linalg.norm(x + 1j * y, axis=1)
def norm_complex_ord3(x, y): return np.linalg.norm(x + 1j * y, ord=3)
def nuclear_norm_complex(x, y): return np.linalg.norm(x + 1j * y, "nuc")
def eig_complex(x, y):
    w, v = np.linalg.eig(x + 1j * y)
    return np.real(w) + 2.0 * np.imag(w), np.abs(v)


COMPLEX_LINALG = [
    (eigh_complex, [(5, 5), (5, 5)]), (eigh_complex_upper, [(5, 5), (5, 5)]),
    (svd_complex, [(3, 5), (3, 5)]), (svd_complex, [(4, 4), (4, 4)]),
    (svd_complex, [(2, 5, 3), (2, 5, 3)]), (svd_values_complex, [(5, 3), (5, 3)]),
    (norm_complex, [(6,), (6,)]), (norm_complex, [(6, 5), (6, 5)]),
    (norm_complex_axis, [(6, 5, 4), (6, 5, 4)]), (norm_complex_ord3, [(6,), (6,)]),
    (nuclear_norm_complex, [(6, 5), (6, 5)]), (eig_complex, [(5, 5), (5, 5)]),
    (eig_complex, [(3, 4, 4), (3, 4, 4)]),
]


@pytest.mark.parametrize("f, shapes", COMPLEX_LINALG,
                         ids=[f"{f.__name__}{s[0]}" for f, s in COMPLEX_LINALG])
def test_linalg_of_complex_values_built_inside(f, shapes):
    rng = rng_for(f.__name__, str(shapes))
    x, y = (rng.standard_normal(s) for s in shapes)
    if f in (eigh_complex, eigh_complex_upper):
        x = x @ x.T + 5.0 * np.eye(5)
    check_both_modes(f, [x, y], rtol=1e-4, salt=str(shapes))


def test_cholesky_with_noise_drawn_inside():
    check_both_modes(cholesky_reparameterised_seeded, [spd(6)], rtol=1e-4)


def svd_full_wide(x):
    u, s, vh = np.linalg.svd(x)
    return u, s, vh


def test_svd_with_full_matrices_of_a_non_square_matrix_is_refused():
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.vjp(svd_full_wide)(R.standard_normal((3, 5)))
    assert err.value.lineno is not None and "full_matrices" in str(err.value)


SECOND_ORDER_LINALG = [
    (logdet, lambda: [well_conditioned((4, 4), 4.0)]),
    (det, lambda: [R.standard_normal((3, 3))]),
    (norm, lambda: [R.standard_normal((3, 4))]),
    (nuclear_norm, lambda: [R.standard_normal((4, 3))]),
]


def inv_trace(a): return np.trace(np.linalg.inv(a) @ a.T)
def solve_quadratic(a, b): return np.sum(np.linalg.solve(a, b) ** 2)
def cholesky_logdet(a): return 2.0 * np.sum(np.log(np.diagonal(np.linalg.cholesky(symmetrize(a)))))
def eigh_top(a): return np.linalg.eigh(symmetrize(a))[0][-1] + np.sum(np.linalg.eigh(symmetrize(a))[1][:, -1] ** 4)
def svd_energy(x): return np.sum(np.linalg.svd(x, full_matrices=False, compute_uv=False) ** 3)
def pinv_sum(x): return np.sum(np.linalg.pinv(x) ** 2)
def power_trace(a): return np.trace(np.linalg.matrix_power(a, 3))


SECOND_ORDER_LINALG += [
    (inv_trace, lambda: [well_conditioned((4, 4), 4.0)]),
    (solve_quadratic, lambda: [well_conditioned((4, 4), 4.0), R.standard_normal(4)]),
    (cholesky_logdet, lambda: [spd(4)]),
    (eigh_top, lambda: [spd(4)]),
    (svd_energy, lambda: [R.standard_normal((4, 3))]),
    (pinv_sum, lambda: [R.standard_normal((4, 3))]),
    (power_trace, lambda: [R.standard_normal((3, 3))]),
]


def test_hessian_through_a_rule_that_tests_for_complex_values():
    # jacfwd of a gradient whose rules call is_complex on a tangent (pinv's and svd's use
    # adj / conj_of): the batching pass ran the kind test once per direction and the rule's
    # `if` got an array of booleans (ValueError: truth value of an array is ambiguous)
    x = R.standard_normal((4, 3))
    h = s2sad.hessian(pinv_sum)(x).reshape(12, 12)
    v = R.standard_normal((4, 3))
    assert_close(h @ v.ravel(), np.ravel(numerical_hvp(pinv_sum, [x], 0, v)), rtol=1e-5,
                 atol=1e-6)


@pytest.mark.parametrize("f, make_args", SECOND_ORDER_LINALG,
                         ids=[f.__name__ for f, _ in SECOND_ORDER_LINALG])
def test_linalg_second_order(f, make_args):
    check_second_order(f, make_args())


# -- binary operations (autograd's test_binary_ops.py) ----------------------------------------

def pair_values():
    """autograd's argument pairs: a number, a vector, a matrix and a one-row matrix, each
    with each (16 pairs, every broadcasting combination of these shapes)."""
    rng = np.random.default_rng(7)
    values = {"scalar": 2.0, "vector": rng.standard_normal(4), "matrix": rng.standard_normal((3, 4)),
              "row": rng.standard_normal((1, 4))}
    return [((a, values[a]), (b, values[b])) for a, b in itertools.product(values, values)]


PAIRS = pair_values()
PAIR_IDS = [f"{a}-{b}" for (a, _), (b, _) in PAIRS]


def gap_from_zero(x):
    return np.sqrt(x ** 2 + 0.5)


def mul(x, y): return x * y
def add(x, y): return x + y
def sub(x, y): return x - y
def div(x, y): return x / y
def mod(x, y): return x % y
def pow_(x, y): return x ** y
def arctan2(x, y): return np.arctan2(x, y)
def hypot(x, y): return np.hypot(x, y)
def np_mod(x, y): return np.mod(x, y)
def remainder(x, y): return np.remainder(x, y)
def fmod(x, y): return np.fmod(x, y)
def divmod_parts(x, y):
    q, r = divmod(x, y)
    return r * 1.5 + q
def np_divmod_parts(x, y):
    q, r = np.divmod(x, y)
    return r * 1.5 + q
def logaddexp(x, y): return np.logaddexp(x, y)
def logaddexp2(x, y): return np.logaddexp2(x, y)
def maximum(x, y): return np.maximum(x, y)
def fmin(x, y): return np.fmin(x, y)
def copysign(x, y): return np.copysign(x, y)
def np_power(x, y): return np.power(x, y)
def float_power(x, y): return np.float_power(x, y)
def true_divide(x, y): return np.true_divide(x, y)


def away_from_multiples(x, y, margin=0.05):
    """x moved so that x / y keeps `margin` from every integer (kinks of mod, fmod, divmod)."""
    q = np.asarray(x / y)
    frac = q - np.floor(q)
    shift = np.where(frac < margin, margin, np.where(frac > 1.0 - margin, -margin, 0.0))
    out = x + shift * y
    return float(out) if np.ndim(out) == 0 and not isinstance(x, np.ndarray) else out


BINARY = [mul, add, sub, div, mod, np_mod, remainder, fmod, divmod_parts, np_divmod_parts,
          pow_, np_power, float_power, arctan2, hypot, logaddexp, logaddexp2, maximum, fmin,
          copysign, true_divide]


def binary_args(f, x, y):
    if f in (div, true_divide):
        return gap_from_zero(x), gap_from_zero(y)
    if f in (mod, np_mod, remainder, fmod, divmod_parts, np_divmod_parts):
        x, y = gap_from_zero(x), gap_from_zero(y)
        if f is fmod:
            y = -y  # fmod keeps x's sign: a negative divisor checks the other branch
        return away_from_multiples(x, y), y
    if f in (pow_, np_power, float_power):
        return np.abs(x) + 1.1, y
    if f in (maximum, fmin):
        return x, np.asarray(y) + 0.3 if isinstance(y, np.ndarray) else y + 0.3
    if f is copysign:
        return x, y + 0.25 * np.sign(y)
    return x, y


@pytest.mark.parametrize("f", BINARY, ids=[f.__name__ for f in BINARY])
@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_binary_operation_of_every_shape_pair(f, pair):
    (_, x), (_, y) = pair
    x, y = binary_args(f, x, y)
    check_both_modes(f, [x, y], rtol=1e-5, salt="binary")


@pytest.mark.parametrize("f", [mul, div, pow_, arctan2, hypot, mod, logaddexp],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("pair", [PAIRS[0], PAIRS[5], PAIRS[7], PAIRS[10]],
                         ids=[PAIR_IDS[0], PAIR_IDS[5], PAIR_IDS[7], PAIR_IDS[10]])
def test_binary_operation_second_order(f, pair):
    (_, x), (_, y) = pair
    x, y = binary_args(f, x, y)
    if f in (arctan2, hypot):  # away from the origin, where their curvature blows up
        x = gap_from_zero(x)

    def total(x, y): return np.sum(f(x, y) * np.cos(x + y))
    total.__name__ = f"total_{f.__name__}"
    for wrt in (0, 1):
        if isinstance([x, y][wrt], float):
            continue
        check_second_order(total, [x, y], wrt=wrt, rtol=1e-5, atol=1e-6)


def lt_self(x, y): return np.sum(x < x) + 0.0
def le(x, y): return np.sum(x <= y) + 0.0
def gt(x, y): return np.sum(x > y) + 0.0
def ge(x, y): return np.sum(x >= y) + 0.0
def eq(x, y): return np.sum(x == y) + 0.0
def ne(x, y): return np.sum(x != y) + 0.0


@pytest.mark.parametrize("f", [lt_self, le, gt, ge, eq, ne], ids=lambda f: f.__name__)
@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_comparisons_have_zero_gradient_and_keep_their_value(f, pair):
    (_, x), (_, y) = pair
    value, (x_bar, y_bar) = s2sad.value_and_grad(f, wrt=(0, 1))(x, y)
    assert value == f(x, y)
    assert np.shape(x_bar) == np.shape(x) and np.shape(y_bar) == np.shape(y)
    assert np.all(np.asarray(x_bar) == 0.0) and np.all(np.asarray(y_bar) == 0.0)
    _, t = s2sad.jvp(f)(x, y, x, y)
    assert t == 0.0


# -- scalar operations (autograd's test_scalar_ops.py) ----------------------------------------

def s_abs(x): return 3.0 * np.abs(x)
def s_absolute(x): return 3.0 * np.absolute(x)
def s_sin(x): return 3.0 * np.sin(x)
def s_sign(x): return 3.0 * np.sign(x) + x
def s_exp(x): return 3.0 * np.exp(x)
def s_log(x): return 3.0 * np.log(x)
def s_log2(x): return 3.0 * np.log2(x)
def s_log10(x): return 3.0 * np.log10(x)
def s_log1p(x): return 3.0 * np.log1p(x)
def s_expm1(x): return 3.0 * np.expm1(x)
def s_exp2(x): return 3.0 * np.exp2(x)
def s_neg(x): return 3.0 * -x
def s_cos(x): return 3.0 * np.cos(x)
def s_tan(x): return 3.0 * np.tan(x)
def s_cosh(x): return 3.0 * np.cosh(x)
def s_sinh(x): return 3.0 * np.sinh(x)
def s_tanh(x): return 3.0 * np.tanh(x)
def s_arccos(x): return 3.0 * np.arccos(x)
def s_arcsin(x): return 3.0 * np.arcsin(x)
def s_arctan(x): return 3.0 * np.arctan(x)
def s_arccosh(x): return 3.0 * np.arccosh(x)
def s_arcsinh(x): return 3.0 * np.arcsinh(x)
def s_arctanh(x): return 3.0 * np.arctanh(x)
def s_sqrt(x): return 3.0 * np.sqrt(x)
def s_cbrt(x): return 3.0 * np.cbrt(x)
def s_square(x): return 3.0 * np.square(x)
def s_reciprocal(x): return np.reciprocal(x)
def s_negative(x): return np.negative(x)
def s_rad2deg(x): return 3.0 * np.rad2deg(x)
def s_deg2rad(x): return 3.0 * np.deg2rad(x)
def s_radians(x): return 3.0 * np.radians(x)
def s_degrees(x): return 3.0 * np.degrees(x)
def s_sinc(x): return 3.0 * np.sinc(x)
def s_cube(x): return x ** 3
def s_cube_float(x): return x ** 3.0
def s_power_int(x): return np.power(x, 2)
def s_power_negative_int(x): return np.power(x, -3)
def s_power_negative_float(x): return x ** -2.0
def s_float_power_int(x): return np.float_power(x, 3.0)
def s_builtin_pow(x): return pow(x, 4)


SCALAR = [
    (s_abs, [1.1, -1.1]), (s_absolute, [1.1, -1.1]), (s_sin, [0.3, -1.4]),
    (s_sign, [1.1, -1.1]), (s_exp, [0.5, -0.7]), (s_log, [0.4, 2.5]), (s_log2, [0.4, 2.5]),
    (s_log10, [0.4, 2.5]), (s_log1p, [0.4, 2.5]), (s_expm1, [0.4, -1.5]), (s_exp2, [0.4, -1.5]),
    (s_neg, [0.7]), (s_cos, [0.3, -1.4]), (s_tan, [0.3, -1.1]), (s_cosh, [0.3, -1.4]),
    (s_sinh, [0.3, -1.4]), (s_tanh, [0.3, -1.4]), (s_arccos, [0.1, -0.6]),
    (s_arcsin, [0.1, -0.6]), (s_arctan, [0.2, -3.0]), (s_arccosh, [1.2, 3.5]),
    (s_arcsinh, [0.4, -2.0]), (s_arctanh, [0.2, -0.7]), (s_sqrt, [0.3, 7.0]),
    (s_cbrt, [0.3, -2.0]), (s_square, [0.3, -2.0]), (s_reciprocal, [0.6, -1.7]),
    (s_negative, [0.6]), (s_rad2deg, [2.0]), (s_deg2rad, [7.0]), (s_radians, [7.0]),
    (s_degrees, [2.0]), (s_sinc, [0.37, 4.2, -2.6]), (s_cube, [-1.3, 0.8]),
    (s_cube_float, [-1.3, 0.8]), (s_power_int, [-1.3, 0.8]), (s_power_negative_int, [-1.3, 0.8]),
    (s_power_negative_float, [-1.3, 0.8]), (s_float_power_int, [-1.3, 0.8]),
    (s_builtin_pow, [-1.3, 0.8]),
]
SCALAR_CASES = [(f, x) for f, xs in SCALAR for x in xs]
SCALAR_IDS = [f"{f.__name__}({x})" for f, x in SCALAR_CASES]


@pytest.mark.parametrize("f, x", SCALAR_CASES, ids=SCALAR_IDS)
def test_scalar_operation(f, x):
    check_both_modes(f, [x], salt=str(x))
    g = s2sad.grad(f)(x)
    assert isinstance(g, float), "the gradient of a float function of a float is a float"
    check_second_order(f, [x], rtol=1e-6, atol=1e-5)
    # on a 1-d array too: the same numbers elementwise
    xs = np.array([x, x * 0.9])
    check_both_modes(f, [xs], salt=f"array{x}")


def test_kinks_take_the_values_autograd_gives():
    # |x| at 0: the subgradient 0 (autograd's check at 0 is first order only)
    assert s2sad.grad(s_abs)(0.0) == 0.0
    # x ** 0: derivative 0 at x = 0, and second derivative 0 (autograd issue #116)
    def power_zero(x): return np.power(x, 0.0)
    assert s2sad.grad(power_zero)(0.0) == 0.0
    assert s2sad.grad(s2sad.grad(power_zero))(0.0) == 0.0
    # sinc at 0: derivative 0 (sinc is even), second derivative -pi^2 / 3
    assert s2sad.grad(np.sinc)(0.0) == pytest.approx(0.0, abs=1e-12)
    assert s2sad.grad(s2sad.grad(np.sinc))(0.0) == pytest.approx(-np.pi ** 2 / 3, rel=1e-6)


def power_base_zero(y): return np.power(0.0, y)
def power_base(x, y): return np.power(x, y)


def test_power_of_zero_to_a_positive_exponent():
    # 0 ** y = 0 for every y > 0: derivative 0 in y (log 0 = -inf must not leak as nan)
    y = 0.7 ** 2
    check_both_modes(power_base_zero, [y])
    assert s2sad.grad(power_base_zero)(y) == 0.0
    check_second_order(power_base_zero, [y])


def test_power_arguments_as_autograd_draws_them():
    rng = rng_for("power_args")
    x, y = rng.standard_normal() ** 2 + 1.0, rng.random() ** 2 + 1.0
    check_both_modes(power_base, [x, y])
    check_second_order(power_base, [x, y], wrt=0)
    check_second_order(power_base, [x, y], wrt=1)


# -- numpy.fft (autograd's test_fft.py) -------------------------------------------------------
# s2sad takes real arguments: a complex spectrum is made inside (rfft of a real signal for the
# inverse real transforms, which need a Hermitian input), and a complex result is read out as
# Re + 2 Im so that both parts are checked.

def parts(z): return np.real(z) + 2.0 * np.imag(z)
def c_of(x): return x[0] + 1j * x[1]


def fft_default(x): return parts(np.fft.fft(c_of(x)))
def fft_ortho(x): return parts(np.fft.fft(c_of(x), norm="ortho"))
def fft_forward(x): return parts(np.fft.fft(c_of(x), norm="forward"))
def fft_axis0(x): return parts(np.fft.fft(c_of(x), axis=0))
def fft_n_smaller(x): return parts(np.fft.fft(c_of(x), 3))
def fft_n_bigger(x): return parts(np.fft.fft(c_of(x), 7))
def ifft_default(x): return parts(np.fft.ifft(c_of(x)))
def ifft_n_smaller(x): return parts(np.fft.ifft(c_of(x), 3))
def ifft_n_bigger(x): return parts(np.fft.ifft(c_of(x), 7, norm="ortho"))
def rfft_default(x): return parts(np.fft.rfft(x))
def rfft_ortho(x): return parts(np.fft.rfft(x, norm="ortho"))
def rfft_axis0(x): return parts(np.fft.rfft(x, axis=0))
def rfft_n_smaller(x): return parts(np.fft.rfft(x, 2))
def rfft_n_bigger(x): return parts(np.fft.rfft(x, 6))
def irfft_default(x): return np.fft.irfft(np.fft.rfft(x))
def irfft_ortho(x): return np.fft.irfft(np.fft.rfft(x), norm="ortho")
def irfft_n_smaller(x): return np.fft.irfft(np.fft.rfft(x) * (1.0 + 0.5j), 2)
def irfft_n_bigger(x): return np.fft.irfft(np.fft.rfft(x) * (1.0 + 0.5j), 6)
def irfft_spectrum(x): return np.fft.irfft(c_of(x))  # any spectrum, not only a Hermitian one
def fft2_default(x): return parts(np.fft.fft2(c_of(x)))
def ifft2_default(x): return parts(np.fft.ifft2(c_of(x)))
def fftn_default(x): return parts(np.fft.fftn(c_of(x)))
def ifftn_default(x): return parts(np.fft.ifftn(c_of(x)))
def fft2_s(x): return parts(np.fft.fft2(c_of(x), s=[7, 3], axes=[0, 2]))
def ifft2_s(x): return parts(np.fft.ifft2(c_of(x), s=[7, 3], axes=[0, 2]))
def fftn_s(x): return parts(np.fft.fftn(c_of(x), s=[7, 3], axes=[0, 2]))
def ifftn_s(x): return parts(np.fft.ifftn(c_of(x), s=[7, 3], axes=[0, 2]))
def rfft2_default(x): return parts(np.fft.rfft2(x))
def rfft2_s(x): return parts(np.fft.rfft2(x, s=[6, 2], axes=[0, 2]))
def rfftn_default(x): return parts(np.fft.rfftn(x))
def rfftn_s(x): return parts(np.fft.rfftn(x, s=[6, 2], axes=[0, 2]))
def rfftn_axes(x): return parts(np.fft.rfftn(x, axes=(0, 2)))
def rfftn_odd(x): return parts(np.fft.rfftn(x))
def rfftn_subset(x): return parts(np.fft.rfftn(x)[(0, 1, 0), (3, 3, 2)])
def irfft2_default(x): return np.fft.irfft2(np.fft.rfft2(x))
def irfft2_s(x): return np.fft.irfft2(np.fft.rfft2(x) * 1.5j + 1.0, s=[6, 2], axes=[0, 2])
def irfftn_default(x): return np.fft.irfftn(np.fft.rfftn(x))
def irfftn_s(x): return np.fft.irfftn(np.fft.rfftn(x) * 1.5j + 1.0, s=[6, 2], axes=[0, 2])
def irfftn_subset(x): return np.fft.irfftn(np.fft.rfftn(x))[(0, 1, 0), (3, 3, 2)]
def fftshift_default(x): return np.fft.fftshift(x)
def fftshift_axes(x): return np.fft.fftshift(x, axes=1)
def ifftshift_default(x): return np.fft.ifftshift(x)
def ifftshift_axes(x): return np.fft.ifftshift(x, axes=1)
def hfft_default(x): return np.fft.hfft(c_of(x))
def ihfft_default(x): return parts(np.fft.ihfft(x))


FFT = [
    (fft_default, (2, 5, 5)), (fft_ortho, (2, 5, 5)), (fft_forward, (2, 5)),
    (fft_axis0, (2, 5, 5)), (fft_n_smaller, (2, 5, 5)), (fft_n_bigger, (2, 5, 5)),
    (ifft_default, (2, 5, 5)), (ifft_n_smaller, (2, 5, 5)), (ifft_n_bigger, (2, 5, 5)),
    (rfft_default, (4, 4)), (rfft_ortho, (4, 4)), (rfft_axis0, (4, 4)),
    (rfft_n_smaller, (4, 4)), (rfft_n_bigger, (4, 4)), (irfft_default, (4, 4)),
    (irfft_ortho, (4, 4)), (irfft_n_smaller, (4, 4)), (irfft_n_bigger, (4, 4)),
    (irfft_spectrum, (2, 3, 4)),
    (fft2_default, (2, 5, 5)), (ifft2_default, (2, 5, 5)), (fftn_default, (2, 5, 5)),
    (ifftn_default, (2, 5, 5)), (fft2_s, (2, 5, 5, 5)), (ifft2_s, (2, 5, 5, 5)),
    (fftn_s, (2, 5, 5, 5)), (ifftn_s, (2, 5, 5, 5)), (rfft2_default, (4, 4)),
    (rfft2_s, (4, 4, 4)), (rfftn_default, (4, 4, 4)), (rfftn_s, (4, 4, 4)),
    (rfftn_axes, (4, 4, 4)), (rfftn_odd, (5, 5, 5)), (rfftn_subset, (4, 4, 4)),
    (irfft2_default, (4, 4)), (irfft2_s, (4, 4, 4)), (irfftn_default, (4, 4, 4)),
    (irfftn_s, (4, 4, 4)), (irfftn_subset, (4, 4, 4)), (fftshift_default, (5, 5)),
    (fftshift_default, (4, 4)), (fftshift_axes, (5, 5)), (ifftshift_default, (5, 5)),
    (ifftshift_default, (4, 4)), (ifftshift_axes, (5, 5)),
]
FFT_IDS = [f"{f.__name__}{list(s)}" for f, s in FFT]


@pytest.mark.parametrize("f, shape", FFT, ids=FFT_IDS)
def test_fft(f, shape):
    x = rng_for(f.__name__, str(shape)).standard_normal(shape) / 10.0
    check_both_modes(f, [x], rtol=1e-5)


def fft_power(x): return np.sum(np.abs(np.fft.fft(x)) ** 2 * np.arange(1.0, 6.0))
def rfft_phase(x): return np.sum(np.cos(np.angle(np.fft.rfft(x + 1.0))))
def irfft_square(x): return np.sum(np.fft.irfft(np.fft.rfft(x) * (1.0 + 0.5j)) ** 3)


@pytest.mark.parametrize("f", [fft_power, rfft_phase, irfft_square], ids=lambda f: f.__name__)
def test_fft_second_order(f):
    check_second_order(f, [rng_for(f.__name__).standard_normal(5)])


def test_hermitian_transforms():
    # hfft / ihfft: not in autograd's tests; differentiated, or refused with a clear error
    for f, shape in [(hfft_default, (2, 4)), (ihfft_default, (6,))]:
        x = rng_for(f.__name__).standard_normal(shape)
        try:
            check_both_modes(f, [x])
        except s2sad.S2SADError as err:
            assert type(err).__name__ == "MissingRuleError" and err.lineno is not None


# -- scipy (autograd's test_scipy.py) ---------------------------------------------------------

sc = pytest.importorskip("scipy.special")
stats = pytest.importorskip("scipy.stats")


def sp_beta(a, b): return sc.beta(a, b)
def sp_betaln(a, b): return sc.betaln(a, b)
def sp_betainc(x): return sc.betainc(np.array([1.5, 2.0, 3.1, 0.7]), 2.5, x)
def sp_gammainc(x): return sc.gammainc(1.0, x)
def sp_gammaincc(x): return sc.gammaincc(1.0, x)
def sp_polygamma(x): return sc.polygamma(0, x)
def sp_jn(x): return sc.jn(2, x)
def sp_yn(x): return sc.yn(2, x)
def sp_iv(x): return sc.iv(np.array([1.0, 13.0, 27.0, 49.0]), x)
def sp_ive(x): return sc.ive(np.array([1.0, 13.0, 27.0, 49.0]), x)
def sp_multigammaln(a): return sc.multigammaln(a, 3)
def sp_gammasgn(x): return sc.gammasgn(x) * x


def unary_special(name):
    def f(x): return getattr(sc, name)(x)
    return f


SPECIAL_UNARY = [("psi", 0.3, 2.0), ("digamma", 0.3, 2.0), ("gamma", 0.3, 2.0),
                 ("gammaln", 0.3, 2.0), ("rgamma", 0.3, 2.0), ("j0", 0.2, 20.0),
                 ("j1", 0.2, 20.0), ("y0", 0.2, 20.0), ("y1", 0.2, 20.0), ("i0", 0.2, 20.0),
                 ("i1", 0.2, 20.0), ("i0e", 0.2, 20.0), ("i1e", 0.2, 20.0),
                 ("erf", -3.0, 3.0), ("erfc", -3.0, 3.0), ("erfinv", -0.95, 0.95),
                 ("erfcinv", 0.05, 1.95), ("logit", 0.1, 0.9), ("expit", -4.05, 4.95)]


@pytest.mark.parametrize("name, lo, hi", SPECIAL_UNARY, ids=[n for n, _, _ in SPECIAL_UNARY])
def test_scipy_special_unary(name, lo, hi):
    x = rng_for(name).uniform(lo, hi, 5)
    f = SPECIAL_FUNCTIONS[name]
    check_both_modes(f, [x], rtol=1e-5, salt=name)

    def weighted(x): return np.sum(f(x) * np.cos(x))
    # (on a narrower range: a sum of values up to 4e7 (i0(20)) leaves too little precision
    # for finite differences of finite differences)
    check_second_order(weighted, [rng_for(name, "2").uniform(lo, min(hi, 5.0), 5)],
                       rtol=1e-5, atol=1e-6)


def sp_psi(x): return sc.psi(x)
def sp_digamma(x): return sc.digamma(x)
def sp_gamma(x): return sc.gamma(x)
def sp_gammaln(x): return sc.gammaln(x)
def sp_rgamma(x): return sc.rgamma(x)
def sp_j0(x): return sc.j0(x)
def sp_j1(x): return sc.j1(x)
def sp_y0(x): return sc.y0(x)
def sp_y1(x): return sc.y1(x)
def sp_i0(x): return sc.i0(x)
def sp_i1(x): return sc.i1(x)
def sp_i0e(x): return sc.i0e(x)
def sp_i1e(x): return sc.i1e(x)
def sp_erf(x): return sc.erf(x)
def sp_erfc(x): return sc.erfc(x)
def sp_erfinv(x): return sc.erfinv(x)
def sp_erfcinv(x): return sc.erfcinv(x)
def sp_logit(x): return sc.logit(x)
def sp_expit(x): return sc.expit(x)


SPECIAL_FUNCTIONS = {f.__name__[3:]: f for f in (
    sp_psi, sp_digamma, sp_gamma, sp_gammaln, sp_rgamma, sp_j0, sp_j1, sp_y0, sp_y1, sp_i0,
    sp_i1, sp_i0e, sp_i1e, sp_erf, sp_erfc, sp_erfinv, sp_erfcinv, sp_logit, sp_expit)}


def positive4(seed): return rng_for("scipy", seed).standard_normal(4) ** 2 + 1.1


SPECIAL_OTHER = [
    (sp_beta, lambda: [positive4("a"), positive4("b")]),
    (sp_betaln, lambda: [positive4("a"), positive4("b")]),
    (sp_betainc, lambda: [rng_for("betainc").uniform(0.05, 0.95, 4)]),
    (sp_gammainc, lambda: [positive4("x") + 0.2]),
    (sp_gammaincc, lambda: [positive4("x") + 0.2]),
    (sp_polygamma, lambda: [positive4("x") + 0.2]),
    (sp_jn, lambda: [positive4("x") + 0.2]),
    (sp_yn, lambda: [positive4("x") + 0.2]),
    (sp_iv, lambda: [positive4("x") + 0.2]),
    (sp_ive, lambda: [positive4("x") + 0.2]),
    (sp_multigammaln, lambda: [rng_for("mgl").uniform(4.0, 5.0, (2, 3))]),
    (sp_multigammaln, lambda: [4.3]),
    (sp_gammasgn, lambda: [rng_for("gsgn").uniform(0.3, 2.0, 4) * np.array([1, -1, 1, -1])
                           + np.array([0, -0.5, 0, -2.0])]),
]


@pytest.mark.parametrize("f, make_args", SPECIAL_OTHER,
                         ids=[f"{f.__name__}{k}" for k, (f, _) in enumerate(SPECIAL_OTHER)])
def test_scipy_special_functions_of_two_arguments(f, make_args):
    args = make_args()
    check_both_modes(f, args, rtol=1e-5)
    if len(args) == 1:
        def weighted(x): return np.sum(f(x) * np.cos(x))
        check_second_order(weighted, args, rtol=1e-5, atol=1e-6)
    else:
        def weighted2(a, b): return np.sum(f(a, b) * np.cos(a))
        check_second_order(weighted2, args, wrt=0, rtol=1e-5, atol=1e-6)
        check_second_order(weighted2, args, wrt=1, rtol=1e-5, atol=1e-6)


def lse(x, axis, keepdims): return sc.logsumexp(x, axis=axis, keepdims=keepdims)
def lse_b(x, b, axis, keepdims): return sc.logsumexp(x, axis=axis, b=b, keepdims=keepdims)


@pytest.mark.parametrize("shape, axis", [((1,), None), ((1,), 0), ((4,), None), ((4,), 0),
                                         ((3, 4), None), ((3, 4), 0), ((3, 4), 1),
                                         ((4, 5, 6), 1), ((1, 5), 1), ((2, 3, 4), (0, 2))])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_logsumexp(shape, axis, keepdims, weighted):
    rng = rng_for("lse", f"{shape}{axis}{keepdims}{weighted}")
    x = rng.standard_normal(shape)
    if weighted:
        b = np.exp(rng.standard_normal(shape))

        def f(x, b): return lse_b(x, b, axis, keepdims)
        check_both_modes(f, [x, b], salt=f"{shape}{axis}{keepdims}")
    else:
        def f(x): return lse(x, axis, keepdims)
        check_both_modes(f, [x], salt=f"{shape}{axis}{keepdims}")


def lse_rows_keepdims(a): return sc.logsumexp(a, axis=1, keepdims=True)


def test_logsumexp_second_order():
    x = rng_for("lse2").standard_normal((1, 5))

    def total(a): return np.sum(lse_rows_keepdims(a) ** 2)
    check_second_order(total, [x])


def norm_logpdf(x, loc, scale): return stats.norm.logpdf(x, loc, scale)
def t_logpdf(x, df, loc, scale): return stats.t.logpdf(x, df, loc, scale)
def gamma_logpdf(x, a): return stats.gamma.logpdf(x, a)
def beta_pdf(x, a, b): return stats.beta.pdf(x, a, b)
def dirichlet_logpdf(x, alpha): return stats.dirichlet.logpdf(x, alpha)
def mvn_logpdf(x, mean, cov): return stats.multivariate_normal.logpdf(x, mean, cov)
def poisson_logpmf(k, mu): return stats.poisson.logpmf(k, mu)
def chi2_cdf(x): return stats.chi2.cdf(x, 3)


# scipy.stats' distributions differentiate as written where their private methods have
# rules (issue 33): checked against central differences
STATS_AS_WRITTEN = [
    (gamma_logpdf, lambda: [np.array([1.5, 0.7, 2.2, 3.1]), np.array([2.0, 1.3, 2.5, 4.0])]),
    (dirichlet_logpdf, lambda: [np.array([0.2, 0.3, 0.5]), np.array([1.5, 2.0, 3.0])]),
    (chi2_cdf, lambda: [np.array([1.5, 2.0, 0.5])]),
    # (its df through sc.poch)
    (t_logpdf, lambda: [np.array([0.3, -1.2, 2.0, 0.5]), np.array([3.0, 1.5, 7.0, 2.2]),
                        np.zeros(4), np.ones(4) * 1.5]),
    # (s2sad's models of SciPy's machinery: scipy_models.py)
    (mvn_logpdf, lambda: [np.ones(4) * 0.3, np.zeros(4) + 0.1, np.eye(4) * 2.0 + 0.3]),
    (poisson_logpmf, lambda: [np.array([1.0, 2.0, 0.0]), np.array([1.5, 2.0, 0.5])]),
]


@pytest.mark.parametrize("f, make_args", STATS_AS_WRITTEN,
                         ids=[f.__name__ for f, _ in STATS_AS_WRITTEN])
def test_scipy_stats_distributions_as_written(f, make_args):
    args = make_args()
    # (x on the simplex: alpha only; chi2.cdf(x, 3) has x alone)
    wrt = {dirichlet_logpdf: (1,), chi2_cdf: (0,), t_logpdf: (0, 1, 2, 3),
           mvn_logpdf: (0, 1, 2), poisson_logpmf: (1,)}.get(f, (0, 1))
    assert s2sad.check_grads(f, args, wrt=wrt)


# refused at the user's call where a private method has no rule (beta's shape parameters:
# betainc)
STATS_REFUSED = [
    (beta_pdf, lambda: [np.ones(4) * 0.3, np.ones(4) * 2.0, np.ones(4) * 1.5]),
]


@pytest.mark.parametrize("f, make_args", STATS_REFUSED, ids=[f.__name__ for f, _ in STATS_REFUSED])
def test_scipy_stats_distributions_are_refused_where_called(f, make_args):
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.vjp(f)(*make_args())
    assert type(err.value).__name__ == "MissingRuleError"
    assert err.value.filename == __file__ and err.value.lineno is not None
    assert "stats" in str(err.value) and "hint:" in str(err.value)


def norm_pdf(x, loc, scale): return stats.norm.pdf(x, loc, scale)
def norm_cdf(x, loc, scale): return stats.norm.cdf(x, loc=loc, scale=scale)
def norm_sf(x, loc, scale): return stats.norm.sf(x, loc, scale)
def norm_logcdf(x, loc, scale): return stats.norm.logcdf(x, loc, scale)
def norm_logsf(x, loc, scale): return stats.norm.logsf(x, loc, scale=scale)


NORM = [norm_logpdf, norm_pdf, norm_cdf, norm_sf, norm_logcdf, norm_logsf]


@pytest.mark.parametrize("f", NORM, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shapes", [((4,), (4,), (4,)), ((4, 3), (1, 3), (4, 1)), ((), (), ())],
                         ids=["vectors", "broadcast", "numbers"])
def test_scipy_stats_norm(f, shapes):
    # autograd's draws: x and loc standard normal, scale = r^2 + 1.1
    rng = rng_for(f.__name__, str(shapes))
    x, loc = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    scale = rng.standard_normal(shapes[2]) ** 2 + 1.1
    args = [float(a) if a.ndim == 0 else a for a in (x, loc, scale)]
    check_both_modes(f, args, salt=str(shapes))
    if shapes[0] == (4,):
        def total(x, loc, scale): return np.sum(f(x, loc, scale) * np.cos(x))
        for wrt in (0, 1, 2):
            check_second_order(total, args, wrt=wrt)


def norm_logpdf_standard(x): return stats.norm.logpdf(x)


def test_scipy_stats_norm_generated_source_runs_on_its_own():
    # the printed derivative imports the distribution object (a bound method's class is
    # scipy's generic rv_continuous, whose attribute is the unbound function)
    source = s2sad.vjp(norm_logpdf_standard).source_for(np.ones(3))
    assert "from scipy.stats import norm" in source
    namespace: dict = {}
    exec(compile(source, "<generated>", "exec"), namespace)
    x = rng_for("standalone").standard_normal(3)
    out, pullback = namespace["norm_logpdf_standard_vjp"](x)
    assert np.allclose(out, stats.norm.logpdf(x))
    assert_close(pullback(np.ones(3))[0], -x)  # d/dx of -x^2/2


# -- second order through structures the first-order tests do not reach -----------------------

def cholesky_rows(a):
    out = np.linalg.cholesky(symmetrize(a))
    return np.sum(out[1] ** 2) + np.sum(out[2] * 0.3)


def test_hvp_through_rows_of_a_result_of_unknown_shape():
    # the gradient's cotangent of `out` starts as zeros_like(out) (cholesky's result shape is
    # not inferred) and gets a constant row, then a row with a tangent: the tangent of the
    # first write was a zero without a shape, made concrete as 0.0, and index_add(0.0, 1, ...)
    # raised IndexError inside the generated code
    check_second_order(cholesky_rows, [spd(4)])


def either_kind(x):
    out = svd_thin(x)
    if isinstance(out, tuple):  # a type test made when the code runs
        if len(out) == 2:
            return np.sum(np.cos(out[1]))
        return np.sum(out[0] ** 2) + np.sum(out[1] ** 2) + np.sum(out[2] * 0.3)
    return np.sum(np.sin(out))


def test_hessian_through_an_if_that_merges_a_tuple():
    # vector mode (hessian = jacfwd of grad) expanded the tuple of zero tangents merged by
    # the `if` as one array: batch_expand((zeros, zeros, zeros), n) raised ValueError
    check_second_order(either_kind, [R.standard_normal((3, 5))])


# -- Jacobians (vector modes) of linalg results -----------------------------------------------

def jacobian_matches(f, x):
    expected = numerical_jacobian(f, [x], (0,))[0]
    for transform in (s2sad.jacfwd, s2sad.jacrev):
        jac = transform(f)(x)
        parts = jac if isinstance(jac, tuple) else (jac,)
        got = np.concatenate([np.reshape(p, (-1, np.size(x))) for p in parts])
        assert_close(got, expected, rtol=1e-5, atol=1e-7, what=transform.__name__)


def test_jacobians_of_cholesky():
    # cholesky's result shape was not inferred (its random stand-in is not positive
    # definite): jacfwd and jacrev refused with "needs the shape of the output"
    jacobian_matches(cholesky, spd(3))


def test_jacobians_of_eig_of_a_real_matrix():
    # a real spectrum, well separated, away from a triangular matrix (where finite
    # differences reorder the eigenvalues); jacrev added complex zeros into a real
    # array in place (UFuncOutputCastingError)
    q = R.standard_normal((3, 3)) + 3.0 * np.eye(3)
    jacobian_matches(eig_real_spectrum, q @ np.diag([0.5, 3.0, 6.0]) @ np.linalg.inv(q))


def eig_weighted(x, a):
    w = np.linalg.eig(a)[0]
    return np.sum(np.abs(w * x))


def test_eig_of_a_constant_real_matrix_with_a_complex_spectrum():
    # eig's kind came from a random stand-in: real for a 2 x 2 matrix, complex for a 3 x 3 one;
    # taken as real, a complex spectrum went through |.|'s rule for real numbers and the
    # gradient in x came out complex and wrong
    a = np.array([[0.2, -1.0], [1.0, 0.1]])
    x = np.array([0.5, -0.7])
    g = s2sad.grad(eig_weighted, wrt=0)(x, a)
    assert_close(g, numerical_grad(eig_weighted, [x, a], (0,))[0])


# -- autograd's complex-input linalg tests, in JAX's convention (tests/rules/test_complex.py) --

def c_norm(x): return np.linalg.norm(x)
def c_norm_axes01(x): return np.linalg.norm(x, axis=(0, 1))
def c_norm_axis(x): return np.linalg.norm(x, axis=1)
def c_norm_ord3(x): return np.linalg.norm(x, ord=3)
def c_norm_ord4(x): return np.linalg.norm(x, ord=4)
def c_nuclear(x): return np.linalg.norm(x, ord="nuc")
def c_nuclear_axes01(x): return np.linalg.norm(x, ord="nuc", axis=(0, 1))
def c_eigh_abs(x):
    w, v = np.linalg.eigh(x + np.conj(x.T))
    return w, np.abs(v)
def c_svd_abs(x):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    return np.abs(u), s, np.abs(vh)
def c_eig_abs(x):
    w, v = np.linalg.eig(x)
    return w, np.abs(v)


COMPLEX_INPUTS = [(c_norm, (6,)), (c_norm, (6, 5)), (c_norm_axes01, (6, 5, 4)),
                  (c_norm_axis, (6, 5, 4)), (c_norm_ord3, (6,)), (c_norm_ord4, (6,)),
                  (c_nuclear, (6, 5)), (c_nuclear_axes01, (6, 5, 4)), (c_eigh_abs, (5, 5)),
                  (c_svd_abs, (3, 5)), (c_svd_abs, (5, 3)), (c_eig_abs, (5, 5))]


@pytest.mark.parametrize("f, shape", COMPLEX_INPUTS,
                         ids=[f"{f.__name__}{list(s)}" for f, s in COMPLEX_INPUTS])
def test_complex_inputs(f, shape):
    from tests.rules.test_complex import check_jvp, check_vjp, crandn

    x = crandn(shape)
    check_jvp(f, [x])
    check_vjp(f, [x])


def by_length(x):
    out = svd_thin(x)  # a helper returning three values
    if len(out) == 2:
        return np.sum(out[0] ** 2) + out[5]  # never runs: a tuple of 3 has no item 5
    return np.sum(out[1] ** 2) + np.sum(out[2] * 0.3)


def by_length_expression(x):
    out = eigh_lower(x)  # two values
    return np.sum(out[0] ** 2) if len(out) == 2 else np.sum(out[2])


def test_branches_that_cannot_run_are_not_lowered():
    # len() of a tuple of known length decides the test while compiling, as a constant
    # does: the branch that cannot run was lowered and refused ("tuple index out of range")
    check_both_modes(by_length, [R.standard_normal((3, 4))], rtol=1e-4)
    check_both_modes(by_length_expression, [spd(4)], rtol=1e-4)


def eig_curvature(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(w) ** 2) + np.sum(np.cos(np.abs(v)))


def test_hessian_through_eig():
    # vector mode: the zero tangent of np.eye in eig's rules (inverse gaps) was made
    # concrete after batching, like the unbatched eye: broadcast error (3, 3, 9) vs (3, 3)
    q = R.standard_normal((3, 3)) + 3.0 * np.eye(3)
    check_second_order(eig_curvature, [q @ np.diag([0.5, 3.0, 6.0]) @ np.linalg.inv(q)])


# -- scipy.linalg, scipy.signal, scipy.integrate (the rest of autograd's test_scipy.py) -------

spla = pytest.importorskip("scipy.linalg")
signal = pytest.importorskip("scipy.signal")
integrate = pytest.importorskip("scipy.integrate")


def tri_lower(a, b): return spla.solve_triangular(a, b, lower=True)
def tri_upper_transposed(a, b): return spla.solve_triangular(a, b, trans=1)
def tri_lower_t_unit(a, b): return spla.solve_triangular(a, b, trans="T", lower=True,
                                                          unit_diagonal=True)


@pytest.mark.parametrize("f", [tri_lower, tri_upper_transposed, tri_lower_t_unit],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("b_shape", [(4,), (4, 3)], ids=["vector", "matrix"])
def test_solve_triangular(f, b_shape):
    # `a` full: finite differences move the triangle SciPy does not read too (no effect)
    rng = rng_for(f.__name__, str(b_shape))
    args = [rng.standard_normal((4, 4)) + 4.0 * np.eye(4), rng.standard_normal(b_shape)]
    check_both_modes(f, args, salt=str(b_shape))

    def total(a, b): return np.sum(f(a, b) ** 2)
    check_second_order(total, args, wrt=0)
    check_second_order(total, args, wrt=1)


def sp_convolve(a, b): return signal.convolve(a, b, mode="full")
def sp_sqrtm(a): return spla.sqrtm(a)
def sp_solve_sylvester(a, b, q): return spla.solve_sylvester(a, b, q)
def sp_expm(a): return spla.expm(a)
def decay(y, t): return -y
def decay_ivp(t, y): return -y
def sp_odeint(y0): return integrate.odeint(decay, y0, np.linspace(0.0, 1.0, 3), rtol=1e-12,
                                           atol=1e-12)
def sp_solve_ivp(y0): return integrate.solve_ivp(decay_ivp, (0.0, 1.0), y0, rtol=1e-10,
                                                atol=1e-10).y


def test_odeint():
    # (its rules: tests/rules/test_scipy_integrate.py)
    check_both_modes(sp_odeint, [np.array([1.0, -2.0, 0.5])])


def test_solve_ivp_without_t_eval():
    # at the times the solver chose (taken as chosen): y_i = exp(-t_i) y0, analytic
    y0 = np.array([1.0, -2.0, 0.5])
    t = integrate.solve_ivp(decay_ivp, (0.0, 1.0), y0, rtol=1e-10, atol=1e-10).t
    u = rng_for("sp_solve_ivp").standard_normal((3, t.size))
    out, pullback = s2sad.vjp(sp_solve_ivp)(y0)
    assert out.shape == (3, t.size)
    assert_close(pullback(u)[0], u @ np.exp(-t), rtol=1e-7, atol=1e-9)
    v = np.array([0.3, 1.0, -0.7])
    assert_close(s2sad.jvp(sp_solve_ivp)(y0, v)[1], np.outer(v, np.exp(-t)), rtol=1e-7,
                 atol=1e-9)


SCIPY_REFUSED = [
    (sp_convolve, lambda: [np.ones(5), np.ones(3)]),
    (sp_sqrtm, lambda: [spd(3)]),
    (sp_solve_sylvester, lambda: [spd(3), spd(3), np.ones((3, 3))]),
    (sp_expm, lambda: [np.eye(3) * 0.1]),
]


@pytest.mark.parametrize("f, make_args", SCIPY_REFUSED, ids=[f.__name__ for f, _ in SCIPY_REFUSED])
def test_scipy_functions_without_rules_are_refused_where_called(f, make_args):
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.vjp(f)(*make_args())
    assert type(err.value).__name__ == "MissingRuleError"
    assert err.value.filename == __file__ and "hint:" in str(err.value)
