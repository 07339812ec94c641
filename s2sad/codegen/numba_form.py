"""The Numba form of generated source (backend="numba"): the same derivative, with the few
constructs Numba's nopython mode cannot type rewritten, decorated with `numba.njit`.

A source-to-source step over the printed derivative, line by line, so the comments that
point back to the user's lines stay where they were: a tape read backwards
(`reversed(tape)`, `next(reader)`) becomes an index loop, `reversed(range(...))` a range
that counts down, `np.tensordot(a, b, 1)` `np.dot(a, b)`, `np.max(a, axis=1)` the maxima
of the rows. What has no Numba form (a runtime helper of s2sad.runtime, a closure
returned as a pullback) is refused with a BackendError naming the line. First, runs of
broadcast statements over arrays of several axes become loop nests (codegen/numba_nest.py,
on the NumPy form: the rewrites see scalar loops); last, runs of elementwise statements
over arrays of one length become loops (codegen/numba_fusion.py).
"""

from __future__ import annotations

import ast
import itertools
import re

from s2sad.codegen.numba_errors import refusal
from s2sad.codegen.numba_fusion import fuse, parameter_kinds
from s2sad.codegen.numba_nest import nest, parameter_arrays
from s2sad.ir.dims import Observed, Observer

HEADER = 'compiled by Numba (backend="numba"): each tape is read by index, last in first out'
# imports a Numba-compiled derivative may keep: the modules whose functions Numba types
_TYPED_IMPORTS = re.compile(r"^import (math|cmath|numpy as np)$")
# the runtime helpers with a Numba implementation (codegen/numba_runtime.py)
KERNELS = frozenset({"unbroadcast", "sum_to_shape", "broadcast_like", "take_slot",
                     "index_update", "index_add", "index_add_at", "zeros_like",
                     "fresh_copy", "prod_others", "cast_like", "ones_like_output",
                     "check_scalar_output", "add_cotangents", "filled_diagonal"})
# the helpers of rules and passes the generated code imports from their own modules, with
# a Numba implementation too
RULE_KERNELS = {"s2sad.runtime": KERNELS,
                "s2sad_rules.numpy_reductions": frozenset({"kept_shape"}),
                "s2sad_rules.numpy_shape": frozenset({"split_points"}),
                "s2sad_rules.kind_tests": frozenset({"is_complex"}),
                "s2sad.passes.batch": frozenset({"batch_index"})}
_HELPERS = re.compile(r"^from ([\w.]+) import (\w+(, \w+)*)$")
# what the Numba form calls in place of NumPy's calls Numba has no form of (contractions of
# any rank, arrays of arrays): numba_runtime's, imported from there
NUMBA_ONLY = ("matmul", "tensordot", "nested_array", "new_tape", "tape_put", "tape_get")
# (a tape pushed once per trip of a `for ... in range(...)` loop: allocated at its first
# push for the loop's trips, written and read by index; numba_runtime.new_tape)
_TAPE_HELPERS = ("new_tape", "tape_put", "tape_get")


def numba_source(source: str, name: str, cache: bool, user_file: str | None = None,
                 kinds: list | None = None, siblings: tuple = ()) -> str:
    """`source` (a generated module defining `name`) in the form Numba compiles, with
    `@numba.njit` on what Numba compiles (`cache=True`: Numba keeps the machine code on
    disk). A refusal names the line of `user_file` the construct comes from. `kinds`: the
    kinds of the arguments the source is specialised for (its elementwise statements over
    arrays of one length are fused into loops, codegen/numba_fusion.py). `siblings`: the
    module's other functions, compiled too (a self-recursive derivative's: transform.py)."""
    source, jitted = split_vjp(source, name)
    # (loop nests from the kinds of the arguments of `name`'s functions, not of a sibling)
    source, nested = _nested(source, jitted, kinds or [])
    jitted = jitted + [n for n in siblings if n not in jitted]
    lines = source.split("\n")
    tree = ast.parse(source)
    for node in tree.body:  # (before the imports: `import s2sad` is for these)
        call = node.value if isinstance(node, ast.Assign) else None
        if isinstance(call, ast.Call) and ast.unparse(call.func).startswith("s2sad.") and \
                call.args:
            # (a recursive call, or one s2sad does not inline: its derivative is made while
            # the code runs, for each call's argument kinds)
            callee = ast.unparse(call.args[0])
            raise refusal(source, _first_use(tree, node), f"the call of `{callee}`, whose "
                          f"derivative the generated code asks s2sad for while it runs "
                          f"(`{ast.unparse(call)}`: a recursive call, or one s2sad does not "
                          "inline); Numba compiles no call into s2sad", user_file)
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            text = lines[node.lineno - 1]
            if not (_TYPED_IMPORTS.match(text) or _kernels_only(text)):
                raise refusal(source, _first_use(tree, node), f"`{text.strip()}`: the "
                              "generated code calls a helper that Numba cannot compile",
                              user_file)
    edits: dict[int, list[str]] = {}
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in jitted]
    used: set[str] = set()
    for fn in defs:
        rewriter = _Rewriter(source, lines, _names(fn), user_file)
        edits.update(rewriter.rewrite(fn.body))
        used |= rewriter.used
    for fn in defs:
        edits[fn.lineno - 1] = [_decorator(cache, fn.name in nested)] + edits.get(
            fn.lineno - 1,
                                                               [lines[fn.lineno - 1]])
    out: list[str] = []
    for i, line in enumerate(lines):
        out.extend(edits.get(i, [line]))
    out = _renamed_versions(out, defs)
    # the header comments, then `import numba` with the other imports
    first_code = next(i for i, ln in enumerate(out) if not ln.startswith("#"))
    out.insert(first_code, f"# {HEADER}")
    imports_end = first_code + 1
    while out[imports_end].startswith("import "):
        imports_end += 1
    out.insert(imports_end, "import numba")
    if any("index_add_at(" in ln for ln in out if not ln.lstrip().startswith("#")) and \
            not any(re.match(r"from s2sad\.runtime import .*\bindex_add_at\b", ln)
                    for ln in out):  # (np.add.at rewritten by _Calls)
        out.insert(imports_end + 1, "from s2sad.runtime import index_add_at")
    if used:
        names = ", ".join(n for n in NUMBA_ONLY if n in used)
        out.insert(imports_end + 1, f"from s2sad.codegen.numba_runtime import {names}")
    return _unread_sizes_dropped(_fused("\n".join(out), jitted, kinds or [], cache), jitted)


