"""Hypothesis strategies for the rule table: one short spec per rule, drawing whole calls.

A spec draws an `Example`: the source of a tiny user function's body calling the rule (the
compiler reads source, so every example is a real module, see tests/rules/test_properties.py),
the arguments, which of them are differentiated, and hints for the oracle. Keywords the rule
accepts (axis, keepdims, ord, ...) are drawn and written into the source as literals.

Adding a rule: add one line to `SPECS` (tests/rules/test_properties.py fails for a rule of the
table with no spec). Cases that fail because of known bugs being fixed elsewhere are filtered
by `known_bug`, each naming its issue.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st

from s2sad.ir.prims import astype as _astype
from s2sad.ir.prims import item as prims_item
from s2sad.ir.prims import (
    Attr,
    broadcast_like,
    cast_like,
    cofactor,
    filled_diagonal,
    index_add,
    index_update,
    prod_others,
    unbroadcast,
)
from s2sad_rules.numpy_construction import reshape_items
from s2sad_rules.real_only import COMPLEX_REFUSED

try:
    import scipy.special as sc

    import scipy.linalg as sp_linalg
    import scipy.stats as sp_stats

    import s2sad_rules.scipy_linalg  # noqa: F401
    import s2sad_rules.scipy_special  # noqa: F401  (loaded where a function calls scipy)
    import s2sad_rules.scipy_stats  # noqa: F401
    import s2sad_rules.scipy_distributions  # noqa: F401
    import scipy.special._ufuncs as scu
except ImportError:  # (SciPy is optional)
    sc = sp_stats = sp_linalg = scu = None


@dataclass(frozen=True)
class Example:
    body: str  # the user function's body; parameters are a0, a1, ...
    args: tuple
    wrt: tuple  # differentiated argument positions
    rtol: float = 1e-5  # finite-difference tolerance
    notes: tuple = field(default=())
    refused: str = ""  # an option the rule must refuse: MissingRuleError naming it
    vjp_refused: str = ""  # an option only the VJP refuses (NotImplementedError, see report)

    @property
    def source(self) -> str:
        params = ", ".join(f"a{i}" for i in range(len(self.args)))
        body = self.body if "\nreturn " in self.body else f"return {self.body}"
        body = body.replace("(, ", "(")  # a method call whose first argument is a keyword
        lines = "\n".join("    " + line for line in body.splitlines())
        return f"def f({params}):\n{lines}\n"


# -- values -----------------------------------------------------------------------------------

FLOAT = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=False, width=64)


@dataclass(frozen=True)
class Domain:
    """Where a rule's argument is drawn: intervals, and special values (kinks, ties)."""

    intervals: tuple = ((-2.0, 2.0),)
    special: tuple = (0.0, 1.0, -1.0, 0.5)

    def element(self):
        parts = [st.floats(lo, hi, allow_nan=False, allow_subnormal=False)
                 for lo, hi in self.intervals]
        special = [v for v in self.special if any(lo <= v <= hi for lo, hi in self.intervals)]
        if special:
            parts.append(st.sampled_from(special))
        return st.one_of(*parts)


REAL = Domain()
NONZERO = Domain(((-2.0, -0.3), (0.3, 2.0)), (1.0, -1.0, 0.5))
POS = Domain(((0.2, 3.0),), (1.0, 0.5, 2.0))
UNIT = Domain(((-0.9, 0.9),), (0.0, 0.5, -0.5))
ABOVE1 = Domain(((1.2, 3.0),), (2.0,))
SMALL = Domain(((-1.2, 1.2),), (0.0, 1.0, -1.0, 0.5))


@st.composite
def values(draw, shape, dom=REAL, scalar=None):
    """A float64 array of `shape` (a Python float for shape () unless drawn as 0-d array)."""
    x = draw(hnp.arrays(np.float64, shape, elements=dom.element()))
    if draw(st.booleans()):  # half the time: break ties, so finite differences apply
        x = x + np.arange(x.size).reshape(shape) * 1e-3 * draw(st.sampled_from([1.0, -1.0]))
        lo = min(lo for lo, _ in dom.intervals)
        hi = max(hi for _, hi in dom.intervals)
        x = np.clip(x, lo, hi)
    if shape == ():
        if scalar is None:
            scalar = draw(st.booleans())
        return float(x) if scalar else np.asarray(x)
    return x


def shapes(min_rank=0, max_rank=4, min_side=1, max_side=3):
    return hnp.array_shapes(min_dims=min_rank, max_dims=max_rank, min_side=min_side,
                            max_side=max_side)


def axis_for(draw, ndim, allow_none=True, allow_tuple=True):
    """None, an int (maybe negative) or a tuple of distinct axes (maybe negative)."""
    options = ["int"] if ndim else []
    if allow_none:
        options.append("none")
    if allow_tuple and ndim:
        options.append("tuple")
    kind = draw(st.sampled_from(options))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    axes = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return tuple(a - ndim if draw(st.booleans()) else a for a in axes)


def kw_text(kws: dict) -> str:
    return "".join(f", {k}={v!r}" for k, v in kws.items())


def drop_defaults(draw, kws: dict, defaults: dict) -> dict:
    """Leave out some keywords that equal their default (both spellings get drawn)."""
    return {k: v for k, v in kws.items()
            if not (k in defaults and v == defaults[k] and draw(st.booleans()))}


# -- spec builders ------------------------------------------------------------------------


def unary(call: str, dom=REAL, min_rank=0, max_rank=4, scalar_only=False):
    """`call` with `{0}` for the argument: elementwise over ranks 0-4."""

    @st.composite
    def spec(draw):
        shape = () if scalar_only else draw(shapes(min_rank, max_rank))
        x = draw(values(shape, dom, scalar=True if scalar_only else None))
        return Example(call.format("a0"), (x,), (0,))

    return spec()


def binary(call: str, dom0=REAL, dom1=REAL, scalar_only=False, max_rank=4):
    """`call` with `{0}`, `{1}`: broadcasting-compatible shape pairs over ranks 0-4."""

    @st.composite
    def spec(draw):
        if scalar_only:
            s0 = s1 = ()
        else:
            s0, s1 = draw(hnp.mutually_broadcastable_shapes(
                num_shapes=2, min_dims=0, max_dims=max_rank, max_side=3)).input_shapes
        x = draw(values(s0, dom0, scalar=True if scalar_only else None))
        y = draw(values(s1, dom1, scalar=True if scalar_only else None))
        return Example(call.format("a0", "a1"), (x, y), (0, 1))

    return spec()


def reduction(call: str, dom=REAL, keepdims=True, tuple_axis=True, extra=None, min_rank=0):
    """`call` with `{0}` and `{kw}`: axis None/int/negative/tuple, keepdims."""

    @st.composite
    def spec(draw):
        shape = draw(shapes(min_rank, 4))
        x = draw(values(shape, dom, scalar=False))
        kws = {"axis": axis_for(draw, len(shape), allow_tuple=tuple_axis)}
        if keepdims:
            kws["keepdims"] = draw(st.booleans())
        if extra:
            kws.update(extra(draw, shape))
        kws = drop_defaults(draw, kws, {"axis": None, "keepdims": False})
        return Example(call.format("a0", kw=kw_text(kws)), (x,), (0,))

    return spec()


def _sum_options(draw, shape):
    """np.sum's `where=` (a nested list of bools over the shape or its last axis) and
    `initial=` (a number, not differentiated)."""
    kws = {}
    if shape and draw(st.booleans()):
        over = shape if draw(st.booleans()) else shape[-1:]
        kws["where"] = draw(hnp.arrays(np.bool_, over)).tolist()
    if draw(st.booleans()):
        kws["initial"] = draw(st.sampled_from([0.0, 1.5, -2.0]))
    return kws


def _mean_where(draw):
    """np.mean with `where=`: a mask that keeps index 0 along the reduced axis, so that no
    slice is empty (the mean of nothing is nan)."""
    shape = draw(shapes(1, 4))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    mask = draw(hnp.arrays(np.bool_, shape))
    np.moveaxis(mask, axis, 0)[0] = True
    x = draw(values(shape, REAL, scalar=False))
    keep = draw(st.booleans())
    return Example(f"np.mean(a0, axis={axis}, keepdims={keep}, where={mask.tolist()!r})",
                   (x,), (0,))


def seq(call: str, dom=REAL, min_size=1, max_size=4):
    """A builtin over a list of Python floats: `call` with `{0}` for the list display."""

    @st.composite
    def spec(draw):
        n = draw(st.integers(min_size, max_size))
        xs = tuple(draw(values((), dom, scalar=True)) for _ in range(n))
        items = ", ".join(f"a{i}" for i in range(n))
        return Example(call.format(f"[{items}]"), xs, tuple(range(n)))

    return spec()


def custom(fn):
    """A spec written out: `fn(draw)` returns an Example."""
    return st.composite(fn)()


# -- specs that need more than a template -------------------------------------------------


def _clip(draw):
    shape = draw(shapes())
    x = draw(values(shape, REAL, scalar=False))
    lo_kind, hi_kind = draw(st.sampled_from(["none", "scalar", "array"])), draw(
        st.sampled_from(["none", "scalar", "array"]))
    if lo_kind == hi_kind == "none":
        hi_kind = "scalar"
    args, wrt, texts = [x], (0,), []
    for kind, base in ((lo_kind, -0.5), (hi_kind, 0.5)):
        if kind == "none":
            texts.append("None")
        elif kind == "scalar":
            texts.append(repr(base))
        else:
            bshape = draw(st.sampled_from([shape[k:] for k in range(len(shape) + 1)]))
            args.append(np.full(bshape, base) + draw(values(bshape, UNIT, scalar=False)) * 0.1)
            texts.append(f"a{len(args) - 1}")
    return Example(f"np.clip(a0, {texts[0]}, {texts[1]})", tuple(args), wrt)


def _nan_to_num(draw):
    shape = draw(shapes(1, 3))
    x = draw(values(shape, REAL, scalar=False))
    holes = draw(hnp.arrays(np.float64, shape, elements=st.sampled_from(
        [0.0, 0.0, np.nan, np.inf, -np.inf])))
    kws = {k: draw(st.sampled_from(vals)) for k, vals in (
        ("nan", [0.0, 1.5]), ("posinf", [None, 9.0]), ("neginf", [None, -9.0]),
        ("copy", [True, False])) if draw(st.booleans())}
    return Example(f"np.nan_to_num(a0 + a1{kw_text(kws)})", (x, holes), (0,),
                   refused="copy=False" if kws.get("copy") is False else "")


def _where(draw):
    s = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
    c = draw(hnp.arrays(np.bool_, s.input_shapes[0]))
    x = draw(values(s.input_shapes[1], REAL, scalar=False))
    y = draw(values(s.input_shapes[2], REAL, scalar=False))
    return Example("np.where(a0, a1, a2)", (c, x, y), (1, 2))


def _nary(call: str, dom=REAL, lo=2, hi=4):
    """`call` of two to four numbers (max, min, math.hypot take any number)."""

    def spec(draw):
        n = draw(st.integers(lo, hi))
        xs = tuple(draw(values((), dom, scalar=True)) for _ in range(n))
        names = ", ".join(f"a{i}" for i in range(n))
        return Example(call.format(names), xs, tuple(range(n)))

    return spec


def _float(draw):
    return Example("float(a0) * a0", (draw(values((), REAL, scalar=True)),), (0,))


def _math_log(draw):
    x = draw(values((), POS, scalar=True))
    if draw(st.booleans()):
        return Example("math.log(a0)", (x,), (0,))
    b = draw(values((), Domain(((1.5, 4.0),), (2.0,)), scalar=True))
    return Example("math.log(a0, a1)", (x, b), (0, 1))


def _ldexp(draw):
    x = draw(values((), REAL, scalar=True))
    return Example(f"math.ldexp(a0, {draw(st.integers(-3, 3))})", (x,), (0,))


def _dist(draw):
    n = draw(st.integers(1, 3))
    xs = tuple(draw(values((), REAL, scalar=True)) for _ in range(2 * n))
    p = ", ".join(f"a{i}" for i in range(n))
    q = ", ".join(f"a{i}" for i in range(n, 2 * n))
    return Example(f"math.dist([{p}], [{q}])", xs, tuple(range(2 * n)))


def _sum_arrays(draw):
    n = draw(st.integers(1, 3))
    shape = draw(shapes(0, 3))
    xs = tuple(draw(values(shape, REAL, scalar=False)) for _ in range(n))
    items = ", ".join(f"a{i}" for i in range(n))
    start = draw(st.sampled_from(["none", "number", "array", "keyword"]))
    if start == "none":
        return Example(f"sum([{items}])", xs, tuple(range(n)))
    # a start of the items' shape, or a number, or one the items broadcast against
    start_shape = {"number": (), "keyword": shape}.get(start) or (2,) + shape
    xs += (draw(values(start_shape, REAL, scalar=start == "number")),)
    spelled = f"start=a{n}" if start == "keyword" else f"a{n}"
    return Example(f"sum([{items}], {spelled})", xs, tuple(range(n + 1)))


