"""Loop nests in the Numba form (backend="numba"): a run of statements over arrays of
several axes whose shapes broadcast, proved from the specialisation's shapes, as nested
loops with no whole-array temporaries.

NumPy (and Numba compiling NumPy calls) writes each broadcast statement's result whole:
`diff = points[:, None, :] - centroids[None, :, :]` is an (n, k, m) array that
`np.sum(diff * diff, axis=2)` reads again. Here a run of such statements is one region:
every statement loops over its iteration shape (its result's, or for a reduction
`np.sum/np.min/np.max(e, axis=a, keepdims=...)` its operand's), axis by axis from the
first. Consecutive statements whose axis d has one size share the loop over it; a
reduction along axis d is accumulated in that loop, and its value is read only after the
loop (a statement reading it starts another loop). A broadcast operand is read by index:
at 0 along an axis of size 1, along a missing leading axis not at all.

A value of the run is kept in an array only over the axes whose loops do not enclose
both where it is made and where it is read (`dist` of the (n, k) distances, made and read
inside the loop over the n points, is a row of k), a scalar where they all do; a value
read after the run is an array of its whole shape, with its own name.

Sizes are the specialisation's: two axes are one size where they are the same size symbol
(`n`) or the same number; an axis of literal size 1 broadcasts. A statement outside this
model (another call, a fancy index, a view read after the run) ends the run; a run with no
statement of two axes or more is left to the 1-D fusion (numba_fusion.py).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

from s2sad.codegen.numba_fusion import _UFUNCS, _fresh, _stores, read_after
from s2sad.ir.dims import Dim

_ARITH = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_CMP = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_REDUCE = {"np.sum": "sum", "np.min": "min", "np.max": "max", "np.amin": "min",
           "np.amax": "max"}
_ALLOC = {"np.zeros": "0.0", "np.ones": "1.0", "np.empty": None}
ONE = "1"
F8 = " float64"
_VARS = ("i", "j", "p", "q", "r", "s", "t", "u")


class _Out(Exception):
    """The statement is not in the model: it ends the run."""


@dataclass(frozen=True)
class Arr:
    """An array's kind: dtype letter ('f', 'i', 'b'), sizes (texts: `n`, `3`, `1`)."""
    dtype: str
    shape: tuple
    # the parameters its float values come from (their dtype is the result's), F8 for
    # float64 (an allocation); None: itself
    sources: frozenset | None = None


SCALAR = "scalar"


@dataclass
class Leaf:
    """An array a statement reads: an outside array `name`, or a value of the run (`value`
    set), seen through a view: axes[v] is the base axis view axis v reads, None for a new
    axis of size 1."""
    name: str
    value: int | None
    axes: tuple
    shape: tuple
    dtype: str


@dataclass
class Ref:
    base: str  # an outside array's name, or "#k" for value k
    idx: list  # per base axis: an iteration axis (int) or "0"


@dataclass
class Value:
    name: str  # the name the source gives it
    dtype: str
    shape: tuple  # its whole shape
    stmt: int = -1
    tidx: list = field(default_factory=list)  # per axis: the iteration axis or "0"
    sources: set = field(default_factory=set)  # outside float arrays it is computed from


@dataclass
class Stmt:
    shape: tuple  # iteration sizes
    expr: ast.expr  # with Name("\0k") for refs[k]
    refs: list
    value: int | None = None  # the value it makes
    store: Ref | None = None  # else the outside memory it writes
    op: str | None = None  # "sum"/"min"/"max" (a reduction), or an update ("+", ...)
    red: int | None = None  # the reduced iteration axis
    dtype: str = "f"
    text: str = ""  # the source statement (for its comment)


def _size_text(d, bound: dict, name: str, axis: int):
    if type(d) is int:
        return str(d)
    if isinstance(d, Dim) and d.is_symbol:
        return bound.get(d.expr[0][0][0]) or f"{name}.shape[{axis}]"
    return None


