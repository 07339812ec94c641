"""Rules for `scipy.stats.norm`: logpdf pdf cdf logcdf sf logsf, with `loc` and `scale`.

Loaded, like scipy_special, the first time a differentiated function calls scipy.stats.
Other distributions and norm's other methods are refused where called: their source, SciPy's
generic distribution machinery, cannot be inlined. The arguments are real; `loc` and `scale`
may be given by position or by name and broadcast against `x`.

With z = (x - loc) / scale, each function F has a slope dF/dz, and dF/dx = dF/dz / scale,
dF/dloc = -dF/dx, dF/dscale = -z dF/dx plus, for the densities, the derivative of their
1/scale factor (-1/scale for logpdf, -pdf/scale for pdf).
"""

import numpy as np
import scipy.stats as stats

from s2sad.ir.prims import unbroadcast
from s2sad_rules.real_only import real_only
from s2sad_rules.registry import TABLE, defcheck, defjvp, defvjp

_SQRT_2PI = 2.5066282746310002


def standardized(x, loc, scale):
    return (x - loc) / scale


def gaussian(z):
    """The standard normal density at z."""
    return np.exp(-0.5 * z * z) / _SQRT_2PI


def norm_tangent(slope, z, scale, x_dot, loc_dot, scale_dot):
    """dF from the slope dF/dz: (dx - dloc - z dscale) / scale times the slope."""
    return slope * (x_dot - loc_dot - z * scale_dot) / scale


def norm_cotangents(g, slope, z, x, loc, scale, own):
    """The cotangents of x, loc and scale; `own` is the density's extra d/dscale."""
    gx = g * slope / scale
    return unbroadcast(gx, x), unbroadcast(-gx, loc), unbroadcast(g * own - gx * z, scale)


@defjvp(stats.norm.logpdf)
def norm_logpdf_jvp(x, loc=0.0, scale=1.0, x_dot=0.0, loc_dot=0.0, scale_dot=0.0):
    z = standardized(x, loc, scale)
    return norm_tangent(-z, z, scale, x_dot, loc_dot, scale_dot) - scale_dot / scale


@defvjp(stats.norm.logpdf, wrt=("x", "loc", "scale"))
def norm_logpdf_vjp(g, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    return norm_cotangents(g, -z, z, x, loc, scale, -1.0 / scale)


@defjvp(stats.norm.pdf)
def norm_pdf_jvp(x, loc=0.0, scale=1.0, x_dot=0.0, loc_dot=0.0, scale_dot=0.0, ans=0.0):
    z = standardized(x, loc, scale)
    return norm_tangent(-z * ans, z, scale, x_dot, loc_dot, scale_dot) - ans * scale_dot / scale


@defvjp(stats.norm.pdf, wrt=("x", "loc", "scale"))
def norm_pdf_vjp(g, ans, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    return norm_cotangents(g, -z * ans, z, x, loc, scale, -ans / scale)


@defjvp(stats.norm.cdf)
def norm_cdf_jvp(x, loc=0.0, scale=1.0, x_dot=0.0, loc_dot=0.0, scale_dot=0.0):
    z = standardized(x, loc, scale)
    return norm_tangent(gaussian(z), z, scale, x_dot, loc_dot, scale_dot)


@defvjp(stats.norm.cdf, wrt=("x", "loc", "scale"))
def norm_cdf_vjp(g, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    return norm_cotangents(g, gaussian(z), z, x, loc, scale, 0.0)


@defjvp(stats.norm.sf)
def norm_sf_jvp(x, loc=0.0, scale=1.0, x_dot=0.0, loc_dot=0.0, scale_dot=0.0):
    z = standardized(x, loc, scale)
    return norm_tangent(-gaussian(z), z, scale, x_dot, loc_dot, scale_dot)


@defvjp(stats.norm.sf, wrt=("x", "loc", "scale"))
def norm_sf_vjp(g, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    return norm_cotangents(g, -gaussian(z), z, x, loc, scale, 0.0)


def mills_slope(z, log_tail):
    """The density over a tail probability, exp(-z^2/2 - log tail) / sqrt(2 pi), without
    dividing two small numbers far in the tail."""
    return np.exp(-0.5 * z * z - log_tail) / _SQRT_2PI


@defjvp(stats.norm.logcdf)
def norm_logcdf_jvp(x, loc=0.0, scale=1.0, x_dot=0.0, loc_dot=0.0, scale_dot=0.0, ans=0.0):
    z = standardized(x, loc, scale)
    return norm_tangent(mills_slope(z, ans), z, scale, x_dot, loc_dot, scale_dot)


@defvjp(stats.norm.logcdf, wrt=("x", "loc", "scale"))
def norm_logcdf_vjp(g, ans, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    return norm_cotangents(g, mills_slope(z, ans), z, x, loc, scale, 0.0)


@defjvp(stats.norm.logsf)
def norm_logsf_jvp(x, loc=0.0, scale=1.0, x_dot=0.0, loc_dot=0.0, scale_dot=0.0, ans=0.0):
    z = standardized(x, loc, scale)
    return norm_tangent(-mills_slope(z, ans), z, scale, x_dot, loc_dot, scale_dot)


@defvjp(stats.norm.logsf, wrt=("x", "loc", "scale"))
def norm_logsf_vjp(g, ans, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    return norm_cotangents(g, -mills_slope(z, ans), z, x, loc, scale, 0.0)


SCIPY_STATS = (stats.norm.logpdf, stats.norm.pdf, stats.norm.cdf, stats.norm.sf,
               stats.norm.logcdf, stats.norm.logsf)
for _fn in SCIPY_STATS:
    defcheck(_fn)(real_only(TABLE.checks.get(_fn)))
