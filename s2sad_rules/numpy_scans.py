"""Rules for NumPy statistics, NaN-aware reductions and scans: var std ptp average nansum
nanmean cumsum cumprod trace diff gradient.

Conventions: `ptp` follows `max`/`min` (ties share the derivative evenly); `cumprod` is
differentiated by division where no factor is zero, and exactly (without dividing by a
zero) where some are; `nansum` and
`nanmean` give NaN entries a zero derivative; `var` and `std` of a complex input are real
(the mean of |a - mean(a)|^2) with cotangent 2 g conj(a - mean(a)) / (n - ddof) (JAX's
convention); `std` at a zero spread has derivative 0 (the
zero subgradient, as `norm` at 0). `np.sqrt(np.var(x))` written out differs: sqrt's slope is
infinite at 0, and the chain rule gives NaN there.

`gradient` takes every form NumPy accepts: `axis` None, an int (negative too) or a tuple, with a
tuple of results for several axes; `edge_order` 1 or 2; no spacing, one number for every axis,
or one spacing per axis, each a number or a 1-d array of coordinates (uneven, increasing or
not). It is differentiated in `f` and in the spacings: a coordinate array is differentiated
with NumPy's formula for uneven spacing, also where the coordinates happen to be evenly spaced
(NumPy then uses its even formula, which agrees there; the derivative is the limit taken from
nearby uneven grids). At most 4 axes at once and 4 spacing arguments (the rules' parameters
`h0`-`h3`); more, `axis` or `edge_order` not known at compile time, and a spacing count NumPy
refuses are refused at compile time.
"""

import operator

import numpy as np

from s2sad.ir.prims import (
    index_update,
    make_tuple,
    once_differentiable,
    prod_others,
    unbroadcast,
    zeros_like,
)
from s2sad_rules.kind_tests import is_absent, is_complex, is_none
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


# `where=` leaves entries out of var and std: they get no derivative, the mean and the count
# are those of the kept entries of each slice
@defjvp(np.var)
def var_jvp(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, a_dot=0.0,
            ans=0.0):
    n = spread_count(a, ans, axis, keepdims, where)
    c = spread_slope(a, axis, where)
    return 2.0 * spread_tangent(c, a_dot, axis, keepdims) / (n - ddof)


@defvjp(np.var)
def var_vjp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    n = spread_count(a, ans, axis, True, where)
    return 2.0 * expand_reduced(g, a, axis, keepdims) * spread_slope(a, axis, where) / (n - ddof)


@defjvp(np.std)
def std_jvp(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, a_dot=0.0,
            ans=0.0):
    n = spread_count(a, ans, axis, keepdims, where)
    spread = ans + (ans == 0)  # 1 where std is 0: the numerator is 0 there too
    c = spread_slope(a, axis, where)
    return spread_tangent(c, a_dot, axis, keepdims) / ((n - ddof) * spread)


@defvjp(np.std)
def std_vjp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    n = spread_count(a, ans, axis, True, where)
    scale = expand_reduced(g / (ans + (ans == 0)), a, axis, keepdims) / (n - ddof)
    return scale * spread_slope(a, axis, where)


def spread_count(a, ans, axis, keepdims, where):
    """How many entries each result entry of var/std summarises (the kept ones with
    `where=`), shaped as the result (keepdims=True: as `a`'s reduced shape)."""
    if is_none(where):
        return count_reduced(a, ans)
    return np.sum(np.broadcast_to(where, np.shape(a)), axis=axis, keepdims=keepdims)


def spread_slope(a, axis, where):
    """centered_conj(a) over the entries kept by `where=` (0 at the others)."""
    if is_none(where):
        return centered_conj(a, axis)
    kept = np.broadcast_to(where, np.shape(a))
    mean = np.sum(np.where(kept, a, 0.0), axis=axis, keepdims=True) / np.sum(
        kept, axis=axis, keepdims=True)
    c = np.where(kept, a - mean, 0.0)
    if is_complex(a):
        return np.conj(c)
    return c


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
    """np.average's 1-D weights along `axis`, reshaped to broadcast against `a` (a list of
    weights as an array)."""
    w = np.asarray(w)
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
    # (axis=None flattens, as cumprod does)
    zero = a == 0
    if np.any(zero):  # exact where factors are zero (see cumprod_at_zeros)
        c, before = cumprod_at_zeros(a, zero, axis, dtype)
        b = np.where(zero, 1.0, a)
        return once_differentiable(c * ((before == 0) * np.cumsum(a_dot / b, axis=axis)
                                        + (before == 1) * np.cumsum(a_dot * zero, axis=axis)))
    return ans * np.cumsum(a_dot / a, axis=axis)


