"""A seeded random-program generator for the s2sad fuzz tests.

Programs are plain Python + NumPy functions in the language the compiler
accepts: straight-line code over Python floats and small float64 arrays,
reassignment, tuple unpacking, data-dependent `if`/`else`, `for i in
range(k)` with carried values, counter-driven `while` loops, nesting, and
calls of module-level helper functions emitted in the same file.

Everything is deterministic from an integer seed (`random.Random(seed)`).

Types of values
---------------
F   a scalar (Python float, or a NumPy float64 scalar after a reduction)
V   an array of shape (3,)
W   an array of shape (2,)
M   an array of shape (2, 3)

Programs are *trees* (statements holding expressions) so that a failing
program can be shrunk: statements deleted, compound statements replaced by
one of their bodies, expressions replaced by a sub-expression or a variable
of the same type (see `shrink_candidates`).

Domain constraints are encoded in the expression *templates*, never in the
operands: `np.log(1.0 + {0} * {0})`, `np.sqrt(0.5 + {0} * {0})`,
`{0} / (1.5 + {1} * {1})`, so any replacement of an operand during
shrinking keeps the program well defined.

Each function is also rendered as a *probe* twin (`render(probe=True)`) in
which every branch condition `A > B` becomes `_cond(A - B)`: `_cond` records
the distance of the condition from its threshold and the branch taken, so the
tests can keep evaluation points away from ties and check that the branch
trace is stable under finite-difference perturbations.
"""

from __future__ import annotations

import copy
import random
import re
from dataclasses import dataclass, field

SHAPES = {"F": (), "V": (3,), "W": (2,), "M": (2, 3)}
ARRAY_TYPES = ("V", "W", "M")

# --------------------------------------------------------------------------
# expressions
# --------------------------------------------------------------------------


@dataclass
class Expr:
    """`template.format(*rendered children)`; a leaf has no children."""

    ty: str
    template: str
    children: list = field(default_factory=list)
    is_var: bool = False

    def render(self, probe: bool = False) -> str:
        t = self.template
        if probe:
            t = t.replace("_h", "_probe_h")  # helper calls go to the probe helpers
        parts = []
        for k, c in enumerate(self.children):
            s = c.render(probe)
            parts.append(s)
            ph = "{%d}" % k
            if _atomic(s):  # no parentheses around a name, call or subscript
                t = re.sub(r"(?<![\w.])\(\{%d\}\)" % k, ph, t)
            else:
                t = _parenthesize(t, ph)
        return t.format(*parts)

    def vars(self):
        if self.is_var:
            yield self.template
        for c in self.children:
            yield from c.vars()

    def size(self) -> int:
        return 1 + sum(c.size() for c in self.children)


def _atomic(s: str) -> bool:
    """No operator at bracket depth 0 (a name, number, call or subscript)."""
    if s.startswith("-"):
        return False
    depth = 0
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in " +-*/@<>":
            return False
    return True


def _parenthesize(t: str, ph: str) -> str:
    """Wrap each occurrence of placeholder `ph` in `t` in parentheses unless it
    is a whole call argument or already parenthesized."""
    out = []
    i = 0
    while True:
        j = t.find(ph, i)
        if j < 0:
            out.append(t[i:])
            return "".join(out)
        before = t[:j]
        after = t[j + len(ph):]
        arg = (before.endswith("(") or before.endswith(", ")) and (after[:1] in (")", ","))
        out.append(t[i:j])
        out.append(ph if arg else "(" + ph + ")")
        i = j + len(ph)


def var(name: str, ty: str) -> Expr:
    return Expr(ty, name, [], True)


def const(value: float) -> Expr:
    return Expr("F", repr(float(value)))


