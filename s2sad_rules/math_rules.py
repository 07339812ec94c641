"""Rules for the differentiable functions of the `math` module (Python floats)."""

import math

from s2sad_rules.kind_tests import is_none
from s2sad_rules.registry import defjvp, defvjp


@defjvp(math.sin)
def sin_jvp(x, x_dot):
    return x_dot * math.cos(x)


@defvjp(math.sin)
def sin_vjp(g, x):
    return g * math.cos(x)


@defjvp(math.cos)
def cos_jvp(x, x_dot):
    return -x_dot * math.sin(x)


@defvjp(math.cos)
def cos_vjp(g, x):
    return -g * math.sin(x)


@defjvp(math.tan)
def tan_jvp(x, x_dot, ans):
    return x_dot * (1.0 + ans * ans)


@defvjp(math.tan)
def tan_vjp(g, ans, x):
    return g * (1.0 + ans * ans)


@defjvp(math.asin)
def asin_jvp(x, x_dot):
    return x_dot / math.sqrt(1.0 - x * x)


@defvjp(math.asin)
def asin_vjp(g, x):
    return g / math.sqrt(1.0 - x * x)


@defjvp(math.acos)
def acos_jvp(x, x_dot):
    return -x_dot / math.sqrt(1.0 - x * x)


@defvjp(math.acos)
def acos_vjp(g, x):
    return -g / math.sqrt(1.0 - x * x)


@defjvp(math.atan)
def atan_jvp(x, x_dot):
    return x_dot / (1.0 + x * x)


@defvjp(math.atan)
def atan_vjp(g, x):
    return g / (1.0 + x * x)


@defjvp(math.atan2)
def atan2_jvp(y, x, y_dot, x_dot):
    return (x * y_dot - y * x_dot) / (x * x + y * y)


@defvjp(math.atan2)
def atan2_vjp(g, y, x):
    r2 = x * x + y * y
    return g * x / r2, -g * y / r2


@defjvp(math.sinh)
def sinh_jvp(x, x_dot):
    return x_dot * math.cosh(x)


@defvjp(math.sinh)
def sinh_vjp(g, x):
    return g * math.cosh(x)


@defjvp(math.cosh)
def cosh_jvp(x, x_dot):
    return x_dot * math.sinh(x)


@defvjp(math.cosh)
def cosh_vjp(g, x):
    return g * math.sinh(x)


@defjvp(math.tanh)
def tanh_jvp(x, x_dot, ans):
    return x_dot * (1.0 - ans * ans)


@defvjp(math.tanh)
def tanh_vjp(g, ans, x):
    return g * (1.0 - ans * ans)


@defjvp(math.asinh)
def asinh_jvp(x, x_dot):
    return x_dot / math.sqrt(x * x + 1.0)


@defvjp(math.asinh)
def asinh_vjp(g, x):
    return g / math.sqrt(x * x + 1.0)


@defjvp(math.acosh)
def acosh_jvp(x, x_dot):
    return x_dot / math.sqrt(x * x - 1.0)


@defvjp(math.acosh)
def acosh_vjp(g, x):
    return g / math.sqrt(x * x - 1.0)


@defjvp(math.atanh)
def atanh_jvp(x, x_dot):
    return x_dot / (1.0 - x * x)


@defvjp(math.atanh)
def atanh_vjp(g, x):
    return g / (1.0 - x * x)


@defjvp(math.exp)
def exp_jvp(x, x_dot, ans):
    return x_dot * ans


@defvjp(math.exp)
def exp_vjp(g, ans, x):
    return g * ans


@defjvp(math.expm1)
def expm1_jvp(x, x_dot, ans):
    return x_dot * (ans + 1.0)


@defvjp(math.expm1)
def expm1_vjp(g, ans, x):
    return g * (ans + 1.0)


@defjvp(math.log)
def log_jvp(x, base=math.e, x_dot=0.0, base_dot=0.0):
    return x_dot / (x * math.log(base)) - base_dot * math.log(x) / (base * math.log(base) ** 2)


@defvjp(math.log, wrt=("x", "base"))
def log_vjp(g, x, base=math.e):
    return g / (x * math.log(base)), -g * math.log(x) / (base * math.log(base) ** 2)


@defjvp(math.log1p)
def log1p_jvp(x, x_dot):
    return x_dot / (1.0 + x)


@defvjp(math.log1p)
def log1p_vjp(g, x):
    return g / (1.0 + x)


@defjvp(math.log2)
def log2_jvp(x, x_dot):
    return x_dot / (x * 0.6931471805599453)


@defvjp(math.log2)
def log2_vjp(g, x):
    return g / (x * 0.6931471805599453)


@defjvp(math.log10)
def log10_jvp(x, x_dot):
    return x_dot / (x * 2.302585092994046)


@defvjp(math.log10)
def log10_vjp(g, x):
    return g / (x * 2.302585092994046)


@defjvp(math.sqrt)
def sqrt_jvp(x, x_dot, ans):
    return x_dot / (2.0 * ans)


@defvjp(math.sqrt)
def sqrt_vjp(g, ans, x):
    return g / (2.0 * ans)


@defjvp(math.pow)
def mpow_jvp(x, y, x_dot, y_dot, ans):
    return x_dot * y * math.pow(x, y - 1.0) + y_dot * ans * math.log(x)


@defvjp(math.pow)
def mpow_vjp(g, ans, x, y):
    return g * y * math.pow(x, y - 1.0), g * ans * math.log(x)


@defjvp(math.hypot)
def hypot_jvp(x, y=None, z=None, w=None, x_dot=0.0, y_dot=0.0, z_dot=0.0, w_dot=0.0,
              ans=None):
    # math.hypot(*coordinates): the length of a vector of one to four coordinates here
    if is_none(y):
        return x * x_dot / ans
    if is_none(z):
        return (x * x_dot + y * y_dot) / ans
    if is_none(w):
        return (x * x_dot + y * y_dot + z * z_dot) / ans
    return (x * x_dot + y * y_dot + z * z_dot + w * w_dot) / ans


@defvjp(math.hypot, wrt=("x", "y", "z", "w"))
def hypot_vjp(g, ans, x, y=None, z=None, w=None):
    return (g * x / ans, None if is_none(y) else g * y / ans,
            None if is_none(z) else g * z / ans, None if is_none(w) else g * w / ans)


@defjvp(math.fabs)
def fabs_jvp(x, x_dot):
    return x_dot * math.copysign(1.0, x) * (x != 0.0)


@defvjp(math.fabs)
def fabs_vjp(g, x):
    return g * math.copysign(1.0, x) * (x != 0.0)


@defjvp(math.erf)
def erf_jvp(x, x_dot):
    return x_dot * 1.1283791670955126 * math.exp(-x * x)


@defvjp(math.erf)
def erf_vjp(g, x):
    return g * 1.1283791670955126 * math.exp(-x * x)


@defjvp(math.erfc)
def erfc_jvp(x, x_dot):
    return -x_dot * 1.1283791670955126 * math.exp(-x * x)


@defvjp(math.erfc)
def erfc_vjp(g, x):
    return -g * 1.1283791670955126 * math.exp(-x * x)


@defjvp(math.degrees)
def degrees_jvp(x, x_dot):
    return x_dot * 57.29577951308232


@defvjp(math.degrees)
def degrees_vjp(g, x):
    return g * 57.29577951308232


@defjvp(math.radians)
def radians_jvp(x, x_dot):
    return x_dot * 0.017453292519943295


@defvjp(math.radians)
def radians_vjp(g, x):
    return g * 0.017453292519943295
