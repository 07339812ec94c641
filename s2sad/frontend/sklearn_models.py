"""What scikit-learn's loss objects compute in Cython, as code the compiler reads.

`BaseLoss.loss(y_true, raw_prediction, sample_weight=None, loss_out=None, n_threads=1)`
(sklearn/_loss/loss.py) allocates `loss_out` and has its Cython loss (`self.closs`, a
`CyHalfSquaredError`, `CyPinballLoss(quantile)`, ...) write the per-sample loss into it:
`closs_...(y_true[i], raw_prediction[i], param)`, times `sample_weight[i]` when weights are
given (sklearn/_loss/_loss.pyx.tp). The functions below compute the same per-sample values
with NumPy, in forms as stable as the Cython code's (binomial's log(1 + exp(x)) that never
overflows, the multinomial's log-sum-exp shifted by the row's maximum), and `loss` returns
them in place of the array the Cython code fills. The handler at the end (HANDLERS, taken
in by library_shims.py) inlines `loss` in place of `BaseLoss.loss`, choosing the per-sample
function by the class of `self.closs` and passing its parameter (read while compiling: a
Cython loss's parameter cannot be set, and `self.closs` is a guarded attribute of the loss
object: frontend/guards.py).

Where the Cython code computes a form only for some samples (y_true * log(y_true / raw)
where y_true is not 0), the form is computed on an argument replaced elsewhere
(`np.where(positive, y_true, 1.0)`), so that the samples `np.where` does not choose it for
raise no divide-by-zero warning that sklearn does not. Values are sklearn's to an ulp or so
(NumPy's exp and log are not the C library's that Cython calls).
"""

from __future__ import annotations

import sys

import numpy as np

# -- the per-sample losses of sklearn/_loss/_loss.pyx.tp (closs_...) ----------------------


def half_squared_error(y_true, raw_prediction):
    return 0.5 * (raw_prediction - y_true) * (raw_prediction - y_true)


def absolute_error(y_true, raw_prediction):
    return np.abs(raw_prediction - y_true)


def pinball_loss(y_true, raw_prediction, quantile):
    """quantile * diff where y_true >= raw_prediction, else (1 - quantile) * -diff."""
    diff = y_true - raw_prediction
    return np.where(diff >= 0.0, quantile * diff, (quantile - 1.0) * diff)


def huber_loss(y_true, raw_prediction, delta):
    abserr = np.abs(y_true - raw_prediction)
    return np.where(abserr <= delta, 0.5 * abserr ** 2, delta * (abserr - 0.5 * delta))


def half_poisson(y_true, raw_prediction):
    return np.exp(raw_prediction) - y_true * raw_prediction


def half_gamma(y_true, raw_prediction):
    return raw_prediction + y_true * np.exp(-raw_prediction)


def half_tweedie(y_true, raw_prediction, power):
    """Half Tweedie deviance with log link, constant terms dropped (Poisson and Gamma drop
    others: it is not continuous in `power` at 1 and 2)."""
    if power == 0.0:
        return half_squared_error(y_true, np.exp(raw_prediction))
    if power == 1.0:
        return half_poisson(y_true, raw_prediction)
    if power == 2.0:
        return half_gamma(y_true, raw_prediction)
    return (np.exp((2.0 - power) * raw_prediction) / (2.0 - power)
            - y_true * np.exp((1.0 - power) * raw_prediction) / (1.0 - power))


def half_tweedie_identity(y_true, raw_prediction, power):
    """Half Tweedie deviance with identity link, constant terms kept."""
    if power == 0.0:
        return half_squared_error(y_true, raw_prediction)
    positive = y_true > 0 if power != 1.0 else y_true != 0  # (where sklearn adds its term)
    y_positive = np.where(positive, y_true, 1.0)  # (no log(0), 0 ** (2 - p) where not used)
    if power == 1.0:
        return np.where(positive, y_positive * np.log(y_positive / raw_prediction)
                        + raw_prediction - y_true, raw_prediction)
    if power == 2.0:
        return np.log(raw_prediction / y_true) + y_true / raw_prediction - 1.0
    tmp = raw_prediction ** (1.0 - power)
    tmp = raw_prediction * tmp / (2.0 - power) - y_true * tmp / (1.0 - power)
    return tmp + np.where(positive, y_positive ** (2.0 - power)
                          / ((1.0 - power) * (2.0 - power)), 0.0)


def half_binomial(y_true, raw_prediction):
    """log(1 + exp(raw)) - y_true * raw. sklearn's log1pexp picks exp(x), log1p(exp(x)),
    log(1 + exp(x)), x + exp(-x) or x by the size of x, for speed and never to overflow;
    np.logaddexp(0, x) = max(x, 0) + log1p(exp(-|x|)) never overflows either and gives its
    values to an ulp (as libm's exp and log do), with the derivative expit(x) everywhere."""
    return np.logaddexp(0.0, raw_prediction) - y_true * raw_prediction


