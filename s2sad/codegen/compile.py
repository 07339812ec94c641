"""Compiling generated source: exec into its namespace, registered with linecache.

Tracebacks and debuggers then show the generated lines.
"""

from __future__ import annotations

import hashlib
import linecache

from s2sad.codegen.names import Namespace


def compile_source(source: str, ns: Namespace, name: str):
    """Execute `source` (which defines `name`) and return the function object."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    filename = f"<s2sad:{name}:{digest}>"
    code = compile(source, filename, "exec")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = dict(ns.values)
    exec(code, scope)
    fn = scope[name]
    return fn
