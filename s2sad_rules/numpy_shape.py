"""Rules for shape and layout functions (reshape, transpose, array construction...)."""

import numpy as np

from s2sad.ir.prims import cast_like, unbroadcast
from s2sad_rules.kind_tests import is_complex, shape_only
from s2sad_rules.numpy_construction import reshape_items, shape_stand_ins
from s2sad_rules.registry import def_linear, def_nondiff, defcheck, defjvp, defvjp


# reshape and ravel read and write entries in C order, or in Fortran order (order="F");
# ravel's order="K" reads them in the order they lie in memory, which the array's strides
# give (memory_order: a permutation of the C order). order="A" (F or C by the array's
# layout, which its derivative need not share) is refused.
@defjvp(np.reshape)
def reshape_jvp(a, shape, order="C", a_dot=0.0):
    if order == "F":
        return np.reshape(a_dot, shape, order="F")
    return np.reshape(a_dot, shape)


@defvjp(np.reshape, wrt=("a",))
def reshape_vjp(g, a, shape, order="C"):
    if order == "F":
        return np.reshape(g, np.shape(a), order="F")
    return np.reshape(g, np.shape(a))


@defjvp(np.ravel)
def ravel_jvp(a, order="C", a_dot=0.0):
    if order == "F":
        return np.ravel(a_dot, order="F")
    if order == "K":
        return np.ravel(a_dot)[memory_order(a)]
    return np.ravel(a_dot)


@defvjp(np.ravel, wrt=("a",))
def ravel_vjp(g, a, order="C"):
    if order == "F":
        return np.reshape(g, np.shape(a), order="F")
    if order == "K":
        return np.reshape(g[np.argsort(memory_order(a))], np.shape(a))
    return np.reshape(g, np.shape(a))


@def_nondiff
def memory_order(a):
    """The C-order positions of `a`'s entries in the order np.ravel(a, order="K") reads
    them (the order they lie in memory)."""
    positions = np.empty_like(a, dtype=np.intp)  # (laid out as `a` is)
    positions[...] = np.reshape(np.arange(np.size(a)), np.shape(a))
    return np.ravel(positions, order="K")


@defcheck(np.ravel)
def ravel_check(order="C"):
    if order not in ("C", "F", "K", None):
        return (f"order={order!r} (the derivative covers 'C', 'F' and 'K'; 'A' follows "
                "the array's memory layout, which its derivative need not share)")
    return None


@defcheck(np.reshape)
def reshape_check(order="C"):
    if order not in ("C", "F", None):
        return (f"order={order!r} (the derivative covers 'C' and 'F'; 'A' follows the "
                "array's memory layout, which its derivative need not share)")
    return None


@defjvp(np.transpose)
def transpose_jvp(a, axes=None, a_dot=0.0):
    return np.transpose(a_dot, axes)


@defvjp(np.transpose)
def transpose_vjp(g, a, axes=None):
    return np.transpose(g, inverse_axes(axes, np.ndim(a)))


@def_nondiff
def inverse_axes(axes, ndim):
    """The permutation that undoes `np.transpose(x, axes)` (None reverses and is its own)."""
    if axes is None:
        return None
    return tuple(int(i) for i in np.argsort([a % ndim for a in axes]))


@defjvp(np.swapaxes)
def swapaxes_jvp(a, axis1, axis2, a_dot):
    return np.swapaxes(a_dot, axis1, axis2)


@defvjp(np.swapaxes, wrt=("a",))
def swapaxes_vjp(g, a, axis1, axis2):
    return np.swapaxes(g, axis1, axis2)


@defjvp(np.moveaxis)
def moveaxis_jvp(a, source, destination, a_dot):
    return np.moveaxis(a_dot, source, destination)


@defvjp(np.moveaxis, wrt=("a",))
def moveaxis_vjp(g, a, source, destination):
    return np.moveaxis(g, destination, source)


@defjvp(np.rollaxis)
def rollaxis_jvp(a, axis, start=0, a_dot=0.0):
    return np.rollaxis(a_dot, axis, start)


