"""Lowering: a parsed Python function -> the structured SSA IR.

Names are resolved to the objects they denote (so `np.sin`, `numpy.sin` and
`from numpy import sin` are one primitive); calls of the user's own functions
are inlined; tuples that the code only builds and unpacks stay static.
"""

from __future__ import annotations

import builtins
import inspect
import math
import operator
import types
from dataclasses import dataclass

import gast
import numpy as np

from s2sad.errors import (
    MissingRuleError,
    NameResolutionError,
    NonDifferentiableError,
    S2SADError,
    UnsupportedSyntaxError,
    raise_all,
)
from s2sad.frontend.normalize import always_exits, assigned_names, contains, normalize_exits
from s2sad.frontend.source import ParsedFunction, parse_function
from s2sad.ir import prims
from s2sad.ir.nodes import Block, Call, Const, ForRange, Function, If, Var, While

# -- values during lowering ---------------------------------------------------


@dataclass(frozen=True)
class Static:
    """A compile-time object (a module, a function, a class, ...)."""

    obj: object
    name: str


@dataclass(frozen=True)
class StaticSeq:
    """A tuple or list literal whose items are lowered values (kept static)."""

    items: tuple
    is_list: bool = False


BINOPS = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod,
    gast.Pow: operator.pow, gast.MatMult: operator.matmul, gast.BitAnd: operator.and_,
    gast.BitOr: operator.or_, gast.BitXor: operator.xor, gast.LShift: operator.lshift,
    gast.RShift: operator.rshift,
}
UNOPS = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_,
         gast.Invert: operator.invert}
CMPOPS = {gast.Lt: operator.lt, gast.LtE: operator.le, gast.Gt: operator.gt,
          gast.GtE: operator.ge, gast.Eq: operator.eq, gast.NotEq: operator.ne,
          gast.Is: operator.is_, gast.IsNot: operator.is_not}

# Array attributes and methods, mapped to the NumPy functions that implement them.
ARRAY_ATTRS = {"T", "shape", "ndim", "size", "real", "imag", "dtype"}
ARRAY_METHODS = {
    "sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
    "std": np.std, "var": np.var, "dot": np.dot, "reshape": np.reshape,
    "transpose": np.transpose, "ravel": np.ravel, "flatten": np.ravel, "copy": np.copy,
    "squeeze": np.squeeze, "clip": np.clip, "cumsum": np.cumsum, "cumprod": np.cumprod,
    "conj": np.conj, "conjugate": np.conj, "trace": np.trace, "diagonal": np.diagonal,
    "argmax": np.argmax, "argmin": np.argmin, "argsort": np.argsort, "round": np.round,
    "any": np.any, "all": np.all, "astype": "astype", "item": "item",
    "swapaxes": np.swapaxes, "repeat": np.repeat, "take": np.take,
}
# Methods whose extra positional arguments form one tuple (`x.reshape(2, 3)`).
VARARG_SHAPE_METHODS = {"reshape", "transpose"}

SIMPLE_CONSTANTS = (int, float, complex, bool, str, bytes, type(None), type(Ellipsis))


def _is_simple_constant(v) -> bool:
    if isinstance(v, SIMPLE_CONSTANTS):
        return True
    if isinstance(v, tuple):
        return all(_is_simple_constant(x) for x in v)
    return False


class Scope:
    """One function being lowered: its parsed source and its variable environment."""

    def __init__(self, parsed: ParsedFunction):
        self.parsed = parsed
        self.env: dict = {}
        self.fresh: set = set()  # variables holding arrays this function created itself


