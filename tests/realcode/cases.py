"""The corpus: third-party numerical code differentiated as its users call it.

Each case hands s2sad the library's own function, bound method or object, or a one-line
lambda that calls it the way a user would, at a random point (a fixed seed per case). The
oracle is the library's own hand-written derivative where it ships one (`oracle` names it:
scipy.optimize.rosen_der, a statsmodels model's score, a scikit-learn kernel's
eval_gradient, a loss object's gradient, a scipy.special derivative identity), else central
differences in float64 (tests/realcode/harness.py).

`expect` records what goes wrong today, per mode ("rev": grad or vjp, "fwd": jvp; the
agreement test needs both): the category of the S2SADError that refuses the case, or
"BUG: ..." for a wrong derivative or an internal crash. The test marks those
xfail(strict=True), so a case that the compiler learns flips to XPASS: remove its entry
then. `python bench/realcode_report.py` prints the numbers per library and category.
"""

from __future__ import annotations

import numpy as np
import scipy.integrate as si
import scipy.optimize as so
import scipy.spatial.distance as sd
import scipy.special as sp
import scipy.stats as st

from tests.realcode.harness import Case, Problem

CASES: list[Case] = []


def add(library: str, name: str, setup, wrt=(0,), **kw) -> None:
    CASES.append(Case(name=f"{library}:{name}", library=library, setup=setup, wrt=wrt, **kw))


def U(rng: np.random.Generator, lo: float, hi: float, n: int | tuple[int, ...] | None = None):
    """Uniform draws in [lo, hi): an array of shape n, or a Python float."""
    return rng.uniform(lo, hi, n) if n is not None else float(rng.uniform(lo, hi))


def diag(fprime):
    """The Jacobian of an elementwise function of a vector from its derivative."""
    return lambda x, *rest: [np.diag(fprime(x, *rest))]


# ------------------------------------------------------------------------------------------
# SciPy
# ------------------------------------------------------------------------------------------
SCIPY = "scipy"

# scipy.optimize's test functions and their hand-written derivatives
add(SCIPY, "optimize.rosen", lambda r: Problem(so.rosen, (U(r, -1.5, 1.5, 5),),
                                               lambda x: [so.rosen_der(x)]),
    oracle="scipy.optimize.rosen_der")
add(SCIPY, "optimize.rosen_der", lambda r: Problem(so.rosen_der, (U(r, -1.5, 1.5, 5),),
                                                   lambda x: [so.rosen_hess(x)]),
    oracle="scipy.optimize.rosen_hess")
add(SCIPY, "optimize.rosen_hess_prod", lambda r: Problem(
    so.rosen_hess_prod, (U(r, -1.5, 1.5, 5), U(r, -1, 1, 5)),
    lambda x, p: [so.rosen_hess(x)]), wrt=(1,), oracle="scipy.optimize.rosen_hess")

# scipy.stats: distributions' methods called directly, and the likelihoods people write
add(SCIPY, "stats.norm.logpdf", lambda r: Problem(
    st.norm.logpdf, (U(r, -2, 2, 5), U(r, -1, 1), U(r, 0.5, 2))), wrt=(0, 1, 2))
add(SCIPY, "stats.norm.cdf", lambda r: Problem(st.norm.cdf, (U(r, -2, 2, 5), 0.3, 1.7)))
add(SCIPY, "stats.norm.logcdf", lambda r: Problem(st.norm.logcdf, (U(r, -2, 2, 5),)))
add(SCIPY, "stats.norm.logsf", lambda r: Problem(
    st.norm.logsf, (U(r, -2, 2, 5), U(r, -1, 1), U(r, 0.5, 2))), wrt=(0, 1, 2))
add(SCIPY, "stats.norm.pdf", lambda r: Problem(st.norm.pdf, (U(r, -2, 2, 5),)))
add(SCIPY, "stats.norm.logpdf likelihood (mu, sigma)", lambda r: Problem(
    lambda mu, sigma, y: np.sum(st.norm.logpdf(y, mu, sigma)),
    (U(r, -1, 1), U(r, 0.5, 2), U(r, -2, 2, 6))), wrt=(0, 1))
add(SCIPY, "stats.norm frozen logpdf", lambda r: Problem(
    lambda mu, y: np.sum(st.norm(mu, 2.0).logpdf(y)), (U(r, -1, 1), U(r, -2, 2, 6))))
add(SCIPY, "stats.t.logpdf likelihood (loc, scale)", lambda r: Problem(
    lambda loc, scale, y: np.sum(st.t.logpdf(y, 4.0, loc, scale)),
    (U(r, -1, 1), U(r, 0.5, 2), U(r, -2, 2, 6))), wrt=(0, 1))
add(SCIPY, "stats.gamma.logpdf", lambda r: Problem(
    st.gamma.logpdf, (U(r, 0.5, 3, 5), U(r, 1.5, 3))), wrt=(0, 1))
add(SCIPY, "stats.beta.logpdf", lambda r: Problem(
    st.beta.logpdf, (U(r, 0.1, 0.9, 5), U(r, 1.5, 3), U(r, 1.5, 3))), wrt=(0, 1, 2))
add(SCIPY, "stats.expon.logpdf likelihood (rate)", lambda r: Problem(
    lambda rate, y: np.sum(st.expon.logpdf(y, scale=1.0 / rate)), (U(r, 0.5, 2), U(r, 0.1, 3, 6))))
add(SCIPY, "stats.laplace.logpdf likelihood (loc, scale)", lambda r: Problem(
    lambda loc, scale, y: np.sum(st.laplace.logpdf(y, loc, scale)),
    (U(r, -0.1, 0.1), U(r, 0.5, 2), U(r, -2, 2, 6))), wrt=(0, 1))
add(SCIPY, "stats.cauchy.logpdf", lambda r: Problem(
    st.cauchy.logpdf, (U(r, -2, 2, 5), U(r, -1, 1), U(r, 0.5, 2))), wrt=(0, 1, 2))
