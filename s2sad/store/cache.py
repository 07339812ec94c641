"""The disk cache of generated derivatives, private to one user.

Owns the cache key (everything generated code depends on), the entry format (authenticated
with a per-user secret, written atomically) and the ownership checks on every directory and
file it reads: entries are executed, so only files this user wrote in directories only this
user can write are trusted, and each is checked through the descriptor it is read from.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import importlib
import inspect
import linecache
import marshal
import os
import re
import stat
import sys
import time
import types
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from s2sad_rules import TABLE as _TABLE

if TYPE_CHECKING:
    from typing import Self

ENTRY_FORMAT = 2
_MAGIC = "s2sad-cache"
_SUFFIX = ".entry"
_TMP_PREFIX = ".tmp-"
_SECRET = "secret"
_SECRET_BYTES = 32
TMP_MAX_AGE = 60.0  # seconds: a temporary file younger than this may be a writer's in flight
_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_LIBRARY_ROOTS = ("numpy", "math", "builtins", "s2sad", "s2sad_rules", "operator")
_WARNED: set = set()

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _O_NOFOLLOW | _O_CLOEXEC
# O_NONBLOCK: a FIFO planted under an entry's name must not hang the open
_READ_FLAGS = os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
# Opening relative to a checked directory descriptor is what makes the checks hold for
# what is read; a platform without it (Windows) has no disk cache.
SUPPORTED = (os.name == "posix" and _O_NOFOLLOW != 0 and os.open in os.supports_dir_fd
             and os.link in os.supports_dir_fd and os.unlink in os.supports_dir_fd)


class CacheWarning(UserWarning):
    """The disk cache could not use a directory or an entry (compilation goes on)."""


class UnsafeCacheError(Exception):
    """A cache directory or file fails the ownership checks (or cannot be opened)."""


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
    """False when S2SAD_CACHE turns the disk cache off (0, false, no, off)."""
    return os.environ.get("S2SAD_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def configured_dir() -> Path:
    """Where the cache is configured to live (whether or not it is usable)."""
    env = os.environ.get("S2SAD_CACHE_DIR")
    return Path(env).expanduser() if env else default_cache_dir()


def entries_dir(root: Path | None = None) -> Path:
    """The directory of the current format's entries under `root` (the configured one)."""
    return (root or configured_dir()) / f"v{ENTRY_FORMAT}"


def _warn_once(path, message: str):
    if str(path) not in _WARNED:
        _WARNED.add(str(path))
        warnings.warn(message, CacheWarning, stacklevel=4)


# -- opening what we trust: descriptors, checked after opening -------------------------


def _check(fd: int, path, kind: int, private: bool = False) -> os.stat_result:
    """Check an open descriptor: its type, that this user owns it, and that no one else
    can write it (with `private`, nor read it)."""
    st = os.fstat(fd)
    if stat.S_IFMT(st.st_mode) != kind:
        what = "a directory" if kind == stat.S_IFDIR else "a regular file"
        raise UnsafeCacheError(f"{path} is not {what}")
    if st.st_uid != os.geteuid():
        raise UnsafeCacheError(f"{path} is owned by another user (uid {st.st_uid})")
    mask = 0o077 if private else 0o022
    if st.st_mode & mask:
        who = "accessible to" if private else "writable by"
        raise UnsafeCacheError(f"{path} is {who} group or others "
                               f"(mode {st.st_mode & 0o777:o})")
    return st


def _open_checked(name: str, dir_fd: int | None, path, kind: int,
                  private: bool = False) -> int:
    """Open `name` (relative to `dir_fd`) without following a symbolic link, then check
    the descriptor; the caller reads or lists through it, never through the path again."""
    flags = _DIR_FLAGS if kind == stat.S_IFDIR else _READ_FLAGS
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as e:
        # O_NOFOLLOW refuses a link: ELOOP, or ENOTDIR with O_DIRECTORY; lstat says which
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            try:
                link = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
            except OSError:
                link = False
            raise UnsafeCacheError(f"{path} is a symbolic link" if link else
                                   f"{path}: {e.strerror}") from None
        raise
    try:
        _check(fd, path, kind, private)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_dir(name: str, dir_fd: int | None, path, create: bool) -> int:
    if create:
        try:
            os.mkdir(name, 0o700, dir_fd=dir_fd)
        except FileExistsError:
            pass
    return _open_checked(name, dir_fd, path, stat.S_IFDIR)


