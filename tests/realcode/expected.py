"""What goes wrong today with each corpus case, per mode: "rev" (grad or vjp), "fwd" (jvp).

Written by `python bench/realcode_report.py --write-expected`. A refusal category marks the
case xfail(strict=True, raises=S2SADError); a reason starting "BUG:" (a wrong derivative,
or an exception that is not an S2SADError) marks it xfail(strict=True). When the compiler
learns a case its test XPASSes, which fails the suite: delete the entry (or regenerate).
"""

EXPECT: dict[str, dict[str, str]] = {
    'scipy:optimize.rosen': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
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
    'scipy:stats.norm.cdf': {
        'rev': 'BUG: crash: a primitive with rules whose signature is (x, *args, **kwds) (scipy.stats.norm.cdf) called with loc, scale by position raises TypeError',
        'fwd': 'BUG: crash: a primitive with rules whose signature is (x, *args, **kwds) (scipy.stats.norm.cdf) called with loc, scale by position raises TypeError',
    },
    'scipy:stats.norm.logsf': {
        'rev': 'calling convention: wrt names an argument in *args',
        'fwd': 'calling convention: wrt names an argument in *args',
    },
    'scipy:stats.norm frozen logpdf': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'scipy:stats.t.logpdf likelihood (loc, scale)': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:stats.gamma.logpdf': {
        'rev': 'calling convention: wrt names an argument in *args',
        'fwd': 'calling convention: wrt names an argument in *args',
    },
    'scipy:stats.beta.logpdf': {
        'rev': 'calling convention: wrt names an argument in *args',
        'fwd': 'calling convention: wrt names an argument in *args',
    },
    'scipy:stats.expon.logpdf likelihood (rate)': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:stats.laplace.logpdf likelihood (loc, scale)': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:stats.cauchy.logpdf': {
        'rev': 'calling convention: wrt names an argument in *args',
        'fwd': 'calling convention: wrt names an argument in *args',
    },
    'scipy:stats.logistic.logpdf': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:stats.lognorm.logpdf': {
        'rev': 'calling convention: wrt names an argument in *args',
        'fwd': 'calling convention: wrt names an argument in *args',
    },
    'scipy:stats.weibull_min.logpdf': {
        'rev': 'calling convention: wrt names an argument in *args',
        'fwd': 'calling convention: wrt names an argument in *args',
    },
    'scipy:stats.gumbel_r.logpdf likelihood (loc, scale)': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:stats.chi2.logpdf': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:stats.invgamma.logpdf': {
        'rev': 'calling convention: wrt names an argument in *args',
        'fwd': 'calling convention: wrt names an argument in *args',
    },
    'scipy:stats.gamma.cdf': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:stats.poisson.logpmf likelihood (rate)': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:stats.binom.logpmf likelihood (p)': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:stats.multivariate_normal.logpdf (mean)': {
        'rev': 'attribute of a library object (np.finfo(...).eps, xp.linalg)',
        'fwd': 'attribute of a library object (np.finfo(...).eps, xp.linalg)',
    },
    'scipy:special.ndtri': {
        'rev': 'missing rule: compiled function',
        'fwd': 'BUG: crash: jvp of a ufunc without a rule takes its `out` for a parameter and raises TypeError instead of the missing-rule refusal',
    },
    'scipy:special.kv (x)': {
        'rev': 'missing rule: compiled function',
        'fwd': 'BUG: crash: jvp of a ufunc without a rule takes its `out` for a parameter and raises TypeError instead of the missing-rule refusal',
    },
    'scipy:special.entr': {
        'rev': 'missing rule: compiled function',
        'fwd': 'BUG: crash: jvp of a ufunc without a rule takes its `out` for a parameter and raises TypeError instead of the missing-rule refusal',
    },
    'scipy:special.rel_entr': {
        'rev': 'missing rule: compiled function',
        'fwd': 'BUG: crash: jvp of a ufunc without a rule takes its `out` for a parameter and raises TypeError instead of the missing-rule refusal',
    },
    'scipy:special.huber (r)': {
        'rev': 'missing rule: compiled function',
        'fwd': 'BUG: crash: jvp of a ufunc without a rule takes its `out` for a parameter and raises TypeError instead of the missing-rule refusal',
    },
    'scipy:special.pseudo_huber (r)': {
        'rev': 'missing rule: compiled function',
        'fwd': 'BUG: crash: jvp of a ufunc without a rule takes its `out` for a parameter and raises TypeError instead of the missing-rule refusal',
    },
    'scipy:special.boxcox (x)': {
        'rev': 'missing rule: compiled function',
        'fwd': 'BUG: crash: jvp of a ufunc without a rule takes its `out` for a parameter and raises TypeError instead of the missing-rule refusal',
    },
    'scipy:special.log1p': {
        'rev': 'missing rule: compiled function',
        'fwd': 'BUG: crash: jvp of a ufunc without a rule takes its `out` for a parameter and raises TypeError instead of the missing-rule refusal',
    },
    'scipy:special.expm1': {
        'rev': 'missing rule: compiled function',
        'fwd': 'BUG: crash: jvp of a ufunc without a rule takes its `out` for a parameter and raises TypeError instead of the missing-rule refusal',
    },
    'scipy:special.cosm1': {
        'rev': 'missing rule: compiled function',
        'fwd': 'BUG: crash: jvp of a ufunc without a rule takes its `out` for a parameter and raises TypeError instead of the missing-rule refusal',
    },
    'scipy:special.dawsn': {
        'rev': 'missing rule: compiled function',
        'fwd': 'BUG: crash: jvp of a ufunc without a rule takes its `out` for a parameter and raises TypeError instead of the missing-rule refusal',
    },
    'scipy:special.zeta (x)': {
        'rev': 'missing rule: compiled function',
        'fwd': 'missing rule: compiled function',
    },
    'scipy:spatial.distance.euclidean': {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    'scipy:spatial.distance.sqeuclidean': {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    'scipy:spatial.distance.cosine': {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    'scipy:spatial.distance.cityblock': {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    'scipy:spatial.distance.braycurtis': {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    'scipy:spatial.distance.correlation': {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    'scipy:spatial.distance.chebyshev': {
        'rev': 'builtin over a run-time sequence (max, tuple)',
        'fwd': 'builtin over a run-time sequence (max, tuple)',
    },
    'scipy:spatial.distance.canberra': {
        'rev': 'unsupported syntax: with',
        'fwd': 'unsupported syntax: with',
    },
    'scipy:spatial.distance.minkowski (p=3)': {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    'scipy:spatial.distance.mahalanobis': {
        'rev': 'kind inference: a scalar result seen as an array',
        'fwd': 'unsupported syntax: raise',
    },
    'scipy:spatial.distance.seuclidean': {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    'scipy:spatial.distance.jensenshannon': {
        'rev': 'kind inference: a scalar result seen as an array',
        'fwd': 'missing rule: compiled function',
    },
    'scipy:spatial.distance.cdist sqeuclidean': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:spatial.distance.pdist': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scipy:integrate.trapezoid': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scipy:integrate.simpson': {
        'rev': 'builtin over a run-time sequence (max, tuple)',
        'fwd': 'builtin over a run-time sequence (max, tuple)',
    },
    'scipy:integrate.cumulative_trapezoid': {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    'scikit-learn:kernels.RBF(X, Y)': {
        'rev': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
        'fwd': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
    },
    'scikit-learn:kernels.RBF anisotropic(X, Y)': {
        'rev': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
        'fwd': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
    },
    'scikit-learn:kernels.Matern nu=0.5(X, Y)': {
        'rev': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
        'fwd': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
    },
    'scikit-learn:kernels.Matern nu=1.5(X, Y)': {
        'rev': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
        'fwd': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
    },
    'scikit-learn:kernels.Matern nu=2.5(X, Y)': {
        'rev': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
        'fwd': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
    },
    'scikit-learn:kernels.RationalQuadratic(X, Y)': {
        'rev': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
        'fwd': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
    },
    'scikit-learn:kernels.ExpSineSquared(X, Y)': {
        'rev': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
        'fwd': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
    },
    'scikit-learn:kernels.DotProduct(X, Y)': {
        'rev': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
        'fwd': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
    },
    'scikit-learn:kernels.Constant*RBF + White(X)': {
        'rev': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
        'fwd': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
    },
    'scikit-learn:kernels.RBF**2 (Exponentiation)(X, Y)': {
        'rev': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
        'fwd': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
    },
    'scikit-learn:kernels.RBF via lambda X: kernel(X, Y)': {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:kernels.Matern nu=2.5 via lambda X: kernel(X, Y)': {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    'scikit-learn:kernels.RBF(length_scale=exp(theta))': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'scikit-learn:kernels.Matern(exp(theta), nu=1.5)': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'scikit-learn:kernels.RationalQuadratic(exp(theta))': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'scikit-learn:GaussianProcessRegressor.log_marginal_likelihood': {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    'scikit-learn:GaussianProcessRegressor.predict': {
        'rev': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
        'fwd': 'BUG: crash: an object with __eq__ and no __hash__ (a scikit-learn kernel), passed as the function or merged after a branch, raises TypeError: unhashable type',
    },
    'scikit-learn:_loss.HalfSquaredError.loss': {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:_loss.HalfPoissonLoss.loss': {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:_loss.HalfBinomialLoss.loss': {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:_loss.HalfGammaLoss.loss': {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:_loss.AbsoluteError.loss': {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:_loss.ExponentialLoss.loss': {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:_loss.HalfTweedieLoss(power=1.5).loss': {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:_loss.PinballLoss(quantile=0.3).loss': {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:_loss.HalfMultinomialLoss.loss': {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:linear_model LinearModelLoss(HalfBinomialLoss).loss': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:linear_model _huber_loss_and_gradient': {
        'rev': 'branch on a shape equality not decided while compiling',
        'fwd': 'branch on a shape equality not decided while compiling',
    },
    'scikit-learn:mixture _estimate_log_gaussian_prob (full)': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:mixture _estimate_log_gaussian_prob (diag)': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:mixture _estimate_log_gaussian_prob (spherical)': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:metrics.mean_squared_error': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.mean_absolute_error': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.r2_score': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.explained_variance_score': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.mean_poisson_deviance': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.mean_gamma_deviance': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.mean_squared_log_error': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.mean_pinball_loss': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.mean_tweedie_deviance(power=1.5)': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.log_loss': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.brier_score_loss': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.pairwise.rbf_kernel': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.pairwise.polynomial_kernel': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.pairwise.sigmoid_kernel': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
    },
    'scikit-learn:metrics.pairwise.laplacian_kernel': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
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
    'scikit-learn:neural_network log_loss': {
        'rev': 'attribute of a library object (np.finfo(...).eps, xp.linalg)',
        'fwd': 'attribute of a library object (np.finfo(...).eps, xp.linalg)',
    },
    'scikit-learn:neural_network binary_log_loss': {
        'rev': 'attribute of a library object (np.finfo(...).eps, xp.linalg)',
        'fwd': 'attribute of a library object (np.finfo(...).eps, xp.linalg)',
    },
    "scikit-learn:neural_network ACTIVATIONS['tanh'] in place": {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    "scikit-learn:neural_network ACTIVATIONS['softmax'] in place": {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:utils.extmath.softmax': {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:utils.extmath.row_norms(squared=True)': {
        'rev': 'array-API / sparse dispatch',
        'fwd': 'array-API / sparse dispatch',
    },
    'scikit-learn:utils.extmath.squared_norm': {
        'rev': 'inactive statement: in-place call (result unused)',
        'fwd': 'inactive statement: in-place call (result unused)',
    },
    'scikit-learn:utils.extmath.safe_sparse_dot': {
        'rev': 'calling convention: f(*args) in a call',
        'fwd': 'calling convention: f(*args) in a call',
    },
    'scikit-learn:utils.extmath.fast_logdet': {
        'rev': 'attribute of a library object (np.finfo(...).eps, xp.linalg)',
        'fwd': 'attribute of a library object (np.finfo(...).eps, xp.linalg)',
    },
    'statsmodels:discrete.Logit.loglike': {
        'rev': 'hasattr(self, name) branch not pruned: self.name read',
        'fwd': 'hasattr(self, name) branch not pruned: self.name read',
    },
    'statsmodels:discrete.Logit.score': {
        'rev': 'hasattr(self, name) branch not pruned: self.name read',
        'fwd': 'hasattr(self, name) branch not pruned: self.name read',
    },
    'statsmodels:discrete.Probit.loglike': {
        'rev': 'hasattr(self, name) branch not pruned: self.name read',
        'fwd': 'hasattr(self, name) branch not pruned: self.name read',
    },
    'statsmodels:discrete.Probit.score': {
        'rev': 'hasattr(self, name) branch not pruned: self.name read',
        'fwd': 'hasattr(self, name) branch not pruned: self.name read',
    },
    'statsmodels:discrete.Logit.loglikeobs': {
        'rev': 'hasattr(self, name) branch not pruned: self.name read',
        'fwd': 'hasattr(self, name) branch not pruned: self.name read',
    },
    'statsmodels:discrete.NegativeBinomial.loglike': {
        'rev': 'object built inside',
        'fwd': 'object built inside',
    },
    'statsmodels:GLM Poisson.score': {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    'statsmodels:OLS.loglike': {
        'rev': 'hasattr(self, name) branch not pruned: self.name read',
        'fwd': 'hasattr(self, name) branch not pruned: self.name read',
    },
    'statsmodels:robust.norms.Hampel.psi': {
        'fwd': 'BUG: crash: the jvp of a masked write v[mask] = c * sign(z)[mask] writes a zero tangent of the unmasked shape (np.zeros((n,)))',
    },
    'statsmodels:robust.norms.AndrewWave.weights': {
        'rev': 'attribute of a library object (np.finfo(...).eps, xp.linalg)',
        'fwd': 'attribute of a library object (np.finfo(...).eps, xp.linalg)',
    },
    'statsmodels:links.Logit()': {
        'rev': 'callable object passed as the function',
        'fwd': 'callable object passed as the function',
    },
    'statsmodels:links.Log()': {
        'rev': 'callable object passed as the function',
        'fwd': 'callable object passed as the function',
    },
    'statsmodels:links.Probit()': {
        'rev': 'callable object passed as the function',
        'fwd': 'callable object passed as the function',
    },
    'statsmodels:links.CLogLog()': {
        'rev': 'callable object passed as the function',
        'fwd': 'callable object passed as the function',
    },
    'statsmodels:links.Power()': {
        'rev': 'callable object passed as the function',
        'fwd': 'callable object passed as the function',
    },
    'statsmodels:links.InversePower()': {
        'rev': 'callable object passed as the function',
        'fwd': 'callable object passed as the function',
    },
    'statsmodels:links.Cauchy()': {
        'rev': 'callable object passed as the function',
        'fwd': 'callable object passed as the function',
    },
    'statsmodels:links.Cauchy.inverse': {
        'rev': 'calling convention: **kwargs parameter',
        'fwd': 'calling convention: **kwargs parameter',
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
    "lmfit:lineshapes.step(form='erf')": {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
    "lmfit:lineshapes.rectangle(form='logistic')": {
        'rev': 'unsupported syntax: raise',
        'fwd': 'unsupported syntax: raise',
    },
}
