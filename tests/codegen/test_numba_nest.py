"""codegen/numba_nest.py: which runs of broadcast statements become loop nests, on sources
written here (the text only: nothing is compiled). The nests' numbers are checked against
the NumPy backend and finite differences in tests/backends/test_numba_nest.py."""

from __future__ import annotations

import textwrap

from s2sad.codegen.numba_form import numba_source
from s2sad.ir.dims import Dim
from s2sad.ir.kind_values import Kind

N, M, K = Dim.symbol("n", 5), Dim.symbol("m", 3), Dim.symbol("k", 4)


def nested(body: str, params: str, shapes: tuple) -> str:
    source = f"import numpy as np\n\ndef f({params}):\n" + textwrap.indent(
        textwrap.dedent(body), "    ")
    kinds = [Kind("array", "f", s) for s in shapes]
    return numba_source(source, "f", cache=False, kinds=kinds)


def loops(source: str) -> list[str]:
    return [ln.strip() for ln in source.splitlines() if ln.strip().startswith("for ")]


def test_a_broadcast_and_two_reductions_share_the_outer_loop():
    out = nested("""
        d = x[:, None, :] - c[None, :, :]
        s = np.sum(d * d, axis=2)
        r = np.min(s, axis=1)
        return r
    """, "x, c", ((N, M), (K, M)))
    assert loops(out) == ["for i in range(x.shape[0]):", "for j in range(c.shape[0]):",
                          "for p in range(x.shape[1]):"], out
    # (d and s: scalars, read where they are made; r, returned: the whole array)
    assert "d_s = x[i, p] - c[j, p]" in out and "s_s += d_s * d_s" in out, out
    assert "if s_s < r_acc or s_s != s_s:" in out and "r[i] = r_acc" in out, out
    assert "r = np.empty((x.shape[0],)" in out and "s = np" not in out, out
    assert '@numba.njit(error_model="numpy")' in out


def test_sizes_not_proved_equal_are_not_one_loop():
    out = nested("""
        a = np.exp(x) * 2.0
        b = a + y
        return b
    """, "x, y", ((N, M), (K, M)))
    assert "for " not in out, out  # (n and k: two symbols, perhaps two sizes)


def test_an_array_written_and_read_again_ends_the_run():
    out = nested("""
        a = np.exp(x)
        y[:, :] = a * 2.0
        b = y[:, :] + a
        return b
    """, "x, y", ((N, M), (N, M)))
    assert "b = y[:, :] + a" in out, out


def test_a_value_read_after_the_run_is_a_whole_array():
    out = nested("""
        a = np.exp(x)
        b = np.sum(a * x, axis=1, keepdims=True)
        c = a / b
        if c[0, 0] > 0.0:
            c = c * 2.0
        return c
    """, "x", ((N, M),))
    assert "c = np.empty((x.shape[0], x.shape[1]), x.dtype)" in out, out
    assert "c[i, j] = a" in out and "b_s = 0.0" in out, out


def test_a_view_read_after_the_run_is_left_before_it():
    """A run whose first statement names a view read after it: the view stays as it was,
    and the run after it is a nest (once: the run is not tried again from the view)."""
    out = nested("""
        v = x[None, :, :]
        a = np.exp(x) * 2.0
        b = a * x
        if b[0, 0] > 0.0:
            b = b + 1.0
        return b, v
    """, "x", ((N, M),))
    assert "v = x[None, :, :]" in out and loops(out) == [
        "for i in range(x.shape[0]):", "for j in range(x.shape[1]):"], out