@defvjp(np.cumprod)
def cumprod_vjp(g, ans, a, axis=None, dtype=None, out=None):
    zero = a == 0
    if np.any(zero):
        c, before = cumprod_at_zeros(a, zero, axis, dtype)
        gc = g * c
        # up to the first zero every factor's share, up to the second the first zero's
        s = np.reshape(reverse_cumsum(gc * (before == 0), axis), np.shape(a)) + zero * \
            np.reshape(reverse_cumsum(gc * (before == 1), axis), np.shape(a))
        return once_differentiable(s / np.where(zero, 1.0, a))
    return np.reshape(reverse_cumsum(g * ans, axis), np.shape(a)) / a


# the exact derivative at zero factors reads the zero pattern as constant masks: its own
# derivative would be finite and wrong there, so it is NaN (second derivatives of np.cumprod
# at a zero factor are not computed, as np.prod's)
@defjvp(once_differentiable)
def once_differentiable_jvp(x, x_dot):
    return x_dot * np.nan


@defvjp(once_differentiable)
def once_differentiable_vjp(g, x):
    return g * np.nan


def cumprod_at_zeros(a, zero, axis, dtype):
    """(c, before): the cumulative product with the zero factors taken as ones, and how many
    zeros the product up to each entry holds. The product of the factors up to entry i other
    than factor k is c[i] / a[k] while no factor up to i is zero, c[i] for the zero factor k
    while it is the only one, and 0 otherwise: no division by a zero."""
    c = np.cumprod(np.where(zero, 1.0, a), axis=axis, dtype=dtype)
    return c, np.cumsum(zero, axis=axis)


@defjvp(np.trace)
def trace_jvp(a, offset=0, axis1=0, axis2=1, dtype=None, out=None, a_dot=0.0):
    return np.trace(a_dot, offset, axis1, axis2)


