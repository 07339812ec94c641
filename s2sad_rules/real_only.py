"""Rules written for real numbers only: a complex argument is refused at compile time.

Holomorphic rules (sin, exp, mul, matmul, inv, ...) hold for complex numbers as written, in JAX's
convention for complex cotangents (a VJP is the transpose, g * f'(z)). The rules below order
their arguments or take a modulus, and would need conjugates to be right for complex inputs,
or are real functions (math.*: Python raises TypeError for a complex
argument; cmath is not covered); rather than be silently wrong, they refuse them.
"""

import inspect
import math
import operator

import numpy as np

from s2sad_rules.registry import TABLE, Unknown, defcheck

REAL_ONLY = (
    # ordering: complex numbers have none
    np.maximum, np.minimum, np.fmax, np.fmin, max, min, np.clip, np.max, np.min, np.amax,
    np.amin, np.nanmax, np.nanmin, np.ptp, np.sort, np.partition, np.mod, np.remainder, np.fmod, operator.mod,
    np.divmod, divmod,
    # real-valued by definition (NumPy raises, or drops the imaginary part)
    np.hypot, np.arctan2, np.copysign, np.fabs, np.logaddexp, np.logaddexp2, np.cbrt, float,
    np.float64, np.float32, np.float16, np.heaviside,
    np.correlate, np.nan_to_num, np.deg2rad, np.rad2deg, np.degrees, np.radians,
    np.gradient, np.nanvar, np.nanstd, np.median, np.quantile, np.percentile,
) + tuple(
    # math.*: real functions (a complex argument raises TypeError; cmath is not covered)
    _f for _f in (getattr(math, _n) for _n in sorted(dir(math)) if not _n.startswith("_"))
    if callable(_f) and (_f in TABLE.jvp_rules or _f in TABLE.vjp_rules))

# every callable whose rules refuse a complex argument (here, or in its own check: rfft drops
# an imaginary part, real_if_close's result type depends on the values); docs/gen_rules.py
# marks them "refused" in the page's complex column
COMPLEX_REFUSED = frozenset(REAL_ONLY) | {
    np.real_if_close, np.fft.rfft, np.fft.rfft2, np.fft.rfftn}


def real_only(previous):
    """A check refusing complex arguments, then running the primitive's own check (if any)."""

    def check(**args):
        if any(isinstance(v, Unknown) and v.dtype == "c" for v in args.values()):
            return "complex arguments (its rules are for real numbers)"
        if previous is None:
            return None
        own = {n: v for n, v in args.items() if n in inspect.signature(previous).parameters}
        return previous(**own)

    return check


for _fn in REAL_ONLY:
    defcheck(_fn)(real_only(TABLE.checks.get(_fn)))
