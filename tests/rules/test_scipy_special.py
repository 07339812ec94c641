"""Rules for scipy.special (loaded the first time a differentiated function calls one of
its functions): against finite differences and the dot-product test; SciPy is not imported
by `import s2sad`."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import s2sad
from tests.rules.test_issue13_regressions import check_both_modes

sc = pytest.importorskip("scipy.special")
from scipy.special import logsumexp  # noqa: E402


def lse_rows(x): return logsumexp(x, axis=1)
def lse_weighted(x, b): return logsumexp(x, axis=0, b=b, keepdims=True)
def lse_sign(x): return logsumexp(x, return_sign=True)[0]
def lse_number_keepdims(x): return logsumexp(x, keepdims=True)
def classifier(w, x): return np.sum(sc.log_softmax(x @ w, axis=1)[:, 0]) + np.sum(sc.expit(w))
def gaussian_terms(x): return sc.log_ndtr(x) + sc.erf(x) * sc.erfc(x) + sc.erfinv(x / 3.0)
def gamma_terms(x): return sc.gammaln(x) + sc.polygamma(2, x) + sc.psi(x) * sc.gamma(x)
def entropy_terms(p, q): return np.sum(sc.xlogy(p, q) - sc.xlog1py(p, q) + sc.logit(p))
def complex_erf(z): return np.abs(sc.erf(z))


@pytest.mark.parametrize("f, args", [
    (lse_rows, (np.array([[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]]),)),
    (lse_weighted, (np.array([[0.5, -1.0], [2.0, 0.1]]), np.array([[0.5], [2.0]]))),
    (classifier, (np.array([[0.5, -1.0, 0.2], [0.3, 0.8, -0.4]]),
                  np.array([[1.0, 2.0], [0.5, -1.5]]))),
    (gaussian_terms, (np.array([-1.5, 0.2, 2.0]),)),
    (gamma_terms, (np.array([0.7, 1.5, 3.2]),)),
    (entropy_terms, (np.array([0.2, 0.5, 0.7]), np.array([0.5, 1.5, 3.0]))),
])
def test_scipy_special_against_finite_differences(f, args):
    check_both_modes(f, args)


def test_textbook_values():
    # d/dx logsumexp(x) is softmax(x); d/dx gammaln(x) at 1 is -Euler's gamma
    x = np.array([0.5, -1.0, 2.0])
    assert np.allclose(s2sad.grad(lse_rows)(x[None]), sc.softmax(x)[None])
    assert np.isclose(s2sad.grad(sc_gammaln_sum)(np.array([1.0]))[0], -0.5772156649015329)


def sc_gammaln_sum(x): return np.sum(sc.gammaln(x))


@pytest.mark.parametrize("f, x, what", [
    (lse_sign, np.array([0.5, 1.0]), "return_sign"),
    (lse_number_keepdims, 0.5, "keepdims"),
    (complex_erf, np.array([0.5 + 1.0j]), "complex"),
])
def test_refusals(f, x, what):
    with pytest.raises(s2sad.S2SADError, match=what):
        s2sad.grad(f)(x)


def test_importing_s2sad_does_not_import_scipy():
    code = "import sys, s2sad; sys.exit('scipy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