# templates per result type: (template, [child types])
_UNARY_SMOOTH = [
    "np.sin({0})",
    "np.cos({0})",
    "np.tanh({0})",
    "np.exp(0.3 * {0})",
    "np.log(1.0 + {0} * {0})",
    "np.sqrt(0.5 + {0} * {0})",
    "-({0})",
    "({0}) ** 2",
    "({0}) ** 3",
    "np.arctan({0})",
    "np.square({0})",
]
_MATH_UNARY = [
    "math.sin({0})",
    "math.cos({0})",
    "math.tanh({0})",
    "math.exp(0.3 * {0})",
    "math.log(1.0 + {0} * {0})",
    "math.sqrt(0.5 + {0} * {0})",
    "math.atan({0})",
    "math.sinh(0.5 * {0})",
    "math.log1p({0} * {0})",
    "math.hypot({0}, 1.0)",
]
_BINARY_SAME = [
    "({0} + {1})",
    "({0} - {1})",
    "({0} * {1})",
    "{0} / (1.5 + {1} * {1})",
]

TEMPLATES: dict[str, list[tuple[str, list[str]]]] = {
    "F": (
        [(t, ["F"]) for t in _UNARY_SMOOTH]
        + [(t, ["F"]) for t in _MATH_UNARY]
        + [(t, ["F", "F"]) for t in _BINARY_SAME]
        + [
            ("math.atan2({0}, 2.0 + {1} * {1})", ["F", "F"]),
            ("({0})[0]", ["V"]),
            ("({0})[2]", ["V"]),
            ("({0})[-1]", ["V"]),
            ("({0})[1]", ["W"]),
            ("({0})[1, 2]", ["M"]),
            ("({0})[-1, 0]", ["M"]),
            ("np.sum({0})", ["V"]),
            ("np.mean({0})", ["V"]),
            ("np.sum({0})", ["M"]),
            ("np.mean({0})", ["M"]),
            ("({0}).sum()", ["W"]),
            ("np.dot({0}, {1})", ["V", "V"]),
            ("np.dot({0}, {1})", ["W", "W"]),
            ("({0} @ {1})", ["V", "V"]),
            ("np.sum({0} * {1})", ["M", "M"]),
        ]
    ),
    "V": (
        [(t, ["V"]) for t in _UNARY_SMOOTH]
        + [(t, ["V", "V"]) for t in _BINARY_SAME]
        + [
            ("({0} * {1})", ["F", "V"]),
            ("({0} + {1})", ["V", "F"]),
            ("{0} / (1.5 + {1} * {1})", ["V", "F"]),
            ("({0})[0]", ["M"]),
            ("({0})[1, :]", ["M"]),
            ("np.sum({0}, axis=0)", ["M"]),
            ("np.mean({0}, axis=0)", ["M"]),
            ("np.dot({0}, {1})", ["W", "M"]),
            ("({0} @ {1})", ["W", "M"]),
            ("({0})[::-1]", ["V"]),
        ]
    ),
    "W": (
        [(t, ["W"]) for t in _UNARY_SMOOTH]
        + [(t, ["W", "W"]) for t in _BINARY_SAME]
        + [
            ("({0} * {1})", ["F", "W"]),
            ("({0} - {1})", ["W", "F"]),
            ("({0})[0:2]", ["V"]),
            ("({0})[1:]", ["V"]),
            ("({0})[::2]", ["V"]),
            ("({0})[:, 1]", ["M"]),
            ("np.sum({0}, axis=1)", ["M"]),
            ("np.mean({0}, axis=1)", ["M"]),
            ("np.dot({0}, {1})", ["M", "V"]),
            ("({0} @ {1})", ["M", "V"]),
            ("np.matmul({0}, {1})", ["M", "V"]),
        ]
    ),
    "M": (
        [(t, ["M"]) for t in _UNARY_SMOOTH]
        + [(t, ["M", "M"]) for t in _BINARY_SAME]
        + [
            ("({0} * {1})", ["F", "M"]),
            ("({0} * {1})", ["M", "V"]),
            ("({0} + {1})", ["V", "M"]),
            ("{0} / (1.5 + {1} * {1})", ["M", "V"]),
        ]
    ),
}

