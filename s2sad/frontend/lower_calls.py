"""Lowering calls: primitives, array methods, the user's helpers (inlined), recursion (a
call of the derivative itself) and derivative objects called inside a function.
"""

from __future__ import annotations

import copy
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
from s2sad.frontend.array_facts import (
    array_fact,
    known_dtype_test,
    known_hasattr,
    known_isinstance,
    known_real,
)
from s2sad.frontend.guards import is_library
from s2sad.frontend.library_shims import parse_args_binding, shim_for, unwrapped
from s2sad.frontend.normalize import (
    assigned_names,
    contains,
    lift_loop_returns,
    normalize_exits,
)
from s2sad.frontend.source import parse_function
from s2sad.frontend.values import (
    ARRAY_METHODS,
    VARARG_SHAPE_METHODS,
    Abort,
    LocalFunction,
    ObjectRecord,
    Partial,
    SuperRecord,
    Record,
    Scope,
    Static,
    StaticDict,
    StaticSeq,
    Zipped,
    holds,
    is_simple_constant,
)
from s2sad.ir import prims
from s2sad.ir.nodes import Block, Call, Const, Function, If, Var, blocks_of


# methods of a constant string computed while compiling (an option: metric.lower())
_STR_METHODS = frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "startswith",
                          "endswith", "replace", "casefold", "split", "removeprefix",
                          "removesuffix"})

