"""scikit-learn's loss objects (sklearn._loss.loss), whose per-sample values Cython computes,
differentiated through s2sad's model of them (s2sad/frontend/sklearn_models.py).

Each loss is checked against sklearn itself: the values the model computes against
`loss.loss` (the compiled code), the gradient against `loss.gradient` and central
differences, the JVP against the gradient times the tangent, and the second derivatives
against `loss.gradient_hessian` where it is exact and central differences of sklearn's
gradient everywhere; with and without sample weights.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sad
from tests.oracle import assert_close, numerical_grad, numerical_jacobian, rng_for

skloss = pytest.importorskip("sklearn._loss.loss")

N = 6


def _real(r):
    return r.uniform(-1.0, 1.0, N)


def _positive(r):
    return r.uniform(0.5, 3.0, N)


def _with_zeros(r):
    y = r.uniform(0.5, 3.0, N)
    y[::3] = 0.0
    return y


def _binary(r):
    return np.array([0.0, 1.0, 1.0, 0.0, 0.3, 1.0])


def _away_from(y, r, lo, hi):
    """raw_prediction at a distance in [lo, hi) from y, either side (away from a kink)."""
    return y + r.choice([-1.0, 1.0], N) * r.uniform(lo, hi, N)


def _wide(r):  # (log(1 + exp(x)) for large |x| too: its overflow-free form)
    return np.concatenate([r.uniform(-3.0, 3.0, N - 4), [-800.0, 25.0, 40.0, 800.0]])


# name -> (loss, y_true, raw_prediction(y, r), sklearn's hessian is the exact one)
LOSSES = {
    "HalfSquaredError": (skloss.HalfSquaredError(), _real, lambda y, r: _real(r), True),
    "AbsoluteError": (skloss.AbsoluteError(), _real,
                      lambda y, r: _away_from(y, r, 0.1, 1.0), False),
    "PinballLoss(0.3)": (skloss.PinballLoss(quantile=0.3), _real,
                         lambda y, r: _away_from(y, r, 0.1, 1.0), False),
    "HuberLoss(0.5) inside": (skloss.HuberLoss(delta=0.5), _real,
                              lambda y, r: _away_from(y, r, 0.05, 0.4), True),
    "HuberLoss(0.5) outside": (skloss.HuberLoss(delta=0.5), _real,
                               lambda y, r: _away_from(y, r, 0.6, 1.5), True),
    "HalfPoissonLoss": (skloss.HalfPoissonLoss(), _with_zeros, lambda y, r: _real(r), True),
    "HalfGammaLoss": (skloss.HalfGammaLoss(), _positive, lambda y, r: _real(r), True),
    "HalfBinomialLoss": (skloss.HalfBinomialLoss(), _binary, lambda y, r: _wide(r), True),
    "ExponentialLoss": (skloss.ExponentialLoss(), _binary, lambda y, r: _real(r), True),
}
for _p in (0.0, 1.0, 1.5, 2.0, 3.0):
    LOSSES[f"HalfTweedieLoss({_p})"] = (
        skloss.HalfTweedieLoss(power=_p), _positive if _p >= 2 else _with_zeros,
        lambda y, r: _real(r), True)
    LOSSES[f"HalfTweedieLossIdentity({_p})"] = (
        skloss.HalfTweedieLossIdentity(power=_p), _positive if _p >= 2 else _with_zeros,
        lambda y, r: _positive(r), True)


def _problem(name, weighted):
    loss, y_draw, raw_draw, exact_hessian = LOSSES[name]
    r = rng_for(name, str(weighted))
    y = y_draw(r)
    raw = raw_draw(y, r)
    w = r.uniform(0.5, 2.0, N) if weighted else None
    return loss, y, raw, w, exact_hessian


CASES = [pytest.param(name, weighted, id=f"{name}{' weighted' if weighted else ''}")
         for name in LOSSES for weighted in (False, True)]


@pytest.mark.filterwarnings("error::RuntimeWarning")  # (nor a warning sklearn does not give)
@pytest.mark.parametrize("name, weighted", CASES)
def test_value_and_tangent_are_sklearns(name, weighted):
    loss, y, raw, w, _ = _problem(name, weighted)
    v = rng_for(name, "tangent").uniform(-1.0, 1.0, N)
    values, tangent = s2sad.jvp(lambda z: loss.loss(y, z, sample_weight=w))(raw, v)
    assert_close(values, loss.loss(y, raw, sample_weight=w), rtol=1e-13, atol=1e-14,
                 what="loss values")
    assert_close(tangent, loss.gradient(y, raw, sample_weight=w) * v, rtol=1e-12,
                 atol=1e-14, what="JVP")


@pytest.mark.parametrize("name, weighted", CASES)
def test_gradient_is_sklearns_and_central_differences(name, weighted):
    loss, y, raw, w, _ = _problem(name, weighted)

    def total(z):
        return np.sum(loss.loss(y, z, sample_weight=w))

    g = s2sad.grad(total)(raw)
    assert_close(g, loss.gradient(y, raw, sample_weight=w), rtol=1e-12, atol=1e-14,
                 what="gradient vs sklearn's")
    assert_close(g, numerical_grad(total, (raw,), (0,))[0], rtol=1e-6, atol=1e-7,
                 what="gradient vs central differences")


@pytest.mark.parametrize("name, weighted", CASES)
def test_second_derivatives(name, weighted):
    loss, y, raw, w, exact_hessian = _problem(name, weighted)

    def total(z):
        return np.sum(loss.loss(y, z, sample_weight=w))

    h = s2sad.hessian(total)(raw)
    sklearn_gradient = numerical_jacobian(
        lambda z: loss.gradient(y, z, sample_weight=w), (raw,), (0,))[0]
    assert_close(h, sklearn_gradient, rtol=1e-6, atol=1e-6,
                 what="Hessian vs central differences of sklearn's gradient")
    if exact_hessian:  # (absolute and pinball loss: sklearn says 1 for a Hessian of 0)
        _, hess = loss.gradient_hessian(y, raw, sample_weight=w)
        assert_close(h, np.diag(hess), rtol=1e-12, atol=1e-14,
                     what="Hessian vs sklearn's gradient_hessian")
    v = rng_for(name, "hvp").uniform(-1.0, 1.0, N)
    assert_close(s2sad.hvp(total)(raw, v), sklearn_gradient @ v, rtol=1e-6, atol=1e-6,
                 what="HVP")


def _multinomial(weighted):
    loss = skloss.HalfMultinomialLoss(n_classes=3)
    r = rng_for("HalfMultinomialLoss", str(weighted))
    y = np.array([0.0, 2.0, 1.0, 2.0, 0.0])
    raw = r.uniform(-2.0, 2.0, (5, 3))
    w = r.uniform(0.5, 2.0, 5) if weighted else None
    return loss, y, raw, w


@pytest.mark.parametrize("weighted", [False, True])
def test_multinomial(weighted):
    loss, y, raw, w = _multinomial(weighted)

    def total(z):
        return np.sum(loss.loss(y, z, sample_weight=w))

    v = rng_for("HalfMultinomialLoss", "tangent").uniform(-1.0, 1.0, raw.shape)
    values, tangent = s2sad.jvp(lambda z: loss.loss(y, z, sample_weight=w))(raw, v)
    gradient = loss.gradient(y, raw, sample_weight=w)
    assert_close(values, loss.loss(y, raw, sample_weight=w), rtol=1e-13, atol=1e-14)
    assert_close(tangent, np.sum(gradient * v, axis=1), rtol=1e-12, atol=1e-14)
    g = s2sad.grad(total)(raw)
    assert_close(g, gradient, rtol=1e-12, atol=1e-14, what="gradient vs sklearn's")
    assert_close(g, numerical_grad(total, (raw,), (0,))[0], rtol=1e-6, atol=1e-7)
    h = s2sad.hessian(total)(raw)  # (5, 3, 5, 3): a block per sample
    fd = numerical_jacobian(lambda z: loss.gradient(y, z, sample_weight=w), (raw,), (0,))[0]
    assert_close(h.reshape(15, 15), fd.reshape(15, 15), rtol=1e-6, atol=1e-6)
    _, hess = loss.gradient_hessian(y, raw, sample_weight=w)  # (the diagonal of each block)
    assert_close(np.einsum("ikik->ik", h), hess, rtol=1e-12, atol=1e-14)


def test_the_weighted_mean_of_call():
    """`loss(y, raw, sample_weight)`: BaseLoss.__call__, np.average of `loss.loss`."""
    loss, y, raw, w, _ = _problem("HalfGammaLoss", True)
    g = s2sad.grad(lambda z: loss(y, z, sample_weight=w))(raw)
    assert_close(g, loss.gradient(y, raw, sample_weight=w) / np.sum(w), rtol=1e-12,
                 atol=1e-14)


def test_the_bound_method_differentiated_itself():
    loss, y, raw, w, _ = _problem("HalfBinomialLoss", True)
    values, pullback = s2sad.vjp(loss.loss, wrt=1)(y, raw, w)
    assert_close(values, loss.loss(y, raw, w), rtol=1e-13, atol=1e-14)
    u = rng_for("bound", "cotangent").uniform(-1.0, 1.0, N)
    (raw_bar,) = pullback(u)
    assert_close(raw_bar, loss.gradient(y, raw, w) * u, rtol=1e-12, atol=1e-14)


def test_a_loss_out_given_is_refused_at_the_users_line():
    loss, y, raw, _, _ = _problem("HalfSquaredError", False)

    def into_buffer(z):
        out = np.empty_like(z)
        loss.loss(y, z, loss_out=out)
        return np.sum(out)

    with pytest.raises(s2sad.UnsupportedSyntaxError, match="loss_out") as err:
        s2sad.grad(into_buffer)(raw)
    assert err.value.filename == __file__


def test_another_cython_loss_is_read_again(monkeypatch):
    """`self.closs` is a guarded attribute: a loss object given another Cython loss gets
    another derivative; left as it is, the derivative is compiled once (the bound method
    `closs.loss`, made anew at each read, is no fact that never holds)."""
    import s2sad.transform as transform

    loss = skloss.PinballLoss(quantile=0.3)
    y = np.array([0.0, 1.0, -1.0])
    raw = np.array([0.5, 0.5, 0.5])
    d = s2sad.grad(lambda z: np.sum(loss.loss(y, z)))
    assert_close(d(raw), loss.gradient(y, raw), rtol=1e-12, atol=0.0)
    lowered = []
    original = transform.lower
    monkeypatch.setattr(transform, "lower", lambda *a, **k: lowered.append(a) or
                        original(*a, **k))
    d(raw)
    assert not lowered, "the derivative was compiled again for the same loss"
    loss.closs = skloss.PinballLoss(quantile=0.8).closs
    assert_close(d(raw), loss.gradient(y, raw), rtol=1e-12, atol=0.0)
    assert lowered
