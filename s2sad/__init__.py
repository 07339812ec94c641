"""s2sad: source-to-source automatic differentiation for Python + NumPy.

    f_jvp = s2sad.jvp(f)          # f_jvp(*args, *tangents) -> (out, out_dot)
    f_vjp = s2sad.vjp(f)          # f_vjp(*args) -> (out, pullback)
    df = s2sad.grad(f)            # df(*args) -> gradient
    print(df.source)              # the generated Python
"""

from s2sad.api import (
    Derivative,
    checkpoint,
    grad,
    grad_and_hvp,
    hessian,
    hvp,
    jacfwd,
    jacrev,
    jvp,
    value_and_grad,
    vjp,
)
from s2sad.check import check_grads
from s2sad.errors import (
    AliasedArgumentsError,
    ArgumentTypeError,
    MissingRuleError,
    NameResolutionError,
    NonDifferentiableError,
    RecursionLimitError,
    RuleError,
    S2SADError,
    SourceUnavailableError,
    UnsupportedSyntaxError,
    WrtError,
)
from s2sad_rules.registry import def_linear, def_nondiff, defjvp, defvjp

__version__ = "0.1.0"

__all__ = [
    "jvp", "vjp", "grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "hvp",
    "grad_and_hvp", "check_grads", "Derivative", "checkpoint",
    "defjvp", "defvjp", "def_linear", "def_nondiff",
    "S2SADError", "UnsupportedSyntaxError", "MissingRuleError", "NonDifferentiableError",
    "WrtError", "SourceUnavailableError", "NameResolutionError", "RuleError",
    "ArgumentTypeError", "RecursionLimitError", "AliasedArgumentsError",
]
