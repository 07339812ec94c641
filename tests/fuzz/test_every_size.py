"""Random size-generic programs at random sizes (issue 34): a program is composed of
operations that take vectors of any length n (elementwise functions, shifts x[1:] and
x[:-1], reductions, products with an (m, n) matrix, an int argument k that sets a length),
its gradient and JVP are compiled once and checked against central finite differences at
several sizes drawn per run, and one specialisation must serve them all where the key
allows it (same pattern of sizes).

Default: a short Hypothesis profile; `-m slow`: a deep one (more programs, more sizes)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s2sad
from s2sad.store.sizes import size_pattern

from ..oracle import numerical_grad, numerical_jvp

# vector -> vector (length n), each defined on the whole real line
UNARY = ["np.sin({0})", "np.tanh({0})", "0.5 * {0} * {0}", "np.exp(0.3 * {0})",
         "{0} / (1.5 + {0} * {0})", "np.log(1.0 + {0} * {0})", "np.cumsum({0}) * 0.1",
         "{0}[::-1]", "np.concatenate([{0}[1:], {0}[:1]])", "np.maximum({0}, 0.2 * {0})"]
# two vectors of length n -> vector
BINARY = ["{0} * {1}", "{0} - 0.5 * {1}", "np.hypot({0}, {1})"]
# vector -> number
REDUCE = ["np.sum({0})", "np.mean({0} * {0})", "np.sum({0}[1:] * {0}[:-1])",
          "np.max({0}) + np.min({0})", "np.linalg.norm({0})", "{0} @ {0}",
          "np.sum(A @ {0})", "np.sum(np.tanh(A @ {0}) ** 2)",
          "np.sum({0}[:-1] - {0}[1:]) ** 2", "np.sum(np.linspace(0.0, 1.0, k) * np.mean({0}))"]


@st.composite
def programs(draw):
    """(source of f(x, A, k), a short name)."""
    n_steps = draw(st.integers(1, 4))
    lines, vs = [], ["x"]
    for i in range(n_steps):
        if draw(st.booleans()) or len(vs) < 2:
            t = draw(st.sampled_from(UNARY)).format(draw(st.sampled_from(vs)))
        else:
            a, b = draw(st.sampled_from(vs)), draw(st.sampled_from(vs))
            t = draw(st.sampled_from(BINARY)).format(a, b)
        lines.append(f"    v{i} = {t}")
        vs.append(f"v{i}")
    terms = [draw(st.sampled_from(REDUCE)).format(draw(st.sampled_from(vs)))
             for _ in range(draw(st.integers(1, 2)))]
    body = "\n".join(lines + ["    return " + " + ".join(terms)])
    return "def f(x, A, k):\n" + body + "\n"


def _compile(source: str):
    scope: dict = {"np": np}
    code = compile(source, f"<every-size {abs(hash(source))}>", "exec")
    exec(code, scope)
    f = scope["f"]
    # (s2sad reads a function's source: give it the text through linecache)
    import linecache

    linecache.cache[code.co_filename] = (len(source), None, source.splitlines(True),
                                         code.co_filename)
    return f


def _check(source: str, sizes):
    f = _compile(source)
    g = s2sad.grad(f, wrt=0)
    v = s2sad.jvp(f, wrt=0)
    every_size: set = set()  # patterns a specialisation for every size serves
    for n, m, k in sizes:
        rng = np.random.default_rng(n * 1009 + m * 31 + k)
        x, A = rng.uniform(-1.0, 1.0, n), rng.normal(size=(m, n)) / np.sqrt(n)
        want = numerical_grad(f, (x, A, k), (0,))[0]
        pattern = size_pattern([x, A, k], ("x", "A", "k"))
        before = {id(h) for h in g._cache.values()}
        np.testing.assert_allclose(g(x, A, k), want, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{source} at n={n}, m={m}, k={k}")
        new = [h for h in g._cache.values() if id(h) not in before]
        # a pattern of sizes (which are equal, which are 1) served for every size before is
        # compiled for no other size
        assert not (pattern in every_size and new), source
        every_size |= {pattern for h in new if h.pattern is not None and not h.size_guards}
        u = rng.normal(size=n)
        _, slope = v(x, A, k, u)
        np.testing.assert_allclose(slope, numerical_jvp(f, (x, A, k), (0,), (u,)),
                                   rtol=1e-5, atol=1e-6, err_msg=source)


# sizes drawn from a range (distinct n, m, k: one pattern), then one more of the pattern
SIZES = st.lists(st.tuples(st.integers(4, 40), st.integers(2, 9), st.integers(2, 12))
                 .filter(lambda t: len(set(t)) == 3), min_size=2, max_size=3)


@settings(max_examples=12, deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs(), SIZES)
def test_random_programs_at_random_sizes(source, sizes):
    _check(source, sizes)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.lists(st.tuples(st.integers(2, 300), st.integers(2, 20),
                                      st.integers(2, 50)), min_size=2, max_size=5))
def test_random_programs_at_random_sizes_deep(source, sizes):
    _check(source, sizes)
