"""The public transformations: jvp, vjp, grad, value_and_grad, jacfwd, jacrev, hessian,
hvp (each also a decorator) and the checkpoint decorator.

Each returns a `Derivative` (s2sad.derivative): a callable that compiles lazily,
specialises on the kinds of its arguments and serves a specialisation only while what it
was compiled from still holds.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, TypeVar, overload

from s2sad.derivative import Backend, Derivative, P, Pullback, R, WrtSpec
from s2sad.errors import WrtError
from s2sad.frontend.lower import derivative_hook
from s2sad_rules.registry import transforms as rule_transforms

__all__ = ["Backend", "Derivative", "Pullback", "WrtSpec", "checkpoint", "grad",
           "grad_and_hvp", "hessian", "hvp", "jacfwd", "jacrev", "jvp", "value_and_grad", "vjp"]


F = TypeVar("F", bound=Callable[..., Any])


def checkpoint(f: F) -> F:
    """Mark a helper function to be recomputed in the reverse sweep instead of taped.

    A derivative normally inlines the helpers its function calls, and the reverse sweep
    keeps every intermediate value of theirs (on a tape, in a loop). A call of a helper
    marked `@s2sad.checkpoint` is not inlined: the forward sweep calls the helper itself
    and keeps only its arguments, and the reverse sweep calls the helper's VJP on them
    (running its forward pass again) and applies the pullback at once (like
    `jax.checkpoint`). The helper itself is unchanged when called directly.

    Returns:
        `f` itself, marked.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> @s2sad.checkpoint
        ... def layer(h, w):
        ...     return np.tanh(h * w)
        >>> def net(h, w):
        ...     for i in range(3):
        ...         h = layer(h, w)
        ...     return np.sum(h)
        >>> d = s2sad.grad(net, wrt=1)
        >>> "layer_vjp(" in d.source_for(np.ones(2), 0.5)  # its VJP, in the reverse sweep
        True
    """
    if not isinstance(f, types.FunctionType):
        raise TypeError(f"s2sad.checkpoint needs a Python function, got {f!r}")
    setattr(f, "__s2sad_checkpoint__", True)
    return f


def _derivative(f: Callable[P, Any], mode: str, wrt: WrtSpec, checkpoints: int | None = None,
                backend: Backend = "numpy", explain: bool = False) -> Derivative[P, Any]:
    if isinstance(f, (int, str, tuple)) and not callable(f):
        raise WrtError(f"s2sad.{mode}: pass wrt as a keyword (wrt={f!r})")
    return Derivative(f, mode, wrt, checkpoints, backend=backend, explain=explain)


def _decorator(mode: str, wrt: WrtSpec, checkpoints: int | None = None,
               backend: Backend = "numpy",
               explain: bool = False) -> Callable[[Callable[P, Any]], Derivative[P, Any]]:
    return lambda g: Derivative(g, mode, wrt, checkpoints, backend=backend, explain=explain)


@overload
def jvp(f: Callable[..., R], wrt: WrtSpec = None, *,
        backend: Backend = "numpy",
        explain: bool = False) -> Derivative[..., tuple[R, Any]]: ...
@overload
def jvp(f: None = None, wrt: WrtSpec = None, *, backend: Backend = "numpy",
        explain: bool = False) -> Callable[
        [Callable[..., R]], Derivative[..., tuple[R, Any]]]: ...


def jvp(f: Callable[..., R] | None = None, wrt: WrtSpec = None, *, backend: Backend = "numpy",
        explain: bool = False) -> (
        Derivative[..., tuple[R, Any]] | Callable[[Callable[..., R]],
                                                   Derivative[..., tuple[R, Any]]]):
    """Forward mode: the Jacobian-vector product of `f`.

    `jvp(f)(*args, *tangents)` takes `f`'s arguments, then one tangent per differentiated
    argument (by default the positional arguments given, a defaulted one left out taking
    its default, undifferentiated; `wrt` picks some; JAX's form `jvp(f)(primals=(x, y),
    tangents=(x_dot, y_dot))` too: docs/guards.md), and returns
    `(out, out_dot)`: `f(*args)` and its directional derivative along the tangents, of the
    structure of `out` (a list, namedtuple or dict that `f` returns comes back as one, both
    as `out` and as `out_dot`). As a decorator: `@s2sad.jvp` or `@s2sad.jvp(wrt=...)`.

    Returns:
        A `Derivative`; its calls return `(out, out_dot)`.

    Examples:
        >>> import s2sad
        >>> def area(w, h):
        ...     return w * h
        >>> s2sad.jvp(area)(2.0, 5.0, 1.0, 0.0)  # d(w h) along (1, 0) is h
        (10.0, 5.0)
        >>> s2sad.jvp(area, wrt="h")(2.0, 5.0, 1.0)  # along h alone: w
        (10.0, 2.0)
    """
    if f is None:
        return _decorator("jvp", wrt, backend=backend, explain=explain)
    return _derivative(f, "jvp", wrt, backend=backend, explain=explain)


@overload
def vjp(f: Callable[P, R], wrt: WrtSpec = None, *,
        checkpoints: int | None = None,
        backend: Backend = "numpy",
        explain: bool = False) -> Derivative[P, tuple[R, Pullback]]: ...
@overload
def vjp(f: None = None, wrt: WrtSpec = None, *, checkpoints: int | None = None,
        backend: Backend = "numpy",
        explain: bool = False) -> Callable[
        [Callable[P, R]], Derivative[P, tuple[R, Pullback]]]: ...


def vjp(f: Callable[P, R] | None = None, wrt: WrtSpec = None, *,
        checkpoints: int | None = None, backend: Backend = "numpy",
        explain: bool = False) -> (
        Derivative[P, tuple[R, Pullback]] | Callable[[Callable[P, R]],
                                                      Derivative[P, tuple[R, Pullback]]]):
    """Reverse mode: the vector-Jacobian product of `f`.

    `vjp(f)(*args)` takes `f`'s arguments and returns `(out, pullback)`: `f(*args)` and a
    function from a cotangent `out_bar` (of the shape and structure of `out`: a list,
    namedtuple or dict that `f` returns is one in `out`, and its seed is one too, or tuples
    standing for it) to the tuple of cotangents
    of the differentiated arguments, one per `wrt` parameter (by default the positional
    arguments given: a defaulted parameter left out, or given by keyword, is not
    differentiated). The pullback keeps what the forward sweep saved; call it as often as you
    like. As a decorator: `@s2sad.vjp` or `@s2sad.vjp(wrt=...)`. `checkpoints=K`: each loop
    (not inside another loop) keeps at most K snapshots of its state instead of a tape of
    every iteration, and recomputes the rest in the reverse sweep (binomial checkpointing,
    see `grad`).

    Returns:
        A `Derivative`; its calls return `(out, pullback)`, and `pullback(out_bar)` a tuple.

    Examples:
        >>> import s2sad
        >>> def area(w, h):
        ...     return w * h
        >>> out, pullback = s2sad.vjp(area)(2.0, 5.0)
        >>> out
        10.0
        >>> pullback(1.0)  # (h, w)
        (5.0, 2.0)
        >>> pullback(3.0)  # the same sweep, another seed: (3 h, 3 w)
        (15.0, 6.0)
    """
    if f is None:
        return _decorator("vjp", wrt, checkpoints, backend, explain=explain)
    return _derivative(f, "vjp", wrt, checkpoints, backend, explain=explain)


@overload
def grad(f: Callable[P, Any], wrt: WrtSpec = 0, *,
         checkpoints: int | None = None, backend: Backend = "numpy",
        explain: bool = False) -> Derivative[P, Any]: ...
@overload
def grad(f: None = None, wrt: WrtSpec = 0, *, checkpoints: int | None = None,
        backend: Backend = "numpy",
        explain: bool = False) -> Callable[
        [Callable[P, Any]], Derivative[P, Any]]: ...


def grad(f: Callable[P, Any] | None = None, wrt: WrtSpec = 0, *,
         checkpoints: int | None = None, backend: Backend = "numpy",
        explain: bool = False) -> (
        Derivative[P, Any] | Callable[[Callable[P, Any]], Derivative[P, Any]]):
    """The gradient of a function with a scalar result (reverse mode).

    `grad(f)(*args)` takes `f`'s arguments and returns the derivative of `f(*args)` with
    respect to argument `wrt` (the first by default; an index or a parameter name), of that
    argument's shape; a tuple `wrt` gives a tuple of them. As a decorator: `@s2sad.grad` or
    `@s2sad.grad(wrt=...)`.

    `checkpoints=K` bounds the memory of loops: each loop (not inside another loop) keeps
    at most K snapshots of its carried state instead of a tape of every iteration, and the
    reverse sweep recomputes the iterations in between from the nearest snapshot, on a
    binomial (revolve) schedule: memory O(K x state), time a few primal runs. The gradient
    is the same to the bit (the same operations run).

    `explain=True` generates the step-by-step derivative instead (as Tangent's
    `optimized=False`): one primitive per line, every cotangent named after its value
    (`err_bar`), each reverse step under the operation it reverses and the rule it applies
    (`# back through t2 = a / b; d(a/b) = da/b - a·db/b²`). It gives the same numbers, more
    slowly; `jvp`, `vjp` and `value_and_grad` take it too (`s2sad show --explain`).

    Returns:
        A `Derivative` with `f`'s parameters; its calls return the gradient.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def square(x):
        ...     return x ** 2
        >>> s2sad.grad(square)(3.0)  # 2 x
        6.0
        >>> @s2sad.grad(wrt=("w", "h"))
        ... def area(w, h):
        ...     return w * h
        >>> area(2.0, 5.0)  # (h, w)
        (5.0, 2.0)
        >>> def energy(x):
        ...     return 0.5 * np.sum(x * x)
        >>> s2sad.grad(energy)(np.array([1.0, -2.0]))  # x
        array([ 1., -2.])
    """
    if f is None:
        return _decorator("grad", wrt, checkpoints, backend, explain=explain)
    return _derivative(f, "grad", wrt, checkpoints, backend, explain=explain)


@overload
def value_and_grad(f: Callable[P, R], wrt: WrtSpec = 0, *,
                   checkpoints: int | None = None,
                   backend: Backend = "numpy",
        explain: bool = False) -> Derivative[P, tuple[R, Any]]: ...
@overload
def value_and_grad(f: None = None, wrt: WrtSpec = 0, *,
                   checkpoints: int | None = None, backend: Backend = "numpy",
        explain: bool = False) -> Callable[
        [Callable[P, R]], Derivative[P, tuple[R, Any]]]: ...


def value_and_grad(f: Callable[P, R] | None = None, wrt: WrtSpec = 0, *,
                   checkpoints: int | None = None, backend: Backend = "numpy",
        explain: bool = False) -> (
        Derivative[P, tuple[R, Any]] | Callable[[Callable[P, R]],
                                                 Derivative[P, tuple[R, Any]]]):
    """The value and the gradient of a function with a scalar result, in one sweep.

    `value_and_grad(f)(*args)` returns `(f(*args), grad(f, wrt)(*args))`; `checkpoints=K`
    as for `grad`.

    Returns:
        A `Derivative` with `f`'s parameters; its calls return `(value, gradient)`.

    Examples:
        >>> import s2sad
        >>> def square(x):
        ...     return x ** 2
        >>> s2sad.value_and_grad(square)(3.0)  # (x ** 2, 2 x)
        (9.0, 6.0)
    """
    if f is None:
        return _decorator("value_and_grad", wrt, checkpoints, backend, explain=explain)
    return _derivative(f, "value_and_grad", wrt, checkpoints, backend, explain=explain)


@overload
def jacfwd(f: Callable[P, Any], wrt: WrtSpec = 0, *,
        backend: Backend = "numpy") -> Derivative[P, Any]: ...
@overload
def jacfwd(f: None = None, wrt: WrtSpec = 0, *, backend: Backend = "numpy") -> Callable[
        [Callable[P, Any]], Derivative[P, Any]]: ...


def jacfwd(f: Callable[P, Any] | None = None, wrt: WrtSpec = 0, *, backend: Backend = "numpy") -> (
        Derivative[P, Any] | Callable[[Callable[P, Any]], Derivative[P, Any]]):
    """The Jacobian by vector forward mode: one call, one tangent direction per input entry.

    `jacfwd(f)(*args)` returns the Jacobian of `f(*args)` with respect to argument `wrt`,
    of shape `out.shape + arg.shape`; a tuple `wrt` gives a tuple of blocks, a tuple output
    a tuple of Jacobians (a list, namedtuple or dict output: the same structure holding
    one Jacobian per item).

    Returns:
        A `Derivative` with `f`'s parameters; its calls return the Jacobian.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def scale(x):
        ...     return 3.0 * x
        >>> s2sad.jacfwd(scale)(np.zeros(2))  # 3 I
        array([[3., 0.],
               [0., 3.]])
    """
    if f is None:
        return _decorator("jacfwd", wrt, backend=backend)
    return _derivative(f, "jacfwd", wrt, backend=backend)


@overload
def jacrev(f: Callable[P, Any], wrt: WrtSpec = 0, *,
        backend: Backend = "numpy") -> Derivative[P, Any]: ...
@overload
def jacrev(f: None = None, wrt: WrtSpec = 0, *, backend: Backend = "numpy") -> Callable[
        [Callable[P, Any]], Derivative[P, Any]]: ...


def jacrev(f: Callable[P, Any] | None = None, wrt: WrtSpec = 0, *, backend: Backend = "numpy") -> (
        Derivative[P, Any] | Callable[[Callable[P, Any]], Derivative[P, Any]]):
    """The Jacobian by reverse mode, with a batch of seeds (one per output entry).

    `jacrev(f)(*args)` returns what `jacfwd(f)(*args)` returns (shape
    `out.shape + arg.shape`); it is the cheaper of the two when the output has fewer
    entries than the argument.

    Returns:
        A `Derivative` with `f`'s parameters; its calls return the Jacobian.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def sums(x):
        ...     return np.array([x[0] + x[1], x[1] * x[2]])
        >>> s2sad.jacrev(sums)(np.array([1.0, 2.0, 3.0]))  # rows (1, 1, 0), (0, x2, x1)
        array([[1., 1., 0.],
               [0., 3., 2.]])
    """
    if f is None:
        return _decorator("jacrev", wrt, backend=backend)
    return _derivative(f, "jacrev", wrt, backend=backend)


@overload
def hessian(f: Callable[P, Any], wrt: WrtSpec = 0, *,
        backend: Backend = "numpy") -> Derivative[P, Any]: ...
@overload
def hessian(f: None = None, wrt: WrtSpec = 0, *, backend: Backend = "numpy") -> Callable[
        [Callable[P, Any]], Derivative[P, Any]]: ...


def hessian(f: Callable[P, Any] | None = None, wrt: WrtSpec = 0, *, backend: Backend = "numpy") -> (
        Derivative[P, Any] | Callable[[Callable[P, Any]], Derivative[P, Any]]):
    """The Hessian of a function with a scalar result: `jacfwd(grad(f))`, forward over reverse.

    `hessian(f)(*args)` returns the matrix of second derivatives with respect to argument
    `wrt`, of shape `arg.shape + arg.shape` (a 0-d array for a scalar argument).

    Returns:
        A `Derivative` with `f`'s parameters; its calls return the Hessian.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def cube(x):
        ...     return x ** 3
        >>> float(s2sad.hessian(cube)(2.0))  # 6 x
        12.0
        >>> def quadratic(x):
        ...     return x[0] * x[0] * x[1]
        >>> s2sad.hessian(quadratic)(np.array([1.0, 2.0]))  # [[2 x1, 2 x0], [2 x0, 0]]
        array([[4., 2.],
               [2., 0.]])
    """
    if f is None:
        return lambda g: hessian(g, wrt, backend=backend)
    return Derivative(Derivative(f, "grad", wrt), "jacfwd", wrt, backend=backend)


@overload
def hvp(f: Callable[..., Any], wrt: WrtSpec = 0, *,
        backend: Backend = "numpy") -> Derivative[..., Any]: ...
@overload
def hvp(f: None = None, wrt: WrtSpec = 0, *, backend: Backend = "numpy") -> Callable[
        [Callable[..., Any]], Derivative[..., Any]]: ...


def hvp(f: Callable[..., Any] | None = None, wrt: WrtSpec = 0, *, backend: Backend = "numpy") -> (
        Derivative[..., Any] | Callable[[Callable[..., Any]], Derivative[..., Any]]):
    """The Hessian-vector product, without forming the Hessian (the JVP of the gradient).

    `hvp(f)(*args, v)` takes `f`'s arguments, then one vector per `wrt` argument, and
    returns the Hessian of `f` (a function with a scalar result) times `v`, of the shape of
    the argument.

    Returns:
        A `Derivative`; its calls return `H @ v`.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def quadratic(x):
        ...     return x[0] * x[0] * x[1]
        >>> x, v = np.array([1.0, 2.0]), np.array([1.0, 0.0])
        >>> s2sad.hvp(quadratic)(x, v)  # the first column of [[2 x1, 2 x0], [2 x0, 0]]
        array([4., 2.])
    """
    if f is None:
        return lambda g: hvp(g, wrt, backend=backend)
    return Derivative(Derivative(f, "grad", wrt), "hvp", wrt, backend=backend)


@overload
def grad_and_hvp(f: Callable[..., Any], wrt: WrtSpec = 0, *,
                 backend: Backend = "numpy") -> Derivative[..., tuple[Any, Any]]: ...
@overload
def grad_and_hvp(f: None = None, wrt: WrtSpec = 0, *, backend: Backend = "numpy") -> Callable[
        [Callable[..., Any]], Derivative[..., tuple[Any, Any]]]: ...


def grad_and_hvp(f: Callable[..., Any] | None = None, wrt: WrtSpec = 0, *,
                 backend: Backend = "numpy") -> (
        Derivative[..., tuple[Any, Any]] |
        Callable[[Callable[..., Any]], Derivative[..., tuple[Any, Any]]]):
    """The gradient and a Hessian-vector product from one sweep (the JVP of the gradient).

    `grad_and_hvp(f)(*args, v)` takes `f`'s arguments, then one vector per `wrt` argument,
    and returns `(grad(f, wrt)(*args), hvp(f, wrt)(*args, v))`, computing `f`'s forward
    sweep once: a Newton step needs both, and two calls (`grad`, then `hvp`) each run the
    function again. It is `jvp(grad(f, wrt), wrt)`, the way JAX writes it.

    Returns:
        A `Derivative`; its calls return `(gradient, H @ v)`.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def quadratic(x):
        ...     return x[0] * x[0] * x[1]
        >>> x, v = np.array([1.0, 2.0]), np.array([1.0, 0.0])
        >>> g, hv = s2sad.grad_and_hvp(quadratic)(x, v)
        >>> g, hv  # [2 x0 x1, x0 ** 2], the first column of [[2 x1, 2 x0], [2 x0, 0]]
        (array([4., 1.]), array([4., 2.]))
    """
    if f is None:
        return lambda g: grad_and_hvp(g, wrt, backend=backend)
    return Derivative(Derivative(f, "grad", wrt), "jvp", wrt, backend=backend)


# a call of a transform inside a differentiated function is made while lowering it
derivative_hook.transforms.update((jvp, vjp, grad, value_and_grad, jacfwd, jacrev, hessian, hvp,
                                   grad_and_hvp))
# (rules whose primitive takes the user's function differentiate it with these at run time)
rule_transforms.jvp, rule_transforms.vjp = jvp, vjp
