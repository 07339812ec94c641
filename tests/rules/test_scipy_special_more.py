"""Rules of ndtri ndtri_exp entr rel_entr kl_div huber pseudo_huber poch spence owens_t zeta
(in q) dawsn erfcx erfi wofz loggamma (scipy.special): both modes against central finite
differences, arrays and broadcast two-argument calls, second order, the conventions at the
edges of the domains (0 for entr, rel_entr, kl_div; the kink of huber), complex arguments
for the holomorphic ones (wofz, loggamma, dawsn, erfcx, erfi), textbook identities, and
zeta's refusal in x."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close
from tests.rules.test_autograd_suite import check_second_order
from tests.rules.test_issue13_regressions import check_both_modes

sc = pytest.importorskip("scipy.special")


def ndtri_(p): return sc.ndtri(p)
def ndtri_exp_(y): return sc.ndtri_exp(y)
def entr_(x): return sc.entr(x)
def rel_entr_(x, y): return sc.rel_entr(x, y)
def kl_div_(x, y): return sc.kl_div(x, y)
def huber_(delta, r): return sc.huber(delta, r)
def pseudo_huber_(delta, r): return sc.pseudo_huber(delta, r)
def poch_(z, m): return sc.poch(z, m)
def spence_(z): return sc.spence(z)
def owens_t_(h, a): return sc.owens_t(h, a)
def zeta_q(q): return sc.zeta(np.array([1.5, 2.0, 3.5]), q)
def zeta_x_q(x, q): return sc.zeta(x, q)
def dawsn_(x): return sc.dawsn(x)
def erfcx_(x): return sc.erfcx(x)
def erfi_(x): return sc.erfi(x)
def wofz_real(x): return np.real(sc.wofz(x)) + 2.0 * np.imag(sc.wofz(x))
def loggamma_(x): return sc.loggamma(x)


P = np.array([0.02, 0.3, 0.5, 0.91])
REAL = np.array([-2.5, -0.4, 0.3, 1.7])
POSITIVE = np.array([0.2, 0.9, 1.7, 3.2])
# a column against a row: the two arguments broadcast to (3, 4)
COL = np.array([[0.4], [1.1], [2.5]])

FIRST_ORDER = [
    (ndtri_, [P]), (ndtri_exp_, [np.array([-30.0, -2.0, -0.7, -0.01])]),
    (entr_, [POSITIVE]),
    (rel_entr_, [POSITIVE, POSITIVE[::-1]]), (rel_entr_, [COL, POSITIVE]),
    (kl_div_, [POSITIVE, POSITIVE[::-1]]), (kl_div_, [POSITIVE, COL]),
    # |r| on both sides of delta
    (huber_, [np.array([0.5, 1.0, 1.5, 2.0]), np.array([-1.3, 0.4, -0.7, 2.6])]),
    (huber_, [COL + 0.05, REAL]),  # (not at the kink, where finite differences are rough)
    (pseudo_huber_, [np.array([0.5, 1.0, 1.5, 2.0]), np.array([-1.3, 1e-3, -0.7, 2.6])]),
    (pseudo_huber_, [COL, REAL]),
    (poch_, [POSITIVE, np.array([0.5, -0.3, 2.0, 1.2])]), (poch_, [COL, POSITIVE]),
    (spence_, [np.array([0.1, 0.7, 1.2, 3.0])]),
    # both sides of the Taylor polynomial's threshold |z - 1| = 1e-2, and 1
    (spence_, [np.array([0.985, 0.995, 0.9999, 1.0, 1.004, 1.015])]),
    (owens_t_, [REAL, np.array([0.3, -1.2, 2.0, 0.7])]), (owens_t_, [COL, REAL]),
    (zeta_q, [np.array([0.4, 1.3, 2.2])]), (zeta_x_q, [COL + 1.2, POSITIVE]),
    (dawsn_, [REAL]), (erfcx_, [REAL]), (erfi_, [REAL]), (wofz_real, [REAL]),
    (loggamma_, [POSITIVE]),
]
IDS = [f"{f.__name__}{[list(np.shape(a)) for a in args]}" for f, args in FIRST_ORDER]
# zeta is differentiated in q only
WRT = {zeta_x_q: (1,)}


@pytest.mark.parametrize("f, args", FIRST_ORDER, ids=IDS)
def test_against_finite_differences_in_both_modes(f, args):
    check_both_modes(f, args, wrt=WRT.get(f), rtol=1e-5)


def total(f):
    """The sum of f's entries (f of one or two arguments)."""
    if f.__code__.co_argcount == 2:
        def summed2(x, y): return np.sum(f(x, y))
        summed = summed2
    else:
        def summed1(x): return np.sum(f(x))
        summed = summed1
    summed.__name__ = f"sum_{f.__name__}"
    return summed


# every rule is smooth away from the edges: its body differentiates again (huber away from
# its kink |r| = delta, where its second derivative jumps)
SECOND_ORDER = [(f, args, wrt, f"{name}-{wrt}") for (f, args), name in zip(FIRST_ORDER, IDS)
                for wrt in WRT.get(f, range(len(args))) if f is not huber_]


