"""A context manager that takes out again the rules a test registers for its own functions."""

import contextlib

from s2sad_rules.registry import TABLE

_PARTS = ("jvp_rules", "vjp_rules", "nondiff", "linear", "spelling", "checks")


@contextlib.contextmanager
def restored_rule_table():
    saved = {k: dict(getattr(TABLE, k)) for k in _PARTS}
    try:
        yield
    finally:
        for k, v in saved.items():
            getattr(TABLE, k).clear()
            getattr(TABLE, k).update(v)
        TABLE.version += 1  # every derivative compiled meanwhile is dropped
