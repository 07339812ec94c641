"""The format of a disk cache entry, and an entry back to a compiled derivative.

An entry is a header (format, HMAC of the payload under the user's secret) and a payload:
the key, the function's name, the structure of its output (a list, namedtuple or
dict returned; when there is one), its imports and source, then the marshalled code object.
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import importlib
import marshal

ENTRY_FORMAT = 3  # (3: an `output` line, the structure of a list, namedtuple or dict returned)
MAGIC = "s2sad-cache"


def signed(payload: bytes, secret: bytes) -> bytes:
    """The entry file's bytes: a header authenticating `payload` with `secret`, then it."""
    mac = hmac.new(secret, payload, hashlib.sha256).hexdigest()
    return f"{MAGIC} {ENTRY_FORMAT} {mac}\n".encode() + payload


def authenticated(data: bytes, secret: bytes) -> bytes | None:
    """The payload of the entry file's bytes `data`, or None unless its header is this
    format's and authenticates it with `secret`."""
    head, sep, rest = data.partition(b"\n")
    parts = head.decode("ascii", "replace").split(" ")
    if not sep or len(parts) != 3 or parts[0] != MAGIC or parts[1] != str(ENTRY_FORMAT):
        return None
    mac = hmac.new(secret, rest, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(mac, parts[2]):
        return None  # truncated, garbled or forged: never executed
    return rest


def load_entry(func, key, payload: bytes, spec):
    """The `Compiled` derivative an authenticated payload holds, or None when it is not the
    entry of `key` or no longer loads (its code is then regenerated)."""
    from s2sad.codegen.compile import code_filename, compile_source
    from s2sad.codegen.names import Namespace

    try:
        entry_key, name, imports, source, code = parse_payload(payload)
        # the code was compiled from this very source (its file name hashes the source)
        if entry_key != key or code.co_filename != code_filename(source, name):
            return None
        ns = Namespace()
        for alias, (module, qual) in imports.items():
            ns.values[alias] = _resolve_import(module, qual)
            ns.imports[alias] = (module, qual)
        fn = compile_source(source, ns, name, code)
        output = payload_output(payload)
        structure = structure_from_text(output) if output is not None else None
    except Exception:  # an entry that no longer resolves is regenerated
        return None
    hit = cached_compiled(source, fn, lambda: _rebuild_ir(func, spec))
    hit.out_structure = structure
    return hit


def payload_output(payload: bytes) -> str | None:
    """The text of the `output` line of an entry (structure_text), or None."""
    head = payload.partition(b"\0")[0].decode().partition("\nsource\n")[0]
    for line in head.split("\n")[2:]:
        if line.startswith("output "):
            return line.removeprefix("output ")
    return None


def structure_text(structure) -> str | None:
    """The structure of a function's output (frontend.lower.output_structure) as one line
    of text that structure_from_text reads back: a namedtuple class by its module and
    qualified name. None where it cannot be (a class defined in a function, dict keys
    that are not literals): such a derivative is compiled afresh in each process."""
    def encoded(st):
        if st is None:
            return None
        what, detail, items = st
        if what == "record":
            module, qual = getattr(detail, "__module__", None), detail.__qualname__
            try:
                if "<" in qual or _resolve_import(module, qual) is not detail:
                    raise ValueError
            except Exception:
                raise ValueError(f"{detail!r} cannot be imported back") from None
            detail = f"{module}:{qual}"
        return (what, detail, tuple(encoded(i) for i in items))

    try:
        value = encoded(structure)
        text = repr(value)
        if "\n" in text or ast.literal_eval(text) != value:
            return None
    except Exception:
        return None
    return text


def structure_from_text(text: str):
    """The structure structure_text wrote (its namedtuple classes imported)."""
    def decoded(st):
        if st is None:
            return None
        what, detail, items = st
        if what == "record":
            module, _, qual = detail.partition(":")
            detail = _resolve_import(module, qual)
        elif what not in ("list", "tuple", "dict"):
            raise ValueError(f"unknown output structure {what!r}")
        return (what, detail, tuple(decoded(i) for i in items))

    return decoded(ast.literal_eval(text))


def format_payload(key: str, name: str, imports: dict, source: str, code: bytes,
                   output: str | None = None) -> bytes:
    """Text (key, name, the output's structure if any, imports, source), a NUL, then the
    marshalled code object."""
    lines = [f"key {key}", f"name {name}"] + ([f"output {output}"] if output else [])
    lines += [f"import {alias} {module} {qual or '-'}"
              for alias, (module, qual) in sorted(imports.items())]
    text = "\n".join(lines) + "\nsource\n" + source
    return text.encode() + b"\0" + code


def parse_payload(payload: bytes):
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
        if line.startswith("output "):
            continue  # (read by payload_output)
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


def portable_imports(ns):
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
