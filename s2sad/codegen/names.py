"""Spelling: how generated code names primitives and constants (`np.sin`, `math.exp`, ...).

Known library callables are spelled through their module alias; anything else
gets an entry in the generated module's namespace, with its import recorded so
that ahead-of-time modules can import it.
"""

from __future__ import annotations

import builtins
import keyword
import math
import sys
import types

import numpy as np

from s2sad import runtime
from s2sad.ir import prims

RUNTIME_MODULE = runtime.__name__

_SPELLING: dict = {}


def _index():
    if _SPELLING:
        return _SPELLING
    sources = [("builtins", builtins, ""), ("math", math, "math."), ("numpy", np, "np."),
               ("numpy.linalg", np.linalg, "np.linalg."), ("numpy.random", np.random, "np.random.")]
    for _, mod, prefix in sources:
        # the module's own attributes: dir() would also list submodules that numpy loads
        # lazily (numpy.f2py, numpy.testing), and reading those imports them (~130 ms)
        attrs = vars(mod)
        names = sorted(n for n in attrs if not n.startswith("_"))
        # an object's own name first (np.concatenate, not its alias np.concat)
        own = [n for n in names if getattr(attrs[n], "__name__", None) == n]
        for n in own + sorted(names, key=len):
            obj = attrs[n]
            if obj is None or isinstance(obj, (int, float, str, bool, type(mod))):
                continue
            if not callable(obj):
                continue
            try:
                if obj in _SPELLING:
                    continue
                _SPELLING[obj] = prefix + n
            except TypeError:
                continue
    return _SPELLING


RUNTIME_NAMES = {
    prims.check_scalar_output: "check_scalar_output",
    prims.unbroadcast: "unbroadcast",
    prims.sum_to_shape: "sum_to_shape",
    prims.broadcast_like: "broadcast_like",
    prims.zeros_like: "zeros_like",
    prims.fresh_copy: "fresh_copy",
    prims.list_append: "list_append",
    prims.as_list: "as_list",
}


class Namespace:
    """The globals of a generated module: `np`, `math`, runtime helpers, captured constants."""

    def __init__(self):
        self.values: dict = {"np": np, "math": math}
        self.imports: dict = {"np": ("numpy", None), "math": ("math", None)}
        self.by_id: dict = {}
        # names printed as an assignment after the imports: {alias: ((module, qual), text)},
        # the derivative a recursive function calls (`power_vjp = s2sad.vjp(power, ...)`)
        self.bindings: dict = {}
        self.avoid: set = set()  # variable names of the generated function
        # {(mode, wrt): name} of the functions of a self-recursive derivative's module
        self.self_names: dict = {}

    def spell_callable(self, fn) -> str:
        if isinstance(fn, prims.SelfCall):  # (a function of the module: transform.py)
            return self.self_names[(fn.mode, fn.wrt)]
        if isinstance(fn, prims.Opaque):  # called as it is
            if fn.path is not None and _import_path(fn.func) is None:
                return self.add_object(fn.func, fn.path[1], fn.path)
            owner = getattr(fn.func, "__self__", None)
            if fn.spelling and "." in fn.spelling and owner is not None and \
                    not isinstance(owner, types.ModuleType) and \
                    getattr(fn.func, "__name__", None) == fn.spelling.rpartition(".")[2]:
                # a method of an object the function was given: `log.append(...)`
                head = fn.spelling.rpartition(".")[0].replace(".", "_")
                return f"{self.add_object(owner, head)}.{fn.func.__name__}"
            fn = fn.func
        table = _index()
        try:
            name = table.get(fn)
        except TypeError:
            name = None
        if name is not None:
            return name
        try:
            name = RUNTIME_NAMES.get(fn)
        except TypeError:
            name = None
        if name is not None:
            self.values[name] = fn
            self.imports[name] = (RUNTIME_MODULE, name)
            return name
        hint = getattr(fn, "__name__", None) or type(fn).__name__
        name = self.add_object(fn, hint, _import_path(fn))
        if prims.is_derivative(fn) and name not in self.bindings:
            binding = _derivative_binding(fn)
            if binding is not None:
                self.bindings[name] = binding
        return name

    def add_object(self, obj, hint: str, import_path=None) -> str:
        key = id(obj)
        if key in self.by_id:
            return self.by_id[key]
        base = _identifier(hint)
        name = base
        n = 1
        while (name in self.values and self.values[name] is not obj) or name in self.avoid:
            name = f"{base}_{n}"
            n += 1
        self.values[name] = obj
        self.by_id[key] = name
        if import_path is not None:
            self.imports[name] = import_path
        return name


def _identifier(hint: str) -> str:
    s = "".join(c if c.isalnum() or c == "_" else "_" for c in hint)
    if not s or s[0].isdigit() or keyword.iskeyword(s):
        s = "_" + s
    return s


# the packages whose ufuncs generated code imports by name (the private module for the
# ufuncs with no public name: scipy.stats' scu._cauchy_ppf)
_UFUNC_HOMES = ("scipy.special", "scipy.special._ufuncs")


def _import_path(obj):
    if prims.is_derivative(obj):
        return None  # it wears its function's name, but importing that gives the function
    owner = getattr(obj, "__self__", None)
    if isinstance(obj, types.MethodType) and not isinstance(owner, type):
        # a method bound to an object (scipy.stats.norm.logpdf): its module and qualified
        # name are its class's, whose attribute is the unbound function; import the object
        found = _global_name(owner)
        return (found[0], f"{found[1]}.{obj.__name__}") if found is not None else None
    mod = getattr(obj, "__module__", None)
    qual = getattr(obj, "__qualname__", None)
    if mod is None and isinstance(obj, np.ufunc):
        # a ufunc of another library knows no module (scipy.special.gammainc): its public home
        for home in _UFUNC_HOMES:
            found = sys.modules.get(home)
            if found is not None and getattr(found, obj.__name__, None) is obj:
                return (home, obj.__name__)
        return None
    if mod == prims.__name__ and qual in runtime.__all__:
        return (RUNTIME_MODULE, qual)  # the public home of the helpers generated code calls
    if mod and qual and "<" not in qual:
        return (_public_module(mod, qual, obj), qual)
    return None


def _global_name(obj):
    """(module, name) under which `obj` is a global of the module defining its class (and
    exported by its public package), or None."""
    mod = type(obj).__module__
    module = sys.modules.get(mod)
    for name, value in (vars(module).items() if module is not None else ()):
        if value is obj and not name.startswith("_"):
            return _public_module(mod, name, obj), name
    return None


def _public_module(mod: str, name: str, obj) -> str:
    """The package that exports `obj` as `name` above a private module of its own
    (scipy.special for scipy.special._logsumexp.logsumexp), else `mod`."""
    parts = mod.split(".")
    while len(parts) > 1 and parts[-1].startswith("_"):
        parts.pop()
        parent = sys.modules.get(".".join(parts))
        if parent is not None and getattr(parent, name, None) is obj:
            return ".".join(parts)
    return mod


def _derivative_binding(d):
    """((module, name) of the differentiated function, the expression that makes the
    derivative `d` from it), or None when the function cannot be imported by name."""
    path = _import_path(getattr(d, "func", None))
    wrt = getattr(d, "_wrt_spec", None)
    if path is None or "." in path[1] or not isinstance(getattr(d, "mode", None), str):
        return None
    return path, f"s2sad.{d.mode}({path[1]}, wrt={wrt!r})"
