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


# --------------------------------------------------------------------------
# found by the 2,000-program default run (seeds 0..43), fixed by a5c1837
# --------------------------------------------------------------------------


def _parse(src: str):
    import ast

    try:
        return ast.parse(src)
    except SyntaxError:
        return None


def _same_assignment_in_both_branches(src: str) -> bool:
    """An if/else whose two branches contain the same assignment statement."""
    import ast

    tree = _parse(src)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.orelse:
            a = {ast.dump(s) for s in node.body if isinstance(s, ast.Assign)}
            b = {ast.dump(s) for s in node.orelse if isinstance(s, ast.Assign)}
            if a & b:
                return True
    return False


def _param_written_after_inner_loop(src: str) -> bool:
    """A loop whose body holds an inner loop followed by an assignment to a
    parameter of the function."""
    import ast

    tree = _parse(src)
    if tree is None:
        return False
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        params = {a.arg for a in fn.args.args}
        for loop in (n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))):
            seen_inner = False
            for s in loop.body:
                if isinstance(s, (ast.For, ast.While)):
                    seen_inner = True
                elif seen_inner and isinstance(s, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id in params for t in s.targets):
                    return True
    return False


KNOWN_BUGS.append(
    KnownBug(
        "if-same-assignment-both-branches",
        "if/else whose two branches both assign the same variable (s) to the same "
        "target: the assignment is dropped, jvp/vjp return the target's old value "
        "(the argument yf) instead of s, and the derivative with it",
        '''import math

import numpy as np


def f(p0f, p1f):
    s = 2.0
    if p0f > 0.3:
        p1f = s
    else:
        p1f = s
    return p1f
''',
        "f", "jvp", ("wrong-primal", "wrong-derivative", "kind", "dot-test"),
        _same_assignment_in_both_branches,
        fixed=True,
    )
)

KNOWN_BUGS.append(
    KnownBug(
        "nested-loop-param-write-cotangent",
        "a loop body with an inner loop that overwrites a carried variable, followed "
        "by a (dead) assignment to another parameter: the pullback's cotangent for "
        "p1f is wrong (the JVP is right: the dot-product test fails)",
        '''import math

import numpy as np


def f(p0f, p1f):
    w = p1f
    for i in range(1):
        w = p1f * w
        for j in range(1):
            p1f = 2.0
        p0f = p1f * w
    return w
''',
        "f", "vjp", ("wrong-derivative", "dot-test"),
        _param_written_after_inner_loop,
        fixed=True,
    )
)

KNOWN_BUGS.append(
    KnownBug(
        "helper-alias-of-constant-arg",
        "a helper called with a non-literal constant argument (math.sqrt(2.0)) that "
        "aliases that parameter (s1 = b) and uses both in a dead expression: "
        "compiling raises the internal IRVerificationError 'variable _t is used "
        "before it is defined' (not an S2SADError)",
        '''import math

import numpy as np


def _h(a, b):
    s1 = b
    w2 = s1 * b
    return a


def f(p0f):
    return _h(p0f, math.sqrt(2.0))
''',
        "f", "jvp", ("exception:IRVerificationError",),
        lambda src: "\ndef _h" in src,
        message_has="used before it is defined",
        fixed=True,
    )
)

KNOWN_BUGS.append(
    KnownBug(
        "dead-value-in-live-loop-nan",
        "a value computed in a loop but never used by the output is still reversed "
        "when the loop also carries a live value (the fully dead loop is skipped since "
        "dead-loop-nan-cotangent was fixed): when the dead value overflows, 0 * inf "
        "makes its argument's cotangent NaN instead of 0. (The fuzz harness now keeps "
        "evaluation points where intermediates overflow out of the random-program run, "
        "so only this regression test shows it.)",
        '''import math

import numpy as np


def f(p0f, p1f):
    m = p1f
    for i in range(1):
        m = np.exp(800.0 + m)
        p0f = 2.0 * p0f
    return p0f
''',
        "f", "vjp", ("wrong-derivative", "dot-test"),
        _has_loop,
        message_has="nan",
        fixed=True,
    )
)


# --------------------------------------------------------------------------
# found by the deep run (seeds 100000..100439), fixed by a5c1837
# --------------------------------------------------------------------------


def _loops_nested(fn):
    import ast

    for outer in (n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))):
        for inner in ast.walk(outer):
            if inner is not outer and isinstance(inner, (ast.For, ast.While)):
                yield outer, inner


def _inner_loop_assigns_param_from_subscript(src: str) -> bool:
    """A loop nested in a loop whose body assigns a parameter (possibly in a
    tuple) from an expression holding a subscript."""
    import ast

    tree = _parse(src)
    if tree is None:
        return False
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        params = {a.arg for a in fn.args.args}
        for _, inner in _loops_nested(fn):
            for s in ast.walk(inner):
                if not isinstance(s, ast.Assign):
                    continue
                names = {n.id for t in s.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
                if names & params and any(isinstance(n, ast.Subscript) for n in ast.walk(s.value)):
                    return True
    return False


def _helper_with_branch_called_in_loop(src: str) -> bool:
    import ast

    tree = _parse(src)
    if tree is None:
        return False
    helpers = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
               and n.name.startswith("_h") and any(isinstance(s, ast.If) for s in ast.walk(n))}
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in helpers):
        for loop in (n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))):
            for c in ast.walk(loop):
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in helpers:
                    return True
    return False


