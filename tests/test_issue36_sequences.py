"""Issue 36: sequences of arrays. Lists built by comprehensions and given to NumPy functions,
lists of tuples built in a loop and iterated, a list built in a loop inside a Hessian-vector
product, tuples and lists given to NumPy functions that read them as one array. Every
derivative is checked against central differences or an analytic formula."""

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jacobian, numerical_jvp

# -- a list built by a comprehension, given to a NumPy function (item 13) ----------------
# The list's kind was unknown (a list grown in a loop), so the rules reading it could not
# tell it held complex numbers: |fft(comp)| took the real branch of abs's rule, and the
# gradient was wrong by ~16 at a random point.


def fft_of_comprehension(x):
    comp = [x for i in range(4)]
    return np.sum(np.abs(np.fft.fft(comp)))


def ifft_of_comprehension(x):
    comp = [x * (i + 1.0) for i in range(3)]
    return np.sum(np.abs(np.fft.ifft(comp)))


def rfft_of_comprehension(x):
    comp = [x * (i + 1.0) for i in range(3)]
    return np.sum(np.abs(np.fft.rfft(comp)))


def fft_of_array_of_comprehension(x):
    comp = [x for i in range(4)]
    return np.sum(np.abs(np.fft.fft(np.array(comp))))


def complex_exp_of_comprehension(x):
    comp = [x * (i + 1.0) for i in range(3)]
    return np.sum(np.abs(np.exp(1j * np.asarray(comp))) ** 2 * np.asarray(comp))


def square_of_comprehension(x):
    comp = [x * (i + 1.0) for i in range(3)]
    return np.sum(np.square(comp))


def max_of_comprehension(x):
    comp = [x * (i + 1.0) for i in range(3)]
    return np.max(comp) + np.sum(np.sin(comp))


def fft_of_a_long_comprehension(x):
    # (longer than the loops kind inference follows iteration by iteration: the list's
    # kind stays unknown, and abs's rule chooses its complex branch when the code runs)
    comp = [x * (i % 3 + 1.0) for i in range(70)]
    return np.sum(np.abs(np.fft.fft(comp)))


def fft_of_a_list_built_by_while(x):
    comp = []
    i = 0
    while i < 3:
        comp.append(x * (i + 1.0))
        i += 1
    return np.sum(np.abs(np.fft.fft(comp)))


def square_of_a_long_comprehension(x):
    # (np.square's rule computed 2.0 * x with x the grown list: a TypeError)
    comp = [x * (i % 3 + 1.0) for i in range(70)]
    return np.sum(np.square(comp))


def reductions_of_a_list_built_by_while(x):
    comp = []
    i = 0
    while i < 3:
        comp.append(x * (i + 1.0))
        i += 1
    return np.sum(np.square(comp)) + np.max(comp) + np.linalg.norm(comp)


COMPREHENSIONS = [fft_of_a_long_comprehension, fft_of_a_list_built_by_while,
                  square_of_a_long_comprehension, reductions_of_a_list_built_by_while,
                  fft_of_comprehension, ifft_of_comprehension, rfft_of_comprehension,
                  fft_of_array_of_comprehension, complex_exp_of_comprehension,
                  square_of_comprehension, max_of_comprehension]


@pytest.mark.parametrize("f", COMPREHENSIONS, ids=lambda f: f.__name__)
def test_a_comprehension_given_to_numpy_in_both_modes(f):
    rng = np.random.default_rng(13)
    x = rng.standard_normal((3, 4))
    (ref,) = numerical_grad(f, (x,), (0,))
    assert_close(s2sad.grad(f)(x), ref, rtol=1e-6, atol=1e-7)
    v = rng.standard_normal(x.shape)
    _, tangent = s2sad.jvp(f)(x, v)
    assert_close(tangent, numerical_jvp(f, (x,), (0,), (v,)), rtol=1e-6, atol=1e-7)


# -- tuples and lists of arrays given to functions that read them as one array ------------
# (np.square's rule computes 2.0 * x, np.max's reads x's shape: a tuple is neither)


def square_of_tuple(a, b):
    return np.sum(np.square((a, b)))


def max_of_list(a, b):
    return np.max([a, 2.0 * b, a * b])


def norm_of_tuple(a, b):
    return np.linalg.norm((a, b))


