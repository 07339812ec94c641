"""The disk cache of generated derivatives, shared by every process of one user.

Owns the cache key (what generated code depends on), the entry format (content-hashed,
written atomically) and the safety checks on the cache directory.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import linecache
import marshal
import os
import sys
import types
import warnings
from pathlib import Path

import numpy as np

ENTRY_FORMAT = 1
_MAGIC = "s2sad-cache"
_SUFFIX = ".entry"
_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_LIBRARY_ROOTS = ("numpy", "math", "builtins", "s2sad", "s2sad_rules", "operator")
_WARNED: set = set()


class CacheWarning(UserWarning):
    """The disk cache could not be used (it then stays off; compilation goes on)."""


class _Undescribable(Exception):
    """The function depends on something whose content the key cannot capture."""


# -- where the cache lives --------------------------------------------------------


def default_cache_dir() -> Path:
    """The platform's per-user cache directory for s2sad."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return Path(base) / "s2sad" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "s2sad"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "s2sad"


def enabled() -> bool:
    return os.environ.get("S2SAD_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def configured_dir() -> Path:
    """Where the cache is configured to live (whether or not it is usable)."""
    env = os.environ.get("S2SAD_CACHE_DIR")
    return Path(env).expanduser() if env else default_cache_dir()


def cache_dir(create: bool = True) -> Path | None:
    """The directory of entries, or None when the cache is off or the directory unsafe."""
    if not enabled():
        return None
    root = configured_dir()
    if create:
        try:
            os.makedirs(root, mode=0o700, exist_ok=True)
        except OSError as e:
            _warn_once(root, f"cannot create the s2sad cache directory {root}: {e}")
            return None
    elif not root.is_dir():
        return None
    problem = unsafe_reason(root)
    if problem:
        _warn_once(root, f"not using the s2sad cache directory {root}: {problem}; "
                         "the disk cache is off (fix the permissions, e.g. chmod 700, or set "
                         "S2SAD_CACHE_DIR to a private directory)")
        return None
    return root / f"v{ENTRY_FORMAT}"


def unsafe_reason(path: Path) -> str | None:
    """Why `path` may not hold cache entries (None when it is safe).

    Entries are executed, so a directory another user can write to (or owns) could be
    used to run their code in our process.
    """
    if os.name != "posix":
        return None
    try:
        st = os.stat(path)
    except OSError as e:
        return str(e)
    if st.st_uid != os.getuid():
        return f"it is owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"it is writable by group or others (mode {st.st_mode & 0o777:o})"
    return None


def _warn_once(path, message: str):
    key = (str(path), message)
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, CacheWarning, stacklevel=4)


# -- what a derivative depends on ----------------------------------------------------


def source_fingerprint(func, positions: bool = True, strict: bool = True) -> str | None:
    """A hash of the source of `func` and of everything its generated code depends on.

    That is the source of `func` and of every Python function it may inline (found
    through the global, closure and attribute names its code uses), and the values of
    plain constants it reads (numbers, strings, array shapes). `positions` adds file
    names and line numbers (generated code cites them in comments). With `strict`, a
    dependency whose content cannot be hashed (an arbitrary object) gives None; otherwise
    it counts by its type.
    """
    try:
        parts, _ = describe(func, positions, strict)
    except _Undescribable:
        return None
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def describe(func, positions: bool = True, strict: bool = True):
    """(a list describing `func` and its dependencies, {filename: [(first, last) lines]})."""
    from s2sad_rules import TABLE

    parts: list = []
    spans: dict = {}
    seen: set = set()
    queue = [func]
    while queue:
        fn = queue.pop(0)
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        inner = getattr(fn, "func", None)
        if not isinstance(fn, types.FunctionType) and inner is not None and hasattr(fn, "mode"):
            # a Derivative being differentiated again: what it is of, and how
            wrt = fn._resolve()
            parts.append(("derivative", fn.mode, tuple(wrt), fn._wrt_tuple))
            queue.append(inner)
            continue
        if not isinstance(fn, types.FunctionType):
            raise _Undescribable(f"{fn!r} is not a Python function")
        lines, first = _source_lines(fn)
        filename = fn.__code__.co_filename
        for f in {filename, inspect.getsourcefile(fn) or filename}:
            spans.setdefault(f, []).append((first, first + len(lines) - 1))
        where = (filename, first) if positions else ()
        parts.append(("def", fn.__module__, fn.__qualname__, *where, "".join(lines)))
        for name, value in _referenced(fn):
            if isinstance(value, types.FunctionType) and not TABLE.is_primitive(value) \
                    and not _is_library(value):
                parts.append(("calls", name))
                queue.append(value)
            else:
                parts.append(("uses", name, _describe_value(value, strict)))
    return parts, spans


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


def _referenced(fn):
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
        out.extend(_attributes(name, value, attr_names, depth=2))
    if fn.__closure__:
        for var, cell in zip(code.co_freevars, fn.__closure__):
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            out.append((var, value))
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


