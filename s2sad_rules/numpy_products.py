"""Rules for NumPy products not in operators.py / numpy_reductions.py: inner einsum kron cross
vecdot, and the `numpy.linalg` spellings of matmul, outer, tensordot and vecdot.

`einsum` is covered for one or two operands in explicit or implicit mode, without `...` and
without an index repeated within one operand.
"""

import numpy as np

from s2sad.ir.prims import unbroadcast
from s2sad_rules import operators, numpy_reductions
from s2sad_rules.numpy_reductions import tensordot_plan
from s2sad_rules.registry import def_linear, def_nondiff, defjvp, defvjp


@defjvp(np.inner)
def inner_jvp(a, b, a_dot, b_dot):
    return np.inner(a_dot, b) + np.inner(a, b_dot)


@defvjp(np.inner)
def inner_vjp(g, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a), unbroadcast(a * g, b)
    plan = tensordot_plan(np.ndim(a), np.ndim(b), ((np.ndim(a) - 1,), (np.ndim(b) - 1,)))
    a_bar = np.transpose(np.tensordot(g, b, (plan[0], plan[1])), plan[2])
    b_bar = np.transpose(np.tensordot(a, g, (plan[3], plan[4])), plan[5])
    return a_bar, b_bar


@def_nondiff
def einsum_plan(subscripts, which):
    """The einsum spec giving operand `which`'s cotangent from (g, other operand).

    Returns (spec, kept, expand): `spec` computes the cotangent on the operand's indices that
    occur in the output or the other operand (`kept`, in operand order); `expand` are the
    positions of the remaining (summed-away) indices, to be broadcast back.
    """
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins = subscripts
        letters = ins.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    ops = ins.split(",")
    mine = ops[which]
    others = [o for i, o in enumerate(ops) if i != which]
    avail = out + "".join(others)
    kept = "".join(c for c in mine if c in avail)
    expand = tuple(i for i, c in enumerate(mine) if c not in avail)
    spec = ",".join([out] + others) + "->" + kept
    return (spec, expand)


def einsum_bar(g, subscripts, which, other, like):
    plan = einsum_plan(subscripts, which)
    if other is None:
        part = np.einsum(plan[0], g)
    else:
        part = np.einsum(plan[0], g, other)
    return np.broadcast_to(np.expand_dims(part, plan[1]), np.shape(like))


@defjvp(np.einsum)
def einsum_jvp(subscripts, a, b=None, a_dot=0.0, b_dot=0.0):
    if b is None:
        return np.einsum(subscripts, a_dot)
    return np.einsum(subscripts, a_dot, b) + np.einsum(subscripts, a, b_dot)


@defvjp(np.einsum, wrt=("a", "b"))
def einsum_vjp(g, subscripts, a, b=None):
    if b is None:
        return einsum_bar(g, subscripts, 0, None, a), None
    return einsum_bar(g, subscripts, 0, b, a), einsum_bar(g, subscripts, 1, a, b)


@defjvp(np.kron)
def kron_jvp(a, b, a_dot, b_dot):
    return np.kron(a_dot, b) + np.kron(a, b_dot)


@def_nondiff
def kron_plan(shape_a, shape_b):
    """How to read kron(a, b)'s cotangent as blocks: (interleaved shape, a's axes in it,
    b's axes in it, a's shape padded to the common rank, b's shape padded likewise, the
    axes of a padded operand).

    Both operands are padded with leading 1s to a common rank r; then
    kron(a, b)[i_0 p_0 + k_0, ...] = a[i_0, ...] b[k_0, ...], so the cotangent reshaped to
    (m_0, p_0, m_1, p_1, ...) has a's axes at even and b's at odd positions.
    """
    r = max(len(shape_a), len(shape_b))
    pa = (1,) * (r - len(shape_a)) + tuple(shape_a)
    pb = (1,) * (r - len(shape_b)) + tuple(shape_b)
    blocks = tuple(n for pair in zip(pa, pb) for n in pair)
    return (blocks, tuple(range(0, 2 * r, 2)), tuple(range(1, 2 * r, 2)), pa, pb,
            tuple(range(r)))


@defvjp(np.kron)
def kron_vjp(g, a, b):
    plan = kron_plan(np.shape(a), np.shape(b))
    blocks = np.reshape(g, plan[0])
    a_bar = np.tensordot(blocks, np.reshape(b, plan[4]), (plan[2], plan[5]))
    b_bar = np.tensordot(blocks, np.reshape(a, plan[3]), (plan[1], plan[5]))
    return np.reshape(a_bar, np.shape(a)), np.reshape(b_bar, np.shape(b))


@defjvp(np.cross)
def cross_jvp(a, b, a_dot, b_dot):
    return np.cross(a_dot, b) + np.cross(a, b_dot)


@defvjp(np.cross)
def cross_vjp(g, a, b):
    # 3-vectors along the last axis; <g, a x b> = <b x g, a> = <g x a, b>
    return unbroadcast(np.cross(b, g), a), unbroadcast(np.cross(g, a), b)


@defjvp(np.vecdot, np.linalg.vecdot)
def vecdot_jvp(x1, x2, x1_dot, x2_dot):
    return np.vecdot(x1_dot, x2) + np.vecdot(x1, x2_dot)


@defvjp(np.vecdot, np.linalg.vecdot)
def vecdot_vjp(g, x1, x2):
    gx = np.expand_dims(g, -1)
    return unbroadcast(gx * x2, x1), unbroadcast(gx * x1, x2)


# numpy.linalg's array-API spellings share the rules of their numpy namesakes
defjvp(np.linalg.matmul)(operators.matmul_jvp)
defvjp(np.linalg.matmul)(operators.matmul_vjp)
defjvp(np.linalg.outer)(numpy_reductions.outer_jvp)
defvjp(np.linalg.outer)(numpy_reductions.outer_vjp)
defjvp(np.linalg.tensordot)(numpy_reductions.tensordot_jvp)
defvjp(np.linalg.tensordot, wrt=("a", "b"))(numpy_reductions.tensordot_vjp)

def_linear(np.inner, np.kron, np.cross, np.vecdot, np.linalg.vecdot, np.linalg.matmul,
           np.linalg.outer, np.linalg.tensordot, wrt=(0, 1))
def_linear(np.einsum, wrt=(1, 2))
