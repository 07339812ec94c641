"""Source retrieval: a function object -> its gast FunctionDef, file, line offset, scope.

Name resolution later looks names up in the scope (globals, closure cells,
builtins) so that a primitive is found by the object it names.
"""

from __future__ import annotations

import ast
import builtins
import copy
import dataclasses
import inspect
import linecache
import textwrap
import types
from dataclasses import dataclass

import gast

from s2sad.errors import Loc, SourceUnavailableError, UnsupportedSyntaxError
from s2sad.frontend.to_gast import to_gast
from s2sad.ir.per_function import FunctionKeyed


@dataclass
class ParsedFunction:
    func: object
    node: gast.FunctionDef
    filename: str
    first_line: int  # absolute line number of the node's line 1
    col_shift: int  # columns removed by dedent
    lines: list  # the raw source lines (absolute numbering from first_line)
    globals: dict
    closure: dict  # name -> cell: read when looked up, so a rebound closure value is seen
    bound_self: object = None  # a bound method's object (its first parameter), else None
    is_method: bool = False
    # the node's line numbers less this are its lines' (1 for the node's line 1): the line
    # before `first_line` for a node of the module's syntax tree (numbered as its file)
    line_shift: int = 0

    def loc(self, node) -> Loc:
        lineno = getattr(node, "lineno", 1 + self.line_shift) - self.line_shift
        col = getattr(node, "col_offset", 0) + self.col_shift
        idx = lineno - 1
        text = self.lines[idx] if 0 <= idx < len(self.lines) else ""
        return Loc(self.filename, self.first_line + lineno - 1, col, text)

    def lookup(self, name: str):
        """Resolve a free name: closure cell, then global, then builtin. Raises KeyError."""
        if name in self.closure:
            try:
                return self.closure[name].cell_contents
            except ValueError:
                raise KeyError(name) from None
        if name in self.globals:
            return self.globals[name]
        b = self.globals.get("__builtins__", builtins)
        if isinstance(b, dict):
            if name in b:
                return b[name]
        elif hasattr(b, name):
            return getattr(b, name)
        raise KeyError(name)


_CACHE = FunctionKeyed()  # func -> (code, ParsedFunction); goes with the function


def _describe(func) -> str:
    return getattr(func, "__qualname__", None) or repr(func)


def parse_function(func) -> ParsedFunction:
    """Parse `func`'s source. Raises SourceUnavailableError when it cannot be had."""
    key = func
    try:
        cached = _CACHE.get(key)
    except TypeError:
        cached = None
    if cached is not None and cached[0] == getattr(func, "__code__", None):
        return cached[1]
    parsed = _parse(func)
    try:
        _CACHE[key] = (getattr(func, "__code__", None), parsed)
    except TypeError:
        pass
    return parsed


