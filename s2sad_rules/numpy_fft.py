"""Rules for numpy.fft: fft ifft rfft irfft fft2 ifft2 rfft2 irfft2 fftn ifftn rfftn irfftn
fftshift ifftshift, with `n`/`s`, `axis`/`axes` and `norm`.

Every transform is linear, so its JVP is the same transform of the tangent. A VJP is the
*transpose* of the transform (not its adjoint), following JAX's convention for complex
cotangents: the cotangent of z = x + iy is g (d/dx - i d/dy), so that a change dz changes the
loss by Re(sum(z_bar * dz)). Then:
- fft / fftn: the DFT matrix is symmetric, so the cotangent is the same transform of g (with
  the same `norm`), cut or zero-padded back to the input's length where `n`/`s` padded or cut;
  ifft / ifftn likewise with the inverse transform.
- rfft / rfftn keep the first n//2 + 1 outputs of a real input's fft: the cotangent is the real
  part of the fft of g zero-padded back to n.
- irfft / irfftn read a half spectrum as the Hermitian whole: the cotangent is ifft(g) on the
  first n//2 + 1 entries, doubled except at 0 and at n/2 (the entries that stand for
  themselves only).
- A real input gets the real part of its complex cotangent.
`n`, `s`, `axis`, `axes` and `norm` must be known at compile time; rfft/rfftn of a complex input
(NumPy drops the imaginary part) and `out=` are refused. fftshift and ifftshift are each
other's transposes.
"""

import numpy as np

from s2sad_rules.operators import real_like
from s2sad_rules.registry import Unknown, def_linear, def_nondiff, defcheck, defjvp, defvjp


