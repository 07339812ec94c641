"""Guards: what a compiled derivative depends on besides its arguments' kinds.

Collected from the bytecode of the function and of every helper it reaches (the globals,
closure cells and attributes it loads, the helpers' code objects and defaults), checked
before a compiled derivative is served. Lowering reads exactly these names, so a guard
set that still holds means lowering would read the same values again.
"""

from __future__ import annotations

import builtins
import dis
import functools
import types

import numpy as np

# Objects of these top-level packages are taken as fixed: rebinding `np.sin` is not guarded.
LIBRARY_ROOTS = ("numpy", "math", "builtins", "operator", "s2sad", "s2sad_rules", "cmath",
                 "scipy")
_SIMPLE = (int, float, complex, bool, str, bytes, type(None))
_LOADS_GLOBAL = {"LOAD_GLOBAL", "LOAD_NAME"}
_LOADS_ATTR = {"LOAD_ATTR", "LOAD_METHOD"}
_MISSING = object()


def is_library(obj) -> bool:
    """Is `obj` a module, class or function of a library taken as fixed?"""
    if isinstance(obj, types.ModuleType):
        mod = obj.__name__
    elif isinstance(obj, np.ufunc):
        return True
    else:
        mod = getattr(obj, "__module__", None) or ""
        if not isinstance(mod, str):
            return False
    return mod.split(".")[0] in LIBRARY_ROOTS


def same(a, b) -> bool:
    """Does `a` stand for what `b` stood for? Identity; equal value for numbers, strings and
    tuples of them (NaN equals NaN); the same items for a list, dict or set snapshot."""
    if a is b:
        return True
    ta = type(a)
    if ta is not type(b):
        return False
    if ta in _SIMPLE:
        return a == b or (a != a and b != b)
    if ta is tuple or ta is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if ta is dict:
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return False


def snapshot(v):
    """A copy of a mutable container's structure (leaves kept by identity)."""
    if type(v) is list:
        return [snapshot(x) for x in v]
    if type(v) is dict:
        return {k: snapshot(x) for k, x in v.items()}
    if type(v) is tuple:
        return tuple(snapshot(x) for x in v)
    return v


def _is_container(v) -> bool:
    return type(v) in (list, dict) or (type(v) is tuple and any(_is_container(x) for x in v))


class Guards:
    """A set of facts, each `(tag, holder, key, expected)`:

    - "item":   holder[key] is expected (a globals dict, a module's dict);
    - "absent": key not in holder (a builtin that a global of the same name would shadow);
    - "cell":   holder.cell_contents is expected (a closure variable);
    - "attr":   getattr(holder, key) is expected (a class or object attribute, a function's
      __code__ or __defaults__);
    - "noattr": holder has no attribute `key` (read only where hasattr says it exists);
    - "equal":  holder's current value (read by `key`) equals the snapshot `expected`
      (a list or dict whose items lowering may read).
    """

    __slots__ = ("entries",)

    def __init__(self, entries=()):
        self.entries = list(entries)

    def __repr__(self) -> str:
        return f"<Guards: {len(self.entries)} facts>"

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self):
        return iter(self.entries)

    def merged(self, other: Guards) -> Guards:
        seen = {(e[0], id(e[1]), e[2]) for e in self.entries}
        extra = [e for e in other.entries if (e[0], id(e[1]), e[2]) not in seen]
        return Guards(self.entries + extra) if extra else self

    def holds(self) -> bool:
        """Do all facts still hold (numbers compared by value)?"""
        return all(_current(e) is not _MISSING and _holds(e) for e in self.entries)

    def refreshed(self) -> Guards:
        """The same facts, expecting the current objects (call only when `holds()`)."""
        out = []
        for tag, holder, key, expected in self.entries:
            if tag in ("item", "cell", "attr"):
                out.append((tag, holder, key, _current((tag, holder, key, expected))))
            else:
                out.append((tag, holder, key, expected))
        return Guards(out)

    def condition(self, env: dict, prefix: str) -> str:
        """A Python expression that is True while every fact holds by identity (it may
        raise when a name was deleted: the caller treats that as False). Objects it needs
        are put in `env` under names starting with `prefix`."""
        parts = []
        for i, (tag, holder, key, expected) in enumerate(self.entries):
            h, v = f"{prefix}H{i}", f"{prefix}V{i}"
            env[h] = holder
            if tag == "item":
                env[v] = expected
                parts.append(f"{h}[{key!r}] is {v}")
            elif tag == "absent":
                parts.append(f"{key!r} not in {h}")
            elif tag == "noattr":
                parts.append(f"not hasattr({h}, {key!r})")
            elif tag == "cell":
                env[v] = expected
                parts.append(f"{h}.cell_contents is {v}")
            elif tag == "attr":
                env[v] = expected
                if key.isidentifier():
                    parts.append(f"{h}.{key} is {v}")
                else:
                    env[f"{prefix}K{i}"] = key
                    parts.append(f"getattr({h}, {prefix}K{i}) is {v}")
            else:  # equal: a container snapshot, checked in full
                env[f"{prefix}S"] = _equal_holds
                env[v] = (tag, holder, key, expected)
                parts.append(f"{prefix}S({v})")
        return " and ".join(parts) if parts else "True"


