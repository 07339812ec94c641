"""Lowering expressions: names resolved to the objects they denote, operators,
comparisons, conditional expressions, attributes and subscripts.
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from s2sad.errors import NameResolutionError, S2SADError, UnsupportedSyntaxError
from s2sad.frontend.values import (
    ARRAY_ATTRS,
    BINOPS,
    CMPOPS,
    UNOPS,
    Abort,
    LocalFunction,
    ObjectRecord,
    Partial,
    Poisoned,
    Static,
    Record,
    StaticDict,
    StaticSeq,
    SuperRecord,
    Undefined,
    Zipped,
    is_simple_constant,
)
from s2sad.ir import prims
from s2sad.ir.nodes import Block, Const, If, Var


class ExpressionLowering:
    """Methods of `Lowerer` (s2sad.frontend.lower): expressions."""

    def materialize(self, value):
        """Turn a lowered value into an IR atom (building runtime tuples if needed)."""
        if isinstance(value, (Var, Const)):
            return value
        if isinstance(value, StaticSeq):
            items = [self.materialize(v) for v in value.items]
            if all(isinstance(i, Const) for i in items) and not value.is_list:
                return Const(tuple(i.value for i in items))
            fn = prims.make_list if value.is_list else prims.make_tuple
            out = self.emit(fn, items, hint="_l" if value.is_list else "_tup")
            if value.is_list:
                self.grown.add(out)  # a list the function built: it may append to it
            return out
        if isinstance(value, Static):
            if is_simple_constant(value.obj) or isinstance(value.obj, np.ndarray):
                return Const(value.obj, value.name)
            return Const(value.obj, value.name)
        if isinstance(value, (Undefined, Poisoned)):
            raise Abort  # already reported
        if isinstance(value, (StaticDict, Zipped)):
            what, hint = (
                ("a dict written in the function can be indexed, iterated and passed to its "
                 "helpers, not returned or stored in an array", "return a tuple of its values")
                if isinstance(value, StaticDict) else
                (f"{'enumerate' if value.counted else 'zip'}() of arrays is supported only as "
                 "the iterable of a `for` loop",
                 "loop over it directly: `for i, row in enumerate(x):`"))
            self.errors.append(UnsupportedSyntaxError(what, self.statement_loc(), hint))
            raise Abort
        if isinstance(value, (ObjectRecord, SuperRecord, Partial)):
            what = f"a `{value.cls.__name__}` object" if isinstance(value, ObjectRecord) \
                else "a bound method or functools.partial"
            self.errors.append(UnsupportedSyntaxError(
                f"{what} made in the function is used as a value (returned, stored in an "
                "array, merged by a branch)", self.statement_loc(),
                "return or store the values it holds; call its methods where it is made"))
            raise Abort
        if isinstance(value, LocalFunction):
            self.errors.append(UnsupportedSyntaxError(
                f"the function `{value.name}` defined inside the differentiated function is "
                "used as a value (stored, returned or chosen by a branch)",
                value.scope.parsed.loc(value.node),
                "call it where it is defined; a function value cannot flow through arrays, "
                "returns or branches"))
            raise Abort
        raise AssertionError(value)

    def statement_loc(self):
        """Where the statement being lowered is (for an error found below expressions)."""
        if not self.stmt_stack:
            return None
        stmts, k, _ = self.stmt_stack[-1]
        return self.loc(stmts[k])

    def constant(self, obj, name=None):
        if is_simple_constant(obj) and not isinstance(obj, tuple):
            return Const(obj)
        return Static(obj, name or repr(obj))

    def peek_static(self, node):
        """The static object an expression names, without emitting code (or None)."""
        if isinstance(node, gast.Name):
            v = self.scope.binding(node.id)
            if v is not None:
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
        v = self.scope.binding(name)
        if v is not None:
            if isinstance(v, Poisoned):
                raise Abort
            if isinstance(v, Undefined) and v.deleted:
                self.error(NameResolutionError, f"`{name}` is read after `del {name}` (Python "
                           "raises UnboundLocalError)", node,
                           f"assign `{name}` again before reading it, or remove the `del`")
                raise Abort
            if isinstance(v, Undefined):
                self.error(NameResolutionError, f"`{name}` may be undefined here: it is "
                           "assigned in only one branch or only inside a loop", node,
                           f"assign `{name}` before the `if` or loop")
                raise Abort
            return v
        try:
            obj = self.scope.parsed.lookup(name)
        except KeyError:
            self.error(NameResolutionError, f"name `{name}` is not defined", node,
                       "define it at module level or pass it as an argument")
            raise Abort
        return self.global_value(obj, name)

    def global_value(self, obj, name):
        if is_simple_constant(obj) and not isinstance(obj, tuple):
            return Const(obj)
        if isinstance(obj, np.ndarray) or isinstance(obj, np.generic):
            return Const(obj, name)
        return Static(obj, name)

    def expr(self, node):
        try:
            return self._expr(node)
        except Abort:
            raise
        except S2SADError as e:
            if e.loc is None:
                e.loc = self.loc(node)
            self.errors.append(e)
            raise Abort

    def _expr(self, node):
        cls = type(node)  # (the commonest nodes first, without the match's class tests)
        if cls is gast.Name:
            return self.name_load(node.id, node)
        if cls is gast.Constant:
            return Const(node.value)
        if cls is gast.Call:
            return self.lower_call(node)
        if cls is gast.BinOp:
            return self.call_value(BINOPS[type(node.op)],
                                   [self.expr(node.left), self.expr(node.right)], [], node)
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
                return self.local_function(node, f"lambda_{self.loc(node).lineno}")
            case gast.ListComp() | gast.DictComp() | gast.GeneratorExp():
                return self.lower_comprehension(node)
            case gast.SetComp():
                self.error(UnsupportedSyntaxError, "set comprehensions are not supported", node,
                           "build a list, or use a vectorised NumPy expression")
            case gast.Yield() | gast.YieldFrom() | gast.Await():
                self.error(UnsupportedSyntaxError, f"`{type(node).__name__.lower()}` is not "
                           "supported", node, "return a value instead")
            case gast.NamedExpr():
                self.error(UnsupportedSyntaxError, "the walrus operator `:=` is not supported",
                           node, "assign in a separate statement")
            case gast.Dict(keys=keys, values=values):
                return self.lower_dict(keys, values, node)
            case gast.Set():
                self.error(UnsupportedSyntaxError, "set literals are not supported",
                           node, "use tuples or arrays")
            case gast.JoinedStr(values=values):
                return self.lower_fstring(values, node)
            case gast.FormattedValue():
                self.error(UnsupportedSyntaxError, "f-strings are not supported here", node)
            case gast.Starred():
                self.error(UnsupportedSyntaxError, "starred expressions are not supported", node)
            case _:
                self.error(UnsupportedSyntaxError, f"`{type(node).__name__}` expressions are not "
                           "supported", node)
        raise Abort

    def _no_starred(self, elts):
        for e in elts:
            if isinstance(e, gast.Starred):
                self.error(UnsupportedSyntaxError, "starred expressions are not supported", e,
                           "list the items explicitly")
                raise Abort
        return elts

    def lower_dict(self, keys, values, node):
        """{"w": w, "b": b} with constant keys: a StaticDict (looked up while compiling)."""
        out = StaticDict((), ())
        for k, v in zip(keys, values):
            if k is None:  # {**defaults, **options}: the items of a dict known now
                d = self.expr(v)
                if isinstance(d, Static) and type(d.obj) is dict and \
                        all(isinstance(key, (str, int)) for key in d.obj):
                    d = StaticDict(tuple(d.obj), tuple(self.global_value(x, f"{d.name}[{key!r}]")
                                                       for key, x in d.obj.items()))
                if not isinstance(d, StaticDict):
                    self.error(UnsupportedSyntaxError, "`**` in a dict literal of a dict not "
                               "written in the function", v, "write each item")
                    raise Abort
                for key, x in zip(d.keys, d.values):
                    out = out.with_item(key, x)
                continue
            key = self.expr(k)
            if not (isinstance(key, Const) and isinstance(key.value, (str, int, tuple))):
                self.error(UnsupportedSyntaxError, "a dict key must be a constant (a string, "
                           "an integer)", k, "use constant keys, or a tuple or array indexed "
                           "by position")
                raise Abort
            out = out.with_item(key.value, self.expr(v))
        return out

    def dict_item(self, d, key, node):
        if not (isinstance(key, Const) and isinstance(key.value, (str, int, tuple))):
            self.error(UnsupportedSyntaxError, "a dict is indexed by constant keys here", node)
            raise Abort
        try:
            return d.get(key.value)
        except KeyError:
            self.error(NameResolutionError, f"the dict has no key {key.value!r}", node)
            raise Abort

    def lower_fstring(self, parts, node):
        """f"x = {x:.3f}" -> format_text("x = {:.3f}", x): text for print() and assert."""
        template, values = [], []
        for part in parts:
            if isinstance(part, gast.Constant):
                template.append(str(part.value).replace("{", "{{").replace("}", "}}"))
                continue
            spec = part.format_spec
            if spec is not None and not all(isinstance(v, gast.Constant) for v in spec.values):
                self.error(UnsupportedSyntaxError, "a computed format spec in an f-string is "
                           "not supported", node, "write the format spec as constant text")
                raise Abort
            field = "{"
            if part.conversion not in (-1, None):
                field += "!" + chr(part.conversion)
            if spec is not None:
                field += ":" + "".join(str(v.value) for v in spec.values)
            template.append(field + "}")
            values.append(self.materialize(self.expr(part.value)))
        return self.emit(prims.format_text, [Const("".join(template))] + values, hint="_text",
                         node=node)

    def lower_boolop(self, op, values, node):
        # `a and b` is `b if a else a`; `a or b` is `a if a else b` (short-circuit kept)
        left = self.materialize(self.expr(values[0]))
        stops = isinstance(op, gast.Or)  # (the truth that ends the evaluation)
        for rest in values[1:]:
            if self.truth_of(left) is not None:
                # a value lowering computed (`not issparse(X)` of an array argument): the
                # operand that Python's short-circuit picks, and nothing else
                if self.truth_of(left) == stops:
                    return left
                left = self.materialize(self.expr(rest))
                continue
            env0 = dict(self.scope.env)
            stmts, right = self.sub_block(lambda r=rest: self.materialize(self.expr(r)))
            self.scope.env = env0
            out = self.fresh("_b")
            if self.truth_of(right) is stops:
                # `flag and issparse(X)`: false whatever `flag` is (it is `flag` or False),
                # though its value is known only where the code runs
                self.known_truth[out] = stops
            if isinstance(op, gast.And):
                blk_t, blk_f = Block(tuple(stmts), (right,)), Block((), (left,))
            else:
                blk_t, blk_f = Block((), (left,)), Block(tuple(stmts), (right,))
            self.stmts.append(If(left, blk_t, blk_f, (out,), self.loc(node)))
            left = out
        return left

    def truth_of(self, value):
        """The truth of a lowered value where lowering knows it (a constant, `x and False`),
        else None."""
        if type(value) is Const and type(value.value) in (bool, int, str, type(None)):
            return bool(value.value)
        return self.known_truth.get(value) if isinstance(value, Var) else None

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
        decided = self.static_truth(test)
        if decided is not None:  # as for an `if` statement: only the branch that runs
            return self.expr(body if decided else orelse)
        cond = self.materialize(self.expr(test))
        if self.truth_of(cond) is not None:  # (a test lowering computed)
            return self.expr(body if self.truth_of(cond) else orelse)
        env0 = dict(self.scope.env)
        ts, tv = self.sub_block(lambda: self.materialize(self.expr(body)))
        self.scope.env = dict(env0)
        es, ev = self.sub_block(lambda: self.materialize(self.expr(orelse)))
        self.scope.env = env0
        out = self.fresh("_v")
        self.stmts.append(If(cond, Block(tuple(ts), (tv,)), Block(tuple(es), (ev,)), (out,),
                             self.loc(node)))
        return out

    def lower_comprehension(self, node):
        """`[e for x in xs if c]`, a generator expression or a dict comprehension: the loop
        that appends to (or stores into) a new list or dict, lowered as written out. Over a
        tuple, a list or a dict the loop unrolls while compiling; over `range` it is a loop
        growing a list. Its variables stay its own, as in Python 3."""
        k = self.counts.get("<comprehension>", 0) + 1
        self.counts["<comprehension>"] = k
        name = f"_comprehension{k}" if k > 1 else "_comprehension"

        def at(new):
            return gast.copy_location(new, node)

        def target(ctx):
            return at(gast.Name(id=name, ctx=ctx, annotation=None, type_comment=None))

        if isinstance(node, gast.DictComp):
            start = at(gast.Dict(keys=[], values=[]))
            inner = at(gast.Assign(targets=[at(gast.Subscript(value=target(gast.Load()),
                                                              slice=node.key,
                                                              ctx=gast.Store()))],
                                   value=node.value, type_comment=None))
        else:
            start = at(gast.List(elts=[], ctx=gast.Load()))
            append = at(gast.Attribute(value=target(gast.Load()), attr="append",
                                       ctx=gast.Load()))
            inner = at(gast.Expr(value=at(gast.Call(func=append, args=[node.elt],
                                                    keywords=[]))))
        body = [inner]
        for gen in reversed(node.generators):
            if gen.is_async:
                self.error(UnsupportedSyntaxError, "`async for` is not supported", node)
                raise Abort
            for cond in reversed(gen.ifs):
                body = [at(gast.If(test=cond, body=body, orelse=[]))]
            body = [at(gast.For(target=gen.target, iter=gen.iter, body=body, orelse=[],
                                type_comment=None))]
        stmts = [at(gast.Assign(targets=[target(gast.Store())], value=start,
                                type_comment=None))] + body
        own = {name} | {n.id for gen in node.generators for n in gast.walk(gen.target)
                        if isinstance(n, gast.Name)}
        saved = {n: self.scope.env[n] for n in own if n in self.scope.env}
        try:
            self.lower_stmts(stmts, in_loop=False)
            return self.expr(target(gast.Load()))
        finally:
            for n in own:
                if n in saved:
                    self.scope.env[n] = saved[n]
                else:
                    self.scope.env.pop(n, None)

    def lower_attribute(self, base, attr, node):
        bv = self.expr(base)
        if isinstance(bv, (ObjectRecord, SuperRecord)):
            return self.record_attribute(bv, attr, node)
        if isinstance(bv, Static) and (id(bv.obj), attr) in self.written_attrs:
            return self.attribute_read_now(bv, attr, node)
        if isinstance(bv, Static):
            try:
                obj = getattr(bv.obj, attr)
            except AttributeError:
                self.error(NameResolutionError, f"`{bv.name}` has no attribute `{attr}`", node)
                raise Abort
            return self.global_value(obj, f"{bv.name}.{attr}")
        if isinstance(bv, Record):
            item = bv.field(attr)
            if item is not None:
                return item
            self.error(UnsupportedSyntaxError, f"`{bv.cls.__name__}` has no field `{attr}`",
                       node, f"its fields are {', '.join(bv.cls._fields)}")
            raise Abort
        if isinstance(bv, StaticSeq):
            self.error(UnsupportedSyntaxError, f"attribute `{attr}` of a tuple or list literal",
                       node)
            raise Abort
        if attr == "ndim" and isinstance(bv, Var) and bv in self.param_ranks:
            return Const(self.param_ranks[bv][1])  # (a fact of the specialisation)
        if attr in ARRAY_ATTRS:
            out = self.call_value(prims.Attr(attr), [bv], [], node, "_" + attr.lower())
            if attr == "shape" and isinstance(bv, Var) and isinstance(out, Var):
                self.shape_source[out] = bv  # (its length is its rank: see starred_items)
            return out
        error = UnsupportedSyntaxError(
            f"attribute `.{attr}` is not supported on a differentiated value", self.loc(node),
            f"supported attributes: {', '.join(sorted(ARRAY_ATTRS))}; for a method reading "
            "`self`, differentiate the bound method (s2sad.grad(obj.method)), whose object "
            "is a constant")
        if isinstance(bv, Var):
            # an attribute of a run-time object (a library's object made in the function):
            # read where the code runs, where no derivative reaches it
            return self.emit(prims.Opaque(prims.Attr(attr), [error]), [bv], hint=attr,
                             node=node)
        self.errors.append(error)
        raise Abort

    def lower_subscript(self, base, index, node):
        bv = self.expr(base)
        iv = self.expr(index)
        if isinstance(bv, StaticDict):
            return self.dict_item(bv, iv, node)
        if isinstance(bv, StaticSeq) and isinstance(iv, Const) and \
                isinstance(iv.value, (int, slice)):
            if isinstance(iv.value, int):
                try:
                    return bv.items[iv.value]
                except IndexError:
                    self.error(UnsupportedSyntaxError, "tuple index out of range", node)
                    raise Abort
            return StaticSeq(bv.items[iv.value], bv.is_list)
        if isinstance(bv, Static) and isinstance(iv, Const):
            try:
                return self.global_value(bv.obj[iv.value], f"{bv.name}[{iv.value!r}]")
            except Exception:
                pass
        if isinstance(bv, Static) and (bv.obj is np.r_ or bv.obj is np.c_):
            self.error(UnsupportedSyntaxError, f"`{bv.name}[...]` of values computed in the "
                       "function is not supported", node,
                       "join them with np.concatenate([...]), np.stack or np.column_stack")
            raise Abort
        return self.call_value(operator.getitem, [bv, iv], [], node)
