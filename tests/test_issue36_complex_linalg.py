"""Issue 36, items 2, 16, 3 and 9: complex values promoted from real arguments, recursion
followed by complex arithmetic, linalg rules that read part of their input (eigh,
eigvalsh, cholesky), and the numba backend's rewrite of swapaxes.

Every oracle is independent of s2sad: central finite differences of NumPy's own function
(first order), a second-order central difference of the function (second order), and
the dot-product test pairing a VJP with a JVP that was itself checked against finite
differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.oracle import rng_for

H1 = 1e-6  # first-order central differences
H2 = 1e-4  # the mixed second difference


def fd_jvp(f, x, v, h=H1):
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


def fd_grad(f, x, h=H1):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def fd_second(f, x, u, v, h=H2):
    """u^T H v from values of f alone."""
    return (f(x + h * u + h * v) - f(x + h * u - h * v) - f(x - h * u + h * v)
            + f(x - h * u - h * v)) / (4 * h * h)


def check_first_and_second_order(f, x, rng, second=True):
    """grad against central differences, JVP against them too, JVP and VJP paired, and
    (second) the HVP and the JVP of the gradient against a second difference of f."""
    u, v = rng.standard_normal(x.shape), rng.standard_normal(x.shape)
    g = s2sad.grad(f)(x)
    np.testing.assert_allclose(g, fd_grad(f, x), rtol=1e-6, atol=1e-7)
    _, t = s2sad.jvp(f)(x, v)
    np.testing.assert_allclose(t, fd_jvp(f, x, v), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.sum(g * v), t, rtol=1e-10, atol=1e-10)
    if second:
        want = fd_second(f, x, u, v)
        hv = s2sad.hvp(f)(x, v)
        np.testing.assert_allclose(np.sum(u * hv), want, rtol=1e-4, atol=1e-5)
        _, jg = s2sad.jvp(s2sad.grad(f))(x, v)
        np.testing.assert_allclose(np.sum(u * jg), want, rtol=1e-4, atol=1e-5)


# -- item 2: a complex value indexed out of an array built from a real argument ---------------

def promoted_index(a):  # the reproducer
    b = a + 1.0j
    c = b[0] + 1.5
    d = a + b
    e = d + c
    return np.sum(np.sin(np.real(e)))


def promoted_slice(a):
    b = a * (1.0 + 0.5j)
    c = b[1:3]
    d = a + b
    e = d[:2] * c
    return np.sum(np.cos(np.real(e))) + np.sum(np.imag(d) ** 2)


def promoted_imag(a):
    b = 1j * a + a ** 2
    c = b[-1] * 2.0
    e = b + c
    return np.sum(np.sin(np.imag(e)) * np.real(e))


def promoted_write(a):
    b = a + 0.5j * a
    b[0] = b[2] * b[1]
    c = b[1:] + b[0]
    return np.sum(np.sin(np.real(c))) + np.sum(np.imag(c) ** 2)


def promoted_strided(a):
    b = np.exp(1j * a)
    c = b[::2]
    e = b[:3] + c * a[0]
    return np.sum(np.real(e) * np.imag(e))


def promoted_fancy(a):
    b = a * (2.0 - 1.0j)
    c = b[[0, 0, 3]]
    e = b[:3] + c
    return np.sum(np.sin(np.real(e))) + np.sum(np.imag(b) * a)


def promoted_augmented(a):
    b = a + 0.0j
    b[1:3] += 1j * a[:2]
    c = np.real(b[1]) + np.imag(b[2])
    return np.sum(np.cos(np.real(b) + c))


def promoted_matrix(a):
    m = np.reshape(a[:4], (2, 2)) * (1.0 + 1.0j)
    r = m[0] + m[:, 1]
    return np.sum(np.sin(np.real(m + r[0]))) + np.sum(np.imag(r) ** 2)


def promoted_subtracted(a):
    b = 0.5j - a
    c = np.add(a, 2.0j)
    b[0] = c[1] * a[2]
    c[1:] -= b[:-1] * 1.5
    return np.sum(np.sin(np.real(b)) * np.imag(c))


@pytest.mark.parametrize("f", [promoted_index, promoted_slice, promoted_imag, promoted_write,
                               promoted_strided, promoted_fancy, promoted_augmented,
                               promoted_matrix, promoted_subtracted], ids=lambda f: f.__name__)
def test_real_promoted_to_complex_then_indexed(f, request):
    """The reverse sweep took np.real(e_bar) (a view of the complex cotangent) and then
    added into e_bar in place: the real argument's cotangent changed after the fact. And
    the tangent of a + 0j (a real tangent plus a complex zero) was folded to the real
    tangent, into which complex values were then written (their imaginary parts lost)."""
    rng = rng_for(request.node.name)
    x = rng.standard_normal(5)
    check_first_and_second_order(f, x, rng)


# -- item 9: the numba backend's transpose of an operand of @ ---------------------------------

def test_numba_form_keeps_swapaxes_of_a_stack():
    """`np.swapaxes(b, -1, -2)` as an operand of @ was printed `b.T`, which reverses every
    axis of a stack of matrices: the Numba form keeps np.swapaxes."""
    from s2sad.codegen.numba_form import numba_source

    src = ("import numpy as np\n\ndef f(a, b):\n"
           "    return np.matmul(np.swapaxes(a, -1, -2), np.swapaxes(b, -2, -1))\n")
    out = numba_source(src, "f", cache=False)
    # (a product of stacks is numba_runtime.matmul's, of each pair: issue 35)
    assert "matmul(np.swapaxes(a, -1, -2), np.swapaxes(b, -2, -1))" in out and ".T" not in out
    scope: dict = {}
    plain = "\n".join(ln for ln in out.split("\n") if not ln.startswith(("@numba", "import numba")))
    exec(plain, scope)  # the NumPy meaning of the form
    rng = rng_for("numba swap")
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 3))
    np.testing.assert_allclose(scope["f"](a, b),
                               np.matmul(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)))


def tanh_layer(w, x):
    return np.sum(np.tanh(w @ x))


def two_layers(w1, w2, x):
    return np.sum(np.tanh(w2 @ np.tanh(w1 @ x)))


def test_numba_transposes_matrices_only():
    """A matrix's transpose is printed `.T` (multiplied by Numba without a copy), found from
    the kinds (an argument or a value computed); a stack's stays np.swapaxes."""
    pytest.importorskip("numba")
    rng = rng_for("numba transposes")
    w3, x3 = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 2))
    source = s2sad.grad(tanh_layer, backend="numba").source_for(w3, x3)
    assert "np.swapaxes(x, -1, -2)" in source and ".T" not in source
    w1, w2 = rng.standard_normal((3, 4)), rng.standard_normal((2, 3))
    x = rng.standard_normal((4, 2))
    g = s2sad.grad(two_layers, wrt=(0, 1), backend="numba")
    source = g.source_for(w1, w2, x)
    assert "x.T" in source and "w2.T" in source and "swapaxes" not in source
    got = g(w1, w2, x)
    np.testing.assert_allclose(got[0], fd_grad(lambda w: two_layers(w, w2, x), w1), rtol=1e-6,
                               atol=1e-7)
    np.testing.assert_allclose(got[1], fd_grad(lambda w: two_layers(w1, w, x), w2), rtol=1e-6,
                               atol=1e-7)


