"""Lowering calls: primitives, array methods, the user's helpers (inlined), recursion (a
call of the derivative itself) and derivative objects called inside a function.
"""

from __future__ import annotations

import functools
import inspect
import operator
import types
import weakref

import gast
import numpy as np

from s2sad.errors import (
    MissingRuleError,
    NameResolutionError,
    NonDifferentiableError,
    S2SADError,
    UnsupportedSyntaxError,
)
from s2sad.frontend.aliasing import output_argument
from s2sad.frontend.guards import is_library
from s2sad.frontend.normalize import assigned_names, lift_loop_returns, normalize_exits
from s2sad.frontend.source import parse_function
from s2sad.frontend.values import (
    ARRAY_METHODS,
    VARARG_SHAPE_METHODS,
    Abort,
    LocalFunction,
    Record,
    Scope,
    Static,
    StaticDict,
    StaticSeq,
    Zipped,
)
from s2sad.ir import prims
from s2sad.ir.nodes import Call, Const, Function, Var


class CallLowering:
    """Methods of `Lowerer` (s2sad.frontend.lower): calls."""

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
                raise Abort
        else:
            callee = self.expr(func)
        args, kwargs = self.call_args(node)
        if isinstance(callee, LocalFunction):
            return self.inline_local(callee, args, kwargs, node)
        if not isinstance(callee, Static):
            self.error(MissingRuleError, "cannot call a value computed inside the function",
                       node, "call functions by their name")
            raise Abort
        return self.call_value(callee.obj, args, kwargs, node, name=callee.name)

    def call_args(self, node):
        args = []
        for a in node.args:
            if isinstance(a, gast.Starred):
                self.error(UnsupportedSyntaxError, "`*args` in a call is not supported", a,
                           "pass each argument explicitly")
                raise Abort
            args.append(self.expr(a))
        kwargs = []
        for k in node.keywords:
            if k.arg is None:
                self.error(UnsupportedSyntaxError, "`**kwargs` in a call is not supported", k,
                           "pass each keyword argument explicitly")
                raise Abort
            kwargs.append((k.arg, self.expr(k.value)))
        return args, kwargs

    def lower_method(self, recv, name, node):
        args, kwargs = self.call_args(node)
        if isinstance(recv, StaticDict):
            return self.dict_method(recv, name, args, kwargs, node)
        fn = ARRAY_METHODS.get(name)
        if fn is None:
            # a method of a run-time object (rng.normal(size=3) of a np.random.Generator):
            # called as it is where no derivative reaches it, else this is the refusal
            error = UnsupportedSyntaxError(
                f"method `.{name}()` is not supported on a differentiated value",
                self.loc(node.func), f"call the NumPy function instead (np.{name}(x, ...)) "
                                     f"if it exists")
            if isinstance(recv, Var):
                out = self.opaque_call(prims.MethodCall(name), [recv] + list(args), kwargs,
                                       node, [error], len(self.stmts))
                if out is not None:
                    return out
            self.errors.append(error)
            raise Abort
        if fn == "astype":
            fn = prims.astype
        elif fn == "item":
            fn = prims.item
        if name in VARARG_SHAPE_METHODS and len(args) > 1:
            args = [StaticSeq(tuple(args))]
        return self.call_value(fn, [recv] + args, kwargs, node)

    def call_value(self, fn, args, kwargs, node, hint=None, name=None):
        """Emit a call of the object `fn`: a primitive, or an inlined user function."""
        if isinstance(fn, functools.partial):
            # f called with the arguments the partial object stores first (constants of
            # the derivative, like a global's; a keyword given at the call wins)
            label = name or "partial"
            given = {k for k, _ in kwargs}
            stored = [self.global_value(a, f"{label}.args[{i}]") for i, a in enumerate(fn.args)]
            keywords = [(k, self.global_value(v, f"{label}.keywords[{k!r}]"))
                        for k, v in fn.keywords.items() if k not in given]
            return self.call_value(fn.func, stored + list(args), keywords + list(kwargs), node,
                                   hint)
        call = getattr(type(fn), "__call__", None)
        if isinstance(call, types.FunctionType) and not isinstance(fn, type) and \
                not self.table.is_primitive(fn) and not prims.is_derivative(fn) and \
                not is_library(call):
            # an object with a `__call__` written in Python: that method, bound to it
            return self.call_value(types.MethodType(call, fn), args, kwargs, node, hint, name)
        if (fn is max or fn is min) and len(args) == 1 and not kwargs:
            return self.extreme_of(fn, args[0], node, name)
        if fn is len and len(args) == 1 and isinstance(args[0], StaticDict):
            return Const(len(args[0].keys))
        if (fn is operator.add or fn is operator.mul) and len(args) == 2 and not kwargs:
            seq = self.sequence_arithmetic(fn, args[0], args[1], node)
            if seq is not None:
                return seq
        if self.table.is_primitive(fn):
            written = output_argument(fn, args, kwargs)
            if written is not None:
                self.error(UnsupportedSyntaxError, "a call that writes its result into an "
                           f"array it is given: {written}", node,
                           "assign the result to a name instead (`y = np.cumsum(x)`, not "
                           "`np.cumsum(x, out=buf)`)")
                raise Abort
            a = [self.materialize(v) for v in args]
            k = [(n, self.materialize(v)) for n, v in kwargs]
            return self.emit(fn, a, k, hint=hint or "_t", node=node)
        if fn in derivative_hook.transforms:
            return self.static_transform(fn, args, kwargs, node, name)
        if isinstance(fn, types.FunctionType):
            return self.inline_call(fn, args, kwargs, node)
        if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
            # obj.method(...) of a user object: inlined with the object as a constant
            if fn.__func__ in self.inline_stack:
                self.error(UnsupportedSyntaxError, f"the method `{fn.__func__.__qualname__}` "
                           "calls itself", node, "write the recursion as a module-level "
                           "function taking the object's data as arguments")
                raise Abort
            this = Static(fn.__self__, getattr(fn.__self__, "__name__", "self"))
            return self.inline_call(fn.__func__, [this] + list(args), kwargs, node)
        if prims.is_derivative(fn):
            return self.inline_derivative(fn, args, kwargs, node)
        if fn is range or fn is tuple or fn is list:
            return self.static_sequence(fn, args, kwargs, node)
        if fn is zip or fn is enumerate:
            return self.zip_or_enumerate(fn, args, kwargs, node)
        if fn is reversed and len(args) == 1 and not kwargs and \
                not isinstance(args[0], (Zipped, StaticDict)):
            # a tuple written in the function: its items the other way round; an array (its
            # rows), a tuple or list of run time: seq[::-1]
            if isinstance(args[0], StaticSeq):
                return StaticSeq(tuple(reversed(args[0].items)), args[0].is_list)
            return self.emit(operator.getitem, [self.materialize(args[0]),
                                                Const(slice(None, None, -1))],
                             hint="reversed", node=node)
        if isinstance(fn, type) and issubclass(fn, tuple) and \
                isinstance(getattr(fn, "_fields", None), tuple):
            return self.new_record(fn, args, kwargs, node)
        if fn is dict and not args:
            out = StaticDict((), ())
            for k, v in kwargs:
                out = out.with_item(k, v)
            return out

        label = name or getattr(fn, "__qualname__", None) or repr(fn)
        hint = (f"register rules with @s2sad.defjvp({label}) and @s2sad.defvjp({label}), "
                f"or mark it non-differentiable with s2sad.def_nondiff({label})")
        if str(getattr(fn, "__module__", "") or "").startswith("numpy.random"):
            hint = ("draw with the np.random functions (np.random.normal, np.random.rand, "
                    "...; seeded with np.random.seed), or pass the draws in as an argument")
        error = MissingRuleError(f"no derivative rule for `{label}` and its source cannot "
                                 "be inlined", self.loc(node), hint)
        opaque = self.opaque_call(fn, args, kwargs, node, [error], len(self.stmts), name)
        if opaque is None:
            self.errors.append(error)
            raise Abort
        return opaque

    def new_record(self, cls, args, kwargs, node):
        """`Point(x, y=...)` of a namedtuple class: a static tuple read by field."""
        fields = cls._fields
        values = dict(zip(fields, args))
        for k, v in kwargs:
            if k not in fields or k in values:
                self.error(UnsupportedSyntaxError, f"`{cls.__name__}` has no field `{k}` or "
                           f"it is given twice", node)
                raise Abort
            values[k] = v
        defaults = getattr(cls, "_field_defaults", {})
        missing = [f for f in fields if f not in values and f not in defaults]
        if len(args) > len(fields) or missing:
            self.error(UnsupportedSyntaxError, f"`{cls.__name__}` takes the fields "
                       f"{', '.join(fields)}", node)
            raise Abort
        items = tuple(values[f] if f in values else self.global_value(defaults[f], f)
                      for f in fields)
        return Record(items, False, cls)

    def opaque_call(self, fn, args, kwargs, node, errors, n_stmts, spelling=None):
        """A call the compiler cannot read, made as it is at run time (prims.Opaque): its
        `errors` are raised if a differentiated value reaches it. None where an argument is
        not a run-time value (a function defined inside, a dict written in the function)."""
        def plain(v):
            if isinstance(v, StaticSeq):
                return all(plain(i) for i in v.items)
            return isinstance(v, (Var, Const)) or (
                isinstance(v, Static) and not isinstance(v.obj, types.ModuleType))
        if not all(plain(v) for v in list(args) + [v for _, v in kwargs]):
            return None
        del self.stmts[n_stmts:]  # what a failed attempt to inline it emitted
        n_errors = len(self.errors)
        try:
            a = [self.materialize(v) for v in args]
            k = [(n, self.materialize(v)) for n, v in kwargs]
        except Abort:
            del self.errors[n_errors:]
            return None
        name = getattr(fn, "__name__", "value")
        hint = f"{name}_value" if name.isidentifier() else "_t"
        return self.emit(prims.Opaque(fn, errors, self.import_path(spelling)), a, k, hint=hint,
                         node=node)

    def import_path(self, spelling):
        """(module, name) that `spelling` (`sp.gamma`) imports from, when its head is a
        module: how generated code names a function without a `__module__` of its own."""
        if not spelling or "." not in spelling:
            return None
        head, last = spelling.rsplit(".", 1)
        parts = head.split(".")
        obj = self.scope.parsed.globals.get(parts[0])
        for part in parts[1:]:
            obj = getattr(obj, part, None)
        return (obj.__name__, last) if isinstance(obj, types.ModuleType) else None

    def bind(self, fn, args, kwargs, node):
        """(signature, arguments with defaults applied) of a call of the user's `fn`."""
        try:
            sig = inspect.signature(fn)
            bound = sig.bind(*args, **dict(kwargs))
        except TypeError as e:
            self.error(UnsupportedSyntaxError, f"call of `{fn.__name__}` does not match its "
                       f"signature: {e}", node)
            raise Abort
        bound.apply_defaults()
        return sig, bound

    def recursive_call(self, fn, args, kwargs, node, call=prims.RecursiveCall):
        """Recursion is not inlined: a call that the derivative code makes to the derivative
        of the same function (see prims.RecursiveCall; a helper marked @s2sad.checkpoint
        is called the same way, as a prims.CheckpointedCall)."""
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
                raise Abort
        name = fn.__name__ if fn.__name__.isidentifier() else "helper"  # (a lambda)
        return self.emit(call(fn), positional, keywords, hint=name + "_value", node=node)

    def inline_derivative(self, d, args, kwargs, node):
        """A call of a function the user already transformed: inline its derivative's IR.

        The IR is the generic one (no argument kinds are known while lowering); the
        specialisation of the enclosing derivative makes it concrete.
        """
        from s2sad.ir.builder import substitute_block

        if kwargs:
            self.error(UnsupportedSyntaxError, "keyword arguments to a transformed function "
                       "are not supported here", node, "pass them positionally")
            raise Abort
        # the defaults the call leaves out, and the derivative serving it (a JVP's
        # tangents follow the arguments given: docs/guards.md), as a call outside binds it
        plan = d._positional_call(len(args))
        if plan is not None:
            d, k, defaults = plan
            args = list(args[:k]) + [self.global_value(v, f"{d.__name__}_default")
                                     for v in defaults] + list(args[k:])
        views = tuple(structure_of(a) for a in args)
        try:
            ir = derivative_hook.as_function(d, views)
        except S2SADError as e:
            e.loc = e.loc or self.loc(node)
            self.errors.append(e)
            raise Abort
        if len(args) != len(ir.params):
            self.error(UnsupportedSyntaxError, f"`{d.__name__}` takes {len(ir.params)} "
                       f"arguments, got {len(args)}", node)
            raise Abort
        mapping = {p: self.materialize(flat_values(a)) for p, a in zip(ir.params, args)}
        block = substitute_block(ir.body, mapping, self, loc=self.loc(node))
        self.stmts.extend(block.stmts)
        res = block.results
        out = StaticSeq(tuple(res)) if ir.returns_tuple else res[0]
        if any(v is not None for v in views) and d.mode in ("grad", "value_and_grad", "hvp"):
            out = self.structured_result(d, out, views, node)
        return out

    def structured_result(self, d, out, views, node):
        """A gradient taken inside the function with respect to a dict or namedtuple: read
        by key or field, as the argument was (the generated code has it as a tuple)."""
        wrt = d._resolve()

        def one(value, i):
            if views[i] is None or not isinstance(value, Var):
                return value
            return self.structured(value, views[i], f"_bar{i}", node)

        def grads(g):
            if d._wrt_tuple:
                return StaticSeq(tuple(one(v, i) for v, i in zip(g.items, wrt)))
            return one(g, wrt[0])
        if d.mode == "value_and_grad":
            return StaticSeq((out.items[0], grads(out.items[1])))
        return grads(out)

    def inline_call(self, fn, args, kwargs, node):
        if fn in self.inline_stack:
            return self.recursive_call(fn, args, kwargs, node)
        if getattr(fn, "__s2sad_checkpoint__", False):  # @s2sad.checkpoint: not inlined
            return self.recursive_call(fn, args, kwargs, node, prims.CheckpointedCall)
        try:
            parsed = parse_function(fn)
        except S2SADError as e:
            e.loc = e.loc or self.loc(node)
            self.errors.append(e)
            raise Abort
        sig, bound = self.bind(fn, args, kwargs, node)
        scope = Scope(parsed)
        for pname, value in bound.arguments.items():
            if sig.parameters[pname].kind is inspect.Parameter.VAR_POSITIONAL:
                value = StaticSeq(tuple(value))  # *args: the call fixes their number
            elif not isinstance(value, (Var, Const, StaticSeq, StaticDict, Static, LocalFunction)):
                value = self.global_value(value, pname)
            scope.env[pname] = value
        body = _without_docstring(parsed.node.body)
        n_errors, n_stmts = len(self.errors), len(self.stmts)
        entered = self.library_entry is None and is_library_function(fn)
        if entered:
            self.library_entry = (self.loc(node), fn)
        try:
            out = self.lower_inlined(body, scope, fn, parsed.node, (
                f"helper `{fn.__name__}` does not return a value on every path",
                "end the helper with `return <value>`"))
        except Abort:
            out = None
        finally:
            if entered:
                self.library_entry = None
        if len(self.errors) > n_errors:
            errors = self.errors[n_errors:]
            if is_library_function(fn):
                errors = [self.library_refusal(fn, errors, node)]
            del self.errors[n_errors:]
            # called as it is where no derivative reaches it (the errors are raised if one
            # does); a call of something that is not a run-time value is refused now
            opaque = self.opaque_call(fn, args, kwargs, node, errors, n_stmts)
            if opaque is not None:
                return opaque
            self.errors.extend(errors)
        if out is None:
            raise Abort
        return out

    def library_refusal(self, fn, errors, node):
        """A library function that cannot be inlined: one error at the user's call, naming
        what in the library stops it (the library's own lines as a note)."""
        first = errors[0]
        where = f" ({first.loc.filename}:{first.loc.lineno})" if first.loc is not None else ""
        label = f"{getattr(fn, '__module__', '') or ''}.{fn.__qualname__}".lstrip(".")
        loc, inside, ruled = self.loc(node), "", label
        if self.library_entry is not None and self.library_entry[1] is not fn:
            # called by library code the user's call led into (the error is reported at the
            # user's call: see Loc.called_from), whose function is the one to give rules to
            outer = self.library_entry[1]
            inside = f", called by `{getattr(outer, '__qualname__', outer)}`"
            ruled = f"{getattr(outer, '__module__', '') or ''}." \
                    f"{getattr(outer, '__qualname__', outer)}".lstrip(".")
        return MissingRuleError(
            f"cannot differentiate through the library function `{label}`{inside}: its source "
            f"cannot be inlined ({first.message}{where}"
            + (f", and {len(errors) - 1} more" if len(errors) > 1 else "") + ")",
            loc,
            f"compute it with NumPy functions that have rules, or register rules with "
            f"@s2sad.defjvp({ruled}) and @s2sad.defvjp({ruled})")

    def lower_inlined(self, body, scope, key, fnode, missing_return):
        """Lower the body of an inlined function (a helper, a lambda, a nested `def`) in its
        own scope; the value it returns."""
        saved_scope = self.scope
        scope.caller = saved_scope
        self.scope = scope
        self.inline_stack.append(key)
        n_errors = len(self.errors)
        try:
            if not isinstance(fnode, gast.Lambda):
                self._check_signature(fnode, varargs=isinstance(key, types.FunctionType))
            out = self.lower_stmts(normalize_exits(lift_loop_returns(body)), in_loop=False)
            if out is None:
                if len(self.errors) == n_errors:
                    self.error(UnsupportedSyntaxError, missing_return[0], fnode,
                               missing_return[1])
                raise Abort
            return out
        finally:
            self.inline_stack.pop()
            self.scope = saved_scope


    def sequence_arithmetic(self, fn, a, b, node):
        """`a + b` and `a * n` on tuples and lists: concatenation and repetition, done while
        compiling (the items are the same values); None when neither is a sequence. A list
        grown at run time is refused: its `+` would reach the arithmetic rules."""
        if not self.grown and type(a) is Var and (type(b) is Var or (
                type(b) is Const and type(b.value) not in (tuple, list))):
            return None  # (the common case, arithmetic on values: no sequence to see)
        a, b = self.static_seq(a), self.static_seq(b)
        for v in (a, b):
            if isinstance(v, Var) and v in self.grown:
                self.error(UnsupportedSyntaxError, "`+` or `*` of a list built at run time "
                           "(appended to in a loop) is not supported", node,
                           "append the items to it one by one (`ys.append(y)`), or build an "
                           "array with np.stack")
                raise Abort
        if fn is operator.add and isinstance(a, StaticSeq) and isinstance(b, StaticSeq):
            if a.is_list != b.is_list:
                self.error(UnsupportedSyntaxError, "cannot concatenate a list and a tuple",
                           node, "convert one with list(...) or tuple(...)")
                raise Abort
            return StaticSeq(a.items + b.items, a.is_list)
        if fn is operator.mul:
            seq, n = (a, b) if isinstance(a, StaticSeq) else (b, a)
            if isinstance(seq, StaticSeq) and isinstance(n, Const) and \
                    isinstance(n.value, (int, np.integer)) and not isinstance(n.value, bool):
                return StaticSeq(seq.items * int(n.value), seq.is_list)
        return None

    def static_seq(self, v):
        """A tuple or list constant as a StaticSeq of constants (else `v` itself)."""
        obj = v.obj if isinstance(v, Static) else v.value if isinstance(v, Const) else None
        if type(obj) in (tuple, list):
            return StaticSeq(tuple(Const(o) for o in obj), type(obj) is list)
        return v

    def static_sequence(self, fn, args, kwargs, node):
        """`range(...)`, `tuple(...)`, `list(...)` as values: a range of constants is a static
        tuple; a range of run-time integers is the tuple it holds (static integer data, known
        once the function is specialised, like a shape); tuple() and list() convert a tuple
        or list the function built."""
        if kwargs or (fn is range and not 1 <= len(args) <= 3) or \
                (fn is not range and len(args) > 1):
            self.error(UnsupportedSyntaxError, f"this call of {fn.__name__}() is not supported",
                       node)
            raise Abort
        if fn is range:
            if all(isinstance(a, Const) and type(a.value) is int for a in args):
                return StaticSeq(tuple(Const(i) for i in range(*(a.value for a in args))))
            return self.emit(prims.int_range, [self.materialize(a) for a in args],
                             hint="_r", node=node)
        if not args:
            return StaticSeq((), fn is list)
        value = args[0]
        if isinstance(value, StaticSeq):
            return StaticSeq(value.items, fn is list)
        if isinstance(value, Const) and isinstance(value.value, (tuple, list)):
            return StaticSeq(tuple(Const(v) for v in value.value), fn is list)
        if fn is tuple and isinstance(value, Var) and self.int_tuple(value):
            return value
        self.error(UnsupportedSyntaxError, f"{fn.__name__}() of a value computed at run time "
                   "is not supported", node,
                   "build the tuple or list from its items, or use the array itself")
        raise Abort

    def dict_method(self, d, name, args, kwargs, node):
        """keys(), values(), items(), get(key[, default]) of a dict written in the function."""
        if name == "keys" and not args:
            return StaticSeq(tuple(Const(k) for k in d.keys))
        if name == "values" and not args:
            return StaticSeq(d.values)
        if name == "items" and not args:
            return StaticSeq(tuple(StaticSeq((Const(k), v)) for k, v in zip(d.keys, d.values)))
        if name == "get" and 1 <= len(args) <= 2 and not kwargs and isinstance(args[0], Const):
            try:
                return d.get(args[0].value)
            except KeyError:
                return args[1] if len(args) == 2 else Const(None)
        self.error(UnsupportedSyntaxError, f"the dict method `.{name}()` is not supported here",
                   node, "use keys(), values(), items(), get() or indexing")
        raise Abort

    def extreme_of(self, fn, seq, node, name):
        """max(iterable) / min(iterable): of a tuple or list the function built, pairwise
        (max(max(a, b), c)); of an array, refused with the NumPy spelling."""
        if isinstance(seq, StaticSeq) and seq.items:
            out = seq.items[0]
            for item in seq.items[1:]:
                out = self.call_value(fn, [out, item], [], node, name=name)
            return out
        self.error(UnsupportedSyntaxError, f"{fn.__name__}() of one iterable is supported for "
                   "a tuple or list written in the function", node,
                   f"for an array use np.{'max' if fn is max else 'min'}(x)")
        raise Abort

    def zip_or_enumerate(self, fn, args, kwargs, node):
        """zip/enumerate of tuples the function built: a static tuple of tuples; of arrays or
        other run-time sequences: a Zipped, for the `for` loop that iterates it."""
        start = 0
        if fn is enumerate:
            if len(args) == 2 and not kwargs:
                args, kwargs = args[:1], [("start", args[1])]
            if len(args) != 1 or any(k != "start" for k, _ in kwargs):
                self.error(UnsupportedSyntaxError, "enumerate() takes one iterable and "
                           "`start`", node)
                raise Abort
            if kwargs:
                first = kwargs[0][1]
                if not (isinstance(first, Const) and type(first.value) is int):
                    self.error(UnsupportedSyntaxError, "enumerate(start=...) must be a "
                               "constant integer", node)
                    raise Abort
                start = first.value
        elif kwargs or not args:
            self.error(UnsupportedSyntaxError, "zip() takes one or more iterables and no "
                       "keywords", node)
            raise Abort
        if all(isinstance(a, StaticSeq) for a in args):
            rows = zip(*(a.items for a in args))
            if fn is enumerate:
                return StaticSeq(tuple(StaticSeq((Const(start + i), item))
                                       for i, (item,) in enumerate(rows)))
            return StaticSeq(tuple(StaticSeq(row) for row in rows))
        if start:
            self.error(UnsupportedSyntaxError, "enumerate(start=...) of an array is not "
                       "supported", node, "add the offset to the index in the loop body")
            raise Abort
        if fn is enumerate and isinstance(args[0], Zipped) and not args[0].counted:
            return Zipped(args[0].seqs, True, grouped=True)  # for i, (a, b) in enumerate(zip(..))
        return Zipped(tuple(self.materialize(a) for a in args), fn is enumerate)

    def int_tuple(self, v) -> bool:
        """Is `v` the result of `range(...)` with run-time bounds (a tuple of integers)?"""
        return any(isinstance(st, Call) and st.target == v and st.fn is prims.int_range
                   for st in self.stmts)

    def static_transform(self, fn, args, kwargs, node, name):
        """`s2sad.grad(f, wrt=1)` inside the function: made at compile time (its arguments
        are functions and constants), so that the call of the derivative is inlined."""
        def known(v):
            if isinstance(v, Static):
                return v.obj
            if isinstance(v, Const):
                return v.value
            if isinstance(v, StaticSeq) and all(isinstance(i, Const) for i in v.items):
                return tuple(i.value for i in v.items)
            what = ("a function defined inside the differentiated function"
                    if isinstance(v, LocalFunction) else "a value computed at run time")
            self.error(UnsupportedSyntaxError, f"`{name or 'the transform'}` is given {what}; "
                       "a derivative taken inside a function needs a function defined at "
                       "module level (or passed in) and constant options", node,
                       "define the function to differentiate at module level and select "
                       "the argument with wrt=")
            raise Abort
        try:
            made = fn(*[known(a) for a in args], **{k: known(v) for k, v in kwargs})
        except S2SADError as e:
            e.loc = self.loc(node)
            self.errors.append(e)
            raise Abort
        if callable(made) and not prims.is_derivative(made):
            derivative_hook.transforms.add(made)  # the decorator form: grad(wrt=1)(f)
        return Static(made, name or "derivative")

    # -- functions defined inside the function: lambdas and nested `def`s --------------

    def local_function(self, node, name):
        """A lambda or nested `def` as a compile-time value; its defaults are evaluated
        here, at the definition, as Python does."""
        args = node.args
        self._check_signature(node)
        if args.vararg is not None or args.kwarg is not None:
            raise Abort
        defaults = tuple(self.expr(d) for d in args.defaults)
        kw_defaults = tuple(None if d is None else self.expr(d) for d in args.kw_defaults)
        return LocalFunction(node, self.scope, defaults, kw_defaults, name)

    def define_local(self, s):
        """`def name(...): ...` inside the function."""
        if s.decorator_list:
            self.error(UnsupportedSyntaxError, "a decorated nested function is not supported",
                       s.decorator_list[0], "define the decorated function at module level")
            raise Abort
        self.scope.env[s.name] = self.local_function(s, s.name)

    def bind_local(self, lf, args, kwargs, node) -> dict:
        """Parameter name -> lowered value for a call of a local function."""
        a = lf.node.args
        positional = [p.id for p in list(getattr(a, "posonlyargs", [])) + list(a.args)]
        kwonly = [p.id for p in a.kwonlyargs]
        if len(args) > len(positional):
            self.error(UnsupportedSyntaxError, f"`{lf.name}` takes {len(positional)} "
                       f"positional arguments, got {len(args)}", node)
            raise Abort
        bound = dict(zip(positional, args))
        for k, v in kwargs:
            if k in bound or k not in positional + kwonly:
                self.error(UnsupportedSyntaxError, f"call of `{lf.name}` does not match its "
                           f"signature: unexpected or repeated argument `{k}`", node)
                raise Abort
            bound[k] = v
        for pname, d in zip(positional[len(positional) - len(lf.defaults):], lf.defaults):
            bound.setdefault(pname, d)
        for pname, d in zip(kwonly, lf.kw_defaults):
            if d is not None:
                bound.setdefault(pname, d)
        missing = [p for p in positional + kwonly if p not in bound]
        if missing:
            self.error(UnsupportedSyntaxError, f"call of `{lf.name}` is missing the "
                       f"argument `{missing[0]}`", node)
            raise Abort
        return bound

    def inline_local(self, lf, args, kwargs, node):
        """Inline a call of a lambda or nested `def`: its body is lowered in a scope of its
        own whose free names are read in the scopes that enclose its definition."""
        if lf in self.inline_stack:
            self.error(UnsupportedSyntaxError, f"the nested function `{lf.name}` calls itself",
                       node, "define a recursive function at module level")
            raise Abort
        bound = self.bind_local(lf, args, kwargs, node)
        if isinstance(lf.node, gast.Lambda):
            ret = gast.Return(value=lf.node.body)
            ret.lineno, ret.col_offset = lf.node.body.lineno, lf.node.body.col_offset
            body = [ret]
        else:
            body = _without_docstring(lf.node.body)
        own = frozenset(bound) | frozenset(assigned_names(body))
        scope = Scope(lf.scope.parsed, parent=lf.scope, local_names=own)
        scope.local_node = lf.node
        scope.env.update(bound)
        return self.lower_inlined(body, scope, lf, lf.node, (
            f"nested function `{lf.name}` does not return a value on every path",
            "end it with `return <value>`"))


