"""numpy.fft rules (s2sad_rules/numpy_fft.py): real-to-real compositions against finite
differences in both modes, the dot-product test, and JAX's convention for complex inputs."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.rules.test_issue13_regressions import check_both_modes, refused
from tests.oracle import numerical_grad

R = np.random.default_rng(1313)


def both_parts(y):
    return np.real(y) + 2.0 * np.imag(y)


def fft_plain(x): return both_parts(np.fft.fft(x))
def fft_padded(x): return both_parts(np.fft.fft(x, 8, norm="ortho"))
def fft_cut(x): return both_parts(np.fft.fft(x, 3, axis=0, norm="forward"))
def ifft_plain(x): return both_parts(np.fft.ifft(x, axis=0))
def ifft_padded(x): return both_parts(np.fft.ifft(x, 7, norm="ortho"))
def rfft_plain(x): return both_parts(np.fft.rfft(x))
def rfft_n(x): return both_parts(np.fft.rfft(x, 5, axis=0, norm="ortho"))
def irfft_plain(x): return np.fft.irfft(np.fft.rfft(x) * 1.5j + 1.0)
def irfft_odd(x): return np.fft.irfft(np.fft.rfft(x) * (1.0 - 0.5j), 7, norm="forward")
def irfft_cut(x): return np.fft.irfft(np.fft.rfft(x, 8) * 2.0j, 4, axis=0)
def fft2_s(x): return both_parts(np.fft.fft2(x, s=(3, 5)))
def ifft2_axes(x): return both_parts(np.fft.ifft2(x, axes=(0, 2), norm="ortho"))
def rfft2_plain(x): return both_parts(np.fft.rfft2(x))
def irfft2_plain(x): return np.fft.irfft2(np.fft.rfft2(x) ** 2)
def fftn_axes(x): return both_parts(np.fft.fftn(x, axes=(0,)))
def ifftn_s(x): return both_parts(np.fft.ifftn(x, s=(2, 5), axes=(0, 1)))
def rfftn_plain(x): return both_parts(np.fft.rfftn(x, norm="forward"))
def irfftn_s(x): return np.fft.irfftn(np.fft.rfftn(x) * 0.5j + 1.0, s=(4, 6), axes=(0, 1))
def shifts(x): return np.fft.fftshift(x, axes=1) * np.fft.ifftshift(x)
def round_trip(x): return np.real(np.fft.ifft(np.fft.fft(x) * np.array([1.0, 2.0, 3.0, 0.5])))
def power_spectrum(x): return np.abs(np.fft.rfft(x)) ** 2


CASES = [
    (fft_plain, (5,)), (fft_padded, (6,)), (fft_cut, (5, 2)), (ifft_plain, (4, 3)),
    (ifft_padded, (5,)), (rfft_plain, (6,)), (rfft_n, (7, 2)), (irfft_plain, (6,)),
    (irfft_odd, (6,)), (irfft_cut, (6, 2)), (fft2_s, (3, 4)), (ifft2_axes, (2, 3, 4)),
    (rfft2_plain, (3, 4)), (irfft2_plain, (4, 4)), (fftn_axes, (3, 4)), (ifftn_s, (3, 4)),
    (rfftn_plain, (3, 4)), (irfftn_s, (3, 5)), (shifts, (3, 4)), (round_trip, (4,)),
    (power_spectrum, (6,)),
]


@pytest.mark.parametrize("f, shape", CASES, ids=[f.__name__ for f, _ in CASES])
def test_fft_composition_matches_finite_differences(f, shape):
    check_both_modes(f, [R.standard_normal(shape)], rtol=1e-4)


def parseval(x, y): return np.sum(np.abs(np.fft.fft(x + 1j * y)) ** 2)
def spectrum_real_part(x, y): return np.sum(np.real(np.fft.fft(x + 1j * y)) * np.arange(1.0, 5.0))


def test_complex_values_inside_follow_jax():
    # complex arguments are refused at the API; complex values computed inside flow through.
    # sum |fft(x + iy)|^2 = n sum (x^2 + y^2): gradients 2 n x and 2 n y
    x, y = R.standard_normal(4), R.standard_normal(4)
    x_bar, y_bar = s2sad.vjp(parseval)(x, y)[1](1.0)
    assert np.allclose(x_bar, 8 * x) and np.allclose(y_bar, 8 * y)
    # L = Re(w . fft(z)): the cotangent of z is the transpose fft(w) (no conjugate), so
    # dL/dx = Re fft(w) and dL/dy = Re(i fft(w)) = -Im fft(w)
    w = np.arange(1.0, 5.0)
    x_bar, y_bar = s2sad.vjp(spectrum_real_part)(x, y)[1](1.0)
    spectrum = np.fft.fft(w)
    assert np.allclose(x_bar, np.real(spectrum)) and np.allclose(y_bar, -np.imag(spectrum))
    check_both_modes(parseval, [x, y])
    check_both_modes(spectrum_real_part, [x, y])


def test_forward_mode_through_complex_values():
    x, y = R.standard_normal(4), R.standard_normal(4)
    dx, dy = R.standard_normal(4), R.standard_normal(4)
    _, t = s2sad.jvp(parseval)(x, y, dx, dy)
    assert t == pytest.approx(8 * (x @ dx + y @ dy))


def rfft_of_complex(x): return np.abs(np.fft.rfft(x + 1j * x))


def fft_unknown_length(x, n): return np.real(np.fft.fft(x, n))


def test_what_the_rules_cannot_handle_is_refused():
    refused(rfft_of_complex, np.array([1.0, 2.0]), names=("complex",))


def test_a_length_given_by_an_int_argument():
    # (n is a size symbol, issue 34: padded or cut to n, whatever n is; it was refused as
    # "not known at compile time")
    g = s2sad.grad(lambda x, n: np.sum(fft_unknown_length(x, n) ** 2), wrt=0)
    for n in (4, 6, 3, 8):
        x = R.standard_normal(4)
        want = numerical_grad(lambda x_: np.sum(fft_unknown_length(x_, n) ** 2), (x,), (0,))[0]
        np.testing.assert_allclose(g(x, n), want, rtol=1e-6, atol=1e-8)


def weighted_round_trip(x): return np.real(np.fft.ifft(np.fft.fft(x) * np.arange(1.0, 6.0)))


def test_spectrum_weighted_by_arange():
    check_both_modes(weighted_round_trip, [R.standard_normal(5)])