def _average(draw):
    shape = draw(shapes(1, 4))
    x = draw(values(shape, REAL, scalar=False))
    axis = axis_for(draw, len(shape), allow_tuple=False)
    kws = {} if axis is None and draw(st.booleans()) else {"axis": axis}
    refused = ""
    if draw(st.integers(0, 4)) == 0:  # not covered by the rules: must be refused
        kws["returned"] = True
        refused = "returned=True"
    if draw(st.booleans()):
        wshape = shape if axis is None or draw(st.booleans()) else (shape[axis],)
        w = draw(values(wshape, POS, scalar=False))
        return Example(f"np.average(a0{kw_text(kws)}, weights=a1)", (x, w), (0, 1),
                       refused=refused)
    return Example(f"np.average(a0{kw_text(kws)})", (x,), (0,), refused=refused)


def _scan(name):
    def draw_scan(draw):
        shape = draw(shapes(0, 4))
        dom = NONZERO if name == "cumprod" else REAL
        x = draw(values(shape, dom, scalar=False))
        axis = axis_for(draw, len(shape), allow_tuple=False) if shape else None
        kws = {} if axis is None and draw(st.booleans()) else {"axis": axis}
        if draw(st.booleans()):
            kws["dtype"] = np.float64
        text = kw_text(kws).replace("<class 'numpy.float64'>", "np.float64")
        return Example(f"np.{name}(a0{text})", (x,), (0,))
    return draw_scan


def _diff(draw):
    shape = draw(shapes(1, 4, min_side=2, max_side=4))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    args = [draw(values(shape, REAL, scalar=False))]
    extra = 0
    call = "np.diff(a0"
    for option in ("prepend", "append"):  # none, a number (broadcast), or entries along axis
        part = draw(st.sampled_from(["none", "number", "array"]))
        if part == "none":
            continue
        size = 1 if part == "number" else draw(st.integers(1, 2))
        extra += size
        part_shape = () if part == "number" else tuple(
            size if i == axis % len(shape) else side for i, side in enumerate(shape))
        call += f", {option}=a{len(args)}"
        args.append(draw(values(part_shape, REAL, scalar=part == "number")))
    n = draw(st.integers(0, shape[axis] + extra))
    kws = drop_defaults(draw, {"n": n, "axis": axis}, {"n": 1, "axis": -1})
    return Example(f"{call}{kw_text(kws)})", tuple(args), tuple(range(len(args))))


def _polyval(draw):
    n = draw(st.integers(1, 4))
    p = draw(values((n,), REAL, scalar=False))
    x = draw(values(draw(shapes(0, 3)), SMALL))
    return Example("np.polyval(a0, a1)", (p, x), (0, 1))


def _interp(draw):
    """Points away from the knots (the slope jumps there), some outside their range."""
    n = draw(st.integers(2, 5))
    xp = np.cumsum(draw(values((n,), POS, scalar=False))) - 1.0
    knots = np.concatenate([[xp[0] - 1.0], xp, [xp[-1] + 1.0]])
    mids = (knots[1:] + knots[:-1]) / 2
    x = draw(st.lists(st.sampled_from(list(mids)), min_size=1, max_size=4))
    x = np.array(x) if draw(st.booleans()) else float(x[0])
    fp = draw(values((n,), REAL, scalar=False))
    ends = draw(st.sampled_from(["", "left", "both"]))
    if ends == "":
        return Example(f"np.interp(a0, {list(xp)!r}, a1)", (x, fp), (0, 1))
    left = draw(values((), REAL, scalar=True))
    if ends == "left":
        return Example(f"np.interp(a0, {list(xp)!r}, a1, left=a2)", (x, fp, left), (0, 1, 2))
    right = draw(values((), REAL, scalar=True))
    return Example(f"np.interp(a0, {list(xp)!r}, a1, a2, a3)", (x, fp, left, right),
                   (0, 1, 2, 3))


def _trapezoid(draw):
    shape = draw(shapes(1, 3, min_side=2))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    y = draw(values(shape, REAL, scalar=False))
    how = draw(st.sampled_from(["", "dx", "x"]))
    if how == "dx":
        return Example(f"np.trapezoid(a0, dx=a1, axis={axis})",
                       (y, draw(values((), POS, scalar=True))), (0, 1))
    if how == "x":
        x = list(np.cumsum(draw(values((shape[axis],), POS, scalar=False))))
        return Example(f"np.trapezoid(a0, {x!r}, axis={axis})", (y,), (0,))
    return Example(f"np.trapezoid(a0, axis={axis})", (y,), (0,))


def _convolve(name):
    def draw_convolve(draw):
        a = draw(values((draw(st.integers(1, 5)),), REAL, scalar=False))
        v = draw(values((draw(st.integers(1, 5)),), REAL, scalar=False))
        mode = draw(st.sampled_from(["full", "same", "valid", 0, 1, 2, None]))
        tail = "" if mode is None else (f", {mode!r}" if draw(st.booleans())
                                        else f", mode={mode!r}")
        return Example(f"np.{name}(a0, a1{tail})", (a, v), (0, 1))
    return draw_convolve


def _trace(draw):
    shape = draw(shapes(2, 4))
    a1, a2 = draw(st.lists(st.integers(0, len(shape) - 1), min_size=2, max_size=2, unique=True))
    offset = draw(st.integers(-2, 2))
    kws = drop_defaults(draw, {"offset": offset, "axis1": a1, "axis2": a2},
                        {"offset": 0, "axis1": 0, "axis2": 1})
    return Example(f"np.trace(a0{kw_text(kws)})", (draw(values(shape, REAL, scalar=False)),),
                   (0,))


def _moments(name):
    def draw_moment(draw):
        shape = draw(shapes(1, 4, min_side=2))
        axis = axis_for(draw, len(shape))
        n = shape and int(np.prod([shape[a] for a in np.atleast_1d(axis)])) if axis is not None \
            else int(np.prod(shape))
        kws = {"axis": axis, "ddof": draw(st.integers(0, min(1, n - 1))),
               "keepdims": draw(st.booleans())}
        kws = drop_defaults(draw, kws, {"axis": None, "ddof": 0, "keepdims": False})
        if draw(st.booleans()):
            kws["where"] = _spread_mask(draw, shape, axis).tolist()
        x = draw(values(shape, REAL, scalar=False))
        return Example(f"np.{name}(a0{kw_text(kws)})", (x,), (0,), notes=(("axis", axis),))
    return draw_moment


def _spread_mask(draw, shape, axis):
    """A `where=` mask for var/std keeping at least two entries of each reduced slice (one
    where the slice has one), so that ddof 0 or 1 leaves a count above 0."""
    mask = draw(hnp.arrays(np.bool_, shape))
    axes = tuple(range(len(shape))) if axis is None else tuple(
        a % len(shape) for a in np.atleast_1d(axis))
    last = tuple(range(-len(axes), 0))
    moved = np.moveaxis(mask, axes, last).copy()
    flat = moved.reshape(moved.shape[:len(shape) - len(axes)] + (-1,))
    flat[..., :2] = True
    return np.moveaxis(flat.reshape(moved.shape), last, axes)


def _extreme_options(name):
    def options(draw, shape):
        """`where=` of max/min with the `initial=` NumPy then requires: far above or below
        every entry (it wins everywhere, or nowhere; no tie with an entry)."""
        kws = {}
        if shape and draw(st.booleans()):
            over = shape if draw(st.booleans()) else shape[-1:]
            kws["where"] = draw(hnp.arrays(np.bool_, over)).tolist()
            kws["initial"] = draw(st.sampled_from([-1e3, 1e3]))
        elif draw(st.booleans()):
            kws["initial"] = draw(st.sampled_from([-1e3, 1e3]))
        return kws
    return options


def _cumulative_sum(draw):
    """np.cumulative_sum: `axis` (required above one dimension), `include_initial`."""
    shape = draw(shapes(1, 4))
    x = draw(values(shape, REAL, scalar=False))
    kws = {}
    if len(shape) > 1 or draw(st.booleans()):
        kws["axis"] = draw(st.integers(-len(shape), len(shape) - 1))
    if draw(st.booleans()):
        kws["include_initial"] = draw(st.booleans())
    return Example(f"np.cumulative_sum(a0{kw_text(kws)})", (x,), (0,))


def _ediff1d(draw):
    """np.ediff1d of any shape (flattened), each part absent, a number or an array."""
    shape = draw(shapes(0, 3))
    args = [draw(values(shape, REAL, scalar=False))]
    kws = []
    for part in ("to_end", "to_begin"):
        form = draw(st.sampled_from(["none", "number", "array"]))
        if form == "none":
            continue
        part_shape = () if form == "number" else draw(shapes(1, 2))
        args.append(draw(values(part_shape, REAL)))
        kws.append(f", {part}=a{len(args) - 1}")
    return Example(f"np.ediff1d(a0{''.join(kws)})", tuple(args), tuple(range(len(args))))


def _quantile(name):
    """np.median / np.quantile / np.percentile: distinct entries (no tie to cross), q a
    number (a percentage for percentile), axis None/int/negative/tuple, keepdims."""

    def draw_quantile(draw):
        shape = draw(shapes(1, 4))
        n = int(np.prod(shape))
        x = np.linspace(-1.0, 1.0, n)[np.asarray(draw(st.permutations(range(n))))]
        x = x.reshape(shape) + draw(st.floats(0.0, 0.01))
        kws = drop_defaults(draw, {"axis": axis_for(draw, len(shape)),
                                   "keepdims": draw(st.booleans())},
                            {"axis": None, "keepdims": False})
        if name == "median":
            return Example(f"np.median(a0{kw_text(kws)})", (x,), (0,))
        q = draw(st.sampled_from([0.0, 0.25, 0.3, 0.5, 0.77, 1.0]))
        q = q * 100.0 if name == "percentile" else q
        return Example(f"np.{name}(a0, {q!r}{kw_text(kws)})", (x,), (0,))
    return draw_quantile


def _nan_reduction(name, dom=REAL):
    def draw_nan(draw):
        shape = draw(shapes(1, 4))
        x = draw(values(shape, dom, scalar=False))
        holes = np.where(draw(hnp.arrays(np.bool_, shape)), np.nan, 0.0)
        axis = axis_for(draw, len(shape))
        kws = drop_defaults(draw, {"axis": axis, "keepdims": draw(st.booleans())},
                            {"axis": None, "keepdims": False})
        if name in ("nanmean", "nanmax", "nanmin", "nanvar", "nanstd"):
            # a slice of only NaN has no mean or extremum (nor spread)
            holes.reshape(-1)[0] = 0.0
            if axis is not None:
                holes[...] = 0.0
        if name in ("nanvar", "nanstd"):
            # ddof below the number of kept entries (of at least 2 when ddof is 1)
            kept = int(np.sum(~np.isnan(holes)))
            slice_n = kept if axis is None else int(np.prod(
                [shape[a] for a in np.atleast_1d(axis)]))
            kws = dict(kws, ddof=draw(st.integers(0, 1))) if slice_n >= 2 else kws
        return Example(f"np.{name}(a0 + a1{kw_text(kws)})", (x, holes), (0,))
    return draw_nan


def _nan_scan(name):
    """np.nancumsum / np.nancumprod of an array with NaN holes (which get no derivative)."""

    def draw_nan_scan(draw):
        shape = draw(shapes(1, 4))
        x = draw(values(shape, NONZERO if name == "nancumprod" else REAL, scalar=False))
        holes = np.where(draw(hnp.arrays(np.bool_, shape)), np.nan, 0.0)
        axis = axis_for(draw, len(shape), allow_tuple=False)
        kws = drop_defaults(draw, {"axis": axis}, {"axis": None})
        return Example(f"np.{name}(a0 + a1{kw_text(kws)})", (x, holes), (0,))
    return draw_nan_scan