# how to make a value of a type from a variable of another type
_CONVERSIONS = {
    "F": [("0.5", None), ("({0})[1]", "V"), ("({0})[0]", "W"), ("np.mean({0})", "M")],
    "V": [("({0} * np.array([1.0, -0.5, 2.0]))", "F"), ("({0})[0]", "M"),
          ("np.dot({0}, np.array([[1.0, 0.5, -1.0], [0.25, 2.0, 0.5]]))", "W")],
    "W": [("({0} * np.array([0.5, -1.5]))", "F"), ("({0})[1:]", "V"), ("({0})[:, 2]", "M")],
    "M": [("({0} * np.array([[1.0, 0.5, -1.0], [0.25, 2.0, 0.5]]))", "F"),
          ("({0} + np.array([[1.0, 0.5, -1.0], [0.25, 2.0, 0.5]]))", "V"),
          ("np.outer({0}, np.array([1.0, -0.5, 2.0]))", "W")],
}

# --------------------------------------------------------------------------
# statements
# --------------------------------------------------------------------------


@dataclass
class Assign:
    targets: list  # names
    exprs: list  # Exprs, one per target (tuple unpacking when > 1)
    aug: str = ""  # "+", "-", "*" for an augmented assignment (one scalar target)

    def lines(self, ind, probe):
        if self.aug:
            return [f"{ind}{self.targets[0]} {self.aug}= {self.exprs[0].render(probe)}"]
        lhs = ", ".join(self.targets)
        rhs = ", ".join(e.render(probe) for e in self.exprs)
        return [f"{ind}{lhs} = {rhs}"]

    def blocks(self):
        return []


@dataclass
class Cond:
    """`lhs > rhs` (op '>') or `lhs < rhs`, optionally `and`/`or` another Cond."""

    lhs: Expr
    rhs: Expr
    op: str = ">"
    conj: str = ""
    other: Cond | None = None

    def render(self, probe):
        if probe:
            d = (f"({self.lhs.render(True)}) - ({self.rhs.render(True)})" if self.op == ">"
                 else f"({self.rhs.render(True)}) - ({self.lhs.render(True)})")
            s = f"_cond({d})"
        else:
            s = f"{self.lhs.render(False)} {self.op} {self.rhs.render(False)}"
        if self.other is not None:
            s = f"{s} {self.conj} {self.other.render(probe)}"
        return s

    def exprs(self):
        out = [self.lhs, self.rhs]
        if self.other is not None:
            out += self.other.exprs()
        return out


@dataclass
class If:
    cond: Cond
    body: list
    orelse: list

    def lines(self, ind, probe):
        out = [f"{ind}if {self.cond.render(probe)}:"]
        out += render_block(self.body, ind + "    ", probe)
        if self.orelse:
            out.append(f"{ind}else:")
            out += render_block(self.orelse, ind + "    ", probe)
        return out

    def blocks(self):
        return [self.body, self.orelse]


@dataclass
class For:
    ivar: str
    count: int
    body: list

    def lines(self, ind, probe):
        out = [f"{ind}for {self.ivar} in range({self.count}):"]
        out += render_block(self.body, ind + "    ", probe)
        return out

    def blocks(self):
        return [self.body]


@dataclass
class While:
    """`j = 0; while j < count [and cond]: body; j = j + 1`."""

    jvar: str
    count: int
    body: list
    cond: Cond | None = None

    def lines(self, ind, probe):
        head = f"{self.jvar} < {self.count}"
        if self.cond is not None:
            head += f" and {self.cond.render(probe)}"
        out = [f"{ind}{self.jvar} = 0", f"{ind}while {head}:"]
        out += render_block(self.body, ind + "    ", probe)
        out.append(f"{ind}    {self.jvar} = {self.jvar} + 1")
        return out

    def blocks(self):
        return [self.body]


