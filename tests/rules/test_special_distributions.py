"""Rules of the scipy.special functions that scipy.stats' continuous distributions call
(log1p expm1 cosm1 exprel, k0 k1 k0e k1e kv kve, stdtr chdtr chdtrc fdtr fdtrc betaincc,
boxcox boxcox1p inv_boxcox inv_boxcox1p, tklmbda): both modes against central finite
differences and each other, textbook values (densities from scipy.stats, limits at 0),
second order, refusals of the shape parameters, and distributions that now differentiate
end to end."""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close
from tests.rules.test_autograd_suite import check_second_order
from tests.rules.test_issue13_regressions import check_both_modes

sc = pytest.importorskip("scipy.special")
stats = pytest.importorskip("scipy.stats")


def log1p_(x): return sc.log1p(x)
def expm1_(x): return sc.expm1(x)
def cosm1_(x): return sc.cosm1(x)
def exprel_(x): return sc.exprel(x)
def k0_(x): return sc.k0(x)
def k1_(x): return sc.k1(x)
def k0e_(x): return sc.k0e(x)
def k1e_(x): return sc.k1e(x)
def kv_orders(x): return sc.kv(np.array([0.0, 0.5, 1.7, 4.0]), x)
def kve_orders(x): return sc.kve(np.array([0.0, 0.5, 1.7, 4.0]), x)
def stdtr_dfs(t): return sc.stdtr(np.array([[1.0], [3.5], [np.inf]]), t)
def chdtr_dfs(x): return sc.chdtr(np.array([[1.0], [2.0], [5.5]]), x)
def chdtrc_dfs(x): return sc.chdtrc(np.array([[1.0], [2.0], [5.5]]), x)
def fdtr_dfs(x): return sc.fdtr(np.array([[1.0], [2.0], [5.5]]), 4.5, x)
def fdtrc_dfs(x): return sc.fdtrc(3.0, np.array([[1.0], [2.0], [5.5]]), x)
def betaincc_(x): return sc.betaincc(np.array([0.5, 2.0, 1.5]), 3.5, x)
def boxcox_(x, lmbda): return sc.boxcox(x, lmbda)
def boxcox1p_(x, lmbda): return sc.boxcox1p(x, lmbda)
def inv_boxcox_(y, lmbda): return sc.inv_boxcox(y, lmbda)
def inv_boxcox1p_(y, lmbda): return sc.inv_boxcox1p(y, lmbda)
def tklmbda_(x, lmbda): return sc.tklmbda(x, lmbda)
def boxcox_number(x): return sc.boxcox(x, 0.0) + sc.boxcox1p(x, -0.4)  # lmbda a number


POSITIVE = np.array([0.3, 0.9, 1.7, 3.2])
# lmbda = 0 (boxcox is log there) and near it, where the slope in lmbda must not cancel
LMBDAS = np.array([0.0, 1e-7, -0.6, 1.4])

FIRST_ORDER = [
    (log1p_, [np.array([-0.6, 0.2, 3.0])]),
    (expm1_, [np.array([-2.0, 1e-3, 1.5])]),
    (cosm1_, [np.array([-2.0, 1e-3, 1.5])]),
    # both sides of the Taylor polynomial's threshold 1e-2, and far from 0
    (exprel_, [np.array([-30.0, -0.5, -0.013, -0.004, 0.006, 0.011, 0.8, 25.0])]),
    (k0_, [POSITIVE]), (k1_, [POSITIVE]), (k0e_, [POSITIVE]), (k1e_, [POSITIVE]),
    (kv_orders, [POSITIVE]), (kve_orders, [POSITIVE]),
    (stdtr_dfs, [np.array([-2.5, -0.4, 0.7, 3.0])]),
    (chdtr_dfs, [POSITIVE]), (chdtrc_dfs, [POSITIVE]),
    (fdtr_dfs, [POSITIVE]), (fdtrc_dfs, [POSITIVE]),
    (betaincc_, [np.array([0.15, 0.5, 0.85])]),
    (boxcox_, [POSITIVE, LMBDAS]), (boxcox1p_, [POSITIVE - 0.2, LMBDAS]),
    (inv_boxcox_, [np.array([-0.7, 0.3, 0.5, 1.2]), LMBDAS]),
    (inv_boxcox1p_, [np.array([-0.7, 0.3, 0.5, 1.2]), LMBDAS]),
    (boxcox_number, [POSITIVE]),
    # (lmbda away from |lmbda| < 1e-4, where SciPy computes the logistic distribution
    # function: flat in lmbda there); x outside the support [-1/lmbda, 1/lmbda] for 1.6
    (tklmbda_, [np.array([-1.5, -0.2, 0.4, 0.5, 2.5]), np.array([-0.7, 0.15, 0.01, 1.6, 1.6])]),
]