def _current(entry):
    tag, holder, key, _ = entry
    try:
        if tag == "item":
            return holder[key]
        if tag == "cell":
            return holder.cell_contents
        if tag == "attr":
            return getattr(holder, key)
        if tag in ("absent", "noattr"):
            return None
        return _read(holder, key)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError):
        return _MISSING


def _holds(entry) -> bool:
    tag, holder, key, expected = entry
    if tag == "absent":
        return key not in holder
    if tag == "noattr":
        return not hasattr(holder, key)
    if tag == "equal":
        return _equal_holds(entry)
    return same(_current(entry), expected)


def _read(holder, key):
    """The container an "equal" fact watches: ("item", name) in a dict, ("cell",) of a cell,
    ("attr", name) of an object."""
    how = key[0]
    if how == "item":
        return holder[key[1]]
    if how == "cell":
        return holder.cell_contents
    return getattr(holder, key[1])


def _equal_holds(entry) -> bool:
    try:
        return same(_read(entry[1], entry[2]), entry[3])
    except Exception:
        return False


# -- collection -------------------------------------------------------------------------


def derivative_of(v):
    """The function a derivative object differentiates (its `__s2sad_function__`), or None."""
    if isinstance(v, (types.FunctionType, types.ModuleType, type)) or not callable(v):
        return None
    try:
        if getattr(type(v), "__s2sad_function__", None) is None:
            return None
        return v.__s2sad_function__
    except Exception:
        return None


def collect(func) -> Guards:
    """The guards of a derivative of `func` (a Python function, or a derivative object)."""
    collector = _Collector()
    if isinstance(func, types.FunctionType):
        collector.function(func, 0)
    elif isinstance(func, types.MethodType) and isinstance(func.__func__, types.FunctionType):
        collector.function(func.__func__, 0, func.__self__)
    else:
        collector.value(func)
    return Guards(collector.out)


