"""A derivative a function calls is part of its disk-cache key by what it differentiates, not
by its name: two wrappers of the same source calling derivatives of two functions named
alike (check_grads' generated `checked`, whose file name held an id the garbage collector
reuses) shared a key, and the second was served the first's derivative (a wrong gradient
at second order, where the disk cache was on)."""

from __future__ import annotations

import linecache

import s2sad


def _function(source: str, filename: str, **scope):
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(scope, __name__="generated")
    exec(compile(source, filename, "exec"), namespace)
    return namespace["fn"]


def test_derivatives_of_functions_named_alike_do_not_share_a_cache_entry():
    square = _function("def fn(x):\n    return x ** 2\n", "<generated: square>")
    cube = _function("def fn(x):\n    return x ** 3\n", "<generated: cube>")
    wrapper = "def fn(a):\n    return _d(a) * 1.0\n"
    first = _function(wrapper, "<generated: wrapper>", _d=s2sad.grad(square))
    second = _function(wrapper, "<generated: wrapper>", _d=s2sad.grad(cube))
    assert s2sad.grad(first)(2.0) == 2.0  # d/dx 2x
    assert s2sad.grad(second)(2.0) == 12.0  # d/dx 3x^2