@pytest.mark.parametrize("f, args", FIRST_ORDER, ids=[f.__name__ for f, _ in FIRST_ORDER])
def test_against_finite_differences_in_both_modes(f, args):
    with np.errstate(all="ignore"):
        check_both_modes(f, args, rtol=1e-5)


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


# every rule here is smooth where it is defined: its body differentiates again (in both
# arguments of the two-argument ones)
SECOND_ORDER = [(f, args, wrt) for f, args in FIRST_ORDER for wrt in range(len(args))
                if f not in (tklmbda_, exprel_)] + [
    # (exprel(25) ~ 3e9: too large for second differences)
    (exprel_, [np.array([-3.0, -0.5, -0.013, 0.011, 0.8, 2.5])], 0),
    (tklmbda_, [np.array([-1.5, -0.2, 0.4]), np.array([-0.7, 0.15, 0.5])], 0),
    (tklmbda_, [np.array([-1.5, -0.2, 0.4]), np.array([-0.7, 0.15, 0.5])], 1),
    (exprel_, [np.array([0.0, 1e-3, -0.009])], 0),
]


@pytest.mark.parametrize("f, args, wrt", SECOND_ORDER,
                         ids=[f"{f.__name__}-{wrt}" for f, _, wrt in SECOND_ORDER])
def test_second_order(f, args, wrt):
    with np.errstate(all="ignore"):
        check_second_order(total(f), args, wrt=wrt, rtol=1e-5, atol=1e-6)


# -- textbook values ----------------------------------------------------------------------


def test_slopes_are_the_densities_of_scipy_stats():
    x = np.array([0.4, 1.1, 2.6])
    assert_close(s2sad.grad(total(lambda t: sc.stdtr(2.7, t)))(x), stats.t.pdf(x, 2.7),
                 rtol=1e-12, atol=0.0)
    assert_close(s2sad.grad(total(lambda t: sc.stdtr(np.inf, t)))(x), stats.norm.pdf(x),
                 rtol=1e-12, atol=0.0)
    assert_close(s2sad.grad(total(lambda v: sc.chdtr(3.5, v)))(x), stats.chi2.pdf(x, 3.5),
                 rtol=1e-12, atol=0.0)
    assert_close(s2sad.grad(total(lambda v: sc.chdtrc(3.5, v)))(x), -stats.chi2.pdf(x, 3.5),
                 rtol=1e-12, atol=0.0)
    assert_close(s2sad.grad(total(lambda v: sc.fdtr(4.0, 7.0, v)))(x),
                 stats.f.pdf(x, 4.0, 7.0), rtol=1e-12, atol=0.0)
    p = np.array([0.1, 0.5, 0.8])
    assert_close(s2sad.grad(total(lambda v: sc.betaincc(2.0, 3.0, v)))(p),
                 -stats.beta.pdf(p, 2.0, 3.0), rtol=1e-12, atol=0.0)
    # the Tukey-lambda distribution at lmbda = 0 is the logistic one
    assert_close(s2sad.grad(total(lambda v: sc.tklmbda(v, 0.0)))(x), stats.logistic.pdf(x),
                 rtol=1e-12, atol=0.0)
    assert_close(s2sad.grad(total(lambda v: sc.tklmbda(v, 0.5)))(x * 0.5),
                 stats.tukeylambda.pdf(x * 0.5, 0.5), rtol=1e-8, atol=0.0)


def test_finite_slopes_at_zero():
    # the chi-square density with 2 degrees of freedom is 1/2 at 0, the F density with
    # dfn = 2 is 1 there: no log(0) in the slope
    assert s2sad.grad(lambda x: sc.chdtr(2.0, x))(0.0) == 0.5
    assert np.isclose(s2sad.grad(lambda x: sc.fdtr(2.0, 3.0, x))(0.0), 1.0, rtol=1e-14)