class _Collector:
    """The facts found so far (each once), and the functions already visited."""

    def __init__(self):
        self.out: list = []
        self.seen_fns: set = set()
        self.seen_facts: set = set()

    def add(self, tag, holder, key, expected):
        k = (tag, id(holder), key if not isinstance(key, tuple) else key)
        if k in self.seen_facts:
            return
        self.seen_facts.add(k)
        self.out.append((tag, holder, key, expected))
        if _is_container(expected) and tag in ("item", "cell", "attr"):
            how = ("cell",) if tag == "cell" else (tag, key)
            ek = ("equal", id(holder), how)
            if ek not in self.seen_facts:
                self.seen_facts.add(ek)
                self.out.append(("equal", holder, how, snapshot(expected)))

    def value(self, v, depth=0):
        """Follow a value lowering may inline: a user function, or a derivative object."""
        if depth > 50:
            return
        if isinstance(v, types.FunctionType) and not is_library(v):
            self.function(v, depth + 1)
            return
        if isinstance(v, types.MethodType) and isinstance(v.__func__, types.FunctionType) \
                and not is_library(v.__func__):
            self.function(v.__func__, depth + 1, v.__self__)
            return
        if isinstance(v, functools.partial):  # (lowering calls its function with its args)
            # what it holds, like a global's value: a list among its arguments, or its
            # keywords dict, may change in place between two calls
            self.add("attr", v, "args", v.args)
            self.add("attr", v, "keywords", v.keywords)
            self.value(v.func, depth + 1)
            for a in v.args + tuple(v.keywords.values()):
                self.value(a, depth + 1)
            return
        call = getattr(type(v), "__call__", None)
        if isinstance(call, types.FunctionType) and not isinstance(v, type) and \
                not is_library(call):
            # an object called like a function: its `__call__`, with its attributes
            self.add("attr", type(v), "__call__", call)
            self.function(call, depth + 1, v)
            return
        inner = derivative_of(v)
        if inner is not None:
            self.value(inner, depth + 1)

    def function(self, fn, depth, this=_MISSING):
        """The facts of `fn`'s code; `this`: the object of a bound method, whose attribute
        chains (self.k, self.helper) are followed like a global's."""
        if (id(fn), id(this)) in self.seen_fns:
            return
        self.seen_fns.add((id(fn), id(this)))
        code = fn.__code__
        self.add("attr", fn, "__code__", code)
        if depth > 0:  # a helper: lowering inlines its defaults
            self.add("attr", fn, "__defaults__", fn.__defaults__)
            if code.co_kwonlyargcount:
                self.add("attr", fn, "__kwdefaults__", fn.__kwdefaults__)
        # the function itself: its defaults are not compiled in (a derivative binds its
        # arguments as the function does, reading the defaults when a call omits them)
        for d in (fn.__defaults__ or ()):
            self.value(d, depth)
        scope = fn.__globals__
        b = scope.get("__builtins__", builtins)
        bdict = b if isinstance(b, dict) else vars(b)
        cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
        for how, name, attrs in _reads(code):
            if how == "self":
                if this is not _MISSING:
                    self.attributes(this, attrs, depth)
                continue
            v = self.name(how, name, scope, bdict, cells)
            if v is _MISSING:
                continue
            self.value(v, depth)
            self.attributes(v, attrs, depth)

    def name(self, how: str, name: str, scope: dict, bdict: dict, cells: dict):
        """The value a global (in `scope`, else `bdict`) or closure name (in `cells`) holds,
        with the fact that keeps it; _MISSING when it has none."""
        if how == "global":
            if name in scope:
                v = scope[name]
                self.add("item", scope, name, v)
            elif name in bdict:
                self.add("absent", scope, name, None)
                v = bdict[name]
            else:
                return _MISSING
            return v
        cell = cells.get(name)
        if cell is None:
            return _MISSING
        try:
            v = cell.cell_contents
        except ValueError:
            return _MISSING
        self.add("cell", cell, None, v)
        return v

    def attributes(self, v, attrs, depth):
        """Attribute chains on user modules, classes and objects: helpers.h, cfg.k."""
        for attr in attrs:
            if is_library(v) or isinstance(v, types.FunctionType):
                break
            if isinstance(v, types.ModuleType):
                if attr not in v.__dict__:
                    break
                holder, tag = v.__dict__, "item"
                v = holder[attr]
            else:
                try:
                    got = getattr(v, attr)
                except AttributeError:
                    # read only where it exists (`self.offset if hasattr(self, "offset")`):
                    # setting it changes what lowering decides
                    self.add("noattr", v, attr, None)
                    break
                except Exception:
                    break
                if not isinstance(got, types.MethodType) and \
                        getattr(got, "__self__", None) is v and not isinstance(v, type) and \
                        getattr(v, attr, None) is not got:
                    # a method of a compiled class (a Cython loss's `closs.loss`), bound
                    # anew at each read: the function found on the class is the fact
                    found = getattr(type(v), attr, None)
                    if found is not None:
                        if isinstance(getattr(v, "__dict__", None), dict):
                            self.add("absent", v.__dict__, attr, None)
                        self.add("attr", type(v), attr, found)
                    break
                holder, tag = v, "attr"
                v = got
            if isinstance(v, types.MethodType):
                # obj.method(...): the function found on the class, inlined with obj
                func = getattr(type(holder), attr, None) if tag == "attr" else None
                if func is v.__func__ and isinstance(func, types.FunctionType):
                    self.add("absent", getattr(holder, "__dict__", {}), attr, None)
                    self.add("attr", type(holder), attr, func)
                    self.value(v, depth)
                break  # else x.method(): a runtime call, lowered as an array method
            self.add(tag, holder, attr, v)
            self.value(v, depth)


_READS: dict = {}  # code object -> what it loads (see _reads)