@pytest.mark.parametrize("f, args, wrt", [s[:3] for s in SECOND_ORDER],
                         ids=[s[3] for s in SECOND_ORDER])
def test_second_order(f, args, wrt):
    check_second_order(total(f), args, wrt=wrt, rtol=1e-5, atol=1e-6)


# -- textbook values and the edges of the domains -----------------------------------------


def test_slopes_against_closed_forms():
    x = np.array([0.3, 0.8, 1.6])
    g = s2sad.grad(total(ndtri_))(x / 2.0)
    assert_close(g, 1.0 / (np.exp(-0.5 * sc.ndtri(x / 2.0) ** 2) / np.sqrt(2 * np.pi)),
                 rtol=1e-12, atol=0.0)
    assert_close(s2sad.grad(total(entr_))(x), -np.log(x) - 1.0, rtol=1e-12, atol=0.0)
    assert_close(s2sad.grad(total(dawsn_))(x), 1.0 - 2.0 * x * sc.dawsn(x), rtol=1e-12, atol=0.0)
    # Owen's T(h, a) at h = 0 is arctan(a) / (2 pi)
    assert_close(s2sad.grad(total(owens_t_), wrt=1)(np.zeros(3), x),
                 1.0 / (2.0 * np.pi * (1.0 + x * x)), rtol=1e-12, atol=0.0)
    # zeta(2, q) = polygamma(1, q), so its slope in q is polygamma(2, q)
    assert_close(s2sad.grad(lambda q: np.sum(sc.zeta(2.0, q)))(x), sc.polygamma(2, x),
                 rtol=1e-10, atol=0.0)
    # spence(z) = integral from 1 to z of log(t) / (1 - t): slope -1 at z = 1
    assert s2sad.grad(spence_)(1.0) == -1.0


def test_entr_at_zero_and_below():
    # the one-sided slope +inf at 0 (entr(0) = 0), 0 where entr is -inf: never NaN
    with np.errstate(divide="ignore"):
        g = s2sad.grad(total(entr_))(np.array([0.0, -1.0, 0.5]))
    assert g[0] == np.inf and g[1] == 0.0 and np.isclose(g[2], -np.log(0.5) - 1.0)


@pytest.mark.parametrize("f, dy_at_zero", [(rel_entr_, 0.0), (kl_div_, 1.0)])
def test_relative_entropies_at_zero_and_outside(f, dy_at_zero):
    # x = 0: the value is finite (0, or y for kl_div), its one-sided slope in x -inf; where
    # the value is inf (x < 0, y < 0, or x > 0 with y = 0), slope 0; never NaN
    x = np.array([0.0, 0.0, -0.5, 0.5])
    y = np.array([0.7, 0.0, 0.7, 0.0])
    out, pullback = s2sad.vjp(f)(x, y)
    gx, gy = pullback(np.ones(4))
    assert gx[0] == -np.inf and gx[1] == -np.inf and gx[2] == 0.0 and gx[3] == 0.0
    assert list(gy) == [dy_at_zero, dy_at_zero, 0.0, 0.0]
    _, tangent = s2sad.jvp(f, wrt=1)(x, y, np.ones(4))
    assert list(tangent) == [dy_at_zero, dy_at_zero, 0.0, 0.0]


def test_huber_is_continuously_differentiable_at_its_kink():
    # |r| = delta: the slope in r is r = delta sign(r) from both sides, in delta 0
    delta, r = np.array([1.0, 2.0]), np.array([1.0, -2.0])
    gd, gr = s2sad.vjp(huber_)(delta, r)[1](np.ones(2))
    assert list(gr) == [1.0, -2.0] and list(gd) == [0.0, 0.0]
    # delta < 0 (huber and pseudo_huber are inf there): slope 0
    for f in (huber_, pseudo_huber_):
        gd, gr = s2sad.vjp(f)(np.array([-1.0]), np.array([0.5]))[1](np.ones(1))
        assert gd[0] == 0.0 and gr[0] == 0.0


def test_pseudo_huber_at_delta_zero():
    # pseudo_huber(0, r) = 0 for every r: slope 0 in r; in delta the one-sided |r|
    # (pseudo_huber(d, r) ~ d |r| for a small d > 0)
    r = np.array([-0.7, 0.0, 1.3])
    gd, gr = s2sad.vjp(pseudo_huber_)(np.zeros(3), r)[1](np.ones(3))
    assert list(gr) == [0.0, 0.0, 0.0]
    assert list(gd) == [0.7, 0.0, 1.3]
    h = 1e-7
    assert np.allclose(sc.pseudo_huber(h, r) / h, np.abs(r), rtol=1e-6)


# -- complex arguments: holomorphic, JAX's convention (VJP g f'(z)) --------------------------

def wofz_(z): return sc.wofz(z)
def loggamma_c(z): return sc.loggamma(z)


Z = np.array([0.4 + 0.3j, -1.2 + 0.8j, 2.0 - 0.5j])


