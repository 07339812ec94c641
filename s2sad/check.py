"""check_grads: verify generated derivatives against central finite differences.

Forward mode: J v from the JVP against (f(x + h v) - f(x - h v)) / 2h.
Reverse mode: the dot-product test <u, J v> = <J^T u, v>, with J v from finite
differences, and agreement of VJP and JVP. Complex values: directions are complex for
complex arguments and outputs, and <a, b> is Re(sum(a * b)) (JAX's convention: a VJP is
the transpose of the JVP under that pairing).
"""

from __future__ import annotations

import numpy as np


def _flat(x):
    if isinstance(x, tuple):
        return np.concatenate([_flat(v) for v in x]) if x else np.zeros(0)
    x = np.asarray(x)
    return np.ravel(x if x.dtype.kind == "c" else x.astype(float))


def _like(x, rng):
    if isinstance(x, tuple):
        return tuple(_like(v, rng) for v in x)
    if np.iscomplexobj(x):  # a complex direction moves the real and the imaginary parts
        re, im = _like(np.real(x), rng), _like(np.real(x), rng)
        return re + 1j * im if isinstance(x, np.ndarray) else complex(re, im)
    if isinstance(x, np.ndarray):
        return rng.standard_normal(x.shape)
    return float(rng.standard_normal())


def _axpy(a, v, x):
    if isinstance(x, np.ndarray):
        return x + a * v
    return x + a * v


def numerical_jvp(f, args, wrt, tangents, eps=1e-6, kwargs=None):
    kwargs = kwargs or {}
    plus, minus = list(args), list(args)
    for i, t in zip(wrt, tangents):
        plus[i] = _axpy(eps, t, args[i])
        minus[i] = _axpy(-eps, t, args[i])
    fp, fm = f(*plus, **kwargs), f(*minus, **kwargs)
    if isinstance(fp, tuple):
        return tuple((np.asarray(a) - np.asarray(b)) / (2 * eps) for a, b in zip(fp, fm))
    return (np.asarray(fp) - np.asarray(fm)) / (2 * eps)


def _inner(a, b) -> float:
    return float(np.real(np.sum(_flat(a) * _flat(b))))


def check_grads(f, args, modes=("fwd", "rev"), order=1, wrt=None, eps=1e-6, rtol=1e-5,
                atol=1e-7, seed=0, kwargs=None):
    """Raise AssertionError if f's generated derivatives disagree with finite differences."""
    from s2sad.api import jvp, vjp
    from s2sad.transform import resolve_wrt

    if order != 1:
        raise NotImplementedError("check_grads supports order=1 for now")
    kwargs = kwargs or {}
    args = tuple(args)
    idx, _ = resolve_wrt(f, wrt)
    rng = np.random.default_rng(seed)
    tangents = [_like(args[i], rng) for i in idx]
    fd = numerical_jvp(f, args, idx, tangents, eps, kwargs)
    if "fwd" in modes:
        _, out_dot = jvp(f, wrt=tuple(idx))(*args, *tangents, **kwargs)
        _assert_close(out_dot, fd, rtol, atol, "JVP vs finite differences")
    if "rev" in modes:
        out, pullback = vjp(f, wrt=tuple(idx))(*args, **kwargs)
        u = _like(out if isinstance(out, tuple) else np.asarray(out) if
                  isinstance(out, np.ndarray) else complex(out) if np.iscomplexobj(out)
                  else float(out), rng)
        bars = pullback(u)
        lhs = _inner(u, fd)
        rhs = sum(_inner(b, t) for b, t in zip(bars, tangents))
        scale = max(1.0, abs(lhs), abs(rhs))
        if abs(lhs - rhs) > 10 * rtol * scale + atol:
            raise AssertionError(f"dot-product test failed: <u, J v> = {lhs!r} (finite "
                                 f"differences) but <J^T u, v> = {rhs!r} (VJP)")
        if "fwd" in modes:
            _, out_dot = jvp(f, wrt=tuple(idx))(*args, *tangents, **kwargs)
            lj = _inner(u, out_dot)
            if abs(lj - rhs) > 1e-9 * max(1.0, abs(lj)):
                raise AssertionError(f"JVP and VJP disagree: <u, J v> = {lj!r} but "
                                     f"<J^T u, v> = {rhs!r}")
    return True


def _assert_close(actual, expected, rtol, atol, what):
    a, e = _flat(actual), _flat(expected)
    if a.shape != e.shape or not np.allclose(a, e, rtol=rtol, atol=atol):
        raise AssertionError(f"{what}: got {actual!r}, expected {expected!r}")