def _parse(func) -> ParsedFunction:
    name = _describe(func)
    if isinstance(func, types.MethodType):
        inner = func.__func__
        if not isinstance(inner, types.FunctionType) or inner.__code__.co_argcount == 0:
            raise SourceUnavailableError(
                f"{name} is a bound method of a callable s2sad cannot read",
                loc=_code_loc(inner),
                hint="differentiate a plain function; pass the object's data as arguments")
        parsed = parse_function(inner)
        # the object is a constant of the derivative: `self.k` is read while compiling
        # and guarded like a global (frontend/guards.py)
        return dataclasses.replace(parsed, func=func, bound_self=func.__self__,
                                   is_method=True)
    if not isinstance(func, types.FunctionType):
        raise SourceUnavailableError(
            f"cannot differentiate {name!s}: it is not a Python function "
            f"(a {type(func).__name__})",
            hint="s2sad reads a function's source; pass a function defined with `def`, or "
                 "register a rule for this callable with s2sad.defjvp/defvjp")
    code = func.__code__
    if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        raise UnsupportedSyntaxError(
            f"{name} is an asynchronous function",
            loc=_code_loc(func), hint="differentiate a plain function that returns a value")
    if func.__name__ == "<lambda>":
        return _parse_lambda(func, name)
    try:
        lines, first_line, tree_node, matched = _source_lines(func)
    except (OSError, TypeError) as e:
        raise SourceUnavailableError(
            f"cannot read the source of {name}: {e}", loc=_code_loc(func),
            hint="define the function in a .py file (functions made by exec or typed "
                 "at the interactive prompt have no retrievable source)") from None
    filename = inspect.getsourcefile(func) or code.co_filename
    if not (tree_node is not None and (
            matched or _definition_matches(tree_node, code, filename))) and \
            not _matches_code(func, code.co_filename):
        if _pseudo_file(code.co_filename):
            raise _other_text(name, code.co_filename, func)
        raise SourceUnavailableError(
            f"the source of {name} in {filename} no longer matches the code that runs: the "
            "file was edited after the module was imported", loc=_code_loc(func),
            hint="reload the module (importlib.reload, or restart the interpreter) so that "
                 "the function and its source agree, then differentiate it again")
    closure = dict(zip(code.co_freevars, func.__closure__ or ()))
    stripped = [ln.rstrip("\n") for ln in lines]
    if tree_node is not None:
        # the definition as the module's syntax tree holds it (the file parsed once): its
        # positions are the file's, its strings as written
        return ParsedFunction(func, to_gast(tree_node), filename, first_line, 0,
                              stripped, func.__globals__, closure, line_shift=first_line - 1)
    raw = "".join(lines)
    dedented = textwrap.dedent(raw)
    shift = _indent_of(lines[0]) if lines else 0
    try:
        module = to_gast(ast.parse(dedented))
    except SyntaxError as e:
        raise SourceUnavailableError(f"cannot parse the source of {name}: {e.msg}") from None
    node = None
    for stmt in module.body:
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef)):
            node = stmt
            break
    if node is None:
        raise SourceUnavailableError(f"the source of {name} is not a function definition")
    if first_line == 0:
        first_line = 1
    return ParsedFunction(func, node, filename, first_line, shift, stripped, func.__globals__,
                          closure)


def _parse_lambda(func, name: str) -> ParsedFunction:
    """A lambda's source: the `lambda` expression of its file that compiled to its code,
    as the FunctionDef `def <name>(<args>): return <body>`. The name is the one the lambda
    is assigned to (`sq = lambda x: ...`), else `lambda_<line>`."""
    code = func.__code__
    filename = inspect.getsourcefile(func) or code.co_filename
    if filename:
        linecache.checkcache(filename)
    lines = linecache.getlines(filename, func.__globals__) if filename else []
    if not lines:
        raise SourceUnavailableError(
            f"cannot read the source of the lambda {name}", loc=_code_loc(func),
            hint="define the lambda in a .py file, or use `def` (lambdas typed at the "
                 "interactive prompt or made by exec have no retrievable source)")
    if not _matches_code(func, code.co_filename):
        if _pseudo_file(code.co_filename):
            raise _other_text(f"the lambda {name}", code.co_filename, func)
        raise SourceUnavailableError(
            f"the source of a lambda in {filename} no longer matches the code that runs: the "
            "file was edited after the module was imported", loc=_code_loc(func),
            hint="reload the module (importlib.reload, or restart the interpreter)")
    lam, assigned = _find_lambda(func, lines)
    first, last = lam.lineno, lam.end_lineno or lam.lineno
    for node in gast.walk(lam):  # line numbers relative to the lambda's first line
        if getattr(node, "lineno", None) is not None:
            node.lineno -= first - 1
            if getattr(node, "end_lineno", None) is not None:
                node.end_lineno -= first - 1
    fields = {"name": assigned or f"lambda_{first}", "args": lam.args,
              "body": [gast.Return(value=lam.body)], "decorator_list": [], "returns": None,
              "type_comment": None}
    if "type_params" in gast.FunctionDef._fields:
        fields["type_params"] = []
    node = gast.FunctionDef(**fields)
    node.lineno, node.col_offset = lam.lineno, lam.col_offset
    node.end_lineno, node.end_col_offset = lam.end_lineno, lam.end_col_offset
    node.body[0].lineno, node.body[0].col_offset = lam.body.lineno, lam.body.col_offset
    closure = dict(zip(code.co_freevars, func.__closure__ or ()))
    return ParsedFunction(func, node, filename, first, 0,
                          [ln.rstrip("\n") for ln in lines[first - 1:last]],
                          func.__globals__, closure)


