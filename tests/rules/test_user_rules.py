"""Rules registered by a user for their own functions (the example of docs/writing_rules.md)."""

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp


def softplus(x):
    """A user primitive: the compiler calls it, and differentiates it by its rules."""
    return np.logaddexp(0.0, x)


@s2sad.defjvp(softplus)
def softplus_jvp(x, x_dot, ans):
    return x_dot * np.exp(x - ans)  # the logistic sigmoid, from the result


@s2sad.defvjp(softplus)
def softplus_vjp(g, ans, x):
    return g * np.exp(x - ans)


def scaled_cumsum(x, scale):
    """A user primitive registered with a JVP rule only: linear in x."""
    return scale * np.cumsum(x)


@s2sad.defjvp(scaled_cumsum)
def scaled_cumsum_jvp(x, scale, x_dot):
    return scale * np.cumsum(x_dot)


def self_linear(x):
    """A primitive whose JVP rule calls the primitive itself: it cannot be transposed."""
    return 3.0 * x


@s2sad.defjvp(self_linear)
def self_linear_jvp(x, x_dot):
    return self_linear(x_dot)


def loss_self_linear(x):
    return np.sum(self_linear(x) ** 2)


s2sad.def_linear(scaled_cumsum, wrt=(0,))


def loss(w, x):
    return np.sum(softplus(x @ w))


def loss_jvp_only(x):
    return np.sum(scaled_cumsum(x, 2.0) ** 2)


W = np.array([0.3, -0.7, 0.2])
X = np.array([[1.0, 2.0, -1.0], [0.5, -0.3, 0.8]])


def test_user_rules_work_under_jvp_vjp_and_grad():
    v = np.array([0.1, 0.2, -0.3])
    _, t = s2sad.jvp(loss, wrt=0)(W, X, v)
    assert_close(t, numerical_jvp(loss, [W, X], (0,), [v]))
    _, pb = s2sad.vjp(loss, wrt=0)(W, X)
    assert_close(pb(1.0)[0], numerical_grad(loss, [W, X], (0,))[0])
    assert_close(s2sad.grad(loss)(W, X), numerical_grad(loss, [W, X], (0,))[0])
    assert "np.exp" in s2sad.grad(loss).source_for(W, X)  # the rule body is inlined


def test_jvp_only_rule_works_in_forward_mode():
    x = np.array([0.5, -1.0, 2.0])
    v = np.array([1.0, 0.0, -1.0])
    _, t = s2sad.jvp(loss_jvp_only)(x, v)
    assert_close(t, numerical_jvp(loss_jvp_only, [x], (0,), [v]))


def test_jvp_only_rule_gets_its_vjp_by_transposition():
    x = np.array([0.5, -1.0, 2.0])
    assert_close(s2sad.grad(loss_jvp_only)(x), numerical_grad(loss_jvp_only, [x], (0,))[0])
    _, pb = s2sad.vjp(loss_jvp_only)(x)
    assert_close(pb(1.0)[0], numerical_grad(loss_jvp_only, [x], (0,))[0])


def test_jvp_rule_calling_its_own_primitive_cannot_be_transposed():
    with pytest.raises(s2sad.MissingRuleError, match="cannot be transposed"):
        s2sad.grad(loss_self_linear)(np.ones(3))


def test_rule_that_does_not_fit_its_function_is_rejected_at_registration():
    def two_args(a, b):
        return a * b

    with pytest.raises(s2sad.RuleError):
        @s2sad.defjvp(two_args)
        def bad_jvp(a, b, c, a_dot):
            return a_dot


# -- a primitive with a keyword-only parameter ------------------------------------------

def scaled_softplus(x, *, beta=1.0):
    return np.log1p(np.exp(beta * x)) / beta


@s2sad.defjvp(scaled_softplus)
def _scaled_softplus_jvp(x, x_dot, *, beta=1.0):
    return x_dot / (1.0 + np.exp(-beta * x))


@s2sad.defvjp(scaled_softplus)
def _scaled_softplus_vjp(g, x, *, beta=1.0):
    return g / (1.0 + np.exp(-beta * x))


def uses_keyword_only(x):
    return np.sum(scaled_softplus(x, beta=2.0)) + np.sum(scaled_softplus(x))


def test_rule_with_a_keyword_only_parameter():
    # the rule's keyword-only parameter is bound by name (it was left unbound once)
    x = np.array([0.3, -0.7, 1.1])
    v = np.array([1.0, 0.5, -2.0])
    assert_close(s2sad.grad(uses_keyword_only)(x),
                 numerical_grad(uses_keyword_only, [x], (0,))[0])
    _, t = s2sad.jvp(uses_keyword_only)(x, v)
    assert_close(t, numerical_jvp(uses_keyword_only, [x], (0,), [v]))
