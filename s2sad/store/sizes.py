"""Keys of specialisations for every size (issue 34): the pattern of an argument list's
array sizes (which are 0 or 1, which are equal), the symbolic kinds it is compiled for
(s2sad/ir/dims.py), and whether a call's sizes satisfy the guards it was compiled under."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from s2sad.transform import Compiled

_ndarray = np.ndarray


def size_pattern(primal: list[Any], params: tuple[str, ...] = (),
                 ints: bool = True) -> tuple[Any, ...] | None:
    """The sizes of the array arguments as a specialisation for every size sees them: each
    dimension 0 or 1 as itself (broadcasting tells them apart), any other as the name of
    its symbol, one per distinct size, so that equal sizes stay equal; an int argument of 2
    or more, which may set a size, ("int", its symbol); None for any other argument, and for
    the whole where nothing has a size of 2 or more (dims.py). A size first given by an int
    parameter is named after it (`n`), others `n`, `m`, `k`... where no parameter (of
    `params`, the positional ones) has that name. `ints` False: ints are not symbols (a
    recursive function's: its recursion calls it with n - 1, down to 0 or 1)."""
    classes: dict[int, str] = {}
    free = (s for s in _SYMBOLS + tuple(f"n{i}" for i in range(len(_SYMBOLS), 99))
            if s not in params)
    out: list[Any] = []
    for i, a in enumerate(primal):
        if ints and type(a) is int and a >= 2:  # (an int that may set a size: np.ones((n, 3)))
            c = classes.get(a)
            if c is None:
                c = classes[a] = params[i] if i < len(params) and params[i] not in \
                    classes.values() else next(free)
            out.append(("int", c))
            continue
        if type(a) is not _ndarray or a.dtype.kind not in "biufc":
            if holds_sizes(a):
                return None  # (sizes it keys as numbers might equal the arrays' sizes)
            out.append(None)
            continue
        dims: list[Any] = []
        for d in a.shape:
            if d < 2:
                dims.append(d)
            else:
                c = classes.get(d)
                if c is None:
                    c = classes[d] = next(free)
                dims.append(c)
        out.append(tuple(dims))
    return tuple(out) if classes else None


def holds_sizes(a: Any, depth: int = 0) -> bool:
    """Is `a` (not a NumPy array) an array of another library, or a container holding
    arrays?"""
    if isinstance(a, (tuple, list)):
        return depth < 4 and any(holds_sizes(v, depth + 1) or type(v) is _ndarray for v in a)
    if type(a) is dict:
        return depth < 4 and any(holds_sizes(v, depth + 1) or type(v) is _ndarray
                                 for v in a.values())
    shape = getattr(a, "shape", None)
    return isinstance(shape, tuple) and len(shape) > 0 and not isinstance(a, type)


# symbols' names, and two sets of stand-in sizes (an ahead-of-time module's compiles)
_SYMBOLS = ("n", "m", "k", "p", "q", "r", "s", "u", "v", "w")
_REPRESENTATIVES = ((7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47),
                    (17, 25, 29, 37, 41, 49, 61, 65, 77, 85, 89, 97))


def symbolic_kinds(primal: list[Any], pattern: tuple[Any, ...],
                   which: int | None, values: dict[str, int] | None = None) -> list[Any]:
    """The arguments' kinds with each size of the pattern its symbol, whose representative
    is the argument's own size (`which` None; or its value in `values`) or one of a set of
    stand-in sizes (0, 1)."""
    from s2sad.ir.dims import Dim
    from s2sad.ir.kinds import Kind, kind_of_value, scalar

    order: dict[str, int] = {}
    actual = (values or size_values(primal, pattern)) if which is None else {}

    def symbol(name: str) -> Dim:
        if which is None:  # (the call's own sizes: code right for them whatever escapes)
            return Dim.symbol(name, actual[name])
        i = order.setdefault(name, len(order))
        reps = _REPRESENTATIVES[which]
        return Dim.symbol(name, reps[i % len(reps)] + 100 * (i // len(reps)))

    out: list[Any] = []
    for a, dims in zip(primal, pattern):
        if dims is None:
            out.append(None)
        elif dims[:1] == ("int",):
            out.append(scalar("i", symbol(dims[1])))
        else:
            k = kind_of_value(a, facts=True)
            out.append(Kind("array", k.dtype,
                            tuple(symbol(d) if type(d) is str else d for d in dims),
                            precision=k.precision))
    return out


def size_values(primal: list[Any], pattern: tuple[Any, ...]) -> dict[str, int]:
    """{size symbol: its value in this call}."""
    values: dict[str, int] = {}
    for a, dims in zip(primal, pattern):
        if dims is not None and dims[:1] == ("int",):
            values.setdefault(dims[1], a)
        elif dims is not None:
            for d, size in zip(dims, a.shape):
                if type(d) is str:
                    values.setdefault(d, size)
    return values


def sizes_fit(hit: Any, primal: list[Any]) -> bool:
    """Do the sizes of this call satisfy the guards a specialisation for every size was
    compiled under (`n - 1 != 1`: see dims.Observer)?"""
    guards = getattr(hit, "size_guards", ())
    if not guards or getattr(hit, "pattern", None) is None:
        return True  # (no guard, or code for its call's sizes, which are its key)
    from s2sad.ir.dims import guards_hold

    return guards_hold(guards, size_values(primal, hit.pattern))


def every_size_kinds(args: list[Any], arg_kinds: list[Any],
                     pattern: tuple[Any, ...] | None = None) -> tuple[Any, Any] | None:
    """(kinds with the arrays' sizes as symbols, the same with other representatives) for
    these arguments (of kinds `arg_kinds`), or None where no array has a size to name."""
    pattern = pattern if pattern is not None else size_pattern(args)
    if pattern is None or not any(p is not None for p in pattern):
        return None
    a, b = (symbolic_kinds(args, pattern, which) for which in (0, 1))
    return ([s if s is not None else k for s, k in zip(a, arg_kinds)],
            [s if s is not None else k for s, k in zip(b, arg_kinds)])


def kinds_at(args: list[Any], arg_kinds: list[Any], pattern: tuple[Any, ...],
             values: dict[str, int] | None = None) -> list[Any]:
    """The arguments' kinds with their sizes as symbols, each standing for its own value
    (or, with `values`, for the value given there)."""
    here = symbolic_kinds(args, pattern, None, values)
    return [s if s is not None else k for s, k in zip(here, arg_kinds)]


def pinned(guards: tuple | None) -> set[str]:
    """The symbols a guard fixes to one value (`n == 8`, `n - 1 == 7`): code compiled under
    it is served at that value only, so it needs no proof for other values of them."""
    out = set()
    for left, op, right, answer in guards or ():
        if op == "eq" and answer is True and type(right) is int:
            terms = [m for m, _ in left if m]
            if len(terms) == 1 and len(terms[0]) == 1:
                out.add(terms[0][0])
    return out


def probe_values(now: dict[str, int], before: dict[str, int],
                 keep: set[str] = frozenset()) -> dict[str, int] | None:  # type: ignore[assignment]
    """Where a call's sizes (`now`) give some symbol the value it had in an earlier compile
    (`before`: a hidden layer's width, fixed while the batch grows), two compiles at these
    sizes would prove nothing of that symbol: the sizes to compile at instead, each symbol
    at its value now where that differs from before, else at a new one (distinct from every
    other, as the pattern's symbols are); None where every symbol's value differs already,
    or is one of `keep` (pinned by a guard)."""
    same = [s for s, v in now.items() if before.get(s) == v and s not in keep]
    if not same:
        return None
    used = set(now.values()) | set(before.values())
    out = dict(now)
    for s in same:
        v = now[s] + 1
        while v in used:
            v += 1
        out[s] = v
        used.add(v)
    return out


def generate_observed(func, mode: str, wrt: tuple, wrt_tuple: bool, kinds: list,
                      kw_kinds: dict) -> Compiled | None:
    """The derivative for kinds with symbolic sizes, with the guards it was compiled under
    (`size_guards`), or None where it cannot be compiled so."""
    from s2sad.ir.dims import Dim, Observer
    from s2sad.store import cache
    from s2sad.transform import generate, split_backend

    jit = cache.jit_dir() if split_backend(mode)[1] != "numpy" else None
    sizes = [d for k in kinds if k.tag in ("array", "scalar")
             for d in (k.shape or ()) + ((k.value,) if k.tag == "scalar" else ())
             if isinstance(d, Dim) and d.is_symbol]
    with Observer(sizes) as seen:
        try:
            done = generate(func, mode, wrt, wrt_tuple, kinds, kw_kinds, jit)
        except Exception as e:
            return _not_every_size(f"{type(e).__name__}: {e}")
    done.size_guards = seen.guards()
    done.escaped = seen.escaped
    done.size_values = {d.expr[0][0][0]: int(d) for d in sizes}
    return done


def same_code(first: Compiled, second: Compiled) -> bool:
    """Do two compiles of one pattern at two sets of sizes print one source under the same
    guards (so that no size escaped its symbol)?"""
    if first.size_guards is None:  # (read from the disk: its guards are not known)
        ok = not second.size_guards and first.source == second.source
    else:
        ok = first.size_guards == second.size_guards and first.source == second.source
    # a size that left its symbol for a number decides for that size only; and where a
    # symbol has one value in both compiles, the comparison proves nothing of it
    a, b = getattr(first, "size_values", None), getattr(second, "size_values", None)
    fixed = pinned(first.size_guards)
    if ok and (getattr(first, "escaped", False) or getattr(second, "escaped", False) or
               a is None or b is None or
               any(a.get(s) == v and s not in fixed for s, v in b.items())):
        ok = False
    if not ok:
        _not_every_size(f"sizes read: {first.size_guards} / {second.size_guards}; sources:\n"
                        f"{first.source}\n{second.source}")
    return ok


def generate_for_every_size(func, mode: str, wrt: tuple, wrt_tuple: bool, kinds_a: list,
                            kinds_b: list, kw_kinds: dict) -> Compiled | None:
    """Compile for both sets of stand-in sizes (an ahead-of-time module, which is built
    once for every size); the first's result, with the guards it was compiled under
    (`size_guards`), or None where the two differ."""
    results = []
    for kinds in (kinds_a, kinds_b):
        done = generate_observed(func, mode, wrt, wrt_tuple, kinds, kw_kinds)
        if done is None:
            return None
        results.append(done)
    return results[0] if same_code(*results) else None


def _not_every_size(why: str) -> None:
    if os.environ.get("S2SAD_DEBUG_SIZES"):
        print("[s2sad] no specialisation for every size:", why, file=sys.stderr)
    return None


def updated_arguments(func) -> tuple[tuple[int, Any], ...]:
    """(position, location) of each parameter of `func` that its own body updates in place
    (`x *= c`, `x[i] = v`) before any plain assignment rebinds it: NumPy updates the caller's
    array, which another argument may also be. The derivative computes on its own copy, so
    a call passing one array twice (`f(x, x)`) would differentiate something else than the
    function computes: `check_not_shared` refuses such a call."""
    import gast

    from s2sad.frontend.source import parse_function

    try:
        parsed = parse_function(func)
    except Exception:
        return ()
    node = parsed.node
    names = [a.id for a in node.args.posonlyargs + node.args.args]
    rebound: dict[str, int] = {}
    first_update: dict[str, Any] = {}
    for n in gast.walk(node):
        if isinstance(n, (gast.Assign, gast.AnnAssign)):
            targets = n.targets if isinstance(n, gast.Assign) else [n.target]
            for t in targets:
                for name in gast.walk(t):
                    if isinstance(name, gast.Name) and isinstance(name.ctx, gast.Store):
                        rebound[name.id] = min(rebound.get(name.id, n.lineno), n.lineno)
                if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                    first_update.setdefault(t.value.id, n)
        elif isinstance(n, gast.AugAssign):
            t = n.target.value if isinstance(n.target, gast.Subscript) else n.target
            if isinstance(t, gast.Name):
                first_update.setdefault(t.id, n)
    out = []
    for name, n in first_update.items():
        if name in names and not (name in rebound and rebound[name] < n.lineno):
            out.append((names.index(name), parsed.loc(n)))
    return tuple(sorted(out, key=lambda t: t[0]))


def check_not_shared(func_name: str, params: list[str], updated, args) -> None:
    """Refuse a call where an argument `func` updates in place is, or shares memory with,
    another array argument (see updated_arguments)."""
    from s2sad.errors import AliasedArgumentsError

    for i, loc in updated:
        a = args[i] if i < len(args) else None
        if type(a) is not _ndarray:
            continue
        for j, b in enumerate(args):
            if j != i and isinstance(b, _ndarray) and np.may_share_memory(a, b):
                raise AliasedArgumentsError(
                    f"{func_name}() updates its argument `{params[i]}` in place, and "
                    f"`{params[j]}` is the same array (or shares memory with it): Python's "
                    f"`{params[j]}` sees the update, the derivative's would not", loc,
                    f"pass a copy (`{params[j]}.copy()`), or write `{params[i]} = "
                    f"{params[i]}.copy()` before updating it")