def parameter_arrays(params: list[str], kinds: list, fn: ast.FunctionDef) -> dict:
    """{parameter: Arr or SCALAR} from the specialisation's kinds; a symbolic size is the
    name `fn` binds it to at its top (`n = x.shape[0]`), else `x.shape[a]`."""
    from s2sad.codegen.numba_fusion import _size_names
    names = _size_names(fn)
    bound: dict[str, str] = {}
    for named in (True, False):  # (a size the function names, else `x.shape[a]`)
        for name, k in zip(params, kinds):
            for axis, d in enumerate(getattr(k, "shape", None) or ()):
                if isinstance(d, Dim) and d.is_symbol and (not named or (name, axis) in names):
                    bound.setdefault(d.expr[0][0][0], names[name, axis] if named
                                     else f"{name}.shape[{axis}]")
    env: dict = {}
    sizes = set(names.values())
    for name, k in zip(params, kinds):
        if getattr(k, "family", "") or k.dtype not in ("f", "i", "b"):
            continue
        if k.tag == "scalar":
            env[name] = SCALAR
        elif k.tag == "array" and k.shape is not None:
            shape = tuple(_size_text(d, bound, name, a) for a, d in enumerate(k.shape))
            if None not in shape:
                env[name] = Arr(k.dtype, shape)
    for name in params:
        if name.endswith("_dot") and name[:-4] in env and name not in env:
            env[name] = env[name[:-4]]
    for s in sizes:
        env[s] = SCALAR
    return env


def _broadcast(shapes: list[tuple]) -> tuple:
    rank = max((len(s) for s in shapes), default=0)
    out = [ONE] * rank
    for s in shapes:
        for a, d in enumerate(s):
            a += rank - len(s)
            if d == ONE:
                continue
            if out[a] not in (ONE, d):
                raise _Out  # (sizes not proved to broadcast)
            out[a] = d
    return tuple(out)


def _int(e: ast.expr):
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        v = _int(e.operand)
        return -v if v is not None else None
    return None