@defvjp(np.rollaxis, wrt=("a",))
def rollaxis_vjp(g, a, axis, start=0):
    return np.moveaxis(g, rolled_to(np.ndim(a), axis, start), axis)


@def_nondiff
def rolled_to(ndim, axis, start):
    """Where np.rollaxis(a, axis, start) puts `axis` (it lands before `start`)."""
    axis = axis % ndim
    start = start + ndim if start < 0 else start
    return start - 1 if start > axis else start


@defjvp(np.expand_dims)
def expand_dims_jvp(a, axis, a_dot):
    return np.expand_dims(a_dot, axis)


@defvjp(np.expand_dims, wrt=("a",))
def expand_dims_vjp(g, a, axis):
    return np.reshape(g, np.shape(a))


@defjvp(np.squeeze)
def squeeze_jvp(a, axis=None, a_dot=0.0):
    return np.squeeze(a_dot, axis)


@defvjp(np.squeeze)
def squeeze_vjp(g, a, axis=None):
    return np.reshape(g, np.shape(a))


@defjvp(np.broadcast_to)
def broadcast_to_jvp(array, shape, array_dot):
    return np.broadcast_to(array_dot, shape)


@defvjp(np.broadcast_to, wrt=("array",))
def broadcast_to_vjp(g, array, shape):
    return unbroadcast(g, array)


@defjvp(np.copy)
def copy_jvp(a, a_dot):
    return a_dot


@defvjp(np.copy)
def copy_vjp(g, a):
    return g


# np.array / np.asarray with a float or complex `dtype` pass derivatives through (a JVP rule
# emits np.array(..., dtype=float), so that this keeps every generated JVP differentiable);
# an integer dtype gives an integer result, which carries no derivative. The cotangent goes
# back in the argument's own precision (a float64 array's through dtype=np.float32 is float64).
# `device=` is the CPU's, NumPy's only one (scikit-learn's array-API code passes it).
@defjvp(np.asarray)
def asarray_jvp(a, dtype=None, a_dot=0.0, *, device=None):
    return np.asarray(a_dot, dtype=dtype)


@defvjp(np.asarray, wrt=("a",))
def asarray_vjp(g, a, dtype=None, *, device=None):
    return cast_like(g, a)


@defjvp(np.array)
def array_jvp(object, dtype=None, object_dot=0.0, ans=0.0):
    if dtype is None:
        if is_complex(ans):
            return np.array(object_dot, dtype=complex)
        return np.array(object_dot, dtype=float)
    return np.array(object_dot, dtype=dtype)


@defvjp(np.array, wrt=("object",))
def array_vjp(g, object, dtype=None):
    # a list's cotangent is anything whose items are the items' cotangents: the array itself
    return cast_like(g, object)


@defjvp(np.concatenate)
def concatenate_jvp(arrays, axis=0, arrays_dot=0.0):
    return np.concatenate(arrays_dot, axis)


@defvjp(np.concatenate)
def concatenate_vjp(g, arrays, axis=0):
    if axis is None:  # the inputs were flattened first
        return reshape_items(np.split(g, split_points(arrays, axis)), shape_stand_ins(arrays))
    return np.split(g, split_points(arrays, axis), axis)


@shape_only
@def_nondiff
def split_points(arrays, axis):
    """Where np.split must cut a concatenation's cotangent to recover its parts."""
    sizes = [np.size(a) if axis is None else np.shape(a)[axis] for a in arrays]
    return list(np.cumsum(sizes)[:-1])


@defjvp(np.stack)
def stack_jvp(arrays, axis=0, arrays_dot=0.0):
    return np.stack(arrays_dot, axis)


@defvjp(np.stack)
def stack_vjp(g, arrays, axis=0):
    if axis == 0:
        return g
    return np.moveaxis(g, axis, 0)


def_linear(np.rollaxis, wrt=(0,))
def_linear(np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.expand_dims,
           np.squeeze, np.broadcast_to, np.copy, np.asarray, np.array, np.concatenate,
           np.stack, wrt=(0,))

