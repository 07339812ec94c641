"""User code written against s2sad's public API, type-checked by tests/test_typing.py with
`mypy --strict` and also run there. Every transformation in its plain and decorator forms,
the Derivative's methods, check_grads, the rule decorators and the errors: each
`assert_type` states what an editor shows for the expression.

A derivative's parameters keep the function's names (mypy shows `Derivative[[Arg(float,
'w'), Arg(float, 'h')], Any]`), which `assert_type` cannot spell: `same_parameters` checks
that the parameters have the function's types, the calls by keyword that the names are
kept, and tests/typecheck/wrong_calls.py that a call that does not fit is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, assert_type

import numpy as np
import numpy.typing as npt

import s2sad

Array = npt.NDArray[np.float64]
P = ParamSpec("P")


def same_parameters(d: s2sad.Derivative[P, Any], f: Callable[P, Any]) -> None:
    """Type-checks only where `d` takes the parameters of `f` (mypy infers P from `d`)."""


def area(w: float, h: float) -> float:
    return w * h


def energy(x: Array, *, scale: float = 0.5) -> Any:
    return scale * np.sum(x * x)


# -- plain calls: the derivative keeps the function's parameters (names included) -----------
d_area = s2sad.grad(area)
same_parameters(d_area, area)
assert d_area(2.0, h=5.0) == 5.0  # keyword by the function's own name

d_energy = s2sad.grad(energy, wrt="x")
same_parameters(d_energy, energy)  # scale: keyword-only, with its default
assert np.allclose(d_energy(np.array([1.0, 2.0]), scale=1.0), [2.0, 4.0])

out, pullback = s2sad.vjp(area)(2.0, 5.0)
assert_type(out, float)
assert_type(pullback, Callable[[Any], tuple[Any, ...]])
assert pullback(1.0) == (5.0, 2.0)

primal, tangent = s2sad.jvp(area)(2.0, 5.0, 1.0, 0.0)  # the tangents follow the arguments
assert_type(primal, float)
assert tangent == 5.0

value, slope = s2sad.value_and_grad(area, wrt=1)(2.0, 5.0)
assert_type(value, float)
assert (value, slope) == (10.0, 2.0)

same_parameters(s2sad.jacfwd(energy), energy)
same_parameters(s2sad.jacrev(energy), energy)
same_parameters(s2sad.hessian(energy), energy)
assert np.allclose(s2sad.hessian(energy)(np.zeros(2)), np.eye(2))
hv = s2sad.hvp(energy)(np.zeros(2), np.ones(2))  # `...` parameters: the vectors follow
assert np.allclose(hv, [1.0, 1.0])

# a NumPy callable differentiates through its rule
assert float(s2sad.grad(np.sin)(0.0)) == 1.0


# -- decorators: the decorated name is the derivative, with the function's signature -----------
@s2sad.grad
def square(x: float) -> float:
    return x * x


assert_type(square(x=3.0), Any)
assert square(3.0) == 6.0


@s2sad.grad(wrt=("w", "h"))
def box(w: float, h: float, depth: float = 1.0) -> float:
    return w * h * depth


assert box(w=2.0, h=5.0) == (5.0, 2.0) == box(2.0, 5.0, depth=1.0)


@s2sad.vjp
def scaled(x: float, k: float) -> float:
    return k * x


assert_type(scaled(x=2.0, k=3.0), tuple[float, Callable[[Any], tuple[Any, ...]]])
y, back = scaled(2.0, 3.0)
assert_type(y, float)
assert back(1.0) == (3.0, 2.0)


@s2sad.vjp(wrt=0)
def scaled_x(x: float, k: float) -> float:
    return k * x


assert scaled_x(2.0, 3.0)[1](1.0) == (3.0,)


@s2sad.jvp
def cube(x: float) -> float:
    return x * x * x


assert_type(cube, s2sad.Derivative[..., tuple[float, Any]])
assert cube(2.0, 1.0) == (8.0, 12.0)


@s2sad.jvp(wrt=0)
def cube_k(x: float, k: float) -> float:
    return k * x * x * x


assert cube_k(2.0, 1.0, 1.0) == (8.0, 12.0)


@s2sad.value_and_grad
def half(x: float) -> float:
    return 0.5 * x * x


assert_type(half(x=4.0), tuple[float, Any])
assert half(4.0) == (8.0, 4.0)


@s2sad.value_and_grad(wrt=1)
def half_k(x: float, k: float) -> float:
    return 0.5 * k * x * x


assert half_k(2.0, 3.0) == (6.0, 2.0)


@s2sad.jacfwd
def double(x: Array) -> Array:
    return 2.0 * x


assert_type(double(x=np.zeros(2)), Any)
assert np.allclose(double(np.zeros(2)), 2.0 * np.eye(2))


@s2sad.jacrev(wrt=0)
def triple(x: Array) -> Array:
    return 3.0 * x


assert_type(triple(x=np.zeros(2)), Any)
assert np.allclose(triple(np.zeros(2)), 3.0 * np.eye(2))


@s2sad.hessian
def quartic(x: float) -> float:
    return x * x * x * x


assert_type(quartic(x=1.0), Any)
assert float(quartic(1.0)) == 12.0


@s2sad.hessian(wrt=0)
def quartic_k(x: float, k: float) -> float:
    return k * x * x * x * x


assert float(quartic_k(1.0, 2.0)) == 24.0


@s2sad.hvp
def bowl(x: Array) -> Any:
    return np.sum(x * x)


assert_type(bowl, s2sad.Derivative[..., Any])
assert np.allclose(bowl(np.zeros(2), np.array([1.0, 3.0])), [2.0, 6.0])


@s2sad.hvp(wrt=0)
def bowl_k(x: Array, k: float) -> Any:
    return k * np.sum(x * x)


assert np.allclose(bowl_k(np.zeros(2), 2.0, np.ones(2)), [4.0, 4.0])

# -- the Derivative's methods ------------------------------------------------------------------
assert_type(square.source, str)
assert_type(square.source_for(3.0), str)
assert_type(square.compiled_function, Callable[..., Any])
assert "def square_grad(x" in square.source_for(3.0)
assert_type(square.func, Callable[..., Any])
assert_type(square.mode, str)

# -- check_grads -------------------------------------------------------------------------------
assert_type(s2sad.check_grads(area, (2.0, 5.0)), bool)
assert s2sad.check_grads(energy, (np.array([1.0, 2.0]),), modes=("rev",), kwargs={"scale": 2.0})


# -- the rule decorators keep the rule's signature ---------------------------------------------
def softplus(x: float) -> Any:
    return np.logaddexp(0.0, x)


@s2sad.defjvp(softplus)
def softplus_jvp(x: float, x_dot: float, ans: float) -> Any:
    return x_dot * np.exp(x - ans)


@s2sad.defvjp(softplus)
def softplus_vjp(g: float, ans: float, x: float) -> Any:
    return g * np.exp(x - ans)


# the rules are the functions themselves: called by keyword, they are still plain functions
assert float(softplus_jvp(x=0.0, x_dot=1.0, ans=float(np.log(2.0)))) == 0.5
assert float(softplus_vjp(g=2.0, ans=float(np.log(2.0)), x=0.0)) == 1.0


@s2sad.def_nondiff
def sign_of(x: float) -> float:
    return 1.0 if x > 0.0 else -1.0


assert_type(sign_of(x=2.0), float)


def flip(x: Array) -> Array:
    return x[::-1]


assert_type(s2sad.def_linear(flip)(x=np.ones(2)), Array)
assert_type(s2sad.def_linear(flip, np.flipud, wrt=(0,)), tuple[Callable[..., Any], ...])


# -- errors ------------------------------------------------------------------------------------
def bad_wrt() -> None:
    try:
        s2sad.grad(area, wrt="depth")(2.0, 5.0)
    except s2sad.WrtError as e:
        assert_type(e, s2sad.WrtError)
        assert_type(e.hint, str | None)
        assert_type(e.lineno, int | None)
        assert isinstance(e, s2sad.S2SADError)
    else:
        raise AssertionError("wrt='depth' was accepted")


bad_wrt()
