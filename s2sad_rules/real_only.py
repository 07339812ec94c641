"""Rules written for real numbers only: a complex argument is refused at compile time.

Holomorphic rules (sin, exp, mul, matmul, inv, ...) hold for complex numbers as written, in JAX's
convention for complex cotangents (a VJP is the transpose, g * f'(z)). The rules below order
their arguments, take a modulus or factor a Hermitian matrix, and would need conjugates to be
right for complex inputs; rather than be silently wrong, they refuse them.
"""

import inspect
import operator

import numpy as np

from s2sad_rules.registry import TABLE, Unknown, defcheck

REAL_ONLY = (
    np.maximum, np.minimum, np.fmax, np.fmin, max, min, np.clip, np.max, np.min, np.amax,
    np.amin, np.ptp, np.sort, np.partition, np.std, np.var, np.hypot, np.arctan2, np.copysign,
    np.mod, np.remainder, np.fmod, operator.mod, np.fabs, np.logaddexp, np.logaddexp2,
    np.nan_to_num, np.linalg.norm, np.linalg.vector_norm, np.linalg.eigh, np.linalg.eigvalsh,
    np.linalg.svd, np.linalg.svdvals, np.linalg.cholesky, np.linalg.qr, np.linalg.pinv,
    np.linalg.slogdet, np.gradient,
    # these conjugate their first operand for complex inputs (not bilinear)
    np.vecdot, np.linalg.vecdot,
)


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