def exponential(y_true, raw_prediction):
    tmp = np.exp(raw_prediction)
    return y_true / tmp + (1.0 - y_true) * tmp


def half_multinomial(y_true, raw_prediction):
    """Categorical cross-entropy of the labels `y_true` (0., 1., ...): the log-sum-exp of
    each row of `raw_prediction`, shifted by its maximum, less the entry of its label."""
    max_value = np.max(raw_prediction, axis=1)
    sum_exps = np.sum(np.exp(raw_prediction - max_value[:, None]), axis=1)
    label = y_true.astype(np.intp)
    return np.log(sum_exps) + max_value - \
        raw_prediction[np.arange(raw_prediction.shape[0]), label]


# the Cython loss class -> its per-sample loss and the names of its parameters
PER_SAMPLE = {
    "CyHalfSquaredError": (half_squared_error, ()),
    "CyAbsoluteError": (absolute_error, ()),
    "CyPinballLoss": (pinball_loss, ("quantile",)),
    "CyHuberLoss": (huber_loss, ("delta",)),
    "CyHalfPoissonLoss": (half_poisson, ()),
    "CyHalfGammaLoss": (half_gamma, ()),
    "CyHalfTweedieLoss": (half_tweedie, ("power",)),
    "CyHalfTweedieLossIdentity": (half_tweedie_identity, ("power",)),
    "CyHalfBinomialLoss": (half_binomial, ()),
    "CyExponentialLoss": (exponential, ()),
    "CyHalfMultinomialLoss": (half_multinomial, ()),
}


def loss(per_sample_loss, parameters, y_true, raw_prediction, sample_weight=None,
         loss_out=None, n_threads=1):
    """BaseLoss.loss, returning the values its Cython loss writes into `loss_out` (a
    `loss_out` given by the caller is refused by the handler)."""
    if raw_prediction.ndim == 2 and raw_prediction.shape[1] == 1:
        raw_prediction = raw_prediction.squeeze(1)
    loss_out = per_sample_loss(y_true, raw_prediction, *parameters)
    if sample_weight is not None:
        loss_out = sample_weight * loss_out
    return loss_out


_LOSS_ARGUMENTS = ("y_true", "raw_prediction", "sample_weight", "loss_out", "n_threads")


def _base_loss(lw, args, kwargs, node):
    """`loss_object.loss(...)` of scikit-learn's BaseLoss: `loss` above, with the per-sample
    loss of `loss_object.closs`. None (read as written) for another method named `loss` in
    that module (ArrayAPILossMixin's, in NumPy), or a Cython loss not listed above."""
    from s2sad.errors import UnsupportedSyntaxError
    from s2sad.frontend.values import Abort, Static, StaticSeq
    from s2sad.ir.nodes import Const

    losses, cython = sys.modules.get("sklearn._loss.loss"), sys.modules.get("sklearn._loss._loss")
    if losses is None or cython is None:
        return None
    fn = lw.current_shim_callee
    if getattr(fn, "__func__", None) is not losses.BaseLoss.loss:
        # (BaseLoss.loss(obj, ...) called unbound: read as written, as the guards do not
        # follow `obj.closs` there)
        return None
    closs = getattr(fn.__self__, "closs", None)
    cls = type(closs)
    if cls.__module__ != cython.__name__ or cls.__name__ not in PER_SAMPLE:
        return None
    options = dict(kwargs)
    if len(args) > len(_LOSS_ARGUMENTS) or set(options) - set(_LOSS_ARGUMENTS) or \
            set(options) & set(_LOSS_ARGUMENTS[:len(args)]):
        return None  # (a call that raises TypeError: as written)
    options.update(zip(_LOSS_ARGUMENTS, args))
    out = options.get("loss_out", Const(None))
    if not (isinstance(out, Const) and out.value is None):
        lw.error(UnsupportedSyntaxError, "a call that writes its result into an array it is "
                 "given: `loss_out=`", node, "assign the result to a name instead "
                 "(`values = loss.loss(y, raw)`, not `loss.loss(y, raw, loss_out=buf)`)")
        raise Abort
    per_sample, names = PER_SAMPLE[cls.__name__]
    parameters = StaticSeq(tuple(Const(float(getattr(closs, n))) for n in names))
    return lw.call_value(loss, [Static(per_sample, per_sample.__name__), parameters] +
                         list(args), kwargs, node)


# (module, name) -> handler, as in library_shims._HANDLERS (which takes these in)
HANDLERS = {("sklearn._loss.loss", "loss"): _base_loss}
