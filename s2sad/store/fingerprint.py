"""What a compiled derivative depends on, as hashes: the function's source and every value
and helper it reads (`describe`), the rule table's rules, and the compiler's own files.
"""

from __future__ import annotations

import hashlib
import inspect
import linecache
import os
import re
import sys
import types

import numpy as np

from s2sad_rules import TABLE as _TABLE

_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_LIBRARY_ROOTS = ("numpy", "math", "builtins", "s2sad", "s2sad_rules", "operator")


class _Undescribable(Exception):
    """The function depends on something whose content the key cannot capture."""


# -- what a derivative depends on ----------------------------------------------------


def source_fingerprint(func, positions: bool = True, strict: bool = True) -> str | None:
    """A hash of the source of `func` and of everything its generated code depends on.

    That is the source of `func` and of every Python function it may inline (found
    through the global, closure and attribute names its code uses), and the values of
    plain constants it reads (numbers, strings, containers of them, array shapes), its
    defaults and keyword defaults. `positions` adds file names, line numbers (generated
    code cites them in comments) and the functions' code objects (not portable between
    Python versions). With `strict`, a dependency whose content cannot be hashed (an
    arbitrary object) gives None; otherwise it counts by its type.
    """
    try:
        parts, _ = describe(func, positions, strict)
    except _Undescribable:
        return None
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def describe(func, positions: bool = True, strict: bool = True):
    """(a list describing `func` and its dependencies, {filename: [(first, last) lines]})."""
    parts: list = []
    spans: dict = {}

    def visit(fn) -> list:
        inner = getattr(fn, "func", None)
        if not isinstance(fn, types.FunctionType) and inner is not None and hasattr(fn, "mode"):
            # a Derivative being differentiated again: what it is of, and how
            wrt = fn._resolve()
            parts.append(("derivative", fn.mode, tuple(wrt), fn._wrt_tuple))
            return [inner]
        if not isinstance(fn, types.FunctionType):
            raise _Undescribable(f"{fn!r} is not a Python function")
        lines, first = _source_lines(fn)
        filename = fn.__code__.co_filename
        for f in {filename, inspect.getsourcefile(fn) or filename}:
            spans.setdefault(f, []).append((first, first + len(lines) - 1))
        where = (filename, first, code_digest(fn.__code__)) if positions else ()
        parts.append(("def", fn.__module__, fn.__qualname__, *where, "".join(lines)))
        return _note_reads(fn, parts, strict, attributes=True)

    _breadth_first(func, visit)
    return parts, spans


def _breadth_first(func, visit):
    """Call `visit` on `func`, then once on each function a visit returns (the helpers a
    function calls, recursively), in breadth-first order."""
    seen: set = set()
    queue = [func]
    while queue:
        fn = queue.pop(0)
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        queue.extend(visit(fn))


def _note_reads(fn, parts: list, strict: bool, attributes: bool) -> list:
    """Add to `parts` what `fn` reads: ("calls", name) for a user helper (returned, to be
    described in turn), ("uses", name, its description) for any other value."""
    helpers = []
    for name, value in _referenced(fn, attributes):
        if isinstance(value, types.FunctionType) and not _TABLE.is_primitive(value) \
                and not _is_library(value):
            parts.append(("calls", name))
            helpers.append(value)
        else:
            parts.append(("uses", name, _describe_value(value, strict)))
    return helpers


def code_digest(code: types.CodeType) -> str:
    """A hash of what a code object does (instructions, names, constants, nested code),
    without its file name or line numbers."""
    h = hashlib.sha256()
    stack = [code]
    while stack:
        c = stack.pop()
        h.update(c.co_code)
        h.update(repr((c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars,
                       c.co_argcount, c.co_kwonlyargcount, c.co_flags)).encode())
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                stack.append(k)
                h.update(b"<code>")
            elif isinstance(k, frozenset):  # its repr's order depends on string hashing
                h.update(repr(sorted(map(repr, k))).encode())
            else:
                h.update(repr(k).encode())
    return h.hexdigest()


def _source_lines(fn):
    """The lines of `fn`'s definition, from its code object's line range.

    Like inspect.getsourcelines (decorators to last line), without tokenizing the file.
    """
    code = fn.__code__
    filename = code.co_filename
    linecache.checkcache(filename)  # an edited file is read again
    lines = linecache.getlines(filename, fn.__globals__)
    first = code.co_firstlineno
    last = first
    stack = [code]
    while stack:
        c = stack.pop()
        last = max([last, *(line for _, _, line in c.co_lines() if line)])
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    if not lines or last > len(lines):
        raise _Undescribable(f"the source of {fn.__qualname__} is not available")
    return lines[first - 1:last], first


