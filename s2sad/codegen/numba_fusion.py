"""Fused elementwise loops in the Numba form (backend="numba"): consecutive statements over
1-D float arrays of one length, proved equal from the specialisation's shapes, as one loop.

Numba compiles each array statement to a loop of its own, writing a whole temporary array
that the next statement reads again; NumPy does the same. A run of such statements written
as one `for i in range(n)` loop makes one pass over memory, keeps the temporaries that
nothing reads after the run in registers (`b_i`), and accumulates a `np.sum` in the loop.

A statement joins the run only where the run stays the same computation: every array it
reads or writes has the run's length; an array written in the run is read and written at
one offset only (`g[:-1] = ...` and `g[1:] += ...` need two passes); a value the run
computes whole (a sum) is read only after the loop. Anything else ends the run, and a run
of one statement is left as it was.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

from s2sad.ir.dims import Dim

# elementwise NumPy functions that Numba also applies to one float (their scalar forms)
_UFUNCS = {f"np.{n}" for n in (
    "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "square", "abs", "fabs",
    "negative", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "sign", "reciprocal", "add", "subtract", "multiply",
    "divide", "true_divide", "power", "maximum", "minimum", "arctan2", "hypot")}
_ALLOC = {"np.zeros", "np.empty", "np.ones"}
_REDUCE = {"np.sum", "np.max", "np.min", "np.mean", "np.prod"}
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
SCALAR = "scalar"


def shape_of(e: ast.expr, env: dict[str, int | str]) -> int | str | None:
    """The length of the 1-D float array `e` computes, SCALAR for a number, else None."""
    if isinstance(e, ast.Constant):
        return SCALAR if isinstance(e.value, (int, float)) else None
    if isinstance(e, ast.Name):
        return env.get(e.id)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        return shape_of(e.operand, env)
    if isinstance(e, ast.BinOp) and isinstance(e.op, _ARITH):
        return _joined([shape_of(e.left, env), shape_of(e.right, env)])
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and \
            e.value.attr == "shape" and isinstance(e.slice, ast.Constant):
        return SCALAR  # (a size: `n = x.shape[0]`)
    if isinstance(e, ast.Subscript):
        view = _slice_of(e, env)
        return view[1] if view else None
    if isinstance(e, ast.Call) and not e.keywords:
        fn = ast.unparse(e.func)
        if fn in _UFUNCS:
            return _joined([shape_of(a, env) for a in e.args])
        if fn in _REDUCE and len(e.args) == 1 and isinstance(shape_of(e.args[0], env), int):
            return SCALAR
        if fn in _ALLOC and len(e.args) == 1:
            n = _size_value(e.args[0], env)
            return n if isinstance(n, int) else None
        if fn == "len" and len(e.args) == 1 and isinstance(shape_of(e.args[0], env), int):
            return SCALAR
    return None


def _same_or_scalar(shape, n) -> bool:
    return _same(shape, n) or _same(shape, SCALAR)


SIZES = " sizes"  # (a key of env no name is: the sizes the function binds, name -> Dim)


def _size_value(e: ast.expr, env: dict):
    """The size an allocation's shape `e` says (`100`, `(n,)`, `(n - 1,)`), or None."""
    if isinstance(e, ast.Tuple):
        return _size_value(e.elts[0], env) if len(e.elts) == 1 else None
    if isinstance(e, ast.Constant):
        return e.value if type(e.value) is int else None
    if isinstance(e, ast.Name):
        return env.get(SIZES, {}).get(e.id)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult)):
        a, b = _size_value(e.left, env), _size_value(e.right, env)
        if a is None or b is None:
            return None
        return a + b if isinstance(e.op, ast.Add) else a - b if isinstance(e.op, ast.Sub) \
            else a * b
    return None


def _joined(shapes: list) -> int | str | None:
    if not shapes or None in shapes:
        return None
    lengths = [s for s in shapes if not _same(s, SCALAR)]
    if any(not _same(s, lengths[0]) for s in lengths[1:]):
        return None  # (broadcasting a length-1 array is not fused)
    return lengths[0] if lengths else SCALAR


