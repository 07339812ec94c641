"""Lowering control flow: `if` (branches merge their values), `for` over `range` or an
array's rows, and `while` (loop-carried values become block parameters).
"""

from __future__ import annotations

import operator

import gast

from s2sad.errors import NonDifferentiableError, UnsupportedSyntaxError
from s2sad.frontend.array_facts import (
    array_fact,
    array_precision,
    dtype_letter,
    exact_dtype,
    known_hasattr,
    known_isinstance,
)
from s2sad.frontend.normalize import assigned_names, contains, normalize_exits
from s2sad.frontend.values import (
    Abort,
    LocalFunction,
    ObjectRecord,
    Record,
    Static,
    StaticDict,
    StaticSeq,
    Undefined,
    Zipped,
    loads,
    writes_into,
)
from s2sad.ir import prims
from s2sad.ir.nodes import Block, Const, ForRange, If, Var, While


_UNKNOWN = object()  # (static_value: not known while compiling)
_COMPARE = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
            gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
            gast.Is: operator.is_, gast.IsNot: operator.is_not,
            gast.In: lambda a, b: a in b, gast.NotIn: lambda a, b: a not in b}


class _Instance:
    """A stand-in for a value of which only the type is known while lowering."""

    def __init__(self, cls: type):
        self.cls = cls


def _static_seq_type(binding):
    """The type of a local tuple or list kept static (a namedtuple argument's class), or
    None for any other binding."""
    if isinstance(binding, Record):
        return binding.cls
    if type(binding) is StaticSeq:
        return list if binding.is_list else tuple
    return None


def _simple(v) -> bool:
    """A number, string, bool, None, or a tuple of them (sys.version_info is one)."""
    if isinstance(v, tuple):
        return all(_simple(i) for i in v)
    return v is None or type(v) in (bool, int, float, str)


