"""Lowering statements: assignments (to names, tuples and array items), expression
statements, returns, and the checks that keep writes into arrays safe.
"""

from __future__ import annotations

import ast
import importlib
import operator
import textwrap
import types

import gast
import numpy as np

from s2sad.errors import (
    NameResolutionError,
    NonDifferentiableError,
    S2SADError,
    UnsupportedSyntaxError,
)
from s2sad.frontend.aliasing import output_argument
from s2sad.frontend.lower_calls import in_library
from s2sad.frontend.normalize import assigned_names, contains
from s2sad.frontend.source import parse_function
from s2sad.frontend.values import (
    BINOPS,
    Abort,
    ObjectRecord,
    Poisoned,
    Static,
    StaticDict,
    StaticSeq,
    Undefined,
    contains_item,
    holds,
    is_add_at,
    loads,
)
from s2sad.ir import prims
from s2sad.ir.nodes import Call, Const, If, Var

OP_SYMBOLS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**",
              gast.MatMult: "@", gast.FloorDiv: "//", gast.Mod: "%"}


class StatementLowering:
    """Methods of `Lowerer` (s2sad.frontend.lower): statements."""

    def lower_stmts(self, stmts, in_loop):
        """Lower statements; returns the returned value if the list ends in `return`.

        Inside a loop body, returns the marker "continue"/"break" when the list ends in one.
        """
        for k, s in enumerate(stmts):
            n_errors = len(self.errors)
            self.stmt_stack.append((stmts, k, in_loop))
            self.stmt_scopes.append(self.scope)
            try:
                out = self.lower_stmt(s, in_loop)
            except Abort:
                if not self.errors:  # (an abort no error explains: never lowered on silently)
                    self.error(UnsupportedSyntaxError, "this statement could not be lowered",
                               s, "differentiate a function that computes it from its "
                                  "arguments with NumPy")
                self.poison(s)
                continue
            finally:
                self.stmt_stack.pop()
                self.stmt_scopes.pop()
            if len(self.errors) > n_errors:
                self.poison(s)
            if out is not None:
                return out
        return None

    def read_later(self, name, scope=None) -> bool:
        """Might `name` be read after the statement being lowered (text order, and the next
        iterations of enclosing loops)? With `scope` (this function or one that called it):
        `name` of that function, read by its own statements or by functions defined in it
        (an inlined function's statements read its own names)."""
        for (stmts, k, loop), where in zip(self.stmt_stack, self.stmt_scopes):
            if scope is not None and not _within(where, scope):
                continue
            if any(loads(st, name) for st in stmts[k + 1:]):
                return True
            if loop:
                # earlier statements of a loop body run again after this one, unless they
                # assign the name before reading it
                for st in stmts[:k + 1]:
                    if name in assigned_names([st]) and not loads(st, name):
                        break
                    if loads(st, name) and st is not stmts[k]:
                        return True
        return False

    def poison(self, s):
        """After an error in `s`, names it assigns are unknown but reported no further."""
        for name in assigned_names([s]):
            self.scope.env[name] = Poisoned(name)

    def lower_stmt(self, s, in_loop):
        match s:
            case gast.Assign(targets=targets, value=value):
                n_before = len(self.stmts)
                v = self.expr(value)
                # only a value computed by this very expression may take the target's name
                self.renamable = v if len(self.stmts) > n_before else None
                for t in targets:  # `a = b = v`: b is bound to what a is (renamed)
                    self.assign(t, v)
                    if isinstance(t, gast.Name) and self.renamable is None:
                        v = self.scope.env[t.id]
                self.renamable = None
            case gast.AnnAssign(target=target, value=value) if value is not None:
                self.assign(target, self.expr(value))
            case gast.AnnAssign(value=None):
                pass  # (`n: int`, a declaration: nothing runs)
            case gast.AugAssign(target=gast.Subscript(value=base, slice=index) as target,
                                op=op, value=value):
                # `a[i] += v` reads then writes (NumPy's buffered semantics, not np.add.at)
                old = self.expr(target)
                new = self.call_value(BINOPS.get(type(op)), [old, self.expr(value)], [], s)
                self.store_subscript(base, index, new, target)
            case gast.AugAssign(target=gast.Attribute(value=base, attr=attr) as target, op=op,
                                value=value):
                # `self.nfev += 1` on an object the function was given: run as written
                old = self.expr(target)
                new = self.call_value(BINOPS.get(type(op)), [old, self.expr(value)], [], s)
                self.store_attribute(base, attr, new, target)
            case gast.AugAssign(target=target, op=op, value=value):
                if not isinstance(target, gast.Name):
                    self.error(UnsupportedSyntaxError,
                               "augmented assignment to an attribute is not supported", target,
                               "return the new value instead of storing it on an object")
                    return None
                left = self.name_load(target.id, target)
                if isinstance(op, gast.Add) and self.is_built_list(left):
                    self.lower_extend(target.id, value, s, in_loop)  # in place: appends
                    return None
                other = self.shared(target.id, left)
                rebinds = self.inplace_rebinds(target.id, left) if other is not None else []
                if rebinds is not None:
                    other = None  # (NumPy's array updated in place: its names rebound)
                if other is not None:
                    # NumPy updates an array in place: refused once kinds say it is one
                    self.inplace_updates.append((left, self.loc(s), target.id, other,
                                                 OP_SYMBOLS.get(type(op), "<op>")))
                right = self.expr(value)
                fn = BINOPS.get(type(op))
                result = self.call_value(fn, [left, right], [], s, target.id)
                if isinstance(left, Var) and isinstance(result, Var):
                    # an array updated in place keeps its shape and dtype: checked once kinds
                    # are known (aliasing.py)
                    self.aug_assignments.append((left, result, self.loc(s), target.id,
                                                 OP_SYMBOLS.get(type(op), "<op>")))
                self.assign(target, result)
                for scope, name in rebinds or ():
                    scope.env[name] = result
            case gast.Expr():
                self.lower_expression_statement(s, in_loop)
            case gast.Assert(test=test, msg=msg):
                cond = self.materialize(self.expr(test))
                parts = [] if msg is None else [self.materialize(self.expr(msg))]
                self.emit(prims.check_assertion, [cond] + parts, hint="_assert", node=s)
            case gast.Import() | gast.ImportFrom():
                self.lower_import(s)
            case gast.Pass():
                return None
            case gast.Delete(targets=targets):
                for target in targets:
                    self.lower_delete(target, s)
            case gast.Return(value=value):
                if in_loop:
                    self.error(UnsupportedSyntaxError, "`return` inside a loop is not supported",
                               s, "store the value in a variable, `break`, and return after "
                                  "the loop")
                    # (not lowered on as a `break`: the loop was not lowered for one, which
                    # reported a second problem the user did not write)
                    raise Abort
                if value is None:
                    self.error(UnsupportedSyntaxError, "`return` without a value", s,
                               "return the value to differentiate")
                    return Const(None)
                try:
                    return self.expr(value)  # (a dict: kept while compiling, as written)
                except Abort:
                    return Const(None)  # already reported; the path still returns
            case gast.Try():
                if id(self.scope.parsed) in self.tried_scopes:
                    return self.lower_try(s, in_loop)
                self.lower_verbatim(s, "`try`")
            case gast.Raise(exc=exc):
                self.lower_raise(exc, s)
                return "raise"
            case gast.With(items=items, body=body):
                return self.lower_with(items, body, s, in_loop)
            case gast.Continue():
                if not in_loop:
                    return None
                return "continue"
            case gast.Break():
                if not in_loop:
                    return None
                return "break"
            case gast.If():
                return self.lower_if(s, in_loop)
            case gast.For():
                self.lower_for(s)
            case gast.While():
                self.lower_while(s)
            case gast.FunctionDef():
                self.define_local(s)
            case _:
                self.unsupported_stmt(s)
        return None

    def _mutation_hint(self):
        return ("build a new array instead (np.concatenate, np.where, np.stack), "
                "assignment into arrays is not supported yet")

    def lower_expression_statement(self, s, in_loop):
        """A call made for its effect: np.add.at, print, ys.append; anything else has none."""
        match s:
            case gast.Expr(value=gast.Call(func=func, args=[gast.Name() as base, index, value],
                                           keywords=[])) \
                    if self.peek_static(func) is not None and \
                    is_add_at(self.peek_static(func).obj):
                # np.add.at(a, idx, v): accumulate at repeated indices, into a new version of a
                cur = self.name_load(base.id, base)
                rebinds = self.check_writable(base.id, cur, base)
                new = self.emit(prims.index_add, [cur, self.materialize(self.expr(index)),
                                                  self.materialize(self.expr(value))],
                                hint=base.id, node=s)
                self.written(base.id, new, rebinds)
            case gast.Expr(value=gast.Call(func=func) as call) \
                    if self.peek_static(func) is not None and \
                    self.peek_static(func).obj is print:
                self.lower_print(call)
            case gast.Expr(value=gast.Call(func=func) as call) \
                    if self.peek_static(func) is not None and \
                    self.peek_static(func).obj is np.random.seed:
                self.call_value(np.random.seed, *self.call_args(call), call)
            case gast.Expr(value=gast.Call(func=gast.Attribute(value=gast.Name(id=name),
                                                               attr="append"),
                                           args=[item], keywords=[]) as call):
                self.lower_append(name, item, call, in_loop)
            case gast.Expr(value=value):
                if isinstance(value, gast.Constant):
                    return None
                if isinstance(value, gast.Call):  # (plot(ax, y), warnings.warn(...), a.fill(0))
                    self.lower_effect_call(value, s)
                    return None
                self.error(UnsupportedSyntaxError, "an expression statement has no effect in "
                           "differentiated code", s,
                           "assign the value to a name, or remove the statement "
                           "(print() and assert are kept; other side effects are not "
                           "supported)")

    def lower_effect_call(self, call, s):
        """A call made for its effect, its result unused: a write into an array the function
        created by a function known to write into its argument (np.fill_diagonal(m, v),
        a.fill(v), np.copyto(a, b), `out=a`) is a new version of the array; any other call
        runs as written on the primal values, where the function's call runs it (a plot, a
        log line, a counter, a warning). An opaque callee is taken not to write into its
        arguments (as JAX takes its callbacks); a helper whose source writes into one is
        refused where a derivative would need it."""
        written = self.written_argument(call)
        if written is not None:
            self.lower_written_copy(call, written, s)
            return
        n_stmts = len(self.stmts)
        value = self.expr(call)
        if len(self.stmts) > n_stmts and isinstance(value, Var):
            last = self.stmts[-1]
            if isinstance(last, If) and last.outputs == (value,) and last.orelse.stmts:
                # a library function with a `try`, inlined or called as it is (see
                # CallLowering.inline_with_tries): the call as it is
                last, value = last.orelse.stmts[-1], last.orelse.results[0]
            if isinstance(last, Call) and last.target is value and \
                    isinstance(last.fn, prims.Opaque):
                atoms = list(last.args) + [a for _, a in last.kwargs]
                if self.writes_its_arguments(last.fn.func):
                    last.fn.writes = True
                    last.fn.errors.insert(0, NonDifferentiableError(
                        f"`{last.fn.__name__}` writes into an array it is given, and a "
                        "derivative reaches it", self.loc(s), "write the new values into a "
                        "copy in the function, or return them from the helper"))
                elif any(isinstance(a, Var) and self.may_be(a) & self.allocated
                         for a in atoms):
                    # an array the function allocated, given to a call whose result is not
                    # used (`loss_out=`): the call may fill it
                    last.fn.writes = True
                    last.fn.errors.insert(0, NonDifferentiableError(
                        f"`{last.fn.__name__}` is given an array the function allocated and "
                        "its result is not used: it may write into it, and a derivative "
                        "reaches the call", self.loc(s), "compute the values with NumPy "
                        "in the function, or register a rule for the call"))
                else:
                    last.fn.effect_only = True

    def effect_value(self, node):
        """The value of `node` lowered for an effect (an exception raised, a context
        entered): a call of what the compiler cannot read runs as written on the primal
        values (its result carries no derivative on)."""
        n_stmts = len(self.stmts)
        value = self.materialize(self.expr(node))
        if len(self.stmts) > n_stmts and isinstance(value, Var):
            last = self.stmts[-1]
            if last.target is value and isinstance(last.fn, prims.Opaque):
                last.fn.effect_only = True
        return value

    def lower_raise(self, exc, s):
        """`raise E(...)`: raised where the code runs, as written. Lowering goes on as if
        the branch that raises ended there (see ControlFlowLowering.lower_if)."""
        args = [] if exc is None else [self.effect_value(exc)]
        self.emit(prims.Opaque(prims.raise_exception, [], effect_only=True), args,
                  hint="_raise", node=s)

    def lower_with(self, items, body, s, in_loop):
        """`with cm: ...` (np.errstate(...), a timer, a lock): the context is entered and
        left around the body's primal statements, as written; the reverse sweep of a
        gradient runs after it is left."""
        managers = []
        for item in items:
            cm = self.context_manager(item.context_expr)
            entered = self.emit(prims.Opaque(prims.ContextCall(False), [], effect_only=True),
                                [cm], hint="_entered", node=s)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, entered)
            managers.append(cm)
        out = self.lower_stmts(body, in_loop)
        for cm in reversed(managers):
            self.emit(prims.Opaque(prims.ContextCall(True), [], effect_only=True), [cm],
                      hint="_left", node=s)
        return out

    def context_manager(self, node):
        """The context manager of a `with`: an object of a class made there
        (`warnings.catch_warnings()`, a timer) is made where the code runs, as its
        `__enter__` and `__exit__` are called, not kept as a record while compiling."""
        if isinstance(node, gast.Call):
            callee = self.peek_static(node.func)
            if callee is not None and isinstance(callee.obj, type) and \
                    not self.table.is_primitive(callee.obj):
                n_stmts = len(self.stmts)
                args, kwargs = self.call_args(node)
                made = self.opaque_call(callee.obj, args, kwargs, node, [], n_stmts,
                                        callee.name)
                if made is not None:
                    self.stmts[-1].fn.effect_only = True
                    return made
        return self.effect_value(node)

    def lower_try(self, s, in_loop):
        """A library's `try` in a function that is differentiated (SciPy's trapezoid, the
        Cholesky factorisation of scikit-learn's GP likelihood): the path that runs when
        nothing raises, lowered (its body, `else:` and `finally:` blocks). The handlers are
        not lowered: where one would run, the exception it handles is raised from the
        derivative, never a derivative of the other path. A call made only to see whether
        it raises (`try: cholesky(K)`) is refused: its result unused, it would be dropped."""
        probe = next((st for st in s.body if isinstance(st, gast.Expr) and
                      isinstance(st.value, gast.Call)), None)
        if probe is not None:
            self.error(UnsupportedSyntaxError, "a call in a `try` whose result is not used "
                       "(it would be run only to see whether it raises)", probe,
                       "test the condition without exceptions, e.g. with np.linalg.eigvalsh")
            raise Abort
        if s.finalbody and contains(s.body + s.orelse, (gast.Return,)) is not None:
            self.error(UnsupportedSyntaxError, "`return` inside a `try` with a `finally:` "
                       "block", s, "assign the value in the `try` and return it after")
            raise Abort
        out = self.lower_stmts(s.body + s.orelse, in_loop)
        if out is None and s.finalbody:
            out = self.lower_stmts(s.finalbody, in_loop)
        return out

    def lower_verbatim(self, s, what):
        """A statement the compiler does not lower (`try`), run as written: made a function
        of the local names it reads, returning the names it binds that are read later, and
        called where the statement stands. Where a differentiated value reaches it, refused
        (its effect on the derivative cannot be read)."""
        parsed = self.scope.parsed
        if in_library(parsed.filename):  # (a library function: called as it is, or refused
            self.unsupported_stmt(s)      # at the user's call naming it: see inline_call)
            if isinstance(s, gast.Try) and self.errors:
                self.try_errors.add(id(self.errors[-1]))  # (see CallLowering.inline_call)
            raise Abort
        exit_ = contains([s], (gast.Return, gast.Break, gast.Continue, gast.Yield,
                               gast.YieldFrom))
        if exit_ is not None:
            self.error(UnsupportedSyntaxError, f"`{type(exit_).__name__.lower()}` inside a "
                       f"{what}: it runs as written, as a statement of its own", exit_,
                       f"assign the value in the {what} and return it after")
            raise Abort
        loaded = []
        for node in gast.walk(s):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
                    node.id not in loaded:
                loaded.append(node.id)
        inputs, values = [], []
        for name in loaded:
            bound = self.scope.binding(name)
            if bound is None and (name in parsed.globals or name not in parsed.closure):
                continue  # a global or builtin: the statement's function reads it itself
            inputs.append(name)
            values.append(self.materialize(self.name_load(name, s)))
        outs = [n for n in assigned_names([s]) if self.read_later(n)]
        lineno = parsed.loc(s).lineno
        text = ast.unparse(gast.gast_to_ast(gast.Module(body=[s], type_ignores=[])))
        unset = [n for n in outs if n not in inputs]
        source = (f"def _line_{lineno}({''.join(n + ', ' for n in inputs)}"
                  "_s2sad_unset=None):\n" +
                  "".join(f"    {n} = _s2sad_unset\n" for n in unset) +
                  textwrap.indent(text, "    ") + "\n" +
                  f"    return ({''.join(n + ', ' for n in outs)})\n")
        code = next(c for c in compile(source, parsed.filename, "exec").co_consts
                    if isinstance(c, types.CodeType))
        # the module's own globals (not a copy): a global rebound between two calls is read
        # as the function reads it
        run = types.FunctionType(code, parsed.globals, f"_line_{lineno}",
                                 (prims.NOT_COMPUTED,))
        run.__s2sad_source__ = source
        error = NonDifferentiableError(
            f"{what} runs as written, where no derivative reaches it; here a differentiated "
            "value does", self.loc(s), f"compute what is differentiated outside the {what}")
        fn = prims.Opaque(run, [error], effect_only=not outs)
        result = self.emit(fn, values, hint=f"line_{lineno}", node=s)
        for i, n in enumerate(outs):
            self.scope.env[n] = self.emit(operator.getitem, [result, Const(i)], hint=n,
                                          node=s)

    def writes_its_arguments(self, fn) -> bool:
        """Does the Python function `fn` write into one of its parameters (`p[i] = v`,
        `p += v`, `p.fill(v)`, np.fill_diagonal(p, v), out=p)?"""
        func = getattr(fn, "__func__", fn)
        try:
            node = parse_function(func).node if isinstance(func, types.FunctionType) else None
        except S2SADError:
            node = None
        if node is None:
            return False
        params = {a.id for a in node.args.args + node.args.kwonlyargs}
        for n in gast.walk(node):
            if isinstance(n, (gast.Subscript, gast.Name)) and isinstance(n.ctx, gast.Store):
                base = n.value if isinstance(n, gast.Subscript) else None
                if isinstance(base, gast.Name) and base.id in params:
                    return True
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) and \
                    n.target.id in params:
                return True
            if isinstance(n, gast.Call):
                w = _writer_target(n, self.peek_static)
                if isinstance(w, gast.Name) and w.id in params:
                    return True
        return False

    def written_argument(self, call):
        """The name of an array the function created that `call` writes into, or None."""
        target = _writer_target(call, self.peek_static)
        if isinstance(target, gast.Call) and len(target.args) == 1 and not target.keywords \
                and isinstance(target.args[0], gast.Name):
            # out=np.asarray(X) of an array X: X itself
            fn = self.peek_static(target.func)
            bound = self.scope.binding(target.args[0].id)
            if fn is not None and any(fn.obj is f for f in (np.asarray, np.asanyarray)) and \
                    self.param_ranks.get(bound, (0, 0))[1]:
                target = target.args[0]
        if not isinstance(target, gast.Name):
            return None
        bound = self.scope.binding(target.id)
        return target.id if isinstance(bound, Var) else None

    def lower_written_copy(self, call, name, s):
        """np.fill_diagonal(m, v), m.fill(v), np.copyto(m, b), f(..., out=m) on an array the
        function (or one that called it) created: a new version of `m`. `m_1 = f(...)` for a
        primitive f with out=m, `m_1 = m.copy()` then the call on `m_1` for the others."""
        cur = self.name_load(name, call)
        rebinds = self.check_writable(name, cur, call)
        positional_out = _out_keyword(call) is None and isinstance(
            getattr(self.peek_static(call.func), "obj", None), np.ufunc)
        if _out_keyword(call) is not None or positional_out:
            value = self.out_value(call, cur)
            if value is not None:
                self.written(name, self.materialize(value), rebinds)
                return
        func = call.func
        args = [a for a in call.args if not (isinstance(a, gast.Name) and a.id == name)] \
            if _out_keyword(call) is None else list(call.args)
        keywords = [k for k in call.keywords if k.arg != "out"]
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
                func.value.id == name:
            writer, spelling = prims.MethodCall(func.attr), f"{name}.{func.attr}"
            rest = list(call.args)
        else:
            fn = self.peek_static(func)
            writer, spelling = fn.obj, fn.name
            rest = args if _out_keyword(call) is None else list(call.args)
        values = [self.materialize(self.expr(a)) for a in rest]
        kw = [(k.arg, self.materialize(self.expr(k.value))) for k in keywords]
        if writer is np.fill_diagonal and len(values) == 1 and \
                all(n == "wrap" and v == Const(False) for n, v in kw):
            # a write into a copy the compiler differentiates (the diagonal takes val's
            # derivative), printed as written
            new = self.emit(prims.filled_diagonal, [cur, values[0]], hint=name, node=s)
            self.written(name, new, rebinds)
            return
        if _out_keyword(call) is not None:
            kw.append(("out", Const(None)))  # (replaced by the copy: see WrittenCopy)
            writer = prims.OutWriter(writer)
        error = NonDifferentiableError(
            f"`{spelling}` writes into `{name}` in place, and a derivative flows through the "
            "write", self.loc(s), f"assign into it (`{name}[i] = v`) or build the new value: "
            f"`{name} = np.where(...)`, `{name} = {name} + ...`")
        new = self.emit(prims.Opaque(prims.WrittenCopy(writer, spelling), [error]),
                        [cur] + values, kw, hint=name, node=s)
        self.written(name, new, rebinds)

    def out_value(self, call, cur):
        """What f(..., out=m) writes into m, where f is a primitive: f's value (cast to m's
        dtype, as NumPy casts it, where an operand other than m may have another), a new
        version of m. None for a callee the compiler cannot read."""
        fn = self.peek_static(call.func)
        if fn is None or not self.table.is_primitive(fn.obj):
            return None
        args, kwargs = self.call_args(call)
        kwargs = [(k, v) for k, v in kwargs if k != "out"]
        where = dict(kwargs).get("where") if isinstance(fn.obj, np.ufunc) else None
        if isinstance(fn.obj, np.ufunc):
            args = args[:fn.obj.nin]  # (np.exp(m, m): the output by position)
            kwargs = [(k, v) for k, v in kwargs if k != "where"]
        if output_argument(fn.obj, args, kwargs) is not None:
            return None
        value = self.call_value(fn.obj, args, kwargs, call)
        if where is not None and not (isinstance(where, Const) and where.value is True):
            # where=w: the entries where w is False keep m's values
            value = self.call_value(np.where, [where, value, cur], [], call)
        if not all(a is cur or type(a) is Const and type(a.value) in (int, float, bool)
                   for a in args):
            dtype = self.call_value(prims.Attr("dtype"), [cur], [], call, "_dtype")
            value = self.call_value(np.asarray, [value], [("dtype", dtype)], call)
        return value

    def store_attribute(self, base, attr, value, node):
        """`obj.name = v` on an object the function was given (`self`, a global object):
        run as written. Read again in the function, the attribute is read where the code
        runs; a value that carries a derivative stored and read back is refused."""
        record = self.scope.binding(base.id) if isinstance(base, gast.Name) else None
        if isinstance(record, ObjectRecord):
            if record.depth != self.control_depth:
                self.error(UnsupportedSyntaxError, f"`{base.id}.{attr}` written inside a "
                           "branch or loop of an object made outside it", node,
                           "compute the value in a variable and set the attribute after the "
                           "`if` or loop")
                raise Abort
            record.attrs[attr] = value
            return
        obj = self.peek_static(base)
        if obj is None or isinstance(obj.obj, types.ModuleType):
            self.error(UnsupportedSyntaxError, "assignment to an attribute of a value computed "
                       "in the function is not supported", node,
                       "keep the value in a variable, or store it on an object passed in")
            raise Abort
        if id(obj.obj) in self.made_objects:
            self.error(UnsupportedSyntaxError, f"`{obj.name}.{attr}` written: the library's "
                       f"object `{type(obj.obj).__name__}` is made once while compiling, and "
                       "would keep the value from one call to the next", node,
                       "make the object outside the function and pass it in (or hold it in "
                       "a global)")
            raise Abort
        self.mark_attribute_written(obj.obj, attr)
        fn = prims.Opaque(prims.SetAttr(attr), [NonDifferentiableError(
            f"`{obj.name}.{attr}` is given a value that carries a derivative, and read back "
            "in the function: a derivative does not flow through an object's attribute",
            self.loc(node), f"keep the value in a variable and pass it on; store it on "
                            f"`{obj.name}` only for later calls")], effect_only=True)
        self.attribute_stores.append((fn, attr))
        self.emit(fn, [self.materialize(obj), self.materialize(value)], hint="_set",
                  node=node)

    def mark_attribute_written(self, obj, attr):
        self.written_attrs[(id(obj), attr)] = obj  # (kept alive: the id stays its own)

    def prescan_attribute_writes(self, body):
        """Attributes of objects the function was given that `body` writes (`self.nfev +=
        1`): read where the code runs, never as a constant of the compile."""
        for node in gast.walk(gast.Module(body=list(body), type_ignores=[])):
            if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Store):
                obj = self.peek_static(node.value)
                if obj is not None and not isinstance(obj.obj, types.ModuleType):
                    self.mark_attribute_written(obj.obj, node.attr)

    def attribute_read_now(self, base: Static, attr, node):
        """`obj.attr` of an attribute the function writes: read where the code runs."""
        self.attribute_reads.add(attr)
        return self.emit(prims.Opaque(prims.Attr(attr), [NonDifferentiableError(
            f"`{base.name}.{attr}` is read where the code runs", self.loc(node))]),
            [self.materialize(base)], hint=attr, node=node)

    def is_built_list(self, value) -> bool:
        return (isinstance(value, StaticSeq) and value.is_list) or \
            (isinstance(value, Var) and value in self.grown)

    def lower_extend(self, name, items, s, in_loop):
        """`ys += [a, b]` on a list the function built: extends it in place, as
        `ys.append(a); ys.append(b)` does."""
        seq = self.static_seq(self.expr(items))
        if not isinstance(seq, StaticSeq):
            self.error(UnsupportedSyntaxError, f"`{name} +=` with a sequence computed at run "
                       "time is not supported", s, f"append its items: `{name}.append(y)`")
            raise Abort
        cur = self.name_load(name, s)
        if isinstance(cur, StaticSeq) and not in_loop and \
                not any(loop for _, _, loop in self.stmt_stack):
            # a list known while compiling: every name for it sees the new items, here and
            # in the code that called this helper
            new = StaticSeq(cur.items + seq.items, True)
            scope = self.scope
            while scope is not None:
                for other, v in list(scope.env.items()):
                    if v is cur:
                        scope.env[other] = new
                    elif v is not new and self.may_share(v, cur):
                        # (held inside another value, or bound to it by only one branch of
                        # an `if`: the new items would not reach it)
                        self.error(UnsupportedSyntaxError, f"`{name} +=` on a list that "
                                   f"`{other}` holds or may be", s, f"build `{other}` after "
                                   "the list is complete")
                        raise Abort
                scope = scope.caller
            return
        self.check_list_aliases(name, s)
        for value in seq.items:
            self.append_value(name, value, s, in_loop)

    def lower_append(self, name, item, call, in_loop):
        """`ys.append(y)` on a list the function built: a new version of `ys` (in a loop, a
        list grown at run time: see prims.Grown)."""
        bound = self.scope.binding(name)
        if bound is None or isinstance(bound, Static):
            # a list the function was given or a global one (a log, a history): appended to
            # as written, on the primal values
            self.lower_effect_call(call, call)
            return
        self.check_list_aliases(name, call)
        self.append_value(name, self.expr(item), call, in_loop)

    def append_value(self, name, value, call, in_loop):
        cur = self.name_load(name, call)
        if isinstance(cur, StaticSeq) and cur.is_list and not in_loop and \
                not any(loop for _, _, loop in self.stmt_stack):
            self.scope.env[name] = StaticSeq(cur.items + (value,), True)
            return
        if not (isinstance(cur, StaticSeq) and cur.is_list) and \
                not (isinstance(cur, Var) and cur in self.grown):
            self.error(UnsupportedSyntaxError, f"`{name}.append` on a list the function did "
                       "not create", call, f"start a new list in the function (`{name} = []`) "
                       "and append to it")
            raise Abort
        for other, v in self.scope.env.items():
            if other != name and (v is cur or (isinstance(v, Var) and v == cur)):
                self.error(UnsupportedSyntaxError, f"`{name}.append` on a list that `{other}` "
                           "also names (the append would change both)", call,
                           f"append to one name only, or copy: `{other} = list({name})`")
                raise Abort
        new = self.emit(prims.list_append, [self.materialize(cur), self.materialize(value)],
                        hint=name, node=call)
        self.grown.add(new)
        self.scope.env[name] = new

    def check_list_aliases(self, name, call):
        """A list the function appends to may be read (indexed, iterated, given to NumPy,
        returned), never given a second name or put where an append could not be seen:
        derivative code gives each append a new version of the list, which a second name
        would not follow as Python's shared list does."""
        body = self.scope_body()
        key = (id(body), name)
        if key in self.alias_checked:
            return
        self.alias_checked.add(key)
        allowed: set = set()
        for node in gast.walk(gast.Module(body=list(body), type_ignores=[])):
            if isinstance(node, gast.Attribute) and node.attr == "append":
                allowed.add(id(node.value))
            elif isinstance(node, gast.Subscript):
                allowed.add(id(node.value))
            elif isinstance(node, gast.For):
                allowed.add(id(node.iter))
            elif isinstance(node, gast.Return) and node.value is not None:
                allowed.add(id(node.value))
            elif isinstance(node, gast.Call):
                callee = self.peek_static(node.func)
                if callee is not None and (self.table.is_primitive(callee.obj) or
                                           callee.obj in (len, list, tuple)):
                    allowed.update(id(a) for a in node.args)
        # a nested function's own local of that name is another variable (Python's scopes)
        for node in gast.walk(gast.Module(body=list(body), type_ignores=[])):
            if isinstance(node, (gast.FunctionDef, gast.Lambda)) and \
                    name in _local_names(node):
                allowed.update(id(n) for n in gast.walk(node))
        for node in gast.walk(gast.Module(body=list(body), type_ignores=[])):
            if isinstance(node, gast.Name) and node.id == name and \
                    isinstance(node.ctx, gast.Load) and id(node) not in allowed:
                self.error(UnsupportedSyntaxError, f"the list `{name}` is appended to and also "
                           "used here as a value (a second name, a container, a helper's "
                           "argument)", node, f"read `{name}` by indexing, iterating or "
                           "passing it to a NumPy function; give the list one name")
                raise Abort

    def lower_print(self, call):
        """print(...): kept in the primal part of the derivative (it runs once a call)."""
        args, kwargs = self.call_args(call)
        if any(k not in ("sep", "end") for k, _ in kwargs):
            self.error(UnsupportedSyntaxError, "print() with `file` or `flush` is not "
                       "supported in differentiated code", call, "print to standard output")
            raise Abort
        self.emit(prims.print_values, [self.materialize(a) for a in args],
                  [(k, self.materialize(v)) for k, v in kwargs], hint="_print", node=call)

    def lower_import(self, s):
        """`import m`, `import a.b as c`, `from m import f` inside the function: the names are
        bound while compiling, to what the import gives (a module is imported once)."""
        try:
            if isinstance(s, gast.Import):
                for alias in s.names:
                    if alias.asname:
                        self.scope.env[alias.asname] = Static(
                            importlib.import_module(alias.name), alias.asname)
                    else:
                        top = alias.name.split(".")[0]
                        importlib.import_module(alias.name)
                        self.scope.env[top] = Static(importlib.import_module(top), top)
                return
            package = self.scope.parsed.globals.get("__package__") if s.level else None
            base = "." * s.level + (s.module or "")
            module = importlib.import_module(base, package)
            for alias in s.names:
                if alias.name == "*":
                    self.error(UnsupportedSyntaxError, "`from ... import *` inside the "
                               "function is not supported", s, "import the names you use")
                    return
                try:
                    obj = getattr(module, alias.name)
                except AttributeError:
                    obj = importlib.import_module(f"{module.__name__}.{alias.name}")
                name = alias.asname or alias.name
                self.scope.env[name] = self.global_value(obj, name)
        except ImportError as e:
            self.error(NameResolutionError, f"the import fails while compiling: {e}", s,
                       "import at module level")

    def lower_delete(self, target, s):
        """`del x` of a local: the name is unbound (its value lives on where it was read; a
        later read is an error, as Python's UnboundLocalError). `del d[k]` of a dict and
        `del xs[i]` of a list written in the function, by a constant key: a new version
        without the item. Anything else is refused."""
        if isinstance(target, gast.Name):
            if target.id not in self.scope.env or \
                    isinstance(self.scope.env[target.id], (Undefined, Poisoned)):
                self.error(UnsupportedSyntaxError, f"`del {target.id}` of a name that is "
                           "not a local variable of the function", target,
                           f"remove the `del`; `{target.id}` goes out of scope at the end "
                           "of the function")
                raise Abort
            self.scope.env[target.id] = Undefined(target.id, deleted=True)
            return
        if isinstance(target, gast.Tuple | gast.List):
            for item in target.elts:
                self.lower_delete(item, s)
            return
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
            name = target.value.id
            cur = self.name_load(name, target.value)
            key = self.expr(target.slice)
            if isinstance(cur, StaticDict) and isinstance(key, Const):
                try:
                    cur.get(key.value)
                except KeyError:
                    self.error(UnsupportedSyntaxError, f"`del {name}[{key.value!r}]`: the "
                               "dict has no such key (Python raises KeyError)", target)
                    raise Abort
                self.rebind_written(name, cur, cur.without(key.value), s)
                return
            if isinstance(cur, StaticSeq) and cur.is_list and isinstance(key, Const) and \
                    type(key.value) in (int, slice):
                items = list(cur.items)
                try:
                    del items[key.value]
                except IndexError:
                    self.error(UnsupportedSyntaxError, f"`del {name}[{key.value!r}]`: list "
                               "index out of range", target)
                    raise Abort
                self.rebind_written(name, cur, StaticSeq(tuple(items), True), s)
                return
        self.error(UnsupportedSyntaxError, "`del` of an item or attribute of a value "
                   "computed at run time is not supported", target,
                   "build the new value instead (np.delete(x, i) for an array)")
        raise Abort

    def unsupported_stmt(self, s):
        names = {
            gast.Try: ("`try`", "remove the exception handling from the function to "
                                "differentiate"),
            gast.With: ("`with`", "move the context manager outside the differentiated "
                                  "function"),
            gast.Global: ("`global`", "pass the value as an argument and return the new one"),
            gast.Nonlocal: ("`nonlocal`", "pass the value as an argument and return the new "
                                          "one"),
            gast.Delete: ("`del`", "remove the `del` statement; names go out of scope at the "
                                   "end of the function"),
            gast.AsyncFunctionDef: ("a nested function definition",
                                    "define the helper at module level"),
            gast.ClassDef: ("a nested class definition", "define the class outside the "
                                                         "function"),
            gast.Raise: ("`raise`", "check arguments before calling the derivative"),
        }
        what, hint = names.get(type(s), (f"the statement `{type(s).__name__}`", None))
        if isinstance(s, gast.Expr) and isinstance(s.value, (gast.Yield, gast.YieldFrom)):
            what, hint = "`yield`", "return a value instead of yielding"
        self.error(UnsupportedSyntaxError, f"{what} is not supported", s, hint)

    def assign(self, target, value):
        match target:
            case gast.Name(id=name):
                if isinstance(value, Var) and value is self.renamable:
                    value = self.rename(value, name)
                    self.renamable = None
                self.scope.env[name] = value
            case gast.Tuple(elts=elts) | gast.List(elts=elts):
                if any(isinstance(e, gast.Starred) for e in elts):
                    self.error(UnsupportedSyntaxError, "starred assignment is not supported",
                               target, "unpack each item by index")
                    return
                items = self.unpack(value, len(elts), target)
                for e, v in zip(elts, items):
                    self.assign(e, v)
            case gast.Subscript(value=base, slice=index):
                self.store_subscript(base, index, value, target)
            case gast.Attribute(value=base, attr=attr):
                self.store_attribute(base, attr, value, target)
            case _:
                self.error(UnsupportedSyntaxError, "unsupported assignment target", target)

    def store_subscript(self, base, index, value, node):
        """`a[i] = v`: a new version of `a` (value semantics), proven not to be observed
        through another name: `a` must be an array this function created, not an argument,
        a view, or an array another live name refers to."""
        if not isinstance(base, gast.Name):
            self.error(UnsupportedSyntaxError, "assignment into a subscript of an expression",
                       node, "assign into a named array: `a[i] = v`")
            raise Abort
        name = base.id
        cur = self.name_load(name, base)
        if isinstance(cur, StaticDict):  # d[key] = v: a new version of the dict
            key = self.expr(index)
            if not (isinstance(key, Const) and isinstance(key.value, (str, int, tuple))):
                self.error(UnsupportedSyntaxError, "a dict key must be a constant", index)
                raise Abort
            self.rebind_written(name, cur, cur.with_item(key.value, value), node)
            return
        if isinstance(cur, StaticSeq) and cur.is_list:  # xs[k] = v on a list literal
            k = self.expr(index)
            n = len(cur.items)
            if isinstance(k, Const) and type(k.value) is int and -n <= k.value < n:
                items = list(cur.items)
                items[k.value] = value
                self.rebind_written(name, cur, StaticSeq(tuple(items), True), node)
                return
        rebinds = self.check_writable(name, cur, base)
        iv = self.materialize(self.expr(index))
        new = self.emit(prims.index_update, [cur, iv, self.materialize(value)], hint=name,
                        node=node)
        self.written(name, new, rebinds)

    def rebind_written(self, name, cur, new, node):
        """After `name[key] = v` on a dict or list written in the function (kept static, a
        new version per write): every name of this function for the same object sees the
        write, as in Python. A name that holds it inside another container and is read
        later would not, nor would the code that called this helper: both are refused."""
        for other, v in list(self.scope.env.items()):
            if v is cur:
                self.scope.env[other] = new
            elif self.may_share(v, cur) and self.read_later(other):
                self.error(NonDifferentiableError, f"cannot write into `{name}`: `{other}` "
                           "holds it, or may be it, and would see the write in Python but "
                           "not in the derivative", node, f"write into `{name}` before "
                           f"putting it into `{other}` or giving it that name, or use a copy")
                raise Abort
        scope = self.scope.caller
        while scope is not None:
            if any(v is cur or contains_item(v, cur) for v in scope.env.values()):
                self.error(NonDifferentiableError, f"cannot write into `{name}`: the code "
                           "that called this function holds it, and would see the write in "
                           "Python but not in the derivative", node,
                           "return the new value from the function instead of writing into "
                           "what it was given")
                raise Abort
            scope = scope.caller

    def merge_roots(self, value) -> list:
        """What a dict or list literal may be in Python: itself, or where it was merged after
        an `if`, what each branch held (recursively)."""
        entry = self.merged_from.get(id(value))
        if entry is None or entry[0] is not value:
            return [value]
        return [r for v in entry[1] for r in self.merge_roots(v)]

    def may_share(self, value, cur) -> bool:
        """May `value` be `cur` in Python, or hold it, other than by being it?"""
        roots = self.merge_roots(cur)
        mine = self.merge_roots(value)
        return any(r is q for r in mine for q in roots) or \
            any(contains_item(value, q) for q in roots)

    def check_writable(self, name, cur, node):
        """Check that a write into the array `cur`, bound to `name`, can be a new version of
        it: an array this function, or a function that called it, created (an inlined
        helper's argument: the caller's array), that no other name sees but by being bound
        to the same array. Those names are the writes' to rebind: (scope, name) pairs."""
        owner = self.owner_of(cur)
        if owner is None and cur in self.arguments:
            # an array argument of the differentiated function: written into a private copy
            # (the derivative never modifies the caller's arrays), as the function's own
            owner = self.outermost_scope()
            self.written_arguments.append((cur, self.loc(node), name))
        if owner is None:
            params = {p for p in self.scope.parsed.node.args.args}
            is_param = any(getattr(p, "id", None) == name for p in params)
            what = "an argument of the function" if is_param and cur is not None \
                else "not an array this function created"
            if isinstance(cur, Var) and cur in self.view_base:
                what = "a view of another array"
            self.error(NonDifferentiableError, f"cannot write into `{name}`: it is {what}",
                       node, f"write into a copy: `{name} = {name}.copy()` (or np.array(...)) "
                       "before assigning into it; s2sad never modifies the caller's arrays")
            raise Abort
        if not self.can_rebind(self.scope, name):
            self.error(NonDifferentiableError, f"cannot write into `{name}` here: the loop or "
                       f"expression around the write does not carry `{name}`'s new values",
                       node, f"assign the new values to `{name}` instead (`{name} = f(...)`)")
            raise Abort
        rebinds = []
        for scope, other, v in self.aliases(name, cur, owner):
            if v is cur and self.can_rebind(scope, other):
                rebinds.append((scope, other))  # (the same array: it sees the write)
            elif v is cur and self.read_later(other, scope):
                self.error(NonDifferentiableError, f"cannot write into `{name}` here: "
                           f"`{other}` is the same array, and takes the new values only "
                           "where the write is not inside a loop or a branch that does not "
                           f"assign `{other}` itself", node,
                           f"assign the written array to `{other}` in that loop (`{other} = "
                           f"f({other})`), or write into a copy")
                raise Abort
            elif self.read_later(other, scope):
                self.error(NonDifferentiableError, f"cannot write into `{name}`: `{other}` "
                           "refers to the same array (or a view of it), and would see the write "
                           "in Python but not in the derivative", node,
                           f"make `{other}` a copy (`{other} = {name}.copy()`), or stop using it")
                raise Abort
        return rebinds

    def inplace_rebinds(self, name, cur):
        """The other names that see `name op= v` change the NumPy array `cur` (an array by
        the facts of the compile) and can take its new value: (scope, name) pairs, in this
        function and those that called it. None where `cur` may not be an array, or where
        one of them is a view of it or holds it, or cannot be rebound here."""
        if not self.param_ranks.get(cur, (0, 0))[1] or not self.can_rebind(self.scope, name):
            return None
        out = []
        for scope, other, v in self.aliases(name, cur, None):
            if not self.read_later(other):
                continue
            if v is not cur or not self.can_rebind(scope, other):
                return None
            out.append((scope, other))
        return out

    def outermost_scope(self):
        """The differentiated function's scope (the code that called every inlined one)."""
        scope = self.scope
        while scope.caller is not None:
            scope = scope.caller
        return scope

    def owner_of(self, cur):
        """The scope (this function or one that called it) that created the array `cur`,
        or None (an argument of the differentiated function, a view, a global)."""
        scope = self.scope
        while scope is not None and isinstance(cur, Var):
            if cur in scope.fresh:
                return scope
            scope = scope.caller
        return None

    def aliases(self, name, cur, upto):
        """(scope, name, value) of the other names that may see the array `cur`: in this
        function, and in the functions that called it up to `upto`."""
        same = self.may_be(cur)
        scope, out = self.scope, []
        while scope is not None:
            for other, v in scope.env.items():
                if (other != name or scope is not self.scope) and self.refers_to(v, same):
                    out.append((scope, other, v))
            if scope is upto:
                break
            scope = scope.caller
        return out

    def can_rebind(self, scope, name) -> bool:
        """Can `name` of `scope` (this function or one that called it) take a new value
        here? Not inside a loop of that function that does not carry it (where it was bound
        before the loop), nor a part of an expression lowered apart; nor inside any branch
        or loop of a function it called, whose values the construct merges or carries for
        its own names only."""
        inner, s = set(), self.scope
        while s is not None and s is not scope:
            inner.add(id(s))
            s = s.caller
        for s, carried, before in self.rebind_frames:
            if s is scope and carried is not None and name not in carried and name in before:
                return False  # (a name bound inside the loop is the body's own)
            if id(s) in inner:
                return False
        return True

    def written(self, name, new, rebinds):
        """Bind `name`, and the names that see the same array (check_writable), to the new
        version `new` of the array that was written: an array their functions own."""
        self.scope.fresh.add(new)
        self.scope.env[name] = new
        for scope, other in rebinds:
            scope.fresh.add(new)
            scope.env[other] = new

    def may_be(self, cur) -> set:
        """The variables whose array `cur` may be, or look into, in NumPy: itself, the array
        a view looks into, and what a loop's or an if's variable started from or merged."""
        seen, todo = set(), [cur]
        while todo:
            v = todo.pop()
            if not isinstance(v, Var) or v in seen:
                continue
            seen.add(v)
            todo.extend(self.origins.get(v, ()))
            if v in self.view_base:
                todo.append(self.view_base[v])
        return seen

    def refers_to(self, value, same: set) -> bool:
        """May the lowered value be, or hold, an array of `same` (see may_be) in NumPy? Also
        where it was bound to one by a branch of an `if` or an iteration of a loop (its
        origins), not only where it was bound to one directly."""
        if any(holds(value, c, self.view_base) for c in same):
            return True
        if isinstance(value, Var):
            return not self.may_be(value).isdisjoint(same)
        if isinstance(value, StaticSeq):
            return any(self.refers_to(v, same) for v in value.items)
        if isinstance(value, StaticDict):
            return any(self.refers_to(v, same) for v in value.values)
        if isinstance(value, ObjectRecord):  # (an attribute of an object made in the code)
            return any(self.refers_to(v, same) for v in value.attrs.values()
                       if not isinstance(v, ObjectRecord))
        return False

    def shared(self, name: str, cur):
        """The name that would see `name op= v` change its array, were `cur` an array (NumPy
        updates it in place), or None: another name, read later, that refers to the same
        array, to an array `cur` looks into, or to a view of it; in this function or, for an
        inlined helper, in the code that called it (its argument is the caller's array).
        An argument of the function itself is the caller's business: the derivative code
        never modifies the caller's arrays, and its values are NumPy's."""
        if not isinstance(cur, Var):
            return None
        same = self.may_be(cur)
        scope = self.scope
        while scope is not None:
            for other, v in scope.env.items():
                if (other != name or scope is not self.scope) and \
                        self.refers_to(v, same) and self.read_later(other):
                    return other
            scope = scope.caller
        return None

    def rename(self, var: Var, name: str) -> Var:
        """Give the most recent statement's result the user's name when it defines `var`."""
        if self.stmts and isinstance(self.stmts[-1], Call) and self.stmts[-1].target == var \
                and var.name.startswith("_"):
            new = self.fresh(name)
            last = self.stmts[-1]
            self.stmts[-1] = Call(new, last.fn, last.args, last.kwargs, last.loc)
            if var in self.scope.fresh:
                self.scope.fresh.add(new)
            if var in self.view_base:
                self.view_base[new] = self.view_base[var]
            if var in self.allocated:
                self.allocated.add(new)
            if var in self.shape_source:
                self.shape_source[new] = self.shape_source[var]
            if var in self.param_ranks:
                self.param_ranks[new] = self.param_ranks[var]
            if var in self.dtype_values:
                self.dtype_values[new] = self.dtype_values[var]
            if var in self.precisions:
                self.precisions[new] = self.precisions[var]
            if var in self.numbers:
                self.numbers.add(new)
            if var in self.real_numbers:
                self.real_numbers.add(new)
            if var in self.all_false:
                self.all_false.add(new)
            return new
        return var

    def unpack(self, value, n, node):
        if isinstance(value, StaticSeq):
            if len(value.items) != n:
                self.error(UnsupportedSyntaxError, f"cannot unpack {len(value.items)} values "
                           f"into {n} names", node)
                raise Abort
            return list(value.items)
        if isinstance(value, Static):
            obj = value.obj
            if isinstance(obj, (tuple, list)) and len(obj) == n:
                return [self.constant(o) for o in obj]
            self.error(UnsupportedSyntaxError, f"cannot unpack {value.name}", node)
            raise Abort
        return [self.emit(operator.getitem, [value, Const(i)], hint="_t", node=node)
                for i in range(n)]


