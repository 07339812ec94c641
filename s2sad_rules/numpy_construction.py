"""Rules for NumPy's construction, layout and selection functions: atleast_*d, vstack hstack
column_stack split array_split unstack repeat tile roll flip fliplr flipud rot90 pad diag
diagonal triu tril astype select sort partition take take_along_axis matrix_transpose append
vsplit hsplit dsplit.

vstack, hstack and column_stack of one array (not a list) give an array cotangent of its shape.

Conventions: `sort` and `partition` send each cotangent back to the entry that landed there
(ties keep NumPy's order); `select` and `take`/`take_along_axis`/`repeat` scatter-add their
cotangent (repeated indices accumulate); `select`'s cotangent for its choices is a list, one
array per choice, summed to that choice's shape; `pad` covers mode="constant" and the modes
that copy entries (edge, reflect, symmetric, wrap: the cotangent of each entry sums those of
its copies); `take` supports mode="raise" only. `full`, `full_like`, `arange` and `linspace`
are differentiated in their fill value, start, step and stop (their count is a constant).
"""

import numpy as np

from s2sad.ir.prims import astype as _astype
from s2sad.ir.prims import filled_diagonal
from s2sad.ir.prims import broadcast_like, cast_like, unbroadcast, zeros_like
from s2sad_rules.kind_tests import is_none, is_sequence, shape_only
from s2sad_rules.registry import def_linear, def_nondiff, defcheck, defjvp, defvjp
from s2sad_rules.structural import index_add
from s2sad_rules.operators import real_like