class ControlFlowLowering:
    """Methods of `Lowerer` (s2sad.frontend.lower): control."""

    def lower_if(self, s, in_loop):
        decided = self.static_truth(s.test)
        if decided is not None:
            # a test known while compiling (a flag, hasattr(np, "trapezoid")): only the branch
            # that runs is lowered, so the other may use what this NumPy or this program
            # does not have
            return self.lower_stmts(s.body if decided else s.orelse, in_loop)
        cond = self.materialize(self.expr(s.test))
        truth = bool(cond.value) if isinstance(cond, Const) and _simple(cond.value) else \
            self.truth_of(cond)
        if truth is not None:
            # a test that lowering computed (`kind == "b"` of a helper's constant argument,
            # `dense and issparse(X)` of an array argument)
            return self.lower_stmts(s.body if truth else s.orelse, in_loop)
        env0 = dict(self.scope.env)
        then_stmts, then_out = self.sub_block(lambda: self.lower_stmts(s.body, in_loop), None)
        then_env = self.scope.env
        self.scope.env = dict(env0)
        else_stmts, else_out = self.sub_block(lambda: self.lower_stmts(s.orelse, in_loop), None)
        else_env = self.scope.env
        self.scope.env = dict(env0)
        if then_out == "raise" or else_out == "raise":
            return self.merge_raising(s, cond, (then_stmts, then_out, then_env),
                                      (else_stmts, else_out, else_env))
        if in_loop:
            # Loop bodies: "continue"/None fall through to the next iteration; "break" ends it.
            return self.merge_loop_if(s, cond, env0, (then_stmts, then_out, then_env),
                                      (else_stmts, else_out, else_env))
        if then_out is not None and else_out is not None:
            return self.merge_returns(s, cond, then_stmts, then_out, else_stmts, else_out)
        if then_out is not None or else_out is not None:
            self.error(UnsupportedSyntaxError, "only one branch of this `if` returns", s,
                       "return from both branches or after the `if`")
            raise Abort
        self.merge_envs(s, cond, env0, then_stmts, then_env, else_stmts, else_env)
        return None

    def merge_raising(self, s, cond, then, other):
        """An `if` one of whose branches raises: that branch is an `if` of its own, and the
        other's statements follow it (they run only where it did not raise)."""
        (ts, tout, tenv), (es, eout, eenv) = then, other
        if tout == "raise" and eout == "raise":
            self.stmts.append(If(cond, Block(tuple(ts)), Block(tuple(es)), (), self.loc(s)))
            return "raise"
        if tout == "raise":
            self.stmts.append(If(cond, Block(tuple(ts)), Block(()), (), self.loc(s)))
            self.stmts.extend(es)
            self.scope.env = eenv
            return eout
        self.stmts.append(If(cond, Block(()), Block(tuple(es)), (), self.loc(s)))
        self.stmts.extend(ts)
        self.scope.env = tenv
        return tout

    def static_truth(self, test):
        """True or False for a test whose value lowering knows without emitting code: a
        constant, a module-level number, bool or None, `not` of one, or hasattr / callable /
        isinstance of such objects; else None."""
        if isinstance(test, gast.Constant):
            return bool(test.value)
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            inner = self.static_truth(test.operand)
            return None if inner is None else not inner
        if isinstance(test, gast.BoolOp):
            parts = [self.static_truth(v) for v in test.values]
            if any(p is None for p in parts):
                return None
            return all(parts) if isinstance(test.op, gast.And) else any(parts)
        if isinstance(test, gast.Compare) and len(test.ops) == 1 and \
                isinstance(test.ops[0], (gast.Is, gast.IsNot)):
            # `Y is None` of an array argument (or an object made in the function): never
            sides = [test.left, test.comparators[0]]
            if any(isinstance(v, gast.Constant) and v.value is None for v in sides):
                other = sides[1] if isinstance(sides[0], gast.Constant) else sides[0]
                if isinstance(other, gast.Name) and self.never_none(other.id):
                    return isinstance(test.ops[0], gast.IsNot)
        if isinstance(test, gast.Compare):
            # (Cfg.mode == "a", sys.version_info >= (3, 11), LIMIT is None)
            values = [self.static_value(v) for v in [test.left] + test.comparators]
            if any(v is _UNKNOWN for v in values):
                return None
            try:
                return all(_COMPARE[type(op)](a, b)
                           for op, a, b in zip(test.ops, values, values[1:]))
            except Exception:  # noqa: BLE001 - Python's own error is raised where it runs
                return None
        if isinstance(test, (gast.Name, gast.Attribute)):
            v = self.static_value(test)
            return None if v is _UNKNOWN else bool(v)
        if isinstance(test, gast.Call) and not test.keywords and \
                all(isinstance(a, (gast.Name, gast.Attribute, gast.Constant)) for a in test.args):
            fn = self.peek_static(test.func)
            if fn is None or fn.obj not in (hasattr, callable, isinstance):
                return None
            args = []
            for i, a in enumerate(test.args):
                if isinstance(a, gast.Constant):
                    args.append(a.value)
                    continue
                bound = self.scope.binding(a.id) if isinstance(a, gast.Name) else None
                if isinstance(bound, Const) and _simple(bound.value) and \
                        not any(loop for _, _, loop in self.stmt_stack):
                    # a local bound to a constant (an option string a helper is given):
                    # isinstance(multioutput, str) asks its type, known now
                    args.append(bound.value)
                    continue
                if fn.obj is isinstance and i == 0 and array_fact(self, bound) is not None:
                    cls = self.peek_static(test.args[1]) if len(test.args) == 2 else None
                    return None if cls is None else known_isinstance(self, bound, cls.obj)
                if fn.obj is hasattr and i == 0 and array_fact(self, bound) is not None:
                    name = test.args[1] if len(test.args) == 2 else None
                    return known_hasattr(self, bound, name.value) if isinstance(
                        name, gast.Constant) else None
                if isinstance(a, gast.Name) and self.scope.binding(a.id) is not None and \
                        not isinstance(self.scope.binding(a.id), Static):
                    seq_type = _static_seq_type(self.scope.binding(a.id))
                    if fn.obj is not isinstance or i != 0 or seq_type is None:
                        return None
                    # a local tuple or list kept static: isinstance(out, tuple) asks its
                    # type, known now (the branch it rules out is then not lowered)
                    args.append(_Instance(seq_type))
                    continue
                v = self.peek_static(a)
                if v is None:
                    return None
                args.append(v.obj)
            try:
                if args and isinstance(args[0], _Instance):
                    return issubclass(args[0].cls, *args[1:])
                return bool(fn.obj(*args))
            except Exception:  # noqa: BLE001 - Python's own error is raised where it runs
                return None
        return None

    def never_none(self, name) -> bool:
        """Is the local `name` surely not None: an array argument of known rank, or an object,
        tuple, list or dict made in the function?"""
        bound = self.scope.binding(name)
        return (isinstance(bound, Var) and bound in self.param_ranks) or \
            isinstance(bound, (ObjectRecord, StaticSeq, StaticDict))

    def static_value(self, node):
        """The value of a constant, or of a module-level number, string, bool, None or tuple
        of them (named, or an attribute of a module or class), else _UNKNOWN."""
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, gast.Tuple):
            items = tuple(self.static_value(e) for e in node.elts)
            return _UNKNOWN if any(i is _UNKNOWN for i in items) else items
        if isinstance(node, gast.Attribute) and node.attr == "ndim" and \
                isinstance(node.value, gast.Name):
            known = self.param_ranks.get(self.scope.binding(node.value.id))
            if known is not None:  # x.ndim of an array argument: a fact of the compile
                return known[1]
        if isinstance(node, (gast.Name, gast.Attribute)):
            if isinstance(node, gast.Name) and self.scope.binding(node.id) is not None:
                # a local name: known where it is bound to a fact of the compile (a flag or
                # option string argument, the object of a method)
                bound = self.scope.binding(node.id)
                if isinstance(bound, Const) and bound.value is None and \
                        not any(loop for _, _, loop in self.stmt_stack):
                    return None  # (`if offset is None:` of a default left out)
                if isinstance(bound, Static) and _simple(bound.obj):
                    return bound.obj
                if isinstance(bound, Const) and _simple(bound.value) and \
                        not any(loop for _, _, loop in self.stmt_stack):
                    return bound.value  # (a flag a helper is given: dense_output=True)
                return _UNKNOWN
            v = self.peek_static(node)
            if v is not None and _simple(v.obj):
                return v.obj
        if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords and \
                isinstance(node.args[0], gast.Name):
            # len(t) of a local tuple of known length (the results of a helper returning
            # `u, s, vh`): `if len(t) == 2:` then lowers only the branch that runs
            fn = self.peek_static(node.func)
            seq = self.scope.binding(node.args[0].id)
            if fn is not None and fn.obj is len and isinstance(seq, StaticSeq) and \
                    not seq.is_list:
                return len(seq.items)
            known = self.peek_static(node.args[0]) if seq is None else None
            if fn is not None and fn.obj is len and known is not None and \
                    type(known.obj) in (tuple, str):  # a global or closure tuple (guarded)
                return len(known.obj)
        return _UNKNOWN

    def merge_returns(self, s, cond, then_stmts, then_out, else_stmts, else_out):
        a, a_tuple = self.flatten_in(then_stmts, then_out)
        b, b_tuple = self.flatten_in(else_stmts, else_out)
        if len(a) != len(b) or a_tuple != b_tuple:
            self.error(UnsupportedSyntaxError, "the branches return different numbers of values",
                       s, "return the same number of values on every path")
            raise Abort
        outs = tuple(self.fresh("_r") for _ in a)
        self.stmts.append(If(cond, Block(tuple(then_stmts), tuple(a)),
                             Block(tuple(else_stmts), tuple(b)), outs, self.loc(s)))
        if not a_tuple:
            return outs[0]
        # a list returned on both paths stays a list (it became a tuple: `isinstance(out,
        # list)` of a helper's result was False where the helper had branches)
        both_lists = all(isinstance(v, StaticSeq) and v.is_list for v in (then_out, else_out))
        if isinstance(then_out, Record) and isinstance(else_out, Record) and \
                then_out.cls is else_out.cls:
            return Record(outs, False, then_out.cls)  # the same namedtuple on both paths
        return StaticSeq(outs, both_lists)

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
            branches = (then_stmts, then_res, else_stmts, else_res, outs, name)
            if isinstance(a, StaticSeq) and isinstance(b, StaticSeq) and \
                    len(a.items) == len(b.items) and a.is_list == b.is_list:
                parts = self.merge_items(a.items, b.items, branches)
                merged = self.scope.env[name] = StaticSeq(parts, a.is_list)
                self.merged_from[id(merged)] = (merged, (a, b))
                continue
            if isinstance(a, StaticDict) and isinstance(b, StaticDict) and a.keys == b.keys:
                # a dict changed in a branch: each value merged like a tuple's items
                parts = self.merge_items(a.values, b.values, branches)
                merged = self.scope.env[name] = StaticDict(a.keys, parts)
                self.merged_from[id(merged)] = (merged, (a, b))
                continue
            if isinstance(a, (Static, LocalFunction)) or isinstance(b, (Static, LocalFunction)):
                if a == b:
                    self.scope.env[name] = a
                    continue
            then_res.append(self.materialize_in(then_stmts, a))
            else_res.append(self.materialize_in(else_stmts, b))
            outs.append(self.fresh(name))
            self.scope.env[name] = outs[-1]
            self.origins[outs[-1]] = tuple(v for v in (then_res[-1], else_res[-1])
                                           if isinstance(v, Var))
            if then_res[-1] in self.grown and else_res[-1] in self.grown:
                self.grown.add(outs[-1])
            if a in self.scope.fresh and b in self.scope.fresh:
                self.scope.fresh.add(outs[-1])
            facts = (array_fact(self, a), array_fact(self, b))
            if facts[0] is not None and facts[0] == facts[1]:  # an array either way
                self.param_ranks[outs[-1]] = facts[0]
            letters = (dtype_letter(self, a), dtype_letter(self, b))
            if None not in letters:  # a dtype either way (float32 or float)
                self.dtype_values[outs[-1]] = letters[0] if letters[0] == letters[1] else ""
            exact = (exact_dtype(self, a), exact_dtype(self, b)) if None not in letters else \
                (array_precision(self, a), array_precision(self, b))
            if exact[0] is not None and exact[0] == exact[1] and \
                    (None not in letters or outs[-1] in self.param_ranks):
                self.precisions[outs[-1]] = exact[0]  # (one exact dtype either way)
        # names bound in only one branch are undefined afterwards; a value read later only
        # under the same test (`if fit: c = w[-2]` ... `if fit: loss += c`) is not computed
        # on the other path, where nothing reads it
        for name in sorted(set(then_env) ^ set(else_env)):
            value = then_env.get(name, else_env.get(name))
            if not isinstance(value, (Var, Const)) or isinstance(value, Const) and \
                    value.value is prims.NOT_COMPUTED or not self.read_later(name) or \
                    not self.read_under_the_same_test(s, name, name in then_env):
                self.scope.env[name] = Undefined(name)
                continue
            missing = Const(prims.NOT_COMPUTED)
            then_res.append(self.materialize_in(then_stmts, then_env.get(name, missing)))
            else_res.append(self.materialize_in(else_stmts, else_env.get(name, missing)))
            outs.append(self.fresh(name))
            self.scope.env[name] = outs[-1]
        if then_stmts or else_stmts or outs:
            self.stmts.append(If(cond, Block(tuple(then_stmts), tuple(then_res)),
                                 Block(tuple(else_stmts), tuple(else_res)), tuple(outs),
                                 self.loc(s)))

    def read_under_the_same_test(self, s, name, in_then) -> bool:
        """Is `name`, bound by one branch of the `if` `s`, read (in this function) only in
        that branch of later `if`s with the same test, a test of names bound once and not
        in a loop around `s`, so that it is read only where it was computed?"""
        test = gast.dump(s.test)
        tested = {n.id for n in gast.walk(s.test) if isinstance(n, gast.Name)}
        if any(isinstance(n, (gast.Call, gast.NamedExpr, gast.Await)) for n in gast.walk(s.test)):
            return False
        body = self.scope_body()
        node = self.scope.local_node if self.scope.local_node is not None else \
            self.scope.parsed.node
        args = getattr(node, "args", None)
        stores: dict = {a.id: 1 for a in (args.args + args.kwonlyargs if args else [])
                        if isinstance(a, gast.Name)}
        for node in gast.walk(gast.Module(body=list(body), type_ignores=[])):
            if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
                stores[node.id] = stores.get(node.id, 0) + 1
        if any(stores.get(n, 0) > 1 for n in tested):
            return False

        def guarded(stmts, in_loop) -> bool:
            for st in stmts:
                if st is s:
                    if in_loop:
                        return False
                    continue
                if isinstance(st, gast.If) and gast.dump(st.test) == test:
                    # (its branch that reads the name runs where `s`'s branch that bound it
                    # ran: the test's names are bound once)
                    other = st.orelse if in_then else st.body
                    if not guarded(other, in_loop) or loads(st.test, name):
                        return False
                    continue
                inner = _child_blocks(st)
                if inner is None:
                    if loads(st, name):
                        return False
                    continue
                head, blocks = inner
                if head is not None and loads(head, name):
                    return False
                loop = in_loop or isinstance(st, (gast.For, gast.While))
                if not all(guarded(b, loop) for b in blocks):
                    return False
            return True
        return guarded(body, False)

    def merge_items(self, xs, ys, branches) -> tuple:
        """The items of a tuple (or a dict's values) after an `if`: an item both branches
        leave alone stays; the others become outputs of the If."""
        then_stmts, then_res, else_stmts, else_res, outs, name = branches
        parts = []
        for x, y in zip(xs, ys):
            if x is y:
                parts.append(x)
                continue
            then_res.append(self.materialize_in(then_stmts, x))
            else_res.append(self.materialize_in(else_stmts, y))
            outs.append(self.fresh(name))
            parts.append(outs[-1])
        return tuple(parts)

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
            raise Abort
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
        as the body leaves it a fresh array (checked by check_carried_fresh). One starting
        from a list the function built is a list it may append to."""
        for i, p in zip(inits, params):
            if isinstance(i, Var):
                self.origins[p] = (i,)
            if isinstance(i, Var) and i in self.scope.fresh:
                self.scope.fresh.add(p)
            if isinstance(i, Var) and i in self.grown:
                self.grown.add(p)

    def check_carried_fresh(self, params, results, outs, node, body_stmts=()):
        for p, r, o in zip(params, results, outs):
            self.origins[o] = tuple(v for v in (p, r) if isinstance(v, Var))
            if p in self.grown:
                self.grown.add(o)
        for p, r, o in zip(params, results, outs):
            if p in self.scope.fresh:
                if isinstance(r, Var) and (r in self.scope.fresh or r == p):
                    self.scope.fresh.add(o)
                else:
                    self.scope.fresh.discard(p)
                    if writes_into(body_stmts, p):
                        self.error(NonDifferentiableError, "an array written into inside this "
                                   "loop is replaced by one the loop did not create", node,
                                   "assign a copy (`.copy()`) to the loop variable")

    def loop_carried(self, body_stmts, node):
        names = []
        for n in assigned_names(body_stmts):
            if n in self.scope.env and not isinstance(self.scope.env[n], Undefined):
                names.append(n)
            elif self.read_later(n):
                # first bound inside the loop and read after it: Python's name holds the
                # last iteration's value (None in the generated code where the loop did
                # not run, where Python raises UnboundLocalError)
                self.scope.env[n] = Const(prims.NOT_COMPUTED)
                names.append(n)
        for n in names:
            if isinstance(self.scope.env[n], StaticDict):
                # (it was refused as "returned or stored in an array" when made a variable)
                self.error(UnsupportedSyntaxError, f"the dict `{n}` changes inside this loop: "
                           "a dict written in the function is kept while compiling, and a "
                           "loop cannot carry one", node, "carry its values through the loop "
                           f"in variables or a tuple, and build `{n}` after the loop")
                raise Abort
        return names

    def lower_for(self, s):
        if s.orelse:
            self.error(UnsupportedSyntaxError, "`for ... else` is not supported", s,
                       "use a flag variable")
            return
        it = s.iter
        # static unrolling over tuple/list literals
        itv = None
        is_range = self.is_call_of(it, range)
        backwards = self.is_call_of(it, reversed) and len(it.args) == 1 and \
            not it.keywords and self.is_call_of(it.args[0], range)
        if backwards:  # for i in reversed(range(...)): a range with the bounds turned round
            it, is_range = it.args[0], True
        if not is_range:
            itv = self.expr(it)
            if isinstance(itv, StaticDict):  # for key in d
                itv = StaticSeq(tuple(Const(k) for k in itv.keys))
            if isinstance(itv, StaticSeq):
                for item in itv.items:
                    self.assign(s.target, item)
                    out = self.lower_stmts(normalize_exits(list(s.body)), in_loop=False)
                    if out is not None:
                        self.error(UnsupportedSyntaxError, "`return`, `break` and `continue` "
                                   "are not supported in a loop over a tuple literal", s)
                        raise Abort
                return
        if not isinstance(s.target, gast.Name) and is_range:
            self.error(UnsupportedSyntaxError, "the loop variable of a `for` over range must be "
                       "a single name", s.target)
            raise Abort
        start, stop, step, index_name, element = self.loop_range(s, it, itv, is_range)
        if backwards:
            start, stop, step = self.reversed_bounds(start, stop, step, s.iter)
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
                self.assign(element[0], self.element_at(element[1], index, element[0]))
            self.lower_stmts(normalize_exits(list(s.body)), in_loop=True)
            return [self.materialize(self.scope.env[n]) for n in carried]

        body_stmts, results = self.sub_block(body, frozenset(carried))
        self.scope.env = env0
        outs = [self.fresh(n) for n in carried]
        for n, o in zip(carried, outs):
            self.scope.env[n] = o
        self.check_carried_fresh(params, results, outs, s, body_stmts)
        self.stmts.append(ForRange(index, start, stop, step, tuple(params), tuple(inits),
                                   Block(tuple(body_stmts), tuple(results)), tuple(outs),
                                   self.loc(s)))

    def is_call_of(self, node, fn) -> bool:
        """Is `node` a call of the static callable `fn` (range, reversed)?"""
        if not isinstance(node, gast.Call):
            return False
        static = self.peek_static(node.func)
        return isinstance(static, Static) and static.obj is fn

    def reversed_bounds(self, start, stop, step, node):
        """(start, stop, step) of reversed(range(start, stop, step)): from its last value
        back past its first, by -step (empty where the range is). The step must be known."""
        if not (isinstance(step, Const) and type(step.value) is int and step.value != 0):
            self.error(UnsupportedSyntaxError, "reversed(range(...)) needs a constant step",
                       node, "write the loop's range with a constant step")
            raise Abort
        c = step.value
        if all(isinstance(b, Const) and type(b.value) is int for b in (start, stop)):
            r = range(start.value, stop.value, c)[::-1]
            return Const(r.start), Const(r.stop), Const(r.step)
        sign = 1 if c > 0 else -1

        def minus_sign(v):  # v - 1 for a rising range, v + 1 for a falling one
            return self.emit(operator.sub if sign > 0 else operator.add, [v, Const(1)],
                             hint="_n", node=node)

        if abs(c) == 1:  # range(stop - 1, start - 1, -1)
            last = minus_sign(stop)
        else:  # start + (stop - start - sign) // c * c
            span = minus_sign(self.emit(operator.sub, [stop, start], hint="_n", node=node))
            count = self.emit(operator.floordiv, [span, Const(c)], hint="_n", node=node)
            offset = self.emit(operator.mul, [count, Const(c)], hint="_n", node=node)
            last = self.emit(operator.add, [start, offset], hint="_n", node=node)
        past = Const(-sign) if isinstance(start, Const) and start.value == 0 else \
            minus_sign(start)
        return last, past, Const(-c)

    def loop_range(self, s, it, itv, is_range):
        """(start, stop, step, index name, element) of a `for` loop: over range(...), over a
        zip/enumerate, or over an array's rows (element: the target and what it reads)."""
        if is_range:
            if it.keywords or not 1 <= len(it.args) <= 3:
                self.error(UnsupportedSyntaxError, "range() takes 1 to 3 positional arguments",
                           it)
                raise Abort
            bounds = [self.materialize(self.expr(a)) for a in it.args]
            if len(bounds) == 1:
                start, stop, step = Const(0), bounds[0], Const(1)
            elif len(bounds) == 2:
                start, stop, step = bounds[0], bounds[1], Const(1)
            else:
                start, stop, step = bounds
            index_name = s.target.id
            element = None
        elif isinstance(itv, Zipped):
            # for i, row in enumerate(x) / for a, b in zip(x, y): walk them by index
            start, step = Const(0), Const(1)
            lengths = [self.emit(len, [q], hint="_n", node=it) for q in itv.seqs]
            stop = lengths[0]
            for n in lengths[1:]:
                stop = self.emit(min, [stop, n], hint="_n", node=it)
            index_name = "_i"
            element = (s.target, itv)
        else:
            # iterate over the first axis of an array: for row in x
            seq = self.materialize(itv)
            start, step = Const(0), Const(1)
            stop = self.emit(len, [seq], hint="_n", node=it)
            index_name = "_i"
            element = (s.target, seq)
        return start, stop, step, index_name, element

    def element_at(self, seq, index, target):
        """The loop's item at `index`: seq[index], or for zip/enumerate the tuple of them."""
        if not isinstance(seq, Zipped):
            return self.emit(operator.getitem, [seq, index], hint="_t", node=target)
        items = tuple(self.emit(operator.getitem, [q, index], hint="_t", node=target)
                      for q in seq.seqs)
        if seq.grouped:
            return StaticSeq((index, StaticSeq(items)))
        return StaticSeq(((index,) if seq.counted else ()) + items)

    def lower_for_as_while(self, s, start, stop, step, index_name, element):
        """`for` with `break`: a `while` over the index with a break flag."""
        if not (isinstance(step, Const) and isinstance(step.value, int) and step.value != 0):
            self.error(UnsupportedSyntaxError, "`break` in a `for` loop needs a constant range "
                       "step", s)
            raise Abort
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
                self.assign(element[0], self.element_at(element[1], index, element[0]))
            else:
                self.scope.env[index_name] = index
            out = self.lower_stmts(normalize_exits(list(s.body)), in_loop=True)
            if out == "break":
                self.scope.env["__break__"] = Const(True)
            nxt = self.emit(operator.add, [index, step], hint=idx_name)
            return [nxt] + [self.materialize(self.scope.env[n]) for n in names[1:]]

        cond_stmts, c = self.sub_block(cond, frozenset(names))
        body_stmts, results = self.sub_block(body, frozenset(names))
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

        cond_stmts, c = self.sub_block(cond, frozenset(names))
        body_stmts, results = self.sub_block(body, frozenset(names))
        self.scope.env = env0
        outs = [self.fresh(n if n != "__break__" else "broke") for n in names]
        self.check_carried_fresh(params, results, outs, s, body_stmts)
        for n, o in zip(names, outs):
            if n != "__break__":
                self.scope.env[n] = o
        self.stmts.append(While(tuple(params), tuple(inits), Block(tuple(cond_stmts), (c,)),
                                Block(tuple(body_stmts), tuple(results)), tuple(outs),
                                self.loc(s)))


def _child_blocks(st):
    """(the header expression, the statement lists) of a compound statement, else None."""
    if isinstance(st, gast.If):
        return st.test, [st.body, st.orelse]
    if isinstance(st, (gast.For, gast.While)):
        head = st.iter if isinstance(st, gast.For) else st.test
        return head, [st.body, st.orelse]
    if isinstance(st, gast.With):
        return gast.Tuple(elts=[i.context_expr for i in st.items], ctx=gast.Load()), [st.body]
    if isinstance(st, gast.Try):
        return None  # (read as a whole)
    return None

