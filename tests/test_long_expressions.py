"""A long expression (a sum of 600 terms is a syntax tree 600 levels deep)
compiles whenever Python itself compiles the function (issue #16)."""

import importlib.util

import numpy as np

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jvp


def test_a_sum_of_600_terms(tmp_path):
    terms = " + ".join(f"np.sin({i % 7 + 1}.0 * x) * {i % 5 + 1}.0" for i in range(600))
    path = tmp_path / "long_sum.py"
    path.write_text(f"import numpy as np\n\n\ndef f(x):\n    return {terms}\n")
    spec = importlib.util.spec_from_file_location("long_sum", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    f = module.f
    assert_close(s2sad.grad(f)(0.3), numerical_grad(f, (0.3,), (0,))[0], what="grad")
    out, out_dot = s2sad.jvp(f)(0.3, 1.0)
    assert_close(out, f(0.3), what="primal")
    assert_close(out_dot, numerical_jvp(f, (0.3,), (0,), (1.0,)), what="jvp")
