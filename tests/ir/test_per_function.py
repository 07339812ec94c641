"""The caches keyed by a function (ir/per_function.py) keep no function alive."""

from __future__ import annotations

import functools
import gc
import linecache
import pickle
import tracemalloc
import weakref

import numpy as np

import s2sad
from s2sad.ir import kinds
from s2sad.ir.per_function import FunctionKeyed


def _closure(c):
    def f(x):
        return np.sum(np.sin(x) * c + x * x)
    return f


def _recursive(c):
    def p(x, n):
        return c if n == 0 else x * p(x, n - 1)
    return p


def test_differentiated_closures_are_freed(monkeypatch):
    monkeypatch.setenv("S2SAD_CACHE", "0")  # the disk cache is not the point here
    x = np.linspace(0.1, 0.3, 3)

    def differentiate(i, refs):
        f = _closure(float(i))
        g = s2sad.grad(f)
        expected = (np.cos(x) * i + 2 * x)
        assert np.allclose(g(x), expected)
        refs.append(weakref.ref(f))
        filenames.append(g.compiled_function.__code__.co_filename)

    filenames: list = []
    for i in range(20):  # warm up: rules lowered once per process, memo tables filled
        differentiate(i, [])
    # (the memo of result kinds keeps each closure's constant `c` in its keys, up to its
    # bound: emptied before and after, so that what tests before this one left in it, and
    # when it reaches its bound, do not count)
    kinds.forget_memos()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        refs: list = []
        for i in range(400):
            differentiate(i, refs)
        kinds.forget_memos()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert all(r() is None for r in refs)
    assert not any(name in linecache.cache for name in filenames)
    # before: +14 MB for 400 closures; what remains is bounded memo tables (kinds)
    assert grown < 2 * 2**20, grown


def test_recursive_function_and_its_gradient_are_freed(monkeypatch):
    monkeypatch.setenv("S2SAD_CACHE", "0")
    p = _recursive(1.0)
    g = s2sad.grad(p, wrt=0)
    assert g(2.0, 3) == 3 * 2.0 ** 2  # d/dx x^3
    ref = weakref.ref(p)
    del p, g
    gc.collect()
    assert ref() is None


def test_entries_follow_their_function_not_a_copy_of_its_dict():
    cache = FunctionKeyed()
    f = _closure(1.0)
    cache[f] = "f"
    cache[(f, "grad", 0)] = "f, grad"

    @functools.wraps(f)  # copies f.__dict__, and with it f's entries
    def wrapper(x):
        return f(x)

    assert cache.get(f) == "f" and cache.get((f, "grad", 0)) == "f, grad"
    assert cache.get(wrapper) is None and cache.get((wrapper, "grad", 0)) is None
    assert pickle.loads(pickle.dumps(vars(f)))["__s2sad_cache__"].owner is None
    cache.clear()
    assert cache.get(f) is None and not cache


def test_other_callables_are_keyed_weakly_or_by_value():
    cache = FunctionKeyed()

    class Model:
        def energy(self, x):
            return x

    m = Model()
    cache[m.energy] = 1  # a bound method: a new object at each access, equal to the others
    cache[np.sin] = 2  # a ufunc: weakly referenced
    cache[(len, "x")] = 3  # a builtin function: not weakly referenceable
    assert (cache.get(m.energy), cache.get(np.sin), cache.get((len, "x"))) == (None, 2, 3)
    method = m.energy
    cache[method] = 4
    assert cache.get(method) == 4
    ref = weakref.ref(m)
    del m, method
    gc.collect()
    assert ref() is None
