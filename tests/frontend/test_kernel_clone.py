"""`kernel.clone_with_theta(theta)` of a scikit-learn kernel (GaussianProcessRegressor's
log-marginal likelihood calls it): the clone is a record of the kernel's parameters (a
product's `k1` and `k2` records too), its free hyperparameters exp(theta[i]) in the kernel's
order, as the `theta` setter sets them through `set_params`. Oracle: central differences;
the kernel's own `eval_gradient` (d K / d theta)."""

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for

kernels = pytest.importorskip("sklearn.gaussian_process.kernels")

KERNEL = kernels.ConstantKernel(1.5) * kernels.RBF([0.8, 1.3]) + kernels.WhiteKernel(0.1)
X = rng_for("kernel clone X").uniform(-1, 1, (4, 2))
WEIGHTS = rng_for("kernel clone W").standard_normal((4, 4))


def weighted_gram(theta):
    return np.sum(KERNEL.clone_with_theta(theta)(X) * WEIGHTS)


def gram(theta):
    return KERNEL.clone_with_theta(theta)(X)


def test_clone_with_theta_both_modes():
    theta = KERNEL.theta + rng_for("kernel clone theta").uniform(-0.3, 0.3, 4)
    (expected,) = numerical_grad(weighted_gram, (theta,), (0,))
    assert_close(s2sad.grad(weighted_gram)(theta), expected)
    # against the kernel's own derivative: d K / d theta
    _, dk = KERNEL.clone_with_theta(theta)(X, eval_gradient=True)
    assert_close(s2sad.grad(weighted_gram)(theta), np.einsum("ij,ijk->k", WEIGHTS, dk))
    v = rng_for("kernel clone v").standard_normal(4)
    _, out_dot = s2sad.jvp(gram)(theta, v)
    assert_close(out_dot, dk @ v)
    assert_close(out_dot, numerical_jvp(gram, (theta,), (0,), (v,)))
    assert_close(s2sad.vjp(gram)(theta)[0], KERNEL.clone_with_theta(theta)(X))


def test_the_kernel_is_left_as_it_was():
    before = KERNEL.theta.copy()
    s2sad.grad(weighted_gram)(before + 0.2)
    np.testing.assert_array_equal(KERNEL.theta, before)