class CallLowering:
    """Methods of `Lowerer` (s2sad.frontend.lower): calls."""

    def lower_call(self, node):
        func = node.func
        # method calls on runtime values: x.sum(axis=0) -> np.sum(x, axis=0)
        if isinstance(func, gast.Attribute):
            recv = self.expr(func.value)
            if isinstance(recv, (ObjectRecord, SuperRecord)):
                callee = self.record_attribute(recv, func.attr, func)
                args, kwargs = self.call_args(node)
                return self.call_lowered(callee, args, kwargs, node)
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
        return self.call_lowered(callee, args, kwargs, node)

    def call_lowered(self, callee, args, kwargs, node):
        """A call of a lowered callee: a function known while compiling, a lambda or nested
        `def`, or a functools.partial made in the function."""
        if isinstance(callee, LocalFunction):
            return self.inline_local(callee, args, kwargs, node)
        if isinstance(callee, ObjectRecord):  # obj(...): its class's __call__
            return self.call_lowered(self.record_attribute(callee, "__call__", node), args,
                                     kwargs, node)
        if isinstance(callee, Partial):
            given = {k for k, _ in kwargs}
            return self.call_lowered(callee.func, list(callee.args) + list(args),
                                     [(k, v) for k, v in callee.kwargs if k not in given] +
                                     list(kwargs), node)
        if not isinstance(callee, Static):
            self.error(MissingRuleError, "cannot call a value computed inside the function",
                       node, "call functions by their name")
            raise Abort
        fn = callee.obj
        if fn is functools.partial and args:
            return Partial(args[0], tuple(args[1:]), tuple(kwargs))
        if fn in _ITERATION_BUILTINS:
            out = self.iteration_builtin(fn, args, kwargs, node)
            if out is not None:
                return out
        return self.call_value(fn, args, kwargs, node, name=callee.name)

    def new_object(self, cls, args, kwargs, node):
        """`Kernel(ls)` of a class written in Python: a record of its attributes, its
        `__init__` inlined with the record as `self`. None (called as it is, at run time)
        where the class's source cannot be read and no derivative reaches the object."""
        record = ObjectRecord(cls, self.control_depth)
        init = getattr(cls, "__init__", object.__init__)
        if init is object.__init__:
            if args or kwargs:
                self.error(UnsupportedSyntaxError, f"`{cls.__name__}()` takes no arguments",
                           node)
                raise Abort
            return record
        if not isinstance(init, types.FunctionType):
            return None
        n_errors, n_stmts = len(self.errors), len(self.stmts)
        try:
            self.inline_call(init, [record] + list(args), kwargs, node, returns_nothing=True)
        except Abort:
            pass
        if len(self.errors) > n_errors:
            if is_library_function(init):  # (a library's object: made as it is)
                del self.errors[n_errors:]
                del self.stmts[n_stmts:]
                return self.made_while_compiling(cls, args, kwargs, node)
            raise Abort
        return record

    def made_while_compiling(self, cls, args, kwargs, node):
        """A library's object whose `__init__` is not read, made of constants only
        (`sm.families.Poisson()`): made once while compiling and read like a global holding
        it (its methods inlined), as the object the call would make. None (made at run
        time) where an argument is computed. Its methods may not write its attributes (the
        object would keep them from one call to the next: see store_attribute)."""
        items = list(args) + [v for _, v in kwargs]
        if not all(isinstance(v, (Const, Static)) for v in items):
            return None
        value = lambda v: v.value if isinstance(v, Const) else v.obj  # noqa: E731
        try:
            made = cls(*[value(a) for a in args], **{k: value(v) for k, v in kwargs})
        except Exception:  # noqa: BLE001 - made (and failing) where the code runs instead
            return None
        self.made_objects.add(id(made))
        return Static(made, cls.__name__.lower())

    def record_attribute(self, record, attr, node):
        """`obj.attr` of an object made in the function: an attribute it holds, else its
        class's (a method bound to it, a property's value, a class attribute)."""
        if isinstance(record, SuperRecord):
            mro = record.record.cls.__mro__
            classes = mro[mro.index(record.owner) + 1:]
            this = record.record
        else:
            if attr in record.attrs:
                return record.attrs[attr]
            classes, this = record.cls.__mro__, record
        for klass in classes:
            if attr not in vars(klass):
                continue
            found = vars(klass)[attr]
            if isinstance(found, staticmethod):
                return Static(found.__func__, f"{klass.__name__}.{attr}")
            if isinstance(found, classmethod):
                return Partial(Static(found.__func__, f"{klass.__name__}.{attr}"),
                               (Static(this.cls, this.cls.__name__),), ())
            if isinstance(found, property) and found.fget is not None:
                return self.call_lowered(Static(found.fget, attr), [this], [], node)
            if isinstance(found, types.FunctionType):
                return Partial(Static(found, f"{klass.__name__}.{attr}"), (this,), ())
            if found is object.__init__ or klass is object:
                break
            return self.global_value(found, f"{klass.__name__}.{attr}")
        self.error(NameResolutionError, f"`{this.cls.__name__}` object has no attribute "
                   f"`{attr}`", node)
        raise Abort

    def super_of_method(self, node):
        """super() in a method inlined on an object made in the function."""
        method = self.inline_stack[-1] if self.inline_stack else None
        params = list(getattr(getattr(method, "__code__", None), "co_varnames", ()))[:1]
        record = self.scope.env.get(params[0]) if params else None
        if isinstance(record, ObjectRecord):
            for klass in record.cls.__mro__:
                if any(v is method for v in vars(klass).values()):
                    return SuperRecord(record, klass)
        self.error(UnsupportedSyntaxError, "super() outside a method of an object made in "
                   "the function", node, "call the base class's method by name")
        raise Abort

    def iteration_builtin(self, fn, args, kwargs, node):
        """map, filter, sorted and functools.reduce over sequences known while compiling
        (tuples and lists written in the function, a dict's keys): the calls they make,
        unrolled; None where the sequences are known only at run time."""
        def items(v):
            if isinstance(v, StaticSeq):
                return list(v.items)
            if isinstance(v, StaticDict):
                return [Const(k) for k in v.keys]
            return None
        if fn is map and len(args) >= 2 and not kwargs:
            seqs = [items(a) for a in args[1:]]
            if any(q is None for q in seqs):
                return None
            return StaticSeq(tuple(self.call_lowered(args[0], list(group), [], node)
                                   for group in zip(*seqs)))
        if fn is filter and len(args) == 2 and not kwargs:
            seq = items(args[1])
            if seq is None:
                return None
            kept = []
            for item in seq:
                test = item if args[0] is None or (isinstance(args[0], Const) and
                                                   args[0].value is None) else \
                    self.call_lowered(args[0], [item], [], node)
                if not isinstance(test, Const):
                    return None
                if test.value:
                    kept.append(item)
            return StaticSeq(tuple(kept))
        if fn is sorted and len(args) == 1:
            seq = items(args[0])
            options = dict(kwargs)
            if seq is None or not all(isinstance(i, Const) for i in seq) or \
                    set(options) - {"reverse"} or not isinstance(
                        options.get("reverse", Const(False)), Const):
                return None
            order = sorted(seq, key=lambda c: c.value,
                           reverse=bool(options.get("reverse", Const(False)).value))
            return StaticSeq(tuple(order), True)
        if fn is functools.reduce and len(args) in (2, 3) and not kwargs:
            seq = items(args[1])
            if seq is None:
                return None
            if len(args) == 3:
                acc, rest = args[2], seq
            elif seq:
                acc, rest = seq[0], seq[1:]
            else:
                return None
            for item in rest:
                acc = self.call_lowered(args[0], [acc, item], [], node)
            return acc
        return None

    def call_args(self, node):
        args = []
        for a in node.args:
            if isinstance(a, gast.Starred):
                # f(*t): the items of a tuple or list of known length (a tuple written in
                # the function, a function's *args, x.shape of an array of known rank)
                args.extend(self.starred_items(a))
                continue
            args.append(self.expr(a))
        kwargs = []
        for k in node.keywords:
            if k.arg is None:
                d = self.expr(k.value)  # f(**options): a dict known while compiling
                if isinstance(d, StaticDict) and all(isinstance(key, str) for key in d.keys):
                    kwargs.extend(zip(d.keys, d.values))
                    continue
                self.error(UnsupportedSyntaxError, "`**` of a dict not written in the "
                           "function", k, "pass each keyword argument explicitly")
                raise Abort
            kwargs.append((k.arg, self.expr(k.value)))
        return args, kwargs

    def starred_items(self, node):
        value = self.expr(node.value)
        if isinstance(value, StaticSeq):
            return list(value.items)
        if isinstance(value, StaticDict):
            return [Const(k) for k in value.keys]
        if isinstance(value, Const) and isinstance(value.value, tuple):
            return [Const(v) for v in value.value]
        if isinstance(value, Static) and type(value.obj) in (tuple, list):
            # a global or closure tuple (guarded like one)
            return [self.global_value(v, f"{value.name}[{i}]") for i, v in enumerate(value.obj)]
        shape_of = self.shape_source.get(value) if isinstance(value, Var) else None
        if shape_of is not None and shape_of in self.param_ranks:
            return list(self.shape_items(value, shape_of, node))
        self.error(UnsupportedSyntaxError, "`*` of a sequence whose length is not known "
                   "while compiling", node, "pass a tuple or list written in the function, "
                   "or each argument explicitly")
        raise Abort

    def shape_items(self, shape, array, node) -> tuple:
        """The sizes in `shape`, the shape of `array` (whose rank is known): one item each."""
        return tuple(self.emit(operator.getitem, [shape, Const(i)], hint="_n", node=node)
                     for i in range(self.param_ranks[array][1]))

    def lower_method(self, recv, name, node):
        args, kwargs = self.call_args(node)
        if isinstance(recv, StaticDict):
            return self.dict_method(recv, name, args, kwargs, node)
        if name == "format" and isinstance(recv, Const) and isinstance(recv.value, str) and \
                not kwargs:
            # "... ({0}!={1})".format(a, b): text for an exception's message, as an f-string
            return self.emit(prims.format_text, [recv] + [self.materialize(a) for a in args],
                             hint="_text", node=node)
        if isinstance(recv, Const) and isinstance(recv.value, str) and name in _STR_METHODS \
                and not kwargs and all(isinstance(a, Const) for a in args):
            # metric.lower() of an option string: known while compiling
            return Const(getattr(recv.value, name)(*[a.value for a in args]))
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
            copy = dict(kwargs).get("copy")
            if isinstance(copy, Const) and type(copy.value) is bool:
                # x.astype(d, copy=False) is x itself where x has dtype d already: the same
                # values, which a write into either would show in the other (a view)
                kwargs = [(k, v) for k, v in kwargs if k != "copy"]
                out = self.call_value(fn, [recv] + args, kwargs, node)
                if not copy.value and isinstance(out, Var) and isinstance(recv, Var):
                    self.scope.fresh.discard(out)
                    self.view_base[out] = self.view_base.get(recv, recv)
                return out
        elif fn == "item":
            fn = prims.item
        if name in VARARG_SHAPE_METHODS and len(args) > 1:
            args = [StaticSeq(tuple(args))]
        return self.call_value(fn, [recv] + args, kwargs, node)

    def call_value(self, fn, args, kwargs, node, hint=None, name=None):
        """Emit a call of the object `fn`: a primitive, or an inlined user function."""
        if _is_conversion(fn) and any(k == "order" for k, _ in kwargs):
            # np.asarray(u, order="c"): the same numbers in another memory layout
            kwargs = [(k, v) for k, v in kwargs if k != "order"]
        if (fn is np.asarray or fn is np.asanyarray) and any(k == "copy" for k, _ in kwargs):
            # np.asarray(x, copy=True): np.array(x), a new array; copy=False or None: the
            # same numbers (a copy only where NumPy must make one)
            copy = dict(kwargs)["copy"]
            if isinstance(copy, Const) and copy.value in (True, False, None):
                fn = np.array if copy.value is True else fn
                kwargs = [(k, v) for k, v in kwargs if k != "copy"]
        if any(fn is f for f in (np.ascontiguousarray, np.asfortranarray)) and \
                len(args) == 1 and set(dict(kwargs)) <= {"dtype"}:
            fn = np.asarray
        if _is_accumulator(fn) and args and any(k == "dtype" for k, _ in kwargs):
            # np.sum(x, dtype=d): the sum of x cast to d (the same numbers), so the cast's
            # rule carries the derivative
            dtype = dict(kwargs)["dtype"]
            if not (isinstance(dtype, Const) and dtype.value is None):
                args = [self.call_value(np.asarray, [args[0]], [("dtype", dtype)], node)] + \
                    list(args[1:])
            kwargs = [(k, v) for k, v in kwargs if k != "dtype"]
        if not kwargs and any(fn is f for f in (operator.eq, operator.ne, operator.contains)):
            known = known_dtype_test(self, fn, args)
            if known is not None:  # (`X.dtype != xp.float32` of an argument's exact dtype)
                return Const(known)
        if fn is operator.contains and not kwargs and len(args) == 2 and \
                isinstance(args[0], StaticSeq) and type(args[1]) is Const and \
                is_simple_constant(args[1].value) and \
                all(type(v) is Const and is_simple_constant(v.value) for v in args[0].items):
            # `value.ndim not in [0, 1]` of a number lowering knows: a constant
            return Const(args[1].value in [v.value for v in args[0].items])
        if not kwargs and _foldable(fn) and all(_constant_value(a) is not _NOT_CONSTANT
                                                for a in args):
            try:  # an operator on constants (`v % 2 == 1` of a static item): a constant
                value = fn(*[_constant_value(a) for a in args])
            except Exception:  # noqa: BLE001 - raised where the code runs instead
                value = None
            if value is not None and type(value) in (bool, int, float, str):
                return Const(value)
        if (fn is any or fn is all) and len(args) == 1 and not kwargs and \
                isinstance(args[0], StaticSeq) and \
                all(type(v) is Const and type(v.value) is bool for v in args[0].items):
            # any([issparse(X), issparse(Y)]) of values lowering computed: a constant
            return Const(fn(v.value for v in args[0].items))
        if fn is np.isscalar and len(args) == 1 and not kwargs and isinstance(args[0], Var):
            fact = self.param_ranks.get(args[0])
            if fact is not None and fact[1] or args[0] in self.numbers:
                return Const(args[0] in self.numbers)  # (an array of an axis or more: not)
        if fn is np.iscomplex and len(args) == 1 and not kwargs and known_real(self, args[0]):
            # np.iscomplex of real numbers (statsmodels' `loggamma if np.iscomplex(alpha) else
            # gammaln`): False, a fact of the compile (the dtype); of an array, all False
            fact = array_fact(self, args[0])
            if fact is None or fact[1] == 0:
                return Const(False)
            out = self.emit(np.zeros_like, [args[0]], [("dtype", Const(np.dtype(bool), "bool"))],
                            hint="iscomplex", node=node)
            self.all_false.add(out)
            return out
        if (fn is np.any or fn is any) and len(args) == 1 and not kwargs and \
                isinstance(args[0], Var) and args[0] in self.all_false:
            return Const(False)
        if fn is hasattr and len(args) == 2 and not kwargs and type(args[1]) is Const:
            known = known_hasattr(self, args[0], args[1].value)
            if known is not None:  # (hasattr(X, "fit") of an array argument: False)
                return Const(known)
        if (fn is operator.is_ or fn is operator.is_not) and len(args) == 2 and not kwargs \
                and any(type(a) is Const and a.value is None for a in args) and \
                all(type(a) is Const or isinstance(a, Static) for a in args):
            # `y is None` of a constant or an object known while compiling
            same = [a.value if type(a) is Const else a.obj for a in args]
            return Const((same[0] is same[1]) == (fn is operator.is_))
        if fn is isinstance and len(args) == 2 and not kwargs and \
                _constant_value(args[0]) is not _NOT_CONSTANT and isinstance(args[1], Static):
            try:  # isinstance(y, str) of a constant (an option string argument)
                return Const(isinstance(_constant_value(args[0]), args[1].obj))
            except TypeError:
                pass
        if fn is isinstance and len(args) == 2 and not kwargs and isinstance(args[1], Static):
            known = known_isinstance(self, args[0], args[1].obj)
            if known is not None:  # (issparse(X) of an array argument: False)
                return Const(known)
        if fn is operator.contains and not kwargs and len(args) == 2 and \
                type(args[1]) is Const and isinstance(args[0], Static) and \
                type(args[0].obj) in (set, frozenset, tuple, list) and \
                all(is_simple_constant(v) for v in args[0].obj):
            # `name in NAMES` of a constant and a global set of constants: a constant
            return Const(args[1].value in args[0].obj)
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
                (not is_library(call) or shim_for(types.MethodType(call, fn)) is not None):
            # an object with a `__call__` written in Python: that method, bound to it (of a
            # library's object, where s2sad models it: `scipy.stats.norm(mu, 2.0)` freezes)
            return self.call_value(types.MethodType(call, fn), args, kwargs, node, hint, name)
        if _is_constant_maker(fn) and all(_known(v) for v in list(args) +
                                           [v for _, v in kwargs]):
            # np.finfo(float), np.dtype("f8"), np.iinfo(np.int32): facts of the machine,
            # made while compiling (np.finfo(float).eps is then a constant)
            try:
                obj = fn(*[_known_value(v) for v in args],
                         **{k: _known_value(v) for k, v in kwargs})
            except Exception:  # noqa: BLE001 - raised where the code runs instead
                obj = None
            if fn is getattr and not isinstance(obj, (types.ModuleType, type,
                                                      types.FunctionType, types.MethodType,
                                                      types.BuiltinFunctionType, np.ufunc)):
                # (a data attribute: no guard watches it, so it is read where the code runs,
                # never baked in as a constant that a later `obj.scale = 2.0` would not reach)
                obj = None
            if obj is not None:
                return self.global_value(obj, name or getattr(fn, "__name__", "value"))
        if fn is getattr and len(args) in (2, 3) and not kwargs and \
                isinstance(args[0], ObjectRecord) and isinstance(args[1], Const) and \
                isinstance(args[1].value, str):
            # getattr(obj, "name"[, default]) of an object made in the function
            if len(args) == 3 and args[1].value not in args[0].attrs and \
                    not any(args[1].value in vars(k) for k in args[0].cls.__mro__):
                return args[2]
            return self.record_attribute(args[0], args[1].value, node)
        if (fn is max or fn is min) and len(args) == 1 and not kwargs:
            return self.extreme_of(fn, args[0], node, name)
        if fn is len and len(args) == 1 and isinstance(args[0], StaticDict):
            return Const(len(args[0].keys))
        if fn is len and len(args) == 1 and isinstance(args[0], Var) and \
                self.shape_source.get(args[0]) in self.param_ranks:
            return Const(self.param_ranks[self.shape_source[args[0]]][1])  # len(x.shape)
        if (fn is operator.add or fn is operator.mul) and len(args) == 2 and not kwargs:
            seq = self.sequence_arithmetic(fn, args[0], args[1], node)
            if seq is not None:
                return seq
        if self.table.is_primitive(fn):
            if isinstance(fn, np.ufunc) and any(n in ("out", "where") for n, _ in kwargs):
                value = self.ufunc_into_fresh(fn, args, kwargs, node)
                if value is not None:
                    return value
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
        shim = shim_for(fn)
        if shim is not None:  # a library's dispatch layer (SciPy's xp_promote): seen through
            self.current_shim_callee = fn
            out = shim(self, args, kwargs, node)
            if out is not None:
                return out
        if getattr(fn, "__name__", None) == "_parse_args" and \
                isinstance(fn, types.MethodType) and \
                type(fn.__self__).__module__.startswith("scipy.stats"):
            out = parse_args_binding(self, fn, args, kwargs, node)
            if out is not None:
                return out
        if isinstance(fn, types.FunctionType):
            return self.inline_call(unwrapped(fn), args, kwargs, node)
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
        if isinstance(fn, type) and _record_class(fn):
            made = self.new_object(fn, args, kwargs, node)
            if made is not None:
                return made
        if fn is super and not args and not kwargs:
            return self.super_of_method(node)
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
            return isinstance(v, (Var, Const, Static))  # (a module too: `xp=np`)
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
        opaque = prims.Opaque(fn, errors, self.import_path(spelling))
        opaque.spelling = spelling
        return self.emit(opaque, a, k, hint=hint, node=node)

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
            sig = inspect.signature(fn, follow_wrapped=False)  # (the code that runs)
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
        views = tuple(structure_of(a) if not (isinstance(a, Var) and a in self.param_ranks)
                      else ("rank",) + self.param_ranks[a][::-1] for a in args)
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
            if views[i] is None or isinstance(views[i][0], str) or not isinstance(value, Var):
                return value
            return self.structured(value, views[i], f"_bar{i}", node)

        def grads(g):
            if d._wrt_tuple:
                return StaticSeq(tuple(one(v, i) for v, i in zip(g.items, wrt)))
            return one(g, wrt[0])
        if d.mode == "value_and_grad":
            return StaticSeq((out.items[0], grads(out.items[1])))
        return grads(out)

    def inline_call(self, fn, args, kwargs, node, returns_nothing=False):
        if fn in self.inline_stack:
            return self.recursive_call(fn, args, kwargs, node)
        if getattr(fn, "__s2sad_checkpoint__", False):  # @s2sad.checkpoint: not inlined
            return self.recursive_call(fn, args, kwargs, node, prims.CheckpointedCall)
        try:
            parsed = parse_function(fn)
        except S2SADError as e:
            e.loc = e.loc or self.loc(node)
            # (no source: called as it is where no derivative reaches it, else refused)
            opaque = self.opaque_call(fn, args, kwargs, node, [e], len(self.stmts))
            if opaque is not None:
                return opaque
            self.errors.append(e)
            raise Abort
        sig, bound = self.bind(fn, args, kwargs, node)

        def new_scope():
            scope = Scope(parsed)
            for pname, value in bound.arguments.items():
                if sig.parameters[pname].kind is inspect.Parameter.VAR_POSITIONAL:
                    value = StaticSeq(tuple(value))  # *args: the call fixes their number
                elif sig.parameters[pname].kind is inspect.Parameter.VAR_KEYWORD:
                    # **kwargs: a dict of the call's other keywords, known while compiling
                    value = StaticDict(tuple(value), tuple(value.values()))
                elif not isinstance(value, (Var, Const, StaticSeq, StaticDict, Static,
                                            LocalFunction, ObjectRecord, SuperRecord,
                                            Partial)):
                    value = self.global_value(value, pname)
                scope.env[pname] = value
            return scope
        scope = new_scope()
        body = _without_docstring(parsed.node.body)
        if fn.__code__.co_flags & inspect.CO_GENERATOR:
            # a generator: the list of what it yields (sum(gen(x)), for v in gen(x))
            body = _collecting_yields(body, parsed.node)
            if body is None:
                self.error(UnsupportedSyntaxError, f"the generator `{fn.__name__}` returns, or "
                           "yields inside an expression", node, "yield values as statements, "
                           "or build and return a list")
                raise Abort
        n_errors, n_stmts = len(self.errors), len(self.stmts)
        missing = None if returns_nothing else (
            f"helper `{fn.__name__}` does not return a value on every path",
            "end the helper with `return <value>`")
        if self.try_inlined.get(fn.__code__):  # (its `try` stopped it before: the errors)
            chosen = self.inline_with_tries(fn, args, kwargs, node, parsed, new_scope, body,
                                            missing, n_errors, n_stmts, False,
                                            self.try_inlined[fn.__code__])
            if chosen is not None:
                return chosen
        entered = self.library_entry is None and is_library_function(fn)
        if entered:
            self.library_entry = (self.loc(node), fn)
        try:
            out = self.lower_inlined(body, scope, fn, parsed.node, missing)
        except Abort:
            out = None
        finally:
            if entered:
                self.library_entry = None
        if len(self.errors) > n_errors and is_library_function(fn) and \
                self.try_inlined.get(fn.__code__, ()) is not None and \
                all(id(e) in self.try_errors for e in self.errors[n_errors:]):
            # a `try` alone stopped it: inlined with its `try` body differentiated, where a
            # derivative reaches it, else called as it is (see passes/tries.py)
            errors = self.errors[n_errors:]
            del self.errors[n_errors:]
            chosen = self.inline_with_tries(fn, args, kwargs, node, parsed, new_scope, body,
                                            missing, n_errors, n_stmts, entered, errors)
            self.try_inlined[fn.__code__] = errors if chosen is not None else None
            if chosen is not None:
                return chosen
            self.errors[n_errors:n_errors] = errors
            del self.stmts[n_stmts:]
        if isinstance(out, Var) and out in scope.fresh and len(self.errors) == n_errors and \
                not self.kept_elsewhere(out, self.stmts[n_stmts:],
                                        list(args) + [v for _, v in kwargs]):
            # an array the helper created and only returns (scipy's squareform): the
            # caller's own, which it may write into
            self.scope.fresh.add(out)
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

    def inline_with_tries(self, fn, args, kwargs, node, parsed, new_scope, body, missing,
                          n_errors, n_stmts, entered, errors):
        """The library function `fn`, whose `try` stopped its inlining (`errors`), lowered
        again with its `try` statements' bodies differentiated, beside the call of it as it
        is: an `If` on prims.derivative_reaches of its arguments. None where it cannot be
        (what it emitted and reported removed)."""
        del self.stmts[n_stmts:]
        entered = entered or (self.library_entry is None and is_library_function(fn))
        self.tried_scopes.add(id(parsed))
        if entered:
            self.library_entry = (self.loc(node), fn)

        def lowered():
            out = self.lower_inlined(body, new_scope(), fn, parsed.node, missing)
            return self.materialize(out)
        try:
            inlined, out = self.sub_block(lowered, None)
        except Abort:
            out = None
        finally:
            self.tried_scopes.discard(id(parsed))
            if entered:
                self.library_entry = None
        if out is None or len(self.errors) > n_errors:
            del self.errors[n_errors:]
            del self.stmts[n_stmts:]
            return None
        errors = [self.library_refusal(fn, errors, node)]
        as_is, called = self.sub_block(
            lambda: self.opaque_call(fn, args, kwargs, node, errors, 0), None)
        if called is None:  # (an argument that is not a run-time value)
            self.stmts.extend(inlined)
            return out
        inputs = []
        for v in list(args) + [v for _, v in kwargs]:
            todo = [v]
            while todo:
                a = todo.pop()
                if isinstance(a, StaticSeq):
                    todo.extend(a.items)
                elif isinstance(a, Var):
                    inputs.append(a)
        if not inputs:  # (no run-time value: no derivative reaches it)
            self.stmts.extend(as_is)
            return called
        reaches = self.emit(prims.derivative_reaches, inputs, hint="reaches", node=node)
        result = self.fresh(fn.__name__ if fn.__name__.isidentifier() else "t")
        self.stmts.append(If(reaches, Block(tuple(inlined), (out,)),
                             Block(tuple(as_is), (called,)), (result,), self.loc(node)))
        return result

    def kept_elsewhere(self, out, stmts, args) -> bool:
        """May the array `out` a helper returns be held by something that outlives the
        helper: a tuple or list it built, a call it could not read, an object it was given
        (an attribute of a record)?"""
        views = {out} | {v for v, base in self.view_base.items() if base == out}
        for st in stmts:
            if isinstance(st, Call) and (isinstance(st.fn, prims.Opaque) or st.fn in (
                    prims.make_list, prims.make_tuple, prims.list_append)) and \
                    any(a in views for a in list(st.args) + [a for _, a in st.kwargs]):
                return True
            for inner in blocks_of(st):
                if self.kept_elsewhere(out, inner.stmts, ()):
                    return True
        todo = list(args)
        while todo:
            v = todo.pop()
            if isinstance(v, StaticSeq):
                todo.extend(v.items)
            elif isinstance(v, StaticDict):
                todo.extend(v.values)
            elif isinstance(v, (ObjectRecord, SuperRecord)):
                record = v if isinstance(v, ObjectRecord) else v.record
                if any(holds(a, out, self.view_base) or a is out
                       for a in record.attrs.values()):
                    return True
        return False

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

    def ufunc_into_fresh(self, fn, args, kwargs, node):
        """A ufunc's value written into a new array it is given, `np.true_divide(a, b,
        out=np.zeros_like(a), where=b != 0)` (the array made in the call's own arguments, so
        that nothing else sees it): the value `np.where(b != 0, a / b, out)`, computed
        without the write. None where `out=` is a name (refused by the caller, or written
        as a new version of it where the call is a statement: StatementLowering.out_value)."""
        options = dict(kwargs)
        where = options.pop("where", Const(True))
        out = options.pop("out", Const(None))
        if isinstance(out, StaticSeq) and len(out.items) == 1:
            out = out.items[0]  # (out=(buf,), NumPy's own spelling)
        if isinstance(out, Const) and out.value is None:
            if isinstance(where, Const) and where.value is True:
                return self.call_value(fn, args, list(options.items()), node)
            self.error(UnsupportedSyntaxError, "`where=` without `out=`: NumPy leaves the "
                       "entries where the condition is False as they happen to be in memory",
                       node, "give the array to fill (`out=np.zeros_like(x)`), or write "
                       "`np.where(condition, f(x), 0.0)`")
            raise Abort
        given = {k.arg: k.value for k in getattr(node, "keywords", ())}.get("out")
        if isinstance(given, gast.Tuple) and len(given.elts) == 1:
            given = given.elts[0]
        if not (isinstance(out, Var) and out in self.scope.fresh and
                isinstance(given, gast.Call)) or len(args) != fn.nin:
            return None
        value = self.call_value(fn, args, list(options.items()), node)
        if isinstance(where, Const) and where.value is True:
            value = self.call_value(prims.broadcast_like, [value, out], [], node)
        else:
            value = self.call_value(np.where, [where, value, out], [], node)
        # NumPy casts the value into the array's dtype
        dtype = self.call_value(prims.Attr("dtype"), [out], [], node, "_dtype")
        return self.call_value(np.asarray, [value], [("dtype", dtype)], node)

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
                self.prescan_attribute_writes(body)
            out = self.lower_stmts(normalize_exits(lift_loop_returns(body)), in_loop=False)
            if out == "raise":  # (called as it is where it cannot be read: see inline_call)
                self.error(UnsupportedSyntaxError, "the function raises an exception on "
                           "every path", fnode)
                raise Abort
            if out is None:
                if len(self.errors) == n_errors and (
                        missing_return is None or contains(body, (gast.Return,)) is None):
                    return Const(None)  # (no `return`: None, as in Python; a mutator)
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
        shape_of = self.shape_source.get(value) if isinstance(value, Var) else None
        if shape_of is not None and shape_of in self.param_ranks:
            # list(x.shape), tuple(x.shape): its length is x's rank, known while compiling;
            # the items are the sizes (integers known once the function is specialised)
            if fn is tuple:
                return value
            return StaticSeq(self.shape_items(value, shape_of, node), True)
        if shape_of is not None:
            self.error(UnsupportedSyntaxError, f"{fn.__name__}() of the shape of an array "
                       "whose number of axes is not known while compiling", node,
                       "index the shape (`x.shape[0]`) or build the tuple from its items")
            raise Abort
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
        target = getattr(getattr(node, "func", None), "value", None)
        if name == "pop" and 1 <= len(args) <= 2 and not kwargs and \
                isinstance(args[0], Const) and isinstance(target, gast.Name) and \
                self.scope.env.get(target.id) is d:
            # kwargs.pop("out", None): the value, and the dict without the key from here on
            key = args[0].value
            try:
                value = d.get(key)
            except KeyError:
                if len(args) == 1:
                    self.error(UnsupportedSyntaxError, f"`{target.id}` has no key {key!r}",
                               node, "pass a default: .pop(key, default)")
                    raise Abort
                return args[1]
            self.scope.env[target.id] = d.without(key)
            return value
        self.error(UnsupportedSyntaxError, f"the dict method `.{name}()` is not supported here",
                   node, "use keys(), values(), items(), get(), pop() or indexing")
        raise Abort

    def extreme_of(self, fn, seq, node, name):
        """max(iterable) / min(iterable): of a tuple or list the function built, pairwise
        (max(max(a, b), c)); of a value of run time (a 1-D array), the call as written, whose
        rules are np.max's (s2sad_rules/operators.py; other ranks are refused there)."""
        if isinstance(seq, StaticSeq) and seq.items:
            out = seq.items[0]
            for item in seq.items[1:]:
                out = self.call_value(fn, [out, item], [], node, name=name)
            return out
        if isinstance(seq, Var):
            return self.emit(fn, [seq], hint="largest" if fn is max else "smallest", node=node)
        self.error(UnsupportedSyntaxError, f"{fn.__name__}() of one iterable is supported for "
                   "a tuple or list written in the function and for a 1-D array", node,
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
        self._check_signature(node, varargs=True)  # (*args, **kwargs: the call's extra ones)
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
        if len(args) > len(positional) and a.vararg is None:
            self.error(UnsupportedSyntaxError, f"`{lf.name}` takes {len(positional)} "
                       f"positional arguments, got {len(args)}", node)
            raise Abort
        bound = dict(zip(positional, args))
        if a.vararg is not None:
            bound[a.vararg.id] = StaticSeq(tuple(args[len(positional):]))
        extra = {}
        for k, v in kwargs:
            if a.kwarg is not None and k not in positional + kwonly and k not in extra:
                extra[k] = v
                continue
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
        if a.kwarg is not None:
            bound[a.kwarg.id] = StaticDict(tuple(extra), tuple(extra.values()))
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
    if not filename:
        return False
    # (s2sad's models of library methods, scipy_models.py, are library code to the user)
    return os.path.realpath(filename).startswith(_LIBRARY_DIRS) or \
        os.path.basename(filename) in ("scipy_models.py", "sklearn_models.py") and \
        os.path.dirname(os.path.realpath(filename)) == os.path.dirname(
            os.path.realpath(__file__))


_CONSTANT_MAKERS = (np.finfo, np.iinfo, np.dtype, getattr)


def _is_constant_maker(fn) -> bool:
    return any(fn is m for m in _CONSTANT_MAKERS)


def _known(v) -> bool:
    return isinstance(v, (Const, Static))


def _known_value(v):
    return v.value if isinstance(v, Const) else v.obj


_ITERATION_BUILTINS = (map, filter, sorted, functools.reduce)


def _record_class(cls) -> bool:
    """A class whose objects made in the function are records of their attributes: written
    in Python (not a builtin, NumPy or exception class), made by object.__new__."""
    if cls.__module__ in ("builtins", "numpy") or issubclass(cls, BaseException) or \
            getattr(cls, "__new__", object.__new__) is not object.__new__:
        return False
    return all(k.__module__ != "builtins" or k is object for k in cls.__mro__)


_YIELDED = "__yielded__"


def _collecting_yields(body, fnode):
    """A generator's body as a function returning the list of the values it yields: each
    `yield v` statement appends `v`; None where it yields otherwise or returns."""
    class Rewrite(gast.NodeTransformer):
        ok = True

        def visit_Expr(self, node):
            if isinstance(node.value, gast.Yield):
                value = node.value.value or gast.Constant(value=None, kind=None)
                call = gast.Call(func=gast.Attribute(value=gast.Name(
                    id=_YIELDED, ctx=gast.Load(), annotation=None, type_comment=None),
                    attr="append", ctx=gast.Load()), args=[value], keywords=[])
                return gast.copy_location(gast.Expr(value=gast.copy_location(call, node)),
                                          node)
            return self.generic_visit(node)

        def visit_Yield(self, node):
            self.ok = False
            return node

        visit_YieldFrom = visit_Yield

        def visit_Return(self, node):
            self.ok = False
            return node

        def visit_FunctionDef(self, node):
            return node  # (a nested function's yields are its own)

        visit_Lambda = visit_FunctionDef

    rewrite = Rewrite()
    new_body = [rewrite.visit(copy.deepcopy(s)) for s in body]
    if not rewrite.ok:
        return None
    start = gast.Assign(targets=[gast.Name(id=_YIELDED, ctx=gast.Store(), annotation=None,
                                           type_comment=None)],
                        value=gast.List(elts=[], ctx=gast.Load()), type_comment=None)
    end = gast.Return(value=gast.Name(id=_YIELDED, ctx=gast.Load(), annotation=None,
                                      type_comment=None))
    for extra in (start, end):
        gast.copy_location(extra, body[0] if body else fnode)
        for n in gast.walk(extra):
            gast.copy_location(n, extra)
    return [start] + new_body + [end]


_FOLDABLE = frozenset({operator.add, operator.sub, operator.mul, operator.mod,
                       operator.floordiv, operator.eq, operator.ne, operator.lt, operator.le,
                       operator.gt, operator.ge, operator.not_, operator.neg,
                       operator.contains, operator.and_})  # (and_: a chained comparison)


_NOT_CONSTANT = object()


def _constant_value(v):
    """The value of a constant, or of an object known while compiling that is a number,
    string, bool or None (a flag or option string argument); else _NOT_CONSTANT."""
    if type(v) is Const:
        return v.value
    if isinstance(v, Static) and is_simple_constant(v.obj) and not isinstance(v.obj, tuple):
        return v.obj
    return _NOT_CONSTANT


def _foldable(fn) -> bool:
    try:
        return fn in _FOLDABLE
    except TypeError:
        return False


_ACCUMULATORS = (np.sum, np.prod, np.mean, np.cumsum, np.cumprod, np.nansum, np.nanprod,
                 np.nanmean, np.nancumsum, np.nancumprod)


def _is_accumulator(fn) -> bool:
    return any(fn is a for a in _ACCUMULATORS)


def _is_conversion(fn) -> bool:
    return any(fn is f for f in (np.asarray, np.array, np.asanyarray))
