"""Rules for the NumPy unary elementwise functions not in numpy_elementwise.py.

Conventions at kinks: `fabs` (like `abs`) has derivative 0 at 0; `cbrt` has an
infinite derivative at 0; `nan_to_num` passes tangents through finite entries
and gives 0 where it replaced a NaN or an infinity.

Complex values follow JAX's convention (the cotangent of z = x + iy is g (d/dx - i d/dy)):
`real`'s cotangent is g, `imag`'s -i g, `conj`'s conj(g); `angle(z)` has tangent
Im(conj(z) dz) / |z|^2 and cotangent -i g conj(z) / |z|^2. The angle of a real input (0 or pi)
is piecewise constant: derivative 0, also at its jump at 0. `real_if_close` of a real input is
the identity; a complex input is refused (whether the result is real depends on the values).
"""

import numpy as np

from s2sad.ir.prims import Attr
from s2sad_rules.kind_tests import is_complex
from s2sad_rules.refusals import supported
from s2sad_rules.registry import Unknown, def_linear, def_nondiff, defcheck, defjvp, defvjp

LN2 = 0.6931471805599453
LN10 = 2.302585092994046
DEG_PER_RAD = 57.29577951308232
RAD_PER_DEG = 0.017453292519943295


@defjvp(np.fabs)
def fabs_jvp(x, x_dot):
    return x_dot * np.sign(x)  # 0 at x == 0, like abs


@defvjp(np.fabs)
def fabs_vjp(g, x):
    return g * np.sign(x)


@defjvp(np.exp2)
def exp2_jvp(x, x_dot, ans):
    return x_dot * ans * LN2


@defvjp(np.exp2)
def exp2_vjp(g, ans, x):
    return g * ans * LN2


@defjvp(np.log2)
def log2_jvp(x, x_dot):
    return np.divide(x_dot, x * LN2)  # NumPy's 1/0 (see np.log's rules)


@defvjp(np.log2)
def log2_vjp(g, x):
    return np.divide(g, x * LN2)


@defjvp(np.log10)
def log10_jvp(x, x_dot):
    return np.divide(x_dot, x * LN10)  # NumPy's 1/0 (see np.log's rules)


@defvjp(np.log10)
def log10_vjp(g, x):
    return np.divide(g, x * LN10)


@defjvp(np.arcsinh)
def arcsinh_jvp(x, x_dot):
    return x_dot / np.sqrt(x * x + 1.0)


@defvjp(np.arcsinh)
def arcsinh_vjp(g, x):
    return g / np.sqrt(x * x + 1.0)


def arccosh_slope_inv(x):
    """1 / arccosh'(x): sqrt(x**2 - 1), written sqrt(x - 1) sqrt(x + 1) for a complex x (the
    principal branch NumPy's arccosh takes; the two differ in sign for Re(x) < 0)."""
    if is_complex(x):
        return np.sqrt(x - 1.0) * np.sqrt(x + 1.0)
    return np.sqrt(x * x - 1.0)


@defjvp(np.arccosh)
def arccosh_jvp(x, x_dot):
    return x_dot / arccosh_slope_inv(x)


@defvjp(np.arccosh)
def arccosh_vjp(g, x):
    return g / arccosh_slope_inv(x)


@defjvp(np.arctanh)
def arctanh_jvp(x, x_dot):
    return x_dot / (1.0 - x * x)


@defvjp(np.arctanh)
def arctanh_vjp(g, x):
    return g / (1.0 - x * x)


@defjvp(np.deg2rad, np.radians)
def deg2rad_jvp(x, x_dot):
    return x_dot * RAD_PER_DEG


@defvjp(np.deg2rad, np.radians)
def deg2rad_vjp(g, x):
    return g * RAD_PER_DEG


@defjvp(np.rad2deg, np.degrees)
def rad2deg_jvp(x, x_dot):
    return x_dot * DEG_PER_RAD


@defvjp(np.rad2deg, np.degrees)
def rad2deg_vjp(g, x):
    return g * DEG_PER_RAD


@defjvp(np.cbrt)
def cbrt_jvp(x, x_dot, ans):
    return x_dot / (3.0 * ans * ans)


@defvjp(np.cbrt)
def cbrt_vjp(g, ans, x):
    return g / (3.0 * ans * ans)


