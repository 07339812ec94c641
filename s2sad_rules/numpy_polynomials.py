"""Rules for polynomials, 1-D convolutions and interpolation: np.polyval, np.convolve,
np.correlate, np.interp.

A product of polynomials is the convolution of their coefficient sequences, so the two
families share their shape bookkeeping here.

`np.polyval(p, x)` takes a 1-D sequence of coefficients, highest power first, and `x` of any
shape; it is linear in `p`, and its derivative in `x` is the derivative polynomial's value.

`np.convolve(a, v, mode)` and `np.correlate(a, v, mode)` are bilinear. Their cotangents are
the cotangent of the `"full"` result (the `"same"` and `"valid"` results are a window of it,
at the offsets NumPy uses, which depend on which operand is the shorter) convolved with the
other operand, reversed. `np.correlate` conjugates `v`, so it is refused for complex
arguments (real_only.py); `np.convolve` holds for complex numbers as written.

`np.interp(x, xp, fp, left, right)` is differentiated in the points `x` (the slope of the
segment each lies in; at a knot the segment to its right; 0 outside the knots' range, where
the value is constant), the values `fp` (in which it is linear) and `left`/`right`; the
knots `xp` are not differentiated, and `period=` is refused.
"""

import numpy as np

from s2sad.ir.prims import index_add, unbroadcast, zeros_like
from s2sad_rules.kind_tests import is_none, is_sequence
from s2sad_rules.registry import Unknown, def_linear, def_nondiff, defcheck, defjvp, defvjp


@defcheck(np.polyval)
def polyval_check(p, x):
    ndim = p.ndim if isinstance(p, Unknown) else np.ndim(p)
    if ndim is not None and ndim != 1:
        return (f"coefficients `p` of rank {ndim} (the rules take a 1-D sequence of "
                "coefficients; np.poly1d objects are not covered)")
    return None


@defjvp(np.polyval)
def polyval_jvp(p, x, p_dot=0.0, x_dot=0.0):
    return np.polyval(p_dot, x) + np.polyval(polyder_coefficients(p), x) * x_dot


@defvjp(np.polyval)
def polyval_vjp(g, p, x):
    # p_bar[i] = sum of g * x ** (n - 1 - i) over x's entries
    powers = np.power(np.expand_dims(x, -1), np.arange(np.size(p) - 1.0, -1.0, -1.0))
    if np.ndim(x) == 0:
        p_bar = g * powers
    elif np.ndim(x) == 1:
        p_bar = g @ powers
    else:
        p_bar = np.tensordot(g, powers, np.ndim(x))
    x_bar = g * np.polyval(polyder_coefficients(p), x)
    return np.reshape(p_bar, np.shape(p)), x_bar


def polyder_coefficients(p):
    """The coefficients of the derivative polynomial (np.polyder, linear in `p`); none for a
    constant, whose value np.polyval gives as zeros."""
    if is_sequence(p):
        p = np.asarray(p)
    return p[:-1] * np.arange(np.size(p) - 1.0, 0.0, -1.0)


@defcheck(np.convolve, np.correlate)
def convolve_check(a, v, mode="full"):
    if isinstance(mode, Unknown):
        return "a `mode` not known at compile time"
    try:
        conv_mode(mode)
    except (KeyError, IndexError, TypeError, AttributeError):
        return f"mode={mode!r}"
    return None


@defjvp(np.convolve)
def convolve_jvp(a, v, mode="full", a_dot=0.0, v_dot=0.0):
    return np.convolve(a_dot, v, mode) + np.convolve(a, v_dot, mode)


@defvjp(np.convolve)
def convolve_vjp(g, a, v, mode="full"):
    full = np.pad(g, conv_window(np.size(a), np.size(v), mode, False))
    a_bar = np.convolve(full, np.flip(np.ravel(v)), "valid")
    v_bar = np.convolve(full, np.flip(np.ravel(a)), "valid")
    return np.reshape(a_bar, np.shape(a)), np.reshape(v_bar, np.shape(v))


@defjvp(np.correlate)
def correlate_jvp(a, v, mode="valid", a_dot=0.0, v_dot=0.0):
    return np.correlate(a_dot, v, mode) + np.correlate(a, v_dot, mode)


