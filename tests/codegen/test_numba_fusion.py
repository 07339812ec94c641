"""codegen/numba_fusion.py: which runs of elementwise statements become one loop, on
sources written here (the text only: nothing is compiled, Numba is not needed).

The loops' numbers are checked against the NumPy backend and finite differences in
tests/backends/test_numba.py; here, each way a run must end.
"""

from __future__ import annotations

import textwrap

from s2sad.codegen.numba_form import numba_source
from s2sad.ir.kind_values import Kind


def fused(body: str, params: str = "x", shapes: tuple = ((5,),)) -> str:
    source = f"import numpy as np\n\ndef f({params}):\n" + textwrap.indent(
        textwrap.dedent(body), "    ")
    kinds = [Kind("array", "f", s) if s else Kind("scalar", "f") for s in shapes]
    return numba_source(source, "f", cache=False, kinds=kinds)


def loops(source: str) -> list[str]:
    return [ln.strip() for ln in source.splitlines() if ln.strip().startswith("for ")]


def test_a_run_becomes_one_loop_with_registers_and_a_sum():
    out = fused("""
        a = np.sin(x) * x
        b = a + 1.0
        return np.sum(b * b)
    """)
    assert loops(out) == ["for i in range(5):"]
    assert "a_i = np.sin(x[i]) * x[i]" in out and "b_i = a_i + 1.0" in out
    assert "total += b_i * b_i" in out and "return total" in out
    assert '@numba.njit(error_model="numpy")' in out


def test_a_value_read_after_the_run_is_an_array():
    out = fused("""
        a = np.exp(x)
        b = a * x
        if b[0] > 0.0:
            b = b * 2.0
        return a + b
    """)
    assert "a = np.empty(5, x.dtype)" in out and "a[i] = np.exp(x[i])" in out
    assert "b[i] = a[i] * x[i]" in out


def test_an_array_written_at_two_offsets_is_written_last_to_first():
    """`g[:-1] = a` then `g[1:] += a`: element e is set at step e and added to at step
    e - 1, so the loop counts down (as the whole-array statements: set, then added to)."""
    out = fused("""
        a = x[1:] * 2.0
        g = np.zeros((5,))
        g[:-1] = a
        g[1:] += a
        return g
    """)
    assert loops(out) == ["for i in range(3, -1, -1):"], out
    assert "g[i] = a_i" in out and "g[i + 1] += a_i" in out and "last to first" in out
    # read at a higher offset than it is written: the loop counts up
    out = fused("""
        g = x * 2.0
        g[:-1] = g[1:] * x[:-1]
        g[:-1] += x[1:]
        return g
    """)
    assert loops(out) == ["for i in range(4):"], out
    assert "g[i] = g[i + 1] * x[i]" in out and "g[i] += x[i + 1]" in out
    # a statement reads what it reads before it writes: `g[1:] += g[:-1]` counts down
    out = fused("""
        g = np.exp(x)
        g[1:] += g[:-1]
        g[1:] *= 3.0
        return g
    """)
    assert loops(out) == ["for i in range(3, -1, -1):"], out
    assert "g[i + 1] += g[i]" in out


def test_an_array_touched_in_both_orders_takes_two_passes():
    out = fused("""
        a = x[1:] * 2.0
        g = np.zeros((5,))
        g[:-1] = a
        g[1:] += a
        g[:-1] *= a
        return g
    """)
    assert loops(out) == ["for i in range(3, -1, -1):"], out
    assert "g[:-1] *= a" in out  # (g[1:] then g[:-1]: counting up; g[:-1] then g[1:]: down)


def test_arrays_of_two_lengths_are_not_joined():
    out = fused("""
        a = np.sin(x) * 2.0
        b = np.cos(y) * 2.0
        c = a * a
        return np.sum(c) + np.sum(b)
    """, "x, y", ((5,), (6,)))
    assert "y[i]" not in out or "x[i]" not in out


def test_a_whole_array_sum_inside_a_statement_ends_the_run():
    out = fused("""
        a = np.exp(x)
        b = np.sin(x) + np.sum(a)
        return b
    """)
    assert loops(out) == []


