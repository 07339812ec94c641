"""Issue #13, the remaining rule gaps: every argument form of np.gradient, einsum traces and
diagonals, np.cross of 2-vectors.

Each derivative is checked against central finite differences in float64 at random points, in
both modes, plus the dot-product test <u, J v> = <J^T u, v> (`check_both_modes`), never against
s2sad's own output; options still not handled are refused at compile time, naming them.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from s2sad_rules.numpy_products import CROSS_OF_2_VECTORS
from tests.oracle import assert_close, numerical_jvp
from tests.rules.test_issue13_regressions import check_both_modes, refused

R = np.random.default_rng(1313)


def coords(n, lo=0.3, hi=1.5, sign=1.0):
    """n uneven coordinates at least `lo` apart (decreasing with sign=-1)."""
    steps = R.uniform(lo, hi, n - 1)
    return R.uniform(-1.0, 1.0) + sign * np.concatenate([[0.0], np.cumsum(steps)])


# -- np.gradient -------------------------------------------------------------------------------

def grad_default(x): return np.gradient(x)
def grad_scalar_all(x, h): return np.gradient(x, h, edge_order=2)
def grad_axis_neg(x): return np.gradient(x, 0.5, axis=-1)
def grad_axis_tuple(x, h, c): return np.gradient(x, h, c, axis=(-1, 0), edge_order=2)
def grad_one_axis_tuple(x): return np.gradient(x, axis=(1,))
def grad_coords(x, c): return np.gradient(x, c)
def grad_coords_order2(x, c): return np.gradient(x, c, edge_order=2)
def grad_mixed(x, c, h): return np.gradient(x, c, h)
def grad_mixed_order2(x, c, h): return np.gradient(x, c, h, edge_order=2)
def grad_four(x, a, b, c, d): return np.gradient(x, a, b, c, d, edge_order=2)
def grad_five_d_axis(x, h): return np.gradient(x, h, axis=3)
def grad_int_coords(x): return np.gradient(x, np.array([0, 1, 3, 4]), axis=0)
def grad_sum(x, c):
    gx, gy = np.gradient(x, c, 0.7)
    return np.sum(gx * gy)


@pytest.mark.parametrize("f, make", [
    (grad_default, lambda: [R.standard_normal(5)]),
    (grad_default, lambda: [R.standard_normal((3, 4))]),
    (grad_default, lambda: [R.standard_normal((2, 3, 2))]),
    (grad_scalar_all, lambda: [R.standard_normal((3, 4)), 0.7]),
    (grad_axis_neg, lambda: [R.standard_normal((3, 4))]),
    (grad_axis_tuple, lambda: [R.standard_normal((3, 2, 4)), -1.3, coords(3)]),
    (grad_one_axis_tuple, lambda: [R.standard_normal((3, 4))]),
    (grad_coords, lambda: [R.standard_normal(5), coords(5)]),
    (grad_coords, lambda: [R.standard_normal(2), coords(2)]),
    (grad_coords, lambda: [R.standard_normal(4), coords(4, sign=-1.0)]),
    (grad_coords_order2, lambda: [R.standard_normal(5), coords(5)]),
    (grad_coords_order2, lambda: [R.standard_normal(3), coords(3)]),
    (grad_mixed, lambda: [R.standard_normal((4, 3)), coords(4), 1.7]),
    (grad_mixed_order2, lambda: [R.standard_normal((4, 3)), coords(4), 0.4]),
    (grad_four, lambda: [R.standard_normal((3, 4, 3, 3)), coords(3), 0.5, coords(3), 2.0]),
    (grad_five_d_axis, lambda: [R.standard_normal((2, 2, 1, 3, 2)), 0.9]),
    (grad_int_coords, lambda: [R.standard_normal((4, 2))]),
    (grad_sum, lambda: [R.standard_normal((4, 3)), coords(4)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_gradient_in_f_and_in_the_spacings(f, make):
    args = make()
    check_both_modes(f, args, rtol=1e-5, salt=str([np.shape(a) for a in args]))


def test_gradient_returns_what_numpy_returns():
    x, c = R.standard_normal((3, 4)), coords(3)
    for f, args in ((grad_default, [x]), (grad_one_axis_tuple, [x]), (grad_mixed, [x, c, 0.5])):
        expected = f(*args)
        out, _ = s2sad.jvp(f)(*args, *[np.zeros_like(a) for a in args])
        assert type(out) is type(expected)
        if isinstance(expected, tuple):
            assert len(out) == len(expected)
        assert_close(out, expected, rtol=1e-12, atol=1e-12, check_kind=False)


def test_gradient_at_evenly_spaced_coordinates_is_the_limit_of_uneven_ones():
    # NumPy switches to its even formula on an even grid; the derivative in the coordinates
    # is that of the uneven formula (what finite differences see, as they perturb the grid)
    x, c = R.standard_normal(5), np.arange(5) * 0.5
    check_both_modes(grad_coords_order2, [x, c])
    _, x_dot = s2sad.jvp(grad_coords, wrt=0)(x, c, np.ones(5))
    assert_close(x_dot, np.gradient(np.ones(5), c), rtol=1e-12, atol=1e-12, check_kind=False)


def test_gradient_spacing_derivative_is_minus_the_gradient_over_h():
    # np.gradient(x, h) = np.gradient(x) / h: d/dh = -np.gradient(x) / h^2 (analytic)
    x, h = R.standard_normal(6), 0.8

    def one(x, h): return np.gradient(x, h)
    _, h_dot = s2sad.jvp(one, wrt=1)(x, h, 1.0)
    assert_close(h_dot, -np.gradient(x) / h ** 2, rtol=1e-12, atol=1e-12, check_kind=False)
    expected = numerical_jvp(one, [x, h], (1,), [1.0])
    assert_close(h_dot, expected, rtol=1e-6, atol=1e-8, check_kind=False)


def grad_all_five(x): return np.gradient(x)
def grad_three_spacings(x): return np.gradient(x, 1.0, 2.0, 3.0)
def grad_one_array_two_axes(x, c): return np.gradient(x, c)
def grad_edge3(x): return np.gradient(x, edge_order=3)
def grad_axis_repeated(x): return np.gradient(x, axis=(0, 0))


def test_gradient_forms_still_refused_name_the_option():
    refused(grad_all_five, np.ones((2,) * 5), names=("more than 4 axes",))
    refused(grad_three_spacings, np.ones((3, 3)), names=("3 spacing arguments for 2 axes",))
    refused(grad_one_array_two_axes, np.ones((3, 3)), np.arange(3.0),
            names=("one coordinate array for several axes",))
    refused(grad_edge3, np.ones(4), names=("edge_order=3",))
    refused(grad_axis_repeated, np.ones((3, 3)), names=("axis=(0, 0)",))


def test_gradient_of_a_five_d_array_with_five_spacings_is_refused_not_misread():
    # the rules take four spacings (h0-h3): a fifth would land on `axis`; refused instead
    def five(x): return np.gradient(x, 1.0, 1.0, 1.0, 1.0, 1.0)
    refused(five, np.ones((2,) * 5), names=("spacing",))



# -- np.einsum: traces and diagonals -----------------------------------------------------------

def einsum_call(sub, n, optimize=False):
    """A module-level-like function calling np.einsum(sub, n operands) (the compiler reads
    source: built with exec into a named function with its own source lines)."""
    names = ", ".join(f"a{i}" for i in range(n))
    opt = "" if optimize is False else f", optimize={optimize!r}"
    src = f"def einsum_{n}({names}):\n    return np.einsum({sub!r}, {names}{opt})\n"
    return _function_from_source(src, f"einsum_{n}")


_SOURCES: dict = {}


def _function_from_source(src, name):
    import importlib.util
    import tempfile
    from pathlib import Path

    if src not in _SOURCES:
        path = Path(tempfile.mkdtemp()) / f"issue13_{len(_SOURCES)}.py"
        path.write_text("import numpy as np\n\n" + src)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _SOURCES[src] = getattr(module, name)
    return _SOURCES[src]


EINSUM_DIAGONALS = [
    ("ii", [(3, 3)]), ("ii->", [(2, 2)]), ("ii->i", [(3, 3)]), ("iij->j", [(3, 3, 2)]),
    ("iji->ij", [(2, 3, 2)]), ("iii->i", [(2, 2, 2)]), ("iijj->ij", [(2, 2, 3, 3)]),
    ("ij,jj->i", [(2, 3), (3, 3)]), ("ij,ii->j", [(3, 2), (3, 3)]), ("ii,jj", [(2, 2), (3, 3)]),
    ("...ii->...i", [(2, 3, 3)]), ("...ii", [(4, 1, 2, 2)]), ("bii,bi->b", [(2, 3, 3), (1, 3)]),
    ("ij,jk,kk->ik", [(2, 3), (3, 2), (2, 2)]), ("ii,ij,jk,kk->", [(2, 2), (2, 3), (3, 2), (2, 2)]),
]


@pytest.mark.parametrize("sub, shapes", EINSUM_DIAGONALS, ids=[s for s, _ in EINSUM_DIAGONALS])
@pytest.mark.parametrize("optimize", [False, True, "optimal"])
def test_einsum_traces_and_diagonals(sub, shapes, optimize):
    f = einsum_call(sub, len(shapes), optimize)
    args = [R.standard_normal(s) for s in shapes]
    check_both_modes(f, args, salt=sub + str(optimize))


def test_einsum_diagonal_cotangent_is_zero_off_the_diagonal():
    # d/dA sum(w * diag(A)) = diag(w): the off-diagonal entries get an exact 0
    f = einsum_call("ii->i", 1)
    w = np.array([1.0, -2.0, 3.0])
    (a_bar,) = s2sad.vjp(f)(R.standard_normal((3, 3)))[1](w)
    assert np.array_equal(a_bar, np.diag(w))
    (a_bar,) = s2sad.vjp(f)(R.standard_normal((3, 3)).astype(np.float32))[1](
        w.astype(np.float32))
    assert a_bar.dtype == np.float32


def test_einsum_with_an_explicit_contraction_path():
    def path(a, b, c):
        return np.einsum("ij,jk,kk->i", a, b, c, optimize=["einsum_path", (0, 1), (0, 1)])
    check_both_modes(path, [R.standard_normal((2, 3)), R.standard_normal((3, 2)),
                            R.standard_normal((2, 2))])


def test_einsum_forms_still_refused_name_the_option():
    def five(a, b): return np.einsum("i,i,i,i,i", a, b, b, b, b)
    def into(a): return np.einsum("ii->i", a, out=np.zeros(2))
    with pytest.raises(s2sad.MissingRuleError, match="more than 4 operands"):
        s2sad.vjp(five, wrt=0)(np.ones(2), np.ones(2))
    # (every call with `out=` is refused where written: tests/frontend/test_output_arguments.py)
    with pytest.raises(s2sad.UnsupportedSyntaxError, match="out="):
        s2sad.vjp(into)(np.ones((2, 2)))


# -- np.cross of 2-vectors ---------------------------------------------------------------------

def cross(a, b): return np.cross(a, b)
def cross_axes(a, b): return np.cross(a, b, axisa=0, axisb=1, axisc=0)
def cross_axis(a, b): return np.cross(a, b, axis=0)
def cross_negative(a, b): return np.cross(a, b, axisa=-2, axisb=0, axisc=-2)


TWO_VECTORS = pytest.mark.skipif(not CROSS_OF_2_VECTORS, reason=(
    "this NumPy no longer computes the cross product of 2-vectors (refused: test below)"))


@TWO_VECTORS
@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
@pytest.mark.parametrize("f, shapes", [
    (cross, [(2,), (2,)]), (cross, [(4, 2), (2,)]), (cross, [(2, 3), (4, 1, 2)]),
    (cross, [(2,), (3,)]), (cross, [(3,), (2,)]), (cross, [(3, 1, 2), (2, 3)]),
    (cross_axes, [(2, 4), (4, 2)]), (cross_axes, [(3, 4), (4, 2)]), (cross_axes, [(2, 4), (4, 3)]),
    (cross_axis, [(2, 3), (2, 3)]), (cross_axis, [(2, 3), (3, 3)]),
    (cross_negative, [(2, 5), (3, 5)]), (cross_negative, [(2, 1), (2, 5)]),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_cross_of_2_vectors(f, shapes):
    args = [R.standard_normal(s) for s in shapes]
    expected = f(*args)
    out, _ = s2sad.jvp(f)(*args, *[np.zeros_like(a) for a in args])
    assert type(out) is type(expected) and np.shape(out) == np.shape(expected)
    assert_close(out, expected, rtol=1e-12, atol=1e-12, check_kind=False)
    check_both_modes(f, args, salt=str(shapes))


@TWO_VECTORS
@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
def test_cross_of_two_2_vectors_is_the_z_component():
    # z = a0 b1 - a1 b0: dz/da = (b1, -b0), dz/db = (-a1, a0) (analytic)
    a, b = np.array([1.5, -2.0]), np.array([0.5, 3.0])
    a_bar, b_bar = s2sad.vjp(cross)(a, b)[1](np.array(2.0))
    assert np.array_equal(a_bar, 2.0 * np.array([3.0, -0.5]))
    assert np.array_equal(b_bar, 2.0 * np.array([2.0, 1.5]))


def test_cross_forms_still_refused_name_the_option():
    refused(cross, np.ones(4), np.ones(3), names=("4 components",))
    if not CROSS_OF_2_VECTORS:
        refused(cross, np.ones(2), np.ones(2), names=("2-vectors",))
