"""What goes wrong today with each corpus case, per mode: "rev" (grad or vjp), "fwd" (jvp).

Written by `python bench/realcode_report.py --write-expected`. A refusal category marks the
case xfail(strict=True, raises=S2SADError); a reason starting "BUG:" (a wrong derivative,
or an exception that is not an S2SADError) marks it xfail(strict=True). When the compiler
learns a case its test XPASSes, which fails the suite: delete the entry (or regenerate).
"""

EXPECT: dict[str, dict[str, str]] = {
    'scipy:special.zeta (x)': {
        'rev': 'not differentiable: `scipy.special.zeta` is not differentiable with respect to i',
        'fwd': 'not differentiable: `scipy.special.zeta` is not differentiable with respect to i',
    },
    'scipy:spatial.distance.chebyshev': {
        'rev': 'builtin over a run-time sequence (max, tuple)',
        'fwd': 'builtin over a run-time sequence (max, tuple)',
    },
    'scipy:spatial.distance.pdist': {
        'fwd': 'missing rule: the statement `AnnAssign` is not supported (/root/venv/lib/p',
    },
    'scipy:integrate.trapezoid': {
        'rev': 'unsupported syntax: try',
        'fwd': 'unsupported syntax: try',
    },
    'scipy:integrate.simpson': {
        'rev': 'builtin over a run-time sequence (max, tuple)',
        'fwd': 'builtin over a run-time sequence (max, tuple)',
    },
    'scipy:integrate.cumulative_trapezoid': {
        'rev': 'missing rule: list() of a value computed at run time is not supported (/ro',
        'fwd': 'missing rule: list() of a value computed at run time is not supported (/ro',
    },
    'scikit-learn:kernels.Constant*RBF + White(X)': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:kernels.RBF(length_scale=exp(theta))': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:kernels.Matern(exp(theta), nu=1.5)': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:kernels.RationalQuadratic(exp(theta))': {
        'rev': 'not differentiable: `np.fill_diagonal` writes into `K` in place, and a derivativ',
        'fwd': 'not differentiable: `np.fill_diagonal` writes into `K` in place, and a derivativ',
    },
    'scikit-learn:GaussianProcessRegressor.log_marginal_likelihood': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'scikit-learn:GaussianProcessRegressor.predict': {
        'rev': 'missing rule: `**` in a dict literal is not supported (/root/venv/lib/pyth',
        'fwd': 'missing rule: `**` in a dict literal is not supported (/root/venv/lib/pyth',
    },
    'scikit-learn:linear_model _huber_loss_and_gradient': {
        'rev': 'branch on a shape equality not decided while compiling',
        'fwd': 'branch on a shape equality not decided while compiling',
    },
    'scikit-learn:metrics.mean_squared_error': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.mean_absolute_error': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.r2_score': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.explained_variance_score': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.mean_poisson_deviance': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.mean_gamma_deviance': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.mean_squared_log_error': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.mean_pinball_loss': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.mean_tweedie_deviance(power=1.5)': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.log_loss': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'scikit-learn:metrics.brier_score_loss': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'scikit-learn:metrics.pairwise.rbf_kernel': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.pairwise.polynomial_kernel': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.pairwise.sigmoid_kernel': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.pairwise.laplacian_kernel': {
        'rev': 'missing rule: a call that writes its result into an array it is given: an ',
        'fwd': 'missing rule: a call that writes its result into an array it is given: an ',
    },
    'scikit-learn:metrics.pairwise.linear_kernel': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.pairwise.cosine_similarity': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.pairwise.euclidean_distances': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    "scikit-learn:neural_network ACTIVATIONS['tanh'] in place": {
        'rev': 'not differentiable: `inplace_tanh` writes into an array it is given, and a deriv',
        'fwd': 'not differentiable: `inplace_tanh` writes into an array it is given, and a deriv',
    },
    "scikit-learn:neural_network ACTIVATIONS['softmax'] in place": {
        'rev': 'not differentiable: cannot update `X` in place: `a` refers to the same array (or',
        'fwd': 'not differentiable: cannot update `X` in place: `a` refers to the same array (or',
    },
    'scikit-learn:utils.extmath.softmax': {
        'rev': 'unsupported syntax: a call that writes its result into an array it is given: `ou',
        'fwd': 'unsupported syntax: a call that writes its result into an array it is given: `ou',
    },
    'scikit-learn:utils.extmath.row_norms(squared=True)': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:utils.extmath.squared_norm': {
        'rev': 'missing rule: the VJP rule for `np.ravel` does not accept this call: got a',
        'fwd': 'missing rule: the JVP rule for `np.ravel` does not accept this call: got a',
    },
    'scikit-learn:utils.extmath.safe_sparse_dot': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'statsmodels:discrete.NegativeBinomial.loglike': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'statsmodels:links.Cauchy()': {
        'rev': 'missing rule: compiled function',
        'fwd': 'missing rule: compiled function',
    },
    'lmfit:lineshapes.lognormal': {
        'rev': 'write into an argument',
        'fwd': 'write into an argument',
    },
}
