"""What goes wrong today with each corpus case, per mode: "rev" (grad or vjp), "fwd" (jvp).

Written by `python bench/realcode_report.py --write-expected`. A refusal category marks the
case xfail(strict=True, raises=S2SADError); a reason starting "BUG:" (a wrong derivative,
or an exception that is not an S2SADError) marks it xfail(strict=True). When the compiler
learns a case its test XPASSes, which fails the suite: delete the entry (or regenerate).
"""

EXPECT: dict[str, dict[str, str]] = {
    'scipy:optimize.rosen_der': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scipy:optimize.rosen_hess_prod': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scipy:stats.norm.logpdf': {
        'rev': 'calling convention: wrt names an argument in *args',
        'fwd': 'calling convention: wrt names an argument in *args',
    },
    'scipy:stats.norm.logsf': {
        'rev': 'calling convention: wrt names an argument in *args',
        'fwd': 'calling convention: wrt names an argument in *args',
    },
    'scipy:stats.norm frozen logpdf': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'scipy:stats.logistic.logpdf': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:stats.chi2.logpdf': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:stats.gamma.cdf': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:stats.poisson.logpmf likelihood (rate)': {
        'rev': 'missing rule: call of `_argcheck` does not match its signature: missing a ',
        'fwd': 'missing rule: call of `_argcheck` does not match its signature: missing a ',
    },
    'scipy:stats.binom.logpmf likelihood (p)': {
        'rev': 'missing rule: call of `_get_support` does not match its signature: missing',
        'fwd': 'missing rule: call of `_get_support` does not match its signature: missing',
    },
    'scipy:stats.multivariate_normal.logpdf (mean)': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scipy:special.ndtri': {
        'rev': 'missing rule: compiled function',
        'fwd': 'missing rule: compiled function',
    },
    'scipy:special.entr': {
        'rev': 'missing rule: compiled function',
        'fwd': 'missing rule: compiled function',
    },
    'scipy:special.rel_entr': {
        'rev': 'missing rule: compiled function',
        'fwd': 'missing rule: compiled function',
    },
    'scipy:special.huber (r)': {
        'rev': 'missing rule: compiled function',
        'fwd': 'missing rule: compiled function',
    },
    'scipy:special.pseudo_huber (r)': {
        'rev': 'missing rule: compiled function',
        'fwd': 'missing rule: compiled function',
    },
    'scipy:special.dawsn': {
        'rev': 'missing rule: compiled function',
        'fwd': 'missing rule: compiled function',
    },
    'scipy:special.zeta (x)': {
        'rev': 'missing rule: compiled function',
        'fwd': 'missing rule: compiled function',
    },
    'scipy:spatial.distance.chebyshev': {
        'rev': 'builtin over a run-time sequence (max, tuple)',
        'fwd': 'builtin over a run-time sequence (max, tuple)',
    },
    'scipy:spatial.distance.jensenshannon': {
        'rev': 'kind inference: a scalar result seen as an array',
        'fwd': 'missing rule: compiled function',
    },
    'scipy:spatial.distance.pdist': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:integrate.trapezoid': {
        'rev': 'builtin over a run-time sequence (max, tuple)',
        'fwd': 'builtin over a run-time sequence (max, tuple)',
    },
    'scipy:integrate.simpson': {
        'rev': 'builtin over a run-time sequence (max, tuple)',
        'fwd': 'builtin over a run-time sequence (max, tuple)',
    },
    'scipy:integrate.cumulative_trapezoid': {
        'rev': 'builtin over a run-time sequence (max, tuple)',
        'fwd': 'builtin over a run-time sequence (max, tuple)',
    },
    'scikit-learn:GaussianProcessRegressor.log_marginal_likelihood': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'scikit-learn:_loss.HalfSquaredError.loss': {
        'rev': 'not differentiable: `loss` is given an array the function allocated and its resu',
        'fwd': 'not differentiable: `loss` is given an array the function allocated and its resu',
    },
    'scikit-learn:_loss.HalfPoissonLoss.loss': {
        'rev': 'not differentiable: `loss` is given an array the function allocated and its resu',
        'fwd': 'not differentiable: `loss` is given an array the function allocated and its resu',
    },
    'scikit-learn:_loss.HalfBinomialLoss.loss': {
        'rev': 'not differentiable: `loss` is given an array the function allocated and its resu',
        'fwd': 'not differentiable: `loss` is given an array the function allocated and its resu',
    },
    'scikit-learn:_loss.HalfGammaLoss.loss': {
        'rev': 'not differentiable: `loss` is given an array the function allocated and its resu',
        'fwd': 'not differentiable: `loss` is given an array the function allocated and its resu',
    },
    'scikit-learn:_loss.AbsoluteError.loss': {
        'rev': 'not differentiable: `loss` is given an array the function allocated and its resu',
        'fwd': 'not differentiable: `loss` is given an array the function allocated and its resu',
    },
    'scikit-learn:_loss.ExponentialLoss.loss': {
        'rev': 'not differentiable: `loss` is given an array the function allocated and its resu',
        'fwd': 'not differentiable: `loss` is given an array the function allocated and its resu',
    },
    'scikit-learn:_loss.HalfTweedieLoss(power=1.5).loss': {
        'rev': 'not differentiable: `loss` is given an array the function allocated and its resu',
        'fwd': 'not differentiable: `loss` is given an array the function allocated and its resu',
    },
    'scikit-learn:_loss.PinballLoss(quantile=0.3).loss': {
        'rev': 'not differentiable: `loss` is given an array the function allocated and its resu',
        'fwd': 'not differentiable: `loss` is given an array the function allocated and its resu',
    },
    'scikit-learn:_loss.HalfMultinomialLoss.loss': {
        'rev': 'not differentiable: `loss` is given an array the function allocated and its resu',
        'fwd': 'not differentiable: `loss` is given an array the function allocated and its resu',
    },
    'scikit-learn:linear_model LinearModelLoss(HalfBinomialLoss).loss': {
        'rev': 'not differentiable: `loss` is given an array the function allocated and its resu',
        'fwd': 'not differentiable: `loss` is given an array the function allocated and its resu',
    },
    'scikit-learn:metrics.pairwise.rbf_kernel': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.pairwise.linear_kernel': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.pairwise.cosine_similarity': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.pairwise.euclidean_distances': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'statsmodels:discrete.NegativeBinomial.loglike': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'statsmodels:links.Log()': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'statsmodels:links.Probit()': {
        'rev': 'missing rule: `*` of a sequence whose length is not known while compiling ',
        'fwd': 'missing rule: `*` of a sequence whose length is not known while compiling ',
    },
    'statsmodels:links.Cauchy()': {
        'rev': 'missing rule: `*` of a sequence whose length is not known while compiling ',
        'fwd': 'missing rule: `*` of a sequence whose length is not known while compiling ',
    },
    'statsmodels:families.Poisson.loglike (mu)': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'statsmodels:families.Binomial.deviance (mu)': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'lmfit:lineshapes.voigt': {
        'rev': 'missing rule: compiled function',
        'fwd': 'missing rule: compiled function',
    },
    'lmfit:lineshapes.pearson4': {
        'rev': 'missing rule: compiled function',
        'fwd': 'missing rule: compiled function',
    },
    'lmfit:lineshapes.lognormal': {
        'rev': 'write into an argument',
        'fwd': 'write into an argument',
    },
    'lmfit:lineshapes.skewed_voigt': {
        'rev': 'missing rule: compiled function',
        'fwd': 'missing rule: compiled function',
    },
}
