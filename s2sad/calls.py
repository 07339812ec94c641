"""How a derivative is called: the arguments it refuses (masked arrays, ndarray subclasses,
arrays of objects or strings), the precision its results are returned in, and the check of a pullback's
seed. Used by s2sad.api; `d` is a Derivative (its mode, wrt and number of parameters).
"""

from __future__ import annotations

import linecache
import sys

import numpy as np

from s2sad.errors import ArgumentTypeError, Loc, RecursionLimitError

_ndarray = np.ndarray
_float64 = np.float64


def refuse_argument(func, name: str, value, path: str = ""):
    """Raise ArgumentTypeError if `value` is of a type a derivative cannot take."""
    t = type(value)
    if t is float or t is int or t is bool or t is complex or \
            (t is _ndarray and value.dtype.kind in "biufc"):
        return
    where = f"`{name}{path}`"
    if t is tuple or t is list:
        for i, item in enumerate(value):
            refuse_argument(func, name, item, f"{path}[{i}]")
        return
    hint = None
    masked = sys.modules.get("numpy.ma")  # (not imported: no masked array can exist)
    if masked is not None and isinstance(value, masked.MaskedArray):
        msg = f"{where} is a masked array: its mask would be ignored"
        hint = (f"pass the data you mean: {name}.filled(value), or the unmasked entries "
                f"{name}.compressed()")
    elif isinstance(value, _ndarray) and t is not _ndarray:
        msg = f"{where} is a {t.__name__}, a subclass of numpy.ndarray"
        hint = f"pass a plain array: np.asarray({name})"
    elif t is _ndarray and value.dtype.kind not in "biufc":
        msg = f"{where} is an array of dtype {value.dtype}"
        hint = "pass a numeric array (float, complex, int or bool)"
    else:
        return
    raise ArgumentTypeError(f"{msg} (in a call of the derivative of "
                            f"{getattr(func, '__qualname__', func)})", def_loc(func), hint)


def def_loc(func):
    code = getattr(func, "__code__", None)
    if code is None:
        return None
    text = linecache.getline(code.co_filename, code.co_firstlineno).rstrip("\n")
    return Loc(code.co_filename, code.co_firstlineno, len(text) - len(text.lstrip()), text)


LOW_PRECISION = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.complex64))


def sample(primal, kw, kwonly) -> list:
    """(type, shape, dtype) of each argument: what the dispatcher tests. A tuple's or a
    list's "shape" is the samples of its items, where it has few items of no container
    (the extra arguments of `def fun(x, *args)`), else None; a flag's or an option
    string's is ("=", its value), which the specialisation depends on."""
    return [entry(a) for a in list(primal) + [kw[n] for n in kwonly]]


SAMPLED_ITEMS = 8  # the most items of a tuple or list the dispatcher tests one by one


def entry(a):
    t = type(a)
    if t is tuple or t is list:
        if len(a) > SAMPLED_ITEMS:
            return (t, None, None)
        items = [entry(v) for v in a]
        nested = any(i[0] in (tuple, list, dict) for i in items)
        return (t, None if nested else tuple(items), None)
    if t is bool or t is str:  # a flag or an option string: its value is part of the key
        return (t, ("=", a), None)
    return (t, getattr(a, "shape", None), getattr(a, "dtype", None))


def low_precision(t, dtype):
    if dtype in LOW_PRECISION and (t is _ndarray or issubclass(t, np.inexact)):
        return dtype
    return None


def in_precision(d, sample, hit):
    """The generated function, or a wrapper returning derivatives in the precision of the
    arguments they belong to (float32 in, float32 out) where some argument is float32 or
    float16. NumPy promotes some intermediate values to float64 (a Python float broadcast
    to an array, a bool mask times a float); the results are cast back."""
    dts = [low_precision(t, dtype) for t, _, dtype in sample[:d._n_params]]
    if not any(dt is not None for dt in dts):
        return hit.function
    fn, mode, wrt = hit.function, d.mode, d._wrt
    common = np.result_type(*[dt if dt is not None else np.float64 for dt in dts])
    # a float64 argument's derivative stays float64 beside float32 ones (NumPy computes in
    # float32 where a float32 value meets a Python float, e.g. the seed 1.0)
    wide = [None if dt is not None else
            (dtype if dtype is not None and dtype.kind in "fc" else np.dtype(np.float64))
            for dt, (t, _, dtype) in zip(dts, sample[:d._n_params])]

    def to_argument(g, i):
        return cast(g, dts[i]) if dts[i] is not None else widened(g, wide[i])

    def per_wrt(grads):
        if d._wrt_tuple or (mode == "vjp" and isinstance(grads, tuple)):
            return tuple(to_argument(g, i) for g, i in zip(grads, wrt))
        return to_argument(grads, wrt[0])

    mapped = derivatives_mapped(mode, fn, per_wrt)
    if mapped is not None:
        return mapped
    if mode == "jvp":  # a tangent has its output's precision, whatever it is
        def run(*args, **kw):
            out, out_dot = fn(*args, **kw)
            if type(out) is tuple or type(out) is list:
                return out, type(out)(cast(t, getattr(o, "dtype", None), any_float=True)
                                      for o, t in zip(out, out_dot))
            return out, cast(out_dot, getattr(out, "dtype", None), any_float=True)
    else:  # jacobians, hessians: the arguments' common precision
        def run(*args, **kw):
            out = fn(*args, **kw)
            if type(out) is tuple or type(out) is list:
                return type(out)(cast(o, common) for o in out)
            return cast(out, common)
    run.__wrapped__ = fn
    return run