def _products(name, spelling="np"):
    """np.dot/np.inner/np.outer/np.tensordot/np.vecdot and their linalg spellings."""

    def draw_product(draw):
        if name in ("dot", "inner"):
            ra, rb = draw(st.integers(0, 3)), draw(st.integers(0, 3))
            k = draw(st.integers(1, 3))
            sa = draw(shapes(ra, ra))
            sb = draw(shapes(rb, rb))
            if ra and rb:
                if name == "dot":
                    sa = sa[:-1] + (k,)
                    sb = sb[:-2] + (k,) + sb[-1:] if rb >= 2 else (k,)
                else:
                    sa, sb = sa[:-1] + (k,), sb[:-1] + (k,)
        elif name == "outer":  # np.outer flattens; np.linalg.outer takes vectors only
            low = 1 if spelling == "np.linalg" else 0
            sa, sb = draw(shapes(low, 2 - low)), draw(shapes(low, 2 - low))
        elif name == "vecdot":
            sa, sb = draw(hnp.mutually_broadcastable_shapes(
                num_shapes=2, min_dims=1, max_dims=3, max_side=3)).input_shapes
            k = draw(st.integers(1, 3))
            sa, sb = sa[:-1] + (k,), sb[:-1] + (k,)
        else:  # tensordot
            n = draw(st.integers(0, 2))
            core = draw(shapes(n, n))
            sa = draw(shapes(0, 2)) + core
            sb = core + draw(shapes(0, 2))
            axes = n
            if n and draw(st.booleans()):  # as pairs of axis lists
                axes = (list(range(len(sa) - n, len(sa))), list(range(n)))
        a = draw(values(sa, REAL, scalar=False))
        b = draw(values(sb, REAL, scalar=False))
        kws = f", axes={axes!r}" if name == "tensordot" else ""
        if name == "dot" and draw(st.booleans()) and np.ndim(a):
            return Example(f"a0.dot(a1){kws}", (a, b), (0, 1))
        return Example(f"{spelling}.{name}(a0, a1{kws})", (a, b), (0, 1))

    return draw_product


def _vdot(draw):
    """np.vdot flattens both operands: any two shapes of the same size."""
    size = draw(st.sampled_from([1, 2, 3, 4, 6]))
    sa = draw(st.sampled_from([s for s in ((size,), (1, size), (size, 1), (2, size // 2))
                               if int(np.prod(s)) == size]))
    sb = draw(st.sampled_from([(size,), (size, 1), (1, size)]))
    return Example("np.vdot(a0, a1)", (draw(values(sa, REAL, scalar=False)),
                                        draw(values(sb, REAL, scalar=False))), (0, 1))


def _matmul(spelling):
    def draw_matmul(draw):
        ra, rb = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        k = draw(st.integers(1, 3))
        batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
        ba, bb = batch.input_shapes
        sa = (ba if ra > 1 else ()) + ((draw(st.integers(1, 3)),) if ra > 1 else ()) + (k,)
        sb = (bb if rb > 1 else ()) + (k,) + ((draw(st.integers(1, 3)),) if rb > 1 else ())
        a = draw(values(sa, REAL, scalar=False))
        b = draw(values(sb, REAL, scalar=False))
        return Example(spelling, (a, b), (0, 1))
    return draw_matmul


def _kron(draw):
    a = draw(values(draw(shapes(0, 3)), REAL, scalar=False))
    b = draw(values(draw(shapes(0, 3)), REAL, scalar=False))
    return Example("np.kron(a0, a1)", (a, b), (0, 1))


def _cross(draw):
    sa, sb = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2,
                                                   max_side=3)).input_shapes
    a = draw(values(sa + (3,), REAL, scalar=False))
    b = draw(values(sb + (3,), REAL, scalar=False))
    return Example("np.cross(a0, a1)", (a, b), (0, 1))


def _einsum(draw):
    form = draw(st.sampled_from([
        ("ij,jk->ik", (2, 3), (3, 2)), ("ij,jk", (2, 3), (3, 4)), ("ij,k->ik", (2, 3), (2,)),
        ("i,i->", (3,), (3,)), ("ijk,jk->i", (2, 3, 2), (3, 2)), ("ijk->ki", (2, 3, 2), None),
        ("ii->i", (3, 3), None), ("bij,bjk->bik", (2, 2, 3), (2, 3, 2))]))
    sub, sa, sb = form
    args = (draw(values(sa, REAL, scalar=False)),)
    if sb is not None:
        args += (draw(values(sb, REAL, scalar=False)),)
    names = ", ".join(f"a{i}" for i in range(len(args)))
    return Example(f"np.einsum({sub!r}, {names})", args, tuple(range(len(args))))


# shape and layout -------------------------------------------------------------------------


def _layout(template, min_rank=0, max_rank=4, kws=None, dom=REAL, min_side=1):
    """A one-argument layout function; `kws(draw, shape)` draws its keywords."""

    def draw_layout(draw):
        shape = draw(shapes(min_rank, max_rank, min_side=min_side))
        x = draw(values(shape, dom, scalar=False))
        options = kws(draw, shape) if kws else {}
        return Example(template.format("a0", kw=kw_text(options)), (x,), (0,))

    return draw_layout