def render_block(stmts, ind, probe):
    if not stmts:
        return [f"{ind}pass"]
    out = []
    for s in stmts:
        out += s.lines(ind, probe)
    return out


# --------------------------------------------------------------------------
# functions and modules
# --------------------------------------------------------------------------


@dataclass
class Function:
    name: str
    params: list  # [(name, type)]
    body: list
    ret: list  # Exprs; a tuple output when len > 1
    helpers: list = field(default_factory=list)  # Function objects this one may call

    def render(self, probe: bool = False) -> str:
        name = ("_probe" + self.name) if probe and self.name.startswith("_h") else (
            self.name + "__probe" if probe else self.name)
        head = f"def {name}({', '.join(p for p, _ in self.params)}):"
        lines = [head] + render_block(self.body, "    ", probe)
        r = ", ".join(e.render(probe) for e in self.ret)
        if len(self.ret) > 1:
            r = f"({r})"
        lines.append(f"    return {r}")
        return "\n".join(lines) + "\n"

    @property
    def out_types(self):
        return [e.ty for e in self.ret]

    @property
    def scalar_output(self) -> bool:
        return len(self.ret) == 1 and self.ret[0].ty == "F"

    def helpers_used(self):
        """The helper Functions this function calls, in definition order."""
        used = self.used_helpers()
        return [h for h in self.helpers if h.name in used]

    def used_helpers(self):
        """Names of helpers called (directly or through other helpers)."""
        names = set()
        texts = [self.render()]
        while texts:
            text = texts.pop()
            for h in self.helpers:
                if h.name not in names and f"{h.name}(" in text:
                    names.add(h.name)
                    texts.append(h.render())
        return names


HEADER = "import math\n\nimport numpy as np\n\n"

PROBE_PRELUDE = '''
_TRACE = []


def _cond(d):
    _TRACE.append(d)
    return d > 0
'''


def render_module(functions, helpers, probe=True) -> str:
    parts = [HEADER]
    if probe:
        parts.append(PROBE_PRELUDE + "\n")
    for h in helpers:
        parts.append("\n" + h.render() + "\n")
        if probe:
            parts.append("\n" + h.render(probe=True) + "\n")
    for f in functions:
        parts.append("\n" + f.render() + "\n")
        if probe:
            parts.append("\n" + f.render(probe=True) + "\n")
    return "".join(parts)


def reproducer_source(fn: Function) -> str:
    """A stand-alone module with `fn` and the helpers it calls (no probes)."""
    used = fn.used_helpers()
    helpers = [h for h in fn.helpers if h.name in used]
    return render_module([fn], helpers, probe=False)


# --------------------------------------------------------------------------
# the generator
# --------------------------------------------------------------------------


@dataclass
class Options:
    max_stmts: int = 5  # statements per block at top level
    max_depth: int = 2  # nesting of compound statements
    expr_depth: int = 2
    n_helpers: int = 2
    p_if: float = 0.15
    p_for: float = 0.12
    p_while: float = 0.08
    p_helper: float = 0.06
    p_tuple: float = 0.1
    p_aug: float = 0.08
    p_reassign: float = 0.35
    p_while_cond: float = 0.3
    p_and: float = 0.15


class _Scope:
    def __init__(self, parent=None):
        self.parent = parent
        self.vars: dict[str, str] = {}
        self.loopvars: dict[str, int] = {}  # name -> exclusive upper bound

    def all_vars(self):
        d = dict(self.parent.all_vars()) if self.parent else {}
        d.update(self.vars)
        return d

    def all_loopvars(self):
        d = dict(self.parent.all_loopvars()) if self.parent else {}
        d.update(self.loopvars)
        return d


