"""The compile driver: function + mode + argument kinds -> generated source and callable.

lower (cached per function) -> specialise on argument kinds -> forward/reverse
pass -> simplify -> emit -> compile (cached in memory per specialisation).
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import keyword
import math
import operator
import os
import sys
import types
from dataclasses import dataclass

import numpy as np

from s2sad.codegen.compile import compile_source
from s2sad.codegen.emit import emit_function
from s2sad.codegen.names import Namespace
from s2sad.errors import (
    ArgumentTypeError,
    NonDifferentiableError,
    UnknownShapeError,
    WrtError,
)
from s2sad.frontend.aliasing import refuse_shared_inplace_updates
from s2sad.frontend.guards import collect
from s2sad.frontend.lower import derivative_hook, lower
from s2sad.frontend.source import parse_function
from s2sad.ir import prims
from s2sad.ir import kinds as kinds_mod
from s2sad.ir.kinds import (
    PENDING,
    UNKNOWN,
    Kind,
    array_of_rank,
    atom_kind,
    float_kind,
    infer_kinds,
    join,
    kind_of_value,
    scalar,
    structure_view,
)
from s2sad.ir.dims import Dim, mark, replay, since
from s2sad.ir.kind_values import is_fact
from s2sad.ir.nodes import Call, Const, If, Var, blocks_of
from s2sad.ir.per_function import FunctionKeyed
from s2sad.ir.verify import verify
from s2sad.passes.decided import take_decided_branches
from s2sad.passes.tries import choose_try_paths
from s2sad.passes.explain import explain_simplify, label_steps
from s2sad.passes.forward import forward_pass
from s2sad.passes.fresh_results import fresh_results
from s2sad.passes.functional import functional_scatters
from s2sad.passes.hoist import hoist_views, matrix_transposes
from s2sad.passes.inplace import accumulate_in_place
from s2sad.passes.lazy import refuse_value_reads
from s2sad.passes.loops import iterate_tapes, rewrite_loop_accumulators
from s2sad.passes.reverse import reverse_pass
from s2sad.passes.sequences import expand_sequence_arithmetic
from s2sad.passes.simplify import simplify
from s2sad.passes.unroll import unroll_tuple_loops
from s2sad_rules import TABLE
from s2sad_rules.kind_tests import undecided_complex

VERSION = "0.1.0"
# The IR is verified after lowering and before code generation; with S2SAD_VERIFY=1 (the
# test suite sets it) also between the passes, to point at the pass that broke it.
VERIFY_EACH_PASS = os.environ.get("S2SAD_VERIFY") == "1"
_LOWERED = FunctionKeyed()  # func -> (code, rule table version, guards, IR)


def lowered(func, views: tuple = ()):
    """The IR of `func`, cached per function object while its guards hold (the globals,
    closure values and helpers lowering reads: see frontend/guards.py). `views`: the
    structure of dict and namedtuple arguments (kinds.structure_view), one per parameter."""
    if not any(v is not None for v in views):
        views = ()
    code = getattr(func, "__code__", None)
    per_views = _LOWERED.get(func) or {}
    hit = per_views.get(views)
    if hit is not None and hit[0] is code and hit[1] == TABLE.version and hit[2].holds():
        return hit[3]
    guards = collect(func)
    ir = lower(func, TABLE, views)
    verify(ir)
    if not per_views or next(iter(per_views.values()))[0] is not code:
        per_views = {}
    per_views[views] = (code, TABLE.version, guards, ir)
    _LOWERED[func] = per_views
    return ir


def argument_views(func, arg_kinds) -> tuple:
    """What lowering may know of each argument (kinds.structure_view); for the tuple of a
    function's `*args`, ("varargs", their number)."""
    views = [structure_view(k) for k in arg_kinds]
    code = getattr(getattr(func, "__func__", func), "__code__", None)
    if code is not None and code.co_flags & inspect.CO_VARARGS:
        i = code.co_argcount - (1 if hasattr(func, "__self__") else 0)
        if i < len(views) and arg_kinds[i].tag in ("tuple", "list"):
            views[i] = ("varargs", len(arg_kinds[i].items))
    return tuple(views)