def _decorator(cache: bool, numpy_errors: bool = False) -> str:
    options = (["cache=True"] if cache else []) + (['error_model="numpy"'] if numpy_errors
                                                    else [])
    return f"@numba.njit({', '.join(options)})" if options else "@numba.njit"


def cached(source: str) -> str:
    """The Numba form `source` with Numba's disk cache on (`cache=True`) everywhere."""
    return re.sub(r"^@numba\.njit(\((.*)\))?$",
                  lambda m: "@numba.njit(cache=True)" if not m.group(2) else
                  m.group(0) if "cache=True" in m.group(2) else
                  f"@numba.njit(cache=True, {m.group(2)})", source, flags=re.MULTILINE)


def uncached(source: str) -> str:
    """The Numba form `source` with Numba's disk cache off."""
    return source.replace("@numba.njit(cache=True)", "@numba.njit").replace(
        "@numba.njit(cache=True, ", "@numba.njit(")


def _fused(source: str, jitted: list[str], kinds: list, cache: bool) -> str:
    """`source` with the elementwise runs of the `jitted` functions fused into loops."""
    if not kinds:
        return source
    with Observer() as seen:  # (fusion asks nothing of symbolic sizes the key leaves open)
        fused = _fused_runs(source, jitted, kinds, cache)
    if seen.guards():
        raise Observed(f"fused loops asked {seen.guards()} of the sizes")
    return fused


def _nested(source: str, jitted: list[str], kinds: list) -> tuple[str, set[str]]:
    """`source` with the runs of broadcast statements of the `jitted` functions made loop
    nests (codegen/numba_nest.py), and the functions that have one."""
    if not kinds:
        return source, set()
    with Observer() as seen:  # (nests ask nothing of symbolic sizes the key leaves open)
        lines = source.split("\n")
        tree = ast.parse(source)
        edits: dict[int, list[str]] = {}
        nested: set[str] = set()
        for fn in tree.body:
            if not (isinstance(fn, ast.FunctionDef) and fn.name in jitted):
                continue
            params = [a.arg for a in fn.args.posonlyargs + fn.args.args +
                      fn.args.kwonlyargs]
            if fn.name.endswith("_sweep"):
                params = params[1:]  # (the cotangent seed)
            env = parameter_arrays(params, kinds, fn)
            fn_edits = nest(fn, lines, env, _names(fn)) if env else None
            if fn_edits:
                edits.update(fn_edits)
                nested.add(fn.name)
    if seen.guards():
        raise Observed(f"loop nests asked {seen.guards()} of the sizes")
    if not edits:
        return source, nested
    out: list[str] = []
    for i, line in enumerate(lines):
        out.extend(edits.get(i, [line]))
    return "\n".join(out), nested


def _fused_runs(source: str, jitted: list[str], kinds: list, cache: bool) -> str:
    source = _one_name_per_value(source, jitted)
    lines = source.split("\n")
    tree = ast.parse(source)
    edits: dict[int, list[str]] = {}
    for fn in tree.body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name in jitted):
            continue
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
        if fn.name.endswith("_sweep"):
            params = params[1:]  # (the cotangent seed)
        env = parameter_kinds(params, kinds, fn)
        fn_edits = fuse(fn, lines, env, _names(fn)) if env else None
        if fn_edits:
            edits.update(fn_edits)
            # (a fused loop divides one float by another: by zero, inf as NumPy gives)
            edits[fn.lineno - 2] = [_decorator(cache, numpy_errors=True)]
    if not edits:
        return source
    out: list[str] = []
    for i, line in enumerate(lines):
        out.extend(edits.get(i, [line]))
    return "\n".join(out)


