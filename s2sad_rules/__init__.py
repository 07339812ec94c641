"""The rule table: registry plus the built-in rules for operators, math and NumPy.

Importing this package registers every built-in rule in `TABLE`.
"""

import sys as _sys

if "s2sad" not in _sys.modules:
    # Imported before the compiler: the compiler's package imports this one as it starts,
    # so let it, and stand for the complete module it makes (the import system returns
    # what sys.modules holds once this body has run).
    del _sys.modules[__name__]
    __import__("s2sad")  # a bootstrap, not a dependency: the layers contract stands

from s2sad_rules.registry import TABLE, def_linear, def_nondiff, defjvp, defvjp  # noqa: E402
from s2sad_rules import kind_tests  # noqa: F401
from s2sad_rules import structural, operators, math_rules, numpy_elementwise  # noqa: F401
from s2sad_rules import numpy_reductions, numpy_shape, nondiff  # noqa: F401
from s2sad_rules import numpy_unary, numpy_binary, numpy_scans, numpy_products  # noqa: F401
from s2sad_rules import numpy_construction, numpy_linalg, math_special, sequences  # noqa: F401
from s2sad_rules import numpy_fft, numpy_polynomials, real_only  # noqa: F401

# loaded the first time a differentiated function calls scipy.special or scipy.stats
# (registry.RuleTable)
TABLE.optional["scipy.special"] = "s2sad_rules.scipy_special"
TABLE.optional["scipy.stats"] = "s2sad_rules.scipy_stats"
TABLE.optional["scipy.linalg"] = "s2sad_rules.scipy_linalg"
TABLE.optional["scipy.integrate"] = "s2sad_rules.scipy_integrate"
# scipy.stats' compiled distribution functions (scu._cauchy_ppf): no public name, found in
# the private module of scipy.special's ufuncs (after scipy.special, whose ufuncs are there too)
TABLE.optional["scipy.special._ufuncs"] = "s2sad_rules.scipy_distributions"

__all__ = ["TABLE", "defjvp", "defvjp", "def_linear", "def_nondiff"]