def _reshape_kw(draw, shape):
    n = int(np.prod(shape))
    factors = [d for d in range(1, n + 1) if n % d == 0]
    d = draw(st.sampled_from(factors))
    new = draw(st.sampled_from([(n,), (d, n // d), (n // d, 1, d), (-1,), (d, -1)]))
    return {"shape": new}


def _transpose_kw(draw, shape):
    if draw(st.booleans()):
        return {}
    perm = draw(st.permutations(range(len(shape))))
    return {"axes": tuple(p - len(shape) if draw(st.booleans()) else p for p in perm)}


def _axis_pair(name1, name2):
    def kw(draw, shape):
        n = len(shape)
        return {name1: draw(st.integers(-n, n - 1)), name2: draw(st.integers(-n, n - 1))}
    return kw


def _moveaxis_kw(draw, shape):
    n = len(shape)
    if draw(st.booleans()):
        return {"source": draw(st.integers(-n, n - 1)), "destination": draw(st.integers(-n, n - 1))}
    k = draw(st.integers(1, n))
    src = tuple(draw(st.permutations(range(n)))[:k])
    dst = tuple(draw(st.permutations(range(n)))[:k])
    return {"source": src, "destination": dst}


def _expand_kw(draw, shape):
    n = len(shape) + 1
    if draw(st.booleans()):
        return {"axis": draw(st.integers(-n, n - 1))}
    k = draw(st.integers(1, 2))
    axes = draw(st.lists(st.integers(0, len(shape) + k - 1), min_size=k, max_size=k, unique=True))
    return {"axis": tuple(axes)}


def _squeeze(draw):
    shape = list(draw(shapes(0, 4)))
    ones = draw(st.lists(st.integers(0, len(shape)), max_size=2))
    for k in sorted(ones, reverse=True):
        shape.insert(k, 1)
    shape = tuple(shape)
    unit = [k for k, d in enumerate(shape) if d == 1]
    kws = {}
    if unit and draw(st.booleans()):
        pick = draw(st.lists(st.sampled_from(unit), min_size=1, max_size=len(unit), unique=True))
        kws["axis"] = pick[0] if len(pick) == 1 else tuple(pick)
    x = draw(values(shape, REAL, scalar=False))
    return Example(f"np.squeeze(a0{kw_text(kws)})", (x,), (0,))


def _broadcast_to(draw):
    target = draw(shapes(0, 4))
    k = draw(st.integers(0, len(target)))
    shape = tuple(1 if draw(st.booleans()) else d for d in target[k:])
    x = draw(values(shape, REAL, scalar=False))
    return Example(f"np.broadcast_to(a0, {target!r})", (x,), (0,))


def _join(name):
    """concatenate / stack / vstack / hstack / column_stack of 1-3 arrays."""

    def draw_join(draw):
        n = draw(st.integers(1, 3))
        seq = draw(st.sampled_from(["[{}]", "({},)"]))
        if name in ("concatenate", "stack"):
            base = draw(shapes(1 if name == "concatenate" else 0, 3))
            r = len(base) + (name == "stack")
            axis = draw(st.integers(-r, r - 1))
            shapes_ = []
            for _ in range(n):
                s = list(base)
                if name == "concatenate":
                    s[axis] = draw(st.integers(1, 3))
                shapes_.append(tuple(s))
            kws = {} if axis == 0 and draw(st.booleans()) else {"axis": axis}
            if name == "concatenate" and draw(st.integers(0, 4)) == 0:
                kws = {"axis": None}  # flattens every input first
                shapes_ = [draw(shapes(0, 3)) for _ in range(n)]
        else:
            base = draw(shapes(0, 3))
            shapes_ = [base] * n
            kws = {}
        xs = tuple(draw(values(s, REAL, scalar=False)) for s in shapes_)
        items = ", ".join(f"a{i}" for i in range(n))
        return Example(f"np.{name}({seq.format(items)}{kw_text(kws)})", xs, tuple(range(n)))

    return draw_join


def _array(draw):
    if draw(st.booleans()):  # nested lists of scalars
        rows, cols = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        xs = tuple(draw(values((), REAL, scalar=True)) for _ in range(rows * cols))
        text = ", ".join("[" + ", ".join(f"a{r * cols + c}" for c in range(cols)) + "]"
                         for r in range(rows))
        return Example(f"np.array([{text}])", xs, tuple(range(len(xs))))
    n = draw(st.integers(1, 3))
    shape = draw(shapes(0, 3))
    xs = tuple(draw(values(shape, REAL, scalar=False)) for _ in range(n))
    items = ", ".join(f"a{i}" for i in range(n))
    if draw(st.booleans()) and n == 1:
        return Example("np.array(a0)", xs, (0,))
    return Example(f"np.array([{items}])", xs, tuple(range(n)))


def _split(name):
    def draw_split(draw):
        shape = draw(shapes(1, 3, min_side=2, max_side=4))
        axis = draw(st.integers(-len(shape), len(shape) - 1))
        size = shape[axis]
        if draw(st.booleans()):
            sections = [k for k in range(1, size + 1) if name == "array_split" or size % k == 0]
            ios = draw(st.sampled_from(sections))
        else:
            ios = sorted(draw(st.lists(st.integers(0, size), min_size=1, max_size=2)))
        x = draw(values(shape, REAL, scalar=False))
        kws = drop_defaults(draw, {"axis": axis}, {"axis": 0})
        body = (f"parts = np.{name}(a0, {ios!r}{kw_text(kws)})\n"
                "return parts[0] * 2.0, parts[-1]")
        return Example(body, (x,), (0,))
    return draw_split


def _unstack(draw):
    shape = draw(shapes(1, 4))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    kws = drop_defaults(draw, {"axis": axis}, {"axis": 0})
    body = f"parts = np.unstack(a0{kw_text(kws)})\nreturn parts[0] * 2.0, parts[-1]"
    return Example(body, (draw(values(shape, REAL, scalar=False)),), (0,))


def _repeat(draw):
    shape = draw(shapes(0, 3))
    x = draw(values(shape, REAL, scalar=False))
    axis = axis_for(draw, len(shape), allow_tuple=False)
    n = x.size if axis is None else shape[axis]
    if draw(st.booleans()):
        reps = repr(draw(st.integers(0, 3)))
    else:
        reps = f"np.array({draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))!r})"
    kws = drop_defaults(draw, {"axis": axis}, {"axis": None})
    if draw(st.booleans()) and shape:
        return Example(f"a0.repeat({reps}{kw_text(kws)})", (x,), (0,))
    return Example(f"np.repeat(a0, {reps}{kw_text(kws)})", (x,), (0,))


def _tile_kw(draw, shape):
    if draw(st.booleans()):
        return {"reps": draw(st.integers(1, 3))}
    return {"reps": tuple(draw(st.lists(st.integers(1, 2), min_size=1, max_size=4)))}


def _roll_kw(draw, shape):
    if draw(st.booleans()) or not shape:
        return {"shift": draw(st.integers(-4, 4))}
    axis = axis_for(draw, len(shape), allow_none=False)
    if isinstance(axis, tuple):
        shift = tuple(draw(st.integers(-4, 4)) for _ in axis)
        if draw(st.booleans()):
            shift = shift[0]
    else:
        shift = draw(st.integers(-4, 4))
    return {"shift": shift, "axis": axis}


def _flip_kw(draw, shape):
    return drop_defaults(draw, {"axis": axis_for(draw, len(shape))}, {"axis": None})


def _rot90_kw(draw, shape):
    n = len(shape)
    a, b = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
    return drop_defaults(draw, {"k": draw(st.integers(-4, 4)), "axes": (a, b)},
                         {"k": 1, "axes": (0, 1)})


def _pad(draw):
    shape = draw(shapes(1, 3, min_side=2))
    x = draw(values(shape, REAL, scalar=False))
    kind = draw(st.sampled_from(["int", "pair", "each"]))
    if kind == "int":
        width = draw(st.integers(0, 2))
    elif kind == "pair":
        width = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    else:
        width = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in shape)
    mode = draw(st.sampled_from(["constant", "constant", "edge", "reflect", "symmetric",
                                 "wrap"]))
    kws = {} if mode == "constant" and draw(st.booleans()) else {"mode": mode}
    if mode == "constant" and draw(st.booleans()):
        kws["constant_values"] = draw(st.sampled_from([0.0, 0.5, -1.0]))
    return Example(f"np.pad(a0, {width!r}{kw_text(kws)})", (x,), (0,))


def _full(draw):
    shape = draw(shapes(0, 3))
    fill_shape = draw(st.sampled_from([(), shape[-1:] if shape else ()]))
    fill = draw(values(fill_shape, REAL, scalar=not fill_shape))
    if draw(st.booleans()):
        return Example(f"np.full({shape!r}, a0) * 1.5", (fill,), (0,))
    like = draw(values(shape, REAL, scalar=False))
    return Example("np.full_like(a0, a1) * a0", (like, fill), (0, 1))


def _arange(draw):
    start = draw(values((), REAL, scalar=True))
    n = draw(st.integers(1, 6))
    step = draw(st.sampled_from([0.5, 1.0, -0.75]))
    # a stop half a step past the last value: its count does not change under the finite
    # differences' steps
    stop = start + (n - 0.5) * step
    return Example("np.arange(a0, a1, a2) ** 2", (start, stop, step), (0, 1, 2))


def _linspace(draw):
    shape = draw(st.sampled_from([(), (2,), (2, 3)]))
    start = draw(values(shape, REAL, scalar=not shape))
    stop = draw(values(draw(st.sampled_from([(), shape])), REAL, scalar=None))
    num = draw(st.integers(1, 5))
    kws = drop_defaults(draw, {"endpoint": draw(st.booleans())}, {"endpoint": True})
    return Example(f"np.sin(np.linspace(a0, a1, {num}{kw_text(kws)}))", (start, stop), (0, 1))


def _diag(draw):
    shape = draw(shapes(1, 2))
    kws = drop_defaults(draw, {"k": draw(st.integers(-2, 2))}, {"k": 0})
    return Example(f"np.diag(a0{kw_text(kws)})", (draw(values(shape, REAL, scalar=False)),),
                   (0,))


def _diagonal(draw):
    shape = draw(shapes(2, 4))
    a1, a2 = draw(st.lists(st.integers(0, len(shape) - 1), min_size=2, max_size=2, unique=True))
    kws = drop_defaults(draw, {"offset": draw(st.integers(-2, 2)), "axis1": a1, "axis2": a2},
                        {"offset": 0, "axis1": 0, "axis2": 1})
    x = draw(values(shape, REAL, scalar=False))
    if not kws and draw(st.booleans()):
        return Example("a0.diagonal()", (x,), (0,))
    return Example(f"np.diagonal(a0{kw_text(kws)})", (x,), (0,))


def _tri_kw(draw, shape):
    return drop_defaults(draw, {"k": draw(st.integers(-2, 2))}, {"k": 0})


def _astype_np(draw):
    shape = draw(shapes(0, 3))
    x = draw(values(shape, REAL, scalar=False))
    if draw(st.booleans()):
        return Example("np.astype(a0, np.float64)", (x,), (0,))
    return Example("a0.astype(np.float64)", (x,), (0,))


def _astype_intrinsic(draw):
    x = draw(values(draw(shapes(0, 3)), REAL, scalar=False))
    return Example("_astype(a0, np.float64)", (x,), (0,))


def _sort(draw):
    shape = draw(shapes(0, 4))
    x = draw(values(shape, REAL, scalar=False))
    axis = axis_for(draw, len(shape), allow_tuple=False) if shape else None
    kws = {"axis": axis} if axis != -1 or draw(st.booleans()) else {}
    if draw(st.booleans()):
        kws["kind"] = draw(st.sampled_from(["quicksort", "stable", "mergesort", "heapsort"]))
    return Example(f"np.sort(a0{kw_text(kws)})", (x,), (0,))


def _take(draw):
    shape = draw(shapes(1, 3))
    x = draw(values(shape, REAL, scalar=False))
    axis = axis_for(draw, len(shape), allow_tuple=False)
    n = x.size if axis is None else shape[axis]
    mode = draw(st.sampled_from([None, "raise", "wrap", "clip"]))
    hi = n - 1 if mode in (None, "raise") else n + 2
    if draw(st.booleans()):
        idx = repr(draw(st.integers(-n if mode in (None, "raise") else -3, hi)))
    else:
        ishape = draw(shapes(0, 2))
        flat = draw(st.lists(st.integers(0 if mode in (None, "raise") else -3, hi),
                             min_size=int(np.prod(ishape)), max_size=int(np.prod(ishape))))
        idx = f"np.array({np.array(flat, dtype=int).reshape(ishape).tolist()!r})"
    kws = {} if axis is None and draw(st.booleans()) else {"axis": axis}
    if mode is not None:
        kws["mode"] = mode
    if draw(st.booleans()) and "mode" not in kws:
        return Example(f"a0.take({idx}{kw_text(kws)})", (x,), (0,))
    return Example(f"np.take(a0, {idx}{kw_text(kws)})", (x,), (0,))


def _take_along(draw):
    shape = draw(shapes(1, 3))
    x = draw(values(shape, REAL, scalar=False))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    if draw(st.booleans()):
        return Example(f"np.take_along_axis(a0, np.argsort(a0, axis={axis}), axis={axis})",
                       (x,), (0,))
    ishape = list(shape)
    ishape[axis] = draw(st.integers(1, 3))
    ishape = [1 if draw(st.booleans()) and k != axis % len(shape) else d
              for k, d in enumerate(ishape)]
    idx = draw(hnp.arrays(np.int64, tuple(ishape), elements=st.integers(0, shape[axis] - 1)))
    return Example(f"np.take_along_axis(a0, np.array({idx.tolist()!r}), axis={axis})",
                   (x,), (0,))


def _select(draw):
    shape = draw(shapes(0, 3))
    x = draw(values(shape, REAL, scalar=False))
    y = draw(values(shape, REAL, scalar=False))
    return Example("np.select([a0 > 0.3, a0 < -0.3], [a0 * a1, a1], 2.0 * a0)", (x, y),
                   (0, 1))


def _getitem(draw):
    shape = draw(shapes(1, 4, max_side=4))
    x = draw(values(shape, REAL, scalar=False))
    kind = draw(st.sampled_from(["basic", "int", "fancy", "mask", "ellipsis"]))
    if kind == "basic":
        idx = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
        text = _index_text(idx)
    elif kind == "int":
        text = str(draw(st.integers(-shape[0], shape[0] - 1)))
    elif kind == "fancy":
        flat = draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=1, max_size=4))
        text = f"np.array({flat!r})"
    elif kind == "ellipsis":
        text = f"..., {draw(st.integers(-shape[-1], shape[-1] - 1))}"
    else:
        return Example("a0[a0 > 0.0]", (x,), (0,))
    return Example(f"a0[{text}]", (x,), (0,))


def _index_text(idx) -> str:
    def one(i):
        if i is None:
            return "None"
        if i is Ellipsis:
            return "..."
        if isinstance(i, slice):
            parts = ["" if v is None else str(v) for v in (i.start, i.stop, i.step)]
            return ":".join(parts[:2]) + (f":{parts[2]}" if parts[2] else "")
        return str(i)
    if not isinstance(idx, tuple):
        idx = (idx,)
    if not idx:
        return "()"
    return ", ".join(one(i) for i in idx) + ("," if len(idx) == 1 else "")


def _attr_T(draw):
    return Example("a0.T", (draw(values(draw(shapes(0, 4)), REAL, scalar=False)),), (0,))


def _matrix_transpose(spelling):
    def draw_mt(draw):
        x = draw(values(draw(shapes(2, 4)), REAL, scalar=False))
        return Example(f"{spelling}(a0)", (x,), (0,))
    return draw_mt


def _atleast(n):
    def draw_atleast(draw):
        x = draw(values(draw(shapes(0, 4)), REAL))
        return Example(f"np.atleast_{n}d(a0)", (x,), (0,))
    return draw_atleast


# compiler intrinsics and rule helpers ----------------------------------------------------


def _unbroadcast(draw):
    target, extra = draw(shapes(0, 3)), draw(shapes(0, 2))
    big = extra + tuple(d if draw(st.booleans()) else 1 for d in target)
    small = tuple(1 if draw(st.booleans()) else d for d in target)
    g = draw(values(np.broadcast_shapes(big, small), REAL, scalar=False))
    x = draw(values(small, REAL, scalar=False))
    return Example("unbroadcast(a0, a1)", (g, x), (0,))


def _cast_like(draw):
    s = draw(shapes(0, 3))
    g = draw(values(s, REAL, scalar=False))
    x = draw(values(s, REAL, scalar=False))
    return Example("cast_like(a0, a1)", (g, x), (0,))


def _broadcast_like(draw):
    s0, s1 = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3)).input_shapes
    s1 = np.broadcast_shapes(s0, s1)
    t = draw(values(s0, REAL, scalar=False))
    x = draw(values(s1, REAL, scalar=False))
    return Example("broadcast_like(a0, a1)", (t, x), (0,))


def _index_add(draw):
    n = draw(st.integers(1, 4))
    tail = draw(shapes(0, 2))
    idx = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
    acc = draw(values((n,) + tail, REAL, scalar=False))
    g = draw(values((len(idx),) + tail, REAL, scalar=False))
    return Example(f"index_add(a0, np.array({idx!r}), a1)", (acc, g), (0, 1))


def _index_update(draw):
    shape = draw(shapes(1, 3))
    x = draw(values(shape, REAL, scalar=False))
    idx = draw(hnp.basic_indices(shape, allow_ellipsis=False))
    v = draw(values(np.shape(x[idx]), REAL, scalar=False))
    body = f"b = a0 * 1.0\nb[{_index_text(idx)}] = a1\nreturn b"
    return Example(body, (x, v), (0, 1))


def _filled_diagonal(draw):
    shape = draw(st.sampled_from([(2, 3), (3, 2), (3, 3), (2, 2, 2)]))
    x = draw(values(shape, REAL, scalar=False))
    n = min(shape)
    v = draw(values(draw(st.sampled_from([(), (n,), (max(n - 1, 1),)])), REAL))
    body = "b = a0 * 1.0\nnp.fill_diagonal(b, a1)\nreturn b"
    return Example(body, (x, v), (0, 1))


def _reshape_items(draw):
    n = draw(st.integers(1, 3))
    like = [draw(shapes(0, 2)) for _ in range(n)]
    parts = tuple(draw(values((int(np.prod(s)),), REAL, scalar=False)) for s in like)
    items = ", ".join(f"a{i}" for i in range(n))
    likes = ", ".join(f"np.zeros({s!r})" for s in like)
    body = f"parts = reshape_items([{items}], [{likes}])\nreturn parts[0], parts[-1]"
    return Example(body, parts, tuple(range(n)))


# numpy.linalg -------------------------------------------------------------------------------


@st.composite
def matrices(draw, kind="general", square=True, min_n=1, max_n=3, batch=True):
    b = draw(shapes(0, 1 if batch else 0, max_side=2))
    n = draw(st.integers(min_n, max_n))
    m = n if square else draw(st.integers(min_n, max_n))
    a = draw(values(b + (n, m), UNIT, scalar=False))
    if kind == "wellcond":
        a = a + 3.0 * np.eye(n, m)
    elif kind == "spd":
        a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    elif kind == "distinct":  # symmetric, well-separated eigenvalues
        a = 0.5 * (a + np.swapaxes(a, -1, -2)) * 0.2 + np.diag(np.arange(n) * 1.0)
    elif kind == "separated":  # well-separated singular values
        k = min(n, m)
        a = a * 0.1 + np.eye(n, m) * np.concatenate([np.arange(k, 0, -1), np.zeros(0)])[
            np.minimum(np.arange(m), k - 1)]
    return a


# cholesky, eigh, eigvalsh read one triangle (and their rules differentiate that: see
# s2sad_rules/numpy_linalg.py and tests/test_issue36_complex_linalg.py); the examples take
# the Hermitian part, so that any input is a matrix they factor.
SYM = "0.5 * ({0} + np.conj(np.swapaxes({0}, -1, -2)))"


def _linalg(template, kind="general", square=True, min_n=1, batch=True, kws=None):
    def draw_linalg(draw):
        a = draw(matrices(kind, square, min_n=min_n, batch=batch))
        options = kws(draw, a) if kws else {}
        return Example(template.format("a0", kw=kw_text(options)), (a,), (0,), rtol=1e-4)
    return draw_linalg


def _solve(draw):
    a = draw(matrices("wellcond", batch=False))
    n = a.shape[-1]
    b = draw(values(draw(st.sampled_from([(n,), (n, 1), (n, 2)])), REAL, scalar=False))
    return Example("np.linalg.solve(a0, a1)", (a, b), (0, 1), rtol=1e-4)


def _eigh(draw):
    a = draw(matrices("distinct"))
    kws = {"UPLO": draw(st.sampled_from(["L", "U"]))} if draw(st.booleans()) else {}
    body = (f"w, v = np.linalg.eigh({SYM.format('a0')}{kw_text(kws)})\n"
            "return w, v * np.conj(v[..., :1, :])")  # phase-invariant in each eigenvector
    return Example(body, (a,), (0,), rtol=1e-4)