add(SCIPY, "stats.logistic.logpdf", lambda r: Problem(st.logistic.logpdf, (U(r, -2, 2, 5),)))
add(SCIPY, "stats.lognorm.logpdf", lambda r: Problem(
    st.lognorm.logpdf, (U(r, 0.5, 3, 5), U(r, 0.5, 1.5))), wrt=(0, 1))
add(SCIPY, "stats.weibull_min.logpdf", lambda r: Problem(
    st.weibull_min.logpdf, (U(r, 0.5, 3, 5), U(r, 1.2, 3))), wrt=(0, 1))
add(SCIPY, "stats.gumbel_r.logpdf likelihood (loc, scale)", lambda r: Problem(
    lambda loc, scale, y: np.sum(st.gumbel_r.logpdf(y, loc, scale)),
    (U(r, -1, 1), U(r, 0.5, 2), U(r, -2, 2, 6))), wrt=(0, 1))
add(SCIPY, "stats.chi2.logpdf", lambda r: Problem(st.chi2.logpdf, (U(r, 0.5, 4, 5), 3.0)))
add(SCIPY, "stats.invgamma.logpdf", lambda r: Problem(
    st.invgamma.logpdf, (U(r, 0.5, 3, 5), U(r, 1.5, 3))), wrt=(0, 1))
add(SCIPY, "stats.gamma.cdf", lambda r: Problem(st.gamma.cdf, (U(r, 0.5, 3, 5), 2.5)))
add(SCIPY, "stats.poisson.logpmf likelihood (rate)", lambda r: Problem(
    lambda lam, k: np.sum(st.poisson.logpmf(k, lam)),
    (U(r, 0.5, 4), r.integers(0, 6, 6).astype(float))))
add(SCIPY, "stats.binom.logpmf likelihood (p)", lambda r: Problem(
    lambda p, k: np.sum(st.binom.logpmf(k, 10, p)),
    (U(r, 0.2, 0.8), r.integers(0, 11, 6).astype(float))))
add(SCIPY, "stats.multivariate_normal.logpdf (mean)", lambda r: Problem(
    lambda mean, y: np.sum(st.multivariate_normal.logpdf(y, mean, np.eye(3))),
    (U(r, -1, 1, 3), U(r, -2, 2, (4, 3)))))

# scipy.special, against derivative identities
add(SCIPY, "special.gammaln", lambda r: Problem(
    sp.gammaln, (U(r, 0.5, 4, 5),), diag(sp.digamma)), oracle="scipy.special.digamma")
add(SCIPY, "special.digamma", lambda r: Problem(
    sp.digamma, (U(r, 0.5, 4, 5),), diag(lambda x: sp.polygamma(1, x))),
    oracle="scipy.special.polygamma(1, x)")
add(SCIPY, "special.gamma", lambda r: Problem(
    sp.gamma, (U(r, 0.5, 4, 5),), diag(lambda x: sp.gamma(x) * sp.digamma(x))),
    oracle="gamma(x) digamma(x)")
add(SCIPY, "special.erf", lambda r: Problem(
    sp.erf, (U(r, -2, 2, 5),), diag(lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x))),
    oracle="2/sqrt(pi) exp(-x^2)")
add(SCIPY, "special.erfc", lambda r: Problem(
    sp.erfc, (U(r, -2, 2, 5),), diag(lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x))),
    oracle="-2/sqrt(pi) exp(-x^2)")
add(SCIPY, "special.erfinv", lambda r: Problem(
    sp.erfinv, (U(r, -0.9, 0.9, 5),),
    diag(lambda x: np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(x) ** 2))),
    oracle="sqrt(pi)/2 exp(erfinv(x)^2)")
add(SCIPY, "special.expit", lambda r: Problem(
    sp.expit, (U(r, -3, 3, 5),), diag(lambda x: sp.expit(x) * sp.expit(-x))),
    oracle="expit(x) expit(-x)")
add(SCIPY, "special.logit", lambda r: Problem(
    sp.logit, (U(r, 0.1, 0.9, 5),), diag(lambda p: 1 / (p * (1 - p)))), oracle="1/(p(1-p))")
add(SCIPY, "special.log_expit", lambda r: Problem(
    sp.log_expit, (U(r, -3, 3, 5),), diag(lambda x: sp.expit(-x))), oracle="expit(-x)")
add(SCIPY, "special.ndtr", lambda r: Problem(
    sp.ndtr, (U(r, -2, 2, 5),), diag(lambda x: np.exp(-x * x / 2) / np.sqrt(2 * np.pi))),
    oracle="the normal density")
add(SCIPY, "special.log_ndtr", lambda r: Problem(
    sp.log_ndtr, (U(r, -2, 2, 5),),
    diag(lambda x: np.exp(-x * x / 2) / np.sqrt(2 * np.pi) / sp.ndtr(x))),
    oracle="density / ndtr")
add(SCIPY, "special.ndtri", lambda r: Problem(
    sp.ndtri, (U(r, 0.1, 0.9, 5),),
    diag(lambda p: np.sqrt(2 * np.pi) * np.exp(sp.ndtri(p) ** 2 / 2))),
    oracle="1 / density(ndtri(p))")
add(SCIPY, "special.logsumexp", lambda r: Problem(
    sp.logsumexp, (U(r, -2, 2, 5),), lambda a: [sp.softmax(a)]), oracle="scipy.special.softmax")
add(SCIPY, "special.logsumexp (b weights)", lambda r: Problem(
    lambda a, b: sp.logsumexp(a, b=b), (U(r, -2, 2, 5), U(r, 0.5, 2, 5))))
add(SCIPY, "special.softmax", lambda r: Problem(
    sp.softmax, (U(r, -2, 2, 5),),
    lambda a: [np.diag(sp.softmax(a)) - np.outer(sp.softmax(a), sp.softmax(a))]),
    oracle="diag(s) - s s^T")
