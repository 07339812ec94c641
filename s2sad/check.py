"""check_grads: verify generated derivatives against central finite differences.

Forward mode: J v from the JVP against (f(x + h v) - f(x - h v)) / 2h.
Reverse mode: the dot-product test <u, J v> = <J^T u, v>, with J v from finite
differences, and agreement of VJP and JVP. Complex values: directions are complex for
complex arguments and outputs, and <a, b> is Re(sum(a * b)) (JAX's convention: a VJP is
the transpose of the JVP under that pairing).
"""

from __future__ import annotations

import functools
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
    """An argument that carries no derivative: an integer or bool (a flag), a string (an
    option) or None."""
    return isinstance(x, (bool, int, np.integer, np.bool_, str)) or x is None or (
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
    return _difference(f(*plus, **kwargs), f(*minus, **kwargs), 2 * eps)


def _difference(plus: Any, minus: Any, step: float) -> Any:
    """(plus - minus) / step through tuples and lists (None, an integer's cotangent,
    changes by 0.0, as a JVP says)."""
    if isinstance(plus, (tuple, list)):
        return tuple(_difference(a, b, step) for a, b in zip(plus, minus))
    if plus is None:
        return 0.0
    return (np.asarray(plus) - np.asarray(minus)) / step


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
    `order=2` (or more) also checks, the same way, the derivatives of the derivatives: of
    the JVP's tangent as a function of the arguments and tangents ("fwd"), and of the VJP
    J^T u as a function of the arguments and u ("rev"), each output on its own.

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
    from s2sad.api import grad, jvp, vjp
    from s2sad.transform import resolve_wrt

    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise ValueError(f"check_grads: order must be a positive int, not {order!r}")
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
    u: Any = None
    out: Any = None
    if "rev" in modes:
        out, pullback = vjp(f, wrt=tuple(idx))(*args, **kwargs)
        u = _like(out if isinstance(out, (tuple, list)) else np.asarray(out) if
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
    if order > 1:  # as JAX does: the derivatives are themselves checked, to order - 1
        again: dict[str, Any] = dict(modes=modes, order=order - 1, eps=eps, rtol=rtol,
                                     atol=atol, seed=seed + 1)
        # f with its keyword arguments bound (a derivative called in code s2sad reads
        # takes its arguments by position)
        base = _generated(f"return _s2sad_d({_params(len(args))}, {_keywords(kwargs)})",
                          len(args), False, f, kwargs) if kwargs else f
        value = f(*args, **kwargs)
        if isinstance(value, (tuple, list)):  # each output on its own (a JVP of a tuple of outputs
            for k, item in enumerate(value):  # is a nested tuple, which s2sad cannot inline)
                if item is not None and not _is_int(item):
                    part = _generated(f"return _s2sad_d({_params(len(args))})[{k}]",
                                      len(args), False, base, {})
                    _nested(order, f"output {k}", functools.partial(
                        check_grads, part, args, modes=modes, order=order, wrt=tuple(idx),
                        eps=eps, rtol=rtol, atol=atol, seed=seed + 1))
            return True
        if "fwd" in modes:  # (x, v) -> J v, in every float argument and tangent
            # (an integer's tangent is an int 0 there, which the check does not move)
            both = (*args, *(_fixed_at_ints(t, args[i]) for i, t in zip(idx, tangents)))
            pushed = _tangent_of(jvp(base, wrt=tuple(idx)), len(both))
            _nested(order, "the JVP", lambda: check_grads(pushed, both, wrt=_floats(both),
                                                          **again))
        if "rev" in modes:  # (x, u) -> J^T u, the gradient of <u, f(x)> (reverse mode)
            pulled = grad(_pairing(base, len(args), out),
                          wrt=tuple(idx) if len(idx) > 1 else idx[0])
            both = (*args, u)
            _nested(order, "the VJP", lambda: check_grads(pulled, both, wrt=_floats(both),
                                                          **again))
    return True


def _fixed_at_ints(tangent: Any, like: Any) -> Any:
    """`tangent` with an int 0 where `like` holds an integer (no derivative flows there)."""
    if isinstance(like, (tuple, list)):
        return type(like)(_fixed_at_ints(t, v) for t, v in zip(tangent, like))
    return 0 if _is_int(like) else tangent


def _nested(order: int, what: str, check: Callable[[], Any]) -> None:
    """Run `check` of a derivative's derivatives, saying where a failure is."""
    try:
        check()
    except AssertionError as e:
        raise AssertionError(f"{e} (in the derivatives of {what}, checked to order {order})") \
            from None


def _floats(args: tuple[Any, ...]) -> tuple[int, ...]:
    """The positions of the arguments that carry derivatives (not integers)."""
    return tuple(i for i, a in enumerate(args) if not _is_int(a))


def _tangent_of(d: Callable[..., Any], n: int) -> Any:
    """(*args, *tangents) -> the tangent of the JVP `d` (its value was checked at the
    order below): a function s2sad reads and differentiates again."""
    return _generated(f"return _s2sad_d({_params(n)})[1]", n, False, d, {})


def _pairing(f: Callable[..., Any], n: int, out: Any) -> Any:
    """(*args, u) -> Re <u, f(*args)> (through a tuple of outputs; an integer output carries
    no derivative): a function s2sad reads, whose gradient in the arguments is the VJP
    J^T u, differentiated again by check_grads (forward and reverse over reverse)."""
    call = f"_s2sad_d({_params(n)})"
    if isinstance(out, (tuple, list)):
        terms = [f"np.real(np.sum(u[{k}] * out[{k}]))" for k, o in enumerate(out)
                 if not _is_int(o)]
        body = f"out = {call}\n    return {' + '.join(terms) or '0.0'}"
    else:
        body = f"return np.real(np.sum(u * {call}))"
    return _generated(body, n, True, f, {})


def _params(n: int) -> str:
    return ", ".join(f"a{i}" for i in range(n))


def _keywords(kwargs: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}=_s2sad_kw_{k}" for k in kwargs)


def _generated(body: str, n: int, seed_last: bool, d: Callable[..., Any],
               kwargs: Mapping[str, Any]) -> Any:
    """A function `checked(a0, ..., [u])` with the body given, whose source s2sad reads
    from linecache (as it reads a wrapper of a NumPy callable's)."""
    import linecache

    params = _params(n) + (", u" if seed_last else "")
    source = f"def checked({params}):\n    {body}\n"
    filename = f"<s2sad check_grads: {getattr(d, '__name__', 'f')} #{id(d)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope: dict[str, Any] = {"_s2sad_d": d, "np": np, "__name__": "s2sad.check"}
    scope.update({f"_s2sad_kw_{k}": v for k, v in kwargs.items()})
    exec(compile(source, filename, "exec"), scope)
    return scope["checked"]


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
