"""Programs that write into arrays (a[i] = v, a[i] += v, np.add.at) for test_mutation.py."""

import math

import numpy as np


def fill_elementwise(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = math.sin(x[i]) * x[i]
    return out


def recurrence(h0, w, n):
    h = np.zeros(n + 1)
    h[0] = h0
    for t in range(n):
        h[t + 1] = math.tanh(w * h[t]) + 0.1
    return np.sum(h * h)


def slice_updates(x):
    a = x.copy()
    a[1:3] += x[:2] * 2.0
    a[0] *= x[2]
    a[-1] = a[-1] ** 2
    return a


def mask_write(x):
    a = np.ones(x.shape[0])
    a[x > 0.5] = x[x > 0.5] ** 2
    return a


def add_at_repeated(x, idx):
    a = np.zeros(3)
    np.add.at(a, idx, x)
    return a * a


def repeated_set(x, idx):
    a = np.zeros(3)
    a[idx] = x  # repeated positions: the last write wins
    return a


def write_in_branch(x, flag):
    a = x * 1.0
    if flag > 0:
        a[0] = x[1] * x[2]
    else:
        a[1] = -x[0]
    return np.sum(a * a)


def ode_history(y0, k, n):
    ys = np.zeros((n + 1, 2))
    ys[0] = y0
    for t in range(n):
        y = ys[t]
        ys[t + 1] = y + 0.01 * np.array([y[1], -k * math.sin(y[0])])
    return ys


def writes_into_results(x):
    """Writes into what NumPy functions return as new arrays (refused before: only
    constructors, arithmetic and a few products counted as arrays the function created)."""
    y = np.where(x > 0.5, x, 0.0)
    y[1:3] = np.sqrt(np.abs(y[1:3]) + 1.0)
    z = np.clip(x, 0.55, 0.95)
    z[0] = z[0] * x[1]
    s = np.sort(x * x)
    s[-1] = s[-1] + x[0]
    t = np.tile(x, 2)
    t[::2] = t[::2] * 3.0
    return np.concatenate([y * y * x, z * s, t])


def writes_into_argument(x):
    x[0] = 1.0
    return x


def writes_into_argument_with_another(x, y):
    x[0] = 1.0
    return x * y


def writes_into_alias(x):
    a = np.zeros(3)
    b = a
    a[0] = x
    return b


def writes_into_diff_of_order_0(x):
    d = np.diff(x, 0)  # (x itself: np.diff(x, 0) returns its argument)
    d[0] = 1.0
    return d


def writes_into_view(x):
    a = np.zeros((2, 2))
    row = a[0]
    row[0] = x
    return a


def long_fill(x, n):
    out = np.zeros(n)
    for i in range(n):
        out[i] = x * math.cos(0.001 * i)
    return np.sum(out)