add(SCIPY, "special.log_softmax", lambda r: Problem(
    sp.log_softmax, (U(r, -2, 2, 5),),
    lambda a: [np.eye(5) - np.outer(np.ones(5), sp.softmax(a))]), oracle="I - 1 s^T")
add(SCIPY, "special.xlogy (y)", lambda r: Problem(
    sp.xlogy, (U(r, 0.5, 2, 5), U(r, 0.5, 2, 5)), lambda x, y: [np.diag(x / y)]),
    wrt=(1,), oracle="x / y")
add(SCIPY, "special.xlog1py (y)", lambda r: Problem(
    sp.xlog1py, (U(r, 0.5, 2, 5), U(r, 0.5, 2, 5)), lambda x, y: [np.diag(x / (1 + y))]),
    wrt=(1,), oracle="x / (1 + y)")
add(SCIPY, "special.betaln", lambda r: Problem(
    sp.betaln, (U(r, 0.5, 3, 5), U(r, 0.5, 3, 5)),
    lambda a, b: [np.diag(sp.digamma(a) - sp.digamma(a + b)),
                  np.diag(sp.digamma(b) - sp.digamma(a + b))]),
    wrt=(0, 1), oracle="digamma differences")
add(SCIPY, "special.i0", lambda r: Problem(sp.i0, (U(r, -2, 2, 5),), diag(sp.i1)),
    oracle="scipy.special.i1")
add(SCIPY, "special.i0e", lambda r: Problem(
    sp.i0e, (U(r, 0.2, 2, 5),), diag(lambda x: sp.i1e(x) - np.sign(x) * sp.i0e(x))),
    oracle="i1e(x) - sign(x) i0e(x)")
add(SCIPY, "special.j0", lambda r: Problem(sp.j0, (U(r, 0.2, 4, 5),), diag(lambda x: -sp.j1(x))),
    oracle="-scipy.special.j1")
add(SCIPY, "special.jv (x)", lambda r: Problem(
    sp.jv, (1.5, U(r, 0.2, 4, 5)),
    lambda v, x: [np.diag((sp.jv(v - 1, x) - sp.jv(v + 1, x)) / 2)]),
    wrt=(1,), oracle="(jv(v-1, x) - jv(v+1, x)) / 2")
add(SCIPY, "special.kv (x)", lambda r: Problem(
    sp.kv, (1.5, U(r, 0.2, 4, 5)),
    lambda v, x: [np.diag(-(sp.kv(v - 1, x) + sp.kv(v + 1, x)) / 2)]),
    wrt=(1,), oracle="-(kv(v-1, x) + kv(v+1, x)) / 2")
add(SCIPY, "special.polygamma (x)", lambda r: Problem(
    sp.polygamma, (1, U(r, 0.5, 3, 5)), lambda n, x: [np.diag(sp.polygamma(n + 1, x))]),
    wrt=(1,), oracle="polygamma(n + 1, x)")
add(SCIPY, "special.entr", lambda r: Problem(
    sp.entr, (U(r, 0.2, 2, 5),), diag(lambda x: -np.log(x) - 1)), oracle="-log(x) - 1")
add(SCIPY, "special.rel_entr", lambda r: Problem(
    sp.rel_entr, (U(r, 0.2, 2, 5), U(r, 0.2, 2, 5)),
    lambda x, y: [np.diag(np.log(x / y) + 1), np.diag(-x / y)]),
    wrt=(0, 1), oracle="log(x/y) + 1, -x/y")
add(SCIPY, "special.huber (r)", lambda r: Problem(
    sp.huber, (1.0, U(r, -2, 2, 6)),
    lambda d, x: [np.diag(np.where(np.abs(x) <= d, x, d * np.sign(x)))]),
    wrt=(1,), oracle="clip(r, -delta, delta)")
add(SCIPY, "special.pseudo_huber (r)", lambda r: Problem(
    sp.pseudo_huber, (1.3, U(r, -2, 2, 5)),
    lambda d, x: [np.diag(x / np.sqrt(1 + (x / d) ** 2))]),
    wrt=(1,), oracle="r / sqrt(1 + (r/delta)^2)")
add(SCIPY, "special.boxcox (x)", lambda r: Problem(
    sp.boxcox, (U(r, 0.5, 3, 5), 0.7), lambda x, lam: [np.diag(x ** (lam - 1))]),
    oracle="x^(lambda - 1)")
add(SCIPY, "special.log1p", lambda r: Problem(
    sp.log1p, (U(r, -0.5, 2, 5),), diag(lambda x: 1 / (1 + x))), oracle="1 / (1 + x)")
add(SCIPY, "special.expm1", lambda r: Problem(sp.expm1, (U(r, -2, 2, 5),), diag(np.exp)),
    oracle="exp(x)")
add(SCIPY, "special.cosm1", lambda r: Problem(
    sp.cosm1, (U(r, -2, 2, 5),), diag(lambda x: -np.sin(x))), oracle="-sin(x)")
add(SCIPY, "special.dawsn", lambda r: Problem(
    sp.dawsn, (U(r, -2, 2, 5),), diag(lambda x: 1 - 2 * x * sp.dawsn(x))),
    oracle="1 - 2 x dawsn(x)")
add(SCIPY, "special.zeta (x)", lambda r: Problem(
    lambda s: np.sum(sp.zeta(s, 1.0)), (U(r, 1.5, 4, 4),)))

# scipy.spatial.distance: pure Python around NumPy, with input validation
for _name in ("euclidean", "sqeuclidean", "cosine", "cityblock", "braycurtis", "correlation",
              "chebyshev", "canberra"):
    add(SCIPY, f"spatial.distance.{_name}", (lambda f: lambda r: Problem(
        f, (U(r, 0.5, 2, 5), U(r, 0.5, 2, 5))))(getattr(sd, _name)), wrt=(0, 1))
