"""Rules for the `math` functions not in math_rules.py: exp2 cbrt ldexp fmod remainder copysign
gamma lgamma.

`fmod`/`remainder` have derivative 1 in x and -(x - r)/y (the integer quotient, negated) in
y, away from their jumps; `copysign` is constant in y. The gamma-function rules use
`digamma`, computed in restricted Python; they are valid for x > 0.

`math.exp2` and `math.cbrt` are new in Python 3.11: their rules are registered only where they
exist.
"""

import math

from s2sad_rules.registry import defjvp, defvjp


def exp2_jvp(x, x_dot, ans):
    return x_dot * ans * 0.6931471805599453


def exp2_vjp(g, ans, x):
    return g * ans * 0.6931471805599453


def cbrt_jvp(x, x_dot, ans):
    return x_dot / (3.0 * ans * ans)


def cbrt_vjp(g, ans, x):
    return g / (3.0 * ans * ans)


# Callables that exist only from some version on: name -> (first version, JVP rule, VJP rule).
# Their rules are registered where the callable exists; docs/gen_rules.py lists them either
# way, marked with the version, so that the rule page is the same on every Python.
VERSIONED = {
    "math.exp2": ("Python 3.11", exp2_jvp, exp2_vjp),
    "math.cbrt": ("Python 3.11", cbrt_jvp, cbrt_vjp),
}

for _name, (_since, _jvp, _vjp) in VERSIONED.items():
    _fn = getattr(math, _name.removeprefix("math."), None)
    if _fn is not None:
        defjvp(_fn)(_jvp)
        defvjp(_fn)(_vjp)


@defjvp(math.ldexp)
def ldexp_jvp(x, i, x_dot):
    return math.ldexp(x_dot, i)


@defvjp(math.ldexp, wrt=("x",))
def ldexp_vjp(g, x, i):
    return math.ldexp(g, i)


@defjvp(math.fmod, math.remainder)
def fmod_jvp(x, y, x_dot, y_dot, ans):
    return x_dot - y_dot * ((x - ans) / y)


@defvjp(math.fmod, math.remainder)
def fmod_vjp(g, ans, x, y):
    return g, -g * ((x - ans) / y)


@defjvp(math.copysign)
def copysign_jvp(x, y, x_dot, y_dot, ans):
    return x_dot * math.copysign(1.0, x) * math.copysign(1.0, ans) * (x != 0.0)


@defvjp(math.copysign)
def copysign_vjp(g, ans, x, y):
    return g * math.copysign(1.0, x) * math.copysign(1.0, ans) * (x != 0.0), 0.0


def digamma(x):
    """psi(x) = d/dx log Gamma(x) for x > 0, to about 1e-11: six steps of the recurrence
    psi(x) = psi(x + 1) - 1/x, then the asymptotic series at x + 6."""
    shift = 1.0 / x + 1.0 / (x + 1.0) + 1.0 / (x + 2.0) + 1.0 / (x + 3.0) + 1.0 / (x + 4.0) + (
        1.0 / (x + 5.0))
    y = x + 6.0
    r = 1.0 / (y * y)
    series = r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r / 132))))
    return math.log(y) - 0.5 / y - series - shift


@defjvp(math.gamma)
def gamma_jvp(x, x_dot, ans):
    return x_dot * ans * digamma(x)


@defvjp(math.gamma)
def gamma_vjp(g, ans, x):
    return g * ans * digamma(x)


@defjvp(math.lgamma)
def lgamma_jvp(x, x_dot):
    return x_dot * digamma(x)


@defvjp(math.lgamma)
def lgamma_vjp(g, x):
    return g * digamma(x)
