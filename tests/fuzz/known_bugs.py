"""Compiler bugs found by the fuzzer, with their shrunk reproducers.

Each `KnownBug` is a minimal program the fuzzer produced (shrunk), the mode
in which it fails and the symptom. `tests/fuzz/test_regressions.py` turns
each into a strict-xfail test (it flips to a failure, so the entry gets
removed, as soon as the compiler is fixed).

The random-program test uses `classify` to recognise a *shrunk* failing
program as an instance of a known bug, so that main stays green while a bug
is open; a failure that matches no entry fails the test with its reproducer.
Keep the predicates narrow: each matches the syntactic trigger of its bug.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class KnownBug:
    id: str
    summary: str
    source: str  # a module defining `fname`
    fname: str
    mode: str  # "jvp", "vjp", "grad" or "dot"
    categories: tuple  # failure categories this bug shows as
    matches: Callable[[str], bool]  # predicate on a shrunk reproducer's source
    message_has: str = ""  # and the failure message must contain this
    fixed: bool = False  # fixed bugs stay as plain regression tests, never classify


_RED = r"(?:np\.(?:sum|mean)\((?:[^()]|\([^()]*\))*\)|[\w\]\)]+\.sum\(\))"


def _reduction_repeated(src: str) -> bool:
    """The same reduction (np.sum/np.mean/.sum()) spelled twice in one function,
    or a reduction plus indexing of the same array."""
    body = src.split("\ndef ")[-1]
    found = re.findall(_RED, body)
    return len(found) != len(set(found)) or bool(found and re.search(r"\w\[", body))


def _has_loop(src: str) -> bool:
    return bool(re.search(r"^\s+(for|while) ", src, re.M))


KNOWN_BUGS = [
    KnownBug(
        "reduction-reused",
        "a full np.sum/np.mean/.sum() whose result is used twice (CSE'd) gives a "
        "cotangent of the wrong shape: a scalar instead of the argument's array, "
        "or (1, n) instead of (m, n) for an axis reduction; index_add then raises "
        "IndexError on the 0-d accumulator",
        '''import math

import numpy as np


def f(p0v):
    s42 = 0.25 / (1.5 + np.mean(p0v) * np.mean(p0v))
    return s42
''',
        "f", "vjp", ("kind", "exception:IndexError", "exception:ValueError", "wrong-derivative",
                     "dot-test"),
        _reduction_repeated,
        fixed=True,
    ),
    KnownBug(
        "axis-sum-reused",
        "np.sum(m, axis=0) used twice: the pullback returns a (1, 3) cotangent for "
        "a (2, 3) argument",
        '''import math

import numpy as np


def f(p0w, p1m, p2m):
    v206 = (np.sum(p2m, axis=0) + np.sum(p2m, axis=0))
    return v206
''',
        "f", "vjp", ("kind", "wrong-derivative", "dot-test"),
        _reduction_repeated,
        fixed=True,
    ),
    KnownBug(
        "index-add-0d",
        "an array both indexed and fully reduced twice: the reverse pass accumulates "
        "into a 0-d cotangent and index_add raises IndexError",
        '''import math

import numpy as np


def f(p0v, p1w):
    s77 = p1w[0]
    return (math.log1p(p1w.sum() * p1w.sum()) + s77)
''',
        "f", "vjp", ("exception:IndexError", "kind", "wrong-derivative"),
        _reduction_repeated,
        fixed=True,
    ),
    KnownBug(
        "empty-loop-drops-gradient",
        "a value carried unchanged through a loop whose body does not touch it gets a "
        "zero cotangent (reverse mode drops the gradient of loop pass-through values)",
        '''import math

import numpy as np


def f(p0f, p1m):
    s204 = p0f
    for i205 in range(1):
        pass
    return s204
''',
        "f", "vjp", ("wrong-derivative", "dot-test"),
        _has_loop,
        fixed=True,
    ),
    KnownBug(
        "dead-loop-nan-cotangent",
        "a loop whose results are dead (not used by the output) is still reversed: when "
        "its dead intermediates overflow, 0 * inf makes the pullback return NaN "
        "cotangents for a function whose output is constant",
        '''import math

import numpy as np


def _h5_0(a, b):
    a += math.log(1.0 + a * a)
    return np.exp(0.3 * b) ** 2


def f(p0w, p1v, p2f):
    j94 = 0
    while j94 < 4:
        for i95 in range(3):
            p1v = _h5_0(1.5, p1v)
        j94 = j94 + 1
    s97 = 2.0
    return s97
''',
        "f", "vjp", ("wrong-derivative", "dot-test"),
        _has_loop,
        fixed=True,
        message_has="nan",
    ),
    KnownBug(
        "axis-sum-of-broadcast-sum",
        "np.sum over axis 0 of a sum of two identical broadcast (V + M) terms: the "
        "JVP is wrong (JVP and VJP disagree)",
        '''import math

import numpy as np


def f(p0v):
    p0v = np.sum(((p0v + np.array([[1.0, 0.5, -1.0], [0.25, 2.0, 0.5]])) + (p0v + np.array([[1.0, 0.5, -1.0], [0.25, 2.0, 0.5]]))), axis=0)
    return p0v / (1.5 + p0v * p0v)
''',
        "f", "jvp", ("wrong-derivative", "dot-test"),
        lambda src: bool(re.search(r"\(([^()]|\([^()]*\))+\) \+ \(([^()]|\([^()]*\))+\)", src))
        and "axis=" in src,
        fixed=True,
    ),
]

KNOWN_BUGS.append(
    KnownBug(
        "self-difference-float-cotangent",
        "x - x for an array x is simplified to a symbolic zero and the pullback returns "
        "the Python float 0.0 as x's cotangent instead of zeros of x's shape",
        '''import math

import numpy as np


def f(p0f, p1v):
    return np.sum((p1v - p1v))
''',
        "f", "vjp", ("kind",),
        lambda src: bool(re.search(r"\b(\w+) - \1\b(?!\[)", src)),
        fixed=True,
    )
)


KNOWN_BUGS.append(
    KnownBug(
        "loop-copy-drops-gradient",
        "a loop body that copies one variable into a carried one (p1f = p0f) is "
        "reversed as p1f_bar = zeros_like(saved): the cotangent never reaches p0f, "
        "the pullback returns (0.0, 0.0) instead of (1.0, 0.0)",
        '''import math

import numpy as np


def f(p0f, p1f):
    for i161 in range(1):
        p1f = p0f
    return p1f
''',
        "f", "vjp", ("wrong-derivative", "dot-test"),
        lambda src: _has_loop(src) and bool(re.search(r"^\s+\w+ = \w+$", src, re.M)),
        fixed=True,
    )
)


KNOWN_BUGS.append(
    KnownBug(
        "loop-constant-poisoned",
        "a loop that assigns a constant to a carried variable (p1f = 0.5 inside "
        "for/while, after a branch) crashes lowering with the internal "
        "AssertionError: _Poisoned(name='p1f') from lower.materialize (not an S2SADError)",
        '''import math

import numpy as np


def f(p0w, p1f):
    if p1f < 0.5:
        p1f = (p1f * 2.0)
        for i30 in range(1):
            p1f = 0.5
    return p1f
''',
        "f", "jvp", ("exception:AssertionError", "exception:NonDifferentiableError"),
        _has_loop,
        # the same trigger also shows as a spurious NonDifferentiableError
        # ("an array written into inside this loop is replaced by one the loop did not create")
        message_has=("_Poisoned", "replaced by one the loop did not create"),
        fixed=True,
    )
)


def classify(reproducer: str, mode: str, category: str, message: str = ""):
    """The id of the known bug a shrunk failing program is an instance of, or None."""
    for bug in KNOWN_BUGS:
        alts = (bug.message_has,) if isinstance(bug.message_has, str) else bug.message_has
        if bug.fixed or (bug.message_has and not any(a in message for a in alts)):
            continue
        if category in bug.categories and bug.matches(reproducer):
            return bug.id
    return None