@pytest.mark.parametrize("f, h, slope", [
    (wofz_, 1e-6, lambda z: -2.0 * z * sc.wofz(z) + 2j / np.sqrt(np.pi)),
    (loggamma_c, 1e-6, sc.psi),
    (dawsn_, 1e-6, lambda z: 1.0 - 2.0 * z * sc.dawsn(z)),
    (erfcx_, 1e-6, lambda z: 2.0 * z * sc.erfcx(z) - 2.0 / np.sqrt(np.pi)),
    (erfi_, 1e-6, lambda z: 2.0 / np.sqrt(np.pi) * np.exp(z * z)),
])
def test_holomorphic_on_complex_arguments(f, h, slope):
    rng = np.random.default_rng(5)
    v = rng.normal(size=3) + 1j * rng.normal(size=3)
    fd = (f(Z + h * v) - f(Z - h * v)) / (2 * h)  # along a complex direction
    np.testing.assert_allclose(fd, slope(Z) * v, rtol=1e-6, atol=1e-8)  # (the oracle)
    _, tangent = s2sad.jvp(f)(Z, v)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)
    u = rng.normal(size=3) + 1j * rng.normal(size=3)
    _, pullback = s2sad.vjp(f)(Z)
    (cot,) = pullback(u)
    # the transpose of dz -> f'(z) dz under Re(sum(u v)): u f'(z), no conjugate
    np.testing.assert_allclose(cot, u * slope(Z), rtol=1e-10, atol=0.0)


def test_voigt_of_a_real_argument_through_wofz():
    # lmfit's voigt: real(wofz((x - center + i gamma) / (sigma sqrt 2))); the cotangent of
    # the real center and gamma is real
    x = np.linspace(-2.0, 2.5, 6)

    def voigt(center, gamma):
        z = (x - center + 1j * gamma) / (0.8 * np.sqrt(2.0))
        return np.sum(np.real(sc.wofz(z)))

    args = (0.1, 0.5)
    g = s2sad.grad(voigt, wrt=(0, 1))(*args)
    h = 1e-6
    fd = [(voigt(0.1 + h, 0.5) - voigt(0.1 - h, 0.5)) / (2 * h),
          (voigt(0.1, 0.5 + h) - voigt(0.1, 0.5 - h)) / (2 * h)]
    assert all(isinstance(c, float) or np.isrealobj(c) for c in g)
    assert_close(np.array(g, dtype=float), np.array(fd), rtol=1e-6, atol=1e-9)


def test_second_order_of_wofz_on_complex_values():
    # wofz's rule body (wofz itself) differentiates again: d/dgamma of the gradient in center
    def voigt(center, gamma):
        return np.sum(np.real(sc.wofz((np.linspace(-1.0, 1.0, 4) - center + 1j * gamma))))

    h = 1e-5
    got = s2sad.jvp(s2sad.grad(voigt, wrt=0), wrt=1)(0.2, 0.6, 1.0)[1]
    g = s2sad.grad(voigt, wrt=0)
    assert_close(got, (g(0.2, 0.6 + h) - g(0.2, 0.6 - h)) / (2 * h), rtol=1e-6, atol=1e-9)


# -- zeta: in q only -----------------------------------------------------------------------

def zeta_sum(s): return np.sum(sc.zeta(s, 1.0))
def riemann_zeta(s): return sc.zeta(s)


@pytest.mark.parametrize("f", [zeta_sum, riemann_zeta, total(zeta_x_q)])
@pytest.mark.parametrize("mode", ["vjp", "jvp"])
def test_zeta_in_x_is_refused_with_a_reason(f, mode):
    args = (np.array([1.5, 2.5]),) * f.__code__.co_argcount
    with pytest.raises(s2sad.NonDifferentiableError) as err:
        if mode == "vjp":
            s2sad.vjp(f, wrt=0)(*args)
        else:
            s2sad.jvp(f, wrt=0)(*args, np.ones(2))
    text = str(err.value)
    assert "`scipy.special.zeta`" in text and "argument `x`" in text
    assert "no closed form" in text and "differentiate zeta(x, q) in q only" in text
    assert err.value.lineno is not None


def zeta_out(q, buf): return sc.zeta(2.0, q, out=buf)


def test_zeta_out_is_refused():
    with pytest.raises(s2sad.S2SADError, match="out="):
        s2sad.vjp(zeta_out, wrt=0)(np.array([1.5, 2.5]), np.zeros(2))


@pytest.mark.parametrize("f", [ndtri_, entr_, spence_])
def test_real_only_rules_refuse_complex(f):
    with pytest.raises(s2sad.MissingRuleError, match="complex"):
        s2sad.vjp(f)(np.array([0.5 + 0.1j]))


def test_huber_in_delta_given_as_a_python_float():
    # (the slope's mask once negated a Python bool: ~True is -2, a true value, and the
    # derivative in delta came out 0)
    r = np.array([0.5, 2.0, -3.0])

    def f(d):
        return np.sum(sc.huber(d, r))

    for d in (1.0, np.float64(1.0), np.array(1.0)):
        got = s2sad.grad(f)(d)
        np.testing.assert_allclose(got, (f(1.0 + 1e-6) - f(1.0 - 1e-6)) / 2e-6, rtol=1e-6)