add(SCIPY, "spatial.distance.minkowski (p=3)", lambda r: Problem(
    lambda u, v: sd.minkowski(u, v, 3), (U(r, 0.5, 2, 5), U(r, -2, -0.5, 5))), wrt=(0, 1))
add(SCIPY, "spatial.distance.mahalanobis", lambda r: Problem(
    sd.mahalanobis, (U(r, -1, 1, 3), U(r, -1, 1, 3), np.diag(U(r, 0.5, 2, 3)))), wrt=(0, 1))
add(SCIPY, "spatial.distance.seuclidean", lambda r: Problem(
    sd.seuclidean, (U(r, -1, 1, 4), U(r, -1, 1, 4), U(r, 0.5, 2, 4))), wrt=(0, 1, 2))
add(SCIPY, "spatial.distance.jensenshannon", lambda r: Problem(
    sd.jensenshannon, (U(r, 0.2, 1, 4), U(r, 0.2, 1, 4))), wrt=(0, 1))
add(SCIPY, "spatial.distance.cdist sqeuclidean", lambda r: Problem(
    lambda XA, XB: np.sum(sd.cdist(XA, XB, "sqeuclidean")),
    (U(r, -1, 1, (3, 2)), U(r, -1, 1, (2, 2)))))
add(SCIPY, "spatial.distance.pdist", lambda r: Problem(sd.pdist, (U(r, -1, 1, (4, 2)),)))

# scipy.integrate's quadrature rules on samples
add(SCIPY, "integrate.trapezoid", lambda r: Problem(
    si.trapezoid, (U(r, -1, 1, 6), np.sort(U(r, 0, 3, 6)))), wrt=(0, 1))
add(SCIPY, "integrate.simpson", lambda r: Problem(
    lambda y, x: si.simpson(y, x=x), (U(r, -1, 1, 5), np.sort(U(r, 0, 3, 5)))), wrt=(0, 1))
add(SCIPY, "integrate.cumulative_trapezoid", lambda r: Problem(
    lambda y, x: si.cumulative_trapezoid(y, x, initial=0.0),
    (U(r, -1, 1, 5), np.sort(U(r, 0, 3, 5)))), wrt=(0, 1))


# ------------------------------------------------------------------------------------------
# scikit-learn
# ------------------------------------------------------------------------------------------
SKLEARN = "scikit-learn"

from sklearn import metrics as skm  # noqa: E402
from sklearn._loss import loss as skloss  # noqa: E402
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process import kernels as gpk  # noqa: E402
from sklearn.linear_model._huber import _huber_loss_and_gradient  # noqa: E402
from sklearn.linear_model._linear_loss import LinearModelLoss  # noqa: E402
from sklearn.metrics import pairwise as skp  # noqa: E402
from sklearn.mixture._gaussian_mixture import _estimate_log_gaussian_prob  # noqa: E402
from sklearn.neural_network import _base as nnb  # noqa: E402
from sklearn.utils import extmath  # noqa: E402


def _kernel_x(kernel):
    """A kernel object itself, differentiated with respect to X in kernel(X, Y)."""
    return lambda r: Problem(kernel, (U(r, -1, 1, (3, 2)), U(r, -1, 1, (2, 2))))


add(SKLEARN, "kernels.RBF(X, Y)", _kernel_x(gpk.RBF(1.3)))
add(SKLEARN, "kernels.RBF anisotropic(X, Y)", _kernel_x(gpk.RBF([0.8, 1.6])))
add(SKLEARN, "kernels.Matern nu=0.5(X, Y)", _kernel_x(gpk.Matern(1.1, nu=0.5)))
add(SKLEARN, "kernels.Matern nu=1.5(X, Y)", _kernel_x(gpk.Matern(1.1, nu=1.5)))
add(SKLEARN, "kernels.Matern nu=2.5(X, Y)", _kernel_x(gpk.Matern(1.1, nu=2.5)))
add(SKLEARN, "kernels.RationalQuadratic(X, Y)", _kernel_x(gpk.RationalQuadratic(0.9, 1.5)))
add(SKLEARN, "kernels.ExpSineSquared(X, Y)", lambda r: Problem(
    gpk.ExpSineSquared(1.2, 3.0), (U(r, -1, 1, (3, 1)), U(r, -1, 1, (2, 1)))))
add(SKLEARN, "kernels.DotProduct(X, Y)", _kernel_x(gpk.DotProduct(0.5)))
add(SKLEARN, "kernels.Constant*RBF + White(X)", lambda r: Problem(
    gpk.ConstantKernel(2.0) * gpk.RBF(0.7) + gpk.WhiteKernel(0.1), (U(r, -1, 1, (3, 2)),)))
add(SKLEARN, "kernels.RBF**2 (Exponentiation)(X, Y)", _kernel_x(gpk.RBF(1.3) ** 2))
# the same, as a lambda calling a kernel (the kernel object itself crashes, see expected.py)
add(SKLEARN, "kernels.RBF via lambda X: kernel(X, Y)", (lambda k: lambda r: Problem(
    lambda X, Y: k(X, Y), (U(r, -1, 1, (3, 2)), U(r, -1, 1, (2, 2)))))(gpk.RBF(1.3)))
add(SKLEARN, "kernels.Matern nu=2.5 via lambda X: kernel(X, Y)", (lambda k: lambda r: Problem(
    lambda X, Y: k(X, Y), (U(r, -1, 1, (3, 2)), U(r, -1, 1, (2, 2)))))(gpk.Matern(1.1, nu=2.5)))
add(SKLEARN, "kernels.DotProduct.diag", lambda r: Problem(
    gpk.DotProduct(0.5).diag, (U(r, -1, 1, (3, 2)),)))