def _svd(draw):
    a = draw(matrices("separated", square=False, batch=False))
    compute_uv = draw(st.booleans())
    full = draw(st.booleans()) and a.shape[0] == a.shape[1]
    if not compute_uv:
        return Example("np.linalg.svd(a0, compute_uv=False)", (a,), (0,), rtol=1e-4)
    kws = {"full_matrices": full}
    body = (f"u, s, vh = np.linalg.svd(a0{kw_text(kws)})\n"
            "k = s.shape[-1]\n"
            "return s, u[:, :k] * vh[:k, :1].T")  # sign-invariant in each singular pair
    return Example(body, (a,), (0,), rtol=1e-4)


def _qr(draw):
    b = ()
    n = draw(st.integers(1, 3))
    m = draw(st.integers(1, n))  # tall or square: the QR rule's domain
    a = draw(values(b + (n, m), UNIT, scalar=False)) + np.eye(n, m) * 2.0
    mode = draw(st.sampled_from([None, "reduced", "r", "complete"]))
    if mode == "r":
        return Example("np.linalg.qr(a0, mode='r')", (a,), (0,), refused="mode='r'")
    if mode == "complete":
        return Example("q, r = np.linalg.qr(a0, mode='complete')\nreturn q, r", (a,), (0,),
                       refused="mode='complete'")
    kws = {} if mode is None else {"mode": mode}
    return Example(f"q, r = np.linalg.qr(a0{kw_text(kws)})\nreturn q, r", (a,), (0,),
                   rtol=1e-4)


def _slogdet(draw):
    a = draw(matrices("wellcond"))
    return Example("sign, logdet = np.linalg.slogdet(a0)\nreturn sign * logdet", (a,), (0,),
                   rtol=1e-4)


def _uplo_kw(draw, a):
    return {"UPLO": draw(st.sampled_from(["L", "U"]))} if draw(st.booleans()) else {}


def _matrix_power_kw(draw, a):
    return {"n": draw(st.integers(-2, 3))}


def _norm(draw):
    shape = draw(shapes(1, 3))
    x = draw(values(shape, REAL, scalar=False))
    nd = len(shape)
    axis = draw(st.sampled_from([None] + list(range(-nd, nd)) + (
        [(0, 1), (-1, -2)] if nd >= 2 else [])))
    if isinstance(axis, tuple) or (axis is None and nd == 2):
        ords = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]
    elif axis is None and nd > 2:
        ords = [None]
    else:
        ords = [None, 1, 2, 3, 0.5, np.inf, -np.inf]
    ord_ = draw(st.sampled_from(ords))
    kws = drop_defaults(draw, {"ord": ord_, "axis": axis, "keepdims": draw(st.booleans())},
                        {"ord": None, "axis": None, "keepdims": False})
    text = kw_text(kws).replace("inf", "np.inf")
    matrix = isinstance(axis, tuple) or (axis is None and nd == 2 and ord_ is not None)
    return Example(f"np.linalg.norm(a0{text})", (x,), (0,), rtol=1e-4,
                   notes=(("matrix", matrix), ("ord", ord_)))


def _vector_norm(draw):
    shape = draw(shapes(0, 3))
    x = draw(values(shape, REAL, scalar=False))
    kws = {"axis": axis_for(draw, len(shape)), "keepdims": draw(st.booleans()),
           "ord": draw(st.sampled_from([2, 1, 3, 0.5, np.inf, -np.inf]))}
    kws = drop_defaults(draw, kws, {"axis": None, "keepdims": False, "ord": 2})
    text = kw_text(kws).replace("inf", "np.inf")
    return Example(f"np.linalg.vector_norm(a0{text})", (x,), (0,), rtol=1e-4)


def _pinv(draw):
    a = draw(matrices("separated", square=False, batch=False))
    return Example("np.linalg.pinv(a0)", (a,), (0,), rtol=1e-4)


# -- the table: rule key -> strategy of Examples ------------------------------------------


def _np_unary(name, dom=REAL):
    return unary(f"np.{name}({{0}})", dom)


def _math_unary(name, dom=REAL):
    return unary(f"math.{name}({{0}})", dom, scalar_only=True)


SPECS = {
    # operators and builtins
    operator.add: binary("{0} + {1}"), operator.sub: binary("{0} - {1}"),
    operator.mul: binary("{0} * {1}"), operator.truediv: binary("{0} / {1}", REAL, NONZERO),
    operator.pow: binary("{0} ** {1}", POS, REAL), operator.mod: binary("{0} % {1}", REAL, POS),
    operator.neg: unary("-{0}"), operator.pos: unary("+{0}"),
    operator.matmul: custom(_matmul("a0 @ a1")), operator.getitem: custom(_getitem),
    abs: unary("abs({0})"), float: custom(_float), pow: binary("pow({0}, {1})", POS, REAL),
    max: custom(_nary("max({0})")), min: custom(_nary("min({0})")),
    np.float64: unary("np.float64({0}) * {0}"),
    complex: unary("np.real(complex({0}) * (1.0 + 2.0j)) * {0}", scalar_only=True),
    np.complex128: unary("np.imag(np.complex128({0}) * (2.0 - 1.0j)) * {0}"),
    sum: st.one_of(seq("sum({0})"), custom(_sum_arrays)),
    # math
    math.acos: _math_unary("acos", UNIT), math.acosh: _math_unary("acosh", ABOVE1),
    math.asin: _math_unary("asin", UNIT), math.asinh: _math_unary("asinh"),
    math.atan: _math_unary("atan"), math.atanh: _math_unary("atanh", UNIT),
    math.cos: _math_unary("cos"),
    math.cosh: _math_unary("cosh"), math.degrees: _math_unary("degrees"),
    math.erf: _math_unary("erf"), math.erfc: _math_unary("erfc"),
    math.exp: _math_unary("exp"),
    math.expm1: _math_unary("expm1"), math.fabs: _math_unary("fabs"),
    math.gamma: _math_unary("gamma", POS), math.lgamma: _math_unary("lgamma", POS),
    math.log10: _math_unary("log10", POS), math.log1p: _math_unary("log1p", UNIT),
    math.log2: _math_unary("log2", POS), math.radians: _math_unary("radians"),
    math.sin: _math_unary("sin"), math.sinh: _math_unary("sinh"),
    math.sqrt: _math_unary("sqrt", POS), math.tan: _math_unary("tan", SMALL),
    math.tanh: _math_unary("tanh"), math.log: custom(_math_log),
    math.atan2: binary("math.atan2({0}, {1})", NONZERO, NONZERO, scalar_only=True),
    math.copysign: binary("math.copysign({0}, {1})", REAL, NONZERO, scalar_only=True),
    math.fmod: binary("math.fmod({0}, {1})", REAL, POS, scalar_only=True),
    math.remainder: binary("math.remainder({0}, {1})", REAL, POS, scalar_only=True),
    math.hypot: custom(_nary("math.hypot({0})", NONZERO, 1, 4)),
    math.pow: binary("math.pow({0}, {1})", POS, REAL, scalar_only=True),
    math.ldexp: custom(_ldexp), math.dist: custom(_dist),
    math.fsum: seq("math.fsum({0})"), math.prod: seq("math.prod({0})", NONZERO),
    # numpy elementwise, one argument
    np.absolute: _np_unary("abs"), np.arccos: _np_unary("arccos", UNIT),
    np.arccosh: _np_unary("arccosh", ABOVE1), np.arcsin: _np_unary("arcsin", UNIT),
    np.arcsinh: _np_unary("arcsinh"), np.arctan: _np_unary("arctan"),
    np.arctanh: _np_unary("arctanh", UNIT), np.cbrt: _np_unary("cbrt", NONZERO),
    np.conjugate: st.one_of(_np_unary("conj"), _np_unary("conjugate")),
    np.cos: _np_unary("cos"), np.cosh: _np_unary("cosh"), np.deg2rad: _np_unary("deg2rad"),
    np.degrees: _np_unary("degrees"), np.exp: _np_unary("exp"), np.exp2: _np_unary("exp2"),
    np.expm1: _np_unary("expm1"), np.fabs: _np_unary("fabs"), np.log: _np_unary("log", POS),
    np.log10: _np_unary("log10", POS), np.log1p: _np_unary("log1p", UNIT),
    np.log2: _np_unary("log2", POS),
    np.negative: _np_unary("negative"), np.positive: _np_unary("positive"),
    np.nan_to_num: st.one_of(_np_unary("nan_to_num"), custom(_nan_to_num)),
    np.rad2deg: _np_unary("rad2deg"), np.radians: _np_unary("radians"),
    np.real: _np_unary("real"), np.imag: _np_unary("imag"),
    np.reciprocal: _np_unary("reciprocal", NONZERO), np.sin: _np_unary("sin"),
    np.sinc: _np_unary("sinc"), np.sinh: _np_unary("sinh"), np.sqrt: _np_unary("sqrt", POS),
    np.square: _np_unary("square"), np.tan: _np_unary("tan", SMALL),
    np.tanh: _np_unary("tanh"), np.clip: custom(_clip),
    Attr("real"): unary("{0}.real", min_rank=1), Attr("imag"): unary("{0}.imag", min_rank=1),
    Attr("T"): custom(_attr_T),
    # numpy elementwise, two arguments
    np.add: binary("np.add({0}, {1})"), np.subtract: binary("np.subtract({0}, {1})"),
    np.multiply: binary("np.multiply({0}, {1})"),
    np.divide: st.one_of(binary("np.divide({0}, {1})", REAL, NONZERO),
                         binary("np.true_divide({0}, {1})", REAL, NONZERO)),
    np.power: binary("np.power({0}, {1})", POS, REAL),
    np.float_power: binary("np.float_power({0}, {1})", POS, REAL),
    np.maximum: binary("np.maximum({0}, {1})"), np.minimum: binary("np.minimum({0}, {1})"),
    np.heaviside: binary("np.heaviside({0}, {1}) * {0}", NONZERO, REAL),
    np.fmax: binary("np.fmax({0}, {1})"), np.fmin: binary("np.fmin({0}, {1})"),
    np.logaddexp: binary("np.logaddexp({0}, {1})"),
    np.logaddexp2: binary("np.logaddexp2({0}, {1})"),
    np.arctan2: binary("np.arctan2({0}, {1})", NONZERO, NONZERO),
    np.hypot: binary("np.hypot({0}, {1})", NONZERO, NONZERO),
    np.remainder: st.one_of(binary("np.mod({0}, {1})", REAL, POS),
                            binary("np.remainder({0}, {1})", REAL, POS)),
    np.fmod: binary("np.fmod({0}, {1})", REAL, POS),
    np.divmod: binary("np.divmod({0}, {1})", REAL, POS),
    divmod: binary("divmod({0}, {1})", REAL, POS),
    np.copysign: binary("np.copysign({0}, {1})", REAL, NONZERO),
    np.where: custom(_where),
    # reductions and scans
    np.sum: st.one_of(reduction("np.sum({0}{kw})", extra=_sum_options),
                      reduction("{0}.sum({kw})", min_rank=1, extra=_sum_options)),
    np.mean: st.one_of(reduction("np.mean({0}{kw})"), custom(_mean_where)),
    np.prod: reduction("np.prod({0}{kw})", NONZERO, extra=_sum_options),
    np.max: reduction("np.max({0}{kw})", extra=_extreme_options("max")),
    np.min: reduction("np.min({0}{kw})", extra=_extreme_options("min")),
    np.amax: reduction("np.amax({0}{kw})", extra=_extreme_options("amax")),
    np.amin: reduction("np.amin({0}{kw})", extra=_extreme_options("amin")),
    np.ptp: reduction("np.ptp({0}{kw})"), np.std: custom(_moments("std")),
    np.var: custom(_moments("var")), np.nansum: custom(_nan_reduction("nansum")),
    np.nanmean: custom(_nan_reduction("nanmean")), np.average: custom(_average),
    np.nanmax: custom(_nan_reduction("nanmax")), np.nanmin: custom(_nan_reduction("nanmin")),
    np.polyval: custom(_polyval), np.convolve: custom(_convolve("convolve")),
    np.correlate: custom(_convolve("correlate")), np.interp: custom(_interp),
    np.trapezoid: custom(_trapezoid),
    np.cumsum: custom(_scan("cumsum")), np.cumprod: custom(_scan("cumprod")),
    **({np.cumulative_sum: custom(_cumulative_sum)} if hasattr(np, "cumulative_sum") else {}),
    np.ediff1d: custom(_ediff1d),
    np.median: custom(_quantile("median")), np.quantile: custom(_quantile("quantile")),
    np.percentile: custom(_quantile("percentile")),
    np.nanprod: custom(_nan_reduction("nanprod", NONZERO)),
    np.nanvar: custom(_nan_reduction("nanvar")), np.nanstd: custom(_nan_reduction("nanstd")),
    np.nancumsum: custom(_nan_scan("nancumsum")), np.nancumprod: custom(_nan_scan("nancumprod")),
    np.diff: custom(_diff), np.trace: custom(_trace),
    # products
    np.dot: custom(_products("dot")), np.inner: custom(_products("inner")),
    np.outer: custom(_products("outer")),
    np.linalg.outer: custom(_products("outer", "np.linalg")),
    np.tensordot: custom(_products("tensordot")),
    np.linalg.tensordot: custom(_products("tensordot", "np.linalg")),
    np.vecdot: custom(_products("vecdot")), np.vdot: custom(_vdot),
    np.linalg.vecdot: custom(_products("vecdot", "np.linalg")),
    np.matmul: custom(_matmul("np.matmul(a0, a1)")),
    np.linalg.matmul: custom(_matmul("np.linalg.matmul(a0, a1)")),
    np.kron: custom(_kron), np.cross: custom(_cross), np.einsum: custom(_einsum),
    # shape, layout, construction
    np.array: custom(_array), np.asarray: _np_unary("asarray"), np.copy: _np_unary("copy"),
    np.ravel: st.one_of(_np_unary("ravel"), unary("{0}.flatten()", min_rank=1)),
    np.reshape: st.one_of(custom(_layout("np.reshape({0}{kw})", kws=_reshape_kw)),
                          custom(_layout("{0}.reshape({kw})", 1, kws=_reshape_kw)).map(
                              lambda e: Example(e.body.replace("shape=", ""), e.args, e.wrt))),
    np.transpose: custom(_layout("np.transpose({0}{kw})", kws=_transpose_kw)),
    np.swapaxes: custom(_layout("np.swapaxes({0}{kw})", 1, kws=_axis_pair("axis1", "axis2"))),
    np.moveaxis: custom(_layout("np.moveaxis({0}{kw})", 1, kws=_moveaxis_kw)),
    np.expand_dims: custom(_layout("np.expand_dims({0}{kw})", 0, 3, kws=_expand_kw)),
    np.squeeze: custom(_squeeze), np.broadcast_to: custom(_broadcast_to),
    np.atleast_1d: custom(_atleast(1)), np.atleast_2d: custom(_atleast(2)),
    np.atleast_3d: custom(_atleast(3)),
    np.concatenate: custom(_join("concatenate")), np.stack: custom(_join("stack")),
    np.vstack: custom(_join("vstack")), np.hstack: custom(_join("hstack")),
    np.column_stack: custom(_join("column_stack")),
    np.split: custom(_split("split")), np.array_split: custom(_split("array_split")),
    np.unstack: custom(_unstack), np.repeat: custom(_repeat),
    np.tile: custom(_layout("np.tile({0}{kw})", kws=_tile_kw)),
    np.roll: custom(_layout("np.roll({0}{kw})", kws=_roll_kw)),
    np.flip: custom(_layout("np.flip({0}{kw})", kws=_flip_kw)),
    np.fliplr: custom(_layout("np.fliplr({0})", 2)),
    np.flipud: custom(_layout("np.flipud({0})", 1)),
    np.rot90: custom(_layout("np.rot90({0}{kw})", 2, kws=_rot90_kw)),
    np.pad: custom(_pad), np.diag: custom(_diag), np.diagonal: custom(_diagonal),
    np.full: custom(_full), np.full_like: custom(_full), np.arange: custom(_arange),
    np.linspace: custom(_linspace),
    np.triu: custom(_layout("np.triu({0}{kw})", 1, kws=_tri_kw)),
    np.tril: custom(_layout("np.tril({0}{kw})", 1, kws=_tri_kw)),
    np.matrix_transpose: custom(_matrix_transpose("np.matrix_transpose")),
    np.linalg.matrix_transpose: custom(_matrix_transpose("np.linalg.matrix_transpose")),
    np.astype: custom(_astype_np), _astype: custom(_astype_intrinsic),
    np.sort: custom(_sort), np.take: custom(_take), np.take_along_axis: custom(_take_along),
    np.select: custom(_select),
    # compiler intrinsics (called directly; the compiler emits them for broadcasting, a[i] = v)
    unbroadcast: custom(_unbroadcast), broadcast_like: custom(_broadcast_like),
    cast_like: custom(_cast_like),
    index_add: custom(_index_add), index_update: custom(_index_update),
    filled_diagonal: custom(_filled_diagonal),
    reshape_items: custom(_reshape_items),
    # numpy.linalg
    np.linalg.inv: custom(_linalg("np.linalg.inv({0})", "wellcond")),
    np.linalg.det: custom(_linalg("np.linalg.det({0})", "wellcond")),
    cofactor: custom(_linalg("cofactor({0})", "wellcond")),
    np.linalg.slogdet: custom(_slogdet), np.linalg.solve: custom(_solve),
    np.linalg.cholesky: custom(_linalg(f"np.linalg.cholesky({SYM})", "spd")),
    np.linalg.eigh: custom(_eigh),
    np.linalg.eigvalsh: custom(_linalg(f"np.linalg.eigvalsh({SYM}{{kw}})", "distinct",
                                       kws=_uplo_kw)),
    np.linalg.svd: custom(_svd),
    np.linalg.svdvals: custom(_linalg("np.linalg.svdvals({0})", "separated", square=False,
                                      batch=False)),
    np.linalg.qr: custom(_qr), np.linalg.pinv: custom(_pinv),
    np.linalg.matrix_power: custom(_linalg("np.linalg.matrix_power({0}{kw})", "wellcond",
                                           kws=_matrix_power_kw)),
    np.linalg.norm: custom(_norm), np.linalg.vector_norm: custom(_vector_norm),
}

