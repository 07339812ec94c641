"""The imports printed at the top of generated source: the module-level names its code
reads, each from where the namespace records it (`import numpy as np`,
`from s2sad.runtime import unbroadcast`), so that the printed source runs and lints.

Lines importing a user's module are shown, not run: `executable` blanks them before
compiling (the namespace already holds the values, and importing a user's module by name
could load a second copy of it), keeping line numbers, so tracebacks still point at the
printed lines.
"""

from __future__ import annotations

import ast
import functools
import re

STDLIB = ("math", "cmath", "operator", "builtins")
_OWNED = re.compile(r"^(\w+) = _\1_owner\.")
_BOUND = re.compile(r"^\w+ = s2sad\.\w+\(")
# imports kept in what is compiled: of modules always loaded, binding what the namespace
# holds (and compiling `np.sin(x)` for an imported `np`, as the printed source does)
_LIBRARY = re.compile(r"^(import (math|cmath|numpy)( as \w+)?|from (s2sad\.runtime|s2sad_rules"
                      r"(\.\w+)*) import [\w, ]+)$")


@functools.lru_cache(maxsize=2)
def used_names(source: str) -> frozenset:
    """The names `source` reads (loads of bare names, anywhere in it). Cached: the prelude
    and the imports ask about the same long source."""
    return frozenset(node.id for node in ast.walk(ast.parse(source))
                     if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load))


def needed_imports(source: str, ns) -> dict:
    """{alias: (module, qualname or None)} for the namespace names `source` reads that can
    be imported (a captured constant without a module-level home cannot)."""
    used = used_names(source)
    imports = {alias: tuple(path) for alias, path in ns.imports.items()
               if alias in used and alias in ns.values and path is not None}
    for alias, (path, _) in ns.bindings.items():
        if alias in used:
            imports[path[1]] = tuple(path)
            imports["s2sad"] = ("s2sad", None)
    return imports


def import_lines(imports: dict) -> list:
    """`import` statements for `imports`: the standard library, NumPy and others, then the
    `from` imports, one line per module. A name that is an attribute of a module-level
    object (a method) is bound after its owner's import."""
    plain, froms, owned = [], {}, []
    for alias, (module, qual) in sorted(imports.items()):
        if qual is None:
            plain.append(f"import {module}" if alias == module else
                         f"import {module} as {alias}")
        elif "." not in qual:
            froms.setdefault(module, []).append(qual if alias == qual else
                                                f"{qual} as {alias}")
        else:
            root, rest = qual.split(".", 1)
            owned.append(f"from {module} import {root} as _{alias}_owner\n"
                         f"{alias} = _{alias}_owner.{rest}")
    std = [ln for ln in plain if ln.split()[1] in STDLIB]
    out = std + [ln for ln in plain if ln not in std]
    out += [f"from {m} import {', '.join(sorted(names))}" for m, names in sorted(froms.items())]
    return out + owned


def prelude(body: str, ns) -> list:
    """The import lines a generated function's `body` needs, as printed above it (and
    the derivatives of functions it calls that it binds after them)."""
    used = used_names(body)
    bound = [f"{alias} = {text}" for alias, (_, text) in sorted(ns.bindings.items())
             if alias in used]
    return import_lines(needed_imports(body, ns)) + bound


def executable(source: str) -> str:
    """`source` with its top-level import lines blanked (and the bindings of methods that
    follow them), line numbers kept: what is compiled in the namespace."""
    lines = source.split("\n")
    for i, line in enumerate(lines):
        if _is_import(line) and not _LIBRARY.match(line):
            lines[i] = ""
    return "\n".join(lines)


def without_imports(source: str) -> str:
    """`source` without the import lines above its functions (for modules that import
    once, at their top)."""
    return "\n".join(ln for ln in source.split("\n") if not _is_import(ln))


def _is_import(line: str) -> bool:
    return line.startswith(("import ", "from ")) or bool(_OWNED.match(line)
                                                          or _BOUND.match(line))