class Lowerer:
    """Lowers one top-level function (and inlines its helpers) into a `Function`."""

    def __init__(self, table):
        self.table = table
        self.errors: list[S2SADError] = []
        self.counts: dict = {}
        self.stmts: list = []  # statements of the block being built
        self.inline_stack: list = []
        self.scope: Scope | None = None
        self.view_base: dict = {}  # a view's variable -> the array it looks into
        self.renamable = None  # the value of the assignment being lowered, if fresh
        self.stmt_stack: list = []  # (statement list, index, in a loop body) being lowered

    # -- names and builder --------------------------------------------------

    def fresh(self, hint: str) -> Var:
        hint = hint or "t"
        n = self.counts.get(hint, 0)
        self.counts[hint] = n + 1
        return Var(hint if n == 0 else f"{hint}_{n}")

    def reserve(self, name: str) -> Var:
        self.counts[name] = max(self.counts.get(name, 0), 1)
        return Var(name)

    def emit(self, fn, args, kwargs=(), hint="t", node=None) -> Var:
        target = self.fresh(hint)
        self.stmts.append(Call(target, fn, tuple(args), tuple(kwargs), self.loc(node)))
        if self.scope is not None:
            if _creates_array(fn):
                self.scope.fresh.add(target)
            elif fn in VIEW_FNS and args and isinstance(args[0], Var):
                self.view_base[target] = self.view_base.get(args[0], args[0])
        return target

    def loc(self, node):
        if node is None or self.scope is None:
            return None
        return self.scope.parsed.loc(node)

    def error(self, cls, message, node, hint=None):
        self.errors.append(cls(message, self.loc(node), hint))

    def sub_block(self, fn):
        """Run `fn()` collecting the statements it emits into a separate list."""
        saved = self.stmts
        self.stmts = []
        try:
            result = fn()
            return self.stmts, result
        finally:
            self.stmts = saved

    # -- entry --------------------------------------------------------------

    def lower_function(self, func) -> Function:
        parsed = parse_function(func)
        node = parsed.node
        self.scope = Scope(parsed)
        self.inline_stack.append(func)
        args = node.args
        params = []
        for a in args.args:
            params.append(self.reserve(a.id))
            self.scope.env[a.id] = params[-1]
        kwonly = []
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            v = self.reserve(a.id)
            self.scope.env[a.id] = v
            default = func.__kwdefaults__.get(a.id, inspect.Parameter.empty) if (
                func.__kwdefaults__) else inspect.Parameter.empty
            kwonly.append((v, default))
        self._check_signature(node)
        results, is_tuple = self.lower_body(node.body, node)
        fn = Function(func.__name__, tuple(params), Block(tuple(self.stmts), tuple(results)),
                      is_tuple, tuple(kwonly), tuple(func.__defaults__ or ()),
                      parsed.loc(node), tuple(parsed.lines), parsed.first_line)
        raise_all(self.errors)
        return fn

    def _check_signature(self, node):
        args = node.args
        if args.vararg is not None:
            self.error(UnsupportedSyntaxError, "*args parameters are not supported", args.vararg,
                       "give each argument its own parameter")
        if args.kwarg is not None:
            self.error(UnsupportedSyntaxError, "**kwargs parameters are not supported",
                       args.kwarg, "use keyword-only parameters with defaults")

    def lower_body(self, body, fnode):
        """Lower a function body; returns (result atoms, returns_tuple)."""
        body = [s for s in body]
        if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # docstring
        ret = contains(body, (gast.Return,), into_loops=True)
        stmts = normalize_exits(body)
        n_errors = len(self.errors)
        outcome = self.lower_stmts(stmts, in_loop=False)
        if outcome is None and len(self.errors) > n_errors:
            return [Const(None)], False  # the missing return follows from reported errors
        if outcome is None:
            node = stmts[-1] if stmts else fnode
            if ret is None:
                self.error(UnsupportedSyntaxError, "the function does not return a value", fnode,
                           "end the function with `return <value>`")
            else:
                self.error(UnsupportedSyntaxError, "not every path through the function returns "
                           "a value", node, "add a `return` at the end of the function")
            return [Const(None)], False
        return self.flatten_return(outcome)

    def flatten_return(self, value):
        if isinstance(value, StaticSeq):
            return [self.materialize(v) for v in value.items], True
        return [self.materialize(value)], False

    # -- statements ---------------------------------------------------------

    def lower_stmts(self, stmts, in_loop):
        """Lower statements; returns the returned value if the list ends in `return`.

        Inside a loop body, returns the marker "continue"/"break" when the list ends in one.
        """
        for k, s in enumerate(stmts):
            n_errors = len(self.errors)
            self.stmt_stack.append((stmts, k, in_loop))
            try:
                out = self.lower_stmt(s, in_loop)
            except _Abort:
                self.poison(s)
                continue
            finally:
                self.stmt_stack.pop()
            if len(self.errors) > n_errors:
                self.poison(s)
            if out is not None:
                return out
        return None

    def read_later(self, name) -> bool:
        """Might `name` be read after the statement being lowered (text order, and the next
        iterations of enclosing loops)?"""
        for stmts, k, loop in self.stmt_stack:
            if any(_loads(st, name) for st in stmts[k + 1:]):
                return True
            if loop:
                # earlier statements of a loop body run again after this one, unless they
                # assign the name before reading it
                for st in stmts[:k + 1]:
                    if name in assigned_names([st]) and not _loads(st, name):
                        break
                    if _loads(st, name) and st is not stmts[k]:
                        return True
        return False

    def poison(self, s):
        """After an error in `s`, names it assigns are unknown but reported no further."""
        for name in assigned_names([s]):
            self.scope.env[name] = _Poisoned(name)

    def lower_stmt(self, s, in_loop):
        match s:
            case gast.Assign(targets=targets, value=value):
                n_before = len(self.stmts)
                v = self.expr(value)
                # only a value computed by this very expression may take the target's name
                self.renamable = v if len(self.stmts) > n_before else None
                for t in targets:
                    self.assign(t, v)
                self.renamable = None
            case gast.AnnAssign(target=target, value=value) if value is not None:
                self.assign(target, self.expr(value))
            case gast.AugAssign(target=gast.Subscript(value=base, slice=index) as target,
                                op=op, value=value):
                # `a[i] += v` reads then writes (NumPy's buffered semantics, not np.add.at)
                old = self.expr(target)
                new = self.call_value(BINOPS.get(type(op)), [old, self.expr(value)], [], s)
                self.store_subscript(base, index, new, target)
            case gast.AugAssign(target=target, op=op, value=value):
                if not isinstance(target, gast.Name):
                    self.error(UnsupportedSyntaxError,
                               "augmented assignment to an attribute is not supported", target,
                               "return the new value instead of storing it on an object")
                    return None
                left = self.name_load(target.id, target)
                right = self.expr(value)
                fn = BINOPS.get(type(op))
                self.assign(target, self.call_value(fn, [left, right], [], s, target.id))
            case gast.Expr(value=gast.Call(func=func, args=[gast.Name() as base, index, value],
                                           keywords=[])) \
                    if self.peek_static(func) is not None and \
                    _is_add_at(self.peek_static(func).obj):
                # np.add.at(a, idx, v): accumulate at repeated indices, into a new version of a
                cur = self.name_load(base.id, base)
                self.check_writable(base.id, cur, base)
                new = self.emit(prims.index_add, [cur, self.materialize(self.expr(index)),
                                                  self.materialize(self.expr(value))],
                                hint=base.id, node=s)
                self.scope.fresh.add(new)
                self.scope.env[base.id] = new
            case gast.Expr(value=value):
                if isinstance(value, gast.Constant):
                    return None
                self.error(UnsupportedSyntaxError, "an expression statement has no effect in "
                           "differentiated code", s,
                           "assign the value to a name, or remove the statement "
                           "(printing and other side effects are not supported)")
            case gast.Pass():
                return None
            case gast.Return(value=value):
                if in_loop:
                    self.error(UnsupportedSyntaxError, "`return` inside a loop is not supported",
                               s, "store the value in a variable, `break`, and return after "
                                  "the loop")
                    return "break"
                if value is None:
                    self.error(UnsupportedSyntaxError, "`return` without a value", s,
                               "return the value to differentiate")
                    return Const(None)
                try:
                    return self.expr(value)
                except _Abort:
                    return Const(None)  # already reported; the path still returns
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
            case _:
                self.unsupported_stmt(s)
        return None

    def _mutation_hint(self):
        return ("build a new array instead (np.concatenate, np.where, np.stack), "
                "assignment into arrays is not supported yet")

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
            gast.FunctionDef: ("a nested function definition",
                               "define the helper at module level; s2sad inlines calls to it"),
            gast.AsyncFunctionDef: ("a nested function definition",
                                    "define the helper at module level"),
            gast.ClassDef: ("a nested class definition", "define the class outside the "
                                                         "function"),
            gast.Raise: ("`raise`", "check arguments before calling the derivative"),
            gast.Assert: ("`assert`", "check arguments before calling the derivative"),
            gast.Import: ("`import` inside the function", "import at module level"),
            gast.ImportFrom: ("`import` inside the function", "import at module level"),
        }
        what, hint = names.get(type(s), (f"the statement `{type(s).__name__}`", None))
        if isinstance(s, gast.Expr) and isinstance(s.value, (gast.Yield, gast.YieldFrom)):
            what, hint = "`yield`", "return a value instead of yielding"
        self.error(UnsupportedSyntaxError, f"{what} is not supported", s, hint)

    # -- assignment ---------------------------------------------------------

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
            case gast.Attribute():
                self.error(UnsupportedSyntaxError, "assignment to an attribute is not supported",
                           target, "return the new value instead of storing it on an object")
            case _:
                self.error(UnsupportedSyntaxError, "unsupported assignment target", target)

    def store_subscript(self, base, index, value, node):
        """`a[i] = v`: a new version of `a` (value semantics), proven not to be observed
        through another name: `a` must be an array this function created, not an argument,
        a view, or an array another live name refers to."""
        if not isinstance(base, gast.Name):
            self.error(UnsupportedSyntaxError, "assignment into a subscript of an expression",
                       node, "assign into a named array: `a[i] = v`")
            raise _Abort
        name = base.id
        cur = self.name_load(name, base)
        self.check_writable(name, cur, base)
        iv = self.materialize(self.expr(index))
        new = self.emit(prims.index_update, [cur, iv, self.materialize(value)], hint=name,
                        node=node)
        self.scope.fresh.add(new)
        self.scope.env[name] = new

    def check_writable(self, name, cur, node):
        if not isinstance(cur, Var) or cur not in self.scope.fresh:
            params = {p for p in self.scope.parsed.node.args.args}
            is_param = any(getattr(p, "id", None) == name for p in params)
            what = ("an argument of the function" if is_param and cur is not None
                    and not (isinstance(cur, Var) and cur in self.scope.fresh)
                    else "not an array this function created")
            if isinstance(cur, Var) and cur in self.view_base:
                what = "a view of another array"
            self.error(NonDifferentiableError, f"cannot write into `{name}`: it is {what}",
                       node, f"write into a copy: `{name} = {name}.copy()` (or np.array(...)) "
                       "before assigning into it; s2sad never modifies the caller's arrays")
            raise _Abort
        for other, v in self.scope.env.items():
            if other == name:
                continue
            if (_holds(v, cur, self.view_base)) and self.read_later(other):
                self.error(NonDifferentiableError, f"cannot write into `{name}`: `{other}` "
                           "refers to the same array (or a view of it), and would see the write "
                           "in Python but not in the derivative", node,
                           f"make `{other}` a copy (`{other} = {name}.copy()`), or stop using it")
                raise _Abort

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
            return new
        return var

    def unpack(self, value, n, node):
        if isinstance(value, StaticSeq):
            if len(value.items) != n:
                self.error(UnsupportedSyntaxError, f"cannot unpack {len(value.items)} values "
                           f"into {n} names", node)
                raise _Abort
            return list(value.items)
        if isinstance(value, Static):
            obj = value.obj
            if isinstance(obj, (tuple, list)) and len(obj) == n:
                return [self.constant(o) for o in obj]
            self.error(UnsupportedSyntaxError, f"cannot unpack {value.name}", node)
            raise _Abort
        return [self.emit(operator.getitem, [value, Const(i)], hint="_t", node=node)
                for i in range(n)]

    # -- control flow -------------------------------------------------------

    def lower_if(self, s, in_loop):
        cond = self.materialize(self.expr(s.test))
        env0 = dict(self.scope.env)
        then_stmts, then_out = self.sub_block(lambda: self.lower_stmts(s.body, in_loop))
        then_env = self.scope.env
        self.scope.env = dict(env0)
        else_stmts, else_out = self.sub_block(lambda: self.lower_stmts(s.orelse, in_loop))
        else_env = self.scope.env
        self.scope.env = dict(env0)
        if in_loop:
            # Loop bodies: "continue"/None fall through to the next iteration; "break" ends it.
            return self.merge_loop_if(s, cond, env0, (then_stmts, then_out, then_env),
                                      (else_stmts, else_out, else_env))
        if then_out is not None and else_out is not None:
            return self.merge_returns(s, cond, then_stmts, then_out, else_stmts, else_out)
        if then_out is not None or else_out is not None:
            self.error(UnsupportedSyntaxError, "only one branch of this `if` returns", s,
                       "return from both branches or after the `if`")
            raise _Abort
        self.merge_envs(s, cond, env0, then_stmts, then_env, else_stmts, else_env)
        return None

    def merge_returns(self, s, cond, then_stmts, then_out, else_stmts, else_out):
        a, a_tuple = self.flatten_in(then_stmts, then_out)
        b, b_tuple = self.flatten_in(else_stmts, else_out)
        if len(a) != len(b) or a_tuple != b_tuple:
            self.error(UnsupportedSyntaxError, "the branches return different numbers of values",
                       s, "return the same number of values on every path")
            raise _Abort
        outs = tuple(self.fresh("_r") for _ in a)
        self.stmts.append(If(cond, Block(tuple(then_stmts), tuple(a)),
                             Block(tuple(else_stmts), tuple(b)), outs, self.loc(s)))
        return StaticSeq(outs) if a_tuple else outs[0]

    def flatten_in(self, stmts, value):
        saved = self.stmts
        self.stmts = stmts
        try:
            return self.flatten_return(value)
        finally:
            self.stmts = saved

    def merge_envs(self, s, cond, env0, then_stmts, then_env, else_stmts, else_env):
        for n in then_env:
            # both branches bound the name to the same value: no merge needed, but the
            # name does change (`if c: y = s else: y = s`)
            if n in else_env and then_env[n] is else_env[n] and env0.get(n) is not then_env[n]:
                self.scope.env[n] = then_env[n]
        names = [n for n in then_env if n in else_env and then_env[n] is not else_env[n]]
        then_res, else_res, outs = [], [], []
        for name in names:
            a, b = then_env[name], else_env[name]
            if isinstance(a, StaticSeq) or isinstance(b, StaticSeq):
                if isinstance(a, StaticSeq) and isinstance(b, StaticSeq) and \
                        len(a.items) == len(b.items) and a.is_list == b.is_list:
                    parts = []
                    for x, y in zip(a.items, b.items):
                        if x is y:
                            parts.append(x)
                            continue
                        then_res.append(self.materialize_in(then_stmts, x))
                        else_res.append(self.materialize_in(else_stmts, y))
                        outs.append(self.fresh(name))
                        parts.append(outs[-1])
                    self.scope.env[name] = StaticSeq(tuple(parts), a.is_list)
                    continue
            if isinstance(a, Static) or isinstance(b, Static):
                if a == b:
                    self.scope.env[name] = a
                    continue
            then_res.append(self.materialize_in(then_stmts, a))
            else_res.append(self.materialize_in(else_stmts, b))
            outs.append(self.fresh(name))
            self.scope.env[name] = outs[-1]
            if a in self.scope.fresh and b in self.scope.fresh:
                self.scope.fresh.add(outs[-1])
        # names bound in only one branch are undefined afterwards
        for name in set(then_env) ^ set(else_env):
            self.scope.env[name] = _Undefined(name)
        if then_stmts or else_stmts or outs:
            self.stmts.append(If(cond, Block(tuple(then_stmts), tuple(then_res)),
                                 Block(tuple(else_stmts), tuple(else_res)), tuple(outs),
                                 self.loc(s)))

    def materialize_in(self, stmts, value):
        saved = self.stmts
        self.stmts = stmts
        try:
            return self.materialize(value)
        finally:
            self.stmts = saved

    def merge_loop_if(self, s, cond, env0, then, other):
        """An `if` inside a loop body. A branch ending in `break` sets the break flag."""
        # merge environments; "break" outcome is signalled through the flag variable
        (ts, tout, tenv), (es, eout, eenv) = then, other
        flag = self.scope.env.get("__break__")
        if (tout == "break" or eout == "break") and flag is None:
            self.error(UnsupportedSyntaxError, "`break` is not supported here", s)
            raise _Abort
        if tout == "break":
            tenv = dict(tenv)
            tenv["__break__"] = Const(True)
        if eout == "break":
            eenv = dict(eenv)
            eenv["__break__"] = Const(True)
        self.merge_envs(s, cond, env0, ts, tenv, es, eenv)
        return None

    def carry_fresh(self, inits, params):
        """A loop variable starting from a fresh array holds one in every iteration, as long
        as the body leaves it a fresh array (checked by check_carried_fresh)."""
        for i, p in zip(inits, params):
            if isinstance(i, Var) and i in self.scope.fresh:
                self.scope.fresh.add(p)

    def check_carried_fresh(self, params, results, outs, node, body_stmts=()):
        for p, r, o in zip(params, results, outs):
            if p in self.scope.fresh:
                if isinstance(r, Var) and (r in self.scope.fresh or r == p):
                    self.scope.fresh.add(o)
                else:
                    self.scope.fresh.discard(p)
                    if _writes_into(body_stmts, p):
                        self.error(NonDifferentiableError, "an array written into inside this "
                                   "loop is replaced by one the loop did not create", node,
                                   "assign a copy (`.copy()`) to the loop variable")

    def loop_carried(self, body_stmts, node):
        names = []
        for n in assigned_names(body_stmts):
            if n in self.scope.env and not isinstance(self.scope.env[n], _Undefined):
                names.append(n)
        return names

    def lower_for(self, s):
        if s.orelse:
            self.error(UnsupportedSyntaxError, "`for ... else` is not supported", s,
                       "use a flag variable")
            return
        it = s.iter
        # static unrolling over tuple/list literals
        itv = None
        is_range = (isinstance(it, gast.Call) and isinstance(self.peek_static(it.func), Static)
                    and self.peek_static(it.func).obj is range)
        if not is_range:
            itv = self.expr(it)
            if isinstance(itv, StaticSeq):
                for item in itv.items:
                    self.assign(s.target, item)
                    out = self.lower_stmts(normalize_exits(list(s.body)), in_loop=False)
                    if out is not None:
                        self.error(UnsupportedSyntaxError, "`return`, `break` and `continue` "
                                   "are not supported in a loop over a tuple literal", s)
                        raise _Abort
                return
        if not isinstance(s.target, gast.Name) and is_range:
            self.error(UnsupportedSyntaxError, "the loop variable of a `for` over range must be "
                       "a single name", s.target)
            raise _Abort
        if is_range:
            if it.keywords or not 1 <= len(it.args) <= 3:
                self.error(UnsupportedSyntaxError, "range() takes 1 to 3 positional arguments",
                           it)
                raise _Abort
            bounds = [self.materialize(self.expr(a)) for a in it.args]
            if len(bounds) == 1:
                start, stop, step = Const(0), bounds[0], Const(1)
            elif len(bounds) == 2:
                start, stop, step = bounds[0], bounds[1], Const(1)
            else:
                start, stop, step = bounds
            index_name = s.target.id
            element = None
        else:
            # iterate over the first axis of an array: for row in x
            seq = self.materialize(itv)
            start, step = Const(0), Const(1)
            stop = self.emit(len, [seq], hint="_n", node=it)
            index_name = "_i"
            element = (s.target, seq)
        has_break = contains(s.body, (gast.Break,), into_loops=False) is not None
        if has_break:
            self.lower_for_as_while(s, start, stop, step, index_name, element)
            return
        carried = [n for n in self.loop_carried(s.body, s) if n != index_name]
        inits = [self.materialize(self.scope.env[n]) for n in carried]
        env0 = dict(self.scope.env)
        params = [self.fresh(n) for n in carried]
        index = self.fresh(index_name)
        for n, p in zip(carried, params):
            self.scope.env[n] = p
        self.carry_fresh(inits, params)
        if element is None:
            self.scope.env[index_name] = index

        def body():
            if element is not None:
                target, seq = element
                self.assign(target, self.emit(operator.getitem, [seq, index], hint="_t",
                                              node=target))
            self.lower_stmts(normalize_exits(list(s.body)), in_loop=True)
            return [self.materialize(self.scope.env[n]) for n in carried]

        body_stmts, results = self.sub_block(body)
        self.scope.env = env0
        outs = [self.fresh(n) for n in carried]
        for n, o in zip(carried, outs):
            self.scope.env[n] = o
        self.check_carried_fresh(params, results, outs, s, body_stmts)
        self.stmts.append(ForRange(index, start, stop, step, tuple(params), tuple(inits),
                                   Block(tuple(body_stmts), tuple(results)), tuple(outs),
                                   self.loc(s)))

    def lower_for_as_while(self, s, start, stop, step, index_name, element):
        """`for` with `break`: a `while` over the index with a break flag."""
        if not (isinstance(step, Const) and isinstance(step.value, int) and step.value != 0):
            self.error(UnsupportedSyntaxError, "`break` in a `for` loop needs a constant range "
                       "step", s)
            raise _Abort
        cmp = operator.lt if step.value > 0 else operator.gt
        carried = [n for n in self.loop_carried(s.body, s) if n != index_name]
        idx_name = "_" + index_name if not index_name.startswith("_") else index_name
        names = [idx_name, "__break__"] + carried
        inits = [start, Const(False)] + [self.materialize(self.scope.env[n]) for n in carried]
        env0 = dict(self.scope.env)
        params = [self.fresh(idx_name), self.fresh("broke")] + [self.fresh(n) for n in carried]
        for n, p in zip(names, params):
            self.scope.env[n] = p
        self.carry_fresh(inits, params)

        def cond():
            a = self.emit(cmp, [params[0], stop], hint="_c")
            b = self.emit(operator.not_, [params[1]], hint="_c")
            return self.emit(operator.and_, [a, b], hint="_c")

        def body():
            index = params[0]
            if element is not None:
                target, seq = element
                self.assign(target, self.emit(operator.getitem, [seq, index], hint="_t"))
            else:
                self.scope.env[index_name] = index
            out = self.lower_stmts(normalize_exits(list(s.body)), in_loop=True)
            if out == "break":
                self.scope.env["__break__"] = Const(True)
            nxt = self.emit(operator.add, [index, step], hint=idx_name)
            return [nxt] + [self.materialize(self.scope.env[n]) for n in names[1:]]

        cond_stmts, c = self.sub_block(cond)
        body_stmts, results = self.sub_block(body)
        self.scope.env = env0
        outs = [self.fresh(n) for n in names]
        self.check_carried_fresh(params, results, outs, s, body_stmts)
        for n, o in zip(names[2:], outs[2:]):
            self.scope.env[n] = o
        self.stmts.append(While(tuple(params), tuple(inits), Block(tuple(cond_stmts), (c,)),
                                Block(tuple(body_stmts), tuple(results)), tuple(outs),
                                self.loc(s)))

    def lower_while(self, s):
        if s.orelse:
            self.error(UnsupportedSyntaxError, "`while ... else` is not supported", s,
                       "use a flag variable")
            return
        has_break = contains(s.body, (gast.Break,), into_loops=False) is not None
        carried = self.loop_carried(s.body, s)
        names = (["__break__"] if has_break else []) + carried
        inits = ([Const(False)] if has_break else []) + [
            self.materialize(self.scope.env[n]) for n in carried]
        env0 = dict(self.scope.env)
        params = [self.fresh("broke" if n == "__break__" else n) for n in names]
        for n, p in zip(names, params):
            self.scope.env[n] = p
        self.carry_fresh(inits, params)

        def cond():
            c = self.materialize(self.expr(s.test))
            if has_break:
                nb = self.emit(operator.not_, [params[0]], hint="_c")
                c = self.emit(operator.and_, [nb, c], hint="_c")
            return c

        def body():
            out = self.lower_stmts(normalize_exits(list(s.body)), in_loop=True)
            if out == "break":
                self.scope.env["__break__"] = Const(True)
            return [self.materialize(self.scope.env[n]) for n in names]

        cond_stmts, c = self.sub_block(cond)
        body_stmts, results = self.sub_block(body)
        self.scope.env = env0
        outs = [self.fresh(n if n != "__break__" else "broke") for n in names]
        self.check_carried_fresh(params, results, outs, s, body_stmts)
        for n, o in zip(names, outs):
            if n != "__break__":
                self.scope.env[n] = o
        self.stmts.append(While(tuple(params), tuple(inits), Block(tuple(cond_stmts), (c,)),
                                Block(tuple(body_stmts), tuple(results)), tuple(outs),
                                self.loc(s)))

    # -- expressions --------------------------------------------------------

    def materialize(self, value):
        """Turn a lowered value into an IR atom (building runtime tuples if needed)."""
        if isinstance(value, (Var, Const)):
            return value
        if isinstance(value, StaticSeq):
            items = [self.materialize(v) for v in value.items]
            if all(isinstance(i, Const) for i in items) and not value.is_list:
                return Const(tuple(i.value for i in items))
            fn = prims.make_list if value.is_list else prims.make_tuple
            return self.emit(fn, items, hint="_l" if value.is_list else "_tup")
        if isinstance(value, Static):
            if _is_simple_constant(value.obj) or isinstance(value.obj, np.ndarray):
                return Const(value.obj, value.name)
            return Const(value.obj, value.name)
        if isinstance(value, (_Undefined, _Poisoned)):
            raise _Abort  # already reported
        raise AssertionError(value)

    def constant(self, obj, name=None):
        if _is_simple_constant(obj) and not isinstance(obj, tuple):
            return Const(obj)
        return Static(obj, name or repr(obj))

    def peek_static(self, node):
        """The static object an expression names, without emitting code (or None)."""
        if isinstance(node, gast.Name):
            if node.id in self.scope.env:
                v = self.scope.env[node.id]
                return v if isinstance(v, Static) else None
            try:
                return Static(self.scope.parsed.lookup(node.id), node.id)
            except KeyError:
                return None
        if isinstance(node, gast.Attribute):
            base = self.peek_static(node.value)
            if base is not None and hasattr(base.obj, node.attr):
                return Static(getattr(base.obj, node.attr), f"{base.name}.{node.attr}")
        return None

    def name_load(self, name, node):
        if name in self.scope.env:
            v = self.scope.env[name]
            if isinstance(v, _Poisoned):
                raise _Abort
            if isinstance(v, _Undefined):
                self.error(NameResolutionError, f"`{name}` may be undefined here: it is "
                           "assigned in only one branch or only inside a loop", node,
                           f"assign `{name}` before the `if` or loop")
                raise _Abort
            return v
        try:
            obj = self.scope.parsed.lookup(name)
        except KeyError:
            self.error(NameResolutionError, f"name `{name}` is not defined", node,
                       "define it at module level or pass it as an argument")
            raise _Abort
        return self.global_value(obj, name)

    def global_value(self, obj, name):
        if _is_simple_constant(obj) and not isinstance(obj, tuple):
            return Const(obj)
        if isinstance(obj, np.ndarray) or isinstance(obj, np.generic):
            return Const(obj, name)
        return Static(obj, name)

    def expr(self, node):
        try:
            return self._expr(node)
        except _Abort:
            raise
        except S2SADError as e:
            if e.loc is None:
                e.loc = self.loc(node)
            self.errors.append(e)
            raise _Abort

    def _expr(self, node):
        match node:
            case gast.Constant(value=v):
                return Const(v)
            case gast.Name(id=name):
                return self.name_load(name, node)
            case gast.BinOp(left=l, op=op, right=r):
                fn = BINOPS[type(op)]
                return self.call_value(fn, [self.expr(l), self.expr(r)], [], node)
            case gast.UnaryOp(op=op, operand=x):
                v = self.expr(x)
                if isinstance(op, gast.USub) and isinstance(v, Const) and \
                        isinstance(v.value, (int, float, complex)) and \
                        not isinstance(v.value, bool):
                    return Const(-v.value)
                return self.call_value(UNOPS[type(op)], [v], [], node)
            case gast.BoolOp(op=op, values=values):
                return self.lower_boolop(op, values, node)
            case gast.Compare(left=left, ops=ops, comparators=comps):
                return self.lower_compare(left, ops, comps, node)
            case gast.IfExp(test=test, body=body, orelse=orelse):
                return self.lower_ifexp(test, body, orelse, node)
            case gast.Call():
                return self.lower_call(node)
            case gast.Attribute(value=base, attr=attr):
                return self.lower_attribute(base, attr, node)
            case gast.Subscript(value=base, slice=index):
                return self.lower_subscript(base, index, node)
            case gast.Tuple(elts=elts):
                return StaticSeq(tuple(self.expr(e) for e in self._no_starred(elts)))
            case gast.List(elts=elts):
                return StaticSeq(tuple(self.expr(e) for e in self._no_starred(elts)), True)
            case gast.Slice(lower=lo, upper=hi, step=st):
                parts = [self.materialize(self.expr(p)) if p is not None else Const(None)
                         for p in (lo, hi, st)]
                if all(isinstance(p, Const) for p in parts):
                    return Const(slice(*(p.value for p in parts)))
                return self.emit(slice, parts, hint="_s", node=node)
            case gast.Lambda():
                self.error(UnsupportedSyntaxError, "`lambda` is not supported", node,
                           "define a helper function at module level")
            case gast.ListComp() | gast.SetComp() | gast.DictComp() | gast.GeneratorExp():
                self.error(UnsupportedSyntaxError, "comprehensions are not supported", node,
                           "write a `for` loop, or use a vectorised NumPy expression")
            case gast.Yield() | gast.YieldFrom() | gast.Await():
                self.error(UnsupportedSyntaxError, f"`{type(node).__name__.lower()}` is not "
                           "supported", node, "return a value instead")
            case gast.NamedExpr():
                self.error(UnsupportedSyntaxError, "the walrus operator `:=` is not supported",
                           node, "assign in a separate statement")
            case gast.Dict() | gast.Set():
                self.error(UnsupportedSyntaxError, "dict and set literals are not supported",
                           node, "use tuples or arrays")
            case gast.JoinedStr() | gast.FormattedValue():
                self.error(UnsupportedSyntaxError, "f-strings are not supported", node)
            case gast.Starred():
                self.error(UnsupportedSyntaxError, "starred expressions are not supported", node)
            case _:
                self.error(UnsupportedSyntaxError, f"`{type(node).__name__}` expressions are not "
                           "supported", node)
        raise _Abort

    def _no_starred(self, elts):
        for e in elts:
            if isinstance(e, gast.Starred):
                self.error(UnsupportedSyntaxError, "starred expressions are not supported", e,
                           "list the items explicitly")
                raise _Abort
        return elts

    def lower_boolop(self, op, values, node):
        # `a and b` is `b if a else a`; `a or b` is `a if a else b` (short-circuit kept)
        left = self.materialize(self.expr(values[0]))
        for rest in values[1:]:
            env0 = dict(self.scope.env)
            stmts, right = self.sub_block(lambda r=rest: self.materialize(self.expr(r)))
            self.scope.env = env0
            out = self.fresh("_b")
            if isinstance(op, gast.And):
                blk_t, blk_f = Block(tuple(stmts), (right,)), Block((), (left,))
            else:
                blk_t, blk_f = Block((), (left,)), Block(tuple(stmts), (right,))
            self.stmts.append(If(left, blk_t, blk_f, (out,), self.loc(node)))
            left = out
        return left

    def lower_compare(self, left, ops, comps, node):
        lv = self.expr(left)
        result = None
        for op, comp in zip(ops, comps):
            rv = self.expr(comp)
            if isinstance(op, (gast.In, gast.NotIn)):
                c = self.call_value(operator.contains, [rv, lv], [], node)
                if isinstance(op, gast.NotIn):
                    c = self.call_value(operator.not_, [c], [], node)
            else:
                c = self.call_value(CMPOPS[type(op)], [lv, rv], [], node)
            result = c if result is None else self.call_value(operator.and_, [result, c], [],
                                                              node)
            lv = rv
        return result

    def lower_ifexp(self, test, body, orelse, node):
        cond = self.materialize(self.expr(test))
        env0 = dict(self.scope.env)
        ts, tv = self.sub_block(lambda: self.materialize(self.expr(body)))
        self.scope.env = dict(env0)
        es, ev = self.sub_block(lambda: self.materialize(self.expr(orelse)))
        self.scope.env = env0
        out = self.fresh("_v")
        self.stmts.append(If(cond, Block(tuple(ts), (tv,)), Block(tuple(es), (ev,)), (out,),
                             self.loc(node)))
        return out

    def lower_attribute(self, base, attr, node):
        bv = self.expr(base)
        if isinstance(bv, Static):
            try:
                obj = getattr(bv.obj, attr)
            except AttributeError:
                self.error(NameResolutionError, f"`{bv.name}` has no attribute `{attr}`", node)
                raise _Abort
            return self.global_value(obj, f"{bv.name}.{attr}")
        if isinstance(bv, StaticSeq):
            self.error(UnsupportedSyntaxError, f"attribute `{attr}` of a tuple or list literal",
                       node)
            raise _Abort
        if attr in ARRAY_ATTRS:
            return self.call_value(prims.Attr(attr), [bv], [], node, "_" + attr.lower())
        self.error(UnsupportedSyntaxError, f"attribute `.{attr}` is not supported on a value",
                   node, f"supported attributes: {', '.join(sorted(ARRAY_ATTRS))}")
        raise _Abort

    def lower_subscript(self, base, index, node):
        bv = self.expr(base)
        iv = self.expr(index)
        if isinstance(bv, StaticSeq) and isinstance(iv, Const) and \
                isinstance(iv.value, (int, slice)):
            if isinstance(iv.value, int):
                try:
                    return bv.items[iv.value]
                except IndexError:
                    self.error(UnsupportedSyntaxError, "tuple index out of range", node)
                    raise _Abort
            return StaticSeq(bv.items[iv.value], bv.is_list)
        if isinstance(bv, Static) and isinstance(iv, Const):
            try:
                return self.global_value(bv.obj[iv.value], f"{bv.name}[{iv.value!r}]")
            except Exception:
                pass
        return self.call_value(operator.getitem, [bv, iv], [], node)

    # -- calls --------------------------------------------------------------

    def lower_call(self, node):
        func = node.func
        # method calls on runtime values: x.sum(axis=0) -> np.sum(x, axis=0)
        if isinstance(func, gast.Attribute):
            recv = self.expr(func.value)
            if not isinstance(recv, Static):
                return self.lower_method(recv, func.attr, node)
            try:
                callee = Static(getattr(recv.obj, func.attr), f"{recv.name}.{func.attr}")
            except AttributeError:
                self.error(NameResolutionError, f"`{recv.name}` has no attribute `{func.attr}`",
                           func)
                raise _Abort
        else:
            callee = self.expr(func)
        args, kwargs = self.call_args(node)
        if not isinstance(callee, Static):
            self.error(MissingRuleError, "cannot call a value computed inside the function",
                       node, "call functions by their name")
            raise _Abort
        return self.call_value(callee.obj, args, kwargs, node, name=callee.name)

    def call_args(self, node):
        args = []
        for a in node.args:
            if isinstance(a, gast.Starred):
                self.error(UnsupportedSyntaxError, "`*args` in a call is not supported", a,
                           "pass each argument explicitly")
                raise _Abort
            args.append(self.expr(a))
        kwargs = []
        for k in node.keywords:
            if k.arg is None:
                self.error(UnsupportedSyntaxError, "`**kwargs` in a call is not supported", k,
                           "pass each keyword argument explicitly")
                raise _Abort
            kwargs.append((k.arg, self.expr(k.value)))
        return args, kwargs

    def lower_method(self, recv, name, node):
        args, kwargs = self.call_args(node)
        fn = ARRAY_METHODS.get(name)
        if fn is None:
            self.error(UnsupportedSyntaxError, f"method `.{name}()` is not supported", node.func,
                       f"call the NumPy function instead (np.{name}(x, ...)) if it exists")
            raise _Abort
        if fn == "astype":
            fn = prims.astype
        elif fn == "item":
            fn = prims.item
        if name in VARARG_SHAPE_METHODS and len(args) > 1:
            args = [StaticSeq(tuple(args))]
        return self.call_value(fn, [recv] + args, kwargs, node)

    def call_value(self, fn, args, kwargs, node, hint=None, name=None):
        """Emit a call of the object `fn`: a primitive, or an inlined user function."""
        if self.table.is_primitive(fn):
            a = [self.materialize(v) for v in args]
            k = [(n, self.materialize(v)) for n, v in kwargs]
            return self.emit(fn, a, k, hint=hint or "_t", node=node)
        if isinstance(fn, types.FunctionType):
            return self.inline_call(fn, args, kwargs, node)
        if prims.is_derivative(fn):
            return self.inline_derivative(fn, args, kwargs, node)
        if fn is range:
            self.error(UnsupportedSyntaxError, "range() is only supported as the iterable of a "
                       "`for` loop", node, "use np.arange for an array of numbers")
            raise _Abort
        label = name or getattr(fn, "__qualname__", None) or repr(fn)
        self.error(MissingRuleError, f"no derivative rule for `{label}` and its source cannot "
                   "be inlined", node,
                   f"register rules with @s2sad.defjvp({label}) and @s2sad.defvjp({label}), "
                   f"or mark it non-differentiable with s2sad.def_nondiff({label})")
        raise _Abort

    def bind(self, fn, args, kwargs, node):
        """(signature, arguments with defaults applied) of a call of the user's `fn`."""
        try:
            sig = inspect.signature(fn)
            bound = sig.bind(*args, **dict(kwargs))
        except TypeError as e:
            self.error(UnsupportedSyntaxError, f"call of `{fn.__name__}` does not match its "
                       f"signature: {e}", node)
            raise _Abort
        bound.apply_defaults()
        return sig, bound

    def recursive_call(self, fn, args, kwargs, node):
        """Recursion is not inlined: a call that the derivative code makes to the derivative
        of the same function (see prims.RecursiveCall)."""
        sig, bound = self.bind(fn, args, kwargs, node)
        positional, keywords = [], []
        for pname, p in sig.parameters.items():
            value = bound.arguments[pname]
            if not isinstance(value, (Var, Const, StaticSeq, Static)):
                value = self.global_value(value, pname)
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                positional.append(self.materialize(value))
            elif p.kind is p.KEYWORD_ONLY:
                keywords.append((pname, self.materialize(value)))
            else:
                self.error(UnsupportedSyntaxError, "recursion through *args or **kwargs", node)
                raise _Abort
        return self.emit(prims.RecursiveCall(fn), positional, keywords,
                         hint=fn.__name__ + "_value", node=node)

    def inline_derivative(self, d, args, kwargs, node):
        """A call of a function the user already transformed: inline its derivative's IR.

        The IR is the generic one (no argument kinds are known while lowering); the
        specialisation of the enclosing derivative makes it concrete.
        """
        from s2sad.ir.builder import substitute_block

        if kwargs:
            self.error(UnsupportedSyntaxError, "keyword arguments to a transformed function "
                       "are not supported here", node, "pass them positionally")
            raise _Abort
        try:
            ir = derivative_hook.as_function(d)
        except S2SADError as e:
            e.loc = e.loc or self.loc(node)
            self.errors.append(e)
            raise _Abort
        if len(args) != len(ir.params):
            self.error(UnsupportedSyntaxError, f"`{d.__name__}` takes {len(ir.params)} "
                       f"arguments, got {len(args)}", node)
            raise _Abort
        mapping = {p: self.materialize(a) for p, a in zip(ir.params, args)}
        block = substitute_block(ir.body, mapping, self, loc=self.loc(node))
        self.stmts.extend(block.stmts)
        res = block.results
        return StaticSeq(tuple(res)) if ir.returns_tuple else res[0]

    def inline_call(self, fn, args, kwargs, node):
        if fn in self.inline_stack:
            return self.recursive_call(fn, args, kwargs, node)
        try:
            parsed = parse_function(fn)
        except S2SADError as e:
            e.loc = e.loc or self.loc(node)
            self.errors.append(e)
            raise _Abort
        sig, bound = self.bind(fn, args, kwargs, node)
        scope = Scope(parsed)
        for pname, value in bound.arguments.items():
            if not isinstance(value, (Var, Const, StaticSeq, Static)):
                value = self.global_value(value, pname)
            scope.env[pname] = value
        saved_scope = self.scope
        self.scope = scope
        self.inline_stack.append(fn)
        n_errors = len(self.errors)
        try:
            self._check_signature(parsed.node)
            body = list(parsed.node.body)
            if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value,
                                                                      gast.Constant):
                body = body[1:]
            out = self.lower_stmts(normalize_exits(body), in_loop=False)
            if out is None:
                if len(self.errors) == n_errors:
                    self.error(UnsupportedSyntaxError, f"helper `{fn.__name__}` does not return "
                               "a value on every path", parsed.node,
                               "end the helper with `return <value>`")
                raise _Abort
            return out
        finally:
            self.inline_stack.pop()
            self.scope = saved_scope