@pytest.mark.parametrize("f", [square_of_tuple, max_of_list, norm_of_tuple],
                         ids=lambda f: f.__name__)
def test_a_sequence_of_arrays_read_as_one_array(f):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    ref = numerical_grad(f, (a, b), (0, 1))
    got = s2sad.grad(f, wrt=(0, 1))(a, b)
    for g, r in zip(got, ref):
        assert_close(g, r, rtol=1e-6, atol=1e-7)
    va, vb = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    _, tangent = s2sad.jvp(f)(a, b, va, vb)
    assert_close(tangent, numerical_jvp(f, (a, b), (0, 1), (va, vb)), rtol=1e-6, atol=1e-7)


# -- a list of tuples of slices built in a loop, then iterated (item 8) -------------------
# The list's kind was unknown: its items were indexed as an array's rows, and the tape of
# the loop over it recorded np.shape of each tuple (NumPy: "inhomogeneous shape")


def split_pairs(w):
    pairs = []
    for k in range(2):
        pairs.append((w[:, :2], w[:, 2:3]))
        w = w[:, 3:]
    return pairs


def loss_of_pairs(w):
    out = 1.0
    for a, b in split_pairs(w):
        out = out * np.sum(a) + np.sum(b ** 2)
    return out


def test_a_list_of_tuples_built_in_a_loop_and_iterated():
    rng = np.random.default_rng(8)
    for w in (np.arange(12.0).reshape(2, 6) / 10, rng.standard_normal((2, 6))):
        (ref,) = numerical_grad(loss_of_pairs, (w,), (0,))
        assert_close(s2sad.grad(loss_of_pairs)(w), ref, rtol=1e-6, atol=1e-8)
        v = rng.standard_normal(w.shape)
        _, tangent = s2sad.jvp(loss_of_pairs)(w, v)
        assert_close(tangent, numerical_jvp(loss_of_pairs, (w,), (0,), (v,)), rtol=1e-6,
                     atol=1e-8)


# -- a list built in a loop inside a Hessian-vector product (item 14) ---------------------
# The simplifier replaced an `if`'s output, a zero cotangent in both branches, by the zero
# of one branch, whose shape was read from a variable defined in that branch: the IR used
# it outside (IRVerificationError "_t_10 is used before it is defined")


def norm_plus_max_of_comprehension(c, t):
    comp = [c for i in range(2)]
    return np.linalg.norm(c) + np.max(comp)


def norm_plus_max_of_while_list(c, t):
    comp = []
    i = 0
    while i < 2:
        comp.append(c)
        i += 1
    return np.linalg.norm(c) + np.max(comp)


