"""A tuple item's zero cotangent in generic code (argument kinds unknown) is shaped like the
item (found on Python 3.13, whose `statistics` has such a function)."""

import numpy as np

import s2sad


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
