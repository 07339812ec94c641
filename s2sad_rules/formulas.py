"""The textbook formula of each common primitive's derivative, as the step-by-step
derivative (`explain=True`) prints it beside the step: `d(a/b) = da/b - a·db/b²`.

A comment, never code: the rules in the other modules are what runs. A primitive without
an entry is printed without a formula.
"""

from __future__ import annotations

import math
import operator

import numpy as np

__all__ = ["FORMULAS", "formula_of"]

_TABLE: list = [
    ((operator.add, np.add), "d(a + b) = da + db"),
    ((operator.sub, np.subtract), "d(a - b) = da - db"),
    ((operator.mul, np.multiply), "d(a·b) = da·b + a·db"),
    ((operator.truediv, np.divide), "d(a/b) = da/b - a·db/b²"),
    ((operator.neg, np.negative), "d(-a) = -da"),
    ((operator.pow, np.power), "d(aᵇ) = b·aᵇ⁻¹·da + aᵇ·log(a)·db"),
    ((operator.matmul, np.matmul, np.dot), "d(A @ B) = dA @ B + A @ dB"),
    ((np.square,), "d(a²) = 2a·da"),
    ((np.sqrt, math.sqrt), "d√a = da / (2√a)"),
    ((np.exp, math.exp), "d exp(a) = exp(a)·da"),
    ((np.expm1, math.expm1), "d(exp(a) - 1) = exp(a)·da"),
    ((np.log, math.log), "d log(a) = da / a"),
    ((np.log1p, math.log1p), "d log(1 + a) = da / (1 + a)"),
    ((np.sin, math.sin), "d sin(a) = cos(a)·da"),
    ((np.cos, math.cos), "d cos(a) = -sin(a)·da"),
    ((np.tan, math.tan), "d tan(a) = (1 + tan²(a))·da"),
    ((np.tanh, math.tanh), "d tanh(a) = (1 - tanh²(a))·da"),
    ((np.sinh, math.sinh), "d sinh(a) = cosh(a)·da"),
    ((np.cosh, math.cosh), "d cosh(a) = sinh(a)·da"),
    ((np.arctan, math.atan), "d atan(a) = da / (1 + a²)"),
    ((np.arcsin, math.asin), "d asin(a) = da / √(1 - a²)"),
    ((np.arccos, math.acos), "d acos(a) = -da / √(1 - a²)"),
    ((abs, np.abs, math.fabs), "d|a| = sign(a)·da"),
    ((np.maximum, max), "d max(a, b) = da where a ≥ b, else db"),
    ((np.minimum, min), "d min(a, b) = da where a ≤ b, else db"),
    ((np.sum,), "d Σa = Σ da (a sum's cotangent is broadcast back)"),
    ((np.mean,), "d mean(a) = mean(da) (its cotangent is spread evenly: / n)"),
    ((np.where,), "d where(c, a, b) = where(c, da, db)"),
    ((operator.getitem,), "d(a[i]) = da[i] (its cotangent is scattered back into a's shape)"),
    ((np.reshape,), "d reshape(a) = reshape(da) (linear: the cotangent reshaped back)"),
    ((np.transpose,), "d aᵀ = (da)ᵀ"),
    ((np.outer,), "d outer(a, b) = outer(da, b) + outer(a, db)"),
    ((np.hypot, math.hypot), "d hypot(a, b) = (a·da + b·db) / hypot(a, b)"),
    ((np.arctan2, math.atan2), "d atan2(a, b) = (b·da - a·db) / (a² + b²)"),
]

FORMULAS: dict = {}
for _fns, _text in _TABLE:
    for _fn in _fns:
        FORMULAS[_fn] = _text


def formula_of(fn, args: tuple = ()) -> str | None:
    """The formula of `fn`'s derivative (for these operands: a constant exponent has the
    power rule), or None."""
    if fn in (operator.pow, np.power) and len(args) == 2 and hasattr(args[1], "value"):
        return "d(aⁿ) = n·aⁿ⁻¹·da"
    try:
        return FORMULAS.get(fn)
    except TypeError:  # an unhashable callable
        return None