def _describe_value(v, strict: bool):
    if isinstance(v, _PLAIN):
        return (type(v).__name__, repr(v))
    if isinstance(v, (tuple, frozenset)) and all(isinstance(x, _PLAIN) for x in v):
        return (type(v).__name__, repr(v))
    if isinstance(v, types.ModuleType):
        return ("module", v.__name__)
    if isinstance(v, np.ndarray):
        return ("ndarray", v.shape, v.dtype.str)
    if isinstance(v, np.generic):
        return ("numpy scalar", v.dtype.str, repr(v.item()))
    if isinstance(v, type) or callable(v):
        mod = getattr(v, "__module__", None) or type(v).__module__
        qual = getattr(v, "__qualname__", None) or getattr(v, "__name__", None)
        if qual is not None:
            code = getattr(v, "__code__", None)
            return ("callable", mod, qual, getattr(code, "co_firstlineno", None))
    if strict:
        raise _Undescribable(f"cannot hash the content of {type(v).__name__} objects")
    return ("object", type(v).__module__, type(v).__qualname__)


def kinds_text(kinds) -> str:
    """A stable text of argument kinds (for keys and for matching ahead-of-time modules)."""
    return repr(tuple(_kind_tuple(k) for k in kinds))


def _kind_tuple(k):
    items = tuple(_kind_tuple(i) for i in k.items)
    value = repr(k.value) if k.known else None
    return (k.tag, k.dtype, k.shape, items, value)


def cache_key(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds) -> str | None:
    """The key of a derivative's entry, or None when it cannot be cached safely."""
    from s2sad.transform import VERSION
    from s2sad_rules import TABLE

    source = source_fingerprint(func, positions=True, strict=True)
    if source is None:
        return None
    options = (mode, tuple(wrt), bool(wrt_tuple), kinds_text(arg_kinds),
               kinds_text(kw_kinds[k] for k in sorted(kw_kinds)), tuple(sorted(kw_kinds)))
    text = repr((_MAGIC, ENTRY_FORMAT, VERSION, compiler_fingerprint(), np.__version__,
                 sys.version_info[:2], TABLE.fingerprint(), options, source))
    return hashlib.sha256(text.encode()).hexdigest()


_COMPILER: list = []


def compiler_fingerprint() -> str:
    """A hash of the compiler's own source files (s2sad and s2sad_rules): names, sizes, times.

    The version number alone would let a changed (development) compiler read code an
    older one generated.
    """
    if not _COMPILER:
        import s2sad
        import s2sad_rules

        h = hashlib.sha256()
        for package in (s2sad, s2sad_rules):
            root = os.path.dirname(package.__file__)
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(f for f in files if f.endswith(".py")):
                    path = os.path.join(folder, name)
                    try:  # size and modification time: cheap, and they change with an edit
                        st = os.stat(path)
                        stamp = f"{st.st_size} {st.st_mtime_ns}"
                    except OSError:
                        stamp = "unreadable"
                    h.update(f"{os.path.relpath(path, root)} {stamp}\0".encode())
        _COMPILER.append(h.hexdigest())
    return _COMPILER[0]


# -- entries ---------------------------------------------------------------------------


class Slot:
    """The cache's answer for one derivative: `hit` (a Compiled) or a place to `fill`."""

    def __init__(self, func=None, key=None, path=None, hit=None, spec=None):
        self.func = func
        self.key = key
        self.path = path
        self.hit = hit
        self.spec = spec  # (mode, wrt, wrt_tuple, arg_kinds, kw_kinds), to rebuild the IR

    def fill(self, source: str, ns, name: str) -> bool:
        """Store the generated code if it is safe to reload in another process."""
        if self.path is None:
            return False
        try:
            imports = _portable_imports(ns)
            if imports is None or not _covers_ir(self.func):
                return False
            from s2sad.codegen.compile import code_filename

            code = compile(source, code_filename(source, name), "exec")
            payload = _format_payload(self.key, name, imports, source, marshal.dumps(code))
        except Exception:  # never let the cache break a compile that succeeded
            return False
        write_entry(self.path, payload)
        return True


_OFF = Slot()


def slot(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds) -> Slot:
    """Look a derivative up in the disk cache; a miss gives a Slot to fill after compiling."""
    root = cache_dir()
    if root is None:
        return _OFF
    try:
        key = cache_key(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds)
    except Exception:  # the compiler reports problems with `func`; the cache stays out of it
        return _OFF
    if key is None:
        return _OFF
    path = root / (key + _SUFFIX)
    spec = (mode, wrt, wrt_tuple, arg_kinds, kw_kinds)
    payload = read_entry(path)
    hit = None
    if payload is not None:
        hit = _load(func, key, payload, spec)
    return Slot(func, key, path, hit, spec)


