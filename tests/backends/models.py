"""The models both backend test files differentiate: least squares, logistic regression
and a tanh layer with an L2 penalty, with their gradients by hand (the oracle)."""

import numpy as np


def least_squares(w, X, y):
    r = X @ w - y
    return 0.5 * np.sum(r * r)


def logistic(w, X, y):
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def tanh_layer(W, X, y, lam):
    h = np.tanh(X @ W)
    r = np.sum(h, axis=1) - y
    return np.mean(r ** 2) + lam * np.sum(W * W)


# their gradients with respect to the weights, by hand (the oracle)
def least_squares_grad(w, X, y):
    return X.T @ (X @ w - y)


def logistic_grad(w, X, y):
    return X.T @ (1.0 / (1.0 + np.exp(-(X @ w))) - y)


def tanh_layer_grad(W, X, y, lam):
    h = np.tanh(X @ W)
    r = np.sum(h, axis=1) - y
    return X.T @ ((2.0 / len(y)) * r[:, None] * (1.0 - h * h)) + 2.0 * lam * W