def _literal(e: ast.expr):
    try:
        return ast.literal_eval(e)
    except ValueError:
        return None


def _slice_of(e: ast.Subscript, env: dict[str, int | str]) -> tuple[str, int, int] | None:
    """`x[lo:hi]` of a 1-D array `x` with literal bounds: (x, its length, first index).
    The length of an array of a specialisation for every size is a symbolic size (a Dim,
    ir/dims.py: `n - 1` for `x[1:]`); a view whose first index is not a number is not
    fused."""
    if not (isinstance(e.value, ast.Name) and isinstance(env.get(e.value.id), int)
            and isinstance(e.slice, ast.Slice) and e.slice.step is None):
        return None
    bounds = [None if b is None else _literal(b) for b in (e.slice.lower, e.slice.upper)]
    if any(b is not None and type(b) is not int for b in bounds):
        return None
    n = env[e.value.id]
    if isinstance(n, Dim):
        # `x[k:-j]`: n - k - j elements from k (for n >= k + j, and none else, where the
        # loop's range is empty too); a first index `n - 3` or a last `5` depend on n
        lo, hi = bounds[0] or 0, bounds[1]
        if lo < 0 or (hi is not None and hi >= 0):
            return None
        return e.value.id, n - lo + (hi or 0), lo
    r = range(n)[bounds[0]:bounds[1]]
    return e.value.id, len(r), r.start


def _same(a, b) -> bool:
    """Are lengths `a` and `b` (ints, symbolic sizes, SCALAR) the same for every size? A
    symbolic size is never taken for a number (fusion does not ask what the key leaves
    open)."""
    if isinstance(a, Dim) or isinstance(b, Dim):
        return isinstance(a, Dim) and isinstance(b, Dim) and a.expr == b.expr
    return a == b


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and
            isinstance(n.ctx, ast.Load)}


def _stores(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and
            isinstance(n.ctx, ast.Store)}


@dataclass
class _Run:
    """A run of statements being fused, and what it has read and written so far."""

    n: int
    # (statement, role, the kinds of names before it)
    stmts: list[tuple[ast.stmt, str, dict]] = field(default_factory=list)
    aliased: set[str] = field(default_factory=set)  # names given to one array in the run
    defined: set[str] = field(default_factory=set)  # elementwise values computed in the run
    whole: set[str] = field(default_factory=set)  # values known only after the loop
    read: set[str] = field(default_factory=set)
    post_reads: set[str] = field(default_factory=set)
    # memory -> its accesses in the run, in order: (offset, written)
    accesses: dict[str, list[tuple[int, bool]]] = field(default_factory=dict)
    # the orders of the loop that keep each element's accesses in the statements' order
    directions: frozenset = frozenset({"forward", "backward"})