def _kernel_theta(make, n_theta):
    """A kernel built from log-hyperparameters, against its eval_gradient (d K / d theta)."""
    def setup(r):
        theta = U(r, -0.5, 0.5, n_theta) if n_theta > 1 else U(r, -0.5, 0.5)
        X = U(r, -1, 1, (3, 2))

        def jac(theta, X):
            _, dK = make(theta)(X, eval_gradient=True)
            return [dK if n_theta > 1 else dK[..., 0]]
        return Problem(lambda theta, X: make(theta)(X), (theta, X), jac)
    return setup


add(SKLEARN, "kernels.RBF(length_scale=exp(theta))", _kernel_theta(
    lambda t: gpk.RBF(length_scale=np.exp(t)), 1), oracle="RBF eval_gradient")
add(SKLEARN, "kernels.Matern(exp(theta), nu=1.5)", _kernel_theta(
    lambda t: gpk.Matern(length_scale=np.exp(t), nu=1.5), 1), oracle="Matern eval_gradient")
# (theta in the kernel's own order, the hyperparameters' names sorted: alpha, length_scale)
add(SKLEARN, "kernels.RationalQuadratic(exp(theta))", _kernel_theta(
    lambda t: gpk.RationalQuadratic(length_scale=np.exp(t[1]), alpha=np.exp(t[0])), 2),
    oracle="RationalQuadratic eval_gradient")


def _gpr(r):
    X = U(r, -2, 2, (6, 1))
    y = np.sin(X[:, 0])
    gpr = GaussianProcessRegressor(gpk.ConstantKernel(1.0) * gpk.RBF(1.0), alpha=1e-2,
                                   optimizer=None).fit(X, y)
    theta = gpr.kernel_.theta + U(r, -0.3, 0.3, 2)
    return gpr, theta


add(SKLEARN, "GaussianProcessRegressor.log_marginal_likelihood", lambda r: (lambda g, t: Problem(
    g.log_marginal_likelihood, (t,),
    lambda theta: [g.log_marginal_likelihood(theta, eval_gradient=True)[1]]))(*_gpr(r)),
    oracle="log_marginal_likelihood(eval_gradient=True)")
add(SKLEARN, "GaussianProcessRegressor.predict", lambda r: Problem(
    _gpr(r)[0].predict, (U(r, -2, 2, (3, 1)),)))


def _loss_case(loss, y_true, raw):
    """A loss object's loss(y_true, raw_prediction), against its gradient method."""
    return lambda r: Problem(loss.loss, (y_true(r), raw(r)),
                             lambda y, z: [np.diag(loss.gradient(y, z))])


_pos = lambda r: U(r, 0.5, 3, 5)  # noqa: E731
_real = lambda r: U(r, -1, 1, 5)  # noqa: E731
_binary = lambda r: np.array([0.0, 1.0, 1.0, 0.0, 1.0])  # noqa: E731
for _cls, _y in ((skloss.HalfSquaredError, _real), (skloss.HalfPoissonLoss, _pos),
                 (skloss.HalfBinomialLoss, _binary), (skloss.HalfGammaLoss, _pos),
                 (skloss.AbsoluteError, _real), (skloss.ExponentialLoss, _binary)):
    add(SKLEARN, f"_loss.{_cls.__name__}.loss", _loss_case(_cls(), _y, _real),
        wrt=(1,), oracle=f"{_cls.__name__}.gradient")
add(SKLEARN, "_loss.HalfTweedieLoss(power=1.5).loss", _loss_case(
    skloss.HalfTweedieLoss(power=1.5), _pos, _real), wrt=(1,), oracle="HalfTweedieLoss.gradient")
add(SKLEARN, "_loss.PinballLoss(quantile=0.3).loss", _loss_case(
    skloss.PinballLoss(quantile=0.3), _real, _real), wrt=(1,), oracle="PinballLoss.gradient")


def _multinomial(r):
    loss = skloss.HalfMultinomialLoss(n_classes=3)
    y = np.array([0.0, 2.0, 1.0, 2.0])
    return Problem(lambda raw, y: np.sum(loss.loss(y, raw)), (U(r, -1, 1, (4, 3)), y),
                   lambda raw, y: [loss.gradient(y, raw)])


add(SKLEARN, "_loss.HalfMultinomialLoss.loss", _multinomial,
    oracle="HalfMultinomialLoss.gradient")


def _linear_model_loss(r):
    lml = LinearModelLoss(base_loss=skloss.HalfBinomialLoss(), fit_intercept=True)
    X = U(r, -1, 1, (6, 2))
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    return Problem(lambda coef, X, y: lml.loss(coef, X, y, l2_reg_strength=0.1),
                   (U(r, -1, 1, 3), X, y),
                   lambda coef, X, y: [lml.loss_gradient(coef, X, y, l2_reg_strength=0.1)[1]])


add(SKLEARN, "linear_model LinearModelLoss(HalfBinomialLoss).loss", _linear_model_loss,
    oracle="LinearModelLoss.loss_gradient")

def _huber(r):
    X = U(r, -1, 1, (6, 2))
    y = U(r, -1, 1, 6)
    sw = np.ones(6)
    return Problem(lambda w, X, y: _huber_loss_and_gradient(w, X, y, 1.35, 1e-3, sw)[0],
                   (np.array([0.3, -0.2, 0.1, 1.2]), X, y),
                   lambda w, X, y: [_huber_loss_and_gradient(w, X, y, 1.35, 1e-3, sw)[1]])


add(SKLEARN, "linear_model _huber_loss_and_gradient", _huber,
    oracle="_huber_loss_and_gradient's gradient")

# a Gaussian mixture's log-density of the samples, in the means
for _cov in ("full", "diag", "spherical"):
    def _mixture(r, cov=_cov):
        X = U(r, -1, 1, (4, 2))
        means = U(r, -1, 1, (2, 2))
        prec = {"full": np.stack([np.eye(2), 2.0 * np.eye(2)]),
                "diag": U(r, 0.5, 2, (2, 2)), "spherical": U(r, 0.5, 2, 2)}[cov]
        return Problem(lambda means, X: _estimate_log_gaussian_prob(X, means, prec, cov),
                       (means, X))
    add(SKLEARN, f"mixture _estimate_log_gaussian_prob ({_cov})", _mixture)


