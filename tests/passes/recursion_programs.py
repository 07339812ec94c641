"""Recursive programs (issue 8): recursion over shapes, over integers, mutual recursion."""

import math

import numpy as np


def det(M):
    """Determinant by expansion over the minors of the first row."""
    n = M.shape[0]
    if n == 1:
        return M[0, 0]
    total = 0.0
    for j in range(n):
        minor = np.concatenate((M[1:, :j], M[1:, j + 1:]), axis=1)
        total = total + (-1.0) ** j * M[0, j] * det(minor)
    return total


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def even(x, n):
    if n == 0:
        return x
    return odd(x * 1.1, n - 1) + math.sin(x)


def odd(x, n):
    if n == 0:
        return x * x
    return even(x * 0.9, n - 1)


def tree_sum(x, lo, hi):
    """Divide and conquer over a slice range: a sum of squares of sines."""
    if hi - lo == 1:
        return math.sin(x[lo]) ** 2
    mid = (lo + hi) // 2
    return tree_sum(x, lo, mid) + tree_sum(x, mid, hi)