class _Model:
    """The statements of one run, read into Stmts."""

    def __init__(self, env: dict, body: list[ast.stmt]):
        self.env = dict(env)  # name -> Arr | SCALAR | Leaf (a view) | int (a value)
        self.body = body
        self.values: list[Value] = []
        self.stmts: list[Stmt] = []
        self.hoisted: list[str] = []
        self.written: set[str] = set()  # outside memory the run writes
        self.read_outside: set[str] = set()
        self.views: dict[str, int] = {}  # a name of a view of a value -> its statement

    # -- expressions ------------------------------------------------------------
    def leaf(self, e: ast.expr) -> Leaf | None:
        """The array `e` reads (a name, a view of one), else None."""
        if isinstance(e, ast.Name):
            kind = self.env.get(e.id)
            if isinstance(kind, Leaf):
                return kind
            if isinstance(kind, int) and not isinstance(kind, bool):
                v = self.values[kind]
                return Leaf(e.id, kind, tuple(range(len(v.shape))), v.shape, v.dtype)
            if isinstance(kind, Arr):
                return Leaf(e.id, None, tuple(range(len(kind.shape))), kind.shape,
                            kind.dtype)
            return None
        if isinstance(e, ast.Attribute) and e.attr == "T":
            base = self.leaf(e.value)
            if base is None:
                return None
            return Leaf(base.name, base.value, base.axes[::-1], base.shape[::-1], base.dtype)
        if isinstance(e, ast.Subscript):
            base = self.leaf(e.value)
            if base is None:
                return None
            items = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            axes, shape, at = [], [], 0
            for it in items:
                if isinstance(it, ast.Constant) and it.value is None:
                    axes.append(None)
                    shape.append(ONE)
                elif isinstance(it, ast.Slice) and it.lower is None and \
                        it.upper is None and it.step is None and at < len(base.axes):
                    axes.append(base.axes[at])
                    shape.append(base.shape[at])
                    at += 1
                else:
                    raise _Out
            axes += base.axes[at:]
            shape += base.shape[at:]
            return Leaf(base.name, base.value, tuple(axes), tuple(shape), base.dtype)
        if isinstance(e, ast.Call) and not e.keywords:
            fn = ast.unparse(e.func)
            if fn == "np.expand_dims" and len(e.args) == 2:
                base, a = self.leaf(e.args[0]), _int(e.args[1])
                if base is None or a is None or not 0 <= a <= len(base.axes):
                    raise _Out
                return Leaf(base.name, base.value, base.axes[:a] + (None,) + base.axes[a:],
                            base.shape[:a] + (ONE,) + base.shape[a:], base.dtype)
            if fn == "np.reshape" and len(e.args) == 2 and isinstance(e.args[1], ast.Tuple):
                base = self.leaf(e.args[0])
                if base is None:
                    return None
                want = [self.size(x) for x in e.args[1].elts]
                axes, at = [], 0
                for d in want:  # (only new axes of size 1 put in)
                    if at < len(base.shape) and d == base.shape[at]:
                        axes.append(base.axes[at])
                        at += 1
                    elif d == ONE:
                        axes.append(None)
                    else:
                        raise _Out
                if at != len(base.shape):
                    raise _Out
                return Leaf(base.name, base.value, tuple(axes), tuple(want), base.dtype)
        return None

    def size(self, e: ast.expr) -> str:
        if isinstance(e, ast.Constant) and type(e.value) is int and e.value >= 0:
            return str(e.value)
        if isinstance(e, ast.Name) and self.env.get(e.id) == SCALAR:
            return e.id
        raise _Out

    def expr(self, e: ast.expr, refs: list) -> tuple[ast.expr, tuple | str, str]:
        """(e with its arrays as placeholders, its shape or SCALAR, its dtype letter)."""
        leaf = self.leaf(e)
        if leaf is not None:
            refs.append((leaf, None))
            return ast.Name(f"\0{len(refs) - 1}", ast.Load()), leaf.shape, leaf.dtype
        if isinstance(e, ast.Constant) and type(e.value) in (int, float, bool):
            return e, SCALAR, "f" if type(e.value) is float else "i"
        if isinstance(e, ast.Name) and self.env.get(e.id) == SCALAR:
            return e, SCALAR, "f"
        if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and \
                e.value.attr == "shape" and _int(e.slice) is not None:
            return e, SCALAR, "i"
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            x, s, t = self.expr(e.operand, refs)
            return ast.UnaryOp(e.op, x), s, t
        if isinstance(e, ast.BinOp) and type(e.op) in _ARITH:
            a, sa, ta = self.expr(e.left, refs)
            b, sb, tb = self.expr(e.right, refs)
            t = "f" if "f" in (ta, tb) or isinstance(e.op, ast.Div) else "i"
            return ast.BinOp(a, e.op, b), self.joined([sa, sb]), t
        if isinstance(e, ast.Compare) and len(e.ops) == 1 and isinstance(e.ops[0], _CMP):
            a, sa, _ = self.expr(e.left, refs)
            b, sb, _ = self.expr(e.comparators[0], refs)
            return ast.Compare(a, e.ops, [b]), self.joined([sa, sb]), "b"
        if isinstance(e, ast.Call) and not e.keywords and ast.unparse(e.func) in _UFUNCS:
            parts = [self.expr(a, refs) for a in e.args]
            return ast.Call(e.func, [p[0] for p in parts], []), \
                self.joined([p[1] for p in parts]), "f"
        if isinstance(e, ast.Call) and ast.unparse(e.func) in _REDUCE:
            # (inside an expression: made a statement of its own, before this one)
            return self.lifted(e, refs)
        raise _Out

    def joined(self, shapes: list) -> tuple | str:
        arrays = [s for s in shapes if s != SCALAR]
        return _broadcast(arrays) if arrays else SCALAR

    def lifted(self, e: ast.Call, refs: list):
        value = self.reduction(e, f"{_hint(e.args[0])}_{_REDUCE[ast.unparse(e.func)]}")
        v = self.values[value]
        refs.append((Leaf(v.name, value, tuple(range(len(v.shape))), v.shape, v.dtype),
                     None))
        return ast.Name(f"\0{len(refs) - 1}", ast.Load()), v.shape, v.dtype

    def reduction(self, e: ast.Call, name: str) -> int:
        """A statement for `np.sum(x, axis=a, keepdims=...)`: the value it makes."""
        if len(e.args) != 1:
            raise _Out
        opts = {k.arg: k.value for k in e.keywords}
        if set(opts) - {"axis", "keepdims"} or "axis" not in opts:
            raise _Out
        axis = _int(opts["axis"])
        keep = opts.get("keepdims")
        keep = False if keep is None else keep.value if isinstance(keep, ast.Constant) \
            and type(keep.value) is bool else None
        if axis is None or keep is None:
            raise _Out
        refs: list = []
        x, shape, dtype = self.expr(e.args[0], refs)
        if shape == SCALAR or not -len(shape) <= axis < len(shape):
            raise _Out
        axis %= len(shape)
        op = _REDUCE[ast.unparse(e.func)]
        out = shape[:axis] + ((ONE,) if keep else ()) + shape[axis + 1:]
        tidx = [a for a in range(len(shape)) if a != axis]
        if keep:
            tidx.insert(axis, "0")
        if op == "sum" and dtype != "f":
            dtype = "i"
        if op != "sum" and dtype != "f":
            raise _Out  # (the least of bools or ints: of their dtype, not a float)
        return self.made(Stmt(shape, x, refs, op=op, red=axis, dtype=dtype), name, out,
                         tidx)

    def made(self, stmt: Stmt, name: str, shape: tuple, tidx: list) -> int:
        self.finish(stmt)
        value = len(self.values)
        sources = set()
        for ref in stmt.refs:
            if ref.base.startswith("#"):
                sources |= self.values[int(ref.base[1:])].sources
            elif self.env.get(ref.base, Arr("", ())).dtype == "f":
                known = self.env[ref.base].sources
                sources |= {ref.base} if known is None else known
        self.values.append(Value(name, stmt.dtype, shape, len(self.stmts), tidx, sources))
        stmt.value = value
        self.stmts.append(stmt)
        return value

    def finish(self, stmt: Stmt) -> None:
        """The refs of `stmt` as indices of their bases, from its iteration shape."""
        rank = len(stmt.shape)
        refs = []
        for leaf, _ in stmt.refs:
            idx: list = ["0"] * (len(self.values[leaf.value].shape) if leaf.value is not None
                                 else len(self.env[leaf.name].shape))
            for v, (a, d) in enumerate(zip(leaf.axes, leaf.shape)):
                it = rank - len(leaf.shape) + v
                if a is not None:
                    idx[a] = "0" if d == ONE and stmt.shape[it] != ONE else it
            base = f"#{leaf.value}" if leaf.value is not None else leaf.name
            if leaf.value is None:
                if leaf.name in self.written:
                    raise _Out  # (memory the run writes, read again)
                self.read_outside.add(leaf.name)
            refs.append(Ref(base, idx))
        stmt.refs = refs

    # -- statements -------------------------------------------------------------
    def statement(self, stmt: ast.stmt, k: int) -> None:
        """Read `stmt` into the model, else raise _Out (the model is left as it was
        where it raises)."""
        saved = (dict(self.env), len(self.values), len(self.stmts), list(self.hoisted),
                 set(self.written), set(self.read_outside), dict(self.views))
        try:
            self._statement(stmt, k)
        except _Out:
            (self.env, n_values, n_stmts, self.hoisted, self.written, self.read_outside,
             self.views) = saved
            del self.values[n_values:], self.stmts[n_stmts:]
            raise
        for s in self.stmts[saved[2]:]:
            s.text = s.text or ast.unparse(stmt)

    def _statement(self, stmt: ast.stmt, k: int) -> None:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            name, e = stmt.targets[0].id, stmt.value
            if name in self.read_outside or name in self.written:
                raise _Out  # (a new value for a name of an outside array the run reads)
            if isinstance(e, ast.Call) and ast.unparse(e.func) in _ALLOC and \
                    len(e.args) == 1 and not e.keywords:
                if name in self.env and not isinstance(self.env[name], Arr):
                    raise _Out  # (a name of a value of the run: allocated before it)
                dims = e.args[0].elts if isinstance(e.args[0], ast.Tuple) else [e.args[0]]
                self.env[name] = Arr("f", tuple(self.size(d) for d in dims), frozenset({F8}))
                self.hoisted.append(ast.unparse(stmt))
                return
            leaf = self.leaf(e)
            if leaf is not None:  # (a view, or a second name of an array)
                if leaf.value is None and leaf.name in self.written:
                    raise _Out
                self.env[name] = leaf
                self.views[name] = k
                return
            if isinstance(e, ast.Call) and ast.unparse(e.func) in _REDUCE:
                self.env[name] = self.reduction(e, name)
                return
            refs: list = []
            x, shape, dtype = self.expr(e, refs)
            if shape == SCALAR:
                raise _Out
            self.env[name] = self.made(Stmt(shape, x, refs, dtype=dtype), name, shape,
                                       list(range(len(shape))))
            return
        if isinstance(stmt, ast.AugAssign) and type(stmt.op) in _ARITH:
            target = stmt.target
            if isinstance(target, ast.Name) and isinstance(self.env.get(target.id),
                                                           (int, Leaf)) and \
                    not isinstance(self.env.get(target.id), bool):
                # (an update of a value of the run: a new value, where no other name of
                # the array it updates is read after)
                leaf = self.leaf(target)
                if leaf is None or leaf.value is None:
                    raise _Out
                for other, kind in self.env.items():
                    same = kind == leaf.value if isinstance(kind, int) else \
                        isinstance(kind, Leaf) and kind.value == leaf.value
                    if other != target.id and same and self.live_after(other, k - 1):
                        raise _Out
                refs: list = []
                x, shape, dtype = self.expr(ast.BinOp(target, stmt.op, stmt.value), refs)
                if shape != leaf.shape:
                    raise _Out
                self.env[target.id] = self.made(Stmt(shape, x, refs, dtype=dtype),
                                                target.id, shape, list(range(len(shape))))
                return
            self.stored(target, stmt.value, _ARITH[type(stmt.op)])
            return
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            self.stored(stmt.targets[0], stmt.value, None)
            return
        raise _Out

    def stored(self, target: ast.expr, e: ast.expr, op: str | None) -> None:
        """`x[...] = e` or `x op= e` into an outside array x."""
        leaf = self.leaf(target)
        if leaf is None or leaf.value is not None or leaf.name in self.written or \
                leaf.name in self.read_outside or any(a is None and d != ONE for a, d in
                                                      zip(leaf.axes, leaf.shape)):
            raise _Out
        refs: list = []
        x, shape, dtype = self.expr(e, refs)
        if shape != SCALAR and _broadcast([shape, leaf.shape]) != leaf.shape:
            raise _Out
        if self.env[leaf.name].dtype != "f":
            raise _Out
        s = Stmt(leaf.shape, x, refs, op=op, dtype="f")
        self.finish(s)
        if any(r.base == leaf.name for r in s.refs):
            raise _Out  # (an array written where it is read)
        idx: list = ["0"] * len(self.env[leaf.name].shape)
        for v, a in enumerate(leaf.axes):
            if a is not None:
                idx[a] = v
        s.store = Ref(leaf.name, idx)
        self.written.add(leaf.name)
        self.stmts.append(s)

    def live_after(self, name: str, k: int) -> bool:
        return read_after(self.body, name, k)


