"""Test cases for the rule table: tiny module-level wrappers around one primitive each.

Each `Case` names a wrapper (the compiler reads its source), a way to draw arguments, and
which arguments to differentiate. `tests/rules/test_rule_table.py` checks every case's JVP
and VJP against finite differences and requires every rule in the table to be exercised by
some case (the primitives a wrapper calls are found by lowering it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from s2sad.ir.prims import astype as _astype
from s2sad.ir.prims import broadcast_like, cast_like, cofactor, unbroadcast
from s2sad_rules.numpy_construction import broadcast_items, reshape_items, unbroadcast_items
from s2sad_rules.numpy_linalg import real_spectrum
from s2sad_rules.structural import index_add


@dataclass
class Case:
    name: str
    fn: object
    make_args: object  # rng -> list of arguments
    wrt: tuple | None = None  # None: every float argument
    rtol: float = 1e-5
    second_order: bool = False  # also check the derivative of the generated JVP
    family: str = ""
    core_bugs: dict = field(default_factory=dict)  # test kind ("vjp", "second") -> reason


# Known bugs in the compiler core (s2sad/*) that make a correct rule fail; the tests
# expect these failures (strict xfail), so a fix in the core shows up at once.
FOLDED_ARRAY_BUG = ("core: an ndarray computed at compile time by a def_nondiff helper is "
                    "referenced but never defined in the generated code (NameError)")


CASES: list[Case] = []


def add(fn, make_args, wrt=None, rtol=1e-5, second_order=False, family="", name=None,
        core_bugs=None):
    CASES.append(Case(name or fn.__name__, fn, make_args, wrt, rtol, second_order, family,
                      dict(core_bugs or {})))


# -- argument domains -----------------------------------------------------------------------


def real(rng, shape=(), lo=-1.0, hi=1.0, margin=0.1):
    """Uniform in [lo, hi], at least `margin` from 0 (kinks of abs, sign, 1/x...)."""
    x = rng.uniform(lo, hi, shape)
    x = np.where(np.abs(x) < margin, np.copysign(margin, x) + x, x)
    return float(x) if shape == () else x


def pos(rng, shape=(), lo=0.5, hi=2.0):
    x = rng.uniform(lo, hi, shape)
    return float(x) if shape == () else x


def distinct(rng, shape, lo=-1.0, hi=1.0, gap=0.05):
    """Entries pairwise at least `gap` apart (no ties for max, sort, ...)."""
    n = int(np.prod(shape))
    grid = np.linspace(lo, hi, n)
    return rng.permutation(grid).reshape(shape) + rng.uniform(0, gap / 4, shape)


def spd(rng, n=3, batch=()):
    m = rng.uniform(-1, 1, batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def wellcond(rng, shape):
    return rng.uniform(-1, 1, shape) + 3.0 * np.eye(shape[-2], shape[-1])


SHAPES = [(), (3,), (2, 3)]


# -- unary elementwise ----------------------------------------------------------------------

def np_abs(x): return np.abs(x)
def np_fabs(x): return np.fabs(x)
def np_negative(x): return np.negative(x)
def np_positive(x): return np.positive(x)
def np_reciprocal(x): return np.reciprocal(x)
def np_exp(x): return np.exp(x)
def np_exp2(x): return np.exp2(x)
def np_expm1(x): return np.expm1(x)
def np_log(x): return np.log(x)
def np_log2(x): return np.log2(x)
def np_log10(x): return np.log10(x)
def np_log1p(x): return np.log1p(x)
def np_sin(x): return np.sin(x)
def np_cos(x): return np.cos(x)
def np_tan(x): return np.tan(x)
def np_arcsin(x): return np.arcsin(x)
def np_arccos(x): return np.arccos(x)
def np_arctan(x): return np.arctan(x)
def np_sinh(x): return np.sinh(x)
def np_cosh(x): return np.cosh(x)
def np_tanh(x): return np.tanh(x)
def np_arcsinh(x): return np.arcsinh(x)
def np_arccosh(x): return np.arccosh(x)
def np_arctanh(x): return np.arctanh(x)
def np_deg2rad(x): return np.deg2rad(x)
def np_rad2deg(x): return np.rad2deg(x)
def np_degrees(x): return np.degrees(x)
def np_radians(x): return np.radians(x)
def np_square(x): return np.square(x)
def np_sqrt(x): return np.sqrt(x)
def np_cbrt(x): return np.cbrt(x)
def np_sinc(x): return np.sinc(x)
def np_nan_to_num(x): return np.nan_to_num(x)
def np_real(x): return np.real(x)
def np_imag(x): return np.imag(x) + x
def np_conj(x): return np.conj(x)
def op_neg(x): return -x
def op_pos(x): return +x
def builtin_abs(x): return abs(x)
def attr_real(x): return x.real
def attr_imag(x): return x.imag + x
def np_clip(x): return np.clip(x, -0.5, 0.5)
def np_clip_array_bounds(x, lo): return np.clip(x, lo, 0.6)


UNARY = [
    (np_abs, real), (np_fabs, real), (np_negative, real), (np_positive, real),
    (np_reciprocal, real), (np_exp, real), (np_exp2, real), (np_expm1, real), (np_log, pos),
    (np_log2, pos), (np_log10, pos), (np_log1p, pos), (np_sin, real), (np_cos, real),
    (np_tan, real), (np_arcsin, lambda r, s: real(r, s, -0.8, 0.8)),
    (np_arccos, lambda r, s: real(r, s, -0.8, 0.8)), (np_arctan, real), (np_sinh, real),
    (np_cosh, real), (np_tanh, real), (np_arcsinh, real),
    (np_arccosh, lambda r, s: pos(r, s, 1.3, 3.0)), (np_arctanh, lambda r, s: real(r, s, -0.8, 0.8)),
    (np_deg2rad, real), (np_rad2deg, real), (np_degrees, real), (np_radians, real),
    (np_square, real), (np_sqrt, pos), (np_cbrt, real), (np_sinc, real), (np_nan_to_num, real),
    (np_real, real), (np_imag, real), (np_conj, real), (op_neg, real), (op_pos, real),
    (builtin_abs, real),
]
for _fn, _dom in UNARY:
    for _shape in SHAPES:
        add(_fn, lambda rng, d=_dom, s=_shape: [d(rng, s)], second_order=True, family="unary",
            name=f"{_fn.__name__}{list(_shape)}")
for _shape in [(3,), (2, 3)]:
    add(attr_real, lambda rng, s=_shape: [real(rng, s)], name=f"attr_real{list(_shape)}")
    add(attr_imag, lambda rng, s=_shape: [real(rng, s)], name=f"attr_imag{list(_shape)}")
    add(np_clip, lambda rng, s=_shape: [real(rng, s) * 0.9 + 0.03], family="unary",
        name=f"np_clip{list(_shape)}")
add(np_clip_array_bounds, lambda rng: [real(rng, (2, 3)), np.full(3, -0.45)], wrt=(0,))

# -- binary elementwise, with broadcasting ----------------------------------------------------

def np_add(x, y): return np.add(x, y)
def np_subtract(x, y): return np.subtract(x, y)
def np_multiply(x, y): return np.multiply(x, y)
def np_divide(x, y): return np.divide(x, y)
def np_true_divide(x, y): return np.true_divide(x, y)
def np_power(x, y): return np.power(x, y)
def np_float_power(x, y): return np.float_power(x, y)
def np_maximum(x, y): return np.maximum(x, y)
def np_minimum(x, y): return np.minimum(x, y)
def np_fmax(x, y): return np.fmax(x, y)
def np_fmin(x, y): return np.fmin(x, y)
def np_logaddexp(x, y): return np.logaddexp(x, y)
def np_logaddexp2(x, y): return np.logaddexp2(x, y)
def np_arctan2(x, y): return np.arctan2(x, y)
def np_hypot(x, y): return np.hypot(x, y)
def np_mod(x, y): return np.mod(x, y)
def np_remainder(x, y): return np.remainder(x, y)
def np_fmod(x, y): return np.fmod(x, y)
def np_copysign(x, y): return np.copysign(x, y)
def op_add(x, y): return x + y
def op_sub(x, y): return x - y
def op_mul(x, y): return x * y
def op_truediv(x, y): return x / y
def op_pow(x, y): return x ** y
def op_mod(x, y): return x % y
def builtin_pow(x, y): return pow(x, y)
def np_divmod(x, y):
    q, r = np.divmod(x, y)
    return q * 0.5 + r
def builtin_divmod(x, y):
    q, r = divmod(x, y)
    return r * q


def _ties_apart(rng, shape):
    return real(rng, shape) + 0.0


BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3))]
BINARY = [
    (np_add, real, real), (np_subtract, real, real), (np_multiply, real, real),
    (np_divide, real, real), (np_true_divide, real, real), (np_power, pos, real),
    (np_float_power, pos, real), (np_maximum, real, real), (np_minimum, real, real),
    (np_fmax, real, real), (np_fmin, real, real), (np_logaddexp, real, real),
    (np_logaddexp2, real, real), (np_arctan2, real, real), (np_hypot, real, real),
    (np_mod, lambda r, s: pos(r, s, 0.1, 0.9), lambda r, s: pos(r, s, 1.1, 2.0)),
    (np_remainder, lambda r, s: pos(r, s, 2.3, 2.9), lambda r, s: pos(r, s, 1.0, 1.1)),
    (np_fmod, lambda r, s: pos(r, s, 2.3, 2.9), lambda r, s: pos(r, s, 1.0, 1.1)),
    (np_copysign, real, real), (op_add, real, real), (op_sub, real, real), (op_mul, real, real),
    (op_truediv, real, real), (op_pow, pos, real),
    (op_mod, lambda r, s: pos(r, s, 2.3, 2.9), lambda r, s: pos(r, s, 1.0, 1.1)),
    (builtin_pow, pos, real),
    (np_divmod, lambda r, s: pos(r, s, 2.3, 2.9), lambda r, s: pos(r, s, 1.0, 1.1)),
    (builtin_divmod, lambda r, s: pos(r, s, 2.3, 2.9), lambda r, s: pos(r, s, 1.0, 1.1)),
]
for _fn, _dx, _dy in BINARY:
    for _sx, _sy in BINARY_SHAPES:
        add(_fn, lambda rng, dx=_dx, dy=_dy, sx=_sx, sy=_sy: [dx(rng, sx), dy(rng, sy)],
            second_order=True, family="binary", name=f"{_fn.__name__}{list(_sx)}{list(_sy)}")


def builtin_max(x, y): return max(x, y)
def builtin_min(x, y): return min(x, y)
def builtin_float(x): return float(x) * x


add(builtin_max, lambda rng: [0.3, -0.2])
add(builtin_max, lambda rng: [-0.3, 0.2], name="builtin_max_right")
add(builtin_min, lambda rng: [0.3, -0.2])
add(builtin_min, lambda rng: [-0.3, 0.2], name="builtin_min_right")
add(builtin_float, lambda rng: [0.7])


def builtin_max3(x, y, z): return max(x, y, z)
def builtin_max4(x, y, z, w): return max(x * y, y, z, w)
def builtin_min3(x, y, z): return min(x, y, z)
def builtin_min4(x, y, z, w): return min(x, y * z, z, w)


# each operand the extremum in turn (ties: tests/rules/test_conventions.py)
for _k in range(3):
    add(builtin_max3, lambda rng, k=_k: list(np.roll([0.9, -0.2, 0.4], k)),
        name=f"builtin_max3_{_k}", second_order=True)
    add(builtin_min3, lambda rng, k=_k: list(np.roll([0.9, -0.2, 0.4], k)),
        name=f"builtin_min3_{_k}", second_order=True)
for _k in range(4):
    add(builtin_max4, lambda rng, k=_k: list(np.roll([0.9, -0.2, 0.4, 0.1], k)),
        name=f"builtin_max4_{_k}", second_order=True)
    add(builtin_min4, lambda rng, k=_k: list(np.roll([0.9, -0.2, 0.4, 0.1], k)),
        name=f"builtin_min4_{_k}", second_order=True)


def np_float64_cast(x): return np.float64(x) * x
def np_float64_cast_array(x): return np.float64(x * x)


def builtin_complex_cast(x): return np.abs(complex(x) * (1.0 + 2.0j)) * x
def np_complex128_cast(x): return np.imag(np.complex128(x) * (2.0 - 1.0j)) * x


add(builtin_complex_cast, lambda rng: [0.7], second_order=True)
add(np_complex128_cast, lambda rng: [real(rng, (2, 3))], second_order=True)
add(np_float64_cast, lambda rng: [0.7], second_order=True)
add(np_float64_cast_array, lambda rng: [real(rng, (2, 3))], second_order=True)


def np_full(x, v): return np.full((2, 3), v) * x
def np_full_like(x, v): return np.full_like(x, v) * x
def np_arange(a, step): return np.arange(a, a + 2.2 * step, step) ** 2
def np_linspace(a, b): return np.linspace(a, b, 5) ** 3
def np_pad_modes(x):
    return np.sum(np.pad(x, ((1, 2), (2, 1)), mode="reflect") ** 2) + \
        np.sum(np.pad(x, 1, mode="edge") ** 3) + \
        np.pad(x, ((0, 1), (1, 0)), mode="wrap") ** 2 * np.pad(x, ((1, 0), (0, 1)),
                                                               mode="symmetric")


add(np_full, lambda rng: [real(rng, (2, 3)), real(rng, (3,))])
add(np_full_like, lambda rng: [real(rng, (2, 3)), real(rng, ())])
add(np_arange, lambda rng: [real(rng, ()), pos(rng, (), 0.5, 1.0)], second_order=True)
add(np_linspace, lambda rng: [real(rng, (2,)), real(rng, ())], second_order=True)
add(np_pad_modes, lambda rng: [real(rng, (3, 4))], second_order=True)


def np_heaviside(x1, x2): return np.heaviside(x1, x2) * x1
def np_heaviside_at_step(x1, x2): return np.heaviside(x1, x2)


add(np_heaviside, lambda rng: [real(rng, (2, 3)), real(rng, (3,))], family="binary")
# where x1 == 0 the value is x2's: its derivative there is 1 (x1 held exactly at the step)
add(np_heaviside_at_step, lambda rng: [np.array([[0.0, 0.5, -0.5], [0.3, 0.0, 0.0]]),
                                       real(rng, (2, 3))], wrt=(1,))


def np_where(c, x, y): return np.where(c, x, y)


add(np_where, lambda rng: [np.array([True, False, True]), real(rng, (3,)), real(rng, (2, 3))],
    wrt=(1, 2), family="binary")

# -- math -------------------------------------------------------------------------------------

def m_sin(x): return math.sin(x)
def m_cos(x): return math.cos(x)
def m_tan(x): return math.tan(x)
def m_asin(x): return math.asin(x)
def m_acos(x): return math.acos(x)
def m_atan(x): return math.atan(x)
def m_sinh(x): return math.sinh(x)
def m_cosh(x): return math.cosh(x)
def m_tanh(x): return math.tanh(x)
def m_asinh(x): return math.asinh(x)
def m_acosh(x): return math.acosh(x + 2.0)
def m_atanh(x): return math.atanh(x * 0.8)
def m_exp(x): return math.exp(x)
def m_exp2(x): return math.exp2(x)
def m_expm1(x): return math.expm1(x)
def m_log(x): return math.log(x + 2.0)
def m_log_base(x, b): return math.log(x + 2.0, b + 3.0)
def m_log1p(x): return math.log1p(x)
def m_log2(x): return math.log2(x + 2.0)
def m_log10(x): return math.log10(x + 2.0)
def m_sqrt(x): return math.sqrt(x + 2.0)
def m_cbrt(x): return math.cbrt(x)
def m_pow(x, y): return math.pow(x + 2.0, y)
def m_atan2(y, x): return math.atan2(y, x)
def m_hypot(x, y): return math.hypot(x, y)
def m_hypot1(x): return math.hypot(x)
def m_hypot3(x, y, z): return math.hypot(x, y, z)
def m_hypot4(x, y, z, w): return math.hypot(x, y, z * w, w)
def m_fabs(x): return math.fabs(x)
def m_erf(x): return math.erf(x)
def m_erfc(x): return math.erfc(x)
def m_degrees(x): return math.degrees(x)
def m_radians(x): return math.radians(x)
def m_ldexp(x): return math.ldexp(x, 3)
def m_fmod(x, y): return math.fmod(x + 2.5, y + 1.5)
def m_remainder(x, y): return math.remainder(x + 2.6, y + 1.5)
def m_copysign(x, y): return math.copysign(x, y)
def m_gamma(x): return math.gamma(x + 2.0)
def m_gamma_small(x): return math.gamma(x * 0.3 + 0.5)
def m_lgamma(x): return math.lgamma(x + 2.0)
def m_lgamma_big(x): return math.lgamma(x + 9.0)
def m_fsum(x, y): return math.fsum([x, y, x * y])
def builtin_sum(x, y): return sum([x, y, x * y])
def builtin_sum_arrays(x, y): return sum([x, y])
def m_prod(x, y): return math.prod([x, y, x + 3.0])
def m_dist(x, y): return math.dist([x, y], [y, 2.0])


# math.exp2 and math.cbrt exist from Python 3.11 (their rules are registered only there)
_SINCE_311 = [m_exp2, m_cbrt] if hasattr(math, "cbrt") else []
for _fn in [m_sin, m_cos, m_tan, m_asin, m_acos, m_atan, m_sinh, m_cosh, m_tanh, m_asinh,
            m_acosh, m_atanh, m_exp, m_expm1, m_log, m_log1p, m_log2, m_log10, m_sqrt,
            m_fabs, m_erf, m_erfc, m_degrees, m_radians, m_ldexp, m_gamma,
            m_gamma_small, m_lgamma, m_lgamma_big, *_SINCE_311]:
    add(_fn, lambda rng: [real(rng, (), -0.9, 0.9)], second_order=True, family="math")
for _fn in [m_log_base, m_pow, m_atan2, m_hypot, m_fmod, m_remainder, m_copysign, m_fsum,
            builtin_sum, m_prod]:
    add(_fn, lambda rng: [real(rng, (), -0.9, 0.9), real(rng, (), -0.9, 0.9)],
        second_order=True, family="math")
add(m_dist, lambda rng: [real(rng, ()), real(rng, ())])
add(m_hypot1, lambda rng: [real(rng, (), -0.9, 0.9)], second_order=True, family="math")
add(m_hypot3, lambda rng: [real(rng, ()) for _ in range(3)], second_order=True, family="math")
add(m_hypot4, lambda rng: [real(rng, ()) for _ in range(4)], second_order=True, family="math")
add(builtin_sum_arrays, lambda rng: [real(rng, (3,)), real(rng, (3,))])

# -- reductions and scans -----------------------------------------------------------------

def np_sum(x): return np.sum(x)
def np_sum_axis0(x): return np.sum(x, axis=0)
def np_sum_axis1_keep(x): return np.sum(x, axis=1, keepdims=True)
def np_sum_axes(x): return np.sum(x, axis=(0, 2))
def method_sum(x): return x.sum(axis=-1)
def method_item(x): return x.item() * x
def np_mean(x): return np.mean(x)
def np_mean_axis1(x): return np.mean(x, axis=1)
def np_mean_keep(x): return np.mean(x, axis=0, keepdims=True)
def np_sum_where_initial(x):
    return np.sum(x, axis=1, where=np.array([True, False, True]), initial=0.5)
def np_mean_where_rows(x):
    keep = np.array([[True, False, True], [False, True, True]])
    return np.mean(x, axis=-1, keepdims=True, where=keep)
def np_prod_where(x): return np.prod(x, axis=-1, where=[True, False, True, True])
def np_prod_where_initial(x):
    keep = np.array([[True, False, True, True], [False, True, True, False], [True] * 4])
    return np.prod(x, axis=(0, 1), where=keep, initial=1.5, keepdims=True)
def np_max_where(x):
    keep = np.array([[True, False, True, True], [False, True, True, False], [True] * 4])
    return np.max(x, axis=1, where=keep, initial=-5.0)
def np_amin_initial(x): return np.amin(x, axis=0, initial=-0.5)
def np_var_where(x):
    keep = np.array([[True, False, True, True], [False, True, True, True], [True] * 4])
    return np.var(x, axis=-1, ddof=1, where=keep)
def np_std_where(x): return np.std(x, axis=(0, 1), keepdims=True, where=[True, True, False, True])
def np_median(x): return np.median(x)
def np_median_axis1(x): return np.median(x, axis=1)
def np_quantile_axis0(x): return np.quantile(x, 0.3, axis=0)
def np_quantile_tuple_keep(x): return np.quantile(x, 0.8, axis=(0, -1), keepdims=True)
def np_percentile_last(x): return np.percentile(x, 40.0, axis=-1)
def np_percentile_all_keep(x): return np.percentile(x, 65.0, keepdims=True)
def np_var(x): return np.var(x)
def np_var_axis0_ddof(x): return np.var(x, axis=0, ddof=1)
def np_var_keep(x): return np.var(x, axis=1, keepdims=True)
def np_std(x): return np.std(x)
def np_std_axis1_ddof(x): return np.std(x, axis=1, ddof=1)
def np_std_keep(x): return np.std(x, axis=0, keepdims=True)
def np_prod(x): return np.prod(x)
def np_prod_axis1(x): return np.prod(x, axis=1)
def np_prod_keep(x): return np.prod(x, axis=0, keepdims=True)
def np_max(x): return np.max(x)
def np_max_axis0(x): return np.max(x, axis=0)
def np_amax_keep(x): return np.amax(x, axis=1, keepdims=True)
def np_min(x): return np.min(x)
def np_amin_axis1(x): return np.amin(x, axis=1)
def np_min_keep(x): return np.min(x, axis=0, keepdims=True)
def np_ptp(x): return np.ptp(x)
def np_ptp_axis0(x): return np.ptp(x, axis=0)
def np_ptp_keep(x): return np.ptp(x, axis=1, keepdims=True)
def np_cumsum(x): return np.cumsum(x)
def np_cumsum_axis0(x): return np.cumsum(x, axis=0)
def np_cumsum_axis1(x): return np.cumsum(x, axis=1)
def np_cumprod(x): return np.cumprod(x)
def np_cumprod_axis0(x): return np.cumprod(x, axis=0)
def np_cumprod_axis1(x): return np.cumprod(x, axis=-1)
def np_trace(x): return np.trace(x)
def np_trace_offset(x): return np.trace(x, 1)
def np_trace_3d(x): return np.trace(x, 0, 1, 2)
def np_average(x): return np.average(x)
def np_average_axis(x): return np.average(x, axis=1)
def np_average_weights(x, w): return np.average(x, axis=0, weights=w)
def np_average_full_weights(x, w): return np.average(x, weights=w)
def np_nansum(x): return np.nansum(x)
def np_nansum_axis0(x): return np.nansum(x, axis=0)
def np_nansum_keep(x): return np.nansum(x, axis=1, keepdims=True)
def np_nanmean(x): return np.nanmean(x)
def np_nanmean_axis1(x): return np.nanmean(x, axis=1)
def np_nanmean_keep(x): return np.nanmean(x, axis=0, keepdims=True)
def np_nansum_with_nan(x, holes): return np.nansum(x + holes, axis=0)
def np_nanmean_with_nan(x, holes): return np.nanmean(x + holes, axis=1)
def np_nanmax(x): return np.nanmax(x, axis=1)
def np_nanmin_keep(x): return np.nanmin(x, axis=0, keepdims=True)
def np_nanmax_with_nan(x, holes): return np.nanmax(x + holes, axis=0)
def np_nanmin_with_nan(x, holes): return np.nanmin(x + holes)
def np_diff(x): return np.diff(x)
def np_diff_prepend(x, p): return np.diff(x, prepend=p)
def np_diff_both(x, p, q): return np.diff(x, 2, axis=0, prepend=p, append=q)
def np_polyval(p, x): return np.polyval(p, x)
def np_polyval_list(a, x): return np.polyval([a, 0.5, a * a], x)
def np_interp(x, fp): return np.interp(x, [0.0, 0.5, 1.0, 1.5], fp)
def np_interp_ends(x, left): return np.interp(x, [0.0, 0.5, 1.5], [1.0, 3.0, 2.0], left, 0.5)
def np_trapezoid(y, dx): return np.trapezoid(y, dx=dx, axis=0)
def np_trapezoid_x(y): return np.trapezoid(y, [0.0, 1.0, 3.0, 4.0])
def np_convolve(a, v): return np.convolve(a, v)
def np_convolve_same(a, v): return np.convolve(a, v, "same")
def np_convolve_valid(a, v): return np.convolve(a, v, mode="valid")
def np_correlate(a, v): return np.correlate(a, v)
def np_correlate_same(a, v): return np.correlate(a, v, "same")
def np_correlate_full(a, v): return np.correlate(a, v, mode="full")
def np_diff_axis0(x): return np.diff(x, axis=0)
def np_diff_n2(x): return np.diff(x, 2)


def _mat(rng):
    return distinct(rng, (3, 4))


for _fn in [np_sum, np_sum_axis0, np_sum_axis1_keep, method_sum, np_mean, np_mean_axis1,
            np_mean_keep, np_var, np_var_axis0_ddof, np_var_keep, np_std, np_std_axis1_ddof,
            np_std_keep, np_max, np_max_axis0, np_amax_keep, np_min, np_amin_axis1,
            np_min_keep, np_ptp, np_ptp_axis0, np_ptp_keep, np_cumsum, np_cumsum_axis0,
            np_cumsum_axis1, np_trace, np_trace_offset, np_average, np_average_axis, np_nansum,
            np_nansum_axis0, np_nansum_keep, np_nanmean, np_nanmean_axis1, np_nanmean_keep,
            np_diff, np_diff_axis0, np_diff_n2]:
    add(_fn, lambda rng: [_mat(rng)], second_order=True, family="reduction")
for _fn in [np_prod, np_prod_axis1, np_prod_keep, np_cumprod, np_cumprod_axis0,
            np_cumprod_axis1]:
    add(_fn, lambda rng: [real(rng, (3, 4), 0.5, 1.5)], second_order=True, family="reduction")
add(np_nanmax, lambda rng: [distinct(rng, (3, 4))], second_order=True, family="reduction")
add(np_nanmin_keep, lambda rng: [distinct(rng, (3, 4))], second_order=True, family="reduction")
add(np_diff_prepend, lambda rng: [real(rng, (3, 4)), real(rng)], second_order=True,
    family="reduction")
add(np_diff_both, lambda rng: [real(rng, (3, 4)), real(rng, (1, 4)), real(rng, (2, 4))],
    second_order=True, family="reduction")
add(np_polyval, lambda rng: [real(rng, (4,)), real(rng, (2, 3))], second_order=True,
    family="product")
add(np_polyval_list, lambda rng: [real(rng), real(rng, (3,))], second_order=True,
    family="product")
add(np_interp, lambda rng: [np.array([-0.3, 0.2, 0.7, 1.2, 1.9]), real(rng, (4,))],
    second_order=True, family="product")
add(np_interp_ends, lambda rng: [np.array([-0.3, 0.2, 0.7, 1.9]), real(rng)],
    second_order=True, family="product")
add(np_trapezoid, lambda rng: [real(rng, (3, 2)), pos(rng)], second_order=True,
    family="reduction")
add(np_trapezoid_x, lambda rng: [real(rng, (2, 4))], second_order=True, family="reduction")
for _fn in [np_convolve, np_convolve_same, np_convolve_valid, np_correlate, np_correlate_same,
            np_correlate_full]:
    add(_fn, lambda rng: [real(rng, (4,)), real(rng, (3,))], second_order=True, family="product")
    add(_fn, lambda rng: [real(rng, (2,)), real(rng, (5,))], family="product",
        name=_fn.__name__ + "_longer_v")
for _fn in [np_nanmax_with_nan, np_nanmin_with_nan]:
    add(_fn, lambda rng: [distinct(rng, (3, 4)),
                          np.where(np.arange(12).reshape(3, 4) % 5 == 1, np.nan, 0.0)],
        wrt=(0,), family="reduction")
for _fn in [np_nansum_with_nan, np_nanmean_with_nan]:
    add(_fn, lambda rng: [_mat(rng), np.where(np.arange(12).reshape(3, 4) % 5 == 1, np.nan, 0.0)],
        wrt=(0,), family="reduction")
add(np_sum_axes, lambda rng: [real(rng, (2, 3, 2))], family="reduction")
if hasattr(np, "cumulative_sum"):  # (NumPy >= 2.1)
    def np_cumulative_sum_initial(x): return np.cumulative_sum(x, axis=1, include_initial=True)
    def np_cumulative_sum_rows(x): return np.cumulative_sum(x, axis=-2)

    for _fn in [np_cumulative_sum_initial, np_cumulative_sum_rows]:
        add(_fn, lambda rng: [real(rng, (3, 4))], second_order=True, family="reduction")
def np_ediff1d(x): return np.ediff1d(x)
def np_ediff1d_parts(x, b, e): return np.ediff1d(x, to_end=e, to_begin=b)


add(np_ediff1d, lambda rng: [real(rng, (3, 4))], second_order=True, family="reduction")
add(np_ediff1d_parts, lambda rng: [real(rng, (4,)), real(rng, (2,)), real(rng)],
    second_order=True, family="reduction")
for _fn in [np_median, np_median_axis1, np_quantile_axis0, np_quantile_tuple_keep,
            np_percentile_last, np_percentile_all_keep]:
    add(_fn, lambda rng: [distinct(rng, (3, 4))], second_order=True, family="reduction")
for _fn in [np_prod_where, np_prod_where_initial]:
    add(_fn, lambda rng: [real(rng, (3, 4), 0.5, 1.5)], second_order=True, family="reduction")
for _fn in [np_max_where, np_amin_initial, np_var_where, np_std_where]:
    add(_fn, lambda rng: [distinct(rng, (3, 4))], second_order=True, family="reduction")


def np_nanprod_with_nan(x, holes): return np.nanprod(x + holes, axis=0)
def np_nanprod_keep(x): return np.nanprod(x, axis=(0, -1), keepdims=True)
def np_nanvar_with_nan(x, holes): return np.nanvar(x + holes, axis=1, ddof=1)
def np_nanvar_keep(x): return np.nanvar(x, axis=-1, keepdims=True)
def np_nanstd_with_nan(x, holes): return np.nanstd(x + holes)
def np_nanstd_axis0(x): return np.nanstd(x, axis=0, ddof=1)
def np_nancumsum_with_nan(x, holes): return np.nancumsum(x + holes, axis=1)
def np_nancumsum(x): return np.nancumsum(x)
def np_nancumprod_with_nan(x, holes): return np.nancumprod(x + holes, axis=-2)
def np_nancumprod(x): return np.nancumprod(x)


for _fn in [np_nanprod_with_nan, np_nanvar_with_nan, np_nanstd_with_nan,
            np_nancumsum_with_nan, np_nancumprod_with_nan]:
    add(_fn, lambda rng: [pos(rng, (3, 4)),
                          np.where(np.arange(12).reshape(3, 4) % 5 == 1, np.nan, 0.0)],
        wrt=(0,), second_order=True, family="reduction")
for _fn in [np_nanprod_keep, np_nanvar_keep, np_nanstd_axis0, np_nancumsum, np_nancumprod]:
    add(_fn, lambda rng: [pos(rng, (3, 4))], second_order=True, family="reduction")
add(np_sum_where_initial, lambda rng: [real(rng, (2, 3))], family="reduction")
add(np_mean_where_rows, lambda rng: [real(rng, (2, 3))], family="reduction")
add(np_trace_3d, lambda rng: [real(rng, (2, 3, 3))], family="reduction")
add(np_average_weights, lambda rng: [real(rng, (3, 4)), pos(rng, (3,))], family="reduction")
add(np_average_full_weights, lambda rng: [real(rng, (3, 4)), pos(rng, (3, 4))],
    family="reduction")
for _shape in [(5,), (2, 3)]:
    add(np_max, lambda rng, s=_shape: [distinct(rng, s)], name=f"np_max{list(_shape)}")
    add(np_sum, lambda rng, s=_shape: [real(rng, s)], name=f"np_sum{list(_shape)}")

# -- products -------------------------------------------------------------------------------

def np_dot(a, b): return np.dot(a, b)
def method_dot(a, b): return a.dot(b)
def np_matmul(a, b): return np.matmul(a, b)
def op_matmul(a, b): return a @ b
def la_matmul(a, b): return np.linalg.matmul(a, b)
def np_tensordot(a, b): return np.tensordot(a, b, axes=1)
def np_tensordot_pairs(a, b): return np.tensordot(a, b, axes=([0, 2], [1, 0]))
def la_tensordot(a, b): return np.linalg.tensordot(a, b, axes=1)
def np_inner(a, b): return np.inner(a, b)
def np_vdot(a, b): return np.vdot(a, b)
def np_outer(a, b): return np.outer(a, b)
def la_outer(a, b): return np.linalg.outer(a, b)
def np_einsum_mm(a, b): return np.einsum("ij,jk->ik", a, b)
def np_einsum_implicit(a, b): return np.einsum("ij,jk", a, b)
def np_einsum_sum(a, b): return np.einsum("ij,k->ik", a, b)
def np_einsum_one(a): return np.einsum("ijk->ki", a)
def np_kron(a, b): return np.kron(a, b)
def np_cross(a, b): return np.cross(a, b)
def np_vecdot(a, b): return np.vecdot(a, b)
def la_vecdot(a, b): return np.linalg.vecdot(a, b)


PRODUCTS = [
    (np_dot, [(3,), (3,)]), (np_dot, [(2, 3), (3,)]), (np_dot, [(2, 3), (3, 4)]),
    (np_dot, [(), (2, 3)]), (np_dot, [(2, 2, 3), (3, 4)]), (method_dot, [(2, 3), (3, 2)]),
    (np_matmul, [(2, 3), (3, 4)]), (np_matmul, [(3,), (3, 2)]), (np_matmul, [(2, 3), (3,)]),
    (np_matmul, [(2, 2, 3), (3, 4)]), (op_matmul, [(3,), (3,)]), (op_matmul, [(2, 3), (3, 2)]),
    (la_matmul, [(2, 3), (3, 2)]), (np_tensordot, [(2, 3), (3, 4)]),
    (np_tensordot_pairs, [(2, 3, 4), (4, 2, 3)]), (la_tensordot, [(2, 3), (3, 2)]),
    (np_vdot, [(3,), (3,)]), (np_vdot, [(2, 3), (3, 2)]),
    (np_inner, [(3,), (3,)]), (np_inner, [(2, 3), (4, 3)]), (np_inner, [(), (3,)]),
    (np_outer, [(3,), (2,)]), (np_outer, [(2, 2), (3,)]), (la_outer, [(3,), (2,)]),
    (np_einsum_mm, [(2, 3), (3, 4)]), (np_einsum_implicit, [(2, 3), (3, 4)]),
    (np_einsum_sum, [(2, 3), (4,)]), (np_kron, [(2,), (3,)]), (np_kron, [(2, 3), (2, 2)]),
    (np_cross, [(3,), (3,)]), (np_cross, [(2, 3), (3,)]), (np_vecdot, [(2, 3), (3,)]),
    (la_vecdot, [(2, 3), (2, 3)]),
]
for _fn, (_sa, _sb) in PRODUCTS:
    add(_fn, lambda rng, sa=_sa, sb=_sb: [real(rng, sa), real(rng, sb)], second_order=True,
        family="product", name=f"{_fn.__name__}{list(_sa)}{list(_sb)}")
add(np_einsum_one, lambda rng: [real(rng, (2, 3, 2))], second_order=True, family="product")

# -- shape, layout, construction ------------------------------------------------------------

def np_reshape(x): return np.reshape(x, (4, 3))
def method_reshape(x): return x.reshape(2, 6)
def np_ravel(x): return np.ravel(x)
def np_ravel_F(x): return np.ravel(x, order="F") * np.arange(12.0)
def np_ravel_K_of_a_transpose(x): return np.ravel(x.T[::-1], order="K") * np.arange(12.0)
def np_ravel_K(x): return np.ravel(x, "K") * np.arange(12.0)
def np_reshape_F(x): return np.reshape(x, (2, 6), order="F") * np.arange(6.0)
def method_flatten_F(x): return x.flatten("F") * np.arange(12.0)
def method_flatten(x): return x.flatten()
def np_squeeze(x): return np.squeeze(x)
def np_squeeze_axis(x): return np.squeeze(x, axis=1)
def np_expand_dims(x): return np.expand_dims(x, 1)
def np_transpose(x): return np.transpose(x)
def np_transpose_axes(x): return np.transpose(x, (1, 2, 0))
def attr_T(x): return x.T
def np_swapaxes(x): return np.swapaxes(x, 0, 2)
def np_moveaxis(x): return np.moveaxis(x, 0, -1)
def np_broadcast_to(x): return np.broadcast_to(x, (2, 3, 4))
def np_atleast_1d(x): return np.atleast_1d(x)
def np_atleast_2d(x): return np.atleast_2d(x)
def np_atleast_3d(x): return np.atleast_3d(x)
def np_copy(x): return np.copy(x)
def np_asarray(x): return np.asarray(x)
def np_array_nested(x, y): return np.array([[x, y], [y * x, 2.0]])
def np_array_of_arrays(x, y): return np.array([x, y])
def np_concatenate(x, y): return np.concatenate([x, y], axis=1)
def np_concat0(x, y): return np.concatenate((x, y))
def np_stack(x, y): return np.stack([x, y], axis=1)
def np_vstack(x, y): return np.vstack([x, y])
def np_vstack_2d(x, y): return np.vstack([x, y])
def np_hstack(x, y): return np.hstack([x, y])
def np_hstack_2d(x, y): return np.hstack((x, y))
def np_column_stack(x, y): return np.column_stack([x, y])
def np_split(x):
    a, b = np.split(x, [1], axis=1)
    return a * 2.0 + b[:, :1], b
def np_split_sections(x):
    parts = np.split(x, 2)
    return parts[1] * parts[0]
def np_split_one_used(x):
    parts = np.split(x, 3, axis=1)
    return parts[2]
def np_array_split(x):
    a, b = np.array_split(x, 2, axis=1)
    return np.sum(a) * b
def np_unstack(x):
    a, b, c = np.unstack(x, axis=1)
    return a * b + c
def np_repeat(x): return np.repeat(x, 2)
def np_repeat_axis(x): return np.repeat(x, 3, axis=1)
def np_repeat_counts(x): return np.repeat(x, np.array([1, 0, 2]), axis=0)
def method_repeat(x): return x.repeat(2, axis=0)
def np_tile(x): return np.tile(x, 2)
def np_tile_2d(x): return np.tile(x, (2, 1, 3))
def np_roll(x): return np.roll(x, 2)
def np_roll_axis(x): return np.roll(x, (1, -1), axis=(0, 1))
def np_flip(x): return np.flip(x)
def np_flip_axis(x): return np.flip(x, 1)
def np_fliplr(x): return np.fliplr(x)
def np_flipud(x): return np.flipud(x)
def np_rot90(x): return np.rot90(x)
def np_rot90_k(x): return np.rot90(x, 3, (1, 0))
def np_pad(x): return np.pad(x, 1)
def np_pad_widths(x): return np.pad(x, ((1, 0), (2, 1)), constant_values=0.5)
def np_pad_reflect(x): return np.pad(x, 1, mode="reflect")
def np_diag_vector(x): return np.diag(x, 1)
def np_diag_matrix(x): return np.diag(x, -1)
def np_diagonal(x): return np.diagonal(x)
def np_diagonal_3d(x): return np.diagonal(x, 1, 0, 2)
def method_diagonal(x): return x.diagonal()
def np_triu(x): return np.triu(x)
def np_tril(x): return np.tril(x, -1)
def np_matrix_transpose(x): return np.matrix_transpose(x)
def la_matrix_transpose(x): return np.linalg.matrix_transpose(x)
def method_astype(x): return x.astype(np.float64) * 2.0
def np_astype(x): return np.astype(x, np.float64) * 2.0
def np_select(x, y):
    return np.select([x > 0.3, x < -0.3], [x * y, y], 2.0 * x)
def np_sort(x): return np.sort(x)
def np_sort_axis0(x): return np.sort(x, axis=0)
def np_sort_flat(x): return np.sort(x, axis=None)
def np_take(x): return np.take(x, np.array([0, 2, 2, 5]))
def np_take_axis(x): return np.take(x, np.array([[2, 0], [0, 0]]), axis=1)
def np_take_scalar(x): return np.take(x, 1, axis=0)
def method_take(x): return x.take(np.array([1, 1]), axis=0)
def np_take_along_axis(x): return np.take_along_axis(x, np.argsort(x, axis=1), axis=1)
def np_take_along_axis0(x): return np.take_along_axis(x, np.array([[0, 2, 1, 1]]), axis=0)
def getitem_basic(x): return x[1:, ::2]
def getitem_int(x): return x[1]
def getitem_fancy(x): return x[np.array([0, 2, 0])]
def getitem_mask(x): return x[x > 0.0]


MATS = {
    "np_reshape": (3, 4), "method_reshape": (3, 4), "np_ravel": (3, 4),
    "np_ravel_F": (3, 4), "np_ravel_K_of_a_transpose": (3, 4), "np_ravel_K": (3, 4),
    "np_reshape_F": (3, 4), "method_flatten_F": (3, 4),
    "method_flatten": (3, 4), "np_squeeze": (3, 1, 2), "np_squeeze_axis": (3, 1, 2),
    "np_expand_dims": (3, 2), "np_transpose": (3, 2), "np_transpose_axes": (2, 3, 4),
    "attr_T": (3, 2), "np_swapaxes": (2, 3, 4), "np_moveaxis": (2, 3, 4),
    "np_broadcast_to": (3, 1), "np_copy": (3, 2), "np_asarray": (3, 2), "np_repeat": (2, 3),
    "np_repeat_axis": (2, 3), "np_repeat_counts": (3, 2), "method_repeat": (2, 2),
    "np_tile": (2, 3), "np_tile_2d": (2, 3), "np_roll": (2, 3), "np_roll_axis": (2, 3),
    "np_flip": (2, 3), "np_flip_axis": (2, 3), "np_fliplr": (2, 3), "np_flipud": (2, 3),
    "np_rot90": (2, 3), "np_rot90_k": (2, 3, 2), "np_pad": (2, 3), "np_pad_widths": (2, 3),
    "np_diag_vector": (3,), "np_diag_matrix": (3, 4), "np_diagonal": (3, 4),
    "np_diagonal_3d": (3, 2, 4), "method_diagonal": (3, 3), "np_triu": (3, 4),
    "np_tril": (4, 3), "np_matrix_transpose": (2, 3, 4), "la_matrix_transpose": (3, 2),
    "method_astype": (2, 3), "np_astype": (3,), "np_sort": (2, 4), "np_sort_axis0": (3, 2),
    "np_sort_flat": (2, 3), "np_take": (2, 3), "np_take_axis": (2, 3), "np_take_scalar": (3, 2),
    "method_take": (3, 2), "np_take_along_axis": (3, 4), "np_take_along_axis0": (3, 4),
    "getitem_basic": (3, 4), "getitem_int": (3, 4), "getitem_fancy": (3, 2),
    "getitem_mask": (3, 4), "np_split": (2, 3), "np_split_sections": (4, 2),
    "np_split_one_used": (2, 3), "np_array_split": (2, 5), "np_unstack": (2, 3),
    "np_atleast_3d": (3, 2),
}
for _name, _shape in MATS.items():
    add(globals()[_name], lambda rng, s=_shape: [distinct(rng, s)], family="shape",
        core_bugs=None)
add(np_pad_reflect, lambda rng: [real(rng, (3, 4))], family="shape")
for _fn in [np_atleast_1d, np_atleast_2d, np_atleast_3d]:
    add(_fn, lambda rng: [real(rng)], family="shape", name=_fn.__name__ + "_scalar")
    add(_fn, lambda rng: [real(rng, (3,))], family="shape", name=_fn.__name__ + "_vector")
for _fn, _sx, _sy in [
        (np_array_nested, (), ()), (np_array_of_arrays, (3,), (3,)),
        (np_concatenate, (2, 3), (2, 1)), (np_concat0, (2, 3), (1, 3)),
        (np_stack, (2, 3), (2, 3)), (np_vstack, (3,), (3,)), (np_vstack_2d, (2, 3), (3,)),
        (np_hstack, (3,), (2,)), (np_hstack_2d, (2, 3), (2, 1)),
        (np_column_stack, (3,), (3, 2)), (np_select, (2, 3), (2, 3))]:
    add(_fn, lambda rng, sx=_sx, sy=_sy: [real(rng, sx), real(rng, sy)], family="shape",
        name=f"{_fn.__name__}{list(_sx)}{list(_sy)}")

# -- numpy.linalg ---------------------------------------------------------------------------

def la_inv(a): return np.linalg.inv(a)
def la_solve(a, b): return np.linalg.solve(a, b)
def la_det(a): return np.linalg.det(a)
def la_cofactor(a): return cofactor(a)
def la_slogdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign * logdet
def la_cholesky(a): return np.linalg.cholesky(0.5 * (a + a.T))
def la_eigh(a):
    w, v = np.linalg.eigh(0.5 * (a + np.swapaxes(a, -1, -2)))
    return w, v * v[..., :1, :]  # sign-invariant in each eigenvector
def la_eigh_values_only(a):
    w, v = np.linalg.eigh(0.5 * (a + a.T))
    return w
def la_eigvalsh(a): return np.linalg.eigvalsh(0.5 * (a + a.T))
def la_svd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return s, u * vh[:, :1].T, vh * u[:1].T  # sign-invariant in each singular pair
def la_svd_square(a):
    u, s, vh = np.linalg.svd(a)
    return s, u * vh[:, :1].T
def la_svd_values(a): return np.linalg.svd(a, compute_uv=False)
def la_svdvals(a): return np.linalg.svdvals(a)
def la_qr(a):
    q, r = np.linalg.qr(a)
    return q, r
def la_qr_r_only(a):
    q, r = np.linalg.qr(a)
    return r
def la_pinv(a): return np.linalg.pinv(a)
def la_norm(a): return np.linalg.norm(a)
def la_norm_axis(a): return np.linalg.norm(a, axis=1, keepdims=True)
def la_norm_1(a): return np.linalg.norm(a, 1)
def la_norm_inf(a): return np.linalg.norm(a, np.inf)
def la_norm_3(a): return np.linalg.norm(a, 3)
def la_norm_fro(a): return np.linalg.norm(a, "fro")
def la_norm_nuc(a): return np.linalg.norm(a, "nuc")
def la_norm_spectral(a): return np.linalg.norm(a, 2)
def la_vector_norm(a): return np.linalg.vector_norm(a, axis=0)
def la_vector_norm_1(a): return np.linalg.vector_norm(a, ord=1)
def la_matrix_power(a): return np.linalg.matrix_power(a, 3)
def la_matrix_power_neg(a): return np.linalg.matrix_power(a, -2)
def la_matrix_power_0(a): return np.linalg.matrix_power(a, 0) + a


for _fn, _make in [
        (la_inv, lambda rng: [wellcond(rng, (3, 3))]),
        (la_inv, lambda rng: [wellcond(rng, (2, 3, 3))]),
        (la_solve, lambda rng: [wellcond(rng, (3, 3)), real(rng, (3,))]),
        (la_solve, lambda rng: [wellcond(rng, (3, 3)), real(rng, (3, 2))]),
        (la_det, lambda rng: [wellcond(rng, (3, 3))]),
        (la_det, lambda rng: [wellcond(rng, (2, 3, 3))]),
        (la_cofactor, lambda rng: [wellcond(rng, (3, 3))]),
        (la_cofactor, lambda rng: [wellcond(rng, (2, 3, 3))]),
        (la_slogdet, lambda rng: [wellcond(rng, (3, 3))]),
        (la_cholesky, lambda rng: [spd(rng)]), (la_eigh, lambda rng: [real(rng, (3, 3))]),
        (la_eigh, lambda rng: [real(rng, (2, 3, 3))]),
        (la_eigh_values_only, lambda rng: [real(rng, (3, 3))]),
        (la_eigvalsh, lambda rng: [real(rng, (3, 3))]), (la_svd, lambda rng: [real(rng, (4, 3))]),
        (la_svd, lambda rng: [real(rng, (3, 4))]), (la_svd_square, lambda rng: [real(rng, (3, 3))]),
        (la_svd_values, lambda rng: [real(rng, (4, 3))]),
        (la_svdvals, lambda rng: [real(rng, (3, 4))]), (la_qr, lambda rng: [real(rng, (4, 3))]),
        (la_qr, lambda rng: [real(rng, (3, 3))]), (la_qr_r_only, lambda rng: [real(rng, (4, 3))]),
        (la_pinv, lambda rng: [real(rng, (4, 3))]), (la_pinv, lambda rng: [real(rng, (2, 3))]),
        (la_norm, lambda rng: [real(rng, (3,))]), (la_norm, lambda rng: [real(rng, (2, 3))]),
        (la_norm_axis, lambda rng: [real(rng, (2, 3))]), (la_norm_1, lambda rng: [real(rng, (4,))]),
        (la_norm_inf, lambda rng: [distinct(rng, (4,))]), (la_norm_3, lambda rng: [real(rng, (4,))]),
        (la_norm_fro, lambda rng: [real(rng, (2, 3))]), (la_norm_nuc, lambda rng: [real(rng, (3, 2))]),
        (la_norm_spectral, lambda rng: [real(rng, (3, 2))]),
        (la_vector_norm, lambda rng: [real(rng, (3, 2))]),
        (la_vector_norm_1, lambda rng: [real(rng, (3, 2))]),
        (la_matrix_power, lambda rng: [real(rng, (3, 3))]),
        (la_matrix_power_neg, lambda rng: [wellcond(rng, (3, 3))]),
        (la_matrix_power_0, lambda rng: [real(rng, (3, 3))])]:
    add(_fn, _make, family="linalg", rtol=1e-4,
        name=f"{_fn.__name__}{list(np.shape(_make(np.random.default_rng(0))[0]))}")

# -- compiler intrinsics and rule helpers that are primitives themselves ----------------------

def prim_unbroadcast(g, x): return unbroadcast(g, x)
def prim_broadcast_like(t, x): return broadcast_like(t, x)
def prim_cast_like(g, x): return cast_like(g * x, x)
def prim_index_add(acc, g): return index_add(acc, np.array([0, 2, 0]), g)
def prim_reshape_items(a, b):
    parts = reshape_items([a, b], [np.zeros(3), np.zeros((2, 2))])
    return parts[0], parts[1]
def prim_astype(x): return _astype(x, np.float64)
def np_fill_diagonal(a, v):  # (lowered to filled_diagonal: a write into a copy)
    b = a * 1.0
    np.fill_diagonal(b, v)
    return b * a
def np_fill_diagonal_cyclic(a, v):  # (a shorter value is repeated along the diagonal)
    b = a * 1.0
    np.fill_diagonal(b, v)
    return b


add(prim_unbroadcast, lambda rng: [real(rng, (2, 3)), real(rng, (3,))], wrt=(0,))
add(prim_broadcast_like, lambda rng: [real(rng, (3,)), real(rng, (2, 3))], wrt=(0,))
add(prim_cast_like, lambda rng: [real(rng, (2, 3)), real(rng, (2, 3))], wrt=(0,))
add(prim_index_add, lambda rng: [real(rng, (4, 2)), real(rng, (3, 2))])
add(prim_reshape_items, lambda rng: [real(rng, (1, 3)), real(rng, (4,))])
add(prim_astype, lambda rng: [real(rng, (3,))])
add(np_fill_diagonal, lambda rng: [real(rng, (3, 4)), real(rng)], second_order=True)
add(np_fill_diagonal, lambda rng: [real(rng, (3, 3, 3)), real(rng, (3,))],
    name="np_fill_diagonal[3-d]")
add(np_fill_diagonal_cyclic, lambda rng: [real(rng, (5, 4)), real(rng, (3,))])
add(np_fill_diagonal_cyclic, lambda rng: [real(rng, (2, 2)), real(rng, (2, 3))],
    name="np_fill_diagonal_cyclic[longer]")

# -- issue #13: forms and rules added after a peer's test-suite found gaps ----------------------

def np_matmul_stack_vec(a, b): return np.matmul(a, b)
def np_einsum_ellipsis(a, b): return np.einsum("...ij,...jk->...ik", a, b)
def np_einsum_three(a, b, c): return np.einsum("ij,jk,kl->il", a, b, c)
def np_einsum_four(a, b, c, d): return np.einsum("i,ij,j,k", a, b, c, d)
def np_einsum_reduce_ellipsis(a): return np.einsum("...i->...", a)
def np_kron_ranks(a, b): return np.kron(a, b)
def np_max_keepdims(x): return np.max(x, axis=None, keepdims=True)
def np_min_keepdims(x): return np.min(x, axis=None, keepdims=True)
def la_norm_nuc_axes(x): return np.linalg.norm(x, "nuc", axis=(0, 1))
def la_norm_2_axes(x): return np.linalg.norm(x, 2, axis=(2, 0), keepdims=True)
def la_norm_1_matrix(x): return np.linalg.norm(x, 1)
def la_norm_inf_axes(x): return np.linalg.norm(x, -np.inf, axis=(1, 2))
def np_vstack_one(x): return np.vstack(x)
def np_hstack_one(x): return np.hstack(x)
def np_column_stack_one(x): return np.column_stack(x)
def np_select_broadcast(x, y):
    return np.select([x > 0.3], [y], 0.5)
def np_std_axis(x): return np.std(x, axis=1, keepdims=True)
def np_array_dtype(x): return np.array([x, 2.0 * x], dtype=float)
def np_asarray_dtype(x): return np.asarray(x, dtype=np.float64) * x
def np_cross_axes(a, b): return np.cross(a, b, axisa=0, axisb=1, axisc=0)
def np_cross_axis(a, b): return np.cross(a, b, axis=0)
def np_rollaxis(x): return np.rollaxis(x, 2, 0)
def np_rollaxis_start(x): return np.rollaxis(x, 0, 3)
def np_partition(x): return np.partition(x, 2)
def np_partition_flat(x): return np.partition(x, 1, axis=None)
def np_append(x, y): return np.append(x, y)
def np_append_axis(x, y): return np.append(x, y, axis=0)
def np_vsplit(x):
    parts = np.vsplit(x, 2)
    return parts[0] * parts[1]
def np_hsplit(x):
    parts = np.hsplit(x, [1])
    return parts[0] * parts[1]
def np_dsplit(x):
    parts = np.dsplit(x, 2)
    return parts[0] - 2.0 * parts[1]
def np_indices(x): return x * np.indices((2, 3))[0]
def np_angle(x): return np.angle(x) * x + np.angle(x, deg=True)
def np_real_if_close(x): return np.real_if_close(x) * 2.0
def np_gradient(x): return np.gradient(x)
def np_gradient_axis(x): return np.gradient(x, 0.5, axis=1)
def np_gradient_order2(x): return np.gradient(x, 0.3, axis=0, edge_order=2)
def la_eig(a):
    w, v = np.linalg.eig(a)
    # sign-invariant in each eigenvector; real parts: NumPy >= 2.5 returns complex results
    return np.real(w), np.real(v * v[..., :1, :])
def fft_round_trip(x): return np.real(np.fft.ifft(np.fft.fft(x) * np.array([1.0, 2.0, 3.0, 0.5])))
def fft_parts(x):
    y = np.fft.fft(x, 6, norm="ortho")
    return np.real(y) + 2.0 * np.imag(y)
def fft_power(x): return np.abs(np.fft.rfft(x)) ** 2
def fft_irfft(x): return np.fft.irfft(np.fft.rfft(x) * 1.5j + 1.0, 7)
def fft_2d(x):
    y = np.fft.fft2(x, s=(3, 5))
    z = np.fft.ifft2(x, norm="forward")
    return np.real(y) * 2.0 + np.imag(y), np.imag(z)
def fft_2d_real(x): return np.fft.irfft2(np.fft.rfft2(x) ** 2)
def fft_nd(x):
    y = np.fft.fftn(x, axes=(0,))
    return np.real(y) + np.imag(np.fft.ifftn(x, s=(2, 2), axes=(0, 1)))[0, 0]
def fft_nd_real(x):
    y = np.fft.rfftn(x, norm="forward") * 3.0j + 1.0
    return np.fft.irfftn(y, s=(4, 6), axes=(0, 1), norm="forward")
def fft_shifts(x): return np.fft.fftshift(x, axes=1) * np.fft.ifftshift(x)
def prim_unbroadcast_items(a, b):
    parts = unbroadcast_items([a, b], [np.zeros(3), 0.0])
    return parts[0], parts[1]
def prim_real_spectrum(w): return real_spectrum(w) * 2.0
def prim_broadcast_items(a, b):
    parts = broadcast_items([a, b], [np.zeros((2, 3)), np.zeros(2)])
    return parts[0], parts[1]


def _real_eigenvalues(rng, n=3):
    return np.diag(np.arange(1.0, n + 1.0) * 1.5) + 0.3 * rng.uniform(-1, 1, (n, n))


for _fn, _make in [
        (np_matmul_stack_vec, lambda rng: [real(rng, (2, 2, 3)), real(rng, (3,))]),
        (np_einsum_ellipsis, lambda rng: [real(rng, (2, 3, 4)), real(rng, (4, 2))]),
        (np_einsum_ellipsis, lambda rng: [real(rng, (1, 3, 4)), real(rng, (2, 4, 2))]),
        (np_einsum_three, lambda rng: [real(rng, (2, 3)), real(rng, (3, 4)), real(rng, (4, 2))]),
        (np_einsum_four, lambda rng: [real(rng, (2,)), real(rng, (2, 3)), real(rng, (3,)),
                                      real(rng, (2,))]),
        (np_einsum_reduce_ellipsis, lambda rng: [real(rng, (2, 3))]),
        (np_kron_ranks, lambda rng: [real(rng, (5,)), real(rng, (3, 1))]),
        (np_kron_ranks, lambda rng: [real(rng, (2, 2)), real(rng, (3,))]),
        (np_kron_ranks, lambda rng: [real(rng, (2, 1, 2)), real(rng, (3,))]),
        (np_max_keepdims, lambda rng: [distinct(rng, (2, 3))]),
        (np_min_keepdims, lambda rng: [distinct(rng, (2, 3))]),
        (la_norm_nuc_axes, lambda rng: [real(rng, (2, 3, 4))]),
        (la_norm_2_axes, lambda rng: [real(rng, (2, 3, 4))]),
        (la_norm_1_matrix, lambda rng: [distinct(rng, (3, 4))]),
        (la_norm_inf_axes, lambda rng: [distinct(rng, (2, 3, 4))]),
        (np_vstack_one, lambda rng: [real(rng, (2, 3, 2))]),
        (np_hstack_one, lambda rng: [real(rng, (2, 3, 2))]),
        (np_column_stack_one, lambda rng: [real(rng, (3, 2))]),
        (np_select_broadcast, lambda rng: [real(rng, (2, 3)), real(rng, (3,))]),
        (np_std_axis, lambda rng: [real(rng, (2, 3))]),
        (np_array_dtype, lambda rng: [real(rng, (3,))]),
        (np_asarray_dtype, lambda rng: [real(rng, (3,))]),
        (np_cross_axes, lambda rng: [real(rng, (3, 2)), real(rng, (2, 3))]),
        (np_cross_axis, lambda rng: [real(rng, (3, 2)), real(rng, (3, 2))]),
        (np_rollaxis, lambda rng: [real(rng, (2, 3, 4))]),
        (np_rollaxis_start, lambda rng: [real(rng, (2, 3, 4))]),
        (np_partition, lambda rng: [distinct(rng, (2, 5))]),
        (np_partition_flat, lambda rng: [distinct(rng, (2, 3))]),
        (np_append, lambda rng: [real(rng, (2, 3)), real(rng, (2,))]),
        (np_append_axis, lambda rng: [real(rng, (2, 3)), real(rng, (1, 3))]),
        (np_vsplit, lambda rng: [real(rng, (4, 3))]),
        (np_hsplit, lambda rng: [real(rng, (2, 3))]),
        (np_dsplit, lambda rng: [real(rng, (2, 3, 4))]),
        (np_indices, lambda rng: [real(rng, (2, 3))]),
        (np_angle, lambda rng: [real(rng, (3,))]),
        (np_real_if_close, lambda rng: [real(rng, (3,))]),
        (np_gradient, lambda rng: [real(rng, (5,))]),
        (np_gradient_axis, lambda rng: [real(rng, (3, 4))]),
        (np_gradient_order2, lambda rng: [real(rng, (4, 2))]),
        (la_eig, lambda rng: [_real_eigenvalues(rng)]),
        (fft_round_trip, lambda rng: [real(rng, (4,))]),
        (fft_parts, lambda rng: [real(rng, (5,))]),
        (fft_power, lambda rng: [real(rng, (6,))]),
        (fft_irfft, lambda rng: [real(rng, (6,))]),
        (fft_2d, lambda rng: [real(rng, (3, 4))]),
        (fft_2d_real, lambda rng: [real(rng, (4, 4))]),
        (fft_nd, lambda rng: [real(rng, (3, 4))]),
        (fft_nd_real, lambda rng: [real(rng, (3, 5))]),
        (fft_shifts, lambda rng: [real(rng, (3, 4))]),
        (prim_unbroadcast_items, lambda rng: [real(rng, (2, 3)), real(rng, (2,))]),
        (prim_broadcast_items, lambda rng: [real(rng, (3,)), real(rng)]),
        (prim_real_spectrum, lambda rng: [real(rng, (3,))])]:
    add(_fn, _make, family="issue13", rtol=1e-4,
        name=f"{_fn.__name__}{[list(np.shape(a)) for a in _make(np.random.default_rng(0))]}")

add(method_item, lambda rng: [real(rng, (1,))], second_order=True)
add(method_item, lambda rng: [real(rng, (1, 1))], name="method_item_2d")

try:
    import scipy.special as sc

    import scipy.integrate as sp_integrate
    import scipy.linalg as sp_linalg
    import scipy.stats as sp_stats
    import scipy.special._ufuncs as scu

    import s2sad_rules.scipy_integrate  # noqa: F401
    import s2sad_rules.scipy_linalg  # noqa: F401
    import s2sad_rules.scipy_special  # noqa: F401  (loaded where a function calls scipy)
    import s2sad_rules.scipy_stats  # noqa: F401
    import s2sad_rules.scipy_distributions  # noqa: F401
except ImportError:  # (SciPy is optional)
    sc = sp_stats = sp_linalg = sp_integrate = scu = None

if sc is not None:
    def sc_logsumexp(x): return sc.logsumexp(x, axis=1)
    def sc_logsumexp_b(x, b): return sc.logsumexp(x, b=b, keepdims=True)
    def sc_softmax(x): return sc.softmax(x, axis=0)
    def sc_log_softmax(x): return sc.log_softmax(x)
    def sc_sigmoids(x): return sc.expit(x) * sc.log_expit(x) + sc.erf(x) - sc.erfc(x) + sc.ndtr(x) + sc.log_ndtr(x)
    def sc_logit(p): return sc.logit(p) + sc.erfinv(p)
    def sc_gammas(x): return sc.gammaln(x) + sc.gamma(x) + sc.digamma(x) + sc.polygamma(1, x)
    def sc_xlogy(x, y): return sc.xlogy(x, y) + sc.xlog1py(x, y)
    def sc_gamma_family(x): return sc.rgamma(x) + sc.betaln(x, 1.5) * sc.beta(2.0, x) + sc.multigammaln(x + 2.0, 2)
    def sc_incomplete(x): return sc.gammainc(1.5, x) - sc.gammaincc(0.5, x) + sc.betainc(2.0, 1.5, x / 4.0)
    def sc_bessel(x): return sc.j0(x) + sc.j1(x) + sc.y0(x) + sc.y1(x) + sc.jv(1.5, x) + sc.yv(2.0, x) + sc.yn(1, x)
    def sc_bessel_i(x): return sc.i0(x) + sc.i1(x) + sc.i0e(x) + sc.i1e(x) + sc.iv(2.5, x) + sc.ive(1.0, x)
    def sc_erfcinv(p): return sc.erfcinv(p)
    def sc_elementary(x): return sc.log1p(x) + sc.expm1(x) * sc.cosm1(x) + sc.exprel(x) + sc.exprel(x / 100.0)
    def sc_bessel_k(x): return sc.k0(x) + sc.k1(x) + sc.k0e(x) + sc.k1e(x) + sc.kv(2.5, x) + sc.kve(1.0, x)
    def sc_distribution_functions(x): return sc.stdtr(3.5, x) + sc.chdtr(2.5, x) - sc.chdtrc(1.5, x) + sc.fdtr(2.0, 3.5, x) * sc.fdtrc(4.0, 1.5, x) + sc.betaincc(2.0, 1.5, x / 4.0)
    def sc_boxcox(x, lmbda): return sc.boxcox(x, lmbda) + sc.boxcox1p(x, lmbda) + sc.inv_boxcox(x / 4.0, lmbda) * sc.inv_boxcox1p(x / 4.0, lmbda)
    def sc_tklmbda(x, lmbda): return sc.tklmbda(x, lmbda)
    def sc_quantiles(p): return sc.ndtri(p) + sc.ndtri_exp(np.log(p))
    def sc_entropies(x, y): return sc.entr(x) + sc.rel_entr(x, y) * sc.kl_div(y, x)
    def sc_huber(delta, r): return sc.huber(delta, r) + sc.pseudo_huber(delta, r)
    def sc_poch_owens_t(z, a): return sc.poch(z, a) + sc.owens_t(a, z) + sc.spence(z)
    def sc_zeta_q(q): return sc.zeta(2.5, q) + sc.zeta(np.array([1.5, 3.0, 4.0]), q)
    def sc_faddeeva(x): return sc.dawsn(x) + sc.erfcx(x) * sc.erfi(x) + np.real(sc.wofz(x)) * np.imag(sc.wofz(x)) + sc.loggamma(x + 2.0)
    def la_solve_triangular(a, b): return sp_linalg.solve_triangular(a, b, lower=True) + sp_linalg.solve_triangular(a, b, trans=1, unit_diagonal=True)
    def st_norm_densities(x, m, s): return sp_stats.norm.logpdf(x, m, s) + sp_stats.norm.pdf(x, loc=m, scale=s)
    def st_cauchy_quantiles(q, m, s): return scu._cauchy_ppf(q, m, s) * scu._cauchy_isf(q, 0.5, s) + scu._cauchy_isf(q, m, 1.5)
    def st_norm_tails(x, m, s): return sp_stats.norm.cdf(x, m, s) * sp_stats.norm.sf(x, m) + sp_stats.norm.logcdf(x, scale=s) - sp_stats.norm.logsf(x, m, s)

    for _fn, _make in [
            (sc_logsumexp, lambda rng: [real(rng, (3, 4))]),
            (sc_logsumexp_b, lambda rng: [real(rng, (3, 4)), pos(rng, (4,))]),
            (sc_softmax, lambda rng: [real(rng, (3, 4))]),
            (sc_log_softmax, lambda rng: [real(rng, (3, 4))]),
            (sc_sigmoids, lambda rng: [real(rng, (3,))]),
            (sc_logit, lambda rng: [pos(rng, (3,), 0.2, 0.8)]),
            (sc_gammas, lambda rng: [pos(rng, (3,))]),
            (sc_xlogy, lambda rng: [real(rng, (3,)), pos(rng, (3,))]),
            (sc_gamma_family, lambda rng: [pos(rng, (3,))]),
            (sc_incomplete, lambda rng: [pos(rng, (3,), 0.5, 3.0)]),
            (sc_bessel, lambda rng: [pos(rng, (3,), 0.5, 6.0)]),
            (sc_bessel_i, lambda rng: [pos(rng, (3,), 0.5, 6.0)]),
            (sc_erfcinv, lambda rng: [pos(rng, (3,), 0.2, 1.8)]),
            (sc_elementary, lambda rng: [real(rng, (3,), -0.8, 1.0)]),
            (sc_bessel_k, lambda rng: [pos(rng, (3,), 0.5, 6.0)]),
            (sc_distribution_functions, lambda rng: [pos(rng, (3,), 0.5, 3.0)]),
            (sc_boxcox, lambda rng: [pos(rng, (3,), 0.5, 2.0), real(rng, (3,))]),
            (sc_tklmbda, lambda rng: [real(rng, (3,)), real(rng, (3,), -0.5, 0.5)]),
            (sc_quantiles, lambda rng: [pos(rng, (3,), 0.1, 0.9)]),
            (sc_entropies, lambda rng: [pos(rng, (3,)), pos(rng, (2, 1))]),
            (sc_huber, lambda rng: [pos(rng, (2, 1)), real(rng, (3,), -4.0, 4.0)]),
            (sc_poch_owens_t, lambda rng: [pos(rng, (3,)), real(rng, (2, 1))]),
            (sc_zeta_q, lambda rng: [pos(rng, (3,))]),
            (sc_faddeeva, lambda rng: [real(rng, (3,), -1.5, 1.5)]),
            (st_norm_densities, lambda rng: [real(rng, (2, 3)), real(rng, (3,)), pos(rng, (2, 1))]),
            (st_norm_tails, lambda rng: [real(rng, (3,)), real(rng), pos(rng, (3,))]),
            (st_cauchy_quantiles, lambda rng: [pos(rng, (2, 3), 0.1, 0.9), real(rng, (3,)), pos(rng, (2, 1))]),
            (la_solve_triangular, lambda rng: [wellcond(rng, (3, 3)), real(rng, (3, 2))])]:
        add(_fn, _make, second_order=True, family="scipy")

    # an ODE's solution in its initial value, its output times and a parameter, by odeint and
    # by solve_ivp (the rules are first-order only); tight tolerances, for the dot product of
    # the two modes
    def ode_rhs(y, t, a): return -a * y + np.sin(t) * y[::-1]
    def int_odeint(y0, t, a):
        return sp_integrate.odeint(ode_rhs, y0, t, args=(a,), rtol=1e-12, atol=1e-12)
    add(int_odeint, lambda rng: [real(rng, (2,)), np.cumsum(pos(rng, (4,), 0.1, 0.4)),
                                 pos(rng, (2,))], family="scipy")

    def int_solve_ivp(y0, t, a):
        return sp_integrate.solve_ivp(ivp_rhs, (0.0, 2.0), y0, t_eval=t, args=(a,),
                                      rtol=1e-12, atol=1e-12).y
    def ivp_rhs(t, y, a): return ode_rhs(y, t, a)
    add(int_solve_ivp, lambda rng: [real(rng, (2,)), np.cumsum(pos(rng, (4,), 0.1, 0.4)),
                                    pos(rng, (2,))], family="scipy")

    # without t_eval: at the final time the solver reaches, t_span's end (smooth in it)
    def int_solve_ivp_final(y0, t1, a):
        sol = sp_integrate.solve_ivp(ivp_rhs, (0.0, t1), y0, args=(a,), rtol=1e-12,
                                     atol=1e-12)
        return sol.y[:, -1] * sol.t[-1]
    add(int_solve_ivp_final, lambda rng: [real(rng, (2,)), pos(rng, (), 0.5, 1.5),
                                          pos(rng, (2,))], family="scipy")

# the cases, by name (names must be unique)
BY_NAME = {}
for _c in CASES:
    _n, _k = _c.name, 1
    while _c.name in BY_NAME:
        _c.name = f"{_n}#{_k}"
        _k += 1
    BY_NAME[_c.name] = _c