class derivative_hook:  # noqa: N801 - a namespace holding the hook the driver installs
    """How lowering gets the IR of a derivative object called inside a function.

    The compile driver (s2sad.transform), a layer above, installs `as_function`: a
    derivative object -> its generic IR as a function of the derivative's arguments.
    """

    transforms: weakref.WeakSet = weakref.WeakSet()  # s2sad.grad, s2sad.jvp, ...: made
    # when lowering reaches a call of them (the API registers them)

    @staticmethod
    def as_function(d, views: tuple = ()) -> Function:
        raise NonDifferentiableError(f"cannot inline {d!r}: no compiler driver is loaded")


def structure_of(value):
    """A lowered dict or namedtuple (or a tuple or list holding one) as kinds.structure_view
    describes an argument's structure; None for anything else."""
    if isinstance(value, StaticDict):
        return (("dict", tuple(value.keys)), tuple(structure_of(v) for v in value.values))
    if isinstance(value, Record):
        return (("record", value.cls), tuple(structure_of(v) for v in value.items))
    if isinstance(value, StaticSeq):
        items = tuple(structure_of(v) for v in value.items)
        if any(i is not None for i in items):
            return (("seq", value.is_list), items)
    return None


def flat_values(value):
    """A lowered dict or namedtuple as the tuple of its values (how it is passed)."""
    if isinstance(value, StaticDict):
        return StaticSeq(tuple(flat_values(v) for v in value.values))
    if isinstance(value, StaticSeq) and structure_of(value) is not None:
        return StaticSeq(tuple(flat_values(v) for v in value.items), value.is_list)
    return value


def _without_docstring(body) -> list:
    body = list(body)
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        return body[1:]
    return body


_LIBRARY_DIRS: tuple = ()


def is_library_function(fn) -> bool:
    """Is `fn` defined in the standard library or an installed package (not user code)?"""
    return in_library(getattr(getattr(fn, "__code__", None), "co_filename", ""))


@functools.lru_cache(maxsize=512)
def in_library(filename: str) -> bool:
    """Is this source file part of the standard library or an installed package? (Asked
    for every line lowered while a library function is inlined: cached.)"""
    global _LIBRARY_DIRS
    import os

    if not _LIBRARY_DIRS:
        import sysconfig

        paths = sysconfig.get_paths()
        _LIBRARY_DIRS = tuple(os.path.realpath(paths[k]) + os.sep
                              for k in ("stdlib", "platstdlib", "purelib", "platlib")
                              if k in paths)
    return os.path.realpath(filename).startswith(_LIBRARY_DIRS) if filename else False
