"""Expressions of the emitted source: an IR atom or call as a gast expression (names,
constants, the index syntax `a[i:j, k]`, operators, calls spelled through their module);
NumPy keywords given their default values are left out.

A mixin of codegen/emit.Emitter, which holds `ns` (the namespace), `names` (the variables'
names) and `pending` (temporaries folded into the expression that reads them).
"""

from __future__ import annotations

import math
import operator

import gast
import numpy as np

from s2sad.codegen.syntax import BINOP_AST, CMP_AST, UNARY_AST
from s2sad.errors import UnknownShapeError
from s2sad.ir import prims
from s2sad.ir.dims import Dim, Observed, spell, symbols
from s2sad.ir.nodes import Const, Var

# One shared node for each operator and for the load context: the printers read only their
# type (codegen/unparse.py; astor's fallback converts the tree to `ast` first), and building
# a fresh one for every name, attribute and operator of the generated code was a good part
# of the time spent building the expressions.
LOAD = gast.Load()
_BINOPS = {fn: node() for fn, node in BINOP_AST.items()}
_CMPOPS = {fn: node() for fn, node in CMP_AST.items()}
_UNARYOPS = {fn: node() for fn, node in UNARY_AST.items()}
_USUB, _IN = gast.USub(), gast.In()


# The nodes built for every expression, made without gast's constructor (a Python function
# taking the fields as keywords, for each node): the same node, with the same fields.
def _new(cls):
    return cls.__new__(cls)


def _name(name: str):
    node = _new(gast.Name)
    node.id, node.ctx, node.annotation, node.type_comment = name, LOAD, None, None
    return node


def _constant(value):
    node = _new(gast.Constant)
    node.value, node.kind = value, None
    return node


def _binop(left, op, right):
    node = _new(gast.BinOp)
    node.left, node.op, node.right = left, op, right
    return node


def _call(func, args: list, keywords: list):
    node = _new(gast.Call)
    node.func, node.args, node.keywords = func, args, keywords
    return node