class _Fuser:
    def __init__(self, body: list[ast.stmt], env: dict[str, int | str], taken: set[str]):
        self.body = body
        self.env = env
        self.taken = taken
        self.root: dict[str, tuple[str, int]] = {}  # array name -> (memory, offset)

    # -- reading the function ------------------------------------------------

    def runs(self) -> list[tuple[int, int, _Run]]:
        """The runs worth fusing: (first statement, after the last, run)."""
        found: list[tuple[int, int, _Run]] = []
        run: _Run | None = None
        start = 0
        for k, stmt in enumerate(self.body):
            if run is not None and not self.join(run, stmt, k):
                found.append((start, k, run))
                run = None
            if run is None:
                n = self.opening_length(stmt)
                if n is not None:
                    run, start = _Run(n), k
                    if not self.join(run, stmt, k):
                        run = None
            self.update_env(stmt)
        if run is not None:
            found.append((start, len(self.body), run))
        out = []
        for start, stop, run in found:
            while run.stmts and run.stmts[-1][1] in ("hoist", "alias"):  # (nothing after them in the loop)
                run.stmts.pop()
                stop -= 1
            if sum(role in ("elem", "post", "store") for _, role, _ in run.stmts) >= 2:
                out.append((start, stop, run))
        return out

    def opening_length(self, stmt: ast.stmt) -> int | None:
        """The length a run opened by `stmt` has (an elementwise statement)."""
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Subscript):
                view = _slice_of(target, self.env)
                return view[1] if view else None
            value = stmt.value
            if isinstance(value, ast.Call) and ast.unparse(value.func) in _ALLOC:
                return None
            if isinstance(value, (ast.Name, ast.Subscript)):
                return None  # (an alias or a view: nothing to compute)
            n = shape_of(value, self.env)
            return n if isinstance(n, int) else None
        if isinstance(stmt, ast.AugAssign):
            if shape_of(stmt.value, self.env) is None:
                return None
            if isinstance(stmt.target, ast.Subscript):
                view = _slice_of(stmt.target, self.env)
                return view[1] if view else None
            return self.env.get(ast.unparse(stmt.target))
        return None

    def update_env(self, stmt: ast.stmt) -> None:
        env = self.env
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
            shape = shape_of(value, env)
            view = _slice_of(value, env) if isinstance(value, ast.Subscript) else None
            if isinstance(value, ast.Name) and shape is not None and shape != SCALAR:
                self.root[name] = self.root.get(value.id, (value.id, 0))
            elif view is not None:
                memory, offset = self.root.get(view[0], (view[0], 0))
                self.root[name] = (memory, offset + view[2])
            else:
                self.root[name] = (name, 0)
            if shape is None:
                env.pop(name, None)
            else:
                env[name] = shape
            return
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id  # (`s += a` makes the float s an array)
            shape = _joined([env.get(name), shape_of(stmt.value, env)]) \
                if isinstance(stmt.op, _ARITH) else None
            if env.get(name) == SCALAR and isinstance(shape, int):
                self.root[name] = (name, 0)  # (a new array)
            if shape is None:
                env.pop(name, None)
            else:
                env[name] = shape
            return
        if isinstance(stmt, (ast.AugAssign, ast.Expr)) or (
                isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Subscript)
                                                      for t in stmt.targets)):
            return  # (the names keep their kinds: in-place updates)
        for name in _stores(stmt):
            env.pop(name, None)
            self.root.pop(name, None)

    # -- joining a run -------------------------------------------------------

    def join(self, run: _Run, stmt: ast.stmt, k: int) -> bool:
        """Add `stmt` to `run` when the loop stays the same computation."""
        role = self.role(run, stmt)
        if role is None:
            return False
        reads = _reads(stmt)
        targets = _stores(stmt)
        # a value known after the loop (a sum) is read after the loop only (outside the
        # sums of a statement that the loop accumulates, the rest of which follows it)
        in_loop = self.summed_reads(stmt) if role == "post" else reads
        if (in_loop | targets) & run.whole or targets & run.post_reads:
            return False
        # moved before the loop: it reads nothing the loop computes
        if role == "hoist" and (reads & run.defined or targets & (run.read | run.defined)):
            return False
        if role == "post":
            in_loop_reads = reads - self.summed_names(stmt)
            if in_loop_reads & run.defined or targets & (run.read | run.defined):
                return False
        if role == "alias":
            source = stmt.value.id  # type: ignore[attr-defined]
            if self.live_after(source, k):  # (one array with two names: not fused)
                return False
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            if role in ("elem", "alias") and name in (run.read | reads) - run.defined:
                return False  # (the name still holds an array read earlier in the run)
        if role in ("elem", "store") and any(
                isinstance(sub, ast.Call) and ast.unparse(sub.func) in _REDUCE | {"len"}
                for sub in ast.walk(stmt)):
            return False  # (a sum inside an elementwise statement: of the whole array)
        if any(isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and
               sub.value.id in run.defined for sub in ast.walk(stmt)):
            return False  # (a part of a value the loop computes an element at a time)
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) and \
                stmt.targets[0].id in run.aliased:
            return False  # (a new value for one of two names of an array)
        if not self.memory_ok(run, stmt, role):
            return False
        if role == "alias":
            run.aliased |= targets | {stmt.value.id}  # type: ignore[attr-defined]
        run.stmts.append((stmt, role, dict(self.env)))
        run.read |= reads
        if role in ("elem", "alias"):
            run.defined |= targets
        if role == "post":
            run.whole |= targets
            run.post_reads |= reads
        return True

    def role(self, run: _Run, stmt: ast.stmt) -> str | None:
        env, n = self.env, run.n
        if isinstance(stmt, ast.Return):
            return "post" if stmt.value is not None and self.summed(stmt.value, n) else None
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, _ARITH):
            if not _same_or_scalar(shape_of(stmt.value, env), n):
                return None
            target = stmt.target
            if isinstance(target, ast.Name) and _same(env.get(target.id), n):
                return "elem" if target.id in run.defined else "store"
            if isinstance(target, ast.Subscript):
                view = _slice_of(target, env)
                ok = view is not None and _same(view[1], n)
                return "store" if ok and view[0] not in run.defined else None
            return None
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            return None
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, ast.Subscript):
            view = _slice_of(target, env)
            ok = view is not None and _same(view[1], n) and \
                _same_or_scalar(shape_of(value, env), n)
            return "store" if ok and target.value.id not in run.defined else None
        if not isinstance(target, ast.Name):
            return None
        shape = shape_of(value, env)
        if isinstance(value, ast.Call) and ast.unparse(value.func) in _ALLOC and \
                shape is not None:
            return "hoist"
        if isinstance(value, ast.Subscript):
            return "hoist" if shape is not None and value.value.id not in run.defined else None
        if isinstance(value, ast.Name) and isinstance(shape, int):
            if value.id not in run.defined:
                return "hoist"
            return "alias" if _same(shape, n) else None
        if _same(shape, n):
            return "elem"
        if _same(shape, SCALAR) and self.summed(value, n):
            return "post"
        return None

    def summed(self, e: ast.expr, n: int) -> bool:
        """Does scalar `e` sum arrays of length n (np.sum of elementwise expressions),
        reading no other array?"""
        found = False

        def scalar_apart_from_sums(node: ast.expr) -> bool:
            nonlocal found
            if _is_sum(node) and _same(shape_of(node.args[0], self.env), n):
                found = True
                return True
            if isinstance(node, ast.Tuple):
                return all(scalar_apart_from_sums(x) for x in node.elts)
            if isinstance(node, ast.Call):
                return not node.keywords and ast.unparse(node.func) in _UFUNCS and \
                    all(scalar_apart_from_sums(a) for a in node.args)
            if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITH):
                return scalar_apart_from_sums(node.left) and \
                    scalar_apart_from_sums(node.right)
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
                return scalar_apart_from_sums(node.operand)
            return _same(shape_of(node, self.env), SCALAR) and \
                isinstance(node, (ast.Name, ast.Constant))
        return scalar_apart_from_sums(e) and found

    def summed_reads(self, stmt: ast.stmt) -> set[str]:
        """The names read inside the sums of `stmt`."""
        return {n for c in ast.walk(stmt) if isinstance(c, ast.Call) and _is_sum(c)
                for n in _reads(c.args[0])}

    def summed_names(self, stmt: ast.stmt) -> set[str]:
        return {n for c in ast.walk(stmt) if _is_sum(c) for n in _reads(c)}

    def memory_ok(self, run: _Run, stmt: ast.stmt, role: str) -> bool:
        """Each element of an array the run writes is touched in the order the whole-array
        statements touch it. The loop's i-th step touches element i + k of a view at
        offset k: where the run touches memory at offsets a, then b (one of them a write),
        element e is touched at steps e - a, then e - b, so that a loop counting up keeps
        the order where b <= a and one counting down where b >= a (`g[:-1] = u` then
        `g[1:] += v`: down). A statement reads all it reads before it writes."""
        if role in ("hoist", "alias"):
            return True
        reads: list[tuple[str, int]] = []
        writes: list[tuple[str, int]] = []
        sliced = {id(sub.value) for sub in ast.walk(stmt) if isinstance(sub, ast.Subscript)}
        for sub in ast.walk(stmt):
            if id(sub) in sliced:
                continue
            use = None
            if isinstance(sub, ast.Subscript):
                view = _slice_of(sub, self.env)
                if view is not None:
                    memory, offset = self.root.get(view[0], (view[0], 0))
                    use = (memory, offset + view[2])
            elif isinstance(sub, ast.Name) and isinstance(self.env.get(sub.id), int) and \
                    sub.id not in run.defined:
                use = self.root.get(sub.id, (sub.id, 0))
            if use is None:
                continue
            stored = isinstance(getattr(sub, "ctx", None), ast.Store)
            if not stored or isinstance(stmt, ast.AugAssign):
                reads.append(use)  # (`g[1:] += v` reads g[1:] first)
            if stored:
                writes.append(use)
        accesses = {m: list(a) for m, a in run.accesses.items()}
        directions = set(run.directions)
        for (memory, offset), written in [(u, False) for u in reads] + \
                [(u, True) for u in writes]:
            earlier = accesses.setdefault(memory, [])
            for before, was_written in earlier:
                if (written or was_written) and before != offset:
                    directions.discard("forward" if offset > before else "backward")
            earlier.append((offset, written))
        if not directions:
            return False
        run.accesses, run.directions = accesses, frozenset(directions)
        return True

    def live_after(self, name: str, k: int) -> bool:
        """Is the value `name` holds after statement k read later?"""
        return read_after(self.body, name, k)