@defvjp(np.correlate)
def correlate_vjp(g, a, v, mode="valid"):
    # correlate(a, v) is convolve(a, v reversed) for real numbers, in another window
    full = np.pad(g, conv_window(np.size(a), np.size(v), mode, True))
    a_bar = np.convolve(full, np.ravel(v), "valid")
    v_bar = np.flip(np.convolve(full, np.flip(np.ravel(a)), "valid"))
    return np.reshape(a_bar, np.shape(a)), np.reshape(v_bar, np.shape(v))


@def_nondiff
def conv_mode(mode) -> str:
    """NumPy's spelling of a mode: "valid", "same" or "full" (a name's first letter, any
    case, or 0, 1, 2)."""
    if isinstance(mode, str):
        return {"v": "valid", "s": "same", "f": "full"}[mode.lower()[0]]
    return {0: "valid", 1: "same", 2: "full"}[mode]


@def_nondiff
def conv_window(m, n, mode, correlate):
    """The zeros before and after a `mode` result of operands of sizes m and n within the
    "full" result (np.pad's width): where NumPy takes that window."""
    mode = conv_mode(mode)
    full, short = m + n - 1, min(m, n)
    if mode == "full":
        return ((0, 0),)
    if mode == "valid":
        start, size = short - 1, max(m, n) - short + 1
    else:
        size = max(m, n)
        start = short // 2 if correlate and m < n else (short - 1) // 2
    return ((start, full - start - size),)


def_linear(np.polyval)
def_linear(np.convolve, np.correlate, wrt=(0, 1))


# -- np.interp: piecewise linear through (xp, fp) ------------------------------------------


@defcheck(np.interp)
def interp_check(x, xp, fp, left=None, right=None, period=None):
    if period is not None:
        return "period= (a periodic interpolation)"
    return None


@def_nondiff
def interp_segment(x, xp):
    """(index of the segment of `xp` each x lies in, its first knot, its width, whether x
    lies left of xp[0], right of xp[-1]): at a knot, the segment to its right (the last
    segment at xp[-1]). Constant where x moves within a segment."""
    xp = np.asarray(xp, dtype=float)
    i = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, max(len(xp) - 2, 0))
    width = xp[np.minimum(i + 1, len(xp) - 1)] - xp[i]
    return i, xp[i], np.where(width == 0, 1.0, width), x < xp[0], x > xp[-1]


@defjvp(np.interp)
def interp_jvp(x, xp, fp, left=None, right=None, period=None, x_dot=0.0, fp_dot=0.0,
               left_dot=0.0, right_dot=0.0):
    i, knot, width, below, above = interp_segment(x, xp)
    if is_sequence(fp):
        fp = np.asarray(fp)
    slope = interp_slopes(fp, xp)[i] * ~(below | above)  # (0 outside, where it is constant)
    out = x_dot * slope
    if is_none(left) and is_none(right):
        return out + np.interp(x, xp, fp_dot)
    return out + np.interp(x, xp, fp_dot, left_dot if not is_none(left) else None,
                           right_dot if not is_none(right) else None)


@defvjp(np.interp, wrt=("x", "fp", "left", "right"))
def interp_vjp(g, x, xp, fp, left=None, right=None, period=None):
    i, knot, width, below, above = interp_segment(x, xp)
    share = np.clip((x - knot) / width, 0.0, 1.0)  # (differentiated: a second derivative)
    if is_sequence(fp):
        fp = np.asarray(fp)
    x_bar = g * interp_slopes(fp, xp)[i] * ~(below | above)
    # the weights of fp[i] and fp[i + 1]; outside the range, those of the end values, or
    # none where `left` / `right` stand there
    g_fp = g
    if not is_none(left):
        g_fp = g_fp * ~below
    if not is_none(right):
        g_fp = g_fp * ~above
    fp_bar = index_add(index_add(zeros_like(fp), i, g_fp * (1.0 - share)),
                       np.minimum(i + 1, np.size(fp) - 1), g_fp * share)
    left_bar = None if is_none(left) else np.sum(g * below)
    right_bar = None if is_none(right) else np.sum(g * above)
    return unbroadcast(x_bar, x), fp_bar, left_bar, right_bar


def interp_slopes(fp, xp):
    """The slope of each segment (0 for a segment of zero width)."""
    width = np.diff(np.asarray(xp, dtype=float))
    return np.diff(fp) / np.where(width == 0, 1.0, width)


# (np.interp is not marked linear in fp: with `left` or `right`, np.interp(x, xp, 0, left=c)
# is not zero)
