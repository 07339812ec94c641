"""Ahead-of-time derivative modules: generated `.py` files that need only NumPy.

`write_module` turns derivatives into the text of one module (deterministic: the same
input gives the same bytes); `load_ahead_of_time` finds a present, fresh one for a
function at run time, so that a package shipping its derivatives compiles nothing.

Convention: the derivatives of functions in module `pkg.mod` live in `pkg.mod_s2sad`
(the file `pkg/mod_s2sad.py`, next to the source), which lists them in
`S2SAD_DERIVATIVES`. A module is fresh for a function when the facts each entry records
still hold: the hash of the function's source (and of its helpers' and of the values they
read), the hash of the rules of the primitives it calls (their code and the values they
close over), the s2sad version and the NumPy major version. A stale entry is ignored,
with a StaleModuleWarning that says to run `s2sad build`.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from s2sad.errors import S2SADError

SUFFIX = "_s2sad"
_RUNTIME_MODULE = "s2sad.ir.prims"  # where the helpers are defined
_RUNTIME_MODULES = (_RUNTIME_MODULE, "s2sad.runtime")  # ... and their public home


class AheadOfTimeError(S2SADError):
    kind = "error (ahead-of-time module)"


class StaleModuleWarning(UserWarning):
    """An ahead-of-time module no longer matches what it was built from (it is ignored)."""


@dataclass
class DerivativeSpec:
    """One derivative to write out: `target` is "module:function"."""

    target: str
    func: object
    mode: str = "grad"
    wrt: object = None  # as given to s2sad.grad & co (None: that transformation's default)
    args: tuple | None = None  # example arguments to specialise on; None: generic
    name: str | None = None  # the generated function's name (default `<func>_<mode>`)
    out: str | None = None
    args_text: str | None = field(default=None, compare=False)
    backend: str = "numpy"  # "numba": the Numba form, compiled when the module is used


def default_out(module_name: str) -> Path:
    """Where the derivatives of `module_name` go by default: `<module>_s2sad.py` beside it."""
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    path = Path(module.__file__)
    last = module_name.rsplit(".", 1)[-1]
    if path.name == "__init__.py":
        return path.parent.parent / f"{last}{SUFFIX}.py"
    return path.parent / f"{last}{SUFFIX}.py"


def default_wrt(mode: str):
    return 0 if mode in ("grad", "value_and_grad") else None


# -- writing ----------------------------------------------------------------------


def write_module(specs: list) -> str:
    """The text of one ahead-of-time module holding the derivatives `specs`."""
    from s2sad.codegen.compile import namespace_of
    from s2sad.codegen.imports import used_names as names_read
    from s2sad.codegen.imports import without_imports
    from s2sad.store.fingerprint import kinds_text, source_fingerprint
    from s2sad.transform import VERSION, generate, resolve_wrt, with_backend

    imports: dict = {}
    helpers: dict = {}
    bodies, table, header = [], [], []
    used_names: set = set()
    for spec in specs:
        func = spec.func
        wrt_spec = spec.wrt if spec.wrt is not None else default_wrt(spec.mode)
        wrt, wrt_tuple = resolve_wrt(func, wrt_spec)
        positional, kinds, kinds_key = _specialisation(spec)
        mode = with_backend(spec.mode, spec.backend)
        compiled = _for_every_size(spec, func, mode, wrt, wrt_tuple, kinds)
        if compiled is not None:  # (one function for every size of the arrays given)
            kinds_key = kinds_text(compiled.every_size_kinds)
        else:
            compiled = generate(func, mode, wrt, wrt_tuple, kinds, {})
        ns = namespace_of(compiled.function) or compiled.namespace
        if getattr(ns, "self_names", None):
            raise AheadOfTimeError(
                f"{spec.target}: the derivative of this recursive function is a module of "
                "functions that call themselves, which ahead-of-time modules do not hold yet",
                hint="ahead-of-time modules cannot hold recursive derivatives yet; let "
                     "s2sad compile this one when it is first called")
        generated_name = compiled.function.__name__
        name = spec.name or generated_name
        base, k = name, 2
        while name in used_names:
            name, k = f"{base}_{k}", k + 1
        used_names.add(name)
        source = _renamed(without_imports(compiled.source), generated_name, name)
        if spec.backend == "numba":  # (a module is a file: Numba caches its machine code)
            from s2sad.codegen.numba_form import NUMBA_ONLY, cached

            source = cached(source)
            imports.setdefault("numba", ("numba", None))
            for helper in sorted(set(NUMBA_ONLY) & names_read(source)):
                # (Numba's forms of NumPy calls it has none of: `@` of stacks...)
                imports.setdefault(helper, ("s2sad.codegen.numba_runtime", helper))
            if spec.args is not None:  # refused now rather than where the module is used
                compiled.function(*spec.args)
        _add_imports(spec, ns, names_read(source), imports, helpers)
        fingerprint = source_fingerprint(func, positions=False, strict=False)
        primitives = primitive_names(func)
        what = f"{spec.mode} of {spec.target} with respect to " + \
            ", ".join(positional[i] for i in wrt)
        header.append(f"# {name}: {what}" +
                      (f"; specialised for {spec.args_text}" if spec.args_text else ""))
        header.append(f"#   source hash {fingerprint}")
        bodies.append(source.rstrip("\n"))
        output = _output_text(compiled, spec)
        table.append({"target": spec.target, "function": name, "mode": mode,
                      "wrt": tuple(wrt), "wrt_tuple": bool(wrt_tuple), "kinds": kinds_key,
                      "source_hash": fingerprint, "primitives": primitives,
                      "rules_hash": rules_hash(primitives), "s2sad": VERSION,
                      "numpy": numpy_major(), **({"output": output} if output else {})})
    for text in helpers.values():  # the helpers copied in read NumPy (and math) too
        for alias in names_read(text) & {"np", "math"}:
            imports.setdefault(alias, {"np": ("numpy", None), "math": ("math", None)}[alias])
    clash = used_names & (set(imports) | set(helpers))
    if clash:
        raise AheadOfTimeError(f"generated names {sorted(clash)} clash with imported names",
                               hint="give the derivatives other names (`name = ...`)")
    return _module_text(sorted({s.target for s in specs}), header, imports, helpers, bodies,
                        table)


def _for_every_size(spec, func, mode, wrt, wrt_tuple, kinds):
    """The derivative for every size of the example's arrays, where one serves them with no
    guard (as the dispatcher would compile it: store.compiled), else None."""
    from s2sad.store.sizes import every_size_kinds, generate_for_every_size, size_pattern

    if spec.args is None:
        return None
    params = tuple(p for p, q in inspect.signature(func).parameters.items()
                   if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD))
    both = every_size_kinds(list(spec.args), kinds, size_pattern(list(spec.args), params))
    if both is None:
        return None
    compiled = generate_for_every_size(func, mode, wrt, wrt_tuple, both[0], both[1], {})
    if compiled is None or compiled.size_guards:
        return None
    compiled.every_size_kinds = both[0]
    return compiled


def _specialisation(spec) -> tuple:
    """(the function's positional parameters, the argument kinds to specialise on, their
    text in the entry: None for a generic derivative)."""
    from s2sad.ir.kinds import UNKNOWN, kind_of_value
    from s2sad.store.fingerprint import kinds_text

    sig = inspect.signature(spec.func)
    positional = [n for n, p in sig.parameters.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if spec.args is None:
        kinds, kinds_key = [UNKNOWN] * len(positional), None
    else:
        if len(spec.args) != len(positional):
            raise AheadOfTimeError(
                f"{spec.target}: args gives {len(spec.args)} values but the function "
                f"takes {len(positional)} positional parameters {positional}")
        kinds = [kind_of_value(a, keep_value=False) for a in spec.args]
        kinds_key = kinds_text(kinds)
    return positional, kinds, kinds_key


def _add_imports(spec, ns, used: set, imports: dict, helpers: dict):
    """Record how the module gets each name the generated code of `spec` uses (namespace
    `ns`, names read `used`): an import into `imports`, or a runtime helper's source into
    `helpers`."""
    for alias, value in ns.values.items():
        if alias not in used:
            continue
        path = ns.imports.get(alias) or _import_by_identity(value, spec.func)
        if path is None and alias in ns.bindings:
            raise AheadOfTimeError(
                f"{spec.target}: the generated code calls `{alias}`, the derivative of a "
                "recursive call, which needs s2sad at run time",
                hint="ahead-of-time modules cannot hold recursive derivatives yet; let "
                     "s2sad compile this one when it is first called")
        if path is None:
            raise AheadOfTimeError(
                f"{spec.target}: the generated code uses `{alias}` ({type(value).__name__}), "
                "which cannot be imported from any module",
                hint="make it a module-level name of the function's module, or pass it "
                     "as an argument")
        if path[0] in _RUNTIME_MODULES:
            _collect_helper(alias, path[1], helpers)
            continue
        if imports.setdefault(alias, tuple(path)) != tuple(path):
            raise AheadOfTimeError(
                f"{spec.target}: `{alias}` means {imports[alias]} in another derivative "
                f"of this module but {tuple(path)} here",
                hint="write this derivative to a module of its own (set `out`)")


def _module_text(targets: list, header: list, imports: dict, helpers: dict, bodies: list,
                 table: list) -> str:
    """The module: a header comment, docstring and imports, the runtime helpers, the
    derivatives, and the table `S2SAD_DERIVATIVES` of what each was built from."""
    from s2sad.codegen.imports import STDLIB, import_lines
    from s2sad.transform import VERSION

    first = (f"# Generated by s2sad {VERSION} (`s2sad build`) from {', '.join(targets)}: "
             "do not edit, regenerate.")
    doc = ("Importing this module needs NumPy (and the source module when the code uses "
           "its names), not s2sad.")
    lines = [first, *header,
             f'"""Derivatives of {", ".join(targets)}, generated ahead of time by s2sad.',
             "", doc, '"""', ""]
    std = [ln for ln in import_lines(imports) if ln.split()[1] in STDLIB]
    rest = [ln for ln in import_lines(imports) if ln not in std]
    lines += std + ([""] if std and rest else []) + rest
    text = "\n".join(lines) + "\n"
    for alias in sorted(helpers):
        text += "\n\n" + helpers[alias].rstrip("\n") + "\n"
    for body in bodies:
        text += "\n\n" + body + "\n"
    text += "\n\nS2SAD_DERIVATIVES = (\n"
    for entry in table:
        text += "    {\n" + "".join(f"        {k!r}: {entry[k]!r},\n" for k in entry) + "    },\n"
    text += ")\n"
    return text


