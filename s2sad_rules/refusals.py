"""Refusing the options a rule does not cover, instead of mishandling them.

A rule adds `supported(ok, callee, option, value)` to one of its results: 0.0 when `ok`
(constant-folded away, so it costs nothing), else a MissingRuleError naming the option.
"""

from s2sad.errors import MissingRuleError
from s2sad_rules.registry import def_nondiff


@def_nondiff
def supported(ok, callee, option, value):
    """0.0 when the option is covered; otherwise refuse it, naming `option=value`."""
    if not ok:
        raise MissingRuleError(
            f"the derivative rules of {callee} do not cover {option}={value!r}",
            hint=f"call {callee} without {option}={value!r}, or register a rule that covers it")
    return 0.0