def _referenced(fn, attributes: bool = True):
    """(name, value) of every global, closure variable and default `fn`'s code can read."""
    code = fn.__code__
    names: list = []
    stack = [code]
    while stack:
        c = stack.pop()
        names.extend(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    attr_names = set(names)
    scope = fn.__globals__
    builtins_ = scope.get("__builtins__", {})
    if isinstance(builtins_, types.ModuleType):
        builtins_ = vars(builtins_)
    out = []
    for name in dict.fromkeys(names):
        if name in scope:
            value = scope[name]
        elif name in builtins_:
            value = builtins_[name]
        else:
            continue
        out.append((name, value))
        if attributes:
            out.extend(_attributes(name, value, attr_names, depth=2))
    if fn.__closure__:
        for var, cell in zip(code.co_freevars, fn.__closure__):
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            out.append((var, value))
            if attributes:
                out.extend(_attributes(var, value, attr_names, depth=2))
    for i, d in enumerate(fn.__defaults__ or ()):
        out.append((f"<default {i}>", d))
    for k, d in sorted((fn.__kwdefaults__ or {}).items()):
        out.append((f"<default {k}>", d))
    return out


def _attributes(prefix, value, attr_names, depth):
    """`value.attr` for each attribute name the code uses, when `value` is a user module
    or class (how `helpers.f(x)` reaches a helper)."""
    if depth == 0 or not isinstance(value, (types.ModuleType, type)) or _is_library(value):
        return []
    out = []
    for a in sorted(attr_names):
        try:
            v = inspect.getattr_static(value, a) if isinstance(value, type) else \
                value.__dict__.get(a)
        except AttributeError:
            continue
        if isinstance(v, (staticmethod, classmethod)):
            v = v.__func__
        if v is None and not (isinstance(value, types.ModuleType) and a in value.__dict__):
            continue
        out.append((f"{prefix}.{a}", v))
        out.extend(_attributes(f"{prefix}.{a}", v, attr_names, depth - 1))
    return out


def _is_library(obj) -> bool:
    mod = obj.__name__ if isinstance(obj, types.ModuleType) else \
        getattr(obj, "__module__", None) or ""
    return mod.split(".")[0] in _LIBRARY_ROOTS


_MAX_ITEMS = 1000  # a larger container is not described item by item


def _describe_value(v, strict: bool, depth: int = 3):
    if isinstance(v, _PLAIN):
        return (type(v).__name__, repr(v))
    if isinstance(v, (tuple, list)) and depth and len(v) <= _MAX_ITEMS:
        return (type(v).__name__, tuple(_describe_value(x, strict, depth - 1) for x in v))
    if isinstance(v, (set, frozenset)) and depth and len(v) <= _MAX_ITEMS \
            and all(isinstance(x, _PLAIN) for x in v):
        return (type(v).__name__, tuple(sorted(repr(x) for x in v)))
    if type(v) is dict and depth and len(v) <= _MAX_ITEMS \
            and all(isinstance(k, _PLAIN) for k in v):
        return ("dict", tuple(sorted((repr(k), _describe_value(x, strict, depth - 1))
                                     for k, x in v.items())))
    if isinstance(v, types.ModuleType):
        return ("module", v.__name__)
    if isinstance(v, np.ndarray):
        return ("ndarray", v.shape, v.dtype.str)
    if isinstance(v, np.generic):
        return ("numpy scalar", v.dtype.str, repr(v.item()))
    if not isinstance(v, (type, types.FunctionType)) and hasattr(v, "mode") and \
            getattr(v, "func", None) is not None and callable(v):
        # a derivative a function calls (check_grads' `_s2sad_d`): what it is of, and how
        # (by its name alone, two derivatives of functions named alike shared a key)
        inner = source_fingerprint(v, positions=False, strict=strict)
        if inner is None:
            raise _Undescribable("a derivative of something that cannot be hashed")
        return ("derivative", inner, getattr(v, "_cmode", v.mode),
                repr(getattr(v, "_wrt_spec", None)))
    if isinstance(v, type) or callable(v):
        mod = getattr(v, "__module__", None) or type(v).__module__
        qual = getattr(v, "__qualname__", None) or getattr(v, "__name__", None)
        if qual is not None:
            code = getattr(v, "__code__", None)
            return ("callable", mod, qual, getattr(code, "co_firstlineno", None))
    if strict:
        raise _Undescribable(f"cannot hash the content of {type(v).__name__} objects")
    state = getattr(v, "__dict__", None)
    if type(state) is dict and depth:  # a settings object a rule reads: its attributes
        return ("object", type(v).__module__, type(v).__qualname__,
                _describe_value(state, strict, depth - 1))
    return ("object", type(v).__module__, type(v).__qualname__)


def covers_ir(func) -> bool:
    """Every user line the lowered IR came from lies in a function the key hashed.

    A guard on the key: if lowering inlined a helper the key did not see, editing that
    helper would not invalidate the entry, so such code is not cached.
    """
    from s2sad.ir.nodes import blocks_of
    from s2sad.transform import lowered

    while not isinstance(func, types.FunctionType):
        func = getattr(func, "func", None)
        if func is None:
            return False
    try:
        _, spans = describe(func)
        body = lowered(func).body
    except Exception:
        return False
    stack = [body]
    while stack:
        block = stack.pop()
        for stmt in block.stmts:
            loc = getattr(stmt, "loc", None)
            if loc is not None and not any(a <= loc.lineno <= b
                                           for a, b in spans.get(loc.filename, ())):
                return False
            stack.extend(blocks_of(stmt))
    return True


# -- what the rules a derivative was built from depend on --------------------------------


def rule_digest(func, portable: bool) -> str:
    """A hash of a rule function as the compiler uses it: its code (its source text when
    `portable`: the same in every Python version) and the values it reads: globals,
    closure variables (a rule made by a factory from a setting), defaults, and the user
    helpers it calls, recursively."""
    parts: list = []

    def visit(fn) -> list:
        if portable or not fn.__module__.startswith("s2sad_rules"):
            # in the disk key, compiler_fingerprint covers the built-in rules' files
            if not portable:
                parts.append(code_digest(fn.__code__))
            try:
                parts.append("".join(_source_lines(fn)[0]))
            except _Undescribable:
                parts.append(code_digest(fn.__code__))
        return _note_reads(fn, parts, strict=False, attributes=False)

    _breadth_first(func, visit)
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def callable_name(fn) -> str:
    """`module.qualname` of a primitive, the same in every process."""
    mod = getattr(fn, "__module__", None) or type(fn).__module__
    qual = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if qual is None:  # an instance, e.g. Attr('T'): its repr, without an address
        qual = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(fn))
    return f"{mod}.{qual}"


