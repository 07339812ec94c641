"""The step-by-step derivative (explain=True) on the whole corpus.

Oracle: central finite differences (tests/oracle.py). At one random point per case:
- the explained JVP equals J v from finite differences, and the default JVP to ~1e-10;
- the explained pullback equals J^T u from the finite-difference Jacobian, and the
  default pullback to ~1e-10;
- its source holds one primitive per line (no call nested in another's arguments, beyond
  index syntax), names each step's cotangent and says which rule it applies.
"""

from __future__ import annotations

import ast
import math

import numpy as np
import pytest

import s2sad
from s2sad.cli import main

try:  # works both with and without tests/__init__.py
    from tests import oracle
    from tests.corpus import programs
except ImportError:  # pragma: no cover
    import oracle
    from corpus import programs

AGREE_RTOL, AGREE_ATOL = 1e-10, 1e-12


@pytest.mark.parametrize("case", programs.CASES, ids=programs.CASE_IDS)
def test_explained_vjp_matches_finite_differences_and_default(case):
    rng = oracle.rng_for(case.name, "explain-reverse")
    args = case.args(rng)
    explained = s2sad.vjp(case.fn, wrt=case.wrt, explain=True)
    out, pullback = explained(*args, **case.kwargs)
    oracle.assert_close(out, case(*args), 1e-12, 1e-14, what=f"out of {case.name}")
    u = oracle.random_like(rng, out)
    cots = pullback(u)
    expected = oracle.numerical_vjp(case.fn, args, case.wrt_idx, u, kwargs=case.kwargs)
    oracle.assert_close(cots, expected, oracle.FD_RTOL, oracle.FD_ATOL,
                        what=f"explained pullback of {case.name}")
    _assert_one_primitive_per_line(explained.source_for(*args, **case.kwargs))
    _, default_pullback = s2sad.vjp(case.fn, wrt=case.wrt)(*args, **case.kwargs)
    oracle.assert_close(cots, default_pullback(u), AGREE_RTOL, AGREE_ATOL,
                        what=f"explained vs default pullback of {case.name}")


@pytest.mark.parametrize("case", programs.CASES, ids=programs.CASE_IDS)
def test_explained_jvp_matches_finite_differences_and_default(case):
    rng = oracle.rng_for(case.name, "explain-forward")
    args = case.args(rng)
    v = [oracle.random_like(rng, args[i]) for i in case.wrt_idx]
    out, out_dot = s2sad.jvp(case.fn, wrt=case.wrt, explain=True)(*args, *v, **case.kwargs)
    oracle.assert_close(out, case(*args), 1e-12, 1e-14, what=f"out of {case.name}")
    expected = oracle.numerical_jvp(case.fn, args, case.wrt_idx, v, kwargs=case.kwargs)
    oracle.assert_close(out_dot, expected, oracle.FD_RTOL, oracle.FD_ATOL,
                        what=f"explained JVP of {case.name}")
    _, default_dot = s2sad.jvp(case.fn, wrt=case.wrt)(*args, *v, **case.kwargs)
    oracle.assert_close(out_dot, default_dot, AGREE_RTOL, AGREE_ATOL,
                        what=f"explained vs default JVP of {case.name}")


def mlp_loss(W1, W2, x, y):
    h = np.tanh(W1 @ x)
    pred = W2 @ h
    err = pred - y
    return 0.5 * np.sum(err * err)


def _mlp_args():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((4, 3)), rng.standard_normal((2, 4)),
            rng.standard_normal(3), rng.standard_normal(2))


def test_explained_mlp_gradient_names_every_step():
    args = _mlp_args()
    d = s2sad.grad(mlp_loss, wrt=(0, 1), explain=True)
    g1, g2 = d(*args)
    e1, e2 = oracle.numerical_grad(mlp_loss, args, (0, 1))
    oracle.assert_close((g1, g2), (e1, e2), oracle.FD_RTOL, oracle.FD_ATOL, what="mlp grad")
    src = d.source_for(*args)
    for name in ("err_bar", "pred_bar", "h_bar", "W1_bar", "W2_bar"):
        assert f"{name} = " in src, (name, src)
    assert "# reverse of line" in src
    assert "# back through err = pred - y; d(a - b) = da - db" in src
    assert "d(A @ B) = dA @ B + A @ dB" in src
    assert "d tanh(a) = (1 - tanh²(a))·da" in src
    _assert_one_primitive_per_line(src)
    # the default form is a different, shorter program with the same numbers
    default = s2sad.grad(mlp_loss, wrt=(0, 1))
    assert default.source_for(*args) != src
    oracle.assert_close(default(*args), (g1, g2), AGREE_RTOL, AGREE_ATOL, what="default")


