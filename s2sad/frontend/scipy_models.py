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


def cdf(dist, x, *args, **kwds):
    args, loc, scale = dist._parse_args(*args, **kwds)
    z, valid, inside = _standardised(dist, x, args, loc, scale)
    with np.errstate(all="ignore"):
        value = dist._cdf(z, *args)
    return _select(inside, valid, z, value, np.where(_below(dist, z, args), 0.0, 1.0))


def logcdf(dist, x, *args, **kwds):
    args, loc, scale = dist._parse_args(*args, **kwds)
    z, valid, inside = _standardised(dist, x, args, loc, scale)
    with np.errstate(all="ignore"):
        value = dist._logcdf(z, *args)
    return _select(inside, valid, z, value, np.where(_below(dist, z, args), -np.inf, 0.0))


def sf(dist, x, *args, **kwds):
    args, loc, scale = dist._parse_args(*args, **kwds)
    z, valid, inside = _standardised(dist, x, args, loc, scale)
    with np.errstate(all="ignore"):
        value = dist._sf(z, *args)
    return _select(inside, valid, z, value, np.where(_below(dist, z, args), 1.0, 0.0))


def logsf(dist, x, *args, **kwds):
    args, loc, scale = dist._parse_args(*args, **kwds)
    z, valid, inside = _standardised(dist, x, args, loc, scale)
    with np.errstate(all="ignore"):
        value = dist._logsf(z, *args)
    return _select(inside, valid, z, value, np.where(_below(dist, z, args), 0.0, -np.inf))


MODELS = {"logpdf": logpdf, "pdf": pdf, "cdf": cdf, "logcdf": logcdf, "sf": sf,
          "logsf": logsf}