FRESH_FNS = {
    np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
    np.full_like, np.array, np.copy, np.arange, np.linspace, np.eye, np.identity,
    np.concatenate, np.stack, np.vstack, np.hstack, np.outer, np.diag, prims.index_update,
    prims.index_add, operator.add, operator.sub, operator.mul, operator.truediv,
    operator.pow, operator.neg, operator.matmul, np.dot, np.matmul, np.cumsum, np.cumprod,
}
VIEW_FNS = {
    operator.getitem, np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis,
    np.expand_dims, np.squeeze, np.broadcast_to, np.asarray, np.atleast_1d, np.atleast_2d,
    prims.Attr("T"), prims.Attr("real"), prims.Attr("imag"),
}


def _writes_into(stmts, p) -> bool:
    """Does a statement (at any depth) write into the array `p` (a[i] = v, np.add.at)?"""
    from s2sad.ir.nodes import blocks_of

    for st in stmts:
        if isinstance(st, Call) and st.fn in (prims.index_update, prims.index_add) and \
                st.args and st.args[0] == p:
            return True
        for inner in blocks_of(st):
            if _writes_into(inner.stmts, p):
                return True
    return False


def _holds(value, var, view_base) -> bool:
    """Does the lowered value refer to `var` (itself, a view of it, or inside a tuple)?"""
    if isinstance(value, Var):
        return value == var or view_base.get(value) == var
    if isinstance(value, StaticSeq):
        return any(_holds(v, var, view_base) for v in value.items)
    return False