# -- item 16: a recursive helper's result, then complex values --------------------------------

def rec(x, k):
    return x if k == 0 else rec(x, k - 1)


@s2sad.checkpoint
def kept(x):
    return x * 1.0


def rec_fft_abs(x):
    return np.sum(np.abs(np.fft.fft(rec(x, 1))))


def rec_complex_power(x):
    q = rec(x, 3)
    return np.sum(((q + 1j * q ** 2) ** 3).real)


def rec_complex_result(x):
    z = rec(x * (1.0 + 2.0j), 2)
    return np.sum(np.abs(z) ** 2 + np.angle(z + 3.0))


def checkpointed_fft(x):
    return np.sum(np.abs(np.fft.fft(kept(x))) ** 1.5)


@pytest.mark.parametrize("f", [rec_fft_abs, rec_complex_power, rec_complex_result,
                               checkpointed_fft], ids=lambda f: f.__name__)
def test_recursion_then_complex_values(f, request):
    """A recursive call's result has an unknown dtype at compile time: the rules' is_complex
    of it was taken for False (np.abs's cotangent lost its conjugate: entries of the
    gradient swapped; a complex cotangent went to the pullback of a real output)."""
    rng = rng_for(request.node.name)
    x = rng.standard_normal(3)
    check_first_and_second_order(f, x, rng, second=False)  # (no second order of recursion)


def test_recursion_then_complex_values_float32():
    x = np.array([0.94, -0.057, -0.40])
    g = s2sad.grad(rec_fft_abs)(x.astype(np.float32))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, fd_grad(rec_fft_abs, x), rtol=1e-4, atol=1e-4)
    g = s2sad.grad(rec_complex_power)(x.astype(np.float32))
    np.testing.assert_allclose(g, fd_grad(rec_complex_power, x), rtol=1e-4, atol=1e-4)


# -- item 3: eigh, eigvalsh and cholesky read one triangle ------------------------------------
# NumPy factors the Hermitian matrix made of one triangle and the real part of the diagonal:
# the other triangle has derivative 0, and the triangle read counts once. The directions
# below are not symmetric, so the old convention (the Hermitian part of the direction)
# fails every one of them.