# sklearn.metrics: the scores people minimise, differentiated in the prediction
_y5 = lambda r: U(r, 0.5, 2, 5)  # noqa: E731
for _name in ("mean_squared_error", "mean_absolute_error", "r2_score",
              "explained_variance_score", "mean_poisson_deviance", "mean_gamma_deviance",
              "mean_squared_log_error", "mean_pinball_loss"):
    add(SKLEARN, f"metrics.{_name}", (lambda f: lambda r: Problem(
        lambda y_pred, y_true: f(y_true, y_pred), (_y5(r), _y5(r))))(getattr(skm, _name)))
add(SKLEARN, "metrics.mean_tweedie_deviance(power=1.5)", lambda r: Problem(
    lambda y_pred, y_true: skm.mean_tweedie_deviance(y_true, y_pred, power=1.5),
    (_y5(r), _y5(r))))
add(SKLEARN, "metrics.log_loss", lambda r: Problem(
    lambda p, y: skm.log_loss(y, p, labels=[0, 1]), (U(r, 0.2, 0.8, 5), _binary(r))))
add(SKLEARN, "metrics.brier_score_loss", lambda r: Problem(
    lambda p, y: skm.brier_score_loss(y, p), (U(r, 0.2, 0.8, 5), _binary(r))))

# sklearn.metrics.pairwise, differentiated in X
for _name, _fn in (("rbf_kernel", lambda X, Y: skp.rbf_kernel(X, Y, gamma=0.7)),
                   ("polynomial_kernel", lambda X, Y: skp.polynomial_kernel(X, Y, degree=2)),
                   ("sigmoid_kernel", lambda X, Y: skp.sigmoid_kernel(X, Y, gamma=0.3)),
                   ("laplacian_kernel", lambda X, Y: skp.laplacian_kernel(X, Y, gamma=0.5)),
                   ("linear_kernel", skp.linear_kernel), ("cosine_similarity", skp.cosine_similarity),
                   ("euclidean_distances", skp.euclidean_distances)):
    add(SKLEARN, f"metrics.pairwise.{_name}", (lambda f: lambda r: Problem(
        f, (U(r, 0.5, 1.5, (3, 2)), U(r, -1, 0, (2, 2)))))(_fn))

# sklearn.neural_network's losses and activations
add(SKLEARN, "neural_network squared_loss", lambda r: Problem(
    lambda y_pred, y_true: nnb.squared_loss(y_true, y_pred),
    (U(r, -1, 1, (4, 2)), U(r, -1, 1, (4, 2)))))
add(SKLEARN, "neural_network log_loss", lambda r: Problem(
    lambda y_prob, y_true: nnb.log_loss(y_true, y_prob),
    (U(r, 0.2, 0.8, (4, 2)), np.eye(2)[[0, 1, 1, 0]])))
add(SKLEARN, "neural_network binary_log_loss", lambda r: Problem(
    lambda y_prob, y_true: nnb.binary_log_loss(y_true, y_prob),
    (U(r, 0.2, 0.8, (4, 1)), np.array([[0.0], [1.0], [1.0], [0.0]]))))


def mlp_hidden_layer(z):
    """MLP's forward pass applies its in-place activations to a copy of the layer."""
    a = z.copy()
    nnb.ACTIVATIONS["tanh"](a)
    return a


def mlp_output_layer(z):
    a = z.copy()
    nnb.ACTIVATIONS["softmax"](a)
    return a


add(SKLEARN, "neural_network ACTIVATIONS['tanh'] in place", lambda r: Problem(
    mlp_hidden_layer, (U(r, -1, 1, (3, 2)),)))
add(SKLEARN, "neural_network ACTIVATIONS['softmax'] in place", lambda r: Problem(
    mlp_output_layer, (U(r, -1, 1, (3, 2)),)))

# sklearn.utils.extmath
add(SKLEARN, "utils.extmath.softmax", lambda r: Problem(
    extmath.softmax, (U(r, -1, 1, (3, 2)),)))
add(SKLEARN, "utils.extmath.row_norms(squared=True)", lambda r: Problem(
    lambda X: extmath.row_norms(X, squared=True), (U(r, -1, 1, (3, 2)),)))
add(SKLEARN, "utils.extmath.squared_norm", lambda r: Problem(
    extmath.squared_norm, (U(r, -1, 1, (3, 2)),)))
add(SKLEARN, "utils.extmath.safe_sparse_dot", lambda r: Problem(
    extmath.safe_sparse_dot, (U(r, -1, 1, (3, 2)), U(r, -1, 1, (2, 2)))), wrt=(0, 1))
add(SKLEARN, "utils.extmath.fast_logdet", lambda r: Problem(
    extmath.fast_logdet, (np.eye(3) * 2 + U(r, -0.3, 0.3, (3, 3)),),
    lambda A: [np.linalg.inv(A).T]), oracle="inv(A).T")


# ------------------------------------------------------------------------------------------
# statsmodels
# ------------------------------------------------------------------------------------------
STATSMODELS = "statsmodels"

import statsmodels.api as sm  # noqa: E402
from statsmodels.genmod.families import links as sml  # noqa: E402
from statsmodels.robust import norms as smn  # noqa: E402


def _design(r, n=8):
    return np.column_stack([np.ones(n), U(r, -1, 1, n)])


def _model_case(make, method, oracle, n_params=2):
    """A model's method (loglike, score) passed as the bound method, against the model's
    derivative method (score, hessian)."""
    def setup(r):
        model = make(r)
        params = U(r, -0.5, 0.5, n_params)
        return Problem(getattr(model, method), (params,),
                       lambda p: [getattr(model, oracle)(p)])
    return setup


