"""The disk cache of generated derivatives, private to one user.

Where it lives, the cache key, and the cache itself: an entry is looked up, served, or
filled after compiling, through directories checked for ownership (`store.cache_files`),
in the authenticated format of `store.cache_entries`.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
import stat
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from s2sad.store.cache_entries import (
    ENTRY_FORMAT,
    MAGIC,
    authenticated,
    format_payload,
    load_entry,
    portable_imports,
    signed,
    structure_text,
)
from s2sad.store.cache_files import (
    ENTRY_SUFFIX,
    SUPPORTED,
    TMP_PREFIX,
    UnsafeCacheError,
    open_ancestor,
    open_checked,
    open_dir,
    user_secret,
    write_atomic,
)
from s2sad.store.fingerprint import (
    compiler_fingerprint,
    covers_ir,
    kinds_text,
    rules_fingerprint,
    source_fingerprint,
)

if TYPE_CHECKING:
    from typing import Self

TMP_MAX_AGE = 60.0  # seconds: a temporary file younger than this may be a writer's in flight
_WARNED: set = set()


class CacheWarning(UserWarning):
    """The disk cache could not use a directory or an entry (compilation goes on)."""


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


# -- the open cache ------------------------------------------------------------------


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
            parent_fd = open_ancestor(root.parent)
            try:
                self.root_fd = open_dir(root.name, parent_fd, root, create)
            finally:
                os.close(parent_fd)
            self.fd = open_dir(f"v{ENTRY_FORMAT}", self.root_fd, entries_dir(root), create)
            if keyed:
                self.secret = user_secret(self.root_fd, root, create)
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
            fd = open_checked(name, self.fd, self.path(name), stat.S_IFREG)
        except FileNotFoundError:
            return None
        except (UnsafeCacheError, OSError) as e:
            _warn_once(self.path(name), f"not using an s2sad cache entry: {e} (it is "
                                        "compiled afresh; remove the file)")
            return None
        with os.fdopen(fd, "rb") as f:
            data = f.read()
        return authenticated(data, self.secret)

    def write(self, name: str, payload: bytes):
        """Write an entry atomically: a reader sees the old entry or the new one, whole."""
        write_atomic(self.fd, name, signed(payload, self.secret))


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


# -- looking an entry up, and filling it -------------------------------------------


def cache_key(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds) -> str | None:
    """The key of a derivative's entry, or None when it cannot be cached safely."""
    from s2sad.transform import VERSION

    source = source_fingerprint(func, positions=True, strict=True)
    if source is None:
        return None
    options = (mode, tuple(wrt), bool(wrt_tuple), kinds_text(arg_kinds),
               kinds_text(kw_kinds[k] for k in sorted(kw_kinds)), tuple(sorted(kw_kinds)))
    text = repr((MAGIC, ENTRY_FORMAT, VERSION, compiler_fingerprint(), np.__version__,
                 sys.version_info[:2], rules_fingerprint(), options, source))
    return hashlib.sha256(text.encode()).hexdigest()


class Slot:
    """The cache's answer for one derivative: `hit` (a Compiled) or a place to `fill`."""

    def __init__(self, func=None, key=None, path=None, hit=None, spec=None):
        self.func = func
        self.key = key
        self.path = path
        self.hit = hit
        self.spec = spec  # (mode, wrt, wrt_tuple, arg_kinds, kw_kinds), to rebuild the IR

    def fill(self, source: str, ns, name: str, out_structure=None) -> bool:
        """Store the generated code if it is safe to reload in another process (and the
        structure of a list, namedtuple or dict it returns, if that can be read back)."""
        if self.path is None:
            return False
        try:
            imports = portable_imports(ns)
            if imports is None or not covers_ir(self.func):
                return False
            output = None
            if out_structure is not None:
                output = structure_text(out_structure)
                if output is None:
                    return False
            from s2sad.codegen.compile import code_filename
            from s2sad.codegen.imports import executable

            code = compile(executable(source), code_filename(source, name), "exec")
            payload = format_payload(self.key, name, imports, source, marshal.dumps(code),
                                     output)
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
        payload = store.read(key + ENTRY_SUFFIX)
        path = store.path(key + ENTRY_SUFFIX)
    spec = (mode, wrt, wrt_tuple, arg_kinds, kw_kinds)
    hit = None
    if payload is not None:
        hit = load_entry(func, key, payload, spec)
    return Slot(func, key, path, hit, spec)


def jit_dir() -> Path | None:
    """Where Numba keeps the machine code of `backend="numba"` derivatives: `numba/` in
    the cache root, checked private to the user like the entries (Numba loads what it
    finds there); None when the disk cache is off or unsafe (Numba then caches nothing)."""
    store = _open_store(create=True)
    if store is None:
        return None
    with store:
        try:
            os.close(open_dir("numba", store.root_fd, store.root / "numba", create=True))
        except (UnsafeCacheError, OSError):
            return None
        return Path(os.path.abspath(store.root)) / "numba"


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
                if name.endswith(ENTRY_SUFFIX) and not name.startswith("."):
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
                if name.endswith(ENTRY_SUFFIX) and not name.startswith("."):
                    os.unlink(name, dir_fd=store.fd)
                    n += 1
                elif name.startswith(TMP_PREFIX):
                    st = os.stat(name, dir_fd=store.fd, follow_symlinks=False)
                    if now - st.st_mtime > TMP_MAX_AGE:
                        os.unlink(name, dir_fd=store.fd)
            except OSError:  # removed or replaced by another process first, or a directory
                pass
        # Numba's machine code of backend="numba" derivatives, and their sources (jit_dir)
        shutil.rmtree(Path(os.path.abspath(store.root)) / "numba", ignore_errors=True)
    return n
