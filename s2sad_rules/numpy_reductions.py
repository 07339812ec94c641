"""Rules for NumPy reductions (sum, mean, max, min, prod) and products (dot, outer)."""

import numpy as np

from s2sad.ir.prims import index_add, prod_others, unbroadcast, zeros_like
from s2sad_rules.kind_tests import is_none
from s2sad_rules.registry import def_linear, def_nondiff, defjvp, defvjp


def expand_reduced(g, a, axis, keepdims):
    """Broadcast a reduction's result `g` back against its input `a`."""
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    return g


# `where=` (a mask broadcast against `a`) leaves entries out of the sum or the mean: they get
# no derivative. (The derivatives select with np.where rather than pass `where=` on, which
# vector mode could not line up with a batched tangent.) `initial=` of np.sum adds a number
# that is not differentiated (a derivative reaching it is refused where written).
@defjvp(np.sum)
def sum_jvp(a, axis=None, keepdims=False, initial=None, where=None, a_dot=0.0):
    if is_none(where):
        return np.sum(a_dot, axis=axis, keepdims=keepdims)
    return np.sum(np.where(where, a_dot, 0.0), axis=axis, keepdims=keepdims)


@defvjp(np.sum, wrt=("a",))
def sum_vjp(g, a, axis=None, keepdims=False, initial=None, where=None):
    g_a = np.broadcast_to(expand_reduced(g, a, axis, keepdims), np.shape(a))
    if is_none(where):
        return g_a
    return np.where(where, g_a, 0.0)


@defjvp(np.mean)
def mean_jvp(a, axis=None, keepdims=False, where=None, a_dot=0.0):
    if is_none(where):
        return np.mean(a_dot, axis=axis, keepdims=keepdims)
    kept = np.sum(np.broadcast_to(where, np.shape(a)), axis=axis, keepdims=keepdims)
    return np.sum(np.where(where, a_dot, 0.0), axis=axis, keepdims=keepdims) / kept


@defvjp(np.mean)
def mean_vjp(g, ans, a, axis=None, keepdims=False, where=None):
    if is_none(where):
        n = np.size(a) // np.size(ans)  # (exact: the entries each result entry averages)
        return np.broadcast_to(expand_reduced(g, a, axis, keepdims) / n, np.shape(a))
    # each kept entry's share: one over the number of kept entries of its slice
    kept = np.sum(np.broadcast_to(where, np.shape(a)), axis=axis, keepdims=keepdims)
    return np.where(where, np.broadcast_to(expand_reduced(g / kept, a, axis, keepdims),
                                           np.shape(a)), 0.0)


# `where=` (with the `initial=` NumPy then requires) leaves entries out of max and min: only
# the kept entries equal to the result share its derivative; where `initial` is the result
# (above every kept entry) no entry gets any (`initial` is not differentiated: a derivative
# reaching it is refused where written). Ties between `initial` and kept entries leave it
# to the entries.
@defjvp(np.max, np.amax, np.nanmax)
def max_jvp(a, axis=None, keepdims=False, initial=None, where=None, a_dot=0.0, ans=0.0):
    return extreme_tangent(a, a_dot, ans, axis, keepdims, initial, where)


def extreme_tangent(a, a_dot, ans, axis, keepdims, initial, where):
    # ties share the derivative evenly; a NaN equals no extremum, so np.nanmax's and
    # np.nanmin's NaN entries get none of it
    mask = a == expand_reduced(ans, a, axis, keepdims)
    if is_none(where) and is_none(initial):
        return np.sum(a_dot * mask, axis=axis, keepdims=keepdims) / np.sum(
            mask, axis=axis, keepdims=keepdims)
    if not is_none(where):
        mask = mask & np.asarray(where)
    return np.sum(a_dot * mask, axis=axis, keepdims=keepdims) / np.maximum(
        np.sum(mask, axis=axis, keepdims=keepdims), 1)


@def_nondiff
def kept_shape(shape, axis):
    """The shape of a reduction over `axis` with keepdims=True (reduced axes of length 1)."""
    if axis is None:
        return (1,) * len(shape)
    axes = [a % len(shape) for a in (axis if isinstance(axis, tuple) else (axis,))]
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def extreme_bar(g, ans, a, axis, keepdims):
    """Cotangent of max/min: g on the entries equal to the extremum, ties sharing it evenly.

    The reduced result is reshaped to its keepdims shape (one view, no branch on `axis`: the
    pullback then never reassigns the forward sweep's `ans`, even when `axis` is known only at
    run time)."""
    if axis is None and not keepdims and np.ndim(a) > 0:
        # the whole array: g goes to the few positions holding the extremum, a scatter
        # instead of full-size mask arithmetic
        where = np.nonzero(a == ans)
        return index_add(zeros_like(a), where, g / len(where[0]))
    shape = kept_shape(np.shape(a), axis)
    mask = a == np.reshape(ans, shape)
    count = np.sum(mask, axis=axis, keepdims=True)
    # divide the small array before touching the large one
    return (np.reshape(g, shape) / count) * mask


