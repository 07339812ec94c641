"""Calls that do not fit the API: tests/test_typing.py checks that mypy reports an error on
every line marked `# E:` and on no other (so the positive check can fail)."""

from __future__ import annotations

import numpy as np

import s2sad


def area(w: float, h: float) -> float:
    return w * h


@s2sad.grad
def square(x: float) -> float:
    return x * x


@s2sad.vjp
def scaled(x: float, k: float) -> float:
    return k * x


@s2sad.defjvp(np.tanh)
def tanh_jvp(x: float, x_dot: float, ans: float) -> float:
    return x_dot * (1.0 - ans * ans)


square("3.0")  # E: an argument of the wrong type
square(3.0, 4.0)  # E: too many arguments
square(y=3.0)  # E: a keyword the function does not have
s2sad.grad(area)(2.0)  # E: a missing argument
s2sad.grad(area).source_for(2.0, "h")  # E: source_for takes the function's arguments
s2sad.grad(1)  # E: options are keywords: wrt=1
s2sad.grad(area, wrt=1.5)  # E: wrt is an index, a name or a tuple of them
out, pullback = scaled(2.0, 3.0)
pullback()  # E: a pullback takes the cotangent of the output
tanh_jvp("x", 1.0, 0.0)  # E: the rule keeps its own signature
s2sad.check_grads(area, (2.0, 5.0), order="1")  # E: order is an int
text: int = square.source  # E: source is a str

# one call that does not fit for each transformation, plain and as a decorator: the
# derivative keeps the function's parameters (a `...` there would accept all of these)
energy = s2sad.value_and_grad(area)
energy(2.0, depth=1.0)  # E: value_and_grad: no such keyword
s2sad.vjp(area)(2.0, "5")  # E: vjp: wrong type
s2sad.jacfwd(area)(2.0)  # E: jacfwd: missing argument
s2sad.jacrev(area)(w=2.0, k=1.0)  # E: jacrev: no such keyword
s2sad.hessian(area)(2.0, 5.0, 1.0)  # E: hessian: too many arguments


@s2sad.value_and_grad(wrt=1)
def half(x: float, k: float) -> float:
    return 0.5 * k * x * x


@s2sad.jacfwd
def double(x: float) -> float:
    return 2.0 * x


@s2sad.hessian(wrt="x")
def quartic(x: float) -> float:
    return x * x * x * x


half(1.0)  # E: decorated value_and_grad: missing argument
double(1.0, 2.0)  # E: decorated jacfwd: too many arguments
quartic(y=1.0)  # E: decorated hessian: no such keyword
_ = s2sad.jvp(area)(2.0, 5.0, 1.0, 0.0).shape  # E: jvp returns a tuple (out, out_dot), not an array