def sinc_slope(x, ans):
    """d/dx sin(pi x)/(pi x) = (cos(pi x) - sinc(x)) / x; near 0 its Taylor polynomial, so
    that the slope is itself differentiable there (second order: sinc''(0) = -pi**2 / 3)."""
    small = np.abs(x) < 1e-3
    safe_x = np.where(small, 1.0, x)
    series = x * (np.pi ** 4 / 30.0 * (x * x) - np.pi ** 2 / 3.0)
    return np.where(small, series, (np.cos(np.pi * x) - ans) / safe_x)


@defjvp(np.sinc)
def sinc_jvp(x, x_dot, ans):
    return x_dot * sinc_slope(x, ans)


@defvjp(np.sinc)
def sinc_vjp(g, ans, x):
    return g * sinc_slope(x, ans)


@defjvp(np.nan_to_num)
def nan_to_num_jvp(x, copy=True, nan=0.0, posinf=None, neginf=None, x_dot=0.0):
    # replaced entries are constants: their tangent is 0; copy=False would overwrite the
    # x this rule reads
    return x_dot * np.isfinite(x) + supported(copy, "np.nan_to_num", "copy", copy)


@defvjp(np.nan_to_num, wrt=("x",))
def nan_to_num_vjp(g, x, copy=True, nan=0.0, posinf=None, neginf=None):
    return g * np.isfinite(x) + supported(copy, "np.nan_to_num", "copy", copy)


# real, imag, conj of a complex input follow JAX's convention for complex cotangents: the
# cotangent of z = x + iy is dL/dx - i dL/dy (conjugate-linear), so real's is g, imag's is
# -i g and conj's is conj(g). For a real input they reduce to g, 0 and g.
@defjvp(np.real)
def real_jvp(val, val_dot):
    return np.real(val_dot)


@defvjp(np.real)
def real_vjp(g, val):
    if is_complex(val):
        return g + 0j
    return g


def imag_bar(g, x):
    if is_complex(x):
        return -1j * g
    return 0.0 * g  # the imaginary part of a real input is the constant 0


@defjvp(np.imag)
def imag_jvp(val, val_dot):
    return np.imag(val_dot)


@defvjp(np.imag)
def imag_vjp(g, val):
    return imag_bar(g, val)


@defjvp(Attr("imag"))
def imag_attr_jvp(x, x_dot):
    return x_dot.imag


@defvjp(Attr("imag"))
def imag_attr_vjp(g, x):
    return imag_bar(g, x)


@defjvp(np.conj)
def conj_jvp(x, x_dot):
    return np.conj(x_dot)


@defvjp(np.conj)
def conj_vjp(g, x):
    return np.conj(g)


# angle: arg(z) = arctan2(y, x) for z = x + iy has tangent Im(conj(z) dz) / |z|^2 and, in
# JAX's convention, cotangent g (d/dx - i d/dy) arg(z) = -i g conj(z) / |z|^2; the angle of a
# real input (0 or pi) is piecewise constant: derivative 0.
@defjvp(np.angle)
def angle_jvp(z, deg=False, z_dot=0.0):
    if is_complex(z):
        return angle_unit(deg) * np.imag(np.conj(z) * z_dot) / np.real(np.conj(z) * z)
    return 0.0 * z_dot


@defvjp(np.angle, wrt=("z",))
def angle_vjp(g, z, deg=False):
    if is_complex(z):
        return -1j * angle_unit(deg) * g * np.conj(z) / np.real(np.conj(z) * z)
    return 0.0 * g


@def_nondiff
def angle_unit(deg):
    return 180.0 / np.pi if deg else 1.0


@defcheck(np.real_if_close)
def real_if_close_check(a):
    if isinstance(a, Unknown) and a.dtype == "c":
        return "a complex input (whether the result is real depends on the values)"
    return None


@defjvp(np.real_if_close)
def real_if_close_jvp(a, tol=100, a_dot=0.0):
    return a_dot  # a real input comes back unchanged


@defvjp(np.real_if_close, wrt=("a",))
def real_if_close_vjp(g, a, tol=100):
    return g


def_linear(np.deg2rad, np.radians, np.rad2deg, np.degrees, np.real, np.imag, np.conj,
           Attr("imag"), np.real_if_close)