def numpy_major() -> str:
    import numpy as np

    return np.__version__.split(".")[0]


def primitive_names(func) -> tuple:
    """The names of the primitives with rules (or linear / non-differentiable marks) that
    `func`'s lowered code calls (helpers are inlined)."""
    from s2sad.ir.nodes import Call, blocks_of
    from s2sad.store.fingerprint import callable_name
    from s2sad.transform import lowered

    index = _rule_index()
    names = set()
    stack = [lowered(func).body]
    while stack:
        block = stack.pop()
        for stmt in block.stmts:
            if isinstance(stmt, Call) and callable_name(stmt.fn) in index:
                names.add(callable_name(stmt.fn))
            stack.extend(blocks_of(stmt))
    return tuple(sorted(names))


_RULE_INDEX: list = []  # [(table version, {name: [primitive, ...]})]


def rules_hash(names) -> str | None:
    """A hash of the rules of the primitives called `names` (every primitive of that name:
    the same in the build and at run time), or None when one has no entry in the table."""
    from s2sad.store.fingerprint import rules_digest

    index = _rule_index()
    fns = []
    for name in names:
        if name not in index:
            return None
        fns.extend(index[name])
    return rules_digest(fns, portable=True)


def _rule_index() -> dict:
    """{callable_name: [primitive, ...]} over the rule table (rebuilt when it changes)."""
    from s2sad.store.fingerprint import callable_name, table_primitives
    from s2sad_rules import TABLE

    if not _RULE_INDEX or _RULE_INDEX[0][0] != TABLE.version:
        index: dict = {}
        for fn in table_primitives():
            index.setdefault(callable_name(fn), []).append(fn)
        _RULE_INDEX[:] = [(TABLE.version, index)]
    return _RULE_INDEX[0][1]


