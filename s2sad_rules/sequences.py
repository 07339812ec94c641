"""Rules for functions of a list of numbers: builtin sum, math.fsum, math.prod, math.dist.

A list's cotangent is anything whose items are the items' cotangents: these rules return
an array with one row per item (the items must share one shape). `math.prod` is exact
where factors are zero (as np.prod: the product of the other factors); `math.dist` at 0
gives the subgradient 0.
"""

import math

import numpy as np

from s2sad.ir.prims import as_list, list_append, prod_others
from s2sad_rules.registry import def_linear, def_nondiff, defjvp, defvjp


@def_nondiff
def rows_shape(items, g):
    """The shape of an array holding one copy of `g` per item."""
    return (len(items),) + np.shape(g)


@defjvp(sum, math.fsum)
def sum_jvp(iterable, iterable_dot):
    return sum(iterable_dot)


@defvjp(sum, math.fsum)
def sum_vjp(g, iterable):
    return np.broadcast_to(g, rows_shape(iterable, g))


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


def_linear(sum, math.fsum)


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
