"""Rules for polynomials and 1-D convolutions: np.polyval, np.convolve, np.correlate.

A product of polynomials is the convolution of their coefficient sequences, so the two
families share their shape bookkeeping here.

`np.polyval(p, x)` takes a 1-D sequence of coefficients, highest power first, and `x` of any
shape; it is linear in `p`, and its derivative in `x` is the derivative polynomial's value.

`np.convolve(a, v, mode)` and `np.correlate(a, v, mode)` are bilinear. Their cotangents are
the cotangent of the `"full"` result (the `"same"` and `"valid"` results are a window of it,
at the offsets NumPy uses, which depend on which operand is the shorter) convolved with the
other operand, reversed. `np.correlate` conjugates `v`, so it is refused for complex
arguments (real_only.py); `np.convolve` holds for complex numbers as written.
"""

import numpy as np

from s2sad_rules.kind_tests import is_sequence
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
