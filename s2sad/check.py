"""check_grads: verify generated derivatives against central finite differences.

Forward mode: J v from the JVP against (f(x + h v) - f(x - h v)) / 2h.
Reverse mode: the dot-product test <u, J v> = <J^T u, v>, with J v from finite
differences, and agreement of VJP and JVP. Complex values: directions are complex for
complex arguments and outputs, and <a, b> is Re(sum(a * b)) (JAX's convention: a VJP is
the transpose of the JVP under that pairing).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

import numpy as np

from s2sad.api import WrtSpec  # (at run time too: typing.get_type_hints(check_grads))


def _items(x: Any) -> list[Any] | None:
    """The items of a tuple, list, namedtuple or dict argument (a dict's values), else None."""
    if isinstance(x, (tuple, list)):
        return list(x)
    if isinstance(x, dict):
        return list(x.values())
    return None


def _rebuild(like: Any, items: Iterable[Any]) -> Any:
    """A container of `like`'s type (and keys) holding `items`."""
    if isinstance(like, dict):
        return dict(zip(like.keys(), items))
    if hasattr(like, "_fields"):  # a namedtuple takes its fields by position
        return type(like)(*items)
    return type(like)(items)


def _flat(x: Any) -> np.ndarray[Any, np.dtype[Any]]:
    items = _items(x)
    if items is not None:
        parts = [_flat(v) for v in items if v is not None]
        return np.concatenate(parts) if parts else np.zeros(0)
    x = np.asarray(x)
    return np.ravel(x if x.dtype.kind == "c" else x.astype(float))


def _is_int(x: Any) -> bool:
    return isinstance(x, (bool, int, np.integer, np.bool_)) or (
        isinstance(x, np.ndarray) and x.dtype.kind in "biu")


def _like(x: Any, rng: np.random.Generator) -> Any:
    """A random direction shaped like `x` (0 for an integer: it carries no derivative)."""
    items = _items(x)
    if items is not None:
        return _rebuild(x, [_like(v, rng) for v in items])
    if _is_int(x):
        return 0.0
    if np.iscomplexobj(x):  # a complex direction moves the real and the imaginary parts
        re, im = _like(np.real(x), rng), _like(np.real(x), rng)
        return re + 1j * im if isinstance(x, np.ndarray) else complex(re, im)
    if isinstance(x, np.ndarray):
        return rng.standard_normal(x.shape)
    return float(rng.standard_normal())


def _axpy(a: float, v: Any, x: Any) -> Any:
    items = _items(x)
    if items is not None:
        return _rebuild(x, [_axpy(a, vi, xi) for vi, xi in zip(_items(v) or (), items)])
    if _is_int(x):
        return x
    return x + a * v


def numerical_jvp(f: Callable[..., Any], args: tuple[Any, ...], wrt: Iterable[int],
                  tangents: Iterable[Any], eps: float = 1e-6,
                  kwargs: Mapping[str, Any] | None = None) -> Any:
    kwargs = kwargs or {}
    plus, minus = list(args), list(args)
    for i, t in zip(wrt, tangents):
        plus[i] = _axpy(eps, t, args[i])
        minus[i] = _axpy(-eps, t, args[i])
    fp, fm = f(*plus, **kwargs), f(*minus, **kwargs)
    if isinstance(fp, tuple):
        return tuple((np.asarray(a) - np.asarray(b)) / (2 * eps) for a, b in zip(fp, fm))
    return (np.asarray(fp) - np.asarray(fm)) / (2 * eps)


def _inner(a: Any, b: Any) -> float:
    """Re <a, b> (the bilinear pairing) through tuples, lists and dicts (None, an integer's
    cotangent, counts as 0)."""
    ia, ib = _items(a), _items(b)
    if ia is not None and ib is not None:
        return sum(_inner(x, y) for x, y in zip(ia, ib))
    if a is None or b is None:
        return 0.0
    return float(np.real(np.sum(_flat(a) * _flat(b))))


def check_grads(f: Callable[..., Any], args: Iterable[Any],
                modes: Collection[str] = ("fwd", "rev"), order: int = 1, wrt: WrtSpec = None,
                eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-7, seed: int = 0,
                kwargs: Mapping[str, Any] | None = None) -> bool:
    """Check `f`'s generated derivatives against central finite differences.

    In random directions (from `seed`): "fwd" compares the JVP with
    (f(x + eps v) - f(x - eps v)) / (2 eps); "rev" checks the VJP by the dot-product test
    <u, J v> = <J^T u, v> and, with "fwd" too, against the JVP. `wrt` picks the arguments
    (by default every one given in `args`); `kwargs` are passed through undifferentiated.

    Returns:
        True when every check passes (it raises otherwise).

    Raises:
        AssertionError: a derivative disagrees with finite differences, saying which.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def f(x, y):
        ...     return np.sum(np.sin(x) * y)
        >>> s2sad.check_grads(f, (np.array([0.5, 1.0]), 2.0))
        True
    """
    from s2sad.api import jvp, vjp
    from s2sad.transform import resolve_wrt

    if order != 1:
        raise NotImplementedError("check_grads supports order=1 for now")
    kwargs = kwargs or {}
    args = tuple(args)
    idx, _ = resolve_wrt(f, wrt)
    if wrt is None:  # every positional argument given (not the defaults left out)
        idx = tuple(i for i in idx if i < len(args))
    missing = [i for i in idx if i >= len(args)]
    if missing:
        raise TypeError(f"check_grads: wrt names argument {missing[0]}, but only "
                        f"{len(args)} argument(s) were given in `args`")
    # the JVP takes the tangents after every positional parameter: the defaults left out of
    # `args` are filled in, so that the tangents land on the tangent parameters
    args = _with_positional_defaults(f, args)
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


def _with_positional_defaults(f: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, ...]:
    import inspect

    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return args
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    rest = positional[len(args):]
    if any(p.default is p.empty for p in rest):
        return args  # (a call that leaves out a required argument fails as f's call would)
    return args + tuple(p.default for p in rest)


def _assert_close(actual: Any, expected: Any, rtol: float, atol: float, what: str) -> None:
    a, e = _flat(actual), _flat(expected)
    if a.shape != e.shape or not np.allclose(a, e, rtol=rtol, atol=atol):
        raise AssertionError(f"{what}: got {actual!r}, expected {expected!r}")
