"""Compiling generated source: exec into its namespace, registered with linecache.

Tracebacks and debuggers then show the generated lines. The namespace a function was
compiled in stays findable (`namespace_of`), so that its source can be cached or written
out ahead of time with the imports it needs.
"""

from __future__ import annotations

import hashlib
import linecache
import weakref

from s2sad.codegen.imports import executable
from s2sad.codegen.names import Namespace
from s2sad.ir.per_function import FunctionKeyed

# (on the function itself: the namespace may refer back to it, through a recursion's
# derivative, which a WeakKeyDictionary would keep alive)
_NAMESPACES = FunctionKeyed()
_LINECACHE_USERS: dict = {}  # filename -> how many live functions were compiled under it


def code_filename(source: str, name: str) -> str:
    """The file name generated code is compiled under (and registered in linecache as)."""
    return f"<s2sad:{name}:{hashlib.sha1(source.encode()).hexdigest()[:12]}>"


def compile_source(source: str, ns: Namespace, name: str, code=None):
    """Execute `source` (which defines `name`) and return the function object.

    `code` is `source` already compiled under `code_filename` (by the disk cache).
    """
    filename = code_filename(source, name)
    if code is None:
        code = compile(executable(source), filename, "exec")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = dict(ns.values)
    exec(code, scope)
    fn = scope[name]
    _NAMESPACES[fn] = ns
    # the generated lines stay in linecache while a function compiled from them lives
    _LINECACHE_USERS[filename] = _LINECACHE_USERS.get(filename, 0) + 1
    weakref.finalize(fn, _forget_lines, filename)  # (exec made it: a Python function)
    return fn


def _forget_lines(filename: str) -> None:
    users = _LINECACHE_USERS.get(filename, 0) - 1
    if users > 0:
        _LINECACHE_USERS[filename] = users
        return
    _LINECACHE_USERS.pop(filename, None)
    linecache.cache.pop(filename, None)


def namespace_of(fn) -> Namespace | None:
    """The namespace `fn` was compiled in by `compile_source` (None if it was not)."""
    try:
        return _NAMESPACES.get(fn)
    except TypeError:
        return None
