"""Functions for the Jacobian / Hessian tests: vector and scalar, loops and branches."""

import math

import numpy as np


def elementwise_matmul(x, W):
    return np.tanh(W @ x) * x[0] + np.sin(x) ** 2


def seed_vector(x):
    return np.array([x[0] + x[1], x[0] * x[1], np.sin(x[0])])


def two_outputs(x, y):
    return (x * y + np.sin(x), np.sum(x ** 2) * y)


def loop_map(x):
    y = x
    for i in range(4):
        y = np.sin(y) * 0.5 + x * 0.1 * (i + 1)
    return y


def branch_map(x):
    if np.sum(x) > 0.0:
        return x * x
    return np.exp(x)


def reduction_axis(X):
    return np.sum(np.tanh(X), axis=1) + np.max(X, axis=0)[:2]


def scalar_poly(x):
    return x ** 4 - 3.0 * x ** 2 + math.sin(x)


def scalar_loop(x):
    s = x
    for i in range(5):
        s = math.cos(s) * x + 0.1 * s
    return s


def scalar_while(a):
    x = a
    k = 0
    while k < 6:
        x = 0.5 * (x + a / x)
        k = k + 1
    return x * x * a


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def softmax_xent(z, y):
    m = np.max(z)
    lse = m + np.log(np.sum(np.exp(z - m)))
    return lse - np.sum(z * y)


def quad_form(x, A):
    return x @ A @ x + np.sum(np.cos(x))


def loop_energy(x):
    e = 0.0
    for i in range(x.shape[0] - 1):
        d = x[i + 1] - x[i]
        if d > 0.0:
            e = e + d * d * d
        else:
            e = e + d * d
    return e


def two_args_scalar(x, y):
    return np.sum(x * x * y) + math.sin(y) * np.sum(x)


def mlp_scalar(w, x):
    h = np.tanh(x @ w)
    return np.mean(h * h)


def uses_grad_helper(x):
    g = grad_of_poly(x)
    return g * g + x


def poly(x):
    return x ** 3 + 2.0 * x


grad_of_poly = None  # set by the test module to s2sad.grad(poly)


def linear_comprehension(x):
    return np.sum([item * 3.0 for item in x])  # (Tangent's listcomp): constant gradient


def comprehension_plus_cubes(x):
    return np.sum([item * 3.0 for item in x]) + np.sum(x ** 3)


def cubes_by_comprehension(x):
    return np.sum([item ** 3 for item in x])


def rows_of_products(x):
    out = []
    for i in range(len(x)):
        row = []
        for j in range(len(x)):
            row.append(x[i] * x[j])
        out.append(sum(row))
    return np.sum(np.array(out) ** 2)