_LAMBDAS: dict = {}  # filename -> (its lines, {line: [(Lambda node, assigned name)]})


def _find_lambda(func, lines):
    """The gast Lambda node (a fresh copy) that `func`'s code was compiled from, and the
    name it is assigned to, if any."""
    code = func.__code__
    cached = _LAMBDAS.get(code.co_filename)
    if cached is None or cached[0] is not lines:
        by_line: dict = {}
        try:
            tree = ast.parse("".join(lines))
        except (SyntaxError, ValueError):
            tree = ast.Module(body=[], type_ignores=[])
        assigned = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda) and \
                    len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigned[id(node.value)] = node.targets[0].id
        for node in ast.walk(tree):
            if isinstance(node, ast.Lambda):
                by_line.setdefault(node.lineno, []).append((node, assigned.get(id(node))))
        cached = _LAMBDAS[code.co_filename] = (lines, by_line)
    candidates = cached[1].get(code.co_firstlineno, [])
    if len(candidates) > 1:
        candidates = _by_position(code, candidates)
    if len(candidates) > 1:
        candidates = _by_order(func, lines, candidates)
    if len(candidates) != 1:
        what = "several lambdas share" if candidates else "no lambda was found on"
        raise SourceUnavailableError(
            f"cannot tell which lambda to differentiate: {what} line "
            f"{code.co_firstlineno} of {code.co_filename}", loc=_code_loc(func),
            hint="put the lambda on a line of its own, or define it with `def`")
    lam, assigned = candidates[0]
    return to_gast(copy.deepcopy(lam)), assigned


def _by_position(code, candidates) -> list:
    """The innermost candidate whose span holds every source position of `code`'s
    instructions (Python 3.11+; on older Pythons the candidates stay ambiguous)."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return candidates
    spots = [(ln, col, end_ln, end_col) for ln, end_ln, col, end_col in positions()
             if ln is not None and col is not None and (col, end_col) != (0, 0)]
    # (RESUME and other bookkeeping instructions carry an empty span at column 0)

    def holds(lam):
        start, end = (lam.lineno, lam.col_offset), (lam.end_lineno, lam.end_col_offset)
        return all(start <= (ln, col) and (end_ln, end_col) <= end
                   for ln, col, end_ln, end_col in spots)

    inside = [c for c in candidates if holds(c[0])]
    if len(inside) > 1:  # nested lambdas: the innermost one holds exactly its own code
        inside = [min(inside, key=lambda c: (c[0].end_lineno - c[0].lineno,
                                             c[0].end_col_offset - c[0].col_offset))]
    return inside


def _by_order(func, lines, candidates) -> list:
    """Without source positions in the code (Python 3.10): the lambdas of one line, in
    source order, match the line's lambda code objects in the order the compiler made
    them; the one whose code is `func`'s is the answer."""
    code = func.__code__
    found = []
    for module in _compiled_forms("".join(lines), code.co_filename, func.__globals__)[:1]:
        stack = [module]
        while stack:  # pre-order, constants in order: source order
            c = stack.pop()
            if c.co_name == "<lambda>" and c.co_firstlineno == code.co_firstlineno:
                found.append(c)
            stack.extend(reversed([k for k in c.co_consts if isinstance(k, types.CodeType)]))
    ordered = sorted(candidates, key=lambda c: (c[0].lineno, c[0].col_offset))
    if len(found) != len(ordered):
        return candidates
    matches = [lam for lam, c in zip(ordered, found) if _same_code(c, code)]
    return matches[:1] or candidates  # (lambdas of the same code have one derivative)


def _pseudo_file(filename: str) -> bool:
    """A name like `<string>`, not a file: the text linecache holds under it can be another
    exec's (Python 3.13 keeps the text of `python -c` there, as pytest-xdist's workers run)."""
    return filename.startswith("<") and filename.endswith(">")


def _other_text(what: str, filename: str, func) -> SourceUnavailableError:
    return SourceUnavailableError(
        f"cannot read the source of {what}: the text held for {filename} is other code "
        "than the code that runs", loc=_code_loc(func),
        hint="define the function in a .py file (functions made by exec or typed at the "
             "interactive prompt have no retrievable source)")