def _renamed(source: str, old: str, new: str) -> str:
    if old == new:
        return source
    lines = source.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(f"def {old}("):
            lines[i] = f"def {new}(" + line[len(f"def {old}("):]
            return "\n".join(lines)
    raise AheadOfTimeError(f"cannot find `def {old}(` in the generated code")


def _import_by_identity(value, func):
    """(module, name) of a module-level name of `func`'s module bound to `value`."""
    module = getattr(func, "__module__", None)
    scope = getattr(func, "__globals__", {})
    if not module or module == "__main__":
        return None
    for name in sorted(scope):
        if scope[name] is value and not name.startswith("__"):
            return (module, name)
    return None


def _collect_helper(alias: str, qual, helpers: dict):
    """Copy the source of a runtime helper (and of the helpers it calls) into the module."""
    prims = importlib.import_module(_RUNTIME_MODULE)
    fn = getattr(prims, qual or alias)
    if isinstance(fn, type) and fn.__module__ == prims.__name__:
        helpers.setdefault(alias, inspect.getsource(fn))  # a class a helper uses (Grown)
        return
    if not isinstance(fn, types.FunctionType):
        raise AheadOfTimeError(f"the runtime helper `{alias}` is not a plain function")
    text = inspect.getsource(fn)
    if alias != fn.__name__:
        text += f"\n\n{alias} = {fn.__name__}\n"
    if helpers.get(alias) == text:
        return
    helpers[alias] = text
    for name in fn.__code__.co_names:
        value = getattr(prims, name, None)
        if isinstance(value, types.FunctionType) or (
                isinstance(value, type) and value.__module__ == prims.__name__):
            _collect_helper(name, name, helpers)