def derivatives_mapped(mode, fn, per_wrt):
    """`fn` (a generated grad, hvp, value_and_grad or vjp) with `per_wrt` applied to the
    derivatives it returns (through the pullback, for a vjp); None for other modes."""
    if mode in ("grad", "hvp"):
        def run(*args, **kw):
            return per_wrt(fn(*args, **kw))
    elif mode == "value_and_grad":
        def run(*args, **kw):
            value, grads = fn(*args, **kw)
            return value, per_wrt(grads)
    elif mode == "vjp":
        def run(*args, **kw):
            out, pullback = fn(*args, **kw)

            def mapped_pullback(g):
                return per_wrt(pullback(g))
            mapped_pullback.__wrapped__ = pullback
            mapped_pullback.__doc__ = pullback.__doc__
            return out, mapped_pullback
    else:
        return None
    run.__wrapped__ = fn
    return run


def cast(value, dtype, any_float=False):
    if dtype is None or (dtype not in LOW_PRECISION and not
                         (any_float and dtype.kind == "f")):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "fc":
            return value
        target = same_kind(dtype, value.dtype.kind)
        return value if value.dtype == target else value.astype(target)
    if isinstance(value, (float, np.floating)):
        return same_kind(dtype, "f").type(value)
    if isinstance(value, (complex, np.complexfloating)):
        return same_kind(dtype, "c").type(value)
    if type(value) is tuple or type(value) is list:
        return type(value)(cast(v, dtype) for v in value)
    return value


def widened(value, dtype):
    """`value` in `dtype`'s precision where it is a NumPy float or complex of less (a float64
    argument's derivative computed in float32); anything else unchanged."""
    if isinstance(value, (np.ndarray, np.inexact)) and value.dtype.kind in "fc" and \
            value.dtype.itemsize < same_kind(dtype, value.dtype.kind).itemsize:
        return value.astype(same_kind(dtype, value.dtype.kind))
    if type(value) is tuple or type(value) is list:
        return type(value)(widened(v, dtype) for v in value)
    return value


def same_kind(dtype, kind):
    """`dtype`'s precision for a real ("f") or complex ("c") value: a complex derivative in a
    float32 computation is complex64, a real one in a complex64 computation float32."""
    if dtype.kind == kind:
        return dtype
    if kind == "c":
        return np.dtype(np.complex128) if dtype.itemsize > 4 else np.dtype(np.complex64)
    return np.dtype(np.float64) if dtype.itemsize > 8 else np.dtype(np.float32)


def shape_of(value):
    """The shape of `value`, item by item for a tuple or list (whose items may differ in
    shape: np.split's parts)."""
    if type(value) is tuple or type(value) is list:
        return tuple(shape_of(v) for v in value)
    return np.shape(value)


def checked_vjp(result, name):
    """(out, pullback) with a pullback that refuses a seed unlike `out` (shape, kind).

    Paid on every call of a `vjp`: the common outputs (a Python or NumPy float64, a real
    array) and seeds take a path of type tests (`np.shape` and `np.iscomplexobj` cost a
    microsecond each), and the wrapper's docstring is its code's own, not made per call."""
    out, sweep = result
    t = type(out)
    if t is float or t is _float64:  # (np.sum and friends return a NumPy float64)
        expected, complex_out = (), False
    elif t is _ndarray:
        expected, complex_out = out.shape, out.dtype.kind == "c"
    else:
        expected, complex_out = shape_of(out), has_complex(out)

    def pullback(out_bar):
        """The reverse sweep of a vjp: pullback(out_bar) -> cotangents, one per `wrt`
        argument. It keeps the forward sweep's saved values (and the arguments) alive."""
        try:
            tb = type(out_bar)
            if tb is float or tb is int or tb is _float64:
                if expected == ():
                    return sweep(out_bar)
            elif tb is _ndarray:
                if out_bar.shape == expected and out_bar.dtype.kind in "fiu":
                    return sweep(out_bar)
            elif tb is not tuple and type(expected) is not tuple and \
                    np.shape(out_bar) == expected:
                kind = getattr(out_bar, "dtype", None)
                if kind is None or kind.kind in "fiu":
                    return sweep(out_bar)
            if type(out) is tuple and tb is not tuple and isinstance(out_bar, (tuple, list)):
                # the cotangents of a list's or a namedtuple's items: the primal returned a
                # list or namedtuple, which the derivative's output stands for as a tuple
                out_bar = tuple(out_bar)
            check_seed(out_bar, out, name)
            return sweep(out_bar)
        except RecursionError as e:  # a recursive function's reverse sweep
            raise RecursionLimitError.of(f"the pullback of {name}", e) from None

    if complex_out:  # a real seed of a complex output: the complex one it stands for
        real_pullback = pullback

        def pullback(out_bar):
            return real_pullback(complex_seed(out_bar, out))

        pullback.__doc__ = real_pullback.__doc__
    pullback.__wrapped__ = sweep
    return out, pullback