def _matches_code(func, filename: str) -> bool:
    """Is the text that linecache holds for `filename` the text `func` was compiled from?

    The file is compiled again (once per version of its text) and must hold a function
    of the same name, first line, instructions, names and constants.
    """
    code = func.__code__
    lines = linecache.getlines(filename, func.__globals__)
    if not lines:
        return False
    cached = _COMPILED.get(filename)
    if cached is None or cached[0] is not lines:
        index: dict = {}
        for module in _compiled_forms("".join(lines), filename, func.__globals__):
            for c in _code_objects(module):
                index.setdefault((c.co_name, c.co_firstlineno), []).append(c)
        cached = _COMPILED[filename] = (lines, index)
    candidates = cached[1].get((code.co_name, code.co_firstlineno), ())
    return any(_same_code(c, code) for c in candidates)


_COMPILED: dict = {}  # filename -> (its lines, {(name, first line): [code objects]})


def _definition_matches(node, code, filename: str) -> bool:
    """Does the definition `node` of `filename`'s syntax tree, compiled alone (after the
    module's imports, which change how a function reads an imported module's attributes),
    give `code`? As telling as compiling the whole file (`_matches_code`) and a fraction of
    its cost (a rule module's hundreds of lines, for the one rule used); a function whose
    code depends on more of what surrounds it (a closure's cells, a method's private names,
    pytest's rewritten asserts) does not match alone and is checked against its file."""
    cached = _MODULES.get(filename) or _IMPORTS.get(filename)
    imports = cached[-1] if cached is not None else []
    try:
        module = compile(ast.Module(body=[*imports, node], type_ignores=[]), code.co_filename,
                         "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError):
        return False
    return any(isinstance(c, types.CodeType) and c.co_name == code.co_name and
               c.co_firstlineno == code.co_firstlineno and _same_code(c, code)
               for c in module.co_consts)


def _compiled_forms(text: str, filename: str, scope: dict) -> list:
    """The module code `text` compiles to, as Python compiles it and, for a module that
    pytest imported, as pytest does (it rewrites `assert` statements)."""
    forms = []
    try:
        forms.append(compile(text, filename, "exec", dont_inherit=True))
    except (SyntaxError, ValueError):
        return forms
    loader = scope.get("__loader__")
    if type(loader).__name__ == "AssertionRewritingHook":
        try:
            from _pytest.assertion.rewrite import rewrite_asserts

            tree = ast.parse(text, filename)
            rewrite_asserts(tree, text.encode(), filename, getattr(loader, "config", None))
            forms.append(compile(tree, filename, "exec", dont_inherit=True))
        except Exception:  # another pytest: the plain form is all there is to compare
            pass
    return forms


def _code_objects(code):
    stack = [code]
    while stack:
        c = stack.pop()
        yield c
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


def _same_code(a, b) -> bool:
    if (a.co_code, a.co_names, a.co_varnames, a.co_freevars, a.co_argcount,
            a.co_kwonlyargcount) != (b.co_code, b.co_names, b.co_varnames, b.co_freevars,
                                     b.co_argcount, b.co_kwonlyargcount):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType):
            if not (isinstance(y, types.CodeType) and _same_code(x, y)):
                return False
        elif type(x) is not type(y) or (x != y and x == x):
            return False
    return True


_MODULES: dict = {}  # filename -> (its lines as linecache holds them, {(name, line): node},
#                     its top-level imports)


def _source_lines(func) -> tuple:
    """(lines, first line, FunctionDef, matched) as `inspect.getsourcelines(func)` finds
    the lines, found through the module's syntax tree instead (parsed once per file, in C,
    and its definitions found by a walk over statements only); the FunctionDef is the
    tree's (None where the lines come from inspect). A definition at the module's top
    level is parsed on its own first (see _top_level_definition), and then `matched`: it
    compiles to the function's code already (_definition_matches)."""
    code = func.__code__
    try:
        filename = inspect.getsourcefile(func)
        if filename:
            linecache.checkcache(filename)
            lines = linecache.getlines(filename, func.__globals__)
            cached = _MODULES.get(filename)
            if cached is None or cached[0] is not lines:
                _MODULES.pop(filename, None)  # (an older text's: its imports are not these)
                node = _top_level_definition(filename, lines, code)
                if node is not None:
                    start = _start_line(node)
                    return lines[start - 1:node.end_lineno], start, node, True
                tree = ast.parse("".join(lines))
                imports = [st for st in tree.body if isinstance(st, (ast.Import, ast.ImportFrom))]
                cached = _MODULES[filename] = (lines, _definitions(tree), imports)
            node = cached[1].get((code.co_name, code.co_firstlineno))
            if node is not None:
                start = _start_line(node)
                return lines[start - 1:node.end_lineno], start, node, False
    except (SyntaxError, ValueError, OSError, TypeError):
        pass
    lines, first_line = inspect.getsourcelines(func)
    return lines, first_line, None, False