class Generator:
    def __init__(self, seed: int, options: Options | None = None):
        self.seed = seed
        self.rng = random.Random(seed)
        self.opt = options or Options()
        self.counter = 0
        self.helpers: list[Function] = []

    # -- names -------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- expressions -------------------------------------------------------

    def expr(self, ty: str, scope: _Scope, depth: int) -> Expr:
        r = self.rng
        vs = [n for n, t in scope.all_vars().items() if t == ty]
        if depth <= 0 or (vs and r.random() < 0.25):
            return self.leaf(ty, scope)
        # helper call
        if self.helpers and r.random() < self.opt.p_helper:
            cands = [h for h in self.helpers if h.ret[0].ty == ty]
            if cands:
                h = r.choice(cands)
                args = [self.expr(t, scope, depth - 1) for _, t in h.params]
                tmpl = f"{h.name}(" + ", ".join("{%d}" % k for k in range(len(args))) + ")"
                return Expr(ty, tmpl, args)
        # loop-variable indexing
        lv = scope.all_loopvars()
        if lv and r.random() < 0.2 and ty == "F":
            name, bound = r.choice(sorted(lv.items()))
            if bound <= 2 and r.random() < 0.5:
                return Expr("F", "({0})[%s]" % name, [self.expr("W", scope, depth - 1)])
            if bound <= 3:
                return Expr("F", "({0})[%s]" % name, [self.expr("V", scope, depth - 1)])
            return Expr("F", "({0} * %s)" % name, [self.expr("F", scope, depth - 1)])
        tmpl, ctys = r.choice(TEMPLATES[ty])
        return Expr(ty, tmpl, [self.expr(t, scope, depth - 1) for t in ctys])

    def leaf(self, ty: str, scope: _Scope) -> Expr:
        vs = sorted(n for n, t in scope.all_vars().items() if t == ty)
        if ty == "F" and self.rng.random() < 0.12:
            return const(self.rng.choice([0.5, 2.0, 1.5, -0.7, 3.0, 0.25]))
        if vs:
            return var(self.rng.choice(vs), ty)
        # no variable of this type in scope: derive one from a variable that is
        have = {t for t in scope.all_vars().values()}
        convs = [(tmpl, src) for tmpl, src in _CONVERSIONS[ty] if src in have]
        tmpl, src = self.rng.choice(convs) if convs else _CONVERSIONS[ty][0]
        return Expr(ty, tmpl, [self.leaf(src, scope)] if src else [])

    def cond(self, scope: _Scope, depth: int = 2) -> Cond:
        r = self.rng
        lhs = self.expr("F", scope, depth)
        rhs = self.expr("F", scope, 1) if r.random() < 0.5 else const(r.choice([0.0, 0.3, -0.2, 1.0]))
        c = Cond(lhs, rhs, r.choice([">", "<"]))
        if r.random() < self.opt.p_and:
            c.conj = r.choice(["and", "or"])
            c.other = Cond(self.expr("F", scope, 1), const(r.choice([0.0, 0.5])), r.choice([">", "<"]))
        return c

    # -- statements --------------------------------------------------------

    def block(self, scope: _Scope, depth: int, n: int, reassign_only=False) -> list:
        out = []
        for _ in range(n):
            out.append(self.stmt(scope, depth, reassign_only))
        return out

    def _new_or_existing(self, ty, scope, reassign_only):
        """A target name: an existing variable of type ty (reassignment) or a
        fresh one (defined in `scope`)."""
        existing = sorted(n for n, t in scope.all_vars().items() if t == ty)
        if existing and (reassign_only or self.rng.random() < self.opt.p_reassign):
            return self.rng.choice(existing)
        name = self.fresh({"F": "s", "V": "v", "W": "w", "M": "m"}[ty])
        return name

    def stmt(self, scope: _Scope, depth: int, reassign_only=False):
        r = self.rng
        o = self.opt
        x = r.random()
        if depth > 0:
            if x < o.p_if:
                c = self.cond(scope)
                body = self.block(_Scope(scope), depth - 1, r.randint(1, 3), reassign_only=True)
                orelse = (self.block(_Scope(scope), depth - 1, r.randint(1, 3), reassign_only=True)
                          if r.random() < 0.7 else [])
                return If(c, body, orelse)
            x -= o.p_if
            if x < o.p_for:
                inner = _Scope(scope)
                iv = self.fresh("i")
                count = r.randint(1, 4)
                inner.loopvars[iv] = count
                body = self.block(inner, depth - 1, r.randint(1, 3), reassign_only=True)
                return For(iv, count, body)
            x -= o.p_for
            if x < o.p_while:
                inner = _Scope(scope)
                jv = self.fresh("j")
                count = r.randint(1, 4)
                inner.loopvars[jv] = count
                cond = None
                if r.random() < o.p_while_cond:
                    cond = Cond(self.expr("F", scope, 1), const(r.choice([5.0, -5.0, 0.0])),
                                r.choice([">", "<"]))
                body = self.block(inner, depth - 1, r.randint(1, 3), reassign_only=True)
                return While(jv, count, body, cond)
        # simple statements
        ty = r.choice(["F", "F", "V", "W", "M"])
        if r.random() < o.p_aug:
            target = self._new_or_existing("F", scope, True)
            if target in scope.all_vars():
                return Assign([target], [self.expr("F", scope, o.expr_depth - 1)], r.choice("+-*"))
        if r.random() < o.p_tuple:
            t1, t2 = ty, r.choice(["F", "V", "W", "M"])
            n1 = self._new_or_existing(t1, scope, reassign_only)
            n2 = self._new_or_existing(t2, scope, reassign_only)
            if n1 != n2 and (n1 in scope.all_vars() or not reassign_only) and (
                    n2 in scope.all_vars() or not reassign_only):
                e1 = self.expr(t1, scope, o.expr_depth)
                e2 = self.expr(t2, scope, o.expr_depth)
                for n, t in ((n1, t1), (n2, t2)):
                    if n not in scope.all_vars():
                        scope.vars[n] = t
                return Assign([n1, n2], [e1, e2])
        target = self._new_or_existing(ty, scope, reassign_only)
        if reassign_only and target not in scope.all_vars():
            # nothing to carry of this type: define a block-local temporary
            pass
        e = self.expr(ty, scope, o.expr_depth)
        if target not in scope.all_vars():
            scope.vars[target] = ty
        return Assign([target], [e])

    # -- helpers and functions -------------------------------------------

    def helper(self, k: int) -> Function:
        r = self.rng
        ty = r.choice(["F", "F", "V"])
        params = [("a", "F"), ("b", ty)]
        scope = _Scope()
        scope.vars.update(dict(params))
        saved, self.helpers = self.helpers, list(self.helpers)  # earlier helpers only
        body = self.block(scope, 1, r.randint(0, 2))
        ret = [self.expr(ty, scope, 2)]
        self.helpers = saved
        return Function(f"_h{self.seed}_{k}", params, body, ret)

    def function(self, name: str, scalar_output: bool) -> Function:
        r = self.rng
        if not self.helpers and self.opt.n_helpers:
            for k in range(self.opt.n_helpers):
                self.helpers.append(self.helper(k))
        n_params = r.randint(1, 3)
        types = [r.choice(["F", "F", "V", "M", "W"]) for _ in range(n_params)]
        params = [(f"p{k}{t.lower()}", t) for k, t in enumerate(types)]
        scope = _Scope()
        scope.vars.update(dict(params))
        body = self.block(scope, self.opt.max_depth, r.randint(1, self.opt.max_stmts))
        if scalar_output:
            ret = [self.expr("F", scope, 2)]
            # make sure the output depends on the latest values
            fs = sorted(n for n, t in scope.vars.items() if t == "F")
            if fs:
                ret = [Expr("F", "({0} + {1})", [ret[0], var(r.choice(fs), "F")])]
        else:
            kinds = r.choice([["V"], ["M"], ["W"], ["F", "V"], ["V", "M"], ["F", "F"], ["W", "F", "M"]])
            ret = [self.expr(t, scope, 2) for t in kinds]
        return Function(name, params, body, ret, list(self.helpers))