def masked_extreme_bar(g, ans, a, axis, keepdims, initial, where):
    """extreme_bar with `where=`/`initial=`: only kept entries equal to the result share g
    (none where `initial` is the result)."""
    if is_none(where) and is_none(initial):
        return extreme_bar(g, ans, a, axis, keepdims)
    shape = kept_shape(np.shape(a), axis)
    mask = a == np.reshape(ans, shape)
    if not is_none(where):
        mask = mask & np.asarray(where)
    count = np.maximum(np.sum(mask, axis=axis, keepdims=True), 1)
    return (np.reshape(g, shape) / count) * mask


@defvjp(np.max, np.amax, np.nanmax)
def max_vjp(g, ans, a, axis=None, keepdims=False, initial=None, where=None):
    return masked_extreme_bar(g, ans, a, axis, keepdims, initial, where)


@defjvp(np.min, np.amin, np.nanmin)
def min_jvp(a, axis=None, keepdims=False, initial=None, where=None, a_dot=0.0, ans=0.0):
    return extreme_tangent(a, a_dot, ans, axis, keepdims, initial, where)


@defvjp(np.min, np.amin, np.nanmin)
def min_vjp(g, ans, a, axis=None, keepdims=False, initial=None, where=None):
    return masked_extreme_bar(g, ans, a, axis, keepdims, initial, where)


# `where=` of np.prod takes the left-out entries as ones (they get no derivative); `initial=`
# multiplies the product by a number that is not differentiated
@defjvp(np.prod)
def prod_jvp(a, axis=None, keepdims=False, initial=None, where=None, a_dot=0.0, ans=0.0):
    if is_none(where) and is_none(initial):
        return np.sum(a_dot * prod_others(a, axis, keepdims, ans), axis=axis,
                      keepdims=keepdims)
    b = masked_factors(a, where)
    others = prod_others(b, axis, keepdims, np.prod(b, axis=axis, keepdims=keepdims))
    if not is_none(where):
        others = np.where(where, others, 0.0)
    if not is_none(initial):
        others = initial * others
    return np.sum(a_dot * others, axis=axis, keepdims=keepdims)


def masked_factors(a, where):
    """np.prod's factors with the entries left out by `where=` taken as ones."""
    if is_none(where):
        return a
    return np.where(where, a, 1.0)


@defvjp(np.prod)
def prod_vjp(g, ans, a, axis=None, keepdims=False, initial=None, where=None):
    if is_none(where) and is_none(initial):
        return expand_reduced(g, a, axis, keepdims) * prod_others(a, axis, keepdims, ans)
    b = masked_factors(a, where)
    others = prod_others(b, axis, keepdims, np.prod(b, axis=axis, keepdims=keepdims))
    if not is_none(initial):
        others = initial * others
    a_bar = expand_reduced(g, a, axis, keepdims) * others
    if is_none(where):
        return a_bar
    return np.where(where, a_bar, 0.0)


@defjvp(prod_others)
def prod_others_jvp(a, axis=None, keepdims=False, total=None, a_dot=0.0, total_dot=0.0,
                    ans=0.0):
    # (a second derivative of np.prod: valid where no factor is zero; `total` is the
    # product of `a`, read only to save its computation)
    rel = np.asarray(a_dot) / np.asarray(a)  # (math.prod's factors come as a list)
    return ans * (np.sum(rel, axis=axis, keepdims=True) - rel)


@defvjp(prod_others, wrt=("a", "total"))
def prod_others_vjp(g, ans, a, axis=None, keepdims=False, total=None):
    weighted = g * ans
    return (np.sum(weighted, axis=axis, keepdims=True) - weighted) / np.asarray(a), \
        zeros_like(total)


@defjvp(np.dot)
def dot_jvp(a, b, a_dot, b_dot):
    return np.dot(a_dot, b) + np.dot(a, b_dot)


@defvjp(np.dot)
def dot_vjp(g, a, b):
    return dot_bar_left(g, a, b), dot_bar_right(g, a, b)