def read_after(body: list, name: str, k: int) -> bool:
    """Is the value `name` holds after statement k of `body` read by a later statement
    (before an assignment gives it another)?"""
    for stmt in body[k + 1:]:
        if name in _reads(stmt):
            return True
        if isinstance(stmt, ast.Assign) and name in _stores(stmt):
            return False
    return False


def _is_sum(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func) == "np.sum" and \
        len(node.args) == 1 and not node.keywords


def _copy(node):
    """A copy of `node` to rewrite (the original is read again)."""
    return copy.deepcopy(node)


class _Element(ast.NodeTransformer):
    """An elementwise expression at element `i` of the loop: an array `a` is `a[i]`, a
    slice `x[1:]` `x[i + 1]`, a value kept in a register `a_i`, a sum its accumulator."""

    def __init__(self, env: dict, index: str, temps: dict[str, str], sums: dict[str, str]):
        self.env, self.index, self.temps, self.sums = env, index, temps, sums

    def at(self, offset: int) -> ast.expr:
        i = ast.Name(self.index, ast.Load())
        return ast.BinOp(i, ast.Add(), ast.Constant(offset)) if offset else i

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.temps:
            return ast.Name(self.temps[node.id], node.ctx)
        if isinstance(self.env.get(node.id), int):
            return ast.Subscript(ast.Name(node.id, ast.Load()), self.at(0), node.ctx)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        view = _slice_of(node, self.env)
        if view is not None:
            return ast.Subscript(ast.Name(view[0], ast.Load()), self.at(view[2]), node.ctx)
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        if _is_sum(node) and ast.unparse(node) in self.sums:
            return ast.Name(self.sums[ast.unparse(node)], ast.Load())
        self.generic_visit(node)
        return node