def generate_batch(seed: int, n: int, options: Options | None = None, prefix: str = "f"):
    """`n` functions (half with scalar output) and the helpers they share."""
    g = Generator(seed, options)
    fns = []
    for k in range(n):
        fns.append(g.function(f"{prefix}{seed}_{k}", scalar_output=(k % 2 == 0)))
    return fns, g.helpers


# --------------------------------------------------------------------------
# shrinking
# --------------------------------------------------------------------------


def _defined_before_use(fn: Function) -> bool:
    """A conservative static check that every variable use has a definition
    on every path before it (definitions inside a block count only there)."""
    ok = True

    def check_expr(e, defined):
        nonlocal ok
        for v in e.vars():
            if v not in defined:
                ok = False

    def walk(stmts, defined):
        defined = set(defined)
        for s in stmts:
            if isinstance(s, Assign):
                for e in s.exprs:
                    check_expr(e, defined)
                if s.aug and s.targets[0] not in defined:
                    ok = False
                defined |= set(s.targets)
            elif isinstance(s, If):
                for e in s.cond.exprs():
                    check_expr(e, defined)
                walk(s.body, defined)
                walk(s.orelse, defined)
            elif isinstance(s, For):
                walk(s.body, defined | {s.ivar})
            elif isinstance(s, While):
                if s.cond is not None:
                    for e in s.cond.exprs():
                        check_expr(e, defined | {s.jvar})
                walk(s.body, defined | {s.jvar})
        return defined

    defined = {p for p, _ in fn.params}
    # loop variables used in expressions appear as template text, not Expr vars
    final = walk(fn.body, defined)
    if final is None:
        return False
    for e in fn.ret:
        check_expr(e, final)
    return ok and _loopvars_ok(fn)


