"""Rules for the structural primitives: indexing, attributes, and the compiler's shape helpers."""

import operator

import numpy as np

from s2sad.ir import prims
from s2sad.ir.prims import Attr, broadcast_like, index_add, unbroadcast, zeros_like
from s2sad_rules.registry import TABLE, def_linear, def_nondiff, defjvp, defvjp


@defjvp(operator.getitem)
def getitem_jvp(x, index, x_dot):
    return x_dot[index]


@defvjp(operator.getitem, wrt=("x",))
def getitem_vjp(g, x, index):
    return prims_scatter(g, x, index)


def prims_scatter(g, x, index):
    return index_add(zeros_like(x), index, g)


@defjvp(index_add)
def index_add_jvp(acc, index, g, acc_dot, g_dot):
    return index_add(acc_dot, index, g_dot)


@defvjp(index_add, wrt=("acc", "v"))
def index_add_vjp(g, acc, index, v):
    return g, g[index]


@defjvp(Attr("T"))
def T_jvp(x, x_dot):
    return x_dot.T


@defvjp(Attr("T"))
def T_vjp(g, x):
    return g.T


@defjvp(Attr("real"))
def real_jvp(x, x_dot):
    return x_dot.real


@defvjp(Attr("real"))
def real_vjp(g, x):
    return g


@defjvp(unbroadcast)
def unbroadcast_jvp(g, x, g_dot, x_dot):
    # x only contributes its shape: its tangent (x_dot) has no effect
    return unbroadcast(g_dot, x)


@defvjp(unbroadcast, wrt=("t", "x"))
def unbroadcast_vjp(g, t, x):
    # the primitive's own first parameter is renamed `t`: `g` is the cotangent here
    return broadcast_like(g, t), zeros_like(x)


@defjvp(broadcast_like)
def broadcast_like_jvp(t, x, t_dot, x_dot):
    return broadcast_like(t_dot, x)  # x only contributes its shape


@defvjp(broadcast_like, wrt=("t", "x"))
def broadcast_like_vjp(g, t, x):
    return unbroadcast(g, t), zeros_like(x)


def_linear(operator.getitem, Attr("T"), Attr("real"), unbroadcast, broadcast_like, wrt=(0,))
# index_add is linear in (acc, g) jointly, like +: the simplifier handles its zeros
def_nondiff(zeros_like, Attr("shape"), Attr("ndim"), Attr("size"), Attr("dtype"), slice, len,
            prims.new_tape, prims.tape_push, prims.tape_pop, prims.tape_reader, prims.tape_next,
            prims.sweep_boundary, prims.index_add_inplace, prims.index_add_at)
# tuples and lists are handled structurally by the passes; they are primitives all the same
TABLE.nondiff.setdefault(prims.make_tuple, False)
TABLE.nondiff.setdefault(prims.make_list, False)
