"""How a branch prints (codegen/emit.py if_stmt): a reverse sweep whose `then` side has
nothing to undo (the primal kept its value there) prints `if not c:` with the other side,
never `if c: pass` / `else:`. Checked against central finite differences."""

import numpy as np

import s2sad
from tests.oracle import numerical_grad


def kept_or_sined(x, flag):
    y = x * 2.0
    if np.sum(x) > 0 and flag > 1.5:
        pass
    else:
        y = np.sin(y)
    return np.sum(y ** 2)


def test_an_empty_side_prints_as_a_negated_test():
    g = s2sad.grad(kept_or_sined)
    for x, flag in ((np.array([1.0, 2.0]), 2.0), (np.array([1.0, 2.0]), 1.0),
                    (np.array([-1.0, 0.5]), 2.0)):
        want = numerical_grad(lambda v: kept_or_sined(v, flag), (x,), (0,))[0]
        np.testing.assert_allclose(g(x, flag), want, rtol=1e-6, atol=1e-8)
    src = g.source
    assert "if not t:" in src and "pass" not in src