def weights(n):
    return np.arange(1.0, n + 1.0)


def eigh_lower(a):
    w, v = np.linalg.eigh(a)
    return w, (v * weights(a.shape[-1])) @ np.conj(np.swapaxes(v, -1, -2))  # projectors


def eigh_upper(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return w, (v * weights(a.shape[-1])) @ np.conj(np.swapaxes(v, -1, -2))


def eigh_upper_positional(a):
    w, v = np.linalg.eigh(a, "U")
    return np.sum(np.abs(v) ** 2 * w[..., None, :], axis=-1)


def eigvalsh_lower(a):
    return np.linalg.eigvalsh(a)


def eigvalsh_upper(a):
    return np.linalg.eigvalsh(a, UPLO="U")


def cholesky_lower(a):
    return np.linalg.cholesky(a)


def cholesky_upper(a):
    return np.linalg.cholesky(a, upper=True)


def svd_hermitian(a):
    u, s, vh = np.linalg.svd(a, hermitian=True)
    return s, (u * weights(a.shape[-1])) @ np.conj(np.swapaxes(u, -1, -2)), u @ vh


def svdvals_hermitian(a):
    return np.linalg.svd(a, compute_uv=False, hermitian=True)


def pinv_hermitian(a):
    return np.linalg.pinv(a, hermitian=True)


NUMPY_2 = int(np.__version__.split(".")[0]) >= 2


def spd(rng, shape, complex_):
    n = shape[-1]
    b = rng.standard_normal(shape)
    if complex_:
        b = b + 1j * rng.standard_normal(shape)
    herm = b @ np.conj(np.swapaxes(b, -1, -2)) / n + np.diag(weights(n))
    # a different other triangle (and an imaginary diagonal): NumPy never reads it
    noise = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if complex_ else 0)
    return herm, noise


def direction(rng, shape, complex_):
    v = rng.standard_normal(shape)
    return v + 1j * rng.standard_normal(shape) if complex_ else v


def pair(a, b):
    if isinstance(a, tuple):
        return sum(pair(x, y) for x, y in zip(a, b))
    return float(np.real(np.sum(a * b)))


def fd_tree(f, x, v, h=H1):
    plus, minus = f(x + h * v), f(x - h * v)
    if isinstance(plus, tuple):
        return tuple((p - m) / (2 * h) for p, m in zip(plus, minus))
    return (plus - minus) / (2 * h)


TRIANGLE_READERS = [eigh_lower, eigh_upper, eigh_upper_positional, eigvalsh_lower,
                    eigvalsh_upper, cholesky_lower, svd_hermitian, svdvals_hermitian,
                    pinv_hermitian] + ([cholesky_upper] if NUMPY_2 else [])
