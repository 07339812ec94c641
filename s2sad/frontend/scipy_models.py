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


MODELS = {"logpdf": logpdf, "pdf": pdf, "cdf": cdf, "logcdf": logcdf, "sf": sf,
          "logsf": logsf}


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
