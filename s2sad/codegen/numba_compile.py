"""Compiling the Numba form of a derivative: the source is executed (its `@numba.njit`
makes the dispatcher), and a compile error Numba raises at the first call is told as a
BackendError naming the user's line.

Numba caches machine code only for functions defined in a file: with a `cache_dir` (the
s2sad disk cache's `numba/` folder, private to the user like the cache itself) the source
is written there under a name that is its hash, and Numba keeps its compiled code in that
folder's `__pycache__`, keyed by the file's contents; a later process compiles nothing.
"""

from __future__ import annotations

import hashlib
import linecache
import os
import tempfile
from pathlib import Path

from s2sad.codegen.compile import code_filename
from s2sad.codegen.imports import executable
from s2sad.codegen.numba_errors import from_numba
from s2sad.errors import BackendError


def numba_module():
    """The `numba` module, or a BackendError saying how to install it."""
    try:
        import numba
    except ImportError:
        raise BackendError('backend="numba" needs Numba, which is not installed',
                           hint="pip install 's2sad[numba]'") from None
    return numba


def source_file(source: str, name: str, cache_dir: Path) -> str | None:
    """The file holding `source` in `cache_dir` (written now if it is not there yet), or
    None when it cannot be written."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    path = cache_dir / f"{name}_{digest}.py"
    try:
        if path.is_file() and path.read_text() == source:
            return str(path)
        cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    except OSError:
        return None
    return str(path)


def compile_numba(source: str, ns, name: str, user_file: str | None,
                  cache_dir: Path | None = None):
    """The function `name` of the Numba-form `source`: a Python function calling the
    Numba dispatcher, which turns Numba's compile errors into BackendErrors."""
    numba = numba_module()
    errors = numba.core.errors.NumbaError
    filename = source_file(source, name, cache_dir) if cache_dir is not None else None
    if filename is None:
        source = source.replace("@numba.njit(cache=True)", "@numba.njit")
        filename = code_filename(source, name)
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = dict(ns.values)
    scope["numba"] = numba
    exec(compile(executable(source), filename, "exec"), scope)
    dispatcher = scope[name]

    def run(*args, **kwargs):
        try:
            return dispatcher(*args, **kwargs)
        except errors as e:
            raise from_numba(e, source, filename, user_file) from None

    if f"{name}_sweep" in scope:  # a VJP: its pullback compiles the sweep when first called
        def run_vjp(*args, **kwargs):
            value, pullback = run(*args, **kwargs)

            def pullback_checked(out_bar):
                try:
                    return pullback(out_bar)
                except errors as e:
                    raise from_numba(e, source, filename, user_file) from None
            return value, pullback_checked
        run_vjp.__name__ = run_vjp.__qualname__ = name
        run_vjp.__wrapped__ = dispatcher
        return run_vjp, source

    run.__name__ = run.__qualname__ = name
    run.__wrapped__ = dispatcher
    return run, source