class ExpressionEmitter:
    """Methods of Emitter (codegen/emit.py): expressions."""


    def atom(self, a):
        if type(a) is Var:
            if a in self.pending:
                return self.pending.pop(a)
            # one node per variable: a name's node is never changed, only printed
            node = self.name_nodes.get(a)
            if node is None:
                node = self.name_nodes[a] = _name(self.names.name(a))
            return node
        return self.const(a)

    def const(self, c: Const):
        v = c.value
        if isinstance(v, prims.ZeroValue):
            # the simplifier materialises every zero whose shape it knows; one it does not
            # is on one side of a branch that only the arguments' kinds decide (generic code)
            fn = self.fn
            raise UnknownShapeError(
                f"the code of {fn.name} for arguments of any kind needs the shape of a zero "
                "derivative that only the arguments tell", fn.loc,
                "call the derivative, or use .source_for(*args) (s2sad show --args) to see "
                "the code specialised for some arguments")
        if isinstance(v, bool) or v is None or v is Ellipsis or isinstance(v, str):
            return _constant(v)
        if v is prims.NOT_COMPUTED:  # (what a branch yields for the other's residual)
            return _constant(None)
        if isinstance(v, np.generic) and v.dtype.kind in "iufc":
            # a NumPy number keeps its type: unlike a Python number, it is not weak in
            # NumPy's promotion (float32 * np.float64(2.0) is float64, float32 * 2.0 is not)
            return self.call_expr(type(v), [Const(v.item())], [])
        if isinstance(v, np.generic) and v.dtype.kind == "b":
            v = v.item()
        if isinstance(v, Dim):
            return self.size_expr(v)
        if isinstance(v, (int, float)):
            if isinstance(v, float) and not math.isfinite(v):
                return self.attr_path("math.inf" if v > 0 else "-math.inf") if v == v and \
                    abs(v) == math.inf else self.attr_path("math.nan")
            if v < 0:
                return gast.UnaryOp(op=_USUB, operand=_constant(-v))
            return _constant(v)
        if isinstance(v, complex):
            return _constant(v)
        if isinstance(v, tuple):
            return gast.Tuple(elts=[self.const(Const(x)) for x in v], ctx=LOAD)
        if isinstance(v, slice):
            return self.call_expr(slice, [Const(v.start), Const(v.stop), Const(v.step)], [])
        if isinstance(v, type) and v in (float, int, complex, bool):
            return self.attr_path(v.__name__)
        if callable(v) and not isinstance(v, np.ndarray):
            return self.attr_path(self.ns.spell_callable(v))
        if isinstance(v, np.dtype) and v.fields is None and v.subdtype is None:
            # a dtype made while compiling (np.dtype("long"), as scipy.special.lambertw does)
            return self.call_expr(np.dtype, [Const(v.name if v.isnative else v.str)], [])
        name = c.name if c.name and c.name.replace(".", "_").isidentifier() else None
        if name and "." in name:
            root = name.split(".")[0]
            if root in ("np", "math") and _attribute(name) is v:
                return self.attr_path(name)
            # (not `np.finfo` for the object np.finfo(float) made: the name of its maker)
            name = name.replace(".", "_")
        return self.attr_path(self.ns.add_object(v, name or "_const"))

    def size_expr(self, v: Dim):
        """A size known as a symbol (ir/dims.py): its expression in names bound at the top
        of the function from the arguments' shapes (`n = x.shape[0]`, see emit_function)."""
        origins = self.fn.meta.get("dim_origins", {})
        names = {}
        for sym in sorted(symbols(v)):
            if sym not in origins:
                raise Observed(f"the size {sym} is not an argument's")
            printed = self.dim_names.get(sym)
            if printed is None and origins[sym][1] is None and \
                    list((self.names.printed or {}).values()).count(
                        self.names.name(origins[sym][0])) <= 1:
                # an int argument: its own name, where no other variable is printed so
                # (else the name is rebound after the argument's last use: bound apart)
                printed = self.dim_names[sym] = self.names.name(origins[sym][0])
            if printed is None:
                printed, i = sym, 1
                while printed in self.taken:
                    printed, i = f"{sym}_{i}", i + 1
                self.taken.add(printed)
                self.dim_names[sym] = printed
            names[sym] = printed
        return gast.parse(spell(v.expr, names)).body[0].value

    def attr_path(self, dotted: str):
        """The node of `dotted` (`np.linalg.solve`): one per spelling, as `atom`'s names."""
        node = self.path_nodes.get(dotted)
        if node is None:
            node = self.path_nodes[dotted] = self._attr_path(dotted)
        return node

    def _attr_path(self, dotted: str):
        if dotted.startswith("-"):
            return gast.UnaryOp(op=_USUB, operand=self.attr_path(dotted[1:]))
        parts = dotted.split(".")
        node = _name(parts[0])
        for p in parts[1:]:
            node = gast.Attribute(value=node, attr=p, ctx=LOAD)
        return node

    def index_expr(self, a):
        """An index operand: slices print as `a:b`, tuples as `i, j`."""
        if isinstance(a, Const):
            v = a.value
            if isinstance(v, slice):
                return self.slice_node(*(Const(x) for x in (v.start, v.stop, v.step)))
            if isinstance(v, tuple):
                return gast.Tuple(elts=[self.index_expr(Const(x)) for x in v], ctx=LOAD)
            return self.const(a)
        if a in self.pending_calls and a in self.pending:
            # a slice or tuple folded into the index: its expression was rendered when it was
            # made (folding the temporaries it reads), so it is respelled, not rebuilt
            call = self.pending_calls.pop(a)
            node = self.pending.pop(a)
            if call.fn is slice:
                return self.as_slice(node)
            for k, x in enumerate(call.args):
                inner = self.pending_calls.pop(x, None) if isinstance(x, Var) else None
                if inner is not None and inner.fn is slice:
                    node.elts[k] = self.as_slice(node.elts[k])
                elif isinstance(x, Const) and isinstance(x.value, slice):
                    node.elts[k] = self.index_expr(x)
            return node
        return self.atom(a)

    @staticmethod
    def as_slice(call):
        """`slice(lo, hi, st)` (rendered) as the index syntax `lo:hi:st`."""
        def part(x):
            return None if isinstance(x, gast.Constant) and x.value is None else x

        return gast.Slice(lower=part(call.args[0]), upper=part(call.args[1]),
                          step=part(call.args[2]))

    def slice_node(self, lo, hi, st):
        def part(x):
            if isinstance(x, Const) and x.value is None:
                return None
            return self.atom(x)

        return gast.Slice(lower=part(lo), upper=part(hi), step=part(st))

    def call_expr(self, fn, args, kwargs):
        if fn in BINOP_AST and len(args) == 2 and not kwargs:
            return _binop(self.atom(args[0]), _BINOPS[fn], self.atom(args[1]))
        if fn in CMP_AST and len(args) == 2:
            return gast.Compare(left=self.atom(args[0]), ops=[_CMPOPS[fn]],
                                comparators=[self.atom(args[1])])
        if fn in UNARY_AST and len(args) == 1:
            return gast.UnaryOp(op=_UNARYOPS[fn], operand=self.atom(args[0]))
        if fn is operator.contains:
            return gast.Compare(left=self.atom(args[1]), ops=[_IN],
                                comparators=[self.atom(args[0])])
        if fn is operator.getitem:
            base = self.atom(args[0])
            return gast.Subscript(value=base, slice=self.index_expr(args[1]), ctx=LOAD)
        if (fn is prims.identity or fn is prims.once_differentiable) and len(args) == 1 \
                and not kwargs:
            return self.atom(args[0])
        if fn is prims.make_tuple:
            return gast.Tuple(elts=[self.atom(a) for a in args], ctx=LOAD)
        if fn is prims.int_range:
            rng = gast.Call(func=self.attr_path("range"), args=[self.atom(a) for a in args],
                            keywords=[])
            return gast.Call(func=self.attr_path("tuple"), args=[rng], keywords=[])
        if fn is prims.make_list:
            return gast.List(elts=[self.atom(a) for a in args], ctx=LOAD)
        if isinstance(fn, prims.Attr):
            return gast.Attribute(value=self.atom(args[0]), attr=fn.name, ctx=LOAD)
        if (fn is prims.astype or fn is prims.item) and args:
            # the array methods as written: x.astype(np.float32), x.item()
            method = gast.Attribute(value=self.atom(args[0]), attr=fn.__name__, ctx=LOAD)
            return gast.Call(func=method, args=[self.atom(a) for a in args[1:]],
                             keywords=[gast.keyword(arg=n, value=self.atom(a))
                                       for n, a in kwargs])
        if isinstance(fn, prims.Opaque) and isinstance(fn.func, prims.Attr):
            # an attribute the function writes, read where the code runs (`self.nfev`)
            return gast.Attribute(value=self.atom(args[0]), attr=fn.func.name, ctx=LOAD)
        if isinstance(fn, prims.Opaque) and isinstance(fn.func, prims.ContextCall):
            method = gast.Attribute(value=self.atom(args[0]), attr=fn.func.__name__, ctx=LOAD)
            return gast.Call(func=method, args=[gast.Constant(value=None, kind=None)] * 3
                             if fn.func.exit else [], keywords=[])
        if isinstance(fn, prims.Opaque) and isinstance(fn.func, prims.MethodCall):
            method = gast.Attribute(value=self.atom(args[0]), attr=fn.func.name,
                                    ctx=LOAD)
            return gast.Call(func=method, args=[self.atom(a) for a in args[1:]],
                             keywords=[gast.keyword(arg=n, value=self.atom(a))
                                       for n, a in kwargs])
        if fn is prims.new_tape:
            return gast.List(elts=[], ctx=LOAD)
        if fn is prims.tape_pop:
            return gast.Call(func=gast.Attribute(value=self.atom(args[0]), attr="pop",
                                                 ctx=LOAD), args=[], keywords=[])
        if fn is prims.apply_pullback:
            return gast.Call(func=self.atom(args[0]), args=[self.atom(args[1])], keywords=[])
        if fn is prims.tape_reader:
            return gast.Call(func=self.attr_path("reversed"), args=[self.atom(args[0])],
                             keywords=[])
        if fn is prims.tape_next:
            return gast.Call(func=self.attr_path("next"), args=[self.atom(args[0])],
                             keywords=[])
        if fn is prims.tape_push:
            return gast.Call(func=gast.Attribute(value=self.atom(args[0]), attr="append",
                                                 ctx=LOAD), args=[self.atom(args[1])],
                             keywords=[])
        if fn is prims.print_values:
            return gast.Call(func=self.attr_path("print"), args=[self.atom(a) for a in args],
                             keywords=[gast.keyword(arg=n, value=self.atom(a))
                                       for n, a in kwargs])
        if fn is prims.format_text:  # an f-string, as "...".format(...)
            return gast.Call(func=gast.Attribute(value=self.atom(args[0]), attr="format",
                                                 ctx=LOAD),
                             args=[self.atom(a) for a in args[1:]], keywords=[])
        func = self.attr_path(self.ns.spell_callable(fn))
        return _call(func, [self.atom(a) for a in args],
                     [gast.keyword(arg=n, value=self.atom(a)) for n, a in kwargs
                      if not (type(a) is Const and _is_default(fn, n, a.value))])

    # statements --------------------------------------------------------