def _loads(node, name) -> bool:
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load):
            return True
    return False


def _is_add_at(obj) -> bool:
    try:
        return obj == np.add.at
    except Exception:
        return False


def _creates_array(fn) -> bool:
    """Does `fn` return a new array (never a view of an argument)?"""
    try:
        if fn in FRESH_FNS:
            return True
    except TypeError:
        return False
    return isinstance(fn, np.ufunc) and fn.signature is None


class _Abort(Exception):
    """Abandon the current statement after an error was recorded."""


@dataclass(frozen=True)
class _Undefined:
    name: str


@dataclass(frozen=True)
class _Poisoned:
    """A name whose assignment failed with a reported error."""

    name: str


class derivative_hook:  # noqa: N801 - a namespace holding the hook the driver installs
    """How lowering gets the IR of a derivative object called inside a function.

    The compile driver (s2sad.transform), a layer above, installs `as_function`: a
    derivative object -> its generic IR as a function of the derivative's arguments.
    """

    @staticmethod
    def as_function(d) -> Function:
        raise NonDifferentiableError(f"cannot inline {d!r}: no compiler driver is loaded")


def lower(func, table) -> Function:
    """Lower the Python function `func` to IR, using `table` to recognise primitives."""
    return Lowerer(table).lower_function(func)


__all__ = ["lower", "Lowerer", "Static", "StaticSeq", "builtins", "math", "always_exits"]