@defvjp(np.trace)
def trace_vjp(g, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if np.ndim(a) == 2 and axis1 % 2 == 0 and axis2 % 2 == 1:
        # a matrix: g times the identity (np.eye(3) itself for g = 1)
        if np.shape(a)[0] == np.shape(a)[1]:
            return g * np.eye(np.shape(a)[0], k=offset)
        return g * np.eye(np.shape(a)[0], np.shape(a)[1], k=offset)
    eye = np.eye(np.shape(a)[axis1], np.shape(a)[axis2], offset)
    on_diagonal = np.expand_dims(np.expand_dims(g, -1), -1) * eye
    return np.moveaxis(on_diagonal, (-2, -1), (axis1, axis2))


@defjvp(np.diff)
def diff_jvp(a, n=1, axis=-1, prepend=None, append=None, a_dot=0.0, prepend_dot=0.0,
             append_dot=0.0):
    # (an absent `prepend` or `append` is None here, or NumPy's own default, np._NoValue,
    # which this JVP passes by position)
    if (is_absent(prepend) and is_absent(append)) or n == 0:  # (n=0: `a` as it is)
        return np.diff(a_dot, n, axis)
    # (the parts by position: vector mode batches positional arguments, not keywords)
    if is_absent(append):
        return np.diff(a_dot, n, axis, prepend_dot)
    if is_absent(prepend):
        return np.diff(a_dot, n, axis, np._NoValue, append_dot)
    return np.diff(a_dot, n, axis, prepend_dot, append_dot)


@defvjp(np.diff, wrt=("a", "prepend", "append"))
def diff_vjp(g, a, n=1, axis=-1, prepend=None, append=None):
    # the transpose of one difference is minus the difference of the zero-padded cotangent;
    # of n of them, the n-th difference of the cotangent padded with n zeros at both ends
    # (one expression: no loop whose carried cotangent changes shape, so that the kinds of
    # what follows stay known, e.g. for a Hessian)
    g_bar = np.diff(np.pad(g, diff_pad_width(np.ndim(a), axis, n)), n, axis)
    if n % 2 == 1:
        g_bar = -g_bar
    if is_absent(prepend) and is_absent(append):
        return g_bar, None, None
    if n == 0:  # NumPy returns `a` as it is: the parts get no cotangent
        return g_bar, unused_part_bar(prepend), unused_part_bar(append)
    # with `prepend` / `append`, g_bar is the cotangent of the array they extend: its
    # first and last entries along `axis` are theirs (summed for a number NumPy broadcast)
    prepend_shape = None if is_absent(prepend) else np.shape(prepend)
    before, middle, after = diff_parts(np.shape(a), axis, prepend_shape)
    prepend_bar = None if is_absent(prepend) else diff_part_bar(g_bar[before], prepend)
    append_bar = None if is_absent(append) else diff_part_bar(g_bar[after], append)
    return g_bar[middle], prepend_bar, append_bar


def unused_part_bar(x):
    return None if is_absent(x) else zeros_like(x)


def diff_part_bar(g, x):
    """The cotangent of np.diff's `prepend` or `append` from its entries' cotangent `g`."""
    if np.ndim(x) == 0:
        return np.sum(g)
    return np.reshape(g, np.shape(x))


@def_nondiff
def diff_parts(shape, axis, prepend_shape):
    """Index tuples of the `prepend`, `a` and `append` entries of the array np.diff extends
    along `axis`: `a` of `shape` follows the prepended entries (none for a `prepend_shape`
    of None: no `prepend`; one for a number, which NumPy broadcasts)."""
    axis = axis % len(shape)
    if prepend_shape is None:
        first = 0
    else:
        first = 1 if len(prepend_shape) == 0 else prepend_shape[axis]
    size = shape[axis]

    def along(start, stop):
        return tuple(slice(start, stop) if i == axis else slice(None)
                     for i in range(len(shape)))

    return along(0, first), along(first, first + size), along(first + size, None)


@def_nondiff
def diff_pad_width(ndim, axis, n=1):
    return tuple((n, n) if i == axis % ndim else (0, 0) for i in range(ndim))


GRADIENT_SPACINGS = 4  # spacing arguments the rules take (h0..h3); as many axes at once


@defcheck(np.gradient)
def gradient_check(f, h0=1.0, h1=None, h2=None, h3=None, axis=None, edge_order=1):
    ndim = f.ndim if isinstance(f, Unknown) else np.ndim(f)
    if ndim is None:
        return "an array `f` whose rank is not known at compile time"
    if h3 is not None and (isinstance(axis, (float, Unknown)) or edge_order not in (1, 2)):
        # a fifth positional spacing lands on `axis`, a sixth on `edge_order`
        return f"more than {GRADIENT_SPACINGS} spacing arguments"
    if isinstance(axis, Unknown) or isinstance(edge_order, Unknown):
        return "an `axis` or `edge_order` not known at compile time"
    if edge_order not in (1, 2):
        return f"edge_order={edge_order!r} (NumPy accepts 1 or 2)"
    try:
        axes = gradient_axes(ndim, axis)
    except (TypeError, ValueError):
        return f"axis={axis!r}"
    if len(axes) > GRADIENT_SPACINGS:
        return (f"more than {GRADIENT_SPACINGS} axes at once (axis={axis!r} of a {ndim}-d "
                "array): pass `axis`")
    spacings = [h for h in (h0, h1, h2, h3) if h is not None]
    ranks = [h.ndim if isinstance(h, Unknown) else np.ndim(h) for h in spacings]
    if any(r is None or r > 1 for r in ranks):
        return "a spacing that is neither a number nor a 1-d array of coordinates"
    if len(spacings) == 1 and ranks[0] == 1 and len(axes) != 1:
        return "one coordinate array for several axes"
    if len(spacings) > 1 and len(spacings) != len(axes):
        return (f"{len(spacings)} spacing arguments for {len(axes)} axes (or more than "
                f"{GRADIENT_SPACINGS} spacings)")
    return None


@def_nondiff
def gradient_axes(ndim, axis):
    """The axes np.gradient differentiates along, in its order, as non-negative ints
    (ValueError for an axis out of range or repeated, as NumPy)."""
    if axis is None:
        return tuple(range(ndim))
    given = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(operator.index(a) % ndim if -ndim <= operator.index(a) < ndim else -1
                 for a in given)
    if -1 in axes or len(set(axes)) != len(axes):
        raise ValueError(f"axis {axis!r} of a {ndim}-d array")
    return axes


@def_nondiff
def gradient_column(ndim):
    """The shape (-1, 1, ..., 1) that lays coordinate differences along axis 0."""
    return (-1,) + (1,) * (ndim - 1)


def gradient_pick(k, h1, first, second, third, fourth):
    """The spacing (or its tangent) of the k-th differentiated axis of four: the first for
    every axis when one spacing was given (the second spacing `h1` is None), else the k-th."""
    if is_none(h1):
        return first
    if k == 0:
        return first
    if k == 1:
        return second
    if k == 2:
        return third
    return fourth


def gradient_along_dot(f, f_dot, ax, h, h_dot, edge_order):
    """The tangent of np.gradient along axis `ax` with the spacing `h` (a number or a 1-d
    array of coordinates), in both f and h.

    Written with the slopes s = diff(f) / dx between neighbours: inside, the gradient is
    (dx2 s1 + dx1 s2) / (dx1 + dx2) (NumPy's second-order formula for uneven spacing); at the
    ends s itself (edge_order=1) or the slope of the parabola through three points
    (edge_order=2). With a number `h`, every dx is h.
    """
    fm = np.moveaxis(f, ax, 0)
    tm = np.moveaxis(f_dot, ax, 0)
    if np.ndim(h) == 0:
        s = np.diff(fm, 1, 0) / h
        s_dot = (np.diff(tm, 1, 0) - s * h_dot) / h
        dx1 = h
        dx2 = h
        dx1_dot = h_dot
        dx2_dot = h_dot
        e1 = h
        e2 = h
        e1_dot = h_dot
        e2_dot = h_dot
        z1 = h
        z2 = h
        z1_dot = h_dot
        z2_dot = h_dot
    else:
        col = gradient_column(np.ndim(f))
        dx = np.reshape(np.diff(h), col)
        dx_dot = np.reshape(np.diff(h_dot), col)
        s = np.diff(fm, 1, 0) / dx
        s_dot = (np.diff(tm, 1, 0) - s * dx_dot) / dx
        dx1 = dx[:-1]
        dx2 = dx[1:]
        dx1_dot = dx_dot[:-1]
        dx2_dot = dx_dot[1:]
        e1 = dx[:1]
        e2 = dx[1:2]
        e1_dot = dx_dot[:1]
        e2_dot = dx_dot[1:2]
        z1 = dx[-2:-1]
        z2 = dx[-1:]
        z1_dot = dx_dot[-2:-1]
        z2_dot = dx_dot[-1:]
    s1 = s[:-1]
    s2 = s[1:]
    den = dx1 + dx2
    mid = (dx2 * s1 + dx1 * s2) / den
    mid_dot = (dx2_dot * s1 + dx2 * s_dot[:-1] + dx1_dot * s2 + dx1 * s_dot[1:]
               - mid * (dx1_dot + dx2_dot)) / den
    if edge_order == 1:
        head_dot = s_dot[:1]
        tail_dot = s_dot[-1:]
    else:
        # the parabola through the first (last) three points: its slope at the end point
        q = (s[1:2] - s[:1]) / (e1 + e2)
        q_dot = (s_dot[1:2] - s_dot[:1] - q * (e1_dot + e2_dot)) / (e1 + e2)
        head_dot = s_dot[:1] - e1_dot * q - e1 * q_dot
        r = (s[-1:] - s[-2:-1]) / (z1 + z2)
        r_dot = (s_dot[-1:] - s_dot[-2:-1] - r * (z1_dot + z2_dot)) / (z1 + z2)
        tail_dot = s_dot[-1:] + z2_dot * r + z2 * r_dot
    return np.moveaxis(np.concatenate([head_dot, mid_dot, tail_dot]), 0, ax)


@defjvp(np.gradient)
def gradient_jvp(f, h0=1.0, h1=None, h2=None, h3=None, axis=None, edge_order=1, f_dot=0.0,
                 h0_dot=0.0, h1_dot=0.0, h2_dot=0.0, h3_dot=0.0):
    axes = gradient_axes(np.ndim(f), axis)
    t0 = gradient_along_dot(f, f_dot, axes[0], gradient_pick(0, h1, h0, h1, h2, h3),
                            gradient_pick(0, h1, h0_dot, h1_dot, h2_dot, h3_dot), edge_order)
    if len(axes) == 1:
        return t0
    t1 = gradient_along_dot(f, f_dot, axes[1], gradient_pick(1, h1, h0, h1, h2, h3),
                            gradient_pick(1, h1, h0_dot, h1_dot, h2_dot, h3_dot), edge_order)
    if len(axes) == 2:
        return make_tuple(t0, t1)
    t2 = gradient_along_dot(f, f_dot, axes[2], gradient_pick(2, h1, h0, h1, h2, h3),
                            gradient_pick(2, h1, h0_dot, h1_dot, h2_dot, h3_dot), edge_order)
    if len(axes) == 3:
        return make_tuple(t0, t1, t2)
    t3 = gradient_along_dot(f, f_dot, axes[3], gradient_pick(3, h1, h0, h1, h2, h3),
                            gradient_pick(3, h1, h0_dot, h1_dot, h2_dot, h3_dot), edge_order)
    return make_tuple(t0, t1, t2, t3)


def gradient_along_bar(gk, f, ax, h, edge_order):
    """(f's, h's cotangent) from the cotangent `gk` of np.gradient along axis `ax`: the
    transpose of `gradient_along_dot` (the same slopes s = diff(f) / dx, read backwards)."""
    fm = np.moveaxis(f, ax, 0)
    gm = np.moveaxis(gk, ax, 0)
    if np.ndim(h) == 0:
        dx = h
        dx1 = h
        dx2 = h
        e1 = h
        e2 = h
        z1 = h
        z2 = h
    else:
        dx = np.reshape(np.diff(h), gradient_column(np.ndim(f)))
        dx1 = dx[:-1]
        dx2 = dx[1:]
        e1 = dx[:1]
        e2 = dx[1:2]
        z1 = dx[-2:-1]
        z2 = dx[-1:]
    s = np.diff(fm, 1, 0) / dx
    s1 = s[:-1]
    s2 = s[1:]
    den = dx1 + dx2
    mid = (dx2 * s1 + dx1 * s2) / den
    g_mid = gm[1:-1]
    g_head = gm[:1]
    g_tail = gm[-1:]
    one = zeros_like(s[:1])
    s_bar = np.concatenate([g_mid * dx2 / den, one]) + np.concatenate([one, g_mid * dx1 / den])
    dx_rows = (np.concatenate([g_mid * (s2 - mid) / den, one])
               + np.concatenate([one, g_mid * (s1 - mid) / den]))
    if edge_order == 1:
        rest = zeros_like(s[1:])
        s_bar = s_bar + np.concatenate([g_head, rest]) + np.concatenate([rest, g_tail])
    else:
        rest = zeros_like(s[2:])
        e = e1 + e2
        z = z1 + z2
        q = (s[1:2] - s[:1]) / e
        r = (s[-1:] - s[-2:-1]) / z
        s_bar = (s_bar + np.concatenate([g_head + g_head * e1 / e, -g_head * e1 / e, rest])
                 + np.concatenate([rest, -g_tail * z2 / z, g_tail + g_tail * z2 / z]))
        dx_rows = (dx_rows + np.concatenate([-g_head * q * e2 / e, g_head * q * e1 / e, rest])
                   + np.concatenate([rest, -g_tail * r * z2 / z, g_tail * r * z1 / z]))
    sd = s_bar / dx
    dx_rows = dx_rows - sd * s
    f_bar = np.moveaxis(-np.diff(np.pad(sd, diff_pad_width(np.ndim(f), 0)), 1, 0), 0, ax)
    if np.ndim(h) == 0:
        return f_bar, np.sum(dx_rows)
    dx_bar = np.sum(dx_rows, axis=gradient_other_axes(np.ndim(f)))
    return f_bar, -np.diff(np.pad(dx_bar, ((1, 1),)))


@def_nondiff
def gradient_other_axes(ndim):
    return tuple(range(1, ndim))


@defvjp(np.gradient, wrt=("f", "h0", "h1", "h2", "h3"))
def gradient_vjp(g, f, h0=1.0, h1=None, h2=None, h3=None, axis=None, edge_order=1):
    axes = gradient_axes(np.ndim(f), axis)
    if len(axes) == 1:
        f_bar, b0 = gradient_along_bar(g, f, axes[0], h0, edge_order)
        return f_bar, b0, None, None, None
    f_bar, b0 = gradient_along_bar(g[0], f, axes[0], h0, edge_order)
    f_1, b1 = gradient_along_bar(g[1], f, axes[1], gradient_pick(1, h1, h0, h1, h2, h3),
                                 edge_order)
    f_bar = f_bar + f_1
    if len(axes) == 2:
        if is_none(h1):
            return f_bar, b0 + b1, None, None, None
        return f_bar, b0, b1, None, None
    f_2, b2 = gradient_along_bar(g[2], f, axes[2], gradient_pick(2, h1, h0, h1, h2, h3),
                                 edge_order)
    f_bar = f_bar + f_2
    if len(axes) == 3:
        if is_none(h1):
            return f_bar, b0 + b1 + b2, None, None, None
        return f_bar, b0, b1, b2, None
    f_3, b3 = gradient_along_bar(g[3], f, axes[3], gradient_pick(3, h1, h0, h1, h2, h3),
                                 edge_order)
    f_bar = f_bar + f_3
    if is_none(h1):
        return f_bar, b0 + b1 + b2 + b3, None, None, None
    return f_bar, b0, b1, b2, b3


# (np.diff is not: with `prepend` or `append`, np.diff(0, prepend=p) is not zero)
def_linear(np.nansum, np.cumsum, np.trace, np.gradient, wrt=(0,))


# -- np.trapezoid: the trapezoidal rule (linear in y) ------------------------------------


def trapezoid_weights(y, x, dx, axis):
    """Each sample's weight in np.trapezoid along `axis`: half the widths of the intervals
    it bounds (from the sample points `x`, or the spacing `dx`), shaped to broadcast."""
    n = np.shape(y)[axis]
    if is_none(x):
        w = np.full(n, dx)
        w = index_update(w, 0, dx / 2.0)
        w = index_update(w, n - 1, dx / 2.0)
    else:
        d = np.diff(np.asarray(x, dtype=float))
        w = (np.pad(d, ((0, 1),)) + np.pad(d, ((1, 0),))) / 2.0
    return np.reshape(w, weights_shape(np.ndim(y), axis, n))


@defjvp(np.trapezoid)
def trapezoid_jvp(y, x=None, dx=1.0, axis=-1, y_dot=0.0, dx_dot=0.0, ans=0.0):
    # (with a spacing dx, the integral is proportional to it)
    return np.trapezoid(y_dot, x, dx, axis) + (0.0 if not is_none(x) else ans * (dx_dot / dx))


@defvjp(np.trapezoid, wrt=("y", "dx"))
def trapezoid_vjp(g, ans, y, x=None, dx=1.0, axis=-1):
    y_bar = expand_reduced(g, y, axis, False) * trapezoid_weights(y, x, dx, axis)
    dx_bar = None if not is_none(x) else np.sum(g * ans) / dx
    return y_bar, dx_bar


# -- NaN-aware products, spreads and scans: NaN entries get no derivative -------------------
# (each is the plain rule applied with NaN entries replaced by the operation's neutral value:
# 1 for products, 0 for sums, the slice's mean for spreads, and their tangents by 0)


@defjvp(np.nanprod)
def nanprod_jvp(a, axis=None, dtype=None, out=None, keepdims=False, a_dot=0.0, ans=0.0):
    hole = np.isnan(a)
    b = np.where(hole, 1.0, a)
    return np.sum(np.where(hole, 0.0, a_dot) * prod_others(b, axis, keepdims, ans), axis=axis,
                  keepdims=keepdims)


@defvjp(np.nanprod)
def nanprod_vjp(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    hole = np.isnan(a)
    b = np.where(hole, 1.0, a)
    return np.where(hole, 0.0, expand_reduced(g, a, axis, keepdims) *
                    prod_others(b, axis, keepdims, ans))


def nan_centered(a, kept, axis):
    """a minus the mean of its slice's non-NaN entries, 0 at the NaN entries."""
    mean = np.nansum(a, axis=axis, keepdims=True) / np.sum(kept, axis=axis, keepdims=True)
    return np.where(kept, a - mean, 0.0)


@defjvp(np.nanvar)
def nanvar_jvp(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, a_dot=0.0):
    kept = ~np.isnan(a)
    n = np.sum(kept, axis=axis, keepdims=keepdims)
    return 2.0 * np.sum(nan_centered(a, kept, axis) * np.where(kept, a_dot, 0.0), axis=axis,
                        keepdims=keepdims) / (n - ddof)


@defvjp(np.nanvar)
def nanvar_vjp(g, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    kept = ~np.isnan(a)
    n = np.sum(kept, axis=axis, keepdims=True)
    return 2.0 * expand_reduced(g, a, axis, keepdims) * nan_centered(a, kept, axis) / (n - ddof)


@defjvp(np.nanstd)
def nanstd_jvp(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, a_dot=0.0,
               ans=0.0):
    kept = ~np.isnan(a)
    n = np.sum(kept, axis=axis, keepdims=keepdims)
    spread = ans + (ans == 0)  # 1 where std is 0: the numerator is 0 there too (as np.std)
    return np.sum(nan_centered(a, kept, axis) * np.where(kept, a_dot, 0.0), axis=axis,
                  keepdims=keepdims) / ((n - ddof) * spread)


@defvjp(np.nanstd)
def nanstd_vjp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    kept = ~np.isnan(a)
    n = np.sum(kept, axis=axis, keepdims=True)
    scale = expand_reduced(g / (ans + (ans == 0)), a, axis, keepdims) / (n - ddof)
    return scale * nan_centered(a, kept, axis)


@defjvp(np.nancumsum)
def nancumsum_jvp(a, axis=None, dtype=None, out=None, a_dot=0.0):
    return np.cumsum(np.where(np.isnan(a), 0.0, a_dot), axis=axis)


@defvjp(np.nancumsum)
def nancumsum_vjp(g, a, axis=None, dtype=None, out=None):
    return np.where(np.isnan(a), 0.0, np.reshape(reverse_cumsum(g, axis), np.shape(a)))


@defjvp(np.nancumprod)
def nancumprod_jvp(a, axis=None, dtype=None, out=None, a_dot=0.0, ans=0.0):
    hole = np.isnan(a)
    return cumprod_jvp(np.where(hole, 1.0, a), axis, dtype, out, np.where(hole, 0.0, a_dot),
                       ans)


@defvjp(np.nancumprod)
def nancumprod_vjp(g, ans, a, axis=None, dtype=None, out=None):
    hole = np.isnan(a)
    return np.where(hole, 0.0, cumprod_vjp(g, ans, np.where(hole, 1.0, a), axis, dtype, out))


# -- np.median, np.quantile, np.percentile (method "linear"): q is not differentiated -------
# The result interpolates linearly between the two entries of each slice ranked at floor and
# ceil of q (n - 1): its derivative is (1 - frac, frac) on those two entries. Ties are ranked
# as np.sort's rule ranks them (a stable sort: the first in the slice ranks lowest).


@def_nondiff
def quantile_weights(a, q, axis):
    """Each entry's weight in the linear quantile `q` (a number in [0, 1]) of its slice along
    `axis` (None: the whole array; an int or a tuple of axes), as an array of `a`'s shape."""
    a = np.asarray(a)
    axes = list(range(a.ndim)) if axis is None else \
        [int(i) % a.ndim for i in np.atleast_1d(axis)]
    rest = [i for i in range(a.ndim) if i not in axes]
    moved = np.transpose(a, rest + axes)
    flat = moved.reshape(moved.shape[:len(rest)] + (-1,))
    m = flat.shape[-1]
    h = float(q) * (m - 1)
    lo = min(int(np.floor(h)), m - 1)
    hi = min(lo + 1, m - 1)
    frac = h - lo
    rank = np.argsort(np.argsort(flat, axis=-1, kind="stable"), axis=-1, kind="stable")
    w = (rank == lo) * (1.0 - frac) + (rank == hi) * frac
    return np.transpose(w.reshape(moved.shape), np.argsort(rest + axes))


@defcheck(np.quantile, np.percentile)
def quantile_check(q=None, method="linear", out=None):
    if out is not None:
        return "`out=` (write the result to a new array)"
    if isinstance(q, Unknown):
        if q.ndim not in (0, None):
            return "several quantiles at once (an array `q`: call it once per quantile)"
    elif np.ndim(q) != 0:
        return "several quantiles at once (an array `q`: call it once per quantile)"
    if method != "linear":
        return f"method={method!r} (only the default, 'linear', is differentiated)"
    return None


@defcheck(np.median)
def median_check(out=None):
    if out is not None:
        return "`out=` (write the result to a new array)"
    return None


@defjvp(np.median)
def median_jvp(a, axis=None, out=None, overwrite_input=False, keepdims=False, a_dot=0.0):
    return np.sum(quantile_weights(a, 0.5, axis) * a_dot, axis=axis, keepdims=keepdims)


@defvjp(np.median)
def median_vjp(g, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile_weights(a, 0.5, axis) * expand_reduced(g, a, axis, keepdims)


@defjvp(np.quantile)
def quantile_jvp(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                 keepdims=False, a_dot=0.0):
    return np.sum(quantile_weights(a, q, axis) * a_dot, axis=axis, keepdims=keepdims)


@defvjp(np.quantile, wrt=("a",))
def quantile_vjp(g, a, q, axis=None, out=None, overwrite_input=False, method="linear",
                 keepdims=False):
    return quantile_weights(a, q, axis) * expand_reduced(g, a, axis, keepdims)


@defjvp(np.percentile)
def percentile_jvp(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                   keepdims=False, a_dot=0.0):
    return np.sum(quantile_weights(a, q / 100.0, axis) * a_dot, axis=axis, keepdims=keepdims)


@defvjp(np.percentile, wrt=("a",))
def percentile_vjp(g, a, q, axis=None, out=None, overwrite_input=False, method="linear",
                   keepdims=False):
    return quantile_weights(a, q / 100.0, axis) * expand_reduced(g, a, axis, keepdims)


# -- np.cumulative_sum (NumPy >= 2.1): np.cumsum with `include_initial` (a leading 0) -------

if hasattr(np, "cumulative_sum"):

    @def_nondiff
    def after_first(ndim, axis):
        """The index dropping the first entry along `axis` (None: a 1-d array's only axis)."""
        axis = 0 if axis is None else axis % ndim
        return (slice(None),) * axis + (slice(1, None),)

    @defjvp(np.cumulative_sum)
    def cumulative_sum_jvp(x, axis=None, dtype=None, out=None, include_initial=False,
                           x_dot=0.0):
        return np.cumulative_sum(x_dot, axis=axis, include_initial=include_initial)

    @defvjp(np.cumulative_sum)
    def cumulative_sum_vjp(g, x, axis=None, dtype=None, out=None, include_initial=False):
        along = 0 if axis is None else axis
        if include_initial:
            return reverse_cumsum(g, along)[after_first(np.ndim(x), axis)]
        return reverse_cumsum(g, along)

    def_linear(np.cumulative_sum, wrt=(0,))


# -- np.ediff1d: the differences of the flattened array, between optional parts -------------


@defjvp(np.ediff1d)
def ediff1d_jvp(ary, to_end=None, to_begin=None, ary_dot=0.0, to_end_dot=0.0,
                to_begin_dot=0.0):
    if is_none(to_end) and is_none(to_begin):
        return np.diff(np.ravel(ary_dot))
    if is_none(to_end):
        return np.ediff1d(ary_dot, None, to_begin_dot)
    if is_none(to_begin):
        return np.ediff1d(ary_dot, to_end_dot)
    return np.ediff1d(ary_dot, to_end_dot, to_begin_dot)


@defvjp(np.ediff1d, wrt=("ary", "to_end", "to_begin"))
def ediff1d_vjp(g, ary, to_end=None, to_begin=None):
    nb = 0 if is_none(to_begin) else np.size(to_begin)
    ne = 0 if is_none(to_end) else np.size(to_end)
    middle = g[nb:np.size(g) - ne]
    ary_bar = np.reshape(-np.diff(np.pad(middle, 1)), np.shape(ary))
    end_bar = None if is_none(to_end) else ediff1d_part_bar(g[np.size(g) - ne:], to_end)
    begin_bar = None if is_none(to_begin) else ediff1d_part_bar(g[:nb], to_begin)
    return ary_bar, end_bar, begin_bar


def ediff1d_part_bar(g, part):
    """The cotangent of a part of np.ediff1d: a number for a number."""
    if np.ndim(part) == 0:
        return g[0]
    return np.reshape(g, np.shape(part))
