"""Functions the home page and the tutorial differentiate (see gen_site.py)."""

import math

import numpy as np


def f(x):
    return np.array([x[0] + x[1], x[0] * x[1], np.sin(x[0])])


def wave(x):
    return x * math.sin(x)


def polar(r, theta):
    return r * math.cos(theta), r * math.sin(theta)


def loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def compound(rate, years):
    balance = 1.0
    for year in range(years):
        balance = balance * (1.0 + rate)
    return balance


def clipped(x):
    if x > 1.0:
        return 1.0
    return x * x


def softmax_entropy(z):
    p = np.exp(z - np.max(z))
    p = p / np.sum(p)
    return -np.sum(p * np.log(p))


def scale_first(x, w):
    x[0] = 2.0 * x[0]
    return np.sum(x * w)


def g(x1, x2):
    return x1 ** 2 + x2, np.sin(x1 * x2)


def blur(x):
    return 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]


def central_difference(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)
