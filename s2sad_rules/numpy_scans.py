"""Rules for NumPy statistics, NaN-aware reductions and scans: var std ptp average nansum
nanmean cumsum cumprod trace diff gradient.

Conventions: `ptp` follows `max`/`min` (ties share the derivative evenly); `cumprod`, like
`prod`, is differentiated by division and is valid where no factor is zero; `nansum` and
`nanmean` give NaN entries a zero derivative; `var` and `std` of a complex input are real
(the mean of |a - mean(a)|^2) with cotangent 2 g conj(a - mean(a)) / (n - ddof) (JAX's
convention); `std` at a zero spread has derivative 0 (the
zero subgradient, as `norm` at 0). `np.sqrt(np.var(x))` written out differs: sqrt's slope is
infinite at 0, and the chain rule gives NaN there. `gradient` is covered along one axis with a
scalar spacing, `edge_order` 1 or 2 (coordinate arrays and several axes are refused).
"""

import numpy as np

from s2sad.ir.prims import unbroadcast, zeros_like
from s2sad_rules.kind_tests import is_complex
from s2sad_rules.numpy_reductions import expand_reduced
from s2sad_rules.refusals import supported
from s2sad_rules.registry import Unknown, def_linear, def_nondiff, defcheck, defjvp, defvjp


def centered(a, axis):
    return a - np.mean(a, axis=axis, keepdims=True)


def centered_conj(a, axis):
    """conj(a - mean(a)): the slope of the spread |a - mean|^2 (JAX's convention for a
    complex `a`: the cotangent of z = x + iy is dL/dx - i dL/dy)."""
    if is_complex(a):
        return np.conj(centered(a, axis))
    return centered(a, axis)


def spread_tangent(c, a_dot, axis, keepdims):
    """sum(c * a_dot) along `axis`, its real part for a complex input (var is real)."""
    if is_complex(c):
        return np.real(np.sum(c * a_dot, axis=axis, keepdims=keepdims))
    return np.sum(c * a_dot, axis=axis, keepdims=keepdims)


def count_reduced(a, ans):
    """How many input entries each result entry of a reduction summarises."""
    return np.size(a) / np.size(ans)


@defcheck(np.var, np.std)
def spread_check(dtype=None, out=None):
    if out is not None:
        return "`out=` (write the result to a new array)"
    if dtype is not None and not isinstance(dtype, Unknown) and \
            np.dtype(dtype).kind not in "fc":
        return f"dtype={dtype!r} (an integer result carries no derivative)"
    return None


@defjvp(np.var)
def var_jvp(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, a_dot=0.0, ans=0.0):
    n = count_reduced(a, ans)
    return 2.0 * spread_tangent(centered_conj(a, axis), a_dot, axis, keepdims) / (n - ddof)


@defvjp(np.var)
def var_vjp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    n = count_reduced(a, ans)
    return 2.0 * expand_reduced(g, a, axis, keepdims) * centered_conj(a, axis) / (n - ddof)


@defjvp(np.std)
def std_jvp(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, a_dot=0.0, ans=0.0):
    n = count_reduced(a, ans)
    spread = ans + (ans == 0)  # 1 where std is 0: the numerator is 0 there too
    return spread_tangent(centered_conj(a, axis), a_dot, axis, keepdims) / ((n - ddof) * spread)


@defvjp(np.std)
def std_vjp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    n = count_reduced(a, ans)
    scale = expand_reduced(g / (ans + (ans == 0)), a, axis, keepdims) / (n - ddof)
    return scale * centered_conj(a, axis)


def extreme_share(a, ans, axis, keepdims):
    """1/count on the entries equal to the reduction's result (ties share evenly), else 0."""
    mask = a == expand_reduced(ans, a, axis, keepdims)
    return mask / np.sum(mask, axis=axis, keepdims=True)


