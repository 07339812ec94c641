"""Emission: IR -> readable Python source.

Expressions are built as gast nodes and printed with astor; statements are
laid out here, with comments pointing back to the original source lines.
SSA names are coalesced back into the user's names (codegen/registers.py), and compiler
temporaries used once are folded back into the expression that reads them.
"""

from __future__ import annotations

import functools

import gast
import numpy as np

from s2sad.codegen.expressions import LOAD, ExpressionEmitter
from s2sad.codegen.imports import prelude
from s2sad.codegen.names import Namespace
from s2sad.codegen.registers import Names, Positions, coalesce, find_inlined
from s2sad.codegen.sinking import sink_temporaries
from s2sad.codegen.syntax import NO_INLINE, SCATTERS
from s2sad.codegen.unparse import Unsupported, unparse
from s2sad.ir import prims
from s2sad.ir.builder import root_name
from s2sad.ir.nodes import (
    Block,
    Call,
    Const,
    ForRange,
    Function,
    If,
    Var,
    While,
)
from s2sad.passes.explain import StepLoc
from s2sad_rules.formulas import formula_of


class Emitter(ExpressionEmitter):
    """Statements: one line (or block) of source per IR statement, under the comment of
    its source line; expressions come from ExpressionEmitter (codegen/expressions.py)."""

    def __init__(self, fn: Function, ns: Namespace, names: Names, pos: Positions):
        self.fn = fn
        self.ns = ns
        self.names = names
        self.pos = pos
        self.lines: list = []
        self.pending: dict = {}
        self.name_nodes: dict = {}  # variable -> its Name node (see atom)
        self.path_nodes: dict = {}  # dotted name -> its node (see attr_path)
        self.last_line = None
        self.user_file = fn.loc.filename if fn.loc else None

    def out(self, indent: int, text: str):
        self.lines.append("    " * indent + text)

    def src(self, node) -> str:
        try:
            return unparse(node)
        except Unsupported:
            return _astor().to_source(gast.gast_to_ast(node), pretty_source=_one_line).strip()

    def src_item(self, node) -> str:
        """Source of `node` as one item of a tuple (a tuple keeps its parentheses)."""
        text = self.src(node)
        return text if isinstance(node, gast.Tuple) else _bare(text)

    def comment_for(self, s, indent):
        loc = s.loc
        if loc is None or not loc.source_line or _is_compiler_file(loc.filename):
            return
        key = (loc.filename, loc.lineno)
        if key != self.last_line:
            self.last_line = key
            where = f"line {loc.lineno}" if loc.filename == self.user_file else \
                f"{_short(loc.filename)}:{loc.lineno}"
            if self.reverse_part:
                where = "reverse of " + where
            self.out(indent, f"# {where}: {loc.source_line.strip()}")
        if self.explain:
            self.step_comment(loc, indent)

    explain = False
    last_step = None

    def step_comment(self, loc, indent):
        """explain=True: the primal step a derivative statement comes from, and its rule
        (`# t2 = h - y; d(a - b) = da - db`), once per step."""
        if not isinstance(loc, StepLoc) or loc.index == self.last_step:
            return
        if not self.reverse_part and self.layout not in ("jvp", "tangent"):
            return  # the forward sweep of reverse mode only computes the primal
        self.last_step = loc.index
        step = loc.step
        try:
            text = f"{self.names.name(step.target)} = " \
                   f"{_bare(self.src(self.call_expr(step.fn, step.args, step.kwargs)))}"
        except Exception:  # noqa: BLE001 - a step printed only through its rule
            text = ""
        formula = formula_of(step.fn, step.args)
        if not text and not formula:
            return
        where = "back through " if self.reverse_part else ""
        note = "; ".join(x for x in (f"{where}{text}" if text else "", formula or "") if x)
        self.out(indent, f"# {note}")

    def assign(self, indent, targets, value_node):
        if len(targets) == 1:
            lhs = targets[0]
        else:
            lhs = ", ".join(targets)
        self.out(indent, f"{lhs} = {_bare(self.src(value_node))}")

    reverse_part = False

    def seed_signature(self, seeds) -> str:
        if self.fn.returns_tuple:
            return self.tuple_seed_name()
        return self.names.name(seeds[0])

    def tuple_seed_name(self) -> str:
        """The pullback's parameter when it takes a tuple of cotangents: `out_bar`, unless a
        variable of the function is printed with that name (a user's `out`)."""
        taken = set(self.names.printed.values())
        name, k = "out_bar", 1
        while name in taken:
            name, k = f"out_bar{k}", k + 1
        return name

    def unpack_seeds(self, indent, seeds):
        if self.fn.returns_tuple:
            targets = [self.names.name(s) for s in seeds]
            self.out(indent, f"{', '.join(targets)}{',' if len(targets) == 1 else ''} = "
                             f"{self.tuple_seed_name()}")

    def inlinable(self, s: Call, block: Block, idx: int) -> bool:
        return s.target in self.inlined

    def block(self, b: Block, indent: int, result_targets=None):
        for i, s in enumerate(b.stmts):
            if isinstance(s, Call) and s.fn is prims.sweep_boundary:
                self.reverse_part = True
                self.last_line = None
                if self.layout == "vjp":
                    seeds = self.seeds
                    self.out(indent, f"def pullback({self.seed_signature(seeds)}):")
                    indent += 1
                    self.unpack_seeds(indent, seeds)
                continue
            self.stmt(s, b, i, indent)
        if result_targets is not None:
            self.copies(indent, result_targets, b.results)

    def copies(self, indent, targets, results):
        pairs = [(t, r) for t, r in zip(targets, results)
                 if not (isinstance(r, Var) and r not in self.pending
                         and self.names.name(r) == t)]
        if not pairs:
            return
        if len(pairs) == 1:
            t, r = pairs[0]
            self.assign(indent, [t], self.atom(r))
            return
        lhs = [t for t, _ in pairs]
        rhs = gast.Tuple(elts=[self.atom(r) for _, r in pairs], ctx=LOAD)
        self.out(indent, f"{', '.join(lhs)} = {self.src(rhs)[1:-1] if self.src(rhs).startswith('(') else self.src(rhs)}")

    def scatter(self, indent, t, args):
        """`acc[i] += g` (or np.add.at for indices that may repeat), then the result's name."""
        if self.scatter_kind in (prims.add_inplace, prims.mul_inplace):
            acc, g = args
            op = "+=" if self.scatter_kind is prims.add_inplace else "*="
            value = _bare(self.src(self.atom(g)))
            name, acc_name = self.names.name(t), self.names.name(acc)
            if name != acc_name and not _reads(value, name):
                # the result's name first: `err_bar = err; err_bar *= 0.5`, never `err`
                # holding err_bar (acc is not read again)
                self.out(indent, f"{name} = {acc_name}")
                self.out(indent, f"{name} {op} {value}")
                return
            self.out(indent, f"{acc_name} {op} {value}")
            if name != acc_name:
                self.out(indent, f"{name} = {acc_name}")
            return
        acc, index, g = args
        name = self.names.name(acc)
        index_node = self.index_expr(index)  # once: it may consume a folded temporary
        value = self.atom(g)
        if self.scatter_kind is prims.index_add_at:
            node = gast.Call(func=self.attr_path("np.add.at"),
                             args=[self.atom(acc), index_node, value], keywords=[])
            self.out(indent, self.src(node))
        else:
            target = gast.Subscript(value=self.atom(acc), slice=index_node, ctx=LOAD)
            op = "=" if self.scatter_kind is prims.index_update_inplace else "+="
            self.out(indent, f"{self.src(target)} {op} {_bare(self.src(value))}")
        if self.names.name(t) != name:
            self.out(indent, f"{self.names.name(t)} = {name}")

    def stmt(self, s, block, idx, indent):
        match s:
            case Call():
                self.call_stmt(s, block, idx, indent)
            case If():
                self.if_stmt(s, indent)
            case ForRange():
                self.for_stmt(s, indent)
            case While():
                self.while_stmt(s, indent)

    def call_stmt(self, s: Call, block, idx, indent):
        """A call: folded into the expression that reads it, or a line of its own."""
        t, fn, args, kw = s.target, s.fn, s.args, s.kwargs
        if self.inlinable(s, block, idx):
            if fn in (slice, prims.make_tuple):
                self.pending_calls[t] = s
            self.pending[t] = self.call_expr(fn, args, kw)
            return
        self.comment_for(s, indent)
        if fn in SCATTERS:
            self.scatter_kind = fn
            self.scatter(indent, t, args)
            return
        if fn is prims.check_assertion:
            test = self.src(self.atom(args[0]))
            message = f", {self.src(self.atom(args[1]))}" if len(args) > 1 else ""
            self.out(indent, f"assert {test}{message}")
            return
        if isinstance(fn, prims.Opaque) and self.effect_stmt(s, indent):
            return
        if fn is prims.filled_diagonal:  # (a write into a copy, as WrittenCopy prints)
            name = self.names.name(t)
            self.out(indent, f"{name} = {self.src(self.atom(args[0]))}.copy()")
            self.out(indent, self.src(self.call_expr(np.fill_diagonal, (t,) + tuple(args[1:]),
                                                     kw)))
            return
        node = self.call_expr(fn, args, kw)
        if fn in (prims.tape_push, prims.print_values, np.random.seed, prims.revolve.snapshot,
                  prims.check_scalar_output) \
                or (isinstance(fn, prims.Opaque) and fn.effect_only and self.pos.count(t) == 0):
            self.out(indent, self.src(node))
        else:
            self.assign(indent, [self.names.name(t)], node)

    def effect_stmt(self, s: Call, indent) -> bool:
        """A statement the user wrote for its effect, printed as written: `obj.name = v`,
        `raise exc`, and a write into a copy (`m_1 = m.copy()` then `np.fill_diagonal(m_1,
        v)`); False for any other Opaque call."""
        inner, args = s.fn.func, s.args
        if isinstance(inner, prims.SetAttr):
            self.out(indent, f"{self.src(self.atom(args[0]))}.{inner.name} = "
                             f"{_bare(self.src(self.atom(args[1])))}")
            return True
        if inner is prims.raise_exception:
            self.out(indent, f"raise {_bare(self.src(self.atom(args[0])))}" if args else "raise")
            return True
        if isinstance(inner, prims.WrittenCopy):
            name = self.names.name(s.target)
            self.out(indent, f"{name} = {self.src(self.atom(args[0]))}.copy()")
            writer, rest, kw = inner.writer, (s.target,) + tuple(args[1:]), s.kwargs
            if isinstance(writer, prims.OutWriter):  # f(..., out=m_1)
                writer, rest = writer.fn, rest[1:]
                kw = tuple((n, a) for n, a in kw if n != "out") + (("out", s.target),)
            if isinstance(writer, prims.MethodCall):
                writer = prims.Opaque(writer, [])
            self.out(indent, self.src(self.call_expr(writer, rest, kw)))
            return True
        return False

    def if_stmt(self, s: If, indent):
        """An if statement, or a conditional expression when both branches are one value."""
        c, then, orelse, outs = s.cond, s.then, s.orelse, s.outputs
        self.comment_for(s, indent)
        targets = [self.names.name(o) for o in outs]
        if not then.stmts and not orelse.stmts and len(outs) == 1:
            node = gast.IfExp(test=self.atom(c), body=self.atom(then.results[0]),
                              orelse=self.atom(orelse.results[0]))
            self.assign(indent, targets, node)
            return
        header, test = len(self.lines), self.atom(c)
        self.out(indent, f"if {_bare(self.src(test))}:")
        n0 = len(self.lines)
        self.block(then, indent + 1, targets)
        empty = len(self.lines) == n0
        if empty:
            self.out(indent + 1, "pass")
        n1 = len(self.lines)
        self.lines.append(None)  # placeholder for `else:`
        self.block(orelse, indent + 1, targets)
        if len(self.lines) == n1 + 1:
            self.lines.pop()
        elif empty:  # `if c: pass` / `else: ...` is `if not c: ...`
            negated = gast.UnaryOp(op=gast.Not(), operand=test)
            self.lines[header] = "    " * indent + f"if {self.src(negated)}:"
            del self.lines[n0:n1 + 1]
        else:
            self.lines[n1] = "    " * indent + "else:"
        self.last_line = None

    def for_stmt(self, s: ForRange, indent):
        """A for loop over a range (reversed, for a reversed loop) or a tape's items."""
        i, a, b, st, ps, inits, body, outs = (s.index, s.start, s.stop, s.step, s.params,
                                              s.inits, s.body, s.outputs)
        # a checkpointed loop's recomputation (passes/checkpoint.py): primal code
        recompute = self.reverse_part and bool(body.stmts) and \
            getattr(body.stmts[0], "fn", None) is prims.revolve.snapshot
        if recompute:
            self.out(indent, "# recompute from the snapshot up to this step (primal)")
            self.reverse_part = False
        else:
            self.comment_for(s, indent)
        self.copies(indent, [self.names.name(p) for p in ps], inits)
        if s.over is not None:  # the items of a tape reader (passes.loops)
            rng_node = self.atom(s.over)
        else:
            rng = [a, b, st]
            if isinstance(st, Const) and st.value == 1:
                rng = [a, b] if not (isinstance(a, Const) and a.value == 0) else [b]
            rng_node = gast.Call(func=self.attr_path("range"),
                                 args=[self.atom(x) for x in rng], keywords=[])
            if getattr(s, "reverse", False):
                rng_node = gast.Call(func=self.attr_path("reversed"), args=[rng_node],
                                     keywords=[])
        used = self.pos.count(i) > 0
        iname = self.names.name(i) if used else "_"
        self.out(indent, f"for {iname} in {self.src(rng_node)}:")
        self.loop_body(body, indent, ps, outs)
        if recompute:
            self.reverse_part = True

    def while_stmt(self, s: While, indent):
        """A while loop: its condition inline when it is one expression, else `while True`
        with the condition's statements and a break."""
        ps, inits, cond, body, outs = s.params, s.inits, s.cond, s.body, s.outputs
        self.comment_for(s, indent)
        self.copies(indent, [self.names.name(p) for p in ps], inits)
        simple = all(isinstance(x, Call) and x.target.name.startswith("_")
                     and self.pos.count(x.target) == 1 and x.fn not in NO_INLINE
                     for x in cond.stmts)
        if simple:
            for j, x in enumerate(cond.stmts):
                self.pending[x.target] = self.call_expr(x.fn, x.args, x.kwargs)
            self.out(indent, f"while {_bare(self.src(self.atom(cond.results[0])))}:")
        else:
            self.out(indent, "while True:")
            self.block(cond, indent + 1)
            test = gast.UnaryOp(op=gast.Not(), operand=self.atom(cond.results[0]))
            self.out(indent + 1, f"if {self.src(test)}:")
            self.out(indent + 2, "break")
        self.loop_body(body, indent, ps, outs)

    def loop_body(self, body, indent, ps, outs):
        """A loop's body (`pass` when it prints nothing), then its carried values' copies."""
        n0 = len(self.lines)
        self.block(body, indent + 1, [self.names.name(p) for p in ps])
        if len(self.lines) == n0:
            self.out(indent + 1, "pass")
        self.copies(indent, [self.names.name(o) for o in outs], ps)
        self.last_line = None

    pending_calls: dict


