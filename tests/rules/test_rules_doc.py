"""docs/rules.md is generated from the rule table: it must be current."""

import importlib.util
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_rules_page_is_current():
    pytest.importorskip("scipy")  # (the page lists the rules of scipy.special)
    spec = importlib.util.spec_from_file_location("gen_rules", DOCS / "gen_rules.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (DOCS / "rules.md").read_text() == gen.generate(), (
        "docs/rules.md is stale: run `python docs/gen_rules.py`")
