"""What `scipy.stats`'s continuous distributions compute, as code the compiler reads.

`rv_continuous.logpdf(x, *shapes, loc, scale)` and its siblings check their arguments,
compress the entries inside the support (`argsreduce`), call the distribution's private
`_logpdf(z, *shapes)` on them and `place` the values into an output of `-inf` or NaN. The
checks carry no derivative; the value inside the support is `_logpdf((x - loc) / scale,
*shapes) - log(scale)`. These functions compute the same numbers with `np.where` in place
of the compress-and-place, and are inlined in place of SciPy's methods
(s2sad/frontend/library_shims.py); the private methods they call are SciPy's own.
"""

from __future__ import annotations

import numpy as np


def _standardised(dist, x, args, loc, scale):
    x = np.asarray(x)
    z = (x - loc) / scale
    valid = dist._argcheck(*args) & (scale > 0)
    inside = valid & dist._support_mask(z, *args)
    return z, valid, inside


def _select(inside, valid, z, value, outside):
    """`value` inside the support, `outside` outside it, NaN for invalid arguments."""
    return np.where(inside, value, np.where(valid & ~np.isnan(z), outside, np.nan))


def logpdf(dist, x, *args, **kwds):
    args, loc, scale = dist._parse_args(*args, **kwds)
    z, valid, inside = _standardised(dist, x, args, loc, scale)
    with np.errstate(all="ignore"):
        value = dist._logpdf(z, *args) - np.log(scale)
    return _select(inside, valid, z, value, -np.inf)


def pdf(dist, x, *args, **kwds):
    args, loc, scale = dist._parse_args(*args, **kwds)
    z, valid, inside = _standardised(dist, x, args, loc, scale)
    with np.errstate(all="ignore"):
        value = dist._pdf(z, *args) / scale
    return _select(inside, valid, z, value, 0.0)


def _below(dist, z, args):
    a, _ = dist._get_support(*args)
    return z <= a


def _distribution_function(dist, method, x, args, kwds, below, above):
    """A distribution function (`_cdf`, `_logcdf`, `_sf`, `_logsf`): its value inside the
    support; `below` and `above` it."""
    args, loc, scale = dist._parse_args(*args, **kwds)
    z, valid, inside = _standardised(dist, x, args, loc, scale)
    with np.errstate(all="ignore"):
        value = getattr(dist, method)(z, *args)
    return _select(inside, valid, z, value, np.where(_below(dist, z, args), below, above))


def cdf(dist, x, *args, **kwds):
    return _distribution_function(dist, "_cdf", x, args, kwds, 0.0, 1.0)


def logcdf(dist, x, *args, **kwds):
    return _distribution_function(dist, "_logcdf", x, args, kwds, -np.inf, 0.0)


def sf(dist, x, *args, **kwds):
    return _distribution_function(dist, "_sf", x, args, kwds, 1.0, 0.0)


def logsf(dist, x, *args, **kwds):
    return _distribution_function(dist, "_logsf", x, args, kwds, 0.0, -np.inf)


def ppf(dist, q, *args, **kwds):
    """The quantile function: `loc + scale * _ppf(q, *shapes)` for 0 < q < 1, the support's
    ends at 0 and 1, NaN outside [0, 1] or for invalid arguments."""
    args, loc, scale = dist._parse_args(*args, **kwds)
    q = np.asarray(q)
    valid = dist._argcheck(*args) & (scale > 0)
    a, b = dist._get_support(*args)
    inside = valid & (q > 0) & (q < 1)
    with np.errstate(all="ignore"):
        # (at the ends _ppf's derivative is infinite: they take it at q = 1/2, unused)
        value = dist._ppf(np.where(inside, q, 0.5), *args) * scale + loc
    ends = np.where(q == 0, _end(a, scale, loc), np.where(q == 1, _end(b, scale, loc), np.nan))
    return np.where(inside, value, np.where(valid, ends, np.nan))


def _end(e, scale, loc):
    """An end of the support, moved and scaled where it is finite (an infinite one times
    the scale would make the scale's derivative NaN)."""
    finite = np.isfinite(e)
    return np.where(finite, np.where(finite, e, 0.0) * scale + loc, e)


def _discrete(dist, k, args, kwds):
    """k - loc, and where the arguments are valid and k an integer inside the support."""
    args, loc, _ = dist._parse_args(*args, **kwds)
    k = np.asarray(k) - loc
    valid = dist._argcheck(*args)
    a, b = dist._get_support(*args)
    inside = valid & (k >= a) & (k <= b) & (np.floor(k) == k)
    return k, args, valid, inside


def logpmf(dist, k, *args, **kwds):
    k, args, valid, inside = _discrete(dist, k, args, kwds)
    with np.errstate(all="ignore"):
        value = dist._logpmf(k, *args)
    return np.where(inside, value, np.where(valid & ~np.isnan(k), -np.inf, np.nan))


def pmf(dist, k, *args, **kwds):
    k, args, valid, inside = _discrete(dist, k, args, kwds)
    with np.errstate(all="ignore"):
        value = np.clip(dist._pmf(k, *args), 0.0, 1.0)
    return np.where(inside, value, np.where(valid & ~np.isnan(k), 0.0, np.nan))