class _Store:
    """An open cache: the root and entries directories as checked descriptors, and the
    user's secret. Raises UnsafeCacheError (or FileNotFoundError without `create`)."""

    def __init__(self, root: Path, create: bool, keyed: bool = True):
        self.root = root
        self.secret = b""
        self.root_fd = self.fd = None
        if not SUPPORTED:
            raise UnsafeCacheError("this platform cannot open files relative to a checked "
                                   "directory (no O_NOFOLLOW / dir_fd)")
        root = Path(os.path.abspath(root))
        try:
            if create:
                os.makedirs(root.parent, exist_ok=True)
            # the ancestors are resolved once, here; from the root down nothing is
            # followed and every level is checked through its descriptor
            parent_fd = os.open(root.parent, _DIR_FLAGS & ~_O_NOFOLLOW)
            try:
                self.root_fd = _open_dir(root.name, parent_fd, root, create)
            finally:
                os.close(parent_fd)
            self.fd = _open_dir(f"v{ENTRY_FORMAT}", self.root_fd, entries_dir(root), create)
            if keyed:
                self.secret = _secret(self.root_fd, root, create)
        except BaseException:
            self.close()
            raise

    def close(self):
        for fd in (self.fd, self.root_fd):
            if fd is not None:
                os.close(fd)
        self.fd = self.root_fd = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc):
        self.close()

    def path(self, name: str) -> Path:
        return entries_dir(self.root) / name

    def read(self, name: str) -> bytes | None:
        """The authenticated payload of entry `name`, or None (absent, foreign, forged or
        damaged: such an entry is never executed; the caller compiles and replaces it)."""
        try:
            fd = _open_checked(name, self.fd, self.path(name), stat.S_IFREG)
        except FileNotFoundError:
            return None
        except (UnsafeCacheError, OSError) as e:
            _warn_once(self.path(name), f"not using an s2sad cache entry: {e} (it is "
                                        "compiled afresh; remove the file)")
            return None
        with os.fdopen(fd, "rb") as f:
            data = f.read()
        return _authenticated(data, self.secret)

    def write(self, name: str, payload: bytes):
        """Write an entry atomically: a reader sees the old entry or the new one, whole."""
        mac = hmac.new(self.secret, payload, hashlib.sha256).hexdigest()
        data = f"{_MAGIC} {ENTRY_FORMAT} {mac}\n".encode() + payload
        _write_atomic(self.fd, name, data)