def rules_digest(fns, portable: bool = True) -> str:
    """A hash of the rules of the primitives `fns`: which arguments each differentiates,
    the rule functions (`rule_digest`) and the linear / non-differentiable marks (what
    an ahead-of-time module records for the primitives its code calls)."""
    T = _TABLE
    digests: dict = {}
    lines = []
    for fn in fns:
        line = [callable_name(fn)]
        for mode, rules in (("jvp", T.jvp_rules), ("vjp", T.vjp_rules)):
            rule = rules.get(fn)
            if rule is not None:
                d = digests.get(id(rule.func))
                if d is None:
                    d = digests[id(rule.func)] = rule_digest(rule.func, portable)
                line.append(f"{mode} {rule.diff_params} {rule.uses_ans} {d}")
        if fn in T.nondiff:
            line.append(f"nondiff {T.nondiff[fn]}")
        if fn in T.linear:
            line.append(f"linear {T.linear[fn]}")
        lines.append(" ".join(line))
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def table_primitives() -> list:
    """Every callable the rule table knows (with a rule, or marked linear/non-diff)."""
    T = _TABLE
    return list({id(f): f for table in (T.jvp_rules, T.vjp_rules, T.nondiff, T.linear)
                 for f in table}.values())


_RULES: list = []  # [(table version, digest)]


_PLAIN_TYPES = frozenset(_PLAIN)


def rules_fingerprint() -> str:
    """A hash of the whole rule table as this process compiles with it, the values its
    rules close over or read included (computed once per table version: the disk key)."""
    if not _RULES or _RULES[0][0] != _TABLE.version:
        _RULES[:] = [(_TABLE.version, _table_digest())]
    return _RULES[0][1]