# math.cbrt and math.exp2 exist from Python 3.11 (their rules are registered only there)
SPECS.update({getattr(math, name): _math_unary(name, dom)
              for name, dom in (("cbrt", NONZERO), ("exp2", REAL)) if hasattr(math, name)})


# -- the rules added for issue #13 (FFT, splits, partition, ...) ---------------------------


def _angle(draw):
    shape = draw(shapes(0, 3))
    re, im = draw(values(shape, POS, scalar=False)), draw(values(shape, REAL, scalar=False))
    return Example("np.angle(a0 + 1j * a1)", (re, im), (0, 1), rtol=1e-4)


def _append(draw):
    shape = draw(shapes(1, 3))
    axis = draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    other = list(shape)
    if axis is not None:
        other[axis] = draw(st.integers(1, 3))
    x, y = draw(values(shape, REAL, scalar=False)), draw(values(tuple(other), REAL,
                                                                   scalar=False))
    kws = drop_defaults(draw, {"axis": axis}, {"axis": None})
    return Example(f"np.append(a0, a1{kw_text(kws)})", (x, y), (0, 1))


def _split_along(name, axis, min_rank):
    def draw_split(draw):
        shape = list(draw(shapes(min_rank, 3, min_side=1, max_side=3)))
        ax = axis if len(shape) > 1 or name != "hsplit" else 0
        shape[ax] = draw(st.sampled_from([2, 4]))
        sections = draw(st.sampled_from([1, 2]))
        x = draw(values(tuple(shape), REAL, scalar=False))
        body = f"parts = np.{name}(a0, {sections})\nreturn parts[0] * 2.0, parts[-1]"
        return Example(body, (x,), (0,))
    return draw_split


def _rollaxis(draw):
    shape = draw(shapes(1, 4))
    n = len(shape)
    axis, start = draw(st.integers(-n, n - 1)), draw(st.integers(-n, n))
    return Example(f"np.rollaxis(a0, {axis}, {start})",
                   (draw(values(shape, REAL, scalar=False)),), (0,))


def _partition(draw):
    shape = draw(shapes(1, 3, min_side=2))
    axis = draw(st.sampled_from([None, -1] + list(range(len(shape)))))
    size = int(np.prod(shape)) if axis is None else shape[axis]
    kth = draw(st.integers(0, size - 1))
    x = draw(values(shape, REAL, scalar=False))
    return Example(f"np.partition(a0, {kth}, axis={axis!r})", (x,), (0,))


def _prod_others(draw):
    shape = draw(shapes(0, 3))
    x = draw(values(shape, NONZERO, scalar=False))
    axis, keepdims = axis_for(draw, len(shape), allow_tuple=True), draw(st.booleans())
    total = f"np.prod(a0, axis={axis!r}, keepdims={keepdims})"
    return Example(f"prod_others(a0, {axis!r}, {keepdims}, {total})", (x,), (0,))


def _real_if_close(draw):
    shape = draw(shapes(0, 3))
    return Example("np.real_if_close(a0) * 2.0", (draw(values(shape, REAL, scalar=False)),),
                   (0,))


def _gradient(draw):
    edge = draw(st.sampled_from([1, 2]))
    shape = list(draw(shapes(1, 3, min_side=2)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    shape[axis] = max(shape[axis], edge + 1)
    h = draw(st.sampled_from([1.0, 0.5, 2.0]))
    kws = {"axis": axis, "edge_order": edge} if len(shape) > 1 or draw(st.booleans()) else \
        {"edge_order": edge}
    x = draw(values(tuple(shape), REAL, scalar=False))
    return Example(f"np.gradient(a0, {h}{kw_text(kws)})", (x,), (0,))


def _eig(draw):
    n = draw(st.integers(1, 3))
    a = np.diag(np.arange(n) * 1.5 + 1.0) + 0.1 * draw(values((n, n), UNIT, scalar=False))
    # real parts: the second-order checks take the gradient of a real sum (NumPy >= 2.5
    # returns complex eigenvalues for a real matrix)
    return Example("w, v = np.linalg.eig(a0)\nreturn np.real(w), np.imag(w)", (a,), (0,),
                   rtol=1e-4)


def _fft_kw(draw, shape, one_axis, allow_n=True):
    kws: dict = {}
    n = len(shape)
    if one_axis:
        axis = draw(st.integers(-n, n - 1))
        if draw(st.booleans()):
            kws["axis"] = axis
        if allow_n and draw(st.booleans()):
            kws["n"] = draw(st.integers(2, 5))
    else:
        k = draw(st.integers(1, n))
        axes = tuple(sorted(draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k,
                                          unique=True))))
        kws["axes"] = axes
        if allow_n and draw(st.booleans()):
            kws["s"] = tuple(draw(st.integers(2, 4)) for _ in axes)
    if draw(st.booleans()):
        kws["norm"] = draw(st.sampled_from(["backward", "ortho", "forward"]))
    return kws


def _fft(name, one_axis, min_rank=1, complex_in=False, inverse_real=False):
    def draw_fft(draw):
        shape = draw(shapes(min_rank, 3, min_side=2, max_side=4))
        x = draw(values(shape, REAL, scalar=False))
        kws = _fft_kw(draw, shape, one_axis)
        if name in ("fft2", "ifft2", "rfft2", "irfft2") and "axes" in kws:
            kws["axes"] = tuple(range(len(shape)))[-2:]
            if "s" in kws:
                kws["s"] = tuple(list(kws["s"]) + [3, 3])[:2]
        if inverse_real:  # irfft*: a half spectrum made from real data inside
            forward = {"irfft": "rfft", "irfft2": "rfft2", "irfftn": "rfftn"}[name]
            pre = {k: v for k, v in kws.items() if k in ("axis", "axes")}
            body = f"np.fft.{name}(np.fft.{forward}(a0{kw_text(pre)}) * 1.5{kw_text(kws)})"
        elif complex_in:
            body = (f"f = np.fft.{name}(a0 + 0.5j * a0 * a0{kw_text(kws)})\n"
                    "return np.real(f), np.imag(f)")
        else:
            body = f"f = np.fft.{name}(a0{kw_text(kws)})\nreturn np.real(f), np.imag(f)"
        return Example(body, (x,), (0,), rtol=1e-4)
    return draw_fft


def _fftshift(name):
    def draw_shift(draw):
        shape = draw(shapes(1, 3))
        axes = axis_for(draw, len(shape))
        kws = drop_defaults(draw, {"axes": axes}, {"axes": None})
        return Example(f"np.fft.{name}(a0{kw_text(kws)})",
                       (draw(values(shape, REAL, scalar=False)),), (0,))
    return draw_shift


