"""Functions whose generated derivatives the documentation shows (see gen_examples.py)."""

import math

import numpy as np


def f(x):
    return np.array([x[0] + x[1], x[0] * x[1], np.sin(x[0])])


def projectile(v, angle, drag):
    vx = v * math.cos(angle)
    vy = v * math.sin(angle)
    t_flight = 2.0 * vy / 9.81
    damping = math.exp(-drag * t_flight)
    distance = vx * t_flight * damping
    height = vy * vy / (2.0 * 9.81)
    if height > 10.0:
        distance = distance * 0.9
    return distance


def pendulum(a, b):
    dt = 0.05
    x = 1.0
    v = 0.0
    for i in range(100):
        acc = -a * math.sin(x) - b * v
        x = x + dt * v
        v = v + dt * acc
    return x * x + v * v


def softplus_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + math.log(1.0 + math.exp(x[i]))
    return s


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def fill(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = math.sin(x[i]) * x[i]
    return out


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)