def fuse(fn: ast.FunctionDef, lines: list[str], env: dict[str, int | str],
         taken: set[str]) -> dict[int, list[str]] | None:
    """Line edits ({line index: replacement}, a run's other lines replaced by nothing) that
    fuse the runs of `fn`'s body; None when there is none. `env`: the kinds of the
    parameters (a 1-D float array's length, SCALAR)."""
    fuser = _Fuser(fn.body, dict(env), taken)
    runs = fuser.runs()
    if not runs:
        return None
    edits: dict[int, list[str]] = {}
    for start, stop, run in runs:
        first = fn.body[start - 1].end_lineno if start else fn.body[0].lineno - 1
        while first > 0 and not lines[first].strip():
            first += 1
        new = _emitted(fuser, run, start, stop, lines, first, taken)
        last = fn.body[stop - 1].end_lineno
        for i in range(first, last):
            edits[i] = []
        edits[first] = new
    return edits


def _sources(e: ast.expr, env: dict, sources: dict[str, set[str]]) -> set[str]:
    """The arrays from before the loop that the elements of `e` are computed from."""
    found: set[str] = set()
    for name in _reads(e):
        if name in sources:
            found |= sources[name]
        elif isinstance(env.get(name), int):
            found.add(name)
    return found


def _dtype_of(arrays: set[str]) -> str:
    """The dtype NumPy gives an elementwise result of `arrays` (float32 from float32
    arguments, float64 from a mix): the kinds say only "float"."""
    names = sorted(arrays)
    if not names:
        return "np.float64"
    if len(names) == 1:
        return f"{names[0]}.dtype"
    return "(" + " + ".join(f"{n}[:0]" for n in names) + ").dtype"


