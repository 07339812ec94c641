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


def names_read(source: str, candidates) -> set:
    """The names among `candidates` that `source` reads: `used_names(source) & candidates`,
    by one scan of the text for each candidate instead of parsing and walking the whole
    source (linear, and cheap for the few module-level names a namespace holds).

    An occurrence counts unless it follows a `.` (an attribute), is assigned or passed as a
    keyword (`name=`), or lies in a comment or a string literal on its line.
    """
    if "'''" in source or '"""' in source:  # a string across lines: parse it properly
        return used_names(source) & set(candidates)
    out = set()
    for name in candidates:
        if name in out or name not in source:
            continue
        pattern = re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w'\"])(?!\s*=(?!=))")
        for m in pattern.finditer(source):
            head = source[source.rfind("\n", 0, m.start()) + 1:m.start()]
            if ("#" in head or "'" in head or '"' in head) and not _in_code(head):
                continue
            out.add(name)
            break
    return out


_STRING = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


def _in_code(head: str) -> bool:
    """Whether the text following `head` (the start of its line) is code: not inside a
    comment or a string literal that `head` opens."""
    rest = _STRING.sub("", head)
    return not any(c in rest for c in "#'\"")


def _candidates(ns) -> set:
    """The namespace names whose reading brings an import or a binding line."""
    return {alias for alias, path in ns.imports.items()
            if alias in ns.values and path is not None} | set(ns.bindings)


def needed_imports(source: str, ns, used: set | None = None) -> dict:
    """{alias: (module, qualname or None)} for the namespace names `source` reads that can
    be imported (a captured constant without a module-level home cannot). `used`: those
    names, when the caller has found them already."""
    if used is None:
        used = names_read(source, _candidates(ns))
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
    used = names_read(body, _candidates(ns))
    bound = [f"{alias} = {text}" for alias, (_, text) in sorted(ns.bindings.items())
             if alias in used]
    return import_lines(needed_imports(body, ns, used)) + bound


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