def _loopvars_ok(fn: Function) -> bool:
    """Templates that index with a loop variable must stay inside that loop."""
    import re

    def walk(stmts, live):
        for s in stmts:
            texts = []
            if isinstance(s, Assign):
                texts = [e.render() for e in s.exprs]
            elif isinstance(s, If):
                texts = [e.render() for e in s.cond.exprs()]
            for t in texts:
                for m in re.findall(r"\b([ij]\d+)\b", t):
                    if m not in live:
                        return False
            for b in s.blocks():
                extra = {s.ivar} if isinstance(s, For) else ({s.jvar} if isinstance(s, While) else set())
                if not walk(b, live | extra):
                    return False
        return True

    if not walk(fn.body, set()):
        return False
    for e in fn.ret:
        import re as _re
        if _re.search(r"\b[ij]\d+\b", e.render()):
            return False
    return True


def _expr_slots(fn: Function):
    """(getter, setter) pairs for every expression position in fn."""
    slots = []

    def add_expr(e, set_fn):
        slots.append((e, set_fn))
        for k, c in enumerate(e.children):
            def setter(new, e=e, k=k):
                e.children[k] = new
            add_expr(c, setter)

    def add_cond(c):
        def sl(new, c=c):
            c.lhs = new
        add_expr(c.lhs, sl)

        def sr(new, c=c):
            c.rhs = new
        add_expr(c.rhs, sr)
        if c.other is not None:
            add_cond(c.other)

    def walk(stmts):
        for s in stmts:
            if isinstance(s, Assign):
                for k, e in enumerate(s.exprs):
                    def setter(new, s=s, k=k):
                        s.exprs[k] = new
                    add_expr(e, setter)
            elif isinstance(s, If):
                add_cond(s.cond)
            elif isinstance(s, While) and s.cond is not None:
                add_cond(s.cond)
            for b in s.blocks():
                walk(b)

    walk(fn.body)
    for k, e in enumerate(fn.ret):
        def setter(new, k=k):
            fn.ret[k] = new
        add_expr(e, setter)
    return slots


