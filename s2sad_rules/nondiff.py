"""Functions whose results carry no derivative (piecewise-constant, integer, boolean, shape)."""

import math
import operator

import numpy as np

from s2sad.ir import prims
from s2sad_rules.registry import def_nondiff

def_nondiff(
    # comparisons and logic
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    operator.not_, operator.and_, operator.or_, operator.xor, operator.is_, operator.is_not,
    operator.contains, operator.invert, operator.floordiv,
    np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor, np.all, np.any,
    np.isnan, np.isfinite, np.isinf, np.allclose, np.isclose, np.array_equal, np.signbit,
    # rounding and sign: derivative zero almost everywhere
    np.floor, np.ceil, np.round, np.rint, np.trunc, np.sign, np.floor_divide,
    math.floor, math.ceil, math.trunc, round, math.isnan, math.isfinite, math.isinf,
    # integer results and shapes
    int, bool, len, np.argmax, np.argmin, np.argsort, np.searchsorted, np.nonzero,
    np.shape, np.ndim, np.size, np.count_nonzero, np.digitize,
    # casts to integers and booleans (np.int64(w) of an index column)
    np.int8, np.int16, np.int32, np.int64, np.intp, np.uint8, np.uint16, np.uint32,
    np.uint64, np.bool_,
    # constructors of constants
    # (np.full, np.full_like, np.arange and np.linspace have rules: their values depend on
    # their fill value, start, step, stop)
    np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like,
    np.eye, np.identity, np.indices, np.argpartition,
    # tuple(range(...)) of integers
    prims.int_range,
    # integer functions (of integer arguments: no derivative) and type tests
    math.factorial, math.comb, math.perm, math.gcd, math.lcm, math.isqrt,
    isinstance, type, callable, hasattr,
    # dtypes (np.asarray(x, dtype=np.result_type(x, y)))
    np.result_type, np.promote_types,
    # np.random draws: constants of the call (the primal and its derivative see one draw)
    *prims.RANDOM_DRAWS,
    # print, assert and f-strings: kept in the primal part, with no derivative
    prims.print_values, prims.check_assertion, prims.format_text,
    # which path of a library `try` is taken (passes/tries.py)
    prims.derivative_reaches,
)
