"""Rules for functions of a list of numbers: builtin sum, math.fsum, math.prod, math.dist.

A list's cotangent is anything whose items are the items' cotangents: these rules return
an array with one row per item (the items must share one shape). `math.prod` is exact
where factors are zero (as np.prod: the product of the other factors); `math.dist` at 0
gives the subgradient 0.
"""

import math

import numpy as np

from s2sad.errors import MissingRuleError
from s2sad.ir.kinds import KIND_RULES, scalar
from s2sad.ir.prims import as_list, list_append, prod_others, sum_to_shape, unbroadcast
from s2sad_rules.kind_tests import is_none, shape_only
from s2sad_rules.registry import def_linear, def_nondiff, defjvp, defvjp


@def_nondiff
def rows_shape(items, g):
    """The shape of an array holding one copy of `g` per item."""
    return (len(items),) + np.shape(g)


@shape_only
@def_nondiff
def summed_item_shape(items):
    """The shape of the items of a list given to `sum` with a `start` (() for none)."""
    return np.shape(items[0]) if len(items) else ()


@def_nondiff
def items_differ(items):
    """Do the items of a list given to `sum` have different shapes? Decided from their kinds
    while compiling (_items_differ_kind), never per call: a list of run time is taken as
    one shape, as NumPy's broadcast_to of its cotangent then checks."""
    return len({np.shape(x) for x in items}) > 1


def _items_differ_kind(args, kwargs):
    k = args[0]
    if k.tag in ("list", "tuple") and k.items is not None:
        shapes = {i.static_shape if i.tag in ("scalar", "array") else None for i in k.items}
        return scalar("b", None not in shapes and len(shapes) > 1)
    return scalar("b", False)


KIND_RULES[items_differ] = _items_differ_kind


@def_nondiff
def one_item_shape(differ):
    """0.0 for items of one shape; refuses items of different shapes (while compiling:
    `differ` is decided from the kinds, and the call folded, as refusals.supported's)."""
    if not differ:
        return 0.0
    raise MissingRuleError(
        "the derivative rules of sum do not cover items of different shapes (NumPy "
        "broadcasts them)",
        hint="add the items with + (x0 + x1 + ...), or make them one shape first "
             "(np.broadcast_to)")


@def_nondiff
def rows_of(items, shape):
    """The shape of an array of one cotangent of `shape` per item."""
    return (len(items),) + shape


@defjvp(math.fsum)
def fsum_jvp(iterable, iterable_dot):
    return sum(iterable_dot)


@defvjp(math.fsum)
def fsum_vjp(g, iterable):
    return np.broadcast_to(g, rows_shape(iterable, g))


@defjvp(sum)
def sum_jvp(iterable, start=None, iterable_dot=0.0, start_dot=0.0):
    # (an absent `start` is None here: Python's is 0)
    if is_none(start):
        return sum(iterable_dot)
    return sum(iterable_dot, start_dot)


@defvjp(sum, wrt=("iterable", "start"))
def sum_vjp(g, iterable, start=None):
    g = g + one_item_shape(items_differ(iterable))
    if is_none(start):  # (then g has the items' shape)
        return np.broadcast_to(g, rows_shape(iterable, g)), None
    # `start` may broadcast the items: each gets g summed down to their shape
    shape = summed_item_shape(iterable)
    return np.broadcast_to(sum_to_shape(g, shape), rows_of(iterable, shape)), \
        unbroadcast(g, start)


@defjvp(math.prod)
def prod_jvp(iterable, iterable_dot, ans):
    return np.sum(np.asarray(iterable_dot) * prod_others(iterable, None, False, ans))


@defvjp(math.prod)
def prod_vjp(g, ans, iterable):
    return g * prod_others(iterable, None, False, ans)


@defjvp(math.dist)
def dist_jvp(p, q, p_dot, q_dot, ans):
    d = np.asarray(p) - np.asarray(q)
    return float(np.dot(d, np.asarray(p_dot) - np.asarray(q_dot))) / (ans + (ans == 0.0))


@defvjp(math.dist)
def dist_vjp(g, ans, p, q):
    d = (np.asarray(p) - np.asarray(q)) * (g / (ans + (ans == 0.0)))
    return d, -d


# (not `sum`: sum(zeros, start) is `start`)
def_linear(math.fsum)


# ys.append(y) in differentiated code (s2sad.ir.prims.list_append): a grown list's
# cotangent is an array with one row per item; the row of the appended item goes to it,
# the rows before it to the list it was appended to.
@defjvp(list_append)
def list_append_jvp(xs, v, xs_dot, v_dot):
    return list_append(xs_dot, v_dot)


@defvjp(list_append)
def list_append_vjp(g, xs, v):
    n = len(xs)
    return g[:n], g[n]


@defjvp(as_list)
def as_list_jvp(xs, xs_dot):
    return as_list(xs_dot)


@defvjp(as_list)
def as_list_vjp(g, xs):
    return np.asarray(g)