def _write_atomic(dir_fd: int, name: str, data: bytes, replace: bool = True):
    """Write a temporary file in the directory `dir_fd` and rename it to `name` (with
    `replace=False`, link it, so that an existing `name` wins)."""
    tmp = f"{_TMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}{_SUFFIX}"
    fd = os.open(tmp, _CREATE_FLAGS, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if replace:
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            try:
                os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
            except FileExistsError:
                pass
            os.unlink(tmp, dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


_SECRETS: dict = {}


def _secret(root_fd: int, root: Path, create: bool) -> bytes:
    """The user's key for authenticating entries: `<root>/secret`, random, mode 0600,
    made on first use. Remembered for the process by the file's identity (device, inode,
    change time: a chmod or chown changes it), so that it is read and checked once."""
    try:
        st = os.stat(_SECRET, dir_fd=root_fd, follow_symlinks=False)
        known = _SECRETS.get((st.st_dev, st.st_ino, st.st_ctime_ns))
        if known is not None:
            return known
    except FileNotFoundError:
        pass
    path = root / _SECRET
    for attempt in range(2):
        try:
            fd = _open_checked(_SECRET, root_fd, path, stat.S_IFREG, private=True)
        except FileNotFoundError:
            if not create or attempt:
                raise
            # link, not rename: when two processes race, the first secret stays
            _write_atomic(root_fd, _SECRET, os.urandom(_SECRET_BYTES), replace=False)
            continue
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            secret = f.read(_SECRET_BYTES + 1)
        if len(secret) != _SECRET_BYTES:
            raise UnsafeCacheError(f"{path} is not an s2sad cache secret "
                                   f"({len(secret)} bytes); remove it")
        _SECRETS[(st.st_dev, st.st_ino, st.st_ctime_ns)] = secret
        return secret
    raise AssertionError("unreachable")


def _authenticated(data: bytes, secret: bytes) -> bytes | None:
    head, sep, rest = data.partition(b"\n")
    parts = head.decode("ascii", "replace").split(" ")
    if not sep or len(parts) != 3 or parts[0] != _MAGIC or parts[1] != str(ENTRY_FORMAT):
        return None
    mac = hmac.new(secret, rest, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(mac, parts[2]):
        return None  # truncated, garbled or forged: never executed
    return rest


def _open_store(create: bool) -> _Store | None:
    """The configured cache, open and checked; None (after one warning) when it is off or
    unsafe."""
    if not enabled() or not SUPPORTED:  # `s2sad cache info` says why
        return None
    root = configured_dir()
    try:
        return _Store(root, create)
    except FileNotFoundError:
        if create:
            _warn_once(root, f"cannot create the s2sad cache directory {root}")
        return None
    except (UnsafeCacheError, OSError) as e:
        _warn_once(root, f"not using the s2sad cache directory {root}: {e}; the disk cache "
                         "is off (make it a private directory of yours, e.g. chmod 700, or "
                         "set S2SAD_CACHE_DIR to one)")
        return None


def unsafe_reason(path: Path) -> str | None:
    """Why the cache rooted at `path` may not be used (None when it may, or is absent)."""
    try:
        _Store(path, create=False).close()
    except FileNotFoundError:
        return None
    except (UnsafeCacheError, OSError) as e:
        return str(e)
    return None


def read_entry(path: Path) -> bytes | None:
    """The authenticated payload of the entry file `path` (in `<root>/v<format>/`), or
    None when it is absent, damaged, forged or fails the ownership checks."""
    try:
        with _Store(Path(path).parent.parent, create=False) as store:
            return store.read(Path(path).name)
    except (UnsafeCacheError, OSError):
        return None


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
        where = (filename, first, code_digest(fn.__code__)) if positions else ()
        parts.append(("def", fn.__module__, fn.__qualname__, *where, "".join(lines)))
        for name, value in _referenced(fn):
            if isinstance(value, types.FunctionType) and not TABLE.is_primitive(value) \
                    and not _is_library(value):
                parts.append(("calls", name))
                queue.append(value)
            else:
                parts.append(("uses", name, _describe_value(value, strict)))
    return parts, spans


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


# -- what the rules a derivative was built from depend on --------------------------------


def rule_digest(func, portable: bool) -> str:
    """A hash of a rule function as the compiler uses it: its code (its source text when
    `portable`: the same in every Python version) and the values it reads: globals,
    closure variables (a rule made by a factory from a setting), defaults, and the user
    helpers it calls, recursively."""
    parts: list = []
    seen: set = set()
    queue = [func]
    while queue:
        fn = queue.pop(0)
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        if portable or not fn.__module__.startswith("s2sad_rules"):
            # in the disk key, compiler_fingerprint covers the built-in rules' files
            if not portable:
                parts.append(code_digest(fn.__code__))
            try:
                parts.append("".join(_source_lines(fn)[0]))
            except _Undescribable:
                parts.append(code_digest(fn.__code__))
        for name, value in _referenced(fn, attributes=False):
            if isinstance(value, types.FunctionType) and not _is_library(value) \
                    and not _TABLE.is_primitive(value):
                parts.append(("calls", name))
                queue.append(value)
            else:
                parts.append(("uses", name, _describe_value(value, strict=False)))
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

    source = source_fingerprint(func, positions=True, strict=True)
    if source is None:
        return None
    options = (mode, tuple(wrt), bool(wrt_tuple), kinds_text(arg_kinds),
               kinds_text(kw_kinds[k] for k in sorted(kw_kinds)), tuple(sorted(kw_kinds)))
    text = repr((_MAGIC, ENTRY_FORMAT, VERSION, compiler_fingerprint(), np.__version__,
                 sys.version_info[:2], rules_fingerprint(), options, source))
    return hashlib.sha256(text.encode()).hexdigest()


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
        return write_entry(self.path, payload)


_OFF = Slot()


def slot(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds) -> Slot:
    """Look a derivative up in the disk cache; a miss gives a Slot to fill after compiling."""
    store = _open_store(create=True)
    if store is None:
        return _OFF
    with store:
        try:
            key = cache_key(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds)
        except Exception:  # the compiler reports problems with `func`; the cache stays out
            return _OFF
        if key is None:
            return _OFF
        payload = store.read(key + _SUFFIX)
        path = store.path(key + _SUFFIX)
    spec = (mode, wrt, wrt_tuple, arg_kinds, kw_kinds)
    hit = None
    if payload is not None:
        hit = _load(func, key, payload, spec)
    return Slot(func, key, path, hit, spec)


def write_entry(path: Path, payload: bytes) -> bool:
    """Write the entry file `path` (in `<root>/v<format>/`): authenticated, atomically,
    through the checked directory. False (after one warning) when it cannot be written."""
    path = Path(path)
    try:
        with _Store(path.parent.parent, create=True) as store:
            store.write(path.name, payload)
        return True
    except (UnsafeCacheError, OSError) as e:
        _warn_once(path.parent, f"cannot write to the s2sad cache {path.parent}: {e}")
        return False


def _load(func, key, payload: bytes, spec):
    from s2sad.codegen.compile import code_filename, compile_source
    from s2sad.codegen.names import Namespace

    try:
        entry_key, name, imports, source, code = _parse_payload(payload)
        # the code was compiled from this very source (its file name hashes the source)
        if entry_key != key or code.co_filename != code_filename(source, name):
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
    """Where the cache is, whether it is on (or why not), and its entries and bytes."""
    root = configured_dir()
    d = {"path": str(root), "enabled": enabled(), "entries": 0, "bytes": 0, "problem": None}
    if not enabled():
        d["problem"] = "turned off by S2SAD_CACHE=0"
        return d
    try:
        with _Store(root, create=False, keyed=False) as store:
            for name in os.listdir(store.fd):
                if name.endswith(_SUFFIX) and not name.startswith("."):
                    st = os.stat(name, dir_fd=store.fd, follow_symlinks=False)
                    d["entries"] += 1
                    d["bytes"] += st.st_size
    except FileNotFoundError:
        d["problem"] = unsafe_reason(root)
    except (UnsafeCacheError, OSError) as e:
        d["problem"] = str(e)
    return d


def clear(now: float | None = None) -> int:
    """Remove every entry, and the temporary files that no writer can still be writing
    (older than TMP_MAX_AGE seconds); the number of entries removed.

    Raises UnsafeCacheError when the cache directory fails the ownership checks.
    """
    now = time.time() if now is None else now
    try:
        store = _Store(configured_dir(), create=False, keyed=False)
    except FileNotFoundError:
        return 0
    n = 0
    with store:
        for name in os.listdir(store.fd):
            try:
                if name.endswith(_SUFFIX) and not name.startswith("."):
                    os.unlink(name, dir_fd=store.fd)
                    n += 1
                elif name.startswith(_TMP_PREFIX):
                    st = os.stat(name, dir_fd=store.fd, follow_symlinks=False)
                    if now - st.st_mtime > TMP_MAX_AGE:
                        os.unlink(name, dir_fd=store.fd)
            except OSError:  # removed or replaced by another process first, or a directory
                pass
    return n
