"""Independent derivative oracle for the s2sad test-suite.

Everything here is plain float64 NumPy: central finite differences, a
numerical Jacobian built from them, helpers to draw random points away from
kinks, and comparison helpers that also check the *kind* of a result (a Python
float where the contract says float, an ndarray of the right shape where it
says array).

This module must never import or call s2sad: it is the referee.
"""

from __future__ import annotations

import numbers
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_EPS",
    "FD_ATOL",
    "FD_RTOL",
    "assert_close",
    "assert_dot_close",
    "assert_like",
    "distinct_uniform",
    "draw_until",
    "flatten",
    "is_scalar",
    "numerical_grad",
    "numerical_jacobian",
    "numerical_jvp",
    "numerical_vjp",
    "random_like",
    "rng_for",
    "tree_size",
    "uniform",
    "uniform_away",
    "vdot",
]

# Central differences: truncation error ~ eps**2 * |f'''| / 6 ~ 1e-12 and
# rounding error ~ 1e-16 * |f| / eps ~ 1e-10 * |f|, so for the O(1)..O(10)
# values the corpus produces 1e-6 relative / 1e-8 absolute is honest with
# two orders of magnitude to spare, and still catches any real mistake.
DEFAULT_EPS = 1e-6
FD_RTOL = 1e-6
FD_ATOL = 1e-8


# --------------------------------------------------------------------------
# random points
# --------------------------------------------------------------------------


def rng_for(name: str, salt: str = "") -> np.random.Generator:
    """A reproducible generator seeded from a case name (and a salt)."""
    return np.random.default_rng(zlib.crc32(f"{name}|{salt}".encode()))


def uniform(rng: np.random.Generator, low: float, high: float, shape=None):
    """`rng.uniform` returning a *Python float* when shape is None."""
    if shape is None:
        return float(rng.uniform(low, high))
    return rng.uniform(low, high, size=shape).astype(np.float64)


def uniform_away(
    rng: np.random.Generator,
    low: float,
    high: float,
    shape=None,
    avoid: Sequence[float] = (0.0,),
    margin: float = 0.1,
):
    """Uniform draws (float or array) whose entries keep `margin` from every
    point in `avoid` (kinks such as 0 for abs, thresholds of branches)."""

    def bad(v):
        v = np.asarray(v, dtype=np.float64)
        return np.any([np.abs(v - a) < margin for a in avoid], axis=0)

    if shape is None:
        for _ in range(10_000):
            v = float(rng.uniform(low, high))
            if not bad(v):
                return v
        raise ValueError("uniform_away: no admissible value in range")
    out = rng.uniform(low, high, size=shape).astype(np.float64)
    for _ in range(10_000):
        mask = bad(out)
        if not np.any(mask):
            return out
        out[mask] = rng.uniform(low, high, size=int(np.sum(mask)))
    raise ValueError("uniform_away: no admissible value in range")


def distinct_uniform(
    rng: np.random.Generator, low: float, high: float, shape, margin: float = 0.05
):
    """An array whose entries differ pairwise by at least `margin` (keeps
    max/argmax away from ties)."""
    for _ in range(10_000):
        out = rng.uniform(low, high, size=shape).astype(np.float64)
        flat = np.sort(out.ravel())
        if flat.size < 2 or np.min(np.diff(flat)) >= margin:
            return out
    raise ValueError("distinct_uniform: range too small for the margin")


def draw_until(rng: np.random.Generator, draw: Callable, ok: Callable, tries: int = 10_000):
    """Call `draw(rng)` until `ok(value)` holds (rejection sampling, e.g. to
    keep every branch condition of a loop away from its threshold)."""
    for _ in range(tries):
        value = draw(rng)
        if ok(value):
            return value
    raise ValueError("draw_until: no admissible draw")


def random_like(rng: np.random.Generator, like, low: float = -1.0, high: float = 1.0):
    """A random value with the structure of `like`: a Python float for a
    scalar, an array of the same shape for an array, tuples/lists recursively."""
    if isinstance(like, (tuple, list)):
        return type(like)(random_like(rng, v, low, high) for v in like)
    if isinstance(like, np.ndarray) and like.ndim > 0:
        return rng.uniform(low, high, size=like.shape).astype(np.float64)
    if isinstance(like, np.ndarray):
        return np.asarray(rng.uniform(low, high), dtype=np.float64)
    return float(rng.uniform(low, high))


# --------------------------------------------------------------------------
# trees of values
# --------------------------------------------------------------------------


def is_scalar(value) -> bool:
    """A float-like scalar (Python float/int or NumPy scalar), not an array."""
    return isinstance(value, (numbers.Real, np.floating)) and not isinstance(
        value, (bool, np.ndarray)
    )