SPECS.update({
    np.angle: custom(_angle), np.append: custom(_append),
    np.vsplit: custom(_split_along("vsplit", 0, 2)),
    np.hsplit: custom(_split_along("hsplit", 1, 1)),
    np.dsplit: custom(_split_along("dsplit", 2, 3)),
    np.rollaxis: custom(_rollaxis), np.partition: custom(_partition),
    np.real_if_close: custom(_real_if_close), prod_others: custom(_prod_others), np.gradient: custom(_gradient),
    np.linalg.eig: custom(_eig),
    np.fft.fft: custom(_fft("fft", True)), np.fft.ifft: custom(_fft("ifft", True, complex_in=True)),
    np.fft.rfft: custom(_fft("rfft", True)),
    np.fft.irfft: custom(_fft("irfft", True, inverse_real=True)),
    np.fft.fft2: custom(_fft("fft2", False, 2)),
    np.fft.ifft2: custom(_fft("ifft2", False, 2, complex_in=True)),
    np.fft.rfft2: custom(_fft("rfft2", False, 2)),
    np.fft.irfft2: custom(_fft("irfft2", False, 2, inverse_real=True)),
    np.fft.fftn: custom(_fft("fftn", False)),
    np.fft.ifftn: custom(_fft("ifftn", False, complex_in=True)),
    np.fft.rfftn: custom(_fft("rfftn", False)),
    np.fft.irfftn: custom(_fft("irfftn", False, inverse_real=True)),
    np.fft.fftshift: custom(_fftshift("fftshift")),
    np.fft.ifftshift: custom(_fftshift("ifftshift")),
})


# Rules the compiler emits itself, whose rules are exercised elsewhere (as in test_rule_table).
COVERED_ELSEWHERE = {
    "take_slot": "loop tapes: tests/passes/test_mutation.py, tests/passes/test_loops.py",
    "sum_to_shape": "loop tapes: tests/passes/test_mutation.py (shapes taped, not arrays)",
    "broadcast_items": "select's cotangents: tests/rules/test_issue13_regressions.py",
    "unbroadcast_items": "select's cotangents: tests/rules/test_issue13_regressions.py",
    "real_spectrum": "eig's real-spectrum check: tests/rules/test_issue13_regressions.py",
    "list_append": "ys.append(y) in a loop: tests/frontend/test_lists.py",
    "as_list": "a grown list returned: tests/frontend/test_lists.py",
    "once_differentiable": "np.cumprod at zeros: tests/rules/test_property_regressions.py",
    # ODE solves (their function is the user's): analytic solutions and finite differences
    # of the solvers themselves; their rules are first-order only, and the rules' run-time
    # halves refuse a second derivative
    "odeint": "tests/rules/test_scipy_integrate.py, tests/rules/cases.py (first order)",
    "solve_ivp_values": "tests/rules/test_scipy_integrate.py, tests/rules/cases.py (first order)",
    "odeint_tangents": "second order refused: tests/rules/test_scipy_integrate.py",
    "odeint_cotangents": "second order refused: tests/rules/test_scipy_integrate.py",
    "ivp_tangents": "second order refused: tests/rules/test_scipy_integrate.py",
    "ivp_cotangents": "second order refused: tests/rules/test_scipy_integrate.py",
    "chosen_times": "tests/rules/test_scipy_integrate.py, tests/rules/cases.py (first order)",
    "solve_ivp_at": "tests/rules/test_scipy_integrate.py, tests/rules/cases.py (first order)",
    "ends_tangent": "second order refused: tests/rules/test_scipy_integrate.py",
    "ends_cotangent": "second order refused: tests/rules/test_scipy_integrate.py",
    # finite differences cannot see through the rounding of a cast to fewer bits
    "float32": "analytic derivatives: tests/rules/test_conventions.py",
    "float16": "analytic derivatives: tests/rules/test_conventions.py",
    "complex64": "analytic derivatives: tests/rules/test_session10_rules.py",
}

# The module text every example's function is defined in.
PRELUDE = """\
import math
import numpy as np
from s2sad.ir.prims import astype as _astype
from s2sad.ir.prims import broadcast_like, cast_like, cofactor, index_add, prod_others
from s2sad.ir.prims import unbroadcast
from s2sad_rules.numpy_construction import reshape_items
from s2sad_rules.numpy_linalg import EIG_RETURNS_COMPLEX
""" + ("import scipy.special as sc\nimport scipy.stats as sp_stats\n"
                                "import scipy.linalg as sp_linalg\n"
                                "import scipy.special._ufuncs as scu\n" if sc is not None else "")


# -- scipy.special (an optional dependency: its rules are loaded where a function calls them;
# loaded here, so that the table the tests read holds them) -------------------------------

OPEN01 = Domain(((0.1, 0.9),), (0.5,))


def _logsumexp(draw):
    shape = draw(shapes(0, 3))
    a = draw(values(shape, REAL, scalar=False))
    # (keepdims=True for a number is refused: SciPy returns an array of shape (1,))
    kws = {"axis": axis_for(draw, len(shape)), "keepdims": bool(shape) and draw(st.booleans())}
    kws = drop_defaults(draw, kws, {"axis": None, "keepdims": False})
    if draw(st.booleans()):  # positive weights, broadcast against `a` (maybe a number)
        b_shape = shape[draw(st.integers(0, len(shape))):]
        b = draw(values(b_shape, POS, scalar=draw(st.booleans()) if not b_shape else False))
        return Example(f"sc.logsumexp(a0, b=a1{kw_text(kws)})", (a, b), (0, 1))
    return Example(f"sc.logsumexp(a0{kw_text(kws)})", (a,), (0,))


def _softmax(name):
    def draw_softmax(draw):
        shape = draw(shapes(1, 3))
        kws = drop_defaults(draw, {"axis": axis_for(draw, len(shape))}, {"axis": None})
        return Example(f"sc.{name}(a0{kw_text(kws)})",
                       (draw(values(shape, REAL, scalar=False)),), (0,))
    return draw_softmax


def _polygamma(draw):
    n = draw(st.integers(0, 2))
    return Example(f"sc.polygamma({n}, a0)", (draw(values(draw(shapes(0, 2)), POS)),), (0,))


def _with_order(name, orders, dom=POS):
    """`sc.<name>(order, a0)`: differentiated in a0, the order a number drawn from `orders`."""
    def draw_order(draw):
        v = draw(st.sampled_from(orders))
        return Example(f"sc.{name}({v}, a0)", (draw(values(draw(shapes(0, 2)), dom)),), (0,),
                       rtol=1e-4)
    return draw_order


def _betainc(draw, name="betainc"):
    a, b = draw(st.sampled_from([(0.5, 2.0), (2.0, 3.5), (1.5, 1.5)]))
    return Example(f"sc.{name}({a}, {b}, a0)", (draw(values(draw(shapes(0, 2)), OPEN01)),),
                   (0,), rtol=1e-4)


def _fdtr(name):
    """`sc.<name>(dfn, dfd, a0)`: the F distribution function, differentiated in a0."""
    def draw_fdtr(draw):
        dfn, dfd = draw(st.sampled_from([(1.0, 3.0), (2.0, 2.0), (4.5, 7.0)]))
        return Example(f"sc.{name}({dfn}, {dfd}, a0)", (draw(values(draw(shapes(0, 2)), POS)),),
                       (0,), rtol=1e-4)
    return draw_fdtr


# boxcox's lmbda (0 included: its own formula); inv_boxcox's y and lmbda keep 1 + lmbda y > 0
LMBDA = Domain(((-1.0, 1.0),), (0.0, 1.0, -1.0, 0.5))
# tklmbda is computed as the logistic distribution function wherever |lmbda| is below about
# 1e-4 (flat in lmbda there, a jump at the threshold: finite differences cannot check it)
TUKEY_LMBDA = Domain(((-1.0, -0.1), (0.1, 1.0)), (0.5, -0.5, 1.0))


def _zeta(draw):
    """`sc.zeta(x, a0)`: the Hurwitz zeta function, differentiated in q (a0); x a number or
    an array broadcast against q, not differentiated (its derivative is refused)."""
    x = draw(st.sampled_from(["1.5", "2.0", "3.5", "np.array([1.5, 4.0])"]))
    shape = (2,) if x.startswith("np.") else draw(shapes(0, 2))
    return Example(f"sc.zeta({x}, a0)", (draw(values(shape, POS)),), (0,), rtol=1e-4)


def _wofz(draw):
    """The Faddeeva function of a real argument (complex on the complex examples): its real
    and imaginary parts, each a real output that finite differences check."""
    x = draw(values(draw(shapes(0, 3)), REAL))
    return Example("w = sc.wofz(a0)\nreturn np.real(w), np.imag(w)", (x,), (0,))


def _multigammaln(draw):
    d = draw(st.integers(1, 3))
    return Example(f"sc.multigammaln(a0, {d})", (draw(values((), ABOVE1, scalar=True)) + d,),
                   (0,))


def _norm_method(name):
    """scipy.stats.norm.<name>(x, loc, scale): loc and scale by position or by name, or
    left out; the three broadcast together."""
    def draw_norm(draw):
        s0, s1, s2 = draw(hnp.mutually_broadcastable_shapes(
            num_shapes=3, min_dims=0, max_dims=2, max_side=3)).input_shapes
        x = draw(values(s0, REAL))
        given = draw(st.sampled_from(["", "loc", "scale", "both", "keywords"]))
        if given == "":
            return Example(f"sp_stats.norm.{name}(a0)", (x,), (0,), rtol=1e-4)
        loc, scale = draw(values(s1, REAL)), draw(values(s2, POS))
        if given == "loc":
            return Example(f"sp_stats.norm.{name}(a0, a1)", (x, loc), (0, 1), rtol=1e-4)
        if given == "scale":
            return Example(f"sp_stats.norm.{name}(a0, scale=a1)", (x, scale), (0, 1),
                           rtol=1e-4)
        call = "a0, loc=a1, scale=a2" if given == "keywords" else "a0, a1, a2"
        return Example(f"sp_stats.norm.{name}({call})", (x, loc, scale), (0, 1, 2), rtol=1e-4)
    return draw_norm


def _cauchy(name):
    """scu._cauchy_<name>(q, loc, scale), the compiled Cauchy quantile functions scipy.stats
    calls: q in (0, 1) away from the ends (where the slope is infinite), all three broadcast
    together and differentiated."""
    def draw_cauchy(draw):
        s0, s1, s2 = draw(hnp.mutually_broadcastable_shapes(
            num_shapes=3, min_dims=0, max_dims=2, max_side=3)).input_shapes
        q, loc, scale = draw(values(s0, OPEN01)), draw(values(s1, REAL)), draw(values(s2, POS))
        return Example(f"scu._cauchy_{name}(a0, a1, a2)", (q, loc, scale), (0, 1, 2), rtol=1e-4)
    return draw_cauchy


def _solve_triangular(draw):
    """scipy.linalg.solve_triangular: lower or upper, trans 0 / 1 / "T", unit diagonal or not,
    a vector or matrix right-hand side; `a` full (only its triangle is read), its diagonal
    kept away from 0."""
    n = draw(st.integers(1, 3))
    a = draw(values((n, n), REAL, scalar=False)) + 3.0 * np.eye(n)
    b_shape = draw(st.sampled_from([(n,), (n, 2)]))
    b = draw(values(b_shape, REAL, scalar=False))
    kws = {"trans": draw(st.sampled_from([0, 1, "T"])), "lower": draw(st.booleans()),
           "unit_diagonal": draw(st.booleans())}
    kws = drop_defaults(draw, kws, {"trans": 0, "lower": False, "unit_diagonal": False})
    return Example(f"sp_linalg.solve_triangular(a0, a1{kw_text(kws)})", (a, b), (0, 1),
                   rtol=1e-4)


def _item(draw):
    shape = draw(st.sampled_from([(), (1,), (1, 1)]))
    return Example("a0.item() * a0", (draw(values(shape, REAL, scalar=False)),), (0,))


SPECS[prims_item] = custom(_item)

