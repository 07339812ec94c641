"""A call that writes its result into an array it is given (`out=buf`, a ufunc's output
passed by position, np.cumsum(x, 0, None, buf)) is refused where it is written: the
derivative code gives each value a variable of its own, so a later read of `buf` saw the
array as it was before the call, and the gradient was silently wrong (each of these gave a
wrong gradient, or none, before)."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.oracle import numerical_grad


def cumsum_out(x):
    buf = np.zeros(3)
    y = np.cumsum(x, out=buf)
    return np.sum(buf * buf) + np.sum(y)


def ufunc_out(x):
    buf = np.zeros(3)
    np_result = np.multiply(x, 2.0, out=buf)
    return np.sum(buf * x)


def ufunc_positional_out(x):
    buf = np.zeros(3)
    y = np.sin(x, buf)
    return np.sum(buf * x) + np.sum(y)


def cumsum_positional_out(x):
    buf = np.zeros(3)
    y = np.cumsum(x, 0, None, buf)
    return np.sum(buf * x) + np.sum(y)


def method_out(x):
    buf = np.zeros(3)
    y = x.cumsum(out=buf)
    return np.sum(buf * x) + np.sum(y)


def clip_out(x):
    buf = np.zeros(3)
    y = np.clip(x, 0.0, 1.0, out=buf)
    return np.sum(buf * x) + np.sum(y)


@pytest.mark.parametrize("f", [cumsum_out, ufunc_out, ufunc_positional_out,
                               cumsum_positional_out, method_out, clip_out])
def test_output_arguments_are_refused_where_written(f):
    with pytest.raises(s2sad.S2SADError) as err:
        s2sad.grad(f)(np.array([0.3, 0.5, 0.9]))
    e = err.value
    assert type(e).__name__ == "UnsupportedSyntaxError"
    assert "writes its result into an array" in e.message
    assert e.filename == __file__ and "buf" in e.source_line


def out_none(x):
    return np.sum(np.cumsum(x, out=None) ** 2) + np.ptp(x, 0, None)


def test_out_none_is_the_default():
    x = np.array([0.3, 0.5, 0.9])
    (want,) = numerical_grad(out_none, (x,), (0,))
    assert np.allclose(s2sad.grad(out_none)(x), want, rtol=1e-6)
