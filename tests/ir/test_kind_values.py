"""Stand-in values of a kind do not depend on what the process compiled before.

A result kind can depend on the stand-in's entries (the spectrum of np.linalg.eig of a
real matrix is real or complex, np.linalg.cholesky succeeds or fails), so stand-ins drawn
from one stream shared by the whole process made the generated source depend on the
session's history (found comparing sources of the same test run alone and in the suite).
"""

import numpy as np

import s2sad
from s2sad import derivative
from s2sad.ir import kind_values as kv
from s2sad.ir import kinds


def _churn():
    """Forget the stand-ins and draw others, as compiling other functions does."""
    kv._EXAMPLES.clear()
    for n in range(1, 40):
        kv.example(kv.array("f", (n, 3)))
        kv.example(kv.array("c", (3, n)))
    kv._EXAMPLES.clear()


def test_a_kinds_stand_in_is_the_same_whatever_came_before():
    for k in (kv.array("f", (3, 3)), kv.array("c", (2, 2)), kv.array("f", ())):
        _churn()
        first = np.array(kv.example(k))
        _churn()
        assert np.array_equal(kv.example(k), first)
        assert kv.example(k).shape == k.shape and np.all(np.real(first) >= 0.2)


def test_a_value_dependent_result_kind_is_the_same_whatever_came_before():
    for fn, arg in ((np.linalg.eig, kv.array("f", (3, 3))),  # real or complex spectrum
                    (np.linalg.cholesky, kv.array("c", (2, 2)))):  # succeeds or fails
        seen = set()
        for _ in range(8):
            _churn()
            seen.add(str(kinds._eval_kind(fn, [arg], [])))
        assert len(seen) == 1, (fn, seen)


def hermitian_pd(b):
    return b @ np.conj(np.swapaxes(b, -1, -2)) + b.shape[-1] * np.eye(b.shape[-1])


def cholesky_of(b):
    return np.linalg.cholesky(hermitian_pd(b))


def test_the_generated_source_does_not_depend_on_the_sessions_history(monkeypatch):
    monkeypatch.setenv("S2SAD_CACHE", "0")  # compiled again each time, not read back
    rng = np.random.default_rng(3)
    b = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    db = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    sources = set()
    for _ in range(6):
        monkeypatch.setattr(derivative, "_GLOBAL_CACHE", {})
        _churn()
        j = s2sad.jvp(cholesky_of)
        out, out_dot = j(b, db)
        sources.add(j._last.source)
    assert len(sources) == 1
    # and it is right: central differences along db (an independent oracle)
    h = 1e-6
    fd = (np.linalg.cholesky(hermitian_pd(b + h * db)) -
          np.linalg.cholesky(hermitian_pd(b - h * db))) / (2 * h)
    assert np.allclose(out_dot, fd, rtol=1e-6, atol=1e-8)