def _table_digest() -> str:
    # Computed in every new process before its first disk hit, so kept cheap: a built-in
    # rule (module s2sad_rules, no closure) counts by name, since its code, defaults and
    # registration are in compiler_fingerprint and the globals it can read are in
    # _builtin_rule_globals; every other rule by rule_digest (code, source, values,
    # helpers), with what it differentiates.
    T = _TABLE
    names: dict = {}

    def name(fn):
        text = names.get(id(fn))
        if text is None:
            text = names[id(fn)] = callable_name(fn)
        return text

    items = []
    user: dict = {}
    for mode, rules in (("jvp", T.jvp_rules), ("vjp", T.vjp_rules)):
        for fn, rule in rules.items():
            f = rule.func
            if f.__closure__ is None and f.__module__.startswith("s2sad_rules"):
                items.append((mode, name(fn), f.__qualname__))
                continue
            part = user.get(id(f))
            if part is None:
                part = user[id(f)] = rule_digest(f, portable=False)
            items.append((mode, name(fn), part, rule.diff_params, rule.uses_ans))
    items += [("nondiff", name(fn), v) for fn, v in T.nondiff.items()]
    items += [("linear", name(fn), v) for fn, v in T.linear.items()]
    items.sort(key=lambda item: (item[0], item[1]))
    return hashlib.sha256(repr(items).encode() + _builtin_rule_globals().encode()).hexdigest()


def _builtin_rule_globals() -> str:
    """A hash of the plain values (numbers, strings, sequences of them, NumPy values) that
    the modules of the built-in rules hold as globals."""
    parts = []
    plain = _PLAIN_TYPES
    for name in sorted(m for m in sys.modules if m.startswith("s2sad_rules")):
        for var, v in vars(sys.modules[name]).items():
            t = type(v)
            if t in plain:
                if not var.startswith("__"):
                    parts.append((name, var, v))
            elif t is tuple or t is list:
                if all(type(x) in plain for x in v):
                    parts.append((name, var, v))
            elif t is frozenset or t is set:
                if all(type(x) in plain for x in v):
                    parts.append((name, var, sorted(map(repr, v))))
            elif isinstance(v, (np.ndarray, np.generic)):
                parts.append((name, var, v.tolist()))
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def kinds_text(kinds, precision: bool = True) -> str:
    """A stable text of argument kinds (for keys and for matching ahead-of-time modules);
    without their exact dtypes where not `precision` (code compiled without them serves
    every precision)."""
    return repr(tuple(_kind_tuple(k, precision) for k in kinds))


def _kind_tuple(k, precision: bool = True):
    items = tuple(_kind_tuple(i, precision) for i in k.items)
    value = repr(k.value) if k.known else None
    # (the array library only where there is one: the keys of NumPy arguments stay the same)
    family: tuple = (k.family,) if k.family else ()
    if k.precision and precision:  # (an argument's exact dtype: its own entry, as the
        # dispatcher's key)
        family += (("precision", k.precision),)
    if k.view is not None:  # a dict's keys, a namedtuple's class
        what, detail = k.view
        if what == "record":
            detail = (detail.__module__, detail.__qualname__, detail._fields)
        return (k.tag, k.dtype, k.shape, items, value, (what, repr(detail))) + family
    return (k.tag, k.dtype, k.shape, items, value) + family


_COMPILER: list = []


def compiler_fingerprint() -> str:
    """A hash of the compiler's own source files (s2sad and s2sad_rules): names, sizes, times.

    The version number alone would let a changed (development) compiler read code an
    older one generated.
    """
    if not _COMPILER:
        import s2sad_rules

        s2sad_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        h = hashlib.sha256()
        for root in (s2sad_root, os.path.dirname(s2sad_rules.__file__)):
            stack = [""]
            while stack:
                rel = stack.pop()
                try:
                    found = sorted(os.scandir(os.path.join(root, rel)), key=lambda e: e.name)
                except OSError:
                    continue
                for e in found:
                    name = f"{rel}/{e.name}" if rel else e.name
                    if e.is_dir(follow_symlinks=False):
                        if e.name != "__pycache__":
                            stack.append(name)
                    elif e.name.endswith(".py"):
                        try:  # size and modification time: cheap, and they change with an edit
                            st = e.stat()
                            stamp = f"{st.st_size} {st.st_mtime_ns}"
                        except OSError:
                            stamp = "unreadable"
                        h.update(f"{name} {stamp}\0".encode())
        _COMPILER.append(h.hexdigest())
    return _COMPILER[0]