if sc is not None:
    SPECS.update({
        sc.logsumexp: custom(_logsumexp), sc.softmax: custom(_softmax("softmax")),
        sc.log_softmax: custom(_softmax("log_softmax")),
        sc.expit: unary("sc.expit({0})"), sc.logit: unary("sc.logit({0})", OPEN01),
        sc.log_expit: unary("sc.log_expit({0})"), sc.erf: unary("sc.erf({0})"),
        sc.erfc: unary("sc.erfc({0})"), sc.erfinv: unary("sc.erfinv({0})", UNIT),
        sc.ndtr: unary("sc.ndtr({0})"), sc.log_ndtr: unary("sc.log_ndtr({0})"),
        sc.gammaln: unary("sc.gammaln({0})", POS), sc.gamma: unary("sc.gamma({0})", POS),
        sc.digamma: unary("sc.digamma({0})", POS), sc.polygamma: custom(_polygamma),
        sc.xlogy: binary("sc.xlogy({0}, {1})", REAL, POS),
        sc.xlog1py: binary("sc.xlog1py({0}, {1})", REAL, POS),
        sc.erfcinv: unary("sc.erfcinv({0})", Domain(((0.1, 1.9),), (1.0, 0.5))),
        sc.rgamma: unary("sc.rgamma({0})", POS),
        sc.beta: binary("sc.beta({0}, {1})", POS, POS),
        sc.betaln: binary("sc.betaln({0}, {1})", POS, POS),
        sc.gammainc: custom(_with_order("gammainc", [0.5, 2.5])),
        sc.gammaincc: custom(_with_order("gammaincc", [0.5, 2.5])),
        sc.betainc: custom(_betainc),
        sc.j0: unary("sc.j0({0})"), sc.j1: unary("sc.j1({0})"),
        sc.y0: unary("sc.y0({0})", POS), sc.y1: unary("sc.y1({0})", POS),
        sc.jv: custom(_with_order("jv", [0, 1.5, 2, 3])),
        sc.yv: custom(_with_order("yv", [0, 0.5, 2])),
        sc.yn: custom(_with_order("yn", [0, 1, 2])),
        sc.i0: unary("sc.i0({0})"), sc.i1: unary("sc.i1({0})"),
        sc.i0e: unary("sc.i0e({0})", NONZERO), sc.i1e: unary("sc.i1e({0})", NONZERO),
        sc.iv: custom(_with_order("iv", [0, 1.5, 2, 7])),
        sc.ive: custom(_with_order("ive", [0, 1.5, 2, 7])),
        sc.multigammaln: custom(_multigammaln),
        sc.log1p: unary("sc.log1p({0})", POS), sc.expm1: unary("sc.expm1({0})"),
        sc.cosm1: unary("sc.cosm1({0})"), sc.exprel: unary("sc.exprel({0})", SMALL),
        sc.k0: unary("sc.k0({0})", POS), sc.k1: unary("sc.k1({0})", POS),
        sc.k0e: unary("sc.k0e({0})", POS), sc.k1e: unary("sc.k1e({0})", POS),
        sc.kv: custom(_with_order("kv", [0, 0.5, 1.5, 3])),
        sc.kve: custom(_with_order("kve", [0, 0.5, 1.5, 3])),
        # (NONZERO: SciPy computes stdtr(df, t) near t = 0 to about 1e-11 only, too coarse for
        # finite differences of step 1e-6)
        sc.stdtr: custom(_with_order("stdtr", ["1.0", "3.5", "np.inf"], NONZERO)),
        sc.chdtr: custom(_with_order("chdtr", [1.0, 2.0, 4.5])),
        sc.chdtrc: custom(_with_order("chdtrc", [1.0, 2.0, 4.5])),
        sc.fdtr: custom(_fdtr("fdtr")), sc.fdtrc: custom(_fdtr("fdtrc")),
        sc.betaincc: custom(lambda draw: _betainc(draw, "betaincc")),
        sc.boxcox: binary("sc.boxcox({0}, {1})", POS, LMBDA),
        sc.boxcox1p: binary("sc.boxcox1p({0}, {1})", POS, LMBDA),
        sc.inv_boxcox: binary("sc.inv_boxcox({0}, {1})", UNIT, LMBDA),
        sc.inv_boxcox1p: binary("sc.inv_boxcox1p({0}, {1})", UNIT, LMBDA),
        sc.tklmbda: binary("sc.tklmbda({0}, {1})", UNIT, TUKEY_LMBDA),
        sc.ndtri: unary("sc.ndtri({0})", OPEN01),
        sc.ndtri_exp: unary("sc.ndtri_exp({0})", Domain(((-5.0, -0.1),), (-1.0, -0.5))),
        sc.entr: unary("sc.entr({0})", POS),
        sc.rel_entr: binary("sc.rel_entr({0}, {1})", POS, POS),
        sc.kl_div: binary("sc.kl_div({0}, {1})", POS, POS),
        # (|r| = delta, huber's kink, among the drawn values: the kink detector skips it)
        sc.huber: binary("sc.huber({0}, {1})", POS, REAL),
        sc.pseudo_huber: binary("sc.pseudo_huber({0}, {1})", POS, REAL),
        sc.poch: binary("sc.poch({0}, {1})", POS, POS),
        sc.spence: unary("sc.spence({0})", POS),
        sc.owens_t: binary("sc.owens_t({0}, {1})", REAL, REAL),
        sc.zeta: custom(_zeta),
        sc.dawsn: unary("sc.dawsn({0})"), sc.erfcx: unary("sc.erfcx({0})"),
        sc.erfi: unary("sc.erfi({0})"), sc.wofz: custom(_wofz),
        sc.loggamma: unary("sc.loggamma({0})", POS),
    })
    for _name in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"):
        SPECS[getattr(sp_stats.norm, _name)] = custom(_norm_method(_name))
    SPECS[sp_linalg.solve_triangular] = custom(_solve_triangular)
    SPECS[scu._cauchy_ppf] = custom(_cauchy("ppf"))
    SPECS[scu._cauchy_isf] = custom(_cauchy("isf"))


# -- complex examples ----------------------------------------------------------------------
#
# A rule that takes complex arguments (docs/rules.md, "Complex numbers") is checked on complex
# examples too (tests/rules/test_complex.py): a drawn example with its differentiated float
# arrays and floats given an imaginary part. A rule that refuses them must do so at compile
# time, naming complex.

def complex_refused(rule) -> bool:
    """Do `rule`'s derivatives refuse complex arguments (s2sad_rules/real_only.py, and the
    rules of scipy.special)?"""
    return rule in COMPLEX_REFUSED or getattr(rule, "__module__", None) == "math" or (
        sc is not None and (rule in s2sad_rules.scipy_special.SCIPY_SPECIAL or
                            rule in s2sad_rules.scipy_stats.SCIPY_STATS or
                            rule in s2sad_rules.scipy_distributions.SCIPY_DISTRIBUTIONS or
                            rule in s2sad_rules.scipy_linalg.SCIPY_LINALG))


# rules that take complex arguments but whose drawn examples NumPy itself does not evaluate
# for complex values, or whose examples are not smooth there
COMPLEX_PRIMAL_ONLY_REAL = {
    np.linalg.det: "drawn near-singular matrices: finite differences of det are too rough",
    cofactor: "det's derivative: drawn near-singular matrices are too rough for it as for det",
}


def complexify(ex: Example, rng) -> Example:
    """`ex` with each differentiated float argument given an imaginary part in [-0.3, 0.3]
    (a Python float becomes a complex, a float64 array a complex128 array)."""
    args = list(ex.args)
    for i in ex.wrt:
        a = args[i]
        if isinstance(a, float):
            args[i] = complex(a, rng.uniform(-0.3, 0.3))
        elif isinstance(a, np.ndarray) and a.dtype == np.float64:
            args[i] = a + 1j * rng.uniform(-0.3, 0.3, a.shape)
    return Example(ex.body, tuple(args), ex.wrt, ex.rtol, ex.notes, ex.refused,
                   ex.vjp_refused)


def known_bug(rule, ex: Example, order: int = 1, kind: str = ""):
    """The reason a drawn case is skipped for now (a bug being fixed elsewhere), or None.

    Every case found so far is fixed: a new compiler bug gets a strict xfail reproducer in
    test_property_regressions.py and its cases a line here, naming the issue."""
    return None


# -- issue #13: every argument form of np.gradient, einsum traces/diagonals, 2-vector cross ----


def _coordinates(draw, n):
    """n coordinates a grid step of at least 0.3 apart (increasing or decreasing; evenly
    spaced a quarter of the time, where NumPy takes its uniform formula)."""
    sign = draw(st.sampled_from([1.0, -1.0]))
    if draw(st.integers(0, 3)) == 0:
        steps = np.full(n - 1, draw(st.sampled_from([0.5, 1.0, 1.5])))
    else:
        steps = np.array(draw(st.lists(st.floats(0.3, 1.5), min_size=n - 1, max_size=n - 1)))
    return draw(st.floats(-1.0, 1.0)) + sign * np.concatenate([[0.0], np.cumsum(steps)])


def _gradient_forms(draw):
    """np.gradient: axis None/int/negative/tuple, no, one or per-axis spacings (numbers or
    coordinate arrays), edge_order 1 or 2; the spacings are differentiated half the time."""
    if draw(st.integers(0, 3)) == 0:
        return _gradient(draw)  # the one-axis, one-number form
    edge = draw(st.sampled_from([1, 2]))
    shape = draw(shapes(1, 3, min_side=edge + 1, max_side=4))
    ndim = len(shape)
    axis = axis_for(draw, ndim)
    axes = list(range(ndim)) if axis is None else \
        [a % ndim for a in (axis if isinstance(axis, tuple) else (axis,))]
    x = draw(values(shape, REAL, scalar=False))
    form = draw(st.sampled_from(["none", "one", "each"]))
    spacings: list = []
    if form == "one":
        spacings = [draw(st.sampled_from([0.5, 1.3, -2.0]))] if len(axes) > 1 or \
            draw(st.booleans()) else [_coordinates(draw, shape[axes[0]])]
    elif form == "each":
        spacings = [_coordinates(draw, shape[a]) if draw(st.booleans()) else
                    draw(st.sampled_from([0.5, 1.3, -2.0])) for a in axes]
    names = ", ".join(f"a{i + 1}" for i in range(len(spacings)))
    kws = drop_defaults(draw, {"axis": axis, "edge_order": edge},
                        {"axis": None, "edge_order": 1})
    wrt = (0,) + tuple(i + 1 for i in range(len(spacings)) if draw(st.booleans()))
    call = f"np.gradient(a0{', ' if names else ''}{names}{kw_text(kws)})"
    return Example(call, (x, *spacings), wrt, rtol=1e-4)


SPECS[np.gradient] = custom(_gradient_forms)


def _einsum_forms(draw):
    """np.einsum: traces and diagonals (an index repeated within one operand), with `...`,
    one to four operands, implicit output, and `optimize=`."""
    if draw(st.integers(0, 2)) == 0:
        return _einsum(draw)
    n, m = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    sub, shapes_ = draw(st.sampled_from([
        ("ii", ((n, n),)), ("ii->i", ((n, n),)), ("iij->j", ((n, n, m),)),
        ("iji->ij", ((n, m, n),)), ("iii->i", ((n, n, n),)), ("ij,jj->i", ((m, n), (n, n))),
        ("...ii->...i", ((2, n, n),)), ("...ii", ((m, n, n),)), ("ii,jj", ((n, n), (m, m))),
        ("ij,jk,kk->ik", ((m, n), (n, 2), (2, 2))), ("ii,ij,jk,kk->", ((n, n), (n, m), (m, 2),
                                                                      (2, 2))),
        ("iijj->ij", ((n, n, m, m),)), ("bii,bi->b", ((2, n, n), (2, n)))]))
    args = tuple(draw(values(s, REAL, scalar=False)) for s in shapes_)
    names = ", ".join(f"a{i}" for i in range(len(args)))
    kws = {"optimize": draw(st.sampled_from([False, True, "greedy", "optimal"]))}
    kws = drop_defaults(draw, kws, {"optimize": False})
    return Example(f"np.einsum({sub!r}, {names}{kw_text(kws)})", args, tuple(range(len(args))))


SPECS[np.einsum] = custom(_einsum_forms)


def _cross_forms(draw):
    """np.cross of 2- and 3-vectors in any mix (NumPy 2 deprecates 2-vectors but computes
    them: two give the z component alone), with axisa/axisb/axisc or axis."""
    from s2sad_rules.numpy_products import CROSS_OF_2_VECTORS

    if draw(st.integers(0, 2)) == 0:
        return _cross(draw)
    # NumPy 2.5 no longer computes 2-vectors (refused: tests/rules/test_issue13_gaps.py)
    na, nb = draw(st.sampled_from([(2, 2), (2, 3), (3, 2), (3, 3)] if CROSS_OF_2_VECTORS
                                  else [(3, 3)]))
    sa, sb = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2,
                                                   max_side=3)).input_shapes
    kws: dict = {}
    if draw(st.booleans()):
        ax = draw(st.integers(-1 - min(len(sa), len(sb)), min(len(sa), len(sb))))
        kws["axis"] = ax
        ia = ib = ax
    else:
        ia = draw(st.integers(-1 - len(sa), len(sa)))
        ib = draw(st.integers(-1 - len(sb), len(sb)))
        kws["axisa"], kws["axisb"] = ia, ib
        if na == 3 or nb == 3:
            rank = len(np.broadcast_shapes(sa, sb)) + 1
            kws["axisc"] = draw(st.integers(-rank, rank - 1))
    shape_a, shape_b = list(sa), list(sb)
    shape_a.insert(ia % (len(sa) + 1), na)
    shape_b.insert(ib % (len(sb) + 1), nb)
    kws = drop_defaults(draw, kws, {"axisa": -1, "axisb": -1, "axisc": -1})
    a = draw(values(tuple(shape_a), REAL, scalar=False))
    b = draw(values(tuple(shape_b), REAL, scalar=False))
    return Example(f"np.cross(a0, a1{kw_text(kws)})", (a, b), (0, 1))


SPECS[np.cross] = custom(_cross_forms)
