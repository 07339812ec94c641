"""Rules for the compiled distribution functions of `scipy.special._ufuncs` that the methods of
`scipy.stats`' distributions call: `_cauchy_ppf(q, loc, scale)` and `_cauchy_isf(q, loc, scale)`
(the quantile and inverse survival functions of the Cauchy distribution, computed by Boost).

Loaded the first time a differentiated function reaches one of them (registry.RuleTable; they
have no public name, so the rule table finds them in `scipy.special._ufuncs`). Real arguments
only. With t = (ans - loc) / scale = tan(pi (q - 1/2)) for the ppf (tan(pi (1/2 - q)) for the
isf), the slope in q is +-pi scale (1 + t^2), in loc 1 and in scale t.
"""

import numpy as np
import scipy.special._ufuncs as scu

from s2sad.ir.prims import unbroadcast
from s2sad_rules.real_only import real_only
from s2sad_rules.registry import TABLE, defcheck, defjvp, defvjp


def cauchy_slopes(ans, loc, scale):
    """(d ans / dq for the ppf, d ans / dscale): pi scale (1 + t^2) and t."""
    t = (ans - loc) / scale
    return np.pi * scale * (1.0 + t * t), t


@defjvp(scu._cauchy_ppf)
def cauchy_ppf_jvp(q, loc, scale, q_dot, loc_dot, scale_dot, ans):
    dq, dscale = cauchy_slopes(ans, loc, scale)
    return dq * q_dot + loc_dot + dscale * scale_dot


@defvjp(scu._cauchy_ppf)
def cauchy_ppf_vjp(g, ans, q, loc, scale):
    dq, dscale = cauchy_slopes(ans, loc, scale)
    return unbroadcast(g * dq, q), unbroadcast(g, loc), unbroadcast(g * dscale, scale)


@defjvp(scu._cauchy_isf)
def cauchy_isf_jvp(q, loc, scale, q_dot, loc_dot, scale_dot, ans):
    dq, dscale = cauchy_slopes(ans, loc, scale)
    return loc_dot + dscale * scale_dot - dq * q_dot


@defvjp(scu._cauchy_isf)
def cauchy_isf_vjp(g, ans, q, loc, scale):
    dq, dscale = cauchy_slopes(ans, loc, scale)
    return unbroadcast(-g * dq, q), unbroadcast(g, loc), unbroadcast(g * dscale, scale)


SCIPY_DISTRIBUTIONS = (scu._cauchy_ppf, scu._cauchy_isf)
for _fn in SCIPY_DISTRIBUTIONS:
    defcheck(_fn)(real_only(TABLE.checks.get(_fn)))