UPPER = (eigh_upper, eigh_upper_positional, eigvalsh_upper, cholesky_upper)


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)], ids=["matrix", "stack"])
@pytest.mark.parametrize("f", TRIANGLE_READERS, ids=lambda f: f.__name__)
def test_triangle_readers_differentiate_what_numpy_computes(f, shape, complex_, request):
    rng = rng_for(request.node.name)
    herm, noise = spd(rng, shape, complex_)
    upper = f in UPPER
    # the triangle NumPy does not read holds other values (and the diagonal an imaginary
    # part): the point is not a symmetric matrix, and neither is the direction
    keep = np.triu(np.ones(shape[-2:])) if upper else np.tril(np.ones(shape[-2:]))
    a = herm * keep + noise * (1 - keep)
    if complex_:
        a = a + 0.3j * np.eye(shape[-1])
    v = direction(rng, shape, complex_)
    _, t = s2sad.jvp(f)(a, v)
    want = fd_tree(f, a, v)
    for got, ref in zip(t if isinstance(t, tuple) else (t,),
                        want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    out, pullback = s2sad.vjp(f)(a)
    u = tuple(direction(rng, np.shape(o), np.iscomplexobj(o)) for o in out) \
        if isinstance(out, tuple) else direction(rng, np.shape(out), np.iscomplexobj(out))
    (a_bar,) = pullback(u)
    assert np.iscomplexobj(a_bar) == complex_
    np.testing.assert_allclose(pair(a_bar, v), pair(u, t), rtol=1e-9, atol=1e-9)
    # the triangle not read has a zero cotangent
    np.testing.assert_array_equal(a_bar * (1 - keep), 0.0)


def L_eigh(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w ** 3) + np.sum(np.abs(v[..., 0, :]) ** 4)


def L_eigvalsh_upper(a):
    return np.sum(np.sin(np.linalg.eigvalsh(a, UPLO="U")))


def L_cholesky(a):
    return np.sum(np.linalg.cholesky(a) ** 2 * weights(a.shape[-1]))


def L_cholesky_upper(a):
    return np.sum(np.sin(np.linalg.cholesky(a, upper=True)))


@pytest.mark.parametrize("f", [L_eigh, L_eigvalsh_upper, L_cholesky] +
                         ([L_cholesky_upper] if NUMPY_2 else []), ids=lambda f: f.__name__)
def test_triangle_readers_second_order(f, request):
    rng = rng_for(request.node.name)
    herm, noise = spd(rng, (3, 3), False)
    if f in (L_eigvalsh_upper, L_cholesky_upper):
        a = np.triu(herm) + np.tril(noise, -1)
    else:
        a = np.tril(herm) + np.triu(noise, 1)
    check_first_and_second_order(f, a, rng)


def to_complex(x, k):  # complex only at the bottom of the recursion
    return x * (0.5 + 1j) if k == 0 else to_complex(x, k - 1) * 2.0


def turning(x, k):  # the recursive call's argument is complex: another kind each level
    return x if k == 0 else turning(x * (1.0 + 0.5j), k - 1)


def even(x, k):
    return x if k == 0 else odd(x * 1.5, k - 1)


def odd(x, k):
    return even(np.exp(1j * x), k - 1) if k > 0 else x + 0.5j


def rec_to_complex(x):
    return np.sum(np.abs(to_complex(x, 2)) ** 2 + np.real(to_complex(x, 1)) ** 3)


def rec_turning(x):
    return np.sum(np.abs(np.fft.fft(turning(x, 2))) ** 1.5)


def mutual(x):
    return np.sum(np.abs(even(x, 3)) ** 2 + np.imag(even(x, 2)))


@pytest.mark.parametrize("f", [rec_to_complex, rec_turning, mutual], ids=lambda f: f.__name__)
def test_recursion_result_kinds(f, request):
    """The kind of a recursive call's result is found from the body (the least kind the body
    returns when its calls return it); calls it cannot follow are decided at run time."""
    rng = rng_for(request.node.name)
    x = rng.standard_normal(3)
    check_first_and_second_order(f, x, rng, second=False)  # (no second order of recursion)


def test_recursion_result_kind_keeps_the_code_plain():
    """rec's result is known to be a float array: the rules' complex branches are decided
    while compiling (no is_complex test left in the generated code)."""
    x = np.array([0.94, -0.057, -0.40])
    source = s2sad.grad(rec_fft_abs).source_for(x)
    assert "is_complex" not in source and "np.conjugate(" in source
    # the pullback's cotangent of a real argument is real: no np.real taken of it again
    assert "np.real(x_bar" not in source


# -- the same family: a value whose size is unknown at compile time ---------------------------

def fft_of_either(x, c):
    y = x if c > 0 else x[:2]  # the merged value's length is not known while compiling
    return np.sum(np.abs(np.fft.fft(y)) ** 1.5)


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_fft_of_a_value_of_unknown_size(c, request):
    """The kind of np.fft.fft of an array of unknown size was guessed from its operand
    (real), so np.abs's cotangent lost its conjugate (entries of the gradient swapped, and a
    complex gradient for a real argument); it is evaluated on a stand-in of some size."""
    rng = rng_for(request.node.name)
    x = rng.standard_normal(3)
    g = s2sad.grad(fft_of_either)(x, c)
    assert not np.iscomplexobj(g)
    np.testing.assert_allclose(g, fd_grad(lambda x: fft_of_either(x, c), x), rtol=1e-6,
                               atol=1e-7)
    v = rng.standard_normal(3)
    _, t = s2sad.jvp(fft_of_either, wrt=0)(x, c, v)
    np.testing.assert_allclose(t, fd_jvp(lambda x: fft_of_either(x, c), x, v), rtol=1e-6,
                               atol=1e-7)


# -- the same families, found with the fixes above (issue 36, items 13 and 15) ----------------

def flipped_sum(x):  # np.flip is a view: its cotangent was updated in place after the fact
    o = x * 0.2
    g = np.flip(x)
    return np.sum((g + o) ** 2)


def fft_of_a_list(x):  # the list's array has no known size while compiling
    comp = [x for i in range(4)]
    return np.sum(np.abs(np.fft.fft(comp)))


@pytest.mark.parametrize("f, shape", [(flipped_sum, (4,)), (fft_of_a_list, (4, 4))],
                         ids=["flip", "fft_list"])
def test_views_and_unknown_sizes_family(f, shape, request):
    rng = rng_for(request.node.name)
    x = rng.standard_normal(shape)
    check_first_and_second_order(f, x, rng, second=f is flipped_sum)
