"""Rules for `scipy.linalg.solve_triangular` (a 2-D triangular `a`, a vector or matrix `b`).

Loaded, like scipy_special, the first time a differentiated function calls scipy.linalg;
SciPy's other linalg functions are refused where called (their source cannot be inlined).
x solves op(a) x = b, op(a) = a (trans=0 or "N") or a^T (trans=1, 2, "T", "C": the same for
real matrices; complex arguments are refused). Only the triangle SciPy reads is
differentiated (without the diagonal when unit_diagonal=True): a's cotangent is zero
elsewhere, and a tangent outside it has no effect. Stacked matrices are refused.
"""

import numpy as np
import scipy.linalg as la

from s2sad_rules.real_only import real_only
from s2sad_rules.registry import TABLE, Unknown, defcheck, defjvp, defvjp


@defcheck(la.solve_triangular)
def solve_triangular_check(a, b, trans=0, lower=False, unit_diagonal=False):
    ndim = a.ndim if isinstance(a, Unknown) else np.ndim(a)
    if ndim is None:
        return "an `a` whose number of axes is not known while compiling (a 2-D `a` only)"
    if ndim != 2:
        return "a stack of matrices (a 2-D `a` only)"
    if any(isinstance(v, Unknown) for v in (trans, lower, unit_diagonal)):
        return "`trans`, `lower` or `unit_diagonal` not known at compile time"
    return None


def transposed(trans):
    """Is op(a) = a^T for this `trans` (1, 2, "T", "C"; the same for a real matrix)?"""
    return trans == 1 or trans == 2 or trans == "T" or trans == "C"


def read_triangle(x, lower, unit_diagonal):
    """The part of x that solve_triangular reads: its lower or upper triangle, without the
    diagonal for a unit diagonal."""
    if lower:
        return np.tril(x, -1 if unit_diagonal else 0)
    return np.triu(x, 1 if unit_diagonal else 0)


def as_columns(x):
    """x as a matrix: a vector as one column."""
    return np.reshape(x, (np.shape(x)[0], -1))


@defjvp(la.solve_triangular)
def solve_triangular_jvp(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                         check_finite=True, a_dot=0.0, b_dot=0.0, ans=0.0):
    da = read_triangle(a_dot, lower, unit_diagonal)
    if transposed(trans):
        da = np.swapaxes(da, -1, -2)
    return la.solve_triangular(a, b_dot - np.reshape(da @ as_columns(ans), np.shape(ans)),
                               trans=trans, lower=lower, unit_diagonal=unit_diagonal)


@defvjp(la.solve_triangular, wrt=("a", "b"))
def solve_triangular_vjp(g, ans, a, b, trans=0, lower=False, unit_diagonal=False,
                         overwrite_b=False, check_finite=True):
    # b_bar solves op(a)^T b_bar = g; a_bar = -b_bar x^T (trans=0) or -x b_bar^T, in the
    # triangle that is read
    if transposed(trans):
        b_bar = la.solve_triangular(a, g, trans=0, lower=lower, unit_diagonal=unit_diagonal)
        outer = as_columns(ans) @ np.swapaxes(as_columns(b_bar), -1, -2)
    else:
        b_bar = la.solve_triangular(a, g, trans=1, lower=lower, unit_diagonal=unit_diagonal)
        outer = as_columns(b_bar) @ np.swapaxes(as_columns(ans), -1, -2)
    return -read_triangle(outer, lower, unit_diagonal), b_bar


SCIPY_LINALG = (la.solve_triangular,)
for _fn in SCIPY_LINALG:
    defcheck(_fn)(real_only(TABLE.checks.get(_fn)))