def _fresh(hint: str, taken: set[str]) -> str:
    name, k = hint, 1
    while name in taken:
        name, k = f"{hint}{k}", k + 1
    taken.add(name)
    return name


def _emitted(fuser: _Fuser, run: _Run, start: int, stop: int, lines: list[str],
             first: int, taken: set[str]) -> list[str]:
    """The lines of one fused run: what is set up before the loop, the loop, the
    statements that read its sums."""
    indent = lines[run.stmts[0][0].lineno - 1]
    indent = indent[:len(indent) - len(indent.lstrip())]
    # values read after the run are arrays (with the names they were given); others
    # are registers
    kept = {n for n in run.defined if fuser.live_after(n, stop - 1)}
    grown = True
    while grown:  # (two names of one array: both kept or neither, along a chain of them)
        grown = False
        for stmt, role, _ in run.stmts:
            names = {stmt.targets[0].id, stmt.value.id} if role == "alias" else set()
            if names & kept and not names <= kept:
                kept |= names
                grown = True
    index = _fresh("i", taken)
    temps = {n: _fresh(f"{n}_{index}", taken) for n in sorted(run.defined - kept)}
    before: list[str] = []
    body: list[str] = []
    after: list[str] = []
    previous_end = first
    pending: list[str] = []
    sources: dict[str, set[str]] = {}  # a value of the loop -> the arrays it is made from
    allocated: set[str] = set()
    for stmt, role, env in run.stmts:
        comments = [ln.strip() for ln in lines[previous_end:stmt.lineno - 1]
                    if ln.strip().startswith("#")]
        previous_end = stmt.end_lineno
        text = ast.unparse(stmt)
        # (a comment saying which line of yours follows stays in the loop, where the
        # statements of that line are)
        comments = pending + comments
        pending = []
        if role == "hoist":
            before.append(text)
            pending = comments
            continue
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) and \
                role in ("elem", "alias"):
            sources[stmt.targets[0].id] = _sources(stmt.value, env, sources)
        if role == "alias":
            target, source = stmt.targets[0].id, stmt.value.id
            if target in kept:
                before.append(text)
                pending = comments
            else:
                body += comments + [f"{temps[target]} = {temps[source]}"]
            continue
        element = _Element(env, index, temps, {})
        if role == "post":
            sums: dict[str, str] = {}  # (this statement's: a sum taken again is another)
            element.sums = sums
            found = [c for c in ast.walk(stmt) if _is_sum(c)]
            lone = isinstance(stmt, ast.Assign) and _is_sum(stmt.value)
            adds = []
            for call in found:
                key = ast.unparse(call)
                if key in sums:
                    continue
                arg = call.args[0]
                hint = stmt.targets[0].id if lone else (
                    f"{arg.id}_sum" if isinstance(arg, ast.Name) else "total")
                acc = sums[key] = _fresh(hint, taken) if not lone else hint
                before.append(f"{acc} = 0.0")
                adds.append(f"{acc} += {ast.unparse(element.visit(_copy(arg)))}")
            body += comments + adds
            if not lone:
                after.append(ast.unparse(_Element({}, index, {}, sums).visit(_copy(stmt))))
            continue
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            value = ast.unparse(element.visit(_copy(stmt.value)))
            if name in kept:
                if name not in allocated:
                    allocated.add(name)
                    before.append(f"{name} = np.empty({run.n}, "
                                  f"{_dtype_of(_sources(stmt.value, env, sources))})")
                body += comments + [f"{name}[{index}] = {value}"]
            else:
                body += comments + [f"{temps[name]} = {value}"]
            continue
        body += comments + [ast.unparse(element.visit(_copy(stmt)))]
    for stmt, _, _ in run.stmts:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            taken.add(stmt.targets[0].id)
    out = [indent + ln for ln in before]
    out.append(f"{indent}# one loop over the {run.n} elements, fused (backend=\"numba\")"
               + ("" if "forward" in run.directions else ", last to first"))
    if "forward" in run.directions:
        out.append(f"{indent}for {index} in range({run.n}):")
    else:  # (an element written, then read or written at a higher offset: see memory_ok)
        out.append(f"{indent}for {index} in range({run.n - 1}, -1, -1):")
    out += [f"{indent}    {ln}" for ln in body]
    out += [indent + ln for ln in pending + after]
    return out


