"""Hypothesis profiles for the property-based rule tests (tests/rules/test_properties.py).

- "default": a few examples per rule, derandomised (the same examples on every run), so the
  default suite stays fast and reproducible;
- "deep": many examples per rule from fresh random seeds; selected by
  S2SAD_HYPOTHESIS_PROFILE=deep for every property test, and always used by the tests marked
  `slow` (`pytest -m slow tests/rules/test_properties.py`).
"""

import os

from hypothesis import HealthCheck, Phase, settings

_COMMON = {
    "deadline": None,  # the first example of a rule compiles (tens of ms, more on a busy CI)
    "database": None,
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                              HealthCheck.filter_too_much, HealthCheck.differing_executors],
}
# no shrinking by default: each shrink step compiles new derivatives (seconds per failure)
settings.register_profile("default", max_examples=3, derandomize=True,
                          phases=[Phase.explicit, Phase.generate], **_COMMON)
settings.register_profile("deep", max_examples=60, **_COMMON)
DEEP = os.environ.get("S2SAD_HYPOTHESIS_PROFILE", "default") == "deep"
settings.load_profile("deep" if DEEP else "default")

deep_settings = settings(settings.get_profile("deep"))