def has_complex(out) -> bool:
    if type(out) is tuple or type(out) is list:
        return any(has_complex(o) for o in out)
    return np.iscomplexobj(out)


def complex_seed(seed, out):
    """`seed` as a complex cotangent where its output is complex (so that the cotangents of
    complex arguments come back complex); anything else unchanged (check_seed judges it)."""
    if type(out) is tuple or type(out) is list:
        if type(seed) not in (tuple, list) or len(seed) != len(out):
            return seed
        items = [complex_seed(s, o) for s, o in zip(seed, out)]
        return tuple(items) if type(out) is tuple else items
    if np.iscomplexobj(out) and not np.iscomplexobj(seed) and \
            isinstance(seed, (int, float, np.ndarray, np.number)) and \
            np.asarray(seed).dtype.kind in "fiu":
        return seed + 0j
    return seed


def check_seed(seed, out, name, path="out_bar"):
    if type(out) is list and type(seed) is _ndarray and out and \
            len({np.shape(o) for o in out}) == 1 and \
            seed.shape == (len(out),) + np.shape(out[0]):
        return  # the items' cotangents stacked (the items have one shape)
    if type(out) is tuple or type(out) is list:
        if not isinstance(seed, (tuple, list)) or len(seed) != len(out):
            what = "one per output" if type(out) is tuple else "one per item of the list"
            raise ValueError(f"the pullback of {name} needs a {type(out).__name__} of "
                             f"{len(out)} cotangents ({what}), got {type(seed).__name__}")
        for i, (s, o) in enumerate(zip(seed, out)):
            check_seed(s, o, name, f"{path}[{i}]")
        return
    if (seed is None or np.asarray(seed).dtype.kind == "b") and \
            np.asarray(out).dtype.kind in "biu":
        return  # an int or bool output carries no derivative: None (or bools) stand for it
    if np.shape(seed) != np.shape(out):
        raise ValueError(f"the pullback of {name} needs {path} of the output's shape "
                         f"{np.shape(out)}, got shape {np.shape(seed)}")
    kind = np.asarray(seed).dtype.kind if not isinstance(seed, (int, float)) else "f"
    if kind == "c" and np.iscomplexobj(out):
        return  # a complex output takes a complex cotangent
    if kind not in "fiu":
        what = "real" if kind == "c" else "numeric"
        raise ValueError(f"the pullback of {name} needs a {what} {path} (the output is "
                         f"{'real' if kind == 'c' else np.asarray(out).dtype}), got dtype "
                         f"{np.asarray(seed).dtype}")


# -- dicts and namedtuples: passed to generated code as tuples ----------------------------

def is_structured(value) -> bool:
    """A dict or namedtuple, or a tuple or list holding one: the generated code takes it as
    a tuple of its values (in insertion or field order); its derivative is rebuilt."""
    t = type(value)
    if t is dict or (t is not tuple and isinstance(value, tuple)):
        return True
    if t is tuple or t is list:
        return any(is_structured(v) for v in value)
    return False


def flattened(value):
    """`value` with every dict and namedtuple inside it made a tuple of its values."""
    t = type(value)
    if t is dict:
        return tuple(flattened(v) for v in value.values())
    if isinstance(value, tuple) or t is list:
        if not is_structured(value):
            return value
        items = [flattened(v) for v in value]
        return items if t is list else tuple(items)
    return value


def rebuilt(template, flat):
    """A derivative `flat` (tuples where `template` has dicts and namedtuples) given the
    structure of `template`: {key: ...} for a dict, the same namedtuple class."""
    if not is_structured(template) or type(flat) not in (tuple, list):
        return flat
    items = [rebuilt(t, f) for t, f in zip(template.values() if type(template) is dict
                                           else template, flat)]
    if type(template) is dict:
        return dict(zip(template, items))
    if type(template) is not tuple and isinstance(template, tuple):
        return type(template)(*items)
    return tuple(items)