def test_limits_at_zero():
    # exprel(x) = 1 + x/2 + x^2/6 + ...: slope 1/2 and curvature 1/3 at 0
    assert s2sad.grad(exprel_)(0.0) == 0.5
    assert np.isclose(s2sad.hessian(exprel_)(0.0), 1.0 / 3.0, rtol=1e-14)
    # boxcox(x, 0) = log x, its slope in lmbda log(x)^2 / 2; inv_boxcox(y, 0) = e^y, its
    # slope in lmbda -e^y y^2 / 2
    x, y = np.array([0.3, 2.0, 7.5]), np.array([-0.8, 0.4, 1.5])
    dx, dl = s2sad.grad(total(boxcox_), wrt=(0, 1))(x, np.zeros(3))
    assert_close((dx, dl), (1.0 / x, np.log(x) ** 2 / 2.0), rtol=1e-14, atol=0.0)
    dx, dl = s2sad.grad(total(boxcox1p_), wrt=(0, 1))(x, np.zeros(3))
    assert_close((dx, dl), (1.0 / (1.0 + x), np.log1p(x) ** 2 / 2.0), rtol=1e-14, atol=0.0)
    dy, dl = s2sad.grad(total(inv_boxcox_), wrt=(0, 1))(y, np.zeros(3))
    assert_close((dy, dl), (np.exp(y), -np.exp(y) * y * y / 2.0), rtol=1e-14, atol=0.0)
    dy, dl = s2sad.grad(total(inv_boxcox1p_), wrt=(0, 1))(y, np.zeros(3))
    assert_close((dy, dl), (np.exp(y), -np.exp(y) * y * y / 2.0), rtol=1e-14, atol=0.0)


def test_tklmbda_slope_in_lmbda_at_zero():
    # SciPy computes the logistic distribution function wherever |lmbda| < ~1e-4; the slope
    # is the one of the Tukey-lambda family, checked with differences of step 1e-3
    x, h = np.array([-1.2, 0.5, 2.0]), 1e-3
    fd = (sc.tklmbda(x, h) - sc.tklmbda(x, -h)) / (2 * h)
    dl = s2sad.grad(total(tklmbda_), wrt=1)(x, np.zeros(3))
    assert_close(dl, fd, rtol=1e-5, atol=1e-9)


def test_bessel_k_identities():
    # K_0' = -K_1 and K_1' = -(K_0 + K_2) / 2, by the values SciPy computes
    x = np.array([0.2, 1.0, 4.0])
    assert_close(s2sad.grad(total(k0_))(x), -sc.k1(x), rtol=1e-14, atol=0.0)
    assert_close(s2sad.grad(total(k1_))(x), -0.5 * (sc.k0(x) + sc.kn(2, x)), rtol=1e-12,
                 atol=0.0)


# -- refusals -----------------------------------------------------------------------------


def stdtr_df(df): return sc.stdtr(df, 0.5)
def chdtr_v(v): return sc.chdtr(v, 0.5)
def chdtrc_v(v): return sc.chdtrc(v, 0.5)
def fdtr_dfd(dfd): return sc.fdtr(2.0, dfd, 0.5)
def fdtrc_dfn(dfn): return sc.fdtrc(dfn, 3.0, 0.5)
def betaincc_b(b): return sc.betaincc(2.0, b, 0.5)
def kv_order(v): return sc.kv(v, 1.5)
def kve_order(v): return sc.kve(v, 1.5)


@pytest.mark.parametrize("f, name", [
    (stdtr_df, "df"), (chdtr_v, "v"), (chdtrc_v, "v"), (fdtr_dfd, "dfd"), (fdtrc_dfn, "dfn"),
    (betaincc_b, "b"), (kv_order, "v"), (kve_order, "v")])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_shape_parameters_are_refused(f, name, mode):
    """No closed form in the degrees of freedom, shapes or order: refused at the call."""
    with pytest.raises(s2sad.NonDifferentiableError, match=f"argument `{name}`") as err:
        d = getattr(s2sad, mode)(f)
        d(2.5) if mode == "grad" else d(2.5, 1.0)
    assert err.value.filename == __file__ and err.value.lineno is not None


def kv_complex(z): return np.abs(sc.kv(1.0, z))
def log1p_complex(z): return np.abs(sc.log1p(z))


