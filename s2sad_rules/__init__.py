"""The rule table: registry plus the built-in rules for operators, math and NumPy.

Importing this package registers every built-in rule in `TABLE`.
"""

from s2sad_rules.registry import TABLE, def_linear, def_nondiff, defjvp, defvjp
from s2sad_rules import kind_tests  # noqa: F401
from s2sad_rules import structural, operators, math_rules, numpy_elementwise  # noqa: F401
from s2sad_rules import numpy_reductions, numpy_shape, nondiff  # noqa: F401
from s2sad_rules import numpy_unary, numpy_binary, numpy_scans, numpy_products  # noqa: F401
from s2sad_rules import numpy_construction, numpy_linalg, math_special, sequences  # noqa: F401
from s2sad_rules import numpy_fft, real_only  # noqa: F401

__all__ = ["TABLE", "defjvp", "defvjp", "def_linear", "def_nondiff"]
