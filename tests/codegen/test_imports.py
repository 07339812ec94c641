"""Generated source lints clean (issue 17): what `.source` and `s2sad show` print imports
every name it reads (`np`, the runtime helpers of `s2sad.runtime`) and nothing else, and
has no `if` whose two arms are the same; so do ahead-of-time modules. Checked with pyflakes
on the whole corpus, generic and specialised, in both modes."""

from __future__ import annotations

import ast
import io

import numpy as np
import pytest

from s2sad.ir.kinds import UNKNOWN, kind_of_value
from s2sad.store.aot import DerivativeSpec, write_module
from s2sad.transform import generate, resolve_wrt

try:  # works both with and without tests/__init__.py
    from tests import oracle
    from tests.corpus import programs
    from tests.passes import loop_programs, recursion_programs
except ImportError:  # pragma: no cover
    import oracle
    from corpus import programs
    from passes import loop_programs, recursion_programs

pyflakes_api = pytest.importorskip("pyflakes.api")
from pyflakes.reporter import Reporter


def lint(source: str) -> list:
    out = io.StringIO()
    pyflakes_api.check(source, "generated", Reporter(out, out))
    return out.getvalue().splitlines()


def identical_branches(source: str) -> list:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and node.orelse and \
                [ast.dump(s) for s in node.body] == [ast.dump(s) for s in node.orelse]:
            found.append(ast.unparse(node))
        if isinstance(node, ast.IfExp) and ast.dump(node.body) == ast.dump(node.orelse):
            found.append(ast.unparse(node))
    return found


def _check(source: str, where: str):
    problems = lint(source)
    assert not problems, f"{where}: pyflakes says\n" + "\n".join(problems) + "\n" + source
    same = identical_branches(source)
    assert not same, f"{where}: a branch with identical arms:\n{same[0]}\n{source}"


def _kinds(case):
    args = case.args(oracle.rng_for(case.name, "probe"))
    return {"generic": [UNKNOWN] * len(args),
            "specialised": [kind_of_value(a, keep_value=False) for a in args]}


@pytest.mark.parametrize("case", programs.CASES, ids=programs.CASE_IDS)
@pytest.mark.parametrize("mode", ["jvp", "vjp", "jvp+explain", "vjp+explain"])
def test_corpus_sources_lint_clean(case, mode):
    wrt, wrt_tuple = resolve_wrt(case.fn, case.wrt)
    for what, kinds in _kinds(case).items():
        compiled = generate(case.fn, mode, wrt, wrt_tuple, kinds, {})
        _check(compiled.source, f"{case.name} {mode} ({what})")


LOOPS_AND_RECURSION = [recursion_programs.power, recursion_programs.det,
                       recursion_programs.even, loop_programs.long_scalar_loop,
                       loop_programs.array_recurrence, loop_programs.while_countdown,
                       loop_programs.branchy_loop]


@pytest.mark.parametrize("fn", LOOPS_AND_RECURSION, ids=lambda f: f.__name__)
def test_loop_and_recursive_sources_lint_clean(fn):
    for mode in ("jvp", "vjp", "grad", "jvp+explain", "grad+explain"):
        wrt, wrt_tuple = resolve_wrt(fn, 0)
        compiled = generate(fn, mode, wrt, wrt_tuple, [UNKNOWN] * fn.__code__.co_argcount, {})
        _check(compiled.source, f"{fn.__name__} {mode}")


def test_printed_recursive_source_runs_as_printed():
    import s2sad

    d = s2sad.grad(recursion_programs.power)
    expected = d(1.5, 3)
    scope: dict = {}
    exec(d.source, scope)  # its imports and the derivative it calls are printed
    assert scope["power_grad"](1.5, 3) == pytest.approx(expected) == pytest.approx(3 * 1.5 ** 2)


@pytest.mark.parametrize("case", programs.CASES[::3], ids=programs.CASE_IDS[::3])
def test_ahead_of_time_modules_lint_clean(case):
    args = case.args(oracle.rng_for(case.name, "probe"))
    target = f"{case.fn.__module__}:{case.fn.__name__}"
    specs = [DerivativeSpec(target, case.fn, "vjp", case.wrt, None, name="generic_vjp"),
             DerivativeSpec(target, case.fn, "jvp", case.wrt, tuple(args), name="special_jvp"),
             DerivativeSpec(target, case.fn, "vjp", case.wrt, tuple(args), name="special_vjp")]
    text = write_module(specs)
    _check(text, f"the module of {case.name}")
    scope: dict = {}
    exec(compile(text, "module", "exec"), scope)  # it imports what it uses
    out, _ = scope["special_vjp"](*args)
    assert np.allclose(out, case.fn(*args))


def test_a_recursive_derivative_is_refused_ahead_of_time_clearly():
    from s2sad.store.aot import AheadOfTimeError

    spec = DerivativeSpec("tests.passes.recursion_programs:power", recursion_programs.power,
                          "grad", 0, (1.5, 3))
    with pytest.raises(AheadOfTimeError, match="recursive"):
        write_module([spec])
