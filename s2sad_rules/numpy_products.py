"""Rules for NumPy products not in operators.py / numpy_reductions.py: inner einsum kron cross
vecdot vdot, and the `numpy.linalg` spellings of matmul, outer, tensordot and vecdot.

`cross` takes 2- and 3-vectors in any mix, along `axisa`/`axisb`/`axisc` or `axis`; a 2-vector is
(x, y, 0) and two of them give the z component alone, as NumPy 2.0-2.4 computes them (with its
DeprecationWarning, which the derivative's own cross products repeat); refused where NumPy no
longer computes them (2.5).

`einsum` is covered for one to four operands in explicit or implicit mode, with `...` and
broadcasting (a cotangent is summed back over the axes its operand was broadcast along), and
with an index repeated within one operand (a trace or a diagonal: "ii", "ii->i", "iij->j",
"ij,jj->i"): that operand's cotangent lies on its diagonal, zero elsewhere. `optimize=` is
accepted (the derivatives' own contractions use it too, a contraction path given as a list
becoming "greedy"); subscripts given as lists, `out=` and more than four operands are refused.
`vdot` and `vecdot` conjugate their first operand: its cotangent is conj(g b) (JAX's
convention for complex cotangents), the second's g conj(a).
"""

import warnings

import numpy as np

from s2sad.ir.prims import unbroadcast, zeros_like
from s2sad_rules import numpy_reductions, operators
from s2sad_rules.kind_tests import is_complex, is_none
from s2sad_rules.numpy_reductions import tensordot_plan
from s2sad_rules.registry import Unknown, def_linear, def_nondiff, defcheck, defjvp, defvjp


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
def einsum_letters(subscripts, ndims):
    """(operand specs, output spec) of an einsum with `...` spelled out in unused letters.

    An operand's ellipsis covers its axes not named by letters, right-aligned against the
    longest one (broadcasting); the implicit output is the ellipsis then the letters used
    once, sorted (NumPy's rule).
    """
    subscripts = subscripts.replace(" ", "")
    ins, arrow, out = subscripts.partition("->")
    specs = ins.split(",")
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
            if c not in subscripts]
    widths = [n - (len(sp) - 3) if "..." in sp else 0 for sp, n in zip(specs, ndims)]
    ell = "".join(free[:max(widths)])
    specs = [sp.replace("...", ell[len(ell) - w:]) for sp, w in zip(specs, widths)]
    if arrow:
        out = out.replace("...", ell)
    else:
        letters = "".join(specs)
        out = ell + "".join(sorted(c for c in set(letters)
                                   if letters.count(c) == 1 and c not in ell))
    return (specs, out)


@def_nondiff
def einsum_plan(subscripts, shapes, which):
    """How to get operand `which`'s cotangent from g and the other operands.

    Returns (spec, expand, full): `spec` computes the cotangent on the operand's letters that
    occur in the output or another operand, in operand order; `expand` are the positions of
    the remaining (summed-away) letters, broadcast back to `full`, the operand's shape with
    every letter at its broadcast size (the cotangent is then summed to the operand's shape).
    """
    specs, out = einsum_letters(subscripts, [len(s) for s in shapes])
    sizes: dict = {}
    for sp, shape in zip(specs, shapes):
        for c, n in zip(sp, shape):
            sizes[c] = max(sizes.get(c, 1), n)
    mine = specs[which]
    unique = "".join(dict.fromkeys(mine))  # a repeated letter once (a diagonal), in order
    others = [sp for i, sp in enumerate(specs) if i != which]
    avail = out + "".join(others)
    kept = "".join(c for c in unique if c in avail)
    expand = tuple(i for i, c in enumerate(unique) if c not in avail)
    full = tuple(sizes[c] for c in unique)
    # a letter repeated within the operand: its later places are new axes of the cotangent,
    # which lies on the diagonal (einsum_diagonal_mask)
    repeats = tuple(i for i, c in enumerate(mine) if c in mine[:i])
    return (",".join([out] + others) + "->" + kept, expand, full, repeats,
            tuple(sizes[c] for c in mine), mine)


@def_nondiff
def einsum_diagonal_mask(spec, shape):
    """True where every letter repeated in `spec` has the same index at each of its places."""
    grids = np.indices(shape, sparse=True)
    mask = np.ones(shape, dtype=bool)
    for i, c in enumerate(spec):
        if spec.index(c) != i:
            mask = mask & (grids[i] == grids[spec.index(c)])
    return mask


@def_nondiff
def einsum_optimize(optimize):
    """The `optimize` for a cotangent's contraction: a path given as a list is for the call's
    own operands, so "greedy" instead."""
    return optimize if isinstance(optimize, (bool, str)) else "greedy"


@defcheck(np.einsum)
def einsum_check(subscripts):
    if not isinstance(subscripts, str):
        return "operands and subscripts given as lists (use a subscripts string)"
    if subscripts.count(",") > 3:  # (a fifth operand would land on `optimize`)
        return "more than 4 operands"
    return None


