"""Nothing our code relies on is deprecated (issue 20).

pyproject.toml turns every warning raised from a module `s2sad*` into an error in the tests.
Generated code runs in a namespace of its own (the warnings module sees it as `<string>`),
so the corpus's derivatives are run here with deprecations as errors.
"""

import warnings

import numpy as np
import pytest

import s2sad

try:  # works both with and without tests/__init__.py
    from tests import oracle
    from tests.corpus import programs
except ImportError:  # pragma: no cover
    import oracle
    from corpus import programs

DEPRECATIONS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


def _warn_from(module: str, category) -> None:
    exec("warnings.warn('old spelling', category)",
         {"__name__": module, "warnings": warnings, "category": category})


@pytest.mark.parametrize("module", ["s2sad.frontend.lower", "s2sad_rules.math_special"])
def test_a_deprecation_raised_from_our_code_is_an_error(module):
    with pytest.raises(DeprecationWarning):
        _warn_from(module, DeprecationWarning)


def test_a_deprecation_raised_from_a_dependency_stays_a_warning():
    with pytest.warns(DeprecationWarning):
        _warn_from("astor.op_util", DeprecationWarning)


@pytest.mark.parametrize("case", programs.CASES, ids=[c.name for c in programs.CASES])
def test_generated_code_uses_nothing_deprecated(case):
    args = case.args(oracle.rng_for(case.name, "warnings"))
    tangents = [oracle.random_like(np.random.default_rng(0), args[i]) for i in case.wrt_idx]
    f_jvp = s2sad.jvp(case.fn, wrt=case.wrt)
    f_vjp = s2sad.vjp(case.fn, wrt=case.wrt)
    f_jvp(*args, *tangents, **case.kwargs)  # compiles (the compiler's own warnings: pyproject)
    out, pullback = f_vjp(*args, **case.kwargs)
    with warnings.catch_warnings():
        for category in DEPRECATIONS:
            warnings.simplefilter("error", category)
        f_jvp(*args, *tangents, **case.kwargs)
        out, pullback = f_vjp(*args, **case.kwargs)
        pullback(oracle.random_like(np.random.default_rng(1), out))