def _hint(e: ast.expr) -> str:
    return e.id if isinstance(e, ast.Name) else "t"


# -- the loops ---------------------------------------------------------------------


@dataclass
class Loop:
    depth: int
    size: str
    children: list = field(default_factory=list)  # Loop | ("stmt", k) | ("init", k)


def _reads_of(stmt: Stmt) -> list[tuple[int, list]]:
    return [(int(r.base[1:]), r.idx) for r in stmt.refs if r.base.startswith("#")]


def _grouped(model: _Model, ks: list[int], depth: int) -> list:
    """The loops at `depth` of statements `ks` (each of rank >= depth)."""
    out: list = []
    group: list[int] = []
    whole: set[int] = set()  # values reduced along this loop
    made: dict[int, int] = {}  # value -> the statement of the group making it

    def close():
        if group:
            loop = Loop(depth, model.stmts[group[0]].shape[depth])
            for k in group:
                if model.stmts[k].red == depth:
                    loop_init = ("init", k)
                    out.append(loop_init)
            loop.children = _grouped(model, group, depth + 1)
            out.append(loop)
            out.extend(("fini", k) for k in group if model.stmts[k].red == depth)

    for k in ks:
        s = model.stmts[k]
        if len(s.shape) == depth:
            close()
            group, whole, made = [], set(), {}
            out.append(("stmt", k))
            continue
        ok = bool(group) and s.shape[depth] == model.stmts[group[0]].shape[depth]
        for value, idx in _reads_of(s):
            if value in whole:
                ok = False
            elif value in made:  # (read at the element this trip makes)
                tidx = model.values[value].tidx
                axis = next((a for a, t in enumerate(tidx) if t == depth), None)
                if axis is None or idx[axis] != depth:
                    ok = False
        if not ok:
            close()
            group, whole, made = [], set(), {}
        group.append(k)
        if s.value is not None:
            if s.red == depth:
                whole.add(s.value)
            else:
                made[s.value] = k
    close()
    return out