def mvn_logpdf(x, mean=None, cov=1, allow_singular=False):
    """scipy.stats.multivariate_normal.logpdf for a positive definite covariance (a number,
    a vector of variances or a matrix): the rows of `x` (one point, or one per row)."""
    if mean is None:
        mean = np.zeros(np.shape(cov)[-1] if np.ndim(cov) > 0 else 1)
    mean = np.asarray(mean, dtype=float)
    dim = mean.size if mean.ndim > 0 else 1
    mean = np.reshape(mean, (dim,))
    cov = np.asarray(cov, dtype=float)
    if cov.ndim == 0:
        cov = cov * np.eye(dim)
    elif cov.ndim == 1:
        cov = np.diag(cov)
    else:  # (SciPy reads the lower triangle: scipy.linalg.eigh(cov, lower=True))
        cov = np.tril(cov) + np.tril(cov, -1).T
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:
        x = np.reshape(x, (1, 1))
    elif x.ndim == 1:
        if dim == 1:
            x = x[:, None]
        else:
            x = x[None, :]
    dev = x - mean
    maha = np.sum(dev * np.linalg.solve(cov, dev.T).T, axis=-1)
    _, logdet = np.linalg.slogdet(cov)
    out = -0.5 * (dim * np.log(2 * np.pi) + logdet + maha)
    out = np.squeeze(out)
    if out.ndim == 0:
        return out[()]
    return out


def mvn_pdf(x, mean=None, cov=1, allow_singular=False):
    return np.exp(mvn_logpdf(x, mean, cov, allow_singular))


class Frozen:
    """A frozen distribution (`scipy.stats.norm(mu, sigma)`): the distribution and the
    arguments each of its methods is called with."""

    def __init__(self, dist, args, kwds):
        self.dist = dist
        self.args = args
        self.kwds = kwds

    def logpdf(self, x):
        return logpdf(self.dist, x, *self.args, **self.kwds)

    def pdf(self, x):
        return pdf(self.dist, x, *self.args, **self.kwds)

    def cdf(self, x):
        return cdf(self.dist, x, *self.args, **self.kwds)

    def logcdf(self, x):
        return logcdf(self.dist, x, *self.args, **self.kwds)

    def sf(self, x):
        return sf(self.dist, x, *self.args, **self.kwds)

    def logsf(self, x):
        return logsf(self.dist, x, *self.args, **self.kwds)

    def ppf(self, q):
        return ppf(self.dist, q, *self.args, **self.kwds)

    def logpmf(self, k):
        return logpmf(self.dist, k, *self.args, **self.kwds)

    def pmf(self, k):
        return pmf(self.dist, k, *self.args, **self.kwds)


def freeze(dist, *args, **kwds):
    return Frozen(dist, args, kwds)


MODELS = {"logpdf": logpdf, "pdf": pdf, "cdf": cdf, "logcdf": logcdf, "sf": sf,
          "logsf": logsf, "ppf": ppf, "logpmf": logpmf, "pmf": pmf, "freeze": freeze}


# -- scipy.spatial.distance: pairwise distances (compiled in SciPy) as NumPy code ----------

def _pairwise(d, metric, p):
    """The distances from the coordinate differences `d` (..., n_features)."""
    if metric == "sqeuclidean":
        return np.sum(d * d, axis=-1)
    if metric == "euclidean":
        return np.sqrt(np.sum(d * d, axis=-1))
    if metric == "cityblock":
        return np.sum(np.abs(d), axis=-1)
    if metric == "chebyshev":
        return np.max(np.abs(d), axis=-1)
    if metric == "minkowski":
        return np.sum(np.abs(d) ** p, axis=-1) ** (1.0 / p)
    raise ValueError(f"s2sad reads cdist and pdist for the metrics sqeuclidean, euclidean, "
                     f"cityblock, chebyshev and minkowski, not {metric!r}")


def cdist(XA, XB, metric="euclidean", *, p=2.0):
    XA = np.asarray(XA, dtype=np.float64)  # (SciPy computes in double precision)
    XB = np.asarray(XB, dtype=np.float64)
    if XA.ndim != 2:
        raise ValueError("XA must be a 2-dimensional array.")
    if XB.ndim != 2:
        raise ValueError("XB must be a 2-dimensional array.")
    return _pairwise(XA[:, None, :] - XB[None, :, :], metric, p)


def pdist(X, metric="euclidean", *, p=2.0):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError("A 2-dimensional array must be passed.")
    rows, cols = np.triu_indices(X.shape[0], 1)
    return _pairwise(X[rows] - X[cols], metric, p)


def squareform(X, force="no", checks=True):
    X = np.asarray(X)
    if X.ndim == 1:  # condensed distances -> the symmetric matrix, zero diagonal
        n = int(round((1.0 + np.sqrt(1.0 + 8.0 * X.shape[0])) / 2.0))
        rows, cols = np.triu_indices(n, 1)
        M = np.zeros((n, n), dtype=X.dtype)
        M[rows, cols] = X
        return M + M.T
    rows, cols = np.triu_indices(X.shape[0], 1)
    return X[rows, cols]