def test_a_statement_reading_the_array_it_replaces_is_not_joined():
    out = fused("""
        u = np.exp(x)
        u = u + t
        t = t - u
        return t
    """, "x, t", ((5,), (5,)))
    # (u's second value gets a name of its own; t, an argument, is not written in place)
    assert "u1[i] = u_i + t[i]" in out and "t = t - u1" in out
    out = fused("""
        t = x * 2.0
        u = np.exp(x)
        t = t - u
        return t
    """)
    assert "t1[i] = t_i - u_i" in out  # (t's first value a register, its second an array)


def test_two_dimensional_and_unknown_arrays_are_left_as_they_are():
    out = fused("""
        a = np.sin(x) * x
        return np.sum(a * a)
    """, shapes=((3, 4),))
    assert loops(out) == [] and "error_model" not in out
    source = "import numpy as np\n\ndef f(x):\n    a = np.sin(x) * x\n    return np.sum(a * a)\n"
    assert "for " not in numba_source(source, "f", cache=False)  # (no kinds: generic)


def test_symbolic_lengths_print_as_the_sizes_the_function_binds():
    """A specialisation for every size (issue 34): the lengths are symbols, the loop runs
    over `n - 1` (the name the function binds, else `y.shape[0]`), an allocation of
    `(n,)` has the run's length, and a slice whose bounds depend on n (`x[:3]`, `x[-2:]`)
    is not fused; fusion asks nothing of the sizes (no guard)."""
    from s2sad.ir.dims import Dim, Observer

    n = Dim.symbol("n", 7)
    with Observer() as seen:
        out = fused("""
            n = x.shape[0]
            a = x[1:] - x[:-1] * x[:-1]
            b = a * 2.0
            g = np.zeros((n,))
            g[:-1] = b * x[:-1]
            return np.sum(a * b), g
        """, shapes=((n,),))
    assert seen.guards() == ()
    assert loops(out) == ["for i in range(n - 1):"], out
    assert "g[i] = b[i] * x[i]" in out and "a = np.empty(n - 1, x.dtype)" in out
    out = fused("""
        a = np.sin(y) * y
        return np.sum(a * a)
    """, params="y", shapes=((Dim.symbol("m", 11),),))
    assert loops(out) == ["for i in range(y.shape[0]):"], out
    out = fused("""
        a = x[:3] * 2.0
        b = a + x[-3:]
        return np.sum(b * b)
    """, shapes=((n,),))
    assert loops(out) == [], out


def test_an_updated_name_keeps_its_version_and_sums_are_read_after_the_loop():
    """`t_dot += u` updates the version of t_dot it follows (the name's later value gets a
    name of its own, so the run goes on); a statement whose sums the loop accumulates
    reads values known after the loop outside them (`t3 + np.sum(e)`)."""
    out = fused("""
        t = x[1:]
        t_dot = y[1:]
        a = t - x[:-1]
        t1 = a * t
        t_dot = a * t_dot
        t_dot += t1
        t3 = np.sum(t1)
        e = np.exp(a)
        return t3 + np.sum(e), np.sum(t_dot)
    """, "x, y", ((5,), (5,)))
    assert loops(out) == ["for i in range(4):"], out
    assert "t_dot1_i = a_i * t_dot[i]" in out and "t_dot1_i += t1_i" in out
    assert "return (t3 + e_sum, t_dot1_sum)" in out


def test_a_chain_of_names_of_one_array_is_kept_whole():
    """`b = a`, then `c = b`, c read after the run: a, b and c are one array, written an
    element at a time (never `b = a` before the loop with a a register)."""
    out = fused("""
        a = x * 2.0
        b = a
        b *= x
        c = b
        c += 1.0
        if c[0] > 0.0:
            c = c * 2.0
        return c
    """)
    assert "a = np.empty(5, x.dtype)" in out and out.index("a = np.empty") < \
        out.index("b = a") < out.index("c = b") < out.index("for i in range(5):"), out
    assert "a[i] = x[i] * 2.0" in out and "c[i] += 1.0" in out