def _enclosing(tree: list) -> dict:
    """{("stmt"/"init", k): the loops around it, outermost first}."""
    found: dict = {}

    def walk(nodes, around):
        for node in nodes:
            if isinstance(node, Loop):
                walk(node.children, around + [node])
            else:
                found[node] = around
    walk(tree, [])
    return found


def nest(fn: ast.FunctionDef, lines: list[str], env: dict, taken: set[str]):
    """Line edits that make the runs of `fn`'s body loop nests; None when there is none.
    The kinds of the arrays a run leaves (those read after it) are known to the runs after
    it; a statement outside the model forgets the names it assigns."""
    edits: dict[int, list[str]] = {}
    body = fn.body
    env = dict(env)
    loop_vars: set[str] = set()  # (the nests' indices, each dead after its nest)
    k = 0
    while k < len(body):
        model = _Model(env, body)
        start = k
        last_computing = None
        while k < len(body):
            try:
                model.statement(body[k], k)
            except _Out:
                break
            if model.stmts and (last_computing is None or
                                len(model.stmts) > last_computing[1]):
                last_computing = (k, len(model.stmts))
            k += 1
        if last_computing is None or not _worth(model):
            if k == start:  # (a statement outside the model)
                for name in _stores(body[k]):
                    env.pop(name, None)
                if _scalar(body[k], env):
                    env[body[k].targets[0].id] = SCALAR
                k += 1
            else:  # (statements left as they are: their arrays are whole)
                env = _kinds_after(model, lambda v: True)
            continue
        stop = last_computing[0] + 1  # (hoisted allocations after the last: left)
        while True:  # (a view read after the run: the run ends before it)
            model = _Model(env, body)
            for j in range(start, stop):
                model.statement(body[j], j)
            cut = min((j for name, j in model.views.items()
                       if model.live_after(name, stop - 1)), default=None)
            if cut is None:
                break
            stop = cut
        out = _emitted(model, body, start, stop, lines, taken, loop_vars) if _worth(model) else None
        if out is None:
            env = _kinds_after(model, lambda v: True)
            k = max(stop, start + 1)  # (a run cut to nothing: its first statement passed)
            if stop == start:
                for name in _stores(body[start]):
                    env.pop(name, None)
            continue
        first = body[start].lineno - 1
        while first > 0 and lines[first - 1].strip().startswith("#"):
            first -= 1
        for i in range(first, body[stop - 1].end_lineno):
            edits[i] = []
        indent = lines[body[start].lineno - 1]
        indent = indent[:len(indent) - len(indent.lstrip())]
        edits[first] = [indent + ln for ln in out]
        env = _kinds_after(model, lambda v: model.live_after(model.values[v].name, stop - 1))
        k = stop
    return edits or None