def _block_slots(fn: Function):
    """Every statement list in fn (the body and every nested block)."""
    out = [fn.body]

    def walk(stmts):
        for s in stmts:
            for b in s.blocks():
                out.append(b)
                walk(b)

    walk(fn.body)
    return out


def shrink_candidates(fn: Function):
    """Smaller variants of fn, biggest reductions first; each is a deep copy
    that passes the static definition check."""
    n_blocks = len(_block_slots(fn))
    # 1. delete a statement / replace a compound statement by a body
    for bi in range(n_blocks):
        block = _block_slots(fn)[bi]
        for si in range(len(block)):
            variants = []
            c = copy.deepcopy(fn)
            b = _block_slots(c)[bi]
            del b[si]
            variants.append(c)
            s = block[si]
            for k in range(len(s.blocks())):
                c = copy.deepcopy(fn)
                b = _block_slots(c)[bi]
                st = b[si]
                inner = st.blocks()[k]
                b[si:si + 1] = inner
                variants.append(c)
            if isinstance(s, While) and s.cond is not None:
                c = copy.deepcopy(fn)
                _block_slots(c)[bi][si].cond = None
                variants.append(c)
            if isinstance(s, (For, While)) and s.count > 1:
                c = copy.deepcopy(fn)
                _block_slots(c)[bi][si].count = 1
                variants.append(c)
            if isinstance(s, If) and s.cond.other is not None:
                c = copy.deepcopy(fn)
                _block_slots(c)[bi][si].cond.other = None
                _block_slots(c)[bi][si].cond.conj = ""
                variants.append(c)
            if isinstance(s, Assign) and len(s.targets) > 1:
                for k in range(len(s.targets)):
                    c = copy.deepcopy(fn)
                    st = _block_slots(c)[bi][si]
                    st.targets = [st.targets[k]]
                    st.exprs = [st.exprs[k]]
                    variants.append(c)
            if isinstance(s, Assign) and s.aug:
                c = copy.deepcopy(fn)
                st = _block_slots(c)[bi][si]
                st.exprs = [Expr("F", "({0} %s {1})" % st.aug, [var(st.targets[0], "F"), st.exprs[0]])]
                st.aug = ""
                variants.append(c)
            for v in variants:
                if _defined_before_use(v):
                    yield v
    # 2. drop outputs of a tuple return
    if len(fn.ret) > 1:
        for k in range(len(fn.ret)):
            c = copy.deepcopy(fn)
            del c.ret[k]
            yield c
    # 3. simplify expressions: replace by a same-typed child, a variable or a constant
    n_slots = len(_expr_slots(fn))
    for si in range(n_slots):
        e = _expr_slots(fn)[si][0]
        if e.is_var or not e.children and e.ty == "F":
            continue
        repl = [c for c in e.children if c.ty == e.ty]
        repl += [var(p, t) for p, t in fn.params if t == e.ty]
        if e.ty == "F":
            repl.append(const(0.5))
        for r_ in repl:
            c = copy.deepcopy(fn)
            _, setter = _expr_slots(c)[si]
            setter(copy.deepcopy(r_))
            if _defined_before_use(c):
                yield c


def shrink(fn: Function, still_fails, max_steps: int = 400) -> Function:
    """Greedy delta-debugging: keep taking the first smaller variant that
    still fails (`still_fails(candidate) -> bool`) until none does."""
    steps = 0
    progress = True
    while progress and steps < max_steps:
        progress = False
        for cand in shrink_candidates(fn):
            steps += 1
            if steps >= max_steps:
                break
            if still_fails(cand):
                fn = cand
                progress = True
                break
    return fn