def write_entry(path: Path, payload: bytes):
    """Write `payload` with its hash, atomically: readers see the old entry or the new one."""
    import tempfile

    digest = hashlib.sha256(payload).hexdigest()
    data = f"{_MAGIC} {ENTRY_FORMAT} {digest}\n".encode() + payload
    try:
        os.makedirs(path.parent, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=_SUFFIX, dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as e:
        _warn_once(path.parent, f"cannot write to the s2sad cache: {e}")


def read_entry(path: Path) -> bytes | None:
    """The payload of an entry, or None when it is absent, truncated or corrupt."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head, sep, rest = data.partition(b"\n")
    parts = head.decode("ascii", "replace").split(" ")
    if not sep or len(parts) != 3 or parts[0] != _MAGIC or parts[1] != str(ENTRY_FORMAT):
        return None
    if hashlib.sha256(rest).hexdigest() != parts[2]:
        return None  # truncated or garbled: never executed, regenerated by the caller
    return rest


def _load(func, key, payload: bytes, spec):
    from s2sad.codegen.compile import compile_source
    from s2sad.codegen.names import Namespace

    try:
        entry_key, name, imports, source, code = _parse_payload(payload)
        if entry_key != key:
            return None
        ns = Namespace()
        for alias, (module, qual) in imports.items():
            ns.values[alias] = _resolve_import(module, qual)
            ns.imports[alias] = (module, qual)
        fn = compile_source(source, ns, name, code)
    except Exception:  # an entry that no longer resolves is regenerated
        return None
    return cached_compiled(source, fn, lambda: _rebuild_ir(func, spec))


def _format_payload(key: str, name: str, imports: dict, source: str, code: bytes) -> bytes:
    """Text (key, name, imports, source), a NUL, then the marshalled code object."""
    lines = [f"key {key}", f"name {name}"]
    lines += [f"import {alias} {module} {qual or '-'}"
              for alias, (module, qual) in sorted(imports.items())]
    text = "\n".join(lines) + "\nsource\n" + source
    return text.encode() + b"\0" + code


def _parse_payload(payload: bytes):
    text, sep, blob = payload.partition(b"\0")
    if not sep:
        raise ValueError("no code in cache entry")
    code = marshal.loads(blob)
    head, sep, source = text.decode().partition("\nsource\n")
    if not sep:
        raise ValueError("no source in cache entry")
    lines = head.split("\n")
    key = lines[0].removeprefix("key ")
    name = lines[1].removeprefix("name ")
    imports = {}
    for line in lines[2:]:
        word, alias, module, qual = line.split(" ")
        if word != "import":
            raise ValueError(f"bad line in cache entry: {line!r}")
        imports[alias] = (module, None if qual == "-" else qual)
    return key, name, imports, source, code


def _rebuild_ir(func, spec):
    from s2sad.transform import derivative_ir

    mode, wrt, wrt_tuple, arg_kinds, kw_kinds = spec
    return derivative_ir(func, mode, wrt, arg_kinds, kw_kinds, wrt_tuple=wrt_tuple)


_CACHED_CLASS = None


def cached_compiled(source, function, ir_thunk):
    """A `Compiled` whose IR is rebuilt only if someone asks for it.

    `source` is the text, or a function giving it (read only if someone asks).
    """
    global _CACHED_CLASS
    if _CACHED_CLASS is None:
        from s2sad.transform import Compiled

        class CachedCompiled(Compiled):
            def __init__(self, source, function, ir_thunk):
                self._source = source
                self.function = function
                self._ir_thunk = ir_thunk
                self._ir = None

            @property
            def source(self):
                if callable(self._source):
                    self._source = self._source()
                return self._source

            @property
            def ir(self):
                if self._ir is None:
                    self._ir = self._ir_thunk()
                return self._ir

        _CACHED_CLASS = CachedCompiled
    return _CACHED_CLASS(source, function, ir_thunk)


def _resolve_import(module: str, qual):
    obj = importlib.import_module(module)
    for part in (qual.split(".") if qual else ()):
        obj = getattr(obj, part)
    return obj


def _portable_imports(ns):
    """{name: [module, qualname]} for every namespace entry, or None when one has no
    import path that gives back the very same object (a captured constant, a local
    function): such code is compiled afresh in each process instead."""
    out = {}
    for name, value in ns.values.items():
        path = ns.imports.get(name)
        if path is None:
            return None
        module, qual = path
        try:
            if _resolve_import(module, qual) is not value:
                return None
        except Exception:
            return None
        out[name] = [module, qual]
    return out


def _covers_ir(func) -> bool:
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


# -- maintenance (`s2sad cache info|clear`) ------------------------------------------


def info() -> dict:
    root = configured_dir()
    d = {"path": str(root), "enabled": enabled(), "entries": 0, "bytes": 0, "problem": None}
    if not enabled():
        d["problem"] = "turned off by S2SAD_CACHE=0"
        return d
    if root.is_dir():
        d["problem"] = unsafe_reason(root)
        entries = root / f"v{ENTRY_FORMAT}"
        if entries.is_dir():
            for p in entries.iterdir():
                if p.name.endswith(_SUFFIX) and not p.name.startswith("."):
                    d["entries"] += 1
                    d["bytes"] += p.stat().st_size
    return d


def clear() -> int:
    """Remove every entry (and stray temporary files); the number of entries removed."""
    root = configured_dir() / f"v{ENTRY_FORMAT}"
    n = 0
    if not root.is_dir():
        return 0
    for p in root.iterdir():
        if p.name.endswith(_SUFFIX):
            try:
                p.unlink()
                n += not p.name.startswith(".")
            except OSError:
                pass
    return n