def resolve_wrt(func, wrt, sig=None) -> tuple:
    """`wrt` (index, name, tuple of them, or None) -> (indices, given_as_tuple)."""
    try:
        sig = sig if sig is not None else inspect.signature(func)
    except (TypeError, ValueError):
        raise WrtError(f"cannot read the signature of {func!r}") from None
    positional = [n for n, p in sig.parameters.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if wrt is None:
        return tuple(range(len(positional))), len(positional) != 1
    as_tuple = isinstance(wrt, (tuple, list))
    items = list(wrt) if as_tuple else [wrt]
    out = []
    for w in items:
        if isinstance(w, bool) or not isinstance(w, (int, str)):
            raise WrtError(f"wrt must be a parameter index or name, not {w!r}")
        if isinstance(w, int):
            if not -len(positional) <= w < len(positional):
                raise WrtError(f"wrt={w} is out of range: {func.__name__} has "
                               f"{len(positional)} positional parameters {positional}")
            out.append(w % len(positional))
        else:
            if w not in positional:
                kwonly = [n for n, p in sig.parameters.items() if p.kind == p.KEYWORD_ONLY]
                hint = (" (keyword-only parameters pass through undifferentiated)"
                        if w in kwonly else "")
                raise WrtError(f"wrt names {w!r}, which is not a positional parameter of "
                               f"{func.__name__}{hint}; positional parameters: {positional}")
            out.append(positional.index(w))
    if len(set(out)) != len(out):
        raise WrtError(f"wrt lists a parameter twice: {wrt!r}")
    return tuple(out), as_tuple


@dataclass
class Compiled:
    source: str
    function: object
    ir: object
    guards: object = None  # what it was compiled from (set by the caller that compiled it)
    table_version: int = -1  # the rule table's generation it was compiled with
    namespace: object = None  # the generated module's globals (for the disk cache)
    name: str = ""  # the generated function's name
    # the list, namedtuple or dict structure of the function's output, which the generated
    # code returns as tuples (frontend.lower.output_structure); None for any other output
    out_structure: object = None
    # a specialisation for every size (ir/dims.py): the pattern of its key's sizes, and the
    # comparisons of sizes it was compiled under, which a call's sizes must satisfy
    pattern: object = None
    size_guards: tuple | None = ()  # (None: read from the disk, not known)
    every_size_kinds: object = None  # (the symbolic kinds it was compiled for)
    sizes: object = None  # the key of the sizes a first compile of a pattern serves
    # (position, location) of each argument the function updates in place: a call passing
    # it twice is refused (store.sizes.check_not_shared); None until read
    updated: object = None
    escaped: bool = False  # (a size left its symbol for a number while compiling)
    size_values: dict | None = None  # (the value each size symbol stood for)


MODES = ("jvp", "vjp", "grad", "value_and_grad")
_CHECKPOINTS = "+checkpoints="


def with_checkpoints(mode: str, checkpoints: int | None) -> str:
    """The mode compiled for a derivative with `checkpoints=K` (vjp, grad, value_and_grad):
    a mode of its own (`"grad+checkpoints=32"`), so every cache keys it apart."""
    return mode if checkpoints is None else f"{mode}{_CHECKPOINTS}{checkpoints}"


_EXPLAIN = "+explain"


def with_explain(mode: str, explain: bool) -> str:
    """The mode compiled for a derivative with `explain=True` (the step-by-step form): a
    mode of its own (`"grad+explain"`), so every cache keys it apart."""
    return f"{mode}{_EXPLAIN}" if explain else mode


def is_explained(mode: str) -> bool:
    return mode.endswith(_EXPLAIN)


_BACKEND = "+backend="
BACKENDS = ("numpy", "numba")


def with_backend(mode: str, backend: str) -> str:
    """The mode compiled for a derivative run by `backend` (issue 19): NumPy's is the mode
    itself; another's is a mode of its own (`"grad+backend=numba"`), keyed apart."""
    return mode if backend == "numpy" else f"{mode}{_BACKEND}{backend}"


def split_backend(mode: str) -> tuple:
    """`"grad+backend=numba"` -> ("grad", "numba"); a mode without one -> (mode, "numpy")."""
    base, sep, backend = mode.partition(_BACKEND)
    return (base, backend) if sep else (mode, "numpy")


def split_mode(mode: str) -> tuple:
    """`"grad+checkpoints=32"` -> ("grad", 32); a plain mode -> (mode, None) (and
    `+explain` dropped: see is_explained)."""
    mode = mode.removesuffix(_EXPLAIN)
    base, sep, k = mode.partition(_CHECKPOINTS)
    return (base, int(k)) if sep else (mode, None)


def base_ir(func, arg_kinds: list, kw_kinds: dict):
    """The IR of what is being differentiated.

    For a plain function, its lowered IR. For a Derivative (a transformation applied to a
    transformation: jvp(grad(f)), grad(grad(f)), ...), the inner derivative's own IR, as a
    function returning what the inner derivative returns: the compiler composes on the IR.
    """
    if not prims.is_derivative(func):
        views = argument_views(func, arg_kinds)
        kw_facts = tuple((n, k.value) for n, k in sorted(kw_kinds.items()) if is_fact(k))
        if kw_facts:  # keyword-only flags and int options at their defaults
            views += (("kw", kw_facts),)
        return lowered(func, views)
    inner_wrt = func._resolve()
    n = func._n_params
    inner = derivative_ir(func.func, func.mode, inner_wrt, list(arg_kinds[:n]), kw_kinds,
                          in_place=False, wrt_tuple=func._wrt_tuple)
    primal = as_primal(inner, func)
    if func.mode == "grad":
        # a gradient has its arguments' shapes, also where the kinds lose them (a value
        # merged by an `if` with a branch that does not compute it): jacobian_ir reads them
        primal.meta["result_kinds"] = tuple(float_kind(arg_kinds[i]) for i in inner_wrt)
    return primal


def recursive_result_kind(call, arg_kinds: list, kwarg_kinds: list) -> Kind:
    """The kind of what a recursive call (prims.RecursiveCall) returns, found from the
    function's body without running it: the least kind R such that the body returns R when
    every recursive call in it returns R, for the arguments' kinds without the values of
    numbers (a recursion changes them). From R = nothing (PENDING), each round takes the
    body's result with the calls returning the R of the round before. A call with other
    kinds (another shape, say) than the one being found, keywords, or a body that cannot be
    lowered for such arguments give UNKNOWN (a call decided at run time, as before)."""
    func = call.func
    if kwarg_kinds or not isinstance(func, types.FunctionType):
        return UNKNOWN
    abstract = tuple(_without_values(k) for k in arg_kinds)
    key = (func, abstract)
    if key in _FINDING:
        return _FINDING[key]  # the assumption of this round
    if any(f is func for f, _ in _FINDING):
        return UNKNOWN  # called with other kinds (a shape, a dtype): not followed
    done = call.__dict__.setdefault("result_kinds", {})
    guards = call.__dict__.setdefault("result_guards", {})  # (sizes read: ir/dims.py)
    if abstract in done:
        replay(guards.get(abstract))
        return done[abstract]
    at = mark()
    _FINDING[key] = PENDING
    kinds_mod.PENDING_DEPTH[0] += 1
    result = UNKNOWN
    try:
        ir = specialised_ir(func, list(abstract), {})
        if len(ir.params) == len(abstract) and not ir.kwonly:
            for _ in range(4):
                kinds = infer_kinds(ir, dict(zip(ir.params, abstract)))
                found = [_without_values(atom_kind(r, kinds)) for r in ir.body.results]
                got = Kind("tuple", items=tuple(found)) if ir.returns_tuple else found[0]
                assumed = _FINDING[key]
                new = join(assumed, got)
                if new == assumed:
                    result = assumed
                    break
                _FINDING[key] = new
    except Exception:  # (what cannot be lowered or inferred so: as before, decided at run time)
        result = UNKNOWN
    finally:
        del _FINDING[key]
        kinds_mod.PENDING_DEPTH[0] -= 1
    if result == PENDING:  # (no round returns: every path recurses)
        result = UNKNOWN
    if not _FINDING:  # (found under no other assumption: it holds for good)
        done[abstract] = result
        guards[abstract] = since(at)
    return result


_FINDING: dict = {}  # (function, argument kinds) -> the result kind assumed this round


def _without_values(k: Kind) -> Kind:
    """`k` with the values of numbers forgotten (a recursion changes them: `n - 1`); arrays
    keep their shapes (a call on another shape is not followed), tuples and lists their
    items so, other kinds (objects, functions) are as they are."""
    if k.family:
        return UNKNOWN
    if k.tag == "scalar":
        # (a size symbol stays: a call with n - 1 is another call, decided at run time,
        # where the code for n >= 2 would not see n reach 0)
        return k if type(k.value) is Dim else scalar(k.dtype)
    if k.tag == "array":
        return Kind("array", k.dtype, k.shape, rank=k.rank) if k.known else k
    if k.tag in ("tuple", "list"):
        return Kind(k.tag, items=tuple(_without_values(i) for i in k.items), view=k.view)
    return k


prims.RecursiveCall.result_kind = staticmethod(recursive_result_kind)


def _derivative_as_function(d, views: tuple = ()):
    """The generic IR of the derivative object `d`, as a function of its call arguments
    (installed as lowering's hook for derivatives called inside a function); `views`: the
    structure of the dicts and namedtuples passed to it (kinds.structure_view)."""
    wrt = d._resolve()
    kinds = [_structure_kind(views[i]) if i < len(views) else UNKNOWN
             for i in range(d._n_params)]
    with undecided_complex(), _self_recursion(None):  # (arguments may be complex)
        ir = derivative_ir(d.func, d.mode, wrt, kinds, {}, in_place=False,
                           wrt_tuple=d._wrt_tuple)
    return as_primal(ir, d)


def _structure_kind(view) -> Kind:
    """A kind with only the structure `view` (kinds.structure_view) known."""
    if view is None:
        return UNKNOWN
    if view[0] == "fact":
        return kind_of_value(view[1])
    if view[0] == "rank":
        return array_of_rank(view[2], view[1])
    if view[0] == "varargs":
        return UNKNOWN
    (what, detail), items = view
    inner = tuple(_structure_kind(v) for v in items)
    if what == "seq":
        return Kind("list" if detail else "tuple", items=inner)
    return Kind("tuple", items=inner, view=(what, detail))


derivative_hook.as_function = staticmethod(_derivative_as_function)


def as_primal(ir, d):
    """A derivative's IR as an ordinary function of its call arguments (see base_ir)."""
    from s2sad.ir.nodes import Block, Call, Function
    from s2sad.ir.prims import sweep_boundary

    meta = ir.meta
    inner_tuple = ir.returns_tuple
    n = meta["n_primal"]
    results = ir.body.results
    if d.mode == "vjp":
        raise NonDifferentiableError(
            f"cannot differentiate the VJP of {d.func.__name__}: it returns a pullback closure",
            ir.loc, "differentiate s2sad.grad(f) or s2sad.jvp(f) instead")
    if d.mode == "grad":
        returns_tuple = d._wrt_tuple
    else:  # jvp, value_and_grad: (primal, derivative)
        nested = inner_tuple if d.mode == "jvp" else (inner_tuple or d._wrt_tuple)
        if nested or (d.mode == "jvp" and len(results) != 2 * n) or n != 1:
            raise NonDifferentiableError(
                f"cannot differentiate {d.mode} of {d.func.__name__}: its result is a nested "
                "tuple", ir.loc, "differentiate a function with one output")
        returns_tuple = True
    stmts = tuple(st for st in ir.body.stmts
                  if not (isinstance(st, Call) and st.fn is sweep_boundary))
    return Function(f"{ir.name}_{d.mode}", ir.params, Block(stmts, results), returns_tuple,
                    ir.kwonly, (), ir.loc, ir.source_lines, ir.first_line, {})


def _sizes(ir, wrt, kinds, what):
    """The shape of each `wrt` argument; for a tuple or list of arrays and floats,
    (its tag, the items' shapes): its Jacobian is a tuple or list of blocks, one per item."""
    shapes = []
    for i in wrt:
        k = kinds.get(ir.params[i])
        shape = k.static_shape if k else None
        if k is not None and k.tag in ("tuple", "list"):
            if k.items and all(it.tag in ("scalar", "array") and it.dtype in ("f", "c") and
                               it.static_shape is not None for it in k.items):
                shapes.append(_Items(k.tag, tuple(tuple(it.static_shape) for it in k.items)))
                continue
            raise WrtError(f"{what} with respect to the {k.tag} argument `{ir.params[i].name}` "
                           "is supported for a tuple or list of float arrays and floats only",
                           ir.loc, "pass its arrays as separate arguments, or use "
                           "s2sad.jvp/vjp/grad, which take any tuple or list")
        if shape is None:
            raise WrtError(f"{what} needs the shape of `{ir.params[i].name}`", ir.loc,
                           "call it with NumPy arrays or floats first, or use "
                           ".source_for(*args) to see the code for given arguments")
        shapes.append(tuple(shape))
    return shapes


@dataclass(frozen=True)
class _Items:
    """A tuple or list argument of a Jacobian: its tag and its items' shapes."""

    tag: str
    shapes: tuple


def _leaves(shapes) -> list:
    """The shapes of `shapes` with each tuple or list argument's items in its place."""
    out = []
    for s in shapes:
        out.extend(s.shapes if isinstance(s, _Items) else [s])
    return out


def _grouped(em, shapes, atoms) -> list:
    """`atoms` (one per leaf of `shapes`) with each tuple or list argument's made one
    tuple or list again."""
    out, k = [], 0
    for s in shapes:
        if isinstance(s, _Items):
            make = prims.make_tuple if s.tag == "tuple" else prims.make_list
            out.append(em.call(make, atoms[k:k + len(s.shapes)], hint="jac"))
            k += len(s.shapes)
        else:
            out.append(atoms[k])
            k += 1
    return out


def _basis(em, shapes, n, hint):
    """One block of the identity per shape: shape + (n,) each (the batch axis last)."""
    eye = em.call(np.eye, (Const(n),), hint="eye")
    out, offset = [], 0
    for shape in shapes:
        size = math.prod(shape) if shape else 1
        if shape:
            rows = em.call(operator.getitem, (eye, Const(slice(offset, offset + size))),
                           hint="_rows")
            out.append(em.call(np.reshape, (rows, Const(shape + (n,))), hint=hint))
        else:
            out.append(em.call(operator.getitem, (eye, Const(offset)), hint=hint))
        offset += size
    return out


# reductions of every entry: a number whatever their operand (a list built in a loop,
# whose kind, of a length known at run time, gives no shape)
_FULL_REDUCTIONS = (np.sum, np.mean, np.prod, np.max, np.min)


def _reduced_to_a_number(ir, r) -> bool:
    """Is the result `r` of `ir` a full reduction (`np.sum(a)`, no axis, no keepdims), or
    an `if`'s merge of such reductions?"""
    return _a_full_reduction(ir.body, r, 0)


def _a_full_reduction(b, r, depth: int) -> bool:
    for st in b.stmts:
        if isinstance(st, Call) and st.target == r:
            if st.fn not in _FULL_REDUCTIONS or len(st.args) != 1:
                return False
            kw = dict(st.kwargs)
            return all(isinstance(kw.get(n), Const) and kw[n].value in (None, False)
                       for n in ("axis", "keepdims") if n in kw) and \
                set(kw) <= {"axis", "keepdims"}
        if isinstance(st, If) and r in st.outputs and depth < 8:
            i = st.outputs.index(r)
            return all(_a_full_reduction(blk, blk.results[i], depth + 1) or
                       _a_full_reduction(b, blk.results[i], depth + 1)
                       for blk in (st.then, st.orelse))
    return False


def _sequence_output_items(ir, kinds):
    """`ir` returning the items of its one output where that is a list or tuple computed
    when the code runs (np.split's parts, of shapes the kinds know): one Jacobian per item,
    given back in a list or tuple by the output structure recorded in the meta (see
    `generate`); `ir` itself for any other output."""
    from s2sad.ir.builder import Namer
    from s2sad.ir.nodes import Block, Function

    results = ir.body.results
    if ir.returns_tuple or len(results) != 1 or not isinstance(results[0], Var):
        return ir
    k = kinds.get(results[0], UNKNOWN)
    if k.tag not in ("tuple", "list") or not k.items or \
            any(i.tag not in ("scalar", "array") or i.static_shape is None for i in k.items):
        return ir
    namer = Namer.for_function(ir)
    stmts, items = list(ir.body.stmts), []
    for i in range(len(k.items)):
        item = namer.fresh(f"{results[0].name}_{i}")
        stmts.append(Call(item, operator.getitem, (results[0], Const(i)), (), ir.loc))
        items.append(item)
    meta = dict(ir.meta)
    meta["out_structure"] = (k.tag, None, (None,) * len(items))  # (what the items were)
    return Function(ir.name, ir.params, Block(tuple(stmts), tuple(items)), True, ir.kwonly,
                    ir.defaults, ir.loc, ir.source_lines, ir.first_line, meta)


def jacobian_ir(ir, mode, wrt, kinds, kinds_in, wrt_tuple):
    """jacfwd: a JVP whose tangents carry one direction per input entry (vector mode).
    jacrev: a VJP whose seeds carry one cotangent per output entry. Both read the Jacobian
    blocks out of the batched results: shape out.shape + arg.shape each.
    """
    from s2sad.ir.builder import Emitter, Namer
    from s2sad.passes.batch import BatchPass

    wrt_shapes = _sizes(ir, wrt, kinds, mode)
    in_shapes = _leaves(wrt_shapes)
    results = list(ir.body.results)
    out_shapes = []
    known_results = ir.meta.get("result_kinds", ())  # (see base_ir)
    for j, r in enumerate(results):
        k = kinds.get(r) if not hasattr(r, "value") else kind_of_value(r.value)
        if (k is None or k.static_shape is None) and len(known_results) == len(results):
            k = known_results[j]
        if (k is None or k.static_shape is None) and _reduced_to_a_number(ir, r):
            out_shapes.append(())
            continue
        if k is not None and k.tag in ("tuple", "list"):
            raise UnknownShapeError(
                f"{mode} of {ir.name}, whose output holds a {k.tag} computed when the code "
                "runs, beside other outputs or inside a container, is not supported", ir.loc,
                "return its items, written out (`a, b = np.split(x, [1])`, then "
                "`return [a, b], y`), or use s2sad.jvp/vjp")
        if k is None or k.static_shape is None:
            # (not about `wrt`: the output's shape is known only at run time)
            raise UnknownShapeError(
                f"{mode} needs the shape of the output of {ir.name}, which its arguments' "
                "kinds do not give (a value built in a loop, or of a size that depends on "
                "the data)", ir.loc,
                "compute the output with array operations (x * x rather than "
                "np.array([v * v for v in x])), or use s2sad.jvp/vjp")
        out_shapes.append(tuple(k.static_shape))
    if mode == "jacfwd":
        d = forward_pass(ir, kinds, wrt, TABLE)
        seeds = d.meta["tangent_params"]
        n = sum(math.prod(s) if s else 1 for s in in_shapes)
        seed_shapes = in_shapes
    else:
        d = reverse_pass(ir, kinds, wrt, TABLE)
        seeds = list(d.meta["seed_params"])
        n = sum(math.prod(s) if s else 1 for s in out_shapes)
        seed_shapes = out_shapes
    namer = Namer.for_function(d)
    em = Emitter(namer)
    leaf_basis = basis = _basis(em, seed_shapes, n, "basis")
    if mode == "jacfwd" and len(in_shapes) != len(wrt_shapes):
        basis = _grouped(em, wrt_shapes, basis)  # a tuple argument's tangent: a tuple
    from s2sad.ir.builder import replace_atoms
    from s2sad.ir.nodes import Block, Function
    from s2sad.ir.prims import sweep_boundary

    body = replace_atoms(d.body, dict(zip(seeds, basis)))
    stmts = tuple(em.stmts) + tuple(st for st in body.stmts
                                    if getattr(st, "fn", None) is not sweep_boundary)
    params = tuple(p for p in d.params if p not in seeds)
    flat = Function(d.name, params, Block(stmts, body.results), d.returns_tuple, d.kwonly,
                    (), d.loc, d.source_lines, d.first_line, dict(d.meta))
    param_kinds = dict(kinds_in)
    # kinds of the unbatched derivative: a seed has its primal's kind
    seed_kinds = dict(kinds_in)
    leaf_kinds = {b: Kind("array", "f", shape) if shape else Kind("scalar", "f", ())
                  for b, shape in zip(leaf_basis, seed_shapes)}
    for j, (p, b) in enumerate(zip(seeds, basis)):
        # (a tuple argument's tangent, of jacfwd: the tuple of its items' bases)
        seed_kinds[p] = leaf_kinds[b] if b in leaf_kinds else \
            float_kind(kinds_in[ir.params[wrt[j]]])
    unbatched = infer_kinds(d, seed_kinds)
    for p, b in zip(seeds, basis):
        unbatched[b] = seed_kinds[p]
    unbatched.update(leaf_kinds)
    batching = BatchPass(flat, set(leaf_basis) | set(basis), n, unbatched)
    batched = batching.run()
    # read the blocks out of the batched results
    em = Emitter(namer)
    nres = len(results)
    derivs = batched.body.results[nres:]
    blocks = {}
    if mode == "jacrev" and len(in_shapes) != len(wrt_shapes):
        # a tuple argument's cotangent is a tuple (reverse.py): its items, one row each
        items = []
        for t, shape in zip(derivs, wrt_shapes):
            if not isinstance(shape, _Items):
                items.append(t)
                continue
            for j in range(len(shape.shapes)):
                if isinstance(t, Var) and t in batching.batched:
                    item = em.call(operator.getitem, (t, Const(j)), hint="_j")
                    batching.batched.add(item)
                    items.append(item)
                else:
                    items.append(None)
        derivs = items
    rows = out_shapes if mode == "jacfwd" else in_shapes
    cols = in_shapes if mode == "jacfwd" else out_shapes
    for a, t in enumerate(derivs):
        offset = 0
        for b, shape in enumerate(cols):
            size = math.prod(shape) if shape else 1
            i, j = (a, b) if mode == "jacfwd" else (b, a)
            # a derivative computed without the seeds is their linear map at zero: zeros
            # (e.g. the gradient of a linear function, as the tangent of a Hessian)
            seeded = isinstance(t, Var) and t in batching.batched
            blocks[(i, j)] = _block(em, t if seeded else None, offset, size, rows[a], shape,
                                    mode, n)
            offset += size
    atoms = []
    for i in range(nres):
        atoms.extend(_grouped(em, wrt_shapes, [blocks[(i, j)] for j in range(len(in_shapes))]))
    final = list(em.stmts)
    per_out = [tuple(i * len(wrt) + j for j in range(len(wrt))) if wrt_tuple
               else i * len(wrt) for i in range(nres)]
    tree = tuple(per_out) if ir.returns_tuple else per_out[0]
    meta = dict(d.meta)
    meta.update(result_tree=tree, n_primal=0, mode=mode, seed_params=())
    out = Function(d.name, params, Block(batched.body.stmts + tuple(final), tuple(atoms)),
                   False, d.kwonly, (), d.loc, d.source_lines, d.first_line, meta)
    return out, param_kinds


def _block(em, t, offset, size, row_shape, col_shape, mode, n):
    """One Jacobian block out of a batched derivative `t` (shape row_shape + (n,)); zeros
    where `t` is None or a constant (a symbolic zero), of the block's shape: out.shape +
    arg.shape, which is rows + cols for jacfwd and cols + rows for jacrev."""
    if not isinstance(t, Var):
        shape = tuple(row_shape) + tuple(col_shape) if mode == "jacfwd" else \
            tuple(col_shape) + tuple(row_shape)
        return em.call(np.zeros, (Const(shape),), hint="zeros") if shape else Const(0.0)
    if not col_shape:
        part = em.call(operator.getitem, (t, Const((Ellipsis, offset))), hint="_j")
    elif offset == 0 and size == n:  # (the whole batch axis: one block)
        part = t
    else:
        part = em.call(operator.getitem, (t, Const((Ellipsis, slice(offset, offset + size)))),
                       hint="_j")
    if mode == "jacfwd":
        if not col_shape:
            return part
        return em.call(np.reshape, (part, Const(tuple(row_shape) + tuple(col_shape))),
                       hint="jac")
    # jacrev: t is indexed by the input (rows), the batch axis by the output (cols)
    if not col_shape:
        return part
    moved = em.call(np.moveaxis, (part, Const(-1), Const(0)), hint="_j") if row_shape else part
    return em.call(np.reshape, (moved, Const(tuple(col_shape) + tuple(row_shape))), hint="jac")


def _refuse_complex_jacobian(ir, mode, wrt, kinds, kinds_in):
    """As JAX (without holomorphic=True): jacfwd needs real inputs, jacrev real outputs (the
    derivative of a function of complex numbers is a real-linear map, not a complex matrix,
    unless the function is holomorphic)."""
    if mode == "jacfwd":
        names = [ir.params[i].name for i in wrt if kinds_in[ir.params[i]].dtype == "c"]
        what, hint = f"complex input `{names[0]}`" if names else "", (
            "use s2sad.jvp with complex tangents (the directions 1 and 1j of each entry), or "
            "pass the real and imaginary parts as two float arrays")
    else:
        names = [r for r in ir.body.results
                 if (kinds.get(r, UNKNOWN) if not hasattr(r, "value") else
                     kind_of_value(r.value)).dtype == "c"]
        what, hint = "complex output" if names else "", (
            "use s2sad.vjp with complex cotangents (1 and 1j for each entry), or return "
            "np.real(...) and np.imag(...) of it")
    if names:
        raise NonDifferentiableError(
            f"{mode} needs real {'inputs' if mode == 'jacfwd' else 'outputs'}, but {ir.name} "
            f"has a {what} (JAX's convention: the derivative of a non-holomorphic function "
            f"is not one complex matrix)", ir.loc, hint)


def _grows_lists_of_unknown_length(block, kinds: dict) -> bool:
    """Does a loop of `block` append to a list whose length after it the kinds do not
    tell (see kinds._exact_loop_outputs for those they do)?"""
    for s in block.stmts:
        if type(s) is Call:
            continue
        if hasattr(s, "outputs") and any(kinds.get(o, UNKNOWN).tag == "unknown"
                                         for o in s.outputs) and _appends(s):
            return True
        if any(_grows_lists_of_unknown_length(b, kinds) for b in blocks_of(s)):
            return True
    return False


def _appends(s) -> bool:
    for b in blocks_of(s):
        for st in b.stmts:
            if (type(st) is Call and st.fn is prims.list_append) or \
                    (type(st) is not Call and _appends(st)):
                return True
    return False


def specialised_ir(func, arg_kinds: list, kw_kinds: dict):
    """base_ir, with each loop over a tuple or list argument unrolled now that its length
    is known (passes/unroll.py)."""
    ir = base_ir(func, arg_kinds, kw_kinds)
    if ir.meta.get("inplace_updates") or ir.meta.get("aug_assignments") or \
            ir.meta.get("written_arguments"):
        kinds_in = {p: k for p, k in zip(ir.params, arg_kinds)}
        for v, _ in ir.kwonly:
            kinds_in[v] = kw_kinds.get(v.name, UNKNOWN)
        refuse_shared_inplace_updates(ir, kinds_in)
    if any(k.tag in ("tuple", "list") for k in arg_kinds):
        kinds_in = {p: k for p, k in zip(ir.params, arg_kinds)}
        ir = unroll_tuple_loops(ir, infer_kinds(ir, kinds_in))
    return ir


def functional(arg_kinds, kw_kinds: dict | None = None) -> bool:
    """Is code for arguments of these kinds functional (no in-place writes, no `out=`)?
    It is for arrays of another library than NumPy (Dask, CuPy: `Kind.family`)."""
    kinds = list(arg_kinds) + list((kw_kinds or {}).values())
    return any(k.family or (k.tag in ("tuple", "list") and functional(k.items)) for k in kinds)


def derivative_ir(func, mode: str, wrt: tuple, arg_kinds: list, kw_kinds: dict,
                  in_place: bool = True, wrt_tuple: bool = False):
    if all(k.tag == "unknown" for k in arg_kinds) or undecided_complex.depth:
        return _derivative_ir(func, mode, wrt, arg_kinds, kw_kinds, in_place, wrt_tuple)
    # specialised code: a value whose dtype is still unknown comes from a call decided at
    # run time (a recursive call, a derivative, an opaque function) and may be complex. The
    # rules' `is_complex` of it is left to run time, not taken as real (which lost the
    # conjugate of a complex cotangent and passed complex cotangents to real outputs'
    # pullbacks); the generic code (no kinds known) keeps taking such values as real
    with undecided_complex():
        return _derivative_ir(func, mode, wrt, arg_kinds, kw_kinds, in_place, wrt_tuple)


def _derivative_ir(func, mode: str, wrt: tuple, arg_kinds: list, kw_kinds: dict,
                   in_place: bool = True, wrt_tuple: bool = False):
    full_mode = mode
    explain = is_explained(mode)
    mode, checkpoints = split_mode(mode)
    # arrays of another library (Dask) get functional code: nothing is updated in place
    is_functional = functional(arg_kinds, kw_kinds)
    in_place_updates = in_place and not is_functional
    ir = specialised_ir(func, arg_kinds, kw_kinds)
    if explain:
        ir = label_steps(ir)
    kinds_in = {p: k for p, k in zip(ir.params, arg_kinds)}
    for v, _ in ir.kwonly:
        kinds_in[v] = kw_kinds.get(v.name, UNKNOWN)
    _check_wrt(ir, wrt, kinds_in)
    kinds = infer_kinds(ir, kinds_in)
    chosen = choose_try_paths(ir, kinds, wrt, TABLE)  # (a library's try: passes/tries.py)
    if chosen is not ir:
        ir = chosen
    decided = take_decided_branches(ir, kinds)  # (x.ndim == 1 of a computed array)
    if decided is not ir:
        ir, kinds = decided, infer_kinds(decided, kinds_in)
    if not undecided_complex.depth and any(k.tag != "unknown" for k in arg_kinds) and \
            _grows_lists_of_unknown_length(ir.body, kinds):
        # code for given arguments, where a list grows to a length known only at run time
        # (appended to in a `while` loop, or a long one): what is computed from it has no
        # dtype its kind tells, and its rules choose their complex or real branch when the
        # code runs, not taking it for real (|fft(list)| took abs's real rule: a wrong
        # derivative). Code for arguments of any kind (`.source` before a call) takes it real
        with undecided_complex():
            return derivative_ir(func, full_mode, wrt, arg_kinds, kw_kinds, in_place,
                                 wrt_tuple)
    expanded = expand_sequence_arithmetic(ir, kinds)  # t + u of tuples known only now
    if expanded is not ir:
        ir, kinds = expanded, infer_kinds(expanded, kinds_in)
    _refuse_length_of_a_number(ir.body, kinds)
    _refuse_output_without_derivative(ir, mode, kinds)
    if mode in ("jacfwd", "jacrev"):
        items = _sequence_output_items(ir, kinds)
        sequence_output = items is not ir
        if sequence_output:
            ir, kinds = items, infer_kinds(items, kinds_in)
        _refuse_complex_jacobian(ir, mode, wrt, kinds, kinds_in)
        out, param_kinds = jacobian_ir(ir, mode, wrt, kinds, kinds_in, wrt_tuple)
        if sequence_output:
            out.meta["sequence_output"] = ir.meta["out_structure"]
        verify(out)
        out = hoist_views(simplify(out, param_kinds, TABLE))
        if in_place_updates:
            out = accumulate_in_place(out, param_kinds)
        elif is_functional and in_place:
            out = functional_scatters(out, param_kinds)
        verify(out)
        _mark_functional(out, param_kinds, is_functional and in_place)
        return out
    if mode in ("jvp", "hvp"):
        out = forward_pass(ir, kinds, wrt, TABLE)
        if mode == "hvp":  # the tangent alone is returned
            from s2sad.ir.nodes import Block

            n = out.meta["n_primal"]
            out.meta["n_primal"] = 0
            out = type(out)(out.name, out.params, Block(out.body.stmts, out.body.results[n:]),
                            out.returns_tuple, out.kwonly, out.defaults, out.loc,
                            out.source_lines, out.first_line, out.meta)
        param_kinds = dict(kinds_in)
        for p, tp in zip([ir.params[i] for i in wrt], out.meta["tangent_params"]):
            param_kinds[tp] = float_kind(kinds_in[p])
    else:
        results = ir.body.results
        if mode in ("grad", "value_and_grad"):
            seed_shape = _scalar_output_shape(
                ir, mode, kinds, generic=all(k.tag == "unknown" for k in arg_kinds))
        out = reverse_pass(ir, kinds, wrt, TABLE, checkpoints)
        param_kinds = dict(kinds_in)
        for r, sp in zip(results, out.meta["seed_params"]):
            param_kinds[sp] = float_kind(kinds.get(r, UNKNOWN) if hasattr(r, "name") and
                                          not hasattr(r, "value") else kind_of_value(r.value))
        if mode in ("grad", "value_and_grad"):
            k = kinds.get(results[0], UNKNOWN) if isinstance(results[0], Var) else None
            # an output whose kind does not say it is one number (what an unreadable call
            # returned) is checked where the code runs: a gradient of an array output, its
            # entries summed silently, is not one
            checked = k is not None and k.tag not in ("scalar",) and not seed_shape
            out = _seed_with_one(out, keep_value=mode == "value_and_grad", shape=seed_shape,
                                 check=checked)
    if VERIFY_EACH_PASS:
        verify(out)
    if explain:  # every step kept and named: no pass below merges or reorders steps
        out = explain_simplify(out, param_kinds, TABLE, known_kinds=kinds)
        if in_place:
            out = fresh_results(out, param_kinds, closure_sweep=mode == "vjp")
        out.meta["wrt_tuple"] = wrt_tuple
        out.meta["explain"] = True
        verify(out)
        return out
    # the derivative keeps the primal's statements: their kinds are known already
    out = hoist_views(simplify(out, param_kinds, TABLE, known_kinds=kinds))
    if mode in ("vjp", "grad", "value_and_grad"):
        out = rewrite_loop_accumulators(out, param_kinds)
    if in_place:  # the IR goes to code generation (not into another transformation)
        if in_place_updates:
            out = accumulate_in_place(out, param_kinds, split=mode == "vjp")
        elif is_functional:
            out = functional_scatters(out, param_kinds)
        out = iterate_tapes(out)
        out = fresh_results(out, param_kinds, closure_sweep=mode == "vjp")
    out.meta["wrt_tuple"] = wrt_tuple
    verify(out)
    _mark_functional(out, param_kinds, is_functional and in_place)
    return out


def _mark_functional(out, param_kinds: dict, is_functional: bool) -> None:
    """Record that `out` is functional code, after refusing what a lazy array cannot do."""
    if is_functional:
        refuse_value_reads(out, param_kinds)
        out.meta["functional"] = True


def _check_wrt(ir, wrt, kinds_in):
    """Refuse a `wrt` argument that carries no derivative (an int, a bool, an object)."""
    for i in wrt:
        k = kinds_in[ir.params[i]]
        if k.tag in ("scalar", "array") and k.dtype in ("i", "b"):
            what = "an int" if k.dtype == "i" else "a bool"
            raise WrtError(
                f"cannot differentiate with respect to `{ir.params[i].name}`: it is {what}",
                ir.loc, f"pass a float (e.g. {ir.params[i].name}=float(...)), or leave it out "
                        "of wrt")
        if k.tag == "object":
            raise WrtError(f"cannot differentiate with respect to `{ir.params[i].name}` of "
                           "this type", ir.loc, "pass a float, a NumPy float array, or a tuple, "
                           "list, namedtuple or dict (with str or int keys) of them")


def _refuse_length_of_a_number(block, kinds) -> None:
    """A loop over a number (`for v in a`, `[3 * v for v in a]`) or `len(a)`, where the
    arguments' kinds make `a` a number: the primal raises a TypeError there, and the
    generated code would raise it from its own `len(a)`; say so at the user's line."""
    for s in block.stmts:
        if isinstance(s, Call) and s.fn is len and isinstance(s.args[0], (Var, Const)):
            k = kinds.get(s.args[0], UNKNOWN) if isinstance(s.args[0], Var) else \
                kind_of_value(s.args[0].value)
            if k.tag == "scalar":
                what = {"i": "an int", "b": "a bool", "c": "a complex number"}.get(k.dtype,
                                                                                 "a float")
                raise ArgumentTypeError(
                    f"cannot iterate over or take the length of {what}: with these arguments "
                    "this value is a number, not an array or a sequence", s.loc,
                    "pass an array, tuple or list here, or loop over range(...)")
        for inner in blocks_of(s):
            _refuse_length_of_a_number(inner, kinds)


def _refuse_output_without_derivative(ir, mode, kinds) -> None:
    """A function whose output is a bool or an int (every item of it, for a tuple): no
    derivative flows out of it, and a derivative of zeros would hide the mistake
    (`np.allclose(...)` returned where a distance was meant). As JAX refuses `grad` of an
    int output. An int or bool item beside float ones is kept (its cotangent is None, its
    tangent and Jacobian zero: docs/guards.md)."""
    results = ir.body.results
    if not results:
        return
    found = []
    for r in results:
        k = kinds.get(r, UNKNOWN) if not hasattr(r, "value") else kind_of_value(r.value)
        if k.tag not in ("scalar", "array") or k.dtype not in ("b", "i"):
            return
        found.append((r, k))
    r, k = found[0]
    what = {"b": "bool", "i": "int"}[k.dtype]
    shape = k.static_shape
    what = f"{'an' if what == 'int' else 'a'} {what} array" + \
        (f" of shape {tuple(shape)}" if shape is not None else "") \
        if k.tag == "array" else ("an int" if k.dtype == "i" else "a bool")
    loc, made_by = ir.loc, ""
    if len(found) > 1:
        what = "a tuple of bools and ints only"
    for st in ir.body.stmts if len(found) == 1 else ():
        if isinstance(st, Call) and st.target is r:
            loc = st.loc or loc
            name = getattr(st.fn, "__name__", None)
            module = getattr(st.fn, "__module__", None) or ""
            if isinstance(name, str) and name.isidentifier() and not name.startswith("_") \
                    and module.startswith("numpy"):
                made_by = f" (the result of np.{name})"
    raise NonDifferentiableError(
        f"{mode} needs a float output, but {ir.name} returns {what}{made_by}, which carries "
        "no derivative", loc,
        "return a float: a distance (np.sum((a - b) ** 2)) rather than a comparison "
        "(np.allclose, a > b), x.astype(float) for a count; or do not differentiate it")


def _scalar_output_shape(ir, mode, kinds, generic: bool = False) -> tuple:
    """The shape of the seed of a gradient: () for a real scalar output, the output's for
    one of a single entry (np.sum(..., keepdims=True)); anything else is refused."""
    results = ir.body.results
    if ir.returns_tuple:
        structure = ir.meta.get("out_structure")
        what = "a tuple" if structure is None or structure[0] == "tuple" else \
            f"a {structure[1].__name__} (a namedtuple)" if structure[0] == "record" else \
            f"a {structure[0]}"
        raise NonDifferentiableError(
            f"{mode} needs a function with one scalar output, but {ir.name} returns "
            f"{what}", ir.loc, "use s2sad.vjp, or s2sad.jacrev for the Jacobian")
    k = kinds.get(results[0], UNKNOWN) if not hasattr(results[0], "value") else \
        kind_of_value(results[0].value)
    one_entry = k.tag == "array" and k.shape is not None and int(np.prod(k.shape)) == 1
    # in code for arguments of any kind, an array of unknown shape may have one entry (the
    # specialised compile knows; refusing here refused `.source` before the first call).
    # Specialised, an array of unknown size is a data-dependent one (x[x > 0]): refused
    maybe_one = generic and k.tag == "array" and k.static_shape is None
    if not (k.tag == "scalar" or one_entry or maybe_one) and k.tag != "unknown":
        raise NonDifferentiableError(
            f"{mode} needs a scalar output, but {ir.name} returns {k!r}", ir.loc,
            "use s2sad.vjp for a vector-Jacobian product, or s2sad.jacrev for the "
            "whole Jacobian")
    if k.dtype == "c":
        raise NonDifferentiableError(
            f"{mode} needs a real scalar output, but {ir.name} returns a complex "
            f"number (a gradient is defined for real-valued functions)", ir.loc,
            "return np.real(...), np.imag(...) or np.abs(...) of it, or use s2sad.vjp "
            "with a complex cotangent (or s2sad.jvp) for the complex derivative")
    return tuple(k.shape) if one_entry else ()


def _seed_with_one(fn, keep_value: bool, shape: tuple = (), check: bool = False):
    """The gradient's seed is 1 (ones of the output's shape for an output of one entry);
    `check`: the output is checked to be one real number where the code runs."""
    from s2sad.ir.builder import Namer, replace_atoms
    from s2sad.ir.nodes import Block, Call, Const, Function

    if check and isinstance(fn.body.results[0], Var):
        stmts = list(fn.body.stmts)
        at = next((i for i, st in enumerate(stmts) if isinstance(st, Call) and
                   st.fn is prims.sweep_boundary), len(stmts))
        checked = Namer.for_function(fn).fresh("_checked")
        stmts.insert(at, Call(checked, prims.check_scalar_output, (fn.body.results[0],), (),
                              fn.loc))
        fn = Function(fn.name, fn.params, Block(tuple(stmts), fn.body.results),
                      fn.returns_tuple, fn.kwonly, fn.defaults, fn.loc, fn.source_lines,
                      fn.first_line, fn.meta)
    seeds = fn.meta["seed_params"]
    if shape:
        ones = Namer.for_function(fn).fresh("out_bar")
        body = replace_atoms(fn.body, {s: ones for s in seeds})
        body = Block((Call(ones, np.ones, (Const(tuple(shape)),), (), None),) + body.stmts,
                     body.results)
    else:
        body = replace_atoms(fn.body, {s: Const(1.0) for s in seeds})
    meta = dict(fn.meta)
    meta["seed_params"] = ()
    if not keep_value:
        # a gradient alone does not return the primal value
        body = type(body)(body.stmts, body.results[meta["n_primal"]:])
        meta["n_primal"] = 0
    params = tuple(p for p in fn.params if p not in seeds)
    return Function(fn.name, params, body, fn.returns_tuple, fn.kwonly, fn.defaults, fn.loc,
                    fn.source_lines, fn.first_line, meta)


@contextlib.contextmanager
def deep_expressions(limit: int = 60_000):
    """Room for the recursion of parsing, converting, printing and compiling one long
    expression (a sum of a thousand terms is a tree a thousand levels deep): Python's own
    compiler accepts it, so the derivative's compiler must too."""
    old = sys.getrecursionlimit()
    if old >= limit:
        yield
        return
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def generate(func, mode: str, wrt: tuple, wrt_tuple: bool, arg_kinds: list,
             kw_kinds: dict, jit_cache=None) -> Compiled:
    """Compile the derivative (no lookup: s2sad.store.compiled serves stored ones).
    `jit_cache`: the folder where a backend that compiles to machine code keeps it."""
    mode, backend = split_backend(mode)
    if backend == "numba":
        from s2sad.codegen.numba_compile import numba_module

        numba_module()  # (refused before anything is generated when Numba is missing)
    with deep_expressions(), _no_collections():
        done = _generate(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds, backend)
    if backend == "numba":
        generic = bool(arg_kinds) and all(k.tag == "unknown" for k in arg_kinds)
        done = _numba_compiled(done, func, jit_cache, generic, arg_kinds)
    done.out_structure = output_structure(func, mode, arg_kinds)
    if done.out_structure is None and split_mode(mode)[0] in ("jacfwd", "jacrev"):
        # (a list computed when the code runs, returned: its items' Jacobians in a list)
        done.out_structure = done.ir.meta.get("sequence_output")
    return done


STRUCTURED_MODES = ("jvp", "vjp", "jacfwd", "jacrev")  # whose results keep the output's structure


def output_structure(func, mode: str, arg_kinds: list):
    """The structure of what `func` returns where a derivative in `mode` gives it back (a
    list, namedtuple or dict: frontend.lower.output_structure), else None. A derivative of
    a derivative (jvp(grad(f))) returns its inner derivative's layout: None."""
    if split_mode(mode)[0] not in STRUCTURED_MODES or prims.is_derivative(func):
        return None
    ir = lowered(func, argument_views(func, arg_kinds))
    return ir.meta.get("out_structure")


def _numba_compiled(done: Compiled, func, jit_cache, generic: bool,
                    arg_kinds: list) -> Compiled:
    """The same derivative compiled by Numba (codegen/numba_form.py): its source is the
    Numba form, its function the dispatcher's (compiling at the first call). The generic
    source (`.source` before a call) may call helpers that only a specialisation drops:
    it is then shown as it is, saying so."""
    from s2sad.codegen.numba_compile import compile_numba
    from s2sad.codegen.numba_form import numba_source
    from s2sad.errors import BackendError

    while prims.is_derivative(func):  # (hessian, hvp: the user's lines are the function's)
        func = func.func
    code = getattr(func, "__code__", None)
    user_file = code.co_filename if code is not None else None
    _refuse_recursive_pullbacks(done, func, user_file)
    try:
        siblings = tuple(n for n in getattr(done.namespace, "self_names", {}).values()
                         if n != done.name)
        source = numba_source(done.source, done.name, jit_cache is not None, user_file,
                              None if generic else arg_kinds, siblings)
    except BackendError:
        if not generic:
            raise
        note = ("# (Numba compiles the form of this derivative specialised on each call's "
                "arguments)\n")
        at = done.source.index("\nimport ") + 1 if "\nimport " in done.source else 0
        done.source = done.source[:at] + note + done.source[at:]
        return done
    fn, source = compile_numba(source, done.namespace, done.name, user_file, jit_cache)
    return Compiled(source, fn, done.ir, namespace=done.namespace, name=done.name)


def _refuse_recursive_pullbacks(done: Compiled, func, user_file) -> None:
    """A self-recursive VJP returns a pullback closure to its caller, which Numba cannot
    compile: refused at its first recursive call. (A self-recursive JVP compiles, and so
    does a gradient through recursive calls returning one real number: they call the
    module's value-and-gradient function instead, see passes/reverse.py.)"""
    import ast

    from s2sad.codegen.numba_errors import refusal

    names = {n for (m, _), n in getattr(done.namespace, "self_names", {}).items() if m == "vjp"}
    if not names:
        return
    lines = [n.lineno for n in ast.walk(ast.parse(done.source)) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id in names]
    if not lines:  # (the VJP asked for, its recursive calls served by another function)
        return
    raise refusal(done.source, min(lines), f"the call of `{_base_name(func)}`, a "
                  "recursive call whose derivative calls itself returning a pullback closure "
                  f"(`{sorted(names)[0]}`), which Numba cannot pass between compiled "
                  "functions (a recursion returning one real number compiles, its "
                  "gradient called for each call); its JVP (forward mode) compiles", user_file)


@contextlib.contextmanager
def _no_collections():
    """The cyclic garbage collector paused while compiling: the compiler allocates hundreds
    of thousands of IR nodes that all live until the code is printed, and each collection
    of the oldest generation walks all of them again (about half the compile time of a
    2,000-line function). What the compiler frees, reference counting frees; the few
    cycles it leaves are collected after. A nested compile, or a program that paused the
    collector itself, leaves it as it is."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _generate(func, mode: str, wrt: tuple, wrt_tuple: bool, arg_kinds: list,
              kw_kinds: dict, backend: str = "numpy") -> Compiled:
    general = self_recursive_kinds(func, mode, arg_kinds, kw_kinds)
    if general is not None:
        done = _generate_self_recursive(func, mode, wrt, wrt_tuple, general, backend)
        if done is not None:
            return done
    return _generate_one(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds, backend)


def _generate_one(func, mode: str, wrt: tuple, wrt_tuple: bool, arg_kinds: list,
                  kw_kinds: dict, backend: str = "numpy", ns=None,
                  name: str | None = None) -> Compiled:
    ir = derivative_ir(func, mode, wrt, arg_kinds, kw_kinds, wrt_tuple=wrt_tuple)
    if backend == "numba" or split_mode(mode)[0] in ("jacfwd", "jacrev"):
        # a matrix's transpose as .T (see hoist.matrix_transposes); a Jacobian's batched
        # products as `@`
        kinds_in = {p: k for p, k in zip(ir.params, arg_kinds)}
        ir = matrix_transposes(ir, infer_kinds(ir, kinds_in), operators=backend != "numba")
    ir.meta["dim_origins"] = size_origins(ir.params, arg_kinds)
    mode, checkpoints = split_mode(mode)
    ir.meta["wrt"] = tuple(wrt)  # each returned cotangent is named after its argument
    if mode == "vjp":
        body = ir.body.stmts
        ir.meta["boundary_index"] = next(i for i, s in enumerate(body)
                                         if getattr(s, "fn", None) is _boundary())
    name = name or f"{_base_name(func)}_{mode}"
    ns = ns if ns is not None else Namespace()
    header = _header(func, mode, wrt, ir, arg_kinds, kw_kinds)
    if ir.meta.get("explain"):
        header.append("step by step (explain=True): one primitive per line, each derivative "
                      "step under the step and rule it comes from")
    if checkpoints is not None:
        header.append(f"loops reversed by binomial checkpointing: at most {checkpoints} "
                      "snapshots of each loop's state (s2sad.ir.revolve)")
    if ir.meta.get("functional"):
        header.append("functional: no in-place updates, no out= (for arrays of another "
                      "library than NumPy)")
    layout = {"hvp": "tangent", "jacfwd": "tree", "jacrev": "tree"}.get(mode, mode)
    try:
        source = emit_function(ir, ns, name, header, layout)
    except UnknownShapeError as e:
        if all(k.tag == "unknown" for k in arg_kinds):
            raise  # (generic code: the arguments would tell the shape, as its hint says)
        # code specialised on the arguments: they do not tell this shape either
        raise UnknownShapeError(
            f"the code of {name} needs a zero derivative whose shape is known only at run "
            "time (a value built to a length the arguments' kinds do not give), and s2sad "
            "cannot build it", e.loc,
            "this is a limitation of s2sad: differentiate in another order (reverse over "
            "reverse: s2sad.vjp(s2sad.grad(f))), or build the value so that its shape "
            "follows from the arguments' shapes") from None
    if ns.self_names:  # (a function of a self-recursive module: compiled with the others)
        return Compiled(source, None, ir, namespace=ns, name=name)
    fn = compile_source(source, ns, name)
    return Compiled(source, fn, ir, namespace=ns, name=name)


# -- self-recursive derivatives (issue 35) ---------------------------------------------------
#
# A function that calls itself gets a derivative that calls itself: its module is compiled
# for its arguments' kinds with their sizes and number values forgotten (an array of rank 2
# and float dtype, whatever its shape), so that a recursive call whose arguments have those
# kinds again (a minor of a matrix, n - 1) is a call of the same code, provably; the
# generated function calls itself by name there (prims.SelfCall). A gradient's recursive
# calls need the VJP, which the module holds beside it. Where a recursive call's arguments
# have other kinds (a rank less, a tuple of another length), or anything fails, the
# derivative is compiled as before: the recursive call asks the s2sad API while it runs.

_SELF_MODES = ("jvp", "vjp", "grad", "value_and_grad")


class _SelfRecursion:
    """The self-recursive module being generated: its function, the kinds it is compiled
    for, and the functions (mode, wrt) its recursive calls asked for, in order."""

    def __init__(self, func, kinds: tuple, backend: str = "numpy"):
        self.func, self.kinds, self.backend = func, kinds, backend
        self.needed: dict = {}


_SELF: list = []  # (the innermost compile's; None for a compile nested in it)


def _general_kind(k: Kind):
    """`k` with its sizes and the values of numbers forgotten (a flag or an int option,
    facts of the compile, kept); None for what has no such kind (unknown, another
    library's array)."""
    if k is None or k.family or k.tag == "unknown":
        return None
    if is_fact(k):
        return k
    if k.tag == "scalar":
        return scalar(k.dtype)
    if k.tag == "array":
        if k.rank is None and k.shape is None:
            return None
        rank = len(k.shape) if k.shape is not None else k.rank
        return Kind("array", k.dtype, () if rank == 0 else None,
                    rank=None if rank == 0 else rank)
    if k.tag in ("tuple", "list"):
        items = tuple(_general_kind(i) for i in k.items)
        return None if None in items else Kind(k.tag, items=items, view=k.view)
    return k


def self_recursive_kinds(func, mode: str, arg_kinds: list, kw_kinds: dict):
    """The kinds a self-recursive derivative of `func` is compiled for, or None where none
    is tried (a function that does not call itself by name, keywords, a mode other than
    jvp, vjp, grad and value_and_grad: checkpoints, explain, Jacobians)."""
    if mode not in _SELF_MODES or kw_kinds or not isinstance(func, types.FunctionType):
        return None
    code = func.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or \
            code.co_kwonlyargcount or func.__name__ not in code.co_names + code.co_freevars:
        return None
    general = tuple(_general_kind(k) for k in arg_kinds)
    return None if not general or None in general else general


def _self_call(call, mode: str, act: tuple, arg_kinds: list, kwargs):
    """A SelfCall for this recursive call where the module being generated serves it: the
    function called is the one being differentiated, and the arguments' kinds, their sizes
    forgotten, are the kinds the module is compiled for (so the callee's derivative is the
    same code). Else None."""
    ctx = _SELF[-1] if _SELF else None
    if ctx is None or type(call) is not prims.RecursiveCall or call.func is not ctx.func or \
            kwargs or len(arg_kinds) != len(ctx.kinds):
        return None
    if tuple(_general_kind(k) for k in arg_kinds) != ctx.kinds:
        return None
    if mode == "value_and_grad" and ctx.backend != "numba":
        # (the reverse pass's form for Numba, which compiles no pullback closure: the
        # gradient, scaled by the call's cotangent. NumPy's closure form, which passes the
        # cotangent down instead, is as fast or faster: det by minors l=7 117 vs 125 ms,
        # Horner over 40 coefficients 60 vs 91 us)
        return None
    ctx.needed.setdefault((mode, tuple(act)), None)
    return prims.SelfCall(call.func, mode, act)


prims.RecursiveCall.self_call = staticmethod(_self_call)


@contextlib.contextmanager
def _self_recursion(ctx):
    _SELF.append(ctx)
    try:
        yield
    finally:
        _SELF.pop()


def _generate_self_recursive(func, mode: str, wrt: tuple, wrt_tuple: bool, general: tuple,
                             backend: str):
    """The derivative of `func` as a module of functions that call themselves (see above),
    or None where its recursive calls do not all have the kinds it is compiled for, or it
    cannot be compiled so."""
    from s2sad.codegen.imports import prelude
    from s2sad.errors import S2SADError

    ctx = _SelfRecursion(func, general, backend)
    base = _base_name(func)
    own = (mode, tuple(wrt)) if mode in ("jvp", "vjp") else None
    ns = Namespace()
    main = f"{base}_{mode}"

    def name_of(m: str, w: tuple) -> str:
        if (m, w) == own:
            return main
        name, k = f"{base}_{m}", 0
        while name in ns.self_names.values() or name == main:
            k += 1
            name = f"{base}_{m}_{k}"
        return name

    try:
        with _self_recursion(ctx):
            # (the IR first: it tells which functions the recursive calls need)
            derivative_ir(func, mode, wrt, list(general), {}, wrt_tuple=wrt_tuple)
            if not ctx.needed:
                return None  # (no recursive call has the kinds: compiled as before)
            if own is not None:
                ns.self_names[own] = main
            done: list = []
            todo = [k for k in ctx.needed if k != own]
            while todo:
                m, w = key = todo.pop(0)
                if key in ns.self_names:
                    continue
                ns.self_names[key] = name_of(m, w)
                for n in ns.self_names.values():
                    ns.values.setdefault(n, None)  # (kept from the variables' names)
                done.append(_generate_one(func, m, w, True, list(general), {}, backend,
                                          ns=ns, name=ns.self_names[key]))
                todo += [k for k in ctx.needed if k not in ns.self_names and k not in todo]
                if len(ns.self_names) > 8:
                    return None
            for n in ns.self_names.values():
                ns.values.setdefault(n, None)
            first = _generate_one(func, mode, wrt, wrt_tuple, list(general), {}, backend,
                                  ns=ns, name=main)
            if any(k not in ns.self_names for k in ctx.needed):
                return None
    except S2SADError:
        return None  # (compiled as before, where the same error, if any, is raised)
    for n in ns.self_names.values():
        if ns.values.get(n, 0) is None:
            del ns.values[n]
    parts = [_split_module(c.source) for c in [first] + done]
    body = "\n\n\n".join(p[2] for p in parts)
    imports = prelude(body, ns)
    source = "\n".join(parts[0][0] + imports + ([""] if imports else []) + [body]) + "\n"
    fn = compile_source(source, ns, main)
    return Compiled(source, fn, first.ir, namespace=ns, name=main)


def _split_module(source: str) -> tuple:
    """(header comment lines, import lines, the rest) of a generated module's source."""
    lines = source.rstrip("\n").split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("def "))
    head = [ln for ln in lines[:at] if ln.startswith("#")]
    return head, [ln for ln in lines[:at] if ln and not ln.startswith("#")], \
        "\n".join(lines[at:])


def size_origins(params, arg_kinds) -> dict:
    """{size symbol: (parameter, axis)} of the arguments whose sizes are symbols (ir/dims.py):
    where the generated code reads each (`n = x.shape[0]`)."""
    origins: dict = {}
    for p, k in zip(params, arg_kinds):
        if k is not None and k.tag == "scalar" and type(k.value) is Dim and k.value.is_symbol:
            origins.setdefault(k.value.expr[0][0][0], (p, None))  # (an int argument's value)
        if k is not None and k.tag == "array" and k.shape:
            for axis, d in enumerate(k.shape):
                if isinstance(d, Dim) and len(d.expr) == 1 and d.expr[0][1] == 1 and \
                        len(d.expr[0][0]) == 1:
                    origins.setdefault(d.expr[0][0][0], (p, axis))
    return origins


def _boundary():
    from s2sad.ir.prims import sweep_boundary

    return sweep_boundary


def _base_name(func) -> str:
    if prims.is_derivative(func):
        return f"{_base_name(func.func)}_{func.mode}"
    if func.__name__ == "<lambda>" or not func.__name__.isidentifier() \
            or keyword.iskeyword(func.__name__):
        # a lambda: the name it is assigned to, or lambda_<line>; a __name__ set to a string
        # that is no Python name (`f.__name__ = "norm_-1"`): the name its source defines
        return parse_function(func).node.name
    return func.__name__


def _header(func, mode, wrt, ir, arg_kinds, kw_kinds) -> list:
    base = base_ir(func, arg_kinds, kw_kinds)
    names = [p.name for p in base.params]
    what = {"jvp": "JVP (forward mode)", "vjp": "VJP (reverse mode)",
            "hvp": "Hessian-vector product (forward over reverse)",
            "jacfwd": "Jacobian (vector forward mode)", "jacrev": "Jacobian (batched reverse mode)",
            "grad": "gradient (reverse mode)", "value_and_grad": "value and gradient "
                                                                  "(reverse mode)"}[mode]
    loc = base.loc
    module = getattr(func, "__module__", None) or "?"
    where = f"{module}, line {loc.lineno}" if loc else module
    shown = list(names)
    if names and getattr(getattr(func, "__code__", None), "co_flags", 0) & inspect.CO_VARARGS:
        shown[-1] = "*" + shown[-1]  # passed to the generated code as one tuple
    lines = [f"{what} of {_base_name(func)}({', '.join(shown)}) with respect to "
             f"{', '.join(names[i] for i in wrt) or 'no argument (wrt=())'}",
             f"generated by s2sad {VERSION} from {where}"]
    spec = ", ".join([f"{n}: {_kind_text(k)}" for n, k in zip(names, arg_kinds)] +
                     [f"{n}={k.value!r}" for n, k in sorted(kw_kinds.items()) if is_fact(k)])
    if arg_kinds and all(k.tag == "unknown" for k in arg_kinds):
        lines.append("generic: for arguments of any kind (each call compiles code specialised "
                     "on its arguments' kinds)")
    elif spec:
        lines.append(f"specialised for {spec}")
    return lines


def _kind_text(k: Kind) -> str:
    if is_fact(k):  # (a flag, an option string or an int option: its value)
        return repr(k.value)
    if k.family:
        return f"{k.family} {_kind_text(Kind(k.tag, k.dtype, k.shape, k.items, rank=k.rank))}"
    if k.tag == "scalar":
        return {"f": "float", "i": "int", "b": "bool", "c": "complex"}.get(k.dtype, "scalar")
    if k.tag == "array":
        dt = {"f": "float", "i": "int", "b": "bool", "c": "complex"}.get(k.dtype, "?")
        return f"{dt} array {k.shape if k.shape is not None else '(any shape)'}"
    if k.tag == "unknown":
        return "any"
    if k.view is not None:  # the dispatcher passes the values as a tuple
        what, detail = k.view
        if what == "dict":
            return f"dict of keys {', '.join(map(repr, detail))} (passed as a tuple)"
        return f"namedtuple {detail.__name__} (passed as a tuple)"
    return k.tag