@functools.lru_cache(maxsize=256)
def _is_compiler_file(filename: str) -> bool:
    """Rule bodies are inlined with their own locations; comments point at user code only.
    A compiler file is one inside the installed packages themselves (wherever they are: a
    user's checkout in a folder named `s2sad` is user code), except the bundled examples."""
    import os

    path = os.path.normcase(os.path.realpath(filename))
    inside = [d for d in _compiler_dirs() if path.startswith(d + os.sep)]
    return bool(inside) and not path.startswith(_examples_dir() + os.sep)


@functools.lru_cache(maxsize=1)
def _compiler_dirs() -> tuple:
    import os

    import s2sad_rules

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the s2sad package
    rules = os.path.dirname(os.path.abspath(s2sad_rules.__file__))
    return tuple(os.path.normcase(os.path.realpath(d)) for d in (here, rules))


def _examples_dir() -> str:
    import os

    return os.path.join(_compiler_dirs()[0], os.path.normcase("examples"))


def _astor():
    """astor, imported when first needed (the fallback printer): on Python 3.12+ its import
    warns about `ast.Num`, which astor itself uses, not s2sad."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="astor")
        warnings.filterwarnings("ignore", message=".*ast\\.(Num|Str|Bytes|NameConstant)",
                                category=DeprecationWarning)
        import astor
    return astor


def _one_line(parts) -> str:
    return "".join(parts)


def _short(filename: str) -> str:
    import os

    return os.path.basename(filename)


RESERVED = {"np", "math", "range", "reversed", "next", "abs", "min", "max", "float", "int", "len",
            "pullback", "slice", "pow", "sum", "tuple", "list", "bool", "complex", "print"}


def emit_function(fn: Function, ns: Namespace, name: str, header: list, layout: str) -> str:
    """Print `fn` as a Python function called `name`.

    layout: "jvp" -> return (out, out_dot); "grad" -> return the cotangents;
    "value_and_grad" -> return (out, cotangents); "vjp" -> return (out, pullback), the
    statements after the sweep boundary forming the body of `pullback`.
    """
    meta = fn.meta
    meta["split"] = layout == "vjp"
    explain = bool(meta.get("explain"))  # the step-by-step form: nothing folded
    if not explain:
        fn = sink_temporaries(fn)
    pos = Positions(fn)
    inlined = set() if explain else find_inlined(fn, pos)
    pos.explain = explain
    from s2sad.codegen.names import RUNTIME_NAMES

    reserved = RESERVED | set(ns.values) | {name} | set(RUNTIME_NAMES.values())
    names = coalesce(fn, pos, inlined, reserved)
    ns.avoid = set(names.printed.values()) | {name}
    em = Emitter(fn, ns, names, pos)
    em.dim_names = {}  # size symbol -> the name it is printed with
    em.taken = set(ns.avoid) | reserved
    em.inlined = inlined
    em.explain = explain
    em.pending_calls = {}
    em.layout = layout
    em.seeds = meta.get("seed_params", ())
    lines = [f"# {h}" if h else "#" for h in header]
    params = [names.name(p) for p in fn.params if p not in em.seeds]
    kw = [f"{names.name(v)}={_default_src(d, ns, names.name(v))}" for v, d in fn.kwonly]
    sig = ", ".join(params + (["*"] + kw if kw else []))
    results = fn.body.results
    n = meta.get("n_primal", 0)
    em.block(fn.body, 1)
    primal = _pack(em, results[:n], fn.returns_tuple) if n else None
    if layout == "vjp":
        bars = _bind_cotangents(em, fn, results[n:], 2)
        packed = gast.Tuple(elts=bars, ctx=LOAD)
        text = em.src(packed)
        em.out(2, f"return {text}")
        em.out(1, f"return {em.src_item(primal)}, pullback")
    elif layout == "jvp":
        tangent = _pack(em, results[n:], fn.returns_tuple)
        em.out(1, f"return {em.src_item(primal)}, {em.src_item(tangent)}")
    elif layout == "grad":
        packed = _pack(em, results[n:], meta.get("wrt_tuple", False),
                       _bind_cotangents(em, fn, results[n:], 1))
        em.out(1, f"return {_bare(em.src(packed))}")
    elif layout == "value_and_grad":
        bars = _pack(em, results[n:], meta.get("wrt_tuple", False),
                     _bind_cotangents(em, fn, results[n:], 1))
        em.out(1, f"return {em.src_item(primal)}, {em.src_item(bars)}")
    elif layout == "tangent":
        tangent = _pack(em, results[n:], fn.returns_tuple)
        em.out(1, f"return {_bare(em.src(tangent))}")
    elif layout == "tree":
        em.out(1, f"return {_bare(em.src(_tree(em, results, meta['result_tree'])))}")
    else:
        em.out(1, f"return {_bare(em.src(primal))}")
    sizes = []  # (each size read where the function starts: `n = x.shape[0]`)
    for sym, printed in sorted(em.dim_names.items()):
        param, axis = em.fn.meta["dim_origins"][sym]
        if axis is not None:
            sizes.append(f"    {printed} = {names.name(param)}.shape[{axis}]")
        elif printed != names.name(param):  # (an int argument whose name is rebound)
            sizes.append(f"    {printed} = {names.name(param)}")
    body = [f"def {name}({sig}):"] + sizes + [ln for ln in em.lines if ln is not None]
    imports = prelude("\n".join(body), ns)
    return "\n".join(lines + imports + ([""] if imports else []) + body) + "\n"


def _reads(expr: str, name: str) -> bool:
    """Whether the printed expression `expr` reads the variable `name`: an occurrence not
    preceded by a word character or a dot, nor followed by a word character. (Searched
    without a regular expression: one pattern per name filled the regex cache, and every
    scatter of a long function compiled its pattern again.)"""
    start, n, end = 0, len(name), len(expr)
    while True:
        i = expr.find(name, start)
        if i < 0:
            return False
        before = expr[i - 1] if i else " "
        after = expr[i + n] if i + n < end else " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
            return True
        start = i + 1


def _bare(text: str) -> str:
    """Drop the parentheses astor puts around a whole expression (not an empty tuple's: a
    bare `return` would give None where `()` was meant)."""
    if text.startswith("(") and text.endswith(")") and text != "()":
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(text) - 1:
                return text
        return text[1:-1]
    return text


def _tree(em, atoms, tree):
    """Nested tuples of results: `tree` holds indices into `atoms`."""
    if isinstance(tree, tuple):
        return gast.Tuple(elts=[_tree(em, atoms, t) for t in tree], ctx=LOAD)
    return em.atom(atoms[tree])


def _pack(em, atoms, as_tuple, nodes=None):
    nodes = nodes if nodes is not None else [em.atom(a) for a in atoms[:None if as_tuple else 1]]
    if as_tuple:
        return gast.Tuple(elts=nodes, ctx=LOAD)
    return nodes[0]


def _bind_cotangents(em, fn, atoms, indent) -> list:
    """The returned cotangents, each bound to its argument's `<name>_bar` first (one that
    already has that name, or a numbered variant of it, is returned as it is): a reader
    finds every gradient named, never folded into the return or under another name."""
    wrt = fn.meta.get("wrt")
    if wrt is None or len(wrt) != len(atoms):
        return [em.atom(a) for a in atoms]
    taken = set(em.names.printed.values()) | set(em.ns.values) | RESERVED
    taken |= {em.names.name(p) for p in fn.params}
    nodes = []
    for i, a in zip(wrt, atoms):
        want = f"{em.names.name(fn.params[i])}_bar"
        if isinstance(a, Var) and a not in em.pending and \
                root_name(em.names.name(a)) == want:
            nodes.append(em.atom(a))
            continue
        name, k = want, 0
        while name in taken:
            k += 1
            name = f"{want}_{k}"
        taken.add(name)
        em.out(indent, f"{name} = {_bare(em.src(em.atom(a)))}")
        nodes.append(gast.Name(id=name, ctx=LOAD, annotation=None, type_comment=None))
    return nodes


def _default_src(d, ns, name) -> str:
    """A keyword default as source: a literal, or a name bound in the namespace."""
    import ast as _ast

    text = repr(d)
    try:
        if _ast.literal_eval(text) == d:
            return text
    except Exception:
        pass
    return ns.add_object(d, f"{name}_default")