@def_nondiff
def fft_axes(ndim, s, axes, default):
    """The transformed axes, normalised (default: "last" for the 1-D transforms, "two" for
    fft2 and friends, "all" for fftn: every axis, or the last len(s) with `s`)."""
    if axes is None:
        if default == "two":
            axes = (-2, -1)
        elif s is not None:
            axes = tuple(range(-len(s), 0))
        else:
            axes = tuple(range(ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    return tuple(a % ndim for a in axes)


@def_nondiff
def fft_lengths(shape, s, axes):
    """The transform's length along each of `axes` (from `s`, else the input's)."""
    if s is None:
        return tuple(shape[a] for a in axes)
    if isinstance(s, int):
        return (s,)
    return tuple(s)


@def_nondiff
def crop_index(shape, target):
    """The slices that cut an array of `shape` down to at most `target` along every axis."""
    return tuple(slice(0, min(n, t)) for n, t in zip(shape, target))


@def_nondiff
def pad_widths(shape, target):
    """np.pad widths growing an array of at most `target` up to it (zeros at the end)."""
    return tuple((0, max(t - n, 0)) for n, t in zip(shape, target))


@def_nondiff
def half_spectrum_shape(shape, axis, n):
    """`shape` with the length along `axis` set to n (a whole spectrum of n entries)."""
    return tuple(n if i == axis else m for i, m in enumerate(shape))


@def_nondiff
def hermitian_cuts(n):
    """(m, k): irfft of length n reads m = n//2 + 1 entries; entries 1..k-1 stand for two."""
    m = n // 2 + 1
    return (m, m - 1 if n % 2 == 0 else m)


def fit_to(x, shape):
    """x cut or zero-padded at the end of each axis to `shape` (the transpose of padding or
    cutting an input to a transform's length)."""
    if np.shape(x) == shape:
        return x
    cut = x[crop_index(np.shape(x), shape)]
    return np.pad(cut, pad_widths(np.shape(cut), shape))


def c2c_bar(g, a, s, axes, norm, default, inverse):
    """Cotangent of a complex transform (fft, ifft, fftn, ...): the same transform of g."""
    ax = fft_axes(np.ndim(a), s, axes, default)
    if inverse:
        z = np.fft.ifftn(g, None, ax, norm)
    else:
        z = np.fft.fftn(g, None, ax, norm)
    return real_like(fit_to(z, np.shape(a)), a)


def r2c_bar(g, a, s, axes, norm, default):
    """Cotangent of rfft / rfftn: the real part of the fft of g padded to the full spectrum."""
    ax = fft_axes(np.ndim(a), s, axes, default)
    lengths = fft_lengths(np.shape(a), s, ax)
    full = fit_to(g, half_spectrum_shape(np.shape(g), ax[-1], lengths[-1]))
    return fit_to(np.real(np.fft.fftn(full, None, ax, norm)), np.shape(a))


def c2r_bar(g, a, s, axes, norm, default):
    """Cotangent of irfft / irfftn: ifft of g on the half spectrum, doubled where an entry
    stands for itself and its mirror image."""
    ax = fft_axes(np.ndim(a), s, axes, default)
    n = np.shape(g)[ax[-1]]
    cuts = hermitian_cuts(n)
    z = np.moveaxis(np.fft.ifftn(g, None, ax, norm), ax[-1], -1)
    half = np.concatenate([z[..., :1], 2.0 * z[..., 1:cuts[1]], z[..., cuts[1]:cuts[0]]], -1)
    return real_like(fit_to(np.moveaxis(half, -1, ax[-1]), np.shape(a)), a)


@defcheck(np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn,
          np.fft.irfft, np.fft.irfft2, np.fft.irfftn)
def fft_check(a, n=None, s=None, axis=-1, axes=None, norm=None):
    if any(isinstance(v, Unknown) for v in (n, s, axis, axes, norm)):
        return "`n`, `s`, `axis`, `axes` or `norm` not known at compile time"
    return None


@defcheck(np.fft.rfft, np.fft.rfft2, np.fft.rfftn)
def rfft_check(a, n=None, s=None, axis=-1, axes=None, norm=None):
    if isinstance(a, Unknown) and a.dtype == "c":
        return "a complex input (rfft drops its imaginary part; use fft)"
    return fft_check(a, n, s, axis, axes, norm)


# -- one axis -------------------------------------------------------------------------------


@defjvp(np.fft.fft)
def fft_jvp(a, n=None, axis=-1, norm=None, a_dot=0.0):
    return np.fft.fft(a_dot, n, axis, norm)


@defvjp(np.fft.fft, wrt=("a",))
def fft_vjp(g, a, n=None, axis=-1, norm=None):
    return c2c_bar(g, a, None, axis, norm, "last", False)


@defjvp(np.fft.ifft)
def ifft_jvp(a, n=None, axis=-1, norm=None, a_dot=0.0):
    return np.fft.ifft(a_dot, n, axis, norm)


@defvjp(np.fft.ifft, wrt=("a",))
def ifft_vjp(g, a, n=None, axis=-1, norm=None):
    return c2c_bar(g, a, None, axis, norm, "last", True)


@defjvp(np.fft.rfft)
def rfft_jvp(a, n=None, axis=-1, norm=None, a_dot=0.0):
    return np.fft.rfft(a_dot, n, axis, norm)


@defvjp(np.fft.rfft, wrt=("a",))
def rfft_vjp(g, a, n=None, axis=-1, norm=None):
    return r2c_bar(g, a, None if n is None else (n,), axis, norm, "last")


@defjvp(np.fft.irfft)
def irfft_jvp(a, n=None, axis=-1, norm=None, a_dot=0.0):
    return np.fft.irfft(a_dot, n, axis, norm)


@defvjp(np.fft.irfft, wrt=("a",))
def irfft_vjp(g, a, n=None, axis=-1, norm=None):
    return c2r_bar(g, a, None, axis, norm, "last")


# -- two and more axes ----------------------------------------------------------------------


@defjvp(np.fft.fft2)
def fft2_jvp(a, s=None, axes=(-2, -1), norm=None, a_dot=0.0):
    return np.fft.fft2(a_dot, s, axes, norm)


@defvjp(np.fft.fft2, wrt=("a",))
def fft2_vjp(g, a, s=None, axes=(-2, -1), norm=None):
    return c2c_bar(g, a, s, axes, norm, "two", False)


@defjvp(np.fft.ifft2)
def ifft2_jvp(a, s=None, axes=(-2, -1), norm=None, a_dot=0.0):
    return np.fft.ifft2(a_dot, s, axes, norm)


@defvjp(np.fft.ifft2, wrt=("a",))
def ifft2_vjp(g, a, s=None, axes=(-2, -1), norm=None):
    return c2c_bar(g, a, s, axes, norm, "two", True)


@defjvp(np.fft.fftn)
def fftn_jvp(a, s=None, axes=None, norm=None, a_dot=0.0):
    return np.fft.fftn(a_dot, s, axes, norm)


@defvjp(np.fft.fftn, wrt=("a",))
def fftn_vjp(g, a, s=None, axes=None, norm=None):
    return c2c_bar(g, a, s, axes, norm, "all", False)


@defjvp(np.fft.ifftn)
def ifftn_jvp(a, s=None, axes=None, norm=None, a_dot=0.0):
    return np.fft.ifftn(a_dot, s, axes, norm)


@defvjp(np.fft.ifftn, wrt=("a",))
def ifftn_vjp(g, a, s=None, axes=None, norm=None):
    return c2c_bar(g, a, s, axes, norm, "all", True)


@defjvp(np.fft.rfft2)
def rfft2_jvp(a, s=None, axes=(-2, -1), norm=None, a_dot=0.0):
    return np.fft.rfft2(a_dot, s, axes, norm)


@defvjp(np.fft.rfft2, wrt=("a",))
def rfft2_vjp(g, a, s=None, axes=(-2, -1), norm=None):
    return r2c_bar(g, a, s, axes, norm, "two")


@defjvp(np.fft.rfftn)
def rfftn_jvp(a, s=None, axes=None, norm=None, a_dot=0.0):
    return np.fft.rfftn(a_dot, s, axes, norm)


@defvjp(np.fft.rfftn, wrt=("a",))
def rfftn_vjp(g, a, s=None, axes=None, norm=None):
    return r2c_bar(g, a, s, axes, norm, "all")


@defjvp(np.fft.irfft2)
def irfft2_jvp(a, s=None, axes=(-2, -1), norm=None, a_dot=0.0):
    return np.fft.irfft2(a_dot, s, axes, norm)


@defvjp(np.fft.irfft2, wrt=("a",))
def irfft2_vjp(g, a, s=None, axes=(-2, -1), norm=None):
    return c2r_bar(g, a, s, axes, norm, "two")


@defjvp(np.fft.irfftn)
def irfftn_jvp(a, s=None, axes=None, norm=None, a_dot=0.0):
    return np.fft.irfftn(a_dot, s, axes, norm)


@defvjp(np.fft.irfftn, wrt=("a",))
def irfftn_vjp(g, a, s=None, axes=None, norm=None):
    return c2r_bar(g, a, s, axes, norm, "all")


# -- shifts: permutations, each the other's transpose ---------------------------------------


@defjvp(np.fft.fftshift)
def fftshift_jvp(x, axes=None, x_dot=0.0):
    return np.fft.fftshift(x_dot, axes)


@defvjp(np.fft.fftshift, wrt=("x",))
def fftshift_vjp(g, x, axes=None):
    return np.fft.ifftshift(g, axes)


@defjvp(np.fft.ifftshift)
def ifftshift_jvp(x, axes=None, x_dot=0.0):
    return np.fft.ifftshift(x_dot, axes)


@defvjp(np.fft.ifftshift, wrt=("x",))
def ifftshift_vjp(g, x, axes=None):
    return np.fft.fftshift(g, axes)


def_linear(np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.fft2, np.fft.ifft2,
           np.fft.rfft2, np.fft.irfft2, np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn,
           np.fft.fftshift, np.fft.ifftshift, wrt=(0,))