def _scalar(stmt: ast.stmt, env: dict) -> bool:
    """Does `stmt` give a name a number (`n = x.shape[0]`, `t = x[0]` of a 1-D x)?"""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], ast.Name)):
        return False
    e = stmt.value
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and \
            isinstance(env.get(e.value.id), Arr):
        items = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        return len(items) == len(env[e.value.id].shape) and \
            all(_int(x) is not None for x in items)
    try:
        return _Model(env, []).expr(e, [])[1] == SCALAR
    except _Out:
        return False


def _kinds_after(model: _Model, whole) -> dict:
    """The kinds of the names after the model's statements: outside arrays, and the values
    `whole(v)` says are arrays of their whole shape (a view is forgotten)."""
    env = {}
    for name, kind in model.env.items():
        if isinstance(kind, (Arr, str)):
            env[name] = kind
        elif isinstance(kind, int) and whole(kind):
            value = model.values[kind]
            env[name] = Arr(value.dtype, value.shape, frozenset(value.sources))
    return env


def _worth(model: _Model) -> bool:
    return len(model.stmts) >= 2 and any(len(s.shape) >= 2 for s in model.stmts)


def _dtype(value: Value) -> str:
    if value.dtype == "b":
        return "np.bool_"
    if value.dtype == "i":
        return "np.int64"
    names = sorted(value.sources)
    if not names or F8 in names:
        return "np.float64"
    if len(names) == 1:
        return f"{names[0]}.dtype"
    return "(" + " + ".join(f"{n}.ravel()[:0]" for n in names) + ").dtype"  # (f4 + f8: f8)