# As for x @ y (operators.py): the cheapest call for the ranks known while compiling,
# np.tensordot only where b is a stack of matrices or a has more than two axes.
def dot_bar_left(g, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    if np.ndim(a) == 1 and np.ndim(b) == 1:  # an inner product: g is a scalar
        return g * b
    if np.ndim(b) == 1:
        return np.expand_dims(g, -1) * b
    if np.ndim(b) == 2:  # g has a's leading axes and b's columns
        if np.ndim(a) == 1:
            return b @ g
        return g @ b.T
    return np.tensordot(g, b, dot_left_axes(np.ndim(a), np.ndim(b)))


def dot_bar_right(g, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(a * g, b)
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return a * g
    if np.ndim(a) == 1 and np.ndim(b) == 2:  # the outer product of a and g
        return np.expand_dims(a, -1) * g
    if np.ndim(a) == 2 and np.ndim(b) <= 2:  # g @ a, or a.T @ g
        if np.ndim(b) == 1:
            return g @ a
        return a.T @ g
    lead = dot_lead_axes(np.ndim(a))
    if np.ndim(b) <= 2:  # (already in b's axis order)
        return np.tensordot(a, g, (lead, lead))
    return np.moveaxis(np.tensordot(a, g, (lead, lead)), 0, -2)


@def_nondiff
def dot_left_axes(ndim_a, ndim_b):
    """tensordot axes pairing g's trailing axes with every axis of b but the contracted one."""
    g_axes = tuple(range(ndim_a - 1, ndim_a + ndim_b - 2))
    b_axes = tuple(i for i in range(ndim_b) if i != ndim_b - 2)
    return (g_axes, b_axes)


@def_nondiff
def dot_lead_axes(ndim_a):
    return tuple(range(ndim_a - 1))


@defjvp(np.outer)
def outer_jvp(a, b, a_dot, b_dot):
    return np.outer(a_dot, b) + np.outer(a, b_dot)


@defvjp(np.outer)
def outer_vjp(g, a, b):
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return g @ b, a @ g
    return np.reshape(np.dot(g, np.ravel(b)), np.shape(a)), np.reshape(
        np.dot(np.ravel(a), g), np.shape(b))


def_linear(np.sum, np.mean)
def_linear(np.dot, np.outer, wrt=(0, 1))


@def_nondiff
def tensordot_plan(ndim_a, ndim_b, axes):
    """Normalise tensordot's `axes` and plan both cotangents.

    Returns (g_axes_for_a, b_free, perm_a, a_free, g_axes_for_b, perm_b): a_bar is
    transpose(tensordot(g, b, (g_axes_for_a, b_free)), perm_a) and b_bar is
    transpose(tensordot(a, g, (a_free, g_axes_for_b)), perm_b).
    """
    if isinstance(axes, int):
        ax_a = list(range(ndim_a - axes, ndim_a))
        ax_b = list(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, int) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, int) else list(ax_b)
    ax_a = [i % ndim_a for i in ax_a]
    ax_b = [i % ndim_b for i in ax_b]
    free_a = [i for i in range(ndim_a) if i not in ax_a]
    free_b = [i for i in range(ndim_b) if i not in ax_b]
    na = len(free_a)
    g_for_a = tuple(range(na, na + len(free_b)))
    # tensordot(g, b, ...) keeps b's contracted axes in b's order: pair them with a's
    order_a = free_a + [a for _, a in sorted(zip(ax_b, ax_a))]
    perm_a = tuple(int(i) for i in np.argsort(order_a))
    g_for_b = tuple(range(na))
    order_b = [b for _, b in sorted(zip(ax_a, ax_b))] + free_b
    perm_b = tuple(int(i) for i in np.argsort(order_b))
    return (g_for_a, tuple(free_b), perm_a, tuple(free_a), g_for_b, perm_b)


@defjvp(np.tensordot)
def tensordot_jvp(a, b, axes=2, a_dot=0.0, b_dot=0.0):
    return np.tensordot(a_dot, b, axes) + np.tensordot(a, b_dot, axes)


@defvjp(np.tensordot, wrt=("a", "b"))
def tensordot_vjp(g, a, b, axes=2):
    plan = tensordot_plan(np.ndim(a), np.ndim(b), axes)
    a_bar = np.transpose(np.tensordot(g, b, (plan[0], plan[1])), plan[2])
    b_bar = np.transpose(np.tensordot(a, g, (plan[3], plan[4])), plan[5])
    return a_bar, b_bar


def_linear(np.tensordot, wrt=(0, 1))