def _assert_one_primitive_per_line(src: str) -> None:
    """No call or operator nested inside another one's operands (index syntax and the
    returned tuple aside)."""
    tree = ast.parse(src)
    # a size read from an argument (`n = x.shape[0]`, issue 34) and arithmetic of sizes and
    # numbers (`np.zeros((n - 1,))`) are the shapes of values, not steps
    sizes = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
             and isinstance(node.value, ast.Subscript)
             and isinstance(node.value.value, ast.Attribute) and node.value.value.attr == "shape"
             for t in node.targets if isinstance(t, ast.Name)}

    def size_arithmetic(n) -> bool:
        return isinstance(n, (ast.BinOp, ast.UnaryOp)) and all(
            isinstance(m, (ast.Constant, ast.operator, ast.unaryop, ast.expr_context,
                           ast.BinOp, ast.UnaryOp)) or isinstance(m, ast.Name) and m.id in sizes
            for m in ast.walk(n))

    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        value = node.value
        inner = [n for n in ast.walk(value) if n is not value and
                 isinstance(n, (ast.Call, ast.BinOp, ast.UnaryOp)) and
                 not (isinstance(n, ast.UnaryOp) and isinstance(n.operand, ast.Constant)) and
                 not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and
                      n.func.id == "slice") and not size_arithmetic(n)]
        operands = [n for n in inner if not _within_index(value, n)]
        assert not operands, ast.unparse(node)


def _within_index(root, node) -> bool:
    for sub in ast.walk(root):
        if isinstance(sub, ast.Subscript) and any(n is node for n in ast.walk(sub.slice)):
            return True
        if isinstance(sub, ast.Tuple) and sub is root:
            return True
    return False


def test_explain_is_keyed_apart_from_the_default():
    def cube(x):
        return x * x * x

    plain = s2sad.grad(cube)
    step = s2sad.grad(cube, explain=True)
    assert plain(2.0) == pytest.approx(12.0) and step(2.0) == pytest.approx(12.0)
    assert "step by step" in step.source_for(2.0)
    assert "step by step" not in plain.source_for(2.0)


def test_value_and_grad_and_decorator_take_explain():
    @s2sad.value_and_grad(explain=True)
    def f(x):
        return math.sin(x) / x

    value, slope = f(1.5)
    assert value == pytest.approx(math.sin(1.5) / 1.5)
    expected = (math.cos(1.5) * 1.5 - math.sin(1.5)) / 1.5 ** 2
    assert slope == pytest.approx(expected, rel=1e-12)
    assert "d(a/b) = da/b - a·db/b²" in f.source_for(1.5)


def test_cli_show_explain(capsys):
    assert main(["show", "s2sad.examples.seeds:g", "--mode", "vjp", "--explain",
                 "--args", "2.0, 3.0", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "# back through t3 = x1 * x2; d(a·b) = da·b + a·db" in out
    assert "\x1b[" not in out
    ns: dict = {}
    exec(compile(out, "<show>", "exec"), ns)  # noqa: S102 - the printed source runs
    _, pullback = ns["g_vjp"](2.0, 3.0)
    c6 = math.cos(6.0)
    assert pullback((1.0, 1.0)) == pytest.approx((4 + 3 * c6, 1 + 2 * c6), rel=1e-12)


try:  # works both with and without tests/__init__.py
    from tests.passes import loop_programs, recursion_programs
except ImportError:  # pragma: no cover
    from passes import loop_programs, recursion_programs

_LOOPS = [
    (loop_programs.long_scalar_loop, lambda: (0.3, 20)),
    (loop_programs.array_recurrence,
     lambda: (np.linspace(-0.5, 0.5, 3), np.eye(3) * 0.4 + 0.1, 5)),
    (loop_programs.while_countdown, lambda: (0.7, 15)),
    (loop_programs.branchy_loop, lambda: (0.4, 7)),
    (recursion_programs.power, lambda: (1.3, 5)),
]


@pytest.mark.parametrize("fn, make", _LOOPS, ids=[f.__name__ for f, _ in _LOOPS])
def test_explained_loops_and_recursion_match_finite_differences(fn, make):
    args = make()
    explained = s2sad.grad(fn, wrt=0, explain=True)
    got = explained(*args)
    expected = oracle.numerical_grad(fn, args, (0,))[0]
    oracle.assert_close(got, expected, oracle.FD_RTOL, oracle.FD_ATOL,
                        what=f"explained grad of {fn.__name__}")
    oracle.assert_close(got, s2sad.grad(fn, wrt=0)(*args), AGREE_RTOL, AGREE_ATOL,
                        what=f"explained vs default grad of {fn.__name__}")
    v = oracle.random_like(np.random.default_rng(1), args[0])
    _, tangent = s2sad.jvp(fn, wrt=0, explain=True)(*args, v)
    # the dot-product test: <1, J v> == <J^T 1, v> (one output)
    assert float(tangent) == pytest.approx(float(np.vdot(expected, v)), rel=1e-6, abs=1e-9)
