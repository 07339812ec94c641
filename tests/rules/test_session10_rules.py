"""Rules added after probing like another AD library's users: builtin `sum` with `start`,
`np.diff` with `prepend`/`append`, np.nanmax/np.nanmin, np.polyval, np.convolve and
np.correlate. JVP and VJP against finite differences and each other (check_both_modes); the
rule table's cases and property specs cover each rule's argument space as well."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.rules.test_issue13_regressions import check_both_modes


def sum_start(x, y): return sum([x, y * x], 0.5) * y
def sum_start_keyword(x, y): return sum((x * 2.0, np.sin(y)), start=y * y)
def sum_start_broadcast(x): return sum([x[0], x[1] * x[2]], np.ones(2) * x[1])
def sum_empty_start(x): return sum([], x * 3.0)
def sum_mixed_shapes(x): return np.sum(sum([x[0], x * 2.0]))

def diff_prepend_only(c, p): return np.diff(np.ones(4) * c, prepend=p, append=p * 2.0)
def diff_number_parts(a, p, q): return np.diff(a, 2, 0, p, q)
def diff_parts_n0(a, p): return np.diff(a, n=0, prepend=p)

def nanmax_holes(x): return np.nanmax(x + np.array([np.nan, 0.0, 0.0, 0.0]), axis=1)
def nanmin_holes(x): return np.nanmin(x + np.array([[np.nan], [0.0], [0.0]]), axis=0,
                                      keepdims=True)

def polyval_scalar(p, x): return np.polyval(p, x)
def polyval_constant_poly(p, x): return np.polyval(p, x) * x
def polyval_list(a, x): return np.polyval([a, 1.5, a * a], x)

def convolve_same(a, v): return np.convolve(a, v, "same")
def convolve_valid_int(a, v): return np.convolve(a, v, 0)
def correlate_same(a, v): return np.correlate(a, v, "same")
def correlate_full(a, v): return np.correlate(a, v, mode="full")
def correlate_complex(a, v): return np.abs(np.sum(np.correlate(a, v)))


@pytest.mark.parametrize("f, args", [
    (sum_start, (0.7, -0.3)),
    (sum_start_keyword, (0.7, -0.3)),
    (sum_start_broadcast, (np.array([0.3, 0.5, 0.9]),)),
    (sum_empty_start, (0.4,)),
])
def test_builtin_sum_with_start(f, args):
    check_both_modes(f, args)


def test_sum_of_items_of_different_shapes_is_refused_where_written():
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.grad(sum_mixed_shapes)(np.array([0.3, 0.5, 0.9]))
    assert type(err.value).__name__ == "MissingRuleError"
    assert "different shapes" in str(err.value)
    assert err.value.filename == __file__ and err.value.lineno is not None


def test_diff_with_a_constant_array_and_a_differentiated_prepend():
    # np.diff(0, prepend=p) is not 0: np.diff is not marked linear (a zero tangent of `a`
    # must not zero the tangent); the JVP was 0 while the VJP was right
    check_both_modes(diff_prepend_only, (0.0, 0.7))
    _, t = s2sad.jvp(diff_prepend_only, wrt=1)(0.0, 0.7, 1.0)
    assert np.allclose(t, [-1.0, 0.0, 0.0, 0.0, 2.0])


@pytest.mark.parametrize("p, q", [(0.5, -0.2), (np.array([[0.1, 0.2, 0.3]]), np.ones((2, 3)))])
def test_diff_with_parts(p, q):
    a = np.random.default_rng(0).normal(size=(4, 3))
    check_both_modes(diff_number_parts, (a, p, q))


def test_diff_of_order_zero_ignores_its_parts():
    a = np.array([0.5, -1.0, 2.0])
    (a_bar, p_bar) = s2sad.vjp(diff_parts_n0, wrt=(0, 1))(a, 0.3)[1](np.ones(3))
    assert np.array_equal(a_bar, np.ones(3)) and p_bar == 0.0


def test_nanmax_and_nanmin_skip_nans():
    x = np.array([[1.0, 2.0, 3.0, -4.0], [0.5, 2.5, -3.0, 1.0], [0.2, 0.1, 0.0, 0.3]])
    check_both_modes(nanmax_holes, (x,))
    check_both_modes(nanmin_holes, (x,))
    g = s2sad.grad(lambda_free_nanmax)(x)
    assert g[0, 0] == 0.0 and g[1, 0] == 0.0 and g[2, 0] == 0.0  # the NaN column: none


def lambda_free_nanmax(x):
    return np.sum(np.nanmax(x + np.array([np.nan, 0.0, 0.0, 0.0]), axis=1))


@pytest.mark.parametrize("n", [1, 2, 5])
def test_polyval(n):
    rng = np.random.default_rng(n)
    check_both_modes(polyval_scalar, (rng.normal(size=n), 0.8))
    check_both_modes(polyval_scalar, (rng.normal(size=n), rng.normal(size=(2, 3))))
    check_both_modes(polyval_constant_poly, (rng.normal(size=n), rng.normal(size=4)))


def test_polyval_derivative_in_x_is_the_derivative_polynomial():
    # p = x^3 - 2x + 1: p'(x) = 3x^2 - 2
    x = np.array([-1.0, 0.0, 2.0])
    _, t = s2sad.jvp(polyval_scalar, wrt=1)(np.array([1.0, 0.0, -2.0, 1.0]), x, np.ones(3))
    assert np.allclose(t, 3 * x ** 2 - 2)


def test_polyval_of_a_list_of_coefficients():
    check_both_modes(polyval_list, (0.3, np.array([1.7, -0.4])))


@pytest.mark.parametrize("f", [convolve_same, convolve_valid_int, correlate_same,
                               correlate_full])
@pytest.mark.parametrize("m, n", [(4, 3), (2, 5), (3, 3), (1, 4)])
def test_convolve_and_correlate(f, m, n):
    rng = np.random.default_rng(m * 10 + n)
    check_both_modes(f, (rng.normal(size=m), rng.normal(size=n)))


def test_convolve_of_complex_signals():
    rng = np.random.default_rng(1)
    a = rng.normal(size=4) + 1j * rng.normal(size=4)
    v = rng.normal(size=3) + 1j * rng.normal(size=3)
    da, dv = rng.normal(size=4) + 0j, rng.normal(size=3) + 1j * rng.normal(size=3)
    _, t = s2sad.jvp(convolve_same, wrt=(0, 1))(a, v, da, dv)
    h = 1e-7
    fd = (convolve_same(a + h * da, v + h * dv) - convolve_same(a - h * da, v - h * dv)) / (2 * h)
    assert np.allclose(t, fd, atol=1e-6)
    u = rng.normal(size=4) + 1j * rng.normal(size=4)
    a_bar, v_bar = s2sad.vjp(convolve_same, wrt=(0, 1))(a, v)[1](u)
    # JAX's convention: the transpose, without conjugates
    assert np.isclose(np.sum(u * t), np.sum(a_bar * da) + np.sum(v_bar * dv))


def test_correlate_refuses_complex_arguments():
    a = np.array([1.0 + 1.0j, 2.0, 0.5])
    with pytest.raises(s2sad.S2SADError, match="complex"):
        s2sad.grad(correlate_complex)(a, a)


def cast_index(w):
    new_w = w[:, :-1]
    rows = np.int64(w[:, -1])
    return new_w[rows].sum() * np.int32(2.9) + np.sum(w * np.digitize(w, [0.0, 0.5]))


def test_integer_casts_carry_no_derivative():
    # (np.int64 of an index column, as in autograd's test_cast_to_int: it was refused)
    w = np.random.default_rng(2).normal(size=(5, 4))
    w[:, -1] = [1.2, 0.3, 2.7, 2.1, 0.4]
    check_both_modes(cast_index, (w,))


def item_times(x): return x.item() * x


def test_item_of_a_one_entry_array():
    # x.item() had no rule: lowering inlined prims.item, which calls .item() again
    # (RecursionLimitError)
    check_both_modes(item_times, (np.array([0.7]),))
    assert np.allclose(s2sad.hessian(item_times)(np.array([0.7])), [[2.0]])


def test_item_of_a_complex_number_keeps_its_imaginary_part():
    # its kind was taken for a real number's: the cotangent of z.item() lost its imaginary
    # part (d/dz z^2 = 2z, transposed: 2 z u)
    z, u = np.complex128(0.3 + 0.4j), np.complex128(0.7 + 0.1j)
    (z_bar,) = s2sad.vjp(item_times)(z)[1](u)
    assert np.isclose(z_bar, 2 * z * u)
    _, t = s2sad.jvp(item_times)(z, np.complex128(0.2 - 0.5j))
    assert np.isclose(t, 2 * z * (0.2 - 0.5j))


def complex64_times(z): return np.complex64(2.0) * z + z * z
def complex_of_real(x): return np.abs(complex(x) * (1.0 + 2.0j)) ** 2
def complex128_of_real(x): return np.real(np.complex128(x) * np.exp(1j * x))


def test_complex_casts():
    # np.complex64(2.0) was an opaque call of unknown kind, taken for a real number: the
    # cotangent of np.complex64(2.0) * z lost its imaginary part (d/dz = 2 + 2z)
    z, u = np.complex128(0.6 + 0.8j), np.complex128(0.7 + 0.4j)
    (z_bar,) = s2sad.vjp(complex64_times)(z)[1](u)
    assert np.isclose(z_bar, (2.0 + 2 * z) * u)
    check_both_modes(complex_of_real, (0.7,))
    check_both_modes(complex128_of_real, (0.7,))


def diff_parts_squared(x): return np.sum(np.diff(x * x, prepend=x[0], append=x[-1] ** 2) ** 2)


def test_second_derivatives_of_diff_with_parts():
    # forward over reverse batches the JVP's arguments: the parts were passed as keywords,
    # which vector mode does not batch (a broadcasting error)
    x = np.array([0.3, -0.5, 0.9])
    h = 1e-5
    fd = np.stack([(s2sad.grad(diff_parts_squared)(x + h * e)
                    - s2sad.grad(diff_parts_squared)(x - h * e)) / (2 * h) for e in np.eye(3)])
    assert np.allclose(s2sad.hessian(diff_parts_squared)(x), fd, rtol=1e-5, atol=1e-7)
    assert np.allclose(s2sad.jacfwd(s2sad.grad(diff_parts_squared))(x), fd, rtol=1e-5,
                       atol=1e-7)


KNOTS = np.array([0.0, 0.5, 1.0, 1.5])


def interp_squares(x, fp): return np.sum(np.interp(x, KNOTS, fp) ** 2)
def interp_ends(x, fp, left, right): return np.interp(x, KNOTS, fp, left, right) * x


def test_interp_against_finite_differences():
    # points inside the segments and outside the knots' range (not at a knot: a kink)
    x = np.array([-0.3, 0.2, 0.7, 1.2, 1.9])
    fp = np.array([1.0, 3.0, 2.0, 0.5])
    check_both_modes(interp_squares, (x, fp))
    check_both_modes(interp_ends, (x, fp, -1.0, 0.25))


def test_interp_textbook_values():
    # slope of the segment; 0 outside the range; linear in fp with hat-function weights
    fp = np.array([1.0, 3.0, 2.0, 0.5])
    _, t = s2sad.jvp(interp_points)(np.array([0.2, 1.9]), np.ones(2))
    assert np.allclose(t, [(3.0 - 1.0) / 0.5, 0.0])
    (fp_bar,) = s2sad.vjp(interp_values)(fp)[1](1.0)
    assert np.allclose(fp_bar, [0.0, 0.6, 0.4, 0.0])  # 0.7 lies 40% of the way from 0.5 to 1


def interp_points(x): return np.interp(x, KNOTS, np.array([1.0, 3.0, 2.0, 0.5]))
def interp_values(fp): return np.interp(0.7, KNOTS, fp)


def uses_hasattr(x):
    if hasattr(np, "trapezoid"):
        return np.trapezoid(x * x)
    return np.trapz(x * x)


def test_hasattr_of_a_module_is_a_constant():
    x = np.array([0.3, -0.5, 0.9])
    # the branch this NumPy cannot run is not lowered; trapezoid weighs x^2 by 1/2, 1, 1/2
    assert np.allclose(s2sad.grad(uses_hasattr)(x), [0.3, -1.0, 0.9])


def trapezoid_dx(y, dx): return np.trapezoid(y * y, dx=dx)
def trapezoid_x(y): return np.trapezoid(np.sin(y), x=[0.0, 1.0, 3.0, 4.0], axis=1)


def test_trapezoid():
    y = np.array([0.3, -0.5, 0.9, 1.2])
    check_both_modes(trapezoid_dx, (y, 0.5))
    check_both_modes(trapezoid_x, (np.arange(8.0).reshape(2, 4) / 7.0,))


def diff_appended(x, q): return np.diff(x, n=2, axis=0, append=q)


def test_second_derivatives_of_diff_with_append_only():
    # the JVP passes `append` by position after np._NoValue for `prepend`: differentiated
    # again, that placeholder was taken for a given prepend (shapes (2,) != (1,))
    x, q = np.array([[0.5, -1.0], [2.0, 0.3], [0.7, 0.1]]), np.array([[0.4, -0.2]])

    def jvp_in_x(x, q):
        return s2sad.jvp(diff_appended, wrt=(0, 1))(x, q, np.ones_like(x), 2.0 * q)[1]

    check_both_modes(jvp_in_x, (x, q))
