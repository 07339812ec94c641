"""Regenerate docs/examples.md: generated derivatives of the functions in examples_src.py.

Run `python docs/gen_examples.py`; tests/test_docs.py checks the committed page is current.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import examples_src as ex  # noqa: E402

import s2sad  # noqa: E402


def block(code: str) -> str:
    return "```python\n" + code.rstrip() + "\n```\n"


def render() -> str:
    x = np.array([2.0, 3.0])
    f_jvp = s2sad.jvp(ex.f)
    cols = [f_jvp(x, v)[1] for v in (np.array([1.0, 0.0]), np.array([0.0, 1.0]))]
    parts = [
        "# Generated derivatives, worked examples\n",
        "This page is produced by `docs/gen_examples.py` from `docs/examples_src.py`;",
        "a test regenerates it, so it always shows what the compiler emits today.\n",
        "## Forward mode on the seed example\n",
        block(inspect.getsource(ex.f)),
        "At x = [2, 3] the JVPs along [1, 0] and [0, 1] are the Jacobian's columns:",
        f"`{np.round(cols[0], 6).tolist()}` (that is [1, 3, cos 2]) and "
        f"`{np.round(cols[1], 6).tolist()}` (that is [1, 2, 0]). The generated JVP:\n",
        block(f_jvp.source_for(x, x)),
        "## The Jacobian in one vector-mode call\n",
        "Column by column, the Jacobian takes one JVP per input direction (above, twice).",
        "`s2sad.jacfwd` emits a *vector-mode* JVP instead: each tangent carries a trailing",
        "axis with one direction per input entry (here the identity, `eye`), so one call",
        "computes every column at once:\n",
        f"`s2sad.jacfwd(f)(x)` = `{np.round(s2sad.jacfwd(ex.f)(x), 6).tolist()}`\n",
        block(s2sad.jacfwd(ex.f).source_for(x)),
        "## Forward mode on a ten-line function\n",
        "Tangents are named after the variables they differentiate (`vx_dot`); a value that",
        "does not depend on an input gets no tangent code at all, and nothing reads like",
        "`0 * ...` or `... + 0`.\n",
        block(inspect.getsource(ex.projectile)),
        block(s2sad.jvp(ex.projectile, wrt=(0, 1)).source_for(20.0, 0.7, 0.05, 1.0, 0.0)),
        "## Reverse mode through a loop\n",
        "The forward sweep runs the loop and records on a tape (a Python list) the values",
        "the reverse sweep reads: here the state `(v, x)` at the start of each step. The",
        "reverse sweep takes the tape's items from its end, one per step",
        "(`for saved in reversed(tape)`), and carries the cotangents of the loop variables",
        "(`x_bar`, `v_bar`) and of the parameters (`a_bar`, `b_bar`) from one step to the",
        "previous. (A loop nested in another runs its range backwards and takes its items",
        "with `next(tape_reader)`: each of its runs reads only its own share of the tape.)\n",
        block(inspect.getsource(ex.pendulum)),
        block(s2sad.grad(ex.pendulum, wrt=(0, 1)).source_for(1.3, 0.2)),
        "## Values recomputed instead of stored\n",
        "When what the reverse sweep reads can be recomputed cheaply from values it has",
        "anyway (here `x[i]` from `x` and `i`), the reversed loop recomputes it and no tape",
        "is needed. Each step writes one entry of `x_bar`, in place: the entries start at",
        "zero and no index repeats, so the write is a plain `x_bar[i] = ...`.\n",
        block(inspect.getsource(ex.softplus_sum)),
        block(s2sad.grad(ex.softplus_sum).source_for(np.zeros(5))),
        "## Writing into an array in a loop\n",
        "`out[i] = v` makes a new version of `out` in the IR (value semantics); the compiler",
        "proves `out` is an array the function created and that nothing else reads it, and",
        "writes in place. The reverse sweep reads the written slot's cotangent, then clears",
        "it (an overwritten value has no influence on the result); the caller's cotangent",
        "seed is copied once before the loop, never modified. Writing into an argument, a",
        "view or an array another live name refers to is refused with an error that says",
        "to copy it first.\n",
        block(inspect.getsource(ex.fill)),
        block(s2sad.vjp(ex.fill).source_for(np.zeros(4))),
        "## A recursive function\n",
        "A call of a function that is already being compiled is not inlined: the",
        "derivative calls a derivative of the function itself, `power_vjp` below, written",
        "beside the gradient in the same module, so it recurses exactly as the function",
        "does. It is compiled for its arguments' ranks, not their sizes or values, so the",
        "base case (`n == 0`) is a branch of the same code. In reverse mode each call",
        "returns its pullback, kept for the reverse sweep.\n",
        block(inspect.getsource(ex.power)),
        block(s2sad.grad(ex.power).source_for(1.3, 4)),
        "## A Hessian-vector product: forward over reverse\n",
        "`s2sad.hvp(f)` is the JVP of the gradient: the compiler applies its forward pass",
        "to the IR of the reverse-mode gradient, and the simplifier removes what the",
        "product does not need (the gradient itself is never formed):\n",
        block(inspect.getsource(ex.rosen)),
        block(s2sad.hvp(ex.rosen).source_for(np.ones(5), np.ones(5))),
    ]
    return "\n".join(parts)


def main():
    (HERE / "examples.md").write_text(render())


if __name__ == "__main__":
    main()