def _one_name_per_value(source: str, jitted: list[str]) -> str:
    """`source` with a name that the straight-line body of a jitted function assigns twice
    given a new name from its second value on (`t = t_bar - 2.0 * (a_bar * t)` -> `t1 =
    ...`, and the reads after it): the register allocator reuses a name whose value is dead,
    and a fused loop cannot write into an array it still reads (`t` a view of `x`). Only
    names every assignment of which is a plain `name = ...` of the body's top level (an
    update `name += ...` there reads and writes the version it follows)."""
    lines = source.split("\n")
    tree = ast.parse(source)
    for fn in tree.body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name in jitted):
            continue
        params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
        top: dict[str, list[int]] = {}
        elsewhere: set[str] = set(params)
        for k, stmt in enumerate(fn.body):
            simple = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name)
            if simple:
                top.setdefault(stmt.targets[0].id, []).append(k)  # type: ignore[attr-defined]
            # (`t += u` updates the value t holds: it keeps t's version)
            updated = stmt.target if isinstance(stmt, ast.AugAssign) and \
                isinstance(stmt.target, ast.Name) else None
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and \
                        sub is not updated and \
                        not (simple and sub is stmt.targets[0]):  # type: ignore[attr-defined]
                    elsewhere.add(sub.id)
        taken = _names(fn)
        version: dict[int, dict[str, str]] = {}  # statement -> {name: its name there}
        defined: dict[int, tuple[str, str]] = {}  # statement -> (old target, new target)
        for name, at in top.items():
            if len(at) < 2 or name in elsewhere:
                continue
            current = name
            for k in range(at[0] + 1, len(fn.body)):
                if k in at:
                    # t1, t2, ... (as _renamed_versions spells versions)
                    new = next(f"{name}{j}" for j in itertools.count(1)
                               if f"{name}{j}" not in taken)
                    taken.add(new)
                    version.setdefault(k, {})[name] = current
                    defined[k] = (name, new)
                    current = new
                elif current != name:
                    version.setdefault(k, {})[name] = current
        for k, renames in version.items():
            stmt = fn.body[k]
            pattern = re.compile(r"(?<![.\w])(" + "|".join(map(re.escape, renames)) + r")\b")
            for i in range(stmt.lineno - 1, stmt.end_lineno or stmt.lineno):
                if not lines[i].lstrip().startswith("#"):
                    lines[i] = pattern.sub(lambda m: renames[m.group(1)], lines[i])
        for k, (old, new) in defined.items():
            i = fn.body[k].lineno - 1
            current = version[k][old]
            lines[i] = re.sub(rf"^(\s*){re.escape(current)} = ", rf"\g<1>{new} = ", lines[i],
                              count=1)
    return "\n".join(lines)


_VERSIONED = re.compile(r"^(\w+)_(\d+)$")


def _renamed_versions(lines: list[str], defs: list[ast.FunctionDef]) -> list[str]:
    """`t_1` renamed `t1` where the function also has a `t`: Numba names the versions of a
    variable assigned twice `t.1`, `t.2`, and its elementwise-expression fusion spells
    them `t_1`, failing on the clash with a variable of that name (an AssertionError
    inside Numba)."""
    names: set[str] = set()
    params: set[str] = set()  # (kept: a call may name them)
    for fn in defs:
        names |= _names(fn)
        params |= {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    renames: dict[str, str] = {}
    taken = set(names)
    for name in sorted(names - params):
        m = _VERSIONED.match(name)
        if m is None or m.group(1) not in names:
            continue
        new = m.group(1) + m.group(2)
        while new in taken or _VERSIONED.match(new):
            new += "x"
        taken.add(new)
        renames[name] = new
    if not renames:
        return lines
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, renames)) + r")\b")
    return [ln if ln.lstrip().startswith("#") else pattern.sub(lambda m: renames[m.group(1)], ln)
            for ln in lines]


def _kernels_only(text: str) -> bool:
    """Does the import line bring in only runtime helpers that Numba compiles?"""
    m = _HELPERS.match(text)
    return m is not None and set(m.group(2).split(", ")) <= RULE_KERNELS.get(m.group(1), set())


def _first_use(tree: ast.Module, node: ast.Import | ast.ImportFrom | ast.Assign) -> int:
    """The first line reading a name that `node` imports or assigns (else its own line)."""
    names = {a.asname or a.name for a in node.names} if not isinstance(node, ast.Assign) \
        else {t.id for t in node.targets if isinstance(t, ast.Name)}
    uses = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in names
            and isinstance(n.ctx, ast.Load)]
    return min(uses, default=node.lineno)