_IMPORTS: dict = {}  # filename -> (its lines as linecache holds them, its top-level imports)


def _top_level_definition(filename: str, lines: list, code):
    """The FunctionDef of `code` when it is a definition at the top level of the module
    whose `lines` these are, parsed alone (with its own line numbers, as in the module's
    tree), and the module's imports found (_top_level_imports): a rule module's hundred
    definitions are not all parsed for the few a compile uses. None where the text at
    `code`'s first line does not parse alone as that definition (an indented one, a
    method, a closure; or one the scan below misreads), or where it does not compile to
    `code` with these imports (_definition_matches: a definition read short, or edited
    since): the module is parsed whole, and its own definition checked."""
    start = code.co_firstlineno
    if not 0 < start <= len(lines) or lines[start - 1][:1] not in ("@", "d", "a"):
        return None
    end = start
    while end < len(lines) and not lines[end - 1].startswith(("def ", "async def ")):
        end += 1  # (past the decorators, to the `def` line)
    # the definition runs to the next line written at the first column (a comment or a
    # blank line excepted); a string or bracket that does not close before it fails below
    while end < len(lines):
        line = lines[end]
        if line[:1] not in (" ", "\t", "\n", "\r", "#", "") and line.strip():
            break
        end += 1
    try:
        tree = ast.parse("\n" * (start - 1) + "".join(lines[start - 1:end]))
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1:
        return None
    node = tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
            node.name != code.co_name or _start_line(node) != start:
        return None
    cached = _IMPORTS.get(filename)
    if cached is None or cached[0] is not lines:
        _IMPORTS[filename] = (lines, _top_level_imports(lines))
    return node if _definition_matches(node, code, filename) else None


def _top_level_imports(lines: list) -> list:
    """The import statements written at the first column of a module's `lines` (its
    top-level imports, as its syntax tree holds them), each parsed on its own; a line of
    prose that starts as one (`from which...` in a docstring) does not parse and is left
    out. (An import read wrongly so only makes the check of a definition against its code
    fail, which then compiles the whole file: _matches_code.)"""
    imports = []
    k = 0
    while k < len(lines):
        line = lines[k]
        k += 1
        if not line.startswith(("import ", "from ")):
            continue
        statement = [line]
        depth = line.count("(") - line.count(")")
        while (depth > 0 or statement[-1].rstrip().endswith("\\")) and k < len(lines):
            statement.append(lines[k])
            depth += lines[k].count("(") - lines[k].count(")")
            k += 1
        try:
            tree = ast.parse("".join(statement))
        except (SyntaxError, ValueError):
            continue
        if len(tree.body) == 1 and isinstance(tree.body[0], (ast.Import, ast.ImportFrom)):
            imports.append(tree.body[0])
    return imports


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")  # the fields holding statements


def _definitions(tree) -> dict:
    """{(name, first line, decorators included): node} of the function definitions of a
    module's syntax tree, at any depth (a definition is a statement: expressions are not
    visited)."""
    out: dict = {}
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[(node.name, _start_line(node))] = node
        for field in _BODIES:
            children = getattr(node, field, None)
            if type(children) is list:
                stack.extend(children)
    return out


def _start_line(node) -> int:
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def _code_loc(func) -> Loc | None:
    code = getattr(func, "__code__", None)
    if code is None:
        return None
    text = ""
    try:
        import linecache

        text = linecache.getline(code.co_filename, code.co_firstlineno).rstrip("\n")
    except Exception:
        pass
    return Loc(code.co_filename, code.co_firstlineno, _indent_of(text), text)