@defjvp(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd_jvp(a, a_dot, ans):
    return np.reshape(a_dot, np.shape(ans))


@defvjp(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd_vjp(g, a):
    if np.ndim(a) == 0:
        return np.reshape(g, ())[()]
    return np.reshape(g, np.shape(a))


def reshape_items(parts, like):
    """Each of `parts` reshaped to the shape of the matching item of `like` (a list)."""
    return [np.reshape(p, np.shape(x)) for p, x in zip(parts, like)]


@defjvp(reshape_items)
def reshape_items_jvp(parts, like, parts_dot):
    return reshape_items(parts_dot, like)


@def_nondiff
def shape_stand_ins(items):
    """Stand-ins with the shapes of `items` (zero-stride views: nothing is allocated), so that
    reshaping to those shapes does not depend on the items' values (second order)."""
    return [np.broadcast_to(0.0, np.shape(x)) for x in items]


@defvjp(reshape_items, wrt=("parts",))
def reshape_items_vjp(g, parts, like):
    return reshape_items(g, shape_stand_ins(parts))


@shape_only
@def_nondiff
def stack_split(arrays, how):
    """(split points, axis) that cut a v/h/column-stacked cotangent back into its parts."""
    if how == "v":
        parts = [np.atleast_2d(a) for a in arrays]
        axis = 0
    elif how == "h":
        parts = [np.atleast_1d(a) for a in arrays]
        axis = 0 if parts[0].ndim == 1 else 1
    else:
        parts = [np.reshape(a, (-1, 1)) if np.ndim(a) < 2 else np.asarray(a) for a in arrays]
        axis = 1
    sizes = [p.shape[axis] for p in parts]
    return ([int(s) for s in np.cumsum(sizes)[:-1]], axis)


def stacked_array_bar(g, tup, how):
    """The cotangent of one array passed to vstack/hstack/column_stack (its items stacked)."""
    if how == "v" or np.ndim(tup) < 2 or (how == "h" and np.ndim(tup) == 2):
        return np.reshape(g, np.shape(tup))  # the items laid end to end in order
    if np.ndim(tup) == 2:
        return np.transpose(g)  # column_stack of the rows of a matrix: its transpose
    s = np.shape(tup)  # items of 2 or more axes side by side along axis 1
    return np.moveaxis(np.reshape(g, (s[1], s[0]) + s[2:]), 1, 0)


@defjvp(np.vstack)
def vstack_jvp(tup, tup_dot):
    return np.vstack(tup_dot)


@defvjp(np.vstack)
def vstack_vjp(g, tup):
    if not is_sequence(tup):
        return stacked_array_bar(g, tup, "v")
    cut = stack_split(tup, "v")
    return reshape_items(np.split(g, cut[0], cut[1]), shape_stand_ins(tup))


@defjvp(np.hstack)
def hstack_jvp(tup, tup_dot):
    return np.hstack(tup_dot)


@defvjp(np.hstack)
def hstack_vjp(g, tup):
    if not is_sequence(tup):
        return stacked_array_bar(g, tup, "h")
    cut = stack_split(tup, "h")
    return reshape_items(np.split(g, cut[0], cut[1]), shape_stand_ins(tup))


@defjvp(np.column_stack)
def column_stack_jvp(tup, tup_dot):
    return np.column_stack(tup_dot)


@defvjp(np.column_stack)
def column_stack_vjp(g, tup):
    if not is_sequence(tup):
        return stacked_array_bar(g, tup, "c")
    cut = stack_split(tup, "c")
    return reshape_items(np.split(g, cut[0], cut[1]), shape_stand_ins(tup))


@defjvp(np.split)
def split_jvp(ary, indices_or_sections, axis=0, ary_dot=0.0):
    return np.split(ary_dot, indices_or_sections, axis)


@defvjp(np.split, wrt=("ary",))
def split_vjp(g, ary, indices_or_sections, axis=0):
    return np.concatenate(g, axis)


@defjvp(np.array_split)
def array_split_jvp(ary, indices_or_sections, axis=0, ary_dot=0.0):
    return np.array_split(ary_dot, indices_or_sections, axis)


@defvjp(np.array_split, wrt=("ary",))
def array_split_vjp(g, ary, indices_or_sections, axis=0):
    return np.concatenate(g, axis)


@defjvp(np.unstack)
def unstack_jvp(x, axis=0, x_dot=0.0):
    return np.unstack(x_dot, axis=axis)


@defvjp(np.unstack)
def unstack_vjp(g, x, axis=0):
    return np.stack(g, axis)


def take_bar(g, a, indices, axis):
    """Scatter-add `g` back to where `np.take(a, indices, axis)` read it."""
    if axis is None:
        return np.reshape(index_add(zeros_like(np.ravel(a)), indices, g), np.shape(a))
    axes = index_axes(axis, np.ndim(indices), np.ndim(a))
    moved = index_add(zeros_like(np.moveaxis(a, axis, 0)), indices, np.moveaxis(g, axes[0],
                                                                                 axes[1]))
    return np.moveaxis(moved, 0, axis)


@def_nondiff
def index_axes(axis, ndim_indices, ndim):
    """Where np.take put the axes of its indices, and where np.add.at wants them (first)."""
    axis = axis % ndim
    return (tuple(range(axis, axis + ndim_indices)), tuple(range(ndim_indices)))


@def_nondiff
def take_index(indices, a, axis, mode):
    """The entries np.take(a, indices, axis, mode=mode) read: in range for "wrap"/"clip"."""
    n = np.size(a) if axis is None else np.shape(a)[axis]
    if mode == "wrap":
        return np.mod(indices, n)
    if mode == "clip":
        return np.clip(indices, 0, n - 1)
    return indices


@defjvp(np.take)
def take_jvp(a, indices, axis=None, out=None, mode="raise", a_dot=0.0):
    return np.take(a_dot, indices, axis, mode=mode)


@defvjp(np.take, wrt=("a",))
def take_vjp(g, a, indices, axis=None, out=None, mode="raise"):
    return take_bar(g, a, take_index(indices, a, axis, mode), axis)


@def_nondiff
def repeat_index(shape, repeats, axis):
    """The source index of each output entry of np.repeat along `axis` (flat when None)."""
    n = int(np.prod(shape)) if axis is None else shape[axis]
    return np.repeat(np.arange(n), repeats)


@defjvp(np.repeat)
def repeat_jvp(a, repeats, axis=None, a_dot=0.0):
    return np.repeat(a_dot, repeats, axis)


@defvjp(np.repeat, wrt=("a",))
def repeat_vjp(g, a, repeats, axis=None):
    return take_bar(g, a, repeat_index(np.shape(a), repeats, axis), axis)


@def_nondiff
def tile_plan(shape, reps):
    """(shape splitting each tiled axis into (reps, size), axes to sum) for tile's VJP."""
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    d = max(len(shape), len(reps))
    shape = (1,) * (d - len(shape)) + tuple(shape)
    reps = (1,) * (d - len(reps)) + reps
    split = []
    for r, s in zip(reps, shape):
        split += [r, s]
    return (tuple(split), tuple(range(0, 2 * d, 2)))


@defjvp(np.tile)
def tile_jvp(A, reps, A_dot):
    return np.tile(A_dot, reps)


@defvjp(np.tile, wrt=("A",))
def tile_vjp(g, A, reps):
    plan = tile_plan(np.shape(A), reps)
    return np.reshape(np.sum(np.reshape(g, plan[0]), axis=plan[1]), np.shape(A))


@def_nondiff
def negated(shift):
    return tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift


@defjvp(np.roll)
def roll_jvp(a, shift, axis=None, a_dot=0.0):
    return np.roll(a_dot, shift, axis)


@defvjp(np.roll, wrt=("a",))
def roll_vjp(g, a, shift, axis=None):
    return np.roll(g, negated(shift), axis)


@defjvp(np.flip)
def flip_jvp(m, axis=None, m_dot=0.0):
    return np.flip(m_dot, axis)


@defvjp(np.flip)
def flip_vjp(g, m, axis=None):
    return np.flip(g, axis)


@defjvp(np.fliplr)
def fliplr_jvp(m, m_dot):
    return np.fliplr(m_dot)


@defvjp(np.fliplr)
def fliplr_vjp(g, m):
    return np.fliplr(g)


@defjvp(np.flipud)
def flipud_jvp(m, m_dot):
    return np.flipud(m_dot)


@defvjp(np.flipud)
def flipud_vjp(g, m):
    return np.flipud(g)


@defjvp(np.rot90)
def rot90_jvp(m, k=1, axes=(0, 1), m_dot=0.0):
    return np.rot90(m_dot, k, axes)


@defvjp(np.rot90)
def rot90_vjp(g, m, k=1, axes=(0, 1)):
    return np.rot90(g, -k, axes)


# modes whose padding copies entries of the array (a linear map that picks entries)
PAD_COPIES = ("edge", "reflect", "symmetric", "wrap")


@defcheck(np.pad)
def pad_check(mode="constant", reflect_type="even"):
    if not isinstance(mode, str):
        return "a mode not known at compile time, or a function as the mode"
    if mode != "constant" and mode not in PAD_COPIES:
        return (f"mode={mode!r} (the derivative covers 'constant' and the modes that copy "
                f"entries: {', '.join(map(repr, PAD_COPIES))})")
    if reflect_type != "even":
        return f"reflect_type={reflect_type!r}"
    return None


@def_nondiff
def pad_slices(pad_width, shape):
    """The index of the original block inside np.pad's result (mode="constant")."""
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (len(shape), 2))
    return tuple(slice(int(lo), int(lo) + n) for (lo, _), n in zip(widths, shape))


@def_nondiff
def pad_sources(shape, pad_width, mode):
    """For each entry of np.pad's result, the flat index of the entry of the array it copies
    (a mode that copies entries: the same padding applied to the indices)."""
    return np.pad(np.arange(int(np.prod(shape))).reshape(shape), pad_width, mode)


@defjvp(np.pad)
def pad_jvp(array, pad_width, mode="constant", constant_values=0, array_dot=0.0):
    if mode == "constant":
        return np.pad(array_dot, pad_width)  # the padding is constant: its tangent is 0
    return np.pad(array_dot, pad_width, mode)


@defvjp(np.pad, wrt=("array",))
def pad_vjp(g, array, pad_width, mode="constant", constant_values=0):
    if mode == "constant":
        return g[pad_slices(pad_width, np.shape(array))]
    # each entry's cotangent is the sum of those of the places it was copied to
    flat = index_add(zeros_like(np.ravel(array)), pad_sources(np.shape(array), pad_width, mode),
                     g)
    return np.reshape(flat, np.shape(array))


# constructors whose values depend on float arguments (they were taken as constants: a
# derivative with respect to a fill value, start or stop was silently 0)


@defjvp(np.full)
def full_jvp(shape, fill_value, dtype=None, order="C", fill_value_dot=0.0):
    return np.full(shape, fill_value_dot)


@defvjp(np.full, wrt=("fill_value",))
def full_vjp(g, shape, fill_value, dtype=None, order="C"):
    return unbroadcast(g, fill_value)


@defjvp(np.full_like)
def full_like_jvp(a, fill_value, dtype=None, order="K", subok=True, shape=None, a_dot=0.0,
                  fill_value_dot=0.0):
    # (only `a`'s shape and dtype are read: its derivative is 0)
    return np.full(np.shape(a) if shape is None else shape, fill_value_dot)


@defvjp(np.full_like, wrt=("a", "fill_value"))
def full_like_vjp(g, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    return zeros_like(a), unbroadcast(g, fill_value)


@defjvp(np.arange)
def arange_jvp(start, stop=None, step=None, dtype=None, start_dot=0.0, stop_dot=0.0,
               step_dot=0.0, ans=None):
    # start, start + step, ...: only how many there are depends on stop (np.arange(stop)
    # counts from 0)
    if is_none(stop):
        return zeros_like(ans)
    if is_none(step):
        return start_dot + zeros_like(ans)
    return start_dot + np.arange(len(ans)) * step_dot


@defvjp(np.arange, wrt=("start", "stop", "step"))
def arange_vjp(g, ans, start, stop=None, step=None, dtype=None):
    if is_none(stop):
        return zeros_like(start), None, None
    if is_none(step):
        return np.sum(g), zeros_like(stop), None
    return np.sum(g), zeros_like(stop), np.sum(g * np.arange(len(ans)))


@defcheck(np.linspace)
def linspace_check(retstep=False, axis=0):
    if retstep is not False:
        return "retstep=True"
    if axis != 0:
        return "an `axis` other than 0"
    return None


@def_nondiff
def linspace_weights(num, endpoint, ndim):
    """The weight of `stop` in each value of np.linspace (that of `start` is 1 minus it),
    shaped to broadcast against start and stop of `ndim` - 1 dimensions."""
    t = np.linspace(0.0, 1.0, num, endpoint)
    return np.reshape(t, (len(t),) + (1,) * (ndim - 1))


@defjvp(np.linspace)
def linspace_jvp(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
                 start_dot=0.0, stop_dot=0.0, ans=None):
    t = linspace_weights(num, endpoint, np.ndim(ans))
    return (1.0 - t) * start_dot + t * stop_dot


@defvjp(np.linspace, wrt=("start", "stop"))
def linspace_vjp(g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None,
                 axis=0):
    t = linspace_weights(num, endpoint, np.ndim(ans))
    return unbroadcast(np.sum(g * (1.0 - t), axis=0), start), \
        unbroadcast(np.sum(g * t, axis=0), stop)


@def_nondiff
def diagonal_index(shape, offset):
    """(rows, cols) of the `offset` diagonal of a matrix of `shape`."""
    n = len(np.diagonal(np.zeros(shape[-2:]), offset))
    return (np.arange(n) + max(-offset, 0), np.arange(n) + max(offset, 0))


@defjvp(np.diag)
def diag_jvp(v, k=0, v_dot=0.0):
    return np.diag(v_dot, k)


@defvjp(np.diag)
def diag_vjp(g, v, k=0):
    if np.ndim(v) == 1:
        return np.diagonal(g, k)
    return index_add(zeros_like(v), diagonal_index(np.shape(v), k), g)


@defjvp(np.diagonal)
def diagonal_jvp(a, offset=0, axis1=0, axis2=1, a_dot=0.0):
    return np.diagonal(a_dot, offset, axis1, axis2)


@defvjp(np.diagonal)
def diagonal_vjp(g, a, offset=0, axis1=0, axis2=1):
    moved = np.moveaxis(zeros_like(a), (axis1, axis2), (-2, -1))
    ij = diagonal_index(np.shape(moved), offset)
    filled = index_add(moved, (Ellipsis, ij[0], ij[1]), g)
    return np.moveaxis(filled, (-2, -1), (axis1, axis2))


@defjvp(np.triu)
def triu_jvp(m, k=0, m_dot=0.0):
    return np.triu(m_dot, k)


@defvjp(np.triu)
def triu_vjp(g, m, k=0):
    return unbroadcast(np.triu(g, k), m)  # a 1-D m is broadcast to a square matrix


@defjvp(np.tril)
def tril_jvp(m, k=0, m_dot=0.0):
    return np.tril(m_dot, k)


@defvjp(np.tril)
def tril_vjp(g, m, k=0):
    return unbroadcast(np.tril(g, k), m)  # a 1-D m is broadcast to a square matrix


@defjvp(np.matrix_transpose, np.linalg.matrix_transpose)
def matrix_transpose_jvp(x, x_dot):
    return np.swapaxes(x_dot, -1, -2)


@defvjp(np.matrix_transpose, np.linalg.matrix_transpose)
def matrix_transpose_vjp(g, x):
    return np.swapaxes(g, -1, -2)


# x.astype(dtype) (lowered to _astype) and np.astype: float-to-float casts pass derivatives
# through; a cast to an integer type has an integer result, which carries no derivative.
# The cotangent goes back in x's own dtype (float64 x cast to float32 has a float64
# cotangent, as in JAX), and real for a real x cast to a complex type
@defjvp(_astype, np.astype)
def astype_jvp(x, dtype, x_dot):
    return np.asarray(x_dot, dtype=dtype)


@defvjp(_astype, np.astype, wrt=("x",))
def astype_vjp(g, x, dtype):
    return cast_like(real_like(g, x), x)


# np.fill_diagonal(a, val) on an array the function created (lowered to filled_diagonal, a
# write into a copy): the written entries take val's derivative, the others keep a's. A val
# shorter than the diagonal is repeated along it, as NumPy's flat assignment repeats it.
@defjvp(filled_diagonal)
def filled_diagonal_jvp(a, val, a_dot, val_dot):
    return filled_diagonal(a_dot, val_dot)


@defvjp(filled_diagonal, wrt=("a", "val"))
def filled_diagonal_vjp(g, a, val):
    return filled_diagonal(g, 0.0), filled_value_cotangent(g[filled_entries(g)], val)


@def_nondiff
def filled_entries(a):
    """The entries np.fill_diagonal(a, v) writes (wrap=False): a[i, i, ..., i] for i below
    the shortest axis (a 2-d array may be rectangular; NumPy refuses any other)."""
    return (np.arange(min(np.shape(a))),) * np.ndim(a)


def filled_value_cotangent(d, val):
    """The cotangent of val from the written entries' `d`: their sum for a number; for an
    array, entry j gets those it was repeated to (j, j + n, ... for n = val's size)."""
    if np.ndim(val) == 0:
        return cast_like(np.sum(d), val)
    n = np.size(val)
    rows = np.concatenate([d, np.zeros(-np.size(d) % n)])
    return np.reshape(np.sum(np.reshape(rows, (-1, n)), axis=0), np.shape(val))


@def_nondiff
def choice_masks(condlist, n):
    """masks[i]: where np.select picks choice i; masks[n]: where it falls back to the default."""
    picked = np.select(condlist, list(range(n)), n)
    return np.equal.outer(np.arange(n + 1), picked)


@defjvp(np.select)
def select_jvp(condlist, choicelist, default=0, choicelist_dot=0.0, default_dot=0.0):
    return np.select(condlist, choicelist_dot, default_dot)


@defvjp(np.select, wrt=("choicelist", "default"))
def select_vjp(g, condlist, choicelist, default=0):
    masks = choice_masks(condlist, len(choicelist))
    return (unbroadcast_items(masks[:-1] * g, shape_stand_ins(choicelist)),
            unbroadcast(masks[-1] * g, default))


def unbroadcast_items(parts, like):
    """A list: each of `parts` summed back to the shape of the matching item of `like`."""
    return [unbroadcast(p, x) for p, x in zip(parts, like)]


@defjvp(unbroadcast_items)
def unbroadcast_items_jvp(parts, like, parts_dot):
    return unbroadcast_items(parts_dot, like)


@defvjp(unbroadcast_items, wrt=("parts",))
def unbroadcast_items_vjp(g, parts, like):
    return broadcast_items(g, shape_stand_ins(parts))


def broadcast_items(parts, like):
    """A list: each of `parts` broadcast to the shape of the matching item of `like`."""
    return [np.broadcast_to(p, np.shape(x)) for p, x in zip(parts, like)]


@defjvp(broadcast_items)
def broadcast_items_jvp(parts, like, parts_dot):
    return broadcast_items(parts_dot, like)


@defvjp(broadcast_items, wrt=("parts",))
def broadcast_items_vjp(g, parts, like):
    return unbroadcast_items(g, shape_stand_ins(parts))


@defjvp(np.sort)
def sort_jvp(a, axis=-1, kind=None, order=None, a_dot=0.0):
    if axis is None:
        return np.ravel(a_dot)[np.argsort(np.ravel(a), kind="stable")]
    return np.take_along_axis(a_dot, np.argsort(a, axis, kind="stable"), axis)


@defvjp(np.sort)
def sort_vjp(g, a, axis=-1, kind=None, order=None):
    if axis is None:
        rank = np.argsort(np.argsort(np.ravel(a), kind="stable"))
        return np.reshape(g[rank], np.shape(a))
    rank = np.argsort(np.argsort(a, axis, kind="stable"), axis)
    return np.take_along_axis(g, rank, axis)


@defjvp(np.partition)
def partition_jvp(a, kth, axis=-1, kind="introselect", order=None, a_dot=0.0):
    if axis is None:
        return np.ravel(a_dot)[np.argpartition(np.ravel(a), kth)]
    return np.take_along_axis(a_dot, np.argpartition(a, kth, axis), axis)


@defvjp(np.partition, wrt=("a",))
def partition_vjp(g, a, kth, axis=-1, kind="introselect", order=None):
    # each cotangent goes back to the entry that landed in its place
    if axis is None:
        where = np.argpartition(np.ravel(a), kth)
        return np.reshape(index_add(zeros_like(np.ravel(a)), where, g), np.shape(a))
    where = along_axis_index(np.argpartition(a, kth, axis), np.shape(a), axis)
    return index_add(zeros_like(a), where, g)


@defjvp(np.append)
def append_jvp(arr, values, axis=None, arr_dot=0.0, values_dot=0.0):
    return np.append(broadcast_like(arr_dot, arr), broadcast_like(values_dot, values), axis)


@defvjp(np.append, wrt=("arr", "values"))
def append_vjp(g, arr, values, axis=None):
    if axis is None:
        parts = np.split(g, [np.size(arr)])
        return np.reshape(parts[0], np.shape(arr)), np.reshape(parts[1], np.shape(values))
    parts = np.split(g, [np.shape(arr)[axis]], axis)
    return parts[0], parts[1]


@def_nondiff
def split_axis(ndim, which):
    """The axis np.vsplit / hsplit / dsplit cut along."""
    if which == "h":
        return 1 if ndim > 1 else 0
    return 0 if which == "v" else 2


@defjvp(np.vsplit)
def vsplit_jvp(ary, indices_or_sections, ary_dot):
    return np.vsplit(ary_dot, indices_or_sections)


@defvjp(np.vsplit, wrt=("ary",))
def vsplit_vjp(g, ary, indices_or_sections):
    return np.concatenate(g, split_axis(np.ndim(ary), "v"))


@defjvp(np.hsplit)
def hsplit_jvp(ary, indices_or_sections, ary_dot):
    return np.hsplit(ary_dot, indices_or_sections)


@defvjp(np.hsplit, wrt=("ary",))
def hsplit_vjp(g, ary, indices_or_sections):
    return np.concatenate(g, split_axis(np.ndim(ary), "h"))


@defjvp(np.dsplit)
def dsplit_jvp(ary, indices_or_sections, ary_dot):
    return np.dsplit(ary_dot, indices_or_sections)


@defvjp(np.dsplit, wrt=("ary",))
def dsplit_vjp(g, ary, indices_or_sections):
    return np.concatenate(g, split_axis(np.ndim(ary), "d"))


@def_nondiff
def along_axis_index(indices, shape, axis):
    """The fancy index that np.take_along_axis(arr, indices, axis) reads with (`shape`: arr's;
    the other axes of `indices` broadcast against arr's)."""
    if axis is None:
        return indices
    ndim = len(shape)
    axis = axis % ndim
    index = []
    for i in range(ndim):
        if i == axis:
            index.append(indices)
        else:
            index.append(np.arange(shape[i]).reshape([-1 if j == i else 1 for j in range(ndim)]))
    return tuple(index)


@defjvp(np.take_along_axis)
def take_along_axis_jvp(arr, indices, axis=-1, arr_dot=0.0):
    return np.take_along_axis(arr_dot, indices, axis)


@defvjp(np.take_along_axis, wrt=("arr",))
def take_along_axis_vjp(g, arr, indices, axis=-1):
    if axis is None:
        return np.reshape(index_add(zeros_like(np.ravel(arr)), indices, g), np.shape(arr))
    return index_add(zeros_like(arr), along_axis_index(indices, np.shape(arr), axis), g)


def_linear(np.atleast_1d, np.atleast_2d, np.atleast_3d, np.vstack, np.hstack, np.column_stack,
           np.split, np.array_split, np.unstack, np.take, np.repeat, np.tile, np.roll, np.flip,
           np.fliplr, np.flipud, np.rot90, np.diag, np.diagonal, np.triu, np.tril,
           np.matrix_transpose, np.linalg.matrix_transpose, np.take_along_axis,
           reshape_items, unbroadcast_items, broadcast_items, np.partition, np.vsplit,
           np.hsplit, np.dsplit, wrt=(0,))
