"""One specialisation for every size (issue 34): array sizes are symbols while compiling
(s2sad/ir/dims.py), so a derivative compiled at one length serves every other length of
the same rank and dtype. Each derivative is checked against central finite differences at
several sizes, after compiling once."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from s2sad.ir.dims import Dim, Observer, broadcast_shapes, guards_hold, slice_length

from .oracle import numerical_grad, numerical_jvp


def fd_grad(f, x):
    return numerical_grad(f, (x,), (0,))[0]


def fd_jvp(f, args, tangents):
    return numerical_jvp(f, args, tuple(range(len(args))), tangents)

SIZES = (2, 3, 5, 10, 11, 40)


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def least_squares(A, b, x):
    r = A @ x - b
    return 0.5 * np.sum(r * r) + np.sum(np.zeros(A.shape[1]) + x) / len(b)


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def second_difference(x):
    d = x[2:] - 2 * x[1:-1] + x[:-2]
    return np.sum(d ** 2) + np.mean(np.sin(x))


def branch_on_length(x):
    # a branch on a size: decided while compiling, so the specialisation is guarded on it
    if x.shape[0] == 3:
        return np.sum(x ** 3)
    return np.sum(np.cos(x))


def reshape_rows(x):
    # a size computed from another (n // 3) is no symbol: code for one size only
    return np.sum(np.tanh(x.reshape(-1, 3)) ** 2)


def user_names_n_and_m(x):
    n = 2.0
    m = x * n
    return np.sum(m * np.zeros(x.shape) + m ** 2)


CASES = [(rosen, 1), (logsumexp, 1), (second_difference, 1), (branch_on_length, 1),
         (user_names_n_and_m, 1)]


def _rng(n):
    return np.random.default_rng(1000 + n)


@pytest.mark.parametrize("f,_", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradient_compiles_once_for_every_length(f, _):
    g = s2sad.grad(f)
    v = s2sad.jvp(f)
    compiled = set()
    for n in SIZES:
        if f is second_difference and n < 3:
            continue
        x = _rng(n).uniform(-1, 1, n)
        np.testing.assert_allclose(g(x), fd_grad(f, x), rtol=1e-6, atol=1e-7)
        u = _rng(n + 1).normal(size=n)
        out, out_dot = v(x, u)
        np.testing.assert_allclose(out_dot, fd_jvp(f, (x,), (u,)), rtol=1e-6, atol=1e-7)
        if n >= 10:
            compiled.add(id(g._last))
    # (the second size's compile checks that sizes kept their symbols: from then on one
    # specialisation serves; a branch on n == 3 is a guard, n == 3 has code of its own)
    assert len(compiled) == 1, "one specialisation serves every length"
    assert g._last.pattern is not None


def test_sizes_print_as_names_read_from_the_arguments():
    g = s2sad.grad(rosen)
    g(np.ones(1000))
    src = g.source
    assert "n = x.shape[0]" in src and "np.zeros((n,))" in src
    assert "1000" not in src and "(n,)" in src.splitlines()[2]


def test_a_user_variable_named_like_a_size_keeps_its_name():
    g = s2sad.grad(user_names_n_and_m)
    for n in (4, 9):
        x = _rng(n).normal(size=n)
        np.testing.assert_allclose(g(x), fd_grad(user_names_n_and_m, x), rtol=1e-6,
                                   atol=1e-7)


def test_relations_between_arguments_are_part_of_the_key():
    g = s2sad.grad(least_squares, wrt=(0, 2))
    seen = set()
    for n, m in ((5, 3), (9, 4), (4, 4), (7, 7), (3, 8)):
        rng = _rng(10 * n + m)
        A, b, x = rng.normal(size=(n, m)), rng.normal(size=n), rng.normal(size=m)
        gA, gx = g(A, b, x)
        np.testing.assert_allclose(gA, fd_grad(lambda A_: least_squares(A_, b, x), A),
                                   rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(gx, fd_grad(lambda x_: least_squares(A, b, x_), x),
                                   rtol=1e-6, atol=1e-7)
        seen.add(id(g._last))
    assert len(seen) == 2  # n != m, and n == m (a square A): two patterns


def test_size_one_is_not_a_symbol():
    # broadcasting tells 1 from other sizes: x of length 1 is its own specialisation
    def f(x, y):
        return np.sum(np.exp(x * y))

    g = s2sad.grad(f, wrt=(0, 1))
    for nx, ny in ((4, 4), (1, 4), (4, 1), (6, 6)):
        rng = _rng(nx * 7 + ny)
        x, y = rng.normal(size=nx), rng.normal(size=ny)
        gx, gy = g(x, y)
        np.testing.assert_allclose(gx, fd_grad(lambda a: f(a, y), x), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(gy, fd_grad(lambda b: f(x, b), y), rtol=1e-6, atol=1e-7)


def test_a_size_that_escapes_its_symbol_gets_code_per_size():
    g = s2sad.grad(reshape_rows)
    for n in (6, 9, 12):
        x = _rng(n).normal(size=n)
        np.testing.assert_allclose(g(x), fd_grad(reshape_rows, x), rtol=1e-6, atol=1e-7)


def test_vjp_hessian_and_dispatcher_fast_path_across_sizes():
    vjp = s2sad.vjp(logsumexp)
    h = s2sad.hessian(rosen)
    for _ in range(3):  # (the third round runs the generated dispatcher's fast paths)
        for n in (3, 8, 13):
            x = _rng(n).uniform(-1, 1, n)
            out, pullback = vjp(x)
            (xb,) = pullback(2.0)
            np.testing.assert_allclose(xb, 2.0 * fd_grad(logsumexp, x), rtol=1e-6,
                                       atol=1e-7)
            H = h(x)
            fd_h = np.array([fd_grad(lambda y: s2sad.grad(rosen)(y)[i], x)
                             for i in range(n)])
            np.testing.assert_allclose(H, fd_h, rtol=1e-5, atol=1e-5)


def test_jvp_refuses_a_tangent_of_another_length():
    v = s2sad.jvp(rosen)
    v(np.ones(5), np.ones(5))
    v(np.ones(7), np.ones(7))
    with pytest.raises(Exception):
        v(np.ones(5), np.ones(7))
    with pytest.raises(Exception):
        v(np.ones(5), np.ones(7))


# -- the symbols themselves -------------------------------------------------------------------

def test_dim_arithmetic_and_decided_comparisons():
    n, m = Dim.symbol("n", 7), Dim.symbol("m", 11)
    assert repr(n - 1) == "n - 1" and repr(2 * n * m) == "2 * m * n"
    assert (n - 1) + 1 == n and n != m and n - 1 != n
    with Observer() as seen:
        assert n != 1 and n != 0 and n > 1 and n >= 2
        # decided for every n, m >= 2 (n * m - 2 * n = 2 (m - 2) + (n - 2)(m - 2) >= 0)
        assert 2 * n <= n * m and not n * m < 2 * n and n - 1 < n and not n - 1 >= n
        assert n <= n * n and not n + 2 <= n
    assert seen.guards() == ()
    with Observer() as seen:
        assert n * m > 2 * n  # (not for m == 2: a guard)
    assert seen.guards() == ((((("m", "n"), 1),), "gt", ((("n",), 2),), True),)
    with Observer() as seen:
        assert (n == 3) is False
    assert seen.guards() == (((((("n",), 1),), "eq", 3, False)),)
    assert guards_hold(seen.guards(), {"n": 4}) and not guards_hold(seen.guards(), {"n": 3})
    with Observer() as seen:  # (an exact division by a term keeps the symbols)
        assert repr((n * m + 2 * m) // m) == "n + 2" and repr((n * n * m) // (n * m)) == "n"
        assert int((n * m) // m) == 7 and (n * m) // m == n
    assert seen.guards() == () and not seen.escaped
    with Observer() as seen:
        assert (n + m) // m == 1  # (7 + 11) // 11: no symbol left, a number of one size
    assert seen.escaped


def test_symbolic_broadcast_and_slices():
    n, m = Dim.symbol("n", 7), Dim.symbol("m", 11)
    assert broadcast_shapes((n, 1), (m,)) == (n, m)
    assert broadcast_shapes((n - 1,), (n - 1,)) == (n - 1,)
    with pytest.raises(ValueError):
        broadcast_shapes((n,), (m,))
    assert slice_length(slice(1, None), n) == n - 1
    assert slice_length(slice(None, -2), n) == n - 2
    assert slice_length(slice(0, 3), 10) == 3


A_GLOBAL = np.random.default_rng(5).normal(size=(5, 3))


def uses_a_global_matrix(x):
    return np.sum(np.tanh(A_GLOBAL @ x))


def test_sizes_tied_to_a_global_array_or_another_library_stay_numbers():
    # x's length must be A_GLOBAL's 3: no symbol for it (the compile tells, and falls back)
    g = s2sad.grad(uses_a_global_matrix)
    x = _rng(3).normal(size=3)
    np.testing.assert_allclose(g(x), fd_grad(uses_a_global_matrix, x), rtol=1e-6, atol=1e-7)
    assert g._last.pattern is None  # (code for this call's sizes only)


def test_an_argument_holding_arrays_keeps_every_size_a_number():
    def f(x, params):
        W, b = params
        return np.sum(np.tanh(W @ x + b))

    g = s2sad.grad(f)
    rng = _rng(4)
    for n in (3, 4):
        x, W, b = rng.normal(size=n), rng.normal(size=(2, n)), rng.normal(size=2)
        np.testing.assert_allclose(g(x, (W, b)), fd_grad(lambda x_: f(x_, (W, b)), x),
                                   rtol=1e-6, atol=1e-7)


def polynomial_fit(x, n):
    # GradBench's llsq: an int argument sets the shapes
    t = -1.0 + 2.0 * np.arange(n) / (n - 1)
    powers = t[:, None] ** np.arange(x.shape[0])[None, :]
    r = np.sign(t) - powers @ x
    return 0.5 * np.sum(r * r)


def rows_of_ones(x, n):
    return np.sum(np.tanh(np.ones((n, 3)) * x[None, :3]) ** 2) + np.sum(np.linspace(0, 1, n)) * x[0]


@pytest.mark.parametrize("f", [polynomial_fit, rows_of_ones])
def test_an_int_argument_that_sets_a_shape_is_a_symbol(f):
    g = s2sad.grad(f)
    seen = set()
    for n, d in ((10, 3), (11, 4), (40, 5), (3, 3)):
        x = _rng(n * d).normal(size=d)
        np.testing.assert_allclose(g(x, n), fd_grad(lambda x_: f(x_, n), x), rtol=1e-6,
                                   atol=1e-7)
        seen.add(id(g._last))
    src = g.source
    for generic in ("np.ndim(", "unbroadcast", "sum_to_shape"):
        assert generic not in src
    assert len(seen) <= 2  # (n == len(x) at (3, 3): a relation of its own)


def test_a_size_that_may_be_zero_is_a_guard():
    n = Dim.symbol("n", 7)
    with Observer() as seen:
        assert bool(n) and bool(n - 2)
    assert seen.guards() == ((((((), -2), (("n",), 1)), "eq", 0, False)),)
    assert not guards_hold(seen.guards(), {"n": 2}) and guards_hold(seen.guards(), {"n": 5})


def _power(x, n):
    return 1.0 if n == 0 else x * _power(x, n - 1)


def sum_of_powers(x, n):
    return np.sum(_power(x, n))


def test_an_int_symbol_passed_down_a_recursion_reaches_its_base_case():
    # the helper's recursion calls it with n - 1 down to 0: the code for n >= 2 must not
    # serve those calls (it decided n == 0 false)
    g = s2sad.grad(sum_of_powers)
    for n in (3, 5, 2, 7):
        x = np.array([0.5, 1.5, 2.0])
        np.testing.assert_allclose(g(x, n), n * x ** (n - 1), rtol=1e-12)


def test_a_recursive_function_of_an_int_is_differentiated_at_each_n():
    g = s2sad.grad(_power)
    for n in (4, 2, 6):
        assert g(1.5, n) == pytest.approx(n * 1.5 ** (n - 1), rel=1e-12)


def padded_spectrum(x, n):
    return np.sum(np.real(np.fft.fft(x, n)) ** 2)


def test_an_int_symbol_is_keyed_with_its_value_until_its_code_serves_every_value():
    # x of length 4 with n = 4 (one symbol), then other n: each value's code is its own
    # until two calls agree; the dispatcher's fast paths and the disk cache must not serve
    # the code of n = 4 for n = 6
    # (where the code of two values differs, n's later calls are compiled for any n, which
    # np.fft.fft's rules refuse, naming `n`: refused, never the code of another n)
    g = s2sad.grad(padded_spectrum)
    x = _rng(4).normal(size=4)
    for _ in range(3):
        for n in (4, 6, 4, 3, 8, 6):
            want = fd_grad(lambda x_: padded_spectrum(x_, n), x)
            try:
                got = g(x, n)
            except s2sad.MissingRuleError as e:
                assert "`n`" in str(e)
                continue
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def shifted_products(x):
    return np.tanh(x[1:] * x[:-1]) + np.sin(x[:-1])


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_jacobians_at_several_sizes(mode):
    J = getattr(s2sad, mode)(shifted_products)
    for n in (4, 9, 4, 13):
        x = _rng(n).normal(size=n)
        want = np.stack([numerical_jvp(shifted_products, (x,), (0,), (e,))
                         for e in np.eye(n)], axis=1)
        np.testing.assert_allclose(J(x), want, rtol=1e-6, atol=1e-8)
    # (the number of directions, or of cotangents, is a size symbol too)
    assert J._last.pattern is not None


def rebinds_its_int(x, n):
    t = np.linspace(0.0, 1.0, n)
    y = np.sum(np.outer(x, t) ** 2)
    n = 3.5 * y  # (the int argument's name now holds a float)
    return n * np.sum(np.sin(t) * x[0])


def test_an_int_argument_rebound_after_it_set_a_size():
    g = s2sad.grad(rebinds_its_int)
    for n in (3, 5, 7, 5):
        x = np.arange(1.0, 5.0) / 4
        np.testing.assert_allclose(g(x, n), fd_grad(lambda x_: rebinds_its_int(x_, n), x),
                                   rtol=1e-6, atol=1e-8)


def two_layers(W1, x, W2):
    return np.sum((W2 @ np.tanh(W1 @ x)) ** 2)


def width_eight_is_special(W1, x):
    h = W1 @ x
    if W1.shape[0] == 8:  # (a branch on the size that stays fixed while x grows)
        return np.sum(np.sin(h))
    return np.sum(h ** 2)


def test_a_size_fixed_while_another_grows_still_gets_one_specialisation():
    # the hidden width (8) and the output width (3) have one value at every call: the
    # second compile is made at other values of them, so that it proves the first right
    g = s2sad.grad(two_layers, wrt=(0, 1, 2))
    served = set()
    for n in (10, 11, 100, 37):
        rng = _rng(n)
        W1, x, W2 = rng.normal(size=(8, n)) / n, rng.normal(size=n), rng.normal(size=(3, 8))
        for i, a in enumerate((W1, x, W2)):
            def f(v, i=i):
                args = [W1, x, W2]
                args[i] = v
                return two_layers(*args)
            np.testing.assert_allclose(g(W1, x, W2)[i], fd_grad(f, a), rtol=1e-6, atol=1e-7)
        if n != 10:
            served.add(id(g._last))
    assert len(served) == 1 and g._last.pattern is not None


def test_a_branch_on_the_fixed_size_is_never_served_for_another():
    g = s2sad.grad(width_eight_is_special, wrt=(0, 1))
    for rows, n in ((8, 5), (8, 6), (8, 40), (9, 40), (9, 6), (8, 7)):
        rng = _rng(rows * n)
        W1, x = rng.normal(size=(rows, n)) / n, rng.normal(size=n)
        gW, gx = g(W1, x)
        np.testing.assert_allclose(gW, fd_grad(lambda a: width_eight_is_special(a, x), W1),
                                   rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(gx, fd_grad(lambda a: width_eight_is_special(W1, a), x),
                                   rtol=1e-6, atol=1e-7)


def shifted_by_a_block(x, c):
    return np.sum((x - c[:, 3:6]) ** 2 * c[:, 0:1])


def shifted_rhs(x, y):
    z = np.empty_like(y)
    z[0] = x[0]
    z[1:] = x[1:] * y[:-1]
    return z


def stepped(x, steps):
    y = np.zeros_like(x)
    for _ in range(steps):
        y = y + 0.1 * shifted_rhs(x, y)
    return y[-1]


def test_a_slice_width_equal_to_a_size_stays_a_number():
    # (x has 3 columns, as c[:, 3:6] has: a size the pattern names `m` and the number 3 of
    # a slice are told apart, so the rows' count n is a symbol of one specialisation)
    g = s2sad.grad(shifted_by_a_block, wrt=(0, 1))
    served = set()
    for n in (5, 8, 13, 40):
        rng = _rng(n)
        x, c = rng.normal(size=(n, 3)), rng.normal(size=(n, 11))
        gx, gc = g(x, c)
        np.testing.assert_allclose(gx, fd_grad(lambda a: shifted_by_a_block(a, c), x),
                                   rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(gc, fd_grad(lambda a: shifted_by_a_block(x, a), c),
                                   rtol=1e-6, atol=1e-7)
        if n != 5:
            served.add(id(g._last))
    assert len(served) == 1 and g._last.pattern is not None


def test_the_reverse_of_a_slice_assignment_keeps_its_size_symbolic():
    g = s2sad.grad(stepped, wrt=0)
    served = set()
    for n, steps in ((6, 3), (9, 4), (30, 5), (7, 2)):
        x = _rng(n).uniform(0.5, 1.5, n)
        np.testing.assert_allclose(g(x, steps), fd_grad(lambda a: stepped(a, steps), x),
                                   rtol=1e-6, atol=1e-8)
        if n != 6:
            served.add(id(g._last))
    assert len(served) == 1 and g._last.pattern is not None