def structured_call(d, fn, primal):
    """`fn` (the generated function, called with flattened arguments) returning each wrt
    argument's derivative with the structure of that argument."""
    mode, wrt = d.mode, d._wrt
    if mode == "jvp" or not any(is_structured(primal[i]) for i in wrt):
        return fn

    def per_wrt(grads):
        if d._wrt_tuple or (mode == "vjp" and isinstance(grads, tuple)):
            return tuple(rebuilt(primal[i], g) for g, i in zip(grads, wrt))
        return rebuilt(primal[wrt[0]], grads)

    return derivatives_mapped(mode, fn, per_wrt) or fn


# -- a JVP's tangents: the shape of their primal --------------------------------------------

def check_tangent(tangent, primal, name, path):
    """Refuse a tangent unlike its primal (another shape or structure): NumPy would
    broadcast it, or fail inside the generated code."""
    if isinstance(primal, (tuple, list)) and not isinstance(tangent, np.ndarray):
        if not isinstance(tangent, (tuple, list)) or len(tangent) != len(primal):
            raise ValueError(f"{name} needs {path} with the structure of its argument (a "
                             f"{type(primal).__name__} of {len(primal)}), got "
                             f"{type(tangent).__name__}")
        for i, (t, p) in enumerate(zip(tangent, primal)):
            check_tangent(t, p, name, f"{path}[{i}]")
        return
    if isinstance(primal, dict):
        if not isinstance(tangent, dict) or list(tangent) != list(primal):
            raise ValueError(f"{name} needs {path} with the keys of its argument "
                             f"{list(primal)}, got {type(tangent).__name__}")
        for k in primal:
            check_tangent(tangent[k], primal[k], name, f"{path}[{k!r}]")
        return
    if isinstance(primal, (int, bool, np.integer, np.bool_)) or not isinstance(
            primal, (float, complex, np.ndarray, np.inexact)):
        return  # an integer or other argument: its tangent is not read
    if np.shape(tangent) != np.shape(primal):
        raise ValueError(f"{name} needs {path} of its argument's shape {np.shape(primal)}, "
                         f"got shape {np.shape(tangent)}")


def check_tangents(d, pos, names):
    """Each tangent of a JVP (or HVP) call against its primal argument."""
    n = d._n_params
    for j, i in enumerate(d._wrt):
        if n + j < len(pos):
            check_tangent(pos[n + j], pos[i], d.__name__, names[i] + "_dot")


# -- a list, namedtuple or dict returned: the generated code returns tuples ---------------

def rebuilt_output(structure, flat):
    """`flat` (tuples, as the generated code returns them) given the structure of the
    function's output (frontend.lower.output_structure): a list, the namedtuple's class, a
    dict of the same keys, at any depth; a leaf (None) as it is."""
    if structure is None or type(flat) is not tuple:
        return flat
    what, detail, shapes = structure
    items = [rebuilt_output(s, v) for s, v in zip(shapes, flat)]
    if what == "list":
        return items
    if what == "record":
        return detail(*items)
    if what == "dict":
        return dict(zip(detail, items))
    return tuple(items)


def flat_seed(seed, structure):
    """A pullback's seed given with the output's structure (or as tuples) as the tuples the
    generated code takes; anything unlike it is left for check_seed to refuse."""
    if structure is None:
        return seed
    what, detail, shapes = structure
    if what == "dict" and type(seed) is dict:
        if list(seed) != list(detail) and set(seed) != set(detail):
            raise ValueError(f"the pullback's seed needs the keys {list(detail)} of the "
                             f"output, got {list(seed)}")
        seed = [seed[k] for k in detail]
    if isinstance(seed, (tuple, list)) and len(seed) == len(shapes):
        return tuple(flat_seed(s, st) for s, st in zip(seed, shapes))
    return seed


def structured_result(mode: str, structure, name: str):
    """A function taking what a derivative's generated function returned (a vjp's result
    after checked_vjp) and giving it the output's `structure`: (out, out_dot) of a jvp, out
    and the pullback's seed of a vjp, the Jacobians of jacfwd and jacrev."""
    if mode == "jvp":
        def result(r):
            return rebuilt_output(structure, r[0]), rebuilt_output(structure, r[1])
    elif mode == "vjp":
        def result(r):
            out, checked = r

            def pullback(out_bar):
                return checked(flat_seed(out_bar, structure))
            pullback.__doc__ = checked.__doc__
            pullback.__wrapped__ = checked
            return rebuilt_output(structure, out), pullback
    else:  # jacfwd, jacrev: one Jacobian (or a tuple of them, one per wrt) per output
        def result(r):
            return rebuilt_output(structure, r)
    return result