def _emitted(model: _Model, body, start: int, stop: int, lines: list[str],
             taken: set[str], loop_vars: set[str]) -> list[str] | None:
    tree = _grouped(model, list(range(len(model.stmts))), 0)
    around = _enclosing(tree)
    final = {}  # the last value of each name
    for v, value in enumerate(model.values):
        final[value.name] = v
    live = {v for name, v in final.items() if model.live_after(name, stop - 1)}
    readers: dict[int, list] = {}
    for k, s in enumerate(model.stmts):
        for value, _ in _reads_of(s):
            readers.setdefault(value, []).append(("stmt", k))
    # the axes each value is kept over
    kept: dict[int, list[int]] = {}
    for v, value in enumerate(model.values):
        if v in live:
            kept[v] = list(range(len(value.shape)))
            continue
        places = [around[("stmt", value.stmt)]] + [around[r] for r in readers.get(v, [])]
        if model.stmts[value.stmt].red is not None:
            places.append(around[("init", value.stmt)])
        common = 0
        while all(len(p) > common and p[common] is places[0][common] for p in places):
            common += 1
        kept[v] = [a for a, t in enumerate(value.tidx) if t != "0" and t >= common and
                   value.shape[a] != ONE]
    names: dict[int, str] = {}

    def zeroed(v: int) -> bool:
        """A sum accumulated over the outermost loop: allocated zeros."""
        s = model.stmts[model.values[v].stmt]
        return s.op == "sum" and s.red is not None and around[("init", s.value)] == []

    for v, value in enumerate(model.values):
        if v in live:
            names[v] = value.name
        elif kept[v]:
            names[v] = value.name if final.get(value.name) == v else \
                _fresh(value.name, taken)
            taken.add(names[v])
    scalar_names: dict[int, str] = {}
    out: list[str] = list(model.hoisted)
    for v, value in enumerate(model.values):
        if v in live or kept[v]:
            shape = [value.shape[a] for a in kept[v]]
            dims = f"({shape[0]},)" if len(shape) == 1 else f"({', '.join(shape)})"
            out.append(f"{names[v]} = np.{'zeros' if zeroed(v) else 'empty'}({dims}, "
                       f"{_dtype(value)})")
        else:
            scalar_names[v] = _fresh(f"{value.name}_s", taken)
    var_of_depth = {}
    own = set(taken) - loop_vars  # (a loop's index is dead after its nest)
    for depth in range(max((len(s.shape) for s in model.stmts), default=0)):
        var_of_depth[depth] = _fresh(_VARS[depth] if depth < len(_VARS) else f"i{depth}",
                                     own)
    taken |= set(var_of_depth.values())
    loop_vars |= set(var_of_depth.values())

    def access(v: int, idx: list, where: str) -> str:
        """Value v at the element an index list says (iteration axes -> loop vars)."""
        if v in scalar_names:
            return scalar_names[v]
        parts = []
        for a in kept[v]:
            t = idx[a]
            parts.append("0" if t == "0" else var_of_depth[t])
        if not parts:
            return names[v]
        return f"{names[v]}[{', '.join(parts)}]"

    def outside(ref: Ref) -> str:
        parts = ["0" if t == "0" else var_of_depth[t] for t in ref.idx]
        return f"{ref.base}[{', '.join(parts)}]" if parts else ref.base

    def value_text(s: Stmt) -> str:
        e = copy.deepcopy(s.expr)

        class Sub(ast.NodeTransformer):
            def visit_Name(self, node):
                if node.id.startswith("\0"):
                    ref = s.refs[int(node.id[1:])]
                    text = access(int(ref.base[1:]), ref.idx, "read") \
                        if ref.base.startswith("#") else outside(ref)
                    return ast.parse(text, mode="eval").body
                return node
        return ast.unparse(Sub().visit(e))

    registers: dict[int, str] = {}  # a reduction kept in a register, stored after its loop
    for k, s in enumerate(model.stmts):
        v = s.value
        if s.red is not None and v not in scalar_names and all(
                model.values[v].tidx[a] == "0" or model.values[v].tidx[a] < s.red
                for a in kept[v]) and not zeroed(v):
            registers[k] = _fresh(f"{model.values[v].name}_acc", taken)

    def target_text(s: Stmt) -> str:
        k = model.stmts.index(s)
        if k in registers:
            return registers[k]
        if s.store is not None:
            return outside(s.store)
        return access(s.value, model.values[s.value].tidx, "write")

    def emit(nodes, indent: str, acc: list[str]):
        for node in nodes:
            if isinstance(node, Loop):
                var = var_of_depth[node.depth]
                if node.size == ONE:  # (no loop: its one index is 0)
                    var_of_depth[node.depth] = "0"
                    emit(node.children, indent, acc)
                    var_of_depth[node.depth] = var
                else:
                    acc.append(f"{indent}for {var} in range({node.size}):")
                    emit(node.children, indent + "    ", acc)
                continue
            kind, k = node
            s = model.stmts[k]
            if kind == "init":
                tgt = target_text_init(s) if k not in registers else \
                    f"{registers[k]} = {_initial(model, s.value)}"
                acc.append(f"{indent}{tgt}")
                continue
            if kind == "fini":
                if k in registers:
                    value = model.values[s.value]
                    acc.append(f"{indent}{access(s.value, value.tidx, 'write')} = "
                               f"{registers[k]}")
                continue
            value = value_text(s)
            tgt = target_text(s)
            if s.op in (None,):
                acc.append(f"{indent}{tgt} = {value}")
            elif s.op == "sum":
                acc.append(f"{indent}{tgt} += {value}")
            elif s.op in ("min", "max"):
                cmp = "<" if s.op == "min" else ">"
                x = _fresh("x", taken) if not _simple(value) else value
                if x != value:
                    acc.append(f"{indent}{x} = {value}")
                acc.append(f"{indent}if {x} {cmp} {tgt} or {x} != {x}:")
                acc.append(f"{indent}    {tgt} = {x}")
            else:
                acc.append(f"{indent}{tgt} {s.op}= {value}")

    def target_text_init(s: Stmt) -> str:
        v = s.value
        init = _initial(model, v)
        value = model.values[v]
        if v in scalar_names:
            return f"{scalar_names[v]} = {init}"
        # bound: the axes of loops outside the reduction's
        bound = [a for a in kept[v] if value.tidx[a] != "0" and value.tidx[a] < s.red]
        free = [a for a in kept[v] if a not in bound]
        if not free:
            return f"{access(v, value.tidx, 'write')} = {init}"
        if zeroed(v):
            return "pass"
        prefix = ", ".join(var_of_depth[value.tidx[a]] for a in bound)
        return f"{names[v]}{f'[{prefix}]' if prefix else ''}.fill({init})"

    lines_out: list[str] = []
    emit(tree, "", lines_out)
    lines_out = [ln for ln in lines_out if ln.strip() != "pass"]
    header = [f"# loops over the broadcast shapes, fused (backend=\"numba\"): {len(model.stmts)}"
              " statements"]
    for stmt in body[start:stop]:
        for ln in lines[stmt.lineno - 2:stmt.lineno - 1]:
            if ln.strip().startswith("# line") or ln.strip().startswith("# reverse"):
                header.append(ln.strip())
    return out + header + lines_out


def _simple(text: str) -> bool:
    return text.replace("_", "a").replace("[", "").replace("]", "").replace(", ", "") \
        .isalnum()


def _initial(model: _Model, v: int | None) -> str | None:
    if v is None:
        return None
    s = model.stmts[model.values[v].stmt]
    if s.op == "sum":
        return "0.0" if s.dtype == "f" else "0"
    if s.op == "min":
        return "np.inf"
    if s.op == "max":
        return "-np.inf"
    return None