# functions that write into their first argument (NumPy's in-place writers), and the array
# methods that write into their array
_WRITERS = frozenset({np.fill_diagonal, np.copyto, np.put, np.place, np.putmask,
                      np.put_along_axis})
_WRITING_METHODS = frozenset({"fill", "sort", "put", "itemset", "partition", "resize",
                              "setfield", "setflags"})


def _out_keyword(call):
    for k in call.keywords:
        if k.arg == "out":
            return k.value
    return None


def _writer_target(call, peek_static):
    """The expression a call writes into: `m` of np.fill_diagonal(m, v), m.fill(v),
    f(..., out=m) or a ufunc's output by position (np.exp(m, m)); None for a call that
    writes into none of its arguments as far as known."""
    out = _out_keyword(call)
    if out is not None:
        return out
    fn = peek_static(call.func)
    if fn is not None and isinstance(fn.obj, np.ufunc) and len(call.args) > fn.obj.nin and \
            not any(isinstance(a, gast.Starred) for a in call.args):
        return call.args[fn.obj.nin]
    func = call.func
    if isinstance(func, gast.Attribute) and func.attr in _WRITING_METHODS and \
            isinstance(func.value, gast.Name) and peek_static(func.value) is None:
        return func.value
    fn = peek_static(func)
    try:
        if fn is not None and fn.obj in _WRITERS and call.args:
            return call.args[0]
    except TypeError:
        pass
    return None



def _local_names(fnode) -> set:
    """The names a nested function (or lambda) binds itself: its parameters and the names
    it assigns, unless it declares them global or nonlocal."""
    args = fnode.args
    names = {a.id for a in args.args + args.kwonlyargs + getattr(args, "posonlyargs", [])}
    names.update(a.id for a in (args.vararg, args.kwarg) if a is not None)
    body = fnode.body if isinstance(fnode.body, list) else []
    names.update(assigned_names(body))
    for node in gast.walk(gast.Module(body=list(body), type_ignores=[])):
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            names.difference_update(node.names)
    return names


def _within(scope, outer) -> bool:
    """Is `scope` the function `outer`, or a function defined inside it?"""
    while scope is not None:
        if scope is outer:
            return True
        scope = scope.parent
    return False