def _is_default(fn, keyword: str, value) -> bool:
    """Whether `keyword=value` is what `fn` does without it (`axis=None`, `keepdims=False`
    of a NumPy reduction): such keywords are not printed."""
    if not (value is None or type(value) in (bool, int, float, str)):
        return False
    defaults = _keyword_defaults(fn)
    if keyword not in defaults:
        return False
    d = defaults[keyword]
    if d is np._NoValue:  # NumPy's "not given": keepdims=False is its behaviour
        return keyword == "keepdims" and value is False
    return type(d) is type(value) and d == value


def _keyword_defaults(fn) -> dict:
    try:
        return _DEFAULTS[fn]
    except KeyError:
        pass
    except TypeError:  # not hashable
        return {}
    import inspect

    out = {}
    if getattr(fn, "__module__", None) in ("numpy", "math") or \
            (getattr(fn, "__module__", None) or "").startswith("numpy."):
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = ()
        out = {q.name: q.default for q in params if q.default is not q.empty}
    _DEFAULTS[fn] = out
    return out


_DEFAULTS: dict = {}


def _attribute(dotted: str):
    """The object `np.x.y` or `math.x` names, or None."""
    parts = dotted.split(".")
    obj = {"np": np, "math": math}[parts[0]]
    for p in parts[1:]:
        obj = getattr(obj, p, None)
    return obj