# -- finding a module at run time -----------------------------------------------------

_MODULES: dict = {}
_FINGERPRINTS: dict = {}


def load_ahead_of_time(func, mode: str, wrt: tuple, wrt_tuple: bool, arg_kinds: list,
                       kw_kinds: dict):
    """A Compiled from a present and fresh ahead-of-time module, or None."""
    if os.environ.get("S2SAD_AOT", "1") == "0" or not isinstance(func, types.FunctionType):
        return None
    module_name = func.__module__
    if not module_name or module_name == "__main__":
        return None
    module = _aot_module(module_name + SUFFIX)
    if module is None:
        return None
    target = f"{module_name}:{func.__qualname__}"
    entries = [e for e in getattr(module, "S2SAD_DERIVATIVES", ())
               if e.get("target") == target and e.get("mode") == mode
               and tuple(e.get("wrt", ())) == tuple(wrt)
               and bool(e.get("wrt_tuple")) == bool(wrt_tuple)]
    if not entries:
        return None
    from s2sad.store.cache_entries import cached_compiled, structure_from_text
    from s2sad.store.fingerprint import kinds_text

    wanted = None if kw_kinds else kinds_text(arg_kinds)
    entry = next((e for e in entries if wanted is not None and e.get("kinds") == wanted), None)
    if entry is None and wanted is not None:  # (one compiled without the exact dtypes of
        generic = kinds_text(arg_kinds, precision=False)  # its arguments serves any)
        entry = next((e for e in entries if e.get("kinds") == generic), None)
    entry = entry or next((e for e in entries if e.get("kinds") is None), None)
    if entry is None:
        return None
    problem = stale_reason(entry, func)
    if problem is not None:
        key = (module.__name__, target, entry.get("function"))
        if key not in _WARNED:
            _WARNED.add(key)
            warnings.warn(f"not using {entry.get('function')} from the ahead-of-time module "
                          f"{module.__name__}: {problem}; compiling {target} instead (run "
                          "`s2sad build` to regenerate the module)", StaleModuleWarning,
                          stacklevel=4)
        return None
    fn = getattr(module, entry.get("function", ""), None)
    if fn is None:
        return None

    try:
        output = entry.get("output")
        structure = structure_from_text(output) if output is not None else None
    except Exception:  # (a namedtuple class that no longer imports: compiled afresh)
        return None

    def rebuild_ir():
        from s2sad.transform import derivative_ir, split_backend

        return derivative_ir(func, split_backend(mode)[0], wrt, arg_kinds, kw_kinds,
                             wrt_tuple=wrt_tuple)

    if hasattr(fn, "py_func"):  # a Numba dispatcher: its compile errors told as S2SADErrors
        from s2sad.codegen.numba_compile import guarded

        source = inspect.getsource(module)
        fn = guarded(fn, source, module.__file__, getattr(func.__code__, "co_filename", None))
        hit = cached_compiled(source, fn, rebuild_ir)
    else:
        hit = cached_compiled(lambda: inspect.getsource(fn), fn, rebuild_ir)
    hit.out_structure = structure
    return hit