def einsum_without(spec, g, which, a, b, c, d, opt):
    """np.einsum(spec, g, *operands) with operand `which` left out (b, c, d may be None)."""
    if is_none(b):
        return np.einsum(spec, g, optimize=opt)
    if is_none(c):
        if which == 0:
            return np.einsum(spec, g, b, optimize=opt)
        return np.einsum(spec, g, a, optimize=opt)
    if is_none(d):
        if which == 0:
            return np.einsum(spec, g, b, c, optimize=opt)
        if which == 1:
            return np.einsum(spec, g, a, c, optimize=opt)
        return np.einsum(spec, g, a, b, optimize=opt)
    if which == 0:
        return np.einsum(spec, g, b, c, d, optimize=opt)
    if which == 1:
        return np.einsum(spec, g, a, c, d, optimize=opt)
    if which == 2:
        return np.einsum(spec, g, a, b, d, optimize=opt)
    return np.einsum(spec, g, a, b, c, optimize=opt)


def einsum_bar(g, subscripts, which, like, a, b, c, d, optimize):
    """Cotangent of operand `which` (`like`): g contracted with the others, summed back over
    the axes it was broadcast along, broadcast over the axes only it had, and laid on the
    diagonal where a letter repeats within the operand."""
    # np.shape(None) is (); einsum_plan reads as many shapes as there are operands
    shapes = (np.shape(a), np.shape(b), np.shape(c), np.shape(d))
    plan = einsum_plan(subscripts, shapes, which)
    part = einsum_without(plan[0], g, which, a, b, c, d, einsum_optimize(optimize))
    if plan[1]:
        part = np.broadcast_to(np.expand_dims(part, plan[1]), plan[2])
    if plan[3]:
        part = np.expand_dims(part, plan[3]) * einsum_diagonal_mask(plan[5], plan[4])
    return unbroadcast(part, like)


@defjvp(np.einsum)
def einsum_jvp(subscripts, a, b=None, c=None, d=None, optimize=False, a_dot=0.0, b_dot=0.0,
               c_dot=0.0, d_dot=0.0):
    # linear in each operand: a repeated index (a diagonal) is taken of the tangent alike
    opt = optimize
    if b is None:
        return np.einsum(subscripts, a_dot, optimize=opt)
    if c is None:
        return (np.einsum(subscripts, a_dot, b, optimize=opt)
                + np.einsum(subscripts, a, b_dot, optimize=opt))
    if d is None:
        return (np.einsum(subscripts, a_dot, b, c, optimize=opt)
                + np.einsum(subscripts, a, b_dot, c, optimize=opt)
                + np.einsum(subscripts, a, b, c_dot, optimize=opt))
    return (np.einsum(subscripts, a_dot, b, c, d, optimize=opt)
            + np.einsum(subscripts, a, b_dot, c, d, optimize=opt)
            + np.einsum(subscripts, a, b, c_dot, d, optimize=opt)
            + np.einsum(subscripts, a, b, c, d_dot, optimize=opt))


@defvjp(np.einsum, wrt=("a", "b", "c", "d"))
def einsum_vjp(g, subscripts, a, b=None, c=None, d=None, optimize=False):
    a_bar = einsum_bar(g, subscripts, 0, a, a, b, c, d, optimize)
    b_bar = None if is_none(b) else einsum_bar(g, subscripts, 1, b, a, b, c, d, optimize)
    c_bar = None if is_none(c) else einsum_bar(g, subscripts, 2, c, a, b, c, d, optimize)
    d_bar = None if is_none(d) else einsum_bar(g, subscripts, 3, d, a, b, c, d, optimize)
    return a_bar, b_bar, c_bar, d_bar


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