def flatten(tree) -> np.ndarray:
    """Concatenate all leaves of a float / array / tuple tree into 1-D float64."""
    if isinstance(tree, (tuple, list)):
        parts = [flatten(v) for v in tree]
        return np.concatenate(parts) if parts else np.zeros(0)
    return np.asarray(tree, dtype=np.float64).ravel()


def tree_size(tree) -> int:
    return int(flatten(tree).size)


def vdot(a, b) -> float:
    """Euclidean inner product of two trees with the same structure."""
    fa, fb = flatten(a), flatten(b)
    if fa.shape != fb.shape:
        raise AssertionError(f"vdot: structures differ in size ({fa.size} vs {fb.size})")
    return float(np.dot(fa, fb))


def _tree_sub_scale(plus, minus, scale: float):
    """(plus - minus) * scale, keeping the structure (a float stays a float)."""
    if isinstance(plus, (tuple, list)):
        if not isinstance(minus, (tuple, list)) or len(plus) != len(minus):
            raise AssertionError("function output changed structure between evaluations")
        return type(plus)(_tree_sub_scale(p, m, scale) for p, m in zip(plus, minus))
    if isinstance(plus, np.ndarray):
        return (np.asarray(plus, dtype=np.float64) - np.asarray(minus, dtype=np.float64)) * scale
    return float(plus - minus) * scale


def _unflatten_like(flat: np.ndarray, like):
    """Inverse of `flatten` for a template tree; scalars become Python floats."""
    pos = 0

    def build(t):
        nonlocal pos
        if isinstance(t, (tuple, list)):
            return type(t)(build(v) for v in t)
        if isinstance(t, np.ndarray):
            n = t.size
            out = flat[pos : pos + n].reshape(t.shape).copy()
            pos += n
            return out
        out = float(flat[pos])
        pos += 1
        return out

    return build(like)


# --------------------------------------------------------------------------
# finite differences
# --------------------------------------------------------------------------


def _perturb(args: Sequence[Any], wrt: Sequence[int], tangents: Sequence[Any], h: float):
    new = list(args)
    for i, t in zip(wrt, tangents):
        a = args[i]
        if isinstance(a, np.ndarray):
            new[i] = np.asarray(a, dtype=np.float64) + h * np.asarray(t, dtype=np.float64)
        else:
            new[i] = float(a) + h * float(t)
    return new