def split_vjp(source: str, name: str) -> tuple[str, list[str]]:
    """A VJP's source (`name` returning its value and a `pullback` closure over the forward
    sweep's values) as two functions Numba compiles, `name_forward` (the value) and
    `name_sweep` (both sweeps: the cotangents for one `out_bar`), and a Python `name`
    returning the value and a pullback that runs the sweep: Numba cannot return a closure,
    and values kept by the forward sweep (a tape) would cross into Python and back. The
    pullback recomputes the forward sweep. Other sources are returned as they are, with
    [`name`], the functions to compile."""
    tree = ast.parse(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    body = fn.body
    if not (len(body) >= 2 and isinstance(body[-2], ast.FunctionDef)
            and isinstance(body[-1], ast.Return) and isinstance(body[-1].value, ast.Tuple)
            and len(body[-1].value.elts) == 2
            and isinstance(body[-1].value.elts[1], ast.Name)
            and body[-1].value.elts[1].id == body[-2].name
            and len(body[-2].args.args) == 1 and fn.lineno < body[0].lineno):
        return source, [name]
    inner = body[-2]
    lines = source.split("\n")
    head = lines[:fn.lineno - 1]
    params = lines[fn.lineno - 1][len(f"def {name}("):].rstrip()[:-2]  # without `):`
    args = fn.args
    call = ", ".join([a.arg for a in args.posonlyargs + args.args] +
                     [f"{a.arg}={a.arg}" for a in args.kwonlyargs])
    forward = lines[fn.lineno:inner.lineno - 1]  # (with the comments above its first line)
    value = ast.unparse(body[-1].value.elts[0])  # what the forward sweep returns
    seed = inner.args.args[0].arg
    reverse = [ln[4:] for ln in lines[inner.lineno:inner.end_lineno]]
    out = head + [f"def {name}_forward({params}):"] + forward + [f"    return {value}", "",
                                                               ""]
    out += [f"def {name}_sweep({seed}, {params}):"] + forward + reverse + ["", ""]
    taken = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)} | {seed, inner.name}
    held = next(n for n in ("out", "value", "out_value", "primal_out") if n not in taken)
    out += [f"def {name}({params}):", f"    {held} = {name}_forward({call})",
            f"    def {inner.name}({seed}):",
            f"        return {name}_sweep({seed}, {call})",
            f"    return {held}, {inner.name}"]
    out += lines[body[-1].end_lineno:]
    return "\n".join(out), [f"{name}_forward", f"{name}_sweep"]


def _unread_sizes_dropped(source: str, jitted: list[str]) -> str:
    """`source` without the sizes bound at the top of a jitted function (`n = x.shape[0]`,
    ir/dims.py) that it does not read: the forward sweep split out of a VJP keeps the
    bindings only its reverse sweep reads."""
    lines = source.split("\n")
    drop: set[int] = set()
    for fn in ast.parse(source).body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name in jitted):
            continue
        for stmt in fn.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                    isinstance(stmt.targets[0], ast.Name) and
                    re.fullmatch(r"\w+\.shape\[\d+\]", ast.unparse(stmt.value))):
                break
            name = stmt.targets[0].id
            if not any(isinstance(n, ast.Name) and n.id == name and
                       isinstance(n.ctx, ast.Load) for n in ast.walk(fn)):
                drop.add(stmt.lineno - 1)
    return "\n".join(ln for i, ln in enumerate(lines) if i not in drop)


def _names(fn: ast.FunctionDef) -> set[str]:
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | \
        {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}


# the calls a list of arrays may be passed to as a tuple (which Numba's np.concatenate takes)
_JOINS = frozenset({"np.concatenate", "np.stack", "np.hstack", "np.vstack", "split_points"})