def _reads(code) -> list:
    """(how, name, attribute chain) of each global ("global") and free variable ("cell") that
    `code` and the code nested in it load, read from the bytecode once per code object."""
    hit = _READS.get(code)
    if hit is not None:
        return hit
    out = []
    first = code.co_varnames[0] if code.co_argcount else None
    # attributes the code writes (`self.nfev += 1`): read where the derivative runs, never
    # a fact of the compile (guarding one would compile again at every call)
    stored = {ins.argval for c in _codes(code) for ins in dis.get_instructions(c)
              if ins.opname in ("STORE_ATTR", "DELETE_ATTR")}
    for c in _codes(code):
        try:
            loads = _loads_fast(c)
        except Exception:  # an unfamiliar bytecode layout: the documented (slower) reader
            loads = [_documented(ins) for ins in dis.get_instructions(c)]
        for i, (op, arg) in enumerate(loads):
            if op in _LOADS_GLOBAL:
                how, name = "global", arg
            elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF") and c is code and \
                    arg in code.co_freevars:
                how, name = "cell", arg
            elif first is not None and arg == first and (
                    (op == "LOAD_FAST" and c is code) or
                    (op in ("LOAD_DEREF", "LOAD_CLASSDEREF") and
                     (c is code or arg in c.co_freevars))):
                how, name = "self", arg  # the first parameter (a bound method's object)
            else:
                continue
            attrs = []
            j = i + 1  # (indexed: a slice of the rest per load was quadratic in the length)
            while j < len(loads) and loads[j][0] in _LOADS_ATTR and loads[j][1] not in stored:
                attrs.append(loads[j][1])
                j += 1
            out.append((how, name, tuple(attrs)))
    out += _asked_attributes(code, first, stored)
    _READS[code] = out = list(dict.fromkeys(out))
    return out


def _asked_attributes(code, first, stored) -> list:
    """`hasattr(obj, "name")` and `getattr(obj, "name", ...)` of a global, a closure value or
    the first parameter (a method's object), as (how, name, (attribute,)): lowering decides
    branches on them, so whether the attribute exists is a fact to guard (setting
    `self.offset` later compiles the other branch)."""
    out = []
    for c in _codes(code):
        ins = [i for i in dis.get_instructions(c) if i.opname not in ("CACHE", "PUSH_NULL")]
        for a, b, k in zip(ins, ins[1:], ins[2:]):
            if a.opname not in _LOADS_GLOBAL or a.argval not in ("hasattr", "getattr") or \
                    k.opname != "LOAD_CONST" or not isinstance(k.argval, str) or \
                    k.argval in stored:
                continue
            if b.opname in _LOADS_GLOBAL:
                out.append(("global", b.argval, (k.argval,)))
            elif b.opname in ("LOAD_DEREF", "LOAD_CLASSDEREF") and b.argval in code.co_freevars:
                out.append(("cell", b.argval, (k.argval,)))
            elif first is not None and b.argval == first and b.opname in (
                    "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF"):
                out.append(("self", b.argval, (k.argval,)))
    return out


_OPNAME = getattr(dis, "_all_opname", dis.opname)
_LOCALS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST"}
_NAMED = {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_METHOD", "LOAD_DEREF",
          "LOAD_CLASSDEREF"} | _LOCALS
_SHIFTED = {"LOAD_GLOBAL": (3, 11), "LOAD_ATTR": (3, 12)}  # the name index is arg >> 1


def _loads_fast(code) -> list:
    """(opname, name) of each instruction, names resolved for the loads `_reads` follows
    (None for the others): the same as dis.get_instructions gives, without building its
    Instruction records (a tenth of the time)."""
    import sys

    version = sys.version_info[:2]
    names = code.co_names
    varname = getattr(code, "_varname_from_oparg", None)
    cells = code.co_cellvars + code.co_freevars
    out = []
    for item in dis._unpack_opargs(code.co_code):
        op, arg = item[-2], item[-1]  # (offset, [start,] opcode, argument)
        opname = _OPNAME[op]
        name = None
        if opname in _NAMED:
            if opname in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
                name = varname(arg) if varname is not None else cells[arg]
            elif opname in _LOCALS:
                if opname == "LOAD_FAST_LOAD_FAST":  # two locals: the second is on top
                    arg &= 15
                name = varname(arg) if varname is not None else code.co_varnames[arg]
                opname = "LOAD_FAST"
            else:
                shifted = opname in _SHIFTED and version >= _SHIFTED[opname]
                name = names[arg >> 1 if shifted else arg]
        out.append((opname, name))
    return out


def _documented(ins):
    if ins.opname in _LOCALS:
        arg = ins.argval[-1] if isinstance(ins.argval, tuple) else ins.argval
        return "LOAD_FAST", arg
    return ins.opname, ins.argval


def _codes(code):
    stack, out = [code], []
    while stack:
        c = stack.pop()
        out.append(c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out