def _logit(r):
    return sm.Logit(np.array([0.0, 1, 1, 0, 1, 0, 1, 1]), _design(r))


def _poisson(r):
    return sm.Poisson(np.array([0.0, 1, 3, 2, 1, 0, 4, 2]), _design(r))


def _probit(r):
    return sm.Probit(np.array([0.0, 1, 1, 0, 1, 0, 1, 1]), _design(r))


def _negbin(r):
    return sm.NegativeBinomial(np.array([0.0, 1, 3, 2, 1, 0, 4, 2]), _design(r))


def _glm(family, endog):
    return lambda r: sm.GLM(endog(r), _design(r), family=family)


for _label, _make in (("Logit", _logit), ("Probit", _probit), ("Poisson", _poisson)):
    add(STATSMODELS, f"discrete.{_label}.loglike", _model_case(_make, "loglike", "score"),
        oracle=f"{_label}.score")
    add(STATSMODELS, f"discrete.{_label}.score", _model_case(_make, "score", "hessian"),
        oracle=f"{_label}.hessian")
add(STATSMODELS, "discrete.Logit.loglikeobs", _model_case(_logit, "loglikeobs", "score_obs"),
    oracle="Logit.score_obs")
add(STATSMODELS, "discrete.NegativeBinomial.loglike", lambda r: (lambda m: Problem(
    m.loglike, (np.array([0.1, 0.2, 0.5]),), lambda p: [m.score(p)]))(_negbin(r)),
    oracle="NegativeBinomial.score")

_counts = lambda r: np.array([0.0, 1, 3, 2, 1, 0, 4, 2])  # noqa: E731
_bin = lambda r: np.array([0.0, 1, 1, 0, 1, 0, 1, 1])  # noqa: E731
_pos8 = lambda r: U(r, 0.5, 3, 8)  # noqa: E731
for _label, _family, _endog in (
        ("Binomial", sm.families.Binomial(), _bin),
        ("Poisson", sm.families.Poisson(), _counts)):
    add(STATSMODELS, f"GLM {_label}.loglike", _model_case(
        _glm(_family, _endog), "loglike", "score"), oracle="GLM.score")
# with the scale estimated from params (scale=None), GLM.score holds the scale fixed while
# loglike does not: against central differences; with a fixed scale, against the score
for _label, _family in (("Gaussian", sm.families.Gaussian()),
                        ("Gamma(log link)", sm.families.Gamma(sml.Log()))):
    add(STATSMODELS, f"GLM {_label}.loglike (scale estimated)", (lambda m: lambda r: Problem(
        m(r).loglike, (U(r, -0.5, 0.5, 2),)))(_glm(_family, _pos8)))
    add(STATSMODELS, f"GLM {_label}.loglike(scale=1.0)", (lambda m: lambda r: (
        lambda model: Problem(lambda params: model.loglike(params, scale=1.0),
                              (U(r, -0.5, 0.5, 2),),
                              lambda p: [model.score(p, scale=1.0)]))(m(r)))(
        _glm(_family, _pos8)), oracle="GLM.score(scale=1.0)")
add(STATSMODELS, "GLM Poisson.score", _model_case(_glm(sm.families.Poisson(), _counts),
                                                  "score", "hessian"), oracle="GLM.hessian")
add(STATSMODELS, "OLS.loglike", lambda r: (lambda m: Problem(
    m.loglike, (U(r, -0.5, 0.5, 2),), lambda p: [m.score(p)]))(sm.OLS(_pos8(r), _design(r))),
    oracle="OLS.score")

# statsmodels.robust: each norm's rho, psi = rho' and psi_deriv = psi'
for _norm in (smn.HuberT(), smn.TukeyBiweight(), smn.Hampel(), smn.AndrewWave(),
              smn.RamsayE(), smn.LeastSquares(), smn.TrimmedMean()):
    _label = type(_norm).__name__
    add(STATSMODELS, f"robust.norms.{_label}.rho", (lambda n: lambda r: Problem(
        n.rho, (U(r, -3, 3, 6),), lambda z: [np.diag(n.psi(z))]))(_norm),
        oracle=f"{_label}.psi")
    add(STATSMODELS, f"robust.norms.{_label}.psi", (lambda n: lambda r: Problem(
        n.psi, (U(r, -3, 3, 6),), lambda z: [np.diag(n.psi_deriv(z))]))(_norm),
        oracle=f"{_label}.psi_deriv")

# ... and the norms' weights, psi(z) / z
for _norm in (smn.HuberT(), smn.TukeyBiweight(), smn.AndrewWave(), smn.RamsayE()):
    add(STATSMODELS, f"robust.norms.{type(_norm).__name__}.weights", (lambda n: lambda r: Problem(
        n.weights, (U(r, 0.2, 3, 6) * np.array([1, -1, 1, -1, 1, -1]),)))(_norm))

# statsmodels' GLM links: the link object itself (its __call__), its inverse, against the
# links' own deriv and inverse_deriv
for _link, _dom in ((sml.Logit(), (0.1, 0.9)), (sml.Log(), (0.5, 3)), (sml.Probit(), (0.1, 0.9)),
                    (sml.CLogLog(), (0.1, 0.9)), (sml.Power(2.0), (0.5, 3)),
                    (sml.InversePower(), (0.5, 3)), (sml.Cauchy(), (0.1, 0.9))):
    _label = type(_link).__name__
    add(STATSMODELS, f"links.{_label}()", (lambda k, d: lambda r: Problem(
        k, (U(r, d[0], d[1], 5),), lambda p: [np.diag(k.deriv(p))]))(_link, _dom),
        oracle=f"{_label}.deriv")
    add(STATSMODELS, f"links.{_label}.inverse", (lambda k, d: lambda r: Problem(
        k.inverse, (k(U(r, d[0], d[1], 5)),), lambda z: [np.diag(k.inverse_deriv(z))]))(
            _link, _dom), oracle=f"{_label}.inverse_deriv")