def parameter_kinds(params: list[str], kinds: list,
                    fn: ast.FunctionDef | None = None) -> dict[str, int | str]:
    """What fusion knows of a function's parameters from the kinds of the specialisation
    (`kinds`, those of the first parameters; a tangent `x_dot` has the kind of `x`). A
    symbolic size (a specialisation for every size) is given the name `fn` binds it to at
    its top (`n = x.shape[0]`), else `x.shape[0]` itself, so that a loop prints it."""
    env: dict[str, int | str] = {}
    by_symbol: dict[str, str] = {}  # size symbol -> the name the function binds it to
    bound = _size_names(fn) if fn is not None else {}
    for named in (True, False):  # (a name the function binds first, else `x.shape[0]`)
        for name, k in zip(params, kinds):
            for axis, d in enumerate(getattr(k, "shape", None) or ()):
                if not (isinstance(d, Dim) and d.is_symbol) or \
                        named and (name, axis) not in bound:
                    continue
                text = by_symbol.setdefault(d.expr[0][0][0], bound[name, axis] if named
                                            else f"{name}.shape[{axis}]")
                if named:
                    env.setdefault(SIZES, {})[text] = Dim(int(d), (((text,), 1),))
    for name, k in zip(params, kinds):
        if getattr(k, "family", "") or k.dtype not in ("f", "i"):
            continue
        if k.tag == "scalar":
            env[name] = SCALAR
        elif k.tag == "array" and k.dtype == "f" and k.shape is not None and \
                len(k.shape) == 1:
            d = k.shape[0]
            if isinstance(d, Dim):
                if not d.is_symbol:
                    continue
                text = by_symbol[d.expr[0][0][0]]
                d = Dim(int(d), (((text,), 1),))
            env[name] = d
    for name in params:
        if name.endswith("_dot") and name[:-4] in env and env[name[:-4]] != SCALAR:
            env[name] = env[name[:-4]]
    return env


def _size_names(fn: ast.FunctionDef) -> dict[tuple[str, int], str]:
    """{(parameter, axis): the name the top of `fn` binds its size to (`n = x.shape[0]`)}."""
    out: dict[tuple[str, int], str] = {}
    for stmt in fn.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], ast.Name)):
            break
        v = stmt.value
        if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Attribute) and \
                v.value.attr == "shape" and isinstance(v.value.value, ast.Name) and \
                isinstance(v.slice, ast.Constant) and type(v.slice.value) is int:
            out.setdefault((v.value.value.id, v.slice.value), stmt.targets[0].id)
        else:
            break
    return out