def _output_text(compiled, spec) -> str | None:
    """The structure of the list, namedtuple or dict the function returns, as the module's
    table keeps it (cache_entries.structure_text); None for any other output."""
    from s2sad.store.cache_entries import structure_text

    if compiled.out_structure is None:
        return None
    text = structure_text(compiled.out_structure)
    if text is None:
        raise AheadOfTimeError(
            f"{spec.target} returns a namedtuple whose class cannot be imported by its module "
            "and name (defined inside a function), or a dict with keys that are not "
            "literals: an ahead-of-time module could not give its derivatives that structure",
            hint="define the namedtuple class at the top level of a module, or leave this "
                 "derivative out of the build (it is compiled when first called)")
    return text


def stale_reason(entry: dict, func) -> str | None:
    """Why an entry of S2SAD_DERIVATIVES no longer holds for `func` (None: it is fresh)."""
    from s2sad.transform import VERSION

    built = entry.get("s2sad")
    if built != VERSION:
        return (f"it was generated by s2sad {built}, this is s2sad {VERSION}" if built else
                "it records no s2sad version (generated by an older s2sad)")
    if entry.get("numpy") != numpy_major():
        return (f"it was generated with NumPy {entry.get('numpy')}.x, this is NumPy "
                f"{numpy_major()}.x")
    if entry.get("source_hash") != _fingerprint(func):
        return "the source of the function, of a helper, or a value they read has changed"
    names = tuple(entry.get("primitives") or ())
    verdict = _RULES_SEEN.get(names)
    if verdict is None or verdict[0] != _rules_version():
        verdict = _RULES_SEEN[names] = (_rules_version(), rules_hash(names))
    if verdict[1] is None or verdict[1] != entry.get("rules_hash"):
        return "the derivative rules it was generated with have changed"
    return None


_RULES_SEEN: dict = {}
_WARNED: set = set()


def _rules_version():
    from s2sad_rules import TABLE

    return TABLE.version


def _fingerprint(func):
    from s2sad.store.fingerprint import source_fingerprint

    key = (func, func.__code__)
    hit = _FINGERPRINTS.get(key)
    if hit is None:
        hit = _FINGERPRINTS[key] = source_fingerprint(func, positions=False, strict=False)
    return hit


def _aot_module(name: str):
    if name in _MODULES:
        return _MODULES[name]
    module = sys.modules.get(name)
    if module is None:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        module = importlib.import_module(name) if found else None
    _MODULES[name] = module
    return module