# statsmodels' families: log-likelihood and deviance of the mean
add(STATSMODELS, "families.Poisson.loglike (mu)", lambda r: Problem(
    lambda mu, y: sm.families.Poisson().loglike(y, mu), (U(r, 0.5, 3, 6), _counts(r)[:6])))
add(STATSMODELS, "families.Binomial.deviance (mu)", lambda r: Problem(
    lambda mu, y: sm.families.Binomial().deviance(y, mu), (U(r, 0.2, 0.8, 6), _bin(r)[:6])))
# the same with the family made outside, as a model holds it
_poisson_family, _binomial_family = sm.families.Poisson(), sm.families.Binomial()
add(STATSMODELS, "families.Poisson.loglike (mu), family made outside", lambda r: Problem(
    lambda mu, y: _poisson_family.loglike(y, mu), (U(r, 0.5, 3, 6), _counts(r)[:6])))
add(STATSMODELS, "families.Binomial.deviance (mu), family made outside", lambda r: Problem(
    lambda mu, y: _binomial_family.deviance(y, mu), (U(r, 0.2, 0.8, 6), _bin(r)[:6])))
# variance functions, against their deriv
for _var in (sm.families.varfuncs.Power(power=1.5), sm.families.varfuncs.Binomial(),
             sm.families.varfuncs.NegativeBinomial(alpha=0.5)):
    _label = type(_var).__name__
    add(STATSMODELS, f"varfuncs.{_label}.__call__", (lambda v: lambda r: Problem(
        v.__call__, (U(r, 0.2, 0.8, 5),), lambda mu: [np.diag(v.deriv(mu))]))(_var),
        oracle=f"varfuncs.{_label}.deriv")


# ------------------------------------------------------------------------------------------
# lmfit: the line shapes of its built-in models, differentiated in their parameters
# ------------------------------------------------------------------------------------------
LMFIT = "lmfit"

import lmfit.lineshapes as ls  # noqa: E402

_X = np.linspace(-2.0, 2.5, 6)
_XPOS = np.linspace(0.3, 3.0, 6)
for _name, _params, _x in (
        ("gaussian", (1.2, 0.1, 0.8), _X), ("lorentzian", (1.2, 0.1, 0.8), _X),
        ("voigt", (1.2, 0.1, 0.8, 0.5), _X), ("pvoigt", (1.2, 0.1, 0.8, 0.3), _X),
        ("moffat", (1.2, 0.1, 0.8, 1.5), _X), ("pearson4", (1.2, 0.1, 0.8, 1.5, 0.3), _X),
        ("pearson7", (1.2, 0.1, 0.8, 1.5), _X), ("breit_wigner", (1.2, 0.1, 0.8, 0.7), _X),
        ("damped_oscillator", (1.2, 1.1, 0.3), _XPOS), ("dho", (1.2, 1.1, 0.4, 0.6), _XPOS),
        ("logistic", (1.2, 0.1, 0.8), _X), ("lognormal", (1.2, 0.1, 0.8), _XPOS),
        ("students_t", (1.2, 0.1, 0.8), _X), ("expgaussian", (1.2, 0.1, 0.8, 1.3), _X),
        ("doniach", (1.2, 0.1, 0.8, 0.2), _X), ("skewed_gaussian", (1.2, 0.1, 0.8, 0.6), _X),
        ("skewed_voigt", (1.2, 0.1, 0.8, 0.5, 0.6), _X), ("bose", (1.2, -3.0, 0.8), _X),
        ("fermi", (1.2, 0.1, 0.8), _X), ("exponential", (1.2, 0.8), _X),
        ("powerlaw", (1.2, 1.7), _XPOS), ("linear", (1.2, 0.3), _X),
        ("parabolic", (1.2, 0.3, -0.4), _X), ("sine", (1.2, 0.9, 0.3), _X),
        ("expsine", (1.2, 0.9, 0.3, 0.2), _X), ("split_lorentzian", (1.2, 0.1, 0.8, 1.3), _X)):
    add(LMFIT, f"lineshapes.{_name}", (lambda f, p, x: lambda r: Problem(
        f, (x,) + tuple(v * U(r, 0.9, 1.1) for v in p)))(getattr(ls, _name), _params, _x),
        wrt=tuple(range(1, len(_params) + 1)))
add(LMFIT, "lineshapes.step(form='erf')", lambda r: Problem(
    lambda amplitude, center, sigma, x: ls.step(x, amplitude, center, sigma, form="erf"),
    (1.2, U(r, -0.2, 0.2), U(r, 0.7, 0.9), _X)), wrt=(0, 1, 2))
add(LMFIT, "lineshapes.rectangle(form='logistic')", lambda r: Problem(
    lambda c1, s1, c2, s2, x: ls.rectangle(x, 1.0, c1, s1, c2, s2, form="logistic"),
    (U(r, -1.2, -0.8), U(r, 0.4, 0.6), U(r, 0.8, 1.2), U(r, 0.4, 0.6), _X)), wrt=(0, 1, 2, 3))
add(LMFIT, "lineshapes.gaussian2d", lambda r: Problem(
    lambda cx, cy, sx, x, y: ls.gaussian2d(x, y, 1.0, cx, cy, sx, 0.8),
    (U(r, -0.2, 0.2), U(r, -0.2, 0.2), U(r, 0.7, 0.9), _X, _X[::-1])), wrt=(0, 1, 2))


# What goes wrong today: tests/realcode/expected.py (`python bench/realcode_report.py
# --write-expected` regenerates it; BUG entries deserve a look before it is committed)
from tests.realcode.expected import EXPECT  # noqa: E402

CASES = [Case(**{**c.__dict__, "expect": EXPECT.get(c.name, {})}) for c in CASES]
assert len({c.name for c in CASES}) == len(CASES), "duplicate case names"