@pytest.mark.parametrize("f", [norm_plus_max_of_comprehension, norm_plus_max_of_while_list],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hvp_through_a_list_built_in_a_loop(f, dtype):
    rng = np.random.default_rng(2)
    c = rng.standard_normal((2, 2)).astype(dtype)
    v = rng.standard_normal((2, 2)).astype(dtype)
    got = s2sad.hvp(f, wrt=0)(c, 1.3, v)
    # the max is piecewise linear (no curvature away from ties); the Frobenius norm's
    # Hessian is (I - u u^T) / |c| with u = c / |c|
    c64, v64 = c.astype(np.float64), v.astype(np.float64)
    n = np.linalg.norm(c64)
    u = c64 / n
    expected = (v64 - u * np.sum(u * v64)) / n
    assert got.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


# -- a tuple or list argument's cotangent has its structure (item 1) ----------------------
# np.stack's VJP gives one stacked array, np.concatenate's a list: the pullback returned
# them as they were (an array of shape (2, n) for a tuple of two arrays, an array for a
# list of floats). A cotangent has the structure of its argument, as in JAX.


def _fd_vjp_of_sequence(f, t, u, eps=1e-6):
    """Central differences of <u, f(t)> for each entry of each item of `t` (floats and
    arrays), with the structure of `t`."""
    out = []
    for j, item in enumerate(t):
        arr = np.asarray(item, dtype=np.float64)
        g = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            e = np.zeros_like(arr)
            e[i] = eps
            hi, lo = list(t), list(t)
            hi[j] = arr + e if arr.ndim else float(arr + e)
            lo[j] = arr - e if arr.ndim else float(arr - e)
            g[i] = np.sum(u * (np.asarray(f(type(t)(hi))) - np.asarray(f(type(t)(lo))))) / \
                (2 * eps)
        out.append(g if arr.ndim else float(g))
    return type(t)(out)


def _assert_structured(got, like, ref):
    assert type(got) is type(like), (type(got), type(like))
    assert len(got) == len(like)
    for g, x, r in zip(got, like, ref):
        if isinstance(x, np.ndarray):
            assert isinstance(g, np.ndarray) and g.shape == x.shape, (g, x.shape)
        else:
            assert np.ndim(g) == 0 and not isinstance(g, np.ndarray), repr(g)
        np.testing.assert_allclose(g, r, rtol=1e-6, atol=1e-8)


def stack_items(t):
    return np.stack(t, axis=0)


def stack_items_axis1(t):
    return np.stack(t, axis=1)


def concatenate_items(t):
    return np.concatenate(t)


def vstack_items(t):
    return np.vstack(t)


def hstack_items(t):
    return np.hstack(t)


def column_stack_items(t):
    return np.column_stack(t)


def append_four(t):
    return np.append(t, 4.0)


def array_of_items(t):
    return np.array(t) * 2.0


def sum_of_items(t):
    return sum(t)


def squares_of_items(t):
    s = 0.0
    for x in t:
        s = s + np.sum(x ** 2)
    return s


_R = np.random.default_rng(36)
SEQUENCE_CASES = [
    (stack_items, (_R.standard_normal(3), _R.standard_normal(3))),
    (stack_items, [_R.standard_normal((2, 2)), _R.standard_normal((2, 2))]),
    (stack_items_axis1, (_R.standard_normal((2, 3)), _R.standard_normal((2, 3)))),
    (concatenate_items, (_R.standard_normal(3), _R.standard_normal(2))),
    (concatenate_items, [_R.standard_normal((1, 2)), _R.standard_normal((2, 2))]),
    (vstack_items, (_R.standard_normal(3), _R.standard_normal((2, 3)))),
    (hstack_items, [_R.standard_normal((2, 1)), _R.standard_normal((2, 3))]),
    (column_stack_items, (_R.standard_normal(3), _R.standard_normal((3, 2)))),
    (append_four, [1.0, 2.0, 3.0]),
    (append_four, (_R.standard_normal(2), _R.standard_normal(2))),
    (array_of_items, [1.0, 2.0, 3.0]),
    (array_of_items, (_R.standard_normal(2), _R.standard_normal(2))),
    (sum_of_items, [_R.standard_normal(2), _R.standard_normal(2)]),
    (squares_of_items, (_R.standard_normal(2), _R.standard_normal(3))),
]


@pytest.mark.parametrize("f, t", SEQUENCE_CASES,
                         ids=[f"{f.__name__}-{type(t).__name__}" for f, t in SEQUENCE_CASES])
def test_the_cotangent_of_a_sequence_argument_has_its_structure(f, t):
    rng = np.random.default_rng(1)
    out = f(t)
    u = rng.standard_normal(np.shape(out))
    ref = _fd_vjp_of_sequence(f, t, u)
    _, pullback = s2sad.vjp(f)(t)
    (got,) = pullback(u if np.ndim(out) else float(u))
    _assert_structured(got, t, ref)
    if np.ndim(out) == 0:
        _assert_structured(s2sad.grad(f)(t), t, _fd_vjp_of_sequence(f, t, 1.0))
    # forward mode agrees: <u, J v> = <J^T u, v>
    v = type(t)(rng.standard_normal(np.shape(x)) if isinstance(x, np.ndarray)
                else float(rng.standard_normal()) for x in t)
    _, tangent = s2sad.jvp(f)(t, v)
    expected = sum(float(np.sum(np.asarray(r) * np.asarray(d))) for r, d in zip(ref, v))
    np.testing.assert_allclose(np.sum(u * tangent), expected, rtol=1e-6, atol=1e-8)


def test_the_pullback_of_a_numpy_function_of_a_sequence():
    a, b = np.arange(3.0), np.arange(3.0) + 5
    u = np.arange(6.0).reshape(2, 3)
    out, pullback = s2sad.vjp(np.stack)((a, b), axis=0)
    np.testing.assert_array_equal(out, np.stack((a, b)))
    ((a_bar, b_bar),) = got = pullback(u)
    assert type(got[0]) is tuple
    np.testing.assert_array_equal(a_bar, u[0])
    np.testing.assert_array_equal(b_bar, u[1])
    # a list of floats and a float: a list of three floats, and a float
    _, pullback = s2sad.vjp(np.append)([1.0, 2.0, 3.0], 4.0)
    arr_bar, values_bar = pullback(np.arange(4.0) + 1)
    assert type(arr_bar) is list and all(np.ndim(x) == 0 for x in arr_bar)
    assert arr_bar == [1.0, 2.0, 3.0] and values_bar == 4.0
    # np.concatenate of a tuple: a tuple (its rule splits the cotangent into a list)
    _, pullback = s2sad.vjp(np.concatenate)((a, b[:2]))
    (got,) = pullback(np.arange(5.0))
    assert type(got) is tuple
    np.testing.assert_array_equal(got[0], [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(got[1], [3.0, 4.0])


# -- a list of arrays of different shapes as output (item 5) ------------------------------
# The pullback's seed check read np.shape of the (ragged) list: NumPy's "inhomogeneous
# shape" ValueError before the reverse sweep ran


def split_at_one(x):
    return np.split(x, [1])


def array_split_three(x):
    return np.array_split(x, 3)


def vsplit_rows(x):
    return np.vsplit(x, [1])


def hsplit_columns(x):
    return np.hsplit(x, [2])


def dsplit_depth(x):
    return np.dsplit(x, [1])


def two_slices(x):
    return [x[:1], x[1:] * 2.0]


SPLITS = [(split_at_one, (4,)), (array_split_three, (5,)), (vsplit_rows, (3, 2)),
          (hsplit_columns, (2, 3)), (dsplit_depth, (1, 2, 3)), (two_slices, (4,))]


@pytest.mark.parametrize("f, shape", SPLITS, ids=[f.__name__ for f, _ in SPLITS])
def test_a_list_of_arrays_of_different_shapes_as_output(f, shape):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape)
    parts = f(x)
    assert len({p.shape for p in parts}) > 1  # (ragged)
    seed = [rng.standard_normal(p.shape) for p in parts]
    out, pullback = s2sad.vjp(f)(x)
    assert type(out) is list and [o.shape for o in out] == [p.shape for p in parts]
    # <seed, J e_i> by central differences, entry by entry
    ref = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        ref[i] = sum(np.sum(s * (hi - lo)) for s, hi, lo in zip(seed, f(x + e), f(x - e))) \
            / 2e-6
    for given in (seed, tuple(seed)):
        (x_bar,) = pullback(given)
        assert_close(x_bar, ref, rtol=1e-6, atol=1e-8)
    v = rng.standard_normal(shape)
    _, tangent = s2sad.jvp(f)(x, v)
    assert type(tangent) is list
    for t, n in zip(tangent, numerical_jvp(f, (x,), (0,), (v,))):
        assert_close(t, n, rtol=1e-6, atol=1e-8)
    # one Jacobian per item, in a list
    (flat,) = numerical_jacobian(f, (x,), (0,))
    for jac in (s2sad.jacfwd(f)(x), s2sad.jacrev(f)(x)):
        assert type(jac) is list and len(jac) == len(parts)
        row = 0
        for j, p in zip(jac, parts):
            assert j.shape == p.shape + x.shape
            assert_close(j.reshape(p.size, x.size), flat[row:row + p.size], rtol=1e-6,
                         atol=1e-8)
            row += p.size
    with pytest.raises(ValueError, match="shape"):
        pullback([np.ones(p.shape + (1,)) for p in parts])
    with pytest.raises(ValueError, match="of [23] cotangents"):
        pullback(seed[:1])


def split_and_input(x):
    return np.split(x, [1]), x


def test_a_jacobian_of_a_list_computed_at_run_time_beside_another_output_is_refused():
    with pytest.raises(s2sad.S2SADError, match="return its items"):
        s2sad.jacfwd(split_and_input)(np.arange(3.0))


# -- Jacobians with respect to a tuple or list argument (item 1) --------------------------
# (refused before: a WrtError) One block per item, in a tuple or list like the argument


def stack_squared(t):
    return np.stack(t, axis=1) ** 2


def concatenate_scaled(t, x):
    return np.concatenate(t) * x[0] + np.sum(x)


def sine_times_float(t):
    return np.sin(t[0]) * t[1]


def cubes_summed(t):
    return np.sum(np.stack(t) ** 3)


def _fd_jacobian_of_item(f, args, i, j, eps=1e-6):
    """d f / d args[i][j] (args[i] itself for j None) by central differences: shape
    out.shape + item.shape."""
    base = np.asarray(args[i] if j is None else args[i][j], dtype=np.float64)

    def at(v):
        new = list(args)
        if j is None:
            new[i] = v
        else:
            items = list(args[i])
            items[j] = v if base.ndim else float(v)
            new[i] = type(args[i])(items)
        return np.asarray(f(*new))

    cols = []
    for k in np.ndindex(base.shape):
        e = np.zeros_like(base)
        e[k] = eps
        cols.append((at(base + e) - at(base - e)) / (2 * eps))
    return np.stack(cols, -1).reshape(np.shape(f(*args)) + base.shape)


_J = np.random.default_rng(7)
JACOBIAN_CASES = [
    (stack_squared, ((_J.standard_normal(3), _J.standard_normal(3)),), 0),
    (stack_squared, ([_J.standard_normal(2), _J.standard_normal(2)],), 0),
    (concatenate_scaled, ((_J.standard_normal(3), _J.standard_normal(2)),
                          _J.standard_normal(2)), (0, 1)),
    (sine_times_float, ((_J.standard_normal(3), 1.5),), 0),
    (sine_times_float, ([0.3, 1.5],), 0),
]


@pytest.mark.parametrize("jacobian", [s2sad.jacfwd, s2sad.jacrev], ids=["jacfwd", "jacrev"])
@pytest.mark.parametrize("f, args, wrt", JACOBIAN_CASES,
                         ids=[f"{f.__name__}-{type(a[0]).__name__}"
                              for f, a, _ in JACOBIAN_CASES])
def test_jacobian_with_respect_to_a_sequence(jacobian, f, args, wrt):
    got = jacobian(f, wrt=wrt)(*args)
    wrts, blocks = (wrt, got) if isinstance(wrt, tuple) else ((wrt,), (got,))
    for i, block in zip(wrts, blocks):
        if not isinstance(args[i], (tuple, list)):
            assert_close(block, _fd_jacobian_of_item(f, args, i, None), rtol=1e-6, atol=1e-8)
            continue
        assert type(block) is type(args[i]) and len(block) == len(args[i])
        for j, item in enumerate(block):
            ref = _fd_jacobian_of_item(f, args, i, j)
            assert np.shape(item) == ref.shape
            assert_close(np.asarray(item), ref, rtol=1e-6, atol=1e-8)


def test_hessian_and_hvp_of_a_tuple_argument():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    (h_aa, h_ab), (h_ba, h_bb) = s2sad.hessian(cubes_summed)((a, b))
    np.testing.assert_allclose(h_aa, np.diag(6 * a), atol=1e-12)
    np.testing.assert_allclose(h_bb, np.diag(6 * b), atol=1e-12)
    np.testing.assert_allclose(h_ab, np.zeros((3, 3)), atol=1e-12)
    np.testing.assert_allclose(h_ba, np.zeros((3, 3)), atol=1e-12)
    va, vb = np.array([1.0, -1.0, 0.5]), np.array([2.0, 0.0, 1.0])
    got = s2sad.hvp(cubes_summed)((a, b), (va, vb))
    assert type(got) is tuple
    np.testing.assert_allclose(got[0], 6 * a * va, atol=1e-12)
    np.testing.assert_allclose(got[1], 6 * b * vb, atol=1e-12)


# -- a list built by a comprehension and read twice: its cotangents are added as arrays ---
# (with the list's kind known, they were added item by item: [a[0] + b[0], ..., a[9] +
# b[9]], ten terms in the generated code)


def comprehension_read_twice(x):
    comp = [x * i for i in range(10)]
    return np.sum(np.stack(comp)) + np.sum(np.array(comp) ** 2)


def test_a_list_read_twice_has_its_cotangents_added_as_arrays():
    x = np.random.default_rng(4).standard_normal(3)
    (ref,) = numerical_grad(comprehension_read_twice, (x,), (0,))
    assert_close(s2sad.grad(comprehension_read_twice)(x), ref, rtol=1e-6, atol=1e-8)
    src = s2sad.grad(comprehension_read_twice).source_for(x)
    assert "[9]" not in src, src