def _cross_of_2_vectors() -> bool:
    """Does this NumPy still compute the cross product of 2-vectors (deprecated in 2.0)?"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            np.cross(np.ones(2), np.ones(2))
        except ValueError:
            return False
    return True


CROSS_OF_2_VECTORS = _cross_of_2_vectors()


@defcheck(np.cross)
def cross_check(a, b, axisa=-1, axisb=-1, axis=None):
    for x, ax in ((a, axisa if axis is None else axis), (b, axisb if axis is None else axis)):
        shape = x.shape if isinstance(x, Unknown) else np.shape(x)
        if shape is None or isinstance(ax, Unknown):
            return "operands or axes whose shapes are not known at compile time"
        if not -len(shape) <= ax < len(shape) or shape[ax] not in (2, 3):
            return f"vectors of {shape[ax] if -len(shape) <= ax < len(shape) else '?'} " \
                "components (NumPy takes 2 or 3)"
        if shape[ax] == 2 and not CROSS_OF_2_VECTORS:
            return "2-vectors (this NumPy no longer computes their cross product)"
    return None


@defjvp(np.cross)
def cross_jvp(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None, a_dot=0.0, b_dot=0.0):
    # bilinear: also for 2-vectors (NumPy warns that they are deprecated, as for the primal)
    return (np.cross(a_dot, b, axisa, axisb, axisc, axis)
            + np.cross(a, b_dot, axisa, axisb, axisc, axis))


@defvjp(np.cross, wrt=("a", "b"))
def cross_vjp(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    # with the vectors along the last axis, <g, a x b> = <b x g, a> = <g x a, b>; `axis`
    # overrides the other three
    if axis is not None:
        return cross_vjp_last(g, a, b, axis, axis, axis)
    return cross_vjp_last(g, a, b, axisa, axisb, axisc)


def cross_vjp_last(g, a, b, axisa, axisb, axisc):
    """A 2-vector is (x, y, 0), as NumPy reads it: two 2-vectors give the z component alone
    (no vector axis, `axisc` unused), a 2-vector with a 3-vector a 3-vector."""
    af = np.moveaxis(a, axisa, 0)
    bf = np.moveaxis(b, axisb, 0)
    if np.shape(af)[0] == 2 and np.shape(bf)[0] == 2:
        # z = a0 b1 - a1 b0
        gz = np.expand_dims(g, 0)
        a_bar = np.concatenate([gz * bf[1:2], -(gz * bf[:1])])
        b_bar = np.concatenate([-(gz * af[1:2]), gz * af[:1]])
        return cross_back(a_bar, a, axisa), cross_back(b_bar, b, axisb)
    a3 = np.moveaxis(cross_pad(af), 0, -1)
    b3 = np.moveaxis(cross_pad(bf), 0, -1)
    g3 = np.moveaxis(g, axisc, -1)
    a_bar = np.moveaxis(np.cross(b3, g3), -1, 0)
    b_bar = np.moveaxis(np.cross(g3, a3), -1, 0)
    if np.shape(af)[0] == 2:
        a_bar = a_bar[:2]
    if np.shape(bf)[0] == 2:
        b_bar = b_bar[:2]
    return cross_back(a_bar, a, axisa), cross_back(b_bar, b, axisb)


def cross_pad(v):
    """A 2-vector (along axis 0) as the 3-vector (x, y, 0)."""
    if np.shape(v)[0] == 2:
        return np.concatenate([v, zeros_like(v[:1])])
    return v


def cross_back(bar, x, axis):
    """A cotangent with its vector axis first and the broadcast batch shape, summed to the
    shape of `x`, whose vectors lie along `axis`."""
    return np.moveaxis(unbroadcast(np.moveaxis(bar, 0, -1), np.moveaxis(x, axis, -1)), -1, axis)


@defjvp(np.vecdot, np.linalg.vecdot)
def vecdot_jvp(x1, x2, x1_dot, x2_dot):
    return np.vecdot(x1_dot, x2) + np.vecdot(x1, x2_dot)


@defvjp(np.vecdot, np.linalg.vecdot)
def vecdot_vjp(g, x1, x2):
    gx = np.expand_dims(g, -1)
    return unbroadcast(conj_if_complex(gx * x2, x1), x1), unbroadcast(gx * conj_of(x1), x2)


def conj_of(x):
    """conj(x), x itself when x is real (decided at compile time)."""
    if is_complex(x):
        return np.conj(x)
    return x


def conj_if_complex(t, x):
    """The cotangent of a conjugated operand x (vdot's and vecdot's first): conj(t) for a
    complex x (JAX's convention: dz -> b conj(dz) has transpose g -> conj(b g)); for a real x,
    t (its real part is taken where x receives it)."""
    if is_complex(x):
        return np.conj(t)
    return t


# vdot(a, b) = sum(conj(a).ravel() * b.ravel()): conjugate-linear in a, linear in b
@defjvp(np.vdot)
def vdot_jvp(a, b, a_dot, b_dot):
    return np.vdot(a_dot, b) + np.vdot(a, b_dot)


@defvjp(np.vdot)
def vdot_vjp(g, a, b):
    a_bar = np.reshape(conj_if_complex(g * np.ravel(b), a), np.shape(a))
    return a_bar, np.reshape(g * np.ravel(conj_of(a)), np.shape(b))


# numpy.linalg's array-API spellings share the rules of their numpy namesakes
defjvp(np.linalg.matmul)(operators.matmul_jvp)
defvjp(np.linalg.matmul)(operators.matmul_vjp)
defjvp(np.linalg.outer)(numpy_reductions.outer_jvp)
defvjp(np.linalg.outer)(numpy_reductions.outer_vjp)
defjvp(np.linalg.tensordot)(numpy_reductions.tensordot_jvp)
defvjp(np.linalg.tensordot, wrt=("a", "b"))(numpy_reductions.tensordot_vjp)

def_linear(np.inner, np.kron, np.cross, np.vecdot, np.linalg.vecdot, np.linalg.matmul,
           np.linalg.outer, np.linalg.tensordot, wrt=(0, 1))
def_linear(np.einsum, wrt=(1, 2, 3, 4))