def _fixed_lists(body: list[ast.stmt]) -> set[str]:
    """The names assigned a list display (`t = [a[s], a[u]]`, the parts of a concatenation)
    whose lists are never changed: no name of them grown (`+=`), indexed for a write or
    given a method call, nor passed to a call other than the joins above (kept whole, on a
    tape, is fine). Numba's np.concatenate takes a tuple of arrays, not a list: they are
    made tuples. (A name the generated code binds again to another value is checked at
    all its uses, which keeps the test on the safe side.)"""
    nodes = [n for stmt in body for n in ast.walk(stmt)]
    fixed = {n.targets[0].id for n in nodes if isinstance(n, ast.Assign) and
             len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and
             isinstance(n.value, ast.List) and n.value.elts}
    for n in nodes:
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            fixed.discard(n.target.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            fixed.discard(n.value.id)
        elif isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and \
                not isinstance(n.ctx, ast.Load):
            fixed.discard(n.value.id)
        elif isinstance(n, ast.Call) and ast.unparse(n.func) not in _JOINS and \
                not (isinstance(n.func, ast.Attribute) and n.func.attr == "append"):
            for a in list(n.args) + [k.value for k in n.keywords]:
                if isinstance(a, ast.Name):
                    fixed.discard(a.id)
    return fixed


class _Rewriter:
    """Line edits ({line index: replacement lines}) that put one function's body in the
    form Numba types."""

    def __init__(self, source: str, lines: list[str], taken: set[str],
                 user_file: str | None):
        self.source = source
        self.user_file = user_file
        self.lines = lines
        self.taken = set(taken)
        self.readers: dict[str, str] = {}  # `reader = reversed(tape)`: reader -> tape
        self.used: set[str] = set()  # the NUMBA_ONLY helpers called
        self.edits: dict[int, list[str]] = {}
        self.counts: dict[str, str] = {}  # a tape allocated for its loop's trips -> their count
        self.planned: set[int] = set()  # the lines of those tapes' `tape = []` and pushes

    def helper(self, name: str, node: ast.AST) -> ast.Name:
        """The name of numba_runtime's helper `name`, which the Numba form imports."""
        if name in self.taken - self.used:
            raise self.refuse(node, f"a call of NumPy's `{name}` in a function that has a "
                              f"variable `{name}` (the Numba form's name for it)")
        self.used.add(name)
        return ast.Name(name, ast.Load())

    def fresh(self, hint: str) -> str:
        name, k = hint, 1
        while name in self.taken:
            name, k = f"{hint}_{k}", k + 1
        self.taken.add(name)
        return name

    def indent_of(self, node: ast.stmt) -> str:
        line = self.lines[node.lineno - 1]
        return line[:len(line) - len(line.lstrip())]

    def refuse(self, node: ast.AST, what: str) -> Exception:
        return refusal(self.source, getattr(node, "lineno", 0), what, self.user_file)

    def rewrite(self, body: list[ast.stmt]) -> dict[int, list[str]]:
        self.fixed = _fixed_lists(body)
        self.preallocate(body)
        for stmt in body:
            self.statement(stmt)
        return self.edits

    def preallocate(self, body: list[ast.stmt]) -> None:
        """A tape made (`tape = []`) before a `for ... in range(...)` loop of the same block
        that pushes onto it once per trip (the push a statement of the loop's own body, no
        break, continue or return in it), and read backwards only after it: made at the
        first push for the count of the loop's trips (an array of numbers, a tuple of them
        for tuples of numbers: numba_runtime.new_tape), written and read by index. A list
        grows as it is pushed onto, and its items are tuples: the arrays are faster."""
        if set(_TAPE_HELPERS) & self.taken:
            return
        names: dict[str, list[ast.Name]] = {}
        fn_nodes = [n for stmt in body for n in ast.walk(stmt)]
        for n in fn_nodes:
            if isinstance(n, ast.Name):
                names.setdefault(n.id, []).append(n)
        for block in _blocks(body):
            for j, made in enumerate(block):
                tape = _made_empty(made)
                if tape is not None:
                    self.plan_tape(tape, made, block[j + 1:], names.get(tape, []), fn_nodes)

    def plan_tape(self, tape: str, made: ast.Assign, after: list[ast.stmt],
                  uses: list[ast.Name], fn_nodes: list[ast.AST]) -> None:
        pushes = [n for n in fn_nodes if isinstance(n, ast.Expr) and _push_of(n) == tape]
        loop = next((s for s in after if isinstance(s, ast.For) and
                     any(p in s.body for p in pushes)), None)
        if loop is None or len(pushes) != 1 or not isinstance(loop.target, ast.Name):
            return
        push, index = pushes[0], loop.target.id
        it = loop.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and
                it.func.id == "range" and not it.keywords and 1 <= len(it.args) <= 2):
            return
        start = _int_literals(it.args[:1]) if len(it.args) == 2 else [0]
        item = push.value.args[0]  # type: ignore[attr-defined]
        if not start or any(isinstance(n, ast.Call) and not _is_len(n)
                            for a in it.args for n in ast.walk(a)) or \
                not all(isinstance(n, (ast.Name, ast.Constant, ast.Tuple, ast.Load))
                        for n in ast.walk(item)):
            return
        inside = [n for s in loop.body for n in ast.walk(s)]
        if any(isinstance(n, (ast.Break, ast.Continue, ast.Return)) or
               (isinstance(n, ast.Name) and n.id == index and isinstance(n.ctx, ast.Store))
               for n in inside):
            return
        # every other use of the tape: `reversed(tape)`, read after the loop
        readers = [n for n in fn_nodes if isinstance(n, ast.Call) and
                   isinstance(n.func, ast.Name) and n.func.id == "reversed" and
                   len(n.args) == 1 and isinstance(n.args[0], ast.Name) and
                   n.args[0].id == tape]
        known = {id(made.targets[0]), id(push.value.func.value)}  # type: ignore[attr-defined]
        known |= {id(r.args[0]) for r in readers}
        if any(id(u) not in known for u in uses) or \
                any(r.lineno <= (loop.end_lineno or loop.lineno) for r in readers):
            return
        count = self.fresh(f"{tape}_count")
        text = ", ".join(ast.unparse(a) for a in it.args)
        first = str(start[0])
        at = f"{index} - {first}" if first != "0" else index
        indent, push_indent = self.indent_of(loop), self.indent_of(push)
        self.edits[made.lineno - 1] = []
        trips = _int_literals(it.args)  # (a number of trips the source spells: folded)
        self.edits[loop.lineno - 1] = [f"{indent}{count} = " + (
            str(len(range(*trips))) if trips else f"len(range({text}))"),
                                       self.lines[loop.lineno - 1]]
        value = ast.unparse(item)
        self.edits[push.lineno - 1] = [
            f"{push_indent}if {index} == {first}:",
            f"{push_indent}    {tape} = new_tape({value}, {count})",
            f"{push_indent}tape_put({tape}, {at}, {value})"]
        self.planned |= {made.lineno - 1, push.lineno - 1}
        self.counts[tape] = count
        self.used |= set(_TAPE_HELPERS)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            raise self.refuse(stmt, f"the nested definition `{stmt.name}`")
        if stmt.lineno - 1 in self.planned:  # (a tape made for its loop's trips)
            return
        if isinstance(stmt, ast.For):
            self.for_loop(stmt)
        elif isinstance(stmt, (ast.While, ast.If)):
            self.check_expression(stmt.test, stmt)
            self.line_of(stmt, stmt.test)
        elif isinstance(stmt, ast.Assign) and self.tape_statement(stmt):
            return
        else:
            self.simple(stmt)
        for field in ("body", "orelse"):
            for child in getattr(stmt, field, []) or []:
                self.statement(child)

    def line_of(self, stmt: ast.stmt, test: ast.expr) -> None:
        """A compound statement's header: rewritten when its expression was."""
        new = _Calls(self).visit(test)
        if new is not test:
            line = self.lines[stmt.lineno - 1]
            keyword = "while" if isinstance(stmt, ast.While) else \
                line.strip().split()[0]
            self.edits[stmt.lineno - 1] = [
                f"{self.indent_of(stmt)}{keyword} {ast.unparse(new)}:"]

    def simple(self, stmt: ast.stmt) -> None:
        """A statement of one line: printed again when one of its calls is rewritten."""
        before = ast.dump(stmt)
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.List) and \
                isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in self.fixed:
            stmt = ast.Assign(stmt.targets, ast.Tuple(stmt.value.elts, ast.Load()),
                              lineno=stmt.lineno, end_lineno=stmt.end_lineno)
        self.check_expression(stmt, stmt)
        new = _Calls(self).visit(stmt)
        if ast.dump(new) != before and stmt.lineno == stmt.end_lineno:
            self.edits[stmt.lineno - 1] = [self.indent_of(stmt) + ast.unparse(new)]

    def check_expression(self, node: ast.AST, stmt: ast.stmt) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and \
                    sub.func.id in ("reversed", "next"):
                raise self.refuse(stmt, f"`{ast.unparse(sub)}` where Numba cannot read it")

    def tape_statement(self, stmt: ast.Assign) -> bool:
        """`reader = reversed(tape)` -> `reader = len(tape)`; `x = next(reader)` ->
        `reader -= 1` and `x = tape[reader]` (a tape read last-in first-out, by index)."""
        value = stmt.value
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and len(stmt.targets) == 1 and len(value.args) == 1):
            return False
        arg, indent, i = value.args[0], self.indent_of(stmt), stmt.lineno - 1
        target = ast.unparse(stmt.targets[0])
        if value.func.id == "reversed" and isinstance(arg, ast.Name) and \
                isinstance(stmt.targets[0], ast.Name):
            self.readers[target] = arg.id
            self.edits[i] = [f"{indent}{target} = {self.length(arg.id)}"]
            return True
        if value.func.id == "next" and isinstance(arg, ast.Name) and arg.id in self.readers:
            self.edits[i] = [f"{indent}{arg.id} -= 1",
                             f"{indent}{target} = {self.item(self.readers[arg.id], arg.id)}"]
            return True
        return False

    def length(self, tape: str) -> str:
        """How many items the tape holds (its loop's trips where it is made for them)."""
        return self.counts.get(tape, f"len({tape})")

    def item(self, tape: str, index: str) -> str:
        return f"tape_get({tape}, {index})" if tape in self.counts else f"{tape}[{index}]"

    def for_loop(self, stmt: ast.For) -> None:
        it = stmt.iter
        header = stmt.lineno - 1
        indent = self.indent_of(stmt)
        target = ast.unparse(stmt.target)
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and it.func.id == "reversed"):
            self.check_expression(it, stmt)
            return
        if len(it.args) != 1 or stmt.body[0].lineno == stmt.lineno:
            raise self.refuse(stmt, f"`{ast.unparse(it)}`")
        arg = it.args[0]
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and \
                arg.func.id == "range" and not arg.keywords and 1 <= len(arg.args) <= 2:
            bounds = [ast.unparse(a) for a in arg.args]
            start, stop = (["0"] + bounds)[-2:]
            self.edits[header] = [(f"{indent}for {target} in range({_minus_one(stop)}, "
                                   f"{_minus_one(start)}, -1):")]
            return
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and \
                arg.func.id == "range" and not arg.keywords and _int_literals(arg.args):
            r = range(*_int_literals(arg.args))[::-1]  # (the same values, backwards)
            self.edits[header] = [(f"{indent}for {target} in range({r.start}, {r.stop}, "
                                   f"{r.step}):")]
            return
        if isinstance(arg, ast.Name):
            i = self.fresh(f"{arg.id}_index")
            body_indent = self.indent_of(stmt.body[0])
            self.edits[header] = [
                f"{indent}for {i} in range({self.length(arg.id)} - 1, -1, -1):",
                f"{body_indent}{target} = {self.item(arg.id, i)}"]
            return
        raise self.refuse(stmt, f"`{ast.unparse(it)}`: Numba has no reversed()")


