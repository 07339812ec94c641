"""Lowering: a parsed Python function -> the structured SSA IR.

Names are resolved to the objects they denote (so `np.sin`, `numpy.sin` and
`from numpy import sin` are one primitive); calls of the user's own functions
are inlined; tuples that the code only builds and unpacks stay static.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import types

import gast
import numpy as np

from s2sad.errors import S2SADError, UnsupportedSyntaxError, raise_all
from s2sad.frontend.array_facts import (
    NUMBER,
    is_real_number,
    letter_of,
    result_fact,
    result_precision,
)
from s2sad.frontend.library_shims import shim_for
from s2sad.frontend.lower_calls import CallLowering, derivative_hook, in_library
from s2sad.frontend.lower_control import ControlFlowLowering
from s2sad.frontend.lower_expressions import ExpressionLowering
from s2sad.frontend.lower_statements import StatementLowering
from s2sad.frontend.normalize import (
    RETURN_VALUE,
    RETURNED,
    contains,
    lift_loop_returns,
    normalize_exits,
)
from s2sad.frontend.source import parse_function
from s2sad.frontend.values import (
    Abort,
    Poisoned,
    Record,
    Scope,
    Static,
    StaticDict,
    StaticSeq,
)
from s2sad.ir import prims
from s2sad.ir.aliasing import VIEW_FNS, creates_array
from s2sad.ir.nodes import Block, Call, Const, Function, Var

ALLOCATORS = frozenset({np.empty, np.empty_like, np.zeros, np.zeros_like, np.ones, np.ones_like,
                        np.full, np.full_like})

_DTYPE = prims.Attr("dtype")
# the names lift_loop_returns gives its flag and value (which no user's name can be), as
# the generated code spells them
_SPELLED = {RETURNED: "returned", RETURN_VALUE: "return_value"}


class Lowerer(StatementLowering, ControlFlowLowering, ExpressionLowering, CallLowering):
    """Lowers one top-level function (and inlines its helpers) into a `Function`."""

    def __init__(self, table):
        self.table = table
        self.errors: list[S2SADError] = []
        self.counts: dict = {}
        self.taken: set = set()  # every variable name handed out
        self.stmts: list = []  # statements of the block being built
        self.inline_stack: list = []
        # where the user's code called into a library whose source is being inlined: a
        # refusal deep inside the library is reported there (see library_refusal)
        self.library_entry = None
        self.out_structure = None  # what the function returns (see output_structure)
        self.scope: Scope | None = None
        self.view_base: dict = {}  # a view's variable -> the array it looks into
        # the differentiated function's own parameters: an array one of them holds may be
        # written into, on a private copy (StatementLowering.check_writable)
        self.arguments: set = set()
        # (argument, location, name) of each write into one: refused once kinds show that
        # another argument may be the same array (aliasing.refuse_shared_inplace_updates)
        self.written_arguments: list = []
        # a loop's or an if's variable -> the values it may be (its start, the branches'):
        # the same array in NumPy when nothing copied it (see StatementLowering.shared)
        self.origins: dict = {}
        # a dict or list literal merged after an `if` -> (itself, what each branch held):
        # it may be either in Python (see StatementLowering.rebind_written)
        self.merged_from: dict = {}
        self.inplace_updates: list = []  # `a += b` that NumPy does in place: see aliasing.py
        self.aug_assignments: list = []  # every `a op= b` (a, result, ...): see aliasing.py
        self.renamable = None  # the value of the assignment being lowered, if fresh
        self.stmt_stack: list = []  # (statement list, index, in a loop body) being lowered
        self.stmt_scopes: list = []  # the scope of each entry of stmt_stack
        self.grown: set = set()  # variables holding lists grown by `append` at run time
        self.alias_checked: set = set()  # (function body, list name) checked for aliases
        # attributes of objects the function was given that it writes: (id(obj), name) ->
        # obj; read where the code runs (see StatementLowering.store_attribute)
        self.written_attrs: dict = {}
        # a NumPy array of known rank (an argument, what a library shim made of one) ->
        # (dtype letter, number of axes): facts of the compile
        self.param_ranks: dict = {}
        # a variable holding a dtype (x.dtype, np.result_type(...)) -> its kind letter, ""
        # where only the code that runs knows it (see library_shims.dtype_letter)
        self.dtype_values: dict = {}
        # a NumPy array of known exact dtype (an argument: its kind's precision; what
        # conversions, indexing and elementwise arithmetic make of one), or a variable
        # holding that dtype (x.dtype) -> the np.dtype: `X.dtype == np.float32` is decided
        # while compiling (see array_facts.result_precision)
        self.precisions: dict = {}
        # a variable whose truth lowering knows though not its value (`flag and False`)
        self.known_truth: dict = {}
        # (scope, names it carries, names bound before it) of each loop body, branch and
        # expression whose parts are lowered apart, being lowered: a name bound before that
        # they do not carry cannot be rebound inside (see StatementLowering.can_rebind)
        self.rebind_frames: list = []
        self.slices: set = set()  # variables holding a slice object made in the code
        # variables holding a tuple of slices made in the code (an index: `y[slice1]`) -> them
        self.index_tuples: dict = {}
        # variables holding a number (math.sqrt(3), np.sum(x) of an array argument): an
        # operand of arithmetic whose result's facts are known (array_facts.result_fact)
        self.numbers: set = set()
        self.allocated: set = set()  # results of np.empty, np.zeros, ... (buffers)
        self.control_depth = 0  # how many branches and loop bodies enclose what is lowered
        self.shape_source: dict = {}  # a variable holding x.shape -> x
        self.attribute_stores: list = []  # (the Opaque call storing it, attribute name)
        self.attribute_reads: set = set()  # names of attributes read where the code runs
        # ids of library objects made while compiling (CallLowering.made_while_compiling)
        self.made_objects: set = set()
        # the parsed functions (library code) whose `try` statements are lowered: their body
        # differentiated, the handler not (see StatementLowering.lower_try)
        self.tried_scopes: set = set()
        # variables holding a real number computed from arrays with facts (`params[-1]`):
        # np.iscomplex of one is False (see array_facts.known_real)
        self.real_numbers: set = set()
        # variables holding a bool array known to be all False (np.iscomplex of a real array)
        self.all_false: set = set()
        # the errors of library `try` statements (ids): an inlining they alone stopped is
        # tried again with its `try` bodies lowered (CallLowering.inline_with_tries); the
        # code of functions for which that was needed, or failed
        self.try_errors: set = set()
        self.try_inlined: dict = {}

    def fresh(self, hint: str) -> Var:
        """A variable never handed out before: `hint`, `hint_1`, ... (a user's own `t_1`
        and the second version of `t` must not share a name)."""
        hint = _SPELLED.get(hint, hint) if hint else "t"
        n = self.counts.get(hint, 0)
        name = hint if n == 0 else f"{hint}_{n}"
        while name in self.taken:
            n += 1
            name = f"{hint}_{n}"
        self.counts[hint] = n + 1
        self.taken.add(name)
        return Var(name)

    def reserve(self, name: str) -> Var:
        self.counts[name] = max(self.counts.get(name, 0), 1)
        self.taken.add(name)
        return Var(name)

    def emit(self, fn, args, kwargs=(), hint="t", node=None) -> Var:
        target = self.fresh(hint)
        self.stmts.append(Call(target, fn, tuple(args), tuple(kwargs), self.loc(node)))
        if fn in ALLOCATORS:
            self.allocated.add(target)  # (a buffer: see lower_effect_call)
        if fn is slice:
            self.slices.add(target)
        elif fn is prims.make_tuple and any(isinstance(a, Var) and a in self.slices
                                            for a in args):
            self.index_tuples[target] = tuple(args)
        elif fn is _DTYPE and args and isinstance(args[0], Var):  # x.dtype: a dtype
            fact = self.param_ranks.get(args[0])
            self.dtype_values[target] = fact[0] if fact is not None else ""
            if args[0] in self.precisions:
                self.precisions[target] = self.precisions[args[0]]
        elif self.param_ranks:
            fact = result_fact(self, fn, args, kwargs)
            if fact is NUMBER:
                self.numbers.add(target)
            elif fact is not None:
                self.param_ranks[target] = fact
                precision = result_precision(self, fn, args, kwargs)
                if precision is not None and letter_of(precision) == fact[0]:
                    self.precisions[target] = precision
            elif is_real_number(self, fn, args, kwargs):
                self.real_numbers.add(target)
        if self.scope is not None:
            if creates_array(fn):
                self.scope.fresh.add(target)
            elif fn in VIEW_FNS and args and isinstance(args[0], Var):
                self.view_base[target] = self.view_base.get(args[0], args[0])
        return target

    def scope_body(self) -> list:
        """The statements of the function (or inlined helper, lambda) being lowered."""
        node = self.scope.local_node if getattr(self.scope, "local_node", None) is not None \
            else self.scope.parsed.node
        body = getattr(node, "body", [])
        return body if isinstance(body, list) else [gast.Expr(value=body)]

    def loc(self, node):
        if node is None or self.scope is None:
            return None
        loc = self.scope.parsed.loc(node)
        if self.library_entry is not None and loc is not None and in_library(loc.filename):
            loc = dataclasses.replace(loc, called_from=self.library_entry[0])
        return loc

    def error(self, cls, message, node, hint=None):
        self.errors.append(cls(message, self.loc(node), hint))

    def sub_block(self, fn, carried=frozenset()):
        """Run `fn()` collecting the statements it emits into a separate list. `carried`:
        the names whose new values the construct carries out of the block (a loop's; None
        for a branch of an `if`, whose values are merged; none for a part of an expression):
        a write cannot rebind another name inside it (see StatementLowering.can_rebind)."""
        saved = self.stmts
        self.stmts = []
        self.control_depth += 1
        self.rebind_frames.append((self.scope, carried, frozenset(self.scope.env)))
        try:
            result = fn()
            return self.stmts, result
        finally:
            self.stmts = saved
            self.control_depth -= 1
            self.rebind_frames.pop()

    def lower_function(self, func, views: tuple = ()) -> Function:
        parsed = parse_function(func)
        node = parsed.node
        called = func
        self.scope = Scope(parsed)
        if in_library(parsed.filename):  # (a library's own function, differentiated)
            self.tried_scopes.add(id(parsed))
        args = node.args
        params = []
        positional = list(args.args)
        if parsed.is_method:  # a bound method: its first parameter is the object
            first = positional.pop(0)
            self.reserve(first.id)
            self.scope.env[first.id] = Static(parsed.bound_self, first.id)
            func = func.__func__
        self.inline_stack.append(func)
        for i, a in enumerate(positional):
            params.append(self.reserve(a.id))
            self.arguments.add(params[-1])
            view = views[i] if i < len(views) else None
            if view is None:
                self.scope.env[a.id] = params[-1]
            elif view[0] == "fact":  # a flag, option string or None: known while compiling
                # (an int option at its default: a constant)
                self.scope.env[a.id] = Const(view[1]) if type(view[1]) is int else \
                    Static(view[1], a.id)
            elif view[0] == "rank":  # an array's number of axes, known while compiling
                self.scope.env[a.id] = params[-1]
                self.param_ranks[params[-1]] = (view[2], view[1])  # (dtype, rank)
                if len(view) > 3 and view[3]:  # (its exact dtype: the dispatcher's key)
                    self.precisions[params[-1]] = np.dtype(view[3])
            else:
                self.scope.env[a.id] = self.structured(params[-1], view, a.id, a)
        if args.vararg is not None:  # `*args`: one more parameter, the tuple of them
            params.append(self.reserve(args.vararg.id))
            self.scope.env[args.vararg.id] = params[-1]
            view = views[len(positional)] if len(positional) < len(views) else None
            if view is not None and view[0] == "varargs":
                # their number is known: a tuple of its items, as a helper's *args is
                self.scope.env[args.vararg.id] = StaticSeq(tuple(
                    self.emit(operator.getitem, [params[-1], Const(i)],
                              hint=f"{args.vararg.id}_{i}", node=args.vararg)
                    for i in range(view[1])))
        kwonly = []
        kw_facts = dict(views[-1][1]) if views and views[-1] is not None and \
            views[-1][0] == "kw" else {}
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            v = self.reserve(a.id)
            self.scope.env[a.id] = v
            if a.id in kw_facts:  # (a flag or an int option: known while compiling)
                fact = kw_facts[a.id]
                self.scope.env[a.id] = Const(fact) if type(fact) is int else \
                    Static(fact, a.id)
            default = func.__kwdefaults__.get(a.id, inspect.Parameter.empty) if (
                func.__kwdefaults__) else inspect.Parameter.empty
            kwonly.append((v, default))
        self._check_signature(node, varargs=True)
        if args.kwarg is not None:  # (a helper's **kwargs is the call's other keywords)
            self.error(UnsupportedSyntaxError, "**kwargs parameters of the differentiated "
                       "function are not supported", args.kwarg, "differentiate a lambda "
                       "that passes them: s2sad.grad(lambda x: f(x, p=3))")
            self.scope.env[args.kwarg.id] = Poisoned(args.kwarg.id)  # (reported once)
        self.prescan_attribute_writes(node.body)
        results, is_tuple = self.lower_modelled(called, node) or \
            self.lower_body(node.body, node)
        for store, attr in self.attribute_stores:
            if attr in self.attribute_reads:  # read back: no derivative may be stored
                store.effect_only, store.writes = False, True
        fn = Function(node.name, tuple(params), Block(tuple(self.stmts), tuple(results)),
                      is_tuple, tuple(kwonly), tuple(func.__defaults__ or ()),
                      parsed.loc(node), tuple(parsed.lines), parsed.first_line)
        raise_all(self.errors)
        if self.inplace_updates:
            fn.meta["inplace_updates"] = tuple(self.inplace_updates)
        if self.aug_assignments:
            fn.meta["aug_assignments"] = tuple(self.aug_assignments)
        if self.written_arguments:
            fn.meta["written_arguments"] = tuple(self.written_arguments)
        if self.out_structure is not None:
            fn.meta["out_structure"] = self.out_structure
        return fn

    def lower_modelled(self, func, node):
        """A library function differentiated itself that a shim reads as s2sad's model of
        it (library_shims.shim_for: scikit-learn's BaseLoss.loss, whose Cython part the
        model computes), called with the parameters; None where none does (its body is
        lowered as written)."""
        args = node.args
        shim = shim_for(func)
        if shim is None or args.vararg is not None or args.kwarg is not None:
            return None
        def value(a):  # (an argument known while compiling as a call would pass it: None)
            v = self.scope.env[a.id]
            return self.global_value(v.obj, v.name) if isinstance(v, Static) else v

        positional = args.args[1:] if isinstance(func, types.MethodType) else args.args
        self.current_shim_callee = func
        try:
            out = shim(self, [value(a) for a in positional],
                       [(a.id, value(a)) for a in args.kwonlyargs], node)
        except Abort:
            return [Const(None)], False  # (reported)
        return None if out is None else self.flatten_return(out)

    def structured(self, value: Var, view, name: str, node):
        """A dict or namedtuple argument (or a tuple or list holding them), passed as a tuple:
        its items read once at the start, by key or field while compiling."""
        (what, detail), item_views = view
        if what == "dict":
            labels = [str(k) if str(k).isidentifier() else f"{i}" for i, k in enumerate(detail)]
        elif what == "record":
            labels = list(detail._fields)
        else:
            labels = [str(i) for i in range(len(item_views))]
        items = []
        for i, (label, sub) in enumerate(zip(labels, item_views)):
            item = self.emit(operator.getitem, [value, Const(i)], hint=f"{name}_{label}",
                             node=node)
            items.append(item if sub is None else self.structured(item, sub, f"{name}_{label}",
                                                                  node))
        if what == "dict":
            return StaticDict(tuple(detail), tuple(items))
        if what == "record":
            return Record(tuple(items), False, detail)
        return StaticSeq(tuple(items), detail)

    def _check_signature(self, node, varargs=False):
        """`varargs`: an inlined helper's *args are the call's extra arguments."""
        args = node.args
        if args.vararg is not None and not varargs:
            self.error(UnsupportedSyntaxError, "*args parameters are not supported", args.vararg,
                       "give each argument its own parameter")
        if args.kwarg is not None and not varargs:
            self.error(UnsupportedSyntaxError, "**kwargs parameters are not supported",
                       args.kwarg, "use keyword-only parameters with defaults")

    def lower_body(self, body, fnode):
        """Lower a function body; returns (result atoms, returns_tuple)."""
        body = [s for s in body]
        if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # docstring
        ret = contains(body, (gast.Return,), into_loops=True)
        stmts = normalize_exits(lift_loop_returns(body))
        n_errors = len(self.errors)
        outcome = self.lower_stmts(stmts, in_loop=False)
        if outcome is None and len(self.errors) > n_errors:
            return [Const(None)], False  # the missing return follows from reported errors
        if outcome == "raise":
            # (a branch decided while compiling that raises: `else: raise ValueError(mode)`)
            # the generated code raises as the function does; it never returns
            return [Const(0.0)], False
        if outcome is None:
            node = stmts[-1] if stmts else fnode
            if ret is None:
                self.error(UnsupportedSyntaxError, "the function does not return a value", fnode,
                           "end the function with `return <value>`")
            else:
                self.error(UnsupportedSyntaxError, "not every path through the function returns "
                           "a value", node, "add a `return` at the end of the function")
            return [Const(None)], False
        try:
            # a list, namedtuple or dict returned: its values, rebuilt around the result
            self.out_structure = output_structure(outcome)
            return self.flatten_return(as_tuples(outcome, self.out_structure))
        except Abort:  # reported (a value that cannot be returned)
            return [Const(None)], False

    def flatten_return(self, value):
        if isinstance(value, StaticSeq):
            return [self.returned(v) for v in value.items], True
        return [self.returned(value)], False

    def returned(self, value):
        """An atom for a returned value (a grown list goes back as a plain list)."""
        atom = self.materialize(value)
        if isinstance(atom, Var) and atom in self.grown:
            return self.emit(prims.as_list, [atom], hint="_list")
        return atom


def output_structure(value):
    """The structure a returned value has that its generated code returns as tuples: a list,
    namedtuple or dict written in the function, at any depth, as ("list", None, items),
    ("record", cls, items) or ("dict", keys, items), with ("tuple", None, items) for a tuple
    holding one and None for anything else (returned as it is). Kept in the lowered
    function's meta["out_structure"]; s2sad.calls.rebuild_output applies it."""
    if isinstance(value, StaticDict):
        return ("dict", tuple(value.keys), tuple(output_structure(v) for v in value.values))
    if isinstance(value, Record):
        return ("record", value.cls, tuple(output_structure(v) for v in value.items))
    if isinstance(value, StaticSeq):
        items = tuple(output_structure(v) for v in value.items)
        if value.is_list:
            return ("list", None, items)
        if any(i is not None for i in items):
            return ("tuple", None, items)
    return None


def as_tuples(value, structure):
    """A returned `value` with each list, namedtuple and dict that `structure` records made
    a tuple of its values (the generated code returns tuples; the call rebuilds them)."""
    if structure is None:
        return value
    items = value.values if isinstance(value, StaticDict) else value.items
    return StaticSeq(tuple(as_tuples(v, s) for v, s in zip(items, structure[2])))


def lower(func, table, views: tuple = ()) -> Function:
    """Lower the Python function `func` to IR, using `table` to recognise primitives;
    `views`: the structure of its dict and namedtuple arguments (kinds.structure_view)."""
    return Lowerer(table).lower_function(func, views)


__all__ = ["lower", "Lowerer", "derivative_hook"]
