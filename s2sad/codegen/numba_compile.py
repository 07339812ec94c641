"""Compiling the Numba form of a derivative: the source is executed (its `@numba.njit`
makes the dispatcher), and a compile error Numba raises at the first call is told as a
BackendError naming the user's line.

Numba caches machine code only for functions defined in a file: with a `cache_dir` (the
s2sad disk cache's `numba/` folder, private to the user like the cache itself) the source
is written there under a name that is its hash, and Numba keeps its compiled code in that
folder's `__pycache__`, keyed by the file's contents; a later process compiles nothing.
"""

from __future__ import annotations

import functools
import hashlib
import linecache
import os
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from s2sad.codegen.compile import code_filename
from s2sad.codegen.imports import executable
from s2sad.codegen.numba_errors import from_numba
from s2sad.codegen.numba_form import NUMBA_ONLY, uncached
from s2sad.errors import BackendError

# the layout of what is cached (a new one leaves Numba's entries of an old one unread)
_FORMAT = "s2sad numba form 2"


def _digest(source: str) -> str:
    return hashlib.sha256(f"{_FORMAT}\n{source}".encode()).hexdigest()[:16]


def _in_numba(tb) -> bool:
    """Was the exception raised inside Numba's compiler (not by the compiled code)?"""
    part = f"{os.sep}numba{os.sep}"
    while tb is not None:
        if part in tb.tb_frame.f_code.co_filename:
            return True
        tb = tb.tb_next
    return False


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
    path = cache_dir / f"{name}_{_digest(source)}.py"
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
    from s2sad.codegen import numba_runtime  # (the helpers' Numba implementations)
    filename = source_file(source, name, cache_dir) if cache_dir is not None else None
    if filename is None:
        source = uncached(source)
        filename = code_filename(source, name)
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    # A module of its own, importable by name: Numba's cache, loading the machine code in
    # another process, imports the module the function was defined in.
    module = types.ModuleType(f"_s2sad_numba_{_digest(source)}")
    module.__file__ = filename
    scope = module.__dict__
    scope.update(ns.values)
    scope["numba"] = numba
    scope.update({n: getattr(numba_runtime, n) for n in NUMBA_ONLY})
    sys.modules[module.__name__] = module
    exec(compile(executable(source), filename, "exec"), scope)
    return guarded(scope[name], source, filename, user_file, name), source


def direct_entry(dispatcher, sample: list) -> Callable[..., Any] | None:
    """The machine code's own entry for the arguments of `sample` ([(type, shape, dtype)],
    one a parameter), for a fast path of s2sad's dispatcher testing that the arguments are
    of those kinds, where nothing is left to compile, so nothing to tell: the arguments are
    Python floats (or bools, complex numbers, ints that fit an int64: the caller's fast
    path tests that they do), which Numba types one way, and the machine code for them is
    compiled. Else None (the guarded call).

    The entry is the compiled overload's `entry_point`, what the Numba dispatcher calls
    once it has typed the arguments and looked the overload up: the type tests of s2sad's
    fast path have done that, so the call skips a Python call and Numba's own typing of
    every argument (together about a third of a scalar derivative's time)."""
    types = numba_module().core.types
    # (an int is an int64 to Numba where it fits one: the caller tests that it does)
    by_type = {float: types.float64, complex: types.complex128, bool: types.boolean,
               int: types.int64}
    signature = tuple(by_type.get(t) for t, _, _ in sample)
    code = dispatcher.py_func.__code__
    if None in signature or code.co_kwonlyargcount or code.co_argcount != len(signature):
        return None
    overload = dispatcher.overloads.get(signature)
    if overload is None:
        return None
    # (its own entry: what the dispatcher calls, once the types are known; the dispatcher
    # where a Numba version has none)
    entry = getattr(overload, "entry_point", None)
    return entry if callable(entry) else dispatcher


def guarded(dispatcher, source: str, filename: str, user_file: str | None,
            name: str | None = None):
    """A Python function calling the Numba `dispatcher` of module `source` (compiled under
    `filename`) that tells Numba's compile errors as BackendErrors. Numba compiles at a
    call with arguments of new types: a VJP's pullback compiles its sweep when first
    called, and is guarded too."""
    errors = numba_module().core.errors.NumbaError
    name = name or dispatcher.__name__

    def told(e: Exception) -> Exception:
        """The BackendError for `e`, or `e` itself: raised by the compiled code."""
        if isinstance(e, errors) or _in_numba(e.__traceback__):  # (else: Numba's own bug)
            return from_numba(e, source, filename, user_file)
        return e

    def run(*args, **kwargs):
        try:
            # (keywords take Numba's slow path, microseconds a call: passed only when given)
            return dispatcher(*args, **kwargs) if kwargs else dispatcher(*args)
        except Exception as e:
            error = told(e)
            if error is e:
                raise
            raise error from None

    run.__name__ = run.__qualname__ = name
    run.__wrapped__ = dispatcher
    if f"def {name}_sweep(" not in source:
        run.direct_entry = functools.partial(direct_entry, dispatcher)
        return run

    def run_vjp(*args, **kwargs):
        value, pullback = run(*args, **kwargs)

        def pullback_checked(out_bar):
            try:
                return pullback(out_bar)
            except Exception as e:
                error = told(e)
                if error is e:
                    raise
                raise error from None
        return value, pullback_checked

    run_vjp.__name__ = run_vjp.__qualname__ = name
    run_vjp.__wrapped__ = dispatcher
    return run_vjp
