"""Long-loop programs for the reverse-mode stress tests."""

import math

import numpy as np


def long_scalar_loop(x, n):
    for i in range(n):
        x = math.sin(x) * 0.9 + 0.1
    return x


def array_recurrence(h, W, steps):
    for t in range(steps):
        h = np.tanh(W @ h) * 0.5 + 0.1 * h
    return np.sum(h * h)


def while_countdown(x, n):
    k = 0
    while k < n:
        x = x * 0.999 + 0.001 * math.cos(x)
        k = k + 1
    return x


def branchy_loop(x, n):
    s = 0.0
    for i in range(n):
        if i % 2 == 0:
            s = s + x * i
        else:
            s = s - math.sin(x) / (i + 1)
    return s
