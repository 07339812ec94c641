"""A tuple item's zero cotangent in generic code (argument kinds unknown) is shaped like the
item (found on Python 3.13, whose `statistics` has such a function); where its shape is known,
a rule reading it sees a zero and leaves out the terms in it."""

import re

import numpy as np

import s2sad
from tests.oracle import assert_close, numerical_grad


def signed_distance(p):
    sign, p = (1.0, p) if p <= 1 / 2 else (-1.0, 1.0 - p)
    return p * sign


def test_generic_vjp_of_a_tuple_from_a_conditional_expression_compiles():
    assert "def signed_distance_vjp" in s2sad.vjp(signed_distance).source


def test_its_cotangents_match_the_slopes_of_both_branches():
    # p <= 1/2: p * 1.0, slope 1; p > 1/2: (1 - p) * -1.0, slope 1
    for p in (0.3, 0.8, np.array(0.2), np.array(0.9)):
        _, pullback = s2sad.vjp(signed_distance)(p)
        (p_bar,) = pullback(1.0)
        np.testing.assert_allclose(p_bar, 1.0)


def singular_values_squared(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s * s) + np.sum(vt[0] ** 2 * s[0])


def nuclear_norm(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s)


def _zero_arrays_multiplied(src: str) -> list:
    """Names made by np.zeros(...) and then read by a product (`@` or `*`)."""
    zeros = re.findall(r"^\s*(\w+) = np\.zeros\(", src, re.M)
    return [z for z in zeros
            if re.search(rf"(@|\*)\s*{z}\b|\b{z}\s*(@|\*)", src)]


def test_svd_with_unused_factors_multiplies_no_zero_array():
    # the cotangent of an unused u (and vt) was made np.zeros(...) when the tuple's
    # cotangent was built, and svd's VJP multiplied by it: `mT(u) @ zero`, `f * ...`. An
    # item of a tuple built in the derivative that is a zero buffer is a symbolic zero again
    a = np.random.default_rng(3).standard_normal((3, 3))
    for f in (singular_values_squared, nuclear_norm):
        src = s2sad.grad(f).source_for(a)
        assert _zero_arrays_multiplied(src) == [], src
        assert_close(s2sad.grad(f)(a), numerical_grad(f, (a,), (0,))[0], rtol=1e-6,
                     atol=1e-8)
    # d sum(s) / dA = U V^T
    u, _, vt = np.linalg.svd(a)
    np.testing.assert_allclose(s2sad.grad(nuclear_norm)(a), u @ vt, rtol=1e-12, atol=1e-12)