@defjvp(np.ptp)
def ptp_jvp(a, axis=None, out=None, keepdims=False, a_dot=0.0):
    hi = extreme_share(a, np.max(a, axis=axis, keepdims=keepdims), axis, keepdims)
    lo = extreme_share(a, np.min(a, axis=axis, keepdims=keepdims), axis, keepdims)
    return np.sum(a_dot * (hi - lo), axis=axis, keepdims=keepdims)


@defvjp(np.ptp)
def ptp_vjp(g, a, axis=None, out=None, keepdims=False):
    hi = extreme_share(a, np.max(a, axis=axis, keepdims=keepdims), axis, keepdims)
    lo = extreme_share(a, np.min(a, axis=axis, keepdims=keepdims), axis, keepdims)
    return expand_reduced(g, a, axis, keepdims) * (hi - lo)


@defjvp(np.nansum)
def nansum_jvp(a, axis=None, dtype=None, out=None, keepdims=False, a_dot=0.0):
    return np.sum(np.where(np.isnan(a), 0.0, a_dot), axis=axis, keepdims=keepdims)


@defvjp(np.nansum)
def nansum_vjp(g, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.where(np.isnan(a), 0.0, expand_reduced(g, a, axis, keepdims))


@defjvp(np.nanmean)
def nanmean_jvp(a, axis=None, dtype=None, out=None, keepdims=False, a_dot=0.0):
    kept = ~np.isnan(a)
    return np.sum(np.where(kept, a_dot, 0.0), axis=axis, keepdims=keepdims) / np.sum(
        kept, axis=axis, keepdims=keepdims)


@defvjp(np.nanmean)
def nanmean_vjp(g, a, axis=None, dtype=None, out=None, keepdims=False):
    kept = ~np.isnan(a)
    count = np.sum(kept, axis=axis, keepdims=True)
    return np.where(kept, expand_reduced(g, a, axis, keepdims) / count, 0.0)


@defjvp(np.average)
def average_jvp(a, axis=None, weights=None, returned=False, a_dot=0.0, weights_dot=0.0,
                ans=0.0):
    refused = supported(not returned, "np.average", "returned", returned)
    if weights is None:
        return np.mean(a_dot, axis=axis) + refused
    w = weights_like(weights, a, axis)
    spread = a - expand_reduced(ans, a, axis, False)
    return (np.sum(a_dot * w, axis=axis) + np.sum(
        spread * weights_like(weights_dot, a, axis), axis=axis)) / np.sum(w, axis=axis) + refused


@defvjp(np.average, wrt=("a", "weights"))
def average_vjp(g, ans, a, axis=None, weights=None, returned=False):
    g = g + supported(not returned, "np.average", "returned", returned)
    if weights is None:
        return np.broadcast_to(expand_reduced(g, a, axis, False) / count_reduced(a, ans),
                               np.shape(a)), None
    w = weights_like(weights, a, axis)
    share = expand_reduced(g / np.sum(w, axis=axis), a, axis, False)
    spread = a - expand_reduced(ans, a, axis, False)
    w_bar = unbroadcast(share * spread, w)
    return share * w, np.reshape(w_bar, np.shape(weights))


def weights_like(w, a, axis):
    """np.average's 1-D weights along `axis`, reshaped to broadcast against `a`."""
    if np.ndim(w) == np.ndim(a):
        return w
    return np.reshape(w, weights_shape(np.ndim(a), axis, np.size(w)))


@def_nondiff
def weights_shape(ndim, axis, n):
    return tuple(n if i == axis % ndim else 1 for i in range(ndim))


@defjvp(np.cumsum)
def cumsum_jvp(a, axis=None, dtype=None, out=None, a_dot=0.0):
    return np.cumsum(a_dot, axis=axis)


@defvjp(np.cumsum)
def cumsum_vjp(g, a, axis=None, dtype=None, out=None):
    return np.reshape(reverse_cumsum(g, axis), np.shape(a))


def reverse_cumsum(g, axis):
    """Sums from the end: the transpose of cumsum (flattened when `axis` is None)."""
    if axis is None:
        return np.flip(np.cumsum(np.flip(g)))
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


@defjvp(np.cumprod)
def cumprod_jvp(a, axis=None, dtype=None, out=None, a_dot=0.0, ans=0.0):
    # valid where no factor is zero (axis=None flattens, as cumprod does)
    return ans * np.cumsum(a_dot / a, axis=axis)


@defvjp(np.cumprod)
def cumprod_vjp(g, ans, a, axis=None, dtype=None, out=None):
    return np.reshape(reverse_cumsum(g * ans, axis), np.shape(a)) / a


@defjvp(np.trace)
def trace_jvp(a, offset=0, axis1=0, axis2=1, dtype=None, out=None, a_dot=0.0):
    return np.trace(a_dot, offset, axis1, axis2)


@defvjp(np.trace)
def trace_vjp(g, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    eye = np.eye(np.shape(a)[axis1], np.shape(a)[axis2], offset)
    on_diagonal = np.expand_dims(np.expand_dims(g, -1), -1) * eye
    return np.moveaxis(on_diagonal, (-2, -1), (axis1, axis2))


@defjvp(np.diff)
def diff_jvp(a, n=1, axis=-1, a_dot=0.0):
    return np.diff(a_dot, n, axis)


@defvjp(np.diff)
def diff_vjp(g, a, n=1, axis=-1):
    # the transpose of one difference is minus the difference of the zero-padded cotangent
    width = diff_pad_width(np.ndim(a), axis)
    for _ in range(n):
        g = -np.diff(np.pad(g, width), 1, axis)
    return g


@def_nondiff
def diff_pad_width(ndim, axis):
    return tuple((1, 1) if i == axis % ndim else (0, 0) for i in range(ndim))


@defcheck(np.gradient)
def gradient_check(f, varargs=1.0, axis=None, edge_order=1):
    ndim = f.ndim if isinstance(f, Unknown) else np.ndim(f)
    if isinstance(axis, Unknown) or isinstance(edge_order, Unknown):
        return "an `axis` or `edge_order` not known at compile time"
    if not isinstance(axis, int) and ndim != 1:
        return "several axes at once (a tuple of results): pass one integer `axis`"
    spacing_ndim = varargs.ndim if isinstance(varargs, Unknown) else np.ndim(varargs)
    if spacing_ndim != 0:
        return "coordinate arrays as spacing (pass one scalar spacing)"
    return None


@defjvp(np.gradient)
def gradient_jvp(f, varargs=1.0, axis=None, edge_order=1, f_dot=0.0):
    return np.gradient(f_dot, varargs, axis=axis, edge_order=edge_order)


@defvjp(np.gradient, wrt=("f",))
def gradient_vjp(g, f, varargs=1.0, axis=None, edge_order=1):
    # the transpose of the difference stencil: central differences inside, one-sided ones
    # (of first or second order) at both ends, along one axis with uniform spacing
    ax = 0 if axis is None else axis
    rows = np.moveaxis(g, ax, 0) / varargs
    inner = rows[1:-1] / 2.0
    two = zeros_like(rows[:2])
    bar = np.concatenate([two, inner]) - np.concatenate([inner, two])
    head = rows[:1]
    tail = rows[-1:]
    if edge_order == 1:
        rest = zeros_like(rows[2:])
        bar = bar + np.concatenate([-head, head, rest]) + np.concatenate([rest, -tail, tail])
    else:
        rest = zeros_like(rows[3:])
        bar = (bar + np.concatenate([-1.5 * head, 2.0 * head, -0.5 * head, rest])
               + np.concatenate([rest, 0.5 * tail, -2.0 * tail, 1.5 * tail]))
    return np.moveaxis(bar, 0, ax)


def_linear(np.nansum, np.cumsum, np.trace, np.diff, np.gradient, wrt=(0,))
