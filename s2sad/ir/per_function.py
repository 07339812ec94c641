"""Caches keyed by a function that go when the function goes.

A global dict keyed by a function keeps every function it has seen alive, and a
WeakKeyDictionary does not help when the cached value refers back to its key (a parsed
function holds it, guards read its `__code__`, a recursive function's IR calls it). So the
entries of a plain Python function live on the function itself, in one attribute only
s2sad reads (`__s2sad_cache__`): the function and its entries are then one cycle, which
the garbage collector frees together. Other callables (bound methods, ufuncs, derivative
objects) fall back to a WeakKeyDictionary, or a plain dict where they cannot be weakly
referenced.
"""

from __future__ import annotations

import types
import weakref

_ATTR = "__s2sad_cache__"
_Function = types.FunctionType


class _Entries:
    """What the caches hold for one function: {cache: (generation, {rest of key: value})}.

    `owner` tells the function's own entries from ones `functools.wraps` copied into a
    wrapper's `__dict__`; a pickled function (cloudpickle copies `__dict__`) takes none.
    """

    __slots__ = ("owner", "tables")

    def __init__(self, owner):
        self.owner = owner
        self.tables: dict = {}

    def __reduce__(self):
        return (_Entries, (None,))


class FunctionKeyed:
    """A dict whose keys are a function, or tuples whose first item is the function.

    `get`, `[key] = value` and `clear()` as a dict's (a key that cannot be hashed raises
    TypeError, as a dict's would); an entry goes when its function is garbage-collected.
    """

    def __init__(self):
        self._generation = 0  # clear() is a new generation: older entries read as absent
        self._weak: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._strong: dict = {}
        self._stored = 0

    def _table(self, func, create: bool):
        if type(func) is _Function:
            entries = func.__dict__.get(_ATTR)
            if entries is None or entries.owner is not func:
                if not create:
                    return None
                entries = func.__dict__[_ATTR] = _Entries(func)
            hit = entries.tables.get(self)
            if hit is None or hit[0] != self._generation:
                if not create:
                    return None
                hit = entries.tables[self] = (self._generation, {})
            return hit[1]
        if type(func) is types.MethodType:
            try:
                hash(func)
            except TypeError:  # a method of an object that cannot be hashed (its class
                func = _MethodOf(func)  # defines __eq__ alone): keyed by the object's id
        try:
            table = self._weak.get(func)
            if table is None and create:
                table = self._weak[func] = {}
            return table
        except TypeError:  # not weakly referenceable (a dict unhashable raises it again)
            table = self._strong.get(func)
            if table is None and create:
                table = self._strong[func] = {}
            return table

    def get(self, key, default=None):
        if type(key) is tuple:
            table = self._table(key[0], False)
            return default if table is None else table.get(key[1:], default)
        table = self._table(key, False)
        return default if table is None else table.get((), default)

    def __setitem__(self, key, value) -> None:
        if type(key) is tuple:
            self._table(key[0], True)[key[1:]] = value
        else:
            self._table(key, True)[()] = value
        self._stored += 1

    def clear(self) -> None:
        self._generation += 1
        self._weak.clear()
        self._strong.clear()
        self._stored = 0

    def __bool__(self) -> bool:
        """Whether anything was stored since the last clear() (it may have gone since)."""
        return self._stored > 0

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other) -> bool:
        return self is other


class _MethodOf:
    """A bound method of an object that cannot be hashed, as a key: the same object (by
    identity) and function."""

    __slots__ = ("obj", "func")  # (no weak reference: kept in the strong table)

    def __init__(self, method):
        self.obj, self.func = method.__self__, method.__func__

    def __hash__(self) -> int:
        return hash((id(self.obj), self.func))

    def __eq__(self, other) -> bool:
        return type(other) is _MethodOf and other.obj is self.obj and other.func is self.func