def _blocks(body: list[ast.stmt]):
    """`body` and every block of statements in it."""
    yield body
    for stmt in body:
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from _blocks(inner)


def _made_empty(stmt: ast.stmt) -> str | None:
    """The name `stmt` binds to a new empty list (`tape = []`), else None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.List) and \
            not stmt.value.elts:
        return stmt.targets[0].id
    return None


def _push_of(stmt: ast.Expr) -> str | None:
    """The list `stmt` appends one item to (`tape.append(item)`), else None."""
    call = stmt.value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
            call.func.attr == "append" and isinstance(call.func.value, ast.Name) and \
            len(call.args) == 1 and not call.keywords:
        return call.func.value.id
    return None


def _is_len(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == "len"


def _int_literals(args: list[ast.expr]) -> list[int]:
    """The values of `args` when all are integer literals (`4`, `-1`), else []."""
    try:
        values = [ast.literal_eval(a) for a in args]
    except ValueError:
        return []
    return values if all(type(v) is int for v in values) else []


def _minus_one(text: str) -> str:
    """`text - 1`, folded for an integer literal."""
    try:
        return str(int(text) - 1)
    except ValueError:
        return f"{text} - 1"


class _Calls(ast.NodeTransformer):
    """Calls spelled the way Numba types them: `np.tensordot(a, b, 1)` is `np.dot(a, b)`
    (the same contraction, last axis of a with the first of b, for the 1-D and 2-D
    operands Numba's dot takes), `np.matmul(a, b)` is `a @ b`, a sum with keepdims a
    reduction whose axis is put back, np.max/np.min along an axis of a 2-D array the
    maxima of its rows or columns, np.reshape a reshape of a contiguous array, and the list
    of arrays np.stack joins a tuple."""

    def __init__(self, owner: _Rewriter):
        self.owner = owner

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.MatMult):
            # (Numba's `@` multiplies matrices and vectors only; numba_runtime.matmul is
            # `@` for those and a loop of them over a stack)
            return ast.Call(self.owner.helper("matmul", node), [node.left, node.right], [])
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        fn = ast.unparse(node.func)
        if fn == "np.tensordot" and len(node.args) == 3 and not node.keywords:
            axes = _axes_literal(node.args[2])
            if axes is not None:  # (literal axes: numba_runtime.tensordot's are typed so)
                return ast.Call(self.owner.helper("tensordot", node), node.args[:2] + axes,
                                [])
            return node
        if fn == "np.matmul" and len(node.args) == 2 and not node.keywords:
            # (a matrix's transpose is printed .T already, which Numba multiplies without a
            # copy: passes/hoist.matrix_transposes; np.swapaxes of a stack stays so)
            return ast.Call(self.owner.helper("matmul", node), node.args, [])
        if fn == "np.array" and len(node.args) == 1 and isinstance(node.args[0], ast.List) \
                and _nested_of_values(node.args[0]):
            # (Numba's np.array takes numbers only, not arrays: numba_runtime.nested_array)
            keywords = {k.arg: ast.unparse(k.value) for k in node.keywords}
            if keywords and (set(keywords) != {"dtype"} or
                             keywords["dtype"] not in ("float", "np.float64")):
                return node
            args = [_as_tuples(node.args[0])]
            if keywords:
                args.append(ast.parse("np.float64", mode="eval").body)
            return ast.Call(self.owner.helper("nested_array", node), args, [])
        if fn == "np.sum" and len(node.args) == 1:
            return _keepdims_expanded(node)
        if fn == "np.reshape" and len(node.args) == 2 and not node.keywords:
            # (Numba reshapes a contiguous array only; NumPy copies one that is not)
            contiguous = ast.Call(ast.Attribute(ast.Name("np", ast.Load()),
                                                "ascontiguousarray", ast.Load()),
                                  node.args[:1], [])
            return ast.Call(ast.Attribute(contiguous, "reshape", ast.Load()),
                            node.args[1:], [])
        if fn in ("np.max", "np.min", "np.amax", "np.amin") and len(node.args) == 1:
            return self.reduced_along(node, "max" if "max" in fn else "min")
        if fn in ("np.stack", "np.concatenate", "np.vstack", "np.hstack") and node.args and \
                isinstance(node.args[0], ast.List):
            # (Numba joins a tuple of arrays, not a list)
            node.args[0] = ast.Tuple(node.args[0].elts, ast.Load())
            return node
        if fn == "np.prod" and len(node.args) == 1:
            return self.reduced_along(node, "prod")
        if fn == "np.mean" and len(node.args) == 1:
            return _mean_as_sum(node)
        if fn == "np.add.at" and len(node.args) == 3 and not node.keywords:
            # (Numba has no ufunc.at: the runtime helper, compiled by numba_runtime)
            return ast.Call(ast.Name("index_add_at", ast.Load()), node.args, [])
        return node

    def reduced_along(self, node: ast.Call, what: str) -> ast.expr:
        """`np.max(a, axis=1)` of a 2-D array as the maxima of its rows (`axis=0`: of its
        columns), `keepdims=True` putting the axis back: Numba's np.max takes no axis."""
        keywords = {k.arg: k.value for k in node.keywords}
        keepdims = keywords.pop("keepdims", ast.Constant(False))
        axis = keywords.pop("axis", None)
        if isinstance(axis, ast.Tuple) and len(axis.elts) == 1:
            axis = axis.elts[0]
        if keywords or axis is None or _int_literals([axis]) not in ([0], [1], [-1]) or \
                not (isinstance(keepdims, ast.Constant) and keepdims.value in (True, False)):
            return node
        a = ast.unparse(node.args[0])
        # (`* a[r, 0] ** 0`, a factor 1 for any entry, types as a number for a 2-D array
        # only: for more axes the list holds arrays, which Numba refuses to make an array
        # of, where np.max(a[r, :]) would silently reduce the other axes too)
        if _int_literals([axis]) == [0]:
            j = self.owner.fresh("j")
            text = (f"np.array([np.{what}({a}[:, {j}]) * {a}[0, {j}] ** 0 "
                    f"for {j} in range({a}.shape[1])])")
        else:
            r = self.owner.fresh("r")
            text = (f"np.array([np.{what}({a}[{r}, :]) * {a}[{r}, 0] ** 0 "
                    f"for {r} in range({a}.shape[0])])")
        if keepdims.value:
            text = f"np.expand_dims({text}, {ast.unparse(axis)})"
        return ast.parse(text, mode="eval").body


def _axes_literal(node: ast.expr) -> list[ast.expr] | None:
    """np.tensordot's `axes` written as literals, as numba_runtime.tensordot takes them: an
    int, or the two sides' axes (an int or a tuple of ints each); else None."""
    value = _literal(node)
    if type(value) is int:
        return [ast.Constant(value)]
    if isinstance(value, (tuple, list)) and len(value) == 2:
        sides = []
        for side in value:
            if type(side) is int:
                sides.append(ast.Constant(side))
            elif isinstance(side, (tuple, list)) and all(type(i) is int for i in side):
                sides.append(ast.Tuple([ast.Constant(i) for i in side], ast.Load()))
            else:
                return None
        return sides
    return None


def _literal(node: ast.expr):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _nested_of_values(node: ast.List) -> bool:
    """Is `node` a rectangular nest of lists with a leaf that is not a number literal (an
    array, perhaps)?"""
    def leaves(n):
        if isinstance(n, ast.List):
            return [leaf for e in n.elts for leaf in leaves(e)]
        return [n]
    return bool(node.elts) and any(not isinstance(leaf, ast.Constant) for leaf in leaves(node))


def _as_tuples(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.List):
        return ast.Tuple([_as_tuples(e) for e in node.elts], ast.Load())
    return node


def _mean_as_sum(node: ast.Call) -> ast.expr:
    """`np.mean(x, axis=k)` (keepdims or not) of a named array as its sum along k over
    `x.shape[k]`: Numba's np.mean takes no axis."""
    keywords = {k.arg: k.value for k in node.keywords}
    axis = keywords.get("axis")
    if isinstance(axis, ast.Tuple) and len(axis.elts) == 1:
        axis = axis.elts[0]
    keepdims = keywords.get("keepdims", ast.Constant(False))
    if axis is None or not isinstance(node.args[0], ast.Name) or \
            not set(keywords) <= {"axis", "keepdims"} or not _int_literals([axis]) or \
            not (isinstance(keepdims, ast.Constant) and keepdims.value in (True, False)):
        return node
    total = ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "sum", ast.Load()), node.args,
                     [ast.keyword("axis", axis)] +
                     ([ast.keyword("keepdims", keepdims)] if keepdims.value else []))
    count = ast.Subscript(ast.Attribute(node.args[0], "shape", ast.Load()), axis, ast.Load())
    return ast.BinOp(_keepdims_expanded(total), ast.Div(), count)


def _keepdims_expanded(node: ast.Call) -> ast.expr:
    """`np.sum(x, axis=k, keepdims=True)` as `np.expand_dims(np.sum(x, axis=k), k)`: Numba
    reduces along one axis but has no keepdims."""
    keywords = {k.arg: k.value for k in node.keywords}
    if set(keywords) != {"axis", "keepdims"} or not (
            isinstance(keywords["keepdims"], ast.Constant) and keywords["keepdims"].value is True):
        return node
    axis = keywords["axis"]
    if isinstance(axis, ast.Tuple) and len(axis.elts) == 1:
        axis = axis.elts[0]
    if not _int_literals([axis]):
        return node
    reduced = ast.Call(node.func, node.args, [ast.keyword("axis", axis)])
    return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "expand_dims", ast.Load()),
                    [reduced, axis], [])
