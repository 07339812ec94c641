"""Library dispatch layers, seen through while lowering.

SciPy's array-API layer (`array_namespace`, `xp_promote`, `_asarray`) picks a namespace and
converts arguments before the arithmetic. On NumPy arrays (the only arrays a derivative is
specialised for, besides the families of `Kind.family`, which keep the layer as written)
it is NumPy itself and `np.asarray`: lowering replaces each call by what it amounts to, so
that `xp.sum(...)` is `np.sum(...)` and the arithmetic behind it is differentiated.
"""

from __future__ import annotations

import operator
import sys

import numpy as np

from s2sad.ir.nodes import Const

# (module, function name) -> handler(lowerer, args, kwargs, node) -> lowered value or None
_HANDLERS: dict = {}


def _handler(module: str, name: str):
    def register(fn):
        _HANDLERS[(module, name)] = fn
        return fn
    return register


def shim_for(fn):
    """The handler that sees through `fn`, or None (looked up by where `fn` is defined, so
    that a SciPy that is not installed costs nothing)."""
    module = getattr(fn, "__module__", None)
    if not module or not module.startswith("scipy.") or module not in sys.modules:
        return None
    try:
        return _HANDLERS.get((module, fn.__name__))
    except (TypeError, AttributeError):
        return None


@_handler("scipy._lib._array_api", "array_namespace")
def _array_namespace(lw, args, kwargs, node):
    from s2sad.frontend.values import Static
    return Static(np, "np")


def _as_array(lw, value, dtype, node):
    from s2sad.frontend.values import StaticSeq
    if isinstance(value, Const) and value.value is None:
        return value
    kw = [] if dtype is None or (isinstance(dtype, Const) and dtype.value is None) else \
        [("dtype", dtype)]
    if isinstance(value, StaticSeq):
        return lw.call_value(np.asarray, [value], kw, node)
    return lw.call_value(np.asarray, [value], kw, node)


@_handler("scipy._lib._array_api", "_asarray")
def _asarray(lw, args, kwargs, node):
    options = dict(kwargs)
    if len(args) != 1 or set(options) - {"dtype", "xp", "subok", "check_finite", "copy",
                                          "order"}:
        return None
    if isinstance(options.get("check_finite"), Const) and options["check_finite"].value:
        return None  # (it raises on inf or NaN: read it as written)
    return _as_array(lw, args[0], options.get("dtype"), node)


@_handler("scipy._lib._array_api", "xp_promote")
def _xp_promote(lw, args, kwargs, node):
    from s2sad.frontend.values import StaticSeq
    options = dict(kwargs)
    if set(options) - {"broadcast", "force_floating", "xp"}:
        return None
    broadcast = options.get("broadcast", Const(False))
    floating = options.get("force_floating", Const(False))
    if not (isinstance(broadcast, Const) and isinstance(floating, Const)) or broadcast.value:
        return None
    out = []
    for a in args:
        if isinstance(a, Const) and a.value is None:
            out.append(a)
            continue
        v = _as_array(lw, a, None, node)
        if floating.value:  # an integer array becomes float64; a float one keeps its dtype
            v = lw.call_value(operator.mul, [v, Const(1.0)], [], node)
        out.append(v)
    return out[0] if len(out) == 1 else StaticSeq(tuple(out))