@pytest.mark.parametrize("f", [kv_complex, log1p_complex])
def test_complex_arguments_are_refused(f):
    with pytest.raises(s2sad.S2SADError, match="complex"):
        s2sad.grad(f)(np.array([0.5 + 1.0j]))


# -- scipy.stats distributions, end to end ------------------------------------------------

DISTRIBUTIONS = [
    ("t", "cdf", (2.7,), [-1.5, 0.4, 2.2]),
    ("chi2", "cdf", (3.5,), [0.6, 2.0, 5.0]),
    ("chi2", "sf", (3.5,), [0.6, 2.0, 5.0]),
    ("f", "cdf", (4.0, 7.0), [0.5, 1.2, 2.6]),
    ("logistic", "logpdf", (), [-1.5, 0.4, 2.2]),
    ("burr", "logpdf", (10.5, 4.3), [0.6, 1.2, 2.0]),
    ("lomax", "logpdf", (1.9,), [0.3, 1.2, 4.0]),
    ("genlogistic", "logpdf", (0.41,), [-1.5, 0.4, 2.2]),
    ("gompertz", "logpdf", (0.95,), [0.3, 1.0, 2.0]),
    ("exponweib", "logpdf", (2.9, 1.8), [0.4, 1.0, 2.0]),
    ("vonmises", "logpdf", (3.99,), [-1.5, 0.3, 1.8]),
    ("f", "sf", (4.0, 7.0), [0.5, 1.2, 2.6]),
    ("beta", "sf", (2.0, 3.0), [0.2, 0.5, 0.8]),
    ("betaprime", "cdf", (2.0, 3.0), [0.2, 0.5, 1.8]),
    ("genpareto", "cdf", (0.3,), [0.2, 0.9, 2.0]),
    ("genpareto", "sf", (-0.2,), [0.2, 0.9, 2.0]),
]


@pytest.mark.parametrize("name, method, shapes, y", DISTRIBUTIONS,
                         ids=[f"{n}.{m}" for n, m, _, _ in DISTRIBUTIONS])
def test_scipy_stats_distributions_differentiate(name, method, shapes, y):
    """In loc and scale, against finite differences (the points inside the support)."""
    y = np.array(y)
    call = getattr(getattr(stats, name), method)

    def f(loc, scale):
        return np.sum(call(y, *shapes, loc=loc, scale=scale))

    f.__name__ = f"{name}_{method}"
    with np.errstate(all="ignore"):
        check_both_modes(f, [0.05, 1.3], rtol=1e-5)


# -- generated code -------------------------------------------------------------------------


def bessel_and_t(x, lmbda): return np.sum(sc.kv(1.5, x) * sc.stdtr(2.5, x) + sc.boxcox(x, lmbda))


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_generated_source_imports_the_scipy_special_functions_it_calls(mode):
    """A scipy.special ufunc knows no module: the source used to call `kv(...)` without
    importing it (NameError when run on its own)."""
    x, lmbda = np.array([0.5, 1.5]), np.array([0.3, 0.0])
    d = getattr(s2sad, mode)(bessel_and_t, wrt=(0, 1))
    args = (x, lmbda) if mode == "grad" else (x, lmbda, np.ones(2), np.ones(2))
    expected = d(*args)
    assert "from scipy.special import" in d.source
    namespace: dict = {}
    exec(compile(d.source, "<generated>", "exec"), namespace)
    got = namespace[f"bessel_and_t_{mode}"](*args)
    assert_close(got, expected, rtol=1e-15, atol=0.0)


def stdtr_f32(df, t): return np.sum(sc.stdtr(df, t))


def test_float32_stays_float32_without_overflow():
    # an infinite df is taken as a large finite one: 1e300 overflowed a float32 df
    df = np.array([2.5, np.inf], np.float32)
    t = np.array([0.5, 1.5], np.float32)
    with np.errstate(all="raise"):
        g = s2sad.grad(stdtr_f32, wrt=1)(df, t)
    assert g.dtype == np.float32
    assert_close(g, np.array([stats.t.pdf(0.5, 2.5), stats.norm.pdf(1.5)]), rtol=1e-5,
                 atol=0.0, check_kind=False)


