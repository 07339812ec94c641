"""Rules for the structural primitives: indexing, attributes, and the compiler's shape helpers."""

import operator

import numpy as np

from s2sad.ir import prims
from s2sad.ir.prims import (
    Attr,
    broadcast_like,
    cast_like,
    index_add,
    index_update,
    sum_to_shape,
    take_slot,
    unbroadcast,
    zeros_like,
)
from s2sad_rules.registry import TABLE, def_linear, def_nondiff, defjvp, defvjp


@defjvp(operator.getitem)
def getitem_jvp(x, index, x_dot):
    return x_dot[index]


@defvjp(operator.getitem, wrt=("x",))
def getitem_vjp(g, x, index):
    return prims_scatter(g, x, index)


def prims_scatter(g, x, index):
    return index_add(zeros_like(x), index, g)


@defjvp(prims.item)
def item_jvp(x, x_dot):
    # (`x.item()` of an array of one entry; NumPy raises for more)
    return prims.item(x_dot)


@defvjp(prims.item)
def item_vjp(g, x):
    return np.reshape(g, np.shape(x))


@defjvp(index_add)
def index_add_jvp(acc, index, g, acc_dot, g_dot):
    return index_add(acc_dot, index, g_dot)


@defvjp(index_add, wrt=("acc", "v"))
def index_add_vjp(g, acc, index, v):
    return g, unbroadcast(g[index], v)  # v may be broadcast over the slots (a scalar)


@defjvp(index_update)
def index_update_jvp(acc, index, v, acc_dot, v_dot):
    return index_update(acc_dot, index, v_dot)


@defvjp(index_update, wrt=("acc", "v"))
def index_update_vjp(g, acc, index, v):
    # the written value gets the slots' cotangent (read first); the overwritten slots none
    v_bar = unbroadcast(take_slot(g, index), v)
    return index_update(g, index, 0.0), v_bar


@defjvp(take_slot)
def take_slot_jvp(g, index, g_dot):
    return take_slot(g_dot, index)


@defvjp(take_slot, wrt=("t",))
def take_slot_vjp(g, t, index):
    # the transpose of reading each position's last write: writing each position once,
    # from its last occurrence (an assignment keeps the last of a repeated position)
    return index_update(zeros_like(t), index, g)


@defjvp(sum_to_shape)
def sum_to_shape_jvp(g, shape, g_dot):
    return sum_to_shape(g_dot, shape)


@defvjp(sum_to_shape, wrt=("t",))
def sum_to_shape_vjp(g, t, shape):
    return np.broadcast_to(g, np.shape(t))


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


@defjvp(cast_like)
def cast_like_jvp(g, x, g_dot, x_dot):
    return cast_like(g_dot, x)  # x only contributes its dtype


@defvjp(cast_like, wrt=("t", "x"))
def cast_like_vjp(g, t, x):
    # the primitive's own first parameter is renamed `t`: `g` is the cotangent here
    return cast_like(g, t), zeros_like(x)


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


def_linear(operator.getitem, prims.item, Attr("T"), Attr("real"), unbroadcast, broadcast_like,
           cast_like, take_slot, sum_to_shape, wrt=(0,))
# index_add is linear in (acc, g) jointly, like +: the simplifier handles its zeros
def_nondiff(zeros_like, Attr("shape"), Attr("ndim"), Attr("size"), Attr("dtype"), slice, len,
            prims.new_tape, prims.tape_push, prims.tape_pop, prims.tape_reader, prims.tape_next,
            prims.sweep_boundary, prims.index_add_inplace, prims.index_add_at,
            prims.index_update_inplace, prims.add_inplace, prims.mul_inplace)
# tuples and lists are handled structurally by the passes; they are primitives all the same
TABLE.nondiff.setdefault(prims.make_tuple, False)
TABLE.nondiff.setdefault(prims.make_list, False)