KNOWN_BUGS.append(
    KnownBug(
        "nested-loop-param-from-subscript",
        "an inner loop that sets a parameter from a slice of a carried matrix and "
        "updates the matrix (p0w = m[0][1:]; m = m ** 3) inside an outer loop that "
        "recomputes the matrix from that parameter: the pullback's cotangent is wrong "
        "(the JVP is right)",
        '''import math

import numpy as np


def f(p0w):
    for j in range(1):
        m = np.outer(p0w, np.array([1.0, -0.5, 2.0]))
        m = m * m
        for i in range(1):
            p0w = m[0][1:]
            m = m ** 3
    return p0w[0]
''',
        "f", "vjp", ("wrong-derivative", "dot-test"),
        _inner_loop_assigns_param_from_subscript,
        fixed=True,
    )
)

KNOWN_BUGS.append(
    KnownBug(
        "helper-with-branch-in-loop",
        "a helper containing an if, called inside a loop with the same argument twice "
        "(p0f = _h(p0f, p0f)): vjp's cotangent is wrong while grad and the JVP are "
        "right (without the loop, or without the if, it is right)",
        '''import math

import numpy as np


def _h(a, b):
    m1 = b * np.array([1.0, 0.5, -1.0])
    if a > -5.0:
        m1 = (m1 * m1[0]) ** 2
    return np.mean(np.arctan(m1))


def f(p0f, p1f):
    for j in range(1):
        p0f = _h(p0f, p0f)
    return p0f
''',
        "f", "vjp", ("wrong-derivative", "dot-test"),
        _helper_with_branch_called_in_loop,
        fixed=True,
    )
)

KNOWN_BUGS.append(
    KnownBug(
        "mean-axis-cotangent-shape-in-loop-branch",
        "np.mean(s * M, axis=1) of a loop-carried scalar s in the else branch of an if "
        "inside a while loop: the pullback raises ValueError 'cannot broadcast a "
        "non-scalar to a scalar array' from np.broadcast_to(g / n, np.shape(t)) "
        "(the shape is taken from the scalar, not from s * M). Shrunk by the fuzzer; "
        "smaller variants do not fail.",
        '''import math

import numpy as np


def f(p0w):
    v227, w228 = np.dot(p0w, np.outer(p0w, np.array([1.0, -0.5, 2.0]))), np.dot(np.outer(p0w, np.array([1.0, -0.5, 2.0])), np.dot(p0w, np.array([[1.0, 0.5, -1.0], [0.25, 2.0, 0.5]])))
    s230 = 0.5
    j236 = 0
    while j236 < 1:
        if s230 > np.mean(v227):
            v227 = (np.log(1.0 + v227 * v227) + s230)
        else:
            p0w = np.mean((s230 * np.array([[1.0, 0.5, -1.0], [0.25, 2.0, 0.5]])), axis=1)
            s230 = w228.sum()
        m238 = np.square(((s230 * np.array([[1.0, 0.5, -1.0], [0.25, 2.0, 0.5]])) * v227))
        w228 = np.dot(np.arctan(m238), np.log(1.0 + v227 * v227))
        j236 = j236 + 1
    return (np.exp(0.3 * s230) + s230)
''',
        "f", "vjp", ("exception:ValueError",),
        lambda src: "axis=" in src and _has_loop(src),
        message_has="cannot broadcast a non-scalar to a scalar array",
        fixed=True,
    )
)

KNOWN_BUGS.append(
    KnownBug(
        "inner-loop-updates-outer-tangent-in-place",
        "A loop inside a loop starts a carried tangent from an array the outer loop's "
        "iterations share (b_dot = p0v_dot); the inner loop multiplied it in place "
        "(b_dot *= cos(b)), so the second outer iteration started from a corrupted "
        "tangent. A carried parameter is now updated in place only when its initial "
        "value belongs to the enclosing iteration.",
        '''import math

import numpy as np


def _h100196_0(a, b):
    s1 = math.atan(a)
    for i2 in range(2):
        w3 = np.matmul((b + np.array([[1.0, 0.5, -1.0], [0.25, 2.0, 0.5]])) / (1.5 + b * b), np.sin(b))
        b = np.sin(b)
    return ((a * b[1:]) @ np.square((b + np.array([[1.0, 0.5, -1.0], [0.25, 2.0, 0.5]]))))


def f100196_44(p0v, p1f):
    p0v = np.mean(np.cos((p0v + np.array([[1.0, 0.5, -1.0], [0.25, 2.0, 0.5]]))), axis=0)
    for i229 in range(4):
        p1f = np.mean(_h100196_0(0.25, p0v))
    return p1f
''',
        "f100196_44", "jvp", ("wrong-derivative", "dot-test"),
        lambda src: False,
        fixed=True,
    )
)