# the shape parameters too, where the rules differentiate them: tklmbda in lmbda, k1e (the
# normal-inverse Gaussian), cosm1 and i0e (von Mises' kappa)
WITH_SHAPES = [
    ("tukeylambda", "cdf", (0.4,), [-1.2, 0.3, 1.1]),
    ("tukeylambda", "cdf", (-0.3,), [-1.2, 0.3, 4.0]),
    ("norminvgauss", "logpdf", (1.5, 0.4), [-1.0, 0.3, 2.0]),
    ("vonmises", "logpdf", (2.5,), [-1.5, 0.3, 1.8]),
]


@pytest.mark.parametrize("name, method, shapes, y", WITH_SHAPES,
                         ids=[f"{n}.{m}{s}" for n, m, s, _ in WITH_SHAPES])
def test_scipy_stats_shape_parameters_differentiate(name, method, shapes, y):
    y = np.array(y)
    call = getattr(getattr(stats, name), method)
    if len(shapes) == 1:
        def f(loc, scale, a): return np.sum(call(y, a, loc=loc, scale=scale))
    else:
        def f(loc, scale, a, b): return np.sum(call(y, a, b, loc=loc, scale=scale))
    f.__name__ = f"{name}_{method}_shapes"
    with np.errstate(all="ignore"):
        check_both_modes(f, [0.05, 1.3, *shapes], rtol=1e-5)


def t_cdf_in_df(df): return np.sum(stats.t.cdf(np.array([0.5, 1.5]), df))
def chi2_sf_in_df(df): return np.sum(stats.chi2.sf(np.array([0.5, 1.5]), df))


@pytest.mark.parametrize("f, name", [(t_cdf_in_df, "df"), (chi2_sf_in_df, "v")])
def test_scipy_stats_degrees_of_freedom_are_refused(f, name):
    with pytest.raises(s2sad.NonDifferentiableError, match=f"argument `{name}`"):
        s2sad.grad(f)(3.5)


# -- scipy.stats.cauchy's quantile function: the compiled scu._cauchy_ppf (issue 33) -------


def cauchy_ppf_loc_scale(q, loc, scale): return np.sum(stats.cauchy.ppf(q, loc, scale))


def cauchy_quantiles(q, loc, scale):
    scu = sc._ufuncs
    return scu._cauchy_ppf(q, loc, scale) + 2.0 * scu._cauchy_isf(q, loc, scale)


def test_cauchy_quantile_slopes_against_closed_forms():
    # ppf(q) = loc + scale tan(pi (q - 1/2)): slope pi scale / cos^2 in q, 1 in loc, tan in scale
    q, loc, scale = np.array([0.05, 0.3, 0.5, 0.8]), 0.4, 1.7
    gq, gloc, gscale = s2sad.grad(cauchy_ppf_loc_scale, wrt=(0, 1, 2))(q, loc, scale)
    angle = np.pi * (q - 0.5)
    assert_close(gq, np.pi * scale / np.cos(angle) ** 2, rtol=1e-12, atol=0.0)
    assert_close(gloc, 4.0, rtol=1e-12, atol=0.0)
    assert_close(gscale, np.sum(np.tan(angle)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shapes", [((3,), (), ()), ((2, 3), (3,), (2, 1))])
def test_cauchy_quantiles_against_finite_differences(shapes):
    rng = np.random.default_rng(33)
    q = rng.uniform(0.1, 0.9, shapes[0])
    loc = rng.normal(size=shapes[1]) if shapes[1] else 0.3
    scale = rng.uniform(0.5, 2.0, shapes[2]) if shapes[2] else 1.4
    check_both_modes(cauchy_quantiles, [q, loc, scale], rtol=1e-6, salt=str(shapes))
    check_second_order(lambda q, loc, scale: np.sum(cauchy_quantiles(q, loc, scale)),
                       [q, loc, scale], wrt=0, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_generated_source_imports_the_private_cauchy_ufunc(mode):
    """scu._cauchy_ppf has no public name: the source imports it from scipy.special._ufuncs."""
    q = np.array([0.2, 0.7])
    d = getattr(s2sad, mode)(cauchy_ppf_loc_scale, wrt=0)
    args = (q, 0.1, 2.0) if mode == "grad" else (q, 0.1, 2.0, np.ones(2))
    expected = d(*args)
    assert "from scipy.special._ufuncs import _cauchy_ppf" in d.source
    namespace: dict = {}
    exec(compile(d.source, "<generated>", "exec"), namespace)
    got = namespace[f"cauchy_ppf_loc_scale_{mode}"](*args)
    assert_close(got, expected, rtol=1e-15, atol=0.0)