def _copy_args(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def numerical_jvp(
    f: Callable,
    args: Sequence[Any],
    wrt: Sequence[int],
    tangents: Sequence[Any],
    eps: float = DEFAULT_EPS,
    kwargs: dict | None = None,
):
    """Central-difference directional derivative of f at `args` along
    `tangents` (one per index in `wrt`), with the structure of f's output:
    (f(x + eps v) - f(x - eps v)) / (2 eps)."""
    kwargs = dict(kwargs or {})
    wrt = tuple(wrt)
    if len(tangents) != len(wrt):
        raise ValueError("numerical_jvp: one tangent per wrt index")
    plus = f(*_copy_args(_perturb(args, wrt, tangents, eps)), **kwargs)
    minus = f(*_copy_args(_perturb(args, wrt, tangents, -eps)), **kwargs)
    return _tree_sub_scale(plus, minus, 1.0 / (2.0 * eps))


def _basis(arg, k):
    if isinstance(arg, np.ndarray):
        e = np.zeros(arg.shape, dtype=np.float64)
        e.ravel()[k] = 1.0
        return e
    return 1.0


def numerical_jacobian(
    f: Callable,
    args: Sequence[Any],
    wrt: Sequence[int],
    eps: float = DEFAULT_EPS,
    kwargs: dict | None = None,
):
    """Central-difference Jacobian: a tuple with one block per index in `wrt`;
    block i has shape (size of flattened output, size of argument i)."""
    wrt = tuple(wrt)
    blocks = []
    for j, i in enumerate(wrt):
        n = int(np.size(args[i]))
        cols = []
        for k in range(n):
            tangents = [
                0.0 * np.asarray(args[m]) if isinstance(args[m], np.ndarray) else 0.0 for m in wrt
            ]
            tangents[j] = _basis(args[i], k)
            cols.append(flatten(numerical_jvp(f, args, wrt, tangents, eps, kwargs)))
        blocks.append(np.stack(cols, axis=1) if cols else np.zeros((0, 0)))
    return tuple(blocks)


def numerical_vjp(
    f: Callable,
    args: Sequence[Any],
    wrt: Sequence[int],
    cotangent,
    eps: float = DEFAULT_EPS,
    kwargs: dict | None = None,
):
    """J^T u from the finite-difference Jacobian: a tuple with one cotangent per
    index in `wrt`, each with its argument's kind (Python float for a float
    argument, array of the same shape for an array argument)."""
    u = flatten(cotangent)
    out = []
    for i, block in zip(wrt, numerical_jacobian(f, args, wrt, eps, kwargs)):
        g = u @ block
        if isinstance(args[i], np.ndarray):
            out.append(g.reshape(args[i].shape))
        else:
            out.append(float(g[0]))
    return tuple(out)


def numerical_grad(f, args, wrt, eps: float = DEFAULT_EPS, kwargs: dict | None = None):
    """Gradient of a scalar-valued f: a tuple with one entry per index in wrt."""
    return numerical_vjp(f, args, wrt, 1.0, eps, kwargs)


# --------------------------------------------------------------------------
# comparisons
# --------------------------------------------------------------------------


def assert_like(actual, like, what: str = "value") -> None:
    """`actual` has the kind of `like`: a float scalar (not an array) for a
    scalar, a float ndarray of the same shape for an array, tuples
    recursively."""
    if isinstance(like, (tuple, list)):
        assert isinstance(actual, (tuple, list)), (
            f"{what}: expected a {type(like).__name__}, got {type(actual).__name__}"
        )
        assert len(actual) == len(like), f"{what}: expected {len(like)} entries, got {len(actual)}"
        for k, (a, e) in enumerate(zip(actual, like)):
            assert_like(a, e, f"{what}[{k}]")
        return
    if isinstance(like, np.ndarray) and like.ndim > 0:
        assert isinstance(actual, np.ndarray), (
            f"{what}: expected ndarray of shape {like.shape}, "
            f"got {type(actual).__name__} {actual!r}"
        )
        assert actual.shape == like.shape, (
            f"{what}: expected shape {like.shape}, got {actual.shape}"
        )
        assert np.issubdtype(actual.dtype, np.floating), (
            f"{what}: expected a float array, got dtype {actual.dtype}"
        )
        return
    if isinstance(like, np.ndarray):  # 0-d array: accept a 0-d array or a float
        ok = (isinstance(actual, np.ndarray) and actual.ndim == 0) or isinstance(
            actual, (float, np.floating)
        )
        assert ok, f"{what}: expected a scalar, got {type(actual).__name__} {actual!r}"
        return
    # a scalar: must be a float, never an array (not even 0-d)
    assert not isinstance(actual, np.ndarray), (
        f"{what}: expected a float, got ndarray of shape {actual.shape}"
    )
    assert isinstance(actual, (float, np.floating)), (
        f"{what}: expected a float, got {type(actual).__name__} {actual!r}"
    )


def assert_close(
    actual,
    expected,
    rtol: float = FD_RTOL,
    atol: float = FD_ATOL,
    what: str = "value",
    check_kind: bool = True,
) -> None:
    """|actual - expected| <= atol + rtol * |expected| elementwise, through
    floats, arrays and tuples of them. With `check_kind`, a scalar expected
    value requires a float (not an array) back, and an array requires an
    ndarray of the same shape."""
    if check_kind:
        assert_like(actual, expected, what)
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), (
            f"{what}: structure differs: {actual!r} vs {expected!r}"
        )
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, rtol, atol, f"{what}[{k}]", check_kind)
        return
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != expected {e.shape}"
    assert np.all(np.isfinite(a)), f"{what}: non-finite values {a}"
    err = np.abs(a - e)
    tol = atol + rtol * np.abs(e)
    if not np.all(err <= tol):
        worst = np.unravel_index(np.argmax(err - tol), err.shape) if err.ndim else ()
        raise AssertionError(
            f"{what}: not close (rtol={rtol}, atol={atol}); worst at {worst}: "
            f"actual={a[worst] if a.ndim else a!r} expected={e[worst] if e.ndim else e!r} "
            f"|diff|={err[worst] if err.ndim else err}\nactual=\n{a}\nexpected=\n{e}"
        )


def assert_dot_close(
    lhs: float, rhs: float, scale: float, rtol: float, atol: float = 0.0, what: str = "dot"
) -> None:
    """Two inner products agree: |lhs - rhs| <= atol + rtol * scale, where
    `scale` is the magnitude of the terms summed (sum |u_k (Jv)_k|), so
    cancellation in the sum does not make the test meaningless."""
    tol = atol + rtol * max(scale, abs(lhs), abs(rhs))
    assert np.isfinite(lhs) and np.isfinite(rhs), f"{what}: non-finite ({lhs}, {rhs})"
    assert abs(lhs - rhs) <= tol, (
        f"{what}: {lhs!r} != {rhs!r} (|diff|={abs(lhs - rhs):.3e} > tol={tol:.3e})"
    )
